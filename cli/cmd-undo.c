/* vault-run undo [--project DIR] [--force] [--dry-run] [RUN] [PATH...]:
 * puts back what a run changed, from its journal (see docs/undo.md). */
#include <stdio.h>

#include <glib.h>

#include "cli/commands.h"
#include "cli/options.h"
#include "common/exitcode.h"
#include "undo/undo.h"

static const char usage[] =
	"usage: vault-run undo [--project DIR] [--force] [--dry-run] [RUN|JOURNAL-DIR] [PATH...]\n"
	"Restores the project to its state before RUN (default: the latest run with a journal),\n"
	"or only PATH... Refuses (exit 1) where the host changed a path after the run, unless --force.\n";

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
	int status;
	if (!vr_cli_options_parse(&o, usage, &argc, &argv, &status))
		return status;
	char **paths = NULL;
	const char *root = NULL;
	g_autoptr(VrJournal) j = NULL;
	if (vr_undo_open("undo", project, argc - 1, argv + 1, &j, &root, &paths) != 0)
		return VR_EXIT_ERROR;
	return vr_undo_apply(j, root, paths, force, dry_run);
}
