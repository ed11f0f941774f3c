#include "common/log.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

static int log_level = VR_LOG_NOTICE;

/* Every line starts so, vr_log's and vr_log_text's alike. */
#define LINE_START "vault-run: "

void vr_log_set_level(int level) { log_level = level; }
int vr_log_get_level(void) { return log_level; }

__attribute__((format(printf, 2, 0)))
static void log_line(const char *prefix, const char *fmt, va_list ap, const char *suffix)
{
	char buf[2048];
	int n = snprintf(buf, sizeof buf, LINE_START "%s", prefix);
	if (n < 0 || (size_t)n >= sizeof buf)
		return;
	int m = vsnprintf(buf + n, sizeof buf - n, fmt, ap);
	if (m < 0)
		return;
	size_t len = (size_t)n + (size_t)m;
	if (len >= sizeof buf - 1)
		len = sizeof buf - 2;
	if (suffix) {
		int k = snprintf(buf + len, sizeof buf - len, ": %s", suffix);
		if (k > 0)
			len += (size_t)k;
		if (len >= sizeof buf - 1)
			len = sizeof buf - 2;
	}
	buf[len++] = '\n';
	/* One write so lines from several processes do not interleave. */
	ssize_t r = write(STDERR_FILENO, buf, len);
	(void)r;
}

static const char *const prefix[] = {"", "warning: ", "", "", "debug: "};

void vr_log(int level, const char *fmt, ...)
{
	if (level > log_level)
		return;
	int saved = errno;
	va_list ap;
	va_start(ap, fmt);
	log_line(prefix[level], fmt, ap, NULL);
	va_end(ap);
	errno = saved;
}

void vr_log_text(int level, const char *text)
{
	if (level > log_level)
		return;
	int saved = errno;
	struct iovec iov[] = {
		{(void *)LINE_START, sizeof LINE_START - 1},
		{(void *)prefix[level], strlen(prefix[level])},
		{(void *)text, strlen(text)},
		{(void *)"\n", 1},
	};
	/* One write, as log_line's, at any length. */
	ssize_t r = writev(STDERR_FILENO, iov, sizeof iov / sizeof *iov);
	(void)r;
	errno = saved;
}

int vr_log_errno(int errnum, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	log_line("", fmt, ap, strerror(errnum));
	va_end(ap);
	return -errnum;
}

void vr_die(int status, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	log_line("", fmt, ap, NULL);
	va_end(ap);
	_exit(status);
}

void vr_die_errno(int status, int errnum, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	log_line("", fmt, ap, strerror(errnum));
	va_end(ap);
	_exit(status);
}
