/* Internal interfaces of a sandbox run (cli/cmd-run.c → run/supervisor.c and helpers). */
#pragma once
#include <glib.h>
#include <stdbool.h>
#include <sys/types.h>
#include "run/plan.h"
#include "policy/config.h"

/* run/env.c: the environment COMMAND gets: allow-listed host variables, then the
 * plan's edits in order. home/user override HOME/USER when not NULL. */
char **vr_env_build(const VrRunPlan *plan, char **host_env, const char *home,
                    const char *user, GError **error);
/* The config's [sandbox] env-allow, env-file and setenv into PLAN, before
 * the command line's edits (a relative env-file is the project's). */
void vr_env_add_config(VrRunPlan *plan, const VrConfig *config, const char *project);
/* TRUE when name matches the default allow-list or one of extra (globs). */
gboolean vr_env_allowed(const char *name, GPtrArray *extra);

/* run/userns.c */
typedef struct {
	bool host_root;   /* running as uid 0 of the initial user namespace */
	uid_t uid;        /* ids outside */
	gid_t gid;
} VrIdentity;
void vr_userns_identity(VrIdentity *id);
/* Why user namespaces are unavailable here and how to fix it (one phrase). */
const char *vr_userns_diagnose(void);
/* Before unshare when host root: a helper in the initial namespace that
 * writes the multi-line maps once told to. 0 or -errno. */
int vr_userns_prepare(const VrIdentity *id, pid_t *ret_helper, int *ret_go_fd);
/* unshare(USER|NS) + maps + MS_SLAVE on /. Logs the cause (and the fix)
 * when user namespaces are unavailable. 0 or -errno (logged). */
int vr_userns_enter(const VrIdentity *id, pid_t helper, int go_fd);

/* run/supervisor.c: runs the whole sandbox; returns the exit status. */
int vr_supervisor_run(VrRunPlan *plan);
