/* Resource limits (--memory, --pids, --cpu) through a cgroup that holds the
 * sandbox's pid 1 and so everything under it. Mechanisms, in the order tried:
 *
 *   systemd  a transient scope from the systemd manager on the bus (the user's,
 *            or the system's when root), when it has the controllers;
 *   v2       a child of our own cgroup v2 cgroup, when it is delegated to us
 *            (writable, the controllers offered and enabled or enableable);
 *   v1       as host root on a hybrid host: children of our own cgroups in
 *            the v1 memory, pids and cpu hierarchies.
 *
 * When none can enforce every requested limit the run is refused: a limit
 * is never silently dropped. A helper process forked before the user
 * namespace (still with the host's credentials, free to use D-Bus threads)
 * creates, fills and removes the cgroup, and removes it too when the
 * supervisor dies without saying goodbye. See docs/sandbox.md. */
#pragma once
#include <glib.h>
#include <sys/types.h>

#include "policy/resource-limits.h"

typedef enum {
	VR_CGROUP_NONE,
	VR_CGROUP_SYSTEMD,
	VR_CGROUP_V2,
	VR_CGROUP_V1,
} VrCgroupMech;

/* The mechanism that would enforce `want` for this process, and a phrase
 * saying where (e.g. "cgroup v1 as root (/sys/fs/cgroup/memory/...)"), or
 * VR_CGROUP_NONE and why, with how to fix it. May talk to D-Bus (threads):
 * never call it in the supervisor before unshare. */
VrCgroupMech vr_cgroup_probe(const VrLimits *want, gboolean host_root, char **detail);

typedef struct VrCgroup VrCgroup;

/* Forks the helper and has it create the cgroup with the limits. NULL when
 * the limits cannot be enforced here (one line logged, with the fix). */
VrCgroup *vr_cgroup_start(const VrLimits *limits, gboolean host_root);
/* Moves pid (of the initial pid namespace) into the cgroup. 0, or -1 (logged). */
int vr_cgroup_attach(VrCgroup *cg, pid_t pid);
typedef struct {
	int oom_kills;     /* processes the kernel's OOM killer killed (0 when unknown) */
	int refused_forks; /* forks refused at the pids limit */
} VrCgroupEnd;
/* After the sandbox has ended: kills what is left in the cgroup, removes
 * it, and frees cg. What the limits did. */
VrCgroupEnd vr_cgroup_finish(VrCgroup *cg);
/* One line on stderr for each limit the run reached. */
void vr_cgroup_report(VrCgroupEnd end, const VrLimits *l);
/* --dry-run: the limits and the mechanism, or why they cannot be enforced. */
void vr_cgroup_print_plan(const VrLimits *l, gboolean host_root);

/* The cgroup v2 mount point (e.g. /sys/fs/cgroup), or NULL. */
char *vr_cgroup_v2_mount(void);

/* The systemd mechanism, used by the helper: each call runs the executable
 * vault-run-systemd (run/cgroup-systemd-call.c; the D-Bus side is
 * run/cgroup-systemd.c). Whether a systemd manager is on the bus with the
 * controllers for `want`; FALSE and why otherwise. */
gboolean vr_cgroup_systemd_usable(const VrLimits *want, gboolean host_root, char **detail);
/* Starts scope `name` around pid with the limits and waits for it. FALSE and a message. */
gboolean vr_cgroup_systemd_start(const char *name, pid_t pid, const VrLimits *l, gboolean host_root,
                                 char **error);
void vr_cgroup_systemd_stop(const char *name, gboolean host_root);
