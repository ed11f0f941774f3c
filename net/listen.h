/* The proxy's listening sockets: HTTP and SOCKS on the listen host, and a
 * pair per allow-localhost bridge. vault-run makes them before it execs
 * vault-run-proxy (net/proxy-launch.h) — in the sandbox's netns, which
 * needs CAP_SYS_ADMIN over its user namespace, which the proxy then never
 * holds: an exec by a uid that is not 0 there drops every capability, and
 * the supervisor drops them for one that is. The proxy gets the sockets
 * across the exec and makes the same specs again from the same options. */
#pragma once
#include <glib.h>

#include "net/proxy.h"

/* What a listening socket serves (the proxy's GSocketListener knows it by
 * a marker object: net/proxy.c). */
typedef enum { VR_LISTEN_HTTP, VR_LISTEN_SOCKS, VR_LISTEN_BRIDGE } VrListenKind;

typedef struct {
	VrListenKind kind;
	const VrNetBridge *bridge; /* VR_LISTEN_BRIDGE */
	const char *host;          /* an IP literal */
	guint16 port;
	gboolean optional; /* a bridge's ::1: IPv6 may be off in the netns */
} VrListenSpec;

/* Bounds the message that carries the sockets out of the netns, and the
 * list that crosses the exec. */
#define VR_PROXY_MAX_LISTENERS (2 + 2 * VR_NET_MAX_BRIDGES)

/* The sockets to listen on, in order (VrListenSpec; g_array_unref): they
 * point into opts->allow. */
GArray *vr_proxy_listen_specs(const VrProxyOptions *opts);
/* One socket per spec in fds (-1 for an optional one that could not be
 * made), in netns_fd's netns (< 0: this one). 0 or -errno, nothing left
 * open. */
int vr_proxy_listen(const VrProxyOptions *opts, int netns_fd, const GArray *specs, int *fds);
void vr_proxy_log_listen_error(const VrProxyOptions *opts, int r);
