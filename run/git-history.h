/* run/git-history.c — does the project's git repository hold, in its
 * index or anywhere in its history, a file the policy hides or redacts? And
 * does it track, in HEAD or the index, a file whose content the scanner
 * masks? The agent can read .git/objects through the view, so `git show`
 * would give it what the view hides or masks. Checked at the start of a run
 * (one warning) and by `vault-run doctor --project DIR`. See
 * docs/scanning.md.
 *
 * Host git runs on a repository the agent may have written, so it runs with
 * hooks, fsmonitor, pagers, external diff, signature checks and system
 * config disabled, no terminal, no optional locks, stdin /dev/null (or the
 * list of objects it is asked for) and a minimal environment. */
#pragma once
#include <glib.h>
#include <sys/types.h>

#include "policy/policy.h"
#include "policy/scan-filter.h"

/* What the view masks by content, so what the check looks for in tracked
 * files: nothing when !on (--scan off). */
typedef struct {
	gboolean on;
	guint64 max_size;           /* bigger files are not scanned, as in the view */
	const VrScanFilter *filter; /* [view] scan-disable / scan-allow; may be NULL */
} VrGitScan;

typedef struct VrGitHistory VrGitHistory;

/* Starts the check for PROJECT (its own .git only, a directory or a gitfile;
 * nothing when absent, when the policy hides .git, or without a git binary)
 * and returns at once: git runs in child processes while the caller goes on.
 * SCAN: what the view masks (NULL: no content check). CACHE: keep the
 * verdict in the project's state directory, keyed by the refs, HEAD, index
 * and reflogs, POLICY_HASH and the scan settings, so a run on an unchanged
 * repository costs a few stat calls; and the scanner's verdict per blob
 * (blobs never change), so a new commit costs a scan of its new blobs
 * only. NULL when there is nothing to check. */
VrGitHistory *vr_git_history_start(const char *project, const VrPolicy *policy, const VrGitScan *scan,
                                   const char *policy_hash, gboolean cache);

/* Waits for the check (at most TIMEOUT_MS from its start, then the children
 * are killed; < 0: kill them now and cache nothing) and frees it. The
 * content check is waited for only as long as the other two took (unless
 * TIMEOUT_MS is G_MAXINT): it never delays COMMAND. When it is not done it
 * goes on in the background, keeping its blob verdicts for the next run,
 * and *ret_masked is empty. Returns the sorted hidden paths found
 * (GPtrArray of char *, never NULL: empty when none or unknown);
 * *ret_masked (may be NULL): the sorted tracked paths the scanner masks.
 * *ret_slow: 0, 1 when git was too slow now, 2 when the cache remembers it
 * was. h may be NULL. */
GPtrArray *vr_git_history_finish(VrGitHistory *h, int timeout_ms, int *ret_slow, GPtrArray **ret_masked);

/* The one-line warning naming at most five paths (hidden, then masked)
 * and the fix. MASKED may be NULL. */
char *vr_git_history_message(const GPtrArray *hidden, const GPtrArray *masked);

/* In a child forked while a check runs (a view daemon): closes the check's
 * memfds and state directory fd, which the child has no use for (they would
 * keep git's output in memory for the whole run). */
void vr_git_history_close_inherited(void);
