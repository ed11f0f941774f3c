/* A run's plan: what `vault-run [OPTIONS] COMMAND` asks for, filled by the
 * CLI (cli/run-options.c), the config and the profile, then carried out by
 * the supervisor (run/supervisor.c). It lives here, in run/, so nothing
 * below the CLI needs a cli header. */
#pragma once
#include <glib.h>
#include "policy/policy.h"
#include "policy/resource-limits.h"
#include "sandbox/sandbox.h"

#define VR_PLAN_ERROR (vr_plan_error_quark())
GQuark vr_plan_error_quark(void);
typedef enum {
	VR_PLAN_ERROR_UNKNOWN_OPTION,
	VR_PLAN_ERROR_MISSING_ARGUMENT,
	VR_PLAN_ERROR_BAD_VALUE,
	VR_PLAN_ERROR_NO_COMMAND,
} VrCliError;

typedef enum {
	VR_NET_DEFAULT = 0, /* none, or the profile's domains when a profile applies */
	VR_NET_NONE,        /* own namespace, loopback only */
	VR_NET_HOST,        /* the host's network */
	VR_NET_ALLOW,       /* own namespace + the filtering proxy for net_allow */
} VrNetMode;

typedef enum {
	VR_ENV_SET,    /* name=value */
	VR_ENV_UNSET,  /* name */
	VR_ENV_CLEAR,  /* everything set so far */
	VR_ENV_FILE,   /* name = dotenv file, value = "GLOB1,GLOB2" or NULL for all */
} VrEnvOpKind;

typedef struct {
	VrEnvOpKind kind;
	char *name;
	char *value;
	gboolean from_config; /* [sandbox] env-file/setenv: messages name the config */
} VrEnvOp;

/* A bubblewrap-style mount option, applied in command-line order after the
 * default root. kind is a VrOpKind; src is NULL where the option has none. */
typedef struct {
	VrOpKind kind;
	char *src;
	char *dest;
	int flags;
} VrUserMount;

typedef struct {
	VrRuleKind kind;
	char *pattern;
} VrPlanRule;

/* A host directory bound read-write for a harness (e.g. ~/.claude) or a
 * worktree's git directory, whose settings inside must stay read-only:
 * served through a view of its own (run/views.h) with the run's policy and
 * these readonly patterns (relative to dir). */
typedef struct {
	char *dir;
	GPtrArray *readonly; /* patterns (char *), gitignore syntax */
	char *source;        /* who guards it, for messages and rule sources ("profile claude"); NULL: generic */
} VrGuardedDir;

/* A host file the run works on a per-run copy of (run/copy.h): a harness's
 * state file that also holds what the host runs (~/.claude.json). */
typedef struct {
	char *path;          /* the host file, as the profile names it */
	GPtrArray *merge;    /* JSON key paths that go back at the end (char *) */
} VrCopyFile;

typedef struct {
	char *project;          /* NULL: the current directory */
	gboolean allow_home_project; /* --allow-home-project: the project may be or hold $HOME */
	char *mount_at;         /* NULL: the project's absolute host path */
	VrNetMode net;
	GPtrArray *net_allow;   /* domain patterns (char *) for VR_NET_ALLOW */
	gboolean net_allow_private; /* let allowed names resolve to private addresses */
	GPtrArray *net_localhost; /* allow-localhost ports ("11434", "8080/tcp"); with
	                           * none/default they make the mode VR_NET_ALLOW */
	GPtrArray *net_read;    /* --net read=HOST: read-only hosts (char *, lower case), port 443, terminated */
	GPtrArray *keys;        /* --key NAME@HOST,... declarations as written (char *, net/keys.h); "none": off */
	GPtrArray *profile_keys; /* the profile's [keys] bind (char *): bound when the value exists (run/profile-keys.h) */
	char *profile_applied;  /* the profile the run uses, for messages; NULL: none */
	GPtrArray *key_files;   /* a profile's [keys] file declarations (char *, run/keyfiles.h) */
	gboolean net_explicit;  /* none/host/allow= came from --net or the config, not a profile */
	char *profile;          /* --profile NAME; "none" turns profiles off; NULL: by COMMAND */
	gboolean quiet;         /* no summary line at the end */
	GPtrArray *guarded_dirs; /* VrGuardedDir *, filled from the profile */
	GPtrArray *copies;      /* VrCopyFile *, filled from the profile */
	GPtrArray *env_allow;   /* globs (char *) added to the default allow-list */
	GArray *env_ops;        /* VrEnvOp, in command-line order */
	GArray *mounts;         /* VrUserMount, in command-line order */
	GArray *rules;          /* VrPlanRule from --hide/--readonly/--redact/--show */
	char *rootfs;
	char *chdir;
	char *hostname;
	gboolean new_session;
	gboolean allow_userns;
	gboolean dry_run;
	gboolean help;
	gboolean version;
	int verbose;
	int json_status_fd;     /* -1: none */
	double timeout;         /* seconds, 0: none */
	char *audit_path;
	char *audit_level;
	guint64 audit_max_size;    /* --audit-max-size; 0: no rotation (when audit_max_size_set) */
	gboolean audit_max_size_set;
	char *audit_fail;          /* --audit-fail: "closed", "open"; NULL: the config's, else closed */
	char *policy_file;
	gboolean journal_off;      /* --journal=off: no undo journal for this run (docs/undo.md) */
	guint64 journal_max_size;  /* --journal-max-size; 0: the default (1 GiB) */
	VrLimits limits;           /* --memory/--pids/--cpu; 0: the config's, else none (run/cgroup.c) */
	char *scan_mode;           /* --scan mask|refuse|off; NULL: the config's, else mask */
	/* The project's .git file (run/worktree.c), for the run's audit log:
	 * the outside git directory it names, and the reason it was opened
	 * (gitfile_ok) or refused; NULL when .git is none. */
	char *gitfile_dir;
	char *gitfile_why;
	gboolean gitfile_ok;
	char **command;         /* NULL-terminated; NULL when help/version */
} VrRunPlan;

VrRunPlan *vr_run_plan_new(void);
void vr_run_plan_free(VrRunPlan *plan);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(VrRunPlan, vr_run_plan_free)

/* Applies one `--net` value (also the config's `net =`): none, host,
 * allow=DOMAINS, allow-localhost=PORTS, allow-private, or several of the
 * last three joined by ';'. what names the source in errors ("--net"). */
gboolean vr_run_plan_add_net(VrRunPlan *plan, const char *value, const char *what, GError **error);
