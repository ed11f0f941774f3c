/* vault-run config init|show: a commented starter user config, and the
 * merged configuration with where each part comes from. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <glib.h>

#include "cli/commands.h"
#include "cli/options.h"
#include "common/exitcode.h"
#include "common/log.h"
#include "policy/config.h"

static const char starter[] =
	"# vault-run user configuration (glib key file). See docs/policy.md.\n"
	"# Everything here is commented out: vault-run's built-in rules apply as they are.\n"
	"\n"
	"[policy]\n"
	"# Hide more names (gitignore patterns, ';'-separated):\n"
	"# hide = *.sqlite; private/\n"
	"# Keep files visible but unchangeable:\n"
	"# readonly = Makefile; .github/workflows/\n"
	"# Serve files with their secret values masked by '*':\n"
	"# redact = config/*.ini\n"
	"# Make visible again what a built-in rule hides:\n"
	"# show = id_rsa.pub\n"
	"\n"
	"[sandbox]\n"
	"# Network: none (default without a profile), host, or allow=DOMAIN,...;\n"
	"# allow-localhost=PORT,... bridges host loopback ports (a model server):\n"
	"# net = allow=github.com,registry.npmjs.org;allow-localhost=11434\n"
	"# Host variables let in, beyond PATH HOME TERM LANG LC_* USER SHELL TZ COLORTERM:\n"
	"# env-allow = EDITOR\n"
	"# setenv = PAGER=less\n"
	"# Variables from a dotenv file read outside (relative: the project's), by glob:\n"
	"# env-file = .env:OPENAI_*,ANTHROPIC_*\n"
	"# Keys the agent uses but never holds: a sentinel inside, the proxy puts the value\n"
	"# into requests to the host (docs/network.md \"Keys\"):\n"
	"# key = OPENAI_API_KEY@api.openai.com; ANTHROPIC_API_KEY@api.anthropic.com:as=x-api-key\n"
	"# (a harness profile binds its own keys; key = none passes their real values instead)\n"
	"# Host paths shared read-only / read-write:\n"
	"# ro-bind = /opt/tools\n"
	"# bind = /var/cache/ccache\n"
	"# Resource limits of every run (cgroup; a run is refused where they cannot be enforced):\n"
	"# memory = 4G\n"
	"# pids = 500\n"
	"# cpu = 2\n"
	"\n"
	"[audit]\n"
	"# denied < writes < reads (default) < opens < all\n"
	"# level = reads\n"
	"# A file, '-' for stderr, or syslog (default: $XDG_STATE_HOME/vault-run/...):\n"
	"# path = syslog\n"
	"# Several at once, comma-separated; 'state' is the default log:\n"
	"# path = state,syslog\n"
	"# Rotate the log file at this size (1K..1G, or off):\n"
	"# max-size = 64M\n"
	"# When the log cannot be written: closed (stop the agent) or open (go on):\n"
	"# fail = closed\n"
	"\n"
	"[view]\n"
	"# Files holding a secret by content: mask (default), refuse or off:\n"
	"# scan = mask\n"
	"# Scanner rules to turn off (ids from `vault-run scan --rules`):\n"
	"# scan-disable = jwt\n"
	"# Known false positives, PATTERN:RULE (RULE '*' for all):\n"
	"# scan-allow = tests/fixtures/**:generic-secret-assignment; docs/*.md:jwt\n";

static int init(gboolean force)
{
	g_autofree char *path = vr_config_user_path();
	g_autofree char *dir = g_path_get_dirname(path);
	if (g_mkdir_with_parents(dir, 0700) < 0) {
		vr_error("cannot create %s: %s", dir, g_strerror(errno));
		return VR_EXIT_ERROR;
	}
	int flags = O_WRONLY | O_CREAT | O_CLOEXEC | O_NOFOLLOW | (force ? O_TRUNC : O_EXCL);
	int fd = open(path, flags, 0600);
	if (fd < 0) {
		if (errno == EEXIST)
			vr_error("%s exists; edit it, or use --force to replace it", path);
		else
			vr_error("cannot write %s: %s", path, g_strerror(errno));
		return VR_EXIT_ERROR;
	}
	gboolean ok = write(fd, starter, sizeof starter - 1) == (ssize_t)(sizeof starter - 1);
	ok &= close(fd) == 0;
	if (!ok) {
		vr_error("cannot write %s", path);
		return VR_EXIT_ERROR;
	}
	printf("wrote %s\n", path);
	return VR_EXIT_OK;
}

static void print_list(const char *key, GPtrArray *items)
{
	for (guint i = 0; items && i < items->len; i++)
		printf("  %-10s %s\n", key, (char *)items->pdata[i]);
}

static int show(const char *project, const char *policy_file)
{
	g_autoptr(VrConfig) config = vr_config_new();
	g_autoptr(GError) error = NULL;
	if (!vr_config_load_all(config, project, policy_file, &error)) {
		vr_error("%s", error->message);
		return VR_EXIT_ERROR;
	}
	g_autofree char *user = vr_config_user_path();
	g_autofree char *proj = g_build_filename(project, ".vault-run", NULL);
	printf("sources, in order:\n  built-in rules\n");
	printf("  %s%s\n", user, g_file_test(user, G_FILE_TEST_EXISTS) ? "" : " (absent)");
	printf("  %s%s\n", proj, g_file_test(proj, G_FILE_TEST_EXISTS) ? " (may only tighten)" : " (absent)");
	if (policy_file)
		printf("  %s\n", policy_file);
	printf("[sandbox]\n");
	printf("  %-10s %s\n", "net", config->net ? config->net : "(default: none, or the profile's domains)");
	printf("  %-10s %s\n", "profile", config->profile ? config->profile : "(default: by COMMAND's name)");
	print_list("env-allow", config->env_allow);
	print_list("setenv", config->env_set);
	print_list("env-file", config->env_files);
	print_list("key", config->keys);
	print_list("ro-bind", config->ro_binds);
	print_list("bind", config->rw_binds);
	VrLimits mem = {config->limits.memory, 0, 0};
	g_autofree char *mem_text = vr_limits_describe(&mem);
	printf("  %-10s %s\n", "memory", config->limits.memory ? mem_text + strlen("memory ") : "(none)");
	if (config->limits.pids)
		printf("  %-10s %u\n", "pids", config->limits.pids);
	else
		printf("  %-10s (none)\n", "pids");
	if (config->limits.cpu > 0)
		printf("  %-10s %g\n", "cpu", config->limits.cpu);
	else
		printf("  %-10s (none)\n", "cpu");
	printf("[audit]\n");
	printf("  %-10s %s\n", "level", config->audit_level ? config->audit_level : "reads (default)");
	printf("  %-10s %s\n", "path", config->audit_path ? config->audit_path : "(default: the state directory)");
	if (config->audit_max_size_set && config->audit_max_size)
		printf("  %-10s %" G_GUINT64_FORMAT " bytes\n", "max-size", config->audit_max_size);
	else
		printf("  %-10s %s\n", "max-size", config->audit_max_size_set ? "off" : "64M (default)");
	printf("  %-10s %s\n", "fail", config->audit_fail ? config->audit_fail : "closed (default)");
	printf("[view]\n");
	if (config->scan_mode)
		printf("  %-13s %s  (%s)\n", "scan", config->scan_mode, config->scan_mode_source);
	else
		printf("  %-13s %s\n", "scan", "mask (default; --scan overrides per run)");
	if (config->scan_max_size)
		printf("  %-13s %" G_GUINT64_FORMAT " bytes\n", "scan-max-size", config->scan_max_size);
	else
		printf("  %-13s %s\n", "scan-max-size", "8M (default)");
	for (guint i = 0; i < vr_scan_filter_n_disabled(config->scan_filter); i++) {
		const VrScanDisabled *d = vr_scan_filter_disabled(config->scan_filter, i);
		printf("  %-13s %s  (%s:%d)\n", "scan-disable", d->rule->id, d->source, d->line);
	}
	for (guint i = 0; i < vr_scan_filter_n_allowed(config->scan_filter); i++) {
		const VrScanAllow *a = vr_scan_filter_allowed(config->scan_filter, i);
		printf("  %-13s %s:%s  (%s:%d)\n", "scan-allow", a->pattern, a->rule ? a->rule->id : "*", a->source,
		       a->line);
	}
	printf("[policy]\n  %u rules; `vault-run policy show` lists each with its source\n",
	       vr_policy_n_rules(config->policy));
	return VR_EXIT_OK;
}

static const char usage_text[] =
	"Usage: vault-run config init [--force]\n"
	"       vault-run config show [--project DIR] [--policy FILE]\n"
	"init writes a commented starter $XDG_CONFIG_HOME/vault-run/config; show prints the merged configuration.\n";

int vr_cmd_config(int argc, char **argv)
{
	if (argc < 2) {
		fputs(usage_text, stderr);
		return VR_EXIT_ERROR;
	}
	const char *verb = argv[1];
	if (strcmp(verb, "--help") == 0 || strcmp(verb, "-h") == 0) {
		fputs(usage_text, stdout);
		return VR_EXIT_OK;
	}
	gboolean force = FALSE;
	g_autofree char *project = NULL, *policy = NULL;
	const GOptionEntry init_entries[] = {{"force", 0, 0, G_OPTION_ARG_NONE, &force, NULL, NULL}, {NULL}};
	const GOptionEntry show_entries[] = {
		{"project", 0, 0, G_OPTION_ARG_FILENAME, &project, NULL, NULL},
		{"policy", 0, 0, G_OPTION_ARG_FILENAME, &policy, NULL, NULL},
		{NULL},
	};
	gboolean init_verb = strcmp(verb, "init") == 0;
	if (!init_verb && strcmp(verb, "show") != 0) {
		vr_error("config: unexpected '%s'; see vault-run config --help", verb);
		return VR_EXIT_ERROR;
	}
	const VrCliOptions o = {"config", init_verb ? init_entries : show_entries, FALSE, NULL};
	int n = argc - 1, status;
	char **args = argv + 1;
	if (!vr_cli_options_parse(&o, usage_text, &n, &args, &status))
		return status;
	if (n > 1) {
		vr_error("config: unexpected '%s'; see vault-run config --help", args[1]);
		return VR_EXIT_ERROR;
	}
	return init_verb ? init(force) : show(project ? project : ".", policy);
}
