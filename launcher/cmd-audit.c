/* Placeholder until the subcommand lands. */
#include <stdio.h>
#include "commands.h"
#include "common/exitcode.h"

int vr_cmd_audit(int argc, char **argv)
{
	fprintf(stderr, "vault-run: 'audit' is not implemented yet\n");
	return VR_EXIT_ERROR;
}
