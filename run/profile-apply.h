/* Applying a harness profile (run/profile.h) to a run plan. */
#pragma once
#include "run/plan.h"

/* Chooses the profile (plan->profile, or by COMMAND's name unless "none"),
 * and adds its binds, guarded directories, environment globs and — when
 * neither --net nor the config chose — its domains as the network allow-list.
 * Creates on the host only the directories the profile marks `create`. */
gboolean vr_run_apply_profile(VrRunPlan *plan, GError **error);
