/* Self-confinement of vault-run's own processes that parse what the agent
 * sends: the view daemons (fusefs/view-confine.c) and the network proxy
 * (net/confine.c). Each first opens everything it will need,
 * then calls vr_confine_apply() once, while it is still single-threaded:
 * no_new_privs, a Landlock ruleset (best effort, common/landlock.h) and a
 * seccomp deny-list that is loaded for every thread. */
#pragma once
#include <stdbool.h>
#include "common/landlock.h"
#include "common/seccomp-util.h"

enum {
	/* umount/umount2 return 0 without acting instead of EPERM: libfuse's
	 * own unmount at exit then stays quiet, and the unmount keeper forked
	 * before confinement does the real one (view-confine.c). */
	VR_CONFINE_UMOUNT_NOOP = 1 << 0,
};

/* Loads the seccomp deny-list (native and compat ABIs, all threads).
 * 0 or -errno. */
int vr_confine_seccomp(unsigned flags);
/* The same filter compiled to BPF, for another process to load with
 * vr_confine_apply_prog. 0 or -errno. */
int vr_confine_seccomp_prepare(unsigned flags, VrSeccompProg *prog);

/* no_new_privs, then ll enforced (if the kernel has Landlock), then the
 * seccomp filter. ll is consumed. 0 or -errno (logged by the caller). */
int vr_confine_apply(VrLandlock *ll, unsigned flags);
/* The same with the filter already compiled (prog, when it holds one). */
int vr_confine_apply_prog(VrLandlock *ll, unsigned flags, const VrSeccompProg *prog);
