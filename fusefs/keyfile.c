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
 * host's harness keeps working after the run. Only the key file inodes the
 * daemon found at its start are unmasked that way: an inode that comes to
 * a key file's name later (the agent's own file renamed there) may have raw
 * descriptors open from before, through which a real value written into it
 * would be read; it is masked too, but written as it is.
 *
 * A key file the host changed behind the view (its harness refreshed the
 * token in place or put a new file at its name: a value the daemon does
 * not know) is refused (EACCES, audited) rather than served: the daemon
 * knows, by hash, the contents it started with, what it wrote itself and
 * what the agent renamed there through the view.
 *
 * The values arrive on a sealed memfd (opts->keyfile_fd); a daemon that
 * holds them is not dumpable and dumps no core. */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <unistd.h>

#include "common/fd-util.h"
#include "common/log.h"
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
	int fd = open(proc, O_RDONLY | O_CLOEXEC | O_NOCTTY);
	if (fd < 0)
		return -errno;
	int r = vr_file_load(fd, KEYFILE_MAX, ret_buf, ret_len);
	close(fd);
	return r;
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
	int fd = openat(v->root.fd, rel, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY);
	struct stat st;
	if (fd < 0 || fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		if (fd >= 0)
			close(fd);
		return;
	}
	char *buf = NULL;
	size_t len = 0;
	if (vr_file_load(fd, KEYFILE_MAX, &buf, &len) == 0) {
		g_hash_table_add(K.known, digest(buf, len));
		buf_free(buf, len);
	}
	close(fd);
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
	int fd = openat(newparent->fd, newname, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY);
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
	if (fd >= 0)
		close(fd);
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
