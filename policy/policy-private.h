/* policy/policy-private.h — shared inside policy/ only. */
#pragma once
#include "policy/policy.h"

/* vr_policy_add() that returns the rule added (owned by the policy), so the
 * caller can attach its why. NULL on error. */
VrRule *vr_policy_add_rule(VrPolicy *policy, VrRuleKind kind, const char *pattern,
                           const char *source, int line, gboolean project, GError **error);

/* The rule for files named NAME (config, config.worktree): added by
 * vr_policy_add_builtins with its table line. */
VrRule *vr_policy_add_gitconfig_name(VrPolicy *policy, const char *name, int line, const char *why);
