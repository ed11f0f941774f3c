/* The sandbox's root file system, built in the cloned child (no glib here).
 *
 * Like bubblewrap: a tmpfs is mounted on /tmp of our private mount namespace
 * and pivoted to, so the host root is still reachable as /oldroot while the
 * new root is assembled under /newroot from /oldroot/<host path> sources.
 * Then the old root is detached and /newroot pivoted onto itself, leaving no
 * path to the host tree (DESIGN.md invariant 4). Every bind is nosuid+nodev
 * (except --dev-bind), and read-only is applied to each submount. */
#include "sandbox/sandbox.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <net/if.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "common/cleanup.h"
#include "common/exitcode.h"
#include "common/fd-util.h"
#include "common/log.h"
#include "common/resolve.h"

#define BASE "/tmp"
#define OLD "/oldroot"
#define NEW "/newroot"

static void join(char *buf, const char *prefix, const char *path)
{
	if (snprintf(buf, PATH_MAX, "%s%s", prefix, strcmp(path, "/") == 0 ? "" : path) >= PATH_MAX)
		vr_die(VR_EXIT_ERROR, "path too long: %s", path);
}

static void subpath(char *buf, const char *dir, const char *name)
{
	if (snprintf(buf, PATH_MAX, "%s/%s", dir, name) >= PATH_MAX)
		vr_die(VR_EXIT_ERROR, "path too long: %s/%s", dir, name);
}

/* mkdir -p inside the new root; components created 0755. */
static void mkdir_p(const char *path)
{
	char buf[PATH_MAX];
	if (snprintf(buf, sizeof buf, "%s", path) >= (int)sizeof buf)
		vr_die(VR_EXIT_ERROR, "path too long: %s", path);
	for (char *p = buf + 1; ; p++) {
		if (*p == '/' || *p == '\0') {
			char saved = *p;
			*p = '\0';
			if (mkdir(buf, 0755) < 0 && errno != EEXIST)
				vr_die_errno(VR_EXIT_ERROR, errno, "cannot create %s in the sandbox", buf + strlen(NEW));
			*p = saved;
			if (!saved)
				break;
		}
	}
}

static void parent_dirs(const char *path)
{
	char buf[PATH_MAX];
	snprintf(buf, sizeof buf, "%s", path);
	char *slash = strrchr(buf, '/');
	if (slash && slash != buf) {
		*slash = '\0';
		mkdir_p(buf);
	}
}

/* Creates the mount point: a directory, or an empty file for a file bind. */
static void make_mount_point(const char *dest, bool dir)
{
	if (dir) {
		mkdir_p(dest);
		return;
	}
	parent_dirs(dest);
	vr_cleanup_fd int fd = open(dest, O_WRONLY | O_CREAT | O_CLOEXEC | O_NOFOLLOW | O_NOCTTY, 0444);
	if (fd < 0 && errno != EEXIST && errno != EISDIR && errno != EROFS && errno != EACCES)
		vr_die_errno(VR_EXIT_ERROR, errno, "cannot create %s in the sandbox", dest + strlen(NEW));
}

/* nosuid(+nodev)(+rdonly) on path and every mount below it. mount_setattr
 * only adds the given attributes, so flags the kernel locked for our user
 * namespace (noexec, atime…) stay as they are. */
static void set_attrs(const char *path, bool ro, bool nodev)
{
	struct mount_attr attr = {
		.attr_set = MOUNT_ATTR_NOSUID | (nodev ? MOUNT_ATTR_NODEV : 0) | (ro ? MOUNT_ATTR_RDONLY : 0),
	};
	if (mount_setattr(AT_FDCWD, path, AT_RECURSIVE, &attr, sizeof attr) == 0)
		return;
	if (errno != ENOSYS)
		vr_die_errno(VR_EXIT_ERROR, errno, "cannot make %s %s", path, ro ? "read-only" : "nosuid");
	/* Kernels before 5.12: remount the top mount, keeping its locked flags. */
	struct statvfs sv;
	if (statvfs(path, &sv) < 0)
		vr_die_errno(VR_EXIT_ERROR, errno, "statvfs %s", path);
	unsigned long fl = MS_BIND | MS_REMOUNT | MS_NOSUID | (nodev ? MS_NODEV : 0) | (ro ? MS_RDONLY : 0);
	if (sv.f_flag & ST_NODEV) fl |= MS_NODEV;
	if (sv.f_flag & ST_NOEXEC) fl |= MS_NOEXEC;
	if (sv.f_flag & ST_RDONLY) fl |= MS_RDONLY;
	if (sv.f_flag & ST_NOATIME) fl |= MS_NOATIME;
	if (sv.f_flag & ST_NODIRATIME) fl |= MS_NODIRATIME;
	if (sv.f_flag & ST_RELATIME) fl |= MS_RELATIME;
	if (mount(NULL, path, NULL, fl, NULL) < 0)
		vr_die_errno(VR_EXIT_ERROR, errno, "cannot remount %s", path);
}

/* SRC (/oldroot + a real path the supervisor resolved) opened without
 * following any symlink on the way: one put there since (another run's
 * agent swapping a project directory for a link to ~/.ssh) fails the bind
 * instead of leading elsewhere. An O_PATH fd, or -errno. */
static int open_nofollow(const char *src, struct stat *st)
{
	vr_cleanup_fd int root = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
	vr_cleanup_fd int dir = -1;
	const char *name;
	int r = root < 0 ? -errno : vr_resolve_parent(root, src + 1, &dir, &name);
	if (r < 0)
		return r;
	vr_cleanup_fd int fd = openat(dir, name, O_PATH | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0 || fstat(fd, st) < 0)
		return -errno;
	if (S_ISLNK(st->st_mode))
		return -ELOOP;
	return vr_steal_fd(&fd);
}

static void bind_nofollow(const VrSandboxOp *op, const char *src, const char *dest)
{
	struct stat st;
	int fd = open_nofollow(src, &st);
	if (fd == -ENOENT && (op->flags & VR_BIND_TRY))
		return;
	if (fd < 0)
		vr_die_errno(VR_EXIT_ERROR, -fd, "bind source %s", op->src);
	make_mount_point(dest, S_ISDIR(st.st_mode));
	vr_cleanup_fd int tree = (int)open_tree(fd, "", OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_EMPTY_PATH | AT_RECURSIVE);
	if (tree < 0 || move_mount(tree, "", AT_FDCWD, dest, MOVE_MOUNT_F_EMPTY_PATH) < 0)
		vr_die_errno(VR_EXIT_ERROR, errno, "cannot bind %s to %s", op->src, op->dest);
	vr_clear_fd(&tree);
	vr_clear_fd(&fd);
	set_attrs(dest, op->flags & VR_BIND_RO, !(op->flags & VR_BIND_DEV));
}

static void do_bind(const VrSandboxOp *op, const char *dest)
{
	char src[PATH_MAX];
	struct stat st = {.st_mode = S_IFDIR};
	if (op->flags & VR_BIND_STAGED) {
		/* In an attached view: its daemon may not serve yet, and the
		 * supervisor knows what the source is. */
		join(src, "", op->src);
		if (!(op->flags & VR_BIND_DIR))
			st.st_mode = S_IFREG;
	} else {
		join(src, OLD, op->src);
		if (op->flags & VR_BIND_NOFOLLOW) {
			bind_nofollow(op, src, dest);
			return;
		}
	}
	if (!(op->flags & (VR_BIND_DIR | VR_BIND_STAGED)) && stat(src, &st) < 0) {
		if (op->flags & VR_BIND_TRY)
			return;
		vr_die_errno(VR_EXIT_ERROR, errno, "bind source %s", op->src);
	}
	make_mount_point(dest, S_ISDIR(st.st_mode));
	if (mount(src, dest, NULL, MS_BIND | MS_REC, NULL) < 0)
		vr_die_errno(VR_EXIT_ERROR, errno, "cannot bind %s to %s", op->src, op->dest);
	set_attrs(dest, op->flags & VR_BIND_RO, !(op->flags & VR_BIND_DEV));
}

/* A view the supervisor cloned out of its daemon's own mount namespace
 * (run/views.c): attached at a path of the base tmpfs, which the final
 * pivot detaches, so the sandbox keeps only the binds taken from it. */
static void do_attach(const VrSandboxOp *op)
{
	char dir[PATH_MAX];
	join(dir, "", op->dest);
	for (char *p = dir + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = '\0';
		if (mkdir(dir, 0755) < 0 && errno != EEXIST)
			vr_die_errno(VR_EXIT_ERROR, errno, "cannot create %s", dir);
		*p = '/';
	}
	if (mkdir(dir, 0755) < 0 && errno != EEXIST)
		vr_die_errno(VR_EXIT_ERROR, errno, "cannot create %s", dir);
	if (move_mount(op->fd, "", AT_FDCWD, dir, MOVE_MOUNT_F_EMPTY_PATH) < 0)
		vr_die_errno(VR_EXIT_ERROR, errno, "cannot attach the view of %s", op->src);
	close(op->fd);
}

static void do_tmpfs(const char *dest, unsigned mode, bool agent, const VrSandboxSpec *spec)
{
	char opts[96];
	mkdir_p(dest);
	if (agent)
		snprintf(opts, sizeof opts, "mode=%04o,uid=%u,gid=%u", mode ? mode : 0755,
		         (unsigned)spec->agent_uid, (unsigned)spec->agent_gid);
	else
		snprintf(opts, sizeof opts, "mode=%04o", mode ? mode : 0755);
	if (mount("tmpfs", dest, "tmpfs", MS_NOSUID | MS_NODEV, opts) < 0)
		vr_die_errno(VR_EXIT_ERROR, errno, "cannot mount a tmpfs on %s", dest + strlen(NEW));
}

static void do_symlink(const char *target, const char *dest)
{
	parent_dirs(dest);
	if (symlink(target, dest) == 0)
		return;
	char cur[PATH_MAX];
	ssize_t n = errno == EEXIST ? readlink(dest, cur, sizeof cur - 1) : -1;
	if (n >= 0) {
		cur[n] = '\0';
		if (strcmp(cur, target) == 0)
			return;
	}
	vr_die_errno(VR_EXIT_ERROR, errno, "cannot create the symlink %s", dest + strlen(NEW));
}

static void do_proc(const char *dest)
{
	mkdir_p(dest);
	if (mount("proc", dest, "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL) < 0)
		vr_die_errno(VR_EXIT_ERROR, errno, "cannot mount /proc");
	/* What a uid that maps to root outside could use to reach the host. */
	static const char *const ro[] = {"sys", "sysrq-trigger", "irq", "bus"};
	for (size_t i = 0; i < sizeof ro / sizeof *ro; i++) {
		char p[PATH_MAX];
		subpath(p, dest, ro[i]);
		if (access(p, F_OK) < 0)
			continue;
		if (mount(p, p, NULL, MS_BIND | MS_REC, NULL) < 0)
			vr_die_errno(VR_EXIT_ERROR, errno, "cannot bind /proc/%s", ro[i]);
		set_attrs(p, true, true);
	}
}

static void do_dev(const char *dest, const VrSandboxSpec *spec)
{
	char p[PATH_MAX], src[PATH_MAX];
	do_tmpfs(dest, 0755, false, spec);
	static const char *const nodes[] = {"null", "zero", "full", "random", "urandom", "tty"};
	for (size_t i = 0; i < sizeof nodes / sizeof *nodes; i++) {
		subpath(p, dest, nodes[i]);
		subpath(src, OLD "/dev", nodes[i]);
		make_mount_point(p, false);
		if (mount(src, p, NULL, MS_BIND, NULL) < 0)
			vr_die_errno(VR_EXIT_ERROR, errno, "cannot bind /dev/%s", nodes[i]);
		set_attrs(p, false, false);
	}
	/* A new devpts instance: never the host's /dev/pts, where the user's
	 * other terminals live. */
	subpath(p, dest, "pts");
	mkdir_p(p);
	if (mount("devpts", p, "devpts", MS_NOSUID | MS_NOEXEC, "newinstance,ptmxmode=0666,mode=620") < 0)
		vr_die_errno(VR_EXIT_ERROR, errno, "cannot mount a devpts instance");
	subpath(p, dest, "ptmx");
	do_symlink("pts/ptmx", p);
	subpath(p, dest, "shm");
	do_tmpfs(p, 01777, false, spec);
	static const char *const links[][2] = {
		{"/proc/self/fd", "fd"}, {"/proc/self/fd/0", "stdin"},
		{"/proc/self/fd/1", "stdout"}, {"/proc/self/fd/2", "stderr"},
	};
	for (size_t i = 0; i < sizeof links / sizeof *links; i++) {
		subpath(p, dest, links[i][1]);
		do_symlink(links[i][0], p);
	}
}

static void do_file(const char *content, const char *dest)
{
	parent_dirs(dest);
	vr_cleanup_fd int fd = open(dest, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0644);
	if (fd < 0 || vr_write_all(fd, content, strlen(content)) < 0)
		vr_die_errno(VR_EXIT_ERROR, errno, "cannot write %s in the sandbox", dest + strlen(NEW));
}

static void loopback_up(void)
{
	vr_cleanup_fd int s = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	struct ifreq ifr = {0};
	strcpy(ifr.ifr_name, "lo");
	if (s < 0 || ioctl(s, SIOCGIFFLAGS, &ifr) < 0)
		vr_die_errno(VR_EXIT_ERROR, errno, "cannot query the loopback interface");
	ifr.ifr_flags |= IFF_UP;
	if (ioctl(s, SIOCSIFFLAGS, &ifr) < 0)
		vr_die_errno(VR_EXIT_ERROR, errno, "cannot bring the loopback interface up");
}

void vr_sandbox_build_root(const VrSandboxSpec *spec)
{
	/* Our copy of the supervisor's namespace: nothing goes back or comes in. */
	if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0)
		vr_die_errno(VR_EXIT_ERROR, errno, "cannot make / private");
	if (mount("tmpfs", BASE, "tmpfs", MS_NOSUID | MS_NODEV, "mode=0755") < 0)
		vr_die_errno(VR_EXIT_ERROR, errno, "cannot mount the base tmpfs");
	if (chdir(BASE) < 0 || mkdir("newroot", 0755) < 0 || mkdir("oldroot", 0755) < 0)
		vr_die_errno(VR_EXIT_ERROR, errno, "cannot prepare the base tmpfs");
	if (syscall(SYS_pivot_root, BASE, BASE OLD) < 0)
		vr_die_errno(VR_EXIT_ERROR, errno, "pivot_root");
	if (chdir("/") < 0)
		vr_die_errno(VR_EXIT_ERROR, errno, "chdir /");
	if (mount("tmpfs", NEW, "tmpfs", MS_NOSUID | MS_NODEV, "mode=0755") < 0)
		vr_die_errno(VR_EXIT_ERROR, errno, "cannot mount the root tmpfs");

	for (size_t i = 0; i < spec->n_ops; i++) {
		const VrSandboxOp *op = &spec->ops[i];
		char dest[PATH_MAX];
		join(dest, NEW, op->dest);
		switch (op->kind) {
		case VR_OP_ATTACH: do_attach(op); break;
		case VR_OP_BIND: do_bind(op, dest); break;
		case VR_OP_TMPFS: do_tmpfs(dest, op->mode, op->flags & VR_TMPFS_AGENT, spec); break;
		case VR_OP_DIR: mkdir_p(dest); break;
		case VR_OP_SYMLINK: do_symlink(op->src, dest); break;
		case VR_OP_PROC: do_proc(dest); break;
		case VR_OP_DEV: do_dev(dest, spec); break;
		case VR_OP_FILE: do_file(op->src, dest); break;
		case VR_OP_REMOUNT_RO: set_attrs(dest, true, true); break;
		}
	}
	if (spec->hostname && sethostname(spec->hostname, strlen(spec->hostname)) < 0)
		vr_die_errno(VR_EXIT_ERROR, errno, "sethostname");
	if (spec->net_none)
		loopback_up();

	/* Drop every path to the host tree, then make the new root the root. */
	if (umount2(OLD, MNT_DETACH) < 0)
		vr_die_errno(VR_EXIT_ERROR, errno, "cannot detach the old root");
	if (chdir(NEW) < 0 || syscall(SYS_pivot_root, ".", ".") < 0 || umount2(".", MNT_DETACH) < 0 ||
	    chdir("/") < 0)
		vr_die_errno(VR_EXIT_ERROR, errno, "cannot pivot into the new root");
	struct mount_attr attr = {.attr_set = MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV};
	if (mount_setattr(AT_FDCWD, "/", 0, &attr, sizeof attr) < 0 &&
	    mount(NULL, "/", NULL, MS_BIND | MS_REMOUNT | MS_RDONLY | MS_NOSUID | MS_NODEV, NULL) < 0)
		vr_die_errno(VR_EXIT_ERROR, errno, "cannot make the root read-only");
}

void vr_sandbox_enter_cwd(const VrSandboxSpec *spec)
{
	if (!spec->cwd || chdir(spec->cwd) < 0)
		if (!spec->fallback_cwd || chdir(spec->fallback_cwd) < 0)
			if (chdir("/") < 0)
				vr_die_errno(VR_EXIT_ERROR, errno, "chdir /");
}
