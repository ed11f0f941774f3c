/* The supervisor's side of the network proxy: its options, its environment
 * for the sandbox, and starting vault-run-proxy (net/proxy-launch.h). */
#include "net/proxy-launch.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/cleanup.h"
#include "common/exitcode.h"
#include "common/fd-util.h"
#include "common/log.h"
#include "common/proc.h"
#include "net/listen.h"


/* foreground, log level, listen host, the two ports, event/audit/ready/keys
 * fds, the listening sockets, the report fd, the allow-list's specs and private flag, the
 * keys (spec, name, hosts, places, methods, paths, sentinel), read hosts,
 * run id, CA validity. A maybe type keeps NULL apart from empty: a key
 * list, even an empty one, makes the proxy start its CA. */
#define KEY_TYPE "(mssasumasmasms)"
#define LAUNCH_TYPE "(bimsqqiiiiaiiasbma" KEY_TYPE "masmsx)"
/* The same for g_variant_new/get: "@" passes a GVariant for each array. */
#define KEY_FORMAT "(mss@asu@mas@masms)"
#define LAUNCH_FORMAT "(bimsqqiiii@aii@asb@ma" KEY_TYPE "@masmsx)"

void vr_proxy_options_init(VrProxyOptions *opts)
{
	*opts = (VrProxyOptions){
		.listen_host = "127.0.0.1",
		.http_port = VR_PROXY_DEFAULT_HTTP_PORT,
		.socks_port = VR_PROXY_DEFAULT_SOCKS_PORT,
		.event_fd = -1,
		.audit_fd = -1,
		.ready_fd = -1,
		.keys_fd = -1,
	};
}

void vr_proxy_env(const VrProxyOptions *opts, GPtrArray *env)
{
	static const char *const http_vars[] = {"HTTP_PROXY", "HTTPS_PROXY", "http_proxy", "https_proxy"};
	const char *host = opts->listen_host ? opts->listen_host : "127.0.0.1";
	for (size_t i = 0; i < G_N_ELEMENTS(http_vars); i++)
		g_ptr_array_add(env, g_strdup_printf("%s=http://%s:%u", http_vars[i], host, opts->http_port));
	/* socks5h: the client sends the name, so the proxy resolves it (outside). */
	g_ptr_array_add(env, g_strdup_printf("ALL_PROXY=socks5h://%s:%u", host, opts->socks_port));
	g_ptr_array_add(env, g_strdup_printf("all_proxy=socks5h://%s:%u", host, opts->socks_port));
	g_ptr_array_add(env, g_strdup("NO_PROXY=localhost,127.0.0.1,::1"));
	g_ptr_array_add(env, g_strdup("no_proxy=localhost,127.0.0.1,::1"));
}

/* ---- the options across the exec --------------------------------------- */

static GVariant *strv_value(const GPtrArray *a)
{
	GVariantBuilder b;
	g_variant_builder_init(&b, G_VARIANT_TYPE_STRING_ARRAY);
	for (guint i = 0; a && i < a->len; i++)
		g_variant_builder_add(&b, "s", (const char *)a->pdata[i]);
	return g_variant_builder_end(&b);
}

static GVariant *maybe_strv_value(const GPtrArray *a)
{
	return g_variant_new_maybe(G_VARIANT_TYPE_STRING_ARRAY, a ? strv_value(a) : NULL);
}

static GVariant *keys_value(const VrNetKeys *keys)
{
	if (!keys)
		return g_variant_new_maybe(G_VARIANT_TYPE("a" KEY_TYPE), NULL);
	GVariantBuilder b;
	g_variant_builder_init(&b, G_VARIANT_TYPE("a" KEY_TYPE));
	for (guint i = 0; i < vr_net_keys_count(keys); i++) {
		const VrNetKey *k = vr_net_keys_get(keys, i);
		g_variant_builder_add(&b, KEY_FORMAT, k->spec, k->name, strv_value(k->hosts), k->places,
		                      maybe_strv_value(k->methods), maybe_strv_value(k->paths), k->sentinel);
	}
	return g_variant_new_maybe(NULL, g_variant_builder_end(&b));
}

GVariant *vr_proxy_launch_encode(const VrProxyOptions *o, gboolean foreground, const int *listen_fds,
                                 guint n_listen_fds, int report_fd)
{
	GVariant *fds = g_variant_new_fixed_array(G_VARIANT_TYPE_INT32, listen_fds, n_listen_fds, sizeof(gint32));
	return g_variant_new(LAUNCH_FORMAT, foreground, vr_log_get_level(), o->listen_host, o->http_port, o->socks_port,
	                     o->event_fd, o->audit_fd, o->ready_fd, o->keys_fd, fds, report_fd, strv_value(vr_net_allow_specs(o->allow)), vr_net_allow_get_private(o->allow),
	                     keys_value(o->keys), maybe_strv_value(o->read_hosts), o->run_id, o->ca_valid_s);
}

static GPtrArray *strv_array(GVariant *as)
{
	GPtrArray *a = g_ptr_array_new_with_free_func(g_free);
	GVariantIter it;
	const char *s;
	g_variant_iter_init(&it, as);
	while (g_variant_iter_next(&it, "&s", &s))
		g_ptr_array_add(a, g_strdup(s));
	return a;
}

static GPtrArray *maybe_strv_array(GVariant *mas)
{
	g_autoptr(GVariant) as = g_variant_get_maybe(mas);
	return as ? strv_array(as) : NULL;
}

static VrNetKeys *keys_from(GVariant *mkeys)
{
	g_autoptr(GVariant) keys = g_variant_get_maybe(mkeys);
	if (!keys)
		return NULL;
	VrNetKeys *out = vr_net_keys_new();
	GVariantIter it;
	g_variant_iter_init(&it, keys);
	g_autoptr(GVariant) key = NULL;
	while ((key = g_variant_iter_next_value(&it))) {
		VrNetKey *k = g_new0(VrNetKey, 1);
		g_autoptr(GVariant) hosts = NULL, methods = NULL, paths = NULL;
		g_variant_get(key, KEY_FORMAT, &k->spec, &k->name, &hosts, &k->places, &methods, &paths,
		              &k->sentinel);
		k->hosts = strv_array(hosts);
		k->methods = maybe_strv_array(methods);
		k->paths = maybe_strv_array(paths);
		vr_net_keys_add(out, k);
		g_clear_pointer(&key, g_variant_unref);
	}
	return out;
}

void vr_proxy_launch_clear(VrProxyLaunch *l)
{
	g_clear_pointer(&l->allow, vr_net_allow_free);
	g_clear_pointer(&l->keys, vr_net_keys_free);
	g_clear_pointer(&l->read_hosts, g_ptr_array_unref);
	g_clear_pointer(&l->listen_host, g_free);
	g_clear_pointer(&l->run_id, g_free);
}

gboolean vr_proxy_launch_decode(GVariant *v, VrProxyLaunch *l, GError **error)
{
	*l = (VrProxyLaunch){.report_fd = -1};
	vr_proxy_options_init(&l->opts);
	if (!g_variant_is_of_type(v, G_VARIANT_TYPE(LAUNCH_TYPE))) {
		g_set_error(error, VR_NET_ERROR, VR_NET_ERROR_LAUNCH, "options of type %s, not " LAUNCH_TYPE,
		            g_variant_get_type_string(v));
		return FALSE;
	}
	VrProxyOptions *o = &l->opts;
	gboolean allow_private = FALSE;
	g_autoptr(GVariant) fds = NULL, specs = NULL, keys = NULL, read_hosts = NULL;
	g_variant_get(v, LAUNCH_FORMAT, &l->foreground, &l->log_level, &l->listen_host, &o->http_port, &o->socks_port,
	              &o->event_fd, &o->audit_fd, &o->ready_fd, &o->keys_fd, &fds, &l->report_fd, &specs, &allow_private,
	              &keys, &read_hosts, &l->run_id, &o->ca_valid_s);
	gsize n_fds = 0;
	const gint32 *fd = g_variant_get_fixed_array(fds, &n_fds, sizeof(gint32));
	if (n_fds > VR_PROXY_MAX_LISTENERS) {
		g_set_error(error, VR_NET_ERROR, VR_NET_ERROR_LAUNCH, "%zu listening sockets", n_fds);
		return FALSE;
	}
	for (gsize i = 0; i < n_fds; i++)
		l->listen_fds[i] = fd[i];
	l->n_listen_fds = (guint)n_fds;
	l->allow = vr_net_allow_new();
	g_autoptr(GPtrArray) allow_specs = strv_array(specs);
	for (guint i = 0; i < allow_specs->len; i++)
		if (!vr_net_allow_add(l->allow, allow_specs->pdata[i], error))
			return FALSE;
	vr_net_allow_set_private(l->allow, allow_private);
	l->keys = keys_from(keys);
	l->read_hosts = maybe_strv_array(read_hosts);
	o->listen_host = l->listen_host;
	o->allow = l->allow;
	o->keys = l->keys;
	o->read_hosts = l->read_hosts;
	o->run_id = l->run_id;
	return TRUE;
}

gboolean vr_proxy_launch_read(int fd, VrProxyLaunch *l, GError **error)
{
	struct stat st;
	if (fstat(fd, &st) < 0 || st.st_size <= 0 || st.st_size > 16 * 1024 * 1024) {
		g_set_error(error, VR_NET_ERROR, VR_NET_ERROR_LAUNCH, "no options on fd %d", fd);
		return FALSE;
	}
	gsize len = (gsize)st.st_size;
	g_autofree char *data = g_malloc(len);
	if (pread(fd, data, len, 0) != (ssize_t)len) {
		g_set_error(error, VR_NET_ERROR, VR_NET_ERROR_LAUNCH, "cannot read the options on fd %d", fd);
		return FALSE;
	}
	g_autoptr(GBytes) bytes = g_bytes_new_take(g_steal_pointer(&data), len);
	g_autoptr(GVariant) v = g_variant_ref_sink(g_variant_new_from_bytes(G_VARIANT_TYPE(LAUNCH_TYPE), bytes, FALSE));
	return vr_proxy_launch_decode(v, l, error);
}

/* ---- finding and running vault-run-proxy ------------------------------- */

static char *executable_override;

void vr_proxy_launch_set_executable(const char *path)
{
	g_free(executable_override);
	executable_override = g_strdup(path);
}

/* An O_PATH fd of the executable, opened before the fork so that a missing
 * one is said here, once, in the supervisor's words. */
static int open_executable(void)
{
	char path[PATH_MAX];
	int r = 0;
	if (executable_override)
		g_strlcpy(path, executable_override, sizeof path);
	else
		r = vr_find_helper_executable(VR_PROXY_EXECUTABLE, VR_LIBEXECDIR, path, sizeof path);
	int fd = r < 0 ? -1 : open(path, O_PATH | O_CLOEXEC);
	if (fd >= 0)
		return fd;
	if (executable_override)
		return vr_log_errno(ENOENT, "cannot run the network proxy %s", path);
	vr_error("the network proxy " VR_PROXY_EXECUTABLE " is neither at %s nor in " VR_LIBEXECDIR
	         ": install it with vault-run (cmake --install), or run vault-run from its build directory",
	         path);
	return -ENOENT;
}

int vr_proxy_check_executable(void)
{
	int fd = open_executable();
	if (fd < 0)
		return fd;
	close(fd);
	return 0;
}

/* The options in a sealed memfd, which the exec keeps open. */
static int options_memfd(const VrProxyOptions *opts, gboolean foreground, const int *fds, guint n_fds, int report_fd)
{
	g_autoptr(GVariant) v = g_variant_ref_sink(vr_proxy_launch_encode(opts, foreground, fds, n_fds, report_fd));
	vr_cleanup_fd int fd = memfd_create("vault-run-proxy-options", MFD_CLOEXEC | MFD_ALLOW_SEALING);
	if (fd < 0)
		return -errno;
	int r = vr_write_all(fd, g_variant_get_data(v), g_variant_get_size(v));
	if (r < 0)
		return r;
	if (fcntl(fd, F_ADD_SEALS, F_SEAL_WRITE | F_SEAL_GROW | F_SEAL_SHRINK | F_SEAL_SEAL) < 0)
		return -errno;
	return vr_steal_fd(&fd);
}

/* Execs the proxy with keep[] (every fd it is to use) open across the exec.
 * Returns only on failure: -errno. */
static int exec_proxy(int exe, int options_fd, const int *keep, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (keep[i] >= 0 && fcntl(keep[i], F_SETFD, 0) < 0)
			return -errno;
	char fd_text[16];
	g_snprintf(fd_text, sizeof fd_text, "%d", options_fd);
	char *argv[] = {(char *)VR_PROXY_EXECUTABLE, (char *)"--options-fd", fd_text, NULL};
	extern char **environ;
	fexecve(exe, argv, environ);
	return -errno;
}

int vr_proxy_run(const VrProxyOptions *opts, int netns_fd)
{
	vr_cleanup_fd int exe = open_executable();
	if (exe < 0)
		return exe;
	g_autoptr(GArray) specs = vr_proxy_listen_specs(opts);
	int fds[VR_PROXY_MAX_LISTENERS];
	int r = vr_proxy_listen(opts, netns_fd, specs, fds);
	if (r < 0) {
		vr_proxy_log_listen_error(opts, r);
		return r;
	}
	vr_cleanup_fd int options = options_memfd(opts, TRUE, fds, specs->len, -1);
	if (options < 0)
		return vr_log_errno(-options, "proxy: cannot pass on the options");
	int keep[4 + VR_PROXY_MAX_LISTENERS] = {options, opts->event_fd, opts->audit_fd, opts->ready_fd};
	memcpy(keep + 4, fds, specs->len * sizeof *fds);
	r = exec_proxy(exe, options, keep, 4 + specs->len);
	return vr_log_errno(-r, "cannot run the network proxy " VR_PROXY_EXECUTABLE);
}

gboolean vr_proxy_terminates_tls(const VrProxyOptions *opts)
{
	return opts->keys || (opts->read_hosts && opts->read_hosts->len);
}

int vr_proxy_spawn(const VrProxyOptions *opts, int netns_fd, pid_t *ret_pid)
{
	VrProxyStart start;
	int r = vr_proxy_spawn_tls(opts, netns_fd, &start);
	if (r < 0)
		return r;
	vr_cleanup_pid pid_t pid = start.pid;
	g_autofree char *pem = NULL;
	guint32 hash = 0;
	r = vr_proxy_await_start(opts, start.report_fd, &pem, &hash);
	if (r < 0)
		return r;
	*ret_pid = vr_steal_pid(&pid);
	return 0;
}

/* The status a side of the report starts with: the forked child's (the
 * listeners made), then the exec'd proxy's (net/proxy.c). */
static int read_status(int fd)
{
	int r = 0;
	ssize_t n = vr_read_all(fd, &r, sizeof r);
	if (n != (ssize_t)sizeof r)
		return n < 0 ? (int)n : -ECHILD; /* it died before it could say */
	return r;
}

int vr_proxy_await_start(const VrProxyOptions *opts, int report_fd, char **ret_ca_pem, guint32 *ret_ca_hash)
{
	vr_cleanup_fd int fd = report_fd;
	*ret_ca_pem = NULL;
	int r = read_status(fd);
	if (r < 0 || !vr_proxy_terminates_tls(opts))
		return r;
	guint32 len = 0;
	if (vr_read_all(fd, &len, sizeof len) != (ssize_t)sizeof len || len > 65536)
		return -EPROTO;
	g_autofree char *pem = g_malloc0(len + 1);
	if (vr_read_all(fd, pem, len) != (ssize_t)len ||
	    vr_read_all(fd, ret_ca_hash, sizeof *ret_ca_hash) != (ssize_t)sizeof *ret_ca_hash)
		return -EPROTO;
	*ret_ca_pem = g_steal_pointer(&pem);
	return 0;
}

/* The forked child, until the exec: the supervisor's signals undone, none
 * of its other descriptors kept (the FUSE device, pipes whose EOF someone
 * waits for…), the listeners made in the sandbox's netns (with the
 * capabilities the proxy will not have). A failure goes on report_fd. */
static G_NORETURN void exec_child(const VrProxyOptions *opts, int exe, int netns_fd, int report_fd)
{
	signal(SIGTERM, SIG_DFL);
	/* Ignored dispositions survive the exec. Terminal signals go to the
	 * whole foreground group; the supervisor decides when the proxy ends
	 * (SIGTERM). */
	signal(SIGPIPE, SIG_IGN);
	signal(SIGINT, SIG_IGN);
	signal(SIGHUP, SIG_IGN);
	const int open_fds[] = {report_fd, netns_fd, opts->event_fd, opts->audit_fd, opts->keys_fd, exe};
	(void)vr_close_all_except(3, open_fds, G_N_ELEMENTS(open_fds));
	GArray *specs = vr_proxy_listen_specs(opts);
	int fds[VR_PROXY_MAX_LISTENERS];
	int r = vr_proxy_listen(opts, netns_fd, specs, fds);
	if (netns_fd >= 0)
		close(netns_fd);
	int options = r < 0 ? r : options_memfd(opts, FALSE, fds, specs->len, report_fd);
	if (options >= 0) {
		int keep[5 + VR_PROXY_MAX_LISTENERS] = {options, report_fd, opts->event_fd, opts->audit_fd, opts->keys_fd};
		memcpy(keep + 5, fds, specs->len * sizeof *fds);
		/* The report's first part: the listeners exist. The supervisor
		 * goes on while this process execs and the proxy starts. */
		r = 0;
		(void)vr_write_all(report_fd, &r, sizeof r);
		r = exec_proxy(exe, options, keep, 5 + specs->len);
	} else {
		r = options;
	}
	(void)vr_write_all(report_fd, &r, sizeof r);
	_exit(VR_EXIT_CANNOT_EXEC);
}

int vr_proxy_spawn_tls(const VrProxyOptions *opts, int netns_fd, VrProxyStart *ret)
{
	*ret = (VrProxyStart){.pid = -1, .report_fd = -1};
	vr_cleanup_fd int exe = open_executable();
	if (exe < 0)
		return exe;
	vr_cleanup_pair int pipefd[2] = {-1, -1};
	if (pipe2(pipefd, O_CLOEXEC) < 0)
		return -errno;
	vr_cleanup_pid pid_t pid = vr_fork_helper(SIGKILL, 1);
	if (pid < 0)
		return -errno;
	if (pid == 0)
		exec_child(opts, exe, netns_fd, pipefd[1]);
	vr_clear_fd(&pipefd[1]);
	int r = read_status(pipefd[0]);
	if (r < 0)
		return r;
	ret->pid = vr_steal_pid(&pid);
	ret->report_fd = vr_steal_fd(&pipefd[0]);
	return 0;
}
