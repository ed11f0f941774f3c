/* Placeholder until the view lands. */
#include <errno.h>
#include "view.h"
#include "log.h"

int vr_audit_level_parse(const char *name) { return -1; }
void vr_view_options_init(VrViewOptions *opts) { (void)opts; }
int vr_view_run(const VrViewOptions *opts) { return vr_log_errno(ENOSYS, "the view"); }
