/* The supervisor: host-side decisions, namespaces, the view daemon, the
 * sandbox, and the wait. It never starts a thread: unshare(CLONE_NEWUSER)
 * demands a single-threaded caller, and the children are forked from it.
 *
 *   supervisor (user+mount ns) ── daemon: vr_view_run() over the project
 *        │                      ── a daemon per other writable directory (run/views.h:
 *        │                         --bind, profiles, worktrees), each in its own mount ns
 *        │                      ── proxy (--net allow=…), listening in the sandbox's netns
 *        └── clone(PID|NS|IPC|UTS[|NET]) ── pid 1 (sandbox/init.c) ── COMMAND
 *
 * Audit: the supervisor and the proxy send their records (run-start,
 * connect, run-end) as datagrams to the main daemon, which writes the run's
 * one log (run/audit.c); so do the other views (fusefs/audit.c).
 */
#include "run/run.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <pwd.h>
#include <grp.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "common/cleanup.h"
#include "common/exitcode.h"
#include "common/fd-util.h"
#include "common/log.h"
#include "common/test-hook.h"
#include "policy/config.h"
#include "run/cgroup.h"
#include "run/dir-check.h"
#include "net/allow.h"
#include "net/proxy.h"
#include "run/audit.h"
#include "run/copy.h"
#include "run/startup.h"
#include "run/secrets.h"
#include "run/views.h"
#include "audit/sinks.h"
#include "audit/state-dir.h"
#include "audit/journal.h"
#include "fusefs/view.h"
#include "common/confine.h"

#define AGENT_ID 65534
#define VR_EXIT_TIMEOUT 124

extern char **environ;

typedef struct {
	GArray *ops;        /* VrSandboxOp */
	GPtrArray *strings; /* owns every string the ops point to */
} OpList;

static const char *keep(OpList *l, char *s)
{
	g_ptr_array_add(l->strings, s);
	return s;
}

static void add_op(OpList *l, VrOpKind kind, const char *src, const char *dest, int flags, unsigned mode)
{
	VrSandboxOp op = {kind, src ? keep(l, g_strdup(src)) : NULL, keep(l, g_strdup(dest)), flags, mode, -1};
	g_array_append_val(l->ops, op);
}

/* The system part of the root: the host's /usr & co, or another root fs. */
static void add_system(OpList *l, const char *rootfs)
{
	if (rootfs) {
		g_autoptr(GDir) dir = g_dir_open(rootfs, 0, NULL);
		const char *name;
		while (dir && (name = g_dir_read_name(dir))) {
			if (g_strv_contains((const char *const[]){"proc", "dev", "tmp", "run", "sys", "home", "root", NULL}, name))
				continue;
			g_autofree char *src = g_build_filename(rootfs, name, NULL);
			g_autofree char *dest = g_strconcat("/", name, NULL);
			g_autofree char *target = g_file_read_link(src, NULL);
			if (target)
				add_op(l, VR_OP_SYMLINK, target, dest, 0, 0);
			else
				add_op(l, VR_OP_BIND, src, dest, VR_BIND_RO, 0);
		}
		return;
	}
	static const char *const top[] = {"/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", NULL};
	for (const char *const *p = top; *p; p++) {
		struct stat st;
		if (lstat(*p, &st) < 0)
			continue;
		if (S_ISLNK(st.st_mode)) {
			g_autofree char *target = g_file_read_link(*p, NULL);
			if (target)
				add_op(l, VR_OP_SYMLINK, target, *p, 0, 0);
		} else {
			add_op(l, VR_OP_BIND, *p, *p, VR_BIND_RO, 0);
		}
	}
}

/* Whether FILE (passwd/group format) has an entry whose third field is id. */
static gboolean db_has_id(const char *file, unsigned id)
{
	g_autofree char *data = NULL;
	if (!g_file_get_contents(file, &data, NULL, NULL))
		return FALSE;
	g_auto(GStrv) lines = g_strsplit(data, "\n", -1);
	for (int i = 0; lines[i]; i++) {
		g_auto(GStrv) f = g_strsplit(lines[i], ":", 4);
		if (g_strv_length(f) >= 3 && strtoul(f[2], NULL, 10) == id && f[2][0])
			return TRUE;
	}
	return FALSE;
}

/* /etc: what programs need to run, resolve names and verify TLS, and no
 * more (no shadow, no ssh config, no machine-id). Symlinks are resolved
 * here, on the host: /etc/resolv.conf often points into /run, which the
 * sandbox replaces with an empty tmpfs. */
static void add_etc(OpList *l, uid_t uid, gid_t gid, const char *user, const char *home)
{
	static const char *const etc[] = {
		"hosts", "host.conf", "resolv.conf", "nsswitch.conf", "gai.conf", "services", "protocols",
		"ssl", "ca-certificates", "ca-certificates.conf", "pki", "crypto-policies", "localtime",
		"timezone", "alternatives", "ld.so.cache", "ld.so.conf", "ld.so.conf.d", "os-release",
		"bash.bashrc", "inputrc", "profile", "shells", "mime.types", "gitconfig", "papersize",
		"locale.alias", "locale.conf", "default/locale", NULL,
	};
	for (const char *const *p = etc; *p; p++) {
		g_autofree char *host = g_strconcat("/etc/", *p, NULL);
		char real[PATH_MAX];
		if (!realpath(host, real))
			continue;
		add_op(l, VR_OP_BIND, real, host, VR_BIND_RO, 0);
	}
	/* passwd/group: the host files, plus an entry for the agent when the
	 * host resolves it elsewhere (SSSD, LDAP), so `id`, git and ssh-less
	 * tools find a name and a home. */
	struct {
		const char *file;
		gboolean has;
		char *extra;
	} db[2] = {
		{"/etc/passwd", db_has_id("/etc/passwd", uid),
		 g_strdup_printf("%s:x:%u:%u::%s:/bin/sh\n", user, (unsigned)uid, (unsigned)gid, home)},
		{"/etc/group", db_has_id("/etc/group", gid), g_strdup_printf("%s:x:%u:\n", user, (unsigned)gid)},
	};
	for (int i = 0; i < 2; i++) {
		if (db[i].has) {
			add_op(l, VR_OP_BIND, db[i].file, db[i].file, VR_BIND_RO | VR_BIND_TRY, 0);
		} else {
			g_autofree char *data = NULL;
			g_file_get_contents(db[i].file, &data, NULL, NULL);
			GString *s = g_string_new(data ? data : "");
			if (s->len && s->str[s->len - 1] != '\n')
				g_string_append_c(s, '\n');
			g_string_append(s, db[i].extra);
			add_op(l, VR_OP_FILE, s->str, db[i].file, 0, 0);
			g_string_free(s, TRUE);
		}
		g_free(db[i].extra);
	}
}

static gboolean path_is_under(const char *path, const char *dir)
{
	size_t n = strlen(dir);
	if (strcmp(dir, "/") == 0)
		return TRUE;
	return strncmp(path, dir, n) == 0 && (path[n] == '\0' || path[n] == '/');
}

static int write_json_status(int fd, const char *fmt, ...) G_GNUC_PRINTF(2, 3);
static int write_json_status(int fd, const char *fmt, ...)
{
	if (fd < 0)
		return 0;
	va_list ap;
	va_start(ap, fmt);
	g_autofree char *s = g_strdup_vprintf(fmt, ap);
	va_end(ap);
	return vr_write_all(fd, s, strlen(s));
}

/* `--dry-run`: one line per bridged host port. */
static void print_bridges(const VrNetAllow *allow)
{
	for (guint i = 0; allow && i < vr_net_allow_bridge_count(allow); i++) {
		const VrNetBridge *b = vr_net_allow_bridge(allow, i);
		printf("net: localhost %u -> the host's 127.0.0.1:%u (%s)\n", b->port, b->port,
		       b->kind == VR_BRIDGE_HTTP ? "http: inference and listing paths only" : "tcp: the whole port");
	}
}

static void print_plan(const VrRunPlan *plan, const VrNetAllow *allow, const OpList *l, char **envp,
                       const char *cwd)
{
	static const char *const kinds[] = {"bind", "tmpfs", "dir", "symlink", "proc", "dev", "file", "remount-ro", "attach"};
	printf("project: %s\n", plan->project);
	if (plan->net == VR_NET_ALLOW) {
		printf("net: allow");
		for (guint i = 0; i < plan->net_allow->len; i++)
			printf("%s%s", i ? "," : " ", (const char *)g_ptr_array_index(plan->net_allow, i));
		if (!plan->net_allow->len)
			printf(" (no domain)");
		printf(" (proxy: http 127.0.0.1:%u, socks5 127.0.0.1:%u%s)\n", VR_PROXY_DEFAULT_HTTP_PORT,
		       VR_PROXY_DEFAULT_SOCKS_PORT, plan->net_allow_private ? "; private addresses allowed" : "");
		print_bridges(allow);
	} else {
		printf("net: %s\n", plan->net == VR_NET_HOST ? "host" : "none");
	}
	printf("cwd: %s\n", cwd);
	for (guint i = 0; i < l->ops->len; i++) {
		const VrSandboxOp *op = &g_array_index(l->ops, VrSandboxOp, i);
		if (op->kind == VR_OP_FILE)
			printf("%-10s %s (synthesized)\n", kinds[op->kind], op->dest);
		else
			printf("%-10s %s%s%s%s%s%s\n", kinds[op->kind], op->dest, op->src ? " <- " : "",
			       op->src ? op->src : "", op->flags & VR_BIND_RO ? " ro" : "",
			       op->flags & VR_BIND_TRY ? " try" : "", op->flags & VR_BIND_STAGED ? " (view)" : "");
	}
	for (char **e = envp; *e; e++) {
		const char *eq = strchr(*e, '=');
		printf("env %.*s\n", (int)(eq ? eq - *e : (long)strlen(*e)), *e);
	}
	printf("command:");
	for (char **a = plan->command; *a; a++)
		printf(" %s", *a);
	printf("\n");
}

/* Waits for pid with a deadline; SIGKILL after it. A pidfd makes the wait
 * wake the moment the child ends (a sleep loop cost ~50 ms per run). */
static int wait_deadline(pid_t pid, int seconds)
{
	int st = 0;
	int pfd = (int)syscall(SYS_pidfd_open, pid, 0);
	if (pfd >= 0) {
		struct pollfd p = {pfd, POLLIN, 0};
		int r;
		do
			r = poll(&p, 1, seconds * 1000);
		while (r < 0 && errno == EINTR);
		close(pfd);
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
	int ready[2], filter[2] = {-1, -1};
	if (pipe2(ready, O_CLOEXEC) < 0 || (filter_fd && pipe2(filter, O_CLOEXEC) < 0)) {
		vr_log_errno(errno, "pipe");
		return -1;
	}
	pid_t supervisor = getpid();
	pid_t pid = fork();
	if (pid < 0) {
		vr_log_errno(errno, "fork");
		close(ready[0]);
		close(ready[1]);
		if (filter_fd) {
			close(filter[0]);
			close(filter[1]);
		}
		return -1;
	}
	if (pid == 0) {
		/* SIGTERM, not SIGKILL: the daemon flushes the audit log on it. */
		prctl(PR_SET_PDEATHSIG, SIGTERM);
		if (getppid() != supervisor)
			_exit(1);
		/* Out of the terminal's process group: ^C and ^Z are for the
		 * agent; a ^C here would unmount the view under it. */
		setpgid(0, 0);
		sigset_t none;
		sigemptyset(&none);
		sigprocmask(SIG_SETMASK, &none, NULL);
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
	close(ready[1]);
	*ready_fd = ready[0];
	if (filter_fd) {
		close(filter[0]);
		*filter_fd = filter[1];
	}
	return pid;
}

/* Waits for the daemon's next line, WANT: "mounted" (the mount exists; the
 * sandbox may bind it) or "ready" (it has confined itself and its audit log
 * holds the run's first records: only now may it serve, and COMMAND start;
 * the pipe is closed then). Lines, not EOF: the daemon's unmount keeper
 * holds a copy of the pipe until it has closed its descriptors. On
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
	gboolean ok = n > 0 && strcmp(buf, want) == 0;
	if (ok && strcmp(want, "ready") != 0)
		return 0;
	close(*ready_fd);
	*ready_fd = -1;
	if (ok)
		return 0;
	if (w == -ETIMEDOUT) {
		vr_error("%s did not say it was %s within %g s; stopping", what,
		         strcmp(want, "ready") == 0 ? "ready" : "mounted", timeout_ms / 1000.0);
		kill(*pid, SIGKILL);
	} else if (w < 0) {
		kill(*pid, SIGTERM);
		kill(*pid, SIGCONT);
	}
	int st = wait_deadline(*pid, 5);
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
static void write_daemon_filter(int fd, const VrSeccompProg *prog)
{
	size_t n = prog->insns ? prog->len * sizeof *prog->insns : 0;
	if (fd >= 0 && n && n <= PIPE_BUF) {
		struct sigaction ign = {.sa_handler = SIG_IGN}, old;
		sigaction(SIGPIPE, &ign, &old);
		(void)!write(fd, prog->insns, n);
		sigaction(SIGPIPE, &old, NULL);
	}
	if (fd >= 0)
		close(fd);
}

static void send_daemon_filter(int fd)
{
	VrSeccompProg prog = {NULL, 0};
	if (fd >= 0 && vr_confine_seccomp_prepare(VR_CONFINE_UMOUNT_NOOP, &prog) < 0)
		vr_seccomp_prog_free(&prog);
	write_daemon_filter(fd, &prog);
	vr_seccomp_prog_free(&prog);
}

/* Options shared by every daemon of the run: who the agent is. */
static void view_options_base(VrViewOptions *o, const VrIdentity *id, uid_t agent_uid, gid_t agent_gid)
{
	vr_view_options_init(o);
	o->allow_other = true;
	if (id->host_root) {
		o->present_uid = agent_uid;
		o->present_gid = agent_gid;
	}
	o->foreground_signals = true;
}

static pid_t start_view(const char *project, const VrRunPlan *plan, const VrConfig *config,
                        const VrIdentity *id, uid_t agent_uid, gid_t agent_gid, const VrRunAudit *audit,
                        int *ready_fd, int *filter_fd)
{
	VrViewOptions o;
	view_options_base(&o, id, agent_uid, agent_gid);
	o.project = project;
	o.mountpoint = project;
	o.agent_root = plan->mount_at; /* where the sandbox sees it: what its .git files name */
	o.policy = config->policy;
	vr_run_scan_options(&o, plan, config);
	o.audit_path = audit->view_path;
	/* The state-dir log was created O_EXCL by us: the daemon appends to
	 * that very file rather than reopening a path. */
	o.audit_fd = audit->log_fd;
	o.run_id = audit->run_id;
	o.event_fd = audit->daemon_fd;
	vr_run_audit_view_options(audit, &o);
	const char *level = plan->audit_level ? plan->audit_level : config->audit_level;
	if (level && vr_audit_level_parse(level) >= 0)
		o.audit_level = (VrAuditLevel)vr_audit_level_parse(level);
	/* The undo journal (docs/undo.md): <run-id>.journal next to the log.
	 * Without it the run still goes on: a journal is a convenience. */
	if (!plan->journal_off && vr_journal_dir_create(project, audit->run_id, &o.journal_dir_fd) == 0)
		o.journal_max_size = plan->journal_max_size;
	pid_t pid = start_daemon(&o, (const int[]){audit->send_fd, -1}, false, ready_fd, filter_fd);
	if (o.journal_dir_fd >= 0)
		close(o.journal_dir_fd);
	return pid;
}

/* One of the run's other views (run/views.h): the run's policy relative to
 * its directory, its records sent to the main daemon, which writes them
 * into the run's log; content scanning as in the project, but not in a
 * profile's or a worktree's directory, where the harness or git keeps its
 * own credentials. Its daemon opens the directory through the descriptor
 * opened before any view was mounted, keeps neither the log nor the main
 * daemon's end of the socket, and mounts in a namespace of its own. The
 * pid, or -1 (logged). */
static pid_t start_extra_view(VrExtraView *e, const VrRunPlan *plan, const VrConfig *config, const VrIdentity *id,
                              uid_t agent_uid, gid_t agent_gid, const VrRunAudit *audit, int *filter_fd)
{
	VrViewOptions o;
	view_options_base(&o, id, agent_uid, agent_gid);
	g_autofree char *root = g_strdup_printf("/proc/self/fd/%d", e->root_fd);
	o.project = root;
	o.mountpoint = VR_VIEWS_MOUNTPOINT;
	o.policy = e->policy;
	if (e->guarded)
		o.scan_mode = VR_VIEW_SCAN_OFF;
	else
		vr_run_scan_options(&o, plan, config);
	o.run_id = audit->run_id;
	o.audit_forward_fd = audit->send_fd;
	o.audit_root = e->root;
	const char *level = plan->audit_level ? plan->audit_level : config->audit_level;
	if (level && vr_audit_level_parse(level) >= 0)
		o.audit_level = (VrAuditLevel)vr_audit_level_parse(level);
	e->pid = start_daemon(&o, (const int[]){audit->daemon_fd, audit->log_fd, audit->dir_fd, -1}, true,
	                      &e->ready_fd, filter_fd);
	close(e->root_fd); /* the daemon has it */
	e->root_fd = -1;
	return e->pid;
}

/* Once its daemon said "mounted": the clone of its mount that the
 * sandbox attaches (VR_OP_ATTACH at OP). 0 or -1 (said). */
static int take_extra_view(VrExtraView *e, OpList *l)
{
	g_autofree char *what = g_strdup_printf("the view of %s", vr_views_label(e));
	if (await_line(&e->pid, &e->ready_fd, "mounted", what) < 0 ||
	    vr_views_clone_tree(e->pid, what, &e->tree_fd) < 0)
		return -1;
	g_array_index(l->ops, VrSandboxOp, e->attach_op).fd = e->tree_fd;
	return 0;
}

/* A writable bind goes through a view (run/views.h), a --dev-bind is a
 * device node, anything else is read-only as it is. FALSE: refused (said). */
static gboolean add_bind_op(OpList *l, VrViews *views, const char *given, const char *dest, int flags)
{
	g_autoptr(GError) error = NULL;
	g_autofree char *src = NULL;
	if (!vr_views_resolve_source(views, given, flags, &src, &error)) {
		if (error)
			vr_error("%s", error->message);
		return error == NULL; /* a missing --bind-try source is skipped */
	}
	if (flags & VR_BIND_DEV) {
		struct stat st;
		if (stat(src, &st) < 0) {
			if (flags & VR_BIND_TRY)
				return TRUE;
			vr_error("--dev-bind %s: %s", src, g_strerror(errno));
			return FALSE;
		}
		if (!S_ISCHR(st.st_mode) && !S_ISBLK(st.st_mode)) {
			vr_error("--dev-bind %s: not a device node (--dev-bind binds device nodes only, "
			         "--bind a directory or file, --ro-bind what must stay as it is)", src);
			return FALSE;
		}
		add_op(l, VR_OP_BIND, src, dest, flags | VR_BIND_NOFOLLOW, 0);
		return TRUE;
	}
	if (flags & VR_BIND_RO) {
		add_op(l, VR_OP_BIND, src, dest, flags | VR_BIND_NOFOLLOW, 0);
		return TRUE;
	}
	g_autofree char *routed = NULL;
	int routed_flags;
	if (!vr_views_route(views, src, flags, &routed, &routed_flags, &error)) {
		if (error)
			vr_error("%s", error->message);
		return error == NULL; /* a missing --bind-try source is skipped */
	}
	add_op(l, VR_OP_BIND, routed, dest, routed_flags, 0);
	return TRUE;
}

/* The views every writable bind of the run needs, registered before any
 * is routed: guarded directories first, then the binds. FALSE: refused. */
static gboolean plan_views(VrViews *views, const VrRunPlan *plan, const VrConfig *config, guint first_user)
{
	g_autoptr(GError) error = NULL;
	/* vault-run's own: the logs, the rules, the --audit file. */
	g_autofree char *state = NULL, *user_config = vr_config_user_path();
	if (vr_state_base_dir(&state) == 0)
		vr_views_protect(views, state, "vault-run's state directory (the audit logs)", FALSE);
	g_autofree char *config_dir = g_path_get_dirname(user_config);
	vr_views_protect(views, config_dir, "vault-run's config directory", FALSE);
	VrAuditSinks sinks = {0};
	const char *list = plan->audit_path ? plan->audit_path : config->audit_path;
	if (list && vr_audit_sinks_parse(list, &sinks, NULL) && sinks.file)
		vr_views_protect(views, sinks.file, "the audit log", TRUE);
	vr_audit_sinks_clear(&sinks);
	for (guint i = 0; plan->guarded_dirs && i < plan->guarded_dirs->len; i++)
		if (!vr_views_add_guarded(views, g_ptr_array_index(plan->guarded_dirs, i), &error))
			goto refused;
	for (guint i = 0; config->rw_binds && i < config->rw_binds->len; i++)
		if (!vr_views_add_bind(views, g_ptr_array_index(config->rw_binds, i), VR_BIND_TRY, &error))
			goto refused;
	for (guint i = first_user; i < plan->mounts->len; i++) {
		const VrUserMount *m = &g_array_index(plan->mounts, VrUserMount, i);
		if (m->kind == VR_OP_BIND && !(m->flags & (VR_BIND_RO | VR_BIND_DEV)) &&
		    !vr_views_add_bind(views, m->src, m->flags, &error))
			goto refused;
	}
	vr_views_prune(views);
	return TRUE;
refused:
	vr_error("%s", error->message);
	return FALSE;
}

/* Each view's attach op, first of all: the binds take from them. */
static void add_attach_ops(OpList *l, VrViews *views)
{
	for (guint i = 0; i < views->views->len; i++) {
		VrExtraView *e = views->views->pdata[i];
		g_autofree char *stage = vr_views_stage(e);
		VrSandboxOp op = {VR_OP_ATTACH, keep(l, g_strdup(vr_views_label(e))), keep(l, g_strdup(stage)), 0, 0, -1};
		g_array_insert_val(l->ops, i, op);
		e->attach_op = i;
	}
}

static void signal_daemons(pid_t daemon, GArray *guards, int sig)
{
	if (daemon > 0)
		kill(daemon, sig);
	for (guint i = 0; i < guards->len; i++)
		if (g_array_index(guards, pid_t, i) > 0)
			kill(g_array_index(guards, pid_t, i), sig);
}
static void continue_daemons(pid_t daemon, GArray *guards) { signal_daemons(daemon, guards, SIGCONT); }
static void kill_daemons(pid_t daemon, GArray *guards) { signal_daemons(daemon, guards, SIGKILL); }

/* Waits for a daemon told to stop; warns on an unclean end. */
static int await_stop(pid_t pid, const char *what)
{
	if (pid <= 0)
		return 0;
	int st = wait_deadline(pid, 10);
	if (!(WIFEXITED(st) && WEXITSTATUS(st) == 0) && vr_exit_status(st) != VR_VIEW_EXIT_AUDIT_FAILED)
		vr_warning("%s ended with status %d", what, vr_exit_status(st));
	return vr_exit_status(st);
}

/* SIGTERM and wait, as at the end of a run. */
static int stop_daemon(pid_t pid, const char *what)
{
	if (pid <= 0)
		return 0;
	kill(pid, SIGTERM);
	/* A stopped daemon would keep the SIGTERM pending for the whole
	 * deadline: let it run so it can flush and exit now. */
	kill(pid, SIGCONT);
	return await_stop(pid, what);
}

/* One byte to the sandbox's pid 1. A pid 1 that died building its root
 * said why itself (its exit status follows). */
static void sync_send(int fd, char c)
{
	if (send(fd, &c, 1, MSG_NOSIGNAL) != 1 && errno != EPIPE && errno != ECONNRESET)
		vr_log_errno(errno, "cannot start the sandbox");
}

/* Where a run's audit log FILE may not be (run/audit.h): every host path
 * the sandbox binds (the project's view, --ro-bind, the system directories
 * and /etc files) and what the other views serve (writable binds, profile
 * directories; a file view: its one file). The strings stay L's and VIEWS'. */
static GArray *audit_unders(const OpList *l, const VrViews *views, const char *project)
{
	static const char why[] = "the agent could read its own audit log there";
	GArray *u = g_array_new(FALSE, FALSE, sizeof(VrAuditUnder));
	VrAuditUnder p = {project, "the project", why};
	g_array_append_val(u, p);
	for (guint i = 0; i < l->ops->len; i++) {
		const VrSandboxOp *op = &g_array_index(l->ops, VrSandboxOp, i);
		if (op->kind != VR_OP_BIND || !op->src || strcmp(op->src, project) == 0)
			continue;
		VrAuditUnder b = {op->src, "a path bound into the sandbox,", why};
		g_array_append_val(u, b);
	}
	for (guint i = 0; i < views->views->len; i++) {
		const VrExtraView *e = views->views->pdata[i];
		VrAuditUnder b = {e->only ? e->label : e->root,
		                  e->guarded ? "a directory the sandbox sees," : "a path bound into the sandbox,", why};
		g_array_append_val(u, b);
	}
	return u;
}

/* The proxy variables replace any of the same name the plan let through. */
static char **env_with_proxy(char **envp, const VrProxyOptions *popts)
{
	g_autoptr(GPtrArray) add = g_ptr_array_new_with_free_func(g_free);
	vr_proxy_env(popts, add);
	GPtrArray *out = g_ptr_array_new();
	for (char **e = envp; *e; e++) {
		const char *eq = strchr(*e, '=');
		size_t n = eq ? (size_t)(eq - *e) : strlen(*e);
		gboolean replaced = FALSE;
		for (guint i = 0; i < add->len && !replaced; i++)
			replaced = strncmp(g_ptr_array_index(add, i), *e, n + 1) == 0;
		if (!replaced)
			g_ptr_array_add(out, g_strdup(*e));
	}
	for (guint i = 0; i < add->len; i++)
		g_ptr_array_add(out, g_strdup(g_ptr_array_index(add, i)));
	g_ptr_array_add(out, NULL);
	return (char **)g_ptr_array_free(out, FALSE);
}

int vr_supervisor_run(VrRunPlan *plan)
{
	/* From the first step on, a signal waits for the next phase or wait of
	 * the start-up (run/startup.h), then for the wait loop: never lands
	 * half-way through a step. */
	int sfd = vr_startup_begin();
	if (sfd < 0)
		return VR_EXIT_ERROR;
	/* Host-side decisions first: nothing below may fail half-way in the
	 * sandbox for a reason we could have said here. */
	char project[PATH_MAX];
	if (!realpath(plan->project ? plan->project : ".", project)) {
		int e = errno;
		if (vr_dir_check("project", plan->project ? plan->project : ".") == 0)
			vr_error("project %s: %s", plan->project ? plan->project : ".", strerror(e));
		return VR_EXIT_ERROR;
	}
	if (vr_dir_check("project", project) < 0)
		return VR_EXIT_ERROR;
	g_free(plan->project);
	plan->project = g_strdup(project);
	const char *mount_at = plan->mount_at ? plan->mount_at : project;

	/* Config: built-ins → user → project (tighten only) → --policy → flags.
	 * Its [sandbox] settings are defaults the command line overrides. */
	g_autoptr(VrConfig) config = vr_config_new();
	g_autoptr(GError) error = NULL;
	if (!vr_config_load_all(config, project, plan->policy_file, &error)) {
		vr_error("%s", error->message);
		return VR_EXIT_ERROR;
	}
	for (guint i = 0; i < plan->rules->len; i++) {
		const VrPlanRule *r = &g_array_index(plan->rules, VrPlanRule, i);
		if (!vr_policy_add(config->policy, r->kind, r->pattern, "command line", (int)i + 1, FALSE, &error)) {
			vr_error("%s", error->message);
			return VR_EXIT_ERROR;
		}
	}
	char home_real[PATH_MAX];
	if (!vr_views_check_home(config->policy, project, realpath(g_get_home_dir(), home_real) ? home_real : NULL,
	                         plan->allow_home_project, &error)) {
		vr_error("%s", error->message);
		return VR_EXIT_ERROR;
	}
		vr_limits_fill(&plan->limits, &config->limits);
	/* Runs git while the rest is set up; reported before COMMAND starts. */
	g_autoptr(VrGitHistory) history = vr_run_history_start(project, plan, config);
	g_autoptr(VrNetAllow) allow = NULL;
	if (plan->net == VR_NET_DEFAULT && config->net &&
	    !vr_run_plan_add_net(plan, config->net, "config: net", &error)) {
		vr_error("%s", error->message);
		return VR_EXIT_ERROR;
	}
	/* allow-localhost alone keeps the domains chosen elsewhere (a profile's,
	 * the config's) and needs the proxy even with none of them. */
	if (plan->net_localhost->len && plan->net == VR_NET_HOST)
		vr_warning("--net allow-localhost is ignored: the run shares the host's network");
	else if (plan->net_localhost->len)
		plan->net = VR_NET_ALLOW;
	if (plan->net == VR_NET_ALLOW) {
		if (!allow)
			allow = vr_net_allow_new();
		for (guint i = 0; i < plan->net_allow->len; i++) {
			if (!vr_net_allow_add(allow, g_ptr_array_index(plan->net_allow, i), &error)) {
				vr_error("--net allow: %s", error->message);
				return VR_EXIT_ERROR;
			}
		}
		for (guint i = 0; i < plan->net_localhost->len; i++) {
			g_autofree char *item =
			        g_strconcat("allow-localhost=", (char *)g_ptr_array_index(plan->net_localhost, i), NULL);
			if (!vr_net_allow_add(allow, item, &error)) {
				vr_error("--net %s", error->message);
				return VR_EXIT_ERROR;
			}
		}
		if (plan->net_allow_private)
			vr_net_allow_set_private(allow, TRUE);
	}
	/* The proxy's ports are fixed here (inside the sandbox's own netns
	 * nothing else can hold them), so the environment can name them before
	 * the proxy exists. */
	VrProxyOptions popts;
	vr_proxy_options_init(&popts);
	popts.allow = allow;
	popts.ready_fd = -1;
	vr_env_add_config(plan, config, project);

	VrIdentity id;
	vr_userns_identity(&id);
	uid_t agent_uid = id.host_root ? AGENT_ID : id.uid;
	gid_t agent_gid = id.host_root ? AGENT_ID : id.gid;
	struct passwd *pw = getpwuid(agent_uid);
	g_autofree char *user = g_strdup(pw ? pw->pw_name : g_getenv("USER") ? g_getenv("USER") : "user");
	const char *home_env = g_getenv("HOME");
	g_autofree char *home = g_strdup(home_env && home_env[0] == '/' ? home_env : pw ? pw->pw_dir : "/");

	g_auto(GStrv) envp = vr_env_build(plan, environ, home, user, &error);
	if (!envp) {
		vr_error("%s", error->message);
		return VR_EXIT_ERROR;
	}
	if (plan->net == VR_NET_ALLOW) {
		char **with = env_with_proxy(envp, &popts);
		g_strfreev(envp);
		envp = with;
	}

	/* The working directory: the same place inside the view. */
	g_autofree char *cwd = NULL;
	g_autofree char *host_cwd = g_get_current_dir();
	if (plan->chdir)
		cwd = g_strdup(plan->chdir);
	else if (path_is_under(host_cwd, project))
		cwd = g_strconcat(mount_at, host_cwd + strlen(project), NULL);
	else
		cwd = g_strdup(mount_at);

	OpList l = {g_array_new(FALSE, TRUE, sizeof(VrSandboxOp)), g_ptr_array_new_with_free_func(g_free)};
	const char *rootfs = plan->rootfs;
	guint first_user = 0;
	if (!rootfs && plan->mounts->len) {
		const VrUserMount *m = &g_array_index(plan->mounts, VrUserMount, 0);
		if (m->kind == VR_OP_BIND && strcmp(m->dest, "/") == 0) {
			rootfs = m->src; /* bwrap's `--ro-bind DIR /` as the first mount */
			first_user = 1;
		}
	}
	g_autofree char *rootfs_abs = rootfs ? g_canonicalize_filename(rootfs, NULL) : NULL;
	if (rootfs_abs && !g_file_test(rootfs_abs, G_FILE_TEST_IS_DIR)) {
		vr_error("--rootfs %s: not a directory", rootfs_abs);
		return VR_EXIT_ERROR;
	}
	add_system(&l, rootfs_abs);
	if (!rootfs_abs)
		add_etc(&l, agent_uid, agent_gid, user, home);
	add_op(&l, VR_OP_PROC, NULL, "/proc", 0, 0);
	add_op(&l, VR_OP_DEV, NULL, "/dev", 0, 0);
	add_op(&l, VR_OP_TMPFS, NULL, "/tmp", VR_TMPFS_AGENT, 01777);
	add_op(&l, VR_OP_TMPFS, NULL, "/var/tmp", VR_TMPFS_AGENT, 01777);
	add_op(&l, VR_OP_TMPFS, NULL, "/run", 0, 0755);
	/* An empty home, unless the project is the home or holds it. */
	if (strcmp(home, "/") != 0 && !path_is_under(home, mount_at) && strcmp(home, "/tmp") != 0)
		add_op(&l, VR_OP_TMPFS, NULL, home, VR_TMPFS_AGENT, 0700);
	/* The project: the view, mounted over the project in our namespace. */
	add_op(&l, VR_OP_BIND, project, mount_at, VR_BIND_DIR, 0);
	/* One door: every writable bind through a view (run/views.h). */
	g_autoptr(VrViews) views = vr_views_new(project);
	for (guint i = 0; config->ro_binds && i < config->ro_binds->len; i++) {
		const char *p = g_ptr_array_index(config->ro_binds, i);
		if (!add_bind_op(&l, views, p, p, VR_BIND_RO | VR_BIND_TRY))
			return VR_EXIT_ERROR;
	}
	if (!plan_views(views, plan, config, first_user))
		return VR_EXIT_ERROR;
	for (guint i = 0; config->rw_binds && i < config->rw_binds->len; i++) {
		const char *p = g_ptr_array_index(config->rw_binds, i);
		if (!add_bind_op(&l, views, p, p, VR_BIND_TRY))
			return VR_EXIT_ERROR;
	}
	for (guint i = first_user; i < plan->mounts->len; i++) {
		const VrUserMount *m = &g_array_index(plan->mounts, VrUserMount, i);
		if (m->kind == VR_OP_BIND) {
			g_autofree char *src = g_canonicalize_filename(m->src, NULL);
			if (!(m->flags & VR_BIND_TRY) && access(src, F_OK) < 0) {
				vr_error("bind source %s: %s", src, strerror(errno));
				return VR_EXIT_ERROR;
			}
			if (!add_bind_op(&l, views, src, m->dest, m->flags))
				return VR_EXIT_ERROR;
		} else {
			add_op(&l, m->kind, m->src, m->dest, m->kind == VR_OP_TMPFS ? VR_TMPFS_AGENT : 0,
			       m->kind == VR_OP_TMPFS ? 0755 : 0);
		}
	}

	/* The profile's state files: the run works on copies (run/copy.h). */
	g_auto(VrRunCopies) copies = {0};
	if (!vr_run_copies_prepare(&copies, project, plan, &error)) {
		vr_error("%s", error->message);
		return VR_EXIT_ERROR;
	}
	for (guint i = 0; i < vr_run_copies_count(&copies); i++) {
		g_autofree char *src = NULL;
		int flags;
		if (!vr_views_route_own_file(views, vr_run_copies_copy_path(&copies, i), &src, &flags, &error)) {
			vr_error("%s", error->message);
			return VR_EXIT_ERROR;
		}
		add_op(&l, VR_OP_BIND, src, vr_run_copies_host_path(&copies, i), flags, 0);
	}
	add_attach_ops(&l, views);
	if (!vr_views_build_policies(views, config->policy, &error)) {
		vr_error("%s", error->message);
		return VR_EXIT_ERROR;
	}

	if (plan->dry_run) {
		vr_run_history_report(g_steal_pointer(&history), project);
		print_plan(plan, allow, &l, envp, cwd);
		for (guint i = 0; plan->guarded_dirs && i < plan->guarded_dirs->len; i++) {
			const VrGuardedDir *g = g_ptr_array_index(plan->guarded_dirs, i);
			printf("guarded    %s", g->dir);
			for (guint j = 0; g->readonly && j < g->readonly->len; j++)
				printf("%s%s", j ? "," : " readonly: ", (const char *)g_ptr_array_index(g->readonly, j));
			printf("\n");
		}
		vr_cgroup_print_plan(&plan->limits, id.host_root);
		return VR_EXIT_OK;
	}

	int fuse_fd = open("/dev/fuse", O_RDWR | O_CLOEXEC);
	if (fuse_fd < 0) {
		vr_error("/dev/fuse: %s (the project view needs FUSE: load the fuse module or get access to /dev/fuse)",
		         strerror(errno));
		return VR_EXIT_ERROR;
	}
	close(fuse_fd);

	int status = VR_EXIT_ERROR;
	gboolean started = FALSE;
	pid_t daemon = -1, proxy = -1, sandbox = -1;
	g_autoptr(GArray) guards = g_array_new(FALSE, FALSE, sizeof(pid_t));
	g_autoptr(GArray) guard_ready = g_array_new(FALSE, FALSE, sizeof(int)); /* their "ready" pipes */
	int daemon_ready = -1;
	VrSeccompProg sandbox_seccomp = {NULL, 0};
	VrCgroup *cgroup = NULL;
	VrRunAudit audit = {.log_fd = -1, .dir_fd = -1, .daemon_fd = -1, .send_fd = -1};
	g_autoptr(GArray) under = NULL;
	g_autofree char *features = NULL, *policy_hash = NULL;
	if (vr_startup_phase("begin") < 0)
		goto out;

	/* Before the user namespace: the cgroup helper keeps the host's credentials. */
	if (vr_limits_any(&plan->limits) && !(cgroup = vr_cgroup_start(&plan->limits, id.host_root)))
		goto out;
	if (cgroup && vr_startup_phase("cgroup") < 0)
		goto out;

	/* The log is created (or opened) now, as the user, before any
	 * namespace and before anything is mounted; never where the sandbox
	 * could read it. */
	under = audit_unders(&l, views, project);
	if (vr_run_audit_open(&audit, project, plan, config, (const VrAuditUnder *)under->data, under->len) < 0)
		goto out;
	/* Queued on the socket before the daemon exists, so it is the first
	 * thing the daemon reads from it. */
	features = g_strdup_printf("userns,mountns,pidns,ipcns,utsns%s,seccomp%s,fuse",
	                           plan->net != VR_NET_HOST ? ",netns" : "", plan->net == VR_NET_ALLOW ? ",proxy" : "");
	policy_hash = vr_run_audit_policy_hash(config->policy);
	vr_run_audit_send_start(&audit, plan->command, project, features, policy_hash);
	if (plan->gitfile_dir)
		vr_run_audit_send_gitfile(&audit, plan->gitfile_ok, plan->gitfile_dir, plan->gitfile_why);
	if (vr_startup_phase("audit") < 0)
		goto out;

	pid_t helper;
	int go_fd;
	if (vr_userns_prepare(&id, &helper, &go_fd) < 0 || vr_userns_enter(&id, helper, go_fd) < 0)
		goto out;
	if (vr_startup_phase("userns") < 0)
		goto out;

	/* The other views first: their namespaces then hold no copy of the
	 * project's view. */
	/* With other views, the daemons' filter is compiled once, before the
	 * first of them, and each gets it (and EOF) right after its fork: a
	 * pipe still open here would be inherited by the next daemon, and the
	 * one reading it would wait for that daemon's end. */
	VrSeccompProg shared_filter = {NULL, 0};
	if (views->views->len && vr_confine_seccomp_prepare(VR_CONFINE_UMOUNT_NOOP, &shared_filter) < 0)
		vr_seccomp_prog_free(&shared_filter); /* each compiles its own */
	for (guint i = 0; i < views->views->len; i++) {
		VrExtraView *e = views->views->pdata[i];
		int filter = -1;
		pid_t pid = start_extra_view(e, plan, config, &id, agent_uid, agent_gid, &audit, &filter);
		write_daemon_filter(filter, &shared_filter);
		if (pid < 0) {
			vr_seccomp_prog_free(&shared_filter);
			goto out;
		}
		g_array_append_val(guards, e->pid);
	}
	int daemon_filter = -1;
	daemon = start_view(project, plan, config, &id, agent_uid, agent_gid, &audit, &daemon_ready, &daemon_filter);
	/* Only the daemon reads the events; nobody else may hold its end. */
	close(audit.daemon_fd);
	audit.daemon_fd = -1;
	if (daemon < 0)
		goto out;
	/* The daemon's seccomp filter and COMMAND's are compiled while the
	 * daemon mounts: not in the daemon between "mounted" and "ready", not
	 * in the sandbox's child between "ready" and exec. The pipe is closed
	 * before anything else is forked (EOF for the daemon). */
	if (shared_filter.insns)
		write_daemon_filter(daemon_filter, &shared_filter);
	else
		send_daemon_filter(daemon_filter);
	vr_seccomp_prog_free(&shared_filter);
	if (vr_sandbox_seccomp_prepare(plan->allow_userns, &sandbox_seccomp) < 0)
		vr_seccomp_prog_free(&sandbox_seccomp); /* the child compiles it then, and says why */
	if (vr_startup_phase("daemon") < 0)
		goto out;
	if (await_line(&daemon, &daemon_ready, "mounted", "the project view") < 0 || vr_startup_phase("mounted") < 0)
		goto out;
	for (guint i = 0; i < views->views->len; i++) {
		VrExtraView *e = views->views->pdata[i];
		int r = take_extra_view(e, &l);
		g_array_index(guards, pid_t, i) = e->pid;
		if (r < 0)
			goto out;
		g_array_append_val(guard_ready, e->ready_fd); /* theirs to close now */
		e->ready_fd = -1;
	}
	if (guards->len && vr_startup_phase("guards") < 0)
		goto out;

	vr_run_history_report(g_steal_pointer(&history), project);
	VrSandboxSpec spec = {
		.ops = (const VrSandboxOp *)l.ops->data,
		.n_ops = l.ops->len,
		.argv = plan->command,
		.envp = envp,
		.cwd = cwd,
		.fallback_cwd = mount_at,
		.hostname = plan->hostname,
		.net_none = plan->net != VR_NET_HOST,
		.new_session = plan->new_session,
		.allow_userns = plan->allow_userns,
		.switch_uid = id.host_root,
		.agent_uid = agent_uid,
		.agent_gid = agent_gid,
		.seccomp = sandbox_seccomp,
	};
	/* A socket, not a pipe: the child may have died building its root
	 * when the second byte goes out (MSG_NOSIGNAL, no SIGPIPE). */
	int sync[2];
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sync) < 0) {
		vr_log_errno(errno, "socketpair");
		goto out;
	}
	spec.sync_fd = sync[0];
	unsigned long flags = CLONE_NEWPID | CLONE_NEWNS | CLONE_NEWIPC | CLONE_NEWUTS | SIGCHLD;
	if (spec.net_none)
		flags |= CLONE_NEWNET;
	/* Raw clone without a new stack behaves like fork (the child gets a
	 * copy of ours); we are single-threaded, so that is safe. The child
	 * closes every inherited fd (the audit socket and log included) before
	 * COMMAND runs. */
	sandbox = (pid_t)syscall(SYS_clone, flags, NULL, NULL, NULL, NULL);
	if (sandbox < 0) {
		vr_log_errno(errno, "cannot create the sandbox namespaces");
		close(sync[0]);
		close(sync[1]);
		goto out;
	}
	if (sandbox == 0) {
		close(sync[1]);
		vr_sandbox_main(&spec);
	}
	close(sync[0]);
	for (guint i = 0; i < views->views->len; i++) { /* the sandbox attaches its copies */
		VrExtraView *e = views->views->pdata[i];
		if (e->tree_fd >= 0)
			close(e->tree_fd);
		e->tree_fd = -1;
	}
	/* In its cgroup before it builds its root, so all under it is limited. */
	if (cgroup && vr_cgroup_attach(cgroup, sandbox) < 0) {
		close(sync[1]); /* EOF: the child exits without running COMMAND */
		kill(sandbox, SIGKILL);
		waitpid(sandbox, NULL, 0);
		sandbox = -1;
		goto out;
	}
	/* The phases below end at out:, which kills the sandbox's pid 1: it
	 * waits for its second byte, so COMMAND never starts. */
	if (vr_startup_phase("sandbox") < 0)
		goto out;
	if (plan->net == VR_NET_ALLOW) {
		/* The child waits on sync before building its root: its netns
		 * exists, COMMAND does not run yet, so the proxy listens before
		 * the first connect. */
		g_autofree char *ns = g_strdup_printf("/proc/%d/ns/net", (int)sandbox);
		int netns = open(ns, O_RDONLY | O_CLOEXEC);
		int r = netns < 0 ? -errno : 0;
		if (r == 0) {
			popts.event_fd = audit.send_fd;
			r = vr_proxy_spawn(&popts, netns, &proxy);
			close(netns);
		}
		if (r < 0) {
			vr_log_errno(-r, "cannot start the network proxy");
			proxy = -1;
			close(sync[1]); /* EOF: the child exits without running COMMAND */
			kill(sandbox, SIGKILL);
			waitpid(sandbox, NULL, 0);
			sandbox = -1;
			goto out;
		}
		if (vr_startup_phase("proxy") < 0)
			goto out;
	}
	/* "g": build the root (the views are mounted) while the daemons
	 * confine themselves and write their first audit records. COMMAND
	 * waits for the second byte, sent only once every daemon said
	 * "ready": none serves a request before it is confined, and a log
	 * that cannot be written stops the run before COMMAND starts. */
	sync_send(sync[1], 'g');
	gboolean all_ready = await_line(&daemon, &daemon_ready, "ready", "the project view") == 0;
	for (guint i = 0; i < guards->len && all_ready; i++)
		all_ready = await_line(&g_array_index(guards, pid_t, i), &g_array_index(guard_ready, int, i), "ready",
		                       "a guarded view") == 0;
	if (all_ready)
		audit.serving = true; /* it reads the event socket: run-end waits for it */
	if (!all_ready || vr_startup_phase("ready") < 0) {
		close(sync[1]); /* EOF: pid 1 exits without running COMMAND */
		kill(sandbox, SIGKILL);
		waitpid(sandbox, NULL, 0);
		sandbox = -1;
		goto out;
	}
	write_json_status(plan->json_status_fd, "{ \"child-pid\": %d }\n", (int)sandbox);
	started = TRUE;
	sync_send(sync[1], 'x');
	close(sync[1]);

	gint64 deadline = plan->timeout > 0 ? g_get_monotonic_time() + (gint64)(plan->timeout * G_USEC_PER_SEC) : 0;
	gboolean timed_out = FALSE, daemon_died = FALSE;
	gint64 kill_at = 0, abort_at = 0;
	for (;;) {
		int wst;
		pid_t r;
		gboolean done = FALSE;
		while ((r = waitpid(-1, &wst, WNOHANG)) > 0) {
			if (r == sandbox) {
				status = vr_exit_status(wst);
				sandbox = -1;
				done = TRUE;
			} else if (r == proxy) {
				/* Fail closed: without it the agent just has no network. */
				proxy = -1;
				vr_warning("the network proxy ended (status %d); the sandbox has no network now",
				           vr_exit_status(wst));
			} else {
				gboolean view = r == daemon; /* or one of the other views: */
				for (guint i = 0; i < guards->len && !view; i++) {
					if (g_array_index(guards, pid_t, i) == r) {
						g_array_index(guards, pid_t, i) = -1;
						view = TRUE;
					}
				}
				if (!view)
					continue;
				/* A view stopped for its audit log said why already. */
				gboolean said = r == daemon && vr_exit_status(wst) == VR_VIEW_EXIT_AUDIT_FAILED;
				if (r == daemon)
					daemon = -1;
				daemon_died = TRUE;
				if (!said)
					vr_error("a view daemon died (status %d); stopping the sandbox", vr_exit_status(wst));
				kill(sandbox, SIGKILL);
			}
		}
		if (done)
			break;
		int timeout_ms = -1;
		gint64 now = g_get_monotonic_time();
		if (deadline && !timed_out) {
			if (now >= deadline) {
				timed_out = TRUE;
				vr_error("timed out after %g s; stopping the sandbox", plan->timeout);
				kill(sandbox, SIGTERM);
				kill_at = now + 5 * G_USEC_PER_SEC;
			} else {
				timeout_ms = (int)((deadline - now) / 1000) + 1;
			}
		}
		if (kill_at) {
			if (now >= kill_at) {
				kill(sandbox, SIGKILL);
				kill_at = 0;
				/* Still there 2 s after SIGKILL: a daemon holds it in a FUSE
				 * wait. Killing the daemons aborts the connection. */
				abort_at = now + 2 * G_USEC_PER_SEC;
			} else {
				timeout_ms = (int)((kill_at - now) / 1000) + 1;
			}
		}
		if (abort_at) {
			if (now >= abort_at) {
				vr_error("the sandbox does not end; killing the view daemons");
				kill_daemons(daemon, guards);
				abort_at = 0;
			} else if (timeout_ms < 0 || (abort_at - now) / 1000 + 1 < timeout_ms) {
				timeout_ms = (int)((abort_at - now) / 1000) + 1;
			}
		}
		struct pollfd pfd = {sfd, POLLIN, 0};
		if (poll(&pfd, 1, timeout_ms) <= 0)
			continue;
		struct signalfd_siginfo si;
		if (read(sfd, &si, sizeof si) != sizeof si)
			continue;
		if (si.ssi_signo == SIGCHLD)
			continue;
		/* A signal from the terminal already went to COMMAND through the
		 * process group; only others (kill from an orchestrator) are
		 * forwarded, so COMMAND does not get each ^C twice. */
		if (si.ssi_code != SI_KERNEL)
			kill(sandbox, (int)si.ssi_signo);
		if (si.ssi_signo == SIGTERM || si.ssi_signo == SIGINT || si.ssi_signo == SIGHUP ||
		    si.ssi_signo == SIGQUIT) {
			/* A stopped view daemon must not keep the run alive: a request it
			 * had read before stopping holds its caller in an unkillable
			 * wait. Let the daemons run. A request to end (not SIGINT: an
			 * agent's TUI takes ^C as "stop this step") is enforced after a
			 * grace period, as docker does: SIGKILL of the sandbox, and then,
			 * below, of the daemons, which aborts any request still pending. */
			continue_daemons(daemon, guards);
			if (si.ssi_signo != SIGINT && !kill_at && !timed_out)
				kill_at = g_get_monotonic_time() + 10 * G_USEC_PER_SEC;
		}
	}
	if (sfd >= 0)
		close(sfd);
	if (timed_out)
		status = VR_EXIT_TIMEOUT;
	else if (daemon_died)
		status = VR_EXIT_ERROR;

out:
	if (vr_startup_signal())
		status = 128 + vr_startup_signal();
	if (daemon_ready >= 0)
		close(daemon_ready);
	for (guint i = 0; i < guard_ready->len; i++)
		if (g_array_index(guard_ready, int, i) >= 0)
			close(g_array_index(guard_ready, int, i));
	if (sandbox > 0) {
		kill(sandbox, SIGKILL);
		waitpid(sandbox, NULL, 0);
	}
	if (cgroup)
		vr_cgroup_report(vr_cgroup_finish(cgroup), &plan->limits);
	/* The proxy and the other views first: their last records go out as
	 * they end, and must reach the log before run-end. */
	stop_daemon(proxy, "the network proxy");
	/* All told at once (each takes its ~15 ms to unmount and flush), and
	 * once: a second SIGTERM after the daemon dropped its handler would
	 * kill it before its last records are sent. */
	signal_daemons(-1, guards, SIGTERM);
	signal_daemons(-1, guards, SIGCONT);
	for (guint i = 0; i < guards->len; i++)
		await_stop(g_array_index(guards, pid_t, i), "a view");
	if (daemon > 0 && started)
		vr_run_copies_finish(&copies, mount_at, &audit);
	vr_run_copies_clear(&copies);
	if (daemon > 0)
		vr_run_audit_send_end(&audit, status);
	/* Its log failed at the end (--audit-fail=closed): said, and our error. */
	if (stop_daemon(daemon, "the view daemon") == VR_VIEW_EXIT_AUDIT_FAILED)
		status = VR_EXIT_ERROR;
	if (daemon > 0 && !plan->quiet && !vr_startup_signal())
		vr_run_audit_print_summary(&audit);
	vr_run_audit_close(&audit);
	if (started)
		write_json_status(plan->json_status_fd, "{ \"exit-code\": %d }\n", status);
	/* Everything of the run is reaped, closed and said: end here. Freeing
	 * the config, the plan and the op list would write to pages the
	 * children shared with us, a page fault each (~50, 3-4 ms of CPU on a
	 * slow VM, after the agent ended). */
	fflush(NULL);
	_exit(status);
}
