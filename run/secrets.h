/* The secrets side of a sandbox run (run/supervisor.c): the view's content-scan
 * settings (--scan, [view] scan / scan-max-size / scan-disable /
 * scan-allow) and the git history warning. See docs/scanning.md. */
#pragma once
#include "run/plan.h"
#include "policy/config.h"
#include "run/git-history.h"
#include "fusefs/view.h"

/* What the run's view masks by content (plan's --scan, else config's; plan
 * may be NULL), for the git history check. */
void vr_run_history_scan(VrGitScan *scan, const VrRunPlan *plan, const VrConfig *config);
/* Starts the git history check of the project under config's policy and
 * the run's scan settings (with the verdict cache). NULL when there is
 * nothing to check. */
VrGitHistory *vr_run_history_start(const char *project, const VrRunPlan *plan, const VrConfig *config);
/* Waits for it (at most VR_RUN_HISTORY_TIMEOUT_MS from its start) and prints
 * the one warning when hidden files are in the repository, whatever --quiet
 * says: it is about the secrets, not the run. */
void vr_run_history_report(VrGitHistory *h, const char *project);
#define VR_RUN_HISTORY_TIMEOUT_MS 5000

/* Kills and reaps a check that will not be reported (an error path). */
void vr_git_history_abandon(VrGitHistory *h);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(VrGitHistory, vr_git_history_abandon)
