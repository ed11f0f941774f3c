/* The summary of an audit log (audit/summary.c): counts of distinct files
 * read, written, created, deleted, renamed; refusals; connections; the
 * run's command, exit status and seal; lost and dropped records; and a
 * file name the agent chose cannot rewrite the reviewer's terminal. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <glib.h>

#include "audit/read.h"
#include "audit/summary.h"

static const char log_text[] =
	"{\"ts\":\"2026-12-01T10:00:00.000000Z\",\"run\":\"r1\",\"op\":\"run-start\",\"command\":\"sh -c x\"}\n"
	"{\"ts\":\"2026-12-01T10:00:01.000000Z\",\"run\":\"r1\",\"op\":\"read\",\"path\":\"a.c\",\"result\":\"ok\",\"comm\":\"cat\"}\n"
	"{\"ts\":\"2026-12-01T10:00:01.100000Z\",\"run\":\"r1\",\"op\":\"read\",\"path\":\"a.c\",\"result\":\"ok\",\"comm\":\"cat\"}\n"
	"{\"ts\":\"2026-12-01T10:00:01.200000Z\",\"run\":\"r1\",\"op\":\"close\",\"path\":\"b.c\",\"result\":\"ok\",\"bytes_read\":3,\"bytes_written\":5}\n"
	"{\"ts\":\"2026-12-01T10:00:02.000000Z\",\"run\":\"r1\",\"op\":\"create\",\"path\":\"new\",\"result\":\"ok\"}\n"
	"{\"ts\":\"2026-12-01T10:00:02.100000Z\",\"run\":\"r1\",\"op\":\"unlink\",\"path\":\"old\",\"result\":\"ok\"}\n"
	"{\"ts\":\"2026-12-01T10:00:02.200000Z\",\"run\":\"r1\",\"op\":\"rename\",\"path\":\"x\",\"target\":\"y\",\"result\":\"ok\"}\n"
	"{\"ts\":\"2026-12-01T10:00:03.000000Z\",\"run\":\"r1\",\"op\":\"lookup\",\"path\":\".env\",\"result\":\"hidden\",\"rule\":\".env\"}\n"
	"{\"ts\":\"2026-12-01T10:00:03.100000Z\",\"run\":\"r1\",\"op\":\"write\",\"path\":\".git/hooks/pre-commit\",\"result\":\"readonly\"}\n"
	"{\"ts\":\"2026-12-01T10:00:03.200000Z\",\"run\":\"r1\",\"op\":\"read\",\"path\":\"cfg.ini\",\"result\":\"redacted\"}\n"
	"{\"ts\":\"2026-12-01T10:00:04.000000Z\",\"run\":\"r1\",\"op\":\"connect\",\"host\":\"github.com\",\"port\":443,\"result\":\"ok\"}\n"
	"{\"ts\":\"2026-12-01T10:00:04.100000Z\",\"run\":\"r1\",\"op\":\"connect\",\"host\":\"evil.example\",\"port\":443,\"result\":\"denied\"}\n"
	"{\"ts\":\"2026-12-01T10:00:04.200000Z\",\"run\":\"r1\",\"op\":\"lost\",\"count\":4}\n"
	"{\"ts\":\"2026-12-01T10:00:04.300000Z\",\"run\":\"r1\",\"op\":\"dropped\",\"count\":2}\n"
	"not json at all\n"
	"{\"ts\":\"2026-12-01T10:00:05.000000Z\",\"run\":\"r1\",\"op\":\"run-end\",\"exit_status\":3}\n"
	"{\"ts\":\"2026-12-01T10:00:05.000001Z\",\"run\":\"r1\",\"op\":\"seal\",\"hash\":\"abc123\"}\n";

static VrAuditSummary *summarize(const char *text)
{
	int fds[2];
	assert_int_equal(pipe(fds), 0);
	assert_int_equal(write(fds[1], text, strlen(text)), (ssize_t)strlen(text));
	close(fds[1]);
	VrAuditReader *r = vr_audit_reader_new_fd(fds[0], "test.jsonl");
	VrAuditSummary *s = vr_audit_summary_new();
	VrAuditRecord rec;
	vr_audit_record_init(&rec);
	int n;
	while ((n = vr_audit_reader_next(r, &rec)) != 0)
		if (n > 0)
			vr_audit_summary_add(s, &rec);
	vr_audit_summary_set_bad_lines(s, vr_audit_reader_bad_lines(r));
	vr_audit_record_clear(&rec);
	vr_audit_reader_free(r);
	return s;
}

static void counts(void **state)
{
	(void)state;
	VrAuditSummary *s = summarize(log_text);
	VrAuditCounts c;
	vr_audit_summary_counts(s, &c);
	assert_string_equal(c.run, "r1");
	assert_string_equal(c.command, "sh -c x");
	assert_true(c.ended);
	assert_int_equal(c.exit_status, 3);
	assert_true(c.sealed);
	assert_string_equal(c.final_hash, "abc123");
	assert_int_equal(c.bad_lines, 1);
	assert_int_equal(c.files_read, 3);    /* a.c once, b.c by its close, cfg.ini redacted */
	assert_int_equal(c.files_written, 1); /* b.c */
	assert_int_equal(c.files_created, 1);
	assert_int_equal(c.files_deleted, 1);
	assert_int_equal(c.files_renamed, 1);
	assert_int_equal(c.denied, 2); /* hidden and readonly; redacted is a read that worked */
	assert_int_equal(c.conn_allowed, 1);
	assert_int_equal(c.conn_denied, 1);
	assert_int_equal(c.lost, 4);
	assert_int_equal(c.dropped, 2);
	vr_audit_summary_free(s);
}

/* The table and the JSON object both name what was refused. */
static void printed_forms(void **state)
{
	(void)state;
	VrAuditSummary *s = summarize(log_text);
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	vr_audit_summary_print(s, f, 0);
	fclose(f);
	assert_non_null(strstr(buf, ".env"));
	assert_non_null(strstr(buf, "evil.example"));
	free(buf);
	f = open_memstream(&buf, &len);
	vr_audit_summary_print_json(s, f);
	fclose(f);
	assert_non_null(strstr(buf, "\"files_read\":3"));
	assert_non_null(strstr(buf, "\"connections_denied\":1"));
	assert_true(len > 2 && buf[0] == '{' && buf[len - 1] == '\n');
	free(buf);
	vr_audit_summary_free(s);
}

static void names_cannot_drive_the_terminal(void **state)
{
	(void)state;
	GString *out = g_string_new(NULL);
	vr_audit_append_printable(out, "ok\x1b[2Jname\x7f\xff\xc3\xa9");
	assert_null(strchr(out->str, '\x1b'));
	assert_null(strchr(out->str, '\x7f'));
	assert_non_null(strstr(out->str, "\\x1b"));
	assert_non_null(strstr(out->str, "\\xff"));
	assert_non_null(strstr(out->str, "\xc3\xa9")); /* valid UTF-8 stays */
	g_string_free(out, TRUE);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(counts),
		cmocka_unit_test(printed_forms),
		cmocka_unit_test(names_cannot_drive_the_terminal),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
