/* COMMAND's seccomp filter, loaded for real in a forked child: the rules
 * whose construction is not a plain list. personality(2) is tried with
 * every value of at most two set or two clear bits and 200,000 random ones
 * against the model "only 0, 8, 0x20000, 0x20008 and 0xffffffff pass";
 * socket and socketpair with every family up to 64 and with junk in the
 * high half. Each check first shows, in an unfiltered child, that the
 * kernel itself accepts the call, so a refusal is the filter's doing.
 * escape/seccomp.sh attacks the same rules through the i386 and x32 ABIs
 * from inside a real sandbox. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/personality.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "sandbox/sandbox.h"

#define CHILD_CHECK(cond, v)                                                                 \
	do {                                                                                 \
		if (!(cond)) {                                                               \
			fprintf(stderr, "child check failed (line %d): %s for 0x%llx (errno %s)\n", \
			        __LINE__, #cond, (unsigned long long)(v),                           \
			        strerrorname_np(errno) ? strerrorname_np(errno) : "0");             \
			_exit(1);                                                            \
		}                                                                            \
	} while (0)

static void load_filter(void)
{
	VrSeccompProg prog;
	CHILD_CHECK(vr_sandbox_seccomp_prepare(false, &prog) == 0, 0);
	CHILD_CHECK(prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) == 0, 0);
	CHILD_CHECK(vr_seccomp_load_prog(&prog, 0) == 0, 0);
	vr_seccomp_prog_free(&prog);
}

/* fn(filtered) in a child; its exit status. */
static int in_child(void (*fn)(bool), bool filtered)
{
	fflush(NULL);
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		if (filtered)
			load_filter();
		fn(filtered);
		_exit(0);
	}
	int st;
	assert_int_equal(waitpid(pid, &st, 0), pid);
	assert_true(WIFEXITED(st));
	return WEXITSTATUS(st);
}

static bool persona_allowed(uint32_t v)
{
	return v == 0 || v == PER_LINUX32 || v == UNAME26 || v == (UNAME26 | PER_LINUX32) || v == 0xffffffffu;
}

/* One value: the filter's answer must be the model's; unfiltered, the
 * kernel takes any value. Back to PER_LINUX after a change. */
static void try_persona(uint64_t arg, bool filtered)
{
	uint32_t v = (uint32_t)arg; /* the kernel's parameter is an unsigned int */
	errno = 0;
	long r = syscall(SYS_personality, arg);
	if (filtered && !persona_allowed(v))
		CHILD_CHECK(r == -1 && errno == EPERM, arg);
	else
		CHILD_CHECK(r >= 0, arg);
	if (r >= 0 && v != 0xffffffffu)
		CHILD_CHECK(syscall(SYS_personality, (unsigned long)PER_LINUX) >= 0, arg);
}

static void personas(bool filtered)
{
	for (int i = -1; i < 32; i++)
		for (int j = i; j < 32; j++) {
			uint32_t v = (i < 0 ? 0 : 1u << i) | (j < 0 ? 0 : 1u << j);
			try_persona(v, filtered);
			try_persona(~v, filtered);
			try_persona(v | PER_LINUX32, filtered);
			try_persona(v | UNAME26, filtered);
		}
	/* The kernel drops the high half: junk there changes nothing. */
	try_persona(0x100000000ull | ADDR_NO_RANDOMIZE, filtered);
	try_persona(0xffffffff00000000ull | PER_LINUX32, filtered);
	uint64_t x = 0x9e3779b97f4a7c15ull;
	for (int n = 0; n < 200000; n++) {
		x ^= x << 13, x ^= x >> 7, x ^= x << 17;
		try_persona(x, filtered);
	}
}

static void test_personality(void **state)
{
	(void)state;
	assert_int_equal(in_child(personas, false), 0); /* control: the kernel takes all */
	assert_int_equal(in_child(personas, true), 0);
}

static bool family_allowed(int f)
{
	return f == AF_UNIX || f == AF_INET || f == AF_INET6 || f == AF_NETLINK;
}

static bool inet6_works;

static void families(bool filtered)
{
	for (long f = 0; f <= 64; f++) {
		for (int type = SOCK_STREAM; type <= SOCK_RAW; type++) {
			errno = 0;
			int fd = (int)syscall(SYS_socket, f, type | SOCK_CLOEXEC, 0);
			if (fd >= 0)
				close(fd);
			if (filtered && !family_allowed((int)f))
				CHILD_CHECK(fd < 0 && errno == EAFNOSUPPORT, f);
		}
		int sv[2];
		errno = 0;
		long r = syscall(SYS_socketpair, f, SOCK_STREAM, 0, sv);
		if (r == 0)
			close(sv[0]), close(sv[1]);
		if (filtered && !family_allowed((int)f))
			CHILD_CHECK(r < 0 && errno == EAFNOSUPPORT, f);
	}
	/* junk in the high half of AF_VSOCK (the kernel reads an int) */
	errno = 0;
	int fd = (int)syscall(SYS_socket, 0x100000000L | 40 /* AF_VSOCK */, SOCK_STREAM, 0);
	if (filtered)
		CHILD_CHECK(fd < 0 && errno == EAFNOSUPPORT, 40);
	/* the allowed ones still work (AF_INET6 where the kernel has it) */
	int sv[2];
	CHILD_CHECK(socketpair(AF_UNIX, SOCK_STREAM, 0, sv) == 0, AF_UNIX);
	const int ok[][3] = {{AF_UNIX, SOCK_STREAM, 0}, {AF_INET, SOCK_STREAM, 0},
	                     {AF_INET6, SOCK_DGRAM, 0}, {AF_NETLINK, SOCK_DGRAM, 0 /* NETLINK_ROUTE */}};
	for (size_t i = 0; i < sizeof ok / sizeof *ok; i++) {
		if (ok[i][0] == AF_INET6 && !inet6_works)
			continue;
		CHILD_CHECK((fd = socket(ok[i][0], ok[i][1] | SOCK_CLOEXEC, ok[i][2])) >= 0, ok[i][0]);
		close(fd);
	}
}

/* The unfiltered kernel: some refused family (AF_VSOCK, AF_ALG, AF_PACKET
 * as root…) gives a socket or an answer other than EAFNOSUPPORT, else the
 * filtered run would prove nothing. */
static void count_kernel_families(bool filtered)
{
	(void)filtered;
	int other = 0;
	for (int f = 0; f <= 64; f++) {
		if (family_allowed(f))
			continue;
		for (int type = SOCK_STREAM; type <= SOCK_SEQPACKET; type++) {
			errno = 0;
			int fd = socket(f, type | SOCK_CLOEXEC, 0);
			if (fd >= 0)
				close(fd);
			if (fd >= 0 || errno != EAFNOSUPPORT) {
				other++;
				break;
			}
		}
	}
	_exit(other > 0 ? 0 : 3);
}

static void test_socket_families(void **state)
{
	(void)state;
	if (in_child(count_kernel_families, false) != 0)
		skip(); /* a kernel with only the four families: nothing to attack */
	int fd = socket(AF_INET6, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	inet6_works = fd >= 0;
	if (fd >= 0)
		close(fd);
	assert_int_equal(in_child(families, false), 0);
	assert_int_equal(in_child(families, true), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_personality),
		cmocka_unit_test(test_socket_families),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
