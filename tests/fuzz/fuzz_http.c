/* libFuzzer target: the HTTP parsers of the proxy (net/parse.c,
 * net/gate.c), with what the agent sends as the input.
 *
 * Input: byte 0 = how many bytes to feed at a time (1 + b % 64, or all at
 * once when b >= 192), then the client's bytes, optionally followed by
 * "\xff\xff\xff" and the server's bytes. Checks, beyond "no crash":
 *  - the HTTP proxy's request: a parsed head is rewritten into exactly one
 *    head again;
 *  - the model-server gate gives the same bytes and events whether fed at
 *    once or in pieces;
 *  - what the gate forwards is canonical: a second gate takes all of it,
 *    refuses nothing, sees the same requests and forwards the very same
 *    bytes. A request smuggled past the first gate would be read
 *    differently by the second. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "net/gate.h"
#include "net/parse.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_proxy_request(const char *buf, gsize len)
{
	gsize head = vr_http_head_length(buf, MIN(len, (gsize)VR_HTTP_MAX_HEAD));
	if (!head)
		return;
	VrProxyRequest r;
	if (vr_proxy_request_parse(buf, head, &r) == VR_PROXY_REQ_OK && !r.connect) {
		GString *h = vr_proxy_request_rewrite(&r);
		if (vr_http_head_length(h->str, h->len) != h->len || memchr(h->str, '\0', h->len))
			abort();
		g_string_free(h, TRUE);
	}
	vr_proxy_request_clear(&r);
}

static guint count_kind(GPtrArray *events, VrGateEventKind kind)
{
	guint n = 0;
	for (guint i = 0; i < events->len; i++)
		n += ((VrGateEvent *)events->pdata[i])->kind == kind;
	return n;
}

/* Feeds client bytes in pieces of step; returns the forwarded bytes. */
static GByteArray *run_gate(const guint8 *buf, gsize len, gsize step, const guint8 *srv, gsize srv_len,
                            GPtrArray *events, gboolean *ret_ok)
{
	VrHttpGate *g = vr_http_gate_new();
	GByteArray *up = g_byte_array_new();
	gboolean ok = TRUE;
	for (gsize i = 0; i < len && ok; i += step)
		ok = vr_http_gate_from_client(g, buf + i, MIN(step, len - i), up, events);
	for (gsize i = 0; i < srv_len; i += step)
		vr_http_gate_from_server(g, srv + i, MIN(step, srv_len - i), events);
	vr_http_gate_server_closed(g, events);
	if (vr_http_gate_open_requests(g) > count_kind(events, VR_GATE_REQUEST))
		abort();
	(void)vr_http_gate_reply_state(g);
	vr_http_gate_free(g);
	*ret_ok = ok;
	return up;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1 || size > (1u << 18))
		return 0;
	gsize step = data[0] >= 192 ? size : 1 + data[0] % 64;
	const guint8 *client = data + 1;
	gsize client_len = size - 1;
	const guint8 *server = NULL;
	gsize server_len = 0;
	for (gsize i = 0; i + 3 <= client_len; i++) {
		if (memcmp(client + i, "\xff\xff\xff", 3) == 0) {
			server = client + i + 3;
			server_len = client_len - i - 3;
			client_len = i;
			break;
		}
	}
	check_proxy_request((const char *)client, client_len);

	GPtrArray *ev_whole = g_ptr_array_new_with_free_func(vr_gate_event_free);
	GPtrArray *ev_steps = g_ptr_array_new_with_free_func(vr_gate_event_free);
	GPtrArray *ev_again = g_ptr_array_new_with_free_func(vr_gate_event_free);
	gboolean ok_whole, ok_steps, ok_again;
	GByteArray *whole = run_gate(client, client_len, client_len ? client_len : 1, NULL, 0, ev_whole, &ok_whole);
	GByteArray *steps = run_gate(client, client_len, step, server, server_len, ev_steps, &ok_steps);
	if (ok_whole != ok_steps || whole->len != steps->len || memcmp(whole->data, steps->data, whole->len) != 0 ||
	    count_kind(ev_whole, VR_GATE_REQUEST) != count_kind(ev_steps, VR_GATE_REQUEST) ||
	    count_kind(ev_whole, VR_GATE_REFUSED) != count_kind(ev_steps, VR_GATE_REFUSED))
		abort();
	GByteArray *again = run_gate(whole->data, whole->len, whole->len ? whole->len : 1, NULL, 0, ev_again, &ok_again);
	if (!ok_again || count_kind(ev_again, VR_GATE_REFUSED) ||
	    count_kind(ev_again, VR_GATE_REQUEST) != count_kind(ev_whole, VR_GATE_REQUEST) || again->len != whole->len ||
	    memcmp(again->data, whole->data, whole->len) != 0)
		abort();
	g_byte_array_unref(whole);
	g_byte_array_unref(steps);
	g_byte_array_unref(again);
	g_ptr_array_unref(ev_whole);
	g_ptr_array_unref(ev_steps);
	g_ptr_array_unref(ev_again);
	return 0;
}
