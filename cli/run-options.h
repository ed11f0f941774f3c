/* Command-line parsing of `vault-run [OPTIONS] [--] COMMAND [ARG...]` into a
 * VrRunPlan. Pure: no namespaces, no file system access beyond what an option
 * names (none at parse time), so it is unit-tested (tests/unit/test_cli.c).
 * Option names and meaning follow bubblewrap where they overlap. */
#pragma once
#include <glib.h>
#include <stdio.h>
#include "run/plan.h"

/* argv[0] is the program name. Errors say which option and what is wrong. */
gboolean vr_cli_parse(VrRunPlan *plan, int argc, char **argv, GError **error);

void vr_cli_print_help(FILE *out);
