/* The sandbox's root, as a list of mount operations (sandbox/sandbox.h's
 * VrSandboxOp) decided on the host before anything is mounted: the system
 * directories (or --rootfs, or bwrap's `--ro-bind DIR /`), /etc, /proc,
 * /dev, the tmpfs directories, an empty home, the project's view, the
 * config's binds, the command line's mounts in their order, the profile's
 * per-run copies, and an attach op first for each of the run's other views
 * (run/views.h), which every writable bind is routed through.
 *
 * Pure: it reads the host (what exists, where symlinks point, passwd and
 * group) but mounts, forks and writes nothing, so tests/unit/test_root_plan.c
 * checks the list itself. */
#pragma once
#include <glib.h>
#include <sys/types.h>

#include "policy/config.h"
#include "run/copy.h"
#include "run/plan.h"
#include "run/views.h"
#include "sandbox/sandbox.h"

typedef struct {
	GArray *ops;        /* VrSandboxOp, in the order the sandbox applies them */
	GPtrArray *strings; /* owns every string the ops point to */
} VrRootPlan;

typedef struct {
	const VrRunPlan *plan;
	const VrConfig *config;
	const char *project;      /* the project's real path (its view is mounted there in our namespace) */
	const char *mount_at;     /* where the sandbox sees it */
	uid_t agent_uid;          /* who the agent is: its passwd/group entries, its tmpfs */
	gid_t agent_gid;
	const char *user, *home;
	const VrRunCopies *copies; /* the profile's state files, copied for the run; NULL: none */
	const GPtrArray *key_files; /* char *: the real paths of the run's key files (run/keyfiles.h); NULL */
} VrRootInput;

void vr_root_plan_init(VrRootPlan *r);
void vr_root_plan_clear(VrRootPlan *r);
G_DEFINE_AUTO_CLEANUP_CLEAR_FUNC(VrRootPlan, vr_root_plan_clear)

/* Fills R (empty) from IN, registering in VIEWS every view a writable bind
 * needs and building their policies. FALSE with a one-line message in
 * *ERROR (VR_PLAN_ERROR_BAD_VALUE, or the views' own) when the plan is
 * refused: a --rootfs that is not a directory, a missing bind source, a
 * --dev-bind of something that is not a device, a bind the views refuse. */
gboolean vr_root_plan_build(VrRootPlan *r, const VrRootInput *in, VrViews *views, GError **error);

/* Appends one op (SRC and DEST are copied). */
void vr_root_plan_add(VrRootPlan *r, VrOpKind kind, const char *src, const char *dest, int flags,
                      unsigned mode);

/* `--dry-run`: one line per op. */
void vr_root_plan_print(const VrRootPlan *r);

/* Where a run's audit log FILE may not be (run/audit.h): the project, every
 * host path the root binds, and what the other views serve. The strings
 * stay R's and VIEWS'. A GArray of VrAuditUnder. */
GArray *vr_root_plan_audit_unders(const VrRootPlan *r, const VrViews *views, const char *project);

/* TRUE when PATH is DIR or below it (both absolute, normalised). */
gboolean vr_path_is_under(const char *path, const char *dir);
