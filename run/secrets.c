/* See run/secrets.h. */
#include "run/secrets.h"

#include "common/log.h"
#include "run/audit.h"
#include "run/view-settings.h"

void vr_run_history_scan(VrGitScan *scan, const VrRunPlan *plan, const VrConfig *config)
{
	/* As the run's view will scan (its audit settings are not used here). */
	VrViewOptions o = {.scan_mode = VR_VIEW_SCAN_MASK, .scan_max_size = VR_VIEW_SCAN_MAX_SIZE_DEFAULT};
	const VrViewSettings given = vr_run_view_settings(plan);
	vr_view_settings_apply(&o, &given, config);
	*scan = (VrGitScan){o.scan_mode != VR_VIEW_SCAN_OFF, o.scan_max_size, o.scan_filter};
}

VrGitHistory *vr_run_history_start(const char *project, const VrRunPlan *plan, const VrConfig *config)
{
	g_autofree char *hash = vr_run_audit_policy_hash(config->policy);
	VrGitScan scan;
	vr_run_history_scan(&scan, plan, config);
	return vr_git_history_start(project, config->policy, &scan, hash, TRUE);
}

void vr_run_history_report(VrGitHistory *h, const char *project)
{
	if (!h)
		return;
	int slow = 0;
	g_autoptr(GPtrArray) masked = NULL;
	g_autoptr(GPtrArray) paths = vr_git_history_finish(h, VR_RUN_HISTORY_TIMEOUT_MS, &slow, &masked);
	if (paths->len || masked->len) {
		g_autofree char *msg = vr_git_history_message(paths, masked);
		vr_warning("%s", msg);
	} else if (slow) {
		/* Loud once; then at -v only: "too slow" is cached for the
		 * repository's state and would otherwise repeat on every run. */
		vr_log(slow == 1 ? VR_LOG_WARNING : VR_LOG_INFO, "git history not checked: git took longer than %d s; `vault-run doctor --project %s` "
		        "checks it without a limit", VR_RUN_HISTORY_TIMEOUT_MS / 1000, project);
	}
}

void vr_git_history_abandon(VrGitHistory *h)
{
	g_autoptr(GPtrArray) paths = vr_git_history_finish(h, -1, NULL, NULL);
}
