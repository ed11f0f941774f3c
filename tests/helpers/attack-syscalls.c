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

#if defined(__x86_64__)
/* The i386 ABI reached from this 64-bit process with `int $0x80`: the kernel
 * runs the 32-bit syscall table (numbers differ: keyctl is 288, not 250)
 * and seccomp sees AUDIT_ARCH_I386, so a filter written for x86-64 alone
 * lets these through. No 32-bit binary or multilib compiler is needed. */
static long i386_syscall(long nr, long a, long b, long c)
{
	long r;
	__asm__ volatile("int $0x80"
	                 : "=a"(r)
	                 : "a"(nr), "b"(a), "c"(b), "d"(c)
	                 : "r8", "r9", "r10", "r11", "memory", "cc");
	if (r < 0 && r > -4096) {
		errno = (int)-r;
		return -1;
	}
	return r;
}

static void i386_attacks_in_child(int null)
{
	report("i386-keyctl", i386_syscall(288, 0, -3, 0));
	report("i386-bpf", i386_syscall(357, -1, 0, 0));
	report("i386-tiocsti", i386_syscall(54, null, TIOCSTI, 0));
	report("i386-mount", i386_syscall(21, 0, 0, 0));
	report("i386-umount2", i386_syscall(52, 0, 0, 0));
	report("i386-unshare-user", i386_syscall(310, CLONE_NEWUSER, 0, 0));
}

/* Some kernels (ia32_emulation=0, some hypervisors) answer `int $0x80` with
 * SIGSEGV: then there is no i386 ABI to attack, and the lines say so. */
static void i386_attacks(int null)
{
	fflush(stdout);
	pid_t pid = fork();
	if (pid == 0) {
		i386_attacks_in_child(null);
		fflush(stdout);
		_exit(0);
	}
	int st = 0;
	if (pid < 0 || waitpid(pid, &st, 0) < 0 || !WIFEXITED(st))
		printf("i386-abi unavailable\n");
}

/* The x32 ABI: x86-64 numbers with bit 30 set. Kernels built without
 * CONFIG_X86_X32_ABI answer ENOSYS outside, and the test says so. */
static void x32_attacks(void)
{
	const long x32 = 0x40000000L;
	report("x32-keyctl", syscall(x32 | SYS_keyctl, 0, -3, 0));
	report("x32-unshare-user", syscall(x32 | SYS_unshare, CLONE_NEWUSER));
}
#endif

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
#if defined(__x86_64__)
	x32_attacks();
#endif
	/* last: on success they change our user namespace */
	report("unshare-user", syscall(SYS_unshare, CLONE_NEWUSER));
#if defined(__x86_64__)
	i386_attacks(null);
#endif
	return 0;
}
