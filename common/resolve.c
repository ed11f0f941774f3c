/* fd-relative resolution beneath a root without following symlinks: the
 * one walker of the tree (the journal, undo, the view's name checks, the
 * sandbox's source binds all come through here). */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/openat2.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "common/cleanup.h"
#include "common/resolve.h"

/* openat2 answers EAGAIN when a rename or mount raced its lookup and asks
 * to be called again; after this many the walk, which has no such race
 * check to fail, decides. */
#define OPENAT2_TRIES 4

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

/* NAME in AT refused as not a directory: -ELOOP when it is a symlink (as
 * openat2's RESOLVE_NO_SYMLINKS says), -ENOTDIR for anything else, so
 * both paths of vr_resolve_parent tell the two apart. */
static int not_dir(int at, const char *name)
{
	struct stat st;
	if (fstatat(at, name, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISLNK(st.st_mode))
		return -ELOOP;
	return -ENOTDIR;
}

/* One component at a time: each step is openat(O_PATH|O_NOFOLLOW|
 * O_DIRECTORY) on the fd the step before opened, so a symlink anywhere is
 * refused (O_NOFOLLOW on an O_PATH open yields the link itself, which
 * O_DIRECTORY then refuses with ENOTDIR, told apart as ELOOP), and a directory swapped for a
 * link after its step is not looked at again: the walk holds the directory
 * itself. No length limit but NAME_MAX per name: this is also what resolves
 * paths deeper than PATH_MAX. DIR is LEN bytes of plain names (no NUL at
 * LEN needed). */
int vr_resolve_walk(int rootfd, const char *dir, size_t len, int *ret_fd)
{
	vr_cleanup_fd int fd = -1;
	const char *p = dir, *end = dir + len;
	while (p < end) {
		const char *slash = memchr(p, '/', (size_t)(end - p));
		size_t n = slash ? (size_t)(slash - p) : (size_t)(end - p);
		char name[NAME_MAX + 1];
		if (n > NAME_MAX)
			return -ENAMETOOLONG;
		memcpy(name, p, n);
		name[n] = '\0';
		int at = fd >= 0 ? fd : rootfd;
		int next = openat(at, name, O_PATH | O_NOFOLLOW | O_DIRECTORY | O_CLOEXEC);
		if (next < 0)
			return errno == ENOTDIR ? not_dir(at, name) : -errno;
		vr_closep(&fd);
		fd = next;
		p = slash ? slash + 1 : end;
	}
	if (fd < 0 && (fd = fcntl(rootfd, F_DUPFD_CLOEXEC, 3)) < 0)
		return -errno;
	*ret_fd = vr_steal_fd(&fd);
	return 0;
}

/* The directory DIR (LEN bytes) beneath ROOTFD in one openat2, or -errno;
 * -ENOSYS/-EPERM (no openat2, or a seccomp filter refusing it) and
 * -ENAMETOOLONG (longer than PATH_MAX) say the walk must do it. */
static int open_beneath(int rootfd, const char *dir, size_t len, int *ret_fd)
{
	char path[PATH_MAX];
	if (len >= sizeof path)
		return -ENAMETOOLONG;
	memcpy(path, dir, len);
	path[len] = '\0';
	struct open_how how = {
		.flags = O_PATH | O_DIRECTORY | O_CLOEXEC,
		.resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS,
	};
	long fd = -1;
	for (int tries = 0; tries < OPENAT2_TRIES && fd < 0; tries++) {
		fd = syscall(SYS_openat2, rootfd, path, &how, sizeof how);
		if (fd < 0 && errno != EAGAIN)
			return -errno;
	}
	if (fd < 0)
		return -EAGAIN;
	*ret_fd = (int)fd;
	return 0;
}

int vr_resolve_parent(int rootfd, const char *rel, int *ret_fd, const char **ret_name)
{
	if (!vr_relpath_ok(rel))
		return -EINVAL;
	const char *slash = strrchr(rel, '/');
	size_t len = slash ? (size_t)(slash - rel) : 0;
	*ret_name = slash ? slash + 1 : rel;
	if (len == 0) /* a name at the top: the walk of nothing dups ROOTFD */
		return vr_resolve_walk(rootfd, rel, 0, ret_fd);
	int r = open_beneath(rootfd, rel, len, ret_fd);
	if (r == -ENOSYS || r == -EPERM || r == -ENAMETOOLONG || r == -EAGAIN)
		r = vr_resolve_walk(rootfd, rel, len, ret_fd);
	return r;
}
