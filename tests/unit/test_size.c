/* The one size grammar (common/size.h), and that every option and key
 * that takes a size speaks it: --journal-max-size in a run as in mount,
 * --memory, --audit-max-size, [view] scan-max-size. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <string.h>

#include "cli/run-options.h"
#include "common/size.h"
#include "policy/config.h"
#include "policy/resource-limits.h"

static void powers_of_1024(void **state)
{
	(void)state;
	static const struct {
		const char *text;
		uint64_t bytes;
	} good[] = {
		{"0", 0},           {"1048576", 1048576}, {"512K", 512ULL << 10}, {"512k", 512ULL << 10},
		{"64M", 64ULL << 20}, {"2G", 2ULL << 30},   {"1T", 1ULL << 40},     {"2GiB", 2ULL << 30},
		{"2gib", 2ULL << 30}, {"3KiB", 3072},       {"1TiB", 1ULL << 40},   {"1.5G", 3ULL << 29},
		{"0.5K", 512},      {"18446744073709551615", UINT64_MAX},
	};
	for (size_t i = 0; i < sizeof good / sizeof *good; i++) {
		uint64_t v = 7;
		if (vr_size_parse(good[i].text, &v) != 0)
			fail_msg("'%s' refused", good[i].text);
		assert_int_equal(v, good[i].bytes);
	}
}

static void refused(void **state)
{
	(void)state;
	const char *bad[] = {"", "K", "-1", "+1", " 1", "1 ", "1X", "1KK", "1Ki", "1iB", "1.5", "1.",
	                     "1.K", "1e3", "0x10", NULL};
	for (const char **b = bad; *b; b++) {
		uint64_t v = 7;
		if (vr_size_parse(*b, &v) != -EINVAL)
			fail_msg("'%s' not refused as -EINVAL", *b);
		assert_int_equal(v, 7); /* untouched */
	}
	uint64_t v = 7;
	assert_int_equal(vr_size_parse(NULL, &v), -EINVAL);
	assert_int_equal(vr_size_parse("18446744073709551616", &v), -ERANGE);
	assert_int_equal(vr_size_parse("16777216T", &v), -ERANGE);
	assert_int_equal(v, 7);
}

/* KB, MB, GB: refused, and the message says why and what to write. */
static void decimal_units_get_a_hint(void **state)
{
	(void)state;
	const char *si[] = {"1KB", "64MB", "1GB", "2TB", "1kb", "1.5GB", NULL};
	for (const char **s = si; *s; s++) {
		uint64_t v;
		assert_int_equal(vr_size_parse(*s, &v), -EDOM);
		assert_non_null(strstr(vr_size_expected(*s, "X"), "powers of 1024"));
	}
	assert_string_equal(vr_size_expected("64X", "X"), "X");
}

/* One grammar everywhere: each caller only adds its range. */
static void every_size_option_speaks_it(void **state)
{
	(void)state;
	const char *args[] = {"vault-run", "--journal-max-size", "1GiB", "--memory", "512MiB",
	                      "--audit-max-size", "2KiB", "true", NULL};
	GError *error = NULL;
	VrRunPlan *plan = vr_run_plan_new();
	assert_true(vr_cli_parse(plan, G_N_ELEMENTS(args) - 1, (char **)args, &error));
	assert_int_equal(plan->journal_max_size, 1ULL << 30);
	assert_int_equal(plan->limits.memory, 512ULL << 20);
	assert_int_equal(plan->audit_max_size, 2048);
	vr_run_plan_free(plan);
	const char *si[] = {"vault-run", "--journal-max-size", "1GB", "true", NULL};
	plan = vr_run_plan_new();
	assert_false(vr_cli_parse(plan, G_N_ELEMENTS(si) - 1, (char **)si, &error));
	assert_non_null(strstr(error->message, "--journal-max-size: '1GB' is not a size in powers of 1024"));
	g_clear_error(&error);
	vr_run_plan_free(plan);
	guint64 v;
	assert_true(vr_config_parse_size("8MiB", &v));
	assert_int_equal(v, 8ULL << 20);
	assert_false(vr_config_parse_size("2G", &v)); /* scan-max-size: at most 1G */
	assert_false(vr_config_parse_size("8MB", &v));
	assert_true(vr_limits_parse_memory("1.5GiB", &v));
	assert_int_equal(v, 3ULL << 29);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(powers_of_1024),
		cmocka_unit_test(refused),
		cmocka_unit_test(decimal_units_get_a_hint),
		cmocka_unit_test(every_size_option_speaks_it),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
