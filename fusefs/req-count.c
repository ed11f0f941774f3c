/* Request counts: how many requests of each FUSE opcode the kernel sent,
 * and how many invalidations the daemon sent back. Seconds are noisy on a
 * shared machine; counts say what a workload costs the daemon and whether
 * a cache took effect (docs/PERFORMANCE.md). Every handler the view sets is
 * wrapped by one that counts, then calls it: one relaxed atomic add per
 * request. Ops the view leaves NULL are answered ENOSYS by libfuse and are
 * not counted (wrapping them would change what INIT offers, e.g. locks). */
#include <signal.h>
#include <stdatomic.h>
#include <string.h>
#include <unistd.h>

#include "fusefs/view-private.h"

enum {
	C_LOOKUP, C_FORGET, C_FORGET_MULTI, C_GETATTR, C_SETATTR, C_READLINK, C_MKNOD, C_MKDIR,
	C_UNLINK, C_RMDIR, C_SYMLINK, C_RENAME, C_LINK, C_OPEN, C_READ, C_WRITE, C_FLUSH, C_RELEASE,
	C_FSYNC, C_OPENDIR, C_READDIR, C_RELEASEDIR, C_FSYNCDIR, C_STATFS, C_SETXATTR, C_GETXATTR,
	C_LISTXATTR, C_REMOVEXATTR, C_CREATE, C_FALLOCATE, C_READDIRPLUS, C_COPY_FILE_RANGE, C_LSEEK,
	C_N
};

static const char *const op_names[C_N] = {
	"lookup", "forget", "batch_forget", "getattr", "setattr", "readlink", "mknod", "mkdir",
	"unlink", "rmdir", "symlink", "rename", "link", "open", "read", "write", "flush", "release",
	"fsync", "opendir", "readdir", "releasedir", "fsyncdir", "statfs", "setxattr", "getxattr",
	"listxattr", "removexattr", "create", "fallocate", "readdirplus", "copy_file_range", "lseek",
};

static const char *const note_names[VR_NOTE_N] = {
	[VR_NOTE_WATCH_ENTRY] = "watch_inval_entry",
	[VR_NOTE_WATCH_INODE] = "watch_inval_inode",
	[VR_NOTE_WATCH_PAGES] = "watch_inval_pages",
	[VR_NOTE_WATCH_OVERFLOW] = "watch_overflow",
	[VR_NOTE_WATCH_FULL] = "watch_limit",
	[VR_NOTE_EVICT_ENTRY] = "evict_inval_entry",
	[VR_NOTE_PAGES_DROPPED] = "refused_write_pages",
};

static atomic_uint_fast64_t counts[C_N];
static atomic_uint_fast64_t notes[VR_NOTE_N];
static struct fuse_lowlevel_ops real;

void vr_count_note(VrNote n)
{
	atomic_fetch_add_explicit(&notes[n], 1, memory_order_relaxed);
}

#define COUNT(id) atomic_fetch_add_explicit(&counts[id], 1, memory_order_relaxed)
#define WRAP(field, id, params, args)          \
	static void w_##field params           \
	{                                      \
		COUNT(id);                     \
		real.field args;               \
	}

typedef struct fuse_file_info FI;
WRAP(lookup, C_LOOKUP, (fuse_req_t r, fuse_ino_t p, const char *n), (r, p, n))
WRAP(forget, C_FORGET, (fuse_req_t r, fuse_ino_t i, uint64_t n), (r, i, n))
WRAP(forget_multi, C_FORGET_MULTI, (fuse_req_t r, size_t c, struct fuse_forget_data *f), (r, c, f))
WRAP(getattr, C_GETATTR, (fuse_req_t r, fuse_ino_t i, FI *fi), (r, i, fi))
WRAP(setattr, C_SETATTR, (fuse_req_t r, fuse_ino_t i, struct stat *a, int v, FI *fi), (r, i, a, v, fi))
WRAP(readlink, C_READLINK, (fuse_req_t r, fuse_ino_t i), (r, i))
WRAP(mknod, C_MKNOD, (fuse_req_t r, fuse_ino_t p, const char *n, mode_t m, dev_t d), (r, p, n, m, d))
WRAP(mkdir, C_MKDIR, (fuse_req_t r, fuse_ino_t p, const char *n, mode_t m), (r, p, n, m))
WRAP(unlink, C_UNLINK, (fuse_req_t r, fuse_ino_t p, const char *n), (r, p, n))
WRAP(rmdir, C_RMDIR, (fuse_req_t r, fuse_ino_t p, const char *n), (r, p, n))
WRAP(symlink, C_SYMLINK, (fuse_req_t r, const char *l, fuse_ino_t p, const char *n), (r, l, p, n))
WRAP(rename, C_RENAME,
     (fuse_req_t r, fuse_ino_t p, const char *n, fuse_ino_t np, const char *nn, unsigned f),
     (r, p, n, np, nn, f))
WRAP(link, C_LINK, (fuse_req_t r, fuse_ino_t i, fuse_ino_t np, const char *nn), (r, i, np, nn))
WRAP(open, C_OPEN, (fuse_req_t r, fuse_ino_t i, FI *fi), (r, i, fi))
WRAP(read, C_READ, (fuse_req_t r, fuse_ino_t i, size_t s, off_t o, FI *fi), (r, i, s, o, fi))
WRAP(write_buf, C_WRITE, (fuse_req_t r, fuse_ino_t i, struct fuse_bufvec *b, off_t o, FI *fi),
     (r, i, b, o, fi))
WRAP(flush, C_FLUSH, (fuse_req_t r, fuse_ino_t i, FI *fi), (r, i, fi))
WRAP(release, C_RELEASE, (fuse_req_t r, fuse_ino_t i, FI *fi), (r, i, fi))
WRAP(fsync, C_FSYNC, (fuse_req_t r, fuse_ino_t i, int d, FI *fi), (r, i, d, fi))
WRAP(opendir, C_OPENDIR, (fuse_req_t r, fuse_ino_t i, FI *fi), (r, i, fi))
WRAP(readdir, C_READDIR, (fuse_req_t r, fuse_ino_t i, size_t s, off_t o, FI *fi), (r, i, s, o, fi))
WRAP(releasedir, C_RELEASEDIR, (fuse_req_t r, fuse_ino_t i, FI *fi), (r, i, fi))
WRAP(fsyncdir, C_FSYNCDIR, (fuse_req_t r, fuse_ino_t i, int d, FI *fi), (r, i, d, fi))
WRAP(statfs, C_STATFS, (fuse_req_t r, fuse_ino_t i), (r, i))
WRAP(setxattr, C_SETXATTR,
     (fuse_req_t r, fuse_ino_t i, const char *n, const char *v, size_t s, int f), (r, i, n, v, s, f))
WRAP(getxattr, C_GETXATTR, (fuse_req_t r, fuse_ino_t i, const char *n, size_t s), (r, i, n, s))
WRAP(listxattr, C_LISTXATTR, (fuse_req_t r, fuse_ino_t i, size_t s), (r, i, s))
WRAP(removexattr, C_REMOVEXATTR, (fuse_req_t r, fuse_ino_t i, const char *n), (r, i, n))
WRAP(create, C_CREATE, (fuse_req_t r, fuse_ino_t p, const char *n, mode_t m, FI *fi), (r, p, n, m, fi))
WRAP(fallocate, C_FALLOCATE, (fuse_req_t r, fuse_ino_t i, int m, off_t o, off_t l, FI *fi),
     (r, i, m, o, l, fi))
WRAP(readdirplus, C_READDIRPLUS, (fuse_req_t r, fuse_ino_t i, size_t s, off_t o, FI *fi),
     (r, i, s, o, fi))
WRAP(copy_file_range, C_COPY_FILE_RANGE,
     (fuse_req_t r, fuse_ino_t i, off_t o, FI *fi, fuse_ino_t i2, off_t o2, FI *fi2, size_t l, int f),
     (r, i, o, fi, i2, o2, fi2, l, f))
WRAP(lseek, C_LSEEK, (fuse_req_t r, fuse_ino_t i, off_t o, int w, FI *fi), (r, i, o, w, fi))

#define HOOK(field)                            \
	do {                                   \
		if (ops->field) {              \
			real.field = ops->field; \
			ops->field = w_##field; \
		}                              \
	} while (0)

void vr_count_wrap(struct fuse_lowlevel_ops *ops)
{
	memset(counts, 0, sizeof counts);
	memset(notes, 0, sizeof notes);
	HOOK(lookup); HOOK(forget); HOOK(forget_multi); HOOK(getattr); HOOK(setattr);
	HOOK(readlink); HOOK(mknod); HOOK(mkdir); HOOK(unlink); HOOK(rmdir); HOOK(symlink);
	HOOK(rename); HOOK(link); HOOK(open); HOOK(read); HOOK(write_buf); HOOK(flush);
	HOOK(release); HOOK(fsync); HOOK(opendir); HOOK(readdir); HOOK(releasedir);
	HOOK(fsyncdir); HOOK(statfs); HOOK(setxattr); HOOK(getxattr); HOOK(listxattr);
	HOOK(removexattr); HOOK(create); HOOK(fallocate); HOOK(readdirplus);
	HOOK(copy_file_range); HOOK(lseek);
}

/* Async-signal-safe (the SIGUSR1 dump): no stdio, no malloc. */
static size_t put(char *buf, size_t at, size_t cap, const char *s)
{
	while (*s && at + 1 < cap)
		buf[at++] = *s++;
	buf[at] = '\0';
	return at;
}

static size_t put_u64(char *buf, size_t at, size_t cap, uint64_t v)
{
	char d[24];
	int n = 0;
	do
		d[n++] = (char)('0' + v % 10);
	while ((v /= 10) && n < (int)sizeof d);
	while (n && at + 1 < cap)
		buf[at++] = d[--n];
	buf[at] = '\0';
	return at;
}

static size_t put_members(char *buf, size_t at, size_t cap, const char *const *names,
                          atomic_uint_fast64_t *vals, int n)
{
	bool first = true;
	at = put(buf, at, cap, "{");
	for (int k = 0; k < n; k++) {
		uint64_t v = atomic_load_explicit(&vals[k], memory_order_relaxed);
		if (!v)
			continue;
		at = put(buf, at, cap, first ? "\"" : ",\"");
		at = put(buf, at, cap, names[k]);
		at = put(buf, at, cap, "\":");
		at = put_u64(buf, at, cap, v);
		first = false;
	}
	return put(buf, at, cap, "}");
}

size_t vr_count_format(char *buf, size_t cap)
{
	if (cap == 0)
		return 0;
	buf[0] = '\0';
	size_t at = put(buf, 0, cap, "\"requests\":");
	at = put_members(buf, at, cap, op_names, counts, C_N);
	at = put(buf, at, cap, ",\"notifications\":");
	return put_members(buf, at, cap, note_names, notes, VR_NOTE_N);
}

/* `kill -USR1` of a `vault-run mount`: one JSON line of the counts so far
 * on stderr, so a benchmark can take the difference around a workload. */
static void dump(int sig)
{
	(void)sig;
	char buf[2048];
	size_t n = put(buf, 0, sizeof buf, "{");
	n = vr_count_format(buf + n, sizeof buf - n - 2) + n;
	n = put(buf, n, sizeof buf, "}\n");
	ssize_t w = write(STDERR_FILENO, buf, n);
	(void)w;
}

void vr_count_dump_on_signal(void)
{
	struct sigaction sa = {.sa_handler = dump, .sa_flags = SA_RESTART};
	sigemptyset(&sa.sa_mask);
	sigaction(SIGUSR1, &sa, NULL);
}
