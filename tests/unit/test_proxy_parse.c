/* The proxy's parsers without sockets: the HTTP proxy's request head, SOCKS5
 * messages, and the model-server bridge's gate (every request of a
 * kept-alive connection, smuggling shapes, re-framing, response tracking). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <string.h>

#include "net/gate.h"
#include "net/parse.h"

/* ---- HTTP proxy head ----------------------------------------------------- */

static VrProxyRequestError parse(const char *head, VrProxyRequest *r)
{
	gsize len = vr_http_head_length(head, strlen(head));
	assert_int_equal(len, strlen(head));
	return vr_proxy_request_parse(head, len, r);
}

static void test_head_length(void **state)
{
	assert_int_equal(vr_http_head_length("GET / HTTP/1.1\r\nA: b\r\n\r\nBODY", 28), 24);
	assert_int_equal(vr_http_head_length("GET / HTTP/1.1\nA: b\n\nBODY", 25), 21);
	/* LF then CRLF is an empty line too: the same lines the splitter sees. */
	assert_int_equal(vr_http_head_length("GET / HTTP/1.1\n\r\nX: y\r\n\r\n", 25), 17);
	assert_int_equal(vr_http_head_length("GET / HTTP/1.1\r\nA: b\r\n", 22), 0);
	assert_int_equal(vr_http_head_length("", 0), 0);
}

static void test_proxy_request(void **state)
{
	g_auto(VrProxyRequest) r = {0};
	assert_int_equal(parse("GET http://api.example.com:8080/v1/x?q=1 HTTP/1.1\r\nHost: evil.test\r\n"
	                       "Accept: */*\r\nProxy-Authorization: x\r\nConnection: keep-alive\r\n\r\n",
	                       &r),
	                 VR_PROXY_REQ_OK);
	assert_false(r.connect);
	assert_string_equal(r.host, "api.example.com");
	assert_int_equal(r.port, 8080);
	assert_string_equal(r.path, "/v1/x?q=1");
	assert_int_equal(r.fields->len, 1); /* Host and the hop-by-hop fields dropped */
	g_autoptr(GString) h = vr_proxy_request_rewrite(&r);
	assert_string_equal(h->str, "GET /v1/x?q=1 HTTP/1.1\r\nHost: api.example.com:8080\r\nAccept: */*\r\n"
	                            "Connection: close\r\n\r\n");

	g_auto(VrProxyRequest) c = {0};
	assert_int_equal(parse("CONNECT [2001:db8::1]:443 HTTP/1.1\r\n\r\n", &c), VR_PROXY_REQ_OK);
	assert_true(c.connect);
	assert_string_equal(c.host, "2001:db8::1");
	assert_int_equal(c.port, 443);
}

static void test_proxy_request_errors(void **state)
{
	static const struct {
		const char *head;
		VrProxyRequestError e;
	} cases[] = {
		{"GET / HTTP/1.1\r\n\r\n", VR_PROXY_REQ_NOT_PROXY},
		{"GET https://a.test/ HTTP/1.1\r\n\r\n", VR_PROXY_REQ_NOT_PROXY},
		{"GET http://u:p@a.test/ HTTP/1.1\r\n\r\n", VR_PROXY_REQ_USERINFO},
		{"CONNECT a.test HTTP/1.1\r\n\r\n", VR_PROXY_REQ_BAD_AUTHORITY}, /* CONNECT needs a port */
		{"CONNECT a.test:0 HTTP/1.1\r\n\r\n", VR_PROXY_REQ_BAD_AUTHORITY},
		{"CONNECT ::1:443 HTTP/1.1\r\n\r\n", VR_PROXY_REQ_BAD_AUTHORITY},
		{"GET http://a.test/ HTTP/2\r\n\r\n", VR_PROXY_REQ_BAD_LINE},
		{"GET  http://a.test/ HTTP/1.1\r\n\r\n", VR_PROXY_REQ_BAD_LINE},
		{"\r\n", VR_PROXY_REQ_BAD_LINE},
		/* What a server may read differently than we do: refused. */
		{"GET http://a.test/ HTTP/1.1\r\nX: a\rHost: evil.test\r\n\r\n", VR_PROXY_REQ_BAD_HEAD},
		{"GET http://a.test/ HTTP/1.1\r\nHost : evil.test\r\n\r\n", VR_PROXY_REQ_BAD_HEAD},
		{"GET http://a.test/ HTTP/1.1\r\nX: a\r\n folded\r\n\r\n", VR_PROXY_REQ_BAD_HEAD},
		{"GET http://a.test/ HTTP/1.1\r\nX: a\x01\r\n\r\n", VR_PROXY_REQ_BAD_HEAD},
	};
	for (size_t i = 0; i < G_N_ELEMENTS(cases); i++) {
		g_auto(VrProxyRequest) r = {0};
		VrProxyRequestError e = parse(cases[i].head, &r);
		if (e != cases[i].e)
			fail_msg("%s: %d, expected %d", cases[i].head, e, cases[i].e);
	}
	/* A NUL hides what follows it. */
	g_auto(VrProxyRequest) r = {0};
	static const char nul[] = "GET http://a.test/ HTTP/1.1\r\nX: a\0b\r\n\r\n";
	assert_int_equal(vr_proxy_request_parse(nul, sizeof nul - 1, &r), VR_PROXY_REQ_BAD_HEAD);
}

/* ---- SOCKS5 --------------------------------------------------------------- */

static void test_socks(void **state)
{
	gboolean no_auth = FALSE;
	const guint8 g1[] = {5, 2, 2, 0};
	assert_int_equal(vr_socks5_parse_greeting(g1, 1, &no_auth), 0);
	assert_int_equal(vr_socks5_parse_greeting(g1, 3, &no_auth), 0);
	assert_int_equal(vr_socks5_parse_greeting(g1, 4, &no_auth), 4);
	assert_true(no_auth);
	const guint8 g2[] = {5, 1, 2};
	assert_int_equal(vr_socks5_parse_greeting(g2, 3, &no_auth), 3);
	assert_false(no_auth);
	const guint8 g4[] = {4, 1, 0};
	assert_int_equal(vr_socks5_parse_greeting(g4, 3, &no_auth), -EPROTO);

	VrSocksRequest r = {0};
	const guint8 dom[] = {5, 1, 0, 3, 5, 'a', '.', 't', 0, 'x', 0x01, 0xbb, 'E'};
	for (gsize n = 0; n < 12; n++)
		assert_int_equal(vr_socks5_parse_request(dom, n, &r), 0);
	assert_int_equal(vr_socks5_parse_request(dom, sizeof dom, &r), 12); /* the eager byte stays */
	assert_string_equal(r.host, "a.t?x");                                 /* a NUL cannot cut the name */
	assert_int_equal(r.port, 443);
	assert_int_equal(r.cmd, 1);
	g_free(r.host);
	const guint8 v6[] = {5, 2, 0, 4, 0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 80};
	assert_int_equal(vr_socks5_parse_request(v6, sizeof v6, &r), 22);
	assert_string_equal(r.host, "2001:db8::1");
	assert_int_equal(r.cmd, 2);
	g_free(r.host);
	const guint8 v4[] = {5, 1, 0, 1, 127, 0, 0, 1, 0, 22};
	assert_int_equal(vr_socks5_parse_request(v4, sizeof v4, &r), 10);
	assert_string_equal(r.host, "127.0.0.1");
	g_free(r.host);
	const guint8 bad[] = {5, 1, 0, 9, 0, 0};
	assert_int_equal(vr_socks5_parse_request(bad, sizeof bad, &r), -EAFNOSUPPORT);
}

/* ---- the model-server gate ---------------------------------------------- */

typedef struct {
	VrHttpGate *g;
	GByteArray *up;
	GPtrArray *events;
} Gate;

static void gate_init(Gate *t)
{
	t->g = vr_http_gate_new();
	t->up = g_byte_array_new();
	t->events = g_ptr_array_new_with_free_func(vr_gate_event_free);
}

static void gate_clear(Gate *t)
{
	vr_http_gate_free(t->g);
	g_byte_array_unref(t->up);
	g_ptr_array_unref(t->events);
}

/* Feeds s one byte at a time when bytewise (the parser must not care). */
static gboolean feed(Gate *t, const char *s, gboolean bytewise)
{
	gsize len = strlen(s);
	if (!bytewise)
		return vr_http_gate_from_client(t->g, (const guint8 *)s, len, t->up, t->events);
	gboolean ok = TRUE;
	for (gsize i = 0; i < len && ok; i++)
		ok = vr_http_gate_from_client(t->g, (const guint8 *)s + i, 1, t->up, t->events);
	return ok;
}

static void serve(Gate *t, const char *s)
{
	vr_http_gate_from_server(t->g, (const guint8 *)s, strlen(s), t->events);
}

static char *upstream(Gate *t)
{
	return g_strndup((const char *)t->up->data, t->up->len);
}

static const VrGateEvent *ev(Gate *t, guint i)
{
	assert_true(i < t->events->len);
	return t->events->pdata[i];
}

static void test_gate_keepalive(void **state)
{
	for (int bytewise = 0; bytewise < 2; bytewise++) {
		Gate t;
		gate_init(&t);
		assert_true(feed(&t,
		                 "POST /v1/chat/completions HTTP/1.1\r\nHost: 127.0.0.1:11434\r\n"
		                 "Content-Length:  5 \r\n\r\nhello"
		                 "GET /api/tags?x=1 HTTP/1.1\nHost: h\n\n"
		                 "POST /api/chat HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n"
		                 "3;ext=1\r\nabc\r\n0\r\nX-T: y\r\n\r\n",
		                 bytewise));
		g_autofree char *up = upstream(&t);
		assert_string_equal(up, "POST /v1/chat/completions HTTP/1.1\r\nHost: 127.0.0.1:11434\r\n"
		                        "Content-Length: 5\r\n\r\nhello"
		                        "GET /api/tags?x=1 HTTP/1.1\r\nHost: h\r\n\r\n"
		                        "POST /api/chat HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n"
		                        "3\r\nabc\r\n0\r\n\r\n");
		assert_int_equal(t.events->len, 3);
		assert_string_equal(ev(&t, 1)->path, "/api/tags");
		assert_int_equal(vr_http_gate_open_requests(t.g), 3);
		assert_int_equal(vr_http_gate_reply_state(t.g), VR_GATE_REPLY_WAIT);

		/* Answers in order: length, chunked, then one ending at the close. */
		serve(&t, "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok");
		assert_int_equal(t.events->len, 4);
		assert_int_equal(ev(&t, 3)->kind, VR_GATE_RESPONSE);
		assert_string_equal(ev(&t, 3)->path, "/v1/chat/completions");
		assert_int_equal(ev(&t, 3)->status, 200);
		assert_int_equal(ev(&t, 3)->bytes_down, 40);
		serve(&t, "HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\n[]\r\n0\r\n\r\n");
		assert_int_equal(t.events->len, 5);
		assert_string_equal(ev(&t, 4)->path, "/api/tags");
		serve(&t, "HTTP/1.0 200 OK\r\n\r\nstreamed");
		assert_int_equal(t.events->len, 5);
		assert_int_equal(vr_http_gate_reply_state(t.g), VR_GATE_REPLY_NEVER);
		vr_http_gate_server_closed(t.g, t.events);
		assert_int_equal(t.events->len, 6);
		assert_string_equal(ev(&t, 5)->path, "/api/chat");
		assert_int_equal(vr_http_gate_open_requests(t.g), 0);
		gate_clear(&t);
	}
}

static void test_gate_refusals(void **state)
{
	static const struct {
		const char *req;
		const char *reason; /* a piece of it */
	} cases[] = {
		{"POST /api/pull HTTP/1.1\r\nContent-Length: 2\r\n\r\n{}", "not an inference"},
		{"POST /api/create HTTP/1.1\r\n\r\n", "not an inference"},
		{"POST /api/chat/../pull HTTP/1.1\r\n\r\n", "not an inference"},
		{"POST /api/%70ull HTTP/1.1\r\n\r\n", "not an inference"},
		{"POST /v1/models/ HTTP/1.1\r\n\r\n", "not an inference"},
		{"DELETE /api/tags HTTP/1.1\r\n\r\n", "method DELETE"},
		{"GET http://127.0.0.1/api/tags HTTP/1.1\r\n\r\n", "origin form"},
		{"POST /api/chat HTTP/1.1\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n", "smuggling"},
		{"POST /api/chat HTTP/1.1\r\nTransfer-Encoding: chunked\r\nContent-Length: 3\r\n\r\n", "smuggling"},
		{"POST /api/chat HTTP/1.1\r\nContent-Length: 3\r\nContent-Length: 3\r\n\r\n", "once"},
		{"POST /api/chat HTTP/1.1\r\nContent-Length: +3\r\n\r\n", "digits"},
		{"POST /api/chat HTTP/1.1\r\nTransfer-Encoding: gzip, chunked\r\n\r\n", "chunked"},
		{"POST /api/chat HTTP/1.1\r\nTransfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n\r\n", "once"},
		{"POST /api/chat HTTP/1.1\r\nTransfer-Encoding : chunked\r\n\r\n", "NAME: VALUE"},
		{"POST /api/chat HTTP/1.1\r\nX: a\r\n Transfer-Encoding: chunked\r\n\r\n", "NAME: VALUE"},
		{"POST /api/chat HTTP/1.1\r\nX: a\rContent-Length: 9\r\n\r\n", "malformed"},
		{"GET /api/tags HTTP/1.1\r\nUpgrade: websocket\r\n\r\n", "Upgrade"},
		{"POST /api/chat HTTP/1.0\r\nTransfer-Encoding: chunked\r\n\r\n", "HTTP/1.0"},
		{"GET /api/tags HTTP/1.2\r\n\r\n", "request line"},
		{"POST /api/chat HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\nz\r\n", "chunk size"},
		{"POST /api/chat HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n3\nabc\r\n", "chunk size"},
		{"POST /api/chat HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabcX\r\n", "CRLF"},
		{"POST /api/chat HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n1000000000000000\r\n", "chunk size"},
	};
	for (size_t i = 0; i < G_N_ELEMENTS(cases); i++) {
		Gate t;
		gate_init(&t);
		/* An allowed request first: the refusal is on the second one of
		 * a kept-alive connection, which must be read as well. */
		g_autofree char *two = g_strconcat("GET /v1/models HTTP/1.1\r\n\r\n", cases[i].req,
		                                   "GET /api/tags HTTP/1.1\r\n\r\n", NULL);
		if (feed(&t, two, FALSE))
			fail_msg("not refused: %s", cases[i].req);
		const VrGateEvent *e = t.events->pdata[t.events->len - 1];
		assert_int_equal(e->kind, VR_GATE_REFUSED);
		if (!strstr(e->reason, cases[i].reason))
			fail_msg("%s: reason '%s', expected '%s'", cases[i].req, e->reason, cases[i].reason);
		/* Nothing after the refusal went on; refused again when fed more. */
		g_autofree char *up = upstream(&t);
		assert_null(strstr(up, "/api/tags"));
		assert_false(feed(&t, "GET /v1/models HTTP/1.1\r\n\r\n", FALSE));
		gate_clear(&t);
	}
}

static void test_gate_reply_state(void **state)
{
	Gate t;
	gate_init(&t);
	assert_int_equal(vr_http_gate_reply_state(t.g), VR_GATE_REPLY_NOW);
	assert_true(feed(&t, "HEAD /v1/models HTTP/1.1\r\n\r\n", FALSE));
	assert_int_equal(vr_http_gate_reply_state(t.g), VR_GATE_REPLY_WAIT);
	serve(&t, "HTTP/1.1 200 OK\r\nContent-Length: 99\r\n\r\n"); /* HEAD: no body */
	assert_int_equal(vr_http_gate_reply_state(t.g), VR_GATE_REPLY_NOW);
	/* A response to no request: the stream is no longer followed. */
	serve(&t, "HTTP/1.1 408 Request Timeout\r\n\r\n");
	assert_int_equal(vr_http_gate_reply_state(t.g), VR_GATE_REPLY_NEVER);
	gate_clear(&t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_head_length),     cmocka_unit_test(test_proxy_request),
		cmocka_unit_test(test_proxy_request_errors), cmocka_unit_test(test_socks),
		cmocka_unit_test(test_gate_keepalive),  cmocka_unit_test(test_gate_refusals),
		cmocka_unit_test(test_gate_reply_state),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
