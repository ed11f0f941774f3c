/* Cold-inode eviction. Every inode the kernel holds costs the daemon one
 * O_PATH fd, and the kernel keeps inodes as long as their dentries stay
 * cached — on a large tree, until RLIMIT_NOFILE runs out. So a helper
 * thread invalidates entries (fuse_lowlevel_notify_inval_entry) the kernel
 * has not looked up for a while; the kernel drops the unused ones and sends
 * FORGET, which frees the inode and its fd. Notifications go out from this
 * thread only: from a request handler they can wait on a directory lock the
 * kernel holds for that very request.
 *
 * One trigger: pressure (more inodes than the high mark, evict_marks(); a
 * lookup that hits EMFILE wakes the thread at once). Files go first, down
 * to the low mark, directory by directory (by_cost), and directories only
 * when files are not enough: invalidating a directory's entry drops
 * everything the kernel caches below it (d_invalidate), so one old
 * directory would take a whole warm subtree with it.
 *
 * Nothing is evicted for age alone. With long cache timeouts (host-watch.c)
 * the kernel serves a warm tree without looking anything up, so "not looked
 * up for minutes" says nothing about whether it is used; evicting idle
 * entries made every walk that came two minutes after the last one as slow
 * as the first (docs/PERFORMANCE.md, issue 19). Memory is the kernel's to
 * manage: under memory pressure it drops dentries and sends FORGET itself. */
#include <errno.h>
#include <signal.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include "fusefs/view-private.h"

#define PERIOD_MS 500

typedef struct {
	VrInode *parent;  /* pinned (nlookup) until its entry is invalidated */
	char *name;
	gint64 last_used;
	gint64 parent_used; /* the parent's last lookup: files go by directory */
	bool dir;
} Victim;

static struct {
	VrView *v;
	pthread_t thread;
	bool started;
	pthread_mutex_t lock;
	pthread_cond_t wake, evicted;
	bool stop, urgent;
	atomic_bool stopping;       /* read between notifications, without the lock */
	uint64_t rounds;            /* guarded by lock: eviction passes done */
	atomic_size_t high;         /* table size that triggers pressure eviction */
} E = {.lock = PTHREAD_MUTEX_INITIALIZER, .wake = PTHREAD_COND_INITIALIZER,
       .evicted = PTHREAD_COND_INITIALIZER};

#define CMP(a, b) (((a) > (b)) - ((a) < (b)))

/* Files before directories; files grouped by directory, the directory
 * looked up longest ago first: invalidating any entry also drops the
 * listing the kernel keeps of its directory (fuse_reverse_inval_entry
 * marks the directory changed), so evicting a directory's files together
 * costs one listing, not one per directory touched. Then oldest first. */
static int by_cost(const void *a, const void *b)
{
	const Victim *x = a, *y = b;
	if (x->dir != y->dir)
		return x->dir ? 1 : -1;
	if (!x->dir && x->parent != y->parent) {
		if (x->parent_used != y->parent_used)
			return CMP(x->parent_used, y->parent_used);
		return CMP((uintptr_t)x->parent, (uintptr_t)y->parent);
	}
	return CMP(x->last_used, y->last_used);
}

static size_t fd_limit(void)
{
	struct rlimit rl;
	if (getrlimit(RLIMIT_NOFILE, &rl) < 0 || rl.rlim_cur == RLIM_INFINITY || rl.rlim_cur > (1u << 22))
		return 1u << 22;
	return (size_t)rl.rlim_cur;
}

/* Open files, directory streams and the daemon's own fds need room too:
 * under a small limit inodes may use half of it before the oldest go (down
 * to a quarter); under a large one all but an eighth, down to half, so a
 * tree that fits stays cached. Down to three quarters kept a 15k-entry
 * tree whole through an untar beside it, but a lookup storm
 * (fault/scale-readdir-once: 30,000 stats in one directory) then ran the
 * daemon out of fds: a pass must free more than the storm takes. */
static void evict_marks(size_t limit, size_t *high, size_t *low)
{
	if (limit < 4096) {
		*high = limit / 2;
		*low = limit / 4;
	} else {
		*high = limit - limit / 8;
		*low = limit / 2;
	}
}

static void evict_once(bool urgent)
{
	VrView *v = E.v;
	size_t limit = fd_limit();
	size_t high, low;
	evict_marks(limit, &high, &low);
	atomic_store(&E.high, high);

	pthread_mutex_lock(&v->table_lock);
	/* Inodes hold an fd each, some a second one (create_fd). */
	size_t n = g_hash_table_size(v->table) + atomic_load(&v->create_fds);
	if (!urgent && n <= high) {
		pthread_mutex_unlock(&v->table_lock);
		return;
	}
	GArray *victims = g_array_sized_new(FALSE, FALSE, sizeof(Victim), (guint)MIN(n, 65536));
	/* An entry's parent pointer may outlive the parent (a file kept open
	 * after its directory went): only parents still in the table are used,
	 * and pinned, so no id of a freed inode — perhaps reused for a file,
	 * which made the kernel answer ENOTDIR — is ever sent. */
	g_autoptr(GHashTable) live = vr_inode_live_set(v);
	GHashTableIter it;
	gpointer key;
	g_hash_table_iter_init(&it, v->table);
	while (g_hash_table_iter_next(&it, &key, NULL)) {
		VrInode *i = key;
		if (i == &v->root || !i->name || !i->parent || i->nlookup == 0)
			continue;
		if (i->parent != &v->root && !g_hash_table_contains(live, i->parent))
			continue;
		Victim vi = {
			.parent = i->parent,
			.name = g_strdup(i->name),
			.last_used = atomic_load(&i->last_used),
			.parent_used = atomic_load(&i->parent->last_used),
			.dir = S_ISDIR(i->type),
		};
		if (vi.parent != &v->root)
			vi.parent->nlookup++;
		g_array_append_val(victims, vi);
	}
	pthread_mutex_unlock(&v->table_lock);

	qsort(victims->data, victims->len, sizeof(Victim), by_cost);
	size_t take = n > low ? MIN(victims->len, n - low) : 0;
	if (urgent && take == 0)
		take = MIN(victims->len, (size_t)64);
	for (size_t k = 0; k < victims->len; k++) {
		Victim *vi = &g_array_index(victims, Victim, k);
		/* ENOENT (the kernel no longer knows the parent or the name)
		 * and the rest are fine: this is only a hint to drop a cache. */
		if (k < take && !atomic_load(&E.stopping)) {
			fuse_ino_t pid = vi->parent == &v->root ? FUSE_ROOT_ID : (fuse_ino_t)(uintptr_t)vi->parent;
			fuse_lowlevel_notify_inval_entry(v->se, pid, vi->name, strlen(vi->name));
			vr_count_note(VR_NOTE_EVICT_ENTRY);
		}
		vr_inode_forget(vi->parent, 1);
		g_free(vi->name);
	}
	g_array_free(victims, TRUE);
}

static void *evict_main(void *arg)
{
	pthread_mutex_lock(&E.lock);
	while (!E.stop) {
		if (!E.urgent) {
			struct timespec ts;
			clock_gettime(CLOCK_REALTIME, &ts);
			ts.tv_nsec += PERIOD_MS * 1000000L;
			ts.tv_sec += ts.tv_nsec / 1000000000L;
			ts.tv_nsec %= 1000000000L;
			pthread_cond_timedwait(&E.wake, &E.lock, &ts);
		}
		if (E.stop)
			break;
		bool urgent = E.urgent;
		E.urgent = false;
		pthread_mutex_unlock(&E.lock);
		evict_once(urgent);
		pthread_mutex_lock(&E.lock);
		E.rounds++;
		pthread_cond_broadcast(&E.evicted);
	}
	pthread_mutex_unlock(&E.lock);
	return NULL;
}

int vr_evict_start(VrView *v)
{
	E.v = v;
	E.stop = E.urgent = false;
	atomic_store(&E.stopping, false);
	E.rounds = 0;
	size_t high, low;
	evict_marks(fd_limit(), &high, &low);
	atomic_store(&E.high, high);
	/* Signals stay with the FUSE threads (see audit.c). */
	sigset_t all, old;
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	int r = pthread_create(&E.thread, NULL, evict_main, NULL);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	E.started = r == 0;
	return -r;
}

void vr_evict_stop(void)
{
	if (!E.started)
		return;
	atomic_store(&E.stopping, true);
	pthread_mutex_lock(&E.lock);
	E.stop = true;
	pthread_cond_broadcast(&E.wake);
	pthread_cond_broadcast(&E.evicted);
	pthread_mutex_unlock(&E.lock);
	/* A notification waits for the directory lock of a request the
	 * stopped loop will never answer (the kernel lets go only when the
	 * connection goes away): do not wait for it for ever. Left behind,
	 * the thread touches nothing once it sees "stopping", and ends with
	 * the process. */
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	ts.tv_sec += 1;
	if (pthread_timedjoin_np(E.thread, NULL, &ts) != 0)
		pthread_detach(E.thread);
	E.started = false;
}

void vr_evict_kick_if_full(size_t table_size)
{
	if (!E.started || table_size <= atomic_load(&E.high))
		return;
	pthread_mutex_lock(&E.lock);
	E.urgent = true;
	pthread_cond_signal(&E.wake);
	pthread_mutex_unlock(&E.lock);
}

bool vr_evict_retry(int err, int *tries)
{
	return (err == EMFILE || err == ENFILE) && (*tries)++ < 100 && vr_evict_wait_for_room();
}

bool vr_evict_wait_for_room(void)
{
	if (!E.started)
		return false;
	/* Wake the evictor and give the kernel's forgets a moment: the
	 * caller retries its openat, a bounded number of times. */
	pthread_mutex_lock(&E.lock);
	if (E.stop) {
		pthread_mutex_unlock(&E.lock);
		return false;
	}
	uint64_t round = E.rounds;
	E.urgent = true;
	pthread_cond_signal(&E.wake);
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	ts.tv_nsec += 20 * 1000000L;
	ts.tv_sec += ts.tv_nsec / 1000000000L;
	ts.tv_nsec %= 1000000000L;
	while (E.rounds == round && !E.stop)
		if (pthread_cond_timedwait(&E.evicted, &E.lock, &ts) == ETIMEDOUT)
			break;
	pthread_mutex_unlock(&E.lock);
	/* The forgets arrive on other threads after the invalidation. */
	g_usleep(5000);
	return true;
}
