/* vault-run doctor: what this kernel and system offer vault-run, and how to
 * fix what is missing. Exit 0 when a sandbox can run, 1 when it cannot. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/landlock.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <glib.h>

#include "cli/commands.h"
#include "cli/options.h"
#include "common/log.h"
#include "common/exitcode.h"
#include "common/proc.h"
#include "run/cgroup.h"
#include "policy/config.h"
#include "run/git-history.h"
#include "run/secrets.h"
#include "run/run.h"

static gboolean color;

static void report(gboolean ok, gboolean essential, const char *what, const char *detail)
{
	const char *mark = ok ? "ok  " : essential ? "FAIL" : "warn";
	if (color)
		printf("%s%s\033[0m  %s", ok ? "\033[32m" : essential ? "\033[31m" : "\033[33m", mark, what);
	else
		printf("%s  %s", mark, what);
	printf("%s%s\n", detail ? ": " : "", detail ? detail : "");
}

static char *read_line(const char *path)
{
	char *s = NULL;
	if (!g_file_get_contents(path, &s, NULL, NULL))
		return NULL;
	return g_strstrip(s);
}

/* A child that tries what the supervisor does first. A bare fork, not
 * vr_fork_helper: it is a probe, not a helper. It makes one system call
 * and _exits while the doctor waits for it, blocks no signal and has none
 * to hand on, so the death signal and the parent check would guard a
 * window that does not exist. */
static gboolean can_unshare_user(void)
{
	pid_t pid = fork();
	if (pid < 0)
		return FALSE;
	if (pid == 0)
		_exit(unshare(CLONE_NEWUSER | CLONE_NEWNS) == 0 ? 0 : 1);
	int status;
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

/* --project DIR: the project's own problems. FALSE when hidden files are
 * readable through its git repository (the same check and message as at
 * the start of a run, without the cache or time limit). */
static gboolean doctor_project(const char *project)
{
	if (!g_file_test(project, G_FILE_TEST_IS_DIR)) {
		report(FALSE, TRUE, "project", "not a directory; expected --project DIR");
		return FALSE;
	}
	g_autoptr(VrConfig) config = vr_config_new();
	g_autoptr(GError) error = NULL;
	if (!vr_config_load_all(config, project, NULL, &error)) {
		report(FALSE, TRUE, "project config", error->message);
		return FALSE;
	}
	VrGitScan scan;
	vr_run_history_scan(&scan, NULL, config);
	VrGitHistory *h = vr_git_history_start(project, config->policy, &scan, NULL, FALSE);
	if (!h) {
		report(TRUE, FALSE, "git history", "no repository in the project, .git hidden, or no git");
		return TRUE;
	}
	g_autoptr(GPtrArray) masked = NULL;
	g_autoptr(GPtrArray) paths = vr_git_history_finish(h, G_MAXINT, NULL, &masked);
	gboolean clean = paths->len == 0 && masked->len == 0;
	g_autofree char *msg = clean ? NULL : vr_git_history_message(paths, masked);
	report(clean, TRUE, "git history", msg ? msg : "no hidden or masked file tracked or in the history");
	return clean;
}

static const char usage[] =
	"Usage: vault-run doctor [--project DIR]\nChecks user namespaces, /dev/fuse, fusermount3, "
	"seccomp, Landlock and the cgroup for limits; exit 0 when a sandbox can run.\n"
	"With --project: also whether DIR's git repository holds files the policy hides\n"
	"(exit 1 when it does).\n";

int vr_cmd_doctor(int argc, char **argv)
{
	g_autofree char *project = NULL;
	const GOptionEntry entries[] = {{"project", 0, 0, G_OPTION_ARG_FILENAME, &project, NULL, NULL}, {NULL}};
	const VrCliOptions o = {"doctor", entries, FALSE, NULL};
	int status;
	if (!vr_cli_options_parse(&o, usage, &argc, &argv, &status))
		return status;
	if (argc > 1) {
		vr_error("doctor takes only --project DIR; see vault-run doctor --help");
		return VR_EXIT_ERROR;
	}
	color = isatty(STDOUT_FILENO) && !g_getenv("NO_COLOR");
	gboolean usable = TRUE;

	g_autofree char *release = read_line("/proc/sys/kernel/osrelease");
	report(TRUE, FALSE, "kernel", release);

	g_autofree char *max_ns = read_line("/proc/sys/user/max_user_namespaces");
	gboolean userns = can_unshare_user();
	g_autofree char *ns_detail = userns ? g_strdup_printf("max_user_namespaces=%s", max_ns ? max_ns : "?")
	                                    : g_strdup(vr_userns_diagnose());
	report(userns, TRUE, "user namespaces", ns_detail);
	usable &= userns;

	gboolean fuse = access("/dev/fuse", R_OK | W_OK) == 0;
	report(fuse, TRUE, "/dev/fuse",
	       fuse ? NULL
	            : access("/dev/fuse", F_OK) == 0
	                  ? "not readable and writable by this user; fix: 'sudo chmod 0666 /dev/fuse' (Debian's default)"
	                  : "missing; fix: 'sudo modprobe fuse' (and inside a container: --device /dev/fuse)");
	usable &= fuse;

	g_autofree char *fusermount = g_find_program_in_path("fusermount3");
	report(fusermount != NULL, FALSE, "fusermount3 (for `vault-run mount` as a user)",
	       fusermount ? fusermount : "missing; fix: 'sudo apt-get install fuse3'");

	gboolean seccomp = prctl(PR_GET_SECCOMP, 0, 0, 0, 0) >= 0;
	report(seccomp, TRUE, "seccomp", seccomp ? NULL : "the kernel lacks CONFIG_SECCOMP_FILTER");
	usable &= seccomp;

	long abi = syscall(SYS_landlock_create_ruleset, NULL, 0, LANDLOCK_CREATE_RULESET_VERSION);
	g_autofree char *ll = abi > 0 ? g_strdup_printf("ABI %ld", abi)
	                              : g_strdup("not available (add 'landlock' to the lsm= boot parameter)");
	report(abi > 0, FALSE, "Landlock", ll);

	/* The helper vault-run execs for --net allow= and --key. */
	char proxy[PATH_MAX];
	gboolean have_proxy = vr_find_helper_executable("vault-run-proxy", VR_LIBEXECDIR, proxy, sizeof proxy) == 0;
	g_autofree char *proxy_detail =
		have_proxy ? g_strdup(proxy)
		           : g_strdup_printf("missing (looked at %s and in " VR_LIBEXECDIR "); fix: install vault-run with "
		                             "`cmake --install`, or run it from its build directory",
		                             proxy);
	report(have_proxy, FALSE, "network proxy (--net allow=, --key)", proxy_detail);

	/* Which mechanism --memory/--pids/--cpu would use (run/cgroup.c). */
	VrIdentity id;
	vr_userns_identity(&id);
	VrLimits all = {1ULL << 30, 100, 1};
	g_autofree char *cg_detail = NULL;
	gboolean limits = vr_cgroup_probe(&all, id.host_root, &cg_detail) != VR_CGROUP_NONE;
	report(limits, FALSE, "cgroup limits (--memory, --pids, --cpu)", cg_detail);

	g_autofree char *bwrap = g_find_program_in_path("bwrap");
	report(TRUE, FALSE, "bubblewrap (only for bench/)", bwrap ? bwrap : "not installed");

	gboolean project_ok = !project || doctor_project(project);
	printf(usable ? "vault-run can run sandboxes here.\n"
	              : "vault-run cannot run sandboxes here until the FAIL lines are fixed.\n");
	if (usable && !project_ok)
		printf("... but the --project check failed (see the FAIL line above).\n");
	return usable && project_ok ? 0 : 1;
}
