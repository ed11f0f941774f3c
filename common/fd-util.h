#pragma once
#include <stddef.h>
#include <sys/types.h>

/* Write all of buf, retrying on EINTR and short writes. 0 or -errno. */
int vr_write_all(int fd, const void *buf, size_t len);
/* Read until len bytes or EOF; returns bytes read or -errno. */
ssize_t vr_read_all(int fd, void *buf, size_t len);
/* Read one line (a byte at a time, so nothing after it is consumed) into
 * buf, without its newline, NUL-terminated; stops at EOF or len - 1 bytes.
 * Returns its length or -errno; a writer that keeps the pipe open after
 * the line does not make the reader wait for EOF. */
ssize_t vr_read_line(int fd, char *buf, size_t len);
/* Close every descriptor >= lowfd (close_range, with a /proc fallback). */
int vr_close_from(int lowfd);
/* The same, but keep the n descriptors in keep (-1 entries are ignored;
 * at most VR_CLOSE_KEEP_MAX). 0 or -errno. */
#define VR_CLOSE_KEEP_MAX 32
int vr_close_all_except(int lowfd, const int *keep, size_t n);
/* Write a short string to a file (for /proc/self/uid_map etc.). 0 or -errno. */
int vr_write_file_at(int dirfd, const char *path, const char *content);
