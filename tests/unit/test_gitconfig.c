/* The git config parser (policy/gitconfig.c), the allow-list and the gate
 * (policy/gitconfig-allow.c).
 *
 * The parser is checked against real git: every file of
 * tests/fuzz/corpus/gitconfig and random mutations of them (a fixed seed,
 * VR_GITCONFIG_DIFF_SECONDS of them, 3 by default; VR_GITCONFIG_DIFF_SEED)
 * go through
 * `git config --file F --list --null`, and whatever the parser reads must be
 * exactly what git prints: the same keys and values, and an error where git
 * stops (with the entries git printed before it). Files the parser refuses
 * to read (UNSUPPORTED) need not agree: the gate refuses them. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <glib.h>
#include <glib/gstdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "policy/gitconfig.h"
#include "policy/policy.h"

/* --- the parser --- */

static VrGitConfig *parse(const char *text)
{
	return vr_gitconfig_parse(text, strlen(text));
}

/* "key=value" per entry ("key" for a boolean), joined by '|'. */
static char *listing(const VrGitConfig *c)
{
	GString *s = g_string_new(NULL);
	for (guint i = 0; i < c->entries->len; i++) {
		const VrGitConfigEntry *e = &g_array_index(c->entries, VrGitConfigEntry, i);
		g_string_append_printf(s, "%s%s%s%s", i ? "|" : "", e->key, e->value ? "=" : "",
		                       e->value ? e->value : "");
	}
	return g_string_free(s, FALSE);
}

static void expect(const char *text, VrGitConfigStatus status, const char *entries)
{
	g_autoptr(VrGitConfig) c = parse(text);
	g_autofree char *got = listing(c);
	if (c->status != status || strcmp(got, entries) != 0)
		fail_msg("for %s: status %d, entries '%s'; expected %d, '%s'", g_strescape(text, NULL),
		         c->status, got, status, entries);
}

static void test_parse_rules(void **state)
{
	(void)state;
	expect("[core]\n\tbare = false\n", VR_GITCONFIG_OK, "core.bare=false");
	/* Sections and keys fold case; subsections keep it; [a.B] folds. */
	expect("[CoRe]\n\tBaRe = x\n[Remote \"OrIg\"]\nURL=u\n[remote.Or]\nurl=v\n", VR_GITCONFIG_OK,
	       "core.bare=x|remote.OrIg.url=u|remote.or.url=v");
	expect("[a]\n\tb = x \\\n   y\n", VR_GITCONFIG_OK, "a.b=x    y");
	expect("[a]\n\tb = \"x ; y\" ; z\n\tc = un\"quo\"ted # c\n", VR_GITCONFIG_OK,
	       "a.b=x ; y|a.c=unquoted");
	expect("[a]\n\tb\n\tc =\n", VR_GITCONFIG_OK, "a.b|a.c=");
	expect("[a]\n\tb = x\\ty\n", VR_GITCONFIG_OK, "a.b=x\ty");
	expect("[a]\n\tb = x\\qy\n", VR_GITCONFIG_INVALID, "");
	expect("[a]\n\tb = 1\n\tc = \"open\n\td = 2\n", VR_GITCONFIG_INVALID, "a.b=1");
	expect("\xef\xbb\xbf[a]\nb=1\n", VR_GITCONFIG_OK, "a.b=1");
	expect("\xef\xbb[a]\nb=1\n", VR_GITCONFIG_INVALID, "");
	expect("[a \"x\\\"y\"] b = 1\n", VR_GITCONFIG_OK, "a.x\"y.b=1");
	expect("[a \"x\" ]\nb=1\n", VR_GITCONFIG_INVALID, "");
	expect("[a]\r\nb = 1\r\n", VR_GITCONFIG_OK, "a.b=1");
	expect("[a]\nb # comment\n", VR_GITCONFIG_INVALID, "");
	expect("Host x\n  HostName y\n", VR_GITCONFIG_INVALID, "");
	expect("[a]\nb=1", VR_GITCONFIG_OK, "a.b=1");
	g_autoptr(VrGitConfig) nul = vr_gitconfig_parse("[a]\nb=\0x\n", 9);
	assert_int_equal(nul->status, VR_GITCONFIG_UNSUPPORTED);
}

static void test_entry_positions(void **state)
{
	(void)state;
	const char *text = "[a]\n\tb = x \\\n y ; c\n\td\n";
	g_autoptr(VrGitConfig) c = parse(text);
	assert_int_equal(c->status, VR_GITCONFIG_OK);
	assert_int_equal(c->entries->len, 2);
	const VrGitConfigEntry *b = &g_array_index(c->entries, VrGitConfigEntry, 0);
	assert_int_equal(b->line, 2);
	assert_int_equal(b->last_line, 3);
	assert_int_equal(b->start, 5);
	assert_string_equal(b->raw, " = x \\\n y ; c");
	const VrGitConfigEntry *d = &g_array_index(c->entries, VrGitConfigEntry, 1);
	assert_int_equal(d->line, 4);
	assert_int_equal(d->end, strlen(text));
	assert_string_equal(d->raw, "");
}

/* --- the allow-list --- */

static void test_key_kinds(void **state)
{
	(void)state;
	static const char *const allowed[] = {
		"user.email", "user.name", "user.signingkey", "init.defaultbranch", "fetch.prune",
		"merge.ff", "rerere.enabled", "push.default", "push.autosetupremote", "pull.rebase",
		"pull.ff", "core.repositoryformatversion", "core.filemode", "core.bare",
		"core.logallrefupdates", "core.ignorecase", "core.symlinks", "core.autocrlf", "core.eol",
		"branch.main.merge", "branch.a.b.rebase", "remote.origin.fetch", "submodule.s.active",
	};
	static const char *const refused[] = {
		"core.worktree", "core.fsmonitor", "core.hookspath", "core.sshcommand", "core.gitproxy",
		"core.askpass", "core.pager", "core.editor", "core.alternaterefscommand",
		"remote.o.uploadpack", "remote.o.receivepack", "remote.o.vcs", "submodule.s.update",
		"diff.x.textconv", "filter.lfs.clean", "filter.lfs.smudge", "diff.external",
		"merge.x.driver", "credential.helper", "credential.https://x.helper", "alias.st",
		"gpg.program", "gpg.ssh.program", "include.path", "includeif.gitdir:/x/.path",
		"url.https://evil/.insteadof", "url.x.pushinsteadof", "init.templatedir", "user.x.email",
		"core.unknown", "sequence.editor", "foo", "branch.remote", "remote.url", "http.proxy",
		"protocol.file.allow", "uploadpack.packobjectshook", "extensions.worktreeconfig",
	};
	for (guint i = 0; i < G_N_ELEMENTS(allowed); i++)
		if (vr_gitconfig_key_kind(allowed[i]) != VR_GITKEY_ALLOWED)
			fail_msg("%s should be allowed", allowed[i]);
	for (guint i = 0; i < G_N_ELEMENTS(refused); i++)
		if (vr_gitconfig_key_kind(refused[i]) != VR_GITKEY_REFUSED)
			fail_msg("%s should be refused", refused[i]);
	assert_int_equal(vr_gitconfig_key_kind("remote.origin.url"), VR_GITKEY_URL);
	assert_int_equal(vr_gitconfig_key_kind("remote.x.y.pushurl"), VR_GITKEY_URL);
	assert_int_equal(vr_gitconfig_key_kind("submodule.s.url"), VR_GITKEY_URL);
	assert_int_equal(vr_gitconfig_key_kind("branch.main.remote"), VR_GITKEY_REMOTE_REF);
	assert_int_equal(vr_gitconfig_key_kind("branch.main.pushremote"), VR_GITKEY_REMOTE_REF);
	assert_int_equal(vr_gitconfig_key_kind("remote.pushdefault"), VR_GITKEY_REMOTE_REF);
}

static void test_urls(void **state)
{
	(void)state;
	static const char *const good[] = {
		"https://github.com/a/b.git", "https://user:pa%40ss@gitlab.example.com:8443/x.git",
		"ssh://git@github.com/a/b", "ssh://git@host:2222/~u/r", "git://host/r",
		"git@github.com:a/b.git", "github.com:a/b", "https://[::1]/r",
	};
	static const char *const bad[] = {
		"file:///tmp/r", "/tmp/r", "../r", "r", "./r", "ext::sh -c touch% /tmp/x", "fd::3",
		"x::https://h/r", "ssh://-oProxyCommand=x/r", "ssh://u@-host/r", "ssh://-u@host/r",
		"git@-host:r", "-u@host:r", "host:-r", "https://", "https:///x", "http://h/r",
		"ftp://h/r", "https://h/a b", "https://h/\tr", "ssh://%2doProxyCommand=x/r",
		"[u@h:22]:r", "@:r", "host:", ":r", "", "FILE:///x",
	};
	for (guint i = 0; i < G_N_ELEMENTS(good); i++) {
		const char *p = vr_gitconfig_url_problem(good[i]);
		if (p)
			fail_msg("%s refused: %s", good[i], p);
	}
	for (guint i = 0; i < G_N_ELEMENTS(bad); i++)
		if (!vr_gitconfig_url_problem(bad[i]))
			fail_msg("%s accepted", bad[i]);
}

/* --- the gate --- */

typedef struct {
	gboolean ok;
	char *out, *key, *reason;
	guint restored;
	gboolean inert;
} Gate;

static Gate gate_at(const char *relpath, const char *cur, const char *masked, const char *new)
{
	Gate g = {0};
	VrGitGateVerdict v = {0};
	GByteArray *out = NULL;
	g.ok = vr_gitgate_decide(relpath, cur, cur ? strlen(cur) : 0, masked, new, strlen(new), &out, &v);
	if (out)
		g.out = g_strndup((const char *)out->data, out->len);
	g.key = g_strdup(v.key);
	g.reason = g_strdup(v.reason);
	g.restored = v.restored;
	g.inert = v.inert;
	if (out)
		g_byte_array_unref(out);
	vr_gitgate_verdict_clear(&v);
	return g;
}

static Gate gate(const char *cur, const char *new)
{
	return gate_at(".git/config", cur, NULL, new);
}

static void gate_clear(Gate *g)
{
	g_free(g->out);
	g_free(g->key);
	g_free(g->reason);
}

static void accepts(const char *cur, const char *new)
{
	Gate g = gate(cur, new);
	if (!g.ok)
		fail_msg("refused (%s: %s):\n%s", g.key, g.reason, new);
	assert_string_equal(g.out, new);
	gate_clear(&g);
}

static void refuses(const char *cur, const char *new, const char *key)
{
	Gate g = gate(cur, new);
	if (g.ok)
		fail_msg("accepted:\n%s", new);
	if (key && g_strcmp0(g.key, key) != 0)
		fail_msg("refused for %s (%s), expected %s", g.key, g.reason, key);
	gate_clear(&g);
}

static const char base[] = "[core]\n\trepositoryformatversion = 0\n\tfilemode = true\n"
                           "\tbare = false\n\tlogallrefupdates = true\n";

static void test_gate_everyday(void **state)
{
	(void)state;
	/* git init: a new file. */
	accepts(NULL, base);
	g_autofree char *email = g_strconcat(base, "[user]\n\temail = a@b.c\n", NULL);
	accepts(base, email);
	g_autofree char *remote = g_strconcat(email, "[remote \"origin\"]\n\turl = https://h/r.git\n"
	                                      "\tfetch = +refs/heads/*:refs/remotes/origin/*\n", NULL);
	accepts(email, remote);
	g_autofree char *tracking = g_strconcat(remote, "[branch \"main\"]\n\tremote = origin\n"
	                                        "\tmerge = refs/heads/main\n[branch \"f\"]\n"
	                                        "\tremote = .\n\tmerge = refs/heads/main\n", NULL);
	accepts(remote, tracking);
	accepts(tracking, email); /* git remote remove */
	/* Husky's hooksPath and lfs's filters, untouched, do not matter. */
	g_autofree char *husky = g_strconcat(base, "\thooksPath = .husky\n[filter \"lfs\"]\n"
	                                     "\tclean = git-lfs clean -- %f\n", NULL);
	g_autofree char *husky2 = g_strconcat(husky, "[user]\n\temail = a@b.c\n", NULL);
	accepts(husky, husky2);
	accepts(husky2, husky);
	/* A continued value swallows the next line, header and all, as in git:
	 * user.name = "a [core] fsmonitor = x". */
	g_autofree char *cont = g_strconcat(base, "[user]\n\tname = a \\\n[core] fsmonitor = x\n", NULL);
	accepts(base, cont);
	/* Not git config at all, before and after: an ordinary file. */
	Gate g = gate("#!/bin/sh\nset -e\n", "#!/bin/sh\nset -eu\necho hi\n");
	assert_true(g.ok);
	assert_true(g.inert);
	gate_clear(&g);
}

static void test_gate_refusals(void **state)
{
	(void)state;
	struct {
		const char *add, *key;
	} cases[] = {
		{"[core]\n\tfsmonitor = touch /tmp/x\n", "core.fsmonitor"},
		{"[core]\n\thooksPath = /tmp\n", "core.hookspath"},
		{"[core]\n\tsshCommand = sh -c x\n", "core.sshcommand"},
		{"[core]\n\tworktree = /home\n", "core.worktree"},
		{"[alias]\n\tst = !sh -c x\n", "alias.st"},
		{"[include]\n\tpath = /tmp/x\n", "include.path"},
		{"[includeIf \"gitdir:/\"]\n\tpath = x\n", "includeif.gitdir:/.path"},
		{"[url \"https://evil/\"]\n\tinsteadOf = https://github.com/\n", "url.https://evil/.insteadof"},
		{"[filter \"x\"]\n\tclean = sh\n", "filter.x.clean"},
		{"[diff \"x\"]\n\ttextconv = sh\n", "diff.x.textconv"},
		{"[credential]\n\thelper = !sh\n", "credential.helper"},
		{"[remote \"o\"]\n\turl = file:///tmp/r\n", "remote.o.url"},
		{"[remote \"o\"]\n\turl = ssh://-oProxyCommand=x/r\n", "remote.o.url"},
		{"[remote \"o\"]\n\turl = ext::sh -c x\n", "remote.o.url"},
		{"[remote \"o\"]\n\turl = /tmp/r\n", "remote.o.url"},
		{"[remote \"o\"]\n\tuploadpack = sh\n", "remote.o.uploadpack"},
		{"[branch \"m\"]\n\tremote = /tmp/r\n", "branch.m.remote"},
		{"[branch \"m\"]\n\tremote = nosuchremote\n", "branch.m.remote"},
		{"[remote]\n\tpushDefault = file:///x\n", "remote.pushdefault"},
		{"[init]\n\ttemplateDir = /tmp/t\n", "init.templatedir"},
		{"[submodule \"s\"]\n\tupdate = !sh\n", "submodule.s.update"},
		/* The deprecated and case-folded spellings are the same keys. */
		{"[Core]\n\tFSMonitor = x\n", "core.fsmonitor"},
		{"[alias.st]\nx = 1\n", "alias.st.x"},
		/* A continuation ends at the next line: what follows is read. */
		{"[user]\n\tname = a \\\n\n[core]\n\tfsmonitor = x\n", "core.fsmonitor"},
	};
	for (guint i = 0; i < G_N_ELEMENTS(cases); i++) {
		g_autofree char *new = g_strconcat(base, cases[i].add, NULL);
		refuses(base, new, cases[i].key);
	}
	/* Removing or changing a refused key the user had. */
	g_autofree char *husky = g_strconcat(base, "\thooksPath = .husky\n", NULL);
	refuses(husky, base, "core.hookspath");
	g_autofree char *husky2 = g_strconcat(base, "\thooksPath = .evil\n", NULL);
	refuses(husky, husky2, "core.hookspath");
	g_autofree char *husky3 = g_strconcat(base, "\thooksPath = \".husky\"\n", NULL);
	refuses(husky, husky3, "core.hookspath"); /* the same value, other bytes */
	/* A refused key moved past an include. */
	const char *inc = "[include]\n\tpath = a\n[core]\n\thooksPath = h\n";
	refuses(inc, "[core]\n\thooksPath = h\n[include]\n\tpath = a\n", NULL);
	/* git config replaced by what is not git config at all. */
	refuses(base, "# a README\n\nSome text here.\n", NULL);
	/* Content git reads keys from, then stops. */
	g_autofree char *bad = g_strconcat(base, "[user]\n\temail = a\n%%%\n", NULL);
	refuses(base, bad, NULL);
	/* A NUL byte. */
	Gate g = {0};
	VrGitGateVerdict v = {0};
	GByteArray *out = NULL;
	assert_false(vr_gitgate_decide(".git/config", NULL, 0, NULL, "[a]\nb=\0", 7, &out, &v));
	vr_gitgate_verdict_clear(&v);
	(void)g;
}

static void test_gate_worktree(void **state)
{
	(void)state;
	const char *mod = ".git/modules/lib/config";
	g_autofree char *wt = g_strconcat(base, "\tworktree = ../../../lib\n", NULL);
	Gate g = gate_at(mod, base, NULL, wt);
	assert_true(g.ok);
	gate_clear(&g);
	static const char *const bad[] = {"/home/u", "../../../../x", "../../hooks", "../..",
	                                  "../../../lib/../.git", "~/x", "../../../"};
	for (guint i = 0; i < G_N_ELEMENTS(bad); i++) {
		g_autofree char *w = g_strconcat(base, "\tworktree = ", bad[i], "\n", NULL);
		g = gate_at(mod, base, NULL, w);
		if (g.ok)
			fail_msg("core.worktree = %s accepted", bad[i]);
		gate_clear(&g);
	}
	g = gate_at(".git/config", base, NULL, wt);
	assert_false(g.ok);
	gate_clear(&g);
}

/* The agent was served CUR with the password masked. */
static const char secret_cur[] =
	"[core]\n\tbare = false\n[remote \"origin\"]\n"
	"\turl = https://bot:ghp_aBcDeFgHiJkLmNoPqRsTuVwXyZ0123456789@github.com/x/y.git\n";
static const char secret_shown[] =
	"[core]\n\tbare = false\n[remote \"origin\"]\n"
	"\turl = https://bot:****************************************@github.com/x/y.git\n";

static void test_gate_masked(void **state)
{
	(void)state;
	assert_int_equal(strlen(secret_cur), strlen(secret_shown));
	/* git config user.email: the masked line comes back, and is written
	 * with the real password. */
	g_autofree char *new = g_strconcat(secret_shown, "[user]\n\temail = a@b.c\n", NULL);
	g_autofree char *want = g_strconcat(secret_cur, "[user]\n\temail = a@b.c\n", NULL);
	Gate g = gate_at(".git/config", secret_cur, secret_shown, new);
	assert_true(g.ok);
	assert_int_equal(g.restored, 1);
	assert_string_equal(g.out, want);
	gate_clear(&g);
	/* The url edited around the mask: the stars would be written. */
	g_autofree char *edited = g_strdup(secret_shown);
	char *host = strstr(edited, "github.com");
	memcpy(host, "gitlab.com", 10);
	g = gate_at(".git/config", secret_cur, secret_shown, edited);
	assert_false(g.ok);
	gate_clear(&g);
	/* The masked line spliced into another key by a continuation. */
	g_autofree char *spliced = g_strconcat("[core]\n\tbare = false\n[user]\n\tname = x\\\n",
	                                       strchr(secret_shown + 30, '\t'), NULL);
	g = gate_at(".git/config", secret_cur, secret_shown, spliced);
	assert_false(g.ok);
	gate_clear(&g);
	/* Moved under another remote. */
	g_autofree char *moved = g_strconcat("[core]\n\tbare = false\n[remote \"evil\"]\n",
	                                     strchr(secret_shown + 30, '\t'), NULL);
	g = gate_at(".git/config", secret_cur, secret_shown, moved);
	assert_false(g.ok);
	gate_clear(&g);
	/* Replaced by a URL the agent wrote: fine, nothing masked is written. */
	g = gate_at(".git/config", secret_cur, secret_shown,
	            "[core]\n\tbare = false\n[remote \"origin\"]\n\turl = https://github.com/x/y.git\n");
	assert_true(g.ok);
	gate_clear(&g);
	/* Last line without a newline: git adds one before what it appends. */
	g_autofree char *cur2 = g_strndup(secret_cur, strlen(secret_cur) - 1);
	g_autofree char *shown2 = g_strndup(secret_shown, strlen(secret_shown) - 1);
	g = gate_at(".git/config", cur2, shown2, new);
	assert_true(g.ok);
	assert_string_equal(g.out, want);
	gate_clear(&g);
}

/* --- which files are git config (policy.c, gitconfig-project.c) --- */

static VrDecision decide(const VrPolicy *p, const char *rel, gboolean is_dir)
{
	return vr_policy_decide(p, rel, is_dir);
}

static void test_policy_names(void **state)
{
	(void)state;
	g_autoptr(VrPolicy) p = vr_policy_new();
	vr_policy_add_builtins(p);
	static const char *const gated[] = {".git/config", "config", "debian/config", "a/b/c/config",
	                                    ".git/modules/x/config", "w/config.worktree"};
	for (guint i = 0; i < G_N_ELEMENTS(gated); i++) {
		VrDecision d = decide(p, gated[i], FALSE);
		if (d.cls != VR_CLASS_READONLY || !d.rule || !d.rule->gitconfig)
			fail_msg("%s is not gated", gated[i]);
	}
	/* Directories of that name are not; stricter rules win; the gate's
	 * own file is hidden. */
	assert_int_equal(decide(p, "config", TRUE).cls, VR_CLASS_VISIBLE);
	assert_int_equal(decide(p, "src/config/app.ini", FALSE).cls, VR_CLASS_VISIBLE);
	assert_int_equal(decide(p, ".kube/config", FALSE).cls, VR_CLASS_HIDE);
	assert_int_equal(decide(p, ".ssh/config", FALSE).cls, VR_CLASS_HIDE);
	assert_false(decide(p, ".cargo/config", FALSE).rule->gitconfig);
	assert_int_equal(decide(p, ".git/config.lock", FALSE).cls, VR_CLASS_VISIBLE);
	assert_int_equal(decide(p, ".git/.vault-run-gate.0123abcd", FALSE).cls, VR_CLASS_HIDE);
	/* The user's own show rule lifts it; a project rule cannot. */
	assert_true(vr_policy_add(p, VR_RULE_SHOW, "debian/config", "cfg", 1, FALSE, NULL));
	assert_int_equal(decide(p, "debian/config", FALSE).cls, VR_CLASS_VISIBLE);
	assert_int_equal(decide(p, ".git/config", FALSE).cls, VR_CLASS_READONLY);
}

static void write_file(const char *dir, const char *rel, const char *text)
{
	g_autofree char *path = g_build_filename(dir, rel, NULL);
	g_autofree char *parent = g_path_get_dirname(path);
	g_mkdir_with_parents(parent, 0755);
	assert_true(g_file_set_contents(path, text, -1, NULL));
}

static void test_policy_project_configs(void **state)
{
	(void)state;
	g_autofree char *dir = g_dir_make_tmp("vr-gitproj-XXXXXX", NULL);
	write_file(dir, ".git/config",
	           "[core]\n\thooksPath = tools/hooks\n[include]\n\tpath = ../shared/team.cfg\n"
	           "[includeIf \"gitdir:/x/\"]\n\tpath = /etc/outside.cfg\n");
	write_file(dir, "shared/team.cfg", "[include]\n\tpath = more.cfg\n");
	write_file(dir, "shared/more.cfg", "[user]\n\tname = x\n");
	write_file(dir, ".git/modules/lib/config", "[core]\n\tworktree = ../../../lib\n\thooksPath = h\n");
	write_file(dir, "tools/real/keep", "");
	g_autofree char *link = g_build_filename(dir, "tools/hooks", NULL);
	assert_int_equal(symlink("real", link), 0);
	g_autoptr(VrPolicy) p = vr_policy_new();
	vr_policy_add_builtins(p);
	vr_policy_protect_git_configs(p, dir);

	static const char *const gated[] = {"shared/team.cfg", "shared/more.cfg"};
	for (guint i = 0; i < G_N_ELEMENTS(gated); i++) {
		VrDecision d = decide(p, gated[i], FALSE);
		if (d.cls != VR_CLASS_READONLY || !d.rule->gitconfig)
			fail_msg("%s is not gated", gated[i]);
	}
	/* Its directory stays a directory; it is no file of git's itself. */
	assert_int_equal(decide(p, "shared", TRUE).cls, VR_CLASS_VISIBLE);
	assert_int_equal(decide(p, "shared", FALSE).cls, VR_CLASS_READONLY);
	/* hooksPath: the symlink, its target, what is below. */
	assert_int_equal(decide(p, "tools/hooks", FALSE).cls, VR_CLASS_READONLY);
	assert_int_equal(decide(p, "tools/real/pre-commit", FALSE).cls, VR_CLASS_READONLY);
	assert_int_equal(decide(p, "tools", FALSE).cls, VR_CLASS_READONLY);
	assert_int_equal(decide(p, "tools", TRUE).cls, VR_CLASS_VISIBLE);
	assert_int_equal(decide(p, "tools/other", FALSE).cls, VR_CLASS_VISIBLE);
	/* A submodule's hooksPath is relative to its work tree. */
	assert_int_equal(decide(p, "lib/h/pre-commit", FALSE).cls, VR_CLASS_READONLY);
	assert_true(vr_policy_dir_is_rule_sensitive(p, "shared"));
	assert_false(vr_policy_dir_is_rule_sensitive(p, "src"));
	g_autofree char *cmd = g_strdup_printf("rm -rf '%s'", dir);
	assert_int_equal(system(cmd), 0);
}

/* --- the differential test against git --- */

/* git's listing of the file at path, as bytes (the records hold NULs). */
static GBytes *git_listing(const char *path, const char *out_path, gboolean *ret_ok)
{
	const char *argv[] = {"sh", "-c", "exec git config --file \"$1\" --list --null >\"$2\" 2>/dev/null",
	                      "sh", path, out_path, NULL};
	const char *envp[] = {"HOME=/nonexistent", "GIT_CONFIG_NOSYSTEM=1", "LC_ALL=C",
	                      "PATH=/usr/local/bin:/usr/bin:/bin", NULL};
	GError *error = NULL;
	int status = 0;
	if (!g_spawn_sync(NULL, (char **)argv, (char **)envp, G_SPAWN_SEARCH_PATH_FROM_ENVP, NULL, NULL,
	                  NULL, NULL, &status, &error))
		fail_msg("cannot run git: %s", error->message);
	*ret_ok = g_spawn_check_wait_status(status, NULL);
	char *out;
	gsize len;
	if (!g_file_get_contents(out_path, &out, &len, &error))
		fail_msg("%s", error->message);
	return g_bytes_new_take(out, len);
}

static GString *our_listing(const VrGitConfig *c)
{
	GString *s = g_string_new(NULL);
	for (guint i = 0; i < c->entries->len; i++) {
		const VrGitConfigEntry *e = &g_array_index(c->entries, VrGitConfigEntry, i);
		g_string_append(s, e->key);
		if (e->value) {
			g_string_append_c(s, '\n');
			g_string_append(s, e->value);
		}
		g_string_append_c(s, '\0');
	}
	return s;
}

static guint compared;

/* One file: the parser and git agree, or the parser refuses to read it. */
static void differ(const char *dir, const char *data, gsize len, const char *what)
{
	g_autoptr(VrGitConfig) c = vr_gitconfig_parse(data, len);
	if (c->status == VR_GITCONFIG_UNSUPPORTED)
		return;
	g_autofree char *path = g_build_filename(dir, "config", NULL);
	g_autofree char *out_path = g_build_filename(dir, "listing", NULL);
	g_autoptr(GError) error = NULL;
	if (!g_file_set_contents(path, data, (gssize)len, &error))
		fail_msg("%s", error->message);
	gboolean git_ok;
	g_autoptr(GBytes) out = git_listing(path, out_path, &git_ok);
	g_autoptr(GString) ours = our_listing(c);
	g_autoptr(GBytes) mine = g_bytes_new(ours->str, ours->len);
	if (git_ok != (c->status == VR_GITCONFIG_OK) || !g_bytes_equal(out, mine)) {
		g_autofree char *esc = g_strescape(data, NULL);
		gsize n;
		const char *o = g_bytes_get_data(out, &n);
		g_autoptr(GString) theirs = g_string_new_len(o, (gssize)n);
		for (gsize k = 0; k < theirs->len; k++)
			if (!theirs->str[k])
				theirs->str[k] = '|';
		for (gsize k = 0; k < ours->len; k++)
			if (!ours->str[k])
				ours->str[k] = '|';
		fail_msg("%s: git %s, parser %s\n  file: \"%s\"\n  git printed: \"%s\"\n  parser read: \"%s\"",
		         what, git_ok ? "reads it" : "stops", c->status == VR_GITCONFIG_OK ? "reads it" : "stops",
		         esc, theirs->str, ours->str);
	}
	compared++;
}

static GPtrArray *load_corpus(void)
{
	const char *src = g_getenv("VR_SOURCE_DIR");
	g_autofree char *dir = g_build_filename(src ? src : ".", "tests/fuzz/corpus/gitconfig", NULL);
	GPtrArray *files = g_ptr_array_new_with_free_func((GDestroyNotify)g_bytes_unref);
	g_autoptr(GDir) d = g_dir_open(dir, 0, NULL);
	assert_non_null(d);
	const char *name;
	while ((name = g_dir_read_name(d))) {
		g_autofree char *path = g_build_filename(dir, name, NULL);
		char *data;
		gsize len;
		if (g_file_get_contents(path, &data, &len, NULL))
			g_ptr_array_add(files, g_bytes_new_take(data, len));
	}
	assert_true(files->len >= 20);
	return files;
}

static void mutate(GRand *r, GByteArray *b)
{
	static const char pool[] = "\"\\\n\r[] \t=#;.a-Z0\xef\xbb\xbf";
	guint n = (guint)g_rand_int_range(r, 1, 4);
	for (guint k = 0; k < n; k++) {
		guint at = b->len ? (guint)g_rand_int_range(r, 0, (gint32)b->len + 1) : 0;
		int op = g_rand_int_range(r, 0, 3);
		guint8 c = (guint8)pool[g_rand_int_range(r, 0, (gint32)sizeof pool - 1)];
		if (op == 0 || !b->len) {
			g_byte_array_append(b, &c, 1); /* room for one more, then shift */
			memmove(b->data + at + 1, b->data + at, b->len - 1 - at);
			b->data[at] = c;
		}
		else if (op == 1 && at < b->len)
			g_byte_array_remove_index(b, at);
		else if (at < b->len)
			b->data[at] = c;
	}
}

static void test_differential(void **state)
{
	(void)state;
	g_autofree char *git = g_find_program_in_path("git");
	if (!git)
		skip();
	g_autofree char *dir = g_dir_make_tmp("vr-gitconfig-XXXXXX", NULL);
	assert_non_null(dir);
	g_autoptr(GPtrArray) corpus = load_corpus();
	for (guint i = 0; i < corpus->len; i++) {
		gsize len;
		const char *data = g_bytes_get_data(corpus->pdata[i], &len);
		differ(dir, data, len, "corpus");
	}
	const char *secs = g_getenv("VR_GITCONFIG_DIFF_SECONDS");
	gint64 until = g_get_monotonic_time() + (secs ? g_ascii_strtoll(secs, NULL, 10) : 3) * G_USEC_PER_SEC;
	const char *seed = g_getenv("VR_GITCONFIG_DIFF_SEED"); /* a fixed one by default */
	g_autoptr(GRand) r = g_rand_new_with_seed(seed ? (guint32)g_ascii_strtoull(seed, NULL, 10) : 20260517);
	while (g_get_monotonic_time() < until) {
		gsize len;
		const char *data = g_bytes_get_data(corpus->pdata[g_rand_int_range(r, 0, (gint32)corpus->len)], &len);
		g_autoptr(GByteArray) b = g_byte_array_new();
		g_byte_array_append(b, (const guint8 *)data, (guint)len);
		mutate(r, b);
		differ(dir, (const char *)b->data, b->len, "mutation");
	}
	g_autofree char *f = g_build_filename(dir, "config", NULL);
	g_autofree char *l = g_build_filename(dir, "listing", NULL);
	g_unlink(f);
	g_unlink(l);
	g_rmdir(dir);
	print_message("compared %u files with git\n", compared);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse_rules),
		cmocka_unit_test(test_entry_positions),
		cmocka_unit_test(test_key_kinds),
		cmocka_unit_test(test_urls),
		cmocka_unit_test(test_gate_everyday),
		cmocka_unit_test(test_gate_refusals),
		cmocka_unit_test(test_gate_worktree),
		cmocka_unit_test(test_gate_masked),
		cmocka_unit_test(test_policy_names),
		cmocka_unit_test(test_policy_project_configs),
		cmocka_unit_test(test_differential),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
