/* attack-syscalls: tries what the sandbox's seccomp filter blocks and prints
 * one line per attempt, "name errno-name" ("ok" when it succeeded). Run it
 * inside and outside: the filter shows as EPERM/ENOSYS where the kernel
 * itself would have answered differently. Arguments are deliberately
 * harmless (bad pointers, fd -1) so nothing happens when not filtered. */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

static const char *ename(int e)
{
	switch (e) {
	case 0: return "ok";
	case EPERM: return "EPERM";
	case ENOSYS: return "ENOSYS";
	case EINVAL: return "EINVAL";
	case EFAULT: return "EFAULT";
	case ENOTTY: return "ENOTTY";
	case EBADF: return "EBADF";
	case EACCES: return "EACCES";
	case ENOENT: return "ENOENT";
	default: return strerror(e);
	}
}

static void report(const char *name, long r)
{
	printf("%s %s\n", name, ename(r < 0 ? errno : 0));
}

int main(void)
{
	int null = open("/dev/null", O_RDWR);
	char c = 'x';
	/* On a non-tty, TIOCSTI fails with ENOTTY unless a filter stops it first. */
	report("tiocsti", syscall(SYS_ioctl, null, (unsigned long)TIOCSTI, &c));
	/* CVE-2019-10063: junk in the high 32 bits, which the kernel ignores. */
	report("tiocsti-high", syscall(SYS_ioctl, null, 0x100000000UL | TIOCSTI, &c));
	report("tioclinux", syscall(SYS_ioctl, null, (unsigned long)TIOCLINUX, &c));
	report("keyctl", syscall(SYS_keyctl, 0 /* KEYCTL_GET_KEYRING_ID */, -3, 0));
	report("add_key", syscall(SYS_add_key, NULL, NULL, NULL, 0, 0));
	report("bpf", syscall(SYS_bpf, -1, NULL, 0));
	report("perf_event_open", syscall(SYS_perf_event_open, NULL, 0, -1, -1, 0));
	report("userfaultfd", syscall(SYS_userfaultfd, -1));
	report("io_uring_setup", syscall(SYS_io_uring_setup, 0, NULL));
	report("mount", syscall(SYS_mount, "none", "/nonexistent-vr", "tmpfs", 0, NULL));
	report("umount2", syscall(SYS_umount2, "/nonexistent-vr", 0));
	report("open_by_handle_at", syscall(SYS_open_by_handle_at, -1, NULL, 0));
	report("clone3", syscall(SYS_clone3, NULL, 0));
	pid_t pid = (pid_t)syscall(SYS_clone, CLONE_NEWUSER | SIGCHLD, NULL, NULL, NULL, NULL);
	if (pid == 0)
		_exit(0);
	if (pid > 0)
		waitpid(pid, NULL, 0);
	report("clone-newuser", pid);
	/* last: on success it changes our user namespace */
	report("unshare-user", syscall(SYS_unshare, CLONE_NEWUSER));
	return 0;
}
