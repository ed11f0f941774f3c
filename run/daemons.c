/* The run's view daemons: the project's and one per other writable
 * directory (run/views.h), each a fork of the supervisor that runs
 * vr_view_run() and reports "mounted" then "ready" on a pipe. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "audit/journal.h"
#include "common/confine.h"
#include "common/exitcode.h"
#include "common/fd-util.h"
#include "common/cleanup.h"
#include "common/log.h"
#include "common/proc.h"
#include "common/test-hook.h"
#include "run/run-private.h"
#include "run/secrets.h"
#include "run/startup.h"
#include "run/view-settings.h"

/* Waits for pid with a deadline; SIGKILL after it. A pidfd makes the wait
 * wake the moment the child ends (a sleep loop cost ~50 ms per run). */
int vr_run_wait_deadline(pid_t pid, int seconds)
{
	int st = 0;
	vr_cleanup_fd int pfd = (int)syscall(SYS_pidfd_open, pid, 0);
	if (pfd >= 0) {
		struct pollfd p = {pfd, POLLIN, 0};
		int r;
		do
			r = poll(&p, 1, seconds * 1000);
		while (r < 0 && errno == EINTR);
		vr_clear_fd(&pfd);
		if (r > 0 && waitpid(pid, &st, 0) == pid)
			return st;
	} else {
		for (int i = 0; i < seconds * 200; i++) {
			pid_t r = waitpid(pid, &st, WNOHANG);
			if (r == pid || (r < 0 && errno == ECHILD))
				return st;
			struct timespec ts = {0, 5 * 1000 * 1000};
			nanosleep(&ts, NULL);
		}
	}
	kill(pid, SIGKILL);
	waitpid(pid, &st, 0);
	return st;
}

/* Forks a view daemon with options O. *READY_FD gets its two lines:
 * "mounted", then "ready" (await_line). FILTER_FD, unless NULL, gets the
 * end of a pipe the daemon reads its compiled seccomp filter from (until
 * EOF; nothing: it compiles the filter itself). CLOSE_IN_CHILD: fds of
 * ours the daemon must not keep, ending with -1 (the sending end of the
 * event socket, so the main daemon never holds its own peer; the log, for
 * the others). OWN_MOUNT_NS: the daemon mounts in a mount namespace of its
 * own (run/views.h). The pid, or -1 (logged). */
static pid_t start_daemon(const VrViewOptions *opts, const int *close_in_child, bool own_mount_ns, int *ready_fd,
                          int *filter_fd)
{
	*ready_fd = -1;
	vr_cleanup_pair int ready[2] = {-1, -1}, filter[2] = {-1, -1};
	if (pipe2(ready, O_CLOEXEC) < 0 || (filter_fd && pipe2(filter, O_CLOEXEC) < 0)) {
		vr_log_errno(errno, "pipe");
		return -1;
	}
	/* SIGTERM, not SIGKILL: the daemon flushes the audit log on it. */
	pid_t pid = vr_fork_helper(SIGTERM, 1);
	if (pid < 0) {
		vr_log_errno(errno, "fork");
		return -1;
	}
	if (pid == 0) {
		/* Out of the terminal's process group: ^C and ^Z are for the
		 * agent; a ^C here would unmount the view under it. */
		setpgid(0, 0);
		close(ready[0]);
		for (const int *c = close_in_child; c && *c != -1; c++)
			if (*c >= 0)
				close(*c);
		vr_git_history_close_inherited();
		if (own_mount_ns && vr_views_enter_own_mount_ns() < 0) {
			vr_log_errno(errno, "the view of %s cannot have a mount namespace of its own", opts->audit_root);
			_exit(1);
		}
		VrViewOptions o = *opts;
		o.ready_fd = ready[1];
		if (filter_fd) {
			close(filter[1]);
			o.seccomp_fd = filter[0];
		}
		_exit(vr_view_run(&o) < 0 ? (vr_view_audit_failed() ? VR_VIEW_EXIT_AUDIT_FAILED : 1) : 0);
	}
	setpgid(pid, pid); /* either side may run first */
	vr_clear_fd(&ready[1]);
	*ready_fd = vr_steal_fd(&ready[0]);
	if (filter_fd) {
		vr_clear_fd(&filter[0]);
		*filter_fd = vr_steal_fd(&filter[1]);
	}
	return pid;
}

/* Waits for the daemon's next line, WANT: "mounted" (the mount exists; the
 * sandbox may bind it) or "ready" (it has confined itself and its audit log
 * holds the run's first records: only now may it serve, and COMMAND start;
 * the pipe stays open for "stopped", await_stop). Lines, not EOF: the
 * daemon's unmount keeper holds a copy of the pipe until it has closed its
 * descriptors. On
 * anything else the daemon is reaped (*PID becomes -1), the pipe closed,
 * and -1 returned. WHAT names the daemon in messages. */
static int await_line(pid_t *pid, int *ready_fd, const char *want, const char *what)
{
	char buf[16] = "";
	/* Bounded, and a SIGTERM or ^C meanwhile ends the start-up: a daemon
	 * that hangs before its line (it once waited on its own mount) must
	 * not hang the run with it. */
	int timeout_ms = vr_test_startup_timeout_ms(VR_STARTUP_TIMEOUT_MS);
	int w = vr_startup_wait(*ready_fd, timeout_ms);
	ssize_t n = w < 0 ? w : vr_read_line(*ready_fd, buf, sizeof buf);
	if (n > 0 && strcmp(buf, want) == 0)
		return 0;
	vr_clear_fd(ready_fd);
	if (w == -ETIMEDOUT) {
		vr_error("%s did not say it was %s within %g s; stopping", what,
		         strcmp(want, "ready") == 0 ? "ready" : "mounted", timeout_ms / 1000.0);
		kill(*pid, SIGKILL);
	} else if (w < 0) {
		kill(*pid, SIGTERM);
		kill(*pid, SIGCONT);
	}
	int st = vr_run_wait_deadline(*pid, 5);
	*pid = -1;
	if (w == 0 && vr_exit_status(st) != VR_VIEW_EXIT_AUDIT_FAILED) /* it said why */
		vr_error("%s could not be %s (daemon exit status %d)", what,
		         strcmp(want, "ready") == 0 ? "started" : "mounted", vr_exit_status(st));
	return -1;
}

/* The daemon's seccomp filter, compiled here, written in one write of at
 * most PIPE_BUF bytes (atomic: the daemon reads all of it or nothing, and
 * then compiles it itself), then FD is closed. A daemon that died already
 * must not take us with it: SIGPIPE is ignored for that write. */
static void write_daemon_filter(int fd_in, const VrSeccompProg *prog)
{
	vr_cleanup_fd int fd = fd_in;
	size_t n = prog->insns ? prog->len * sizeof *prog->insns : 0;
	if (fd >= 0 && n && n <= PIPE_BUF) {
		struct sigaction ign = {.sa_handler = SIG_IGN}, old;
		sigaction(SIGPIPE, &ign, &old);
		(void)!write(fd, prog->insns, n);
		sigaction(SIGPIPE, &old, NULL);
	}
}

static void send_daemon_filter(int fd)
{
	VrSeccompProg prog = {NULL, 0};
	if (fd >= 0 && vr_confine_seccomp_prepare(VR_CONFINE_UMOUNT_NOOP, &prog) < 0)
		vr_seccomp_prog_free(&prog);
	write_daemon_filter(fd, &prog);
	vr_seccomp_prog_free(&prog);
}

/* Options shared by every daemon of the run: who the agent is; the
 * view's settings, resolved as `vault-run mount` resolves them. */
static void view_options_base(VrViewOptions *o, const VrRun *r)
{
	vr_view_options_init(o);
	const VrViewSettings given = vr_run_view_settings(r->plan);
	vr_view_settings_apply(o, &given, r->config);
	o->allow_other = true;
	if (r->id.host_root) {
		o->present_uid = r->agent_uid;
		o->present_gid = r->agent_gid;
	}
	o->foreground_signals = true;
}

/* The project's view: the run's log, its event socket, its journal. */
static pid_t start_view(VrRun *r, int *ready_fd, int *filter_fd)
{
	const VrRunPlan *plan = r->plan;
	VrRunAudit *audit = &r->audit;
	VrViewOptions o;
	view_options_base(&o, r);
	o.project = r->project;
	o.mountpoint = r->project;
	o.agent_root = plan->mount_at; /* where the sandbox sees it: what its .git files name */
	o.policy = r->config->policy;
	o.audit_path = audit->view_path;
	/* The state-dir log was created O_EXCL by us: the daemon appends to
	 * that very file rather than reopening a path. */
	o.audit_fd = audit->log_fd;
	o.run_id = audit->run_id;
	o.event_fd = audit->daemon_fd;
	vr_run_audit_view_options(audit, &o);
	/* The undo journal (docs/undo.md): <run-id>.journal next to the log.
	 * Without it the run still goes on: a journal is a convenience. */
	vr_cleanup_fd int journal = -1; /* the daemon's copy is its own */
	if (!plan->journal_off && vr_journal_dir_create(r->project, audit->run_id, &journal) == 0)
		o.journal_max_size = plan->journal_max_size;
	o.journal_dir_fd = journal;
	return start_daemon(&o, (const int[]){audit->send_fd, -1}, false, ready_fd, filter_fd);
}

/* One of the run's other views (run/views.h): the run's policy relative to
 * its directory, its records sent to the main daemon, which writes them
 * into the run's log; content scanning as in the project, but not in a
 * profile's or a worktree's directory, where the harness or git keeps its
 * own credentials. Its daemon opens the directory through the descriptor
 * opened before any view was mounted, keeps neither the log nor the main
 * daemon's end of the socket, and mounts in a namespace of its own. The
 * pid, or -1 (logged). */
static pid_t start_extra_view(VrExtraView *e, const VrRun *r, int *filter_fd)
{
	const VrRunAudit *audit = &r->audit;
	VrViewOptions o;
	view_options_base(&o, r);
	g_autofree char *root = g_strdup_printf("/proc/self/fd/%d", e->root_fd);
	o.project = root;
	o.mountpoint = VR_VIEWS_MOUNTPOINT;
	o.policy = e->policy;
	if (e->guarded)
		o.scan_mode = VR_VIEW_SCAN_OFF;
	o.run_id = audit->run_id;
	o.audit_forward_fd = audit->send_fd;
	o.audit_root = e->root;
	o.keyfile_fd = vr_run_keyfiles_view_fd(r->keys.files, e->root); /* its key files (run/keyfiles.h) */
	e->pid = start_daemon(&o, (const int[]){audit->daemon_fd, audit->log_fd, audit->dir_fd, -1}, true,
	                      &e->ready_fd, filter_fd);
	vr_clear_fd(&o.keyfile_fd);
	vr_clear_fd(&e->root_fd); /* the daemon has it */
	return e->pid;
}

/* Once its daemon said "mounted": the clone of its mount that the
 * sandbox attaches (VR_OP_ATTACH at OP). 0 or -1 (said). */
static int take_extra_view(VrExtraView *e, VrRootPlan *l)
{
	g_autofree char *what = g_strdup_printf("the view of %s", vr_views_label(e));
	if (await_line(&e->pid, &e->ready_fd, "mounted", what) < 0 ||
	    vr_views_clone_tree(e->pid, what, &e->tree_fd) < 0)
		return -1;
	g_array_index(l->ops, VrSandboxOp, e->attach_op).fd = e->tree_fd;
	return 0;
}

void vr_run_signal_daemons(VrRun *r, gboolean with_main, int sig)
{
	if (with_main && r->daemon > 0)
		kill(r->daemon, sig);
	for (guint i = 0; i < r->guards->len; i++)
		if (g_array_index(r->guards, pid_t, i) > 0)
			kill(g_array_index(r->guards, pid_t, i), sig);
}

/* A view daemon's last line, "stopped N" (fusefs/view.c, report_stopped),
 * within SECONDS: N, its exit status to come. -1: none (it ended without
 * one); -ETIMEDOUT: nothing in time. */
static int read_stopped(int fd, int seconds)
{
	struct pollfd p = {fd, POLLIN, 0};
	int r;
	do
		r = poll(&p, 1, seconds * 1000);
	while (r < 0 && errno == EINTR);
	if (r == 0)
		return -ETIMEDOUT;
	char buf[32] = "";
	int code = -1;
	if (r < 0 || vr_read_line(fd, buf, sizeof buf) <= 0 || sscanf(buf, "stopped %d", &code) != 1 || code < 0)
		return -1;
	return code;
}

/* Waits for a daemon told to stop; warns on an unclean end. A view daemon
 * that says "stopped" on *READY_FD (then closed) has unmounted, sealed and
 * flushed its logs: its exit is not waited for, which saves the host
 * watch's teardown (5-17 ms, on every run's critical path). It may outlive
 * the supervisor by that long, in the run's own namespaces; its
 * PR_SET_PDEATHSIG then ends it. Otherwise (no line: a proxy, or a daemon
 * that died) its exit, within 10 s in all, then SIGKILL. */
static int await_stop(pid_t pid, int *ready_fd, const char *what)
{
	if (pid <= 0)
		return 0;
	int code = -1;
	if (ready_fd && *ready_fd >= 0) {
		code = read_stopped(*ready_fd, 10);
		vr_clear_fd(ready_fd);
	}
	if (code < 0) /* after 10 s without a word: SIGKILL now */
		code = vr_exit_status(vr_run_wait_deadline(pid, code == -ETIMEDOUT ? 0 : 10));
	if (code != 0 && code != VR_VIEW_EXIT_AUDIT_FAILED)
		vr_warning("%s ended with status %d", what, code);
	return code;
}

int vr_run_stop_daemon(pid_t pid, int *ready_fd, const char *what)
{
	if (pid <= 0)
		return 0;
	kill(pid, SIGTERM);
	/* A stopped daemon would keep the SIGTERM pending for the whole
	 * deadline: let it run so it can flush and exit now. */
	kill(pid, SIGCONT);
	return await_stop(pid, ready_fd, what);
}

void vr_run_stop_guards(VrRun *r)
{
	/* All told at once (each takes its ~15 ms to unmount and flush), and
	 * once: a second SIGTERM after the daemon dropped its handler would
	 * kill it before its last records are sent. */
	vr_run_signal_daemons(r, FALSE, SIGTERM);
	vr_run_signal_daemons(r, FALSE, SIGCONT);
	for (guint i = 0; i < r->guards->len; i++)
		await_stop(g_array_index(r->guards, pid_t, i),
		           i < r->guard_ready->len ? &g_array_index(r->guard_ready, int, i) : NULL, "a view");
}

/* The other views first: their namespaces then hold no copy of the
 * project's view. With other views, the daemons' filter is compiled once,
 * before the first of them, and each gets it (and EOF) right after its
 * fork: a pipe still open here would be inherited by the next daemon, and
 * the one reading it would wait for that daemon's end. */
static int start_guards(VrRun *r, const VrSeccompProg *filter)
{
	for (guint i = 0; i < r->views->views->len; i++) {
		VrExtraView *e = r->views->views->pdata[i];
		int fd = -1;
		pid_t pid = start_extra_view(e, r, &fd);
		write_daemon_filter(fd, filter);
		if (pid < 0)
			return -1;
		g_array_append_val(r->guards, e->pid);
	}
	return 0;
}

int vr_run_start_daemons(VrRun *r)
{
	VrSeccompProg shared = {NULL, 0};
	if (r->views->views->len && vr_confine_seccomp_prepare(VR_CONFINE_UMOUNT_NOOP, &shared) < 0)
		vr_seccomp_prog_free(&shared); /* each compiles its own */
	int ret = start_guards(r, &shared);
	/* The key files' values are the views' now: none left here for the
	 * project's daemon or the sandbox, both forks of this process. */
	vr_run_keyfiles_forget(r->keys.files);
	int filter = -1;
	if (ret == 0)
		r->daemon = start_view(r, &r->daemon_ready, &filter);
	/* Only the daemon reads the events; nobody else may hold its end. */
	vr_clear_fd(&r->audit.daemon_fd);
	if (ret == 0 && r->daemon < 0)
		ret = -1;
	/* The daemon's filter is compiled while it mounts, not in the daemon
	 * between "mounted" and "ready"; the pipe is closed before anything
	 * else is forked (EOF for the daemon). */
	if (ret == 0 && shared.insns)
		write_daemon_filter(filter, &shared);
	else if (ret == 0)
		send_daemon_filter(filter);
	vr_seccomp_prog_free(&shared);
	return ret;
}

int vr_run_await_mounted(VrRun *r)
{
	if (await_line(&r->daemon, &r->daemon_ready, "mounted", "the project view") < 0 ||
	    vr_startup_phase("mounted") < 0)
		return -1;
	for (guint i = 0; i < r->views->views->len; i++) {
		VrExtraView *e = r->views->views->pdata[i];
		int ret = take_extra_view(e, &r->root);
		g_array_index(r->guards, pid_t, i) = e->pid;
		if (ret < 0)
			return -1;
		g_array_append_val(r->guard_ready, e->ready_fd); /* theirs to close now */
		e->ready_fd = -1;
	}
	if (r->guards->len && vr_startup_phase("guards") < 0)
		return -1;
	return 0;
}

gboolean vr_run_await_ready(VrRun *r)
{
	gboolean all = await_line(&r->daemon, &r->daemon_ready, "ready", "the project view") == 0;
	for (guint i = 0; i < r->guards->len && all; i++)
		all = await_line(&g_array_index(r->guards, pid_t, i), &g_array_index(r->guard_ready, int, i), "ready",
		                 "a guarded view") == 0;
	return all;
}
