/* The cgroup of a run's sandbox (run/cgroup.h): choosing a mechanism, and the
 * helper process that owns the cgroup from creation to removal.
 *
 *   supervisor ── socketpair (SEQPACKET) ── helper (host credentials, own session)
 *     "attach PID" → "ok" | "err MESSAGE"
 *     "end"        → "done OOM-KILLS"   (the cgroup is gone by then)
 *     EOF          → the supervisor died: kill what is left, remove, exit
 *
 * Directories are named vault-run-<helper pid>; a start removes the empty
 * ones whose helper no longer exists (left by a kill -9 of the helper). */
#include "run/cgroup.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "common/cleanup.h"
#include "common/fd-util.h"
#include "common/log.h"

#define PREFIX "vault-run-"
#define CPU_PERIOD_US 100000

struct VrCgroup {
	int sock;
	pid_t helper;
};

/* --- where our cgroups are ------------------------------------------------ */

/* The mount point and root of the hierarchy with fstype cgroup2 (v2), or
 * cgroup with controller among its options. FALSE if none. */
static gboolean find_mount(gboolean v2, const char *controller, char **mount, char **root)
{
	g_autofree char *mountinfo = NULL;
	if (!g_file_get_contents("/proc/self/mountinfo", &mountinfo, NULL, NULL))
		return FALSE;
	g_auto(GStrv) lines = g_strsplit(mountinfo, "\n", -1);
	for (char **l = lines; *l; l++) {
		const char *sep = strstr(*l, " - ");
		if (!sep)
			continue;
		g_autofree char *head = g_strndup(*l, sep - *l);
		g_auto(GStrv) left = g_strsplit(head, " ", -1);
		g_auto(GStrv) right = g_strsplit(sep + 3, " ", -1);
		if (g_strv_length(left) < 5 || g_strv_length(right) < 3)
			continue;
		gboolean match = FALSE;
		if (v2) {
			match = strcmp(right[0], "cgroup2") == 0;
		} else if (strcmp(right[0], "cgroup") == 0) {
			g_auto(GStrv) opts = g_strsplit(right[2], ",", -1);
			match = g_strv_contains((const char *const *)opts, controller);
		}
		if (match) {
			*mount = g_strdup(left[4]);
			*root = g_strdup(left[3]);
			return TRUE;
		}
	}
	return FALSE;
}

/* The host path of our own cgroup (or pid's, when pid > 0) in that
 * hierarchy. NULL if none. */
static char *cgroup_dir_of(pid_t pid, gboolean v2, const char *controller)
{
	g_autofree char *mount = NULL, *root = NULL, *self = NULL;
	g_autofree char *path = pid > 0 ? g_strdup_printf("/proc/%d/cgroup", (int)pid) : g_strdup("/proc/self/cgroup");
	if (!find_mount(v2, controller, &mount, &root) || !g_file_get_contents(path, &self, NULL, NULL))
		return NULL;
	g_auto(GStrv) cg = g_strsplit(self, "\n", -1);
	for (char **l = cg; *l; l++) {
		g_auto(GStrv) f = g_strsplit(*l, ":", 3);
		if (g_strv_length(f) != 3)
			continue;
		g_auto(GStrv) ctrls = g_strsplit(f[1], ",", -1);
		if (v2 ? strcmp(f[0], "0") != 0 || f[1][0] : !g_strv_contains((const char *const *)ctrls, controller))
			continue;
		const char *rel = f[2];
		if (strcmp(root, "/") != 0) {
			if (!g_str_has_prefix(rel, root))
				continue;
			rel += strlen(root);
		}
		return strcmp(rel, "/") == 0 || !*rel ? g_strdup(mount) : g_build_filename(mount, rel, NULL);
	}
	return NULL;
}

static char *own_cgroup_dir(gboolean v2, const char *controller)
{
	return cgroup_dir_of(0, v2, controller);
}

char *vr_cgroup_v2_mount(void)
{
	char *mount = NULL, *root = NULL;
	if (!find_mount(TRUE, NULL, &mount, &root))
		return NULL;
	g_free(root);
	return mount;
}

static char *read_file(const char *dir, const char *name)
{
	g_autofree char *path = g_build_filename(dir, name, NULL);
	char *s = NULL;
	if (!g_file_get_contents(path, &s, NULL, NULL))
		return NULL;
	return g_strstrip(s);
}

static gboolean list_has(const char *list, const char *word)
{
	g_auto(GStrv) words = g_strsplit_set(list ? list : "", " \n", -1);
	return g_strv_contains((const char *const *)words, word);
}

static const char *const controllers[] = {"memory", "pids", "cpu"};

static gboolean wants(const VrLimits *l, int i)
{
	return i == 0 ? l->memory != 0 : i == 1 ? l->pids != 0 : l->cpu > 0;
}

/* --- mechanism choice --------------------------------------------------- */

/* v2: our own cgroup, delegated, offering the controllers. */
static gboolean v2_usable(const VrLimits *want, char **dir, char **why)
{
	g_autofree char *own = own_cgroup_dir(TRUE, NULL);
	if (!own) {
		*why = g_strdup("no cgroup v2 hierarchy is mounted");
		return FALSE;
	}
	g_autofree char *offered = read_file(own, "cgroup.controllers");
	g_autofree char *enabled = read_file(own, "cgroup.subtree_control");
	gboolean all_enabled = TRUE;
	for (int i = 0; i < 3; i++) {
		if (!wants(want, i))
			continue;
		if (!list_has(offered, controllers[i])) {
			*why = g_strdup_printf("cgroup v2 offers %s no %s controller (cgroup.controllers: %s)", own,
			                       controllers[i], offered && *offered ? offered : "empty");
			return FALSE;
		}
		all_enabled &= list_has(enabled, controllers[i]);
	}
	g_autofree char *procs = g_build_filename(own, "cgroup.procs", NULL);
	g_autofree char *subtree = g_build_filename(own, "cgroup.subtree_control", NULL);
	if (access(own, W_OK) < 0 || access(procs, W_OK) < 0 || access(subtree, W_OK) < 0) {
		*why = g_strdup_printf("our cgroup v2 cgroup %s is not delegated to us (not writable)", own);
		return FALSE;
	}
	/* The no-internal-processes rule: a non-root cgroup that holds
	 * processes (ours) cannot enable controllers for its children. */
	g_autofree char *self = NULL;
	g_file_get_contents("/proc/self/cgroup", &self, NULL, NULL);
	gboolean is_root = self && strstr(self, "0::/\n") != NULL;
	if (!all_enabled && !is_root) {
		*why = g_strdup_printf("our cgroup v2 cgroup %s holds processes, so it cannot enable controllers "
		                       "for a child (cgroup v2's no-internal-processes rule)", own);
		return FALSE;
	}
	*dir = g_steal_pointer(&own);
	return TRUE;
}

/* v1 as host root: our own cgroup in each controller's hierarchy. dirs[i]
 * NULL for limits not wanted. */
static gboolean v1_usable(const VrLimits *want, gboolean host_root, char *dirs[3], char **why)
{
	if (!host_root) {
		*why = g_strdup("cgroup v1 controllers are used only as root");
		return FALSE;
	}
	for (int i = 0; i < 3; i++) {
		dirs[i] = NULL;
		if (!wants(want, i))
			continue;
		dirs[i] = own_cgroup_dir(FALSE, controllers[i]);
		if (!dirs[i] || access(dirs[i], W_OK) < 0) {
			*why = g_strdup_printf("no writable cgroup v1 hierarchy has the %s controller", controllers[i]);
			for (int j = 0; j <= i; j++)
				g_clear_pointer(&dirs[j], g_free);
			return FALSE;
		}
	}
	return TRUE;
}

static const char *fix =
	"fix: run vault-run in a systemd session whose user manager has the controllers delegated "
	"(or under `systemd-run --user --scope`), delegate a cgroup v2 subtree to this user, run as root, "
	"or drop the limit";

VrCgroupMech vr_cgroup_probe(const VrLimits *want, gboolean host_root, char **detail)
{
	g_autofree char *why_systemd = NULL, *why_v2 = NULL, *why_v1 = NULL, *dir = NULL;
	if (vr_cgroup_systemd_usable(want, host_root, detail))
		return VR_CGROUP_SYSTEMD;
	why_systemd = g_steal_pointer(detail);
	if (v2_usable(want, &dir, &why_v2)) {
		*detail = g_strdup_printf("a child of the delegated cgroup v2 cgroup %s", dir);
		return VR_CGROUP_V2;
	}
	char *dirs[3];
	if (v1_usable(want, host_root, dirs, &why_v1)) {
		GString *s = g_string_new("cgroup v1 as root, children of");
		for (int i = 0; i < 3; i++)
			if (dirs[i])
				g_string_append_printf(s, " %s", dirs[i]);
		for (int i = 0; i < 3; i++)
			g_free(dirs[i]);
		*detail = g_string_free(s, FALSE);
		return VR_CGROUP_V1;
	}
	*detail = g_strdup_printf("%s; %s; %s; %s", why_systemd, why_v2, why_v1, fix);
	return VR_CGROUP_NONE;
}

/* --- the helper ------------------------------------------------------------ */

typedef struct {
	VrCgroupMech mech;
	char *name;          /* vault-run-<pid> (and .scope for systemd) */
	GPtrArray *dirs;     /* the cgroup directories we made */
	char *memory_dir;    /* where the OOM count is, if a memory limit */
	char *pids_dir;      /* where the count of refused forks is, if a pids limit */
	gboolean host_root;
	VrLimits limits;
} Helper;

static gboolean write_file(const char *dir, const char *name, const char *value, char **error)
{
	g_autofree char *path = g_build_filename(dir, name, NULL);
	vr_cleanup_fd int fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0 || vr_write_all(fd, value, strlen(value)) < 0) {
		int e = errno;
		if (error)
			*error = g_strdup_printf("cannot write %s to %s: %s", value, path, strerror(e));
		return FALSE;
	}
	return TRUE;
}

/* Empty vault-run cgroups whose helper is gone (a kill -9). */
static void remove_stale(const char *parent)
{
	DIR *d = opendir(parent);
	struct dirent *e;
	while (d && (e = readdir(d))) {
		if (!g_str_has_prefix(e->d_name, PREFIX))
			continue;
		char *end;
		long pid = strtol(e->d_name + strlen(PREFIX), &end, 10);
		if (*end || pid <= 0 || kill((pid_t)pid, 0) == 0 || errno != ESRCH)
			continue;
		g_autofree char *path = g_build_filename(parent, e->d_name, NULL);
		if (rmdir(path) == 0)
			vr_debug("removed the stale cgroup %s", path);
	}
	if (d)
		closedir(d);
}

static char *make_dir(Helper *h, const char *parent, char **error)
{
	remove_stale(parent);
	char *dir = g_build_filename(parent, h->name, NULL);
	if (mkdir(dir, 0755) < 0) {
		*error = g_strdup_printf("cannot create the cgroup %s: %s", dir, strerror(errno));
		g_free(dir);
		return NULL;
	}
	g_ptr_array_add(h->dirs, dir);
	return dir;
}

static gboolean setup_v2(Helper *h, const VrLimits *l, char **error)
{
	g_autofree char *own = NULL, *why = NULL;
	if (!v2_usable(l, &own, &why)) {
		*error = g_steal_pointer(&why);
		return FALSE;
	}
	g_autofree char *enabled = read_file(own, "cgroup.subtree_control");
	for (int i = 0; i < 3; i++) {
		g_autofree char *plus = g_strconcat("+", controllers[i], NULL);
		if (wants(l, i) && !list_has(enabled, controllers[i]) &&
		    !write_file(own, "cgroup.subtree_control", plus, error))
			return FALSE;
	}
	const char *dir = make_dir(h, own, error);
	if (!dir)
		return FALSE;
	g_autofree char *mem = g_strdup_printf("%" G_GUINT64_FORMAT, l->memory);
	g_autofree char *pids = g_strdup_printf("%u", l->pids);
	g_autofree char *cpu = g_strdup_printf("%lld %d", (long long)(l->cpu * CPU_PERIOD_US + 0.5), CPU_PERIOD_US);
	if (l->memory) {
		if (!write_file(dir, "memory.max", mem, error))
			return FALSE;
		/* The limit is on RAM and swap together: no swapping past it. */
		write_file(dir, "memory.swap.max", "0", NULL);
		h->memory_dir = g_strdup(dir);
	}
	if (l->pids && !write_file(dir, "pids.max", pids, error))
		return FALSE;
	if (l->pids)
		h->pids_dir = g_strdup(dir);
	if (l->cpu > 0 && !write_file(dir, "cpu.max", cpu, error))
		return FALSE;
	return TRUE;
}

static gboolean setup_v1(Helper *h, const VrLimits *l, char **error)
{
	char *parents[3];
	g_autofree char *why = NULL;
	if (!v1_usable(l, h->host_root, parents, &why)) {
		*error = g_steal_pointer(&why);
		return FALSE;
	}
	gboolean ok = TRUE;
	for (int i = 0; i < 3 && ok; i++) {
		if (!parents[i])
			continue;
		const char *dir = make_dir(h, parents[i], error);
		ok = dir != NULL;
		if (!ok)
			break;
		if (i == 0) {
			g_autofree char *mem = g_strdup_printf("%" G_GUINT64_FORMAT, l->memory);
			ok = write_file(dir, "memory.limit_in_bytes", mem, error);
			/* RAM + swap (when swap accounting is on): no swapping past it. */
			write_file(dir, "memory.memsw.limit_in_bytes", mem, NULL);
			h->memory_dir = g_strdup(dir);
		} else if (i == 1) {
			g_autofree char *pids = g_strdup_printf("%u", l->pids);
			ok = write_file(dir, "pids.max", pids, error);
			h->pids_dir = g_strdup(dir);
		} else {
			g_autofree char *quota = g_strdup_printf("%lld", (long long)(l->cpu * CPU_PERIOD_US + 0.5));
			ok = write_file(dir, "cpu.cfs_period_us", G_STRINGIFY(CPU_PERIOD_US), error) &&
			     write_file(dir, "cpu.cfs_quota_us", quota, error);
		}
	}
	for (int i = 0; i < 3; i++)
		g_free(parents[i]);
	return ok;
}

/* The number after "key " in dir/name (flat keyed files), or 0. */
static int read_count(const char *dir, const char *name, const char *key)
{
	g_autofree char *s = dir ? read_file(dir, name) : NULL;
	g_autofree char *k = g_strconcat(key, " ", NULL);
	for (const char *p = s; p && (p = strstr(p, k)); p++)
		if (p == s || p[-1] == '\n')
			return atoi(p + strlen(k));
	return 0;
}

/* v2: memory.events; v1: memory.oom_control; both say "oom_kill N". */
static int oom_kills(const Helper *h)
{
	return read_count(h->memory_dir, h->mech == VR_CGROUP_V1 ? "memory.oom_control" : "memory.events", "oom_kill");
}

static void sleep_ms(int ms)
{
	struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
	nanosleep(&ts, NULL);
}

/* Kills what is left in dir and removes it; a few seconds at most. */
static void remove_dir(const char *dir)
{
	write_file(dir, "cgroup.kill", "1", NULL); /* v2, Linux 5.14+ */
	for (int i = 0; i < 250; i++) {
		g_autofree char *procs = read_file(dir, "cgroup.procs");
		if (procs && !*procs && rmdir(dir) == 0)
			return;
		g_auto(GStrv) pids = g_strsplit(procs ? procs : "", "\n", -1);
		for (char **p = pids; *p; p++)
			if (atoi(*p) > 0)
				kill(atoi(*p), SIGKILL);
		sleep_ms(20);
	}
	if (rmdir(dir) < 0 && errno != ENOENT)
		vr_warning("cannot remove the cgroup %s: %s", dir, strerror(errno));
}

static void helper_cleanup(Helper *h)
{
	if (h->mech == VR_CGROUP_SYSTEMD)
		vr_cgroup_systemd_stop(h->name, h->host_root);
	for (guint i = h->dirs->len; i > 0; i--)
		remove_dir(g_ptr_array_index(h->dirs, i - 1));
	g_ptr_array_set_size(h->dirs, 0);
}

static void reply(int sock, const char *fmt, ...) G_GNUC_PRINTF(2, 3);
static void reply(int sock, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	g_autofree char *s = g_strdup_vprintf(fmt, ap);
	va_end(ap);
	if (send(sock, s, strlen(s), MSG_NOSIGNAL) < 0)
		vr_debug("cgroup helper: send: %s", strerror(errno));
}

static gboolean attach(Helper *h, pid_t pid, char **error)
{
	if (h->mech == VR_CGROUP_SYSTEMD) {
		g_autofree char *scope = g_strconcat(h->name, ".scope", NULL);
		g_free(h->name);
		h->name = g_steal_pointer(&scope);
		if (!vr_cgroup_systemd_start(h->name, pid, &h->limits, h->host_root, error))
			return FALSE;
		/* For the OOM count: the scope's directory, while it exists. */
		if (h->limits.memory)
			h->memory_dir = cgroup_dir_of(pid, TRUE, NULL);
		return TRUE;
	}
	g_autofree char *value = g_strdup_printf("%d", (int)pid);
	for (guint i = 0; i < h->dirs->len; i++)
		if (!write_file(g_ptr_array_index(h->dirs, i), "cgroup.procs", value, error))
			return FALSE;
	return TRUE;
}

static G_GNUC_NORETURN void helper_main(int sock, const VrLimits *l, gboolean host_root)
{
	Helper h = {VR_CGROUP_NONE, g_strdup_printf(PREFIX "%d", (int)getpid()),
	            g_ptr_array_new_with_free_func(g_free), NULL, NULL, host_root, *l};
	g_autofree char *error = NULL;
	h.mech = vr_cgroup_probe(l, host_root, &error);
	/* systemd: the scope is made at attach time, around the pid. */
	if (h.mech == VR_CGROUP_V2 || h.mech == VR_CGROUP_V1) {
		g_clear_pointer(&error, g_free); /* the probe's description */
		if (!(h.mech == VR_CGROUP_V2 ? setup_v2(&h, l, &error) : setup_v1(&h, l, &error)))
			h.mech = VR_CGROUP_NONE;
	}
	if (h.mech == VR_CGROUP_NONE) {
		helper_cleanup(&h);
		reply(sock, "err %s", error);
		_exit(1);
	}
	reply(sock, "ok");
	for (;;) {
		char buf[256];
		ssize_t n = recv(sock, buf, sizeof buf - 1, 0);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break; /* the supervisor is gone */
		buf[n] = '\0';
		if (g_str_has_prefix(buf, "attach ")) {
			g_autofree char *err = NULL;
			if (attach(&h, (pid_t)atoi(buf + 7), &err))
				reply(sock, "ok");
			else
				reply(sock, "err %s", err);
		} else if (strcmp(buf, "end") == 0) {
			int oom = oom_kills(&h);
			int forks = read_count(h.pids_dir, "pids.events", "max");
			helper_cleanup(&h);
			reply(sock, "done %d %d", oom, forks);
			_exit(0);
		}
	}
	helper_cleanup(&h);
	_exit(0);
}

/* --- the supervisor's side ------------------------------------------------- */

/* The longest the helper may take to answer: systemd's own calls time
 * out after 10 s each (run/cgroup-systemd.c). */
#define REPLY_TIMEOUT_MS 60000

/* One reply of the helper; NULL when it is gone or does not answer in time
 * (the run's start-up never waits without bound: run/startup.h). */
static char *receive(VrCgroup *cg)
{
	char buf[4096];
	ssize_t n;
	struct pollfd p = {cg->sock, POLLIN, 0};
	int r;
	do
		r = poll(&p, 1, REPLY_TIMEOUT_MS);
	while (r < 0 && errno == EINTR);
	if (r <= 0)
		return NULL;
	do
		n = recv(cg->sock, buf, sizeof buf - 1, 0);
	while (n < 0 && errno == EINTR);
	if (n <= 0)
		return NULL;
	buf[n] = '\0';
	return g_strdup(buf);
}

static void cgroup_free(VrCgroup *cg)
{
	vr_clear_fd(&cg->sock);
	g_free(cg);
}

VrCgroup *vr_cgroup_start(const VrLimits *limits, gboolean host_root)
{
	vr_cleanup_pair int sv[2] = {-1, -1};
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0) {
		vr_log_errno(errno, "socketpair");
		return NULL;
	}
	/* Forked twice: the helper is nobody's child of ours, so the
	 * supervisor's waitpid(-1) never reaps it and it outlives a kill -9. */
	pid_t pid = fork();
	if (pid < 0) {
		vr_log_errno(errno, "fork");
		return NULL;
	}
	if (pid == 0) {
		if (fork() != 0)
			_exit(0);
		/* Its own session: ^C at the terminal is for the agent. Its
		 * end is the supervisor's socket closing, not a signal. */
		setsid();
		sigset_t none;
		sigemptyset(&none);
		sigprocmask(SIG_SETMASK, &none, NULL);
		signal(SIGPIPE, SIG_IGN);
		if (dup2(sv[1], 3) < 0)
			_exit(1);
		int null = open("/dev/null", O_RDWR | O_CLOEXEC);
		if (null >= 0) {
			dup2(null, 0);
			dup2(null, 1);
			/* stderr stays: a warning from the cleanup after a crash. */
		}
		vr_close_from(4);
		helper_main(3, limits, host_root);
	}
	vr_clear_fd(&sv[1]);
	int st;
	while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
		;
	VrCgroup *cg = g_new0(VrCgroup, 1);
	cg->sock = vr_steal_fd(&sv[0]);
	g_autofree char *r = receive(cg);
	if (!r || strcmp(r, "ok") != 0) {
		g_autofree char *desc = vr_limits_describe(limits);
		vr_error("cannot enforce the limits (%s) here: %s", desc,
		         r && g_str_has_prefix(r, "err ") ? r + 4 : "the cgroup helper failed");
		cgroup_free(cg);
		return NULL;
	}
	return cg;
}

int vr_cgroup_attach(VrCgroup *cg, pid_t pid)
{
	g_autofree char *msg = g_strdup_printf("attach %d", (int)pid);
	if (send(cg->sock, msg, strlen(msg), MSG_NOSIGNAL) < 0)
		return vr_log_errno(errno, "the cgroup helper"), -1;
	g_autofree char *r = receive(cg);
	if (!r || strcmp(r, "ok") != 0) {
		vr_error("cannot move the sandbox into its cgroup: %s",
		         r && g_str_has_prefix(r, "err ") ? r + 4 : "the cgroup helper ended");
		return -1;
	}
	return 0;
}

VrCgroupEnd vr_cgroup_finish(VrCgroup *cg)
{
	VrCgroupEnd end = {0, 0};
	if (send(cg->sock, "end", 3, MSG_NOSIGNAL) >= 0) {
		g_autofree char *r = receive(cg);
		if (r && sscanf(r, "done %d %d", &end.oom_kills, &end.refused_forks) != 2)
			end.oom_kills = end.refused_forks = 0;
	}
	cgroup_free(cg);
	return end;
}

void vr_cgroup_report(VrCgroupEnd end, const VrLimits *l)
{
	g_autofree char *mem = NULL;
	if (end.oom_kills > 0) {
		VrLimits only = {l->memory, 0, 0};
		mem = vr_limits_describe(&only);
		vr_warning("the sandbox ran out of memory (--%s): the kernel killed %d process%s in it", mem,
		           end.oom_kills, end.oom_kills == 1 ? "" : "es");
	}
	if (end.refused_forks > 0)
		vr_warning("the sandbox reached --pids %u: %d fork%s failed", l->pids, end.refused_forks,
		           end.refused_forks == 1 ? "" : "s");
}

void vr_cgroup_print_plan(const VrLimits *l, gboolean host_root)
{
	if (!vr_limits_any(l))
		return;
	g_autofree char *desc = vr_limits_describe(l);
	g_autofree char *detail = NULL;
	VrCgroupMech mech = vr_cgroup_probe(l, host_root, &detail);
	if (mech == VR_CGROUP_NONE)
		printf("limits: %s; cannot be enforced here, the run would be refused: %s\n", desc, detail);
	else
		printf("limits: %s via %s\n", desc, detail);
}
