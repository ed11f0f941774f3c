/* The proxy's parsers of what the agent sends, kept apart from any socket so
 * that unit tests and the fuzz targets (tests/fuzz/fuzz_http.c,
 * fuzz_socks.c) reach them with plain bytes: the request head of the HTTP
 * proxy and the two SOCKS5 messages. The model-server bridge's strict
 * HTTP/1.1 filter is net/gate.h. Only glib; no GIO, no I/O. */
#pragma once
#include <glib.h>

/* The whole request head must fit: bounded memory per client. */
#define VR_HTTP_MAX_HEAD (32 * 1024)

/* Length of the head at the start of buf, through the first empty line
 * (CRLF or a bare LF, which is tolerated: what is forwarded is written
 * again with CRLF). 0 when buf holds no complete head yet. */
gsize vr_http_head_length(const char *buf, gsize len);

/* Splits a head into its lines (LF, with an optional CR before it), without
 * the empty line that ends it. NULL when a NUL, or a CR anywhere else, is
 * in it: a NUL would hide what follows, a bare CR ends a line for some
 * servers and not for others. */
GStrv vr_http_head_lines(const char *head, gsize len);

/* A field line "NAME: value": NAME a token with nothing between it and the
 * colon (whitespace there is how requests are smuggled past a proxy that
 * reads the name differently; also refuses obs-fold), the value free of
 * control bytes but HTAB. */
gboolean vr_http_field_is_valid(const char *line);

typedef enum {
	VR_PROXY_REQ_OK,
	VR_PROXY_REQ_BAD_HEAD,      /* a NUL, a bare CR, a control byte, a header that is no NAME: VALUE */
	VR_PROXY_REQ_BAD_LINE,      /* not METHOD SP TARGET SP HTTP/1.x */
	VR_PROXY_REQ_NOT_PROXY,     /* origin form (GET / HTTP/1.1): the client does not know it talks to a proxy */
	VR_PROXY_REQ_USERINFO,      /* http://user@host/ */
	VR_PROXY_REQ_BAD_AUTHORITY, /* no valid host:port */
} VrProxyRequestError;

/* A request to the HTTP proxy: `CONNECT host:port` or an absolute
 * `http://` URI. */
typedef struct {
	char *method;
	char *version;   /* "HTTP/1.1" */
	gboolean connect;
	char *authority; /* as the client wrote it (for the audit of a bad one) */
	char *host;      /* IPv6 without brackets */
	guint16 port;
	char *path;      /* origin form for http:// ("/" when none); NULL for CONNECT */
	GPtrArray *fields; /* "Name: value" lines to forward: no hop-by-hop field, no Host */
} VrProxyRequest;

void vr_proxy_request_clear(VrProxyRequest *r);
G_DEFINE_AUTO_CLEANUP_CLEAR_FUNC(VrProxyRequest, vr_proxy_request_clear)

/* Parses a head found by vr_http_head_length (len bytes). On error the
 * fields parsed so far stay set (authority for the audit) and must still be
 * cleared. */
VrProxyRequestError vr_proxy_request_parse(const char *head, gsize len, VrProxyRequest *ret);

/* The head to send upstream for a parsed http:// request: origin form, our
 * own Host, the client's fields, Connection: close. */
GString *vr_proxy_request_rewrite(const VrProxyRequest *r);

/* "host:port", "[v6]:port", or "host" with default_port (0: the port is
 * required). FALSE when malformed. */
gboolean vr_http_split_authority(const char *auth, guint16 default_port, char **ret_host, guint16 *ret_port);

/* ---- SOCKS5 (RFC 1928) ---------------------------------------------------
 * Both return the message's length once buf holds all of it, 0 when more
 * bytes are needed, or -errno: -EPROTO for a version other than 5,
 * -EAFNOSUPPORT for an address type other than IPv4, domain and IPv6. */

/* VER NMETHODS METHODS...; *ret_no_auth: "no authentication" was offered. */
gssize vr_socks5_parse_greeting(const guint8 *buf, gsize len, gboolean *ret_no_auth);

typedef struct {
	guint8 cmd;  /* 1 CONNECT, 2 BIND, 3 UDP ASSOCIATE */
	char *host;  /* an IP literal, or the name (a NUL in it turned into '?') */
	guint16 port;
} VrSocksRequest;

/* VER CMD RSV ATYP DST.ADDR DST.PORT; *ret is filled (host g_malloc'd) only
 * when the result is > 0. */
gssize vr_socks5_parse_request(const guint8 *buf, gsize len, VrSocksRequest *ret);
