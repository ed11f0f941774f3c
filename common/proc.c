/* See common/proc.h. */
#include "common/proc.h"

#include <errno.h>
#include <linux/capability.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
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

static int is_executable_file(const char *path)
{
	struct stat st;
	return stat(path, &st) == 0 && S_ISREG(st.st_mode) && access(path, X_OK) == 0;
}

int vr_find_helper_executable(const char *name, const char *libexecdir, char *path, size_t len)
{
	char self[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
	char *slash = n > 0 ? memrchr(self, '/', (size_t)n) : NULL;
	if (slash) {
		*slash = '\0';
		if (snprintf(path, len, "%s/%s", self, name) < (int)len && is_executable_file(path))
			return 0;
	} else {
		snprintf(path, len, "(vault-run's own directory)");
	}
	char installed[PATH_MAX];
	if (snprintf(installed, sizeof installed, "%s/%s", libexecdir, name) < (int)sizeof installed &&
	    is_executable_file(installed)) {
		snprintf(path, len, "%s", installed);
		return 0;
	}
	return -ENOENT;
}
