/* The change journal's format (docs/undo.md), in one place for its two
 * writers and its reader: the view daemon's journal (fusefs/journal.c), the
 * journal an undo keeps of what it overwrites (undo/undo.c), and the reader
 * behind `vault-run changes` and `vault-run undo`.
 *
 *     <dir>/manifest.jsonl   one JSON record per line, in the order made:
 *                            {"seq":N,"op":"…",<members>}
 *     <dir>/objects/<n>      saved file contents
 *
 * Names are written byte for byte (audit/json.h's escaper), so undo reads
 * back exactly the name the agent used. */
#pragma once
#include <glib.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/stat.h>

/* --- writing --- */

/* A new record `{"seq":SEQ,"op":"OP"` (still open: add members, then end). */
GString *vr_journal_record_new(uint64_t seq, const char *op);
/* ,"KEY":"V", V escaped so that any byte string reads back the same. */
void vr_journal_record_str(GString *s, const char *key, const char *v);
/* ,"type":…,"mode":…,"size":…,"mtime_ns":… of ST (what undo restores and
 * compares). */
void vr_journal_record_stat(GString *s, const struct stat *st);
/* Closes the record: "}\n". */
void vr_journal_record_end(GString *s);

/* --- reading --- */

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

/* Makes the journal directory of run RUN_ID of PROJECT, next to its log in
 * the checked state directory: <project dir>/<RUN_ID>.journal (0700, must
 * not exist). *ret_fd: O_RDONLY|O_DIRECTORY|O_CLOEXEC, for
 * VrViewOptions.journal_dir_fd. -errno (logged). */
int vr_journal_dir_create(const char *project, const char *run_id, int *ret_fd);
