/* The HTTP front end of the proxy: `CONNECT host:port` tunnels and plain
 * requests with an absolute URI (`GET http://host/path HTTP/1.1`). One
 * request per client connection: the upstream request carries
 * `Connection: close`, so a second request on the same connection can never
 * reach a host that was not decided on. Runs in a handshake worker thread. */
#include "proxy-private.h"

#include <string.h>

/* The whole request head must fit: bounded memory per client. */
#define MAX_HEAD (32 * 1024)

static void reply(GSocketConnection *client, int code, const char *status, const char *body)
{
	g_autofree char *msg = g_strdup_printf("HTTP/1.1 %d %s\r\n"
	                                       "Content-Type: text/plain; charset=utf-8\r\n"
	                                       "Content-Length: %zu\r\n"
	                                       "Connection: close\r\n"
	                                       "Proxy-Agent: vault-run\r\n"
	                                       "\r\n%s",
	                                       code, status, strlen(body), body);
	GOutputStream *out = g_io_stream_get_output_stream(G_IO_STREAM(client));
	g_output_stream_write_all(out, msg, strlen(msg), NULL, NULL, NULL);
}

static void reply_error(GSocketConnection *client, ProxyConn *c, ProxyStatus st)
{
	g_autofree char *body = NULL;
	if (st == PROXY_DENIED) {
		body = g_strdup_printf("vault-run: connection to %s:%u denied: %s\n", c->host ? c->host : "?",
		                       c->port, c->reason);
		reply(client, 403, "Forbidden", body);
	} else {
		body = g_strdup_printf("vault-run: cannot reach %s:%u: %s\n", c->host, c->port, c->reason);
		if (st == PROXY_UNREACHABLE)
			reply(client, 504, "Gateway Timeout", body);
		else if (st == PROXY_NO_HOST)
			/* Not a 5xx: clients (the AI SDKs of opencode & co.) retry a 5xx
			 * with backoff for a minute; a name that does not resolve from
			 * here (no network, no DNS) will not resolve a second later. */
			reply(client, 404, "Not Found", body);
		else
			reply(client, 502, "Bad Gateway", body);
	}
}

/* Reads up to and including the empty line that ends the head. The bytes
 * after it (a body, a TLS ClientHello) stay buffered in `in`. */
static char *read_head(GBufferedInputStream *in)
{
	for (;;) {
		gsize avail = 0;
		const char *buf = g_buffered_input_stream_peek_buffer(in, &avail);
		const char *end = g_strstr_len(buf, (gssize)avail, "\r\n\r\n");
		gsize len = end ? (gsize)(end - buf) + 4 : 0;
		if (!end) {
			end = g_strstr_len(buf, (gssize)avail, "\n\n"); /* bare LF, tolerated */
			len = end ? (gsize)(end - buf) + 2 : 0;
		}
		if (end) {
			char *head = g_strndup(buf, len);
			g_input_stream_skip(G_INPUT_STREAM(in), len, NULL, NULL);
			/* A NUL inside the head would hide what follows it. */
			return strlen(head) == len ? head : (g_free(head), NULL);
		}
		if (avail >= MAX_HEAD)
			return NULL;
		if (g_buffered_input_stream_fill(in, -1, NULL, NULL) <= 0)
			return NULL;
	}
}

/* "host:port", "[v6]:port", or "host" with default_port (0: port required). */
static gboolean split_authority(const char *auth, guint16 default_port, char **ret_host, guint16 *ret_port)
{
	const char *port_str = NULL;
	g_autofree char *host = NULL;
	if (auth[0] == '[') {
		const char *close = strchr(auth, ']');
		if (!close || (close[1] && close[1] != ':'))
			return FALSE;
		host = g_strndup(auth + 1, (gsize)(close - auth - 1));
		port_str = close[1] ? close + 2 : NULL;
	} else {
		const char *colon = strrchr(auth, ':');
		host = colon ? g_strndup(auth, (gsize)(colon - auth)) : g_strdup(auth);
		port_str = colon ? colon + 1 : NULL;
		if (strchr(host, ':'))
			return FALSE; /* an IPv6 literal must be in brackets */
	}
	guint64 port = default_port;
	if (port_str && (!*port_str || !g_ascii_string_to_unsigned(port_str, 10, 1, 65535, &port, NULL)))
		return FALSE;
	if (!*host || port == 0)
		return FALSE;
	*ret_host = g_steal_pointer(&host);
	*ret_port = (guint16)port;
	return TRUE;
}

static gboolean is_hop_by_hop(const char *line)
{
	static const char *const names[] = {"connection:", "proxy-connection:", "keep-alive:", "proxy-authorization:",
	                                    "proxy-authenticate:", "te:", "upgrade:", "host:"};
	for (size_t i = 0; i < G_N_ELEMENTS(names); i++)
		if (g_ascii_strncasecmp(line, names[i], strlen(names[i])) == 0)
			return TRUE;
	return FALSE;
}

void proxy_http_handle(VrProxy *proxy, GSocketConnection *client)
{
	g_autoptr(GInputStream) in =
	        g_buffered_input_stream_new_sized(g_io_stream_get_input_stream(G_IO_STREAM(client)), MAX_HEAD);
	g_autofree char *head = read_head(G_BUFFERED_INPUT_STREAM(in));
	if (!head) {
		reply(client, 400, "Bad Request", "vault-run proxy: unreadable or oversized request head\n");
		return;
	}
	g_auto(GStrv) lines = g_regex_split_simple("\r?\n", head, 0, 0);
	g_auto(GStrv) req = g_strsplit(lines[0], " ", 4);
	if (g_strv_length(req) != 3 || !g_str_has_prefix(req[2], "HTTP/1.")) {
		reply(client, 400, "Bad Request", "vault-run proxy: malformed request line\n");
		return;
	}
	const char *method = req[0], *target = req[1];
	gboolean is_connect = strcmp(method, "CONNECT") == 0;
	if (!is_connect && g_ascii_strncasecmp(target, "http://", 7) != 0) {
		/* Origin-form (`GET / HTTP/1.1`) means the client does not know it
		 * talks to a proxy; https:// must come as CONNECT. */
		reply(client, 400, "Bad Request",
		      "vault-run proxy: expected CONNECT host:port or an absolute http:// URI\n");
		return;
	}
	ProxyConn *c = proxy_conn_new(proxy, is_connect ? "connect" : "http");

	const char *path = "/";
	g_autofree char *authority = NULL;
	if (is_connect) {
		authority = g_strdup(target);
	} else {
		const char *a = target + 7;
		size_t alen = strcspn(a, "/?#");
		authority = g_strndup(a, alen);
		if (a[alen])
			path = a + alen;
		if (strchr(authority, '@')) {
			c->result = "denied";
			c->reason = g_strdup("user info in the URL is not supported");
			reply(client, 400, "Bad Request", "vault-run proxy: user info in the URL is not supported\n");
			proxy_conn_finish(c);
			return;
		}
	}
	if (!split_authority(authority, is_connect ? 0 : 80, &c->host, &c->port)) {
		c->host = g_strdup(authority);
		c->result = "denied";
		c->reason = g_strdup("malformed host:port");
		reply(client, 400, "Bad Request", "vault-run proxy: malformed host:port\n");
		proxy_conn_finish(c);
		return;
	}

	ProxyStatus st;
	g_autoptr(GSocketConnection) up = proxy_open(c, &st);
	if (!up) {
		reply_error(client, c, st);
		proxy_conn_finish(c);
		return;
	}

	if (is_connect) {
		static const char ok[] = "HTTP/1.1 200 Connection established\r\nProxy-Agent: vault-run\r\n\r\n";
		GOutputStream *out = g_io_stream_get_output_stream(G_IO_STREAM(client));
		if (!g_output_stream_write_all(out, ok, strlen(ok), NULL, NULL, NULL)) {
			proxy_conn_finish(c);
			return;
		}
	} else {
		/* Rewrite to origin form with our own Host and Connection: close. */
		g_autoptr(GString) h = g_string_new(NULL);
		g_string_append_printf(h, "%s %s %s\r\n", method, path, req[2]);
		gboolean v6 = strchr(c->host, ':') != NULL;
		if (c->port == 80)
			g_string_append_printf(h, "Host: %s%s%s\r\n", v6 ? "[" : "", c->host, v6 ? "]" : "");
		else
			g_string_append_printf(h, "Host: %s%s%s:%u\r\n", v6 ? "[" : "", c->host, v6 ? "]" : "",
			                       c->port);
		for (char **l = lines + 1; *l && **l; l++)
			if (!is_hop_by_hop(*l))
				g_string_append_printf(h, "%s\r\n", *l);
		g_string_append(h, "Connection: close\r\n\r\n");
		GOutputStream *out = g_io_stream_get_output_stream(G_IO_STREAM(up));
		if (!g_output_stream_write_all(out, h->str, h->len, NULL, NULL, NULL)) {
			c->result = "failed";
			c->reason = g_strdup("upstream closed before the request was sent");
			reply_error(client, c, PROXY_REFUSED);
			proxy_conn_finish(c);
			return;
		}
		c->bytes_up += h->len;
	}
	proxy_relay(c, client, in, up);
}
