/* Host watch: in the directories this module watches with inotify the
 * kernel may cache names, attributes, ACLs and listings for long
 * (VR_WATCHED_TIMEOUT), because a helper thread tells it as soon as the host
 * changes something there (fuse_lowlevel_notify_inval_entry/_inval_inode).
 * A directory whose watch cannot be added (inotify limits, no read
 * permission, a network or FUSE file system whose remote changes inotify
 * never sees) keeps the short --entry-timeout/--attr-timeout.
 *
 * What the cache may get wrong meanwhile is bounded elsewhere: open (or,
 * in no-open mode, the first read or write that reaches the daemon, see
 * file-handles.c), opendir and every change of a name check that the
 * object still has the path its decision was made for
 * (vr_inode_still_named) and answer ESTALE otherwise. In no-open mode
 * pages the agent has already read are served from the kernel's cache
 * without such a check until this watch drops them: there it is also what
 * ends the window after a host rename (and unwatched directories get an
 * entry timeout of 0). Changes the view makes itself are not reported back
 * (vr_change_begin/end: the ctime right after them is remembered).
 *
 * Notifications go out from the helper thread only, and with no lock held:
 * the kernel may hold the directory lock of a request whose handler waits
 * for one of ours (evict.c has the same rule).
 *
 * Syscalls, for a seccomp filter: inotify_init1 and eventfd2 before serving;
 * fstatfs and inotify_add_watch on /proc/self/fd/N (lookup handlers),
 * inotify_rm_watch (forget handlers); in the thread ppoll (poll), read,
 * newfstatat, writev to /dev/fuse; write to the eventfd to stop it. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/inotify.h>
#include <sys/vfs.h>
#include <time.h>
#include <unistd.h>

#include "common/log.h"
#include "fusefs/view-private.h"

#define WATCH_MASK                                                                          \
	(IN_CREATE | IN_DELETE | IN_MOVED_FROM | IN_MOVED_TO | IN_MODIFY | IN_ATTRIB |      \
	 IN_CLOSE_WRITE | IN_ONLYDIR | IN_EXCL_UNLINK)

static struct {
	VrView *v;
	bool enabled;
	int ifd, stopfd;
	pthread_t thread;
	bool started;
	bool abandoned;         /* stop could not join it: its fds and tables stay */
	atomic_bool stopping;
	pthread_mutex_t lock;   /* guards wds, fs_ok and every inode's wd; taken before table_lock */
	GHashTable *wds;        /* wd → VrInode* */
	GHashTable *fs_ok;      /* st_dev → GINT_TO_POINTER(1 watchable, 2 not) */
	unsigned max;           /* tests: watches allowed (VR_VIEW_WATCH_MAX), 0: no cap */
	atomic_uint_fast64_t overflows;
} W = {.ifd = -1, .stopfd = -1, .lock = PTHREAD_MUTEX_INITIALIZER};

/* File systems whose every change, made by any process of this host, shows
 * up in inotify. Not NFS, SMB, 9p, FUSE (virtiofs, sshfs): changes made by
 * other clients are never reported there. */
static bool fs_reports_all_changes(unsigned long type)
{
	switch (type) {
	case 0xEF53:      /* ext2/3/4 */
	case 0x58465342:  /* xfs */
	case 0x9123683E:  /* btrfs */
	case 0x01021994:  /* tmpfs */
	case 0x858458f6:  /* ramfs */
	case 0xF2F52010:  /* f2fs */
	case 0xca451a4e:  /* bcachefs */
	case 0x2fc12fc1:  /* zfs */
	case 0x794c7630:  /* overlayfs (changes made through it) */
	case 0x52654973:  /* reiserfs */
	case 0x3153464a:  /* jfs */
	case 0x4d44:      /* vfat */
	case 0x2011BAB0:  /* exfat */
	case 0x7366746e:  /* ntfs3 */
		return true;
	}
	return false;
}

static fuse_ino_t node_id(VrInode *i)
{
	return i == &W.v->root ? FUSE_ROOT_ID : (fuse_ino_t)(uintptr_t)i;
}

int vr_watch_init(VrView *v)
{
	W.v = v;
	W.enabled = W.abandoned = false;
	W.ifd = W.stopfd = -1;
	atomic_store(&W.stopping, false);
	const char *off = secure_getenv("VR_VIEW_NO_WATCH"); /* tests: the fallback path */
	if ((off && strcmp(off, "1") == 0) || v->opts->entry_timeout <= 0 ||
	    v->opts->attr_timeout <= 0)
		return 0;
	W.ifd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
	if (W.ifd < 0)
		return 0; /* out of inotify instances: short timeouts everywhere */
	W.stopfd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (W.stopfd < 0) {
		close(W.ifd);
		W.ifd = -1;
		return 0;
	}
	/* Tests: fs.inotify.max_user_watches is global to the machine, so
	 * running out of watches is simulated by a cap of our own. */
	const char *max = secure_getenv("VR_VIEW_WATCH_MAX");
	W.max = max ? (unsigned)strtoul(max, NULL, 10) : 0;
	W.wds = g_hash_table_new(NULL, NULL);
	W.fs_ok = g_hash_table_new_full(g_int64_hash, g_int64_equal, g_free, NULL);
	W.enabled = true;
	vr_watch_dir(&v->root);
	return 0;
}

VrWatchResult vr_watch_dir(VrInode *dir)
{
	if (!W.enabled || atomic_load(&W.stopping))
		return VR_WATCH_NONE;
	pthread_mutex_lock(&W.lock);
	if (dir->wd >= 0) {
		pthread_mutex_unlock(&W.lock);
		return VR_WATCH_ALREADY;
	}
	gint64 dev = (gint64)dir->dev;
	int ok = GPOINTER_TO_INT(g_hash_table_lookup(W.fs_ok, &dev));
	if (!ok) {
		struct statfs sf;
		ok = fstatfs(dir->fd, &sf) == 0 && fs_reports_all_changes((unsigned long)sf.f_type) ? 1 : 2;
		gint64 *key = g_new(gint64, 1);
		*key = dev;
		g_hash_table_insert(W.fs_ok, key, GINT_TO_POINTER(ok));
	}
	VrWatchResult r = VR_WATCH_NONE;
	if (ok == 1) {
		char proc[64];
		vr_proc_path(proc, dir->fd);
		int wd = -1;
		if (W.max && g_hash_table_size(W.wds) >= W.max)
			errno = ENOSPC;
		else
			wd = inotify_add_watch(W.ifd, proc, WATCH_MASK);
		if (wd >= 0) {
			dir->wd = wd;
			g_hash_table_insert(W.wds, GINT_TO_POINTER(wd), dir);
			atomic_store(&dir->watched, true);
			r = VR_WATCH_NEW;
		} else if (errno == ENOSPC) {
			vr_count_note(VR_NOTE_WATCH_FULL);
		}
	}
	pthread_mutex_unlock(&W.lock);
	return r;
}

void vr_watch_forget(VrInode *dir)
{
	if (!W.enabled)
		return;
	pthread_mutex_lock(&W.lock);
	if (dir->wd >= 0 && g_hash_table_lookup(W.wds, GINT_TO_POINTER(dir->wd)) == dir) {
		/* inotify has one watch per host inode: a newer VrInode of the
		 * same directory may own it now, and then it stays. */
		g_hash_table_remove(W.wds, GINT_TO_POINTER(dir->wd));
		inotify_rm_watch(W.ifd, dir->wd);
	}
	dir->wd = -1;
	atomic_store(&dir->watched, false);
	pthread_mutex_unlock(&W.lock);
}

double vr_watch_entry_timeout(VrInode *parent)
{
	if (atomic_load(&parent->watched))
		return VR_WATCHED_TIMEOUT;
	/* In no-open mode no OPEN checks a name the kernel caches, so where
	 * nobody watches every path walk asks again. */
	return vr_view->no_open ? 0 : vr_view->opts->entry_timeout;
}

/* Names the view removed (unlink, rmdir, the source of a rename), as
 * "parent-pointer/name". A miss on one of them is not cached: the host
 * watch drops a cached miss when the host creates the name, but only once
 * its thread has run, and a name just removed through the view is the one
 * a host tool most likely makes again at once (libfuse's test_syscalls
 * does nothing else: removed through the view, created on the host, opened
 * through the view microseconds later). Bounded: cleared when full, which
 * only lets misses be cached again. */
#define REMOVED_MAX 4096
static struct {
	pthread_mutex_t lock;
	GHashTable *names;
} R = {.lock = PTHREAD_MUTEX_INITIALIZER};

static char *removed_key(VrInode *dir, const char *name)
{
	return g_strdup_printf("%p/%s", (void *)dir, name);
}

void vr_watch_name_removed(VrInode *dir, const char *name)
{
	char *key = removed_key(dir, name);
	pthread_mutex_lock(&R.lock);
	if (!R.names)
		R.names = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
	if (g_hash_table_size(R.names) >= REMOVED_MAX)
		g_hash_table_remove_all(R.names);
	g_hash_table_add(R.names, key);
	pthread_mutex_unlock(&R.lock);
}

static bool was_removed(VrInode *dir, const char *name)
{
	pthread_mutex_lock(&R.lock);
	bool found = false;
	if (R.names && g_hash_table_size(R.names)) {
		g_autofree char *key = removed_key(dir, name);
		found = g_hash_table_contains(R.names, key);
	}
	pthread_mutex_unlock(&R.lock);
	return found;
}

double vr_watch_negative_timeout(VrInode *parent, const char *name)
{
	if (was_removed(parent, name))
		return 0;
	/* After a queue overflow every known entry is dropped, and with a
	 * directory's entry the kernel drops the misses cached inside it; the
	 * root has no entry, so its misses keep the short timeout. */
	if (parent == &vr_view->root)
		return vr_view->opts->entry_timeout;
	return vr_watch_entry_timeout(parent);
}

double vr_watch_attr_timeout(VrInode *inode, const struct stat *st)
{
	/* A directory's own watch reports changes to it; a file's changes
	 * are reported to the watch of the directory it was changed through,
	 * which for a file with other names may be one nobody watches. */
	bool fresh = S_ISDIR(st->st_mode) ? atomic_load(&inode->watched)
	                                   : atomic_load(&inode->attr_watched) && st->st_nlink == 1;
	return fresh ? VR_WATCHED_TIMEOUT : vr_view->opts->attr_timeout;
}

static int64_t ctime_ns(const struct stat *st)
{
	return (int64_t)st->st_ctim.tv_sec * 1000000000 + st->st_ctim.tv_nsec;
}

void vr_change_begin(VrInode *inode)
{
	atomic_fetch_add(&inode->changing, 1);
}

void vr_change_end(VrInode *inode, bool changed)
{
	struct stat st;
	if (changed && W.enabled && fstatat(inode->fd, "", &st, AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW) == 0)
		atomic_store(&inode->own_ctime, ctime_ns(&st));
	atomic_fetch_sub(&inode->changing, 1);
}

/* Whether an event on i (st: what it is now) reports only the view's own
 * change: its ctime is still the one the view saw right after it. The
 * kernel already has what the view did (write-through pages, the attributes
 * of the SETATTR reply); invalidating would only cost GETATTRs. A host
 * change afterwards gets a later ctime: since Linux 6.13 a change after a
 * stat is stamped at fine granularity (multigrain timestamps), so even one
 * in the same clock tick differs. */
static bool own_change(VrInode *i, const struct stat *st)
{
	return atomic_load(&i->own_ctime) == ctime_ns(st);
}

/* --- the thread --- */

typedef struct {
	GHashTable *entries;   /* "parent-id/name" → Entry */
	GHashTable *inodes;    /* node id → GINT(1 attributes, 2 attributes and pages) */
	bool all;
	bool names_changed;    /* a rename or removal: file handles check their names again */
} Batch;

/* pinned: the parent's VrInode, held (vr_inode_pin_live) until the
 * notification is out, so its id cannot be reused meanwhile for another
 * inode — a file there made the kernel answer ENOTDIR, which libfuse
 * prints on the terminal. NULL for the root and for ids that are hints. */
typedef struct {
	fuse_ino_t parent;
	VrInode *pinned;
	char *name;
} Entry;

static void entry_free(gpointer p)
{
	Entry *e = p;
	if (e->pinned)
		vr_inode_forget(e->pinned, 1);
	g_free(e->name);
	g_free(e);
}

static void batch_entry_id(Batch *b, fuse_ino_t parent, VrInode *pinned, const char *name)
{
	char *key = g_strdup_printf("%" G_GUINT64_FORMAT "/%s", (guint64)parent, name);
	if (g_hash_table_contains(b->entries, key)) {
		g_free(key);
		if (pinned)
			vr_inode_forget(pinned, 1);
		return;
	}
	Entry *e = g_new(Entry, 1);
	e->parent = parent;
	e->pinned = pinned;
	e->name = g_strdup(name);
	g_hash_table_insert(b->entries, key, e);
}

/* NAME in DIR, a directory this module watches (called with W.lock held,
 * so DIR is not freed under us). A directory the kernel has forgotten
 * meanwhile has no entries left to drop. */
static void batch_entry(Batch *b, VrInode *dir, const char *name)
{
	if (dir == &W.v->root)
		batch_entry_id(b, FUSE_ROOT_ID, NULL, name);
	else if (vr_inode_pin_live(dir))
		batch_entry_id(b, node_id(dir), dir, name);
}

static void batch_inode(Batch *b, fuse_ino_t ino, bool pages)
{
	int want = pages ? 2 : 1;
	gpointer k = (gpointer)(uintptr_t)ino;
	if (GPOINTER_TO_INT(g_hash_table_lookup(b->inodes, k)) < want)
		g_hash_table_insert(b->inodes, k, GINT_TO_POINTER(want));
}

/* The cached inode a name of dir now leads to on the host, or NULL.
 * Called with W.lock held (dir stays alive). */
static VrInode *inode_at(VrInode *dir, const char *name, struct stat *st)
{
	if (fstatat(dir->fd, name, st, AT_SYMLINK_NOFOLLOW) < 0)
		return NULL;
	VrInode key = {.dev = st->st_dev, .ino = st->st_ino};
	pthread_mutex_lock(&W.v->table_lock);
	VrInode *i = g_hash_table_lookup(W.v->table, &key);
	pthread_mutex_unlock(&W.v->table_lock);
	return i;
}

/* A name that appeared in a directory where a handler is making one: seen
 * again once the handler is done (at most HOLD_US later). */
typedef struct {
	int wd;
	uint32_t mask;
	gint64 since;
	char name[];
} Held;

#define HOLD_US 100000
#define GATHER_MS 2
static GPtrArray *held; /* Held*, watch thread only */

static void hold(const struct inotify_event *ev, gint64 since)
{
	size_t len = strlen(ev->name) + 1;
	Held *h = g_malloc(sizeof *h + len);
	h->wd = ev->wd;
	h->mask = ev->mask;
	h->since = since;
	memcpy(h->name, ev->name, len);
	g_ptr_array_add(held, h);
}

static void handle_event_at(Batch *b, const struct inotify_event *ev, gint64 since);

static void handle_event(Batch *b, const struct inotify_event *ev)
{
	handle_event_at(b, ev, 0);
}

/* Held names whose handler is done (or that waited long enough). */
static void release_held(Batch *b)
{
	gint64 now = g_get_monotonic_time();
	GPtrArray *again = held;
	held = g_ptr_array_new_with_free_func(g_free);
	for (guint k = 0; k < again->len; k++) {
		Held *h = again->pdata[k];
		/* An event as read(2) gives it: the header, then the name. */
		union {
			struct inotify_event ev;
			char bytes[sizeof(struct inotify_event) + NAME_MAX + 1];
		} e;
		e.ev.wd = h->wd;
		e.ev.mask = h->mask;
		e.ev.cookie = 0;
		e.ev.len = (uint32_t)g_strlcpy(e.ev.name, h->name, NAME_MAX + 1) + 1;
		handle_event_at(b, &e.ev, now - h->since >= HOLD_US ? -1 : h->since);
	}
	g_ptr_array_unref(again);
}

/* since: 0 for a new event, its first sighting for a held one, -1 to
 * decide now whatever handlers are doing. */
static void handle_event_at(Batch *b, const struct inotify_event *ev, gint64 since)
{
	if (ev->mask & IN_Q_OVERFLOW) {
		atomic_fetch_add(&W.overflows, 1);
		vr_count_note(VR_NOTE_WATCH_OVERFLOW);
		b->all = true;
		return;
	}
	pthread_mutex_lock(&W.lock);
	VrInode *dir = g_hash_table_lookup(W.wds, GINT_TO_POINTER(ev->wd));
	if (!dir) {
		pthread_mutex_unlock(&W.lock);
		return;
	}
	fuse_ino_t dir_id = node_id(dir);
	if (ev->mask & IN_IGNORED) {
		/* The directory is gone (or its file system): nothing is left
		 * in it to cache. */
		g_hash_table_remove(W.wds, GINT_TO_POINTER(ev->wd));
		dir->wd = -1;
		atomic_store(&dir->watched, false);
	} else if (ev->len == 0) {
		struct stat st;
		if ((ev->mask & IN_ATTRIB) &&
		    !(fstat(dir->fd, &st) == 0 && own_change(dir, &st)))
			batch_inode(b, dir_id, false);
	} else {
		const char *name = ev->name;
		struct stat st;
		bool appeared = ev->mask & (IN_CREATE | IN_MOVED_TO);
		if (appeared && since >= 0 && atomic_load(&dir->creating) > 0) {
			pthread_mutex_unlock(&W.lock);
			hold(ev, since ? since : g_get_monotonic_time());
			return;
		}
		if (ev->mask & (IN_CREATE | IN_MOVED_TO | IN_DELETE | IN_MOVED_FROM)) {
			/* A name came or went. When the host's name leads to the
			 * inode the kernel was last given for it, the change was
			 * made through the view and the kernel knows already. */
			VrInode *i = inode_at(dir, name, &st);
			bool known = false;
			if (i) {
				pthread_mutex_lock(&W.v->table_lock);
				known = i->parent == dir && i->name && strcmp(i->name, name) == 0 &&
				        i->nlookup > 0;
				pthread_mutex_unlock(&W.v->table_lock);
			}
			if (!known || (ev->mask & (IN_DELETE | IN_MOVED_FROM)))
				batch_entry(b, dir, name);
			/* A host symlink whose name a rule covers (links.c): the
			 * kernel drops what it caches of its target. */
			VrInode *lt, *lp;
			g_autofree char *ln = NULL;
			if (appeared && vr_links_host_changed(dir, name, &lt, &lp, &ln)) {
				batch_inode(b, node_id(lt), true);
				if (lp && ln)
					batch_entry_id(b, node_id(lp), NULL, ln);
			}
			if (ev->mask & (IN_DELETE | IN_MOVED_FROM | IN_MOVED_TO))
				b->names_changed = true;
			/* A directory moved here by the host: the listing the
			 * kernel keeps was filtered for its old path. */
			if ((ev->mask & IN_MOVED_TO) && i && !known && S_ISDIR(i->type))
				batch_inode(b, node_id(i), true);
		}
		if (ev->mask & (IN_MODIFY | IN_ATTRIB | IN_CLOSE_WRITE)) {
			VrInode *i = inode_at(dir, name, &st);
			if (i && since >= 0 && atomic_load(&i->changing) > 0) {
				/* Seen before the handler noted its own change:
				 * decided once it has (at most HOLD_US later). */
				pthread_mutex_unlock(&W.lock);
				hold(ev, since ? since : g_get_monotonic_time());
				return;
			}
			if (i && !own_change(i, &st))
				batch_inode(b, node_id(i), (ev->mask & (IN_MODIFY | IN_CLOSE_WRITE)) != 0);
		}
	}
	pthread_mutex_unlock(&W.lock);
}

/* After lost events: every entry and attribute the kernel may hold. */
static void batch_everything(Batch *b)
{
	VrView *v = W.v;
	g_autoptr(GPtrArray) parents = g_ptr_array_new();
	g_autoptr(GPtrArray) names = g_ptr_array_new_with_free_func(g_free);
	pthread_mutex_lock(&v->table_lock);
	g_autoptr(GHashTable) live = vr_inode_live_set(v);
	GHashTableIter it;
	gpointer key;
	g_hash_table_iter_init(&it, v->table);
	while (g_hash_table_iter_next(&it, &key, NULL)) {
		VrInode *i = key;
		batch_inode(b, node_id(i), true);
		/* A parent pointer may outlive its inode: only one still in
		 * the table (looked up by pointer, never dereferenced) is
		 * pinned and named; the others have no entries left. */
		if (i != &v->root && i->parent && i->name &&
		    (i->parent == &v->root || g_hash_table_contains(live, i->parent))) {
			if (i->parent != &v->root)
				i->parent->nlookup++; /* pinned, table lock held */
			g_ptr_array_add(parents, i->parent);
			g_ptr_array_add(names, g_strdup(i->name));
		}
	}
	pthread_mutex_unlock(&v->table_lock);
	for (guint k = 0; k < parents->len; k++) {
		VrInode *p = parents->pdata[k];
		batch_entry_id(b, node_id(p), p == &v->root ? NULL : p, names->pdata[k]);
	}
}

static void batch_send(Batch *b)
{
	struct fuse_session *se = W.v->se;
	GHashTableIter it;
	gpointer k, val;
	g_hash_table_iter_init(&it, b->entries);
	while (g_hash_table_iter_next(&it, NULL, &val) && !atomic_load(&W.stopping)) {
		Entry *e = val;
		/* ENOENT (the kernel holds no such entry) is the common answer. */
		fuse_lowlevel_notify_inval_entry(se, e->parent, e->name, strlen(e->name));
		vr_count_note(VR_NOTE_WATCH_ENTRY);
	}
	g_hash_table_iter_init(&it, b->inodes);
	while (g_hash_table_iter_next(&it, &k, &val) && !atomic_load(&W.stopping)) {
		bool pages = GPOINTER_TO_INT(val) == 2;
		fuse_lowlevel_notify_inval_inode(se, (fuse_ino_t)(uintptr_t)k, pages ? 0 : -1, 0);
		vr_count_note(pages ? VR_NOTE_WATCH_PAGES : VR_NOTE_WATCH_INODE);
	}
}

static void *watch_main(void *arg)
{
	(void)arg;
	char buf[64 * 1024] __attribute__((aligned(__alignof__(struct inotify_event))));
	struct pollfd p[2] = {{.fd = W.ifd, .events = POLLIN}, {.fd = W.stopfd, .events = POLLIN}};
	held = g_ptr_array_new_with_free_func(g_free);
	while (!atomic_load(&W.stopping)) {
		if (poll(p, 2, held->len ? 2 : -1) < 0) {
			if (errno == EINTR)
				continue;
			break;
		}
		if (p[1].revents || atomic_load(&W.stopping))
			break;
		/* Events come in bursts: a file untarred through the view makes
		 * six (create, modify, three attribs, close), and a wake-up per
		 * event cost the daemon a quarter of its CPU and most of its
		 * context switches on 2 cores. Waiting a little first lets one
		 * wake-up read the burst; a host change is reported GATHER_MS
		 * later at most. */
		if (p[0].revents & POLLIN) {
			struct pollfd s = {.fd = W.stopfd, .events = POLLIN};
			if (poll(&s, 1, GATHER_MS) > 0 || atomic_load(&W.stopping))
				break;
		}
		Batch b = {
			.entries = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, entry_free),
			.inodes = g_hash_table_new(NULL, NULL),
		};
		/* Drain what is queued now, then notify once per entry/inode. */
		for (int rounds = 0; rounds < 64; rounds++) {
			ssize_t n = read(W.ifd, buf, sizeof buf);
			if (n <= 0)
				break;
			for (char *q = buf; q < buf + n;) {
				const struct inotify_event *ev = (const struct inotify_event *)q;
				handle_event(&b, ev);
				q += sizeof *ev + ev->len;
			}
		}
		release_held(&b);
		if (b.all)
			batch_everything(&b);
		if (b.all || b.names_changed)
			vr_handles_name_changed();
		batch_send(&b);
		g_hash_table_unref(b.entries);
		g_hash_table_unref(b.inodes);
	}
	g_ptr_array_unref(held);
	return NULL;
}

int vr_watch_start(void)
{
	if (!W.enabled)
		return 0;
	sigset_t all, old;
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old); /* signals stay with the FUSE threads */
	int err = pthread_create(&W.thread, NULL, watch_main, NULL); /* an errno, not -1 */
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	W.started = err == 0;
	if (!W.started) {
		/* Without the thread nobody would invalidate: no long timeouts. */
		vr_log_errno(err, "cannot start the host watch thread; caching names for 1 s only");
		pthread_mutex_lock(&W.lock);
		W.enabled = false;
		GHashTableIter it;
		gpointer val;
		g_hash_table_iter_init(&it, W.wds);
		while (g_hash_table_iter_next(&it, NULL, &val))
			atomic_store(&((VrInode *)val)->watched, false);
		pthread_mutex_unlock(&W.lock);
	}
	return -err;
}

static void *close_main(void *arg)
{
	close((int)(intptr_t)arg);
	return NULL;
}

/* The last close of an inotify descriptor tears its watches down and
 * waits for an SRCU grace period (fsnotify_destroy_group): 5-18 ms of a
 * 40 ms run, measured with strace -T, at the very end of the stop, where
 * the supervisor waits for this process. Closed from a thread of its own
 * as soon as the watch thread is gone, the wait overlaps the unmount and
 * the flushing of the journal and the audit log; the process still exits
 * only once it is over. Forget handlers that still run find ifd -1. */
static void close_behind(void)
{
	pthread_mutex_lock(&W.lock);
	int fd = W.ifd;
	W.ifd = -1;
	pthread_mutex_unlock(&W.lock);
	if (fd < 0)
		return;
	pthread_t t;
	sigset_t all, old;
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	if (pthread_create(&t, NULL, close_main, (void *)(intptr_t)fd) == 0)
		pthread_detach(t);
	else
		close(fd);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
}

void vr_watch_stop(void)
{
	atomic_store(&W.stopping, true);
	if (!W.started)
		return;
	uint64_t one = 1;
	if (write(W.stopfd, &one, sizeof one) < 0) {
		/* the flag alone stops it at its next wake-up */
	}
	/* A notification may wait for the directory lock of a request the
	 * stopped loop will never answer: do not wait for it for ever; left
	 * behind, the thread touches nothing once it sees "stopping". */
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	ts.tv_sec += 1;
	if (pthread_timedjoin_np(W.thread, NULL, &ts) != 0) {
		pthread_detach(W.thread);
		W.abandoned = true;
	}
	W.started = false;
	if (!W.abandoned)
		close_behind();
}

void vr_watch_free(void)
{
	pthread_mutex_lock(&R.lock);
	g_clear_pointer(&R.names, g_hash_table_unref);
	pthread_mutex_unlock(&R.lock);
	pthread_mutex_lock(&W.lock);
	W.enabled = false;
	if (!W.abandoned) {
		g_clear_pointer(&W.wds, g_hash_table_unref);
		g_clear_pointer(&W.fs_ok, g_hash_table_unref);
		if (W.ifd >= 0)
			close(W.ifd);
		if (W.stopfd >= 0)
			close(W.stopfd);
		W.ifd = W.stopfd = -1;
	}
	pthread_mutex_unlock(&W.lock);
}

bool vr_watch_enabled(void)
{
	pthread_mutex_lock(&W.lock);
	bool on = W.enabled;
	pthread_mutex_unlock(&W.lock);
	return on;
}

uint64_t vr_watch_overflows(void)
{
	return atomic_load(&W.overflows);
}
