#include "common/fd-util.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

int vr_write_all(int fd, const void *buf, size_t len)
{
	const char *p = buf;
	while (len > 0) {
		ssize_t n = write(fd, p, len);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

ssize_t vr_read_all(int fd, void *buf, size_t len)
{
	char *p = buf;
	size_t got = 0;
	while (got < len) {
		ssize_t n = read(fd, p + got, len - got);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (n == 0)
			break;
		got += (size_t)n;
	}
	return (ssize_t)got;
}

ssize_t vr_read_line(int fd, char *buf, size_t len)
{
	size_t got = 0;
	if (len == 0)
		return -EINVAL;
	while (got + 1 < len) {
		char c;
		ssize_t n = read(fd, &c, 1);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			buf[got] = '\0';
			return -errno;
		}
		if (n == 0 || c == '\n')
			break;
		buf[got++] = c;
	}
	buf[got] = '\0';
	return (ssize_t)got;
}

int vr_close_from(int lowfd)
{
#ifdef SYS_close_range
	if (syscall(SYS_close_range, (unsigned)lowfd, ~0U, 0) == 0)
		return 0;
#endif
	/* Fallback for kernels before 5.9: walk /proc/self/fd. */
	DIR *d = opendir("/proc/self/fd");
	if (!d)
		return -errno;
	int self = dirfd(d);
	struct dirent *e;
	while ((e = readdir(d))) {
		char *end;
		long fd = strtol(e->d_name, &end, 10);
		if (*end || fd < lowfd || fd == self)
			continue;
		close((int)fd);
	}
	closedir(d);
	return 0;
}

int vr_write_file_at(int dirfd, const char *path, const char *content)
{
	int fd = openat(dirfd, path, O_WRONLY | O_CLOEXEC | O_NOCTTY);
	if (fd < 0)
		return -errno;
	int r = vr_write_all(fd, content, strlen(content));
	if (close(fd) < 0 && r == 0)
		r = -errno;
	return r;
}
