/* Serving a redacted file: the whole content is read at open, masked in
 * memory with the policy's same-length masker, and every read of that open
 * file is answered from the copy. Size and offsets stay those of the host
 * file; the clear text never leaves the daemon. */
#include <errno.h>
#include <sys/stat.h>
#include <unistd.h>

#include "view-private.h"

int vr_redact_load(int fd, char **ret_buf, size_t *ret_len)
{
	struct stat st;
	if (fstat(fd, &st) < 0)
		return -errno;
	/* Bigger files are refused rather than served unmasked or truncated. */
	if (st.st_size < 0 || (uint64_t)st.st_size > VR_REDACT_MAX)
		return -EFBIG;
	size_t cap = (size_t)st.st_size, len = 0;
	char *buf = g_malloc(cap + 1);
	for (;;) {
		if (len == cap) {
			/* Grown since fstat: read on, within the limit. */
			if (cap >= VR_REDACT_MAX) {
				g_free(buf);
				return -EFBIG;
			}
			cap = MIN((size_t)VR_REDACT_MAX, cap * 2 + 4096);
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
	vr_redact_mask(buf, len);
	*ret_buf = buf;
	*ret_len = len;
	return 0;
}
