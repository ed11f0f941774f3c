/* Resource limits: the syntax of --memory/--pids/--cpu and of the [sandbox]
 * keys of the same names, and how they merge (command line over config). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>
#include <cmocka.h>

#include "cli/run-options.h"
#include "policy/config.h"
#include "policy/resource-limits.h"

static void test_memory(void **state)
{
	(void)state;
	guint64 v = 0;
	assert_true(vr_limits_parse_memory("64M", &v));
	assert_int_equal(v, 64ULL << 20);
	assert_true(vr_limits_parse_memory("1.5G", &v));
	assert_int_equal(v, 3ULL << 29);
	assert_true(vr_limits_parse_memory("2gib", &v));
	assert_int_equal(v, 2ULL << 30);
	assert_true(vr_limits_parse_memory("2048KiB", &v));
	assert_int_equal(v, 2048ULL << 10);
	assert_true(vr_limits_parse_memory("1048576", &v));
	assert_int_equal(v, 1048576);
	assert_true(vr_limits_parse_memory("1T", &v));
	assert_int_equal(v, 1ULL << 40);
	const char *bad[] = {"", "M", "-1M", "0", "64X", "64MM", "64M ", " 64M", "1000", "512k", "nanG", "infG", "1e30", "2048kB", "64MB", NULL};
	for (const char **b = bad; *b; b++) {
		v = 7;
		assert_false(vr_limits_parse_memory(*b, &v));
		assert_int_equal(v, 7); /* untouched on error */
	}
}

static void test_pids(void **state)
{
	(void)state;
	guint v = 0;
	assert_true(vr_limits_parse_pids("30", &v));
	assert_int_equal(v, 30);
	assert_true(vr_limits_parse_pids("2", &v));
	const char *bad[] = {"", "1", "0", "-5", "3.5", "30x", "99999999999", NULL};
	for (const char **b = bad; *b; b++)
		assert_false(vr_limits_parse_pids(*b, &v));
}

static void test_cpu(void **state)
{
	(void)state;
	double v = 0;
	assert_true(vr_limits_parse_cpu("1.5", &v));
	assert_true(v == 1.5);
	assert_true(vr_limits_parse_cpu("0.2", &v));
	assert_true(v == 0.2);
	assert_true(vr_limits_parse_cpu("50%", &v));
	assert_true(v == 0.5);
	assert_true(vr_limits_parse_cpu("250%", &v));
	assert_true(v == 2.5);
	assert_true(vr_limits_parse_cpu(".5", &v));
	assert_true(vr_limits_parse_cpu("0.01", &v));
	assert_true(vr_limits_parse_cpu("1024", &v));
	const char *bad[] = {"", "0", "0.001", "-1", "1025", "1.5 ", "50%%", "%", "one", "nan", "inf", "1e9", NULL};
	for (const char **b = bad; *b; b++)
		assert_false(vr_limits_parse_cpu(*b, &v));
}

static void test_describe_fill(void **state)
{
	(void)state;
	VrLimits l = {64ULL << 20, 0, 0};
	assert_true(vr_limits_any(&l));
	g_autofree char *d1 = vr_limits_describe(&l);
	assert_string_equal(d1, "memory 64M");
	VrLimits config = {1ULL << 30, 100, 0.5};
	vr_limits_fill(&l, &config);
	g_autofree char *d2 = vr_limits_describe(&l);
	assert_string_equal(d2, "memory 64M, pids 100, cpu 0.5");
	VrLimits none = {0, 0, 0};
	assert_false(vr_limits_any(&none));
	VrLimits odd = {(1ULL << 20) + 1, 0, 0};
	g_autofree char *d3 = vr_limits_describe(&odd);
	assert_string_equal(d3, "memory 1048577");
}

static void test_cli(void **state)
{
	(void)state;
	g_autoptr(VrRunPlan) p = vr_run_plan_new();
	const char *argv[] = {"vault-run", "--memory", "2G", "--pids=200", "--cpu", "150%", "--", "true", NULL};
	g_autoptr(GError) error = NULL;
	assert_true(vr_cli_parse(p, 8, (char **)argv, &error));
	assert_int_equal(p->limits.memory, 2ULL << 30);
	assert_int_equal(p->limits.pids, 200);
	assert_true(p->limits.cpu == 1.5);

	g_autoptr(VrRunPlan) q = vr_run_plan_new();
	const char *bad[] = {"vault-run", "--cpu", "0", "--", "true", NULL};
	assert_false(vr_cli_parse(q, 5, (char **)bad, &error));
	assert_non_null(strstr(error->message, "--cpu: '0' is not a number of CPUs"));
}

static void test_config(void **state)
{
	(void)state;
	const char *ok = "[sandbox]\nmemory = 4G\npids = 500\ncpu = 2\n";
	g_autoptr(VrConfig) c = vr_config_new();
	g_autoptr(GError) error = NULL;
	assert_true(vr_config_load_data(c, ok, strlen(ok), "user", VR_SOURCE_USER, &error));
	assert_int_equal(c->limits.memory, 4ULL << 30);
	assert_int_equal(c->limits.pids, 500);
	assert_true(c->limits.cpu == 2);

	const char *bad = "[sandbox]\nmemory = lots\n";
	g_autoptr(VrConfig) d = vr_config_new();
	assert_false(vr_config_load_data(d, bad, strlen(bad), "user", VR_SOURCE_USER, &error));
	assert_non_null(strstr(error->message, "user:2"));
	assert_non_null(strstr(error->message, "memory = 'lots'; expected a size"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_memory),
		cmocka_unit_test(test_pids),
		cmocka_unit_test(test_cpu),
		cmocka_unit_test(test_describe_fill),
		cmocka_unit_test(test_cli),
		cmocka_unit_test(test_config),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
