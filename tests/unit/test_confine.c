/* The self-confinement of the view daemon (vr_view_confine) and of the
 * proxy (vr_proxy_confine), attacked for real: a forked child confines
 * itself with the very function the daemon or proxy calls, then tries what
 * a compromised daemon would. Landlock: a host canary outside the allowed
 * hierarchies cannot be opened or created next to (EACCES), while the
 * project and /proc stay usable. Seccomp: execve (also through the i386
 * ABI), mount, unshare, ptrace fail; /proc/self/status shows NoNewPrivs 1
 * and Seccomp 2. There is no black-box way to make the real daemon open an
 * arbitrary path (that is the point), so the confinement function itself
 * is what is tested here; escape/daemon-confined.sh checks from the host
 * that the running daemons carry it. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/confine.h"
#include "common/landlock.h"
#include "net/proxy-private.h"
#include "fusefs/view-private.h"

/* An ASan build lets ptrace through (LeakSanitizer needs it: common/confine.c). */
#if defined(__SANITIZE_ADDRESS__)
#define VR_TEST_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define VR_TEST_ASAN 1
#endif
#endif

static char tmp[64];
static char project[128], outside[128], canary[192];

static int setup(void **state)
{
	strcpy(tmp, "/tmp/vr-test-confine.XXXXXX");
	assert_non_null(mkdtemp(tmp));
	snprintf(project, sizeof project, "%s/project", tmp);
	snprintf(outside, sizeof outside, "%s/outside", tmp);
	snprintf(canary, sizeof canary, "%s/canary", outside);
	assert_int_equal(mkdir(project, 0755), 0);
	assert_int_equal(mkdir(outside, 0755), 0);
	FILE *f = fopen(canary, "w");
	assert_non_null(f);
	fputs("CANARY\n", f);
	fclose(f);
	char p[256];
	snprintf(p, sizeof p, "%s/inside.txt", project);
	f = fopen(p, "w");
	assert_non_null(f);
	fputs("inside\n", f);
	fclose(f);
	return 0;
}

static int teardown(void **state)
{
	char cmd[128];
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmp);
	return system(cmd) == 0 ? 0 : -1;
}

/* In the child: a failed check exits with its line number. */
#define CHILD_CHECK(cond)                                                              \
	do {                                                                           \
		if (!(cond)) {                                                         \
			fprintf(stderr, "child check failed (line %d): %s (errno %s)\n", __LINE__, \
			        #cond, strerrorname_np(errno) ? strerrorname_np(errno) : "?"); \
			_exit(__LINE__ % 250 + 1);                                     \
		}                                                                      \
	} while (0)

static bool file_has(const char *path, const char *line)
{
	FILE *f = fopen(path, "r");
	if (!f)
		return false;
	char buf[256];
	bool found = false;
	while (fgets(buf, sizeof buf, f))
		found |= strcmp(buf, line) == 0;
	fclose(f);
	return found;
}

/* Runs fn in a child; once fn is done the parent reads the child's
 * /proc/PID/status (the proxy may not read its own /proc). */
static int run_child(void (*fn)(void), bool confined)
{
	int done[2], go[2];
	assert_int_equal(pipe(done), 0);
	assert_int_equal(pipe(go), 0);
	fflush(NULL);
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		close(done[0]);
		close(go[1]);
		fn();
		char c = 'd';
		if (write(done[1], &c, 1) != 1)
			_exit(250);
		if (read(go[0], &c, 1) < 0)
			_exit(251);
		_exit(0);
	}
	close(done[1]);
	close(go[0]);
	char c, path[64];
	bool reached = read(done[0], &c, 1) == 1;
	snprintf(path, sizeof path, "/proc/%d/status", (int)pid);
	bool nnp = reached && file_has(path, "NoNewPrivs:\t1\n");
	bool seccomp = reached && file_has(path, "Seccomp:\t2\n");
	close(go[1]);
	close(done[0]);
	int st;
	assert_int_equal(waitpid(pid, &st, 0), pid);
	assert_true(WIFEXITED(st));
	if (WEXITSTATUS(st) == 0 && confined) {
		assert_true(nnp);
		assert_true(seccomp);
	}
	return WEXITSTATUS(st);
}

#if defined(__x86_64__)
/* execve through the i386 ABI (int 0x80, number 11), from a grandchild: a
 * kernel without IA32 emulation answers with SIGSEGV, which is as good.
 * True when it was refused or impossible; false when it ran /bin/true. */
static bool i386_execve_refused(void)
{
	pid_t pid = fork();
	if (pid == 0) {
		signal(SIGSEGV, SIG_DFL); /* not cmocka's handler */
		/* Below 4 GiB, where a 32-bit pointer can reach it. */
		char *path = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_32BIT, -1, 0);
		if (path == MAP_FAILED)
			_exit(42);
		strcpy(path, "/bin/true");
		long ret;
		__asm__ volatile("int $0x80" : "=a"(ret) : "a"(11L), "b"(path), "c"(0L), "d"(0L) : "memory");
		_exit(ret == -EPERM || ret == -EACCES ? 42 : 43);
	}
	int st;
	if (pid < 0 || waitpid(pid, &st, 0) != pid)
		return false;
	return (WIFEXITED(st) && WEXITSTATUS(st) == 42) || (WIFSIGNALED(st) && WTERMSIG(st) == SIGSEGV);
}
#endif

/* What neither confined process may do, whatever Landlock offers. */
static void check_seccomp_and_nnp(void)
{
	char *argv[] = {(char *)"true", NULL};
	errno = 0;
	CHILD_CHECK(execve("/bin/true", argv, environ) < 0 && (errno == EPERM || errno == EACCES));
#if defined(__x86_64__)
	CHILD_CHECK(i386_execve_refused());
#endif
	errno = 0;
	CHILD_CHECK(mount("none", tmp, "tmpfs", 0, NULL) < 0 && errno == EPERM);
	errno = 0;
	CHILD_CHECK(unshare(CLONE_NEWUSER) < 0 && errno == EPERM);
#ifndef VR_TEST_ASAN
	errno = 0;
	CHILD_CHECK(ptrace(PTRACE_ATTACH, getppid(), NULL, NULL) < 0 && errno == EPERM);
#endif
}

static void view_child(void)
{
	/* A session that is never mounted: the keeper has nothing to unmount
	 * but is started and stopped exactly as in the daemon. */
	struct fuse_lowlevel_ops ops = {0};
	char *argv[] = {(char *)"vault-run", NULL};
	struct fuse_args args = FUSE_ARGS_INIT(1, argv);
	VrViewOptions o;
	vr_view_options_init(&o);
	o.project = project;
	o.mountpoint = project;
	VrView v = {.opts = &o};
	v.root.fd = open(project, O_PATH | O_DIRECTORY | O_CLOEXEC);
	CHILD_CHECK(v.root.fd >= 0);
	v.se = fuse_session_new(&args, &ops, sizeof ops, NULL);
	CHILD_CHECK(v.se != NULL);
	CHILD_CHECK(vr_view_confine(&v) == 0);

	check_seccomp_and_nnp();
	/* The project: read, create, rename, remove through its fd. */
	int fd = openat(v.root.fd, "inside.txt", O_RDONLY | O_CLOEXEC);
	CHILD_CHECK(fd >= 0);
	close(fd);
	fd = openat(v.root.fd, "new.txt", O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	CHILD_CHECK(fd >= 0);
	close(fd);
	CHILD_CHECK(renameat(v.root.fd, "new.txt", v.root.fd, "renamed.txt") == 0);
	CHILD_CHECK(unlinkat(v.root.fd, "renamed.txt", 0) == 0);
	/* Through /proc/self/fd/N, as the ops do. */
	char proc[64];
	snprintf(proc, sizeof proc, "/proc/self/fd/%d", v.root.fd);
	fd = open(proc, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	CHILD_CHECK(fd >= 0);
	close(fd);
	fd = open("/proc/self/status", O_RDONLY | O_CLOEXEC);
	CHILD_CHECK(fd >= 0);
	close(fd);

	if (vr_landlock_abi() > 0) {
		errno = 0;
		CHILD_CHECK(open(canary, O_RDONLY | O_CLOEXEC) < 0 && errno == EACCES);
		errno = 0;
		CHILD_CHECK(open(canary, O_WRONLY | O_TRUNC | O_CLOEXEC) < 0 && errno == EACCES);
		char planted[256];
		snprintf(planted, sizeof planted, "%s/planted", outside);
		errno = 0;
		CHILD_CHECK(open(planted, O_WRONLY | O_CREAT | O_CLOEXEC, 0600) < 0 && errno == EACCES);
		errno = 0;
		CHILD_CHECK(open("/etc/passwd", O_RDONLY | O_CLOEXEC) < 0 && errno == EACCES);
		/* /proc is read-only to it. */
		errno = 0;
		CHILD_CHECK(open("/proc/self/attr/current", O_WRONLY | O_CLOEXEC) < 0);
	}
	vr_view_unmount(v.se);
	fuse_session_destroy(v.se);
}

static void test_view_daemon_confined(void **state)
{
	assert_int_equal(run_child(view_child, true), 0);
	/* The canary is untouched and nothing was planted. */
	char planted[256];
	snprintf(planted, sizeof planted, "%s/planted", outside);
	assert_int_equal(access(planted, F_OK), -1);
	FILE *f = fopen(canary, "r");
	char buf[16] = "";
	assert_non_null(f);
	assert_non_null(fgets(buf, sizeof buf, f));
	fclose(f);
	assert_string_equal(buf, "CANARY\n");
}

static void proxy_child(void)
{
	CHILD_CHECK(vr_proxy_confine() == 0);
	check_seccomp_and_nnp();
	int fd = open("/etc/hosts", O_RDONLY | O_CLOEXEC);
	CHILD_CHECK(fd >= 0 || errno == ENOENT);
	if (fd >= 0)
		close(fd);
	if (vr_landlock_abi() > 0) {
		errno = 0;
		CHILD_CHECK(open(canary, O_RDONLY | O_CLOEXEC) < 0 && errno == EACCES);
		errno = 0;
		CHILD_CHECK(open(project, O_RDONLY | O_DIRECTORY | O_CLOEXEC) < 0 && errno == EACCES);
		errno = 0;
		CHILD_CHECK(open("/etc/passwd", O_RDONLY | O_CLOEXEC) < 0 && errno == EACCES);
		/* Nothing is writable, not even where libraries are read. */
		errno = 0;
		CHILD_CHECK(open("/usr/lib/vr-test-planted", O_WRONLY | O_CREAT | O_CLOEXEC, 0600) < 0 &&
		            errno == EACCES);
	}
}

static void test_proxy_confined(void **state)
{
	assert_int_equal(run_child(proxy_child, true), 0);
}

/* The helper degrades, it never half-applies: with the kernel's ABI every
 * right it names is either handled or dropped, and enforcing an empty
 * ruleset still sets no_new_privs. */
static void nnp_child(void)
{
	VrLandlock ll;
	CHILD_CHECK(vr_landlock_begin(&ll, 0, false, 0) == 0);
	CHILD_CHECK(ll.ruleset_fd == -1);
	CHILD_CHECK(vr_landlock_enforce(&ll) == 0);
	CHILD_CHECK(prctl(PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0) == 1);
}

static void test_landlock_degrades(void **state)
{
	assert_int_equal(run_child(nnp_child, false), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_view_daemon_confined),
		cmocka_unit_test(test_proxy_confined),
		cmocka_unit_test(test_landlock_degrades),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
