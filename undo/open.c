/* The shared start of `vault-run undo` and `vault-run changes`: which
 * journal their operands name, loaded, and the project it applies to. */
#include <stdio.h>
#include <string.h>

#include <glib.h>

#include "common/exitcode.h"
#include "common/log.h"
#include "undo/undo.h"

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
		vr_error("%s: the journal %s names no project: use --project", cmd, dir);
		return VR_EXIT_ERROR;
	}
	*ret_root = root;
	*ret_j = g_steal_pointer(&j);
	return 0;
}
