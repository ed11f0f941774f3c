/* Keys in files (docs/network.md, "Keys in files"): a harness's credential
 * file that the run's profile declares is served with every real value it
 * holds replaced by its sentinel (policy/keymask.h), whatever way the agent
 * reads it: every open file and every no-open handle of a key file gets a
 * masked in-memory copy (f->redacted) and never a raw host fd to read from,
 * so read, mmap, splice, sendfile, copy_file_range (EXDEV: the kernel falls
 * back to reads) and a descriptor kept across a write all see sentinels.
 *
 * A write applies to the masked image of the file as it is on the host now;
 * the host gets that image with every sentinel turned back into its real
 * value (a concealed refresh token stays the host's real one), so the
 * host's harness keeps working after the run. Only "original" key file
 * inodes are unmasked that way: those the daemon found at its start and
 * those it made itself. An inode of the agent's that comes to a key file's
 * name may have raw descriptors open from before (open mode), through
 * which a real value written into it would be read; so a rename onto a key
 * path (a harness's write-a-copy-and-rename save) never moves the agent's
 * file there: the daemon reads it once (at most 1 MiB, O_NOFOLLOW), unmasks
 * it, writes that into a new file of its own (the config gate's hidden
 * name, fsynced, owned and moded like the key file it replaces) and renames that over the key
 * path; the agent's file is removed as the rename would have taken its
 * name, and the kernel's node for it is rebound to the new file
 * (vr_inode_rebind, as git-gate.c does). A view that keeps a journal
 * records the rename (the replaced key file kept for undo). An exchange that would put the
 * agent's file at a key path is refused (EXDEV), and so is a hard link of
 * it there (EACCES): it would keep its other, raw, name. A regular file
 * the daemon creates at a key path (O_CREAT, mknod: after the agent
 * removed the key file) is an original key file from its creation
 * (vr_keyfile_created): the creator's descriptor is served its masked
 * image like any open. Nothing but a regular file may come to a key path
 * (a symlink there or above one, a directory, a fifo: EACCES), and a
 * directory moved above one that would bring the agent's file there is
 * EXDEV (mv copies it instead). Any other inode that reaches a key path
 * (a host file) is "adopted": masked, but written as it is (and refused
 * while its content is unknown). A key file inode left with no name is forgotten when
 * its VrInode goes (vr_keyfile_inode_closing): a new file that gets its
 * number is not a key file.
 *
 * A key file the host changed behind the view (its harness refreshed the
 * token in place or put a new file at its name: a value the daemon does
 * not know) is refused (EACCES, audited) rather than served: the daemon
 * knows, by hash, the contents it started with and what it wrote itself.
 * A rename over a key file the host changed is refused the same way (the
 * host's refreshed token would be lost).
 *
 * The values arrive on a sealed memfd (opts->keyfile_fd); a daemon that
 * holds them is not dumpable and dumps no core. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <unistd.h>

#include "common/cleanup.h"
#include "common/fd-util.h"
#include "common/log.h"
#include "common/resolve.h"
#include "fusefs/journal.h"
#include "fusefs/view-private.h"
#include "policy/keymask.h"

#define KEYFILE_MAX (1u << 20)

static struct {
	pthread_mutex_t lock; /* guards everything below, and serialises the writes */
	VrKeyMask *mask;      /* NULL: this view serves no key file */
	GHashTable *original; /* (dev, ino) found at a key path at start: unmasked on write */
	GHashTable *adopted;  /* (dev, ino) reached by a key path since: masked only */
	GHashTable *known;    /* SHA-256 of the host contents the daemon knows */
} K = {.lock = PTHREAD_MUTEX_INITIALIZER};

static GBytes *devino(dev_t dev, ino_t ino)
{
	struct { dev_t dev; ino_t ino; } key = {dev, ino};
	return g_bytes_new(&key, sizeof key);
}

static char *digest(const char *buf, size_t len)
{
	return g_compute_checksum_for_data(G_CHECKSUM_SHA256, (const guchar *)buf, len);
}

/* The whole host file through a read-only fd of our own (the caller's may
 * be write-only). */
static int load_raw(VrInode *inode, char **ret_buf, size_t *ret_len)
{
	char proc[64];
	vr_proc_path(proc, inode->fd);
	vr_cleanup_fd int fd = open(proc, O_RDONLY | O_CLOEXEC | O_NOCTTY);
	if (fd < 0)
		return -errno;
	return vr_file_load(fd, KEYFILE_MAX, ret_buf, ret_len);
}

static void buf_free(char *buf, size_t len)
{
	if (buf)
		explicit_bzero(buf, len);
	g_free(buf);
}

/* At start, each key path that names a regular file: its inode is an
 * original key file, its content known. */
static void note_original(VrView *v, const char *rel)
{
	vr_cleanup_fd int fd = openat(v->root.fd, rel, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY);
	struct stat st;
	if (fd < 0 || fstat(fd, &st) < 0 || !S_ISREG(st.st_mode))
		return;
	char *buf = NULL;
	size_t len = 0;
	if (vr_file_load(fd, KEYFILE_MAX, &buf, &len) == 0) {
		g_hash_table_add(K.known, digest(buf, len));
		buf_free(buf, len);
	}
	vr_clear_fd(&fd);
	g_hash_table_add(K.original, devino(st.st_dev, st.st_ino));
}

int vr_keyfile_init(VrView *v)
{
	int fd = v->opts->keyfile_fd;
	if (fd < 0)
		return 0;
	/* No core from now on; not dumpable from the first open (seal). */
	struct rlimit no_core = {0, 0};
	if (setrlimit(RLIMIT_CORE, &no_core) < 0)
		return vr_log_errno(errno, "the view of key files cannot turn core dumps off");
	int r = 0;
	if (lseek(fd, 0, SEEK_SET) < 0)
		r = -errno;
	VrKeyMask *m = r < 0 ? NULL : vr_keymask_read(fd, &r);
	if (!m)
		return vr_log_errno(-r, "cannot read the key files' values");
	K.mask = m;
	K.original = g_hash_table_new_full(g_bytes_hash, g_bytes_equal, (GDestroyNotify)g_bytes_unref, NULL);
	K.adopted = g_hash_table_new_full(g_bytes_hash, g_bytes_equal, (GDestroyNotify)g_bytes_unref, NULL);
	K.known = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
	g_hash_table_add(K.known, digest("", 0));
	const GPtrArray *paths = vr_keymask_paths(m);
	for (guint i = 0; i < paths->len; i++)
		note_original(v, paths->pdata[i]);
	return 0;
}

/* Not dumpable from the first key file served on: /proc/PID/mem, environ
 * and fd of this process are root's only then. Not earlier: the supervisor
 * clones our mount through /proc/PID/ns after we said "mounted", and only
 * the sandbox, which starts after that, opens files; until then the values
 * here are no more than what the user's own files hold. */
static void seal(void)
{
	static atomic_bool sealed;
	if (!atomic_load(&sealed) && !atomic_exchange(&sealed, true) && prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) < 0)
		vr_log_errno(errno, "the view of key files cannot make itself undumpable");
}

void vr_keyfile_free(void)
{
	pthread_mutex_lock(&K.lock);
	g_clear_pointer(&K.mask, vr_keymask_free);
	g_clear_pointer(&K.original, g_hash_table_unref);
	g_clear_pointer(&K.adopted, g_hash_table_unref);
	g_clear_pointer(&K.known, g_hash_table_unref);
	pthread_mutex_unlock(&K.lock);
}

void vr_keyfile_note(dev_t dev, ino_t ino, const char *relpath)
{
	if (!K.mask || !relpath || !vr_keymask_has_path(K.mask, relpath))
		return;
	g_autoptr(GBytes) k = devino(dev, ino);
	pthread_mutex_lock(&K.lock);
	if (K.adopted && !g_hash_table_contains(K.original, k))
		g_hash_table_add(K.adopted, g_bytes_ref(k));
	pthread_mutex_unlock(&K.lock);
}

void vr_keyfile_renamed(VrInode *newparent, const char *newname, const char *newpath)
{
	if (!K.mask || !vr_keymask_has_path(K.mask, newpath))
		return;
	/* The agent's own file, renamed onto a key file's name through the
	 * view: what it holds now is known (it came from the agent, who
	 * holds no real value). Changed later behind the view (a raw fd of
	 * the agent's from before), it no longer matches: refused. */
	vr_cleanup_fd int fd = openat(newparent->fd, newname, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY);
	struct stat st;
	char *buf = NULL;
	size_t len = 0;
	if (fd >= 0 && fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && vr_file_load(fd, KEYFILE_MAX, &buf, &len) == 0) {
		vr_keyfile_note(st.st_dev, st.st_ino, newpath);
		pthread_mutex_lock(&K.lock);
		g_hash_table_add(K.known, digest(buf, len));
		pthread_mutex_unlock(&K.lock);
		buf_free(buf, len);
	}
}

void vr_keyfile_inode_closing(int fd)
{
	/* A key file with no name left: its inode number may soon be another
	 * file's, which must not count as one (what it held is masked in
	 * every file still open on it). */
	struct stat st;
	if (!K.mask || fstat(fd, &st) < 0 || st.st_nlink > 0)
		return;
	g_autoptr(GBytes) k = devino(st.st_dev, st.st_ino);
	pthread_mutex_lock(&K.lock);
	if (K.original) {
		g_hash_table_remove(K.original, k);
		g_hash_table_remove(K.adopted, k);
	}
	pthread_mutex_unlock(&K.lock);
}

/* 2: an original key file, 1: adopted, 0: none. */
static int kind_of(VrInode *inode)
{
	if (!K.mask)
		return 0;
	seal();
	g_autofree char *rel = vr_inode_relpath(inode);
	vr_keyfile_note(inode->dev, inode->ino, rel);
	g_autoptr(GBytes) k = devino(inode->dev, inode->ino);
	pthread_mutex_lock(&K.lock);
	int kind = !K.original ? 0 : g_hash_table_contains(K.original, k) ? 2 : g_hash_table_contains(K.adopted, k);
	pthread_mutex_unlock(&K.lock);
	return kind;
}

bool vr_keyfile_is(VrInode *inode)
{
	return S_ISREG(inode->type) && kind_of(inode) > 0;
}

/* Under K.lock: the masked image of the host file now, into *ret (g_free
 * with buf_free). -EACCES when it holds what the daemon did not know: the
 * host changed it, or put another file at its name. */
static int image_locked(VrInode *inode, int kind, char **ret_buf, size_t *ret_len)
{
	int r = load_raw(inode, ret_buf, ret_len);
	if (r < 0)
		return r;
	g_autofree char *h = digest(*ret_buf, *ret_len);
	if (!g_hash_table_contains(K.known, h)) {
		buf_free(*ret_buf, *ret_len);
		*ret_buf = NULL;
		return -EACCES;
	}
	vr_keymask_mask(K.mask, *ret_buf, *ret_len);
	return 0;
}

int vr_keyfile_attach(fuse_req_t req, VrFile *f)
{
	int kind = S_ISREG(f->inode->type) ? kind_of(f->inode) : 0;
	if (!kind)
		return 0;
	pthread_mutex_lock(&K.lock);
	g_free(f->redacted);
	f->redacted = NULL;
	int r = image_locked(f->inode, kind, &f->redacted, &f->redacted_len);
	pthread_mutex_unlock(&K.lock);
	/* A redact rule's masking still applies, on top. */
	if (r == 0 && vr_inode_decision(f->inode).cls == VR_CLASS_REDACT)
		vr_redact_mask(f->redacted, f->redacted_len);
	f->keyfile = r == 0;
	if (r == -EACCES) {
		g_autofree char *rel = vr_inode_relpath(f->inode);
		vr_audit_req(req, VR_AUDIT_DENIED, "open", rel, "EACCES", NULL, NULL);
		vr_warning("key file %s changed outside the view (a value the run does not know): refused; "
		           "start a new run", rel);
	}
	return r;
}

/* Under K.lock: IMAGE (masked) becomes the host file: unmasked for an
 * original key file, as it is otherwise; its content is known from now. */
static int store_locked(VrInode *inode, int kind, const char *image, size_t len)
{
	char proc[64];
	vr_proc_path(proc, inode->fd);
	int fd = open(proc, O_WRONLY | O_CLOEXEC | O_NOCTTY);
	if (fd < 0)
		return -errno;
	char *host = g_memdup2(image, len ? len : 1);
	if (kind == 2)
		vr_keymask_unmask(K.mask, host, len);
	vr_change_begin(inode);
	ssize_t n = len ? pwrite(fd, host, len, 0) : 0;
	int r = n < 0 ? -errno : (size_t)n != len ? -EIO : ftruncate(fd, (off_t)len) < 0 ? -errno : 0;
	vr_change_end(inode, true);
	close(fd);
	if (r == 0)
		g_hash_table_add(K.known, digest(host, len));
	buf_free(host, len);
	return r;
}

/* Under K.lock: the host file with [off, off+len) of the image replaced by
 * data (NULL: a truncation to off), the image kept in f when given. */
static int change_locked(VrInode *inode, int kind, VrFile *f, const char *data, size_t len, off_t off)
{
	char *img = NULL;
	size_t n = 0;
	int r = image_locked(inode, kind, &img, &n);
	if (r < 0)
		return r;
	size_t end = data ? MAX(n, (size_t)off + len) : (size_t)off;
	if (end > KEYFILE_MAX) {
		buf_free(img, n);
		return -EFBIG;
	}
	img = g_realloc(img, end + 1);
	if (end > n)
		memset(img + n, 0, end - n);
	if (data)
		memcpy(img + off, data, len);
	r = store_locked(inode, kind, img, end);
	if (r == 0 && f) {
		buf_free(f->redacted, f->redacted_len);
		f->redacted = g_memdup2(img, end ? end : 1);
		f->redacted_len = end;
	}
	buf_free(img, end);
	return r;
}

ssize_t vr_keyfile_write(VrFile *f, struct fuse_bufvec *in, off_t off)
{
	size_t len = fuse_buf_size(in);
	if (off < 0 || (uint64_t)off + len > KEYFILE_MAX)
		return -EFBIG;
	char *data = g_malloc(len ? len : 1);
	struct fuse_bufvec mem = FUSE_BUFVEC_INIT(len);
	mem.buf[0].mem = data;
	ssize_t got = fuse_buf_copy(&mem, in, 0);
	int r = got < 0 ? (int)got : 0;
	if (r == 0) {
		int kind = kind_of(f->inode);
		pthread_mutex_lock(&K.lock);
		r = change_locked(f->inode, kind, f, data, (size_t)got, off);
		pthread_mutex_unlock(&K.lock);
	}
	buf_free(data, len);
	if (r < 0)
		return r;
	atomic_fetch_add(&f->bytes_written, (uint64_t)got);
	return got;
}

int vr_keyfile_truncate(VrInode *inode, off_t size)
{
	if (size < 0 || (uint64_t)size > KEYFILE_MAX)
		return -EFBIG;
	int kind = kind_of(inode);
	pthread_mutex_lock(&K.lock);
	int r = change_locked(inode, kind, NULL, NULL, 0, size);
	pthread_mutex_unlock(&K.lock);
	return r;
}

/* --- a file put at a key file's name --- */

/* REL is a proper ancestor directory of a key path: the part below it
 * (borrowed from the mask's list), or NULL. Each call gives the next one
 * after *I. */
static const char *below_next(const char *rel, guint *i)
{
	const GPtrArray *paths = vr_keymask_paths(K.mask);
	size_t n = strlen(rel);
	for (; *i < paths->len; (*i)++) {
		const char *k = paths->pdata[*i];
		if (strncmp(k, rel, n) == 0 && k[n] == '/' && k[n + 1]) {
			(*i)++;
			return k + n + 1;
		}
	}
	return NULL;
}

static bool is_key_ancestor(const char *rel)
{
	guint i = 0;
	return rel && below_next(rel, &i) != NULL;
}

bool vr_keyfile_new_name_allowed(fuse_req_t req, const char *op, const char *rel, mode_t type)
{
	/* A key file's name holds a regular file or nothing: a symlink there
	 * (or at a directory above it) would send the host's harness, after
	 * the run, to a file the agent chose; a directory or a special file
	 * there means nothing to a harness. type 0 (link): link_allowed. */
	if (!K.mask || !rel || type == 0 || type == S_IFREG)
		return true;
	if (!vr_keymask_has_path(K.mask, rel) && !(type == S_IFLNK && is_key_ancestor(rel)))
		return true;
	vr_audit_req(req, VR_AUDIT_DENIED, op, rel, "EACCES", NULL, NULL);
	fuse_reply_err(req, EACCES);
	return false;
}

void vr_keyfile_created(int dirfd, const char *name, const char *rel)
{
	/* A file the daemon just made at a key path (O_CREAT|O_EXCL, mknod):
	 * no descriptor of it exists but the one the creator gets, which is
	 * served its masked image like any open of it. So it is a key file
	 * again, as the one the agent removed: what it is given is written to
	 * the host with every whole sentinel turned back into its real value.
	 * It is empty, a content the daemon knows. */
	if (!K.mask || !rel || !vr_keymask_has_path(K.mask, rel))
		return;
	struct stat st;
	if (fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0 || !S_ISREG(st.st_mode) || st.st_nlink != 1 ||
	    st.st_size != 0)
		return;
	g_autoptr(GBytes) k = devino(st.st_dev, st.st_ino);
	pthread_mutex_lock(&K.lock);
	if (K.original) {
		g_hash_table_remove(K.adopted, k);
		g_hash_table_add(K.original, g_bytes_ref(k));
	}
	pthread_mutex_unlock(&K.lock);
}

static bool is_original(dev_t dev, ino_t ino)
{
	g_autoptr(GBytes) k = devino(dev, ino);
	pthread_mutex_lock(&K.lock);
	bool o = K.original && g_hash_table_contains(K.original, k);
	pthread_mutex_unlock(&K.lock);
	return o;
}

static void refuse(fuse_req_t req, const char *op, const char *srel, const char *drel, int err)
{
	vr_audit_req(req, VR_AUDIT_DENIED, op, srel, vr_errno_name(err), NULL, drel);
	fuse_reply_err(req, err);
}

bool vr_keyfile_link_allowed(fuse_req_t req, VrInode *inode, const char *srel, const char *rel)
{
	/* The agent's file would keep its other name, raw: a real value
	 * written in through the key path would be read there. */
	if (!K.mask || !rel || !vr_keymask_has_path(K.mask, rel) || is_original(inode->dev, inode->ino))
		return true;
	refuse(req, "link", srel, rel, EACCES);
	return false;
}

/* The agent's file, once, through an fd of our own: still the file sst
 * describes, regular. */
static int read_source(int dirfd, const char *name, const struct stat *sst, char **ret_buf, size_t *ret_len)
{
	vr_cleanup_fd int fd = openat(dirfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	struct stat st;
	int r = fstat(fd, &st) < 0 ? -errno : 0;
	if (r == 0 && (!S_ISREG(st.st_mode) || !vr_same_file(&st, sst)))
		r = -EBUSY;
	if (r == 0)
		r = vr_file_load(fd, KEYFILE_MAX, ret_buf, ret_len);
	return r;
}

/* Under K.lock: what the key path holds now (*ret_dst, *ret_exists) is
 * known, or not a regular file (the rename itself decides then): -EACCES
 * when the host changed it (what it holds would be lost: a refreshed
 * token). */
static int dest_known_locked(int dirfd, const char *name, struct stat *ret_dst, bool *ret_exists)
{
	*ret_exists = fstatat(dirfd, name, ret_dst, AT_SYMLINK_NOFOLLOW) == 0;
	if (!*ret_exists || !S_ISREG(ret_dst->st_mode))
		return 0;
	vr_cleanup_fd int fd = openat(dirfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	struct stat st;
	char *buf = NULL;
	size_t len = 0;
	int r = fd < 0 ? -errno : fstat(fd, &st) < 0 ? -errno : !vr_same_version(&st, ret_dst) ? -EBUSY : 0;
	if (r == 0)
		r = vr_file_load(fd, KEYFILE_MAX, &buf, &len);
	vr_clear_fd(&fd);
	if (r == 0) {
		g_autofree char *h = digest(buf, len);
		r = g_hash_table_contains(K.known, h) ? 0 : -EACCES;
	}
	buf_free(buf, len);
	return r == -EFBIG ? -EACCES : r;
}

/* Under K.lock: BUF (the agent's file, unmasked in place) written into a
 * new file of the daemon's own, renamed over the key path: an original
 * key file from now on. *ret_made: it. */
static int put_locked(VrInode *p, const char *name, const char *srel, const struct stat *sst,
                      VrInode *np, const char *newname, const char *drel, unsigned flags,
                      char *buf, size_t len, struct stat *ret_made)
{
	struct stat dst, now;
	bool dst_exists;
	int r = dest_known_locked(np->fd, newname, &dst, &dst_exists);
	if (r < 0)
		return r;
	if (dst_exists && (flags & RENAME_NOREPLACE))
		return -EEXIST;
	vr_keymask_unmask(K.mask, buf, len);
	vr_journal_before_rename(p, name, srel, np, newname, drel, flags);
	g_autofree char *tmp = NULL;
	/* Owner and mode of the key file it replaces (a credential file is
	 * 0600; the agent's temp file, under a 022 umask, 0644). */
	r = vr_write_hidden_new(np->fd, buf, len, dst_exists && S_ISREG(dst.st_mode) ? &dst : sst, &tmp, ret_made);
	/* What was checked must still be there: a change on the host
	 * meanwhile is not overwritten. */
	if (r == 0 && (dst_exists ? fstatat(np->fd, newname, &now, AT_SYMLINK_NOFOLLOW) < 0 ||
	                            !vr_same_version(&dst, &now)
	                          : fstatat(np->fd, newname, &now, AT_SYMLINK_NOFOLLOW) == 0))
		r = -EBUSY;
	/* Held across the rename: the replaced file's inode number cannot be
	 * reused before we know whether it still has a name. */
	int old = r == 0 && dst_exists ? openat(np->fd, newname, O_PATH | O_NOFOLLOW | O_CLOEXEC) : -1;
	if (r == 0 && renameat2(np->fd, tmp, np->fd, newname, flags & RENAME_NOREPLACE) < 0)
		r = -errno;
	if (r < 0) {
		if (old >= 0)
			close(old);
		if (tmp)
			unlinkat(np->fd, tmp, 0);
		return r;
	}
	g_hash_table_add(K.known, digest(buf, len));
	g_hash_table_add(K.original, devino(ret_made->st_dev, ret_made->st_ino));
	/* The replaced key file, gone (no hard link, no journal's copy): its
	 * number may soon be another file's, which must not count as one. */
	if (old >= 0 && fstat(old, &now) == 0 && now.st_nlink == 0) {
		g_autoptr(GBytes) k = devino(now.st_dev, now.st_ino);
		g_hash_table_remove(K.original, k);
		g_hash_table_remove(K.adopted, k);
	}
	if (old >= 0)
		close(old);
	return 0;
}

/* The agent's regular file renamed onto a key path. It may hold raw
 * descriptors of that file from before (open mode), so no real value may
 * ever be written into it: the daemon reads it once, unmasks that, writes
 * it into a file of its own and renames that into place; the agent's file
 * is removed, as the rename would have taken its name. The kernel's node
 * for it, which the kernel moves to the key path, is rebound to the new
 * file (vr_inode_rebind, as git-gate.c does). */
static void rewrite(fuse_req_t req, VrInode *p, const char *name, const char *srel, const struct stat *sst,
                    VrInode *np, const char *newname, const char *drel, VrDecision dd, unsigned flags)
{
	VR_CREATING(np);
	char *buf = NULL;
	size_t len = 0;
	struct stat made, now;
	int r = read_source(p->fd, name, sst, &buf, &len);
	if (r == 0) {
		pthread_mutex_lock(&K.lock);
		r = put_locked(p, name, srel, sst, np, newname, drel, flags, buf, len, &made);
		pthread_mutex_unlock(&K.lock);
	}
	buf_free(buf, len);
	if (r == -EACCES) {
		vr_warning("key file %s changed outside the view (a value the run does not know): "
		           "not replaced; start a new run", drel);
		refuse(req, "rename", srel, drel, EACCES);
		return;
	}
	if (r < 0) {
		vr_audit_req(req, VR_AUDIT_WRITES, "rename", srel, vr_errno_name(-r), NULL, drel);
		fuse_reply_err(req, -r);
		return;
	}
	if (fstatat(p->fd, name, &now, AT_SYMLINK_NOFOLLOW) == 0 && vr_same_file(sst, &now))
		unlinkat(p->fd, name, 0);
	vr_handles_name_changed();
	vr_watch_name_removed(p, name);
	vr_rebind_to_written(sst, &made, srel, drel, dd, np, newname);
	vr_audit_req(req, VR_AUDIT_WRITES, "rename", srel, "ok", NULL, drel);
	fuse_reply_err(req, 0);
}

/* The directory NAME of P, renamed to DREL (a proper ancestor of key
 * paths): EXDEV when it holds, at a key path's place below it, anything
 * but a key file of the run (the agent's own file would reach the key
 * path as it is, with descriptors of it from before), or a symlink on the
 * way there; 0 otherwise. */
static int dir_brings(VrInode *p, const char *name, const char *drel)
{
	vr_cleanup_fd int top = openat(p->fd, name, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (top < 0)
		return 0; /* gone: the rename itself says so */
	guint i = 0;
	for (const char *sub; (sub = below_next(drel, &i));) {
		vr_cleanup_fd int at = -1;
		const char *last;
		int r = vr_resolve_parent(top, sub, &at, &last);
		if (r == -ELOOP)
			return EXDEV; /* a symlink on the way */
		if (r == -ENOENT || r == -ENOTDIR)
			continue; /* nothing there, or a file in the way: no key path reached */
		if (r < 0)
			return EXDEV; /* cannot tell (out of fds…): refuse, mv copies instead */
		struct stat st;
		if (fstatat(at, last, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
		    (!S_ISREG(st.st_mode) || !is_original(st.st_dev, st.st_ino)))
			return EXDEV;
	}
	return 0;
}

bool vr_keyfile_rename(fuse_req_t req, VrInode *p, const char *name, const char *srel,
                       const struct stat *sst, VrInode *np, const char *newname, const char *drel,
                       VrDecision dd, unsigned flags)
{
	if (!K.mask)
		return false;
	bool to_key = vr_keymask_has_path(K.mask, drel), from_key = vr_keymask_has_path(K.mask, srel);
	struct stat dst;
	bool dst_exists = fstatat(np->fd, newname, &dst, AT_SYMLINK_NOFOLLOW) == 0;
	if (flags & RENAME_EXCHANGE) {
		/* Each name gets the other's inode: a key path only a key file
		 * found at start (its content then is the host's, unmasked).
		 * A directory above a key path swapped: what comes to the key
		 * path is not looked at, refused the same way. */
		if (dst_exists && ((to_key && !is_original(sst->st_dev, sst->st_ino)) ||
		                   (from_key && !is_original(dst.st_dev, dst.st_ino)) ||
		                   is_key_ancestor(srel) || is_key_ancestor(drel))) {
			refuse(req, "rename", srel, drel, EXDEV);
			return true;
		}
		return false;
	}
	if (to_key && !S_ISREG(sst->st_mode)) {
		/* A directory, a symlink, a special file at a key file's name:
		 * see vr_keyfile_new_name_allowed. */
		refuse(req, "rename", srel, drel, EACCES);
		return true;
	}
	if (!to_key && is_key_ancestor(drel)) {
		int r = S_ISLNK(sst->st_mode) ? EACCES : S_ISDIR(sst->st_mode) ? dir_brings(p, name, drel) : 0;
		if (r) {
			/* EXDEV: mv copies the directory instead, and each file it
			 * creates at a key path is a key file (vr_keyfile_created). */
			refuse(req, "rename", srel, drel, r);
			return true;
		}
		return false;
	}
	if (!to_key || !S_ISREG(sst->st_mode) || is_original(sst->st_dev, sst->st_ino) ||
	    (dst_exists && vr_same_file(sst, &dst)))
		return false;
	rewrite(req, p, name, srel, sst, np, newname, drel, dd, flags);
	return true;
}
