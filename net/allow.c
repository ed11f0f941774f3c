/* The network allow-list (see net/allow.h for the syntax and the rules). */
#include "net/allow.h"

#include <arpa/inet.h>
#include <string.h>

G_DEFINE_QUARK(vr-net-error-quark, vr_net_error)

typedef enum {
	PATTERN_EXACT,  /* example.com */
	PATTERN_SUFFIX, /* *.example.com: host holds "example.com" */
	PATTERN_ANY,    /* * */
	PATTERN_ADDR,   /* an IP literal, compared as an address */
} PatternKind;

typedef struct {
	char *text; /* as written, for audit events and 403 bodies */
	PatternKind kind;
	char *host; /* lower case, no trailing dot */
	VrIpAddr addr; /* PATTERN_ADDR */
	guint16 port;  /* 0: any port */
} Pattern;

struct VrNetAllow {
	GPtrArray *patterns; /* of Pattern */
	GArray *bridges;     /* of VrNetBridge, one per port */
	gboolean allow_private;
	GPtrArray *specs; /* what vr_net_allow_add was given: the list again, in the proxy's process */
};

/* The default ports of the local model servers agents talk to: a bare
 * allow-localhost=PORT of these gets the HTTP filter. ollama 11434, LM
 * Studio 1234, llama.cpp's llama-server / llamafile / LocalAI 8080, vLLM
 * 8000, Jan 1337, GPT4All 4891, text-generation-webui 5000, koboldcpp
 * 5001, SGLang 30000. Some are common development ports too (8000, 8080,
 * 5000): filtered is the safe mistake, and the refusal names /tcp. */
const guint16 vr_net_model_server_ports[] = {11434, 1234, 8080, 8000, 1337, 4891, 5000, 5001, 30000, 0};

static void pattern_free(gpointer p)
{
	Pattern *pat = p;
	g_free(pat->text);
	g_free(pat->host);
	g_free(pat);
}

static void bridge_clear(gpointer p)
{
	g_free(((VrNetBridge *)p)->rule);
}

VrNetAllow *vr_net_allow_new(void)
{
	VrNetAllow *allow = g_new0(VrNetAllow, 1);
	allow->patterns = g_ptr_array_new_with_free_func(pattern_free);
	allow->bridges = g_array_new(FALSE, TRUE, sizeof(VrNetBridge));
	g_array_set_clear_func(allow->bridges, bridge_clear);
	allow->specs = g_ptr_array_new_with_free_func(g_free);
	return allow;
}

void vr_net_allow_free(VrNetAllow *allow)
{
	if (!allow)
		return;
	g_ptr_array_unref(allow->patterns);
	g_array_unref(allow->bridges);
	g_ptr_array_unref(allow->specs);
	g_free(allow);
}

gboolean vr_net_allow_get_private(const VrNetAllow *allow) { return allow->allow_private; }
void vr_net_allow_set_private(VrNetAllow *allow, gboolean allow_private) { allow->allow_private = allow_private; }
guint vr_net_allow_count(const VrNetAllow *allow) { return allow->patterns->len; }
guint vr_net_allow_bridge_count(const VrNetAllow *allow) { return allow->bridges->len; }

const VrNetBridge *vr_net_allow_bridge(const VrNetAllow *allow, guint i)
{
	return &g_array_index(allow->bridges, VrNetBridge, i);
}

gboolean vr_net_is_model_server_port(guint16 port)
{
	for (const guint16 *p = vr_net_model_server_ports; *p; p++)
		if (*p == port)
			return TRUE;
	return FALSE;
}

/* Lower case, one trailing dot dropped ("Example.COM." == "example.com"). */
static char *normalize_host(const char *host)
{
	char *h = g_ascii_strdown(host, -1);
	size_t len = strlen(h);
	if (len > 1 && h[len - 1] == '.')
		h[len - 1] = '\0';
	return h;
}

static gboolean name_is_valid(const char *name)
{
	size_t len = strlen(name);
	if (len == 0 || len > 253)
		return FALSE;
	size_t label = 0;
	for (const char *p = name; *p; p++) {
		if (*p == '.') {
			if (label == 0)
				return FALSE;
			label = 0;
			continue;
		}
		/* '_' appears in real names (SRV-style labels, some CDNs). */
		if (!g_ascii_isalnum(*p) && *p != '-' && *p != '_')
			return FALSE;
		if (++label > 63)
			return FALSE;
	}
	return label > 0;
}

gboolean vr_net_host_is_valid(const char *host)
{
	if (!host || !*host)
		return FALSE;
	VrIpAddr addr;
	if (vr_ip_addr_parse(host, &addr))
		return TRUE;
	g_autofree char *h = normalize_host(host);
	return name_is_valid(h);
}

static gboolean parse_port(const char *s, guint16 *ret_port)
{
	guint64 v;
	if (!*s || !g_ascii_string_to_unsigned(s, 10, 1, 65535, &v, NULL))
		return FALSE;
	*ret_port = (guint16)v;
	return TRUE;
}

static gboolean pattern_error(GError **error, const char *text, const char *why)
{
	g_set_error(error, VR_NET_ERROR, VR_NET_ERROR_PATTERN, "network pattern '%s': %s", text, why);
	return FALSE;
}

static gboolean add_pattern(VrNetAllow *allow, const char *text, GError **error)
{
	g_autofree char *host = NULL;
	guint16 port = 0;
	const char *port_str = NULL;

	if (text[0] == '[') {
		/* [v6]  or  [v6]:port */
		const char *close = strchr(text, ']');
		if (!close)
			return pattern_error(error, text, "missing ']' after an IPv6 address");
		host = g_strndup(text + 1, (gsize)(close - text - 1));
		if (close[1] == ':')
			port_str = close + 2;
		else if (close[1] != '\0')
			return pattern_error(error, text, "expected ':PORT' after ']'");
	} else {
		const char *colon = strchr(text, ':');
		if (colon && strchr(colon + 1, ':')) {
			host = g_strdup(text); /* a bare IPv6 literal: no port possible */
		} else if (colon) {
			host = g_strndup(text, (gsize)(colon - text));
			port_str = colon + 1;
		} else {
			host = g_strdup(text);
		}
	}
	if (port_str && !parse_port(port_str, &port))
		return pattern_error(error, text, "the port must be a number from 1 to 65535");
	if (!*host)
		return pattern_error(error, text, "no host name");

	Pattern pat = {.port = port};
	g_autofree char *norm = normalize_host(host);
	if (vr_ip_addr_parse(host, &pat.addr)) {
		pat.kind = PATTERN_ADDR;
	} else if (text[0] == '[') {
		return pattern_error(error, text, "not an IPv6 address inside [...]");
	} else if (strcmp(norm, "*") == 0) {
		pat.kind = PATTERN_ANY;
	} else if (g_str_has_prefix(norm, "*.")) {
		if (!name_is_valid(norm + 2) || strchr(norm + 2, '*'))
			return pattern_error(error, text, "expected *.NAME with a valid DNS name");
		pat.kind = PATTERN_SUFFIX;
		pat.host = g_strdup(norm + 2);
	} else if (strchr(norm, '*')) {
		return pattern_error(error, text, "'*' is only allowed as a whole first label (*.example.com)");
	} else if (!name_is_valid(norm)) {
		return pattern_error(error, text, "not a valid host name (letters, digits, '-', '_' and dots)");
	} else {
		pat.kind = PATTERN_EXACT;
		pat.host = g_strdup(norm);
	}
	Pattern *p = g_new(Pattern, 1);
	*p = pat;
	p->text = g_strdup(text);
	g_ptr_array_add(allow->patterns, p);
	return TRUE;
}

static gboolean bridge_error(GError **error, const char *text, const char *why)
{
	g_set_error(error, VR_NET_ERROR, VR_NET_ERROR_PATTERN, "allow-localhost '%s': %s", text, why);
	return FALSE;
}

/* PORT, PORT/http or PORT/tcp. */
static gboolean parse_bridge(const char *text, VrNetBridge *ret, GError **error)
{
	const char *slash = strchr(text, '/');
	g_autofree char *num = slash ? g_strndup(text, (gsize)(slash - text)) : g_strdup(text);
	guint16 port;
	if (!parse_port(num, &port))
		return bridge_error(error, text, "expected PORT, PORT/http or PORT/tcp with a port from 1 to 65535");
	if (port == 3128 || port == 1080)
		/* Inside the sandbox these are the proxy's own ports. */
		return bridge_error(error, text, "ports 3128 and 1080 are the proxy's own inside the sandbox");
	VrBridgeKind kind;
	if (!slash)
		kind = vr_net_is_model_server_port(port) ? VR_BRIDGE_HTTP : VR_BRIDGE_TCP;
	else if (strcmp(slash, "/http") == 0)
		kind = VR_BRIDGE_HTTP;
	else if (strcmp(slash, "/tcp") == 0)
		kind = VR_BRIDGE_TCP;
	else
		return bridge_error(error, text, "the form after '/' must be http or tcp");
	ret->port = port;
	ret->kind = kind;
	ret->rule = g_strdup_printf("allow-localhost=%u/%s", port, kind == VR_BRIDGE_HTTP ? "http" : "tcp");
	return TRUE;
}

static gboolean add_bridges(VrNetAllow *allow, const char *list, GError **error)
{
	if (!*list)
		return bridge_error(error, list, "expected PORT, PORT/http or PORT/tcp with a port from 1 to 65535");
	g_auto(GStrv) items = g_strsplit(list, ",", -1);
	g_autoptr(GArray) add = g_array_new(FALSE, TRUE, sizeof(VrNetBridge));
	g_array_set_clear_func(add, bridge_clear);
	for (char **it = items; *it; it++) {
		g_strstrip(*it);
		VrNetBridge b;
		if (!parse_bridge(*it, &b, error))
			return FALSE; /* all or nothing */
		g_array_append_val(add, b);
	}
	for (guint i = 0; i < add->len; i++) {
		VrNetBridge *b = &g_array_index(add, VrNetBridge, i);
		const VrNetBridge *same = NULL;
		for (guint j = 0; j < allow->bridges->len && !same; j++)
			if (vr_net_allow_bridge(allow, j)->port == b->port)
				same = vr_net_allow_bridge(allow, j);
		for (guint j = 0; j < i && !same; j++)
			if (g_array_index(add, VrNetBridge, j).port == b->port)
				same = &g_array_index(add, VrNetBridge, j);
		if (same && same->kind != b->kind)
			return bridge_error(error, list, "a port given both as /http and as /tcp");
	}
	/* Only ports not bridged yet are added; counted first, all or nothing. */
	g_autoptr(GArray) fresh = g_array_new(FALSE, FALSE, sizeof(guint));
	for (guint i = 0; i < add->len; i++) {
		guint16 port = g_array_index(add, VrNetBridge, i).port;
		gboolean known = FALSE;
		for (guint j = 0; j < allow->bridges->len && !known; j++)
			known = vr_net_allow_bridge(allow, j)->port == port;
		for (guint j = 0; j < fresh->len && !known; j++)
			known = g_array_index(add, VrNetBridge, g_array_index(fresh, guint, j)).port == port;
		if (!known)
			g_array_append_val(fresh, i);
	}
	if (allow->bridges->len + fresh->len > VR_NET_MAX_BRIDGES)
		return bridge_error(error, list, "too many ports (at most 32)");
	for (guint i = 0; i < fresh->len; i++) {
		VrNetBridge *b = &g_array_index(add, VrNetBridge, g_array_index(fresh, guint, i));
		g_array_append_val(allow->bridges, *b);
		b->rule = NULL; /* moved */
	}
	return TRUE;
}

static gboolean add_patterns(VrNetAllow *allow, const char *list, GError **error)
{
	if (!*list)
		return TRUE; /* "allow=": nothing allowed, which is the default */
	g_auto(GStrv) items = g_strsplit(list, ",", -1);
	guint before = allow->patterns->len;
	for (char **it = items; *it; it++) {
		g_strstrip(*it);
		if (!**it || !add_pattern(allow, *it, error)) {
			if (!**it)
				g_set_error(error, VR_NET_ERROR, VR_NET_ERROR_PATTERN,
				            "network allow list '%s': empty pattern", list);
			/* All or nothing: a half-applied list would be a surprise. */
			g_ptr_array_set_size(allow->patterns, before);
			return FALSE;
		}
	}
	return TRUE;
}

static gboolean add_item(VrNetAllow *allow, const char *item, GError **error)
{
	if (strcmp(item, "allow-private") == 0) {
		allow->allow_private = TRUE;
		return TRUE;
	}
	if (g_str_has_prefix(item, "allow-localhost="))
		return add_bridges(allow, item + strlen("allow-localhost="), error);
	return add_patterns(allow, g_str_has_prefix(item, "allow=") ? item + strlen("allow=") : item, error);
}

static gboolean add_spec(VrNetAllow *allow, const char *spec, GError **error)
{
	if (!strchr(spec, ';'))
		return add_item(allow, spec, error);
	g_auto(GStrv) items = g_strsplit(spec, ";", -1);
	for (char **it = items; *it; it++) {
		g_strstrip(*it);
		if (**it && !add_item(allow, *it, error))
			return FALSE;
	}
	return TRUE;
}

gboolean vr_net_allow_add(VrNetAllow *allow, const char *spec, GError **error)
{
	if (!add_spec(allow, spec, error))
		return FALSE;
	g_ptr_array_add(allow->specs, g_strdup(spec));
	return TRUE;
}

const GPtrArray *vr_net_allow_specs(const VrNetAllow *allow) { return allow->specs; }

const char *vr_net_allow_match(const VrNetAllow *allow, const char *host, guint16 port)
{
	if (!host || !*host)
		return NULL;
	VrIpAddr addr;
	gboolean is_addr = vr_ip_addr_parse(host, &addr);
	g_autofree char *h = normalize_host(host);
	size_t hlen = strlen(h);
	for (guint i = 0; i < allow->patterns->len; i++) {
		const Pattern *p = allow->patterns->pdata[i];
		if (p->port && p->port != port)
			continue;
		gboolean hit = FALSE;
		switch (p->kind) {
		case PATTERN_ANY:
			hit = TRUE;
			break;
		case PATTERN_ADDR:
			hit = is_addr && vr_ip_addr_equal(&addr, &p->addr);
			break;
		case PATTERN_EXACT:
			hit = !is_addr && strcmp(h, p->host) == 0;
			break;
		case PATTERN_SUFFIX: {
			size_t slen = strlen(p->host);
			hit = !is_addr && hlen > slen + 1 && h[hlen - slen - 1] == '.' &&
			      strcmp(h + hlen - slen, p->host) == 0;
			break;
		}
		}
		if (hit)
			return p->text;
	}
	return NULL;
}

static const char *classify_v4(const guint8 *a)
{
	if (a[0] == 0)
		return "unspecified"; /* 0.0.0.0/8 "this network": reaches the local host */
	if (a[0] == 127)
		return "loopback";
	if (a[0] == 10 || (a[0] == 172 && (a[1] & 0xf0) == 16) || (a[0] == 192 && a[1] == 168))
		return "private";
	if (a[0] == 169 && a[1] == 254)
		return "link-local"; /* includes 169.254.169.254, the cloud metadata service */
	if (a[0] == 100 && (a[1] & 0xc0) == 64)
		return "cgnat"; /* 100.64.0.0/10; also Alibaba's metadata 100.100.100.200 */
	if (a[0] == 192 && a[1] == 0 && a[2] == 0)
		return "reserved"; /* 192.0.0.0/24, IETF protocol assignments */
	if ((a[0] & 0xf0) == 224)
		return "multicast";
	if ((a[0] & 0xf0) == 240)
		return "reserved"; /* 240.0.0.0/4 and the broadcast 255.255.255.255 */
	return NULL;
}

static const char *classify_v6(const guint8 *a)
{
	static const guint8 zero[16];
	static const guint8 mapped[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
	static const guint8 nat64[12] = {0, 0x64, 0xff, 0x9b};

	if (memcmp(a, zero, 15) == 0 && (a[15] == 0 || a[15] == 1))
		return a[15] ? "loopback" : "unspecified";
	/* Forms that carry an IPv4 address: judged by that address, because
	 * the kernel (mapped) or a translator (NAT64, 6to4) delivers there. */
	if (memcmp(a, mapped, 12) == 0 || memcmp(a, nat64, 12) == 0)
		return classify_v4(a + 12);
	if (memcmp(a, zero, 12) == 0)
		return "reserved"; /* ::a.b.c.d, deprecated IPv4-compatible */
	if (a[0] == 0x20 && a[1] == 0x02)
		return classify_v4(a + 2); /* 2002::/16, 6to4 */
	if (a[0] == 0 && a[1] == 0x64 && a[2] == 0xff && a[3] == 0x9b && a[4] == 0 && a[5] == 1)
		return "private"; /* 64:ff9b:1::/48, local-use NAT64 */
	if ((a[0] & 0xfe) == 0xfc)
		return "private"; /* fc00::/7 ULA, includes AWS's fd00:ec2::254 */
	if (a[0] == 0xfe && (a[1] & 0xc0) == 0x80)
		return "link-local";
	if (a[0] == 0xfe && (a[1] & 0xc0) == 0xc0)
		return "private"; /* fec0::/10, deprecated site-local */
	if (a[0] == 0xff)
		return "multicast";
	return NULL;
}

const char *vr_net_addr_forbidden(const VrIpAddr *addr)
{
	return addr->family == AF_INET ? classify_v4(addr->bytes) : classify_v6(addr->bytes);
}

gboolean vr_ip_addr_parse(const char *text, VrIpAddr *ret)
{
	*ret = (VrIpAddr){0};
	if (inet_pton(AF_INET, text, ret->bytes) == 1)
		ret->family = AF_INET;
	else if (inet_pton(AF_INET6, text, ret->bytes) == 1)
		ret->family = AF_INET6;
	return ret->family != 0;
}

gboolean vr_ip_addr_equal(const VrIpAddr *a, const VrIpAddr *b)
{
	return a->family == b->family && memcmp(a->bytes, b->bytes, a->family == AF_INET ? 4 : 16) == 0;
}
