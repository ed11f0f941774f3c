/* The .git file check (gitfile.h). */
#include "common/gitfile.h"

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/cleanup.h"
#include "common/fd-util.h"

int vr_gitfile_parse(const char *buf, size_t len, char *ret, size_t size)
{
	static const char prefix[] = "gitdir: ";
	const size_t np = sizeof prefix - 1;
	if (len < np || memcmp(buf, prefix, np) != 0)
		return -EINVAL;
	const char *p = buf + np;
	size_t n = len - np;
	/* As git's read_gitfile_gently(): trailing CR and LF go, nothing else. */
	while (n > 0 && (p[n - 1] == '\n' || p[n - 1] == '\r'))
		n--;
	if (n == 0 || memchr(p, '\0', n) || memchr(p, '\n', n) || memchr(p, '\r', n))
		return -EINVAL;
	if (n >= size)
		return -ENAMETOOLONG;
	memcpy(ret, p, n);
	ret[n] = '\0';
	return 0;
}

int vr_gitfile_resolve(const char *dir, const char *path, char *ret, size_t size)
{
	bool relative = path[0] != '/';
	bool named = false; /* a plain name came: no ".." may follow */
	size_t len = 0;
	if (size < 2)
		return -ENAMETOOLONG;
	if (relative) {
		if (dir[0] != '/')
			return -EINVAL;
		len = strlen(dir);
		while (len > 0 && dir[len - 1] == '/')
			len--;
		if (len >= size)
			return -ENAMETOOLONG;
		memcpy(ret, dir, len);
	}
	ret[len] = '\0';
	for (const char *p = path; *p;) {
		while (*p == '/')
			p++;
		if (!*p)
			break;
		const char *e = strchrnul(p, '/');
		size_t n = (size_t)(e - p);
		if (n == 1 && p[0] == '.')
			return -EINVAL;
		if (n == 2 && p[0] == '.' && p[1] == '.') {
			/* Only leading "..": those apply to DIR, whose components
			 * are real directories, so the lexical parent is the
			 * kernel's. After a name it could be a symlink's. */
			if (!relative || named)
				return -EINVAL;
			char *s = memrchr(ret, '/', len);
			if (!s)
				return -EINVAL; /* above "/" */
			len = (size_t)(s - ret);
			ret[len] = '\0';
		} else {
			if (len + 1 + n >= size)
				return -ENAMETOOLONG;
			ret[len++] = '/';
			memcpy(ret + len, p, n);
			len += n;
			ret[len] = '\0';
			named = true;
		}
		p = e;
	}
	if (len == 0)
		strcpy(ret, "/");
	return 0;
}

/* ABS relative to ROOT ("" for ROOT itself), or NULL when it is not beneath. */
static const char *beneath(const char *root, const char *abs)
{
	if (strcmp(root, "/") == 0)
		return abs[0] == '/' ? abs + 1 : NULL;
	size_t n = strlen(root);
	if (strncmp(abs, root, n) != 0)
		return NULL;
	if (abs[n] == '\0')
		return abs + n;
	return abs[n] == '/' ? abs + n + 1 : NULL;
}

/* Opens REL (plain names) beneath ROOT_FD one component at a time with
 * O_PATH|O_NOFOLLOW. Stops at the first that does not exist: *ret_n is how
 * many do, *ret_fd the deepest of them (ROOT_FD's copy for none). -ELOOP
 * when one is a symlink, -ENOTDIR when one that is not the last is not a
 * directory, else -errno. */
static int walk(int root_fd, const char *rel, int *ret_fd, int *ret_n)
{
	vr_cleanup_fd int fd = fcntl(root_fd, F_DUPFD_CLOEXEC, 3);
	if (fd < 0)
		return -errno;
	int n = 0;
	for (const char *p = rel; *p;) {
		const char *e = strchrnul(p, '/');
		char name[NAME_MAX + 1];
		size_t len = (size_t)(e - p);
		if (len == 0 || len > NAME_MAX)
			return len ? -ENAMETOOLONG : -EINVAL;
		memcpy(name, p, len);
		name[len] = '\0';
		struct stat st;
		if (fstatat(fd, "", &st, AT_EMPTY_PATH) < 0 || !S_ISDIR(st.st_mode))
			return -ENOTDIR;
		int next = openat(fd, name, O_PATH | O_NOFOLLOW | O_CLOEXEC);
		if (next < 0) {
			if (errno == ENOENT)
				break;
			return -errno;
		}
		close(fd);
		fd = next;
		if (fstatat(fd, "", &st, AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW) < 0 || S_ISLNK(st.st_mode))
			return -ELOOP;
		n++;
		p = *e ? e + 1 : e;
	}
	*ret_fd = vr_steal_fd(&fd);
	*ret_n = n;
	return 0;
}

static int count_names(const char *rel)
{
	int n = 0;
	for (const char *p = rel; *p; p++)
		if (p == rel || p[-1] == '/')
			n++;
	return n;
}

/* Opens the directory ABS (beneath c->root) completely, or fails: -ENOENT
 * when some of it is missing, -ENOTDIR when it is not a directory. */
static int open_dir(const VrGitfileCheck *c, const char *abs, int *ret_fd)
{
	const char *rel = beneath(c->root, abs);
	int fd, n;
	if (!rel)
		return -EXDEV;
	int r = walk(c->root_fd, rel, &fd, &n);
	if (r < 0)
		return r;
	vr_cleanup_fd int dfd = fd;
	struct stat st;
	if (n < count_names(rel))
		return -ENOENT;
	if (fstatat(dfd, "", &st, AT_EMPTY_PATH) < 0 || !S_ISDIR(st.st_mode))
		return -ENOTDIR;
	*ret_fd = vr_steal_fd(&dfd);
	return 0;
}

/* A small regular file of DIRFD (not a symlink), trailing CR/LF dropped. */
static int read_small(int dirfd, const char *name, char *buf, size_t size)
{
	vr_cleanup_fd int fd = openat(dirfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	struct stat st;
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode))
		return -EINVAL;
	ssize_t n = vr_read_all(fd, buf, size - 1);
	if (n < 0)
		return (int)n;
	while (n > 0 && (buf[n - 1] == '\n' || buf[n - 1] == '\r'))
		n--;
	buf[n] = '\0';
	if (n == 0 || memchr(buf, '\0', (size_t)n))
		return -EINVAL;
	return (int)n;
}

int vr_gitfile_is_git_dir(int dirfd)
{
	struct stat st;
	if (fstatat(dirfd, "HEAD", &st, AT_SYMLINK_NOFOLLOW) < 0 || !(S_ISREG(st.st_mode) || S_ISLNK(st.st_mode)))
		return 0;
	if (fstatat(dirfd, "objects", &st, AT_SYMLINK_NOFOLLOW) < 0 || !S_ISDIR(st.st_mode))
		return 0;
	if (fstatat(dirfd, "refs", &st, AT_SYMLINK_NOFOLLOW) < 0 || !S_ISDIR(st.st_mode))
		return 0;
	return 1;
}

static int refuse(VrGitfileVerdict *v, int err, const char *why)
{
	v->kind = VR_GITFILE_REFUSED;
	v->why = why;
	return err;
}

static const char *walk_why(int r, const char *missing)
{
	switch (r) {
	case -ENOENT: return missing;
	case -ELOOP: return "a symlink is on its path";
	case -ENOTDIR: return "something on its path is not a directory";
	case -EXDEV: return "it names a directory outside the project";
	}
	return "its path cannot be opened";
}

/* v->gitdir is <C>/worktrees/<name>: the checks of a linked worktree. */
static int check_worktree(const VrGitfileCheck *c, VrGitfileVerdict *v, const char *name)
{
	size_t clen = (size_t)(name - v->gitdir) - strlen("/worktrees/");
	if (clen == 0)
		return refuse(v, -EPERM, "its repository would be \"/\"");
	memcpy(v->common, v->gitdir, clen);
	v->common[clen] = '\0';

	vr_cleanup_fd int tfd = -1;
	{
		vr_cleanup_fd int cfd = -1;
		int r = open_dir(c, v->common, &cfd);
		if (r < 0)
			return refuse(v, -EPERM, walk_why(r, "its repository does not exist"));
		if (!vr_gitfile_is_git_dir(cfd))
			return refuse(v, -EPERM, "its repository is not a git directory (HEAD, objects/, refs/)");
		vr_cleanup_fd int wfd = openat(cfd, "worktrees", O_PATH | O_NOFOLLOW | O_DIRECTORY | O_CLOEXEC);
		tfd = wfd < 0 ? -1 : openat(wfd, name, O_PATH | O_NOFOLLOW | O_DIRECTORY | O_CLOEXEC);
	}
	if (tfd < 0)
		return refuse(v, -EPERM, "its worktrees/<name> directory does not exist (or is a symlink)");

	char buf[PATH_MAX], path[PATH_MAX], self[PATH_MAX];
	/* The worktree's gitdir file names the .git file that uses it: a .git
	 * elsewhere cannot borrow another tree's administrative directory. */
	int r = read_small(tfd, "gitdir", buf, sizeof buf);
	if (r < 0)
		return refuse(v, -EPERM, "its gitdir file is missing or unreadable");
	size_t dl = strlen(c->dir);
	if (dl + sizeof "/.git" > sizeof self || vr_gitfile_resolve(v->gitdir, buf, path, sizeof path) < 0)
		return refuse(v, -EPERM, "its gitdir file does not name this .git");
	memcpy(self, c->dir, dl);
	strcpy(self + (dl == 1 ? 0 : dl), "/.git");
	if (strcmp(path, self) != 0)
		return refuse(v, -EPERM, "its gitdir file names another working tree's .git");
	/* commondir: what makes the administrative directory use <C>'s
	 * config and hooks. git writes it last (after this .git file). */
	r = read_small(tfd, "commondir", buf, sizeof buf);
	vr_clear_fd(&tfd);
	if (r == -ENOENT && c->when == VR_GITFILE_AT_WRITE) {
		v->kind = VR_GITFILE_WORKTREE;
		return 0;
	}
	if (r < 0)
		return refuse(v, -EPERM, "its commondir file is missing or unreadable");
	if (vr_gitfile_resolve(v->gitdir, buf, path, sizeof path) < 0 || strcmp(path, v->common) != 0)
		return refuse(v, -EPERM, "its commondir does not name the repository it lies in");
	v->kind = VR_GITFILE_WORKTREE;
	return 0;
}

/* v->gitdir holds "/.git/modules/" at M: a submodule's git directory. */
static int check_submodule(const VrGitfileCheck *c, VrGitfileVerdict *v, const char *m)
{
	char anc[PATH_MAX];
	size_t alen = (size_t)(m - v->gitdir);
	if (alen == 0) {
		strcpy(anc, "/");
	} else {
		memcpy(anc, v->gitdir, alen);
		anc[alen] = '\0';
	}
	const char *below = beneath(anc, c->dir);
	if (!below || !*below)
		return refuse(v, -EPERM, "it names .git/modules of a directory that is not above it");
	const char *arel = beneath(c->root, anc);
	const char *grel = beneath(c->root, v->gitdir);
	if (!arel || !grel)
		return refuse(v, -EPERM, "it names a directory outside the project");
	vr_cleanup_fd int fd = -1;
	int n;
	int r = walk(c->root_fd, grel, &fd, &n);
	if (r < 0)
		return refuse(v, -EPERM, walk_why(r, ""));
	/* The ancestor's .git must be a real directory: it is the repository
	 * the submodule belongs to. */
	int need = count_names(arel) + 1;
	bool complete = n == count_names(grel);
	struct stat st;
	bool dir = fstatat(fd, "", &st, AT_EMPTY_PATH) == 0 && S_ISDIR(st.st_mode);
	bool gitdir = complete && dir && vr_gitfile_is_git_dir(fd);
	vr_clear_fd(&fd);
	if (n < need)
		return refuse(v, -EPERM, "the repository above it has no .git directory");
	if (!dir)
		return refuse(v, -EPERM, "something on its path is not a directory");
	if (c->when == VR_GITFILE_AT_START && !gitdir)
		return refuse(v, -EPERM, "the submodule's git directory does not exist or is not one");
	strcpy(v->common, v->gitdir);
	v->kind = VR_GITFILE_SUBMODULE;
	return 0;
}

int vr_gitfile_check(const VrGitfileCheck *c, const char *content, size_t len, VrGitfileVerdict *v)
{
	char path[PATH_MAX];
	memset(v, 0, sizeof *v);
	if (vr_gitfile_parse(content, len, path, sizeof path) < 0)
		return refuse(v, -EPERM, "it is not one line \"gitdir: PATH\"");
	if (vr_gitfile_resolve(c->dir, path, v->gitdir, sizeof v->gitdir) < 0)
		return refuse(v, -EPERM, "its path has \".\" or a \"..\" after a name (git writes neither)");
	if (!beneath(c->root, v->gitdir))
		return refuse(v, -EPERM, "it names a directory outside the project");

	const char *why = NULL;
	int err = -EPERM;
	/* <C>/worktrees/<name>; a submodule named worktrees/x has the same
	 * shape, so both are tried. */
	const char *name = strrchr(v->gitdir, '/') + 1;
	size_t off = (size_t)(name - v->gitdir);
	if (off > strlen("/worktrees/") && *name &&
	    memcmp(name - strlen("/worktrees/"), "/worktrees/", strlen("/worktrees/")) == 0) {
		if (check_worktree(c, v, name) == 0)
			return 0;
		why = v->why;
	}
	const char *m = strstr(v->gitdir, "/.git/modules/");
	if (m && m[strlen("/.git/modules/")]) {
		if (check_submodule(c, v, m) == 0)
			return 0;
		why = why ? why : v->why;
	}
	memset(v->common, 0, sizeof v->common);
	return refuse(v, err, why ? why : "it names neither <repository>/worktrees/<name> nor <parent>/.git/modules/<name>");
}
