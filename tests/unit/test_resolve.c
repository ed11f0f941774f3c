/* The no-symlink path resolver (common/resolve.c), the one walker the
 * journal, undo, the sandbox's binds and the view use: plain relative
 * names only, and no component may be a symlink, relative or absolute, or
 * lead out of the root; paths deeper than PATH_MAX resolve; running out of
 * fds is the caller's -EMFILE, with nothing leaked.
 *
 * Every case runs three times: with openat2 as the kernel gives it, with a
 * seccomp filter answering EAGAIN to every openat2 (the resolver retries,
 * then walks), and with one answering ENOSYS (a kernel without openat2).
 * The component walk is also driven step by step (openat is wrapped, see
 * tests/CMakeLists.txt) to swap a directory for a symlink between two of
 * its steps, deterministically. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "common/resolve.h"

static char T[] = "/tmp/vr-resolve-XXXXXX";
static int rootfd = -1;

/* Directories of 200-byte names, DEEP_LEVELS of them under root/deep: a
 * path of ~8,000 bytes, twice PATH_MAX. */
#define DEEP_LEVELS 40
static char deep_name[201];

/* The step hook: when the walk is about to open a component named
 * hook_at, hook_fn runs once first. */
static const char *hook_at;
static void (*hook_fn)(void);

int __real_openat64(int dirfd, const char *path, int flags, ...);
int __wrap_openat64(int dirfd, const char *path, int flags, ...);
int __real_openat(int dirfd, const char *path, int flags, ...);
int __wrap_openat(int dirfd, const char *path, int flags, ...);

static void step(const char *path)
{
	if (hook_at && strcmp(path, hook_at) == 0) {
		void (*fn)(void) = hook_fn;
		hook_at = NULL;
		hook_fn = NULL;
		fn();
	}
}

/* The walk opens with O_PATH, never O_CREAT: no mode argument to pass on. */
int __wrap_openat64(int dirfd, const char *path, int flags, ...)
{
	step(path);
	return __real_openat64(dirfd, path, flags);
}

int __wrap_openat(int dirfd, const char *path, int flags, ...)
{
	step(path);
	return __real_openat(dirfd, path, flags);
}

static void tpath(char p[static PATH_MAX], const char *rel)
{
	assert_true(snprintf(p, PATH_MAX, "%s/%s", T, rel) < PATH_MAX);
}

static void mk(const char *rel, int dir)
{
	char p[PATH_MAX];
	tpath(p, rel);
	if (dir)
		assert_int_equal(mkdir(p, 0700), 0);
	else
		assert_int_equal(close(open(p, O_CREAT | O_WRONLY | O_CLOEXEC, 0600)), 0);
}

static void ln(const char *target, const char *rel)
{
	char p[PATH_MAX];
	tpath(p, rel);
	assert_int_equal(symlink(target, p), 0);
}

/* REL (under T) becomes a symlink to TARGET, its directory kept as
 * REL.real; unswap puts it back. */
static void swap(const char *rel, const char *target)
{
	char p[PATH_MAX], q[PATH_MAX + 8];
	tpath(p, rel);
	assert_true(snprintf(q, sizeof q, "%s.real", p) < (int)sizeof q);
	assert_int_equal(rename(p, q), 0);
	assert_int_equal(symlink(target, p), 0);
}

static void unswap(const char *rel)
{
	char p[PATH_MAX], q[PATH_MAX + 8];
	tpath(p, rel);
	assert_true(snprintf(q, sizeof q, "%s.real", p) < (int)sizeof q);
	assert_int_equal(unlink(p), 0);
	assert_int_equal(rename(q, p), 0);
}

static int lowest_free_fd(void)
{
	int fd = dup(0);
	close(fd);
	return fd;
}

/* root/deep/NAME x DEEP_LEVELS/f, built through fds (too long for a path),
 * with a symlink "l" to the next level's directory beside it at level 20. */
static int build_deep(void)
{
	memset(deep_name, 'd', sizeof deep_name - 1);
	int fd = openat(rootfd, "deep", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	for (int i = 0; fd >= 0 && i < DEEP_LEVELS; i++) {
		if (mkdirat(fd, deep_name, 0700) < 0)
			return -1;
		if (i == 19 && symlinkat(deep_name, fd, "l") < 0)
			return -1;
		int next = openat(fd, deep_name, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		close(fd);
		fd = next;
	}
	if (fd < 0)
		return -1;
	int f = openat(fd, "f", O_CREAT | O_WRONLY | O_CLOEXEC, 0600);
	close(fd);
	return f < 0 ? -1 : close(f);
}

/* deep/NAME/.../f, with "l" in place of the NAME at level SWAP (1-based;
 * 0: none). */
static char *deep_rel(int swap_at)
{
	size_t n = strlen("deep/") + (size_t)DEEP_LEVELS * (sizeof deep_name) + 2;
	char *s = malloc(n), *p = s;
	assert_non_null(s);
	p = stpcpy(p, "deep/");
	for (int i = 1; i <= DEEP_LEVELS; i++) {
		p = stpcpy(p, i == swap_at ? "l" : deep_name);
		*p++ = '/';
	}
	strcpy(p, "f");
	return s;
}

static int fixture(void)
{
	if (!mkdtemp(T))
		return -1;
	mk("root", 1);
	mk("root/a", 1);
	mk("root/a/b", 1);
	mk("root/a/b/f", 0);
	mk("root/file", 0);
	mk("outside", 1);
	ln("a", "root/rel");           /* relative, stays inside */
	ln("/tmp", "root/abs");        /* absolute */
	ln("../outside", "root/out");  /* leads out */
	/* A chain for symlinks at each step, and its twin outside. */
	const char *chain[] = {"c1", "c1/c2", "c1/c2/c3", "c1/c2/c3/c4", NULL};
	for (const char **c = chain; *c; c++) {
		char p[PATH_MAX];
		assert_true(snprintf(p, sizeof p, "root/%s", *c) < (int)sizeof p);
		mk(p, 1);
		assert_true(snprintf(p, sizeof p, "outside/%s", *c) < (int)sizeof p);
		mk(p, 1);
	}
	mk("root/c1/c2/c3/c4/f", 0);
	mk("outside/c1/c2/c3/c4/f", 0);
	mk("root/deep", 1);
	char p[PATH_MAX];
	tpath(p, "root");
	rootfd = open(p, O_PATH | O_DIRECTORY | O_CLOEXEC);
	return rootfd < 0 ? -1 : build_deep();
}

static int teardown(void)
{
	close(rootfd);
	char cmd[PATH_MAX + 16];
	assert_true(snprintf(cmd, sizeof cmd, "rm -rf '%s'", T) < (int)sizeof cmd);
	return system(cmd);
}

static void relpaths(void **state)
{
	(void)state;
	assert_true(vr_relpath_ok("a"));
	assert_true(vr_relpath_ok("a/b/f"));
	assert_true(vr_relpath_ok(".env")); /* a dot name is a name */
	assert_true(vr_relpath_ok("..a/b..")); /* so are these */
	const char *bad[] = {"", "/a", "a/", "a//b", ".", "..", "a/./b", "a/../b", "../x",
	                     "a/b/..", "a/..", "./a", NULL};
	for (const char **b = bad; *b; b++)
		if (vr_relpath_ok(*b))
			fail_msg("'%s' accepted", *b);
}

static void plain_names_resolve(void **state)
{
	(void)state;
	int fd = -1;
	const char *name = NULL;
	assert_int_equal(vr_resolve_parent(rootfd, "a/b/f", &fd, &name), 0);
	assert_string_equal(name, "f");
	struct stat st;
	assert_int_equal(fstatat(fd, name, &st, AT_SYMLINK_NOFOLLOW), 0);
	assert_true(S_ISREG(st.st_mode));
	close(fd);
	assert_int_equal(vr_resolve_parent(rootfd, "file", &fd, &name), 0);
	assert_string_equal(name, "file");
	close(fd);
	/* The last component is not followed: a link there is the caller's to judge. */
	assert_int_equal(vr_resolve_parent(rootfd, "out", &fd, &name), 0);
	close(fd);
	assert_int_equal(vr_resolve_parent(rootfd, "c1/c2/c3/c4/f", &fd, &name), 0);
	assert_int_equal(fstatat(fd, name, &st, AT_SYMLINK_NOFOLLOW), 0);
	close(fd);
}

static void no_symlink_on_the_way(void **state)
{
	(void)state;
	const char *via[] = {"rel/b/f", "abs/x", "out/x", NULL};
	for (const char **v = via; *v; v++) {
		int fd = -1;
		const char *name = NULL;
		int r = vr_resolve_parent(rootfd, *v, &fd, &name);
		if (r != -ELOOP)
			fail_msg("'%s': %d, expected -ELOOP", *v, r);
		assert_int_equal(fd, -1);
	}
	/* A file in the way is told apart from a link: a caller may allow
	 * the one and refuse the other (fusefs/keyfile.c's dir_brings). */
	int fd = -1;
	const char *name;
	assert_int_equal(vr_resolve_parent(rootfd, "file/x", &fd, &name), -ENOTDIR);
	assert_int_equal(vr_resolve_parent(rootfd, "a/b/f/x", &fd, &name), -ENOTDIR);
	assert_int_equal(vr_resolve_parent(rootfd, "a/nothing/x", &fd, &name), -ENOENT);
	const char *dots[] = {"../outside/x", "a/../../outside/x", "a/b/../../file", "/etc/passwd",
	                      "a/./b/f", "a//b/f", NULL};
	for (const char **d = dots; *d; d++)
		if (vr_resolve_parent(rootfd, *d, &fd, &name) != -EINVAL)
			fail_msg("'%s' not refused as -EINVAL", *d);
	assert_int_equal(fd, -1);
}

/* Each directory on the way in turn made a symlink, to its own real
 * directory (following would land just where the plain path does) and to
 * its twin outside: refused at every step. */
static void symlink_at_every_component(void **state)
{
	(void)state;
	const char *steps[] = {"c1", "c1/c2", "c1/c2/c3", "c1/c2/c3/c4", NULL};
	for (const char **s = steps; *s; s++) {
		char rel[PATH_MAX], base[64], outside[PATH_MAX];
		assert_true(snprintf(rel, sizeof rel, "root/%s", *s) < (int)sizeof rel);
		const char *slash = strrchr(*s, '/');
		assert_true(snprintf(base, sizeof base, "%s.real", slash ? slash + 1 : *s) < (int)sizeof base);
		assert_true(snprintf(outside, sizeof outside, "%s/outside/%s", T, *s) < (int)sizeof outside);
		const char *targets[] = {base, outside, NULL};
		for (const char **t = targets; *t; t++) {
			swap(rel, *t);
			int fd = -1;
			const char *name;
			int r = vr_resolve_parent(rootfd, "c1/c2/c3/c4/f", &fd, &name);
			unswap(rel);
			if (r != -ELOOP)
				fail_msg("%s -> %s: %d, expected -ELOOP", *s, *t, r);
			assert_int_equal(fd, -1);
		}
	}
}

static void deeper_than_path_max(void **state)
{
	(void)state;
	char *rel = deep_rel(0);
	assert_true(strlen(rel) > 2 * PATH_MAX - 400);
	int fd = -1;
	const char *name = NULL;
	assert_int_equal(vr_resolve_parent(rootfd, rel, &fd, &name), 0);
	assert_string_equal(name, "f");
	struct stat st;
	assert_int_equal(fstatat(fd, name, &st, AT_SYMLINK_NOFOLLOW), 0);
	assert_true(S_ISREG(st.st_mode));
	close(fd);
	free(rel);
	/* The link at level 20 leads to the very directory the plain name
	 * does; still refused, past PATH_MAX as before it. */
	rel = deep_rel(20);
	fd = -1;
	int r = vr_resolve_parent(rootfd, rel, &fd, &name);
	if (r != -ELOOP)
		fail_msg("a symlink deep down: %d, expected -ELOOP", r);
	assert_int_equal(fd, -1);
	free(rel);
	/* A name longer than NAME_MAX is too long for any walk. */
	char big[NAME_MAX + 8];
	memset(big, 'x', NAME_MAX + 1);
	strcpy(big + NAME_MAX + 1, "/f");
	assert_int_equal(vr_resolve_parent(rootfd, big, &fd, &name), -ENAMETOOLONG);
	assert_int_equal(fd, -1);
}

/* Out of fds: -EMFILE for the caller to retry (the view's evictor), and
 * nothing held on the way out, whether no fd at all is left or one (the
 * walk needs two at a step). */
static void out_of_fds(void **state)
{
	(void)state;
	struct rlimit old;
	assert_int_equal(getrlimit(RLIMIT_NOFILE, &old), 0);
	int lo = lowest_free_fd();
	for (int spare = 0; spare < 2; spare++) {
		struct rlimit low = {.rlim_cur = (rlim_t)(lo + spare), .rlim_max = old.rlim_max};
		int fd = -1, wfd = -1;
		const char *name;
		assert_int_equal(setrlimit(RLIMIT_NOFILE, &low), 0);
		int r = vr_resolve_parent(rootfd, "c1/c2/c3/c4/f", &fd, &name);
		int w = vr_resolve_walk(rootfd, "c1/c2/c3/c4", strlen("c1/c2/c3/c4"), &wfd);
		assert_int_equal(setrlimit(RLIMIT_NOFILE, &old), 0);
		if (spare == 0)
			assert_int_equal(r, -EMFILE); /* openat2 needs one; the walk one at a time */
		else if (r == 0)
			close(fd);
		assert_int_equal(w, -EMFILE);
		assert_int_equal(wfd, -1);
		assert_int_equal(lowest_free_fd(), lo);
	}
}

/* The walk driven step by step: the component it is about to open, swapped
 * for a symlink after the step before, is refused. */
static void swap_next_step(void)
{
	char out[PATH_MAX];
	assert_true(snprintf(out, sizeof out, "%s/outside/c1/c2/c3", T) < (int)sizeof out);
	swap("root/c1/c2/c3", out);
}

/* ... and a component it has already opened, swapped for a link out of the
 * root, is not looked at again: the walk goes on in the directory it holds
 * (now c1.real), never outside. */
static void swap_done_step(void)
{
	swap("root/c1", "../outside");
}

static void swapped_between_steps(void **state)
{
	(void)state;
	const char *dir = "c1/c2/c3/c4";
	int fd = -1;
	hook_at = "c3";
	hook_fn = swap_next_step;
	int r = vr_resolve_walk(rootfd, dir, strlen(dir), &fd);
	unswap("root/c1/c2/c3");
	assert_null(hook_fn); /* the hook ran */
	assert_int_equal(r, -ELOOP);
	assert_int_equal(fd, -1);

	struct stat want, got, outside;
	char p[PATH_MAX];
	tpath(p, "root/c1/c2/c3/c4");
	assert_int_equal(stat(p, &want), 0);
	tpath(p, "outside/c1/c2/c3/c4");
	assert_int_equal(stat(p, &outside), 0);
	hook_at = "c3";
	hook_fn = swap_done_step;
	r = vr_resolve_walk(rootfd, dir, strlen(dir), &fd);
	unswap("root/c1");
	assert_null(hook_fn);
	assert_int_equal(r, 0);
	assert_int_equal(fstat(fd, &got), 0);
	close(fd);
	assert_true(got.st_ino == want.st_ino && got.st_dev == want.st_dev);
	assert_false(got.st_ino == outside.st_ino);
}

/* Every openat2 answered ERR from here on (the most recent filter's errno
 * is the one a call sees). */
static int refuse_openat2(int err)
{
	struct sock_filter f[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_openat2, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | (unsigned)err),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_fprog prog = {.len = sizeof f / sizeof f[0], .filter = f};
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0 ||
	    prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog, 0, 0) < 0)
		return -1;
	errno = 0;
	long r = syscall(SYS_openat2, rootfd, ".", NULL, 0);
	return r < 0 && errno == err ? 0 : -1;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(relpaths),
		cmocka_unit_test(plain_names_resolve),
		cmocka_unit_test(no_symlink_on_the_way),
		cmocka_unit_test(symlink_at_every_component),
		cmocka_unit_test(deeper_than_path_max),
		cmocka_unit_test(out_of_fds),
		cmocka_unit_test(swapped_between_steps),
	};
	if (fixture() < 0) {
		perror("test_resolve: fixture");
		teardown();
		return 1;
	}
	int failed = cmocka_run_group_tests_name("openat2", tests, NULL, NULL);
	if (refuse_openat2(EAGAIN) < 0) {
		perror("test_resolve: seccomp filter (EAGAIN)");
		failed++;
	} else {
		failed += cmocka_run_group_tests_name("openat2 always EAGAIN", tests, NULL, NULL);
	}
	if (refuse_openat2(ENOSYS) < 0) {
		perror("test_resolve: seccomp filter (ENOSYS)");
		failed++;
	} else {
		failed += cmocka_run_group_tests_name("no openat2", tests, NULL, NULL);
	}
	if (teardown() != 0)
		failed++;
	return failed;
}
