/* The pattern matcher against git itself: generated .gitignore files and a
 * fixed tree, every (pattern set, path) answered by `git check-ignore
 * --no-index`, compared with vr_policy_decide over HIDE/SHOW rules. Plus
 * hand-written edge cases of the glob syntax. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <glib.h>
#include <glib/gstdio.h>
#include <string.h>

#include "policy/match.h"
#include "policy/policy.h"

/* The tree git and we look at: trailing '/' marks directories. */
static const char *const tree[] = {
	"a/", "a/b/", "a/b/c/", "a/b/c/f.txt", "a/b/f.c", "a/f.txt", "a/x/", "a/x/y.pem",
	"a/x/b", "b/", "b/a/", "b/a/b", "b/c.txt", "doc/", "doc/frotz/", "doc/frotz/file",
	"foo/", "foo/foo/", "foo/foo/bar", "foo/bar.c", "foo/bar/", "foo/bar/baz.c", "top.txt",
	".env", ".env.local", ".env.example", "x.d/", "x.d/z", "abc", "a.b.c", "9lives",
	"sub/", "sub/a/", "sub/a/b", "sub/top.txt", "c/", "c/a", "f.txt",
};

static const char *const vocab[] = {
	"*.txt", "a", "a/", "/a", "b/", "a/b", "a/**", "**/b", "a/**/c", "**/c/f.txt", "*",
	"?", "f.*", "[ab]", "[!a]*", "[a-c]*", "doc/frotz/", "/doc/frotz", "foo/*",
	"foo/**/bar", "*.c", "x.d/", "a?b", "**", "*/", ".env*", "b/a", "!a/b/c", "!*.txt",
	"!f.c", "!a/", "!b", "!.env.example", "**/foo", "foo/", "*/b", "/top.txt", "a/b/c/",
	"f.txt/", "[^b]*", "[[:digit:]]*", "a/*/f.txt", "*/*/f.c", "**/a/**", "!sub/", "sub/a",
	"a/**/", "**/x/*", "[]a]*", "*.[ct]*", "\\*.txt", "top.txt ", "foo\\/bar", "!foo/bar/",
	"*/a/", "c", "!c/a", "a.b.?", "[a-]*", "!**/b", "/*/", "!/b", "**/*.c", "foo/bar/",
};

/* A fixed LCG: the same cases on every machine. */
static guint32 rng_state = 12345;
static guint32 rnd(guint32 n)
{
	rng_state = rng_state * 1103515245u + 12345u;
	return (rng_state >> 16) % n;
}

static gboolean run_git(const char *dir, const char *args)
{
	g_autofree char *cmd = g_strdup_printf("cd '%s' && %s", dir, args);
	int status = system(cmd);
	return status == 0;
}

static void test_git_oracle(void **state)
{
	g_autofree char *git = g_find_program_in_path("git");
	if (!git)
		skip();
	g_autofree char *dir = g_dir_make_tmp("vr-match-XXXXXX", NULL);
	assert_non_null(dir);
	assert_true(run_git(dir, "git init -q ."));
	for (gsize i = 0; i < G_N_ELEMENTS(tree); i++) {
		g_autofree char *p = g_build_filename(dir, tree[i], NULL);
		if (g_str_has_suffix(tree[i], "/"))
			assert_int_equal(g_mkdir_with_parents(p, 0755), 0);
		else
			assert_true(g_file_set_contents(p, "x", 1, NULL));
	}
	GString *paths = g_string_new(NULL);
	for (gsize i = 0; i < G_N_ELEMENTS(tree); i++) {
		g_autofree char *p = g_strdup(tree[i]);
		if (g_str_has_suffix(p, "/"))
			p[strlen(p) - 1] = '\0';
		g_string_append_printf(paths, "%s\n", p);
	}
	g_autofree char *paths_file = g_build_filename(dir, ".paths", NULL);
	assert_true(g_file_set_contents(paths_file, paths->str, -1, NULL));
	g_string_free(paths, TRUE);

	int cases = 0, sets = 90;
	for (int s = 0; s < sets; s++) {
		int n = 1 + (int)rnd(4);
		const char *pats[4];
		GString *gi = g_string_new(NULL);
		g_autoptr(VrPolicy) policy = vr_policy_new();
		for (int k = 0; k < n; k++) {
			pats[k] = vocab[rnd(G_N_ELEMENTS(vocab))];
			g_string_append_printf(gi, "%s\n", pats[k]);
			g_autoptr(GError) error = NULL;
			gboolean neg = pats[k][0] == '!';
			assert_true(vr_policy_add(policy, neg ? VR_RULE_SHOW : VR_RULE_HIDE,
			                          pats[k] + neg, "t", k + 1, FALSE, &error));
		}
		g_autofree char *gi_file = g_build_filename(dir, ".gitignore", NULL);
		assert_true(g_file_set_contents(gi_file, gi->str, -1, NULL));
		run_git(dir, "git check-ignore --no-index -v -n --stdin <.paths >.out 2>.err");
		g_autofree char *out_file = g_build_filename(dir, ".out", NULL);
		g_autofree char *out = NULL;
		assert_true(g_file_get_contents(out_file, &out, NULL, NULL));
		g_auto(GStrv) lines = g_strsplit(out, "\n", -1);
		assert_int_equal(g_strv_length(lines), G_N_ELEMENTS(tree) + 1);
		for (gsize i = 0; i < G_N_ELEMENTS(tree); i++) {
			/* "SOURCE:LINE:PATTERN\tPATH", or "::\tPATH" for no match. */
			char *tab = strchr(lines[i], '\t');
			assert_non_null(tab);
			*tab = '\0';
			char *pat = strchr(strchr(lines[i], ':') + 1, ':') + 1;
			gboolean git_ignored = *pat && *pat != '!';
			gboolean is_dir = g_str_has_suffix(tree[i], "/");
			VrDecision d = vr_policy_decide(policy, tab + 1, is_dir);
			gboolean ours = d.cls == VR_CLASS_HIDE;
			if (ours != git_ignored) {
				print_error("mismatch for '%s' (dir %d) with .gitignore:\n%sgit: %s "
				            "(%s), vault-run: %s\n",
				            tab + 1, is_dir, gi->str, git_ignored ? "ignored" : "not",
				            pat, ours ? "hidden" : "not");
				fail();
			}
			cases++;
		}
		g_string_free(gi, TRUE);
	}
	assert_true(cases >= 300);
	g_autofree char *rm = g_strdup_printf("rm -rf '%s'", dir);
	assert_int_equal(system(rm), 0);
}

static gboolean m(const char *pattern, const char *path, gboolean is_dir)
{
	g_autoptr(GError) error = NULL;
	VrMatch *mt = vr_match_compile(pattern, &error);
	assert_non_null(mt);
	const char *slash = strrchr(path, '/');
	gboolean r = vr_match_path(mt, path, slash ? slash + 1 : path, is_dir);
	vr_match_free(mt);
	return r;
}

static void test_edge_cases(void **state)
{
	/* '*' and '?' stop at '/', '**' spans */
	assert_true(m("*.c", "src/x/main.c", FALSE));
	assert_false(m("src/*.c", "src/x/main.c", FALSE));
	assert_true(m("src/**/*.c", "src/main.c", FALSE));
	assert_true(m("src/**/*.c", "src/x/y/main.c", FALSE));
	assert_true(m("**/main.c", "main.c", FALSE));
	assert_true(m("**/main.c", "a/b/main.c", FALSE));
	assert_true(m("a/**", "a/b", FALSE));
	assert_false(m("a/**", "a", TRUE));
	assert_true(m("a/**/b", "a/b", FALSE));
	assert_true(m("a/**/b", "a/x/y/b", FALSE));
	assert_false(m("a?b", "a/b", FALSE));
	/* anchoring: leading '/', or a slash in the middle */
	assert_true(m("/top", "top", FALSE));
	assert_false(m("/top", "x/top", FALSE));
	assert_false(m("a/b", "x/a/b", FALSE));
	assert_true(m("b", "x/a/b", FALSE));
	/* trailing '/' means directories only */
	assert_false(m("build/", "build", FALSE));
	assert_true(m("build/", "build", TRUE));
	assert_true(m("build/", "x/build", TRUE));
	/* brackets: ranges, negation, ']' first, classes */
	assert_true(m("[a-c]x", "bx", FALSE));
	assert_false(m("[!a-c]x", "bx", FALSE));
	assert_true(m("[^a-c]x", "dx", FALSE));
	assert_true(m("[]]", "]", FALSE));
	assert_true(m("[!]]", "a", FALSE));
	assert_true(m("[[:digit:]]x", "7x", FALSE));
	assert_false(m("[[:digit:]]x", "ax", FALSE));
	assert_true(m("[a-]", "-", FALSE));
	/* escapes, trailing spaces */
	assert_true(m("\\*.txt", "*.txt", FALSE));
	assert_false(m("\\*.txt", "a.txt", FALSE));
	assert_true(m("\\!x", "!x", FALSE));
	assert_true(m("\\#x", "#x", FALSE));
	assert_true(m("a ", "a", FALSE));
	assert_true(m("a\\ ", "a ", FALSE));
	assert_false(m("a\\ ", "a", FALSE));
	/* fast paths agree with the general matcher */
	assert_true(m(".env", "x/.env", FALSE));
	assert_true(m("*.pem", ".pem", FALSE));
	assert_false(m("*.pem", "x.pem.bak", FALSE));
	assert_true(m(".git/config", ".git/config", FALSE));
	assert_false(m(".git/config", "x/.git/config", FALSE));
}

static void test_bad_patterns(void **state)
{
	const char *bad[] = {"[abc", "a[", "x\\", "[[:nope:]]", "", "/", "   ", "[a-\\"};
	for (gsize i = 0; i < G_N_ELEMENTS(bad); i++) {
		g_autoptr(GError) error = NULL;
		VrMatch *mt = vr_match_compile(bad[i], &error);
		assert_null(mt);
		assert_true(g_error_matches(error, VR_POLICY_ERROR, VR_POLICY_ERROR_PATTERN));
	}
	g_autoptr(GError) error = NULL;
	g_autoptr(VrPolicy) policy = vr_policy_new();
	assert_false(vr_policy_add(policy, VR_RULE_HIDE, "sec[ret", "cfg", 7, FALSE, &error));
	assert_non_null(strstr(error->message, "cfg:7:"));
	assert_non_null(strstr(error->message, "sec[ret"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_edge_cases),
		cmocka_unit_test(test_bad_patterns),
		cmocka_unit_test(test_git_oracle),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
