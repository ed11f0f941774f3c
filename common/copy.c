/* See copy.h. */
#include <errno.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "common/copy.h"
#include "common/fd-util.h"

#ifndef FICLONE
#define FICLONE _IOW(0x94, 9, int) /* linux/fs.h, whose RENAME_* clash with stdio.h */
#endif

int vr_copy_data(int in, int out, off_t size)
{
	if (ioctl(out, FICLONE, in) == 0)
		return 0; /* copy-on-write file systems: nothing copied */
	off_t done = 0;
	while (done < size) {
		ssize_t n = copy_file_range(in, NULL, out, NULL, (size_t)(size - done), 0);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		done += n;
	}
	if (done >= size)
		return 0;
	/* copy_file_range refused (old kernel, odd fs): plain read/write. */
	char buf[65536];
	if (lseek(in, done, SEEK_SET) < 0 || lseek(out, done, SEEK_SET) < 0)
		return -errno;
	for (;;) {
		ssize_t n = read(in, buf, sizeof buf);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		if (n == 0)
			return 0;
		int r = vr_write_all(out, buf, (size_t)n);
		if (r < 0)
			return r;
	}
}

