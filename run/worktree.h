/* A project that is a git linked worktree or a submodule checkout: its
 * `.git` is a file naming a git directory outside the project. */
#pragma once
#include "run/plan.h"

/* When the project's .git is a "gitdir: DIR" file that passes the check of
 * common/gitfile.h (a linked worktree of a repository that names this tree
 * back, or a submodule's .git/modules/… of a repository above it), exposes
 * the git directory outside the project through a view of its own
 * (plan->guarded_dirs) whose read-only paths are the persistence vectors of
 * DESIGN.md (hooks, config, info/attributes, …), binds it at its host path
 * so the agent's git finds it, and says so in one line (notice level).
 * Any other .git file opens nothing: one warning line, and git inside sees
 * no repository. Never fails. */
gboolean vr_run_apply_worktree(VrRunPlan *plan, GError **error);
