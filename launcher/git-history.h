/* launcher/git-history.c — does the project's git repository hold, in its
 * index or anywhere in its history, a file the policy hides or redacts?
 * The agent can read .git/objects through the view, so `git show` would
 * give it what the view hides. Checked at the start of a run (one warning)
 * and by `vault-run doctor --project DIR`. See docs/scanning.md.
 *
 * Host git runs on a repository the agent may have written, so it runs with
 * hooks, fsmonitor, pagers, external diff, signature checks and system
 * config disabled, no terminal, no optional locks, stdin /dev/null and a
 * minimal environment. */
#pragma once
#include <glib.h>
#include <sys/types.h>

#include "policy.h"

typedef struct VrGitHistory VrGitHistory;

/* Starts the check for PROJECT (its own .git only, a directory or a gitfile;
 * nothing when absent, when the policy hides .git, or without a git binary)
 * and returns at once: git runs in child processes while the caller goes on.
 * CACHE: keep the verdict in the project's state directory, keyed by the
 * refs, HEAD, index and reflogs and by POLICY_HASH, so a run on an unchanged
 * repository costs a few stat calls. NULL when there is nothing to check. */
VrGitHistory *vr_git_history_start(const char *project, const VrPolicy *policy,
                                   const char *policy_hash, gboolean cache);

/* Waits for the check (at most TIMEOUT_MS from its start, then the children
 * are killed; < 0: kill them now and cache nothing) and frees it. Returns
 * the sorted hidden paths found (GPtrArray of char *, never NULL: empty
 * when none or unknown). *ret_slow: 0, 1 when git was too slow now, 2 when
 * the cache remembers it was. h may be NULL. */
GPtrArray *vr_git_history_finish(VrGitHistory *h, int timeout_ms, int *ret_slow);

/* The one-line warning naming at most five paths and the fix. */
char *vr_git_history_message(const GPtrArray *paths);

/* In a child forked while a check runs (a view daemon): closes the check's
 * memfds and state directory fd, which the child has no use for (they would
 * keep git's output in memory for the whole run). */
void vr_git_history_close_inherited(void);
