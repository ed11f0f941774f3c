/* The proxy's parsers of the agent's bytes (see net/parse.h). */
#include "net/parse.h"

#include <arpa/inet.h>
#include <errno.h>
#include <string.h>

gsize vr_http_head_length(const char *buf, gsize len)
{
	/* Line by line, with the same idea of a line as vr_http_head_lines: the
	 * head ends at the first empty line, CR before its LF or not. */
	const char *p = buf, *end = buf + len;
	const char *nl;
	while ((nl = memchr(p, '\n', (gsize)(end - p)))) {
		if (nl == p || (nl == p + 1 && p[0] == '\r'))
			return (gsize)(nl + 1 - buf);
		p = nl + 1;
	}
	return 0;
}

void vr_proxy_request_clear(VrProxyRequest *r)
{
	g_free(r->method);
	g_free(r->version);
	g_free(r->authority);
	g_free(r->host);
	g_free(r->path);
	if (r->fields)
		g_ptr_array_unref(r->fields);
	memset(r, 0, sizeof *r);
}

/* RFC 9110 tchar. */
static gboolean is_tchar(unsigned char c)
{
	return g_ascii_isalnum(c) || (c && strchr("!#$%&'*+-.^_`|~", c));
}

gboolean vr_http_field_is_valid(const char *line)
{
	const char *p = line;
	while (is_tchar((unsigned char)*p))
		p++;
	if (p == line || *p != ':')
		return FALSE;
	for (p++; *p; p++) {
		unsigned char c = (unsigned char)*p;
		if ((c < 0x20 && c != '\t') || c == 0x7f)
			return FALSE;
	}
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

GStrv vr_http_head_lines(const char *head, gsize len)
{
	if (memchr(head, '\0', len))
		return NULL;
	g_autoptr(GPtrArray) lines = g_ptr_array_new_with_free_func(g_free);
	const char *p = head, *end = head + len;
	while (p < end) {
		const char *nl = memchr(p, '\n', (gsize)(end - p));
		const char *stop = nl ? nl : end;
		const char *line_end = stop > p && stop[-1] == '\r' ? stop - 1 : stop;
		if (memchr(p, '\r', (gsize)(line_end - p)))
			return NULL;
		if (line_end == p)
			break; /* the empty line */
		g_ptr_array_add(lines, g_strndup(p, (gsize)(line_end - p)));
		p = nl ? nl + 1 : end;
	}
	g_ptr_array_add(lines, NULL);
	return (GStrv)g_ptr_array_free(g_steal_pointer(&lines), FALSE);
}

gboolean vr_http_split_authority(const char *auth, guint16 default_port, char **ret_host, guint16 *ret_port)
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

VrProxyRequestError vr_proxy_request_parse(const char *head, gsize len, VrProxyRequest *ret)
{
	memset(ret, 0, sizeof *ret);
	g_auto(GStrv) lines = vr_http_head_lines(head, len);
	if (!lines)
		return VR_PROXY_REQ_BAD_HEAD;
	if (!lines[0])
		return VR_PROXY_REQ_BAD_LINE;
	g_auto(GStrv) req = g_strsplit(lines[0], " ", 4);
	if (g_strv_length(req) != 3 || !*req[0] || !*req[1] || !g_str_has_prefix(req[2], "HTTP/1."))
		return VR_PROXY_REQ_BAD_LINE;
	ret->fields = g_ptr_array_new_with_free_func(g_free);
	for (char **l = lines + 1; *l; l++) {
		if (!vr_http_field_is_valid(*l))
			return VR_PROXY_REQ_BAD_HEAD; /* also obs-fold: a line starting with SP/HT */
		if (!is_hop_by_hop(*l))
			g_ptr_array_add(ret->fields, g_strdup(*l));
	}
	ret->method = g_strdup(req[0]);
	ret->version = g_strdup(req[2]);
	ret->connect = strcmp(ret->method, "CONNECT") == 0;
	const char *target = req[1];
	if (ret->connect) {
		ret->authority = g_strdup(target);
	} else {
		/* https:// must come as CONNECT. */
		if (g_ascii_strncasecmp(target, "http://", 7) != 0)
			return VR_PROXY_REQ_NOT_PROXY;
		const char *a = target + 7;
		size_t alen = strcspn(a, "/?#");
		ret->authority = g_strndup(a, alen);
		ret->path = g_strdup(a[alen] ? a + alen : "/");
		if (strchr(ret->authority, '@'))
			return VR_PROXY_REQ_USERINFO;
	}
	if (!vr_http_split_authority(ret->authority, ret->connect ? 0 : 80, &ret->host, &ret->port))
		return VR_PROXY_REQ_BAD_AUTHORITY;
	return VR_PROXY_REQ_OK;
}

GString *vr_proxy_request_rewrite(const VrProxyRequest *r)
{
	GString *h = g_string_new(NULL);
	g_string_append_printf(h, "%s %s %s\r\n", r->method, r->path ? r->path : "/", r->version);
	gboolean v6 = strchr(r->host, ':') != NULL;
	g_string_append_printf(h, "Host: %s%s%s", v6 ? "[" : "", r->host, v6 ? "]" : "");
	if (r->port != 80)
		g_string_append_printf(h, ":%u", r->port);
	g_string_append(h, "\r\n");
	for (guint i = 0; i < r->fields->len; i++)
		g_string_append_printf(h, "%s\r\n", (const char *)r->fields->pdata[i]);
	g_string_append(h, "Connection: close\r\n\r\n");
	return h;
}

/* ---- SOCKS5 ------------------------------------------------------------- */

gssize vr_socks5_parse_greeting(const guint8 *buf, gsize len, gboolean *ret_no_auth)
{
	if (len >= 1 && buf[0] != 5)
		return -EPROTO;
	if (len < 2 || len < 2 + (gsize)buf[1])
		return 0;
	*ret_no_auth = memchr(buf + 2, 0x00, buf[1]) != NULL;
	return 2 + buf[1];
}

gssize vr_socks5_parse_request(const guint8 *buf, gsize len, VrSocksRequest *ret)
{
	if (len >= 1 && buf[0] != 5)
		return -EPROTO;
	if (len < 4)
		return 0;
	gsize addr_len;
	gsize at = 4;
	switch (buf[3]) {
	case 0x01: addr_len = 4; break;
	case 0x04: addr_len = 16; break;
	case 0x03:
		if (len < 5)
			return 0;
		addr_len = buf[4];
		at = 5;
		break;
	default: return -EAFNOSUPPORT;
	}
	if (len < at + addr_len + 2)
		return 0;
	const guint8 *a = buf + at;
	if (buf[3] == 0x03) {
		/* A NUL would cut the name we check short of the one sent: make
		 * it a '?', which the audit shows and host validation refuses. */
		char *host = g_malloc(addr_len + 1);
		for (gsize i = 0; i < addr_len; i++)
			host[i] = a[i] ? (char)a[i] : '?';
		host[addr_len] = '\0';
		ret->host = host;
	} else {
		/* The form GInetAddress prints; the allow-list compares
		 * addresses as addresses anyway. */
		char text[INET6_ADDRSTRLEN];
		inet_ntop(addr_len == 4 ? AF_INET : AF_INET6, a, text, sizeof text);
		ret->host = g_strdup(text);
	}
	ret->cmd = buf[1];
	ret->port = (guint16)(a[addr_len] << 8 | a[addr_len + 1]);
	return (gssize)(at + addr_len + 2);
}
