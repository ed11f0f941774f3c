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
 * manage: under memory pressure it drops dentries and sends FORGET itself.
 *
 * A storm of lookups in one directory (fault/scale-readdir-once: 30,000
 * stats in a directory of 200,000) is the hard case. Every invalidation
 * takes the directory's inode lock, which each lookup in it holds shared
 * while the daemon answers, so one notifier and one looker alternate one
 * for one and the table does not shrink: NOTIFIERS threads send a pass's
 * notifications, so that queued writers get several turns per lookup.
 * Worse, a lookup that met EMFILE and waited for room held the very lock
 * the notifications needed (3 s stalls and failed stats in CI). So the
 * daemon keeps a reserve of placeholder fds (dups of "/" opened O_PATH), counted
 * against the high mark: a call that meets EMFILE closes one and tries
 * again at once, and only with the reserve gone does it wait. The evictor
 * refills the reserve when there is room again. (Answering lookups with
 * entry timeout 0 would not help: a /dev/fuse connection keeps expired
 * dentries cached; only virtiofs sets delete_stale, which deletes them at
 * their last dput.) */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include "fusefs/view-private.h"

#define PERIOD_MS 500
#define NOTIFIERS 3
#define RESERVE_MAX 1024

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
	bool joined;                /* stopped and joined: the reserve is ours alone */
	pthread_mutex_t lock;
	pthread_cond_t wake, evicted;
	bool stop, urgent;
	atomic_bool stopping;       /* read between notifications, without the lock */
	uint64_t rounds;            /* guarded by lock: eviction passes done */
	atomic_size_t high;         /* table size that triggers pressure eviction */
	pthread_mutex_t reserve_lock;
	int reserve[RESERVE_MAX];   /* guarded by reserve_lock */
	atomic_size_t n_reserve;    /* written under reserve_lock */
} E = {.lock = PTHREAD_MUTEX_INITIALIZER, .wake = PTHREAD_COND_INITIALIZER,
       .evicted = PTHREAD_COND_INITIALIZER, .reserve_lock = PTHREAD_MUTEX_INITIALIZER};

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

static size_t reserve_want(size_t limit)
{
	return MIN(limit / 16, (size_t)RESERVE_MAX);
}

/* Called by the evictor only, when the table has room below the high mark.
 * The placeholders are duplicates of one O_PATH descriptor: a slot of the
 * table is all they hold, and 1,024 dups and their closes cost 0.6 ms
 * against 2.2 ms for as many opens of "/" and closes (each close of an
 * open file drops its path), on every run's start and end. */
static void reserve_fill(size_t want)
{
	static int placeholder = -1;
	pthread_mutex_lock(&E.reserve_lock);
	if (placeholder < 0)
		placeholder = open("/", O_PATH | O_CLOEXEC);
	size_t n = atomic_load(&E.n_reserve);
	while (n < want && placeholder >= 0) {
		int fd = fcntl(placeholder, F_DUPFD_CLOEXEC, 0);
		if (fd < 0)
			break;
		E.reserve[n++] = fd;
	}
	atomic_store(&E.n_reserve, n);
	pthread_mutex_unlock(&E.reserve_lock);
}

/* Closes placeholders down to keep. */
static void reserve_trim(size_t keep)
{
	pthread_mutex_lock(&E.reserve_lock);
	size_t n = atomic_load(&E.n_reserve);
	while (n > keep)
		close(E.reserve[--n]);
	atomic_store(&E.n_reserve, n);
	pthread_mutex_unlock(&E.reserve_lock);
}

/* Frees one placeholder, and all past what the limit allows now (it may
 * have been lowered: prlimit): true when the caller may try again at once. */
static bool reserve_take(void)
{
	size_t n = atomic_load(&E.n_reserve);
	if (n == 0)
		return false;
	reserve_trim(MIN(n - 1, reserve_want(fd_limit())));
	return true;
}

/* Open files, directory streams and the daemon's own fds need room too:
 * under a small limit inodes may use half of it before the oldest go (down
 * to a quarter); under a large one all but an eighth, down to three
 * quarters, so a tree that fits stays cached: going down to half after an
 * untar beside a 15k-entry tree evicted ~9,000 entries and made the next
 * find 2.5x native (docs/PERFORMANCE.md). Three quarters once let a lookup
 * storm run the daemon out of fds; with the notifier threads and the
 * reserve (top) it no longer does. */
static void evict_marks(size_t limit, size_t *high, size_t *low)
{
	if (limit < 4096) {
		*high = limit / 2;
		*low = limit / 4;
	} else {
		*high = limit - limit / 8;
		*low = limit - limit / 4;
	}
}

typedef struct {
	GArray *victims;
	size_t take;
	atomic_size_t next;
} NotifyJob;

static void notify_one(const Victim *vi)
{
	VrView *v = E.v;
	fuse_ino_t pid = vi->parent == &v->root ? FUSE_ROOT_ID : (fuse_ino_t)(uintptr_t)vi->parent;
	/* ENOENT (the kernel no longer knows the parent or the name) and
	 * the rest are fine: this is only a hint to drop a cache. */
	fuse_lowlevel_notify_inval_entry(v->se, pid, vi->name, strlen(vi->name));
	vr_count_note(VR_NOTE_EVICT_ENTRY);
}

static void *notify_main(void *arg)
{
	NotifyJob *job = arg;
	for (size_t k; (k = atomic_fetch_add(&job->next, 1)) < job->take && !atomic_load(&E.stopping);)
		notify_one(&g_array_index(job->victims, Victim, k));
	return NULL;
}

/* The notifications of one pass, from NOTIFIERS threads (see the top). */
static void notify_all(GArray *victims, size_t take)
{
	NotifyJob job = {.victims = victims, .take = take};
	pthread_t helpers[NOTIFIERS - 1];
	int started = 0;
	if (take > 64) {
		sigset_t all, old;
		sigfillset(&all);
		pthread_sigmask(SIG_SETMASK, &all, &old);
		for (; started < NOTIFIERS - 1; started++)
			if (pthread_create(&helpers[started], NULL, notify_main, &job) != 0)
				break;
		pthread_sigmask(SIG_SETMASK, &old, NULL);
	}
	notify_main(&job);
	for (int t = 0; t < started; t++)
		pthread_join(helpers[t], NULL);
}

/* Inodes hold an fd each, some a second one (create_fd); the reserve's
 * placeholders count too. Under table_lock. */
static size_t fds_held(VrView *v)
{
	return g_hash_table_size(v->table) + atomic_load(&v->create_fds) + atomic_load(&E.n_reserve);
}

static GArray *collect_victims(VrView *v, size_t n)
{
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
	return victims;
}

static void evict_once(bool urgent)
{
	VrView *v = E.v;
	size_t limit = fd_limit();
	size_t high, low;
	evict_marks(limit, &high, &low);
	atomic_store(&E.high, high);
	reserve_trim(reserve_want(limit));

	pthread_mutex_lock(&v->table_lock);
	size_t n = fds_held(v);
	if (!urgent && n <= high) {
		pthread_mutex_unlock(&v->table_lock);
		return;
	}
	GArray *victims = collect_victims(v, n);
	pthread_mutex_unlock(&v->table_lock);

	qsort(victims->data, victims->len, sizeof(Victim), by_cost);
	size_t take = n > low ? MIN(victims->len, n - low) : 0;
	if (urgent && take == 0)
		take = MIN(victims->len, (size_t)64);
	notify_all(victims, take);
	for (size_t k = 0; k < victims->len; k++) {
		Victim *vi = &g_array_index(victims, Victim, k);
		vr_inode_forget(vi->parent, 1);
		g_free(vi->name);
	}
	g_array_free(victims, TRUE);
}

/* After a pass: the reserve is made whole again once the table leaves
 * room for it below the high mark. */
static void reserve_refill(void)
{
	VrView *v = E.v;
	size_t limit = fd_limit(), high, low;
	evict_marks(limit, &high, &low);
	size_t want = reserve_want(limit);
	pthread_mutex_lock(&v->table_lock);
	size_t n = fds_held(v), have = atomic_load(&E.n_reserve);
	pthread_mutex_unlock(&v->table_lock);
	if (have < want && n + (want - have) < high)
		reserve_fill(want);
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
		reserve_refill();
		pthread_mutex_lock(&E.lock);
		E.rounds++;
		pthread_cond_broadcast(&E.evicted);
	}
	pthread_mutex_unlock(&E.lock);
	return NULL;
}

/* The reserve's placeholders and the descriptors a start-up opens fit
 * in the fd table from here on: it is grown once, now, while the daemon
 * has one thread. The kernel doubles the table on demand, and each
 * doubling of a table that threads share waits for an RCU grace period
 * (expand_fdtable → synchronize_rcu): the five doublings up to the 1,024
 * placeholders, made by vr_evict_start with the audit writer running, kept
 * the loop from serving its first request for 35–50 ms
 * (docs/PERFORMANCE.md, "Start-up"). */
void vr_evict_presize(void)
{
	size_t limit = fd_limit();
	size_t want = MIN(reserve_want(limit) + 128, limit - 1);
	int fd = open("/", O_PATH | O_CLOEXEC);
	if (fd < 0)
		return;
	int high = fcntl(fd, F_DUPFD_CLOEXEC, (int)want); /* the lowest free one at or above */
	if (high >= 0)
		close(high);
	close(fd);
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
	reserve_fill(reserve_want(fd_limit()));
	/* Signals stay with the FUSE threads (see audit.c). */
	sigset_t all, old;
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	int err = pthread_create(&E.thread, NULL, evict_main, NULL);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	E.started = err == 0;
	return -err;
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
	else
		E.joined = true;
	E.started = false;
}

/* The placeholders' 1,024 closes come after the daemon said "stopped"
 * (0.3-0.4 ms of the run's end otherwise); a thread left behind may still
 * hold the reserve's lock, and then the process's exit closes them. */
void vr_evict_release(void)
{
	if (E.joined)
		reserve_trim(0);
	E.joined = false;
}

static void kick(void)
{
	pthread_mutex_lock(&E.lock);
	E.urgent = true;
	pthread_cond_signal(&E.wake);
	pthread_mutex_unlock(&E.lock);
}

void vr_evict_kick_if_full(size_t table_size)
{
	if (E.started && table_size + atomic_load(&E.n_reserve) > atomic_load(&E.high))
		kick();
}

bool vr_evict_retry(int err, int *tries)
{
	if ((err != EMFILE && err != ENFILE) || (*tries)++ >= 100)
		return false;
	/* A placeholder gives room at once, without waiting for an evictor
	 * that may need the directory lock this very request holds. */
	if (E.started && reserve_take()) {
		kick();
		return true;
	}
	return vr_evict_wait_for_room();
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
