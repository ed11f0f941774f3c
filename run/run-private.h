/* run/ internals: one run, as the supervisor's phases see it
 * (run/supervisor.c), with its view daemons (run/daemons.c) and its wait
 * (run/wait.c). */
#pragma once
#include <glib.h>
#include <limits.h>
#include <stdbool.h>
#include <sys/types.h>

#include "common/seccomp-util.h"
#include "fusefs/view.h"
#include "net/allow.h"
#include "net/proxy.h"
#include "policy/config.h"
#include "run/audit.h"
#include "run/cgroup.h"
#include "run/copy.h"
#include "run/git-history.h"
#include "run/keys.h"
#include "run/plan.h"
#include "run/root-plan.h"
#include "run/run.h"
#include "run/views.h"

/* `--timeout`'s exit status, as timeout(1)'s. */
#define VR_EXIT_TIMEOUT 124

typedef struct {
	VrRunPlan *plan;
	int sfd;                   /* the start-up's signalfd (run/startup.h), then the wait's */

	/* resolve */
	char project[PATH_MAX];    /* the project's real path */
	const char *mount_at;      /* where the sandbox sees it */
	VrConfig *config;
	VrGitHistory *history;     /* git runs while the rest is set up; reported before COMMAND */
	VrNetAllow *allow;         /* --net allow: what the proxy lets through */
	VrRunKeys keys;            /* --key, --net read= (run/keys.h) */
	VrProxyOptions popts;
	VrIdentity id;
	uid_t agent_uid;
	gid_t agent_gid;
	char *user, *home;
	char **envp;
	char *cwd;

	/* the root plan */
	VrRootPlan root;
	VrViews *views;
	VrRunCopies copies;

	/* the processes, from "prepare the host" on; -1: none (any more) */
	VrCgroup *cgroup;
	VrRunAudit audit;
	VrSeccompProg sandbox_seccomp;
	pid_t daemon, proxy, sandbox;
	int proxy_report;          /* the rest of the proxy's start-up report, until read (net/proxy.h) */
	int daemon_ready;          /* the project view's start-up lines */
	GArray *guards;            /* pid_t: the other views' daemons, in views->views order */
	GArray *guard_ready;       /* int: their "ready" pipes */
	gboolean started;          /* COMMAND was told to start */
	int status;                /* the run's exit status */
} VrRun;

/* run/daemons.c: the run's view daemons. */
/* Starts the other views' daemons, then the project's; each gets its
 * seccomp filter compiled here. 0 or -1 (said). */
int vr_run_start_daemons(VrRun *r);
/* Waits for every daemon's "mounted" and takes the other views' mounts
 * for the sandbox to attach. 0 or -1 (said). */
int vr_run_await_mounted(VrRun *r);
/* Waits for every daemon's "ready" (confined, first records written).
 * TRUE when all said it. */
gboolean vr_run_await_ready(VrRun *r);
/* Sends SIG to every daemon still there (the project's when WITH_MAIN). */
void vr_run_signal_daemons(VrRun *r, gboolean with_main, int sig);
/* At the end: the other views told to stop at once and waited for. */
void vr_run_stop_guards(VrRun *r);
/* SIGTERM (and SIGCONT) to PID and a bounded wait; warns on an unclean
 * end. Its exit status, 0 when there is none. READY_FD (or NULL): a view
 * daemon's pipe, closed here; its "stopped N" line ends the wait before
 * the exit (run/daemons.c). */
int vr_run_stop_daemon(pid_t pid, int *ready_fd, const char *what);
/* Waits for PID at most SECONDS, then SIGKILLs and reaps it. Its status. */
int vr_run_wait_deadline(pid_t pid, int seconds);

/* run/wait.c: from COMMAND's start to the sandbox's end: reaps, forwards
 * signals, enforces --timeout and the grace periods. Sets r->status. */
void vr_run_wait(VrRun *r);
