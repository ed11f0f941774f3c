/* Placeholder until the subcommand lands. */
#include <stdio.h>
#include "commands.h"
#include "common/exitcode.h"

int vr_cmd_scan(int argc, char **argv)
{
	fprintf(stderr, "vault-run: 'scan' is not implemented yet\n");
	return VR_EXIT_ERROR;
}
