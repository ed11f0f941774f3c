/* libFuzzer target: the policy of a terminated tunnel (net/inject.c) on
 * the gate (net/gate.c): the header rewriter that puts keys in, the scans
 * that keep them from going elsewhere, the scrubber of the responses.
 *
 * Two keys: A bound to api.example.com (every placement), B bound to
 * other.example.com; the tunnel is api.example.com's. Input: byte 0 = how
 * many bytes to feed at a time (1 + b % 64), then the client's bytes,
 * optionally "\xff\xff\xff" and the server's; in both, byte \x01 stands
 * for A's sentinel, \x02 for B's, \x03 for A's real value, \x04 for B's
 * (so the fuzzer need not guess them). Checks, beyond "no crash":
 *  - nothing of B (value or sentinel) ever reaches api.example.com;
 *  - no real value ever reaches the client: responses are scrubbed;
 *  - fed in pieces or at once, the same bytes go to the server, up to the
 *    framing of a chunked body: a scanned body is re-chunked as the scan
 *    lets bytes go, so its chunks follow the reads (normalized()). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "net/inject.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Which check failed, then the crash libFuzzer keeps. */
static void fail(const char *why)
{
	fprintf(stderr, "%s: %s\n", __FILE__, why);
	abort();
}

static VrNetKeys *keys;
static VrInject *inj;
static const char *a_value = "sk-proj-AAAAvalue0123456789abcdef";
static const char *b_value = "ghp_BBBBvalue0123456789abcdefghijkl";

static void setup(void)
{
	static const guint8 secret[VR_NET_KEY_SECRET_SIZE] = {1, 2, 3};
	keys = vr_net_keys_new();
	VrNetKey *a = vr_net_key_parse("A_KEY@api.example.com:as=bearer,x-api-key,x-goog-api-key,query,basic", NULL);
	VrNetKey *b = vr_net_key_parse("B_KEY@other.example.com", NULL);
	if (!a || !b || !vr_net_key_set_value(a, secret, sizeof secret, a_value, NULL) ||
	    !vr_net_key_set_value(b, secret, sizeof secret, b_value, NULL))
		fail("the keys do not parse");
	vr_net_keys_add(keys, a);
	vr_net_keys_add(keys, b);
	inj = vr_inject_new(keys, NULL);
}

static GByteArray *expand(const guint8 *buf, gsize len)
{
	const char *subst[5] = {NULL, vr_net_keys_find(keys, "A_KEY")->sentinel,
	                        vr_net_keys_find(keys, "B_KEY")->sentinel, a_value, b_value};
	GByteArray *out = g_byte_array_new();
	for (gsize i = 0; i < len; i++) {
		if (buf[i] >= 1 && buf[i] <= 4)
			g_byte_array_append(out, (const guint8 *)subst[buf[i]], strlen(subst[buf[i]]));
		else
			g_byte_array_append(out, &buf[i], 1);
	}
	return out;
}

static gboolean holds(const GByteArray *b, const char *s)
{
	return b->len && memmem(b->data, b->len, s, strlen(s)) != NULL;
}

/* What the gate sent, with every chunked body's chunks joined: the gate
 * writes canonical heads ("Transfer-Encoding: chunked", "Content-Length:
 * N") and chunk lines (hex CRLF), so a plain reading of its own output is
 * enough. A stream cut in a body keeps what it has. */
static GByteArray *normalized(const GByteArray *up)
{
	GByteArray *out = g_byte_array_new();
	const guint8 *p = up->data, *end = up->data + up->len;
	while (p < end) {
		const guint8 *h = memmem(p, (size_t)(end - p), "\r\n\r\n", 4);
		if (!h) {
			g_byte_array_append(out, p, (guint)(end - p));
			break;
		}
		h += 4;
		g_autofree char *head = g_strndup((const char *)p, (gsize)(h - p));
		g_byte_array_append(out, p, (guint)(h - p));
		p = h;
		const char *cl = strcasestr(head, "\r\nContent-Length: ");
		if (strcasestr(head, "\r\nTransfer-Encoding: chunked\r\n")) {
			while (p < end) {
				const guint8 *nl = memmem(p, (size_t)(end - p), "\r\n", 2);
				if (!nl)
					break;
				g_autofree char *size = g_strndup((const char *)p, (gsize)(nl - p));
				gsize n = (gsize)g_ascii_strtoull(size, NULL, 16);
				p = nl + 2;
				if (n == 0)
					break;
				gsize have = MIN(n, (gsize)(end - p));
				g_byte_array_append(out, p, (guint)have);
				p += have;
				if (end - p >= 2)
					p += 2;
			}
			if (end - p >= 2 && p[0] == '\r' && p[1] == '\n')
				p += 2; /* the empty trailer */
		} else if (cl) {
			gsize n = MIN((gsize)g_ascii_strtoull(cl + 18, NULL, 10), (gsize)(end - p));
			g_byte_array_append(out, p, (guint)n);
			p += n;
		}
	}
	return out;
}

static void run(const GByteArray *client, const GByteArray *server, gsize step, GByteArray *up, GByteArray *down)
{
	VrInjectSite *site = vr_inject_site_new(inj, "api.example.com");
	VrHttpGate *g = vr_inject_gate_new(site);
	GPtrArray *events = g_ptr_array_new_with_free_func(vr_gate_event_free);
	gboolean ok = TRUE;
	for (gsize i = 0; i < client->len && ok; i += step)
		ok = vr_http_gate_from_client(g, client->data + i, MIN(step, client->len - i), up, events);
	for (gsize i = 0; i < server->len; i += step)
		vr_http_gate_from_server_out(g, server->data + i, MIN(step, server->len - i), down, events);
	vr_http_gate_server_closed_out(g, down, events);
	g_ptr_array_unref(events);
	vr_http_gate_free(g);
	vr_inject_site_free(site);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1 || size > (1u << 16))
		return 0;
	if (!keys)
		setup();
	gsize step = 1 + data[0] % 64;
	const guint8 *c = data + 1, *s = NULL;
	gsize c_len = size - 1, s_len = 0;
	for (gsize i = 0; i + 3 <= c_len; i++) {
		if (memcmp(c + i, "\xff\xff\xff", 3) == 0) {
			s = c + i + 3;
			s_len = c_len - i - 3;
			c_len = i;
			break;
		}
	}
	GByteArray *client = expand(c, c_len), *server = expand(s ? s : c, s_len);
	GByteArray *up1 = g_byte_array_new(), *down1 = g_byte_array_new();
	GByteArray *up2 = g_byte_array_new(), *down2 = g_byte_array_new();
	run(client, server, client->len + server->len + 1, up1, down1);
	run(client, server, step, up2, down2);
	const VrNetKey *b = vr_net_keys_find(keys, "B_KEY");
	if (holds(up1, b_value) || holds(up1, b->sentinel) || holds(up2, b_value) || holds(up2, b->sentinel))
		fail("B reached api.example.com");
	if (holds(down1, a_value) || holds(down1, b_value) || holds(down2, a_value) || holds(down2, b_value))
		fail("a real value reached the client");
	GByteArray *n1 = normalized(up1), *n2 = normalized(up2);
	if (n1->len != n2->len || (n1->len && memcmp(n1->data, n2->data, n1->len) != 0))
		fail("pieces and the whole differ");
	g_byte_array_unref(n1);
	g_byte_array_unref(n2);
	g_byte_array_unref(client);
	g_byte_array_unref(server);
	g_byte_array_unref(up1);
	g_byte_array_unref(down1);
	g_byte_array_unref(up2);
	g_byte_array_unref(down2);
	return 0;
}
