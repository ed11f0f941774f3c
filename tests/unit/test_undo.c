/* undo/ on audit/'s journal format: a journal written with the format's
 * own encoder (audit/journal.h) reads back, and vr_undo_apply puts a
 * modified file back, removes a created one, refuses (exit 1) a path the
 * host changed after the run unless forced, and refuses to follow a
 * symlink planted where a directory was. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <glib.h>
#include <glib/gstdio.h>

#include "audit/journal.h"
#include "undo/undo.h"

static char *T, *P, *J;

static char *at(const char *base, const char *rel)
{
	return g_build_filename(base, rel, NULL);
}

static void put(const char *base, const char *rel, const char *content)
{
	g_autofree char *p = at(base, rel);
	assert_true(g_file_set_contents(p, content, -1, NULL));
}

static char *get(const char *base, const char *rel)
{
	g_autofree char *p = at(base, rel);
	char *c = NULL;
	return g_file_get_contents(p, &c, NULL, NULL) ? c : NULL;
}

static int setup(void **state)
{
	(void)state;
	T = g_dir_make_tmp("vr-undo-XXXXXX", NULL);
	P = at(T, "project");
	J = at(T, "journal");
	g_autofree char *objects = at(J, "objects"), *st = at(T, "state");
	g_autofree char *sub = at(P, "sub");
	assert_int_equal(g_mkdir(P, 0700) | g_mkdir(sub, 0700) | g_mkdir(J, 0700) | g_mkdir(objects, 0700) |
	                 g_mkdir(st, 0700), 0);
	g_setenv("XDG_STATE_HOME", st, TRUE); /* the undo's own journal goes there */
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	g_autofree char *cmd = g_strdup_printf("rm -rf '%s'", T);
	assert_int_equal(system(cmd), 0);
	g_free(P);
	g_free(J);
	g_free(T);
	return 0;
}

static void add(GString *m, GString *r)
{
	vr_journal_record_end(r);
	g_string_append_len(m, r->str, (gssize)r->len);
	g_string_free(r, TRUE);
}

/* A run that changed sub/README (kept as objects/0: "before") and created
 * new.txt, as the view daemon would have journalled it. */
static void write_journal(void)
{
	put(P, "sub/README", "after\n");
	put(P, "new.txt", "made by the run\n");
	put(J, "objects/0", "before\n");
	struct stat obj, now, made;
	g_autofree char *o = at(J, "objects/0"), *r = at(P, "sub/README"), *n = at(P, "new.txt");
	assert_int_equal(stat(o, &obj) | stat(r, &now) | stat(n, &made), 0);
	GString *m = g_string_new(NULL);
	GString *s = vr_journal_record_new(1, "start");
	vr_journal_record_str(s, "project", P);
	vr_journal_record_str(s, "run", "test-run");
	add(m, s);
	s = vr_journal_record_new(2, "modified");
	vr_journal_record_str(s, "path", "sub/README");
	vr_journal_record_str(s, "object", "0");
	vr_journal_record_stat(s, &obj);
	add(m, s);
	s = vr_journal_record_new(3, "created");
	vr_journal_record_str(s, "path", "new.txt");
	add(m, s);
	s = vr_journal_record_new(4, "sealed");
	g_string_append_printf(s, ",\"object\":\"0\",\"size\":%lld,\"ctime_ns\":%lld", (long long)obj.st_size,
	                       (long long)obj.st_ctim.tv_sec * 1000000000LL + obj.st_ctim.tv_nsec);
	add(m, s);
	s = vr_journal_record_new(5, "final");
	vr_journal_record_str(s, "path", "sub/README");
	vr_journal_record_stat(s, &now);
	add(m, s);
	s = vr_journal_record_new(6, "final");
	vr_journal_record_str(s, "path", "new.txt");
	vr_journal_record_stat(s, &made);
	add(m, s);
	add(m, vr_journal_record_new(7, "stop"));
	put(J, "manifest.jsonl", m->str);
	g_string_free(m, TRUE);
}

static void the_format_reads_back(void **state)
{
	(void)state;
	write_journal();
	g_autoptr(VrJournal) j = NULL;
	assert_int_equal(vr_journal_load(J, &j), 0);
	assert_string_equal(j->project, P);
	assert_string_equal(j->run, "test-run");
	assert_true(j->complete);
	assert_int_equal(j->records->len, 2);
	const VrJournalRecord *r = j->records->pdata[0];
	assert_string_equal(r->op, "modified");
	assert_string_equal(r->path, "sub/README");
	assert_string_equal(r->object, "0");
	assert_string_equal(r->type, "file");
	assert_int_equal(r->size, 7);
	assert_non_null(g_hash_table_lookup(j->final, "new.txt"));
	assert_non_null(g_hash_table_lookup(j->seals, "0"));
}

static void undo_puts_back_and_removes(void **state)
{
	(void)state;
	write_journal();
	g_autoptr(VrJournal) j = NULL;
	assert_int_equal(vr_journal_load(J, &j), 0);
	assert_int_equal(vr_undo_apply(j, P, NULL, false, true), 0); /* --dry-run: nothing changes */
	g_autofree char *still = get(P, "sub/README");
	assert_string_equal(still, "after\n");
	assert_int_equal(vr_undo_apply(j, P, NULL, false, false), 0);
	g_autofree char *back = get(P, "sub/README");
	assert_string_equal(back, "before\n");
	g_autofree char *gone = at(P, "new.txt");
	assert_false(g_file_test(gone, G_FILE_TEST_EXISTS));
}

static void host_changes_are_refused_unless_forced(void **state)
{
	(void)state;
	write_journal();
	put(P, "sub/README", "the user edited this since\n");
	g_autoptr(VrJournal) j = NULL;
	assert_int_equal(vr_journal_load(J, &j), 0);
	assert_int_equal(vr_undo_apply(j, P, NULL, false, false), 1);
	g_autofree char *kept = get(P, "sub/README");
	assert_string_equal(kept, "the user edited this since\n");
	assert_int_equal(vr_undo_apply(j, P, NULL, true, false), 0);
	g_autofree char *back = get(P, "sub/README");
	assert_string_equal(back, "before\n");
}

static void a_planted_symlink_is_not_followed(void **state)
{
	(void)state;
	write_journal();
	/* sub becomes a link to a directory outside: a restore through it
	 * would write outside the project. */
	g_autofree char *sub = at(P, "sub"), *outside = at(T, "outside"), *moved = at(T, "sub.moved");
	assert_int_equal(rename(sub, moved), 0);
	assert_int_equal(g_mkdir(outside, 0700), 0);
	put(T, "outside/README", "outside\n");
	assert_int_equal(symlink(outside, sub), 0);
	g_autoptr(VrJournal) j = NULL;
	assert_int_equal(vr_journal_load(J, &j), 0);
	assert_int_not_equal(vr_undo_apply(j, P, NULL, true, false), 0);
	g_autofree char *untouched = get(T, "outside/README");
	assert_string_equal(untouched, "outside\n");
	assert_int_equal(unlink(sub), 0);
	assert_int_equal(rename(moved, sub), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(the_format_reads_back, setup, teardown),
		cmocka_unit_test_setup_teardown(undo_puts_back_and_removes, setup, teardown),
		cmocka_unit_test_setup_teardown(host_changes_are_refused_unless_forced, setup, teardown),
		cmocka_unit_test_setup_teardown(a_planted_symlink_is_not_followed, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
