/* Per-run copies of a harness's state files (a profile's `copy`, e.g.
 * ~/.claude.json): the file holds the harness's counters and history, and
 * also what the host later runs (Claude Code's mcpServers, its allowed
 * tools). The run works on a copy in vault-run's state directory, served by
 * a file view like any writable bind; at the end only the profile's merge
 * keys (JSON key paths, never one that makes the host run something:
 * vr_profile_merge_key_allowed) go back into the host file, which is read
 * again then (the host's harness may have written it meanwhile). The merge
 * is an audit record of its own ("op":"merge"). */
#pragma once
#include <glib.h>

#include "run/plan.h"
#include "run/audit.h"

typedef struct {
	char *dir;         /* this run's copy directory, or NULL: no copies */
	GPtrArray *items;  /* private: what was copied */
	int lock_fd;       /* an flock on dir while the run lives (stale copies are swept), or -1 */
} VrRunCopies;

/* Copies each of PLAN's copies that exists into a new directory below
 * PROJECT's state directory. FALSE (error set) when a copy cannot be made:
 * the run must not fall back to the host file. */
gboolean vr_run_copies_prepare(VrRunCopies *c, const char *project, const VrRunPlan *plan, GError **error);
/* Each copy's path and the host path it stands for, in order. */
guint vr_run_copies_count(const VrRunCopies *c);
const char *vr_run_copies_copy_path(const VrRunCopies *c, guint i);
const char *vr_run_copies_host_path(const VrRunCopies *c, guint i);
/* Once the sandbox and every view have ended: merges the allowed keys back
 * (PROJECT_INSIDE: the project's path in the sandbox, for "{project}"),
 * sends a "merge" record for each file changed on the host, and removes the
 * copies. Failures are warnings: the host file is then left as it was. */
void vr_run_copies_finish(VrRunCopies *c, const char *project_inside, VrRunAudit *audit);
void vr_run_copies_clear(VrRunCopies *c);
G_DEFINE_AUTO_CLEANUP_CLEAR_FUNC(VrRunCopies, vr_run_copies_clear)
