/* No-open mode: the kernel opens and closes files without asking the daemon
 * (FUSE_CAP_NO_OPEN_SUPPORT), so a warm `rg` costs no round trip per file.
 * READ, WRITE and their kin then arrive with fh 0, and this cache of
 * handles stands in for open files.
 *
 * Making a handle decides what an OPEN would have: the policy class (a
 * write needs a visible file), that the name the decision was made for
 * still leads to the inode (ESTALE otherwise), secrets by content (masked
 * for reading, refused for writing) and the journal's copy of the original
 * before the first change; the first write through a handle is logged. A handle is
 * used again only while nothing could have changed that decision: the
 * inode's name (relpath_gen), any rename or removal anywhere (the epoch),
 * for reading the file's version (ctime, mtime, size: a rename changes
 * ctime too), and at most MAX_IDLE_US after its last use.
 *
 * What the kernel serves from its page cache never reaches the daemon: the
 * first read of each file in a run does (a fresh mount's cache is empty),
 * and the host watch drops the cache of what the host changes. */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

#include "common/cleanup.h"
#include "fusefs/journal.h"
#include "fusefs/view-private.h"

#define SLOTS 32
#define MAX_IDLE_US G_USEC_PER_SEC

static struct {
	pthread_mutex_t lock;      /* guards slot[] and every handle's refs/last_used */
	VrFile *slot[SLOTS];       /* each holds one reference */
	atomic_uint_fast64_t epoch;
} H = {.lock = PTHREAD_MUTEX_INITIALIZER};

static void handle_free(VrFile *f)
{
	close(f->fd);
	g_free(f->redacted);
	vr_inode_forget(f->inode, 1); /* the pin taken when it was made */
	g_free(f);
}

void vr_handle_put(VrFile *f)
{
	if (!f || !f->cached)
		return;
	pthread_mutex_lock(&H.lock);
	bool last = --f->refs == 0;
	pthread_mutex_unlock(&H.lock);
	if (last)
		handle_free(f);
}

static bool same_version(const VrFile *f, const struct stat *st)
{
	return st->st_size == f->size && st->st_ctim.tv_sec == f->ctime.tv_sec &&
	       st->st_ctim.tv_nsec == f->ctime.tv_nsec && st->st_mtim.tv_sec == f->mtime.tv_sec &&
	       st->st_mtim.tv_nsec == f->mtime.tv_nsec;
}

static void note_version(VrFile *f, const struct stat *st)
{
	f->size = st->st_size;
	f->ctime = st->st_ctim;
	f->mtime = st->st_mtim;
}

/* Under H.lock: a handle of the cache still good for (inode, write). */
static VrFile *find_locked(VrInode *inode, bool write, gint64 now)
{
	uint64_t epoch = atomic_load(&H.epoch);
	for (int i = 0; i < SLOTS; i++) {
		VrFile *f = H.slot[i];
		if (!f || f->inode != inode || f->writable != write)
			continue;
		if (now - f->last_used > MAX_IDLE_US || f->epoch != epoch ||
		    f->relpath_gen != atomic_load(&inode->relpath_gen))
			continue;
		f->refs++;
		f->last_used = now;
		return f;
	}
	return NULL;
}

/* Drops f from the cache (when it is still there). */
static void evict(VrFile *f)
{
	bool dropped = false;
	pthread_mutex_lock(&H.lock);
	for (int i = 0; i < SLOTS; i++)
		if (H.slot[i] == f) {
			H.slot[i] = NULL;
			dropped = --f->refs == 0;
		}
	pthread_mutex_unlock(&H.lock);
	if (dropped)
		handle_free(f);
}

/* The cache takes a reference to f, in a free slot or in place of the
 * least recently used handle nobody is using. */
static void insert(VrFile *f)
{
	VrFile *old = NULL;
	pthread_mutex_lock(&H.lock);
	int victim = -1;
	for (int i = 0; i < SLOTS; i++) {
		VrFile *s = H.slot[i];
		if (!s) {
			victim = i;
			break;
		}
		if (s->refs == 1 && (victim < 0 || s->last_used < H.slot[victim]->last_used))
			victim = i;
	}
	if (victim >= 0) {
		old = H.slot[victim];
		H.slot[victim] = f;
		f->refs++;
		if (old && --old->refs > 0)
			old = NULL;
	}
	pthread_mutex_unlock(&H.lock);
	if (old)
		handle_free(old);
}

static VrFile *handle_new(VrInode *inode, int fd, bool write, pid_t pid, unsigned gen,
                          uint64_t epoch)
{
	struct stat st;
	if (fstat(fd, &st) < 0)
		memset(&st, 0, sizeof st);
	VrFile *f = g_new0(VrFile, 1);
	f->fd = fd;
	f->inode = inode;
	vr_inode_pin(inode);
	f->pid = pid;
	f->writable = write;
	f->cached = true;
	f->refs = 1;
	f->relpath_gen = gen;
	f->epoch = epoch;
	f->last_used = g_get_monotonic_time();
	note_version(f, &st);
	return f;
}

/* The name the decision was made for no longer leads to the inode, and
 * that is no sign of a move on the host (ESTALE): the file was removed (a
 * file open when it is unlinked stays usable, as on the host), or one of
 * the names of a hard-linked file was removed through the view (its class
 * is the strictest of all its names, hardlinks.c). A directory on the path
 * that the daemon may not search (vr_inode_name_state: -EACCES) leaves the
 * decision as it stands too. */
static bool name_loss_harmless(VrInode *inode)
{
	struct stat st;
	if (atomic_load(&inode->name_removed))
		return true;
	return fstatat(inode->fd, "", &st, AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW) == 0 && st.st_nlink == 0;
}

/* CREATE's fd (ops-file.c) lives until the inode is forgotten (the kernel
 * forgets no inode a file is open on); the evictor counts it. Only when
 * needed: the access the creator asked for, which the mode would not give
 * again. */
void vr_handle_keep_create_fd(VrInode *inode, int fd, mode_t mode, int flags)
{
	int acc = flags & O_ACCMODE;
	bool reopen_fails = ((acc == O_WRONLY || acc == O_RDWR) && !(mode & S_IWUSR)) ||
	                    ((acc == O_RDONLY || acc == O_RDWR) && !(mode & S_IRUSR));
	int none = -1;
	/* pwrite at the offsets the kernel sends, not at the end. */
	if (reopen_fails && fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_APPEND) == 0 &&
	    atomic_compare_exchange_strong(&inode->create_fd, &none, fd)) {
		atomic_fetch_add(&vr_view->create_fds, 1);
		return;
	}
	close(fd);
}

void vr_handle_adopt_created(fuse_req_t req, VrInode *inode, int fd, int flags)
{
	int acc = flags & O_ACCMODE;
	if (acc != O_WRONLY && acc != O_RDWR)
		return;
	vr_cleanup_fd int hfd = fcntl(fd, F_DUPFD_CLOEXEC, 3);
	if (hfd < 0)
		return;
	/* pwrite at the offsets the kernel sends, not at the end (the flag
	 * belongs to the open file, which the creator's fd shares). */
	int fl = fcntl(hfd, F_GETFL);
	if (fl < 0 || ((fl & O_APPEND) && fcntl(hfd, F_SETFL, fl & ~O_APPEND) < 0))
		return;
	VrFile *f = handle_new(inode, vr_steal_fd(&hfd), true, fuse_req_ctx(req)->pid,
	                       atomic_load(&inode->relpath_gen), atomic_load(&H.epoch));
	/* Made at a key path (vr_keyfile_created): its writes are unmasked
	 * through the masked image, as any write handle's of a key file. */
	if (vr_keyfile_attach(req, f) < 0) {
		vr_handle_put(f);
		return;
	}
	insert(f);
	vr_handle_put(f);
}

/* The fd the file was created with (vr_handle_keep_create_fd), when it
 * gives the access asked for: a copy, or -1 with errno EACCES. */
static int creator_fd(VrInode *inode, bool write)
{
	int cfd = atomic_load(&inode->create_fd);
	int acc = cfd >= 0 ? fcntl(cfd, F_GETFL) & O_ACCMODE : -1;
	if (acc == O_RDWR || acc == (write ? O_WRONLY : O_RDONLY))
		return fcntl(cfd, F_DUPFD_CLOEXEC, 3);
	errno = EACCES;
	return -1;
}

/* What vr_ll_open decides in open mode, for a handle. */
static VrFile *make(fuse_req_t req, VrInode *inode, bool write)
{
	const char *op = write ? "write" : "read";
	/* Taken before the checks: a rename that races with them makes the
	 * handle stale at once. */
	unsigned gen = atomic_load(&inode->relpath_gen);
	uint64_t epoch = atomic_load(&H.epoch);
	VrDecision d = vr_inode_decision(inode);
	g_autofree char *rel = vr_inode_relpath(inode);

	if (d.cls == VR_CLASS_HIDE) {
		vr_refuse(req, op, rel, d, ENOENT);
		return NULL;
	}
	if (!S_ISREG(inode->type)) {
		fuse_reply_err(req, EBADF);
		return NULL;
	}
	if (write && d.cls != VR_CLASS_VISIBLE) {
		vr_refuse(req, op, rel, d, EACCES);
		return NULL;
	}
	if (vr_inode_name_state(inode) == 0 && !name_loss_harmless(inode)) {
		fuse_reply_err(req, ESTALE);
		return NULL;
	}
	bool masked = false;
	if (vr_content_scan_applies(inode, d) &&
	    vr_content_scan_check(req, inode, rel) == VR_SCAN_HIT) {
		if (write || vr_view->opts->scan_mode == VR_VIEW_SCAN_REFUSE) {
			vr_content_scan_refuse(req, op, rel);
			return NULL;
		}
		masked = true;
	}
	if (write)
		vr_journal_before_modify(inode);
	char proc[64];
	vr_proc_path(proc, inode->fd);
	int fd = open(proc, (write ? O_WRONLY : O_RDONLY) | O_CLOEXEC | O_NOCTTY);
	for (int tries = 0; fd < 0 && vr_evict_retry(errno, &tries);)
		fd = open(proc, (write ? O_WRONLY : O_RDONLY) | O_CLOEXEC | O_NOCTTY);
	if (fd < 0 && errno == EACCES)
		fd = creator_fd(inode, write);
	if (fd < 0) {
		int err = errno;
		if (write)
			vr_audit_req(req, VR_AUDIT_WRITES, op, rel, vr_errno_name(err), NULL, NULL);
		fuse_reply_err(req, err);
		return NULL;
	}
	VrFile *f = handle_new(inode, fd, write, fuse_req_ctx(req)->pid, gen, epoch);
	int kr = vr_keyfile_attach(req, f); /* a key file: its masked image */
	if (kr < 0) {
		vr_handle_put(f);
		fuse_reply_err(req, -kr);
		return NULL;
	}
	if (!f->keyfile && (d.cls == VR_CLASS_REDACT || masked)) {
		int r = masked ? vr_content_scan_load_masked(fd, rel, &f->redacted, &f->redacted_len)
		               : vr_redact_load(fd, &f->redacted, &f->redacted_len);
		if (r < 0) {
			vr_handle_put(f);
			vr_refuse(req, op, rel, d, -r);
			return NULL;
		}
	}
	return f;
}

void vr_handle_wrote(fuse_req_t req, VrFile *f)
{
	if (!f->cached || atomic_load(&f->wrote) || atomic_exchange(&f->wrote, true))
		return;
	if (!vr_audit_wants(VR_AUDIT_WRITES))
		return;
	g_autofree char *rel = vr_inode_relpath(f->inode);
	vr_audit_req(req, VR_AUDIT_WRITES, "write", rel, "ok", NULL, NULL);
}

VrFile *vr_handle_get(fuse_req_t req, VrInode *inode, bool write)
{
	gint64 now = g_get_monotonic_time();
	pthread_mutex_lock(&H.lock);
	VrFile *f = find_locked(inode, write, now);
	pthread_mutex_unlock(&H.lock);
	if (f) {
		/* A writer changes the version itself; a reader's masked copy
		 * and checks hold for the version they were made for. */
		struct stat st;
		if (write || (fstat(f->fd, &st) == 0 && same_version(f, &st)))
			return f;
		evict(f);
		vr_handle_put(f);
	}
	f = make(req, inode, write);
	if (f)
		insert(f);
	return f;
}

/* Drops every handle nobody is using now (others go at their last put):
 * a removed file's blocks are not kept alive by the cache. */
static void drop_idle(void)
{
	VrFile *gone[SLOTS];
	int n = 0;
	pthread_mutex_lock(&H.lock);
	for (int i = 0; i < SLOTS; i++) {
		VrFile *f = H.slot[i];
		if (!f)
			continue;
		H.slot[i] = NULL;
		if (--f->refs == 0)
			gone[n++] = f;
	}
	pthread_mutex_unlock(&H.lock);
	for (int i = 0; i < n; i++)
		handle_free(gone[i]);
}

void vr_handles_name_changed(void)
{
	atomic_fetch_add(&H.epoch, 1);
	drop_idle();
}

void vr_handles_close_all(void)
{
	drop_idle();
}
