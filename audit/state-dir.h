/* Where vault-run keeps its per-run audit logs:
 *
 *     $XDG_STATE_HOME/vault-run/<project-name>-<hash>/<run-id>.jsonl
 *
 * ($XDG_STATE_HOME defaults to ~/.local/state). <project-name> is the base
 * name of the project's real path, made file-name safe; <hash> is the first
 * 16 hex digits of the SHA-256 of that real path, so two projects with the
 * same name do not share a directory. The directories are created 0700 and
 * must be owned by the caller's uid: another user's or a group-writable
 * directory, or a symlink in their place, is refused. */
#pragma once
#include <glib.h>
#include <stdbool.h>
#include <stdint.h>

/* $XDG_STATE_HOME/vault-run (an absolute XDG_STATE_HOME only, as the XDG
 * spec says), else $HOME/.local/state/vault-run, else the passwd entry's home. */
int vr_state_base_dir(char **ret);

/* The directory of PROJECT's runs (computed; nothing is created). PROJECT
 * must exist: it is resolved with realpath. -errno. */
int vr_state_project_dir(const char *project, char **ret);

/* The log file of run RUN_ID of PROJECT: <project dir>/<RUN_ID>.jsonl.
 * Only computes the path, touches nothing: the supervisor uses it to decide
 * where the run's log goes (and passes it to the view as audit_path), and
 * `vault-run audit RUN-ID` to find it. -EINVAL when RUN_ID is not a safe
 * file name (see vr_state_run_id_valid), -errno when PROJECT cannot be
 * resolved. */
int vr_state_run_log_path(const char *project, const char *run_id, char **ret);

/* A run id is 1–64 characters of [A-Za-z0-9._-], not starting with '.'. */
bool vr_state_run_id_valid(const char *run_id);

/* A new run id: UTC time then 6 random hex digits, "20261201T084422Z-3f9a1c",
 * so ids sort by start time. g_free() it. */
char *vr_state_new_run_id(void);

/* Opens (CREATE: making it and its parents 0700 as needed) the project's
 * run directory, checking it is a real directory owned by us with no group or
 * other access. *ret_dirfd: O_PATH|O_DIRECTORY|O_CLOEXEC. -ENOENT when it
 * does not exist and !CREATE; -ELOOP for a symlink; -EPERM for a wrong owner
 * or mode (a message is logged naming the directory). */
int vr_state_open_project_dir(const char *project, bool create, int *ret_dirfd);

/* Opens (CREATE: making it and $XDG_STATE_HOME as needed) vault-run's own
 * state directory, $XDG_STATE_HOME/vault-run, with the same checks.
 * *ret_dirfd: O_PATH|O_DIRECTORY|O_CLOEXEC. -ENOENT, -ELOOP, -EPERM. */
int vr_state_open_base_dir(bool create, int *ret_dirfd);

/* The check itself: NAME below the checked directory PARENT (SHOWN: its
 * path, for messages), made 0700 if CREATE, opened O_PATH|O_NOFOLLOW and
 * refused unless a directory owned by us with no group or other access.
 * Every refusal but -ENOENT logs one line naming SHOWN. */
int vr_state_open_child(int parent, const char *name, const char *shown, bool create, int *ret);

/* Creates the run's log O_WRONLY|O_CREAT|O_EXCL|O_NOFOLLOW|O_APPEND|O_CLOEXEC,
 * mode 0600, in the checked project directory. A pre-planted file or
 * symlink of that name is refused (-EEXIST). *ret_path (may be NULL): its path. */
int vr_state_create_run_log(const char *project, const char *run_id, int *ret_fd, char **ret_path);

typedef struct {
	char *run_id;
	char *path;
	int64_t mtime_ns;
} VrStateRun;

void vr_state_run_free(VrStateRun *run);

/* The runs of PROJECT (every <id>.jsonl of its directory), oldest first by
 * modification time, ties by id. An absent directory is an empty list; a
 * symlink or foreign directory in its place is refused (logged, -ELOOP or
 * -EPERM); entries that are not regular files are ignored.
 * *ret: a GPtrArray of VrStateRun* that frees its elements. -errno. */
int vr_state_list_runs(const char *project, GPtrArray **ret);
