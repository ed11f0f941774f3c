/* vault-run undo [--project DIR] [--force] [--dry-run] [RUN] [PATH...]:
 * puts back what a run changed, from its journal (see docs/undo.md). */
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include <glib.h>

#include "cli/commands.h"
#include "common/exitcode.h"
#include "undo/undo.h"

static const char usage[] =
	"usage: vault-run undo [--project DIR] [--force] [--dry-run] [RUN|JOURNAL-DIR] [PATH...]\n"
	"Restores the project to its state before RUN (default: the latest run with a journal),\n"
	"or only PATH... Refuses (exit 1) where the host changed a path after the run, unless --force.\n";

/* Shared by `changes`: [RUN] [PATH...] → the journal and the paths. The
 * first operand is a run when it names one, else a path of the latest run. */
int vr_undo_parse_operands(const char *project, int argc, char **argv, char **ret_dir,
                           char ***ret_paths)
{
	char *dir = NULL;
	if (argc > 0 && (g_file_test(argv[0], G_FILE_TEST_IS_DIR) || strchr(argv[0], '/') == NULL)) {
		/* A run id or a journal directory? Only if it is one. */
		g_autofree char *m = g_build_filename(argv[0], "manifest.jsonl", NULL);
		if (g_file_test(m, G_FILE_TEST_IS_REGULAR) ||
		    (!g_file_test(argv[0], G_FILE_TEST_EXISTS) && vr_journal_locate(project, argv[0], &dir) == 0)) {
			if (!dir)
				dir = g_strdup(argv[0]);
			argc--;
			argv++;
		}
	}
	if (!dir && vr_journal_locate(project, NULL, &dir) < 0)
		return VR_EXIT_ERROR;
	*ret_dir = dir;
	*ret_paths = argv;
	(void)argc;
	return 0;
}

int vr_undo_open(const char *cmd, const char *project, int argc, char **argv, VrJournal **ret_j,
                 const char **ret_root, char ***ret_paths)
{
	g_autofree char *dir = NULL;
	if (vr_undo_parse_operands(project, argc, argv, &dir, ret_paths) != 0)
		return VR_EXIT_ERROR;
	g_autoptr(VrJournal) j = NULL;
	if (vr_journal_load(dir, &j) < 0)
		return VR_EXIT_ERROR;
	const char *root = project ? project : j->project;
	if (!root) {
		fprintf(stderr, "vault-run: %s: the journal %s names no project: use --project\n", cmd, dir);
		return VR_EXIT_ERROR;
	}
	*ret_root = root;
	*ret_j = g_steal_pointer(&j);
	return 0;
}

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
