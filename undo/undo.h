/* Reading a run's change journal (written by fusefs/journal.c, see
 * docs/undo.md) and acting on it: `vault-run changes` and `vault-run undo`. */
#pragma once
#include <glib.h>
#include <stdbool.h>
#include <stdint.h>

typedef struct {
	char *op, *path, *new_path, *object, *type, *target, *reason;
	/* The names as printed: the agent chose them, so control characters
	 * are escaped before they reach the user's terminal ("?" if absent). */
	char *shown_path, *shown_new, *shown_target;
	int64_t mode, size, mtime_ns;
} VrJournalRecord;

/* What an object must still be for undo to trust it: its size and ctime
 * when it became final (the agent can change neither without changing the
 * ctime, and cannot set a ctime). */
typedef struct {
	int64_t size, ctime_ns;
} VrJournalSeal;

typedef struct {
	char *dir;
	int dir_fd, objects_fd;
	char *project;        /* from the manifest's start record */
	char *run;
	GPtrArray *records;   /* VrJournalRecord*: the changes, in the order made */
	GHashTable *final;    /* path → VrJournalRecord* ("final": state the run left) */
	GHashTable *seals;    /* object → VrJournalSeal* */
	GHashTable *dropped;  /* object → reason: kept, then given up (not restorable) */
	bool complete;        /* a stop record: the daemon ended cleanly */
} VrJournal;

/* Loads DIR/manifest.jsonl. -errno, with a message logged. */
int vr_journal_load(const char *dir, VrJournal **ret);
void vr_journal_free(VrJournal *j);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(VrJournal, vr_journal_free)

/* Finds a journal directory: RUN may be a directory holding manifest.jsonl,
 * or a run id of PROJECT (default: the current directory); NULL: the latest
 * run of PROJECT that has a journal. *ret: g_free. -errno (logged). */
int vr_journal_locate(const char *project, const char *run, char **ret);

/* The operands [RUN] [PATH...] of undo/changes: the first is a run (id or
 * journal directory) when it names one, else a path of the latest run.
 * *ret_paths points into ARGV (NULL-terminated). 0 or VR_EXIT_ERROR. */
int vr_undo_parse_operands(const char *project, int argc, char **argv, char **ret_dir,
                           char ***ret_paths);

/* The shared start of `undo` and `changes` (CMD names it in messages):
 * operands → the journal (*ret_j, free it) → the project root (*ret_root,
 * --project or the journal's own; points into PROJECT or *ret_j).
 * 0 or VR_EXIT_ERROR (said on stderr). */
int vr_undo_open(const char *cmd, const char *project, int argc, char **argv, VrJournal **ret_j,
                 const char **ret_root, char ***ret_paths);

/* Makes the journal directory of run RUN_ID of PROJECT, next to its log in
 * the checked state directory: <project dir>/<RUN_ID>.journal (0700, must
 * not exist). *ret_fd: O_RDONLY|O_DIRECTORY|O_CLOEXEC, for
 * VrViewOptions.journal_dir_fd. -errno (logged). */
int vr_undo_journal_create(const char *project, const char *run_id, int *ret_fd);

/* "1048576", "512K", "100M", "1G" (powers of 1024) → bytes. 0 or -EINVAL. */
int vr_undo_parse_size(const char *s, uint64_t *ret);

/* `vault-run changes`: prints one line per change; with DIFF, unified diffs of
 * text files. Exit status. */
int vr_changes_print(VrJournal *j, const char *project, char **paths, bool diff);
/* `vault-run undo`: see docs/undo.md. Exit status. */
int vr_undo_apply(VrJournal *j, const char *project, char **paths, bool force, bool dry_run);
