/* COMMAND's RLIMIT_NOFILE: see sandbox/sandbox.h. Runs in the sandbox child before
 * exec: no glib. */
#include <errno.h>
#include <sys/resource.h>

#include "sandbox/sandbox.h"

int vr_sandbox_limit_nofile(void)
{
	struct rlimit rl;
	if (getrlimit(RLIMIT_NOFILE, &rl) < 0)
		return -errno;
	if (rl.rlim_max == RLIM_INFINITY)
		return 0; /* the kernel caps it at fs.nr_open: nothing to share */
	/* The view daemon shares our hard limit and raises its soft limit to
	 * it. Each file COMMAND holds open through the view costs the daemon
	 * two descriptors (the inode's O_PATH fd and the open file), so 7/16
	 * of the limit for COMMAND leaves the daemon an eighth for every other
	 * process of the run even when one process opens all it may. */
	rlim_t max = rl.rlim_max / 16 * 7;
	if (max < 64)
		max = rl.rlim_max < 64 ? rl.rlim_max : 64;
	if (max >= rl.rlim_max)
		return 0;
	rl.rlim_max = max;
	if (rl.rlim_cur > max)
		rl.rlim_cur = max;
	return setrlimit(RLIMIT_NOFILE, &rl) < 0 ? -errno : 0;
}
