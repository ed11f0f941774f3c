/* Rule classes, built-in defaults, ancestors, project strictness, rename
 * sensitivity and same-length masking. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <glib.h>
#include <string.h>

#include "policy/policy.h"

static VrClass cls(const VrPolicy *p, const char *path, gboolean is_dir)
{
	return vr_policy_decide(p, path, is_dir).cls;
}

static void test_builtins(void **state)
{
	g_autoptr(VrPolicy) p = vr_policy_new();
	vr_policy_add_builtins(p);
	const struct {
		const char *path;
		gboolean dir;
		VrClass cls;
	} cases[] = {
		{".env", FALSE, VR_CLASS_HIDE},
		{"sub/.env", FALSE, VR_CLASS_HIDE},
		{".env.local", FALSE, VR_CLASS_HIDE},
		{".env.production", FALSE, VR_CLASS_HIDE},
		{".env.example", FALSE, VR_CLASS_VISIBLE},
		{".env.sample", FALSE, VR_CLASS_VISIBLE},
		{".env.template", FALSE, VR_CLASS_VISIBLE},
		{"id_rsa", FALSE, VR_CLASS_HIDE},
		{"keys/id_ed25519.pub", FALSE, VR_CLASS_HIDE},
		{"certs/server.pem", FALSE, VR_CLASS_HIDE},
		{"config/credentials.json", FALSE, VR_CLASS_HIDE},
		{".aws/credentials", FALSE, VR_CLASS_HIDE},
		{".ssh", TRUE, VR_CLASS_HIDE},
		{".ssh/config", FALSE, VR_CLASS_HIDE},
		{".docker/config.json", FALSE, VR_CLASS_HIDE},
		{".kube/config", FALSE, VR_CLASS_HIDE},
		{"infra/prod.tfstate.backup", FALSE, VR_CLASS_HIDE},
		{"secrets.yaml", FALSE, VR_CLASS_HIDE},
		{".config/vault-run/config", FALSE, VR_CLASS_HIDE},
		{".local/state/vault-run/x.jsonl", FALSE, VR_CLASS_HIDE},
		{"src/main.c", FALSE, VR_CLASS_VISIBLE},
		{"README.md", FALSE, VR_CLASS_VISIBLE},
		{"src/key.c", FALSE, VR_CLASS_VISIBLE},
		{".git", TRUE, VR_CLASS_VISIBLE},
		{".git/HEAD", FALSE, VR_CLASS_VISIBLE},
		{".git/objects/ab/cdef", FALSE, VR_CLASS_VISIBLE},
		{".git/hooks", TRUE, VR_CLASS_READONLY},
		{".git/hooks/pre-commit", FALSE, VR_CLASS_READONLY},
		{".git/config", FALSE, VR_CLASS_READONLY},
		{"vendor/lib/.git/hooks/post-checkout", FALSE, VR_CLASS_READONLY},
		{".git/modules/sub/hooks/pre-commit", FALSE, VR_CLASS_READONLY},
		{".git/modules/sub/config", FALSE, VR_CLASS_READONLY},
		{".husky/pre-commit", FALSE, VR_CLASS_READONLY},
		{".vscode/tasks.json", FALSE, VR_CLASS_READONLY},
		{".claude/settings.local.json", FALSE, VR_CLASS_READONLY},
		{".claude/commands/x.md", FALSE, VR_CLASS_READONLY},
		{".claude/notes.md", FALSE, VR_CLASS_VISIBLE},
		{".cargo/config.toml", FALSE, VR_CLASS_READONLY},
		{".vault-run", FALSE, VR_CLASS_READONLY},
		{".envrc", FALSE, VR_CLASS_READONLY},
		{"mise.toml", FALSE, VR_CLASS_READONLY},
	};
	for (gsize i = 0; i < G_N_ELEMENTS(cases); i++) {
		VrDecision d = vr_policy_decide(p, cases[i].path, cases[i].dir);
		if (d.cls != cases[i].cls) {
			print_error("%s: %s, expected %s\n", cases[i].path, vr_class_name(d.cls),
			            vr_class_name(cases[i].cls));
			fail();
		}
	}
	/* Every built-in says why and where it comes from. */
	for (guint i = 0; i < vr_policy_n_rules(p); i++) {
		const VrRule *r = vr_policy_rule(p, i);
		assert_non_null(r->why);
		assert_string_equal(r->source, "built-in");
		assert_int_equal(r->line, (int)i + 1);
	}
	/* The deciding rule is reported: the ancestor for a path inside. */
	VrDecision d = vr_policy_decide(p, ".git/hooks/pre-commit", FALSE);
	assert_string_equal(d.rule->pattern, "**/.git/hooks/");
	d = vr_policy_decide(p, ".env.example", FALSE);
	assert_int_equal(d.rule->kind, VR_RULE_SHOW);
	assert_null(vr_policy_decide(p, "src/main.c", FALSE).rule);
}

static void test_classes_and_ancestors(void **state)
{
	g_autoptr(VrPolicy) p = vr_policy_new();
	g_autoptr(GError) e = NULL;
	assert_true(vr_policy_add(p, VR_RULE_READONLY, "ro/", "t", 1, FALSE, &e));
	assert_true(vr_policy_add(p, VR_RULE_REDACT, "*.ini", "t", 2, FALSE, &e));
	assert_true(vr_policy_add(p, VR_RULE_SHOW, "ro/open.txt", "t", 3, FALSE, &e));
	assert_true(vr_policy_add(p, VR_RULE_HIDE, "ro/deep/", "t", 4, FALSE, &e));
	assert_int_equal(cls(p, "ro", TRUE), VR_CLASS_READONLY);
	assert_int_equal(cls(p, "ro", FALSE), VR_CLASS_VISIBLE); /* dirs only */
	/* a SHOW rule cannot lift a path above its directory's class */
	assert_int_equal(cls(p, "ro/open.txt", FALSE), VR_CLASS_READONLY);
	/* stricter below a read-only directory is fine */
	assert_int_equal(cls(p, "ro/a.ini", FALSE), VR_CLASS_REDACT);
	assert_int_equal(cls(p, "ro/deep/x", FALSE), VR_CLASS_HIDE);
	assert_int_equal(cls(p, "x/a.ini", FALSE), VR_CLASS_REDACT);
	/* last match wins among user rules */
	assert_true(vr_policy_add(p, VR_RULE_HIDE, "*.ini", "t", 5, FALSE, &e));
	assert_int_equal(cls(p, "x/a.ini", FALSE), VR_CLASS_HIDE);
	assert_true(vr_policy_add(p, VR_RULE_SHOW, "keep.ini", "t", 6, FALSE, &e));
	assert_int_equal(cls(p, "x/keep.ini", FALSE), VR_CLASS_VISIBLE);
	/* decide_child with the parent's decision = decide */
	const char *paths[] = {"ro/deep/x", "ro/a.ini", "ro/open.txt", "x/keep.ini", "x/y/a.ini"};
	for (gsize i = 0; i < G_N_ELEMENTS(paths); i++) {
		g_autofree char *parent = g_path_get_dirname(paths[i]);
		VrDecision pd = vr_policy_decide(p, parent, TRUE);
		VrDecision a = vr_policy_decide_child(p, pd, paths[i], FALSE);
		VrDecision b = vr_policy_decide(p, paths[i], FALSE);
		assert_int_equal(a.cls, b.cls);
		assert_ptr_equal(a.rule, b.rule);
	}
	/* the root is always visible */
	assert_int_equal(cls(p, "", TRUE), VR_CLASS_VISIBLE);
	/* a deep path (longer than any stack buffer) */
	GString *deep = g_string_new("ro");
	for (int i = 0; i < 300; i++)
		g_string_append(deep, "/abcdef");
	assert_int_equal(cls(p, deep->str, FALSE), VR_CLASS_READONLY);
	g_string_free(deep, TRUE);
}

static void test_project_strictness(void **state)
{
	g_autoptr(VrPolicy) p = vr_policy_new();
	vr_policy_add_builtins(p);
	g_autoptr(GError) e = NULL;
	/* A project rule that would loosen by last-match-wins does nothing. */
	assert_true(vr_policy_add(p, VR_RULE_READONLY, ".env", ".vault-run", 1, TRUE, &e));
	assert_true(vr_policy_add(p, VR_RULE_READONLY, "*", ".vault-run", 2, TRUE, &e));
	assert_int_equal(cls(p, ".env", FALSE), VR_CLASS_HIDE);
	assert_int_equal(cls(p, "src/main.c", FALSE), VR_CLASS_READONLY);
	assert_int_equal(cls(p, ".env.example", FALSE), VR_CLASS_READONLY);
	/* It can tighten: the strictest project rule counts, whatever the order. */
	assert_true(vr_policy_add(p, VR_RULE_HIDE, "private/", ".vault-run", 3, TRUE, &e));
	assert_true(vr_policy_add(p, VR_RULE_REDACT, "private/", ".vault-run", 4, TRUE, &e));
	assert_int_equal(cls(p, "private/notes", FALSE), VR_CLASS_HIDE);
	VrDecision d = vr_policy_decide(p, "private", TRUE);
	assert_int_equal(d.rule->line, 3);
	assert_true(d.rule->project);
	/* A later user SHOW does not undo a project rule. */
	assert_true(vr_policy_add(p, VR_RULE_SHOW, "private/", "user", 1, FALSE, &e));
	assert_int_equal(cls(p, "private", TRUE), VR_CLASS_HIDE);
	/* A project SHOW is refused. */
	assert_false(vr_policy_add(p, VR_RULE_SHOW, ".env", ".vault-run", 9, TRUE, &e));
	assert_non_null(strstr(e->message, ".vault-run:9:"));
	assert_non_null(strstr(e->message, "may only add restrictions"));
}

static void test_rule_sensitive(void **state)
{
	g_autoptr(VrPolicy) p = vr_policy_new();
	g_autoptr(GError) e = NULL;
	assert_true(vr_policy_add(p, VR_RULE_HIDE, "*.pem", "t", 1, FALSE, &e));
	assert_false(vr_policy_dir_is_rule_sensitive(p, "src"));
	assert_true(vr_policy_add(p, VR_RULE_HIDE, "config/prod/", "t", 2, FALSE, &e));
	assert_true(vr_policy_dir_is_rule_sensitive(p, "config"));
	assert_true(vr_policy_dir_is_rule_sensitive(p, "config/prod"));
	assert_false(vr_policy_dir_is_rule_sensitive(p, "config/prod/x")); /* matched above */
	assert_false(vr_policy_dir_is_rule_sensitive(p, "src"));
	assert_true(vr_policy_dir_is_rule_sensitive(p, ""));
	assert_true(vr_policy_add(p, VR_RULE_READONLY, "**/.git/hooks/", "t", 3, FALSE, &e));
	assert_false(vr_policy_dir_is_rule_sensitive(p, "src"));
	assert_false(vr_policy_dir_is_rule_sensitive(p, "src/lib")); /* hooks move along */
	assert_true(vr_policy_dir_is_rule_sensitive(p, "vendor/.git"));
	assert_true(vr_policy_dir_is_rule_sensitive(p, ".git/hooks"));
	assert_true(vr_policy_add(p, VR_RULE_HIDE, "a/*/b", "t", 4, FALSE, &e));
	assert_true(vr_policy_dir_is_rule_sensitive(p, "a/anything"));
	assert_true(vr_policy_add(p, VR_RULE_HIDE, "x/**/y", "t", 5, FALSE, &e));
	assert_true(vr_policy_dir_is_rule_sensitive(p, "x/deep/er"));
	assert_false(vr_policy_dir_is_rule_sensitive(p, "z/deep"));
}

static void mask_eq(const char *in, const char *want)
{
	g_autofree char *buf = g_strdup(in);
	vr_redact_mask(buf, strlen(buf));
	assert_string_equal(buf, want);
}

/* A name that is not a directory: the stricter of its file and directory
 * decisions, in one pass, equal to deciding twice. */
static void test_either(void **state)
{
	(void)state;
	g_autoptr(VrPolicy) p = vr_policy_new();
	vr_policy_add_builtins(p);
	g_autoptr(GError) e = NULL;
	assert_true(vr_policy_add(p, VR_RULE_HIDE, "foo", "t", 1, FALSE, &e));
	assert_true(vr_policy_add(p, VR_RULE_SHOW, "foo/", "t", 2, FALSE, &e));
	assert_true(vr_policy_add(p, VR_RULE_READONLY, "bar/", "t", 3, TRUE, &e));
	VrDecision none = {VR_CLASS_VISIBLE, NULL};
	const char *paths[] = {".vscode", ".husky", ".ssh", "sub/.aws", ".git/hooks", ".claude/commands", "foo",
	                       "bar", "src/main.c", ".env", "lefthook.yml", "docs/lefthook.yml", ".claude/hooks",
	                       "a/.claude/skills", ".config/vault-run", "x.code-workspace", "mise.local.toml"};
	for (size_t i = 0; i < G_N_ELEMENTS(paths); i++) {
		VrDecision f = vr_policy_decide_child(p, none, paths[i], FALSE);
		VrDecision d = vr_policy_decide_child(p, none, paths[i], TRUE);
		VrDecision either = vr_policy_decide_child_either(p, none, paths[i]);
		assert_int_equal(either.cls, MAX(f.cls, d.cls));
		assert_ptr_equal(either.rule, d.cls > f.cls ? d.rule : f.rule);
	}
	assert_int_equal(vr_policy_decide_child_either(p, none, ".vscode").cls, VR_CLASS_READONLY);
	assert_int_equal(vr_policy_decide_child(p, none, ".vscode", FALSE).cls, VR_CLASS_VISIBLE);
	assert_int_equal(vr_policy_decide_child_either(p, none, "foo").cls, VR_CLASS_HIDE);
	assert_int_equal(vr_policy_decide_child_either(p, none, "bar").cls, VR_CLASS_READONLY);
	/* The quick last-component test keeps the matcher's answers. */
	assert_int_equal(cls(p, "lefthook.yml", FALSE), VR_CLASS_READONLY);
	assert_int_equal(cls(p, "docs/lefthook.yml", FALSE), VR_CLASS_VISIBLE);
	assert_int_equal(cls(p, "a/b/.claude/hooks/x.sh", FALSE), VR_CLASS_READONLY);
	assert_int_equal(cls(p, "a/b/.claude/hookz/x.sh", FALSE), VR_CLASS_VISIBLE);
	assert_int_equal(cls(p, "mise.local.toml", FALSE), VR_CLASS_READONLY);
	assert_int_equal(cls(p, "mise.toml.bak", FALSE), VR_CLASS_VISIBLE);
	assert_int_equal(cls(p, ".run/app.run.xml", FALSE), VR_CLASS_READONLY);
	assert_int_equal(cls(p, ".run/app.xml", FALSE), VR_CLASS_VISIBLE);
}

static void test_redact(void **state)
{
	mask_eq("API_KEY=abc123\n", "API_KEY=******\n");
	mask_eq("export TOKEN = \"s3cr3t\"  \n# comment=x\n", "export TOKEN = \"******\"  \n# comment=x\n");
	mask_eq("[db]\npassword: hunter2\r\nempty=\n", "[db]\npassword: *******\r\nempty=\n");
	mask_eq("just text\n", "just text\n");
	mask_eq("-----BEGIN RSA PRIVATE KEY-----\nMIIabc\nxyz=\n-----END RSA PRIVATE KEY-----\nA=b",
	        "-----BEGIN RSA PRIVATE KEY-----\n******\n****\n-----END RSA PRIVATE KEY-----\nA=*");
	/* unterminated PEM: masked to the end; no overrun on odd input */
	mask_eq("-----BEGIN X-----\nab", "-----BEGIN X-----\n**");
	char odd[] = {'k', '=', '\0', 'x', '\n', '='};
	vr_redact_mask(odd, sizeof odd);
	assert_int_equal(odd[0], 'k');
	assert_int_equal(odd[2], '*');
	vr_redact_mask(odd, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_builtins),
		cmocka_unit_test(test_classes_and_ancestors),
		cmocka_unit_test(test_project_strictness),
		cmocka_unit_test(test_rule_sensitive),
		cmocka_unit_test(test_either),
		cmocka_unit_test(test_redact),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
