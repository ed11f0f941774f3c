/* Copying a file's data the cheapest way the file systems allow. */
#pragma once
#include <sys/types.h>

/* Copies SIZE bytes of IN (from offset 0) to OUT (empty, at offset 0):
 * ioctl(FICLONE) first (copy-on-write file systems share the blocks), then
 * copy_file_range, then read/write. 0 or -errno. */
int vr_copy_data(int in, int out, off_t size);
