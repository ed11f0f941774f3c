/* vault-run: run an AI coding agent without handing it your secrets.
 * main() only dispatches; each subcommand lives in its cmd-*.c file. */
#include <stdio.h>
#include <string.h>

#include "cli/commands.h"
#include "common/exitcode.h"

static const struct {
	const char *name;
	int (*run)(int argc, char **argv);
} subcommands[] = {
	{"mount", vr_cmd_mount},
	{"policy", vr_cmd_policy},
	{"audit", vr_cmd_audit},
	{"scan", vr_cmd_scan},
	{"proxy", vr_cmd_proxy},
	{"profiles", vr_cmd_profiles},
	{"doctor", vr_cmd_doctor},
	{"config", vr_cmd_config},
	{"changes", vr_cmd_changes},
	{"undo", vr_cmd_undo},
	{"gc", vr_cmd_gc},
};

int main(int argc, char **argv)
{
	/* "vault-run mount …" runs a subcommand; anything else (options, "--",
	 * or a command name) is a sandbox run. "run" is accepted as an explicit
	 * spelling for commands that are named like a subcommand. */
	if (argc > 1) {
		for (size_t i = 0; i < sizeof subcommands / sizeof *subcommands; i++)
			if (strcmp(argv[1], subcommands[i].name) == 0)
				return subcommands[i].run(argc - 1, argv + 1);
		if (strcmp(argv[1], "run") == 0)
			return vr_cmd_run(argc - 1, argv + 1);
	}
	return vr_cmd_run(argc, argv);
}
