/* A project that is a git worktree (or a submodule checkout): its `.git` is a
 * file naming a git directory outside the project. */
#pragma once
#include "cli.h"

/* When the project's .git is a `gitdir: DIR` file pointing outside the
 * project, exposes DIR's common git directory read-write through a view of
 * its own (plan->guarded_dirs) whose read-only paths are the persistence
 * vectors of DESIGN.md (hooks, config, info/attributes, …), and binds it at
 * its host path so the agent's git finds it. Nothing to do otherwise. */
gboolean vr_run_apply_worktree(VrRunPlan *plan, GError **error);
