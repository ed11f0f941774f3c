/* The network proxy process: listeners (in the sandbox's netns), the
 * allow/deny decision, the byte relay and the audit events. The HTTP and
 * SOCKS5 front ends are in net/http.c and net/socks.c. */
#include "net/proxy-private.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <glib-unix.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "audit/json.h"
#include "common/cleanup.h"
#include "common/fd-util.h"
#include "common/log.h"
#include "net/ca.h"
#include "net/listen.h"
#include "net/proxy-launch.h"

/* A handshake that takes longer than this is dropped: it holds a worker. */
#define HANDSHAKE_TIMEOUT_S 30
#define MAX_HANDSHAKES 64

/* ---- audit ------------------------------------------------------------ */

static void json_string(GString *out, const char *s)
{
	if (s)
		vr_json_append_string(out, s);
	else
		g_string_append(out, "null");
}

ProxyConn *proxy_conn_new(VrProxy *proxy, const char *proto)
{
	ProxyConn *c = g_new0(ProxyConn, 1);
	c->proxy = proxy;
	c->proto = proto;
	c->start_us = g_get_monotonic_time();
	c->start = g_date_time_new_now_utc();
	return c;
}

void proxy_refuse(ProxyConn *c, const char *result, char *reason, GSocketConnection *client, const void *msg,
                  gsize len)
{
	if (result)
		c->result = result;
	if (reason) {
		g_free(c->reason);
		c->reason = reason;
	}
	proxy_conn_finish(c);
	GOutputStream *out = g_io_stream_get_output_stream(G_IO_STREAM(client));
	g_output_stream_write_all(out, msg, len, NULL, NULL, NULL);
}

void proxy_conn_finish(ProxyConn *c)
{
	const VrProxyOptions *opts = c->proxy->opts;
	g_autofree char *ts = g_date_time_format(c->start, "%Y-%m-%dT%H:%M:%S.%fZ");
	g_autoptr(GString) j = g_string_new("{\"ts\":");
	json_string(j, ts);
	g_string_append(j, ",\"op\":\"connect\",\"proto\":");
	json_string(j, c->proto);
	g_string_append(j, ",\"host\":");
	json_string(j, c->host);
	g_string_append_printf(j, ",\"port\":%u,\"result\":", c->port);
	json_string(j, c->result ? c->result : "failed");
	g_string_append(j, ",\"rule\":");
	json_string(j, c->rule);
	g_string_append(j, ",\"reason\":");
	json_string(j, c->reason);
	g_string_append(j, ",\"address\":");
	json_string(j, c->address);
	if (c->method) {
		g_string_append(j, ",\"method\":");
		json_string(j, c->method);
		g_string_append(j, ",\"path\":");
		json_string(j, c->path);
		g_string_append_printf(j, ",\"status\":%d", c->status);
	}
	if (c->keys) {
		g_string_append(j, ",\"keys\":");
		json_string(j, c->keys);
	}
	g_string_append_printf(j, ",\"bytes_up\":%" G_GUINT64_FORMAT ",\"bytes_down\":%" G_GUINT64_FORMAT
	                          ",\"duration_ms\":%" G_GINT64_FORMAT "}",
	                       c->bytes_up, c->bytes_down, (g_get_monotonic_time() - c->start_us) / 1000);

	if (opts->event_fd >= 0) {
		/* One event, one datagram: the audit writer needs no framing. */
		while (send(opts->event_fd, j->str, j->len, MSG_NOSIGNAL) < 0 && errno == EINTR)
			;
	}
	if (opts->audit_fd >= 0) {
		g_string_append_c(j, '\n');
		g_mutex_lock(&c->proxy->audit_lock);
		(void)vr_write_all(opts->audit_fd, j->str, j->len);
		g_mutex_unlock(&c->proxy->audit_lock);
	}
	g_free(c->host);
	g_free(c->reason);
	g_free(c->address);
	g_free(c->method);
	g_free(c->path);
	g_free(c->keys);
	g_date_time_unref(c->start);
	g_free(c);
}

/* ---- decision --------------------------------------------------------- */

static GSocketConnection *deny(ProxyConn *c, ProxyStatus *ret_status, char *reason)
{
	c->result = "denied";
	c->reason = reason;
	*ret_status = PROXY_DENIED;
	return NULL;
}

static GSocketConnection *fail(ProxyConn *c, ProxyStatus *ret_status, ProxyStatus status, char *reason)
{
	c->result = "failed";
	c->reason = reason;
	*ret_status = status;
	return NULL;
}

GSocketConnection *proxy_open(ProxyConn *c, ProxyStatus *ret_status)
{
	const VrNetAllow *allow = c->proxy->opts->allow;
	g_autoptr(GError) error = NULL;

	if (!vr_net_host_is_valid(c->host))
		return deny(c, ret_status, g_strdup("invalid host name"));
	/* The tripwire: a key (real or sentinel) in a name asked for is on
	 * its way out in a DNS query or a SNI. */
	char *tripped = c->proxy->tls ? vr_inject_check_host(proxy_tls_inject(c->proxy->tls), c->host) : NULL;
	if (tripped)
		return deny(c, ret_status, tripped);
	if (c->port == 0)
		return deny(c, ret_status, g_strdup("invalid port 0"));
	c->rule = vr_net_allow_match(allow, c->host, c->port);
	if (!c->rule)
		return deny(c, ret_status, g_strdup("not in the allow list (--net allow=PATTERN)"));

	/* Resolve here, outside the sandbox; an IP literal comes back as is. */
	GList *addrs = proxy_tls_test_resolve(c->proxy->tls, c->host);
	if (!addrs)
		addrs = g_resolver_lookup_by_name(c->proxy->resolver, c->host, NULL, &error);
	if (!addrs)
		return fail(c, ret_status, PROXY_NO_HOST, g_strdup_printf("cannot resolve: %s", error->message));

	/* Every address is checked before any is used: a name that mixes a public
	 * and a private address is a rebinding attempt, not a fallback. */
	if (!vr_net_allow_get_private(allow)) {
		for (GList *l = addrs; l; l = l->next) {
			VrIpAddr ip = {.family = g_inet_address_get_family(l->data)};
			memcpy(ip.bytes, g_inet_address_to_bytes(l->data), g_inet_address_get_native_size(l->data));
			const char *why = vr_net_addr_forbidden(&ip);
			if (why) {
				g_autofree char *a = g_inet_address_to_string(l->data);
				g_resolver_free_addresses(addrs);
				return deny(c, ret_status,
				            g_strdup_printf("resolves to %s, a %s address (--net allow-private allows it)",
				                            a, why));
			}
		}
	}

	g_autoptr(GSocketClient) client = g_socket_client_new();
	/* Never chain through GIO's own proxy settings (our own env has them). */
	g_socket_client_set_enable_proxy(client, FALSE);
	g_socket_client_set_timeout(client, PROXY_CONNECT_TIMEOUT_S);
	GSocketConnection *conn = NULL;
	for (GList *l = addrs; l && !conn; l = l->next) {
		/* Connect to exactly the checked address: no second lookup that a
		 * rebinding DNS server could answer differently. */
		g_autoptr(GSocketAddress) sa = g_inet_socket_address_new(l->data, proxy_tls_upstream_port(c));
		g_clear_error(&error);
		conn = g_socket_client_connect(client, G_SOCKET_CONNECTABLE(sa), NULL, &error);
		if (conn)
			c->address = g_inet_address_to_string(l->data);
	}
	g_resolver_free_addresses(addrs);
	if (!conn) {
		ProxyStatus st = g_error_matches(error, G_IO_ERROR, G_IO_ERROR_CONNECTION_REFUSED)
		                         ? PROXY_REFUSED
		                         : PROXY_UNREACHABLE;
		return fail(c, ret_status, st, g_strdup_printf("cannot connect: %s", error->message));
	}
	c->result = "ok";
	*ret_status = PROXY_OK;
	return conn;
}

/* ---- server ----------------------------------------------------------- */

/* Accepting happens in the main thread only; handshakes run in a pool of
 * MAX_HANDSHAKES threads. When all are busy the service stops accepting
 * (new clients wait in the kernel's backlog) and the main thread starts it
 * again when a handshake ends.
 *
 * Not GThreadedSocketService: it restarts its accept loop from the pool
 * thread that brings the job count back under max-threads, and
 * g_socket_listener_accept_async() (glib 2.74) attaches its sources to the
 * main context before it sets the task's data, so the main thread could
 * dispatch accept_ready() on a task that has no data yet: the "segfault at
 * 8 in libgio" under 200 concurrent tunnels (issue 17). Here every
 * start/stop of the service runs in the main thread. */
typedef struct {
	VrProxy *proxy;
	GSocketConnection *conn;
	const VrListenSpec *spec;
} Handshake;

static gboolean handshake_done(gpointer data)
{
	VrProxy *proxy = data;
	if (proxy->handshakes-- == MAX_HANDSHAKES && proxy->serving)
		g_socket_service_start(proxy->service);
	return G_SOURCE_REMOVE;
}

static void handshake_run(gpointer data, gpointer user_data)
{
	Handshake *h = data;
	(void)user_data;
	g_socket_set_timeout(g_socket_connection_get_socket(h->conn), HANDSHAKE_TIMEOUT_S);
	switch (h->spec->kind) {
	case VR_LISTEN_HTTP: proxy_http_handle(h->proxy, h->conn); break;
	case VR_LISTEN_SOCKS: proxy_socks_handle(h->proxy, h->conn); break;
	case VR_LISTEN_BRIDGE: proxy_bridge_handle(h->proxy, h->conn, h->spec->bridge); break;
	}
	VrProxy *proxy = h->proxy;
	g_object_unref(h->conn);
	g_free(h);
	g_main_context_invoke(NULL, handshake_done, proxy);
}

static gboolean on_incoming(GSocketService *service, GSocketConnection *conn, GObject *source, gpointer data)
{
	VrProxy *proxy = data;
	const VrListenSpec *spec = source ? g_object_get_data(source, "vr-listen-spec") : NULL;
	if (!spec)
		return TRUE; /* cannot happen: every socket was added with its marker */
	Handshake *h = g_new0(Handshake, 1);
	h->proxy = proxy;
	h->conn = g_object_ref(conn);
	h->spec = spec;
	if (++proxy->handshakes == MAX_HANDSHAKES)
		g_socket_service_stop(service);
	g_thread_pool_push(proxy->pool, h, NULL);
	return TRUE;
}

static gboolean on_quit_signal(gpointer data)
{
	g_main_loop_quit(data);
	return G_SOURCE_CONTINUE;
}

/* Handshake threads may still be running when serve() returns, and the
 * process ends right after it without waiting for them: their VrProxy must
 * outlive serve()'s frame, so it is static. */
static VrProxy the_proxy;

/* Serves on fds (one per spec, -1 where an optional one could not be made)
 * until SIGTERM/SIGINT. */
static int serve(const VrProxyOptions *opts, const GArray *specs, const int *fds, VrProxyTls *tls)
{
	if (vr_proxy_confine() < 0)
		return -EPERM;
	g_autoptr(GError) error = NULL;
	VrProxy *proxy = &the_proxy;
	*proxy = (VrProxy){.opts = opts, .resolver = g_resolver_get_default(), .specs = specs, .tls = tls};
	g_mutex_init(&proxy->audit_lock);
	proxy->relays = g_hash_table_new(NULL, NULL);
	proxy->listeners = g_ptr_array_new();
	proxy->pool = g_thread_pool_new(handshake_run, NULL, MAX_HANDSHAKES, FALSE, &error);
	if (!proxy->pool) {
		vr_error("proxy: cannot start the handshake threads: %s", error->message);
		return -EAGAIN;
	}

	g_autoptr(GMainLoop) loop = g_main_loop_new(NULL, FALSE);
	guint sig_term = g_unix_signal_add(SIGTERM, on_quit_signal, loop);
	guint sig_int = g_unix_signal_add(SIGINT, on_quit_signal, loop);

	proxy->service = g_socket_service_new();
	/* Services start active, and each add_socket would then cancel and
	 * restart the pending accept; a client already waiting in the backlog
	 * (the supervisor connects as soon as we report ready) could be accepted
	 * by the cancelled operation and dropped. Add first, then start. */
	g_socket_service_stop(proxy->service);
	g_signal_connect(proxy->service, "incoming", G_CALLBACK(on_incoming), proxy);
	int r = 0;
	for (guint i = 0; i < specs->len && r == 0; i++) {
		if (fds[i] < 0)
			continue;
		/* The marker tells on_incoming which listener a client came to. */
		GObject *marker = g_object_new(G_TYPE_OBJECT, NULL);
		g_object_set_data(marker, "vr-listen-spec", &g_array_index(specs, VrListenSpec, i));
		g_ptr_array_add(proxy->listeners, marker);
		g_autoptr(GSocket) s = g_socket_new_from_fd(fds[i], &error);
		if (!s || !g_socket_listener_add_socket(G_SOCKET_LISTENER(proxy->service), s, marker, &error)) {
			vr_error("proxy: cannot use the listening socket: %s", error->message);
			r = -EINVAL;
		}
	}
	if (r == 0) {
		proxy->serving = TRUE;
		g_socket_service_start(proxy->service);
		g_main_loop_run(loop);
		proxy->serving = FALSE;
		g_socket_service_stop(proxy->service);
		g_socket_listener_close(G_SOCKET_LISTENER(proxy->service));
		proxy_relays_stop(proxy);
	}
	g_source_remove(sig_term);
	g_source_remove(sig_int);
	/* Handshake threads may still be running; exit without tearing down
	 * what they use. The process ends right after this. */
	return r;
}

static void report_ready(const VrProxyOptions *opts, const int fds[2])
{
	if (opts->ready_fd < 0)
		return;
	g_autoptr(GString) line = g_string_new(NULL);
	for (int i = 0; i < 2; i++) {
		struct sockaddr_storage ss;
		socklen_t len = sizeof ss;
		char host[INET6_ADDRSTRLEN] = "?";
		unsigned port = 0;
		if (getsockname(fds[i], (struct sockaddr *)&ss, &len) == 0) {
			if (ss.ss_family == AF_INET) {
				struct sockaddr_in *in = (struct sockaddr_in *)&ss;
				inet_ntop(AF_INET, &in->sin_addr, host, sizeof host);
				port = ntohs(in->sin_port);
			} else {
				struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)&ss;
				inet_ntop(AF_INET6, &in6->sin6_addr, host, sizeof host);
				port = ntohs(in6->sin6_port);
			}
		}
		g_string_append_printf(line, "%s%s=%s%s%s:%u", i ? " " : "", i ? "socks" : "http",
		                       strchr(host, ':') ? "[" : "", host, strchr(host, ':') ? "]" : "", port);
	}
	g_string_append_c(line, '\n');
	(void)vr_write_all(opts->ready_fd, line->str, line->len);
}

/* The specs of the sockets vault-run made (net/listen.h) from the same
 * options: one each, in order. NULL (said) when the count differs. */
static GArray *listener_specs(const VrProxyOptions *opts, guint n_fds)
{
	GArray *specs = vr_proxy_listen_specs(opts);
	if (specs->len == n_fds)
		return specs;
	vr_error("proxy: given %u listening sockets for %u", n_fds, specs->len);
	g_array_unref(specs);
	return NULL;
}

int vr_proxy_foreground_main(const VrProxyOptions *opts, const int *fds, guint n_fds)
{
	GArray *specs = listener_specs(opts, n_fds);
	if (!specs)
		return -EINVAL;
	report_ready(opts, fds);
	/* Not freed: handshake threads still running at exit read their
	 * listener's spec (serve() keeps it in the_proxy). */
	return serve(opts, specs, fds, NULL);
}

/* ---- the supervisor's child (vr_proxy_spawn_tls) ----------------------- */

/* The TLS set-up, before the proxy confines itself (the trust store is
 * read now). The CA's certificate and its subject hash go back to the
 * supervisor. */
static int start_tls(const VrProxyOptions *opts, VrProxyTls **ret_tls, char **ret_pem, guint32 *ret_hash)
{
	*ret_tls = NULL;
	if (!vr_proxy_terminates_tls(opts))
		return 0;
	g_autoptr(GError) error = NULL;
	*ret_tls = proxy_tls_new(opts, ret_pem, &error);
	if (!*ret_tls || !vr_net_ca_subject_hash(opts->run_id ? opts->run_id : "proxy", ret_hash, &error)) {
		vr_error("cannot start TLS termination: %s", error->message);
		return -EPROTO;
	}
	return 0;
}

int vr_proxy_child_main(const VrProxyOptions *opts, const int *fds, guint n_fds, int report_fd)
{
	VrProxyTls *tls = NULL;
	g_autofree char *pem = NULL;
	guint32 hash = 0;
	GArray *specs = listener_specs(opts, n_fds);
	int r = specs ? start_tls(opts, &tls, &pem, &hash) : -EINVAL;
	if (r == 0 && tls) {
		g_autoptr(GError) error = NULL;
		if (!proxy_tls_load_trust(tls, &error)) {
			vr_error("cannot start TLS termination: %s", error->message);
			r = -EPROTO;
		}
	}
	/* The report's second part (net/proxy-launch.c's read_start; the
	 * first said the listeners were made): the status, then with TLS the
	 * CA. The supervisor reads it just before COMMAND starts. */
	(void)vr_write_all(report_fd, &r, sizeof r);
	if (r == 0 && tls) {
		guint32 len = (guint32)strlen(pem);
		(void)vr_write_all(report_fd, &len, sizeof len);
		(void)vr_write_all(report_fd, pem, len);
		(void)vr_write_all(report_fd, &hash, sizeof hash);
	}
	close(report_fd);
	if (r < 0)
		return 1;
	VrProxyOptions o = *opts;
	o.ready_fd = -1;
	o.keys_fd = -1;
	return serve(&o, specs, fds, tls) < 0 ? 1 : 0;
}
