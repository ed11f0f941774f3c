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
#include "run/run-private.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pwd.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/cleanup.h"
#include "common/exitcode.h"
#include "common/fd-util.h"
#include "common/log.h"
#include "run/dir-check.h"
#include "run/own-dirs.h"
#include "run/keys.h"
#include "run/secrets.h"
#include "run/startup.h"

#define AGENT_ID 65534

extern char **environ;

/* A refusal the run's code put in a GError: said in one line. -1. */
static int refused(const GError *error)
{
	vr_error("%s", error->message);
	return -1;
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

/* `--dry-run`: one line per key (never a value). */
static void print_keys(const VrRunKeys *rk, char **envp)
{
	for (guint i = 0; rk->keys && i < vr_net_keys_count(rk->keys); i++) {
		const VrNetKey *k = vr_net_keys_get(rk->keys, i);
		if (!k->hosts->len) {
			printf("key: %s -> concealed (a sentinel inside, never put in)\n", k->name);
			continue;
		}
		g_autofree char *places = vr_net_key_places_text(k->places);
		printf("key: %s -> ", k->name);
		for (guint j = 0; j < k->hosts->len; j++)
			printf("%s%s", j ? "," : "", (const char *)g_ptr_array_index(k->hosts, j));
		printf(" as %s (a sentinel inside; the proxy puts the value in)\n", places);
	}
	for (guint i = 0; rk->sentinel_only && i < rk->sentinel_only->len; i++)
		printf("key: %s -> a sentinel inside; no proxy (--net none): the value goes nowhere\n",
		       (const char *)g_ptr_array_index(rk->sentinel_only, i));
	for (guint i = 0; rk->unbound && i < rk->unbound->len; i++) {
		const char *name = g_ptr_array_index(rk->unbound, i);
		if (g_environ_getenv(envp, name))
			printf("key: %s -> its real value, not bound: %s\n", name, rk->unbound_why);
	}
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

/* One byte to the sandbox's pid 1. A pid 1 that died building its root
 * said why itself (its exit status follows). */
static void sync_send(int fd, char c)
{
	if (send(fd, &c, 1, MSG_NOSIGNAL) != 1 && errno != EPIPE && errno != ECONNRESET)
		vr_log_errno(errno, "cannot start the sandbox");
}

/* ---- resolve: project, config, network, identity, environment ---------- */

/* The project's real path (the view's and the state directory's key). */
static int resolve_project(VrRun *r)
{
	VrRunPlan *plan = r->plan;
	const char *given = plan->project ? plan->project : ".";
	if (!realpath(given, r->project)) {
		int e = errno;
		if (vr_dir_check("project", given) == 0)
			vr_error("project %s: %s", given, strerror(e));
		return -1;
	}
	if (vr_dir_check("project", r->project) < 0)
		return -1;
	g_free(plan->project);
	plan->project = g_strdup(r->project);
	r->mount_at = plan->mount_at ? plan->mount_at : r->project;
	return 0;
}

/* Config: built-ins → user → project (tighten only) → --policy → flags.
 * Its [sandbox] settings are defaults the command line overrides. */
static int resolve_config(VrRun *r)
{
	VrRunPlan *plan = r->plan;
	g_autoptr(GError) error = NULL;
	r->config = vr_config_new();
	if (!vr_config_load_all(r->config, r->project, plan->policy_file, &error))
		return refused(error);
	for (guint i = 0; i < plan->rules->len; i++) {
		const VrPlanRule *rule = &g_array_index(plan->rules, VrPlanRule, i);
		if (!vr_policy_add(r->config->policy, rule->kind, rule->pattern, "command line", (int)i + 1, FALSE,
		                   &error))
			return refused(error);
	}
	char home_real[PATH_MAX];
	if (!vr_views_check_home(r->config->policy, r->project,
	                         realpath(g_get_home_dir(), home_real) ? home_real : NULL, plan->allow_home_project,
	                         &error))
		return refused(error);
	vr_limits_fill(&plan->limits, &r->config->limits);
	/* Runs git while the rest is set up; reported before COMMAND starts. */
	r->history = vr_run_history_start(r->project, plan, r->config);
	return 0;
}

/* --net allow's patterns and bridged ports, checked before anything starts. */
static int build_allow(VrRun *r)
{
	VrRunPlan *plan = r->plan;
	g_autoptr(GError) error = NULL;
	r->allow = vr_net_allow_new();
	for (guint i = 0; i < plan->net_allow->len; i++) {
		if (!vr_net_allow_add(r->allow, g_ptr_array_index(plan->net_allow, i), &error)) {
			vr_error("--net allow: %s", error->message);
			return -1;
		}
	}
	for (guint i = 0; i < plan->net_localhost->len; i++) {
		g_autofree char *item =
		        g_strconcat("allow-localhost=", (char *)g_ptr_array_index(plan->net_localhost, i), NULL);
		if (!vr_net_allow_add(r->allow, item, &error)) {
			vr_error("--net %s", error->message);
			return -1;
		}
	}
	if (plan->net_allow_private)
		vr_net_allow_set_private(r->allow, TRUE);
	/* The proxy's executable, found now: a missing one is one line before
	 * anything starts, not a sandbox torn down. */
	return vr_proxy_check_executable() < 0 ? -1 : 0;
}

static int resolve_net(VrRun *r)
{
	VrRunPlan *plan = r->plan;
	g_autoptr(GError) error = NULL;
	if (plan->net == VR_NET_DEFAULT && r->config->net &&
	    !vr_run_plan_add_net(plan, r->config->net, "config: net", &error))
		return refused(error);
	/* --key: its hosts join the allow-list (run/keys.h). */
	if (!vr_run_keys_plan(&r->keys, plan, r->config, &error))
		return refused(error);
	/* allow-localhost alone keeps the domains chosen elsewhere (a profile's,
	 * the config's) and needs the proxy even with none of them. */
	if (plan->net_localhost->len && plan->net == VR_NET_HOST)
		vr_warning("--net allow-localhost is ignored: the run shares the host's network");
	else if (plan->net_localhost->len)
		plan->net = VR_NET_ALLOW;
	if (plan->net == VR_NET_ALLOW && build_allow(r) < 0)
		return -1;
	/* The proxy's ports are fixed here (inside the sandbox's own netns
	 * nothing else can hold them), so the environment can name them before
	 * the proxy exists. */
	vr_proxy_options_init(&r->popts);
	r->popts.allow = r->allow;
	r->popts.ready_fd = -1;
	return 0;
}

/* Who the agent is: the host user, or nobody (65534) when we are host root. */
static void resolve_identity(VrRun *r)
{
	vr_userns_identity(&r->id);
	r->agent_uid = r->id.host_root ? AGENT_ID : r->id.uid;
	r->agent_gid = r->id.host_root ? AGENT_ID : r->id.gid;
	struct passwd *pw = getpwuid(r->agent_uid);
	r->user = g_strdup(pw ? pw->pw_name : g_getenv("USER") ? g_getenv("USER") : "user");
	const char *home_env = g_getenv("HOME");
	r->home = g_strdup(home_env && home_env[0] == '/' ? home_env : pw ? pw->pw_dir : "/");
}

/* COMMAND's environment, and its working directory: the same place inside
 * the view. */
static int resolve_environment(VrRun *r)
{
	VrRunPlan *plan = r->plan;
	g_autoptr(GError) error = NULL;
	vr_env_add_config(plan, r->config, r->project);
	r->envp = vr_env_build(plan, environ, r->home, r->user, &error);
	if (!r->envp)
		return refused(error);
	if (plan->net == VR_NET_ALLOW) {
		char **with = env_with_proxy(r->envp, &r->popts);
		g_strfreev(r->envp);
		r->envp = with;
	}
	/* Sentinels in, real values out to the proxy's memfd: before anything
	 * is cloned from this process. */
	if (!vr_run_keys_take_values(&r->keys, &r->envp, &error))
		return refused(error);
	g_autofree char *host_cwd = g_get_current_dir();
	if (plan->chdir)
		r->cwd = g_strdup(plan->chdir);
	else if (vr_path_is_under(host_cwd, r->project))
		r->cwd = g_strconcat(r->mount_at, host_cwd + strlen(r->project), NULL);
	else
		r->cwd = g_strdup(r->mount_at);
	return 0;
}

static int resolve(VrRun *r)
{
	if (resolve_project(r) < 0 || resolve_config(r) < 0 || resolve_net(r) < 0)
		return -1;
	resolve_identity(r);
	return resolve_environment(r);
}

/* ---- the root plan (pure: run/root-plan.c) -------------------------------- */

static int build_root_plan(VrRun *r)
{
	g_autoptr(GError) error = NULL;
	/* The profile's state files: the run works on copies (run/copy.h). */
	if (!vr_run_copies_prepare(&r->copies, r->project, r->plan, &error))
		return refused(error);
	const VrRootInput in = {
		.plan = r->plan, .config = r->config, .project = r->project, .mount_at = r->mount_at,
		.agent_uid = r->agent_uid, .agent_gid = r->agent_gid, .user = r->user, .home = r->home,
		.copies = &r->copies, .key_files = vr_run_keyfiles_paths(r->keys.files),
	};
	r->views = vr_views_new(r->project);
	if (!vr_root_plan_build(&r->root, &in, r->views, &error))
		return refused(error);
	return 0;
}

/* `--dry-run`: what the run would do, nothing started. */
static void print_plan(const VrRun *r)
{
	const VrRunPlan *plan = r->plan;
	printf("project: %s\n", plan->project);
	if (plan->net == VR_NET_ALLOW) {
		printf("net: allow");
		for (guint i = 0; i < plan->net_allow->len; i++)
			printf("%s%s", i ? "," : " ", (const char *)g_ptr_array_index(plan->net_allow, i));
		if (!plan->net_allow->len)
			printf(" (no domain)");
		printf(" (proxy: http 127.0.0.1:%u, socks5 127.0.0.1:%u%s)\n", VR_PROXY_DEFAULT_HTTP_PORT,
		       VR_PROXY_DEFAULT_SOCKS_PORT, plan->net_allow_private ? "; private addresses allowed" : "");
		print_bridges(r->allow);
	} else {
		printf("net: %s\n", plan->net == VR_NET_HOST ? "host" : "none");
	}
	print_keys(&r->keys, r->envp);
	printf("cwd: %s\n", r->cwd);
	vr_root_plan_print(&r->root);
	for (char **e = r->envp; *e; e++) {
		const char *eq = strchr(*e, '=');
		printf("env %.*s\n", (int)(eq ? eq - *e : (long)strlen(*e)), *e);
	}
	printf("command:");
	for (char **a = plan->command; *a; a++)
		printf(" %s", *a);
	printf("\n");
}

static void dry_run(VrRun *r)
{
	vr_run_history_report(g_steal_pointer(&r->history), r->project);
	print_plan(r);
	const GPtrArray *guarded = r->plan->guarded_dirs;
	for (guint i = 0; guarded && i < guarded->len; i++) {
		const VrGuardedDir *g = g_ptr_array_index(guarded, i);
		printf("guarded    %s", g->dir);
		for (guint j = 0; g->readonly && j < g->readonly->len; j++)
			printf("%s%s", j ? "," : " readonly: ", (const char *)g_ptr_array_index(g->readonly, j));
		printf("\n");
	}
	vr_cgroup_print_plan(&r->plan->limits, r->id.host_root);
}

/* ---- prepare the host: cgroup, audit log ---------------------------------- */

static int check_fuse(void)
{
	vr_cleanup_fd int fuse_fd = open("/dev/fuse", O_RDWR | O_CLOEXEC);
	if (fuse_fd < 0) {
		vr_error("/dev/fuse: %s (the project view needs FUSE: load the fuse module or get access to /dev/fuse)",
		         strerror(errno));
		return -1;
	}
	return 0;
}

/* The log is created (or opened) now, as the user, before any namespace
 * and before anything is mounted; never where the sandbox could read it. */
static int open_audit(VrRun *r)
{
	const VrRunPlan *plan = r->plan;
	if (vr_run_check_own_dirs(r->project, r->config->policy) < 0)
		return -1;
	g_autoptr(GArray) under = vr_root_plan_audit_unders(&r->root, r->views, r->project);
	if (vr_run_audit_open(&r->audit, r->project, plan, r->config, (const VrAuditUnder *)under->data,
	                      under->len) < 0)
		return -1;
	/* Queued on the socket before the daemon exists, so it is the first
	 * thing the daemon reads from it. */
	g_autofree char *features =
	        g_strdup_printf("userns,mountns,pidns,ipcns,utsns%s,seccomp%s,fuse", plan->net != VR_NET_HOST ? ",netns" : "",
	                        plan->net == VR_NET_ALLOW ? ",proxy" : "");
	g_autofree char *policy_hash = vr_run_audit_policy_hash(r->config->policy);
	vr_run_audit_send_start(&r->audit, plan->command, r->project, features, policy_hash);
	if (plan->gitfile_dir)
		vr_run_audit_send_gitfile(&r->audit, plan->gitfile_ok, plan->gitfile_dir, plan->gitfile_why);
	return vr_startup_phase("audit");
}

static int prepare_host(VrRun *r)
{
	if (vr_startup_phase("begin") < 0)
		return -1;
	/* Before the user namespace: the cgroup helper keeps the host's credentials. */
	if (vr_limits_any(&r->plan->limits) && !(r->cgroup = vr_cgroup_start(&r->plan->limits, r->id.host_root)))
		return -1;
	if (r->cgroup && vr_startup_phase("cgroup") < 0)
		return -1;
	return open_audit(r);
}

/* ---- enter the user namespace, start the views ---------------------------- */

static int enter_userns(VrRun *r)
{
	pid_t helper;
	int go_fd;
	if (vr_userns_prepare(&r->id, &helper, &go_fd) < 0 || vr_userns_enter(&r->id, helper, go_fd) < 0)
		return -1;
	return vr_startup_phase("userns");
}

static int start_views(VrRun *r)
{
	if (vr_run_start_daemons(r) < 0)
		return -1;
	/* COMMAND's filter is compiled while the daemon mounts, not in the
	 * sandbox's child between "ready" and exec. */
	if (vr_sandbox_seccomp_prepare(r->plan->allow_userns, &r->sandbox_seccomp) < 0)
		vr_seccomp_prog_free(&r->sandbox_seccomp); /* the child compiles it then, and says why */
	if (vr_startup_phase("daemon") < 0)
		return -1;
	return vr_run_await_mounted(r);
}

/* ---- start the sandbox ---------------------------------------------------- */

static void sandbox_spec(const VrRun *r, VrSandboxSpec *spec)
{
	const VrRunPlan *plan = r->plan;
	*spec = (VrSandboxSpec){
		.ops = (const VrSandboxOp *)r->root.ops->data,
		.n_ops = r->root.ops->len,
		.argv = plan->command,
		.envp = r->envp,
		.cwd = r->cwd,
		.fallback_cwd = r->mount_at,
		.hostname = plan->hostname,
		.net_none = plan->net != VR_NET_HOST,
		.new_session = plan->new_session,
		.allow_userns = plan->allow_userns,
		.switch_uid = r->id.host_root,
		.agent_uid = r->agent_uid,
		.agent_gid = r->agent_gid,
		.seccomp = r->sandbox_seccomp,
	};
}

/* The sandbox's pid 1 in its new namespaces, waiting on its start-up
 * socket (*RET_SYNC: our end) before it builds its root. The pid, or -1
 * (said). */
static pid_t clone_sandbox(VrRun *r, int *ret_sync)
{
	VrSandboxSpec spec;
	sandbox_spec(r, &spec);
	/* A socket, not a pipe: the child may have died building its root
	 * when the second byte goes out (MSG_NOSIGNAL, no SIGPIPE). */
	vr_cleanup_pair int sync[2] = {-1, -1};
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sync) < 0)
		return vr_log_errno(errno, "socketpair");
	spec.sync_fd = sync[0];
	unsigned long flags = CLONE_NEWPID | CLONE_NEWNS | CLONE_NEWIPC | CLONE_NEWUTS | SIGCHLD;
	if (spec.net_none)
		flags |= CLONE_NEWNET;
	/* Raw clone without a new stack behaves like fork (the child gets a
	 * copy of ours); we are single-threaded, so that is safe. The child
	 * closes every inherited fd (the audit socket and log included) before
	 * COMMAND runs. */
	pid_t pid = (pid_t)syscall(SYS_clone, flags, NULL, NULL, NULL, NULL);
	if (pid == 0) {
		close(sync[1]);
		vr_sandbox_main(&spec);
	}
	int e = errno;
	vr_clear_fd(&sync[0]);
	if (pid < 0)
		return vr_log_errno(e, "cannot create the sandbox namespaces");
	for (guint i = 0; i < r->views->views->len; i++) { /* the sandbox attaches its copies */
		VrExtraView *v = r->views->views->pdata[i];
		vr_clear_fd(&v->tree_fd);
	}
	*ret_sync = vr_steal_fd(&sync[1]);
	return pid;
}

/* The child waits on its socket before building its root: its netns
 * exists, COMMAND does not run yet, so the proxy listens before the first
 * connect. */
static int start_proxy(VrRun *r, pid_t sandbox)
{
	g_autofree char *ns = g_strdup_printf("/proc/%d/ns/net", (int)sandbox);
	vr_cleanup_fd int netns = open(ns, O_RDONLY | O_CLOEXEC);
	int ret = netns < 0 ? -errno : 0;
	VrProxyStart start = {.pid = -1, .report_fd = -1};
	if (ret == 0) {
		r->popts.event_fd = r->audit.send_fd;
		r->popts.keys = r->keys.keys;
		r->popts.keys_fd = r->keys.values_fd;
		r->popts.read_hosts = r->plan->net_read;
		r->popts.run_id = r->audit.run_id;
		/* The CA lives as long as the run may (a day past --timeout). */
		r->popts.ca_valid_s = r->plan->timeout > 0 ? (gint64)r->plan->timeout + 24 * 3600 : 0;
		ret = vr_proxy_spawn_tls(&r->popts, netns, &start);
		vr_clear_fd(&netns);
		vr_clear_fd(&r->keys.values_fd);
	}
	if (ret < 0) {
		r->proxy = -1;
		return vr_log_errno(-ret, "cannot start the network proxy");
	}
	r->proxy = start.pid;
	r->proxy_report = start.report_fd;
	return vr_startup_phase("proxy");
}

/* The rest of the proxy's start (its exec, its CA and trust store), which
 * the root build and the daemons' "ready" overlapped: read before COMMAND,
 * so a proxy that cannot work stops the run first. The CA goes into the
 * trust store the root already binds (a directory: what is written there
 * now is seen inside). */
static int await_proxy(VrRun *r)
{
	if (r->proxy_report < 0)
		return 0;
	int ret = vr_startup_wait(r->proxy_report, VR_STARTUP_TIMEOUT_MS);
	if (ret == -EINTR)
		return -1;
	g_autofree char *ca_pem = NULL;
	guint32 ca_hash = 0;
	if (ret == 0)
		ret = vr_proxy_await_start(&r->popts, r->proxy_report, &ca_pem, &ca_hash);
	else
		vr_clear_fd(&r->proxy_report);
	r->proxy_report = -1;
	if (ret < 0)
		return vr_log_errno(-ret, "cannot start the network proxy");
	if (ca_pem && (ret = vr_run_keys_certs_fill(&r->keys, ca_pem, ca_hash)) < 0)
		return vr_log_errno(-ret, "cannot write the run CA into the sandbox's trust store");
	return 0;
}

/* --key, --net read=: the run CA's trust store (run/keys.h), bound over
 * /etc/ssl/certs where the root has the host's /etc/ssl (not --rootfs),
 * filled once the proxy made the CA, before COMMAND starts. */
static int trust_store(VrRun *r)
{
	if (!r->keys.terminates)
		return 0;
	g_autoptr(GError) error = NULL;
	if (!vr_run_keys_certs_prepare(&r->keys, r->project, &error))
		return refused(error);
	for (guint i = 0; i < r->root.ops->len; i++) {
		const VrSandboxOp *op = &g_array_index(r->root.ops, VrSandboxOp, i);
		if (op->kind == VR_OP_BIND && g_strcmp0(op->dest, "/etc/ssl") == 0) {
			vr_root_plan_add(&r->root, VR_OP_BIND, r->keys.certs_dir, VR_RUN_KEYS_CERTS,
			                 VR_BIND_RO | VR_BIND_DIR, 0);
			break;
		}
	}
	return 0;
}

/* Until COMMAND is told to start, a failure closes SYNC (EOF: pid 1 exits
 * without running COMMAND) and kills and reaps pid 1 on the way out. */
static int start_sandbox(VrRun *r)
{
	vr_run_history_report(g_steal_pointer(&r->history), r->project);
	if (trust_store(r) < 0)
		return -1;
	vr_cleanup_fd int sync = -1;
	vr_cleanup_pid pid_t child = clone_sandbox(r, &sync);
	if (child < 0)
		return -1;
	/* In its cgroup before it builds its root, so all under it is limited. */
	if ((r->cgroup && vr_cgroup_attach(r->cgroup, child) < 0) || vr_startup_phase("sandbox") < 0)
		return -1;
	if (r->plan->net == VR_NET_ALLOW && start_proxy(r, child) < 0)
		return -1;
	/* "g": build the root (the views are mounted) while the daemons
	 * confine themselves and write their first audit records. COMMAND
	 * waits for the second byte, sent only once every daemon said
	 * "ready": none serves a request before it is confined, and a log
	 * that cannot be written stops the run before COMMAND starts. */
	sync_send(sync, 'g');
	gboolean ready = vr_run_await_ready(r);
	if (ready)
		r->audit.serving = true; /* it reads the event socket: run-end waits for it */
	if (!ready || await_proxy(r) < 0 || vr_startup_phase("ready") < 0)
		return -1;
	r->sandbox = vr_steal_pid(&child);
	write_json_status(r->plan->json_status_fd, "{ \"child-pid\": %d }\n", (int)r->sandbox);
	r->started = TRUE;
	sync_send(sync, 'x');
	return 0;
}

/* ---- wait (run/wait.c), finish -------------------------------------------- */

static void wait_for_sandbox(VrRun *r)
{
	vr_run_wait(r);
	vr_clear_fd(&r->sfd);
}

static void close_ready_pipes(VrRun *r)
{
	vr_clear_fd(&r->daemon_ready);
	vr_clear_fd(&r->proxy_report);
	for (guint i = 0; i < r->guard_ready->len; i++)
		vr_clear_fd(&g_array_index(r->guard_ready, int, i));
	g_array_set_size(r->guard_ready, 0);
}

/* Every exit after the start-up began: whatever exists is stopped, in
 * the order that keeps the log whole, and the run's status is the exit's. */
static _Noreturn void finish(VrRun *r)
{
	if (vr_startup_signal())
		r->status = 128 + vr_startup_signal();
	vr_killp(&r->sandbox);
	if (r->cgroup)
		vr_cgroup_report(vr_cgroup_finish(r->cgroup), &r->plan->limits);
	/* The proxy and the other views first: their last records go out as
	 * they end, and must reach the log before run-end. */
	vr_run_stop_daemon(r->proxy, NULL, "the network proxy");
	vr_run_stop_guards(r);
	if (r->daemon > 0 && r->started)
		vr_run_copies_finish(&r->copies, r->mount_at, &r->audit);
	vr_run_copies_clear(&r->copies);
	if (r->daemon > 0)
		vr_run_audit_send_end(&r->audit, r->status);
	/* Its log failed at the end (--audit-fail=closed): said, and our error. */
	if (vr_run_stop_daemon(r->daemon, &r->daemon_ready, "the view daemon") == VR_VIEW_EXIT_AUDIT_FAILED)
		r->status = VR_EXIT_ERROR;
	close_ready_pipes(r); /* those of daemons that never started */
	if (r->daemon > 0 && !r->plan->quiet && !vr_startup_signal())
		vr_run_audit_print_summary(&r->audit);
	vr_run_audit_close(&r->audit);
	vr_run_keys_certs_remove(&r->keys); /* the sandbox is gone: nothing binds it */
	if (r->started)
		write_json_status(r->plan->json_status_fd, "{ \"exit-code\": %d }\n", r->status);
	/* Everything of the run is reaped, closed and said: end here. Freeing
	 * the config, the plan and the op list would write to pages the
	 * children shared with us, a page fault each (~50, 3-4 ms of CPU on a
	 * slow VM, after the agent ended). */
	fflush(NULL);
	_exit(r->status);
}

/* ---- the run ---------------------------------------------------------------- */

static void run_init(VrRun *r, VrRunPlan *plan)
{
	*r = (VrRun){
		.plan = plan, .sfd = -1, .daemon = -1, .proxy = -1, .sandbox = -1, .proxy_report = -1, .daemon_ready = -1,
		.status = VR_EXIT_ERROR,
		.audit = {.log_fd = -1, .dir_fd = -1, .daemon_fd = -1, .send_fd = -1},
		.copies = {.lock_fd = -1},
		.keys = VR_RUN_KEYS_INIT,
	};
	vr_root_plan_init(&r->root);
	r->guards = g_array_new(FALSE, FALSE, sizeof(pid_t));
	r->guard_ready = g_array_new(FALSE, FALSE, sizeof(int));
}

/* Before the start-up began nothing runs yet: what resolve and the plan
 * made is freed (the per-run copies removed) and STATUS returned. */
static int run_abandon(VrRun *r, int status)
{
	g_clear_pointer(&r->history, vr_git_history_abandon);
	g_clear_pointer(&r->config, vr_config_free);
	g_clear_pointer(&r->allow, vr_net_allow_free);
	g_clear_pointer(&r->views, vr_views_free);
	vr_run_copies_clear(&r->copies);
	vr_run_keys_clear(&r->keys);
	vr_root_plan_clear(&r->root);
	g_clear_pointer(&r->envp, g_strfreev);
	g_free(r->user);
	g_free(r->home);
	g_free(r->cwd);
	g_array_unref(r->guards);
	g_array_unref(r->guard_ready);
	return status;
}

int vr_supervisor_run(VrRunPlan *plan)
{
	VrRun r;
	run_init(&r, plan);
	/* From the first step on, a signal waits for the next phase or wait of
	 * the start-up (run/startup.h), then for the wait loop: never lands
	 * half-way through a step. */
	if ((r.sfd = vr_startup_begin()) < 0)
		return run_abandon(&r, VR_EXIT_ERROR);
	/* Host-side decisions first: nothing below may fail half-way in the
	 * sandbox for a reason we could have said here. */
	if (resolve(&r) < 0 || build_root_plan(&r) < 0)
		return run_abandon(&r, VR_EXIT_ERROR);
	if (plan->dry_run) {
		dry_run(&r);
		return run_abandon(&r, VR_EXIT_OK);
	}
	if (check_fuse() < 0)
		return run_abandon(&r, VR_EXIT_ERROR);
	if (prepare_host(&r) == 0 && enter_userns(&r) == 0 && start_views(&r) == 0 && start_sandbox(&r) == 0)
		wait_for_sandbox(&r);
	finish(&r);
}
