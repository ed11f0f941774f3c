/* Symlinks the host made, whose own names a rule covers (docs/policy.md,
 * "Symlinks"). `.aws -> dotfiles/aws` (stow makes such links) is hidden
 * itself, as a directory of that name would be (lookup.c decides a
 * non-directory as both), but a reader that names the target directly
 * (dotfiles/aws/credentials) never passes the link: the kernel follows a
 * link itself, so the daemon sees no path through it. Such a target is
 * therefore also decided under the name the link gives it (its alias,
 * ".aws/credentials"), the stricter answer winning, for everything below
 * it too. The same holds for read-only names (.vscode -> editor/, whose
 * tasks.json the host's editor would run) and names rules look into
 * (.claude -> cfg, so cfg/commands/ is .claude/commands/).
 *
 * Which links are known: every link at the project's root when the view
 * starts, each link a lookup meets, and each one the host watch sees
 * appear during the run (vr_links_host_changed). A target is keyed by
 * (dev, ino), so renaming it does not shed the alias; an alias stays for
 * the run once known (a removed link leaves its target as strict). A link
 * deeper in the tree that nothing looks up, made before the run, leaves
 * its target visible under the target's own name until something does. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <string.h>
#include <unistd.h>

#include "common/cleanup.h"
#include "common/resolve.h"
#include "fusefs/view-private.h"

typedef struct {
	dev_t dev;
	ino_t ino;
} Key;

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER; /* taken after the watch lock, before table_lock */
static GHashTable *targets;                               /* Key → alias (char *) */
static atomic_uint n_targets;                             /* so lookups skip the table when empty */

static guint key_hash(gconstpointer p)
{
	const Key *k = p;
	return (guint)(k->ino ^ (k->ino >> 32) ^ (k->dev * 0x9e3779b1u));
}

static gboolean key_equal(gconstpointer a, gconstpointer b)
{
	const Key *x = a, *y = b;
	return x->dev == y->dev && x->ino == y->ino;
}

/* Rule sensitivity walks every rule: remembered per path, as a tree with
 * many symlinks (node_modules/.bin) looks the same links up again. Bounded:
 * emptied past CACHE_MAX. Guarded by lock. */
#define CACHE_MAX 4096
static GHashTable *sensitive; /* relpath → GINT(1 no, 2 yes) */

/* Whether a link at rel lends its target anything: its name (as a file
 * and as a directory) gets a class, or rules look below it. */
static bool qualifies(VrDecision pd, const char *rel, bool casefold)
{
	if (vr_decide_path(pd, rel, false, casefold).cls != VR_CLASS_VISIBLE)
		return true;
	pthread_mutex_lock(&lock);
	int known = sensitive ? GPOINTER_TO_INT(g_hash_table_lookup(sensitive, rel)) : 0;
	pthread_mutex_unlock(&lock);
	if (known)
		return known == 2;
	bool yes = vr_policy_dir_is_rule_sensitive(vr_view->policy, rel);
	pthread_mutex_lock(&lock);
	if (!sensitive || g_hash_table_size(sensitive) >= CACHE_MAX) {
		g_clear_pointer(&sensitive, g_hash_table_unref);
		sensitive = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
	}
	g_hash_table_insert(sensitive, g_strdup(rel), GINT_TO_POINTER(yes ? 2 : 1));
	pthread_mutex_unlock(&lock);
	return yes;
}

/* Resolves a link's text the way the kernel would from the link's
 * directory, but by names only: ".." pops a name (every name kept so far
 * is a real directory, so that is the kernel's parent too), and a symlink
 * met on the way is read and resolved in turn (at most 8). Never hands ".."
 * to the kernel: the project's root may be covered by the view itself (it
 * is mounted over the project), and ".." arriving there would cross into
 * that mount. An absolute text must name the project (as the host or the
 * agent sees it). The target's fd (O_PATH), or -1 when it leads outside,
 * is missing or loops. */
static char *join(GPtrArray *names)
{
	GString *s = g_string_new(NULL);
	for (guint i = 0; i < names->len; i++)
		g_string_append_printf(s, "%s%s", i ? "/" : "", (const char *)names->pdata[i]);
	return g_string_free(s, FALSE);
}

static int resolve_names(GPtrArray *cur, const char *text, int depth)
{
	if (depth > 8)
		return -ELOOP;
	if (text[0] == '/') {
		const char *roots[] = {vr_view->opts->project, vr_view->agent_root};
		const char *rest = NULL;
		for (size_t i = 0; i < G_N_ELEMENTS(roots) && !rest; i++) {
			g_autofree char *r = roots[i] ? g_canonicalize_filename(roots[i], "/") : NULL;
			size_t n = r ? strlen(r) : 0;
			if (r && strncmp(text, r, n) == 0 && (text[n] == '/' || text[n] == '\0'))
				rest = text + n;
		}
		if (!rest)
			return -EXDEV;
		g_ptr_array_set_size(cur, 0);
		text = rest;
	}
	g_auto(GStrv) parts = g_strsplit(text, "/", -1);
	for (guint k = 0; parts[k]; k++) {
		const char *c = parts[k];
		if (!*c || strcmp(c, ".") == 0)
			continue;
		if (strcmp(c, "..") == 0) {
			if (cur->len == 0)
				return -EXDEV; /* above the project */
			g_ptr_array_remove_index(cur, cur->len - 1);
			continue;
		}
		g_ptr_array_add(cur, g_strdup(c));
		g_autofree char *path = join(cur);
		int dfd;
		const char *name;
		if (vr_resolve_parent(vr_view->root.fd, path, &dfd, &name) < 0)
			return -ENOENT;
		struct stat st;
		int sr = fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW);
		if (sr == 0 && S_ISLNK(st.st_mode)) {
			char t[PATH_MAX + 1];
			ssize_t n = readlinkat(dfd, name, t, sizeof t - 1);
			close(dfd);
			if (n <= 0)
				return -ENOENT;
			t[n] = '\0';
			g_ptr_array_remove_index(cur, cur->len - 1); /* the link's name: resolve from its dir */
			int r = resolve_names(cur, t, depth + 1);
			if (r < 0)
				return r;
			continue;
		}
		close(dfd);
		if (sr < 0)
			return -ENOENT;
	}
	return 0;
}

static int open_target(const char *dir_rel, const char *text)
{
	g_autoptr(GPtrArray) cur = g_ptr_array_new_with_free_func(g_free);
	if (dir_rel[0]) {
		g_auto(GStrv) parts = g_strsplit(dir_rel, "/", -1);
		for (guint k = 0; parts[k]; k++)
			g_ptr_array_add(cur, g_strdup(parts[k]));
	}
	if (resolve_names(cur, text, 0) < 0)
		return -1;
	if (cur->len == 0)
		return -1; /* the project itself */
	g_autofree char *path = join(cur);
	vr_cleanup_fd int dfd = -1;
	const char *name;
	if (vr_resolve_parent(vr_view->root.fd, path, &dfd, &name) < 0)
		return -1;
	return openat(dfd, name, O_PATH | O_NOFOLLOW | O_CLOEXEC);
}

/* Descendants of a newly aliased target get their aliases and stricter
 * decisions too. Called with table_lock held. */
static void realias_locked(VrInode *t, const char *alias)
{
	VrView *v = vr_view;
	size_t tlen = strlen(t->relpath);
	GHashTableIter it;
	gpointer k;
	g_hash_table_iter_init(&it, v->table);
	while (g_hash_table_iter_next(&it, &k, NULL)) {
		VrInode *i = k;
		if (i == &v->root)
			continue;
		const char *rest = NULL;
		if (i == t)
			rest = "";
		else if (tlen && strncmp(i->relpath, t->relpath, tlen) == 0 && i->relpath[tlen] == '/')
			rest = i->relpath + tlen;
		if (!rest)
			continue;
		char *a = g_strconcat(alias, rest, NULL);
		VrDecision d = vr_policy_decide(v->policy, a, S_ISDIR(i->type));
		if (d.cls > i->decision.cls)
			i->decision = d;
		g_free(i->alias);
		i->alias = a;
		i->alias_decision = d;
	}
}

/* The cached target, if any, with the entry the kernel knows it by (ids
 * only: see vr_links_host_changed). */
static bool note(int dirfd, const char *dir_rel, const char *name, bool casefold, VrInode **ret_target,
                 VrInode **ret_parent, char **ret_name)
{
	*ret_target = *ret_parent = NULL;
	*ret_name = NULL;
	if (!vr_view || !vr_name_ok(name))
		return false;
	g_autofree char *rel = vr_child_relpath(dir_rel, name);
	VrDecision pd = vr_policy_decide(vr_view->policy, dir_rel, TRUE);
	if (!qualifies(pd, rel, casefold))
		return false;
	char text[PATH_MAX + 1];
	ssize_t n = readlinkat(dirfd, name, text, sizeof text - 1);
	if (n <= 0)
		return false;
	text[n] = '\0';
	int fd = open_target(dir_rel, text);
	if (fd < 0)
		return false;
	struct stat st;
	int sr = fstat(fd, &st);
	close(fd);
	if (sr < 0 || (st.st_dev == vr_view->root.dev && st.st_ino == vr_view->root.ino))
		return false; /* the project itself cannot be hidden from itself */

	Key k = {st.st_dev, st.st_ino};
	pthread_mutex_lock(&lock);
	if (!targets)
		targets = g_hash_table_new_full(key_hash, key_equal, g_free, g_free);
	const char *old = g_hash_table_lookup(targets, &k);
	/* Several links to one target: the strictest name stays. */
	bool take = !old || vr_policy_decide(vr_view->policy, rel, S_ISDIR(st.st_mode)).cls >
	                            vr_policy_decide(vr_view->policy, old, S_ISDIR(st.st_mode)).cls;
	if (take) {
		Key *nk = g_memdup2(&k, sizeof k);
		g_hash_table_insert(targets, nk, g_strdup(rel));
		atomic_store(&n_targets, g_hash_table_size(targets));
	}
	pthread_mutex_unlock(&lock);
	if (!take)
		return false;

	/* What the kernel may already hold of the target gets it now. */
	VrView *v = vr_view;
	VrInode key = {.dev = st.st_dev, .ino = st.st_ino};
	pthread_mutex_lock(&v->table_lock);
	VrInode *t = g_hash_table_lookup(v->table, &key);
	if (t && t != &v->root) {
		realias_locked(t, rel);
		*ret_target = t;
		*ret_parent = t->parent;
		*ret_name = g_strdup(t->name);
	}
	pthread_mutex_unlock(&v->table_lock);
	return true;
}

void vr_links_note(int dirfd, const char *dir_rel, const char *name, bool casefold)
{
	VrInode *t, *p;
	g_autofree char *n = NULL;
	note(dirfd, dir_rel, name, casefold, &t, &p, &n);
}

bool vr_links_recheck(VrInode *inode, const char *seen)
{
	if (atomic_load(&n_targets) == 0)
		return false;
	struct stat st = {.st_dev = inode->dev, .st_ino = inode->ino};
	g_autofree char *alias = vr_links_alias_of(&st);
	if (!alias || (seen && strcmp(alias, seen) == 0))
		return false;
	VrView *v = vr_view;
	pthread_mutex_lock(&v->table_lock);
	realias_locked(inode, alias);
	bool hidden = inode->decision.cls == VR_CLASS_HIDE;
	pthread_mutex_unlock(&v->table_lock);
	return hidden;
}

char *vr_links_alias_of(const struct stat *st)
{
	if (atomic_load(&n_targets) == 0)
		return NULL;
	Key k = {st->st_dev, st->st_ino};
	pthread_mutex_lock(&lock);
	const char *a = targets ? g_hash_table_lookup(targets, &k) : NULL;
	char *copy = g_strdup(a);
	pthread_mutex_unlock(&lock);
	return copy;
}

void vr_links_scan_root(VrView *v)
{
	char proc[64];
	vr_proc_path(proc, v->root.fd);
	vr_cleanup_fd int fd = open(proc, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return;
	DIR *dp = fdopendir(fd);
	if (!dp)
		return;
	vr_steal_fd(&fd); /* closedir's now */
	struct dirent *de;
	while ((de = readdir(dp))) {
		if (de->d_type != DT_LNK && de->d_type != DT_UNKNOWN)
			continue;
		struct stat st;
		if (fstatat(v->root.fd, de->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISLNK(st.st_mode))
			vr_links_note(v->root.fd, "", de->d_name, v->root.casefold);
	}
	closedir(dp);
}

bool vr_links_host_changed(VrInode *dir, const char *name, VrInode **ret_target, VrInode **ret_parent,
                           char **ret_name)
{
	struct stat st;
	*ret_target = *ret_parent = NULL;
	*ret_name = NULL;
	if (fstatat(dir->fd, name, &st, AT_SYMLINK_NOFOLLOW) < 0 || !S_ISLNK(st.st_mode))
		return false;
	g_autofree char *rel = vr_inode_relpath(dir);
	return note(dir->fd, rel, name, dir->casefold, ret_target, ret_parent, ret_name) && *ret_target;
}

void vr_links_free(void)
{
	pthread_mutex_lock(&lock);
	g_clear_pointer(&targets, g_hash_table_unref);
	g_clear_pointer(&sensitive, g_hash_table_unref);
	atomic_store(&n_targets, 0);
	pthread_mutex_unlock(&lock);
}
