/* The audit writer's output (audit/out.c): rotation by size with the
 * chain running on across the parts, and what happens when the file cannot
 * be written (made to fail with RLIMIT_FSIZE, which needs no privilege):
 * closed stops writing and calls the stop hook, open counts the lost
 * records and logs how many once writing works again. Also the parsers of
 * --audit, --audit-max-size and --audit-fail. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <glib.h>

#include "audit/chain.h"
#include "audit/out.h"
#include "audit/read.h"
#include "audit/sinks.h"
#include "audit/verify.h"
#include "policy/config.h"

static char *tmpdir;
static char *logpath;
static unsigned stops;

static void count_stop(void) { stops++; }

static int setup(void **state)
{
	tmpdir = g_dir_make_tmp("vr-audit-out-XXXXXX", NULL);
	logpath = g_build_filename(tmpdir, "run.jsonl", NULL);
	stops = 0;
	return tmpdir ? 0 : -1;
}

static int teardown(void **state)
{
	g_autofree char *cmd = g_strdup_printf("rm -rf '%s'", tmpdir);
	assert_int_equal(system(cmd), 0);
	g_free(tmpdir);
	g_free(logpath);
	return 0;
}

static void open_out(uint64_t max_size, bool fail_open)
{
	VrAuditOutOptions o = {.path = logpath, .fd = -1, .dir_fd = -1, .max_size = max_size,
	                       .fail_open = fail_open};
	vr_audit_out_set_stop_hook(count_stop);
	assert_int_equal(vr_audit_out_open(&o, "r1"), 0);
}

/* Writes records N0 … N0+N-1 (about 100 bytes each), BATCH at a time. */
static void write_records(int n0, int n, int batch)
{
	for (int i = 0; i < n; i += batch) {
		GPtrArray *keep = g_ptr_array_new_with_free_func(g_free);
		GArray *lines = g_array_new(FALSE, FALSE, sizeof(VrAuditLine));
		for (int j = i; j < n && j < i + batch; j++) {
			char *l = g_strdup_printf("{\"ts\":\"2026-12-01T10:00:00.000000Z\",\"run\":\"r1\",\"op\":\"read\","
			                          "\"path\":\"file-%04d\",\"result\":\"ok\"}", n0 + j);
			g_ptr_array_add(keep, l);
			VrAuditLine al = {l, strlen(l), false};
			g_array_append_val(lines, al);
		}
		vr_audit_out_write((const VrAuditLine *)lines->data, lines->len);
		g_array_unref(lines);
		g_ptr_array_unref(keep);
	}
}

static char *first_line(const char *path)
{
	g_autofree char *data = NULL;
	assert_true(g_file_get_contents(path, &data, NULL, NULL));
	char *nl = strchr(data, '\n');
	return g_strndup(data, nl ? (size_t)(nl - data) : strlen(data));
}

/* Every line of PATH ends with "}\n" (no half record) and the count. */
static unsigned whole_lines(const char *path)
{
	g_autofree char *data = NULL;
	gsize len;
	assert_true(g_file_get_contents(path, &data, &len, NULL));
	if (len)
		assert_true(len >= 2 && data[len - 1] == '\n' && data[len - 2] == '}');
	unsigned n = 0;
	for (gsize i = 0; i < len; i++)
		n += data[i] == '\n';
	return n;
}

static void test_rotation(void **state)
{
	open_out(1024, false);
	write_records(0, 60, 7);
	vr_audit_out_seal(0);
	vr_audit_out_close();

	g_autoptr(GPtrArray) parts = vr_audit_log_parts(logpath);
	assert_true(parts->len >= 4);
	char prev[65] = VR_AUDIT_CHAIN_GENESIS;
	unsigned long records = 0;
	for (guint i = 0; i < parts->len; i++) {
		const char *p = parts->pdata[i];
		struct stat st;
		assert_int_equal(stat(p, &st), 0);
		assert_true(st.st_size <= 1024);
		assert_int_equal(st.st_mode & 0777, 0600);
		VrVerifyResult r;
		assert_int_equal(vr_audit_verify_file(p, NULL, &r), 0);
		assert_int_equal(r.state, i + 1 == parts->len ? VR_VERIFY_SEALED : VR_VERIFY_UNSEALED);
		assert_string_equal(r.first_prev, prev);
		if (i > 0) {
			/* The new part says where it comes from. */
			g_autofree char *l = first_line(p);
			g_autofree char *base = g_path_get_basename(parts->pdata[i - 1]);
			g_autofree char *want = g_strdup_printf("\"op\":\"rotate\",\"path\":\"\",\"result\":\"ok\","
			                                        "\"prev\":\"%s\",\"previous_file\":\"%s\"", prev, base);
			assert_non_null(strstr(l, want));
		}
		memcpy(prev, r.final_hash, sizeof prev);
		records += r.records;
	}
	/* 60 records, a rotate record per new part, the seal. */
	assert_int_equal(records, 60 + (parts->len - 1) + 1);
	assert_int_equal(vr_audit_out_records(), records);
}

static void test_rotation_keeps_foreign_parts(void **state)
{
	/* A record bigger than the limit gets a part of its own, and an
	 * existing LOG.1 is never replaced. */
	g_autofree char *foreign = g_strdup_printf("%s.1", logpath);
	assert_true(g_file_set_contents(foreign, "not ours\n", -1, NULL));
	open_out(1024, false);
	write_records(0, 2, 2);
	g_autofree char *big = g_strdup_printf("{\"op\":\"read\",\"path\":\"%0*d\",\"result\":\"ok\"}", 2000, 7);
	VrAuditLine l = {big, strlen(big), false};
	vr_audit_out_write(&l, 1);
	write_records(2, 1, 1);
	vr_audit_out_seal(0);
	vr_audit_out_close();
	g_autofree char *data = NULL;
	assert_true(g_file_get_contents(foreign, &data, NULL, NULL));
	assert_string_equal(data, "not ours\n");
	g_autofree char *p2 = g_strdup_printf("%s.2", logpath), *p3 = g_strdup_printf("%s.3", logpath);
	struct stat st;
	assert_int_equal(stat(p2, &st), 0);   /* the first two records */
	assert_int_equal(stat(p3, &st), 0);   /* rotate + the big one */
	assert_true(st.st_size > 2000);
	assert_int_equal(whole_lines(p3), 2);
}

static void set_fsize(rlim_t limit)
{
	struct rlimit rl;
	assert_int_equal(getrlimit(RLIMIT_FSIZE, &rl), 0);
	rl.rlim_cur = limit;
	assert_int_equal(setrlimit(RLIMIT_FSIZE, &rl), 0);
}

static void test_fail_open(void **state)
{
	signal(SIGXFSZ, SIG_IGN);
	open_out(0, true);
	write_records(0, 10, 5);                     /* about 1.5 KB: written */
	assert_int_equal(vr_audit_out_lost(), 0);
	set_fsize(4096);
	write_records(10, 60, 4);                    /* crosses 4 KiB: EFBIG */
	uint64_t lost = vr_audit_out_lost();
	assert_true(lost > 0);
	assert_false(vr_audit_out_failed());
	assert_int_equal(stops, 0);
	/* What was written is whole records that chain. */
	unsigned lines = whole_lines(logpath);
	VrVerifyResult r;
	assert_int_equal(vr_audit_verify_file(logpath, NULL, &r), 0);
	assert_int_equal(r.state, VR_VERIFY_UNSEALED);
	assert_int_equal(r.records, lines);
	assert_int_equal(lines + lost, 70);          /* each record: written or counted */

	set_fsize(RLIM_INFINITY);
	write_records(70, 1, 1);
	vr_audit_out_seal(0);
	vr_audit_out_close();
	assert_int_equal(vr_audit_verify_file(logpath, NULL, &r), 0);
	assert_int_equal(r.state, VR_VERIFY_SEALED);
	assert_int_equal(r.records, lines + 3);      /* lost, the record, the seal */
	g_autofree char *data = NULL;
	assert_true(g_file_get_contents(logpath, &data, NULL, NULL));
	g_autofree char *want = g_strdup_printf("\"op\":\"lost\",\"path\":\"\",\"result\":\"ok\",\"count\":%"
	                                        G_GUINT64_FORMAT ",\"reason\":\"EFBIG\",\"since\":\"", lost);
	const char *at = strstr(data, want);
	assert_non_null(at);
	assert_true(at < strstr(data, "file-0070"));
	g_autofree char *seal = g_strdup_printf("\"lost\":%" G_GUINT64_FORMAT ",\"hash\"", lost);
	assert_non_null(strstr(data, seal));
}

static void test_fail_closed(void **state)
{
	signal(SIGXFSZ, SIG_IGN);
	open_out(0, false);
	write_records(0, 10, 5);
	set_fsize(4096);
	write_records(10, 60, 4);
	assert_true(vr_audit_out_failed());
	assert_int_equal(stops, 1);
	unsigned lines = whole_lines(logpath);
	set_fsize(RLIM_INFINITY);
	write_records(70, 5, 1);                     /* stopped: nothing more */
	vr_audit_out_seal(0);
	vr_audit_out_close();
	assert_int_equal(stops, 1);
	assert_int_equal(whole_lines(logpath), lines);
	VrVerifyResult r;
	assert_int_equal(vr_audit_verify_file(logpath, NULL, &r), 0);
	assert_int_equal(r.state, VR_VERIFY_UNSEALED);
	assert_int_equal(r.records, lines);
}

static void test_sinks_parse(void **state)
{
	VrAuditSinks s = {0};
	char *why = NULL;
	assert_true(vr_audit_sinks_parse("state", &s, &why));
	assert_true(s.state && !s.file && !s.to_stderr && !s.to_syslog);
	assert_true(vr_audit_sinks_parse("syslog,-,/tmp/a.jsonl", &s, &why));
	assert_true(!s.state && s.to_stderr && s.to_syslog);
	assert_string_equal(s.file, "/tmp/a.jsonl");
	assert_true(vr_audit_sinks_parse("state,syslog,state", &s, &why));
	assert_true(s.state && s.to_syslog);
	assert_true(vr_audit_sinks_parse("syslog", &s, &why));
	assert_true(!s.state && !s.file && s.to_syslog);

	assert_false(vr_audit_sinks_parse("a.jsonl,b.jsonl", &s, &why));
	assert_non_null(strstr(why, "two log files"));
	g_clear_pointer(&why, g_free);
	assert_false(vr_audit_sinks_parse("state,a.jsonl", &s, &why));
	g_clear_pointer(&why, g_free);
	assert_false(vr_audit_sinks_parse("state,,syslog", &s, &why));
	assert_non_null(strstr(why, "empty sink"));
	g_clear_pointer(&why, g_free);
	assert_false(vr_audit_sinks_parse("", &s, &why));
	g_clear_pointer(&why, g_free);
	vr_audit_sinks_clear(&s);

	assert_int_equal(vr_audit_fail_parse("closed"), 0);
	assert_int_equal(vr_audit_fail_parse("open"), 1);
	assert_int_equal(vr_audit_fail_parse("Open"), -1);
	assert_int_equal(vr_audit_fail_parse(NULL), -1);

	guint64 v = 7;
	assert_true(vr_config_parse_audit_max_size("off", &v));
	assert_int_equal(v, 0);
	assert_true(vr_config_parse_audit_max_size("0", &v));
	assert_int_equal(v, 0);
	assert_true(vr_config_parse_audit_max_size("64M", &v));
	assert_int_equal(v, 64u << 20);
	assert_true(vr_config_parse_audit_max_size("2k", &v));
	assert_int_equal(v, 2048);
	assert_false(vr_config_parse_audit_max_size("1000", &v)); /* below 1K */
	assert_false(vr_config_parse_audit_max_size("2G", &v));   /* above 1G */
	assert_false(vr_config_parse_audit_max_size("-1", &v));
	assert_false(vr_config_parse_audit_max_size("10X", &v));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_rotation, setup, teardown),
		cmocka_unit_test_setup_teardown(test_rotation_keeps_foreign_parts, setup, teardown),
		cmocka_unit_test_setup_teardown(test_fail_open, setup, teardown),
		cmocka_unit_test_setup_teardown(test_fail_closed, setup, teardown),
		cmocka_unit_test(test_sinks_parse),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
