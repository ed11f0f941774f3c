/* fd-relative resolution beneath a root without following symlinks. */
#include <errno.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "common/resolve.h"

int vr_relpath_ok(const char *rel)
{
	if (!rel || !*rel || rel[0] == '/')
		return 0;
	const char *p = rel;
	for (;;) {
		const char *e = strchr(p, '/');
		size_t n = e ? (size_t)(e - p) : strlen(p);
		if (n == 0 || (n == 1 && p[0] == '.') || (n == 2 && p[0] == '.' && p[1] == '.'))
			return 0;
		if (!e)
			return 1;
		p = e + 1;
	}
}

/* The component-wise fallback: each step refuses a symlink (O_NOFOLLOW on an
 * O_PATH open yields the link itself, which O_DIRECTORY then refuses). */
static int walk(int rootfd, const char *dir)
{
	int fd = fcntl(rootfd, F_DUPFD_CLOEXEC, 3);
	if (fd < 0)
		return -errno;
	char *copy = strdup(dir), *save = NULL;
	if (!copy) {
		close(fd);
		return -ENOMEM;
	}
	for (char *c = strtok_r(copy, "/", &save); c; c = strtok_r(NULL, "/", &save)) {
		int next = openat(fd, c, O_PATH | O_NOFOLLOW | O_DIRECTORY | O_CLOEXEC);
		int err = errno;
		close(fd);
		if (next < 0) {
			free(copy);
			return -err;
		}
		fd = next;
	}
	free(copy);
	return fd;
}

int vr_resolve_parent(int rootfd, const char *rel, int *ret_fd, const char **ret_name)
{
	if (!vr_relpath_ok(rel))
		return -EINVAL;
	const char *slash = strrchr(rel, '/');
	*ret_name = slash ? slash + 1 : rel;
	if (!slash) {
		int fd = fcntl(rootfd, F_DUPFD_CLOEXEC, 3);
		if (fd < 0)
			return -errno;
		*ret_fd = fd;
		return 0;
	}
	char *dir = strndup(rel, (size_t)(slash - rel));
	if (!dir)
		return -ENOMEM;
	struct open_how how = {
		.flags = O_PATH | O_DIRECTORY | O_CLOEXEC,
		.resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS,
	};
	long fd = syscall(SYS_openat2, rootfd, dir, &how, sizeof how);
	if (fd < 0 && (errno == ENOSYS || errno == EPERM))
		fd = walk(rootfd, dir); /* no openat2 (or a seccomp filter refusing it) */
	else if (fd < 0)
		fd = -errno;
	free(dir);
	if (fd < 0)
		return (int)fd;
	*ret_fd = (int)fd;
	return 0;
}
