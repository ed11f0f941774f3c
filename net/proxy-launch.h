/* How vault-run starts its network proxy. The proxy and its CA are an
 * executable of their own, vault-run-proxy (net/proxy-main.c): GnuTLS and
 * the seven objects it brings cost 3-4 ms to load, and vault-run loaded
 * them for every run, with or without a network (docs/PERFORMANCE.md
 * "Start-up"). vr_proxy_spawn_tls forks and execs it; vr_proxy_run
 * (`vault-run proxy`) execs it in place. Their options cross the exec as one
 * GVariant in a sealed memfd, decoded here into a VrProxyLaunch that owns
 * what the options point to; the listening sockets, made before the exec
 * (net/listen.h), cross it as descriptors. The proxy drops every
 * capability first thing (net/proxy-main.c).
 *
 * Where the executable is: next to the running one (/proc/self/exe's
 * directory: build/, tests/bin/, or an install that keeps both in one
 * directory), else VR_LIBEXECDIR (the install's libexec/vault-run). */
#pragma once
#include <glib.h>

#include "net/listen.h"
#include "net/proxy.h"

#define VR_PROXY_EXECUTABLE "vault-run-proxy"

typedef struct {
	VrProxyOptions opts; /* points into the fields below */
	gboolean foreground; /* vr_proxy_run: serve in this process; no report */
	int log_level;
	int listen_fds[VR_PROXY_MAX_LISTENERS]; /* made by vault-run (net/listen.h) */
	guint n_listen_fds;
	int report_fd; /* vr_proxy_spawn_tls's pipe (net/proxy.c); -1 in the foreground */
	VrNetAllow *allow;
	VrNetKeys *keys; /* NULL: no --key */
	GPtrArray *read_hosts;
	char *listen_host, *run_id;
} VrProxyLaunch;

void vr_proxy_launch_clear(VrProxyLaunch *l);
G_DEFINE_AUTO_CLEANUP_CLEAR_FUNC(VrProxyLaunch, vr_proxy_launch_clear)

/* The options (and the fds they name, which stay the same numbers across
 * the exec) as a GVariant; the keys' values are not in it (keys_fd). */
GVariant *vr_proxy_launch_encode(const VrProxyOptions *opts, gboolean foreground, const int *listen_fds,
                                 guint n_listen_fds, int report_fd);
gboolean vr_proxy_launch_decode(GVariant *v, VrProxyLaunch *l, GError **error);
/* The executable's side: decodes what the memfd fd holds. */
gboolean vr_proxy_launch_read(int fd, VrProxyLaunch *l, GError **error);

/* The executable to run instead of the one found as above (unit tests,
 * which run from tests/unit/). NULL: find it. */
void vr_proxy_launch_set_executable(const char *path);

/* ---- inside vault-run-proxy (net/proxy.c) ------------------------------ */

/* vr_proxy_spawn_tls's child after the exec, on the listeners vault-run
 * made: TLS, the report on report_fd, then serve. Returns the process's
 * exit status. */
int vr_proxy_child_main(const VrProxyOptions *opts, const int *fds, guint n_fds, int report_fd);
/* `vault-run proxy` after the exec: print the ready line, serve. 0 or
 * -errno. */
int vr_proxy_foreground_main(const VrProxyOptions *opts, const int *fds, guint n_fds);
