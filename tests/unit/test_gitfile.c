/* common/gitfile.c: what a .git file may name. Real trees in a temp dir
 * (the checker opens what exists, one component at a time): a repository
 * with a linked worktree and a submodule as git makes them, then each way
 * an agent could bend a .git file ("gitdir: $HOME", a fake worktrees/x that
 * does not name this tree back, a commondir elsewhere, a symlink on the
 * path, "..", .git/modules of a directory that is not above it). Both
 * moments: the project's .git at the start of a run, and a .git the agent
 * writes (where git has not written commondir or the submodule's git
 * directory yet). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/gitfile.h"

static char tmp[64];
static int tmpfd = -1;

static void mk(const char *rel)
{
	char p[PATH_MAX];
	assert_true(snprintf(p, sizeof p, "%s/%s", tmp, rel) < (int)sizeof p);
	assert_int_equal(mkdir(p, 0755), 0);
}

static void put(const char *rel, const char *content)
{
	char p[PATH_MAX];
	assert_true(snprintf(p, sizeof p, "%s/%s", tmp, rel) < (int)sizeof p);
	FILE *f = fopen(p, "w");
	assert_non_null(f);
	fputs(content, f);
	fclose(f);
}

static void mk_gitdir(const char *rel)
{
	char p[PATH_MAX];
	mk(rel);
	assert_true(snprintf(p, sizeof p, "%s/objects", rel) < (int)sizeof p);
	mk(p);
	assert_true(snprintf(p, sizeof p, "%s/refs", rel) < (int)sizeof p);
	mk(p);
	assert_true(snprintf(p, sizeof p, "%s/HEAD", rel) < (int)sizeof p);
	put(p, "ref: refs/heads/main\n");
}

/* tmp/repo (a repository) with a linked worktree tmp/wt and a submodule
 * checkout tmp/repo/sub; tmp/home stands for a directory an agent wants. */
static int setup(void **state)
{
	(void)state;
	strcpy(tmp, "/tmp/vr-test-gitfile.XXXXXX");
	assert_non_null(mkdtemp(tmp));
	tmpfd = open(tmp, O_PATH | O_DIRECTORY | O_CLOEXEC);
	char buf[PATH_MAX * 2];
	mk("repo");
	mk_gitdir("repo/.git");
	mk("repo/.git/worktrees");
	mk("repo/.git/worktrees/wt");
	assert_true(snprintf(buf, sizeof buf, "%s/wt/.git\n", tmp) < (int)sizeof buf);
	put("repo/.git/worktrees/wt/gitdir", buf);
	put("repo/.git/worktrees/wt/commondir", "../..\n");
	put("repo/.git/worktrees/wt/HEAD", "ref: refs/heads/wt\n");
	mk("wt");
	assert_true(snprintf(buf, sizeof buf, "gitdir: %s/repo/.git/worktrees/wt\n", tmp) < (int)sizeof buf);
	put("wt/.git", buf);
	mk("repo/.git/modules");
	mk_gitdir("repo/.git/modules/sub");
	mk("repo/sub");
	put("repo/sub/.git", "gitdir: ../.git/modules/sub\n");
	mk_gitdir("home");
	mk("other");
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	char cmd[128];
	assert_true(snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmp) < (int)sizeof cmd);
	assert_int_equal(system(cmd), 0);
	close(tmpfd);
	return 0;
}

/* Checks CONTENT as a .git file in tmp/DIR, beneath root "/" (the launcher)
 * or beneath tmp (the daemon: root_in_tmp). */
static int check(const char *dir, const char *content, VrGitfileWhen when, bool root_in_tmp, VrGitfileVerdict *v)
{
	char d[PATH_MAX];
	assert_true(snprintf(d, sizeof d, "%s/%s", tmp, dir) < (int)sizeof d);
	int root = root_in_tmp ? tmpfd : open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
	VrGitfileCheck c = {.root_fd = root, .root = root_in_tmp ? tmp : "/", .dir = d, .when = when};
	int r = vr_gitfile_check(&c, content, strlen(content), v);
	if (!root_in_tmp)
		close(root);
	return r;
}

static void test_parse(void **state)
{
	(void)state;
	char p[PATH_MAX];
	assert_int_equal(vr_gitfile_parse("gitdir: /a/b\n", 13, p, sizeof p), 0);
	assert_string_equal(p, "/a/b");
	assert_int_equal(vr_gitfile_parse("gitdir: x\r\n\n", 12, p, sizeof p), 0);
	assert_string_equal(p, "x");
	assert_int_equal(vr_gitfile_parse("gitdir: \n", 9, p, sizeof p), -EINVAL);
	assert_int_equal(vr_gitfile_parse("gitdir:/a", 9, p, sizeof p), -EINVAL);
	assert_int_equal(vr_gitfile_parse("gitdir: a\nb", 11, p, sizeof p), -EINVAL);
	assert_int_equal(vr_gitfile_parse("gitdir: a\0b", 11, p, sizeof p), -EINVAL);
	assert_int_equal(vr_gitfile_parse("", 0, p, sizeof p), -EINVAL);
	assert_int_equal(vr_gitfile_parse("gitdir: abcdef", 14, p, 4), -ENAMETOOLONG);
}

static void test_resolve(void **state)
{
	(void)state;
	char p[PATH_MAX];
	assert_int_equal(vr_gitfile_resolve("/r/sub", "../.git/modules/sub", p, sizeof p), 0);
	assert_string_equal(p, "/r/.git/modules/sub");
	assert_int_equal(vr_gitfile_resolve("/r", "/a//b/", p, sizeof p), 0);
	assert_string_equal(p, "/a/b");
	assert_int_equal(vr_gitfile_resolve("/r/s", "../..", p, sizeof p), 0);
	assert_string_equal(p, "/");
	assert_int_equal(vr_gitfile_resolve("/r", "../..", p, sizeof p), -EINVAL);
	assert_int_equal(vr_gitfile_resolve("/r", "a/../b", p, sizeof p), -EINVAL);
	assert_int_equal(vr_gitfile_resolve("/r", "./a", p, sizeof p), -EINVAL);
	assert_int_equal(vr_gitfile_resolve("/r", "/a/../b", p, sizeof p), -EINVAL);
	assert_int_equal(vr_gitfile_resolve("/r", "/a/./b", p, sizeof p), -EINVAL);
}

static void test_worktree_accepted(void **state)
{
	(void)state;
	VrGitfileVerdict v;
	char buf[PATH_MAX * 2], want[PATH_MAX * 2];
	assert_true(snprintf(buf, sizeof buf, "gitdir: %s/repo/.git/worktrees/wt\n", tmp) < (int)sizeof buf);
	assert_int_equal(check("wt", buf, VR_GITFILE_AT_START, false, &v), 0);
	assert_int_equal(v.kind, VR_GITFILE_WORKTREE);
	assert_true(snprintf(want, sizeof want, "%s/repo/.git", tmp) < (int)sizeof want);
	assert_string_equal(v.common, want);
	assert_true(snprintf(want, sizeof want, "%s/repo/.git/worktrees/wt", tmp) < (int)sizeof want);
	assert_string_equal(v.gitdir, want);
	/* The same relative (git >= 2.48 can write it so). */
	assert_int_equal(check("wt", "gitdir: ../repo/.git/worktrees/wt", VR_GITFILE_AT_START, false, &v), 0);
	/* And as the daemon sees it, beneath its root. */
	assert_int_equal(check("wt", buf, VR_GITFILE_AT_WRITE, true, &v), 0);
}

static void test_worktree_refused(void **state)
{
	(void)state;
	VrGitfileVerdict v;
	char buf[PATH_MAX * 2];
	/* The attack of issue 16: a .git naming any directory. */
	assert_true(snprintf(buf, sizeof buf, "gitdir: %s/home\n", tmp) < (int)sizeof buf);
	assert_int_equal(check("wt", buf, VR_GITFILE_AT_START, false, &v), -EPERM);
	assert_non_null(v.why);
	assert_int_equal(v.kind, VR_GITFILE_REFUSED);
	/* Another tree borrowing wt's administrative directory: its gitdir
	 * file names wt/.git, not other/.git. */
	assert_true(snprintf(buf, sizeof buf, "gitdir: %s/repo/.git/worktrees/wt\n", tmp) < (int)sizeof buf);
	assert_int_equal(check("other", buf, VR_GITFILE_AT_START, false, &v), -EPERM);
	assert_non_null(strstr(v.why, "another working tree"));
	/* A fake worktrees/x under a directory that is not a repository. */
	mk("home/worktrees");
	mk("home/worktrees/x");
	mk("fake");
	mk("fake/worktrees");
	mk("fake/worktrees/x");
	assert_true(snprintf(buf, sizeof buf, "%s/other/.git\n", tmp) < (int)sizeof buf);
	put("fake/worktrees/x/gitdir", buf);
	put("fake/worktrees/x/commondir", "../..\n");
	assert_true(snprintf(buf, sizeof buf, "gitdir: %s/fake/worktrees/x\n", tmp) < (int)sizeof buf);
	assert_int_equal(check("other", buf, VR_GITFILE_AT_START, false, &v), -EPERM);
	assert_non_null(strstr(v.why, "not a git directory"));
	/* A real repository whose worktree names us back but whose commondir
	 * points elsewhere (the config and hooks git would obey). */
	mk("repo/.git/worktrees/o");
	assert_true(snprintf(buf, sizeof buf, "%s/other/.git\n", tmp) < (int)sizeof buf);
	put("repo/.git/worktrees/o/gitdir", buf);
	assert_true(snprintf(buf, sizeof buf, "%s/home\n", tmp) < (int)sizeof buf);
	put("repo/.git/worktrees/o/commondir", buf);
	assert_true(snprintf(buf, sizeof buf, "gitdir: %s/repo/.git/worktrees/o\n", tmp) < (int)sizeof buf);
	assert_int_equal(check("other", buf, VR_GITFILE_AT_START, false, &v), -EPERM);
	assert_non_null(strstr(v.why, "commondir"));
	/* No commondir: refused at the start, accepted while git writes. */
	assert_true(snprintf(buf, sizeof buf, "%s/repo/.git/worktrees/o/commondir", tmp) < (int)sizeof buf);
	assert_int_equal(unlink(buf), 0);
	assert_true(snprintf(buf, sizeof buf, "gitdir: %s/repo/.git/worktrees/o\n", tmp) < (int)sizeof buf);
	assert_int_equal(check("other", buf, VR_GITFILE_AT_START, false, &v), -EPERM);
	assert_int_equal(check("other", buf, VR_GITFILE_AT_WRITE, false, &v), 0);
	/* A symlink on the path, even to the right place. */
	assert_true(snprintf(buf, sizeof buf, "%s/repo", tmp) < (int)sizeof buf);
	char link[PATH_MAX];
	assert_true(snprintf(link, sizeof link, "%s/lnk", tmp) < (int)sizeof link);
	assert_int_equal(symlink(buf, link), 0);
	assert_true(snprintf(buf, sizeof buf, "gitdir: %s/lnk/.git/worktrees/wt\n", tmp) < (int)sizeof buf);
	assert_int_equal(check("wt", buf, VR_GITFILE_AT_START, false, &v), -EPERM);
	assert_non_null(strstr(v.why, "symlink"));
	/* ".." after a name. */
	assert_true(snprintf(buf, sizeof buf, "gitdir: %s/home/../repo/.git/worktrees/wt\n", tmp) < (int)sizeof buf);
	assert_int_equal(check("wt", buf, VR_GITFILE_AT_START, false, &v), -EPERM);
	/* Outside the daemon's root. */
	assert_int_equal(check("wt", "gitdir: /etc\n", VR_GITFILE_AT_WRITE, true, &v), -EPERM);
	assert_non_null(strstr(v.why, "outside"));
	/* Not a gitdir line at all. */
	assert_int_equal(check("wt", "[core]\n", VR_GITFILE_AT_WRITE, true, &v), -EPERM);
}

static void test_submodule(void **state)
{
	(void)state;
	VrGitfileVerdict v;
	char want[PATH_MAX * 2];
	assert_int_equal(check("repo/sub", "gitdir: ../.git/modules/sub\n", VR_GITFILE_AT_START, false, &v), 0);
	assert_int_equal(v.kind, VR_GITFILE_SUBMODULE);
	assert_true(snprintf(want, sizeof want, "%s/repo/.git/modules/sub", tmp) < (int)sizeof want);
	assert_string_equal(v.gitdir, want);
	/* Nested deeper: still the ancestor's .git/modules. */
	mk("repo/a");
	mk("repo/a/b");
	assert_int_equal(check("repo/a/b", "gitdir: ../../.git/modules/sub", VR_GITFILE_AT_START, false, &v), 0);
	/* clone --separate-git-dir writes the .git before the git directory:
	 * fine while writing, not at the start of a run. */
	assert_int_equal(check("repo/a", "gitdir: ../.git/modules/new", VR_GITFILE_AT_WRITE, true, &v), 0);
	assert_int_equal(check("repo/a", "gitdir: ../.git/modules/new", VR_GITFILE_AT_START, false, &v), -EPERM);
	/* .git/modules of a directory that is not above the .git file. */
	mk("side");
	assert_int_equal(check("side", "gitdir: ../repo/.git/modules/sub", VR_GITFILE_AT_WRITE, true, &v), -EPERM);
	assert_non_null(strstr(v.why, "not above"));
	/* An ancestor without a .git directory. */
	mk("side/x");
	assert_int_equal(check("side/x", "gitdir: ../.git/modules/sub", VR_GITFILE_AT_WRITE, true, &v), -EPERM);
	/* ...or whose .git/modules/NAME is a symlink somewhere else. */
	char t[PATH_MAX], l[PATH_MAX];
	assert_true(snprintf(t, sizeof t, "%s/home", tmp) < (int)sizeof t);
	assert_true(snprintf(l, sizeof l, "%s/repo/.git/modules/evil", tmp) < (int)sizeof l);
	assert_int_equal(symlink(t, l), 0);
	assert_int_equal(check("repo/a", "gitdir: ../.git/modules/evil", VR_GITFILE_AT_WRITE, true, &v), -EPERM);
	assert_non_null(strstr(v.why, "symlink"));
	assert_int_equal(check("repo/a", "gitdir: ../.git/modules/evil/x", VR_GITFILE_AT_WRITE, true, &v), -EPERM);
}

static void test_is_git_dir(void **state)
{
	(void)state;
	int fd = openat(tmpfd, "repo/.git", O_PATH | O_DIRECTORY | O_CLOEXEC);
	assert_true(fd >= 0);
	assert_int_equal(vr_gitfile_is_git_dir(fd), 1);
	close(fd);
	fd = openat(tmpfd, "other", O_PATH | O_DIRECTORY | O_CLOEXEC);
	assert_int_equal(vr_gitfile_is_git_dir(fd), 0);
	close(fd);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse),
		cmocka_unit_test(test_resolve),
		cmocka_unit_test(test_worktree_accepted),
		cmocka_unit_test(test_worktree_refused),
		cmocka_unit_test(test_submodule),
		cmocka_unit_test(test_is_git_dir),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
