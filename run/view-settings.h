/* A view's settings, resolved by one piece of code for `vault-run mount`
 * and for a run's daemons: the command line's value, else the config's,
 * else the view's default (vr_view_options_init). The command line's
 * texts were checked where they were read, with the config's own lists
 * (vr_audit_level_parse and vr_view_scan_mode_parse read them),
 * vr_audit_fail_parse and the one size grammar (common/size.h). */
#pragma once
#include <glib.h>

#include "fusefs/view.h"
#include "policy/config.h"
#include "run/plan.h"

typedef struct {
	const char *audit_level;    /* --audit-level; NULL: the config's */
	const char *audit_fail;     /* --audit-fail */
	const char *scan_mode;      /* --scan */
	gboolean audit_max_size_set; /* --audit-max-size */
	guint64 audit_max_size;
	gboolean scan_max_size_set; /* --scan-max-size (mount only) */
	guint64 scan_max_size;
} VrViewSettings;

/* Fills O's audit level, audit part size and failure mode, scan mode,
 * scan size limit and scan filter from GIVEN and CONFIG. */
void vr_view_settings_apply(VrViewOptions *o, const VrViewSettings *given, const VrConfig *config);

/* A run's: what its command line (PLAN, NULL: none) set. */
VrViewSettings vr_run_view_settings(const VrRunPlan *plan);
