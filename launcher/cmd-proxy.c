/* Placeholder until the network proxy lands. */
#include <stdio.h>
#include "commands.h"
#include "common/exitcode.h"

int vr_cmd_proxy(int argc, char **argv)
{
	fprintf(stderr, "vault-run: 'proxy' is not implemented yet\n");
	return VR_EXIT_ERROR;
}
