/* Acting on a run's change journal (its format: audit/journal.h, see
 * docs/undo.md): `vault-run changes` and `vault-run undo`. */
#pragma once
#include <glib.h>
#include <stdbool.h>
#include <stdint.h>

#include "audit/journal.h"

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

/* `vault-run changes`: prints one line per change; with DIFF, unified diffs of
 * text files. Exit status. */
int vr_changes_print(VrJournal *j, const char *project, char **paths, bool diff);
/* `vault-run undo`: see docs/undo.md. Exit status. */
int vr_undo_apply(VrJournal *j, const char *project, char **paths, bool force, bool dry_run);
