/* Pid 1 of the sandbox (no glib here). It builds the root, starts COMMAND as
 * its only child, forwards the supervisor's signals to it, reaps whatever
 * gets reparented, and exits with COMMAND's status; the kernel then kills
 * everything left in the pid namespace. Non-dumpable, so /proc/1/environ,
 * /proc/1/mem and /proc/1/exe are closed to COMMAND; /proc/1/cmdline is
 * blanked. */
#include "sandbox/sandbox.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <grp.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/cleanup.h"
#include "common/exitcode.h"
#include "common/fd-util.h"
#include "common/log.h"
#include "common/proc.h"

static const int forwarded[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2, SIGCONT};

static const char *env_get(char *const *envp, const char *name)
{
	size_t n = strlen(name);
	for (; envp && *envp; envp++)
		if (strncmp(*envp, name, n) == 0 && (*envp)[n] == '=')
			return *envp + n + 1;
	return NULL;
}

/* execvp's search, done here so a missing COMMAND is 127 and one that
 * cannot run is 126, each with its own message, as a shell would say. */
static _Noreturn void exec_command(const VrSandboxSpec *spec)
{
	const char *cmd = spec->argv[0];
	char path[4096];
	int saw_eacces = 0;
	if (strchr(cmd, '/')) {
		execve(cmd, spec->argv, spec->envp);
		int e = errno;
		vr_die_errno(e == ENOENT ? VR_EXIT_NOT_FOUND : VR_EXIT_CANNOT_EXEC, e, "%s", cmd);
	}
	const char *p = env_get(spec->envp, "PATH");
	if (!p)
		p = "/usr/local/bin:/usr/bin:/bin";
	while (*p) {
		const char *end = strchrnul(p, ':');
		int n = snprintf(path, sizeof path, "%.*s/%s", (int)(end - p), end == p ? "." : p, cmd);
		p = *end ? end + 1 : end;
		if (n <= 0 || (size_t)n >= sizeof path)
			continue;
		struct stat st;
		if (stat(path, &st) < 0 || S_ISDIR(st.st_mode))
			continue;
		execve(path, spec->argv, spec->envp);
		if (errno == EACCES || errno == ENOEXEC || errno == EPERM)
			saw_eacces = errno;
	}
	if (saw_eacces)
		vr_die_errno(VR_EXIT_CANNOT_EXEC, saw_eacces, "%s", cmd);
	vr_die(VR_EXIT_NOT_FOUND, "%s: command not found", cmd);
}

static _Noreturn void run_child(const VrSandboxSpec *spec)
{
	sigset_t none;
	sigemptyset(&none);
	for (size_t i = 0; i < sizeof forwarded / sizeof *forwarded; i++)
		signal(forwarded[i], SIG_DFL);
	sigprocmask(SIG_SETMASK, &none, NULL);
	if (spec->new_session && setsid() < 0)
		vr_die_errno(VR_EXIT_ERROR, errno, "setsid");
	int r = vr_sandbox_drop_bounding();
	if (r < 0)
		vr_die_errno(VR_EXIT_ERROR, -r, "cannot drop the capability bounding set");
	if (spec->switch_uid) {
		/* Host root: COMMAND runs as the unprivileged mapped id, never as
		 * the host's uid 0 (DESIGN.md invariant 5). */
		if (setgroups(0, NULL) < 0 || setresgid(spec->agent_gid, spec->agent_gid, spec->agent_gid) < 0 ||
		    setresuid(spec->agent_uid, spec->agent_uid, spec->agent_uid) < 0)
			vr_die_errno(VR_EXIT_ERROR, errno, "cannot switch to uid %u", (unsigned)spec->agent_uid);
	}
	if ((r = vr_drop_all_caps()) < 0)
		vr_die_errno(VR_EXIT_ERROR, -r, "cannot drop capabilities");
	if ((r = vr_sandbox_limit_nofile()) < 0)
		vr_die_errno(VR_EXIT_ERROR, -r, "cannot lower RLIMIT_NOFILE");
	if (vr_close_from(3) < 0)
		vr_die(VR_EXIT_ERROR, "cannot close inherited descriptors");
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
		vr_die_errno(VR_EXIT_ERROR, errno, "no_new_privs");
	if ((r = vr_sandbox_landlock_scope()) < 0)
		vr_die_errno(VR_EXIT_ERROR, -r, "cannot apply the Landlock scopes");
	if ((r = vr_sandbox_load_seccomp(spec)) < 0)
		vr_die_errno(VR_EXIT_ERROR, -r, "cannot load the seccomp filter");
	exec_command(spec);
}

/* COMMAND's arguments in memory of our own: the originals may lie in the
 * argument area blank_cmdline() clears. */
static char **copy_argv(char *const *argv)
{
	size_t n = 0;
	while (argv[n])
		n++;
	char **copy = calloc(n + 1, sizeof *copy);
	for (size_t i = 0; copy && i < n; i++)
		if (!(copy[i] = strdup(argv[i])))
			copy = NULL; /* exits below; nothing to free for */
	if (!copy)
		vr_die(VR_EXIT_ERROR, "cannot copy COMMAND's arguments: out of memory");
	return copy;
}

/* /proc/1/cmdline is readable by every process of the pid namespace,
 * dumpable or not, and pid 1 is a clone of the supervisor: it would show
 * vault-run's whole command line to COMMAND (bind sources, the log's path,
 * a value given to --setenv or a key given on it). So pid 1 zeroes its copy
 * of the argument strings (the memory /proc reads them from: arg_start to
 * arg_end of /proc/self/stat) before COMMAND exists. Best effort: a stat
 * line that does not parse leaves it as it is. */
static void blank_cmdline(void)
{
	char buf[4096];
	vr_cleanup_fd int fd = open("/proc/self/stat", O_RDONLY | O_CLOEXEC);
	ssize_t n = fd >= 0 ? read(fd, buf, sizeof buf - 1) : -1;
	vr_clear_fd(&fd);
	if (n <= 0)
		return;
	buf[n] = '\0';
	/* After the comm's closing parenthesis (a comm may hold spaces and
	 * parentheses), field 3 on; arg_start and arg_end are fields 48, 49. */
	char *p = strrchr(buf, ')');
	unsigned long start = 0, end = 0;
	for (int field = 2; p && field < 49; field++) {
		p = strchr(p + 1, ' ');
		if (p && field + 1 == 48)
			start = strtoul(p + 1, NULL, 10);
		else if (p && field + 1 == 49)
			end = strtoul(p + 1, NULL, 10);
	}
	if (start && end > start)
		memset((void *)start, 0, end - start);
}

void vr_sandbox_main(const VrSandboxSpec *spec)
{
	/* Die with the supervisor; the byte on sync_fd arrives only after it
	 * has set us up, and EOF means it died before that (PDEATHSIG race). */
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	char c;
	if (read(spec->sync_fd, &c, 1) != 1)
		_exit(VR_EXIT_ERROR);
	prctl(PR_SET_DUMPABLE, 0);

	/* The root is built while the view daemons confine themselves; the
	 * second byte says they did and serve. EOF: one of them failed (it
	 * said why), so COMMAND never starts. Only then the first request to
	 * a view: the working directory inside it. */
	vr_sandbox_build_root(spec);
	if (read(spec->sync_fd, &c, 1) != 1)
		_exit(VR_EXIT_ERROR);
	close(spec->sync_fd);
	vr_sandbox_enter_cwd(spec);

	sigset_t set;
	sigemptyset(&set);
	for (size_t i = 0; i < sizeof forwarded / sizeof *forwarded; i++)
		sigaddset(&set, forwarded[i]);
	sigaddset(&set, SIGCHLD);
	sigprocmask(SIG_BLOCK, &set, NULL);

	VrSandboxSpec run = *spec;
	run.argv = copy_argv(spec->argv);
	blank_cmdline();

	pid_t child = fork();
	if (child < 0)
		vr_die_errno(VR_EXIT_ERROR, errno, "fork");
	if (child == 0)
		run_child(&run);

	/* Pid 1 keeps nothing it does not need either, except CAP_KILL: as
	 * host root COMMAND runs under another uid, and forwarding a signal to
	 * it needs that. Not setresuid: a credential change would clear
	 * PR_SET_PDEATHSIG and make pid 1 dumpable again. */
	vr_sandbox_drop_bounding();
	vr_sandbox_keep_only_kill();
	vr_close_from(3);

	for (;;) {
		siginfo_t si;
		int sig = sigwaitinfo(&set, &si);
		if (sig < 0)
			continue;
		if (sig != SIGCHLD) {
			/* Terminal-generated signals (SI_KERNEL) already reached
			 * COMMAND through its process group: do not double them. */
			if (si.si_code != SI_KERNEL)
				kill(child, sig);
			continue;
		}
		int st;
		pid_t pid;
		while ((pid = waitpid(-1, &st, WNOHANG)) > 0)
			if (pid == child)
				_exit(vr_exit_status(st));
	}
}
