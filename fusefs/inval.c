/* Pages the kernel may hold that the host does not have. A WRITE the view
 * refuses (policy, a secret found by content, a stale name) or that fails
 * on the host still leaves its bytes in the kernel's page cache when they
 * came from there: a shared mmap's dirty page written back, or a write(2)
 * into a cached page. Without writeback caching nothing else drops them,
 * so the sandbox would read back what was never written. After each such
 * failure the inode's pages are invalidated — from this helper thread:
 * fuse_lowlevel_notify_inval_inode from the handler itself would wait for
 * the page lock the kernel holds while it waits for that very reply.
 *
 * The inode is pinned while queued (vr_inode_pin), so its node id stays
 * the kernel's until the notification is out. */
#include <signal.h>

#include "fusefs/view-private.h"

static struct {
	VrView *v;
	pthread_t thread;
	bool started, stop;
	atomic_bool stopping;
	pthread_mutex_t lock;   /* guards queue and stop */
	pthread_cond_t wake;
	GPtrArray *queue;       /* VrInode*, each pinned once */
} I = {.lock = PTHREAD_MUTEX_INITIALIZER, .wake = PTHREAD_COND_INITIALIZER};

static fuse_ino_t node_id(VrInode *i)
{
	return i == &I.v->root ? FUSE_ROOT_ID : (fuse_ino_t)(uintptr_t)i;
}

static void *inval_main(void *arg)
{
	(void)arg;
	pthread_mutex_lock(&I.lock);
	for (;;) {
		while (!I.stop && I.queue->len == 0)
			pthread_cond_wait(&I.wake, &I.lock);
		if (I.stop)
			break;
		GPtrArray *batch = I.queue;
		I.queue = g_ptr_array_new();
		pthread_mutex_unlock(&I.lock);
		for (guint k = 0; k < batch->len; k++) {
			VrInode *inode = batch->pdata[k];
			/* ENOENT: the kernel forgot the inode, and its pages. */
			if (!atomic_load(&I.stopping)) {
				fuse_lowlevel_notify_inval_inode(I.v->se, node_id(inode), 0, 0);
				vr_count_note(VR_NOTE_PAGES_DROPPED);
			}
			vr_inode_forget(inode, 1);
		}
		g_ptr_array_unref(batch);
		pthread_mutex_lock(&I.lock);
	}
	pthread_mutex_unlock(&I.lock);
	return NULL;
}

void vr_inval_pages(VrInode *inode)
{
	pthread_mutex_lock(&I.lock);
	if (!I.started || I.stop) {
		pthread_mutex_unlock(&I.lock);
		return;
	}
	vr_inode_pin(inode);
	g_ptr_array_add(I.queue, inode);
	pthread_cond_signal(&I.wake);
	pthread_mutex_unlock(&I.lock);
}

int vr_inval_start(VrView *v)
{
	I.v = v;
	I.stop = false;
	atomic_store(&I.stopping, false);
	I.queue = g_ptr_array_new();
	/* Signals stay with the FUSE threads (see audit.c). */
	sigset_t all, old;
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	int err = pthread_create(&I.thread, NULL, inval_main, NULL); /* an errno, not -1 */
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	pthread_mutex_lock(&I.lock);
	I.started = err == 0;
	pthread_mutex_unlock(&I.lock);
	return -err;
}

void vr_inval_stop(void)
{
	pthread_mutex_lock(&I.lock);
	bool started = I.started;
	I.stop = true;
	I.started = false;
	pthread_cond_broadcast(&I.wake);
	pthread_mutex_unlock(&I.lock);
	atomic_store(&I.stopping, true);
	if (started) {
		/* As evict.c: a notification may wait on a lock of a request
		 * the stopped loop never answers; do not wait for ever. */
		struct timespec ts;
		clock_gettime(CLOCK_REALTIME, &ts);
		ts.tv_sec += 1;
		if (pthread_timedjoin_np(I.thread, NULL, &ts) != 0) {
			pthread_detach(I.thread);
			return; /* it may still use the queue */
		}
	}
	/* What was never sent gives its pins back. */
	if (I.queue) {
		for (guint k = 0; k < I.queue->len; k++)
			vr_inode_forget(I.queue->pdata[k], 1);
		g_clear_pointer(&I.queue, g_ptr_array_unref);
	}
}
