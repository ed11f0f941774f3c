/* The run's views besides the project's: see run/views.h. */
#include "run/views.h"

#include <stdio.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/cleanup.h"
#include "common/log.h"
#include "sandbox/sandbox.h"

static gboolean path_is_under(const char *path, const char *dir)
{
	size_t n = strlen(dir);
	if (strcmp(dir, "/") == 0)
		return TRUE;
	return strncmp(path, dir, n) == 0 && (path[n] == '\0' || path[n] == '/');
}

static gboolean refuse(GError **error, const char *fmt, ...) G_GNUC_PRINTF(2, 3);
static const char *key_below(const VrViews *v, const char *real);

/* SRC resolved as realpath(3) would, one component at a time, into ret
 * (PATH_MAX). A symlink that lies inside the project is the agent's (it
 * can make one there between runs, or during another run): following one
 * out of the project would bind a host directory the user never named
 * (DESIGN.md invariant 10), so that is -EXDEV. Links inside the project
 * that stay inside it are followed: the project's view serves the result
 * under its own name. -errno otherwise (-ENOENT: a part is missing). */
static int resolve_source(const char *project, const char *src, char *ret)
{
	g_autofree char *cwd = g_path_is_absolute(src) ? NULL : g_get_current_dir();
	g_autofree char *abs = cwd ? g_build_filename(cwd, src, NULL) : g_strdup(src);
	g_autoptr(GPtrArray) todo = g_ptr_array_new_with_free_func(g_free); /* a stack: next is last */
	g_auto(GStrv) parts = g_strsplit(abs, "/", -1);
	for (gint k = (gint)g_strv_length(parts) - 1; k >= 0; k--)
		g_ptr_array_add(todo, g_strdup(parts[k]));
	GString *real = g_string_new("");
	gboolean crossed = FALSE; /* a link inside the project was followed */
	int hops = 0, r = 0;
	while (todo->len && r == 0) {
		g_autofree char *c = g_ptr_array_steal_index(todo, todo->len - 1);
		if (!*c || strcmp(c, ".") == 0)
			continue;
		if (strcmp(c, "..") == 0) {
			char *slash = strrchr(real->str, '/');
			g_string_truncate(real, slash ? (gsize)(slash - real->str) : 0);
			continue;
		}
		gsize before = real->len;
		g_string_append_printf(real, "/%s", c);
		struct stat st;
		char target[PATH_MAX];
		if (real->len >= PATH_MAX)
			r = -ENAMETOOLONG;
		else if (lstat(real->str, &st) < 0)
			r = -errno;
		else if (S_ISLNK(st.st_mode)) {
			ssize_t n = readlink(real->str, target, sizeof target - 1);
			if (n < 0 || ++hops > 40) {
				r = n < 0 ? -errno : -ELOOP;
				continue;
			}
			target[n] = '\0';
			crossed = crossed || path_is_under(real->str, project);
			g_string_truncate(real, target[0] == '/' ? 0 : before);
			g_auto(GStrv) more = g_strsplit(target, "/", -1);
			for (gint k = (gint)g_strv_length(more) - 1; k >= 0; k--)
				g_ptr_array_add(todo, g_strdup(more[k]));
		}
	}
	if (r == 0 && !real->len)
		g_string_assign(real, "/");
	if (r == 0 && crossed && !path_is_under(real->str, project))
		r = -EXDEV;
	if (r == 0)
		memcpy(ret, real->str, real->len + 1);
	g_string_free(real, TRUE);
	return r;
}

gboolean vr_views_resolve_source(const VrViews *v, const char *src, int flags, char **ret_real,
                                 GError **error)
{
	char real[PATH_MAX];
	*ret_real = NULL;
	int r = resolve_source(v->project, src, real);
	if (r == -EXDEV)
		return refuse(error, "bind source %s: a symlink inside the project %s leads out of it (the agent "
		              "can make those); name the directory or file you mean by its real path", src,
		              v->project);
	if (r == -ENOENT && (flags & VR_BIND_TRY))
		return FALSE;
	if (r < 0)
		return refuse(error, "bind source %s: %s", src, g_strerror(-r));
	*ret_real = g_strdup(real);
	return TRUE;
}

static void view_free(gpointer p)
{
	VrExtraView *e = p;
	g_free(e->root);
	g_free(e->only);
	g_clear_pointer(&e->readonly, g_ptr_array_unref);
	g_free(e->source);
	g_clear_pointer(&e->policy, vr_policy_free);
	vr_clear_fd(&e->root_fd);
	vr_clear_fd(&e->ready_fd);
	vr_clear_fd(&e->tree_fd);
	g_free(e->label);
	g_free(e);
}

VrViews *vr_views_new(const char *project)
{
	VrViews *v = g_new0(VrViews, 1);
	v->project = g_strdup(project);
	v->views = g_ptr_array_new_with_free_func(view_free);
	v->protected = g_ptr_array_new_with_free_func(g_free);
	v->keys = g_ptr_array_new_with_free_func(g_free);
	return v;
}

void vr_views_free(VrViews *v)
{
	if (!v)
		return;
	g_free(v->project);
	g_ptr_array_unref(v->views);
	g_ptr_array_unref(v->protected);
	g_ptr_array_unref(v->keys);
	g_free(v);
}

static gboolean refuse(GError **error, const char *fmt, ...) G_GNUC_PRINTF(2, 3);
static gboolean refuse(GError **error, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	g_autofree char *msg = g_strdup_vprintf(fmt, ap);
	va_end(ap);
	g_set_error_literal(error, VR_PLAN_ERROR, VR_PLAN_ERROR_BAD_VALUE, msg);
	return FALSE;
}

/* A new view of the real directory ROOT (its O_PATH opened now, before any
 * view is mounted, so a daemon never reaches its files through another
 * view: a profile's directory inside a --project ~). */
static VrExtraView *view_add(VrViews *v, const char *root, const char *only, GError **error)
{
	int fd = open(root, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0) {
		refuse(error, "%s: %s", root, g_strerror(errno));
		return NULL;
	}
	VrExtraView *e = g_new0(VrExtraView, 1);
	e->root = g_strdup(root);
	e->only = g_strdup(only);
	e->readonly = g_ptr_array_new_with_free_func(g_free);
	e->root_fd = fd;
	e->pid = -1;
	e->ready_fd = -1;
	e->tree_fd = -1;
	e->label = only ? g_build_filename(root, only, NULL) : g_strdup(root);
	g_ptr_array_add(v->views, e);
	return e;
}

static VrExtraView *find_root(VrViews *v, const char *root, const char *only)
{
	for (guint i = 0; i < v->views->len; i++) {
		VrExtraView *e = v->views->pdata[i];
		if (strcmp(e->root, root) == 0 && g_strcmp0(e->only, only) == 0)
			return e;
	}
	return NULL;
}

gboolean vr_views_add_guarded(VrViews *v, const VrGuardedDir *g, GError **error)
{
	char real[PATH_MAX];
	struct stat st;
	if (!realpath(g->dir, real) || stat(real, &st) < 0 || !S_ISDIR(st.st_mode))
		return TRUE; /* not there (yet): nothing to serve */
	if (path_is_under(v->project, real))
		return refuse(error, "%s: %s holds the project %s, whose view it would bypass; run the project "
		              "elsewhere or with --profile none", g->source ? g->source : "a guarded directory", real,
		              v->project);
	VrExtraView *e = find_root(v, real, NULL);
	if (!e && !(e = view_add(v, real, NULL, error)))
		return FALSE;
	e->guarded = TRUE;
	if (!e->source)
		e->source = g_strdup(g->source ? g->source : "guarded directory");
	for (guint i = 0; g->readonly && i < g->readonly->len; i++)
		g_ptr_array_add(e->readonly, g_strdup(g_ptr_array_index(g->readonly, i)));
	return TRUE;
}

void vr_views_protect(VrViews *v, const char *path, const char *what, gboolean only_containing)
{
	/* Resolved as far as it exists: the state directory may not yet. */
	g_autofree char *abs = g_canonicalize_filename(path, NULL);
	g_autofree char *rest = NULL;
	char real[PATH_MAX];
	while (!realpath(abs, real) && strcmp(abs, "/") != 0) {
		g_autofree char *base = g_path_get_basename(abs);
		char *joined = rest ? g_build_filename(base, rest, NULL) : g_strdup(base);
		g_free(rest);
		rest = joined;
		char *parent = g_path_get_dirname(abs);
		g_free(abs);
		abs = parent;
	}
	g_autofree char *full = rest ? g_build_filename(real, rest, NULL) : g_strdup(real);
	g_ptr_array_add(v->protected, g_strdup_printf("%c\n%s\n%s", only_containing ? 'C' : 'O', full, what));
}

/* REAL (a writable bind's source) and one of vault-run's own directories
 * overlap: the agent would rewrite the run's log or rules. */
static gboolean check_protected(VrViews *v, const char *src, const char *real, GError **error)
{
	for (guint i = 0; i < v->protected->len; i++) {
		g_auto(GStrv) pw = g_strsplit(v->protected->pdata[i], "\n", 3);
		gboolean holds = path_is_under(pw[1], real);
		if (holds || (pw[0][0] == 'O' && path_is_under(real, pw[1])))
			return refuse(error, "--bind %s: it %s %s %s, which the agent must not write; bind another "
			              "directory", src, holds ? "holds" : "is inside", pw[2], pw[1]);
	}
	return TRUE;
}

gboolean vr_views_add_bind(VrViews *v, const char *src, int flags, GError **error)
{
	g_autofree char *real = NULL;
	struct stat st;
	g_autoptr(GError) local = NULL;
	if (!vr_views_resolve_source(v, src, flags, &real, &local)) {
		if (!local)
			return TRUE; /* a missing --bind-try source */
		g_propagate_error(error, g_steal_pointer(&local));
		return FALSE;
	}
	if (stat(real, &st) < 0) {
		if (flags & VR_BIND_TRY)
			return TRUE;
		return refuse(error, "bind source %s: %s", src, g_strerror(errno));
	}
	if (S_ISDIR(st.st_mode) && path_is_under(v->project, real))
		return refuse(error, "--bind %s: it %s the project %s, whose view it would bypass; bind a directory "
		              "beside the project, or make the project %s itself", src,
		              strcmp(real, v->project) == 0 ? "is" : "contains", v->project, real);
	if (!check_protected(v, src, real, error))
		return FALSE;
	if (!S_ISDIR(st.st_mode))
		return TRUE; /* a file is routed on its own (vr_views_route) */
	if (path_is_under(real, v->project))
		return TRUE; /* inside the project: its view serves it */
	if (find_root(v, real, NULL))
		return TRUE;
	for (guint i = 0; i < v->views->len; i++) {
		const VrExtraView *e = v->views->pdata[i];
		const char *served = vr_views_label(e);
		const char *key = e->guarded && path_is_under(served, real) ? key_below(v, served) : NULL;
		if (key)
			return refuse(error, "--bind %s: it contains %s, which the run serves through a view of its own "
			              "(%s) that masks the key file %s; bind %s itself, or a narrower directory beside it",
			              src, served, e->source, key, served);
		if (e->guarded && path_is_under(served, real))
			return refuse(error, "--bind %s: it contains %s, which the run serves through a view of its own "
			              "(%s); bind a narrower directory", src, served, e->source);
	}
	VrExtraView *e = view_add(v, real, NULL, error);
	if (e)
		e->source = g_strdup("--bind");
	return e != NULL;
}

void vr_views_set_key_files(VrViews *v, const GPtrArray *paths)
{
	for (guint i = 0; paths && i < paths->len; i++)
		g_ptr_array_add(v->keys, g_strdup(paths->pdata[i]));
}

/* The first key file at or below REAL, or NULL. */
static const char *key_below(const VrViews *v, const char *real)
{
	for (guint i = 0; i < v->keys->len; i++)
		if (path_is_under(v->keys->pdata[i], real))
			return v->keys->pdata[i];
	return NULL;
}

gboolean vr_views_ro_keyed(const VrViews *v, const char *real)
{
	return key_below(v, real) != NULL;
}

gboolean vr_views_add_ro_bind(VrViews *v, const char *src, int flags, GError **error)
{
	g_autofree char *real = NULL;
	g_autoptr(GError) local = NULL;
	struct stat st;
	if (!vr_views_resolve_source(v, src, flags, &real, &local)) {
		if (!local)
			return TRUE; /* a missing --ro-bind-try source */
		g_propagate_error(error, g_steal_pointer(&local));
		return FALSE;
	}
	const char *key = key_below(v, real);
	if (!key || stat(real, &st) < 0 || !S_ISDIR(st.st_mode))
		return TRUE; /* no key file there; a file is routed on its own (vr_views_route) */
	if (find_root(v, real, NULL))
		return TRUE;
	g_autofree char *key_dir = g_path_get_dirname(key);
	if (path_is_under(v->project, real))
		return refuse(error, "--ro-bind %s: it holds the key file %s (served masked) and the project %s, "
		              "whose view it would bypass; bind %s instead", src, key, v->project, key_dir);
	for (guint i = 0; i < v->views->len; i++) {
		const VrExtraView *e = v->views->pdata[i];
		const char *served = vr_views_label(e);
		if (e->guarded && path_is_under(served, real) && strcmp(served, real) != 0)
			return refuse(error, "--ro-bind %s: it holds the key file %s, which the run serves masked only "
			              "through the view of %s (%s); bind %s itself, or a directory beside it", src, key,
			              served, e->source, served);
	}
	VrExtraView *e = view_add(v, real, NULL, error);
	if (e)
		e->source = g_strdup("--ro-bind");
	return e != NULL;
}

static gint by_root_length(gconstpointer a, gconstpointer b)
{
	const VrExtraView *x = *(VrExtraView *const *)a, *y = *(VrExtraView *const *)b;
	size_t lx = strlen(x->root), ly = strlen(y->root);
	return lx < ly ? -1 : lx > ly;
}

void vr_views_prune(VrViews *v)
{
	g_autoptr(GPtrArray) sorted = g_ptr_array_new(); /* borrows (a copy would free them) */
	for (guint i = 0; i < v->views->len; i++)
		g_ptr_array_add(sorted, v->views->pdata[i]);
	g_ptr_array_sort(sorted, by_root_length);
	for (guint i = 0; i < sorted->len; i++) {
		VrExtraView *inner = sorted->pdata[i];
		if (inner->guarded || inner->only)
			continue;
		for (guint j = 0; j < i && !inner->pruned; j++) {
			const VrExtraView *outer = sorted->pdata[j];
			if (!outer->pruned && !outer->only && path_is_under(inner->root, outer->root))
				inner->pruned = TRUE;
		}
	}
	for (guint i = v->views->len; i-- > 0;)
		if (((VrExtraView *)v->views->pdata[i])->pruned)
			g_ptr_array_remove_index(v->views, i);
	for (guint i = 0; i < v->views->len; i++)
		((VrExtraView *)v->views->pdata[i])->index = (int)i;
}

/* The innermost directory view holding REAL (most specific rules). */
static VrExtraView *view_holding(VrViews *v, const char *real)
{
	VrExtraView *best = NULL;
	for (guint i = 0; i < v->views->len; i++) {
		VrExtraView *e = v->views->pdata[i];
		if (!e->only && path_is_under(real, e->root) && (!best || strlen(e->root) > strlen(best->root)))
			best = e;
	}
	return best;
}

gboolean vr_views_check_key_files(VrViews *v, GError **error)
{
	for (guint i = 0; i < v->keys->len; i++) {
		const char *key = v->keys->pdata[i];
		if (path_is_under(key, v->project) && !view_holding(v, key))
			return refuse(error, "the key file %s is inside the project %s, whose view does not mask key "
			              "files; keep it out of the project, or make its directory a path of the profile "
			              "(its view masks it)", key, v->project);
	}
	return TRUE;
}

char *vr_views_stage(const VrExtraView *e)
{
	return g_strdup_printf("/views/%d", e->index);
}

const char *vr_views_label(const VrExtraView *e)
{
	return e->label;
}

gboolean vr_views_route(VrViews *v, const char *src, int flags, char **ret_src, int *ret_flags, GError **error)
{
	*ret_src = NULL;
	*ret_flags = flags;
	g_autofree char *real = NULL;
	struct stat st;
	if (!vr_views_resolve_source(v, src, flags, &real, error))
		return FALSE;
	if (stat(real, &st) < 0) {
		if (flags & VR_BIND_TRY)
			return FALSE;
		return refuse(error, "bind source %s: %s", src, g_strerror(errno));
	}
	if (!S_ISDIR(st.st_mode) && !S_ISREG(st.st_mode)) {
		*ret_src = g_strdup(real);
		*ret_flags = (flags & ~VR_BIND_DEV) | VR_BIND_RO | VR_BIND_NOFOLLOW;
		return TRUE;
	}
	gboolean dir = S_ISDIR(st.st_mode);
	VrExtraView *e = view_holding(v, real);
	if (!e && path_is_under(real, v->project)) {
		*ret_src = g_strdup(real);
		*ret_flags = flags | VR_BIND_NOFOLLOW | (dir ? VR_BIND_DIR : 0);
		return TRUE;
	}
	if (!e && dir)
		return refuse(error, "--bind %s: no view serves it (a bug: vr_views_add_bind was not called)", src);
	if (!e) {
		g_autofree char *parent = g_path_get_dirname(real);
		g_autofree char *name = g_path_get_basename(real);
		if (!(e = find_root(v, parent, name))) {
			if (!(e = view_add(v, parent, name, error)))
				return FALSE;
			e->source = g_strdup("--bind");
			e->index = (int)v->views->len - 1;
		}
	}
	g_autofree char *stage = vr_views_stage(e);
	const char *rest = e->only ? NULL : real + strlen(e->root);
	*ret_src = e->only ? g_build_filename(stage, e->only, NULL) : g_strconcat(stage, rest, NULL);
	*ret_flags = (flags & ~VR_BIND_TRY) | VR_BIND_STAGED | (dir ? VR_BIND_DIR : 0);
	return TRUE;
}

gboolean vr_views_route_own_file(VrViews *v, const char *path, char **ret_src, int *ret_flags, GError **error)
{
	g_autofree char *parent = g_path_get_dirname(path);
	g_autofree char *name = g_path_get_basename(path);
	VrExtraView *e = view_add(v, parent, name, error);
	if (!e)
		return FALSE;
	e->source = g_strdup("per-run copy");
	e->guarded = TRUE;
	e->index = (int)v->views->len - 1;
	g_autofree char *stage = vr_views_stage(e);
	*ret_src = g_build_filename(stage, name, NULL);
	*ret_flags = VR_BIND_STAGED;
	return TRUE;
}

/* NAME as a pattern that matches only itself, anchored at the root. */
static char *literal_pattern(const char *name)
{
	GString *s = g_string_new("/");
	for (const char *p = name; *p; p++) {
		if (strchr("*?[\\ ", *p))
			g_string_append_c(s, '\\');
		g_string_append_c(s, *p);
	}
	return g_string_free(s, FALSE);
}

static gboolean build_policy(VrExtraView *e, const VrPolicy *base, GError **error)
{
	g_autoptr(VrPolicy) p = vr_policy_new();
	/* Only the one name: the sandbox binds nothing else of it, and the
	 * daemon shows nothing else either. */
	if (e->only && !vr_policy_add(p, VR_RULE_HIDE, "*", "file bind", 1, FALSE, error))
		return FALSE;
	for (guint i = 0; i < vr_policy_n_rules(base); i++) {
		const VrRule *r = vr_policy_rule(base, i);
		if (!r->project && !vr_policy_add(p, r->kind, r->pattern, r->source, r->line, FALSE, error))
			return FALSE;
	}
	/* The file the user named, last: like a bound directory, whose own
	 * name no rule sees, it is the user's choice (--ro-bind shows a
	 * hidden name too); the content scan still applies. */
	g_autofree char *lit = e->only ? literal_pattern(e->only) : NULL;
	if (lit && !vr_policy_add(p, VR_RULE_SHOW, lit, "file bind", 2, FALSE, error))
		return FALSE;
	/* The view's own read-only paths combine as a project's rules do:
	 * by strictness, so no `show` of the user's can lift them. */
	for (guint i = 0; i < e->readonly->len; i++)
		if (!vr_policy_add(p, VR_RULE_READONLY, e->readonly->pdata[i], e->source, (int)i + 1, TRUE, error))
			return FALSE;
	e->policy = g_steal_pointer(&p);
	return TRUE;
}

gboolean vr_views_build_policies(VrViews *v, const VrPolicy *policy, GError **error)
{
	for (guint i = 0; i < v->views->len; i++) {
		VrExtraView *e = v->views->pdata[i];
		g_autoptr(GError) local = NULL;
		if (!build_policy(e, policy, &local))
			return refuse(error, "the view of %s: %s", vr_views_label(e), local->message);
	}
	return TRUE;
}

int vr_views_clone_tree(pid_t daemon, const char *what, int *ret_fd)
{
	*ret_fd = -1;
	char ns[64];
	snprintf(ns, sizeof ns, "/proc/%d/ns/mnt", (int)daemon);
	vr_cleanup_fd int theirs = open(ns, O_RDONLY | O_CLOEXEC);
	vr_cleanup_fd int ours = open("/proc/self/ns/mnt", O_RDONLY | O_CLOEXEC);
	vr_cleanup_fd int cwd = open(".", O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (theirs < 0 || ours < 0 || cwd < 0)
		return vr_log_errno(errno, "cannot reach the mount namespace of %s", what);
	if (setns(theirs, CLONE_NEWNS) < 0)
		return vr_log_errno(errno, "cannot enter the mount namespace of %s", what);
	vr_cleanup_fd int fd = open_tree(AT_FDCWD, VR_VIEWS_MOUNTPOINT, OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC);
	int e = errno;
	/* Back before anything else: every later path of ours means our
	 * namespace. Failing that, nothing of the run can go on. */
	if (setns(ours, CLONE_NEWNS) < 0 || fchdir(cwd) < 0)
		return vr_log_errno(errno, "cannot come back from the mount namespace of %s", what);
	if (fd < 0)
		return vr_log_errno(e, "cannot take the mount of %s", what);
	*ret_fd = vr_steal_fd(&fd);
	return 0;
}

int vr_views_enter_own_mount_ns(void)
{
	if (unshare(CLONE_NEWNS) < 0)
		return -errno;
	if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0)
		return -errno;
	return 0;
}

gboolean vr_views_check_home(VrPolicy *policy, const char *project, const char *home, gboolean allow,
                             GError **error)
{
	if (!home || strcmp(home, "/") == 0 || !path_is_under(home, project))
		return TRUE;
	if (!allow)
		return refuse(error, "--project %s %s your home directory %s, whose shell start-up files and "
		              "autostart the host runs later; work in a project directory, or pass "
		              "--allow-home-project (its top-level dot entries and bin/ then stay read-only)",
		              project, strcmp(home, project) == 0 ? "is" : "holds", home);
	g_autofree char *rel = g_strdup(home + (strcmp(project, "/") == 0 ? 0 : strlen(project)));
	static const char *const tops[] = {"/.*", "/bin"};
	for (size_t i = 0; i < G_N_ELEMENTS(tops); i++) {
		g_autofree char *pattern = g_strconcat(rel, tops[i], NULL);
		if (!vr_policy_add(policy, VR_RULE_READONLY, pattern, "--allow-home-project", (int)i + 1, TRUE, error))
			return FALSE;
	}
	return TRUE;
}
