/* Serving a redacted file: the whole content is read at open, masked in
 * memory with the policy's same-length masker, and every read of that open
 * file is answered from the copy. Size and offsets stay those of the host
 * file; the clear text never leaves the daemon. */
#include <errno.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fusefs/view-private.h"

int vr_redact_load(int fd, char **ret_buf, size_t *ret_len)
{
	/* Bigger files are refused rather than served unmasked or truncated. */
	int r = vr_file_load(fd, VR_REDACT_MAX, ret_buf, ret_len);
	if (r < 0)
		return r;
	vr_redact_mask(*ret_buf, *ret_len);
	return 0;
}

int vr_file_load(int fd, size_t max, char **ret_buf, size_t *ret_len)
{
	struct stat st;
	if (fstat(fd, &st) < 0)
		return -errno;
	if (st.st_size < 0 || (uint64_t)st.st_size > max)
		return -EFBIG;
	size_t cap = (size_t)st.st_size, len = 0;
	char *buf = g_malloc(cap + 1);
	for (;;) {
		if (len == cap) {
			/* Grown since fstat: read on, within the limit. */
			if (cap >= max) {
				g_free(buf);
				return -EFBIG;
			}
			cap = MIN(max, cap * 2 + 4096);
			buf = g_realloc(buf, cap + 1);
		}
		ssize_t n = pread(fd, buf + len, cap - len, (off_t)len);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			int err = errno;
			g_free(buf);
			return -err;
		}
		if (n == 0)
			break;
		len += (size_t)n;
	}
	*ret_buf = buf;
	*ret_len = len;
	return 0;
}
