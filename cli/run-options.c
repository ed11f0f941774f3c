/* Option parsing for a sandbox run. bubblewrap's options keep bubblewrap's
 * names, argument counts and order semantics (mounts and environment edits
 * apply in command-line order), so existing bwrap command lines move over. */
#include "cli/run-options.h"
#include "audit/sinks.h"
#include "policy/config.h"
#include "common/size.h"
#include "net/allow.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef enum {
	OPT_PROJECT, OPT_MOUNT_AT, OPT_NET, OPT_ENV_ALLOW, OPT_SETENV, OPT_UNSETENV,
	OPT_CLEARENV, OPT_ENV_FILE, OPT_RO_BIND, OPT_BIND, OPT_RO_BIND_TRY, OPT_BIND_TRY,
	OPT_DEV_BIND, OPT_DEV_BIND_TRY, OPT_TMPFS, OPT_DIR, OPT_SYMLINK, OPT_PROC, OPT_DEV,
	OPT_CHDIR, OPT_HOSTNAME, OPT_UNSHARE_NET, OPT_SHARE_NET, OPT_NEW_SESSION,
	OPT_DIE_WITH_PARENT, OPT_ROOTFS, OPT_ALLOW_USERNS, OPT_JSON_STATUS_FD, OPT_TIMEOUT,
	OPT_AUDIT, OPT_AUDIT_LEVEL, OPT_POLICY, OPT_HIDE, OPT_READONLY, OPT_REDACT, OPT_SHOW,
	OPT_DRY_RUN, OPT_VERBOSE, OPT_PROFILE, OPT_QUIET, OPT_HELP, OPT_VERSION,
	OPT_JOURNAL, OPT_JOURNAL_MAX_SIZE,
	OPT_MEMORY, OPT_PIDS, OPT_CPU,
	OPT_AUDIT_MAX_SIZE, OPT_AUDIT_FAIL,
	OPT_SCAN,
	OPT_ALLOW_HOME_PROJECT,
	OPT_KEY,
	/* accepted for bwrap compatibility; vault-run always does these */
	OPT_UNSHARE_ALL, OPT_UNSHARE_OTHER,
} OptId;

static const struct {
	const char *name;
	OptId id;
	int nargs;
} options[] = {
	{"--project", OPT_PROJECT, 1},
	{"--mount-at", OPT_MOUNT_AT, 1},
	{"--net", OPT_NET, 1},
	{"--profile", OPT_PROFILE, 1},
	{"--quiet", OPT_QUIET, 0},
	{"--journal", OPT_JOURNAL, 1},
	{"--journal-max-size", OPT_JOURNAL_MAX_SIZE, 1},
	{"--memory", OPT_MEMORY, 1},
	{"--pids", OPT_PIDS, 1},
	{"--cpu", OPT_CPU, 1},
	{"--scan", OPT_SCAN, 1},
	{"--allow-home-project", OPT_ALLOW_HOME_PROJECT, 0},
	{"--env-allow", OPT_ENV_ALLOW, 1},
	{"--setenv", OPT_SETENV, 2},
	{"--unsetenv", OPT_UNSETENV, 1},
	{"--clearenv", OPT_CLEARENV, 0},
	{"--env-file", OPT_ENV_FILE, 1},
	{"--key", OPT_KEY, 1},
	{"--ro-bind", OPT_RO_BIND, 2},
	{"--bind", OPT_BIND, 2},
	{"--ro-bind-try", OPT_RO_BIND_TRY, 2},
	{"--bind-try", OPT_BIND_TRY, 2},
	{"--dev-bind", OPT_DEV_BIND, 2},
	{"--dev-bind-try", OPT_DEV_BIND_TRY, 2},
	{"--tmpfs", OPT_TMPFS, 1},
	{"--dir", OPT_DIR, 1},
	{"--symlink", OPT_SYMLINK, 2},
	{"--proc", OPT_PROC, 1},
	{"--dev", OPT_DEV, 1},
	{"--chdir", OPT_CHDIR, 1},
	{"--hostname", OPT_HOSTNAME, 1},
	{"--unshare-net", OPT_UNSHARE_NET, 0},
	{"--share-net", OPT_SHARE_NET, 0},
	{"--new-session", OPT_NEW_SESSION, 0},
	{"--die-with-parent", OPT_DIE_WITH_PARENT, 0},
	{"--rootfs", OPT_ROOTFS, 1},
	{"--allow-userns", OPT_ALLOW_USERNS, 0},
	{"--json-status-fd", OPT_JSON_STATUS_FD, 1},
	{"--timeout", OPT_TIMEOUT, 1},
	{"--audit", OPT_AUDIT, 1},
	{"--audit-level", OPT_AUDIT_LEVEL, 1},
	{"--audit-max-size", OPT_AUDIT_MAX_SIZE, 1},
	{"--audit-fail", OPT_AUDIT_FAIL, 1},
	{"--policy", OPT_POLICY, 1},
	{"--hide", OPT_HIDE, 1},
	{"--readonly", OPT_READONLY, 1},
	{"--redact", OPT_REDACT, 1},
	{"--show", OPT_SHOW, 1},
	{"--dry-run", OPT_DRY_RUN, 0},
	{"--verbose", OPT_VERBOSE, 0},
	{"-v", OPT_VERBOSE, 0},
	{"--help", OPT_HELP, 0},
	{"-h", OPT_HELP, 0},
	{"--version", OPT_VERSION, 0},
	{"--unshare-all", OPT_UNSHARE_ALL, 0},
	{"--unshare-user", OPT_UNSHARE_OTHER, 0},
	{"--unshare-ipc", OPT_UNSHARE_OTHER, 0},
	{"--unshare-pid", OPT_UNSHARE_OTHER, 0},
	{"--unshare-uts", OPT_UNSHARE_OTHER, 0},
	{"--unshare-cgroup", OPT_UNSHARE_OTHER, 0},
	{"--unshare-cgroup-try", OPT_UNSHARE_OTHER, 0},
};

static void set_str(char **field, const char *value)
{
	g_free(*field);
	*field = g_strdup(value);
}

static void add_mount(VrRunPlan *plan, VrOpKind kind, const char *src, const char *dest, int flags)
{
	VrUserMount m = {kind, g_strdup(src), g_strdup(dest), flags};
	g_array_append_val(plan->mounts, m);
}

static void add_env(VrRunPlan *plan, VrEnvOpKind kind, const char *name, const char *value)
{
	VrEnvOp op = {kind, g_strdup(name), g_strdup(value), FALSE};
	g_array_append_val(plan->env_ops, op);
}

static void add_rule(VrRunPlan *plan, VrRuleKind kind, const char *pattern)
{
	VrPlanRule r = {kind, g_strdup(pattern)};
	g_array_append_val(plan->rules, r);
}

static gboolean bad_value(GError **error, const char *opt, const char *value, const char *want)
{
	g_set_error(error, VR_PLAN_ERROR, VR_PLAN_ERROR_BAD_VALUE, "%s: '%s' is not %s", opt, value, want);
	return FALSE;
}

static gboolean need_absolute(GError **error, const char *opt, const char *path)
{
	if (path[0] == '/')
		return TRUE;
	return bad_value(error, opt, path, "an absolute path inside the sandbox");
}

/* The options that take a number or a size (common/size.h). */
static gboolean apply_number(VrRunPlan *plan, OptId id, const char *name, char **a, GError **error)
{
	switch (id) {
	case OPT_JOURNAL_MAX_SIZE: {
		uint64_t v;
		if (vr_size_parse(a[0], &v) < 0)
			return bad_value(error, name, a[0], vr_size_expected(a[0], VR_SIZE_SYNTAX));
		plan->journal_max_size = v;
		break;
	}
	case OPT_MEMORY:
		if (!vr_limits_parse_memory(a[0], &plan->limits.memory))
			return bad_value(error, name, a[0], vr_size_expected(a[0], VR_LIMITS_MEMORY_SYNTAX));
		break;
	case OPT_PIDS:
		if (!vr_limits_parse_pids(a[0], &plan->limits.pids))
			return bad_value(error, name, a[0], VR_LIMITS_PIDS_SYNTAX);
		break;
	case OPT_CPU:
		if (!vr_limits_parse_cpu(a[0], &plan->limits.cpu))
			return bad_value(error, name, a[0], VR_LIMITS_CPU_SYNTAX);
		break;
	case OPT_JSON_STATUS_FD: {
		char *end;
		long fd = strtol(a[0], &end, 10);
		if (!a[0][0] || *end || fd < 0 || fd > 65535)
			return bad_value(error, name, a[0], "a file descriptor number");
		plan->json_status_fd = (int)fd;
		break;
	}
	case OPT_TIMEOUT: {
		char *end;
		double t = g_ascii_strtod(a[0], &end);
		if (!a[0][0] || *end || !(t > 0) || t > 1e9)
			return bad_value(error, name, a[0], "a positive number of seconds");
		plan->timeout = t;
		break;
	}
	default: break;
	}
	return TRUE;
}

/* The sandbox's mounts, bwrap's spelling: in their order. */
static gboolean apply_mount(VrRunPlan *plan, OptId id, const char *name, char **a, GError **error)
{
	switch (id) {
	case OPT_RO_BIND: case OPT_BIND: case OPT_RO_BIND_TRY: case OPT_BIND_TRY:
	case OPT_DEV_BIND: case OPT_DEV_BIND_TRY: {
		int flags = 0;
		if (id == OPT_RO_BIND || id == OPT_RO_BIND_TRY)
			flags |= VR_BIND_RO;
		if (id == OPT_RO_BIND_TRY || id == OPT_BIND_TRY || id == OPT_DEV_BIND_TRY)
			flags |= VR_BIND_TRY;
		if (id == OPT_DEV_BIND || id == OPT_DEV_BIND_TRY)
			flags |= VR_BIND_DEV;
		if (!need_absolute(error, name, a[1]))
			return FALSE;
		add_mount(plan, VR_OP_BIND, a[0], a[1], flags);
		break;
	}
	case OPT_TMPFS: case OPT_DIR: case OPT_PROC: case OPT_DEV:
		if (!need_absolute(error, name, a[0]))
			return FALSE;
		add_mount(plan, id == OPT_TMPFS ? VR_OP_TMPFS : id == OPT_DIR ? VR_OP_DIR
		                : id == OPT_PROC ? VR_OP_PROC : VR_OP_DEV, NULL, a[0], 0);
		break;
	case OPT_SYMLINK:
		if (!need_absolute(error, name, a[1]))
			return FALSE;
		add_mount(plan, VR_OP_SYMLINK, a[0], a[1], 0);
		break;
	default: break;
	}
	return TRUE;
}

/* --audit, --audit-max-size, --audit-fail, --audit-level. */
static gboolean apply_audit(VrRunPlan *plan, OptId id, const char *name, char **a, GError **error)
{
	switch (id) {
	case OPT_AUDIT: {
		/* Repeatable: the sink lists add up (docs/audit.md). */
		g_autofree char *list = plan->audit_path ? g_strconcat(plan->audit_path, ",", a[0], NULL) : g_strdup(a[0]);
		g_autofree char *why = NULL;
		VrAuditSinks sinks = {0};
		gboolean ok = vr_audit_sinks_parse(list, &sinks, &why);
		vr_audit_sinks_clear(&sinks);
		if (!ok) {
			g_set_error(error, VR_PLAN_ERROR, VR_PLAN_ERROR_BAD_VALUE, "%s: %s", name, why);
			return FALSE;
		}
		set_str(&plan->audit_path, list);
		break;
	}
	case OPT_AUDIT_MAX_SIZE:
		if (!vr_config_parse_audit_max_size(a[0], &plan->audit_max_size))
			return bad_value(error, name, a[0], vr_size_expected(a[0], VR_CONFIG_AUDIT_MAX_SIZE_SYNTAX));
		plan->audit_max_size_set = TRUE;
		break;
	case OPT_AUDIT_FAIL:
		if (vr_audit_fail_parse(a[0]) < 0)
			return bad_value(error, name, a[0], "'closed' or 'open'");
		set_str(&plan->audit_fail, a[0]);
		break;
	case OPT_AUDIT_LEVEL:
		if (vr_config_audit_level_parse(a[0]) < 0)
			return bad_value(error, name, a[0], "one of " VR_CONFIG_AUDIT_LEVELS);
		set_str(&plan->audit_level, a[0]);
		break;
	default: break;
	}
	return TRUE;
}

static gboolean apply(VrRunPlan *plan, OptId id, const char *name, char **a, GError **error)
{
	switch (id) {
	case OPT_PROJECT: set_str(&plan->project, a[0]); break;
	case OPT_MOUNT_AT:
		if (!need_absolute(error, name, a[0]))
			return FALSE;
		set_str(&plan->mount_at, a[0]);
		break;
	case OPT_NET:
		if (!vr_run_plan_add_net(plan, a[0], name, error))
			return FALSE;
		break;
	case OPT_PROFILE:
		set_str(&plan->profile, a[0]);
		break;
	case OPT_QUIET: plan->quiet = TRUE; break;
	case OPT_JOURNAL:
		if (strcmp(a[0], "on") != 0 && strcmp(a[0], "off") != 0)
			return bad_value(error, name, a[0], "'on' or 'off'");
		plan->journal_off = strcmp(a[0], "off") == 0;
		break;
	case OPT_JOURNAL_MAX_SIZE: case OPT_MEMORY: case OPT_PIDS: case OPT_CPU: case OPT_JSON_STATUS_FD:
	case OPT_TIMEOUT:
		return apply_number(plan, id, name, a, error);
	case OPT_RO_BIND: case OPT_BIND: case OPT_RO_BIND_TRY: case OPT_BIND_TRY: case OPT_DEV_BIND:
	case OPT_DEV_BIND_TRY: case OPT_TMPFS: case OPT_DIR: case OPT_PROC: case OPT_DEV: case OPT_SYMLINK:
		return apply_mount(plan, id, name, a, error);
	case OPT_AUDIT: case OPT_AUDIT_MAX_SIZE: case OPT_AUDIT_FAIL: case OPT_AUDIT_LEVEL:
		return apply_audit(plan, id, name, a, error);
	case OPT_SCAN:
		if (vr_config_scan_mode_parse(a[0]) < 0)
			return bad_value(error, name, a[0], "one of " VR_CONFIG_SCAN_MODES);
		set_str(&plan->scan_mode, a[0]);
		break;
	case OPT_ALLOW_HOME_PROJECT: plan->allow_home_project = TRUE; break;
	case OPT_UNSHARE_NET: plan->net = VR_NET_NONE; break;
	case OPT_SHARE_NET: plan->net = VR_NET_HOST; break;
	case OPT_ENV_ALLOW: g_ptr_array_add(plan->env_allow, g_strdup(a[0])); break;
	case OPT_SETENV:
		if (!a[0][0] || strchr(a[0], '='))
			return bad_value(error, name, a[0], "a variable name");
		add_env(plan, VR_ENV_SET, a[0], a[1]);
		break;
	case OPT_UNSETENV: add_env(plan, VR_ENV_UNSET, a[0], NULL); break;
	case OPT_CLEARENV: add_env(plan, VR_ENV_CLEAR, NULL, NULL); break;
	case OPT_KEY: g_ptr_array_add(plan->keys, g_strdup(a[0])); break; /* checked by the run (run/keys.c) */
	case OPT_ENV_FILE: {
		/* FILE or FILE:GLOB,... (config.h says where it splits). */
		g_autofree char *file = NULL, *patterns = NULL;
		vr_config_split_env_file(a[0], &file, &patterns);
		add_env(plan, VR_ENV_FILE, file, patterns);
		break;
	}
	case OPT_CHDIR: set_str(&plan->chdir, a[0]); break;
	case OPT_HOSTNAME: set_str(&plan->hostname, a[0]); break;
	case OPT_NEW_SESSION: plan->new_session = TRUE; break;
	case OPT_DIE_WITH_PARENT: case OPT_UNSHARE_ALL: case OPT_UNSHARE_OTHER: break;
	case OPT_ROOTFS: set_str(&plan->rootfs, a[0]); break;
	case OPT_ALLOW_USERNS: plan->allow_userns = TRUE; break;
	case OPT_POLICY: set_str(&plan->policy_file, a[0]); break;
	case OPT_HIDE: add_rule(plan, VR_RULE_HIDE, a[0]); break;
	case OPT_READONLY: add_rule(plan, VR_RULE_READONLY, a[0]); break;
	case OPT_REDACT: add_rule(plan, VR_RULE_REDACT, a[0]); break;
	case OPT_SHOW: add_rule(plan, VR_RULE_SHOW, a[0]); break;
	case OPT_DRY_RUN: plan->dry_run = TRUE; break;
	case OPT_VERBOSE: plan->verbose++; break;
	case OPT_HELP: plan->help = TRUE; break;
	case OPT_VERSION: plan->version = TRUE; break;
	}
	return TRUE;
}

gboolean vr_cli_parse(VrRunPlan *plan, int argc, char **argv, GError **error)
{
	int i = 1;
	while (i < argc) {
		const char *arg = argv[i];
		if (strcmp(arg, "--") == 0) {
			i++;
			break;
		}
		if (arg[0] != '-' || strcmp(arg, "-") == 0)
			break; /* the command starts here */
		/* --name=value for one-argument options */
		g_autofree char *name = NULL;
		const char *inline_value = NULL;
		const char *eq = strchr(arg, '=');
		if (g_str_has_prefix(arg, "--") && eq) {
			name = g_strndup(arg, eq - arg);
			inline_value = eq + 1;
		} else {
			name = g_strdup(arg);
		}
		size_t k;
		for (k = 0; k < G_N_ELEMENTS(options); k++)
			if (strcmp(options[k].name, name) == 0)
				break;
		if (k == G_N_ELEMENTS(options)) {
			g_set_error(error, VR_PLAN_ERROR, VR_PLAN_ERROR_UNKNOWN_OPTION,
			            "unknown option '%s' (see vault-run --help)", arg);
			return FALSE;
		}
		int nargs = options[k].nargs;
		char *args[2] = {NULL, NULL};
		if (inline_value) {
			if (nargs != 1) {
				g_set_error(error, VR_PLAN_ERROR, VR_PLAN_ERROR_BAD_VALUE,
				            "%s does not take '=VALUE'", name);
				return FALSE;
			}
			args[0] = (char *)inline_value;
			i++;
		} else {
			if (i + nargs >= argc) {
				g_set_error(error, VR_PLAN_ERROR, VR_PLAN_ERROR_MISSING_ARGUMENT,
				            "%s needs %d argument%s", name, nargs, nargs > 1 ? "s" : "");
				return FALSE;
			}
			for (int n = 0; n < nargs; n++)
				args[n] = argv[i + 1 + n];
			i += 1 + nargs;
		}
		if (!apply(plan, options[k].id, name, args, error))
			return FALSE;
	}
	if (plan->help || plan->version)
		return TRUE;
	if (i >= argc) {
		g_set_error(error, VR_PLAN_ERROR, VR_PLAN_ERROR_NO_COMMAND,
		            "no COMMAND given (vault-run [OPTIONS] [--] COMMAND [ARG...]; see --help)");
		return FALSE;
	}
	g_strfreev(plan->command);
	plan->command = g_new0(char *, argc - i + 1);
	for (int n = 0; i < argc; i++, n++)
		plan->command[n] = g_strdup(argv[i]);
	return TRUE;
}

void vr_cli_print_help(FILE *out)
{
	fputs("usage: vault-run [OPTIONS] [--] COMMAND [ARG...]\n"
	      "       vault-run mount|policy|audit|scan|profiles ...\n"
	      "Runs COMMAND in a sandbox that sees the project through a view without its secrets.\n"
	      "  --project DIR        project directory (default: .; ~ needs --allow-home-project)\n"
	      "  --mount-at PATH      where the project appears inside (default: its host path)\n"
	      "  --profile NAME|none  harness profile (default: chosen by COMMAND's name)\n"
	      "  --net none|host|allow=DOMAINS|read=HOSTS|allow-localhost=PORTS|allow-private   own\n"
	      "                       netns (default), host's, a proxy (HOSTS read-only; loopback PORTs)\n"
	      "  --env-allow GLOB     pass host variables matching GLOB (default: PATH HOME TERM\n"
	      "                       LANG LC_* USER SHELL TZ COLORTERM)\n"
	      "  --setenv N V, --unsetenv N, --clearenv, --env-file FILE[:GLOB,...] (read outside)\n"
	      "  --key NAME@HOST[:as=PLACE]|none  a sentinel inside, the proxy puts the value in\n"
	      "  --hide/--readonly/--redact/--show PATTERN, --scan mask|refuse|off (secrets by content)\n"
	      "  --policy FILE, --audit state|FILE|-|syslog[,...], --audit-max-size SIZE|off\n"
	      "  --audit-level denied|writes|reads|opens|all, --audit-fail closed|open\n"
	      "  --timeout SECONDS, --json-status-fd FD, --allow-userns, --dry-run, --quiet, -v\n"
	      "  --journal on|off, --journal-max-size SIZE   keep what the run changes for undo\n"
	      "  --memory SIZE, --pids N, --cpu CPUS   cgroup limits (e.g. 2G, 200, 1.5 or 50%)\n"
	      "bubblewrap options: --ro-bind[-try] SRC DEST, --bind[-try] SRC DEST, --dev-bind SRC DEST,\n"
	      "  --tmpfs DEST, --dir DEST, --symlink TARGET DEST, --proc DEST, --dev DEST, --chdir DIR,\n"
	      "  --hostname NAME, --unshare-net, --share-net, --new-session, --die-with-parent,\n"
	      "  --rootfs DIR (another root file system instead of the host's /usr, /etc...)\n"
	      "Exit status: COMMAND's; 128+N if it died of signal N; 124 timeout; 125 vault-run\n"
	      "error; 126 COMMAND not executable; 127 COMMAND not found.\n"
	      "See docs/sandbox.md.\n",
	      out);
}
