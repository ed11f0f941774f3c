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

static int fd_kept(int fd, const int *keep, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (keep[i] == fd)
			return 1;
	return 0;
}

/* Fallback for kernels before 5.9 (no close_range): walk /proc/self/fd. */
static int close_walk(int lowfd, const int *keep, size_t n)
{
	DIR *d = opendir("/proc/self/fd");
	if (!d)
		return -errno;
	int self = dirfd(d);
	struct dirent *e;
	while ((e = readdir(d))) {
		char *end;
		long fd = strtol(e->d_name, &end, 10);
		if (*end || fd < lowfd || fd == self || fd_kept((int)fd, keep, n))
			continue;
		close((int)fd);
	}
	closedir(d);
	return 0;
}

static int cmp_int(const void *a, const void *b)
{
	int x = *(const int *)a, y = *(const int *)b;
	return (x > y) - (x < y);
}

int vr_close_all_except(int lowfd, const int *keep, size_t n)
{
	if (n > VR_CLOSE_KEEP_MAX)
		return -E2BIG;
#ifdef SYS_close_range
	/* The gaps between the kept descriptors, each one close_range. */
	int sorted[VR_CLOSE_KEEP_MAX];
	size_t m = 0;
	for (size_t i = 0; i < n; i++)
		if (keep[i] >= lowfd)
			sorted[m++] = keep[i];
	qsort(sorted, m, sizeof *sorted, cmp_int);
	unsigned from = (unsigned)lowfd;
	int ok = 1;
	for (size_t i = 0; i <= m && ok; i++) {
		unsigned to = i < m ? (unsigned)sorted[i] : ~0U;
		if (to > from)
			ok = syscall(SYS_close_range, from, i < m ? to - 1 : to, 0) == 0;
		if (i < m)
			from = to + 1;
	}
	if (ok)
		return 0;
#endif
	return close_walk(lowfd, keep, n);
}

int vr_close_from(int lowfd)
{
	return vr_close_all_except(lowfd, NULL, 0);
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
