/* vault-run undo [--project DIR] [--force] [--dry-run] [RUN] [PATH...]:
 * puts back what a run changed, from its journal (see docs/undo.md). */
#include <getopt.h>
#include <stdio.h>

#include <glib.h>

#include "cli/commands.h"
#include "common/exitcode.h"
#include "undo/undo.h"

static const char usage[] =
	"usage: vault-run undo [--project DIR] [--force] [--dry-run] [RUN|JOURNAL-DIR] [PATH...]\n"
	"Restores the project to its state before RUN (default: the latest run with a journal),\n"
	"or only PATH... Refuses (exit 1) where the host changed a path after the run, unless --force.\n";

int vr_cmd_undo(int argc, char **argv)
{
	static const struct option longopts[] = {
		{"project", required_argument, NULL, 'p'},
		{"force", no_argument, NULL, 'f'},
		{"dry-run", no_argument, NULL, 'n'},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	const char *project = NULL;
	bool force = false, dry_run = false;
	int c;
	opterr = 0;
	optind = 1;
	while ((c = getopt_long(argc, argv, "fnh", longopts, NULL)) != -1) {
		switch (c) {
		case 'p': project = optarg; break;
		case 'f': force = true; break;
		case 'n': dry_run = true; break;
		case 'h': fputs(usage, stdout); return VR_EXIT_OK;
		default:
			fprintf(stderr, "vault-run: undo: unknown option or missing value in '%s' (see vault-run undo --help)\n",
			        argv[optind - 1]);
			return VR_EXIT_ERROR;
		}
	}
	char **paths = NULL;
	const char *root = NULL;
	g_autoptr(VrJournal) j = NULL;
	if (vr_undo_open("undo", project, argc - optind, argv + optind, &j, &root, &paths) != 0)
		return VR_EXIT_ERROR;
	return vr_undo_apply(j, root, paths, force, dry_run);
}
