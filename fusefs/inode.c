/* The inode table: one O_PATH fd per host object the kernel holds a
 * reference to, keyed by (st_dev, st_ino), as libfuse's passthrough_ll.
 * The fuse_ino_t handed to the kernel is the VrInode pointer itself. */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

#include "fusefs/view-private.h"

static guint inode_hash(gconstpointer key)
{
	const VrInode *i = key;
	return (guint)(i->ino ^ (i->ino >> 32) ^ (i->dev * 0x9e3779b1u));
}

static gboolean inode_equal(gconstpointer a, gconstpointer b)
{
	const VrInode *x = a, *y = b;
	return x->ino == y->ino && x->dev == y->dev;
}

int vr_inode_table_init(VrView *v)
{
	pthread_mutex_init(&v->table_lock, NULL);
	v->table = g_hash_table_new(inode_hash, inode_equal);
	return 0;
}

static void inode_free(VrInode *inode)
{
	if (S_ISDIR(inode->type))
		vr_watch_forget(inode);
	if (S_ISREG(inode->type) && inode->fd >= 0)
		vr_keyfile_inode_closing(inode->fd);
	if (inode->fd >= 0)
		close(inode->fd);
	if (inode->create_fd >= 0) {
		close(inode->create_fd);
		atomic_fetch_sub(&vr_view->create_fds, 1);
	}
	g_free(inode->relpath);
	g_free(inode->name);
	g_free(inode->alias);
	g_free(inode);
}

void vr_inode_set_alias(VrInode *inode, char *alias, VrDecision ad)
{
	if (inode == &vr_view->root) {
		g_free(alias);
		return;
	}
	pthread_mutex_lock(&vr_view->table_lock);
	g_free(inode->alias);
	inode->alias = alias;
	inode->alias_decision = ad;
	pthread_mutex_unlock(&vr_view->table_lock);
}

void vr_inode_note_entry(VrInode *inode, VrInode *parent, const char *name)
{
	atomic_store(&inode->last_used, g_get_monotonic_time());
	if (inode == &vr_view->root)
		return;
	pthread_mutex_lock(&vr_view->table_lock);
	inode->parent = parent;
	if (!inode->name || strcmp(inode->name, name) != 0) {
		g_free(inode->name);
		inode->name = g_strdup(name);
	}
	pthread_mutex_unlock(&vr_view->table_lock);
}

void vr_inode_table_free(VrView *v)
{
	GHashTableIter it;
	gpointer key;
	g_hash_table_iter_init(&it, v->table);
	while (g_hash_table_iter_next(&it, &key, NULL)) {
		g_hash_table_iter_steal(&it);
		if (key != &v->root)
			inode_free(key);
	}
	g_hash_table_unref(v->table);
}

VrInode *vr_inode_get(fuse_ino_t ino)
{
	if (ino == FUSE_ROOT_ID)
		return &vr_view->root;
	return (VrInode *)(uintptr_t)ino;
}

VrInode *vr_inode_intern(int fd, const struct stat *st, const char *relpath, VrDecision decision)
{
	VrView *v = vr_view;
	VrInode key = {.dev = st->st_dev, .ino = st->st_ino};
	vr_keyfile_note(st->st_dev, st->st_ino, relpath);

	pthread_mutex_lock(&v->table_lock);
	VrInode *inode = g_hash_table_lookup(v->table, &key);
	if (inode) {
		close(fd);
		inode->nlookup++;
		if (inode != &v->root && strcmp(inode->relpath, relpath) != 0) {
			/* Reached under another name: a hard link, or a host-side
			 * rename. A directory has one name, so the new one is right.
			 * A file with several names keeps the strictest class any of
			 * them gave it, so a visible link cannot unlock a read-only
			 * or redacted file. */
			if (!S_ISDIR(inode->type) && st->st_nlink > 1 &&
			    inode->decision.cls > decision.cls)
				decision = inode->decision;
			g_free(inode->relpath);
			inode->relpath = g_strdup(relpath);
			atomic_fetch_add(&inode->relpath_gen, 1);
		}
		if (inode != &v->root)
			atomic_store(&inode->name_removed, false);
		if (inode != &v->root)
			inode->decision = decision;
	} else {
		inode = g_new0(VrInode, 1);
		inode->fd = fd;
		inode->wd = -1;
		inode->create_fd = -1;
		inode->dev = st->st_dev;
		inode->ino = st->st_ino;
		inode->type = st->st_mode & S_IFMT;
		inode->casefold = S_ISDIR(st->st_mode) && vr_dir_is_case_insensitive(fd);
		inode->nlookup = 1;
		inode->relpath = g_strdup(relpath);
		inode->decision = decision;
		g_hash_table_add(v->table, inode);
	}
	size_t size = g_hash_table_size(v->table) + atomic_load(&v->create_fds);
	pthread_mutex_unlock(&v->table_lock);
	vr_evict_kick_if_full(size);
	return inode;
}

void vr_inode_forget(VrInode *inode, uint64_t n)
{
	VrView *v = vr_view;
	if (inode == &v->root)
		return;
	pthread_mutex_lock(&v->table_lock);
	g_assert(inode->nlookup >= n);
	inode->nlookup -= n;
	bool gone = inode->nlookup == 0;
	if (gone)
		g_hash_table_remove(v->table, inode);
	pthread_mutex_unlock(&v->table_lock);
	if (gone)
		inode_free(inode);
}

void vr_inode_pin(VrInode *inode)
{
	VrView *v = vr_view;
	if (inode == &v->root)
		return; /* never forgotten */
	pthread_mutex_lock(&v->table_lock);
	inode->nlookup++;
	pthread_mutex_unlock(&v->table_lock);
}

bool vr_inode_pin_live(VrInode *inode)
{
	VrView *v = vr_view;
	if (inode == &v->root)
		return true;
	pthread_mutex_lock(&v->table_lock);
	bool live = inode->nlookup > 0;
	if (live)
		inode->nlookup++;
	pthread_mutex_unlock(&v->table_lock);
	return live;
}

GHashTable *vr_inode_live_set(VrView *v)
{
	GHashTable *set = g_hash_table_new(NULL, NULL);
	GHashTableIter it;
	gpointer key;
	g_hash_table_iter_init(&it, v->table);
	while (g_hash_table_iter_next(&it, &key, NULL))
		g_hash_table_add(set, key);
	return set;
}

char *vr_inode_relpath(VrInode *inode)
{
	pthread_mutex_lock(&vr_view->table_lock);
	char *p = g_strdup(inode->relpath);
	pthread_mutex_unlock(&vr_view->table_lock);
	return p;
}

VrDecision vr_inode_decision(VrInode *inode)
{
	pthread_mutex_lock(&vr_view->table_lock);
	VrDecision d = inode->decision;
	pthread_mutex_unlock(&vr_view->table_lock);
	return d;
}

void vr_inode_rebind(dev_t dev, ino_t ino, int fd, const struct stat *st, const char *relpath,
                     VrDecision decision, VrInode *parent, const char *name)
{
	VrView *v = vr_view;
	VrInode key = {.dev = dev, .ino = ino}, now = {.dev = st->st_dev, .ino = st->st_ino};
	pthread_mutex_lock(&v->table_lock);
	VrInode *inode = g_hash_table_lookup(v->table, &key);
	if (!inode || inode == &v->root || g_hash_table_contains(v->table, &now) ||
	    !S_ISREG(inode->type) || !S_ISREG(st->st_mode)) {
		pthread_mutex_unlock(&v->table_lock);
		close(fd);
		return;
	}
	g_hash_table_remove(v->table, inode);
	/* dup3 swaps what the number means in one step: a handler using
	 * inode->fd right now gets the old object or the new, never a number
	 * reused for something else. */
	dup3(fd, inode->fd, O_CLOEXEC);
	close(fd);
	inode->dev = st->st_dev;
	inode->ino = st->st_ino;
	g_free(inode->relpath);
	inode->relpath = g_strdup(relpath);
	atomic_fetch_add(&inode->relpath_gen, 1);
	inode->decision = decision;
	inode->parent = parent;
	g_free(inode->name);
	inode->name = g_strdup(name);
	atomic_store(&inode->name_removed, false);
	g_hash_table_add(v->table, inode);
	int cfd = atomic_exchange(&inode->create_fd, -1);
	pthread_mutex_unlock(&v->table_lock);
	if (cfd >= 0) {
		close(cfd);
		atomic_fetch_sub(&v->create_fds, 1);
	}
}

void vr_inode_name_removed(dev_t dev, ino_t ino, const char *relpath)
{
	VrView *v = vr_view;
	VrInode key = {.dev = dev, .ino = ino};
	pthread_mutex_lock(&v->table_lock);
	VrInode *i = g_hash_table_lookup(v->table, &key);
	if (i && i != &v->root && strcmp(i->relpath, relpath) == 0)
		atomic_store(&i->name_removed, true);
	pthread_mutex_unlock(&v->table_lock);
}

void vr_inode_renamed(dev_t dev, ino_t ino, const char *oldpath, const char *newpath,
                      VrInode *newparent, const char *newname)
{
	VrView *v = vr_view;
	size_t oldlen = strlen(oldpath);
	VrInode key = {.dev = dev, .ino = ino};
	vr_keyfile_renamed(newparent, newname, newpath);

	pthread_mutex_lock(&v->table_lock);
	VrInode *moved = g_hash_table_lookup(v->table, &key);
	if (moved && moved != &v->root) {
		g_free(moved->relpath);
		moved->relpath = g_strdup(newpath);
		atomic_fetch_add(&moved->relpath_gen, 1);
		/* The kernel moved its entry too: the host watch sees the new
		 * name lead to the entry it already has (host-watch.c). */
		moved->parent = newparent;
		g_free(moved->name);
		moved->name = g_strdup(newname);
	}
	if (moved && S_ISDIR(moved->type)) {
		/* Descendants keep full relative paths; rewrite their prefix. The
		 * decisions stay: the rename was only allowed because it changes
		 * no rule match (vr_policy_dir_is_rule_sensitive). O(table), but
		 * directory renames are rare next to lookups. */
		GHashTableIter it;
		gpointer k;
		g_hash_table_iter_init(&it, v->table);
		while (g_hash_table_iter_next(&it, &k, NULL)) {
			VrInode *i = k;
			if (i == &v->root || i == moved)
				continue;
			if (strncmp(i->relpath, oldpath, oldlen) == 0 && i->relpath[oldlen] == '/') {
				char *p = g_strconcat(newpath, i->relpath + oldlen, NULL);
				g_free(i->relpath);
				i->relpath = p;
				atomic_fetch_add(&i->relpath_gen, 1);
			}
		}
	}
	pthread_mutex_unlock(&v->table_lock);
}
