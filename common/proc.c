/* See common/proc.h. */
#include "common/proc.h"

#include <signal.h>
#include <sys/prctl.h>
#include <unistd.h>

pid_t vr_fork_helper(int deathsig, int fail_status)
{
	pid_t parent = getpid();
	pid_t pid = fork();
	if (pid != 0)
		return pid;
	prctl(PR_SET_PDEATHSIG, deathsig);
	if (getppid() != parent)
		_exit(fail_status);
	sigset_t none;
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	return 0;
}
