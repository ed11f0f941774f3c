/* vault-run changes [--project DIR] [--diff] [RUN] [PATH...]: what a run
 * created (A), modified (M), deleted (D), renamed (R), re-moded (m), and what
 * it changed without the journal keeping a copy (!).
 * vault-run undo [--project DIR] [--force] [--dry-run] [RUN] [PATH...]:
 * puts back what a run changed, from its journal (see docs/undo.md).
 * Both read one run's journal, found the same way (vr_undo_open). */
#include <stdio.h>

#include <glib.h>

#include "cli/commands.h"
#include "cli/options.h"
#include "common/exitcode.h"
#include "undo/undo.h"

static const char changes_usage[] =
	"usage: vault-run changes [--project DIR] [--diff] [RUN|JOURNAL-DIR] [PATH...]\n";

static const char undo_usage[] =
	"usage: vault-run undo [--project DIR] [--force] [--dry-run] [RUN|JOURNAL-DIR] [PATH...]\n"
	"Restores the project to its state before RUN (default: the latest run with a journal),\n"
	"or only PATH... Refuses (exit 1) where the host changed a path after the run, unless --force.\n";

/* A run's journal, as the operands [RUN|JOURNAL-DIR] [PATH...] name it. */
typedef struct {
	VrJournal *j;
	const char *root;
	char **paths;
} Opened;

/* Parses O's options (one of them --project into *PROJECT), then opens the
 * journal the operands name. FALSE with the exit status in *RET_STATUS. */
static gboolean parse_and_open(const VrCliOptions *o, const char *usage, char *const *project, int argc,
                               char **argv, Opened *ret, int *ret_status)
{
	if (!vr_cli_options_parse(o, usage, &argc, &argv, ret_status))
		return FALSE;
	if (vr_undo_open(o->cmd, *project, argc - 1, argv + 1, &ret->j, &ret->root, &ret->paths) != 0) {
		*ret_status = VR_EXIT_ERROR;
		return FALSE;
	}
	return TRUE;
}

int vr_cmd_changes(int argc, char **argv)
{
	g_autofree char *project = NULL;
	gboolean diff = FALSE;
	const GOptionEntry entries[] = {
		{"project", 0, 0, G_OPTION_ARG_FILENAME, &project, NULL, NULL},
		{"diff", 'd', 0, G_OPTION_ARG_NONE, &diff, NULL, NULL},
		{NULL},
	};
	const VrCliOptions o = {"changes", entries, FALSE, NULL};
	Opened j = {0};
	int status;
	if (!parse_and_open(&o, changes_usage, &project, argc, argv, &j, &status))
		return status;
	g_autoptr(VrJournal) owned = j.j;
	return vr_changes_print(j.j, j.root, j.paths, diff);
}

int vr_cmd_undo(int argc, char **argv)
{
	g_autofree char *project = NULL;
	gboolean force = FALSE, dry_run = FALSE;
	const GOptionEntry entries[] = {
		{"project", 0, 0, G_OPTION_ARG_FILENAME, &project, NULL, NULL},
		{"force", 'f', 0, G_OPTION_ARG_NONE, &force, NULL, NULL},
		{"dry-run", 'n', 0, G_OPTION_ARG_NONE, &dry_run, NULL, NULL},
		{NULL},
	};
	const VrCliOptions o = {"undo", entries, FALSE, NULL};
	Opened j = {0};
	int status;
	if (!parse_and_open(&o, undo_usage, &project, argc, argv, &j, &status))
		return status;
	g_autoptr(VrJournal) owned = j.j;
	return vr_undo_apply(j.j, j.root, j.paths, force, dry_run);
}
