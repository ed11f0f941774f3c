#include "run/worktree.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/cleanup.h"
#include "common/fd-util.h"
#include "common/gitfile.h"
#include "common/log.h"

/* The built-in read-only rules for a git directory served by a view of its
 * own, anchored at the git directory itself: what the host's git later
 * executes or obeys. */
static const char *const git_readonly[] = {
	"/hooks/", "/config", "/config.worktree", "/commondir", "/info/attributes",
	"/modules/**/hooks/", "/modules/**/config", "/modules/**/config.worktree",
	"/worktrees/*/config.worktree", "/worktrees/*/commondir", "/worktrees/*/gitdir",
};

/* The project's .git when it is a regular file (not following a symlink
 * there), at most VR_GITFILE_MAX bytes, into buf: its length; 0 when there
 * is nothing to do (no .git, a directory, a symlink, or a project that
 * cannot be opened, which the supervisor reports); -EINVAL for another
 * file type. */
static ssize_t read_dotgit(const char *project, char *buf, size_t size)
{
	vr_cleanup_fd int dfd = open(project, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0)
		return 0; /* the supervisor reports a missing project */
	vr_cleanup_fd int fd = openat(dfd, ".git", O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	if (fd < 0)
		return 0; /* none, a directory, a symlink (never followed), or the project's own trouble */
	struct stat st;
	if (fstat(fd, &st) < 0 || S_ISDIR(st.st_mode))
		return 0;
	if (!S_ISREG(st.st_mode))
		return -EINVAL;
	return vr_read_all(fd, buf, size);
}

static gboolean is_under(const char *path, const char *dir)
{
	size_t n = strlen(dir);
	return strncmp(path, dir, n) == 0 && (path[n] == '/' || path[n] == '\0');
}

static void add_guarded(VrRunPlan *plan, const char *dir)
{
	VrGuardedDir *g = g_new0(VrGuardedDir, 1);
	g->dir = g_strdup(dir);
	g->readonly = g_ptr_array_new_with_free_func(g_free);
	for (size_t r = 0; r < G_N_ELEMENTS(git_readonly); r++)
		g_ptr_array_add(g->readonly, g_strdup(git_readonly[r]));
	g_ptr_array_add(plan->guarded_dirs, g);
	VrUserMount m = {.kind = VR_OP_BIND, .src = g_strdup(dir), .dest = g_strdup(dir)};
	g_array_append_val(plan->mounts, m);
}

gboolean vr_run_apply_worktree(VrRunPlan *plan, GError **error)
{
	(void)error;
	char project[PATH_MAX];
	if (!realpath(plan->project ? plan->project : ".", project))
		return TRUE; /* the supervisor reports a missing project */
	char buf[VR_GITFILE_MAX + 1];
	ssize_t n = read_dotgit(project, buf, sizeof buf);
	if (n == 0)
		return TRUE;
	if (n < 0 || (size_t)n > VR_GITFILE_MAX) {
		vr_warning("%s/.git is not a directory nor a readable \"gitdir:\" file; nothing outside the project "
		           "is opened for it, so git will not see a repository inside",
		           project);
		return TRUE;
	}

	/* Decided from "/" on plain names: the content comes from the project,
	 * which an earlier run's agent may have written ("gitdir: $HOME"). */
	vr_cleanup_fd int root = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (root < 0)
		return TRUE;
	VrGitfileCheck c = {.root_fd = root, .root = "/", .dir = project, .when = VR_GITFILE_AT_START};
	VrGitfileVerdict v;
	int r = vr_gitfile_check(&c, buf, (size_t)n, &v);
	vr_clear_fd(&root);
	if (r < 0) {
		char named[PATH_MAX] = "";
		if (vr_gitfile_parse(buf, (size_t)n, named, sizeof named) < 0)
			g_strlcpy(named, "?", sizeof named);
		vr_warning("%s/.git names %s, which is refused: %s; nothing outside the project is opened for it, "
		           "so git will not see a repository inside",
		           project, named, v.why);
		plan->gitfile_dir = g_strdup(named);
		plan->gitfile_why = g_strdup(v.why);
		return TRUE;
	}

	/* A linked worktree's administrative directory lies in <C>; a
	 * submodule's git directory stands alone. */
	const char *dir = v.kind == VR_GITFILE_WORKTREE ? v.common : v.gitdir;
	if (is_under(dir, project))
		return TRUE; /* already in the project's view */
	add_guarded(plan, dir);
	plan->gitfile_ok = TRUE;
	plan->gitfile_dir = g_strdup(dir);
	plan->gitfile_why = g_strdup(v.kind == VR_GITFILE_WORKTREE ? "linked worktree" : "submodule");
	if (v.kind == VR_GITFILE_WORKTREE)
		vr_notice("the project is a linked worktree of %s: that git directory is opened, through a view of its "
		          "own, so git works inside",
		          dir);
	else
		vr_notice("the project is a submodule checkout: its git directory %s is opened, through a view of its "
		          "own, so git works inside",
		          dir);
	return TRUE;
}
