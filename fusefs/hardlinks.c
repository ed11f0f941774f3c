#include "fusefs/hardlinks.h"

#include <dirent.h>
#include <fcntl.h>
#include <glib.h>
#include <pthread.h>
#include <string.h>
#include <unistd.h>

#include "common/cleanup.h"
#include "fusefs/view-private.h"

typedef struct {
	dev_t dev;
	ino_t ino;
} Key;

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static GHashTable *protected_inodes; /* Key* → VrDecision*, guarded by lock */
static pthread_once_t walked = PTHREAD_ONCE_INIT;
static int walk_root_fd = -1;

static guint key_hash(gconstpointer p)
{
	const Key *k = p;
	return g_int64_hash(&(gint64){(gint64)k->ino}) ^ (guint)k->dev;
}

static gboolean key_equal(gconstpointer a, gconstpointer b)
{
	const Key *x = a, *y = b;
	return x->dev == y->dev && x->ino == y->ino;
}

static void note_locked(const struct stat *st, VrDecision d)
{
	if (!protected_inodes)
		protected_inodes = g_hash_table_new_full(key_hash, key_equal, g_free, g_free);
	Key k = {st->st_dev, st->st_ino};
	VrDecision *old = g_hash_table_lookup(protected_inodes, &k);
	if (old) {
		if (d.cls > old->cls)
			*old = d;
		return;
	}
	g_hash_table_insert(protected_inodes, g_memdup2(&k, sizeof k), g_memdup2(&d, sizeof d));
}

void vr_hardlinks_note(const struct stat *st, VrDecision d)
{
	if (!S_ISREG(st->st_mode) || st->st_nlink < 2 || d.cls == VR_CLASS_VISIBLE)
		return;
	pthread_mutex_lock(&lock);
	note_locked(st, d);
	pthread_mutex_unlock(&lock);
}

/* Depth-first over the project through fds only (O_NOFOLLOW, no joined path
 * is ever opened); stays on the project's file system like the view does. */
static void walk_dir(int dfd, const char *relpath, VrDecision dir_d, dev_t dev, int depth)
{
	if (depth > 256)
		return;
	DIR *dp = fdopendir(dfd);
	if (!dp) {
		close(dfd);
		return;
	}
	struct dirent *e;
	while ((e = readdir(dp))) {
		if (!vr_name_ok(e->d_name))
			continue;
		g_autofree char *rel = vr_child_relpath(relpath, e->d_name);
		bool is_dir = e->d_type == DT_DIR;
		if (e->d_type == DT_UNKNOWN) {
			struct stat st;
			if (fstatat(dirfd(dp), e->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0)
				continue;
			is_dir = S_ISDIR(st.st_mode);
		}
		VrDecision d = vr_decide_path(dir_d, rel, is_dir, false);
		if (is_dir) {
			int sub = openat(dirfd(dp), e->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
			struct stat st;
			if (sub >= 0 && fstat(sub, &st) == 0 && st.st_dev == dev)
				walk_dir(sub, rel, d, dev, depth + 1);
			else if (sub >= 0)
				close(sub);
			continue;
		}
		if (d.cls == VR_CLASS_VISIBLE || (e->d_type != DT_REG && e->d_type != DT_UNKNOWN))
			continue;
		struct stat st;
		if (fstatat(dirfd(dp), e->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0)
			vr_hardlinks_note(&st, d);
	}
	closedir(dp);
}

static void walk_project(void)
{
	char proc[64];
	vr_proc_path(proc, walk_root_fd);
	vr_cleanup_fd int dfd = open(proc, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	struct stat st;
	if (dfd < 0 || fstat(dfd, &st) < 0)
		return;
	walk_dir(vr_steal_fd(&dfd), "", vr_policy_decide(vr_view->policy, "", TRUE), st.st_dev, 0);
}

VrDecision vr_hardlinks_decide(int root_fd, const struct stat *st, VrDecision d)
{
	if (!S_ISREG(st->st_mode) || st->st_nlink < 2 || d.cls == VR_CLASS_HIDE)
		return d;
	walk_root_fd = root_fd;
	pthread_once(&walked, walk_project);
	Key k = {st->st_dev, st->st_ino};
	pthread_mutex_lock(&lock);
	const VrDecision *p = protected_inodes ? g_hash_table_lookup(protected_inodes, &k) : NULL;
	if (p && p->cls > d.cls)
		d = *p;
	pthread_mutex_unlock(&lock);
	return d;
}
