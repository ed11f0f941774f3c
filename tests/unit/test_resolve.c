/* The no-symlink path resolver (common/resolve.c) that the journal and
 * undo use: plain relative names only, and no component may be a
 * symlink, relative or absolute, or lead out of the root. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/resolve.h"

static char T[] = "/tmp/vr-resolve-XXXXXX";
static int rootfd = -1;

static void mk(const char *rel, int dir)
{
	char p[PATH_MAX];
	snprintf(p, sizeof p, "%s/%s", T, rel);
	if (dir)
		assert_int_equal(mkdir(p, 0700), 0);
	else
		assert_int_equal(close(open(p, O_CREAT | O_WRONLY, 0600)), 0);
}

static void ln(const char *target, const char *rel)
{
	char p[PATH_MAX];
	snprintf(p, sizeof p, "%s/%s", T, rel);
	assert_int_equal(symlink(target, p), 0);
}

static int setup(void **state)
{
	(void)state;
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
	char p[PATH_MAX];
	snprintf(p, sizeof p, "%s/root", T);
	rootfd = open(p, O_PATH | O_DIRECTORY | O_CLOEXEC);
	return rootfd < 0 ? -1 : 0;
}

static int teardown(void **state)
{
	(void)state;
	close(rootfd);
	char cmd[PATH_MAX + 16];
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", T);
	return system(cmd);
}

static void relpaths(void **state)
{
	(void)state;
	assert_true(vr_relpath_ok("a"));
	assert_true(vr_relpath_ok("a/b/f"));
	assert_true(vr_relpath_ok(".env")); /* a dot name is a name */
	const char *bad[] = {"", "/a", "a/", "a//b", ".", "..", "a/./b", "a/../b", "../x", NULL};
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
}

static void no_symlink_on_the_way(void **state)
{
	(void)state;
	const char *via[] = {"rel/b/f", "abs/x", "out/x", NULL};
	for (const char **v = via; *v; v++) {
		int fd = -1;
		const char *name = NULL;
		int r = vr_resolve_parent(rootfd, *v, &fd, &name);
		if (r != -ELOOP && r != -ENOTDIR && r != -EXDEV)
			fail_msg("'%s': %d, expected a refusal", *v, r);
		assert_int_equal(fd, -1);
	}
	int fd = -1;
	const char *name;
	assert_int_equal(vr_resolve_parent(rootfd, "file/x", &fd, &name), -ENOTDIR);
	assert_int_equal(vr_resolve_parent(rootfd, "../outside/x", &fd, &name), -EINVAL);
	assert_int_equal(vr_resolve_parent(rootfd, "/etc/passwd", &fd, &name), -EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(relpaths),
		cmocka_unit_test(plain_names_resolve),
		cmocka_unit_test(no_symlink_on_the_way),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
