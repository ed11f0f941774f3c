/* The SOCKS5 front end of the proxy (RFC 1928): no authentication, CONNECT
 * only, domain / IPv4 / IPv6 destinations. Clients should send names
 * (socks5h://) so that resolution happens here, outside the sandbox; an IP
 * literal is only allowed when a pattern names that address. Runs in a
 * handshake worker thread. */
#include "proxy-private.h"

#include <string.h>

enum {
	SOCKS_OK = 0x00,
	SOCKS_FAILURE = 0x01,
	SOCKS_NOT_ALLOWED = 0x02,
	SOCKS_HOST_UNREACHABLE = 0x04,
	SOCKS_REFUSED = 0x05,
	SOCKS_CMD_UNSUPPORTED = 0x07,
	SOCKS_ATYP_UNSUPPORTED = 0x08,
};

static gboolean read_exact(GInputStream *in, void *buf, gsize len)
{
	gsize got = 0;
	return g_input_stream_read_all(in, buf, len, &got, NULL, NULL) && got == len;
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
	GInputStream *in = g_io_stream_get_input_stream(G_IO_STREAM(client));
	guint8 hdr[4], methods[255];

	/* Greeting: VER NMETHODS METHODS… — we take "no authentication". */
	if (!read_exact(in, hdr, 2) || hdr[0] != 5 || !read_exact(in, methods, hdr[1]))
		return;
	if (!memchr(methods, 0x00, hdr[1])) {
		const guint8 none[2] = {5, 0xff};
		write_exact(client, none, sizeof none);
		return;
	}
	const guint8 chosen[2] = {5, 0x00};
	if (!write_exact(client, chosen, sizeof chosen))
		return;

	/* Request: VER CMD RSV ATYP DST.ADDR DST.PORT */
	if (!read_exact(in, hdr, 4) || hdr[0] != 5)
		return;
	g_autofree char *host = NULL;
	guint8 addr[256];
	switch (hdr[3]) {
	case 0x01:
	case 0x04: {
		gsize len = hdr[3] == 0x01 ? 4 : 16;
		if (!read_exact(in, addr, len))
			return;
		g_autoptr(GInetAddress) ia =
		        g_inet_address_new_from_bytes(addr, len == 4 ? G_SOCKET_FAMILY_IPV4 : G_SOCKET_FAMILY_IPV6);
		host = g_inet_address_to_string(ia);
		break;
	}
	case 0x03: {
		guint8 len;
		if (!read_exact(in, &len, 1) || !read_exact(in, addr, len))
			return;
		/* A NUL would cut the name we check short of the one sent: make
		 * it a '?', which the audit shows and host validation refuses. */
		for (guint i = 0; i < len; i++)
			if (addr[i] == '\0')
				addr[i] = '?';
		host = g_strndup((const char *)addr, len);
		break;
	}
	default:
		reply(client, SOCKS_ATYP_UNSUPPORTED);
		return;
	}
	guint8 pb[2];
	if (!read_exact(in, pb, 2))
		return;

	ProxyConn *c = proxy_conn_new(proxy, "socks5");
	c->host = g_steal_pointer(&host);
	c->port = (guint16)(pb[0] << 8 | pb[1]);
	if (hdr[1] != 0x01) {
		/* BIND and UDP ASSOCIATE would open paths we do not police. */
		c->result = "denied";
		c->reason = g_strdup_printf("SOCKS command %u is not supported (CONNECT only)", hdr[1]);
		reply(client, SOCKS_CMD_UNSUPPORTED);
		proxy_conn_finish(c);
		return;
	}

	ProxyStatus st;
	g_autoptr(GSocketConnection) up = proxy_open(c, &st);
	reply(client, status_to_reply(st));
	if (!up) {
		proxy_conn_finish(c);
		return;
	}
	proxy_relay(c, client, in, up);
}
