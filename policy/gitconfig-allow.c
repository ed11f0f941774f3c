/* policy/gitconfig-allow.c — which git config keys the agent may set or
 * remove, and the gate's decision for one new version of a config file.
 *
 * The allow-list holds keys that neither run nor load anything: who the
 * author is, where remotes are (plain network URLs), branch tracking, a few
 * merge/pull/push preferences, and the core.* keys `git init` and `clone`
 * write. Everything else is refused — including keys git does not know
 * (a future version may give them power) and the ones that run commands
 * (core.fsmonitor, core.hooksPath, core.sshCommand, alias.*, filter.*,
 * *.textconv, diff.external, credential.*, gpg.*, …), redirect git
 * (core.worktree, include*, url.*.insteadOf) or load code
 * (init.templateDir copies hooks).
 *
 * Keys already in the file that the change leaves as they are do not
 * matter (a repository with husky's core.hooksPath can still take
 * `git config user.email`); but refused keys must keep their order among
 * themselves, so an include cannot be moved before or after the keys it
 * overrides. */
#include <string.h>

#include "policy/gitconfig.h"

static const char *const allow_list[] = {
	"user.*",
	"init.* (not init.templateDir: it installs hooks)",
	"fetch.prune, merge.ff, rerere.enabled, push.default, push.autoSetupRemote, pull.rebase, pull.ff",
	"core.{repositoryformatversion,filemode,bare,logallrefupdates,ignorecase,symlinks,autocrlf,eol}",
	"branch.*.{remote,merge,rebase,pushRemote}, remote.pushDefault (a remote's name, '.', or a URL as below)",
	"remote.*.{url,pushurl,fetch}",
	"submodule.*.{url,active} (git submodule add)",
	"core.worktree only in .git/modules/*/config, relative, to a directory of the project outside .git",
	"URLs: https://, ssh://, git:// or [user@]host:path; no file://, local path, x:: helper, or host/user/path starting with '-'",
	NULL,
};

const char *const *vr_gitconfig_allow_list(void)
{
	return allow_list;
}

static gboolean in_list(const char *name, const char *const *list)
{
	for (; *list; list++)
		if (strcmp(name, *list) == 0)
			return TRUE;
	return FALSE;
}

VrGitKeyKind vr_gitconfig_key_kind(const char *key)
{
	static const char *const core_keys[] = {
		"repositoryformatversion", "filemode", "bare", "logallrefupdates",
		"ignorecase", "symlinks", "autocrlf", "eol", NULL,
	};
	static const char *const two_level[] = {
		"fetch.prune", "merge.ff", "rerere.enabled", "push.default",
		"push.autosetupremote", "pull.rebase", "pull.ff", NULL,
	};
	g_autofree char *section = NULL, *sub = NULL, *name = NULL;
	vr_gitconfig_key_split(key, &section, &sub, &name);
	if (!*name)
		return VR_GITKEY_REFUSED; /* no section: nothing git reads */
	if (!sub) {
		if (strcmp(section, "user") == 0)
			return VR_GITKEY_ALLOWED;
		if (strcmp(section, "init") == 0)
			return strcmp(name, "templatedir") == 0 ? VR_GITKEY_REFUSED : VR_GITKEY_ALLOWED;
		if (strcmp(section, "core") == 0)
			return in_list(name, core_keys) ? VR_GITKEY_ALLOWED : VR_GITKEY_REFUSED;
		if (strcmp(key, "remote.pushdefault") == 0)
			return VR_GITKEY_REMOTE_REF;
		return in_list(key, two_level) ? VR_GITKEY_ALLOWED : VR_GITKEY_REFUSED;
	}
	if (strcmp(section, "branch") == 0) {
		if (strcmp(name, "remote") == 0 || strcmp(name, "pushremote") == 0)
			return VR_GITKEY_REMOTE_REF;
		if (strcmp(name, "merge") == 0 || strcmp(name, "rebase") == 0)
			return VR_GITKEY_ALLOWED;
	} else if (strcmp(section, "remote") == 0) {
		if (strcmp(name, "url") == 0 || strcmp(name, "pushurl") == 0)
			return VR_GITKEY_URL;
		if (strcmp(name, "fetch") == 0)
			return VR_GITKEY_ALLOWED;
	} else if (strcmp(section, "submodule") == 0) {
		if (strcmp(name, "url") == 0)
			return VR_GITKEY_URL;
		if (strcmp(name, "active") == 0)
			return VR_GITKEY_ALLOWED;
	}
	return VR_GITKEY_REFUSED;
}

static gboolean has_control_or_space(const char *s)
{
	for (const guchar *p = (const guchar *)s; *p; p++)
		if (*p <= 0x20 || *p == 0x7f)
			return TRUE;
	return FALSE;
}

/* The authority of scheme://AUTHORITY/path: [user@]host[:port]. */
static const char *authority_problem(const char *auth, gsize len, gboolean ssh)
{
	if (!len)
		return "the URL has no host";
	const char *at = g_strrstr_len(auth, (gssize)len, "@");
	const char *host = at ? at + 1 : auth;
	if (host == auth + len)
		return "the URL has no host";
	if (*host == '-')
		return "the host starts with '-' (it would be read as an option)";
	if (at && *auth == '-')
		return "the user starts with '-' (it would be read as an option)";
	/* ssh gets the host and user as arguments: nothing that could be
	 * decoded into something else on the way. */
	if (ssh && memchr(auth, '%', len))
		return "'%' in an ssh URL's user or host";
	return NULL;
}

const char *vr_gitconfig_url_problem(const char *url)
{
	static const char *const schemes[] = {"https://", "ssh://", "git://"};
	if (!url || !*url)
		return "an empty URL";
	if (has_control_or_space(url))
		return "the URL holds a space or a control character";
	for (guint i = 0; i < G_N_ELEMENTS(schemes); i++) {
		if (!g_str_has_prefix(url, schemes[i]))
			continue;
		const char *auth = url + strlen(schemes[i]);
		gsize len = strcspn(auth, "/?#");
		return authority_problem(auth, len, i == 1);
	}
	if (strstr(url, "://"))
		return "only https://, ssh:// and git:// URLs (or user@host:path) are allowed";
	/* scp-like: a ':' before any '/' (git's rule); otherwise a local path. */
	const char *colon = strchr(url, ':'), *slash = strchr(url, '/');
	if (!colon || (slash && slash < colon))
		return "a local path (the same as file://): only network URLs are allowed";
	if (colon[1] == ':')
		return "the transport::address form runs a remote helper";
	if (colon == url)
		return "the URL has no host";
	gsize hlen = (gsize)(colon - url);
	if (memchr(url, '[', hlen) || memchr(url, ']', hlen))
		return "a bracketed host in a user@host:path URL";
	const char *problem = authority_problem(url, hlen, TRUE);
	if (problem)
		return problem;
	if (!colon[1])
		return "the URL has no path";
	if (colon[1] == '-')
		return "the path starts with '-' (it would be read as an option)";
	return NULL;
}

/* --- the gate --- */

void vr_gitgate_verdict_clear(VrGitGateVerdict *v)
{
	g_clear_pointer(&v->key, g_free);
	g_clear_pointer(&v->reason, g_free);
	g_clear_pointer(&v->changed, g_ptr_array_unref);
	v->line = 0;
	v->inert = FALSE;
	v->restored = 0;
}

static gboolean refuse(VrGitGateVerdict *v, const char *key, guint line, const char *fmt, ...)
	G_GNUC_PRINTF(4, 5);

static gboolean refuse(VrGitGateVerdict *v, const char *key, guint line, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	g_free(v->reason);
	v->reason = g_strdup_vprintf(fmt, ap);
	va_end(ap);
	g_free(v->key);
	v->key = g_strdup(key);
	v->line = line;
	return FALSE;
}

typedef struct {
	const char *start;
	gsize len;
} Line;

static GArray *split_lines(const char *buf, gsize len)
{
	GArray *lines = g_array_new(FALSE, FALSE, sizeof(Line));
	gsize at = 0;
	while (at < len) {
		const char *nl = memchr(buf + at, '\n', len - at);
		gsize end = nl ? (gsize)(nl - buf) + 1 : len;
		Line l = {buf + at, end - at};
		g_array_append_val(lines, l);
		at = end;
	}
	return lines;
}

/* A line's length without its newline. */
static gsize content_len(const Line *l)
{
	return l->len && l->start[l->len - 1] == '\n' ? l->len - 1 : l->len;
}

/* Equal up to the newline: git adds one to a last line that had none when
 * it appends after it. */
static gboolean line_eq(const Line *a, const Line *b)
{
	gsize n = content_len(a);
	return n == content_len(b) && memcmp(a->start, b->start, n) == 0;
}

/* What the gate knows of masking: CUR's lines, the masked lines, and the
 * shortest run of masked bytes. */
typedef struct {
	GArray *real, *shown;   /* Line, one per line of CUR / MASKED */
	gsize min_run;          /* 0: nothing was masked */
	GArray *from;           /* per line of the result: the CUR line it was restored from, or -1 */
} Masking;

static void masking_clear(Masking *m)
{
	g_clear_pointer(&m->real, g_array_unref);
	g_clear_pointer(&m->shown, g_array_unref);
	g_clear_pointer(&m->from, g_array_unref);
}

static gsize shortest_masked_run(const char *cur, const char *masked, gsize len)
{
	gsize best = 0, run = 0;
	for (gsize i = 0; i <= len; i++) {
		if (i < len && cur[i] != masked[i]) {
			run++;
			continue;
		}
		if (run && (!best || run < best))
			best = run;
		run = 0;
	}
	return best;
}

/* NEW with each line the agent was served masked given its real bytes
 * back; FALSE when one masked line stands for two different real ones. */
static gboolean restore(Masking *m, const char *new, gsize new_len, GByteArray *out,
                        VrGitGateVerdict *v)
{
	g_autoptr(GArray) lines = split_lines(new, new_len);
	/* Only the masked lines can be given back. */
	g_autoptr(GArray) masked = g_array_new(FALSE, FALSE, sizeof(guint));
	for (guint i = 0; i < m->shown->len; i++)
		if (!line_eq(&g_array_index(m->shown, Line, i), &g_array_index(m->real, Line, i)))
			g_array_append_val(masked, i);
	m->from = g_array_sized_new(FALSE, FALSE, sizeof(gint), lines->len);
	for (guint j = 0; j < lines->len; j++) {
		const Line *l = &g_array_index(lines, Line, j);
		gint from = -1;
		for (guint k = 0; k < masked->len; k++) {
			guint i = g_array_index(masked, guint, k);
			const Line *s = &g_array_index(m->shown, Line, i);
			const Line *r = &g_array_index(m->real, Line, i);
			if (!line_eq(s, l))
				continue;
			if (from >= 0 && !line_eq(&g_array_index(m->real, Line, from), r))
				return refuse(v, NULL, j + 1,
				              "line %u is a masked line that stands for two different secrets", j + 1);
			from = (gint)i;
		}
		if (from >= 0) {
			/* The real bytes, with the newline the agent's line has. */
			const Line *r = &g_array_index(m->real, Line, from);
			g_byte_array_append(out, (const guint8 *)r->start, (guint)content_len(r));
			g_byte_array_append(out, (const guint8 *)l->start + content_len(l),
			                    (guint)(l->len - content_len(l)));
		} else {
			g_byte_array_append(out, (const guint8 *)l->start, (guint)l->len);
		}
		g_array_append_val(m->from, from);
		if (from >= 0)
			v->restored++;
	}
	return TRUE;
}

static gboolean has_star_run(const Line *l, gsize min)
{
	gsize run = 0;
	for (gsize i = 0; i < l->len; i++) {
		run = l->start[i] == '*' ? run + 1 : 0;
		if (run >= min)
			return TRUE;
	}
	return FALSE;
}

/* The entries of C that touch 1-based line n. */
static guint entries_on_line(const VrGitConfig *c, guint n, const VrGitConfigEntry **ret_one)
{
	guint count = 0;
	for (guint k = 0; k < c->entries->len; k++) {
		const VrGitConfigEntry *e = &g_array_index(c->entries, VrGitConfigEntry, k);
		if (e->line <= n && n <= e->last_line) {
			count++;
			*ret_one = e;
		}
	}
	return count;
}

static gboolean is_comment_line(const Line *l)
{
	for (gsize i = 0; i < l->len; i++) {
		char c = l->start[i];
		if (c == ' ' || c == '\t')
			continue;
		return c == '#' || c == ';';
	}
	return FALSE;
}

static gboolean same_value(const char *a, const char *b)
{
	return a == b || (a && b && strcmp(a, b) == 0);
}

/* A restored line must mean in the result exactly what it meant in CUR:
 * one whole entry with the same key and value, or a comment. Otherwise a
 * real secret could be spliced into another key (a continuation line
 * joining it to a URL of the agent's choosing). */
static gboolean restored_lines_keep_meaning(const Masking *m, const GByteArray *out,
                                            const VrGitConfig *cur, const VrGitConfig *res,
                                            VrGitGateVerdict *v)
{
	g_autoptr(GArray) lines = split_lines((const char *)out->data, out->len);
	for (guint j = 0; j < m->from->len; j++) {
		gint i = g_array_index(m->from, gint, j);
		if (i < 0)
			continue;
		const VrGitConfigEntry *a = NULL, *b = NULL;
		guint na = entries_on_line(cur, (guint)i + 1, &a), nb = entries_on_line(res, j + 1, &b);
		gboolean ok;
		if (na == 0 && nb == 0)
			ok = is_comment_line(&g_array_index(lines, Line, j));
		else
			ok = na == 1 && nb == 1 && a->line == a->last_line && b->line == b->last_line &&
			     strcmp(a->key, b->key) == 0 && same_value(a->value, b->value);
		if (!ok)
			return refuse(v, b ? b->key : a ? a->key : NULL, j + 1,
			              "line %u holds a masked secret and would change meaning there", j + 1);
	}
	return TRUE;
}

/* A line the agent wrote (not a restored one, not a line of CUR as it is)
 * that holds a run of '*' as long as the shortest masked one: the mask
 * would be written over the secret. */
static gboolean no_mask_written(const Masking *m, const GByteArray *out, VrGitGateVerdict *v)
{
	g_autoptr(GArray) lines = split_lines((const char *)out->data, out->len);
	for (guint j = 0; j < lines->len; j++) {
		const Line *l = &g_array_index(lines, Line, j);
		if (g_array_index(m->from, gint, j) >= 0 || !has_star_run(l, m->min_run))
			continue;
		gboolean known = FALSE;
		for (guint i = 0; i < m->real->len && !known; i++)
			known = line_eq(&g_array_index(m->real, Line, i), l);
		if (!known)
			return refuse(v, NULL, j + 1,
			              "line %u holds masked characters ('*'): the mask would replace the "
			              "real secret", j + 1);
	}
	return TRUE;
}

/* --- comparing two versions --- */

static gboolean entry_same(const VrGitConfigEntry *a, const VrGitConfigEntry *b, VrGitKeyKind kind)
{
	if (!same_value(a->value, b->value))
		return FALSE;
	/* Refused keys by their bytes too: equal bytes read the same in any
	 * git version. */
	return kind != VR_GITKEY_REFUSED || strcmp(a->raw, b->raw) == 0;
}

static GPtrArray *entries_of(const VrGitConfig *c, const char *key)
{
	GPtrArray *out = g_ptr_array_new();
	for (guint k = 0; c && k < c->entries->len; k++) {
		VrGitConfigEntry *e = &g_array_index(c->entries, VrGitConfigEntry, k);
		if (strcmp(e->key, key) == 0)
			g_ptr_array_add(out, e);
	}
	return out;
}

static gboolean lists_same(GPtrArray *a, GPtrArray *b, VrGitKeyKind kind)
{
	if (a->len != b->len)
		return FALSE;
	for (guint k = 0; k < a->len; k++)
		if (!entry_same(a->pdata[k], b->pdata[k], kind))
			return FALSE;
	return TRUE;
}

static gboolean value_in(GPtrArray *list, const char *value)
{
	for (guint k = 0; k < list->len; k++)
		if (same_value(((VrGitConfigEntry *)list->pdata[k])->value, value))
			return TRUE;
	return FALSE;
}

/* A remote git knows by name in RES: one with a URL. (A remote without
 * one takes its name as its URL.) */
static gboolean is_remote_name(const VrGitConfig *res, const char *name)
{
	g_autofree char *key = g_strdup_printf("remote.%s.url", name);
	for (guint k = 0; k < res->entries->len; k++) {
		const VrGitConfigEntry *e = &g_array_index(res->entries, VrGitConfigEntry, k);
		if (e->value && strcmp(e->key, key) == 0)
			return TRUE;
	}
	return FALSE;
}

/* The kind of KEY in the config file at RELPATH: core.worktree is allowed
 * (its value checked) in a submodule's git dir only. */
#define VR_GITKEY_WORKTREE ((VrGitKeyKind)100)

static gboolean is_module_config(const char *relpath)
{
	if (!relpath || !g_str_has_suffix(relpath, "/config"))
		return FALSE;
	const char *mod = strstr(relpath, ".git/modules/");
	return mod && (mod == relpath || mod[-1] == '/');
}

static VrGitKeyKind kind_at(const char *key, const char *relpath)
{
	if (strcmp(key, "core.worktree") == 0 && is_module_config(relpath))
		return VR_GITKEY_WORKTREE;
	return vr_gitconfig_key_kind(key);
}

/* core.worktree in a submodule's git dir (.git/modules/NAME/config, as
 * `git submodule add` writes it): a relative path that stays in the
 * project and outside every .git. */
static const char *worktree_problem(const char *relpath, const char *value)
{
	if (!value)
		return "core.worktree without a value";
	if (value[0] == '/' || value[0] == '~' || has_control_or_space(value))
		return "core.worktree must be a relative path inside the project";
	g_autofree char *dir = g_path_get_dirname(relpath);
	g_auto(GStrv) parts = g_strsplit(dir, "/", -1);
	GPtrArray *stack = g_ptr_array_new();
	for (char **p = parts; *p; p++)
		g_ptr_array_add(stack, *p);
	g_auto(GStrv) steps = g_strsplit(value, "/", -1);
	const char *problem = NULL;
	gboolean named = FALSE;
	for (char **s = steps; *s && !problem; s++) {
		if (!**s || strcmp(*s, ".") == 0)
			continue;
		if (strcmp(*s, "..") == 0) {
			if (named)
				problem = "core.worktree may use '..' only at its start";
			else if (!stack->len)
				problem = "core.worktree leads outside the project";
			else
				g_ptr_array_remove_index(stack, stack->len - 1);
			continue;
		}
		named = TRUE;
		g_ptr_array_add(stack, *s);
	}
	for (guint k = 0; !problem && k < stack->len; k++)
		if (g_ascii_strcasecmp(stack->pdata[k], ".git") == 0)
			problem = "core.worktree may not lead into a .git directory";
	if (!problem && !stack->len)
		problem = "core.worktree may not be the project's root";
	g_ptr_array_unref(stack);
	return problem;
}

static gboolean check_new_values(const char *key, VrGitKeyKind kind, GPtrArray *before,
                                 GPtrArray *after, const VrGitConfig *res, const char *relpath,
                                 VrGitGateVerdict *v)
{
	for (guint k = 0; k < after->len; k++) {
		const VrGitConfigEntry *e = after->pdata[k];
		if (value_in(before, e->value))
			continue; /* the user's own value, kept */
		const char *problem = NULL;
		if (kind == VR_GITKEY_WORKTREE)
			problem = worktree_problem(relpath, e->value);
		else if (kind == VR_GITKEY_URL)
			problem = e->value ? vr_gitconfig_url_problem(e->value) : "a URL without a value";
		else if (kind == VR_GITKEY_REMOTE_REF)
			problem = !e->value ? "a remote without a value"
			          : strcmp(e->value, ".") == 0 || is_remote_name(res, e->value)
			              ? NULL
			              : vr_gitconfig_url_problem(e->value);
		if (problem)
			return refuse(v, key, e->line, "%s", problem);
	}
	return TRUE;
}

/* Every key set or removed, each once, in the order they first appear. */
static GPtrArray *all_keys(const VrGitConfig *a, const VrGitConfig *b)
{
	GPtrArray *keys = g_ptr_array_new_with_free_func(g_free);
	g_autoptr(GHashTable) seen = g_hash_table_new(g_str_hash, g_str_equal);
	const VrGitConfig *both[] = {b, a};
	for (guint n = 0; n < 2; n++) {
		for (guint k = 0; both[n] && k < both[n]->entries->len; k++) {
			const char *key = g_array_index(both[n]->entries, VrGitConfigEntry, k).key;
			if (g_hash_table_add(seen, (gpointer)key))
				g_ptr_array_add(keys, g_strdup(key));
		}
	}
	return keys;
}

static gboolean check_changes(const VrGitConfig *cur, const VrGitConfig *res, const char *relpath,
                              VrGitGateVerdict *v)
{
	g_autoptr(GPtrArray) keys = all_keys(cur, res);
	for (guint k = 0; k < keys->len; k++) {
		const char *key = keys->pdata[k];
		VrGitKeyKind kind = kind_at(key, relpath);
		g_autoptr(GPtrArray) before = entries_of(cur, key);
		g_autoptr(GPtrArray) after = entries_of(res, key);
		if (lists_same(before, after, kind))
			continue;
		g_ptr_array_add(v->changed, g_strdup(key));
		guint line = after->len ? ((VrGitConfigEntry *)after->pdata[0])->line : 0;
		if (kind == VR_GITKEY_REFUSED)
			return refuse(v, key, line, "%s is not on the allow-list of inert keys",
			              after->len ? "setting it" : "removing it");
		if (!check_new_values(key, kind, before, after, res, relpath, v))
			return FALSE;
	}
	return TRUE;
}

/* Refused keys that stay must stay in the same order: an include moved
 * past the keys it overrides would change what wins. */
static gboolean refused_order_kept(const VrGitConfig *cur, const VrGitConfig *res,
                                   const char *relpath, VrGitGateVerdict *v)
{
	g_autoptr(GPtrArray) a = g_ptr_array_new(), b = g_ptr_array_new();
	const VrGitConfig *both[] = {cur, res};
	GPtrArray *lists[] = {a, b};
	for (guint n = 0; n < 2; n++)
		for (guint k = 0; both[n] && k < both[n]->entries->len; k++) {
			VrGitConfigEntry *e = &g_array_index(both[n]->entries, VrGitConfigEntry, k);
			if (kind_at(e->key, relpath) == VR_GITKEY_REFUSED)
				g_ptr_array_add(lists[n], e);
		}
	for (guint k = 0; k < MAX(a->len, b->len); k++) {
		VrGitConfigEntry *x = k < a->len ? a->pdata[k] : NULL, *y = k < b->len ? b->pdata[k] : NULL;
		if (x && y && strcmp(x->key, y->key) == 0 && entry_same(x, y, VR_GITKEY_REFUSED))
			continue;
		const VrGitConfigEntry *e = y ? y : x;
		return refuse(v, e->key, y ? y->line : 0,
		              "the keys that are not on the allow-list would change order");
	}
	return TRUE;
}

static VrGitConfig *parse_current(const char *cur, gsize cur_len, VrGitGateVerdict *v)
{
	VrGitConfig *c = vr_gitconfig_parse(cur ? cur : "", cur ? cur_len : 0);
	if (c->status == VR_GITCONFIG_UNSUPPORTED ||
	    (c->status == VR_GITCONFIG_INVALID && c->entries->len)) {
		refuse(v, NULL, c->error_line,
		       "the current file is not git config vault-run can compare against (line %u): it "
		       "stays as it is", c->error_line);
		vr_gitconfig_free(c);
		return NULL;
	}
	if (c->status == VR_GITCONFIG_INVALID)
		g_array_set_size(c->entries, 0);
	return c;
}

static VrGitConfig *parse_result(const GByteArray *out, VrGitGateVerdict *v)
{
	VrGitConfig *c = vr_gitconfig_parse((const char *)out->data, out->len);
	if (c->status == VR_GITCONFIG_UNSUPPORTED) {
		refuse(v, NULL, 0, "the new file holds a NUL byte");
	} else if (c->status == VR_GITCONFIG_INVALID && c->entries->len) {
		/* git would read those keys, then stop: not a state to vouch for. */
		refuse(v, g_array_index(c->entries, VrGitConfigEntry, c->entries->len - 1).key,
		       c->error_line, "git would stop at line %u of the new file after reading keys",
		       c->error_line);
	} else {
		/* Not git config at all: git stops before reading any key. */
		v->inert = c->status == VR_GITCONFIG_INVALID;
		return c;
	}
	vr_gitconfig_free(c);
	return NULL;
}

gboolean vr_gitgate_decide(const char *relpath, const char *cur, gsize cur_len, const char *masked,
                           const char *new, gsize new_len, GByteArray **ret_out, VrGitGateVerdict *v)
{
	vr_gitgate_verdict_clear(v);
	v->changed = g_ptr_array_new_with_free_func(g_free);
	*ret_out = NULL;

	Masking m = {0};
	if (masked && cur)
		m.min_run = shortest_masked_run(cur, masked, cur_len);
	if (m.min_run) {
		m.real = split_lines(cur, cur_len);
		m.shown = split_lines(masked, cur_len);
	}
	g_autoptr(GByteArray) out = g_byte_array_sized_new((guint)new_len);
	gboolean ok;
	if (m.min_run)
		ok = restore(&m, new, new_len, out, v);
	else
		ok = (g_byte_array_append(out, (const guint8 *)new, (guint)new_len), TRUE);

	g_autoptr(VrGitConfig) c = ok ? parse_current(cur, cur_len, v) : NULL;
	g_autoptr(VrGitConfig) r = c ? parse_result(out, v) : NULL;
	ok = r != NULL;
	/* Git config stays git config: what git reads keys from is not
	 * replaced by what it would stop at (that would only break it). */
	if (ok && v->inert && c->entries->len)
		ok = refuse(v, NULL, r->error_line,
		            "the new file is not git config (git would stop at line %u) and the current "
		            "one is", r->error_line);
	if (ok && m.min_run) {
		if (v->inert && v->restored)
			ok = refuse(v, NULL, 0, "a file with masked secrets must stay git config");
		ok = ok && restored_lines_keep_meaning(&m, out, c, r, v) && no_mask_written(&m, out, v);
	}
	ok = ok && check_changes(c, r, relpath, v) && refused_order_kept(c, r, relpath, v);
	masking_clear(&m);
	if (ok)
		*ret_out = g_steal_pointer(&out);
	return ok;
}
