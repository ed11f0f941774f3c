/* Config files: good input, each kind of bad input (one line naming
 * FILE:LINE), precedence of the sources, and project files that try to
 * loosen the policy. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <glib.h>
#include <glib/gstdio.h>
#include <string.h>

#include "policy/config.h"

static VrClass cls(const VrConfig *c, const char *path)
{
	return vr_policy_decide(c->policy, path, FALSE).cls;
}

static gboolean load(VrConfig *c, const char *text, VrConfigSource src, GError **error)
{
	return vr_config_load_data(c, text, strlen(text), src == VR_SOURCE_PROJECT ? "proj/.vault-run" : "cfg", src, error);
}

static void test_good(void **state)
{
	g_autoptr(VrConfig) c = vr_config_new();
	g_autoptr(GError) e = NULL;
	const char *text =
		"# my rules\n"
		"[policy]\n"
		"hide = *.sqlite; private/\n"
		"redact=config/*.ini\n"
		"readonly = Makefile;\n"
		"show = id_rsa.pub;!.env.local\n"
		"\n"
		"[sandbox]\n"
		"net = allow=github.com,pypi.org\n"
		"env-allow = LANG;LC_*\n"
		"setenv = EDITOR=vi;A=b=c\n"
		"env-file = .env:OPENAI_*,LEGION_*; ~/keys.env\n"
		"ro-bind = /opt/tools\n"
		"bind = /var/cache/x\n"
		"profile = opencode\n"
		"[audit]\n"
		"level = writes\n"
		"path = -\n";
	assert_true(load(c, text, VR_SOURCE_USER, &e));
	assert_int_equal(cls(c, "db.sqlite"), VR_CLASS_HIDE);
	assert_int_equal(vr_policy_decide(c->policy, "private", TRUE).cls, VR_CLASS_HIDE);
	assert_int_equal(cls(c, "config/app.ini"), VR_CLASS_REDACT);
	assert_int_equal(cls(c, "Makefile"), VR_CLASS_READONLY);
	assert_int_equal(cls(c, "id_rsa.pub"), VR_CLASS_VISIBLE);
	assert_int_equal(cls(c, "id_rsa"), VR_CLASS_HIDE);
	/* in a show list a leading '!' is just part of the name */
	assert_int_equal(cls(c, ".env.local"), VR_CLASS_HIDE);
	VrDecision d = vr_policy_decide(c->policy, "config/app.ini", FALSE);
	assert_string_equal(d.rule->source, "cfg");
	assert_int_equal(d.rule->line, 4);
	assert_string_equal(c->net, "allow=github.com,pypi.org");
	assert_int_equal(c->env_allow->len, 2);
	assert_string_equal(c->env_set->pdata[1], "A=b=c");
	assert_int_equal(c->env_files->len, 2);
	assert_string_equal(c->env_files->pdata[0], ".env:OPENAI_*,LEGION_*");
	assert_string_equal(c->env_files->pdata[1], "~/keys.env");
	assert_string_equal(c->ro_binds->pdata[0], "/opt/tools");
	assert_string_equal(c->rw_binds->pdata[0], "/var/cache/x");
	assert_string_equal(c->profile, "opencode");
	assert_string_equal(c->audit_level, "writes");
	assert_string_equal(c->audit_path, "-");
	assert_false(c->audit_max_size_set);
	assert_null(c->audit_fail);
	assert_true(load(c, "[audit]\nmax-size = 2M\nfail = open\npath = state,syslog\n", VR_SOURCE_USER, &e));
	assert_true(c->audit_max_size_set);
	assert_int_equal(c->audit_max_size, 2u << 20);
	assert_string_equal(c->audit_fail, "open");
	assert_string_equal(c->audit_path, "state,syslog");
	/* "!" in a hide list negates, as in .gitignore */
	assert_true(load(c, "[policy]\nhide=!db.sqlite\n", VR_SOURCE_USER, &e));
	assert_int_equal(cls(c, "db.sqlite"), VR_CLASS_VISIBLE);
	/* key: ';'-separated, the commas of a declaration kept */
	assert_true(load(c, "[sandbox]\nkey = A@x.example.com,y.example.com:as=basic; B@z.example.com\n"
	                    "net = allow-private;read=git.example.com\n",
	                 VR_SOURCE_USER, &e));
	assert_int_equal(c->keys->len, 2);
	assert_string_equal(c->keys->pdata[0], "A@x.example.com,y.example.com:as=basic");
	assert_string_equal(c->net, "allow-private;read=git.example.com");
}

static void expect_error(const char *text, VrConfigSource src, const char *where,
                         const char *what)
{
	g_autoptr(VrConfig) c = vr_config_new();
	g_autoptr(GError) e = NULL;
	assert_false(load(c, text, src, &e));
	assert_non_null(e);
	if (!g_str_has_prefix(e->message, where) || !strstr(e->message, what) ||
	    strchr(e->message, '\n')) {
		print_error("for:\n%s\ngot: %s\nwanted prefix '%s' and '%s'\n", text, e->message,
		            where, what);
		fail();
	}
}

static void test_bad(void **state)
{
	expect_error("[policy]\nhide=a\n[nope]\n", VR_SOURCE_USER, "cfg:3:", "unknown group [nope]");
	expect_error("[policy]\nhidden=a\n", VR_SOURCE_USER, "cfg:2:", "unknown key 'hidden'");
	expect_error("[policy]\nhide=a\n\nhide=b\n", VR_SOURCE_USER, "cfg:4:", "repeats line 2");
	expect_error("[policy]\nhide=a\n[sandbox]\nnet=none\n[policy]\nhide=c\n", VR_SOURCE_USER,
	             "cfg:6:", "repeats line 2");
	expect_error("[policy]\nhide = ok; sec[ret\n", VR_SOURCE_USER, "cfg:2:", "sec[ret");
	expect_error("[policy]\nhide = ok; sec[ret\n", VR_SOURCE_USER, "cfg:2:", "unclosed '['");
	expect_error("hide=a\n", VR_SOURCE_USER, "cfg:1:", "outside a group");
	expect_error("[policy]\njust words\n", VR_SOURCE_USER, "cfg:2:", "expected KEY=VALUE");
	expect_error("[policy\nhide=a\n", VR_SOURCE_USER, "cfg:1:", "malformed group header");
	expect_error("[sandbox]\nnet=maybe\n", VR_SOURCE_USER, "cfg:2:", "expected none, host");
	expect_error("[sandbox]\nnet=allow=a;bogus\n", VR_SOURCE_USER, "cfg:2:", "allow-localhost=PORT");
	expect_error("[sandbox]\nnet=host;allow-private\n", VR_SOURCE_USER, "cfg:2:", "expected none, host");
	expect_error("[sandbox]\nsetenv=NOVALUE\n", VR_SOURCE_USER, "cfg:2:", "expected NAME=VALUE");
	expect_error("[audit]\nlevel=loud\n", VR_SOURCE_USER, "cfg:2:", "expected one of denied");
	expect_error("[audit]\nmax-size = 100\n", VR_SOURCE_USER, "cfg:2:", "expected a size from 1K to 1G");
	expect_error("[audit]\nfail = maybe\n", VR_SOURCE_USER, "cfg:2:", "expected closed or open");
	expect_error("[audit]\nfail = open\n", VR_SOURCE_PROJECT, "proj/.vault-run:1:", "not allowed in a project");
	expect_error("[policy]\nhide=a\\qb\n", VR_SOURCE_USER, "cfg:2:", "expected a ';'-separated");
	expect_error("[policy]\nhide=\xff\n", VR_SOURCE_USER, "cfg:2:", "UTF-8");
	/* NUL in the middle */
	{
		g_autoptr(VrConfig) c = vr_config_new();
		g_autoptr(GError) e = NULL;
		const char data[] = "[policy]\nhide=a\0b\n";
		assert_false(vr_config_load_data(c, data, sizeof data - 1, "cfg", VR_SOURCE_USER, &e));
		assert_true(g_str_has_prefix(e->message, "cfg:2:"));
	}
	/* oversized */
	{
		g_autoptr(VrConfig) c = vr_config_new();
		g_autoptr(GError) e = NULL;
		gsize n = 1024 * 1024 + 1;
		g_autofree char *big = g_malloc(n);
		memset(big, '#', n);
		assert_false(vr_config_load_data(c, big, n, "cfg", VR_SOURCE_USER, &e));
		assert_non_null(strstr(e->message, "1 MiB"));
		g_autofree char *dir = g_dir_make_tmp("vr-cfg-XXXXXX", NULL);
		g_autofree char *path = g_build_filename(dir, "big", NULL);
		assert_true(g_file_set_contents(path, big, (gssize)n, NULL));
		g_clear_error(&e);
		assert_false(vr_config_load_file(c, path, VR_SOURCE_USER, FALSE, &e));
		assert_non_null(strstr(e->message, "1 MiB"));
		g_unlink(path);
		/* missing: an error unless optional */
		g_clear_error(&e);
		assert_true(vr_config_load_file(c, path, VR_SOURCE_USER, TRUE, &e));
		assert_false(vr_config_load_file(c, path, VR_SOURCE_USER, FALSE, &e));
		assert_true(g_str_has_prefix(e->message, path));
		/* a directory is not a config file */
		g_clear_error(&e);
		assert_false(vr_config_load_file(c, dir, VR_SOURCE_USER, FALSE, &e));
		g_rmdir(dir);
	}
}

static void expect_split(const char *spec, const char *file, const char *patterns)
{
	g_autofree char *f = NULL, *p = NULL;
	vr_config_split_env_file(spec, &f, &p);
	assert_string_equal(f, file);
	if (patterns)
		assert_string_equal(p, patterns);
	else
		assert_null(p);
}

static void test_env_file_split(void **state)
{
	expect_split(".env", ".env", NULL);
	expect_split(".env:OPENAI_*,LEGION_*", ".env", "OPENAI_*,LEGION_*");
	expect_split(".env:API_KEY", ".env", "API_KEY");
	expect_split(".env:[A-Z]?_KEY", ".env", "[A-Z]?_KEY");
	expect_split(".env:", ".env", NULL);
	/* A file name holding ':' stays expressible. */
	expect_split("/mnt/c:/x/.env", "/mnt/c:/x/.env", NULL);
	expect_split("my:keys:", "my:keys", NULL);
	expect_split("my:keys:K", "my:keys", "K");
	expect_split("a:b.env", "a:b.env", NULL);
	expect_split(":K", ":K", NULL);
}

static void test_project_adversarial(void **state)
{
	const char *hint = "project config may only add restrictions; put it in ~/.config/vault-run/config";
	expect_error("[policy]\nshow = .env\n", VR_SOURCE_PROJECT, "proj/.vault-run:2:", hint);
	expect_error("[policy]\nhide = x;!.env\n", VR_SOURCE_PROJECT, "proj/.vault-run:2:", hint);
	expect_error("[policy]\nhide=x\n[sandbox]\nnet = host\n", VR_SOURCE_PROJECT, "proj/.vault-run:3:", hint);
	expect_error("[sandbox]\nbind = /\n", VR_SOURCE_PROJECT, "proj/.vault-run:1:", hint);
	/* A project's own .env pulled into the sandbox would loosen the view. */
	expect_error("[sandbox]\nenv-file = .env\n", VR_SOURCE_PROJECT, "proj/.vault-run:1:", hint);
	expect_error("[audit]\nlevel = denied\n", VR_SOURCE_PROJECT, "proj/.vault-run:1:", hint);
	/* A repository binding a key to its own host would send it there. */
	expect_error("[sandbox]\nkey = OPENAI_API_KEY@evil.example.com\n", VR_SOURCE_PROJECT, "proj/.vault-run:1:", hint);

	/* Rules that would loosen by last-match-wins change nothing. */
	g_autoptr(VrConfig) c = vr_config_new();
	g_autoptr(GError) e = NULL;
	assert_true(load(c, "[policy]\nreadonly = .env; id_rsa; .git/hooks/\nredact = *.pem\n",
	                 VR_SOURCE_PROJECT, &e));
	assert_int_equal(cls(c, ".env"), VR_CLASS_HIDE);
	assert_int_equal(cls(c, "id_rsa"), VR_CLASS_HIDE);
	assert_int_equal(cls(c, "a.pem"), VR_CLASS_HIDE);
	assert_int_equal(cls(c, ".git/hooks/pre-commit"), VR_CLASS_READONLY);
	/* …and tightening works, even of what a user rule shows. */
	assert_true(load(c, "[policy]\nshow = notes.txt\n", VR_SOURCE_USER, &e));
	assert_true(vr_config_load_data(c, "[policy]\nhide = notes.txt\n", 26, "p2", VR_SOURCE_PROJECT, &e));
	assert_int_equal(cls(c, "notes.txt"), VR_CLASS_HIDE);
	VrDecision d = vr_policy_decide(c->policy, "notes.txt", FALSE);
	assert_true(d.rule->project);
	assert_null(c->net);
}

static void write_file(const char *path, const char *text)
{
	g_autofree char *dir = g_path_get_dirname(path);
	assert_int_equal(g_mkdir_with_parents(dir, 0755), 0);
	assert_true(g_file_set_contents(path, text, -1, NULL));
}

static void test_precedence(void **state)
{
	g_autofree char *root = g_dir_make_tmp("vr-cfg-XXXXXX", NULL);
	g_autofree char *xdg = g_build_filename(root, "xdg", NULL);
	g_autofree char *user = g_build_filename(xdg, "vault-run", "config", NULL);
	g_autofree char *proj = g_build_filename(root, "proj", NULL);
	g_autofree char *projcfg = g_build_filename(proj, ".vault-run", NULL);
	g_autofree char *pol = g_build_filename(root, "pol.ini", NULL);
	g_setenv("XDG_CONFIG_HOME", xdg, TRUE);
	g_autofree char *up = vr_config_user_path();
	assert_string_equal(up, user);

	/* user hides notes.md and shows .env.local; --policy shows notes.md
	 * again (later wins); project makes docs/ read-only and tries .env. */
	write_file(user, "[policy]\nhide = notes.md; build/\nshow = .env.local\n[sandbox]\nnet = none\n");
	write_file(projcfg, "[policy]\nreadonly = docs/; .env.local\nhide = build/\n");
	write_file(pol, "[policy]\nshow = notes.md\nhide = .env.local\n[sandbox]\nnet = host\n");

	g_autoptr(VrConfig) c = vr_config_new();
	g_autoptr(GError) e = NULL;
	assert_true(vr_config_load_all(c, proj, NULL, &e));
	assert_int_equal(cls(c, "notes.md"), VR_CLASS_HIDE);
	assert_int_equal(cls(c, ".env.local"), VR_CLASS_READONLY); /* user show, project readonly */
	assert_int_equal(cls(c, "docs/x"), VR_CLASS_READONLY);
	VrDecision d = vr_policy_decide(c->policy, "build", TRUE);
	assert_string_equal(d.rule->source, user); /* equal class: user rule (not stricter) */
	assert_string_equal(c->net, "none");

	g_autoptr(VrConfig) c2 = vr_config_new();
	assert_true(vr_config_load_all(c2, proj, pol, &e));
	assert_int_equal(cls(c2, "notes.md"), VR_CLASS_VISIBLE);
	assert_int_equal(cls(c2, ".env.local"), VR_CLASS_HIDE);
	assert_string_equal(c2->net, "host");
	d = vr_policy_decide(c2->policy, ".env.local", FALSE);
	assert_string_equal(d.rule->source, pol);
	assert_int_equal(d.rule->line, 3);

	/* A symlinked project .vault-run is refused; a missing one is fine. */
	assert_int_equal(g_unlink(projcfg), 0);
	g_autoptr(VrConfig) c3 = vr_config_new();
	assert_true(vr_config_load_all(c3, proj, NULL, &e));
	assert_int_equal(symlink(pol, projcfg), 0);
	assert_false(vr_config_load_all(c3, proj, NULL, &e));
	assert_non_null(strstr(e->message, "symbolic link"));
	/* --policy FILE must exist */
	g_autoptr(VrConfig) c4 = vr_config_new();
	g_clear_error(&e);
	assert_false(vr_config_load_all(c4, NULL, "/nonexistent/vr.ini", &e));

	g_autofree char *rm = g_strdup_printf("rm -rf '%s'", root);
	assert_int_equal(system(rm), 0);
}

/* The one `net` grammar ([sandbox] net here, --net in test_cli). */
static void test_net_grammar(void **state)
{
	(void)state;
	g_auto(GStrv) items = vr_config_net_split(" allow=a,b ; ;read=h;  allow-private;");
	assert_int_equal(g_strv_length(items), 3);
	const char *list = NULL;
	assert_int_equal(vr_config_net_item(items[0], &list), VR_NET_ITEM_ALLOW);
	assert_string_equal(list, "a,b");
	assert_int_equal(vr_config_net_item(items[1], &list), VR_NET_ITEM_READ);
	assert_string_equal(list, "h");
	assert_int_equal(vr_config_net_item(items[2], &list), VR_NET_ITEM_PRIVATE);
	assert_null(list);
	assert_int_equal(vr_config_net_item("allow-localhost=1", NULL), VR_NET_ITEM_LOCALHOST);
	assert_int_equal(vr_config_net_item("none", NULL), VR_NET_ITEM_NONE);
	assert_int_equal(vr_config_net_item("allow=", NULL), VR_NET_ITEM_BAD);
	assert_int_equal(vr_config_net_item("allowx=a", NULL), VR_NET_ITEM_BAD);
	expect_error("[sandbox]\nnet=none;none\n", VR_SOURCE_USER, "cfg:2:", "expected none, host");
	expect_error("[sandbox]\nnet= ; \n", VR_SOURCE_USER, "cfg:2:", "expected none, host");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_good),
		cmocka_unit_test(test_bad),
		cmocka_unit_test(test_project_adversarial),
		cmocka_unit_test(test_env_file_split),
		cmocka_unit_test(test_precedence),
		cmocka_unit_test(test_net_grammar),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
