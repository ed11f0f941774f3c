/* vault-run's own directories are never the agent's: checked against the
 * project before anything is created or mounted. */
#pragma once
#include "policy/policy.h"

/* 0, or -EACCES after one line when the state directory (every run's log
 * and undo journal) lies inside PROJECT and POLICY does not hide it there,
 * or the config directory (the user's rules and profiles) lies inside it
 * and POLICY does not keep it at least read-only. */
int vr_run_check_own_dirs(const char *project, const VrPolicy *policy);
