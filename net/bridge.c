/* The front end of a model-server bridge (`--net allow-localhost=PORT`):
 * a client of 127.0.0.1:PORT inside the sandbox's netns is connected to the
 * same port on the host's loopback, from the proxy, which lives outside.
 * No name, no resolution, no allow-list: the port was the decision. The
 * tcp form relays every byte (one audit event per connection); the http
 * form goes through the gate (net/gate.h, one event per request). Runs in
 * a handshake worker thread. */
#include "net/proxy-private.h"

#include <string.h>

/* 127.0.0.1 first, then ::1: a server that listens on "localhost" may have
 * taken either. */
static GSocketConnection *connect_loopback(guint16 port, char **ret_address, GError **error)
{
	static const char *const addrs[] = {"127.0.0.1", "::1"};
	g_autoptr(GSocketClient) client = g_socket_client_new();
	g_socket_client_set_enable_proxy(client, FALSE);
	g_socket_client_set_timeout(client, PROXY_CONNECT_TIMEOUT_S);
	for (size_t i = 0; i < G_N_ELEMENTS(addrs); i++) {
		g_autoptr(GSocketAddress) sa = g_inet_socket_address_new_from_string(addrs[i], port);
		g_clear_error(error);
		GSocketConnection *conn = g_socket_client_connect(client, G_SOCKET_CONNECTABLE(sa), NULL, error);
		if (conn) {
			*ret_address = g_strdup(addrs[i]);
			return conn;
		}
	}
	return NULL;
}

static void reply_unreachable(GSocketConnection *client, const VrNetBridge *b, const char *why)
{
	g_autofree char *body =
	        g_strdup_printf("vault-run: nothing answers on the host's 127.0.0.1:%u (%s): %s\n", b->port, b->rule, why);
	g_autofree char *msg = g_strdup_printf("HTTP/1.1 502 Bad Gateway\r\n"
	                                       "Content-Type: text/plain; charset=utf-8\r\n"
	                                       "Content-Length: %zu\r\n"
	                                       "Connection: close\r\n"
	                                       "Server: vault-run\r\n"
	                                       "\r\n%s",
	                                       strlen(body), body);
	GOutputStream *out = g_io_stream_get_output_stream(G_IO_STREAM(client));
	g_output_stream_write_all(out, msg, strlen(msg), NULL, NULL, NULL);
}

void proxy_bridge_handle(VrProxy *proxy, GSocketConnection *client, const VrNetBridge *b)
{
	gboolean http = b->kind == VR_BRIDGE_HTTP;
	g_autoptr(GError) error = NULL;
	g_autofree char *address = NULL;
	g_autoptr(GSocketConnection) up = connect_loopback(b->port, &address, &error);
	if (!up || !http) {
		ProxyConn *c = proxy_conn_new(proxy, http ? "localhost-http" : "localhost");
		c->host = g_strdup("127.0.0.1");
		c->port = b->port;
		c->rule = b->rule;
		if (!up) {
			c->result = "failed";
			c->reason = g_strdup_printf("cannot connect: %s", error->message);
			/* Recorded before the client hears it: a client that
			 * exits on the 502 may end the run, and the proxy with it. */
			proxy_conn_finish(c);
			if (http)
				reply_unreachable(client, b, error->message);
			return;
		}
		c->result = "ok";
		c->address = g_steal_pointer(&address);
		proxy_relay(c, client, g_io_stream_get_input_stream(G_IO_STREAM(client)), up);
		return;
	}
	proxy_relay_gated(proxy, b, address, client, up);
}
