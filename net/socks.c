/* The SOCKS5 front end of the proxy (RFC 1928): no authentication, CONNECT
 * only, domain / IPv4 / IPv6 destinations. Clients should send names
 * (socks5h://) so that resolution happens here, outside the sandbox; an IP
 * literal is only allowed when a pattern names that address. Runs in a
 * handshake worker thread. */
#include "net/proxy-private.h"
#include "net/parse.h"

#include <errno.h>
#include <string.h>

#define SOCKS_BUFSIZE 512

enum {
	SOCKS_OK = 0x00,
	SOCKS_FAILURE = 0x01,
	SOCKS_NOT_ALLOWED = 0x02,
	SOCKS_HOST_UNREACHABLE = 0x04,
	SOCKS_REFUSED = 0x05,
	SOCKS_CMD_UNSUPPORTED = 0x07,
	SOCKS_ATYP_UNSUPPORTED = 0x08,
};

/* Reads until parse() finds a whole message at the front of the buffer,
 * then drops that message from it: whatever the client sent after it (an
 * eager client's first bytes for the destination) stays buffered for the
 * relay. The result is parse()'s: > 0, or -errno; 0 when the client closed
 * or timed out first. */
typedef gssize (*ParseFn)(const guint8 *buf, gsize len, gpointer out);

static gssize read_message(GBufferedInputStream *in, ParseFn parse, gpointer out)
{
	for (;;) {
		gsize avail = 0;
		const guint8 *buf = g_buffered_input_stream_peek_buffer(in, &avail);
		gssize n = parse(buf, avail, out);
		if (n > 0)
			g_input_stream_skip(G_INPUT_STREAM(in), (gsize)n, NULL, NULL);
		if (n != 0)
			return n;
		/* Every SOCKS5 message fits in 2 + 255 or 4 + 1 + 255 + 2 bytes. */
		if (avail >= SOCKS_BUFSIZE || g_buffered_input_stream_fill(in, -1, NULL, NULL) <= 0)
			return 0;
	}
}

static gssize parse_greeting(const guint8 *buf, gsize len, gpointer out)
{
	return vr_socks5_parse_greeting(buf, len, out);
}

static gssize parse_request(const guint8 *buf, gsize len, gpointer out)
{
	return vr_socks5_parse_request(buf, len, out);
}

static gboolean write_exact(GSocketConnection *client, const void *buf, gsize len)
{
	GOutputStream *out = g_io_stream_get_output_stream(G_IO_STREAM(client));
	return g_output_stream_write_all(out, buf, len, NULL, NULL, NULL);
}

/* The bound address is not meaningful through a proxy: 0.0.0.0:0. */
static void reply(GSocketConnection *client, guint8 code)
{
	const guint8 msg[10] = {5, code, 0, 1};
	write_exact(client, msg, sizeof msg);
}

static guint8 status_to_reply(ProxyStatus st)
{
	switch (st) {
	case PROXY_OK: return SOCKS_OK;
	case PROXY_DENIED: return SOCKS_NOT_ALLOWED;
	case PROXY_REFUSED: return SOCKS_REFUSED;
	case PROXY_NO_HOST:
	case PROXY_UNREACHABLE: return SOCKS_HOST_UNREACHABLE;
	}
	return SOCKS_FAILURE;
}

void proxy_socks_handle(VrProxy *proxy, GSocketConnection *client)
{
	g_autoptr(GInputStream) in =
	        g_buffered_input_stream_new_sized(g_io_stream_get_input_stream(G_IO_STREAM(client)), SOCKS_BUFSIZE);
	GBufferedInputStream *bin = G_BUFFERED_INPUT_STREAM(in);

	/* Greeting: VER NMETHODS METHODS… — we take "no authentication". */
	gboolean no_auth = FALSE;
	if (read_message(bin, parse_greeting, &no_auth) <= 0)
		return;
	if (!no_auth) {
		const guint8 none[2] = {5, 0xff};
		write_exact(client, none, sizeof none);
		return;
	}
	const guint8 chosen[2] = {5, 0x00};
	if (!write_exact(client, chosen, sizeof chosen))
		return;

	/* Request: VER CMD RSV ATYP DST.ADDR DST.PORT */
	VrSocksRequest req = {0};
	gssize n = read_message(bin, parse_request, &req);
	if (n == -EAFNOSUPPORT)
		reply(client, SOCKS_ATYP_UNSUPPORTED);
	if (n <= 0)
		return;

	ProxyConn *c = proxy_conn_new(proxy, "socks5");
	c->host = g_steal_pointer(&req.host);
	c->port = req.port;
	if (req.cmd != 0x01) {
		/* BIND and UDP ASSOCIATE would open paths we do not police. */
		const guint8 msg[10] = {5, SOCKS_CMD_UNSUPPORTED, 0, 1};
		proxy_refuse(c, "denied", g_strdup_printf("SOCKS command %u is not supported (CONNECT only)", req.cmd),
		             client, msg, sizeof msg);
		return;
	}

	ProxyStatus st;
	g_autoptr(GSocketConnection) up = proxy_open(c, &st);
	g_autoptr(GIOStream) up_tls = NULL;
	if (up && proxy_tls_terminates(proxy, c) && !(up_tls = proxy_tls_upstream(c, up))) {
		st = PROXY_REFUSED;
		g_clear_object(&up);
	}
	if (!up) {
		const guint8 msg[10] = {5, status_to_reply(st), 0, 1};
		proxy_refuse(c, NULL, NULL, client, msg, sizeof msg);
		return;
	}
	reply(client, status_to_reply(st));
	proxy_tunnel(c, client, in, up, up_tls);
}
