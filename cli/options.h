/* The subcommands' option parsing, on GOptionContext: `--opt VALUE` and
 * `--opt=VALUE` alike, `-f` and `--force`, "--" ends the options. The
 * run's own parser (cli/run-options.c) keeps its hand-written form:
 * bubblewrap's two-argument options do not fit GOption. */
#pragma once
#include <glib.h>

#include "policy/config.h"

typedef struct {
	const char *cmd;            /* "mount": named in errors */
	const GOptionEntry *entries; /* ends with {NULL}; -h/--help is added */
	gboolean strict;            /* stop at the first operand (getopt's "+"): what follows is an operand's */
	gpointer data;              /* for G_OPTION_ARG_CALLBACK entries */
} VrCliOptions;

/* Parses *ARGC and *ARGV (argv[0] is the subcommand's name) and leaves the
 * operands there: TRUE, go on. FALSE with the exit status in *RET_STATUS:
 * VR_EXIT_OK after printing USAGE for -h/--help, VR_EXIT_ERROR after one
 * line naming what is wrong ("vault-run: mount: Unknown option --x (see
 * vault-run mount --help)"). */
gboolean vr_cli_options_parse(const VrCliOptions *o, const char *usage, int *argc, char ***argv, int *ret_status);

/* --hide, --readonly, --redact, --show PATTERN kept in their command-line
 * order (last match wins): VR_CLI_RULE_ENTRIES in the entries, and
 * VrCliOptions.data = a GArray from vr_cli_rules_new(). */
typedef struct {
	VrRuleKind kind;
	char *pattern;
} VrCliRule;
GArray *vr_cli_rules_new(void);
gboolean vr_cli_rule_option(const char *name, const char *value, gpointer rules, GError **error);
#define VR_CLI_RULE_ENTRIES                                                                  \
	{"hide", 0, 0, G_OPTION_ARG_CALLBACK, (gpointer)vr_cli_rule_option, NULL, NULL},         \
	{"readonly", 0, 0, G_OPTION_ARG_CALLBACK, (gpointer)vr_cli_rule_option, NULL, NULL},     \
	{"redact", 0, 0, G_OPTION_ARG_CALLBACK, (gpointer)vr_cli_rule_option, NULL, NULL},       \
	{"show", 0, 0, G_OPTION_ARG_CALLBACK, (gpointer)vr_cli_rule_option, NULL, NULL}
/* Adds RULES to POLICY as "command line", rule i at line i + 1. */
gboolean vr_cli_rules_add(const GArray *rules, VrPolicy *policy, GError **error);
