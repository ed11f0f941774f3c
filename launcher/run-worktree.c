#include "run-worktree.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/fd-util.h"
#include "log.h"

/* The built-in read-only rules for `.git/…`, anchored at the git directory
 * itself: what the host's git later executes or obeys. */
static const char *const git_readonly[] = {
	"/hooks/", "/config", "/config.worktree", "/commondir", "/info/attributes",
	"/modules/*/hooks/", "/modules/*/config", "/worktrees/*/config.worktree",
	"/worktrees/*/commondir", "/worktrees/*/gitdir",
};

/* Reads "gitdir: DIR" from the project's .git file (not following a
 * symlink there); NULL when .git is a directory, absent, or not that. */
static char *read_gitdir(const char *project)
{
	int dfd = open(project, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0)
		return NULL;
	int fd = openat(dfd, ".git", O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	close(dfd);
	if (fd < 0)
		return NULL;
	char buf[PATH_MAX + 16] = "";
	ssize_t n = vr_read_all(fd, buf, sizeof buf - 1);
	close(fd);
	if (n <= 8 || strncmp(buf, "gitdir: ", 8) != 0)
		return NULL;
	buf[strcspn(buf, "\r\n")] = '\0';
	const char *dir = buf + 8;
	return g_path_is_absolute(dir) ? g_strdup(dir) : g_build_filename(project, dir, NULL);
}

static gboolean is_under(const char *path, const char *dir)
{
	size_t n = strlen(dir);
	return strncmp(path, dir, n) == 0 && (path[n] == '/' || path[n] == '\0');
}

gboolean vr_run_apply_worktree(VrRunPlan *plan, GError **error)
{
	char project[PATH_MAX];
	if (!realpath(plan->project ? plan->project : ".", project))
		return TRUE; /* the supervisor reports a missing project */
	g_autofree char *gitdir = read_gitdir(project);
	if (!gitdir)
		return TRUE;
	char real_gitdir[PATH_MAX], common[PATH_MAX];
	if (!realpath(gitdir, real_gitdir)) {
		vr_warning("%s/.git names %s, which does not exist; git will not work inside", project, gitdir);
		return TRUE;
	}
	/* A linked worktree's git dir names the repository's common dir. */
	g_autofree char *commondir_file = g_build_filename(real_gitdir, "commondir", NULL);
	g_autofree char *rel = NULL;
	g_autofree char *common_path = NULL;
	if (g_file_get_contents(commondir_file, &rel, NULL, NULL)) {
		g_strstrip(rel);
		common_path = g_path_is_absolute(rel) ? g_strdup(rel) : g_build_filename(real_gitdir, rel, NULL);
	} else {
		common_path = g_strdup(real_gitdir);
	}
	if (!realpath(common_path, common))
		g_strlcpy(common, real_gitdir, sizeof common);

	const char *dirs[] = {common, real_gitdir};
	for (size_t i = 0; i < G_N_ELEMENTS(dirs); i++) {
		if (is_under(dirs[i], project) || (i == 1 && is_under(dirs[i], common)))
			continue; /* already in the project's view, or in the common dir's */
		VrGuardedDir *g = g_new0(VrGuardedDir, 1);
		g->dir = g_strdup(dirs[i]);
		g->readonly = g_ptr_array_new_with_free_func(g_free);
		for (size_t r = 0; r < G_N_ELEMENTS(git_readonly); r++)
			g_ptr_array_add(g->readonly, g_strdup(git_readonly[r]));
		g_ptr_array_add(plan->guarded_dirs, g);
		VrUserMount m = {.kind = VR_OP_BIND, .src = g_strdup(dirs[i]), .dest = g_strdup(dirs[i])};
		g_array_append_val(plan->mounts, m);
		vr_info("the project is a git worktree: %s is served through a view of its own", dirs[i]);
	}
	return TRUE;
}
