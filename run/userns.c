/* The supervisor's user + mount namespace and its id maps.
 *
 * Unprivileged: the user's own uid/gid map to themselves inside (setgroups
 * denied, as the kernel demands for a single-line map written by ourselves).
 * Host root: the agent must never hold the host's uid 0, so the maps carry a
 * second id (65534) the sandbox switches to. A multi-line map needs
 * CAP_SETUID in the *parent* namespace, so a helper forked before unshare()
 * (still in the initial namespace) writes it for us. */
#include "run/run.h"

#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/cleanup.h"
#include "common/fd-util.h"
#include "common/log.h"
#include "common/proc.h"

#define AGENT_ID 65534

static int read_sysctl(const char *path)
{
	char buf[32] = "";
	vr_cleanup_fd int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	if (vr_read_all(fd, buf, sizeof buf - 1) <= 0)
		return -1;
	return atoi(buf);
}

void vr_userns_identity(VrIdentity *id)
{
	id->uid = getuid();
	id->gid = getgid();
	id->host_root = false;
	if (id->uid != 0)
		return;
	FILE *f = fopen("/proc/self/uid_map", "re");
	if (!f)
		return;
	unsigned long in, out, count;
	if (fscanf(f, "%lu %lu %lu", &in, &out, &count) == 3)
		id->host_root = in == 0 && out == 0 && count == 4294967295UL;
	fclose(f);
}

const char *vr_userns_diagnose(void)
{
	if (read_sysctl("/proc/sys/kernel/apparmor_restrict_unprivileged_userns") == 1)
		return "AppArmor restricts them (kernel.apparmor_restrict_unprivileged_userns=1); "
		       "fix: install packaging/apparmor/vault-run into /etc/apparmor.d/ or run "
		       "'sudo sysctl kernel.apparmor_restrict_unprivileged_userns=0'";
	if (read_sysctl("/proc/sys/user/max_user_namespaces") == 0)
		return "user.max_user_namespaces=0; fix: 'sudo sysctl user.max_user_namespaces=15000'";
	if (read_sysctl("/proc/sys/kernel/unprivileged_userns_clone") == 0)
		return "kernel.unprivileged_userns_clone=0; fix: "
		       "'sudo sysctl kernel.unprivileged_userns_clone=1'";
	return "inside a container that forbids them, or a seccomp filter?";
}

/* One line saying why user namespaces fail here and how to fix it. */
static int explain_userns_failure(int err)
{
	return vr_log_errno(err, "cannot create a user namespace: %s", vr_userns_diagnose());
}

int vr_userns_prepare(const VrIdentity *id, pid_t *ret_helper, int *ret_go_fd)
{
	*ret_helper = -1;
	*ret_go_fd = -1;
	if (!id->host_root)
		return 0;
	vr_cleanup_pair int go[2] = {-1, -1};
	if (pipe2(go, O_CLOEXEC) < 0)
		return vr_log_errno(errno, "pipe");
	pid_t target = getpid();
	/* It dies with us, and checks we were still there when it armed
	 * that, as every helper does (it used to skip the check). */
	pid_t pid = vr_fork_helper(SIGKILL, 1);
	if (pid < 0)
		return vr_log_errno(errno, "fork");
	if (pid == 0) {
		close(go[1]);
		char c;
		if (read(go[0], &c, 1) != 1)
			_exit(1);
		char path[64];
		static const char map[] = "0 0 1\n65534 65534 1\n";
		snprintf(path, sizeof path, "/proc/%d/uid_map", (int)target);
		if (vr_write_file_at(AT_FDCWD, path, map) < 0)
			_exit(2);
		snprintf(path, sizeof path, "/proc/%d/gid_map", (int)target);
		if (vr_write_file_at(AT_FDCWD, path, map) < 0)
			_exit(3);
		_exit(0);
	}
	vr_clear_fd(&go[0]);
	*ret_helper = pid;
	*ret_go_fd = vr_steal_fd(&go[1]);
	return 0;
}

int vr_userns_enter(const VrIdentity *id, pid_t helper, int go_fd_in)
{
	vr_cleanup_fd int go_fd = go_fd_in; /* ours to close */
	if (unshare(CLONE_NEWUSER | CLONE_NEWNS) < 0) {
		int err = errno;
		vr_clear_fd(&go_fd);
		if (helper > 0)
			waitpid(helper, NULL, 0);
		return explain_userns_failure(err);
	}
	if (id->host_root) {
		int st = 0;
		if (vr_write_all(go_fd, "g", 1) < 0 || waitpid(helper, &st, 0) < 0 ||
		    !WIFEXITED(st) || WEXITSTATUS(st) != 0)
			return vr_log_errno(EPERM, "cannot write the uid/gid maps of the sandbox");
		vr_clear_fd(&go_fd);
		/* We are uid 0 of the new namespace with a full set there. */
		if (setresgid(0, 0, 0) < 0 || setresuid(0, 0, 0) < 0)
			return vr_log_errno(errno, "cannot become root of the new user namespace");
	} else {
		char map[64];
		int r = vr_write_file_at(AT_FDCWD, "/proc/self/setgroups", "deny");
		if (r < 0 && r != -ENOENT)
			return explain_userns_failure(-r);
		snprintf(map, sizeof map, "%u %u 1\n", (unsigned)id->uid, (unsigned)id->uid);
		if ((r = vr_write_file_at(AT_FDCWD, "/proc/self/uid_map", map)) < 0)
			return explain_userns_failure(-r);
		snprintf(map, sizeof map, "%u %u 1\n", (unsigned)id->gid, (unsigned)id->gid);
		if ((r = vr_write_file_at(AT_FDCWD, "/proc/self/gid_map", map)) < 0)
			return explain_userns_failure(-r);
	}
	/* Nothing mounted from here on may propagate back to the host (as root,
	 * / is shared and pivot_root would refuse it too). */
	if (mount(NULL, "/", NULL, MS_REC | MS_SLAVE, NULL) < 0)
		return vr_log_errno(errno, "cannot make / a slave mount");
	return 0;
}
