/* vault-run mount [OPTIONS] PROJECT MOUNTPOINT: only the filtered view, in
 * the foreground, for another tool to use. Options become a VrViewOptions;
 * the view (fusefs/) does the rest. */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <glib.h>

#include "run/audit-file.h"
#include "audit/sinks.h"
#include "cli/commands.h"
#include "run/dir-check.h"
#include "run/view-settings.h"
#include "common/exitcode.h"
#include "common/size.h"
#include "policy/config.h"
#include "fusefs/view.h"

static const char usage[] =
	"usage: vault-run mount [--policy FILE] [--hide|--readonly|--redact|--show PATTERN]...\n"
	"                       [--journal DIR [--journal-max-size SIZE]]\n"
	"                       [--audit FILE|-|syslog[,...]] [--audit-level denied|writes|reads|opens|all]\n"
	"                       [--audit-max-size SIZE|off] [--audit-fail closed|open]\n"
	"                       [--entry-timeout S] [--attr-timeout S] [--allow-other]\n"
	"                       [--scan mask|refuse|off] [--scan-max-size SIZE] PROJECT MOUNTPOINT\n";

enum {
	OPT_POLICY = 256, OPT_HIDE, OPT_READONLY, OPT_REDACT, OPT_SHOW, OPT_AUDIT, OPT_AUDIT_LEVEL,
	OPT_ENTRY_TIMEOUT, OPT_ATTR_TIMEOUT, OPT_ALLOW_OTHER, OPT_SCAN, OPT_SCAN_MAX_SIZE, OPT_HELP, OPT_JOURNAL, OPT_JOURNAL_MAX,
	OPT_AUDIT_MAX_SIZE, OPT_AUDIT_FAIL,
};

static const struct option longopts[] = {
	{"policy", required_argument, NULL, OPT_POLICY},
	{"hide", required_argument, NULL, OPT_HIDE},
	{"readonly", required_argument, NULL, OPT_READONLY},
	{"redact", required_argument, NULL, OPT_REDACT},
	{"show", required_argument, NULL, OPT_SHOW},
	{"audit", required_argument, NULL, OPT_AUDIT},
	{"audit-level", required_argument, NULL, OPT_AUDIT_LEVEL},
	{"audit-max-size", required_argument, NULL, OPT_AUDIT_MAX_SIZE},
	{"audit-fail", required_argument, NULL, OPT_AUDIT_FAIL},
	{"entry-timeout", required_argument, NULL, OPT_ENTRY_TIMEOUT},
	{"attr-timeout", required_argument, NULL, OPT_ATTR_TIMEOUT},
	{"allow-other", no_argument, NULL, OPT_ALLOW_OTHER},
	{"scan", required_argument, NULL, OPT_SCAN},
	{"scan-max-size", required_argument, NULL, OPT_SCAN_MAX_SIZE},
	{"help", no_argument, NULL, OPT_HELP},
	{"journal", required_argument, NULL, OPT_JOURNAL},
	{"journal-max-size", required_argument, NULL, OPT_JOURNAL_MAX},
	{NULL, 0, NULL, 0},
};

__attribute__((format(printf, 1, 2))) static int fail(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	fputs("vault-run: ", stderr);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	return VR_EXIT_ERROR;
}

static bool parse_seconds(const char *s, double *ret)
{
	char *end;
	errno = 0;
	double v = strtod(s, &end);
	if (errno || end == s || *end || v < 0 || v > 86400)
		return false;
	*ret = v;
	return true;
}

typedef struct {
	VrRuleKind kind;
	const char *pattern;
} CliRule;

int vr_cmd_mount(int argc, char **argv)
{
	VrViewOptions opts;
	const char *policy_file = NULL, *audit_path = NULL, *journal_dir = NULL;
	VrViewSettings given = {0};
	g_autofree char *audit_list = NULL;
	g_autoptr(GArray) rules = g_array_new(FALSE, FALSE, sizeof(CliRule));
	int c;

	vr_view_options_init(&opts);
	opterr = 0;
	optind = 1;
	while ((c = getopt_long(argc, argv, "+h", longopts, NULL)) != -1) {
		CliRule rule;
		switch (c) {
		case OPT_POLICY: policy_file = optarg; break;
		case OPT_HIDE: case OPT_READONLY: case OPT_REDACT: case OPT_SHOW:
			rule.kind = c == OPT_HIDE ? VR_RULE_HIDE : c == OPT_READONLY ? VR_RULE_READONLY
			          : c == OPT_REDACT ? VR_RULE_REDACT : VR_RULE_SHOW;
			rule.pattern = optarg;
			g_array_append_val(rules, rule);
			break;
		case OPT_AUDIT: {
			/* Repeatable: the lists add up, as for a run. */
			char *joined = audit_list ? g_strconcat(audit_list, ",", optarg, NULL) : g_strdup(optarg);
			g_free(audit_list);
			audit_list = joined;
			audit_path = audit_list;
			break;
		}
		case OPT_AUDIT_MAX_SIZE:
			if (!vr_config_parse_audit_max_size(optarg, &given.audit_max_size))
				return fail("--audit-max-size: '%s' is not %s", optarg,
				            vr_size_expected(optarg, VR_CONFIG_AUDIT_MAX_SIZE_SYNTAX));
			given.audit_max_size_set = TRUE;
			break;
		case OPT_AUDIT_FAIL:
			if (vr_audit_fail_parse(optarg) < 0)
				return fail("--audit-fail: '%s' is not closed or open", optarg);
			given.audit_fail = optarg;
			break;
		case OPT_AUDIT_LEVEL:
			if (vr_audit_level_parse(optarg) < 0)
				return fail("--audit-level: '%s' is not one of " VR_CONFIG_AUDIT_LEVELS, optarg);
			given.audit_level = optarg;
			break;
		case OPT_ENTRY_TIMEOUT:
			if (!parse_seconds(optarg, &opts.entry_timeout))
				return fail("--entry-timeout: '%s' is not a number of seconds (0 to 86400)", optarg);
			break;
		case OPT_ATTR_TIMEOUT:
			if (!parse_seconds(optarg, &opts.attr_timeout))
				return fail("--attr-timeout: '%s' is not a number of seconds (0 to 86400)", optarg);
			break;
		case OPT_ALLOW_OTHER: opts.allow_other = true; break;
		case OPT_JOURNAL: journal_dir = optarg; break;
		case OPT_JOURNAL_MAX:
			if (vr_size_parse(optarg, &opts.journal_max_size) < 0)
				return fail("--journal-max-size: '%s' is not %s", optarg,
				            vr_size_expected(optarg, VR_SIZE_SYNTAX));
			break;
		case OPT_SCAN:
			if (vr_view_scan_mode_parse(optarg) < 0)
				return fail("--scan: '%s' is not one of " VR_CONFIG_SCAN_MODES, optarg);
			given.scan_mode = optarg;
			break;
		case OPT_SCAN_MAX_SIZE:
			if (!vr_config_parse_size(optarg, &given.scan_max_size))
				return fail("--scan-max-size: '%s' is not %s", optarg,
				            vr_size_expected(optarg, VR_CONFIG_SCAN_MAX_SIZE_SYNTAX));
			given.scan_max_size_set = TRUE;
			break;
		case 'h': case OPT_HELP:
			fputs(usage, stdout);
			return VR_EXIT_OK;
		default:
			if (optopt && optopt < 256)
				return fail("mount: unknown option '-%c' (see vault-run mount --help)", optopt);
			return fail("mount: unknown option or missing value in '%s' (see vault-run mount --help)",
			            argv[optind - 1]);
		}
	}
	if (argc - optind != 2)
		return fail("mount: expected PROJECT and MOUNTPOINT%s", " (see vault-run mount --help)");
	const char *project = argv[optind], *mountpoint = argv[optind + 1];
	if (vr_dir_check("project", project) < 0 || vr_dir_check("mount point", mountpoint) < 0)
		return VR_EXIT_ERROR;

	g_autoptr(VrConfig) config = vr_config_new();
	g_autoptr(GError) error = NULL;
	if (!vr_config_load_all(config, project, policy_file, &error))
		return fail("%s", error->message);
	for (guint i = 0; i < rules->len; i++) {
		CliRule *r = &g_array_index(rules, CliRule, i);
		if (!vr_policy_add(config->policy, r->kind, r->pattern, "command line", (int)i + 1,
		                   FALSE, &error))
			return fail("%s", error->message);
	}

	if (!audit_path)
		audit_path = config->audit_path;
	/* As a run's daemons resolve them (run/view-settings.h). */
	vr_view_settings_apply(&opts, &given, config);
	opts.project = project;
	opts.mountpoint = mountpoint;
	opts.policy = config->policy;
	VrAuditSinks sinks = {0};
	g_autofree char *audit_file = NULL;
	if (audit_path) {
		g_autofree char *why = NULL;
		if (!vr_audit_sinks_parse(audit_path, &sinks, &why))
			return fail("%s: %s", audit_list ? "--audit" : "[audit] path in the config", why);
		/* `state` is a run's log; the config's serves runs too: skipped. */
		if (sinks.state && audit_list)
			return fail("--audit state: only a run has a log in the state directory; name a FILE");
		audit_file = g_steal_pointer(&sinks.file);
		opts.audit_stderr = sinks.to_stderr;
		opts.audit_syslog = sinks.to_syslog;
	}
	opts.foreground_signals = true;
	if (journal_dir) {
		/* A journal directory serves one run: made here (0700), its
		 * manifest created O_EXCL by the view. */
		if (mkdir(journal_dir, 0700) < 0 && errno != EEXIST)
			return fail("--journal: cannot create %s: %s", journal_dir, g_strerror(errno));
		opts.journal_dir_fd = open(journal_dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (opts.journal_dir_fd < 0)
			return fail("--journal: cannot open %s: %s", journal_dir, g_strerror(errno));
	}

	/* The log FILE, opened before the mount (run/audit-file.h): never where
	 * the view shows it or the mount covers it. */
	VrAuditFile log = {-1, -1, NULL};
	if (audit_file) {
		const VrAuditUnder under[] = {
			{project, "the project", "the view would show the audit log to whoever reads it"},
			{mountpoint, "the mount point", "the view would cover it while it is being written"},
		};
		g_autofree char *why = NULL;
		if (vr_audit_file_open(audit_file, under, G_N_ELEMENTS(under), &log, &why) < 0)
			return fail("%s: %s", audit_list ? "--audit" : "[audit] path in the config", why);
		opts.audit_path = log.path;
		opts.audit_fd = log.fd;
		opts.audit_dir_fd = log.dir_fd;
	}

	/* vr_view_run prints the ready line and logs its own errors. */
	int r = vr_view_run(&opts);
	vr_audit_file_close(&log);
	return r == 0 ? VR_EXIT_OK : VR_EXIT_ERROR;
}
