/* policy/scan-filter.h — which scanner findings the user has chosen not to
 * see: rules turned off ([view] scan-disable) and known false positives by
 * path and rule ([view] scan-allow). Both loosen the view, so config.c
 * accepts them only from the user's own config or a --policy file, never
 * from a project's .vault-run. Applied by the view (fusefs/content-scan.c)
 * and by `vault-run scan` to the hits of vr_scan_buffer(). */
#pragma once
#include <glib.h>
#include "policy/scan.h"

typedef struct VrScanFilter VrScanFilter;

typedef struct {
	char *pattern;          /* gitignore-style path pattern, as written */
	const VrScanRule *rule; /* NULL: every rule ("*") */
	char *source;           /* config file path */
	int line;
} VrScanAllow;

typedef struct {
	const VrScanRule *rule;
	char *source;
	int line;
} VrScanDisabled;

VrScanFilter *vr_scan_filter_new(void);
void vr_scan_filter_free(VrScanFilter *f);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(VrScanFilter, vr_scan_filter_free)

/* Turns a rule off everywhere. VR_POLICY_ERROR_CONFIG for an unknown id
 * (the message is the part after "FILE:LINE: "). */
gboolean vr_scan_filter_disable(VrScanFilter *f, const char *rule_id, const char *source, int line,
                                GError **error);
/* "PATTERN:RULE" (split at the last ':'; RULE may be '*'): findings of RULE
 * in files matching PATTERN are not reported or masked. */
gboolean vr_scan_filter_allow(VrScanFilter *f, const char *entry, const char *source, int line,
                              GError **error);

gboolean vr_scan_filter_is_empty(const VrScanFilter *f);
/* What applies to relpath, as a number: two paths with the same key get the
 * same findings from the same bytes (the view keys its verdict cache on it). */
guint64 vr_scan_filter_key(const VrScanFilter *f, const char *relpath);
/* Removes from hits (VrScanHit) those f drops for relpath (relative to the
 * project root, no leading '/'). Returns how many it removed. f may be NULL. */
guint vr_scan_filter_apply(const VrScanFilter *f, const char *relpath, GArray *hits);

/* For `vault-run config show`. */
guint vr_scan_filter_n_disabled(const VrScanFilter *f);
const VrScanDisabled *vr_scan_filter_disabled(const VrScanFilter *f, guint i);
guint vr_scan_filter_n_allowed(const VrScanFilter *f);
const VrScanAllow *vr_scan_filter_allowed(const VrScanFilter *f, guint i);
