/* vault-run policy explain|show — why a path is hidden, and the merged rules.
 * Thin: options become a VrConfig (policy/config.h), which decides. */
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include <glib.h>

#include "cli/commands.h"
#include "cli/options.h"
#include "common/exitcode.h"
#include "common/log.h"
#include "policy/config.h"
#include "policy/gitconfig.h"

static const char usage[] =
	"Usage: vault-run policy explain [OPTIONS] PATH...\n"
	"       vault-run policy show [OPTIONS]\n"
	"\n"
	"explain prints, for each PATH (relative to the project; a trailing '/' marks a\n"
	"directory), its class through the view and the rule that decided it:\n"
	"  PATH: hidden|readonly|redacted|visible (rule 'PATTERN' from SOURCE:LINE)\n"
	"show prints every rule of the merged policy in the order it applies.\n"
	"\n"
	"Options:\n"
	"  --project DIR        the project (default: the current directory); its\n"
	"                       .vault-run is read and may only add restrictions\n"
	"  --policy FILE        an extra config file, read after the project's\n"
	"  --hide PATTERN       add a rule (also --readonly, --redact, --show);\n"
	"                       .gitignore syntax, applied after every file\n"
	"  -h, --help           this text\n"
	"\n"
	"Rules come from: built-ins, $XDG_CONFIG_HOME/vault-run/config, the project's\n"
	".vault-run, --policy FILE, then these options. See docs/policy.md.\n";

/* Canonical relative path: no "./", no "//", no trailing '/' (which sets
 * *is_dir). NULL for what is not a path inside the project. */
static char *normalize(const char *arg, gboolean *is_dir)
{
	if (arg[0] == '/' || !*arg)
		return NULL;
	*is_dir = g_str_has_suffix(arg, "/");
	g_auto(GStrv) parts = g_strsplit(arg, "/", -1);
	GString *out = g_string_new(NULL);
	for (char **p = parts; *p; p++) {
		if (!**p || strcmp(*p, ".") == 0)
			continue;
		if (strcmp(*p, "..") == 0) {
			g_string_free(out, TRUE);
			return NULL;
		}
		if (out->len)
			g_string_append_c(out, '/');
		g_string_append(out, *p);
	}
	if (!out->len)
		*is_dir = TRUE; /* the project root */
	return g_string_free(out, FALSE);
}

static void print_rule_ref(const VrRule *r)
{
	printf("rule '%s%s' from %s:%d", r->kind == VR_RULE_SHOW ? "!" : "", r->pattern, r->source,
	       r->line);
}

/* What a git config file's class means: its own paragraph, indented. */
static void explain_gate(void)
{
	printf("  git config: written only the way git writes it, through config.lock and a\n"
	       "  rename onto it. The view then reads the new file once, and writes it itself\n"
	       "  when every key it sets or removes is one of these (any value unless said):\n");
	for (const char *const *l = vr_gitconfig_allow_list(); *l; l++)
		printf("    %s\n", *l);
	printf("  Anything else is refused with EACCES and logged with the key: core.fsmonitor,\n"
	       "  core.hooksPath, core.sshCommand, core.pager, alias.*, include.path, includeIf.*,\n"
	       "  url.*.insteadOf, filter.*, *.textconv, credential.*, gpg.*, remote.*.uploadpack...\n"
	       "  Keys already in the file that the change leaves alone do not matter. A file\n"
	       "  that is not git config at all (git stops before reading any key) is written\n"
	       "  as it is, unless it would replace one git reads keys from. Direct writes,\n"
	       "  truncation and links stay refused. See docs/policy.md.\n");
}

static int explain(VrConfig *config, const char *project, int n, char **paths)
{
	for (int i = 0; i < n; i++) {
		gboolean is_dir = FALSE;
		g_autofree char *rel = normalize(paths[i], &is_dir);
		if (!rel) {
			vr_error("policy explain: '%s' is not a path inside the project; expected a "
			         "relative path without '..'", paths[i]);
			return VR_EXIT_ERROR;
		}
		if (!is_dir) {
			/* A path that does not exist is taken as a file; its
			 * ancestors are directories either way. */
			g_autofree char *host = g_build_filename(project, rel, NULL);
			struct stat st;
			is_dir = lstat(host, &st) == 0 && S_ISDIR(st.st_mode);
		}
		VrDecision d = vr_policy_decide(config->policy, rel, is_dir);
		printf("%s: %s (", paths[i], vr_class_name(d.cls));
		if (d.rule)
			print_rule_ref(d.rule);
		else
			printf("no rule");
		printf(")\n");
		if (d.rule && d.rule->gitconfig)
			explain_gate();
	}
	return fflush(stdout) == 0 ? VR_EXIT_OK : VR_EXIT_ERROR;
}

static int show(VrConfig *config)
{
	guint n = vr_policy_n_rules(config->policy);
	for (guint i = 0; i < n; i++) {
		const VrRule *r = vr_policy_rule(config->policy, i);
		g_autofree char *where = g_strdup_printf("%s:%d", r->source, r->line);
		printf("%-8s %-30s %s%s%s%s\n", vr_rule_kind_name(r->kind), r->pattern, where,
		       r->project ? "  (project: applies only if stricter)" : "",
		       r->why ? "  # " : "", r->why ? r->why : "");
	}
	return fflush(stdout) == 0 ? VR_EXIT_OK : VR_EXIT_ERROR;
}

int vr_cmd_policy(int argc, char **argv)
{
	if (argc < 2) {
		fputs(usage, stderr);
		return VR_EXIT_ERROR;
	}
	const char *sub = argv[1];
	if (strcmp(sub, "--help") == 0 || strcmp(sub, "-h") == 0 || strcmp(sub, "help") == 0) {
		fputs(usage, stdout);
		return VR_EXIT_OK;
	}
	gboolean is_explain = strcmp(sub, "explain") == 0;
	if (!is_explain && strcmp(sub, "show") != 0) {
		vr_error("policy: unknown subcommand '%s'; expected explain or show", sub);
		return VR_EXIT_ERROR;
	}

	g_autofree char *project_opt = NULL, *policy_file = NULL;
	g_autoptr(GArray) cli = vr_cli_rules_new();
	const GOptionEntry entries[] = {
		{"project", 0, 0, G_OPTION_ARG_FILENAME, &project_opt, NULL, NULL},
		{"policy", 0, 0, G_OPTION_ARG_FILENAME, &policy_file, NULL, NULL},
		VR_CLI_RULE_ENTRIES,
		{NULL},
	};
	g_autofree char *cmd = g_strdup_printf("policy %s", sub);
	const VrCliOptions o = {cmd, entries, FALSE, cli};
	int status;
	argc--, argv++; /* the verb is the parse's argv[0] */
	if (!vr_cli_options_parse(&o, usage, &argc, &argv, &status))
		return status;
	const char *project = project_opt ? project_opt : ".";
	int first = 1, npaths = argc - first;
	if (is_explain && npaths <= 0) {
		vr_error("policy explain: no PATH given; expected one or more project paths");
		return VR_EXIT_ERROR;
	}
	if (!is_explain && npaths > 0) {
		vr_error("policy show: unexpected argument '%s'; expected only options", argv[first]);
		return VR_EXIT_ERROR;
	}
	struct stat st;
	if (stat(project, &st) < 0 || !S_ISDIR(st.st_mode)) {
		vr_error("policy %s: --project %s: not a directory; expected the project directory", sub,
		         project);
		return VR_EXIT_ERROR;
	}

	g_autoptr(VrConfig) config = vr_config_new();
	g_autoptr(GError) error = NULL;
	if (!vr_config_load_all(config, project, policy_file, &error)) {
		vr_error("%s", error->message);
		return VR_EXIT_ERROR;
	}
	if (!vr_cli_rules_add(cli, config->policy, &error)) {
		vr_error("%s", error->message);
		return VR_EXIT_ERROR;
	}
	return is_explain ? explain(config, project, npaths, argv + first) : show(config);
}
