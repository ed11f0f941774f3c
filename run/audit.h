/* The audit side of a sandbox run (run/supervisor.c): where the run's log goes,
 * the event socket the daemon reads and the supervisor and proxy write, the
 * run-start/run-end records, and the one-line summary at the end. */
#pragma once
#include <glib.h>
#include <stdbool.h>
#include <sys/types.h>

#include "run/audit-file.h"
#include "run/plan.h"
#include "policy/config.h"
#include "policy/policy.h"
#include "fusefs/view.h"

typedef struct {
	char *run_id;          /* this run's id (also given to the view) */
	char *view_path;       /* the log file (what the view gets as audit_path), or NULL: none */
	bool in_state_dir;     /* the log is the state directory's <run-id>.jsonl */
	int log_fd;            /* the log: the created state-dir log or the opened FILE (O_APPEND|O_CLOEXEC), or -1 */
	int dir_fd;            /* its directory (O_PATH), where the view rotates it, or -1 */
	bool to_stderr, to_syslog;
	int daemon_fd;         /* SOCK_SEQPACKET end the daemon reads (event_fd), or -1 */
	int send_fd;           /* the end the supervisor and the proxy write, or -1 */
	bool serving;          /* the daemon said "ready": it reads the socket (run-end waits for it) */
} VrRunAudit;

/* Decides the sinks (PLAN's --audit, else the config's [audit] path, else
 * `state`: a new log in the state directory), the rotation limit and the
 * failure mode (the plan's, else the config's); then makes the event
 * socketpair (both ends O_CLOEXEC). The log, a FILE or the state
 * directory's, is opened here, before anything is mounted; a FILE inside
 * one of UNDER's N directories (what the sandbox sees) is refused.
 * 0 or -errno (logged). */
int vr_run_audit_open(VrRunAudit *a, const char *project, const VrRunPlan *plan, const VrConfig *config,
                      const VrAuditUnder *under, size_t n_under);
/* The audit part of the view's options: sinks, rotation, failure mode. */
void vr_run_audit_view_options(const VrRunAudit *a, VrViewOptions *o);
/* op "run-start": the command as one shell-quoted string, the version, the
 * namespaces/filters in use, the project and the supervisor's pid. */
void vr_run_audit_send_start(VrRunAudit *a, char *const *argv, const char *project, const char *features,
                             const char *policy_hash);
/* op "gitfile", path ".git": the project's .git file named DIR outside the
 * project, which was opened (ok, WHY is "linked worktree" or "submodule")
 * or refused (result "denied", WHY says what is wrong). */
void vr_run_audit_send_gitfile(VrRunAudit *a, gboolean opened, const char *dir, const char *why);
/* SHA-256 (hex) of the effective policy: every rule's kind, pattern and
 * source in order, one per line, so two runs under the same rules have the
 * same hash. g_free() it. */
char *vr_run_audit_policy_hash(const VrPolicy *policy);
/* op "run-end" with the exit status, then waits (at most a few seconds)
 * until the daemon has taken every queued datagram off the socket, so a
 * SIGTERM right after cannot lose the last events, and closes the sending
 * end (no event can follow run-end). A daemon not serving yet (a start-up
 * that stopped) reads nothing: no wait then. */
void vr_run_audit_send_end(VrRunAudit *a, int exit_status);
/* One record of the supervisor's own (a JSON object: "op", "path",
 * "result"…), into the run's log before run-end. */
void vr_run_audit_send(VrRunAudit *a, const char *json);
/* Once the daemon has exited: one line on stderr with what the run read,
 * wrote and was refused (over all the log's parts), and where the log is
 * (counts only for a file). */
void vr_run_audit_print_summary(const VrRunAudit *a);
void vr_run_audit_close(VrRunAudit *a);
