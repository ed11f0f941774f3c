/* vault-run changes [--project DIR] [--diff] [RUN] [PATH...]: what a run
 * created (A), modified (M), deleted (D), renamed (R), re-moded (m), and what
 * it changed without the journal keeping a copy (!). */
#include <stdio.h>

#include <glib.h>

#include "cli/commands.h"
#include "cli/options.h"
#include "common/exitcode.h"
#include "undo/undo.h"

static const char usage[] =
	"usage: vault-run changes [--project DIR] [--diff] [RUN|JOURNAL-DIR] [PATH...]\n";

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
	int status;
	if (!vr_cli_options_parse(&o, usage, &argc, &argv, &status))
		return status;
	char **paths = NULL;
	const char *root = NULL;
	g_autoptr(VrJournal) j = NULL;
	if (vr_undo_open("changes", project, argc - 1, argv + 1, &j, &root, &paths) != 0)
		return VR_EXIT_ERROR;
	return vr_changes_print(j, root, paths, diff);
}
