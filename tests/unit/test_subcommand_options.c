/* The subcommands' option parsing (cli/options.h, GOptionContext):
 * --opt=VALUE and --opt VALUE alike, strict mode stops at the first
 * operand as getopt's "+" did, "--" ends the options and is dropped,
 * rule options keep their order, an unknown option is one error.
 * The argument vectors are the tests' own arrays of literals: the parser
 * takes out what it parsed without freeing it, as with a real argv. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <string.h>

#include "cli/options.h"
#include "common/exitcode.h"

typedef struct {
	char *project;
	gboolean force;
	GArray *rules;
} Got;

static gboolean parse(Got *g, gboolean strict, int *argc, char ***argv, int *status)
{
	const GOptionEntry entries[] = {
		{"project", 0, 0, G_OPTION_ARG_FILENAME, &g->project, NULL, NULL},
		{"force", 'f', 0, G_OPTION_ARG_NONE, &g->force, NULL, NULL},
		VR_CLI_RULE_ENTRIES,
		{NULL},
	};
	g->rules = vr_cli_rules_new();
	const VrCliOptions o = {"test", entries, strict, g->rules};
	return vr_cli_options_parse(&o, "usage\n", argc, argv, status);
}

static void got_clear(Got *g)
{
	g_free(g->project);
	g_array_unref(g->rules);
	memset(g, 0, sizeof *g);
}

static void equals_form_and_operands(void **state)
{
	(void)state;
	const char *in[] = {"test", "--project=/p", "a", "-f", "--", "--force", NULL};
	char **argv = (char **)in;
	int argc = 6, status = -1;
	Got g = {0};
	assert_true(parse(&g, FALSE, &argc, &argv, &status));
	assert_string_equal(g.project, "/p");
	assert_true(g.force);
	assert_int_equal(argc, 3); /* test a --force: "--" dropped, what follows it an operand */
	assert_string_equal(argv[1], "a");
	assert_string_equal(argv[2], "--force");
	got_clear(&g);
}

static void strict_stops_at_the_first_operand(void **state)
{
	(void)state;
	const char *in[] = {"test", "--project", "/p", "a", "--force", "--", NULL};
	char **argv = (char **)in;
	int argc = 6, status = -1;
	Got g = {0};
	assert_true(parse(&g, TRUE, &argc, &argv, &status));
	assert_false(g.force);
	assert_int_equal(argc, 4); /* a --force --: an operand's words, "--" kept */
	assert_string_equal(argv[2], "--force");
	assert_string_equal(argv[3], "--");
	got_clear(&g);
}

static void rules_keep_their_order(void **state)
{
	(void)state;
	const char *in[] = {"test", "--hide=*.log", "--show", "keep.log", "--readonly", "Makefile", NULL};
	char **argv = (char **)in;
	int argc = 6, status = -1;
	Got g = {0};
	assert_true(parse(&g, FALSE, &argc, &argv, &status));
	assert_int_equal(g.rules->len, 3);
	const VrCliRule *r = (const VrCliRule *)g.rules->data;
	assert_int_equal(r[0].kind, VR_RULE_HIDE);
	assert_string_equal(r[0].pattern, "*.log");
	assert_int_equal(r[1].kind, VR_RULE_SHOW);
	assert_string_equal(r[1].pattern, "keep.log");
	assert_int_equal(r[2].kind, VR_RULE_READONLY);
	got_clear(&g);
}

static void help_and_errors(void **state)
{
	(void)state;
	const char *help[] = {"test", "-h", NULL};
	char **argv = (char **)help;
	int argc = 2, status = -1;
	Got g = {0};
	assert_false(parse(&g, FALSE, &argc, &argv, &status));
	assert_int_equal(status, VR_EXIT_OK);
	got_clear(&g);
	const char *bad[] = {"test", "--nope", NULL};
	argv = (char **)bad;
	argc = 2;
	assert_false(parse(&g, FALSE, &argc, &argv, &status));
	assert_int_equal(status, VR_EXIT_ERROR);
	got_clear(&g);
	const char *missing[] = {"test", "--project", NULL};
	argv = (char **)missing;
	argc = 2;
	assert_false(parse(&g, FALSE, &argc, &argv, &status));
	assert_int_equal(status, VR_EXIT_ERROR);
	got_clear(&g);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(equals_form_and_operands),
		cmocka_unit_test(strict_stops_at_the_first_operand),
		cmocka_unit_test(rules_keep_their_order),
		cmocka_unit_test(help_and_errors),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
