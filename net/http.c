/* The HTTP front end of the proxy: `CONNECT host:port` tunnels and plain
 * requests with an absolute URI (`GET http://host/path HTTP/1.1`). One
 * request per client connection: the upstream request carries
 * `Connection: close`, so a second request on the same connection can never
 * reach a host that was not decided on. Runs in a handshake worker thread. */
#include "net/proxy-private.h"
#include "net/parse.h"

#include <string.h>

char *proxy_http_message(int code, const char *status, const char *body)
{
	return g_strdup_printf("HTTP/1.1 %d %s\r\n"
	                       "Content-Type: text/plain; charset=utf-8\r\n"
	                       "Content-Length: %zu\r\n"
	                       "Connection: close\r\n"
	                       "Proxy-Agent: vault-run\r\n"
	                       "\r\n%s",
	                       code, status, strlen(body), body);
}

static void reply(GSocketConnection *client, int code, const char *status, const char *body)
{
	g_autofree char *msg = proxy_http_message(code, status, body);
	GOutputStream *out = g_io_stream_get_output_stream(G_IO_STREAM(client));
	g_output_stream_write_all(out, msg, strlen(msg), NULL, NULL, NULL);
}

/* C's refusal as its status says (proxy_refuse: the event first). Takes c. */
static void reply_error(GSocketConnection *client, ProxyConn *c, ProxyStatus st)
{
	g_autofree char *body = NULL;
	int code;
	const char *status;
	if (st == PROXY_DENIED) {
		body = g_strdup_printf("vault-run: connection to %s:%u denied: %s\n", c->host ? c->host : "?",
		                       c->port, c->reason);
		code = 403, status = "Forbidden";
	} else {
		body = g_strdup_printf("vault-run: cannot reach %s:%u: %s\n", c->host, c->port, c->reason);
		if (st == PROXY_UNREACHABLE)
			code = 504, status = "Gateway Timeout";
		else if (st == PROXY_NO_HOST)
			/* Not a 5xx: clients (the AI SDKs of opencode & co.) retry a 5xx
			 * with backoff for a minute; a name that does not resolve from
			 * here (no network, no DNS) will not resolve a second later. */
			code = 404, status = "Not Found";
		else
			code = 502, status = "Bad Gateway";
	}
	g_autofree char *msg = proxy_http_message(code, status, body);
	proxy_refuse(c, NULL, NULL, client, msg, strlen(msg));
}

/* Reads up to and including the empty line that ends the head. The bytes
 * after it (a body, a TLS ClientHello) stay buffered in `in`. */
static char *read_head(GBufferedInputStream *in, gsize *ret_len)
{
	for (;;) {
		gsize avail = 0;
		const char *buf = g_buffered_input_stream_peek_buffer(in, &avail);
		gsize len = vr_http_head_length(buf, avail);
		if (len) {
			/* Bytes as they are: the parser refuses a NUL in them. */
			char *head = g_malloc(len + 1);
			memcpy(head, buf, len);
			head[len] = '\0';
			g_input_stream_skip(G_INPUT_STREAM(in), len, NULL, NULL);
			*ret_len = len;
			return head;
		}
		if (avail >= VR_HTTP_MAX_HEAD)
			return NULL;
		if (g_buffered_input_stream_fill(in, -1, NULL, NULL) <= 0)
			return NULL;
	}
}

static const char *request_error_text(VrProxyRequestError e)
{
	switch (e) {
	case VR_PROXY_REQ_OK: break;
	case VR_PROXY_REQ_BAD_HEAD: return "malformed request head (a control byte, or a field that is not NAME: VALUE)";
	case VR_PROXY_REQ_BAD_LINE: return "malformed request line";
	case VR_PROXY_REQ_NOT_PROXY: return "expected CONNECT host:port or an absolute http:// URI";
	case VR_PROXY_REQ_USERINFO: return "user info in the URL is not supported";
	case VR_PROXY_REQ_BAD_AUTHORITY: return "malformed host:port";
	}
	return "bad request";
}

/* Where the body of a plain-HTTP request ends, as the origin reads it:
 * its Content-Length (several must agree), 0 without one. FALSE for a
 * body the scan cannot follow: a Transfer-Encoding (a chunked body's
 * framing could cut a value in two, and the origin joins the parts) or
 * Content-Lengths that disagree. */
static gboolean body_length(const VrProxyRequest *req, guint64 *ret_len)
{
	guint64 len = 0;
	gboolean seen = FALSE;
	for (guint i = 0; i < req->fields->len; i++) {
		const char *f = req->fields->pdata[i];
		const char *colon = strchr(f, ':');
		if (!colon)
			continue;
		gsize n = (gsize)(colon - f);
		if (n == strlen("Transfer-Encoding") && g_ascii_strncasecmp(f, "Transfer-Encoding", n) == 0)
			return FALSE;
		if (n != strlen("Content-Length") || g_ascii_strncasecmp(f, "Content-Length", n) != 0)
			continue;
		guint64 l = 0;
		g_autofree char *trimmed = g_strstrip(g_strdup(colon + 1));
		if (!*trimmed || !g_ascii_string_to_unsigned(trimmed, 10, 0, G_MAXUINT64, &l, NULL) ||
		    (seen && l != len))
			return FALSE;
		len = l;
		seen = TRUE;
	}
	*ret_len = len;
	return TRUE;
}

void proxy_http_handle(VrProxy *proxy, GSocketConnection *client)
{
	g_autoptr(GInputStream) in =
	        g_buffered_input_stream_new_sized(g_io_stream_get_input_stream(G_IO_STREAM(client)), VR_HTTP_MAX_HEAD);
	gsize head_len = 0;
	g_autofree char *head = read_head(G_BUFFERED_INPUT_STREAM(in), &head_len);
	if (!head) {
		reply(client, 400, "Bad Request", "vault-run proxy: unreadable or oversized request head\n");
		return;
	}
	g_auto(VrProxyRequest) req = {0};
	VrProxyRequestError e = vr_proxy_request_parse(head, head_len, &req);
	if (e != VR_PROXY_REQ_OK) {
		g_autofree char *body = g_strdup_printf("vault-run proxy: %s\n", request_error_text(e));
		if (e == VR_PROXY_REQ_USERINFO || e == VR_PROXY_REQ_BAD_AUTHORITY) {
			/* A request that names a destination is a decision: audited. */
			ProxyConn *c = proxy_conn_new(proxy, req.connect ? "connect" : "http");
			c->host = g_strdup(req.authority);
			g_autofree char *msg = proxy_http_message(400, "Bad Request", body);
			proxy_refuse(c, "denied", g_strdup(request_error_text(e)), client, msg, strlen(msg));
		} else {
			reply(client, 400, "Bad Request", body);
		}
		return;
	}
	ProxyConn *c = proxy_conn_new(proxy, req.connect ? "connect" : "http");
	c->host = g_strdup(req.host);
	c->port = req.port;

	/* The tripwire on plain HTTP: a key (real or sentinel) in the head,
	 * which would cross the network in clear text. */
	char *tripped = !req.connect && proxy->tls ? vr_inject_check_plain(proxy_tls_inject(proxy->tls), head,
	                                                                   head_len, c->host)
	                                           : NULL;
	if (tripped) {
		c->result = "denied";
		c->reason = tripped;
		reply_error(client, c, PROXY_DENIED);
		return;
	}
	/* With keys bound, the rest is scanned (net/relay.c), which needs to
	 * know where the body ends. */
	VrInject *inj = !req.connect && proxy->tls ? proxy_tls_inject(proxy->tls) : NULL;
	g_autoptr(VrScrub) scan = inj ? vr_inject_plain_scan(inj) : NULL;
	guint64 body_len = 0;
	if (scan && vr_scrub_count(scan) && !body_length(&req, &body_len)) {
		c->result = "denied";
		c->reason = g_strdup("a chunked plain-HTTP body (or Content-Lengths that disagree) while keys are "
		                     "bound: its framing could cut a key in two; send it with one Content-Length");
		reply_error(client, c, PROXY_DENIED);
		return;
	}
	ProxyStatus st;
	g_autoptr(GSocketConnection) up = proxy_open(c, &st);
	if (!up) {
		reply_error(client, c, st);
		return;
	}
	g_autoptr(GIOStream) up_tls = NULL;
	if (req.connect && proxy_tls_terminates(proxy, c) && !(up_tls = proxy_tls_upstream(c, up))) {
		reply_error(client, c, PROXY_REFUSED);
		return;
	}

	if (req.connect) {
		static const char ok[] = "HTTP/1.1 200 Connection established\r\nProxy-Agent: vault-run\r\n\r\n";
		GOutputStream *out = g_io_stream_get_output_stream(G_IO_STREAM(client));
		if (!g_output_stream_write_all(out, ok, strlen(ok), NULL, NULL, NULL)) {
			proxy_conn_finish(c);
			return;
		}
	} else {
		/* Origin form with our own Host and Connection: close. */
		g_autoptr(GString) h = vr_proxy_request_rewrite(&req);
		GOutputStream *out = g_io_stream_get_output_stream(G_IO_STREAM(up));
		if (!g_output_stream_write_all(out, h->str, h->len, NULL, NULL, NULL)) {
			c->result = "failed";
			c->reason = g_strdup("upstream closed before the request was sent");
			reply_error(client, c, PROXY_REFUSED);
			return;
		}
		c->bytes_up += h->len;
		/* The tripwire on the rest: the body (nothing after it is sent). */
		if (scan && vr_scrub_count(scan)) {
			proxy_relay_plain(c, client, in, up, g_steal_pointer(&scan), body_len);
			return;
		}
	}
	proxy_tunnel(c, client, in, up, up_tls);
}
