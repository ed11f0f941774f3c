/* `vault-run [OPTIONS] [--] COMMAND [ARG...]`: parse, then hand the plan to
 * the supervisor. */
#include <stdio.h>

#include "cli/commands.h"
#include "common/exitcode.h"
#include "common/log.h"
#include "cli/run-options.h"
#include "run/run.h"
#include "run/profile-apply.h"
#include "run/worktree.h"

int vr_cmd_run(int argc, char **argv)
{
	g_autoptr(VrRunPlan) plan = vr_run_plan_new();
	g_autoptr(GError) error = NULL;
	if (!vr_cli_parse(plan, argc, argv, &error)) {
		vr_error("%s", error->message);
		return VR_EXIT_ERROR;
	}
	if (plan->help) {
		vr_cli_print_help(stdout);
		return VR_EXIT_OK;
	}
	if (plan->version) {
		printf("vault-run %s\n", VR_VERSION);
		return VR_EXIT_OK;
	}
	if (plan->verbose)
		vr_log_set_level(plan->verbose > 1 ? VR_LOG_DEBUG : VR_LOG_INFO);
	if (!vr_run_apply_profile(plan, &error) || !vr_run_apply_worktree(plan, &error)) {
		vr_error("%s", error->message);
		return VR_EXIT_ERROR;
	}
	return vr_supervisor_run(plan);
}
