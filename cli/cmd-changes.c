/* vault-run changes [--project DIR] [--diff] [RUN] [PATH...]: what a run
 * created (A), modified (M), deleted (D), renamed (R), re-moded (m), and what
 * it changed without the journal keeping a copy (!). */
#include <getopt.h>
#include <stdio.h>

#include <glib.h>

#include "cli/commands.h"
#include "common/exitcode.h"
#include "undo/undo.h"

static const char usage[] =
	"usage: vault-run changes [--project DIR] [--diff] [RUN|JOURNAL-DIR] [PATH...]\n";

int vr_cmd_changes(int argc, char **argv)
{
	static const struct option longopts[] = {
		{"project", required_argument, NULL, 'p'},
		{"diff", no_argument, NULL, 'd'},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	const char *project = NULL;
	bool diff = false;
	int c;
	opterr = 0;
	optind = 1;
	while ((c = getopt_long(argc, argv, "dh", longopts, NULL)) != -1) {
		switch (c) {
		case 'p': project = optarg; break;
		case 'd': diff = true; break;
		case 'h': fputs(usage, stdout); return VR_EXIT_OK;
		default:
			fprintf(stderr, "vault-run: changes: unknown option or missing value in '%s' (see vault-run changes --help)\n",
			        argv[optind - 1]);
			return VR_EXIT_ERROR;
		}
	}
	char **paths = NULL;
	const char *root = NULL;
	g_autoptr(VrJournal) j = NULL;
	if (vr_undo_open("changes", project, argc - optind, argv + optind, &j, &root, &paths) != 0)
		return VR_EXIT_ERROR;
	return vr_changes_print(j, root, paths, diff);
}
