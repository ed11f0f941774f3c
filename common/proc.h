/* Forking a helper process that must not outlive us. */
#pragma once
#include <sys/types.h>

/* fork(2) for a helper: in the child, PR_SET_PDEATHSIG(DEATHSIG), then
 * the check that closes its race (the parent may have died before the
 * signal was armed: then the child _exits FAIL_STATUS at once), and an
 * empty signal mask (the supervisor blocks the signals its signalfd
 * reads; a helper and what it execs must get them). What fork returns:
 * the pid in the parent, 0 in the child, -1 with errno. */
pid_t vr_fork_helper(int deathsig, int fail_status);

/* FLAGS for vr_fork_helper_flags. */
enum {
	/* The child keeps the caller's signal mask: a helper that only does
	 * work for the caller and _exits (the key-file reader) stays immune
	 * to the ^C the supervisor blocks during start-up, instead of dying
	 * of it and turning the interrupt into an error. */
	VR_FORK_KEEP_SIGMASK = 1u << 0,
};

/* vr_fork_helper with FLAGS (0 is vr_fork_helper). */
pid_t vr_fork_helper_flags(int deathsig, int fail_status, unsigned flags);

/* Empties every capability set of this thread (permitted, effective,
 * inheritable; capset, which may always drop): what it holds after this it
 * can only regain by an exec as root. 0 or -errno. */
int vr_drop_all_caps(void);

/* vault-run's own helper executables (vault-run-proxy, vault-run-systemd):
 * NAME next to the running executable (/proc/self/exe's directory: the
 * build tree, or an install that keeps them together), else in LIBEXECDIR.
 * 0 with its path in PATH, or -ENOENT with PATH the place next to the
 * executable that was looked at. */
int vr_find_helper_executable(const char *name, const char *libexecdir, char *path, size_t len);
