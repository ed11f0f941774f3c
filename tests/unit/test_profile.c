/* Harness profiles: every shipped profile loads, names only individual
 * directories (never all of ~/.config), and bad profiles are refused. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>
#include <glib.h>
#include <glib/gstdio.h>
#include <stdlib.h>
#include <string.h>

#include "run/profile.h"

static gboolean contains(GPtrArray *a, const char *s)
{
	for (guint i = 0; i < a->len; i++)
		if (strcmp(a->pdata[i], s) == 0)
			return TRUE;
	return FALSE;
}

/* s is one of a's directories or below one. */
static gboolean within(GPtrArray *a, const char *s)
{
	for (guint i = 0; i < a->len; i++) {
		size_t n = strlen(a->pdata[i]);
		if (strncmp(a->pdata[i], s, n) == 0 && (s[n] == '\0' || s[n] == '/'))
			return TRUE;
	}
	return FALSE;
}

static void every_shipped_profile_loads(void **state)
{
	g_autoptr(GPtrArray) names = vr_profile_list();
	const char *expected[] = {"aider", "claude", "codex", "copilot", "gemini", "opencode", "shell"};
	for (size_t i = 0; i < G_N_ELEMENTS(expected); i++)
		assert_true(contains(names, expected[i]));
	for (guint i = 0; i < names->len; i++) {
		g_autoptr(GError) error = NULL;
		g_autoptr(VrProfile) p = vr_profile_load(names->pdata[i], "/home/u", &error);
		assert_non_null(p);
		assert_non_null(p->description);
		/* Broad directories would hand the agent other programs' secrets and
		 * settings: each directory is bound on its own. */
		GPtrArray *lists[] = {p->ro, p->rw};
		for (size_t l = 0; l < G_N_ELEMENTS(lists); l++)
			for (guint j = 0; j < lists[l]->len; j++) {
				const char *path = lists[l]->pdata[j];
				assert_true(g_path_is_absolute(path));
				assert_string_not_equal(path, "/home/u");
				assert_string_not_equal(path, "/home/u/.config");
				assert_string_not_equal(path, "/home/u/.local");
				assert_string_not_equal(path, "/home/u/.local/share");
				assert_string_not_equal(path, "/home/u/.cache");
				assert_null(strstr(path, "/.ssh"));
				assert_null(strstr(path, "/.aws"));
			}
		/* Whatever the harness creates must be something it may write,
		 * or a directory inside one (opencode's read-only bin/, which
		 * it makes at start), or a tmpfs's mount point (opencode's
		 * ~/.cache/opencode: --project ~ serves its parent read-only). */
		for (guint j = 0; j < p->create->len; j++)
			assert_true(within(p->rw, p->create->pdata[j]) || within(p->tmpfs, p->create->pdata[j]));
	}
}

static void opencode_profile_names_its_directories(void **state)
{
	g_autoptr(VrProfile) p = vr_profile_load("opencode", "/home/u", NULL);
	assert_non_null(p);
	assert_true(contains(p->rw, "/home/u/.local/share/opencode"));
	/* Its cache holds code the host runs: an empty tmpfs per run, never
	 * the host's (issue 16, item 5). */
	assert_false(contains(p->rw, "/home/u/.cache/opencode"));
	assert_true(contains(p->tmpfs, "/home/u/.cache/opencode"));
	assert_true(contains(p->ro, "/home/u/.opencode/bin"));
	/* git toolchain merged in, read-only */
	assert_true(contains(p->ro, "/home/u/.gitconfig"));
	assert_false(contains(p->rw, "/home/u/.gitconfig"));
	assert_true(contains(p->net_allow, "api.anthropic.com"));
	assert_true(contains(p->env_allow, "ANTHROPIC_API_KEY"));
}

static void claude_keeps_settings_read_only(void **state)
{
	g_autoptr(VrProfile) p = vr_profile_load("claude", "/home/u", NULL);
	assert_non_null(p);
	assert_true(contains(p->rw, "/home/u/.claude"));
	assert_true(contains(p->ro_inside, "/home/u/.claude/settings.json"));
	assert_true(contains(p->ro_inside, "/home/u/.claude/skills"));
	/* ~/.claude.json names MCP servers the host starts: a per-run copy,
	 * never a writable bind, and its merge keys are all harmless. */
	assert_false(contains(p->rw, "/home/u/.claude.json"));
	assert_true(contains(p->copy, "/home/u/.claude.json"));
	assert_true(p->merge->len > 0);
	for (guint i = 0; i < p->merge->len; i++)
		assert_true(vr_profile_merge_key_allowed(p->merge->pdata[i]));
}

static void merge_keys_that_run_things_are_refused(void **state)
{
	assert_true(vr_profile_merge_key_allowed("numStartups"));
	assert_true(vr_profile_merge_key_allowed("projects.{project}.history"));
	assert_false(vr_profile_merge_key_allowed("mcpServers"));
	assert_false(vr_profile_merge_key_allowed("mcpServers.x"));
	assert_false(vr_profile_merge_key_allowed("projects.{project}.mcpServers"));
	assert_false(vr_profile_merge_key_allowed("projects.*.allowedTools"));
	/* a whole object holding one of them */
	assert_false(vr_profile_merge_key_allowed("projects"));
	assert_false(vr_profile_merge_key_allowed("projects.*"));
	assert_false(vr_profile_merge_key_allowed(""));

	g_autofree char *dir = g_dir_make_tmp("vr-profile-XXXXXX", NULL);
	g_autofree char *pdir = g_build_filename(dir, "vault-run", "profiles", NULL);
	g_mkdir_with_parents(pdir, 0700);
	g_autofree char *file = g_build_filename(pdir, "greedy.profile", NULL);
	g_file_set_contents(file, "[paths]\ncopy = ~/.x.json\n[copy]\nmerge = numStartups;projects.*.allowedTools\n", -1,
	                    NULL);
	g_setenv("XDG_CONFIG_HOME", dir, TRUE);
	g_autoptr(GError) e = NULL;
	assert_null(vr_profile_load("greedy", "/home/u", &e));
	assert_non_null(strstr(e->message, "projects.*.allowedTools"));
	assert_non_null(strstr(e->message, "never merged"));
	g_setenv("XDG_CONFIG_HOME", "/nonexistent-vr-test", TRUE);
	g_unlink(file);
	g_rmdir(pdir);
	g_autofree char *vdir = g_build_filename(dir, "vault-run", NULL);
	g_rmdir(vdir);
	g_rmdir(dir);
}

static void command_selects_profile(void **state)
{
	g_autofree char *a = vr_profile_for_command("/usr/local/bin/opencode");
	g_autofree char *b = vr_profile_for_command("claude");
	g_autofree char *c = vr_profile_for_command("make");
	assert_string_equal(a, "opencode");
	assert_string_equal(b, "claude");
	assert_null(c);
}

static void bad_names_and_keys_are_refused(void **state)
{
	g_autoptr(GError) e1 = NULL;
	assert_null(vr_profile_load("../etc/passwd", "/home/u", &e1));
	assert_non_null(strstr(e1->message, "not a profile name"));
	g_autoptr(GError) e2 = NULL;
	assert_null(vr_profile_load("no-such-profile", "/home/u", &e2));
	assert_non_null(strstr(e2->message, "vault-run profiles"));

	/* A user profile with a typo'd key is an error naming the file. */
	g_autofree char *dir = g_dir_make_tmp("vr-profile-XXXXXX", NULL);
	g_autofree char *pdir = g_build_filename(dir, "vault-run", "profiles", NULL);
	g_mkdir_with_parents(pdir, 0700);
	g_autofree char *file = g_build_filename(pdir, "typo.profile", NULL);
	g_file_set_contents(file, "[paths]\nrww = ~/.x\n", -1, NULL);
	g_setenv("XDG_CONFIG_HOME", dir, TRUE);
	g_autoptr(GError) e3 = NULL;
	assert_null(vr_profile_load("typo", "/home/u", &e3));
	assert_non_null(strstr(e3->message, "unknown key 'rww'"));
	assert_non_null(strstr(e3->message, "typo.profile"));
	g_unlink(file);
	g_rmdir(pdir);
	g_autofree char *vdir = g_build_filename(dir, "vault-run", NULL);
	g_rmdir(vdir);
	g_rmdir(dir);
}

int main(void)
{
	/* g_get_user_config_dir() is cached on first use: point it at an empty
	 * directory before anything reads it, so the host's profiles don't count. */
	g_setenv("XDG_CONFIG_HOME", "/nonexistent-vr-test", TRUE);
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(every_shipped_profile_loads),
		cmocka_unit_test(opencode_profile_names_its_directories),
		cmocka_unit_test(merge_keys_that_run_things_are_refused),
		cmocka_unit_test(claude_keeps_settings_read_only),
		cmocka_unit_test(command_selects_profile),
		cmocka_unit_test(bad_names_and_keys_are_refused),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
