/* vault-run mount [OPTIONS] PROJECT MOUNTPOINT: only the filtered view, in
 * the foreground, for another tool to use. Options become a VrViewOptions;
 * the view (fusefs/) does the rest. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <glib.h>

#include "run/audit-file.h"
#include "audit/sinks.h"
#include "cli/commands.h"
#include "cli/options.h"
#include "run/dir-check.h"
#include "run/view-settings.h"
#include "common/exitcode.h"
#include "common/log.h"
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

/* What the command line said, as text until checked. */
typedef struct {
	char *policy_file, *journal_dir, *journal_max_size, *entry_timeout, *attr_timeout;
	char *audit_level, *audit_fail, *audit_max_size, *scan_mode, *scan_max_size;
	char **audit;        /* --audit, repeatable: the lists add up, as for a run */
	gboolean allow_other;
	GArray *rules;       /* VrCliRule, in their order */
	char *audit_list;    /* the --audit lists joined; NULL: none given */
	const char *project, *mountpoint;
} MountArgs;

static void mount_args_clear(MountArgs *a)
{
	g_free(a->policy_file);
	g_free(a->journal_dir);
	g_free(a->journal_max_size);
	g_free(a->entry_timeout);
	g_free(a->attr_timeout);
	g_free(a->audit_level);
	g_free(a->audit_fail);
	g_free(a->audit_max_size);
	g_free(a->scan_mode);
	g_free(a->scan_max_size);
	g_strfreev(a->audit);
	g_array_unref(a->rules);
	g_free(a->audit_list);
}
G_DEFINE_AUTO_CLEANUP_CLEAR_FUNC(MountArgs, mount_args_clear)

/* The options and the two operands; strict: PROJECT ends the options. */
static gboolean parse_args(MountArgs *a, int argc, char **argv, int *ret_status)
{
	const GOptionEntry entries[] = {
		{"policy", 0, 0, G_OPTION_ARG_FILENAME, &a->policy_file, NULL, NULL},
		VR_CLI_RULE_ENTRIES,
		{"audit", 0, 0, G_OPTION_ARG_FILENAME_ARRAY, &a->audit, NULL, NULL},
		{"audit-level", 0, 0, G_OPTION_ARG_STRING, &a->audit_level, NULL, NULL},
		{"audit-max-size", 0, 0, G_OPTION_ARG_STRING, &a->audit_max_size, NULL, NULL},
		{"audit-fail", 0, 0, G_OPTION_ARG_STRING, &a->audit_fail, NULL, NULL},
		{"entry-timeout", 0, 0, G_OPTION_ARG_STRING, &a->entry_timeout, NULL, NULL},
		{"attr-timeout", 0, 0, G_OPTION_ARG_STRING, &a->attr_timeout, NULL, NULL},
		{"allow-other", 0, 0, G_OPTION_ARG_NONE, &a->allow_other, NULL, NULL},
		{"scan", 0, 0, G_OPTION_ARG_STRING, &a->scan_mode, NULL, NULL},
		{"scan-max-size", 0, 0, G_OPTION_ARG_STRING, &a->scan_max_size, NULL, NULL},
		{"journal", 0, 0, G_OPTION_ARG_FILENAME, &a->journal_dir, NULL, NULL},
		{"journal-max-size", 0, 0, G_OPTION_ARG_STRING, &a->journal_max_size, NULL, NULL},
		{NULL},
	};
	a->rules = vr_cli_rules_new();
	const VrCliOptions o = {"mount", entries, TRUE, a->rules};
	if (!vr_cli_options_parse(&o, usage, &argc, &argv, ret_status))
		return FALSE;
	if (argc != 3) {
		vr_error("mount: expected PROJECT and MOUNTPOINT (see vault-run mount --help)");
		*ret_status = VR_EXIT_ERROR;
		return FALSE;
	}
	a->project = argv[1];
	a->mountpoint = argv[2];
	if (a->audit)
		a->audit_list = g_strjoinv(",", a->audit);
	return TRUE;
}

static bool parse_seconds(const char *opt, const char *s, double *ret)
{
	if (!s)
		return true;
	char *end;
	errno = 0;
	double v = strtod(s, &end);
	if (errno || end == s || *end || v < 0 || v > 86400) {
		vr_error("%s: '%s' is not a number of seconds (0 to 86400)", opt, s);
		return false;
	}
	*ret = v;
	return true;
}

/* The view settings' texts, checked with the run's own lists and the one
 * size grammar, into GIVEN (run/view-settings.h). */
static bool check_settings(const MountArgs *a, VrViewSettings *given)
{
	if (a->audit_max_size && !vr_config_parse_audit_max_size(a->audit_max_size, &given->audit_max_size)) {
		vr_error("--audit-max-size: '%s' is not %s", a->audit_max_size,
		         vr_size_expected(a->audit_max_size, VR_CONFIG_AUDIT_MAX_SIZE_SYNTAX));
		return false;
	}
	given->audit_max_size_set = a->audit_max_size != NULL;
	if (a->audit_fail && vr_audit_fail_parse(a->audit_fail) < 0) {
		vr_error("--audit-fail: '%s' is not closed or open", a->audit_fail);
		return false;
	}
	if (a->audit_level && vr_audit_level_parse(a->audit_level) < 0) {
		vr_error("--audit-level: '%s' is not one of " VR_CONFIG_AUDIT_LEVELS, a->audit_level);
		return false;
	}
	if (a->scan_mode && vr_view_scan_mode_parse(a->scan_mode) < 0) {
		vr_error("--scan: '%s' is not one of " VR_CONFIG_SCAN_MODES, a->scan_mode);
		return false;
	}
	if (a->scan_max_size && !vr_config_parse_size(a->scan_max_size, &given->scan_max_size)) {
		vr_error("--scan-max-size: '%s' is not %s", a->scan_max_size,
		         vr_size_expected(a->scan_max_size, VR_CONFIG_SCAN_MAX_SIZE_SYNTAX));
		return false;
	}
	given->scan_max_size_set = a->scan_max_size != NULL;
	given->audit_level = a->audit_level;
	given->audit_fail = a->audit_fail;
	given->scan_mode = a->scan_mode;
	return true;
}

/* The options that are the view's own: timeouts, --allow-other, the
 * journal's size. */
static bool check_view_options(const MountArgs *a, VrViewOptions *opts)
{
	if (!parse_seconds("--entry-timeout", a->entry_timeout, &opts->entry_timeout) ||
	    !parse_seconds("--attr-timeout", a->attr_timeout, &opts->attr_timeout))
		return false;
	if (a->journal_max_size && vr_size_parse(a->journal_max_size, &opts->journal_max_size) < 0) {
		vr_error("--journal-max-size: '%s' is not %s", a->journal_max_size,
		         vr_size_expected(a->journal_max_size, VR_SIZE_SYNTAX));
		return false;
	}
	opts->allow_other = a->allow_other;
	return true;
}

/* Built-ins → user → project → --policy, then the command line's rules. */
static VrConfig *load_config(const MountArgs *a)
{
	g_autoptr(VrConfig) config = vr_config_new();
	g_autoptr(GError) error = NULL;
	if (!vr_config_load_all(config, a->project, a->policy_file, &error) ||
	    !vr_cli_rules_add(a->rules, config->policy, &error)) {
		vr_error("%s", error->message);
		return NULL;
	}
	return g_steal_pointer(&config);
}

/* The audit sinks (--audit, else the config's path): stderr and syslog
 * into OPTS, the FILE, if any, into *RET_FILE. */
static bool audit_sinks(const MountArgs *a, const VrConfig *config, VrViewOptions *opts, char **ret_file)
{
	const char *list = a->audit_list ? a->audit_list : config->audit_path;
	const char *what = a->audit_list ? "--audit" : "[audit] path in the config";
	if (!list)
		return true;
	VrAuditSinks sinks = {0};
	g_autofree char *why = NULL;
	if (!vr_audit_sinks_parse(list, &sinks, &why)) {
		vr_error("%s: %s", what, why);
		return false;
	}
	/* `state` is a run's log; the config's serves runs too: skipped. */
	if (sinks.state && a->audit_list) {
		vr_audit_sinks_clear(&sinks);
		vr_error("--audit state: only a run has a log in the state directory; name a FILE");
		return false;
	}
	*ret_file = g_steal_pointer(&sinks.file);
	opts->audit_stderr = sinks.to_stderr;
	opts->audit_syslog = sinks.to_syslog;
	vr_audit_sinks_clear(&sinks);
	return true;
}

/* A journal directory serves one run: made here (0700), its manifest
 * created O_EXCL by the view. */
static bool open_journal(const char *dir, VrViewOptions *opts)
{
	if (!dir)
		return true;
	if (mkdir(dir, 0700) < 0 && errno != EEXIST) {
		vr_error("--journal: cannot create %s: %s", dir, g_strerror(errno));
		return false;
	}
	opts->journal_dir_fd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (opts->journal_dir_fd < 0) {
		vr_error("--journal: cannot open %s: %s", dir, g_strerror(errno));
		return false;
	}
	return true;
}

/* The log FILE, opened before the mount (run/audit-file.h): never where
 * the view shows it or the mount covers it. */
static bool open_log(const MountArgs *a, const char *file, VrAuditFile *log, VrViewOptions *opts)
{
	if (!file)
		return true;
	const VrAuditUnder under[] = {
		{a->project, "the project", "the view would show the audit log to whoever reads it"},
		{a->mountpoint, "the mount point", "the view would cover it while it is being written"},
	};
	g_autofree char *why = NULL;
	if (vr_audit_file_open(file, under, G_N_ELEMENTS(under), log, &why) < 0) {
		vr_error("%s: %s", a->audit_list ? "--audit" : "[audit] path in the config", why);
		return false;
	}
	opts->audit_path = log->path;
	opts->audit_fd = log->fd;
	opts->audit_dir_fd = log->dir_fd;
	return true;
}

int vr_cmd_mount(int argc, char **argv)
{
	g_auto(MountArgs) a = {0};
	int status;
	if (!parse_args(&a, argc, argv, &status))
		return status;
	VrViewOptions opts;
	vr_view_options_init(&opts);
	VrViewSettings given = {0};
	if (!check_view_options(&a, &opts) || !check_settings(&a, &given) ||
	    vr_dir_check("project", a.project) < 0 || vr_dir_check("mount point", a.mountpoint) < 0)
		return VR_EXIT_ERROR;
	g_autoptr(VrConfig) config = load_config(&a);
	if (!config)
		return VR_EXIT_ERROR;
	/* As a run's daemons resolve them (run/view-settings.h). */
	vr_view_settings_apply(&opts, &given, config);
	opts.project = a.project;
	opts.mountpoint = a.mountpoint;
	opts.policy = config->policy;
	opts.foreground_signals = true;
	g_autofree char *audit_file = NULL;
	VrAuditFile log = {-1, -1, NULL};
	if (!audit_sinks(&a, config, &opts, &audit_file) || !open_journal(a.journal_dir, &opts) ||
	    !open_log(&a, audit_file, &log, &opts))
		return VR_EXIT_ERROR;
	/* vr_view_run prints the ready line and logs its own errors. */
	int r = vr_view_run(&opts);
	vr_audit_file_close(&log);
	return r == 0 ? VR_EXIT_OK : VR_EXIT_ERROR;
}
