/* Opening an audit log FILE before anything is mounted: see run/audit-file.h. */
#include "run/audit-file.h"

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/cleanup.h"

static bool same_file(const struct stat *a, const struct stat *b)
{
	return a->st_dev == b->st_dev && a->st_ino == b->st_ino;
}

/* Which of UNDER is FILE itself (a single file bound into the sandbox) or
 * DIR_FD or one of its ancestors, walked up by "..", or NULL. Identities,
 * not strings: a bind mount of the project elsewhere, a symlink into it or
 * a path spelled differently all lead to the same inodes. */
static const VrAuditUnder *under_of(int dir_fd, const struct stat *file, const VrAuditUnder *under, size_t n)
{
	g_autofree struct stat *ids = g_new0(struct stat, n ? n : 1);
	g_autofree bool *known = g_new0(bool, n ? n : 1);
	for (size_t i = 0; i < n; i++)
		known[i] = under[i].dir && stat(under[i].dir, &ids[i]) == 0;
	for (size_t i = 0; file && i < n; i++)
		if (known[i] && same_file(file, &ids[i]))
			return &under[i];
	if (dir_fd < 0)
		return NULL;
	vr_cleanup_fd int fd = fcntl(dir_fd, F_DUPFD_CLOEXEC, 3);
	const VrAuditUnder *hit = NULL;
	/* 4096: deeper than PATH_MAX allows; a loop guard, never reached. */
	for (int depth = 0; fd >= 0 && !hit && depth < 4096; depth++) {
		struct stat st, up_st;
		if (fstat(fd, &st) < 0)
			break;
		for (size_t i = 0; i < n && !hit; i++)
			if (known[i] && same_file(&st, &ids[i]))
				hit = &under[i];
		int up = openat(fd, "..", O_PATH | O_DIRECTORY | O_CLOEXEC);
		bool top = up < 0 || fstat(up, &up_st) < 0 || same_file(&st, &up_st); /* "/" is its own parent */
		vr_closep(&fd);
		fd = up;
		if (top)
			break;
	}
	return hit;
}

/* Where FD leads, from /proc: what was opened, not what a path says now. */
static char *fd_path(int fd)
{
	char link[64];
	snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
	return g_file_read_link(link, NULL);
}

static int fail(char **error, int err, char *msg)
{
	*error = msg;
	return -err;
}

/* NAME in *DFD is a symlink (/dev/stderr, a link to a log kept
 * elsewhere): followed, but to a file that exists only, so nothing is
 * created before where it landed was checked. *DFD becomes the directory
 * it landed in (-1 for a pipe or socket), *WHERE its path. The file's fd,
 * or -errno (*ERROR says). */
static int open_symlinked(int *dfd, const char *path, const char *name, char **where, char **error)
{
	vr_cleanup_fd int fd = openat(*dfd, name, O_WRONLY | O_APPEND | O_NOCTTY | O_CLOEXEC);
	int e = errno;
	g_autofree char *real = fd >= 0 ? fd_path(fd) : NULL;
	vr_closep(dfd);
	*dfd = -1;
	if (fd < 0 && e == ENOENT)
		return fail(error, ENOENT, g_strdup_printf("%s: a symlink to a file that does not exist; create "
		                                           "the file or name it directly", path));
	if (fd < 0)
		return fail(error, e, g_strdup_printf("cannot open %s: %s", path, g_strerror(e)));
	if (!real)
		return fail(error, EACCES, g_strdup_printf("%s: a symlink that cannot be followed to its end "
		                                           "(is /proc mounted?)", path));
	if (real[0] != '/')
		return vr_steal_fd(&fd); /* a pipe or socket (/dev/stderr): no directory, only itself to check */
	g_autofree char *rdir = g_path_get_dirname(real);
	*dfd = open(rdir, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (*dfd < 0) {
		e = errno;
		return fail(error, e, g_strdup_printf("%s: cannot open the directory %s its symlink leads to: %s",
		                                      path, rdir, g_strerror(e)));
	}
	g_free(*where);
	*where = g_steal_pointer(&real);
	return vr_steal_fd(&fd);
}

int vr_audit_file_open(const char *path, const VrAuditUnder *under, size_t n, VrAuditFile *ret, char **error)
{
	g_autofree char *dir = g_path_get_dirname(path), *name = g_path_get_basename(path);
	g_autofree char *where = g_strdup(path);
	if (!*path || g_str_has_suffix(path, "/") || strcmp(name, ".") == 0 || strcmp(name, "..") == 0)
		return fail(error, EISDIR, g_strdup_printf("%s: a directory; name a file", path));
	vr_cleanup_fd int dfd = open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0) {
		int e = errno;
		return fail(error, e, g_strdup_printf("cannot open the directory %s: %s", dir, g_strerror(e)));
	}
	/* Before the file is created: a refused log leaves nothing behind. */
	const VrAuditUnder *hit = under_of(dfd, NULL, under, n);
	vr_cleanup_fd int fd = -1;
	if (!hit) {
		fd = openat(dfd, name, O_WRONLY | O_APPEND | O_CREAT | O_NOFOLLOW | O_NOCTTY | O_CLOEXEC, 0600);
		if (fd < 0 && errno == ELOOP && (fd = open_symlinked(&dfd, path, name, &where, error)) < 0)
			return fd;
		if (fd < 0) {
			int e = errno;
			return fail(error, e, g_strdup_printf("cannot open %s: %s", path, g_strerror(e)));
		}
		struct stat st;
		if (fstat(fd, &st) == 0)
			hit = under_of(dfd, &st, under, n);
	}
	if (hit)
		return fail(error, EACCES, g_strdup_printf("%s is inside %s %s: %s; name a file outside it", where,
		                                           hit->what, hit->dir, hit->why));
	*ret = (VrAuditFile){vr_steal_fd(&fd), vr_steal_fd(&dfd), g_steal_pointer(&where)};
	return 0;
}

void vr_audit_file_close(VrAuditFile *f)
{
	vr_clear_fd(&f->fd);
	vr_clear_fd(&f->dir_fd);
	g_free(f->path);
	*f = (VrAuditFile){-1, -1, NULL};
}
