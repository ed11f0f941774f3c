/* The view daemon confines itself once it has mounted (docs/SECURITY.md,
 * "The daemon confines itself"). It parses every request the agent makes
 * with the user's full rights; after this a bug in that parsing reaches no
 * more than the daemon needs: the project (through its root fd), the undo
 * journal, the audit log's directory, and /proc read-only (/proc/self/fd/N paths
 * to its own O_PATH fds, /proc/PID/{comm,status} for audit records,
 * /proc/sys/fs/pipe-max-size for libfuse's splice pipes). inotify watches
 * on /proc/self/fd/N keep working: Landlock does not mediate inotify, and
 * the path walk through /proc is allowed.
 *
 * Landlock forbids unmounting, and the seccomp filter refuses it too, so
 * the unmount at the end is done by a keeper: a child forked before the
 * mount (so no kill -9 of the daemon after the mount can leave it behind)
 * that only waits for the daemon to close its end of a pipe (at the end of
 * the run, or when the daemon dies, even by SIGKILL) and then detaches the
 * mount (umount2, or fusermount3 -u when unprivileged) if there is one. */
#include "common/confine.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "common/fd-util.h"
#include "common/log.h"
#include "fusefs/view-private.h"

static struct {
	pid_t pid;      /* the keeper, or 0 */
	int fd;         /* our end of its pipe: closing it says "unmount now" */
} K = {0, -1};

static _Noreturn void keeper_main(int wait_fd, dev_t before, const char *mountpoint)
{
	/* Terminal signals hit the daemon's whole process group; the keeper
	 * must outlive the daemon to unmount after it. */
	static const int ignored[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGPIPE, SIGTSTP, SIGTTIN, SIGTTOU};
	for (size_t i = 0; i < G_N_ELEMENTS(ignored); i++)
		signal(ignored[i], SIG_IGN);
	/* Forked before the mount: it holds no FUSE device (that would keep
	 * the connection alive); holding anything else would keep it from its
	 * owner's EOF. */
	if (wait_fd != 3 && dup2(wait_fd, 3) < 0)
		_exit(1);
	vr_close_from(4);
	char c = 0;
	while (read(3, &c, 1) < 0 && errno == EINTR)
		;
	if (c == 'k')
		_exit(0); /* vr_view_keep_mount(): leave it mounted (dead) */
	/* The daemon ended before it mounted: the mount point is the host's
	 * directory still, and what may be mounted there is not ours. The
	 * connection is gone by now (the daemon closed its device before the
	 * pipe, or died), so a stat of our mount answers ENOTCONN at once. */
	struct stat st;
	if (stat(mountpoint, &st) == 0 ? st.st_dev == before : errno == ENOENT)
		_exit(0);
	if (umount2(mountpoint, MNT_DETACH | UMOUNT_NOFOLLOW) == 0 || errno != EPERM)
		_exit(0);
	/* Mounted through the setuid helper: unmount through it. */
	execlp("fusermount3", "fusermount3", "-u", "-q", "-z", "--", mountpoint, (char *)NULL);
	_exit(1);
}

int vr_view_keeper_start(const char *mountpoint)
{
	/* Its device, looked at here: the child may only run once we mounted. */
	struct stat st;
	if (stat(mountpoint, &st) < 0)
		return -errno;
	int p[2];
	if (pipe2(p, O_CLOEXEC) < 0)
		return -errno;
	pid_t pid = fork();
	if (pid < 0) {
		int err = errno;
		close(p[0]);
		close(p[1]);
		return -err;
	}
	if (pid == 0) {
		close(p[1]);
		keeper_main(p[0], st.st_dev, mountpoint);
	}
	close(p[0]);
	K.pid = pid;
	K.fd = p[1];
	return 0;
}

/* The audit log lives in a directory the daemon rotates it in (LOG →
 * LOG.N, a new LOG): writing, creating, renaming and removing files there.
 * The caller opened the log and its directory before the mount (audit_fd,
 * audit_dir_fd: the state directory, or FILE's for --audit FILE); a path
 * alone is opened here, a caller that did not open it first (never a run
 * nor `vault-run mount`: a path under the view would be looked up through
 * it before it serves). */
#define AUDIT_DIR_RIGHTS \
	(VR_LL_FS_READ_FILE | VR_LL_FS_READ_DIR | VR_LL_FS_WRITE_FILE | VR_LL_FS_TRUNCATE | \
	 VR_LL_FS_MAKE_REG | VR_LL_FS_REMOVE_FILE)

static int allow_audit(VrLandlock *ll, const VrViewOptions *o)
{
	if (o->audit_fd >= 0)
		return o->audit_dir_fd >= 0 ? vr_landlock_allow_fd(ll, o->audit_dir_fd, AUDIT_DIR_RIGHTS) : 0;
	if (!o->audit_path || strcmp(o->audit_path, "-") == 0 || strcmp(o->audit_path, "syslog") == 0)
		return 0;
	g_autofree char *dir = g_path_get_dirname(o->audit_path);
	return vr_landlock_allow_path(ll, dir, AUDIT_DIR_RIGHTS);
}

/* Tests only (tests/escape/startup-order.sh): VR_TEST_CONFINE=slow delays
 * the confinement by a second, =fail makes it fail after that second. Both
 * happen after the mount was reported, while the sandbox builds its root:
 * a start-up that did not wait for "ready" would let COMMAND run while the
 * daemon is not confined yet, or never will be. It can only slow or stop
 * the daemon. */
static int test_hook(void)
{
	const char *t = secure_getenv("VR_TEST_CONFINE");
	if (!t || (strcmp(t, "slow") != 0 && strcmp(t, "fail") != 0))
		return 0;
	struct timespec ts = {1, 0};
	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
	return strcmp(t, "fail") == 0 ? -EPERM : 0;
}

int vr_view_confine(VrView *v)
{
	const VrViewOptions *o = v->opts;
	VrLandlock ll;
	int hook = test_hook();
	if (hook < 0)
		return vr_log_errno(-hook, "the view daemon cannot confine itself (VR_TEST_CONFINE=fail)");
	int r = vr_landlock_begin(&ll, VR_LL_FS_ALL, true,
	                          VR_LL_SCOPE_ABSTRACT_UNIX_SOCKET | VR_LL_SCOPE_SIGNAL);
	if (r < 0)
		return vr_log_errno(-r, "cannot create the view daemon's Landlock ruleset");
	/* Everything but running programs, beneath the project and the journal. */
	const uint64_t rw = VR_LL_FS_ALL & ~VR_LL_FS_EXECUTE;
	r = vr_landlock_allow_fd(&ll, v->root.fd, rw);
	if (r == 0 && o->journal_dir_fd >= 0)
		r = vr_landlock_allow_fd(&ll, o->journal_dir_fd, rw);
	if (r == 0)
		r = vr_landlock_allow_path(&ll, "/proc", VR_LL_FS_READ);
	if (r == 0)
		r = allow_audit(&ll, o);
	if (r < 0) {
		vr_landlock_abandon(&ll);
		return vr_log_errno(-r, "cannot build the view daemon's Landlock ruleset");
	}
	VrSeccompProg prog = {NULL, 0};
	if (o->seccomp_fd >= 0) {
		/* Nothing, or a failed read: compiled here instead. */
		if (vr_seccomp_read_prog(o->seccomp_fd, &prog) < 0)
			vr_seccomp_prog_free(&prog);
		close(o->seccomp_fd);
	}
	r = vr_confine_apply_prog(&ll, VR_CONFINE_UMOUNT_NOOP, &prog);
	vr_seccomp_prog_free(&prog);
	if (r < 0)
		return vr_log_errno(-r, "the view daemon cannot confine itself (no_new_privs, Landlock, seccomp)");
	if (ll.abi == 0)
		vr_debug("Landlock is not available: the view daemon runs with seccomp and no_new_privs only");
	return 0;
}

/* Closing our end of the pipe (after an optional byte) is the keeper's cue. */
static void keeper_tell(char say)
{
	if (K.fd < 0)
		return;
	if (say)
		(void)!write(K.fd, &say, 1);
	close(K.fd);
	K.fd = -1;
}

void vr_view_unmount_wait(void)
{
	keeper_tell(0); /* when nobody told it yet */
	if (K.pid <= 0)
		return;
	/* A lazy unmount does not wait for anyone; bounded all the same (10 s).
	 * The keeper needs about a millisecond (more when the kernel waits for
	 * an RCU grace period): a pidfd wakes us the moment it ends (a flat
	 * 5 ms sleep was a fifth of the stop). */
	int pfd = (int)syscall(SYS_pidfd_open, K.pid, 0);
	if (pfd >= 0) {
		struct pollfd p = {pfd, POLLIN, 0};
		while (poll(&p, 1, 10000) < 0 && errno == EINTR)
			;
		close(pfd);
	}
	long ns = 50 * 1000;
	for (long waited = 0; waited < 10L * 1000 * 1000 * 1000; waited += ns) {
		pid_t got = waitpid(K.pid, NULL, WNOHANG);
		if (got == K.pid || (got < 0 && errno != EINTR))
			break;
		struct timespec ts = {0, ns};
		nanosleep(&ts, NULL);
		if (ns < 5 * 1000 * 1000)
			ns *= 2;
	}
	K.pid = 0;
}

void vr_view_unmount(struct fuse_session *se)
{
	/* Closes the device (the connection ends: the keeper holds no copy);
	 * its umount2 is a no-op under the filter. The keeper unmounts while
	 * we flush the journal and the audit log. */
	fuse_session_unmount(se);
	keeper_tell(0);
}

void vr_view_keep_mount(void)
{
	keeper_tell('k');
}
