/* See run/view-settings.h. */
#include "run/view-settings.h"

#include "audit/sinks.h"

void vr_view_settings_apply(VrViewOptions *o, const VrViewSettings *given, const VrConfig *config)
{
	const char *level = given->audit_level ? given->audit_level : config->audit_level;
	if (vr_audit_level_parse(level) >= 0)
		o->audit_level = (VrAuditLevel)vr_audit_level_parse(level);
	if (given->audit_max_size_set)
		o->audit_max_size = given->audit_max_size;
	else if (config->audit_max_size_set)
		o->audit_max_size = config->audit_max_size;
	o->audit_fail_open = vr_audit_fail_parse(given->audit_fail ? given->audit_fail : config->audit_fail) == 1;
	const char *mode = given->scan_mode ? given->scan_mode : config->scan_mode;
	if (vr_view_scan_mode_parse(mode) >= 0)
		o->scan_mode = (VrViewScanMode)vr_view_scan_mode_parse(mode);
	if (given->scan_max_size_set)
		o->scan_max_size = given->scan_max_size;
	else if (config->scan_max_size)
		o->scan_max_size = config->scan_max_size;
	o->scan_filter = config->scan_filter;
}

VrViewSettings vr_run_view_settings(const VrRunPlan *plan)
{
	if (!plan)
		return (VrViewSettings){0};
	return (VrViewSettings){
		.audit_level = plan->audit_level,
		.audit_fail = plan->audit_fail,
		.scan_mode = plan->scan_mode,
		.audit_max_size_set = plan->audit_max_size_set,
		.audit_max_size = plan->audit_max_size,
	};
}
