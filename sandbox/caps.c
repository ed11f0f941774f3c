/* Capabilities of the sandboxed command (no glib here): none. The bounding
 * set goes first (dropping it needs CAP_SETPCAP), then the ambient set, then
 * every other set at once (vr_drop_all_caps, common/proc.c). */
#include "sandbox/sandbox.h"

#include <errno.h>
#include <linux/capability.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

int vr_sandbox_drop_bounding(void)
{
	for (int cap = 0; cap < 64; cap++) {
		if (prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) < 0) {
			if (errno == EINVAL)
				break; /* past CAP_LAST_CAP of this kernel */
			return -errno;
		}
	}
	if (prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) < 0 && errno != EINVAL)
		return -errno;
	return 0;
}

int vr_sandbox_keep_only_kill(void)
{
	struct __user_cap_header_struct hdr = {.version = _LINUX_CAPABILITY_VERSION_3, .pid = 0};
	struct __user_cap_data_struct data[_LINUX_CAPABILITY_U32S_3] = {{0}};
	/* a subset of what we hold: the kernel keeps pdeath_signal and dumpable */
	data[0].effective = data[0].permitted = 1u << CAP_KILL;
	if (syscall(SYS_capset, &hdr, data) < 0)
		return -errno;
	return 0;
}
