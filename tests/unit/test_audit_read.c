/* Reading audit logs (audit/read.c), the hash chain
 * (audit/chain.c, audit/verify.c) and the state directory
 * (audit/state-dir.c). */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <glib.h>
#include <glib/gstdio.h>

#include "audit/chain.h"
#include "audit/read.h"
#include "audit/verify.h"
#include "audit/state-dir.h"

static char *tmpdir;

static int setup(void **state)
{
	tmpdir = g_dir_make_tmp("vr-audit-XXXXXX", NULL);
	return tmpdir ? 0 : -1;
}

static int teardown(void **state)
{
	g_autofree char *cmd = g_strdup_printf("rm -rf '%s'", tmpdir);
	assert_int_equal(system(cmd), 0);
	g_free(tmpdir);
	return 0;
}

static char *write_file(const char *name, const char *data, size_t len)
{
	char *path = g_build_filename(tmpdir, name, NULL);
	assert_true(g_file_set_contents(path, data, (gssize)len, NULL));
	return path;
}

static void test_reader_lines(void **state)
{
	static const char log[] =
		"{\"ts\":\"2026-12-01T08:00:00Z\",\"op\":\"open\",\"path\":\"a\",\"pid\":7,\"result\":\"ok\"}\n"
		"not json\n"
		"\n"
		"{\"op\":\"unlink\",\"path\":\"b\",\"result\":\"readonly\",\"rule\":\".git/hooks/ (built-in)\"}\n"
		"{\"op\":\"close\",\"path\":\"c\",\"bytes_written\":3}";   /* no final newline */
	g_autofree char *path = write_file("lines.jsonl", log, sizeof log - 1);
	VrAuditReader *r;
	assert_int_equal(vr_audit_reader_open(path, &r), 0);
	VrAuditRecord rec;
	vr_audit_record_init(&rec);

	assert_int_equal(vr_audit_reader_next(r, &rec), 1);
	assert_int_equal(rec.lineno, 1);
	assert_string_equal(rec.op, "open");
	assert_int_equal(rec.pid, 7);
	assert_int_equal(rec.ts_us, INT64_C(1796112000) * 1000000);
	assert_int_equal(rec.bytes_read, -1);
	assert_false(vr_audit_record_denied(&rec));
	assert_false(vr_audit_record_is_write(&rec));

	assert_int_equal(vr_audit_reader_next(r, &rec), -EBADMSG);
	assert_int_equal(vr_audit_reader_lineno(r), 2);
	assert_int_equal(vr_audit_reader_next(r, &rec), -EBADMSG);
	assert_int_equal(vr_audit_reader_lineno(r), 3);

	assert_int_equal(vr_audit_reader_next(r, &rec), 1);
	assert_int_equal(rec.lineno, 4);
	assert_true(vr_audit_record_denied(&rec));
	assert_true(vr_audit_record_is_write(&rec));
	assert_string_equal(rec.rule, ".git/hooks/ (built-in)");
	assert_int_equal(rec.ts_us, INT64_MIN);

	/* Without --follow, an unterminated last line is still the last line. */
	assert_int_equal(vr_audit_reader_next(r, &rec), 1);
	assert_int_equal(rec.lineno, 5);
	assert_true(vr_audit_reader_unterminated(r));
	assert_true(vr_audit_record_is_write(&rec));
	assert_int_equal(vr_audit_reader_next(r, &rec), 0);
	assert_int_equal(vr_audit_reader_bad_lines(r), 2);
	vr_audit_record_clear(&rec);
	vr_audit_reader_free(r);
}

static void test_reader_follow_and_long_lines(void **state)
{
	g_autofree char *path = g_build_filename(tmpdir, "live.jsonl", NULL);
	int wfd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	assert_true(wfd >= 0);
	VrAuditReader *r;
	assert_int_equal(vr_audit_reader_open(path, &r), 0);
	vr_audit_reader_set_follow(r, true);
	VrAuditRecord rec;
	vr_audit_record_init(&rec);

	assert_int_equal(write(wfd, "{\"op\":\"open\"", 12), 12);
	assert_int_equal(vr_audit_reader_next(r, &rec), 0);  /* half a line: held back */
	assert_int_equal(write(wfd, ",\"pid\":3}\n", 10), 10);
	assert_int_equal(vr_audit_reader_next(r, &rec), 1);
	assert_int_equal(rec.pid, 3);

	/* A line past the limit is one bad line, dropped in constant memory,
	 * and the next line is read normally. */
	size_t big = VR_AUDIT_MAX_LINE + 100000;
	char *junk = g_malloc(big);
	memset(junk, 'x', big);
	assert_int_equal(write(wfd, junk, big), (ssize_t)big);
	g_free(junk);
	assert_int_equal(vr_audit_reader_next(r, &rec), 0);
	assert_int_equal(write(wfd, "\n{\"op\":\"close\"}\n", 16), 16);
	assert_int_equal(vr_audit_reader_next(r, &rec), -EBADMSG);
	assert_string_equal(vr_audit_reader_error(r), "line too long");
	assert_int_equal(vr_audit_reader_next(r, &rec), 1);
	assert_string_equal(rec.op, "close");
	assert_int_equal(rec.lineno, 3);
	close(wfd);
	vr_audit_record_clear(&rec);
	vr_audit_reader_free(r);
}

static void test_time(void **state)
{
	int64_t t;
	assert_int_equal(vr_audit_parse_rfc3339("1970-01-01T00:00:00Z", &t), 0);
	assert_int_equal(t, 0);
	assert_int_equal(vr_audit_parse_rfc3339("2000-03-01T00:00:00.5Z", &t), 0);
	assert_int_equal(t, INT64_C(951868800500000));
	assert_int_equal(vr_audit_parse_rfc3339("2000-03-01T01:30:00.123456789+01:30", &t), 0);
	assert_int_equal(t, INT64_C(951868800123456));
	assert_int_equal(vr_audit_parse_rfc3339("1969-12-31T23:59:59-00:00", &t), 0);
	assert_int_equal(t, -1000000);
	static const char *const bad[] = {"", "2026-12-01", "2026-12-01T08:00:00", "2026-13-01T00:00:00Z",
	                                  "2026-12-01T24:00:00Z", "2026-12-01T08:00:00.Z",
	                                  "2026-12-01T08:00:00Zjunk", "2026-1-01T08:00:00Z"};
	for (size_t i = 0; i < sizeof bad / sizeof *bad; i++)
		assert_int_equal(vr_audit_parse_rfc3339(bad[i], &t), -EINVAL);

	char buf[40];
	vr_audit_format_time(INT64_C(951868800123456), buf, sizeof buf);
	assert_string_equal(buf, "2000-03-01T00:00:00.123456Z");

	bool rel;
	int64_t now = INT64_C(1000000000) * 1000000;
	assert_int_equal(vr_audit_parse_time_arg("10m", now, &t, &rel), 0);
	assert_false(rel);
	assert_int_equal(t, now - INT64_C(600000000));
	assert_int_equal(vr_audit_parse_time_arg("-2h", now, &t, &rel), 0);
	assert_int_equal(t, now - INT64_C(7200000000));
	assert_int_equal(vr_audit_parse_time_arg("+30s", now, &t, &rel), 0);
	assert_true(rel);
	assert_int_equal(t, INT64_C(30000000));
	assert_int_equal(vr_audit_parse_time_arg("1970-01-01T00:00:01Z", now, &t, &rel), 0);
	assert_int_equal(t, 1000000);
	assert_int_equal(vr_audit_parse_time_arg("10x", now, &t, &rel), -EINVAL);
	assert_int_equal(vr_audit_parse_time_arg("m", now, &t, &rel), -EINVAL);
	assert_int_equal(vr_audit_parse_time_arg("99999999999999999999d", now, &t, &rel), -EINVAL);
}

/* A sealed four-record log made with the writer's own function. */
static GString *make_chain(const char *first_prev)
{
	static const char *const members[] = {
		"\"ts\":\"2026-12-01T08:00:00Z\",\"run\":\"r\",\"op\":\"run-start\",\"command\":\"sh -c x\"",
		"\"ts\":\"2026-12-01T08:00:01Z\",\"run\":\"r\",\"op\":\"open\",\"path\":\".env\",\"result\":\"hidden\"",
		"\"ts\":\"2026-12-01T08:00:02Z\",\"run\":\"r\",\"op\":\"run-end\",\"exit_status\":0",
		"\"ts\":\"2026-12-01T08:00:02Z\",\"run\":\"r\",\"op\":\"seal\",\"records\":3",
	};
	GString *s = g_string_new(NULL);
	char prev[VR_AUDIT_HASH_HEX_LEN + 1] = VR_AUDIT_CHAIN_GENESIS;
	if (first_prev)
		memcpy(prev, first_prev, sizeof prev);
	for (size_t i = 0; i < 4; i++) {
		char line[512];
		size_t n;
		g_autofree char *m = i == 0 && first_prev
			? g_strdup_printf("\"prev\":\"%s\",%s", first_prev, members[i])
			: g_strdup(members[i]);
		assert_int_equal(vr_audit_chain_format(line, sizeof line, i + 1, m, strlen(m), prev, &n), 0);
		assert_int_equal(strlen(line), n);
		g_string_append_len(s, line, (gssize)n);
	}
	return s;
}

static int verify_data(const char *data, size_t len, const char *expect, VrVerifyResult *res)
{
	g_autofree char *path = write_file("v.jsonl", data, len);
	assert_int_equal(vr_audit_verify_file(path, expect, res), 0);
	return vr_audit_verify_exit_code(res);
}

static void test_chain_format(void **state)
{
	char prev[65] = VR_AUDIT_CHAIN_GENESIS, line[128];
	size_t n;
	assert_int_equal(vr_audit_chain_format(line, sizeof line, 1, "\"op\":\"x\"", 8, prev, &n), 0);
	/* The documented formula, recomputed independently. */
	g_autofree char *want = g_compute_checksum_for_string(
		G_CHECKSUM_SHA256, VR_AUDIT_CHAIN_GENESIS "\n{\"seq\":1,\"op\":\"x\"", -1);
	g_autofree char *expect_line = g_strdup_printf("{\"seq\":1,\"op\":\"x\",\"hash\":\"%s\"}\n", want);
	assert_string_equal(line, expect_line);
	assert_string_equal(prev, want);
	char small[40];
	assert_int_equal(vr_audit_chain_format(small, sizeof small, 2, "\"op\":\"x\"", 8, prev, &n), -ENOSPC);
	assert_string_equal(prev, want);
	assert_int_equal(vr_audit_chain_format(line, sizeof line, 2, "", 0, prev, &n), -EINVAL);
}

static void test_verify(void **state)
{
	VrVerifyResult res;
	g_autoptr(GString) log = make_chain(NULL);
	assert_int_equal(verify_data(log->str, log->len, NULL, &res), 0);
	assert_int_equal(res.state, VR_VERIFY_SEALED);
	assert_int_equal(res.records, 4);
	g_autofree char *final = g_strdup(res.final_hash);
	assert_int_equal(verify_data(log->str, log->len, final, &res), 0);
	assert_int_equal(verify_data(log->str, log->len, VR_AUDIT_CHAIN_GENESIS, &res), 1);

	/* Flip each byte in turn: never passes. */
	for (size_t i = 0; i < log->len; i++) {
		g_autofree char *copy = g_memdup2(log->str, log->len);
		copy[i] ^= 0x01;
		if (verify_data(copy, log->len, NULL, &res) == 0)
			fail_msg("flipping byte %zu went unnoticed", i);
	}

	g_auto(GStrv) lines = g_strsplit(log->str, "\n", -1);  /* 4 lines + "" */
	/* Delete each record in turn. */
	for (int del = 0; del < 4; del++) {
		GString *s = g_string_new(NULL);
		for (int i = 0; i < 4; i++)
			if (i != del)
				g_string_append_printf(s, "%s\n", lines[i]);
		int code = verify_data(s->str, s->len, NULL, &res);
		if (del == 3) {
			assert_int_equal(code, 2);  /* the seal is gone: unsealed */
			assert_int_equal(res.state, VR_VERIFY_UNSEALED);
		} else {
			assert_int_equal(code, 1);
			assert_int_equal(res.bad_line, (unsigned long)del + 1);
		}
		g_string_free(s, TRUE);
	}
	/* Swap two records. */
	g_autofree char *swapped = g_strdup_printf("%s\n%s\n%s\n%s\n", lines[0], lines[2], lines[1], lines[3]);
	assert_int_equal(verify_data(swapped, strlen(swapped), NULL, &res), 1);
	assert_int_equal(res.bad_line, 2);
	/* Cut the tail mid-record. */
	assert_int_equal(verify_data(log->str, log->len - 20, NULL, &res), 2);
	assert_int_equal(res.state, VR_VERIFY_UNSEALED);
	/* A record appended after the seal. */
	g_autofree char *extra = g_strdup_printf("%s%s\n", log->str, lines[1]);
	assert_int_equal(verify_data(extra, strlen(extra), NULL, &res), 1);
	assert_int_equal(res.bad_line, 5);
	/* A log written without a chain. */
	static const char plain[] = "{\"op\":\"open\"}\n";
	assert_int_equal(verify_data(plain, sizeof plain - 1, NULL, &res), 3);
	/* Empty. */
	assert_int_equal(verify_data("", 0, NULL, &res), 2);

	/* A rotated file continues from its predecessor's last hash. */
	g_autoptr(GString) rotated = make_chain(final);
	assert_int_equal(verify_data(rotated->str, rotated->len, NULL, &res), 0);
	assert_string_equal(res.first_prev, final);

	/* Unreadable. */
	assert_int_equal(vr_audit_verify_file("/nonexistent/x.jsonl", NULL, &res), -ENOENT);
}

static void test_state_dir(void **state)
{
	g_autofree char *xdg = g_build_filename(tmpdir, "state", NULL);
	g_autofree char *proj = g_build_filename(tmpdir, "my proj", NULL);
	assert_int_equal(g_mkdir(proj, 0755), 0);
	g_setenv("XDG_STATE_HOME", xdg, TRUE);

	g_autofree char *dir = NULL, *log = NULL;
	assert_int_equal(vr_state_project_dir(proj, &dir), 0);
	g_autofree char *real = realpath(proj, NULL);
	g_autofree char *sum = g_compute_checksum_for_string(G_CHECKSUM_SHA256, real, -1);
	g_autofree char *want = g_strdup_printf("%s/vault-run/my_proj-%.16s", xdg, sum);
	assert_string_equal(dir, want);
	assert_int_equal(vr_state_run_log_path(proj, "r1", &log), 0);
	g_autofree char *want_log = g_strdup_printf("%s/r1.jsonl", want);
	assert_string_equal(log, want_log);
	char *bad = NULL;
	assert_int_equal(vr_state_run_log_path(proj, "../x", &bad), -EINVAL);
	assert_int_equal(vr_state_run_log_path(proj, ".hidden", &bad), -EINVAL);
	assert_int_equal(vr_state_run_log_path("/nonexistent/p", "r1", &bad), -ENOENT);
	assert_null(bad);
	g_autofree char *id = vr_state_new_run_id();
	assert_true(vr_state_run_id_valid(id));

	/* Nothing recorded yet: an empty list, not an error. */
	GPtrArray *runs;
	assert_int_equal(vr_state_list_runs(proj, &runs), 0);
	assert_int_equal(runs->len, 0);
	g_ptr_array_unref(runs);

	int fd;
	g_autofree char *made = NULL;
	assert_int_equal(vr_state_create_run_log(proj, "r1", &fd, &made), 0);
	assert_string_equal(made, want_log);
	struct stat st;
	assert_int_equal(fstat(fd, &st), 0);
	assert_int_equal(st.st_mode & 07777, 0600);
	assert_int_equal(fcntl(fd, F_GETFL) & O_APPEND, O_APPEND);
	close(fd);
	assert_int_equal(stat(want, &st), 0);
	assert_int_equal(st.st_mode & 07777, 0700);
	/* Never reuses or follows an existing name. */
	assert_int_equal(vr_state_create_run_log(proj, "r1", &fd, NULL), -EEXIST);
	g_autofree char *planted = g_strdup_printf("%s/r2.jsonl", want);
	assert_int_equal(symlink("/tmp/elsewhere", planted), 0);
	assert_int_equal(vr_state_create_run_log(proj, "r2", &fd, NULL), -EEXIST);

	/* Listing: oldest first, only regular *.jsonl with valid ids. */
	g_autofree char *p3 = g_strdup_printf("%s/r0.jsonl", want);
	assert_true(g_file_set_contents(p3, "", 0, NULL));
	struct timespec old[2] = {{1000, 0}, {1000, 0}};
	assert_int_equal(utimensat(AT_FDCWD, p3, old, 0), 0);
	g_autofree char *other = g_strdup_printf("%s/notes.txt", want);
	assert_true(g_file_set_contents(other, "", 0, NULL));
	assert_int_equal(vr_state_list_runs(proj, &runs), 0);
	assert_int_equal(runs->len, 2);
	assert_string_equal(((VrStateRun *)runs->pdata[0])->run_id, "r0");
	assert_string_equal(((VrStateRun *)runs->pdata[1])->run_id, "r1");
	g_ptr_array_unref(runs);

	/* A group-accessible directory, or a symlink in its place, is refused. */
	assert_int_equal(chmod(want, 0750), 0);
	assert_int_equal(vr_state_create_run_log(proj, "r3", &fd, NULL), -EPERM);
	assert_int_equal(chmod(want, 0700), 0);
	g_autofree char *moved = g_strdup_printf("%s.real", want);
	assert_int_equal(rename(want, moved), 0);
	assert_int_equal(symlink(moved, want), 0);
	assert_int_equal(vr_state_create_run_log(proj, "r3", &fd, NULL), -ELOOP);
	g_unsetenv("XDG_STATE_HOME");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_reader_lines),
		cmocka_unit_test(test_reader_follow_and_long_lines),
		cmocka_unit_test(test_time),
		cmocka_unit_test(test_chain_format),
		cmocka_unit_test(test_verify),
		cmocka_unit_test(test_state_dir),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
