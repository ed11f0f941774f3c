/* policy/gitconfig-project.c — what the project's git configs name, read
 * once at start (the daemon and `policy explain` both load the policy this
 * way): files they include are git config too, and the directories they
 * name as core.hooksPath hold what git runs.
 *
 * Read: PROJECT/.git/config and config.worktree, every config under
 * .git/modules (submodules, nested ones too), .git/worktrees/NAME/
 * config.worktree, and what those include (git's depth limit, 10). A `.git`
 * that is a file is not followed here: its git directory is outside the
 * project, and vault-run opens no host path a project file names.
 *
 * Paths are resolved on the host one component at a time from an fd of the
 * project (O_PATH|O_NOFOLLOW): a symlink met on the way becomes read-only
 * itself and is followed as git would follow it, as long as it stays in the
 * project; every ancestor must stay a directory (a symlink put there later
 * would send git elsewhere). A path that does not exist yet is protected
 * under the name git would use. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/cleanup.h"
#include "common/resolve.h"
#include "policy/gitconfig.h"
#include "policy/policy-private.h"

#define MAX_FILES 2000        /* config files read at most (a project with many submodules) */
#define MAX_INCLUDE_DEPTH 10  /* git's own limit */
#define MAX_LINKS 40
#define MAX_CONFIG_SIZE (1u << 20)

typedef struct {
	VrPolicy *policy;
	int rootfd;        /* O_PATH of the project */
	char *root;        /* its real path, for absolute paths in configs */
	const char *home;  /* for ~/ */
	GHashTable *read;  /* relpaths of configs read */
	GHashTable *rules; /* patterns of the read-only rules added */
	guint budget;
} Scan;

/* "a/./b/../c" → "a/c" relative to the project; NULL when it leaves it. */
static char *normalize(const char *path)
{
	g_auto(GStrv) parts = g_strsplit(path, "/", -1);
	GPtrArray *out = g_ptr_array_new();
	gboolean outside = FALSE;
	for (char **p = parts; *p && !outside; p++) {
		if (!**p || strcmp(*p, ".") == 0)
			continue;
		if (strcmp(*p, "..") == 0) {
			if (!out->len)
				outside = TRUE;
			else
				g_ptr_array_remove_index(out, out->len - 1);
			continue;
		}
		g_ptr_array_add(out, *p);
	}
	g_ptr_array_add(out, NULL);
	char *rel = outside ? NULL : g_strjoinv("/", (char **)out->pdata);
	g_ptr_array_unref(out);
	return rel;
}

static char *join_rel(const char *dir, const char *name)
{
	g_autofree char *both = *dir ? g_strconcat(dir, "/", name, NULL) : g_strdup(name);
	return normalize(both);
}

/* A path as a config names it: absolute, ~/, or relative to base (a
 * relpath). NULL when it is outside the project. */
static char *project_path(const Scan *s, const char *base, const char *value)
{
	if (!value || !*value)
		return NULL;
	g_autofree char *abs = NULL;
	if (value[0] == '~' && value[1] == '/' && s->home)
		abs = g_build_filename(s->home, value + 2, NULL);
	else if (value[0] == '/')
		abs = g_strdup(value);
	else if (value[0] == '~')
		return NULL; /* ~user/: some other home */
	if (!abs)
		return join_rel(base, value);
	gsize n = strlen(s->root);
	if (strncmp(abs, s->root, n) != 0 || (abs[n] != '/' && abs[n] != '\0'))
		return NULL;
	return normalize(abs + n);
}

/* Resolves rel on the host as git would (following symlinks), calling
 * links with each symlink met (relpath). Returns the path reached (a part
 * that does not exist is kept as named), NULL when a symlink leads out of
 * the project or they loop. */
static char *resolve(const Scan *s, const char *rel, GPtrArray *links)
{
	g_autoptr(GPtrArray) todo = g_ptr_array_new_with_free_func(g_free);
	g_auto(GStrv) first = g_strsplit(rel, "/", -1);
	for (gint k = (gint)g_strv_length(first) - 1; k >= 0; k--)
		g_ptr_array_add(todo, g_strdup(first[k])); /* a stack: next is last */
	g_autoptr(GPtrArray) done = g_ptr_array_new_with_free_func(g_free);
	int hops = 0;
	gboolean missing = FALSE;
	while (todo->len) {
		char *c = g_ptr_array_steal_index(todo, todo->len - 1);
		if (!*c || strcmp(c, ".") == 0) {
			g_free(c);
			continue;
		}
		if (strcmp(c, "..") == 0) {
			g_free(c);
			if (!done->len)
				return NULL;
			g_ptr_array_remove_index(done, done->len - 1);
			continue;
		}
		g_ptr_array_add(done, c);
		if (missing)
			continue;
		g_ptr_array_add(done, NULL);
		g_autofree char *here = g_strjoinv("/", (char **)done->pdata);
		g_ptr_array_remove_index(done, done->len - 1);
		vr_cleanup_fd int dfd = -1;
		const char *name;
		if (vr_resolve_parent(s->rootfd, here, &dfd, &name) < 0) {
			missing = TRUE;
			continue;
		}
		struct stat st;
		char target[PATH_MAX];
		ssize_t n = -1;
		if (fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
			missing = TRUE;
		else if (S_ISLNK(st.st_mode))
			n = readlinkat(dfd, name, target, sizeof target - 1);
		vr_clear_fd(&dfd);
		if (n < 0)
			continue;
		if (++hops > MAX_LINKS)
			return NULL;
		target[n] = '\0';
		g_ptr_array_add(links, g_strdup(here));
		g_ptr_array_remove_index(done, done->len - 1); /* the link is replaced by its target */
		if (target[0] == '/') {
			gsize rl = strlen(s->root);
			if (strncmp(target, s->root, rl) != 0 || (target[rl] != '/' && target[rl] != '\0'))
				return NULL;
			g_ptr_array_set_size(done, 0);
			memmove(target, target + rl, strlen(target + rl) + 1);
		}
		g_auto(GStrv) more = g_strsplit(target, "/", -1);
		for (gint k = (gint)g_strv_length(more) - 1; k >= 0; k--)
			g_ptr_array_add(todo, g_strdup(more[k]));
	}
	g_ptr_array_add(done, NULL);
	return g_strjoinv("/", (char **)done->pdata);
}

/* Every ancestor of rel must stay a directory. */
static void keep_ancestors(Scan *s, const char *rel, const char *source, int line)
{
	g_autofree char *p = g_strdup(rel);
	for (char *slash = strrchr(p, '/'); slash; slash = strrchr(p, '/')) {
		*slash = '\0';
		vr_policy_add_nondir_readonly(s->policy, p, source, line,
		                              "leads to a path a git config names: it must stay a directory");
	}
}

/* An anchored pattern for exactly rel (and what is below it). */
static char *exact_pattern(const char *rel)
{
	GString *p = g_string_new("/");
	for (const char *c = rel; *c; c++) {
		if (strchr("\\*?[", *c) || (*c == ' ' && !c[1]))
			g_string_append_c(p, '\\');
		g_string_append_c(p, *c);
	}
	return g_string_free(p, FALSE);
}

static void readonly_path(Scan *s, const char *rel, const char *source, int line, const char *why)
{
	char *pattern = exact_pattern(rel);
	if (!g_hash_table_add(s->rules, pattern))
		return;
	VrRule *r = vr_policy_add_rule(s->policy, VR_RULE_READONLY, pattern, source, line, TRUE, NULL);
	if (r)
		r->why = g_strdup(why);
}

/* git's hook names: a hooksPath that is the project's root protects these. */
static const char *const hook_names[] = {
	"applypatch-msg", "pre-applypatch", "post-applypatch", "pre-commit", "pre-merge-commit",
	"prepare-commit-msg", "commit-msg", "post-commit", "pre-rebase", "post-checkout",
	"post-merge", "pre-push", "pre-receive", "update", "proc-receive", "post-receive",
	"post-update", "reference-transaction", "push-to-checkout", "pre-auto-gc", "post-rewrite",
	"sendemail-validate", "fsmonitor-watchman", "p4-changelist", "p4-prepare-changelist",
	"p4-post-changelist", "p4-pre-submit", "post-index-change", NULL,
};

static void protect_hooks_dir(Scan *s, const char *rel, const char *source, int line)
{
	static const char why[] = "core.hooksPath of a project git config: git runs what is there";
	g_autoptr(GPtrArray) links = g_ptr_array_new_with_free_func(g_free);
	g_autofree char *real = resolve(s, rel, links);
	for (guint k = 0; k < links->len; k++) {
		readonly_path(s, links->pdata[k], source, line, why);
		keep_ancestors(s, links->pdata[k], source, line);
	}
	const char *targets[] = {rel, real};
	for (guint t = 0; t < G_N_ELEMENTS(targets); t++) {
		if (!targets[t])
			continue;
		if (!*targets[t]) {
			for (const char *const *h = hook_names; *h; h++)
				readonly_path(s, *h, source, line, why);
			continue;
		}
		readonly_path(s, targets[t], source, line, why);
		keep_ancestors(s, targets[t], source, line);
	}
}

static void read_config(Scan *s, const char *rel, const char *base, int depth);

static void follow_include(Scan *s, const char *rel, const char *base, int depth, const char *target,
                           int line)
{
	g_autoptr(GPtrArray) links = g_ptr_array_new_with_free_func(g_free);
	g_autofree char *real = resolve(s, target, links);
	for (guint k = 0; k < links->len; k++) {
		vr_policy_add_nondir_readonly(s->policy, links->pdata[k], rel, line,
		                              "a symlink to a file a git config includes");
		keep_ancestors(s, links->pdata[k], rel, line);
	}
	vr_policy_add_gitconfig_file(s->policy, target, rel, line);
	keep_ancestors(s, target, rel, line);
	if (real && *real) {
		vr_policy_add_gitconfig_file(s->policy, real, rel, line);
		keep_ancestors(s, real, rel, line);
		if (depth < MAX_INCLUDE_DEPTH)
			read_config(s, real, base, depth + 1);
	}
}

static gboolean is_include_key(const char *key)
{
	return strcmp(key, "include.path") == 0 ||
	       (g_str_has_prefix(key, "includeif.") && g_str_has_suffix(key, ".path"));
}

/* The file's bytes, opened without following symlinks; NULL if it is not a
 * readable regular file. */
static char *load(const Scan *s, const char *rel, gsize *ret_len)
{
	vr_cleanup_fd int dfd = -1;
	const char *name;
	if (vr_resolve_parent(s->rootfd, rel, &dfd, &name) < 0)
		return NULL;
	vr_cleanup_fd int fd = openat(dfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	if (fd < 0)
		return NULL;
	struct stat st;
	char *buf = NULL;
	if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size <= MAX_CONFIG_SIZE) {
		buf = g_malloc((gsize)st.st_size + 1);
		ssize_t n = pread(fd, buf, (size_t)st.st_size, 0);
		if (n < 0) {
			g_clear_pointer(&buf, g_free);
		} else {
			buf[n] = '\0';
			*ret_len = (gsize)n;
		}
	}
	return buf;
}

/* rel: the config file; base: what a relative core.hooksPath is relative
 * to (the work tree's relpath), or NULL when that is outside. */
static void read_config(Scan *s, const char *rel, const char *base, int depth)
{
	if (!s->budget || g_hash_table_contains(s->read, rel))
		return;
	s->budget--;
	g_hash_table_add(s->read, g_strdup(rel));
	gsize len = 0;
	g_autofree char *buf = load(s, rel, &len);
	if (!buf)
		return;
	g_autoptr(VrGitConfig) c = vr_gitconfig_parse(buf, len);
	g_autofree char *dir = g_path_get_dirname(rel);
	if (strcmp(dir, ".") == 0)
		dir[0] = '\0';
	for (guint k = 0; k < c->entries->len; k++) {
		const VrGitConfigEntry *e = &g_array_index(c->entries, VrGitConfigEntry, k);
		if (is_include_key(e->key)) {
			g_autofree char *target = project_path(s, dir, e->value);
			if (target && *target)
				follow_include(s, rel, base, depth, target, (int)e->line);
		} else if (strcmp(e->key, "core.hookspath") == 0 && e->value) {
			gboolean relative = e->value[0] != '/' && e->value[0] != '~';
			if (relative && !base)
				continue;
			g_autofree char *target = project_path(s, relative ? base : "", e->value);
			if (target)
				protect_hooks_dir(s, target, rel, (int)e->line);
		}
	}
}

/* The work tree of a submodule's git dir (its core.worktree), or NULL. */
static char *module_worktree(const Scan *s, const char *config_rel)
{
	gsize len = 0;
	g_autofree char *buf = load(s, config_rel, &len);
	if (!buf)
		return NULL;
	g_autoptr(VrGitConfig) c = vr_gitconfig_parse(buf, len);
	const char *wt = NULL;
	for (guint k = 0; k < c->entries->len; k++) {
		const VrGitConfigEntry *e = &g_array_index(c->entries, VrGitConfigEntry, k);
		if (strcmp(e->key, "core.worktree") == 0 && e->value)
			wt = e->value; /* the last one wins */
	}
	if (!wt || wt[0] == '/' || wt[0] == '~')
		return NULL;
	g_autofree char *dir = g_path_get_dirname(config_rel);
	return join_rel(dir, wt);
}

static gboolean is_dir_at(const Scan *s, const char *rel)
{
	vr_cleanup_fd int dfd = -1;
	const char *name;
	if (vr_resolve_parent(s->rootfd, rel, &dfd, &name) < 0)
		return FALSE;
	struct stat st;
	return fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISDIR(st.st_mode);
}

static GPtrArray *subdirs(const Scan *s, const char *rel)
{
	GPtrArray *names = g_ptr_array_new_with_free_func(g_free);
	vr_cleanup_fd int dfd = -1;
	const char *name;
	if (vr_resolve_parent(s->rootfd, rel, &dfd, &name) < 0)
		return names;
	vr_cleanup_fd int fd = openat(dfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	vr_cleanup_dir DIR *d = fd >= 0 ? vr_fdopendir(&fd) : NULL;
	if (!d)
		return names;
	struct dirent *de;
	while ((de = readdir(d)) && names->len < MAX_FILES) {
		if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
			continue;
		struct stat st;
		if (fstatat(dirfd(d), de->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISDIR(st.st_mode))
			g_ptr_array_add(names, g_strdup(de->d_name));
	}
	return names;
}

/* .git/modules/NAME… : a submodule's name may hold '/', so a directory
 * without a config is a step of a name; one with a config is a git dir,
 * whose nested submodules are in its own modules/. */
static void read_modules(Scan *s, const char *rel, int depth)
{
	if (depth > 8 || !s->budget)
		return;
	g_autoptr(GPtrArray) names = subdirs(s, rel);
	for (guint k = 0; k < names->len && s->budget; k++) {
		g_autofree char *sub = g_strconcat(rel, "/", names->pdata[k], NULL);
		g_autofree char *config = g_strconcat(sub, "/config", NULL);
		g_autofree char *wt = module_worktree(s, config);
		gsize len;
		g_autofree char *probe = load(s, config, &len);
		if (probe) {
			read_config(s, config, wt, 0);
			g_autofree char *cw = g_strconcat(sub, "/config.worktree", NULL);
			read_config(s, cw, wt, 0);
			g_autofree char *nested = g_strconcat(sub, "/modules", NULL);
			read_modules(s, nested, depth + 1);
		} else {
			read_modules(s, sub, depth + 1);
		}
	}
}

void vr_policy_protect_git_configs(VrPolicy *policy, const char *project_dir)
{
	char root[PATH_MAX];
	if (!realpath(project_dir, root))
		return;
	Scan s = {
		.policy = policy,
		.rootfd = open(root, O_PATH | O_DIRECTORY | O_CLOEXEC),
		.root = root,
		.home = g_get_home_dir(),
		.read = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL),
		.rules = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL),
		.budget = MAX_FILES,
	};
	if (s.rootfd >= 0 && is_dir_at(&s, ".git")) {
		read_config(&s, ".git/config", "", 0);
		read_config(&s, ".git/config.worktree", "", 0);
		g_autoptr(GPtrArray) wts = subdirs(&s, ".git/worktrees");
		for (guint k = 0; k < wts->len; k++) {
			g_autofree char *cw = g_strconcat(".git/worktrees/", wts->pdata[k], "/config.worktree", NULL);
			read_config(&s, cw, NULL, 0); /* its work tree is elsewhere */
		}
		read_modules(&s, ".git/modules", 0);
	}
	vr_clear_fd(&s.rootfd);
	g_hash_table_unref(s.read);
	g_hash_table_unref(s.rules);
}
