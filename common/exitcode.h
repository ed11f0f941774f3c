/* Exit codes of vault-run, as documented in the man page and README. */
#pragma once
#include <sys/wait.h>

enum {
	VR_EXIT_OK = 0,
	VR_EXIT_ERROR = 125,       /* vault-run's own error (bad option, config…) */
	VR_EXIT_CANNOT_EXEC = 126, /* COMMAND exists but cannot be executed */
	VR_EXIT_NOT_FOUND = 127,   /* COMMAND not found */
	VR_EXIT_SIGNAL_BASE = 128, /* 128+N: COMMAND died of signal N */
};

/* A wait(2) status as the shell reports it: the exit code, or 128+signal. */
static inline int vr_exit_status(int wstatus)
{
	if (WIFEXITED(wstatus))
		return WEXITSTATUS(wstatus);
	if (WIFSIGNALED(wstatus))
		return VR_EXIT_SIGNAL_BASE + WTERMSIG(wstatus);
	return VR_EXIT_ERROR;
}
