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

#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cli/commands.h"
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

/* Runs `vault-run NAME ARGS…` (RUN is the subcommand's vr_cmd_*) with
 * stderr into a file; returns the exit status and what it said in
 * *RET_ERR (one line is expected). */
static int run_cmd(int (*run)(int, char **), const char *name, const char *const *args, char **ret_err)
{
	const char *argv[16] = {name};
	int argc = 1;
	for (; args[argc - 1]; argc++)
		argv[argc] = args[argc - 1];
	FILE *f = tmpfile();
	assert_non_null(f);
	fflush(stderr);
	int saved = dup(STDERR_FILENO);
	dup2(fileno(f), STDERR_FILENO);
	int status = run(argc, (char **)argv);
	fflush(stderr);
	dup2(saved, STDERR_FILENO);
	close(saved);
	char buf[1024] = "";
	rewind(f);
	size_t n = fread(buf, 1, sizeof buf - 1, f);
	buf[n] = '\0';
	fclose(f);
	*ret_err = g_strdup(buf);
	return status;
}

/* cmd-proxy.c on GOptionContext: --opt=VALUE is the option, errors are
 * one vr_error line. --netns on a missing path stops it after every
 * option was taken, before it listens. */
static void proxy_options(void **state)
{
	(void)state;
	static const struct {
		const char *args[8];
		int status;
		const char *says;
	} cases[] = {
		{{"--listen=127.0.0.1:0", "--allow=example.com", "--netns=/nonexistent/ns", NULL},
		 VR_EXIT_ERROR, "vault-run: --netns: cannot open /nonexistent/ns"},
		{{"--listen", "[::1]:0", "--socks-port=0", "--allow-localhost=11434", "--netns", "/nonexistent/ns", NULL},
		 VR_EXIT_ERROR, "vault-run: --netns: cannot open /nonexistent/ns"},
		{{"--listen=nocolon", NULL}, VR_EXIT_ERROR, "vault-run: --listen: expected HOST:PORT, got 'nocolon'"},
		{{"--socks-port=70000", NULL}, VR_EXIT_ERROR, "vault-run: --socks-port: expected a port"},
		{{"--listen=127.0.0.1:65535", NULL}, VR_EXIT_ERROR, "vault-run: --listen: no room for the SOCKS port"},
		{{"--allow-localhost=11434", NULL}, VR_EXIT_ERROR, "vault-run: --allow-localhost: needs --netns"},
		{{"--nope", NULL}, VR_EXIT_ERROR, "vault-run: proxy: Unknown option --nope"},
		{{"extra", NULL}, VR_EXIT_ERROR, "vault-run: proxy takes no operands (got 'extra'"},
		{{"--help", NULL}, VR_EXIT_OK, ""},
	};
	for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
		g_autofree char *err = NULL;
		int status = run_cmd(vr_cmd_proxy, "proxy", cases[i].args, &err);
		if (status != cases[i].status || strncmp(err, cases[i].says, strlen(cases[i].says)) != 0 ||
		    (*err && strchr(err, '\n') != err + strlen(err) - 1))
			fail_msg("proxy %s…: status %d, said '%s'", cases[i].args[0], status, err);
	}
}

/* cmd-mount.c: --opt=VALUE too, and the one size grammar of a run
 * (common/size.h): 1GiB is a size, KB/MB/GB are refused with the hint.
 * The sizes and lists are checked before the project is looked at, so
 * reaching "the project …" means every option was accepted. */
static void mount_options(void **state)
{
	(void)state;
	static const char nodir[] = "vault-run: the project /nonexistent/p: No such file or directory";
	static const struct {
		const char *args[10];
		const char *says;
	} cases[] = {
		{{"--journal-max-size", "1GiB", "/nonexistent/p", "/nonexistent/m", NULL}, nodir},
		{{"--journal-max-size=1GiB", "--audit-max-size=2KiB", "--scan-max-size=8MiB", "--audit-level=all",
		  "--scan=mask", "--audit-fail=open", "--entry-timeout=1", "/nonexistent/p", "/nonexistent/m", NULL},
		 nodir},
		{{"--journal-max-size=512K", "--audit-max-size=off", "/nonexistent/p", "/nonexistent/m", NULL}, nodir},
		{{"--journal-max-size=1048576", "/nonexistent/p", "/nonexistent/m", NULL}, nodir},
		{{"--journal-max-size=1GB", "/nonexistent/p", "/nonexistent/m", NULL},
		 "vault-run: --journal-max-size: '1GB' is not a size in powers of 1024"},
		{{"--audit-max-size=64MB", "/nonexistent/p", "/nonexistent/m", NULL},
		 "vault-run: --audit-max-size: '64MB' is not a size in powers of 1024"},
		{{"--scan-max-size=1KB", "/nonexistent/p", "/nonexistent/m", NULL},
		 "vault-run: --scan-max-size: '1KB' is not a size in powers of 1024"},
		{{"--journal-max-size=1x", "/nonexistent/p", "/nonexistent/m", NULL},
		 "vault-run: --journal-max-size: '1x' is not a size such as"},
		{{"--audit-level=loud", "/nonexistent/p", "/nonexistent/m", NULL},
		 "vault-run: --audit-level: 'loud' is not one of denied, writes, reads, opens, all"},
		{{"/nonexistent/p", NULL}, "vault-run: mount: expected PROJECT and MOUNTPOINT"},
	};
	for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
		g_autofree char *err = NULL;
		int status = run_cmd(vr_cmd_mount, "mount", cases[i].args, &err);
		if (status != VR_EXIT_ERROR || strncmp(err, cases[i].says, strlen(cases[i].says)) != 0 ||
		    strchr(err, '\n') != err + strlen(err) - 1)
			fail_msg("mount %s…: status %d, said '%s'", cases[i].args[0], status, err);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(equals_form_and_operands),
		cmocka_unit_test(strict_stops_at_the_first_operand),
		cmocka_unit_test(rules_keep_their_order),
		cmocka_unit_test(help_and_errors),
		cmocka_unit_test(proxy_options),
		cmocka_unit_test(mount_options),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
