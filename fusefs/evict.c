/* Cold-inode eviction. Every inode the kernel holds costs the daemon one
 * O_PATH fd, and the kernel keeps inodes as long as their dentries stay
 * cached — on a large tree, until RLIMIT_NOFILE runs out. So a helper
 * thread invalidates entries (fuse_lowlevel_notify_inval_entry) the kernel
 * has not looked up for a while; the kernel drops the unused ones and sends
 * FORGET, which frees the inode and its fd. Notifications go out from this
 * thread only: from a request handler they can wait on a directory lock the
 * kernel holds for that very request.
 *
 * Two triggers: pressure (more inodes than the high mark, evict_marks():
 * the least recently looked-up ones go, down to the low mark; a lookup that
 * hits EMFILE wakes the thread at once) and age (no lookup for IDLE_US,
 * once the table is past the low mark). */
#include <errno.h>
#include <signal.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include "fusefs/view-private.h"

#define PERIOD_MS 500
#define IDLE_US (120 * G_USEC_PER_SEC)
#define IDLE_CHECK_US (10 * G_USEC_PER_SEC)

typedef struct {
	fuse_ino_t parent;
	char *name;
	gint64 last_used;
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
	gint64 last_idle_check;     /* evictor thread only */
} E = {.lock = PTHREAD_MUTEX_INITIALIZER, .wake = PTHREAD_COND_INITIALIZER,
       .evicted = PTHREAD_COND_INITIALIZER};

static int by_age(const void *a, const void *b)
{
	const Victim *x = a, *y = b;
	return (x->last_used > y->last_used) - (x->last_used < y->last_used);
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
 * to a quarter); under a large one all but an eighth (down to half), so a
 * 10k-file tree stays cached under a limit of 20,000. */
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
	gint64 now = g_get_monotonic_time();

	pthread_mutex_lock(&v->table_lock);
	/* Inodes hold an fd each, some a second one (create_fd). */
	size_t n = g_hash_table_size(v->table) + atomic_load(&v->create_fds);
	bool pressure = urgent || n > high;
	/* Age alone evicts only past the low mark: with long cache timeouts
	 * (host-watch.c) the kernel serves a warm tree without lookups, so
	 * "not looked up for a while" does not mean "cold". */
	bool idle_check = now - E.last_idle_check > IDLE_CHECK_US && n > low;
	if (!pressure && !idle_check) {
		pthread_mutex_unlock(&v->table_lock);
		return;
	}
	if (idle_check)
		E.last_idle_check = now;
	GArray *victims = g_array_sized_new(FALSE, FALSE, sizeof(Victim), (guint)MIN(n, 65536));
	GHashTableIter it;
	gpointer key;
	g_hash_table_iter_init(&it, v->table);
	while (g_hash_table_iter_next(&it, &key, NULL)) {
		VrInode *i = key;
		if (i == &v->root || !i->name || !i->parent || i->nlookup == 0)
			continue;
		gint64 used = atomic_load(&i->last_used);
		if (!pressure && now - used < IDLE_US)
			continue;
		Victim vi = {
			.parent = i->parent == &v->root ? FUSE_ROOT_ID : (fuse_ino_t)(uintptr_t)i->parent,
			.name = g_strdup(i->name),
			.last_used = used,
		};
		g_array_append_val(victims, vi);
	}
	pthread_mutex_unlock(&v->table_lock);

	size_t take = victims->len;
	if (pressure) {
		qsort(victims->data, victims->len, sizeof(Victim), by_age);
		take = n > low ? MIN(victims->len, n - low) : 0;
		if (urgent && take == 0)
			take = MIN(victims->len, (size_t)64);
	}
	for (size_t k = 0; k < victims->len; k++) {
		Victim *vi = &g_array_index(victims, Victim, k);
		/* ENOENT (the kernel no longer knows the parent or the name)
		 * and the rest are fine: this is only a hint to drop a cache. */
		if (k < take && !atomic_load(&E.stopping))
			fuse_lowlevel_notify_inval_entry(v->se, vi->parent, vi->name, strlen(vi->name));
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
	E.last_idle_check = g_get_monotonic_time();
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
