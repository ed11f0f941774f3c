/* libFuzzer target: the view's request handlers, fed FUSE requests the way
 * the kernel would send them, through fuse_session_custom_io() instead of
 * /dev/fuse (no mount). Each input is a script of requests over a fresh
 * temporary project (README.md, .env, src/, .git/hooks/, a redacted
 * settings.ini, a symlink) under the built-in policy plus a redact rule,
 * with the audit log on (written to /dev/null, one writer for the whole
 * session) so names reach the JSON encoder too.
 *
 * The harness keeps the kernel's side of the contract and nothing more:
 * node ids and file handles are only ones the view handed out (they are
 * pointers into the daemon, which trusts the kernel for them), FORGET never
 * exceeds the lookups taken nor comes while a file on the node is open,
 * every handle is released and every lookup
 * forgotten at the end, as an unmount would. Everything else — names,
 * offsets, sizes, flags, modes, xattr names and values, readdir cookies,
 * write data — comes from the input. ASan/UBSan/LeakSanitizer judge. */
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <linux/fuse.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

#include "fusefs/view-private.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerInitialize(int *argc, char ***argv);

#define MAX_NODES 256
#define MAX_HANDLES 64
#define MAX_OPS 48
#define MAX_IO (256 * 1024)

/* ---- what the "kernel" knows ------------------------------------------ */

typedef struct {
	uint64_t nodeid;
	uint64_t count; /* lookups not yet forgotten */
} Node;

typedef struct {
	uint64_t fh;
	uint64_t nodeid;
	bool dir;
} Handle;

static struct {
	Node nodes[MAX_NODES];
	size_t n_nodes;
	Handle handles[MAX_HANDLES];
	size_t n_handles;
	uint32_t opcode;      /* of the request being processed */
	uint64_t unique;
	bool no_open, no_opendir; /* the view's no-open mode (file-handles.c) */
} K;

static void node_add(uint64_t nodeid, uint64_t n)
{
	if (nodeid == 0 || nodeid == FUSE_ROOT_ID)
		return;
	for (size_t i = 0; i < K.n_nodes; i++)
		if (K.nodes[i].nodeid == nodeid) {
			K.nodes[i].count += n;
			return;
		}
	if (K.n_nodes == MAX_NODES)
		abort(); /* the script is bounded well below this */
	K.nodes[K.n_nodes++] = (Node){nodeid, n};
}

static void handle_add(uint64_t fh, uint64_t nodeid, bool dir)
{
	if (K.n_handles == MAX_HANDLES)
		abort();
	K.handles[K.n_handles++] = (Handle){fh, nodeid, dir};
}

/* ---- replies: where node ids and handles come from --------------------- */

static void parse_direntplus(const uint8_t *p, size_t len)
{
	while (len >= FUSE_NAME_OFFSET_DIRENTPLUS) {
		struct fuse_direntplus d;
		memcpy(&d, p, sizeof d);
		size_t sz = FUSE_DIRENTPLUS_SIZE(&d);
		if (sz > len)
			abort(); /* a malformed listing from the view */
		const char *name = (const char *)p + FUSE_NAME_OFFSET_DIRENTPLUS;
		bool dot = (d.dirent.namelen == 1 && name[0] == '.') ||
		           (d.dirent.namelen == 2 && name[0] == '.' && name[1] == '.');
		if (!dot)
			node_add(d.entry_out.nodeid, 1);
		p += sz;
		len -= sz;
	}
}

/* VR_FUZZ_DEBUG=1: print each reply (to check what a seed reaches). */
static bool debug;

/* The node an OPEN/OPENDIR was sent for (its reply names only the handle). */
static uint64_t fuzz_open_node;

static ssize_t io_writev(int fd, struct iovec *iov, int count, void *userdata)
{
	static uint8_t buf[MAX_IO + 4096];
	size_t len = 0;
	for (int i = 0; i < count; i++) {
		if (len + iov[i].iov_len > sizeof buf)
			abort(); /* a reply larger than any request allowed */
		memcpy(buf + len, iov[i].iov_base, iov[i].iov_len);
		len += iov[i].iov_len;
	}
	struct fuse_out_header out;
	if (len < sizeof out)
		abort();
	memcpy(&out, buf, sizeof out);
	if (out.len != len)
		abort();
	if (debug)
		fprintf(stderr, "opcode %u -> error %d, %zu bytes\n", K.opcode, out.error, len);
	if (out.unique == 0 || out.error != 0)
		return (ssize_t)len; /* notifications, errors */
	const uint8_t *p = buf + sizeof out;
	size_t plen = len - sizeof out;
	struct fuse_entry_out e;
	struct fuse_open_out o;
	switch (K.opcode) {
	case FUSE_LOOKUP: case FUSE_MKDIR: case FUSE_MKNOD: case FUSE_SYMLINK: case FUSE_LINK:
		if (plen < sizeof e)
			abort();
		memcpy(&e, p, sizeof e);
		node_add(e.nodeid, 1);
		break;
	case FUSE_CREATE:
		if (plen < sizeof e + sizeof o)
			abort();
		memcpy(&e, p, sizeof e);
		memcpy(&o, p + sizeof e, sizeof o);
		node_add(e.nodeid, 1);
		handle_add(o.fh, e.nodeid, false);
		break;
	case FUSE_OPEN: case FUSE_OPENDIR:
		if (plen < sizeof o)
			abort();
		memcpy(&o, p, sizeof o);
		handle_add(o.fh, fuzz_open_node, K.opcode == FUSE_OPENDIR);
		break;
	case FUSE_READDIRPLUS:
		parse_direntplus(p, plen);
		break;
	default:
		break;
	}
	return (ssize_t)len;
}

static ssize_t io_read(int fd, void *buf, size_t len, void *userdata)
{
	return 0; /* never used: requests are handed to fuse_session_process_buf */
}

/* ---- the project -------------------------------------------------------- */

static char project[64];

static int unlock_dir(const char *path, const struct stat *st, int type, struct FTW *f)
{
	if (type == FTW_D || type == FTW_DNR)
		chmod(path, 0700);
	return 0;
}

static int remove_entry(const char *path, const struct stat *st, int type, struct FTW *f)
{
	if (f->level > 0)
		remove(path);
	return 0;
}

static void put(const char *rel, const char *content)
{
	char path[256];
	snprintf(path, sizeof path, "%s/%s", project, rel);
	FILE *fp = fopen(path, "w");
	if (!fp)
		abort();
	fputs(content, fp);
	fclose(fp);
}

static void empty_project(void)
{
	nftw(project, unlock_dir, 16, FTW_PHYS);
	nftw(project, remove_entry, 16, FTW_PHYS | FTW_DEPTH);
}

static void remove_project(void)
{
	empty_project();
	rmdir(project);
}

static void make_project(void)
{
	empty_project();
	char path[256];
	static const char *const dirs[] = {"src", "docs", ".git", ".git/hooks"};
	for (size_t i = 0; i < G_N_ELEMENTS(dirs); i++) {
		snprintf(path, sizeof path, "%s/%s", project, dirs[i]);
		mkdir(path, 0755);
	}
	put("README.md", "# demo\nhello\n");
	put(".env", "SECRET=hunter2\n");
	put("src/main.c", "int main(void) { return 0; }\n");
	put("settings.ini", "[db]\npassword = s3cr3t\nuser: me\n");
	put(".git/config", "[core]\n");
	put(".git/hooks/pre-commit", "#!/bin/sh\n");
	put("docs/key.pem", "-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n");
	put("token.txt", "ghp_0123456789abcdefghijABCDEFGHIJ012345\n");
	snprintf(path, sizeof path, "%s/link", project);
	symlink(".env", path);
	snprintf(path, sizeof path, "%s/src/up", project);
	symlink("../README.md", path);
	/* A host link whose name a rule covers (links.c) and a .git file
	 * (gitnames.c) for the requests to meet. */
	snprintf(path, sizeof path, "%s/.ssh", project);
	symlink("docs", path);
	put("src/.git", "gitdir: ../.git/modules/m\n");
}

/* ---- the input, read as a script --------------------------------------- */

typedef struct {
	const uint8_t *p;
	size_t left;
} Script;

static uint8_t take8(Script *s)
{
	if (!s->left)
		return 0;
	s->left--;
	return *s->p++;
}

static uint64_t take(Script *s, int bytes)
{
	uint64_t v = 0;
	for (int i = 0; i < bytes; i++)
		v = v << 8 | take8(s);
	return v;
}

static const char *const dictionary[] = {
	"README.md", ".env", "src", "main.c", "settings.ini", ".git", "hooks", "pre-commit",
	"config", "docs", "key.pem", "token.txt", "link", "up", ".", "..", "new", "d",
	".ENV", "new.pem", ".envrc", ".vault-run", "user.x", "trusted.x", "security.capability",
	"system.posix_acl_access", "user.vault-run", "HEAD", "objects", "refs", "commondir", ".ssh",
	"modules", "gitdir: ../.git/modules/m\n",
};

/* A name: from the dictionary, or raw bytes (never NUL: the kernel
 * terminates names). */
static size_t take_name(Script *s, char *out, size_t cap)
{
	uint8_t sel = take8(s);
	if (sel < 200) {
		snprintf(out, cap, "%s", dictionary[sel % G_N_ELEMENTS(dictionary)]);
		return strlen(out);
	}
	size_t n = take8(s) % (cap - 1);
	for (size_t i = 0; i < n; i++) {
		uint8_t c = take8(s);
		out[i] = c ? (char)c : 'x';
	}
	out[n] = '\0';
	return n;
}

static uint64_t pick_node(Script *s)
{
	uint8_t i = take8(s);
	if (K.n_nodes == 0 || i % (K.n_nodes + 1) == 0)
		return FUSE_ROOT_ID;
	return K.nodes[i % (K.n_nodes + 1) - 1].nodeid;
}

static Handle *pick_handle(Script *s, bool dir)
{
	uint8_t i = take8(s);
	size_t n = 0;
	for (size_t j = 0; j < K.n_handles; j++)
		n += K.handles[j].dir == dir;
	if (!n)
		return NULL;
	i %= n;
	for (size_t j = 0; j < K.n_handles; j++)
		if (K.handles[j].dir == dir && i-- == 0)
			return &K.handles[j];
	return NULL;
}

/* ---- sending ------------------------------------------------------------ */

static struct fuse_session *se;

static void send(uint32_t opcode, uint64_t nodeid, const void *body, size_t len)
{
	static uint8_t buf[sizeof(struct fuse_in_header) + MAX_IO + 4096];
	struct fuse_in_header h = {
		.len = (uint32_t)(sizeof h + len),
		.opcode = opcode,
		.unique = ++K.unique,
		.nodeid = nodeid,
		.uid = getuid(),
		.gid = getgid(),
		.pid = (uint32_t)getpid(),
	};
	memcpy(buf, &h, sizeof h);
	if (len)
		memcpy(buf + sizeof h, body, len);
	struct fuse_buf fb = {.size = h.len, .mem = buf};
	K.opcode = opcode;
	fuzz_open_node = nodeid;
	fuse_session_process_buf(se, &fb);
}

/* Two strings back to back, each NUL-terminated, after a fixed part. */
static size_t body_with_names(uint8_t *b, size_t fixed, const char *n1, const char *n2)
{
	size_t len = fixed;
	size_t l1 = strlen(n1) + 1;
	memcpy(b + len, n1, l1);
	len += l1;
	if (n2) {
		size_t l2 = strlen(n2) + 1;
		memcpy(b + len, n2, l2);
		len += l2;
	}
	return len;
}

static void send_init(void)
{
	struct fuse_init_in in = {
		.major = FUSE_KERNEL_VERSION,
		.minor = 31,
		.max_readahead = 128 * 1024,
		.flags = FUSE_ASYNC_READ | FUSE_BIG_WRITES | FUSE_DO_READDIRPLUS | FUSE_READDIRPLUS_AUTO |
		         FUSE_AUTO_INVAL_DATA | FUSE_PARALLEL_DIROPS | FUSE_POSIX_ACL | FUSE_MAX_PAGES,
	};
	send(FUSE_INIT, 0, &in, sizeof in);
}

static void forget_all(void)
{
	for (size_t i = 0; i < K.n_handles; i++) {
		struct fuse_release_in r = {.fh = K.handles[i].fh};
		send(K.handles[i].dir ? FUSE_RELEASEDIR : FUSE_RELEASE, K.handles[i].nodeid, &r, sizeof r);
	}
	K.n_handles = 0;
	for (size_t i = 0; i < K.n_nodes; i++) {
		struct fuse_forget_in f = {.nlookup = K.nodes[i].count};
		if (f.nlookup)
			send(FUSE_FORGET, K.nodes[i].nodeid, &f, sizeof f);
	}
	K.n_nodes = 0;
}

static void step(Script *s)
{
	static uint8_t b[MAX_IO + 1024];
	char n1[128], n2[128];
	uint8_t op = take8(s);
	uint64_t node = pick_node(s);
	Handle *h;
	memset(b, 0, 1024);
	switch (op % 34) {
	case 0: case 1: case 2: /* lookups are what everything else needs */
		take_name(s, n1, sizeof n1);
		send(FUSE_LOOKUP, node, n1, strlen(n1) + 1);
		break;
	case 3: {
		struct fuse_getattr_in g = {0};
		if ((h = pick_handle(s, false)) && take8(s) & 1) {
			g.getattr_flags = FUSE_GETATTR_FH;
			g.fh = h->fh;
			node = h->nodeid;
		}
		send(FUSE_GETATTR, node, &g, sizeof g);
		break;
	}
	case 4: {
		struct fuse_setattr_in a = {0};
		a.valid = (uint32_t)take(s, 2) & (FATTR_MODE | FATTR_UID | FATTR_GID | FATTR_SIZE | FATTR_ATIME |
		                                  FATTR_MTIME | FATTR_ATIME_NOW | FATTR_MTIME_NOW | FATTR_CTIME);
		a.mode = (uint32_t)take(s, 2);
		a.size = take(s, 3) % (1u << 20);
		a.atime = take(s, 4);
		a.mtime = take(s, 4);
		a.uid = take8(s) & 1 ? getuid() : (uint32_t)take(s, 4);
		a.gid = getgid();
		if ((h = pick_handle(s, false)) && take8(s) & 1) {
			a.valid |= FATTR_FH;
			a.fh = h->fh;
			node = h->nodeid;
		}
		send(FUSE_SETATTR, node, &a, sizeof a);
		break;
	}
	case 5:
		send(FUSE_READLINK, node, NULL, 0);
		break;
	case 6:
		take_name(s, n1, sizeof n1);
		take_name(s, n2, sizeof n2);
		send(FUSE_SYMLINK, node, b, body_with_names(b, 0, n1, n2));
		break;
	case 7: {
		struct fuse_mknod_in m = {.mode = (uint32_t)take(s, 4), .rdev = (uint32_t)take(s, 2), .umask = 022};
		memcpy(b, &m, sizeof m);
		take_name(s, n1, sizeof n1);
		send(FUSE_MKNOD, node, b, body_with_names(b, sizeof m, n1, NULL));
		break;
	}
	case 8: {
		struct fuse_mkdir_in m = {.mode = (uint32_t)take(s, 2), .umask = 022};
		memcpy(b, &m, sizeof m);
		take_name(s, n1, sizeof n1);
		send(FUSE_MKDIR, node, b, body_with_names(b, sizeof m, n1, NULL));
		break;
	}
	case 9: case 10:
		take_name(s, n1, sizeof n1);
		send(op % 34 == 9 ? FUSE_UNLINK : FUSE_RMDIR, node, n1, strlen(n1) + 1);
		break;
	case 11: case 12: {
		struct fuse_rename2_in r = {.newdir = pick_node(s)};
		take_name(s, n1, sizeof n1);
		take_name(s, n2, sizeof n2);
		if (op % 34 == 11) {
			struct fuse_rename_in r1 = {.newdir = r.newdir};
			memcpy(b, &r1, sizeof r1);
			send(FUSE_RENAME, node, b, body_with_names(b, sizeof r1, n1, n2));
		} else {
			r.flags = (uint32_t)take8(s) & 7; /* NOREPLACE, EXCHANGE, WHITEOUT */
			memcpy(b, &r, sizeof r);
			send(FUSE_RENAME2, node, b, body_with_names(b, sizeof r, n1, n2));
		}
		break;
	}
	case 13: {
		struct fuse_link_in l = {.oldnodeid = pick_node(s)};
		memcpy(b, &l, sizeof l);
		take_name(s, n1, sizeof n1);
		send(FUSE_LINK, node, b, body_with_names(b, sizeof l, n1, NULL));
		break;
	}
	case 14: case 15: {
		if (K.n_handles >= MAX_HANDLES - 2)
			break;
		static const uint32_t modes[] = {O_RDONLY, O_WRONLY, O_RDWR, O_RDWR | O_TRUNC, O_WRONLY | O_APPEND,
		                                 O_RDONLY | O_NOFOLLOW, O_RDONLY | O_DIRECTORY, O_WRONLY | O_TRUNC};
		/* (the kernel strips O_CREAT, O_EXCL and O_NOCTTY from OPEN) */
		struct fuse_open_in o = {.flags = modes[take8(s) % G_N_ELEMENTS(modes)]};
		bool dir = op % 34 == 15;
		send(dir ? FUSE_OPENDIR : FUSE_OPEN, node, &o, sizeof o);
		/* In no-open mode the view answers ENOSYS and the kernel opens
		 * the node itself: its requests then come with fh 0. */
		if (dir ? K.no_opendir : K.no_open)
			handle_add(0, node, dir);
		break;
	}
	case 16: case 17: {
		if (!(h = pick_handle(s, false)))
			break;
		struct fuse_read_in r = {.fh = h->fh, .offset = take(s, 3), .size = (uint32_t)(take(s, 3) % MAX_IO)};
		send(FUSE_READ, h->nodeid, &r, sizeof r);
		break;
	}
	case 18: {
		if (!(h = pick_handle(s, false)))
			break;
		struct fuse_write_in w = {.fh = h->fh, .offset = take(s, 3) % (1u << 20)};
		w.size = (uint32_t)(take(s, 2) % 8192);
		memcpy(b, &w, sizeof w);
		for (uint32_t i = 0; i < w.size; i++)
			b[sizeof w + i] = take8(s);
		send(FUSE_WRITE, h->nodeid, b, sizeof w + w.size);
		break;
	}
	case 19:
		send(FUSE_STATFS, node, NULL, 0);
		break;
	case 20: case 21: {
		bool dir = op % 34 == 21;
		if (!(h = pick_handle(s, dir)))
			break;
		struct fuse_fsync_in f = {.fh = h->fh, .fsync_flags = take8(s) & 1};
		send(dir ? FUSE_FSYNCDIR : FUSE_FSYNC, h->nodeid, &f, sizeof f);
		break;
	}
	case 22: {
		if (!(h = pick_handle(s, false)))
			break;
		struct fuse_flush_in f = {.fh = h->fh};
		send(FUSE_FLUSH, h->nodeid, &f, sizeof f);
		break;
	}
	case 23: {
		/* Without FUSE_SETXATTR_EXT the kernel sends the 8-byte header. */
		struct fuse_setxattr_in x = {.size = take8(s) % 200, .flags = take8(s) & 3};
		memcpy(b, &x, FUSE_COMPAT_SETXATTR_IN_SIZE);
		take_name(s, n1, sizeof n1);
		size_t len = body_with_names(b, FUSE_COMPAT_SETXATTR_IN_SIZE, n1, NULL);
		for (uint32_t i = 0; i < x.size; i++)
			b[len + i] = take8(s);
		send(FUSE_SETXATTR, node, b, len + x.size);
		break;
	}
	case 24: case 25: {
		struct fuse_getxattr_in g = {.size = (uint32_t)take(s, 2) % 4096};
		memcpy(b, &g, sizeof g);
		if (op % 34 == 24) {
			take_name(s, n1, sizeof n1);
			send(FUSE_GETXATTR, node, b, body_with_names(b, sizeof g, n1, NULL));
		} else {
			send(FUSE_LISTXATTR, node, b, sizeof g);
		}
		break;
	}
	case 26:
		take_name(s, n1, sizeof n1);
		send(FUSE_REMOVEXATTR, node, n1, strlen(n1) + 1);
		break;
	case 27: case 28: {
		if (!(h = pick_handle(s, true)))
			break;
		/* Any cookie: an agent's lseek on a directory reaches here. */
		struct fuse_read_in r = {.fh = h->fh, .offset = take8(s) & 1 ? take(s, 8) : take8(s),
		                         .size = (uint32_t)(take(s, 2) % 65536)};
		send(op % 34 == 27 ? FUSE_READDIR : FUSE_READDIRPLUS, h->nodeid, &r, sizeof r);
		break;
	}
	case 29: {
		struct fuse_access_in a = {.mask = take8(s) & 7};
		send(FUSE_ACCESS, node, &a, sizeof a);
		break;
	}
	case 30: {
		if (K.n_handles >= MAX_HANDLES - 2)
			break;
		static const uint32_t flags[] = {O_WRONLY | O_CREAT, O_RDWR | O_CREAT | O_EXCL, O_WRONLY | O_CREAT | O_TRUNC};
		struct fuse_create_in c = {.flags = flags[take8(s) % G_N_ELEMENTS(flags)],
		                           .mode = S_IFREG | ((uint32_t)take(s, 2) & 07777), .umask = 022};
		memcpy(b, &c, sizeof c);
		take_name(s, n1, sizeof n1);
		send(FUSE_CREATE, node, b, body_with_names(b, sizeof c, n1, NULL));
		break;
	}
	case 31: {
		if (!(h = pick_handle(s, false)))
			break;
		struct fuse_fallocate_in f = {.fh = h->fh, .offset = take(s, 3) % (1u << 20),
		                              .length = take(s, 3) % (1u << 20) + 1, .mode = take8(s) & 0x1b};
		send(FUSE_FALLOCATE, h->nodeid, &f, sizeof f);
		break;
	}
	case 32: {
		if (!(h = pick_handle(s, false)))
			break;
		struct fuse_lseek_in l = {.fh = h->fh, .offset = take(s, 4), .whence = take8(s) % 5};
		send(FUSE_LSEEK, h->nodeid, &l, sizeof l);
		break;
	}
	case 33: {
		/* FORGET as the kernel sends it: when it drops the inode, all
		 * its lookups at once, never while a file on it is open. */
		if (!K.n_nodes)
			break;
		Node *n = &K.nodes[take8(s) % K.n_nodes];
		for (size_t i = 0; i < K.n_handles; i++)
			if (K.handles[i].nodeid == n->nodeid)
				return;
		struct fuse_forget_in f = {.nlookup = n->count};
		send(FUSE_FORGET, n->nodeid, &f, sizeof f);
		*n = K.nodes[--K.n_nodes];
		break;
	}
	}
	/* RELEASE now and then, so handles come and go within a script. */
	if (take8(s) == 0xff && K.n_handles) {
		Handle hh = K.handles[take8(s) % K.n_handles];
		for (size_t i = 0; i < K.n_handles; i++)
			if (K.handles[i].fh == hh.fh)
				K.handles[i] = K.handles[--K.n_handles];
		struct fuse_release_in r = {.fh = hh.fh};
		send(hh.dir ? FUSE_RELEASEDIR : FUSE_RELEASE, hh.nodeid, &r, sizeof r);
	}
}

/* ---- one view per input, as vr_view_run sets it up ---------------------- */

static VrPolicy *policy;
static int devnull = -1;

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	debug = getenv("VR_FUZZ_DEBUG") != NULL;
	/* tmpfs when there is one: the project is rebuilt for every input. */
	strcpy(project, "/dev/shm/vr-fuzz-fuse.XXXXXX");
	if (!mkdtemp(project)) {
		strcpy(project, "/tmp/vr-fuzz-fuse.XXXXXX");
		if (!mkdtemp(project))
			abort();
	}
	atexit(remove_project);
	policy = vr_policy_new();
	vr_policy_add_builtins(policy);
	GError *error = NULL;
	if (!vr_policy_add(policy, VR_RULE_REDACT, "settings.ini", "fuzz", 1, FALSE, &error))
		abort();
	devnull = open("/dev/null", O_WRONLY | O_CLOEXEC);
	if (devnull < 0)
		abort();
	/* One audit writer for the whole session, never stopped: stopping
	 * it seals the log and says so to syslog, once per input. */
	VrViewOptions opts;
	vr_view_options_init(&opts);
	opts.audit_fd = devnull;
	opts.audit_path = "/dev/null";
	opts.audit_level = VR_AUDIT_ALL;
	if (vr_audit_start(&opts, "fuzz") < 0)
		abort();
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size > 64 * 1024)
		return 0;
	make_project();
	memset(&K, 0, sizeof K);
	/* The first byte picks the mode: open, no-open, no-opendir or both. */
	uint8_t mode = size ? data[0] : 0;
	if (size) {
		data++;
		size--;
	}
	K.no_open = mode & 1;
	K.no_opendir = mode & 2;

	VrViewOptions opts;
	vr_view_options_init(&opts);
	opts.project = project;
	opts.mountpoint = project;
	opts.policy = policy;
	opts.audit_fd = devnull;
	opts.audit_path = "/dev/null";
	opts.audit_level = VR_AUDIT_ALL;
	opts.foreground_signals = false;

	/* The view's own init (fusefs/view.c): the same root inode, tables
	 * and id maps as a mounted view; a copy here once drifted (root.wd and
	 * root.create_fd left at 0, which is stdin). */
	VrView v;
	if (vr_view_init(&v, &opts) < 0)
		abort();
	v.no_open = K.no_open;
	v.no_opendir = K.no_opendir;
	v.agent_root = g_strdup(project);
	vr_links_scan_root(&v);

	struct fuse_lowlevel_ops ops = {0};
	vr_view_ops(&ops);
	char *argv[] = {(char *)"vault-run", (char *)"-o", (char *)"default_permissions", NULL};
	struct fuse_args args = FUSE_ARGS_INIT(3, argv);
	se = fuse_session_new(&args, &ops, sizeof ops, NULL);
	fuse_opt_free_args(&args);
	if (!se)
		abort();
	v.se = se;
	static const struct fuse_custom_io io = {.writev = io_writev, .read = io_read};
	if (fuse_session_custom_io(se, &io, dup(devnull)) != 0)
		abort();
	send_init();

	Script s = {data, size};
	for (int i = 0; i < MAX_OPS && s.left; i++)
		step(&s);
	forget_all();

	fuse_session_destroy(se);
	se = NULL;
	vr_view_free(&v); /* and no-open handles */
	return 0;
}
