/* attack-syscalls: tries what the sandbox's seccomp filter blocks and prints
 * one line per attempt, "name errno-name" ("ok" when it succeeded). Run it
 * inside and outside: the filter shows as EPERM/ENOSYS where the kernel
 * itself would have answered differently. Arguments are deliberately
 * harmless (bad pointers, fd -1) so nothing happens when not filtered. */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/personality.h>
#include <sys/ptrace.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#ifndef AF_VSOCK
#define AF_VSOCK 40
#endif

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
	case EAFNOSUPPORT: return "EAFNOSUPPORT";
	case EOPNOTSUPP: return "EOPNOTSUPP";
	default: return strerror(e);
	}
}

static void report(const char *name, long r)
{
	printf("%s %s\n", name, ename(r < 0 ? errno : 0));
}

/* A call that returns a descriptor: reported, then closed. */
static void report_fd(const char *name, long fd)
{
	report(name, fd);
	if (fd >= 0)
		close((int)fd);
}

/* personality(v), then back to PER_LINUX (the personas tried change
 * nothing this process does before it exits). */
static void report_persona(const char *name, long nr, unsigned long v, long (*call)(long, long, long, long))
{
	long r = call(nr, (long)v, 0, 0);
	report(name, r);
	if (r >= 0)
		personality(PER_LINUX);
}

static long native_call(long nr, long a, long b, long c)
{
	return syscall(nr, a, b, c);
}

/* ptrace stays allowed inside: a child that asks to be traced and stops is
 * read by its parent (PTRACE_PEEKUSER), the way a debugger starts. */
static long ptrace_own_child(void)
{
	pid_t pid = fork();
	if (pid == 0) {
		if (ptrace(PTRACE_TRACEME, 0, NULL, NULL) < 0)
			_exit(1);
		raise(SIGSTOP);
		_exit(0);
	}
	int st;
	if (pid < 0 || waitpid(pid, &st, 0) != pid)
		return -1;
	long r = 0;
	if (!WIFSTOPPED(st)) {
		errno = EPERM; /* PTRACE_TRACEME failed */
		r = -1;
	} else {
		errno = 0;
		r = ptrace(PTRACE_PEEKUSER, pid, NULL, NULL);
		r = r == -1 && errno ? -1 : 0;
	}
	int e = errno;
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	errno = e;
	return r;
}

/* What the filter narrows beyond plain refusals: socket families (vsock
 * reaches a VM's hypervisor and belongs to no network namespace), the
 * personas, the LDT, a.out libraries, NUMA page moves; and what stays. */
static void family_and_misc_attacks(void)
{
	int sv[2];
	report_fd("socket-vsock", syscall(SYS_socket, AF_VSOCK, SOCK_STREAM, 0));
	report_fd("socket-packet", syscall(SYS_socket, AF_PACKET, SOCK_DGRAM, 0));
	report_fd("socket-vsock-high", syscall(SYS_socket, 0x100000000L | AF_VSOCK, SOCK_STREAM, 0));
	report("socketpair-vsock", syscall(SYS_socketpair, AF_VSOCK, SOCK_STREAM, 0, sv));
	report_fd("socket-unix", syscall(SYS_socket, AF_UNIX, SOCK_STREAM, 0));
	report_fd("socket-inet", syscall(SYS_socket, AF_INET, SOCK_STREAM, 0));
	report_fd("socket-netlink", syscall(SYS_socket, AF_NETLINK, SOCK_DGRAM, 0));
	long r = syscall(SYS_socketpair, AF_UNIX, SOCK_STREAM, 0, sv);
	report("socketpair-unix", r);
	if (r == 0)
		close(sv[0]), close(sv[1]);
	report_persona("personality-bsd", SYS_personality, 6 /* PER_BSD */, native_call);
	report_persona("personality-norandom", SYS_personality, ADDR_NO_RANDOMIZE, native_call);
	report_persona("personality-exec", SYS_personality, READ_IMPLIES_EXEC, native_call);
	report_persona("personality-linux32", SYS_personality, PER_LINUX32, native_call);
	report_persona("personality-uname26", SYS_personality, UNAME26, native_call);
	report_persona("personality-query", SYS_personality, 0xffffffffUL, native_call);
	char ldt[16];
	report("modify_ldt", syscall(SYS_modify_ldt, 0, ldt, sizeof ldt));
	report("uselib", syscall(SYS_uselib, NULL));
	report("move_pages", syscall(SYS_move_pages, 0, 0, NULL, NULL, NULL, 0));
	report("migrate_pages", syscall(SYS_migrate_pages, 0, 0, NULL, NULL));
	report("mbind", syscall(SYS_mbind, NULL, 0, 0 /* MPOL_DEFAULT */, NULL, 0, 0));
	report("get_mempolicy", syscall(SYS_get_mempolicy, NULL, NULL, 0, NULL, 0));
	report("set_mempolicy", syscall(SYS_set_mempolicy, 0 /* MPOL_DEFAULT */, NULL, 0));
	report("ptrace-child", ptrace_own_child());
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

/* Four and five arguments (esi, edi); ebp, the sixth, stays untouched
 * (it may be the frame pointer). */
static long i386_syscall5(long nr, long a, long b, long c, long d, long e)
{
	long r;
	__asm__ volatile("int $0x80"
	                 : "=a"(r)
	                 : "a"(nr), "b"(a), "c"(b), "d"(c), "S"(d), "D"(e)
	                 : "r8", "r9", "r10", "r11", "memory", "cc");
	if (r < 0 && r > -4096) {
		errno = (int)-r;
		return -1;
	}
	return r;
}

/* i386 numbers (arch/x86/entry/syscalls/syscall_32.tbl). socketcall's
 * arguments are read from memory, which must lie below 4 GiB for a 32-bit
 * call: MAP_32BIT. */
static void i386_family_attacks(void)
{
	long r = i386_syscall(359 /* socket */, AF_VSOCK, SOCK_STREAM, 0);
	report_fd("i386-socket-vsock", r);
	report_fd("i386-socket-packet", i386_syscall(359, AF_PACKET, SOCK_DGRAM, 0));
	report("i386-socketpair-vsock", i386_syscall5(360 /* socketpair */, AF_VSOCK, SOCK_STREAM, 0, 0, 0));
	report_fd("i386-socket-unix", i386_syscall(359, AF_UNIX, SOCK_STREAM, 0));
	unsigned int *args = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_32BIT, -1, 0);
	if (args != MAP_FAILED) {
		args[0] = AF_VSOCK, args[1] = SOCK_STREAM, args[2] = 0;
		report_fd("i386-socketcall-vsock", i386_syscall(102 /* socketcall */, 1 /* SYS_SOCKET */, (long)(uintptr_t)args, 0));
		args[0] = AF_UNIX;
		report_fd("i386-socketcall-unix", i386_syscall(102, 1, (long)(uintptr_t)args, 0));
		munmap(args, 4096);
	}
	r = i386_syscall(136 /* personality */, 6 /* PER_BSD */, 0, 0);
	report("i386-personality-bsd", r);
	if (r >= 0)
		personality(PER_LINUX);
	r = i386_syscall(136, PER_LINUX32, 0, 0);
	report("i386-personality-linux32", r);
	if (r >= 0)
		personality(PER_LINUX);
	report("i386-modify_ldt", i386_syscall(123, 0, 0, 0));
	report("i386-uselib", i386_syscall(86, 0, 0, 0));
	report("i386-migrate_pages", i386_syscall5(294, 0, 0, 0, 0, 0));
	report("i386-get_mempolicy", i386_syscall5(275, 0, 0, 0, 0, 0));
	report("i386-set_mempolicy", i386_syscall(276, 0 /* MPOL_DEFAULT */, 0, 0));
}

static void i386_attacks_in_child(int null)
{
	i386_family_attacks();
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
	report_fd("x32-socket-vsock", syscall(x32 | SYS_socket, AF_VSOCK, SOCK_STREAM, 0));
	report_persona("x32-personality-bsd", x32 | SYS_personality, 6, native_call);
	report("x32-modify_ldt", syscall(x32 | SYS_modify_ldt, 0, NULL, 0));
	report("x32-move_pages", syscall(x32 | 533 /* compat move_pages */, 0, 0, NULL, NULL, NULL, 0));
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
	family_and_misc_attacks();
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
