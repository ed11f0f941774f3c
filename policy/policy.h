/* policy/ — pure decisions: which class a project path gets, and why.
 * No FUSE, no namespaces. Patterns follow .gitignore semantics. */
#pragma once
#include <glib.h>

#define VR_POLICY_ERROR (vr_policy_error_quark())
GQuark vr_policy_error_quark(void);
typedef enum {
	VR_POLICY_ERROR_PATTERN,  /* a pattern that cannot be parsed */
	VR_POLICY_ERROR_CONFIG,   /* a config file that is wrong */
	VR_POLICY_ERROR_IO,       /* a config file that cannot be read */
} VrPolicyError;

/* Classes, ordered by strictness (a larger value is stricter). */
typedef enum {
	VR_CLASS_VISIBLE = 0,
	VR_CLASS_READONLY = 1,
	VR_CLASS_REDACT = 2,
	VR_CLASS_HIDE = 3,
} VrClass;

typedef enum {
	VR_RULE_HIDE,
	VR_RULE_READONLY,
	VR_RULE_REDACT,
	VR_RULE_SHOW, /* negation: un-hides what a broader rule caught */
} VrRuleKind;

typedef struct {
	char *pattern;    /* as written, e.g. "!.env.example" is kind SHOW, pattern ".env.example" */
	VrRuleKind kind;
	char *source;     /* "built-in", a config file path, or "command line" */
	int line;         /* 1-based line in source, 0 when it has none */
	gboolean project; /* from the project's .vault-run: combines by strictness */
	char *why;        /* for built-ins: why the rule exists; else NULL */
	gboolean gitconfig; /* a git config file (read-only, but a rename onto it passes
	                     * the config gate: policy/gitconfig.h) */
} VrRule;

typedef struct {
	VrClass cls;
	const VrRule *rule; /* the rule that decided; NULL when no rule matched */
} VrDecision;

typedef struct VrPolicy VrPolicy;

VrPolicy *vr_policy_new(void);
void vr_policy_free(VrPolicy *policy);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(VrPolicy, vr_policy_free)

/* Adds one rule. Fails with VR_POLICY_ERROR_PATTERN for a bad pattern (the
 * message names source:line and what is wrong). */
gboolean vr_policy_add(VrPolicy *policy, VrRuleKind kind, const char *pattern,
                       const char *source, int line, gboolean project, GError **error);
/* Adds the built-in defaults (secrets hidden, persistence vectors read-only). */
void vr_policy_add_builtins(VrPolicy *policy);

/* The decision for a path relative to the project root ("" is the root,
 * no leading "/", components separated by "/"). Ancestors count: a hidden or
 * read-only directory makes everything below it at least as strict. */
VrDecision vr_policy_decide(const VrPolicy *policy, const char *relpath, gboolean is_dir);
/* The same, when the caller already knows the parent directory's decision
 * (the view decides at lookup, parent first): does not re-walk ancestors. */
VrDecision vr_policy_decide_child(const VrPolicy *policy, VrDecision parent,
                                  const char *relpath, gboolean is_dir);

/* The stricter of vr_policy_decide_child() as a file and as a directory,
 * in one pass over the rules: for a name that is not a directory (a
 * symlink leads where a directory of that name would). On a tie, the
 * file's decision. */
VrDecision vr_policy_decide_child_either(const VrPolicy *policy, VrDecision parent, const char *relpath);

/* TRUE when moving the directory relpath (or anything into it) could change
 * which rules match entries below it: some rule with a slash in it could
 * match a path under relpath. The view refuses such renames with EXDEV. */
gboolean vr_policy_dir_is_rule_sensitive(const VrPolicy *policy, const char *relpath);

/* Rules about git's own files that no pattern can say (they hold for
 * files, symlinks and the like, never for directories):
 *  - every file named `config` or `config.worktree` is git config
 *    (vr_policy_add_builtins adds these);
 *  - vr_policy_add_gitconfig_file: a file a project config includes;
 *  - vr_policy_add_nondir_readonly: a path that must stay a directory (an
 *    ancestor of a protected path: a symlink there would redirect git).
 * Each is read-only (the first two with rule->gitconfig set) unless a
 * stricter rule matches, or the user's own `show` rule (not a built-in
 * one) names the path. source/line say where the path was found. */
void vr_policy_add_gitconfig_file(VrPolicy *policy, const char *relpath, const char *source,
                                  int line);
void vr_policy_add_nondir_readonly(VrPolicy *policy, const char *relpath, const char *source,
                                   int line, const char *why);
/* Reads the project's git configs on the host (.git/config,
 * config.worktree, .git/modules/…/config, .git/worktrees/…/config.worktree
 * and what they include) and protects what they name: each included file
 * inside the project passes the config gate, each core.hooksPath directory
 * inside the project is read-only, both followed through the symlinks
 * they meet (which become read-only themselves). policy/gitconfig-project.c */
void vr_policy_protect_git_configs(VrPolicy *policy, const char *project_dir);

guint vr_policy_n_rules(const VrPolicy *policy);
const VrRule *vr_policy_rule(const VrPolicy *policy, guint index);

const char *vr_class_name(VrClass cls);   /* "visible", "readonly", "redacted", "hidden" */
const char *vr_rule_kind_name(VrRuleKind kind); /* "hide", "readonly", "redact", "show" */

/* Masks secret values in a buffer in place with '*' (same length, offsets
 * unchanged): values after '=' or ':' in dotenv/ini-style lines, PEM block
 * bodies. Used for the redact class. */
void vr_redact_mask(char *buf, size_t len);
