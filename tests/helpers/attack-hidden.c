/* attack-hidden — routes to a hidden name, run in the current directory
 * (inside the sandbox: the view). One line per attempt, "what result"
 * ("ok" when the call succeeded, else the errno name):
 *
 *   attack-hidden write OP NAME   one write to NAME by OP: creat-trunc, excl,
 *                                 mknod, mkdir, symlink, link (of README.md),
 *                                 rename, exchange, noreplace (of a scratch
 *                                 file made first and removed after)
 *   attack-hidden handle FILE     name_to_handle_at + open_by_handle_at
 *   attack-hidden readdir DIR     every name readdir returns, reading on from
 *                                 each telldir() offset after a seekdir() and
 *                                 from made-up offsets; prints "name NAME"
 *   attack-hidden xattr NAME      listxattr, getxattr, lgetxattr of NAME
 *
 * Nothing is read or written outside the current directory. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <unistd.h>

static const char *ename(int e)
{
	static char buf[32];
	switch (e) {
	case 0: return "ok";
	case EPERM: return "EPERM";
	case EACCES: return "EACCES";
	case ENOENT: return "ENOENT";
	case EEXIST: return "EEXIST";
	case EINVAL: return "EINVAL";
	case ENOSYS: return "ENOSYS";
	case EXDEV: return "EXDEV";
	case EOPNOTSUPP: return "EOPNOTSUPP";
	case ENODATA: return "ENODATA";
	case EROFS: return "EROFS";
	case ESTALE: return "ESTALE";
	case EBADF: return "EBADF";
	default:
		snprintf(buf, sizeof buf, "errno%d", e);
		return buf;
	}
}

static void report(const char *what, long r)
{
	printf("%s %s\n", what, ename(r < 0 ? errno : 0));
	fflush(stdout);
}

static int write_op(const char *op, const char *name)
{
	const char *tmp = "vr-attack-scratch";
	int fd, r;
	if (strcmp(op, "creat-trunc") == 0) {
		fd = open(name, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
		r = fd;
		if (fd >= 0)
			close(fd);
	} else if (strcmp(op, "excl") == 0) {
		fd = open(name, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
		r = fd;
		if (fd >= 0)
			close(fd);
	} else if (strcmp(op, "mknod") == 0) {
		r = mknod(name, S_IFREG | 0644, 0);
	} else if (strcmp(op, "mkdir") == 0) {
		r = mkdir(name, 0755);
	} else if (strcmp(op, "symlink") == 0) {
		r = symlink("README.md", name);
	} else if (strcmp(op, "link") == 0) {
		r = link("README.md", name);
	} else if (strcmp(op, "rename") == 0 || strcmp(op, "exchange") == 0 ||
	           strcmp(op, "noreplace") == 0) {
		fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
		if (fd < 0) {
			perror("scratch file");
			return 2;
		}
		if (write(fd, "ATTACK\n", 7) != 7)
			perror("write");
		close(fd);
		unsigned flags = op[0] == 'e' ? RENAME_EXCHANGE : op[0] == 'n' ? RENAME_NOREPLACE : 0;
		r = renameat2(AT_FDCWD, tmp, AT_FDCWD, name, flags);
		int e = errno;
		unlink(tmp);
		errno = e;
	} else {
		fprintf(stderr, "attack-hidden: unknown write op %s\n", op);
		return 2;
	}
	char what[128];
	snprintf(what, sizeof what, "%s", op);
	report(what, r);
	return 0;
}

static int handle(const char *file)
{
	struct {
		struct file_handle fh;
		unsigned char data[MAX_HANDLE_SZ];
	} h;
	int mount_id;
	h.fh.handle_bytes = MAX_HANDLE_SZ;
	int r = name_to_handle_at(AT_FDCWD, file, &h.fh, &mount_id, 0);
	report("name_to_handle_at", r);
	int mfd = open(".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (r < 0) {
		/* A made-up handle: still must not reach anything. */
		h.fh.handle_bytes = 8;
		h.fh.handle_type = 1;
		memset(h.fh.f_handle, 0, 8);
	}
	int fd = open_by_handle_at(mfd, &h.fh, O_RDONLY);
	report("open_by_handle_at", fd);
	if (fd >= 0)
		close(fd);
	close(mfd);
	return 0;
}

static int list_dir(const char *dir)
{
	DIR *d = opendir(dir);
	if (!d) {
		perror("opendir");
		return 2;
	}
	long offs[4096];
	int n = 0;
	struct dirent *e;
	for (;;) {
		long off = telldir(d);
		if (!(e = readdir(d)))
			break;
		if (n < 4096)
			offs[n++] = off;
		printf("name %s\n", e->d_name);
	}
	/* Reading on from every offset seen, backwards, then made-up ones. */
	for (int i = n - 1; i >= 0; i--) {
		seekdir(d, offs[i]);
		while ((e = readdir(d)))
			printf("name %s\n", e->d_name);
	}
	long junk[] = {1, 2, 3, 4, 5, 7, 8, 16, 100, 1000, 65535, 1L << 31, 1L << 40, -2};
	for (size_t i = 0; i < sizeof junk / sizeof junk[0]; i++) {
		seekdir(d, junk[i]);
		while ((e = readdir(d)))
			printf("name %s\n", e->d_name);
	}
	closedir(d);
	printf("entries %d\n", n);
	return 0;
}

static int xattrs(const char *name)
{
	char buf[4096];
	report("listxattr", listxattr(name, buf, sizeof buf));
	report("llistxattr", llistxattr(name, buf, sizeof buf));
	report("getxattr", getxattr(name, "user.vr", buf, sizeof buf));
	report("lgetxattr", lgetxattr(name, "user.vr", buf, sizeof buf));
	return 0;
}

int main(int argc, char **argv)
{
	if (argc == 4 && strcmp(argv[1], "write") == 0)
		return write_op(argv[2], argv[3]);
	if (argc == 3 && strcmp(argv[1], "handle") == 0)
		return handle(argv[2]);
	if (argc == 3 && strcmp(argv[1], "readdir") == 0)
		return list_dir(argv[2]);
	if (argc == 3 && strcmp(argv[1], "xattr") == 0)
		return xattrs(argv[2]);
	fprintf(stderr, "usage: attack-hidden write OP NAME | handle FILE | readdir DIR | xattr NAME\n");
	return 2;
}
