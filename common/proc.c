/* See common/proc.h. */
#include "common/proc.h"

#include <errno.h>
#include <linux/capability.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

pid_t vr_fork_helper(int deathsig, int fail_status)
{
	return vr_fork_helper_flags(deathsig, fail_status, 0);
}

pid_t vr_fork_helper_flags(int deathsig, int fail_status, unsigned flags)
{
	pid_t parent = getpid();
	pid_t pid = fork();
	if (pid != 0)
		return pid;
	prctl(PR_SET_PDEATHSIG, deathsig);
	if (getppid() != parent)
		_exit(fail_status);
	if (!(flags & VR_FORK_KEEP_SIGMASK)) {
		sigset_t none;
		sigemptyset(&none);
		sigprocmask(SIG_SETMASK, &none, NULL);
	}
	return 0;
}

int vr_drop_all_caps(void)
{
	struct __user_cap_header_struct hdr = {.version = _LINUX_CAPABILITY_VERSION_3, .pid = 0};
	struct __user_cap_data_struct data[_LINUX_CAPABILITY_U32S_3] = {{0}};
	return syscall(SYS_capset, &hdr, data) < 0 ? -errno : 0;
}
