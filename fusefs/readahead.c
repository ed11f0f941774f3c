/* The view's read-ahead. The kernel starts every FUSE mount's bdi at
 * 128 KiB of read-ahead, and the INIT reply (max_readahead) can only lower
 * it (fs/fuse/inode.c takes the minimum): a first sequential read of a
 * large file costs one READ round trip per 128 KiB. Root may raise it in
 * /sys/class/bdi/MAJ:MIN/read_ahead_kb; with VR_VIEW_READ_AHEAD the kernel
 * sends READs of VR_VIEW_MAX_READ and keeps several in flight, so more than
 * one of the daemon's threads works (docs/PERFORMANCE.md "1 GiB file").
 *
 * Written after the mount and before the loop answers INIT, so vr_ll_init's
 * max_readahead (the same size) keeps it; without the right to write sysfs
 * (not root, a user namespace, read-only /sys) the mount keeps 128 KiB. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "common/cleanup.h"
#include "common/fd-util.h"
#include "common/log.h"
#include "fusefs/view-private.h"

/* major:minor of the topmost "fuse.vault-run" mount on mountpoint (an
 * absolute path without symlinks), from /proc/self/mountinfo. */
static bool mount_dev(const char *mountpoint, unsigned *maj, unsigned *min)
{
	g_autofree char *info = NULL;
	if (!g_file_get_contents("/proc/self/mountinfo", &info, NULL, NULL))
		return false;
	bool found = false;
	g_auto(GStrv) lines = g_strsplit(info, "\n", -1);
	for (char **l = lines; *l; l++) {
		/* ID PARENT MAJ:MIN ROOT MOUNTPOINT OPTIONS [TAGS...] - FSTYPE ... */
		g_auto(GStrv) f = g_strsplit(*l, " ", -1);
		if (g_strv_length(f) < 7)
			continue;
		const char *sep = NULL;
		for (char **p = f + 6; *p; p++)
			if (strcmp(*p, "-") == 0) {
				sep = p[1];
				break;
			}
		unsigned a, b;
		if (!sep || strcmp(sep, "fuse.vault-run") != 0 || sscanf(f[2], "%u:%u", &a, &b) != 2)
			continue;
		g_autofree char *mp = g_strcompress(f[4]); /* \040 and the like */
		if (strcmp(mp, mountpoint) == 0) {
			*maj = a;
			*min = b;
			found = true; /* keep going: the last one is on top */
		}
	}
	return found;
}

void vr_view_raise_readahead(const char *mountpoint)
{
	unsigned maj, min;
	if (!mountpoint || !mount_dev(mountpoint, &maj, &min)) {
		vr_debug("read-ahead: the view's mount is not in /proc/self/mountinfo; it keeps 128 KiB");
		return;
	}
	char path[64], val[16];
	snprintf(path, sizeof path, "/sys/class/bdi/%u:%u/read_ahead_kb", maj, min);
	int n = snprintf(val, sizeof val, "%u", VR_VIEW_READ_AHEAD / 1024);
	vr_cleanup_fd int fd = open(path, O_WRONLY | O_CLOEXEC);
	int r = fd < 0 ? -errno : vr_write_all(fd, val, (size_t)n);
	if (r < 0)
		vr_debug("read-ahead: cannot write %s (%s); the view keeps 128 KiB", path, g_strerror(-r));
}
