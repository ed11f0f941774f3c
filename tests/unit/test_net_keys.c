/* Keys bound to hosts without sockets: declarations good and bad, the
 * sentinel's shape and stability, the hand-over of values through a
 * descriptor, the scrubber (held-back suffix, replacement across pieces,
 * detection), the policy of a terminated tunnel (injection at each
 * declared place and nowhere else, Host, read-only hosts, the tripwire,
 * method/path lists) and the run CA (name constraints, the subject hash
 * against openssl when it is installed). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "net/ca.h"
#include "net/gate.h"
#include "net/inject.h"
#include "net/keys.h"
#include "net/scrub.h"

static const guint8 secret[VR_NET_KEY_SECRET_SIZE] = "0123456789abcdef0123456789abcdef";
#define OPENAI "sk-proj-AbCdEfGhIjKlMnOpQrStUvWxYz0123456789_-abcdef"
#define ANTHROPIC "sk-ant-api03-ZZZZyyyyXXXXwwww1111222233334444-AAAA"
#define GEMINI "AIzaSyA1b2C3d4E5f6G7h8I9j0KlMnOpQrStUvW"

static VrNetKey *parse_ok(const char *spec)
{
	g_autoptr(GError) e = NULL;
	VrNetKey *k = vr_net_key_parse(spec, &e);
	if (!k)
		fail_msg("%s: %s", spec, e->message);
	return k;
}

static void parse_bad(const char *spec, const char *want)
{
	g_autoptr(GError) e = NULL;
	g_autoptr(VrNetKey) k = vr_net_key_parse(spec, &e);
	assert_null(k);
	if (!strstr(e->message, want))
		fail_msg("%s: '%s' does not say '%s'", spec, e->message, want);
}

static void test_parse(void **state)
{
	g_autoptr(VrNetKey) a = parse_ok("OPENAI_API_KEY@api.openai.com");
	assert_string_equal(a->name, "OPENAI_API_KEY");
	assert_int_equal(a->hosts->len, 1);
	assert_int_equal(a->places, VR_KEY_AS_BEARER);
	assert_null(a->methods);
	g_autoptr(VrNetKey) b =
	        parse_ok("GH_TOKEN@GitHub.com.,api.github.com:as=basic,bearer:methods=GET,POST:paths=/repos/*,/graphql");
	assert_string_equal(b->hosts->pdata[0], "github.com");
	assert_string_equal(b->hosts->pdata[1], "api.github.com");
	assert_int_equal(b->places, VR_KEY_AS_BASIC | VR_KEY_AS_BEARER);
	assert_int_equal(b->methods->len, 2);
	assert_int_equal(b->paths->len, 2);
	g_autofree char *places = vr_net_key_places_text(b->places);
	assert_string_equal(places, "bearer,basic");

	parse_bad("OPENAI_API_KEY", "NAME@HOST");
	parse_bad("1X@api.openai.com", "variable name");
	parse_bad("X@1.2.3.4", "IP literal");
	parse_bad("X@[::1]", "IP literal");
	parse_bad("X@*.openai.com", "wildcard");
	parse_bad("X@api.openai.com:443", "port 443");
	parse_bad("X@localhost", "DNS name with a dot");
	parse_bad("X@api.openai.com:as=cookie", "not a place");
	parse_bad("X@api.openai.com:methods=CONNECT", "never CONNECT");
	parse_bad("X@api.openai.com:paths=v1", "path glob");
	parse_bad("X@api.openai.com:color=red", "unknown option");
	parse_bad("X@a.com,,b.com", "empty host");
}

static void test_sentinel(void **state)
{
	g_autoptr(GError) e = NULL;
	g_autofree char *s1 = vr_net_key_sentinel(secret, sizeof secret, "OPENAI_API_KEY", OPENAI, &e);
	g_autofree char *s2 = vr_net_key_sentinel(secret, sizeof secret, "OPENAI_API_KEY", OPENAI, &e);
	g_autofree char *other = vr_net_key_sentinel(secret, sizeof secret, "OTHER", OPENAI, &e);
	assert_non_null(s1);
	assert_string_equal(s1, s2);          /* stable across runs */
	assert_string_not_equal(s1, OPENAI);  /* never the value */
	assert_string_not_equal(s1, other);   /* per name */
	assert_int_equal(strlen(s1), strlen(OPENAI));
	assert_true(g_str_has_prefix(s1, "sk-proj-"));
	for (size_t i = 0; i < strlen(OPENAI); i++) {
		char v = OPENAI[i], c = s1[i];
		assert_true(g_ascii_isdigit(v) ? g_ascii_isdigit(c)
		            : g_ascii_islower(v) ? g_ascii_islower(c)
		            : g_ascii_isupper(v) ? g_ascii_isupper(c)
		                                 : c == v);
	}
	g_autofree char *gem = vr_net_key_sentinel(secret, sizeof secret, "GEMINI_API_KEY", GEMINI, &e);
	assert_true(g_str_has_prefix(gem, "AIza"));
	guint8 other_secret[32] = {1};
	g_autofree char *s3 = vr_net_key_sentinel(other_secret, sizeof other_secret, "OPENAI_API_KEY", OPENAI, &e);
	assert_string_not_equal(s1, s3);

	char *bad = vr_net_key_sentinel(secret, sizeof secret, "X", "sk-short", &e);
	assert_null(bad);
	assert_non_null(strstr(e->message, "characters long"));
	g_clear_error(&e);
	assert_null(vr_net_key_sentinel(secret, sizeof secret, "X", "sk-0123456789 abcdefgh", &e));
	assert_non_null(strstr(e->message, "space"));
	g_clear_error(&e);
	assert_null(vr_net_key_sentinel(secret, sizeof secret, "X", "----------------------a", &e));
}

static void test_handover(void **state)
{
	g_autoptr(VrNetKeys) keys = vr_net_keys_new();
	vr_net_keys_add(keys, parse_ok("A@a.example.com"));
	vr_net_keys_add(keys, parse_ok("B@b.example.com:as=x-api-key"));
	assert_true(vr_net_key_set_value(vr_net_keys_find(keys, "A"), secret, sizeof secret, OPENAI, NULL));
	assert_true(vr_net_key_set_value(vr_net_keys_find(keys, "B"), secret, sizeof secret, ANTHROPIC, NULL));
	int fd = memfd_create("keys", MFD_CLOEXEC);
	assert_true(fd >= 0);
	assert_int_equal(vr_net_keys_write_values(keys, fd), 0);
	vr_net_keys_forget_values(keys);
	assert_null(vr_net_keys_find(keys, "A")->value);
	assert_int_equal(lseek(fd, 0, SEEK_SET), 0);
	assert_int_equal(vr_net_keys_read_values(keys, fd), 0);
	assert_string_equal(vr_net_keys_find(keys, "A")->value, OPENAI);
	assert_string_equal(vr_net_keys_find(keys, "B")->value, ANTHROPIC);
	/* A record for a key nobody declared is an error, not a new key. */
	g_autoptr(VrNetKeys) fewer = vr_net_keys_new();
	vr_net_keys_add(fewer, parse_ok("A@a.example.com"));
	assert_int_equal(lseek(fd, 0, SEEK_SET), 0);
	assert_int_equal(vr_net_keys_read_values(fewer, fd), -EBADMSG);
	close(fd);
	/* Same name: replaced. */
	vr_net_keys_add(keys, parse_ok("A@c.example.com"));
	assert_int_equal(vr_net_keys_count(keys), 2);
	assert_string_equal(vr_net_keys_find(keys, "A")->hosts->pdata[0], "c.example.com");
}

/* ---- scrubber ----------------------------------------------------------- */

static char *feed_pieces(VrScrub *s, const char *text, gsize piece, int *ret_id)
{
	g_autoptr(GByteArray) out = g_byte_array_new();
	gsize n = strlen(text);
	*ret_id = -1;
	for (gsize i = 0; i < n && *ret_id < 0; i += piece)
		*ret_id = vr_scrub_feed(s, (const guint8 *)text + i, MIN(piece, n - i), out);
	if (*ret_id < 0)
		vr_scrub_flush(s, out);
	return g_strndup((const char *)out->data, out->len);
}

static void test_scrub(void **state)
{
	g_autoptr(VrScrub) s = vr_scrub_new();
	vr_scrub_add(s, "SECRETVALUE", "sentinel!!", 1); /* wrong length: ignored */
	assert_int_equal(vr_scrub_count(s), 0);
	vr_scrub_add(s, "SECRETVALUE", "SENTINEL-XX", 1);
	const char *text = "a SECRETVALUE b SECRETVAL c SECRETVALUESECRETVALUE SECRE";
	/* The value's start at the very end is masked too: whatever came
	 * next (a second response) cannot make it whole on the client's side. */
	const char *want = "a SENTINEL-XX b SECRETVAL c SENTINEL-XXSENTINEL-XX SENTI";
	for (gsize piece = 1; piece <= strlen(text); piece++) {
		g_autoptr(VrScrub) c = vr_scrub_copy(s);
		int id;
		g_autofree char *got = feed_pieces(c, text, piece, &id);
		assert_int_equal(id, -1);
		assert_string_equal(got, want);
	}
	/* Only what could begin the value is held back: a stream flows. */
	g_autoptr(VrScrub) c = vr_scrub_copy(s);
	g_autoptr(GByteArray) out = g_byte_array_new();
	vr_scrub_feed(c, (const guint8 *)"data: hello\n\n", 13, out);
	assert_int_equal(out->len, 13);
	vr_scrub_feed(c, (const guint8 *)"xx SECR", 7, out);
	assert_int_equal(vr_scrub_held(c), 4);
	vr_scrub_feed(c, (const guint8 *)"ET", 2, out);
	assert_int_equal(vr_scrub_held(c), 6);
	vr_scrub_feed(c, (const guint8 *)"!", 1, out);
	assert_int_equal(vr_scrub_held(c), 0);
	assert_int_equal(out->len, 13 + 10);

	/* Detection: nothing from the pattern on goes out, then nothing at all. */
	g_autoptr(VrScrub) d = vr_scrub_new();
	vr_scrub_add(d, "REALKEY", NULL, 7);
	for (gsize piece = 1; piece < 12; piece++) {
		g_autoptr(VrScrub) dc = vr_scrub_copy(d);
		int id;
		g_autofree char *got = feed_pieces(dc, "abc REALKEY after", piece, &id);
		assert_int_equal(id, 7);
		assert_null(strstr(got, "REALKEY"));
		assert_true(strlen(got) <= 4);
		g_autoptr(GByteArray) more = g_byte_array_new();
		assert_int_equal(vr_scrub_feed(dc, (const guint8 *)"x", 1, more), 7);
		assert_int_equal(more->len, 0);
	}
	/* The end of a stream reports what it found: a short pattern whole
	 * inside what was held for a longer one, or one detected before. */
	g_autoptr(VrScrub) e = vr_scrub_new();
	vr_scrub_add(e, "XXPATTERNLONG", NULL, 1);
	vr_scrub_add(e, "PATT", NULL, 2);
	g_autoptr(GByteArray) eo = g_byte_array_new();
	assert_int_equal(vr_scrub_feed(e, (const guint8 *)"ab XXPATT", 9, eo), -1);
	assert_int_equal(vr_scrub_held(e), 6);
	assert_int_equal(vr_scrub_flush(e, eo), 2);
	assert_int_equal(eo->len, 5); /* "ab XX": nothing of PATT */
	assert_int_equal(vr_scrub_flush(e, eo), 2);
	g_autoptr(VrScrub) clean = vr_scrub_copy(e);
	assert_int_equal(vr_scrub_feed(clean, (const guint8 *)"ab XXPA", 7, eo), -1);
	assert_int_equal(vr_scrub_flush(clean, eo), -1);
	char host[] = "realkey.evil.test";
	assert_int_equal(vr_scrub_buffer(d, (guint8 *)host, strlen(host), TRUE), 7);
	assert_int_equal(vr_scrub_buffer(d, (guint8 *)host, strlen(host), FALSE), -1);
}

/* ---- a terminated tunnel's policy -------------------------------------- */

typedef struct {
	VrNetKeys *keys;
	GPtrArray *read_hosts;
	VrInject *inj;
	char *openai_s, *anthropic_s, *gemini_s;
} Run;

static Run *run_new(void)
{
	Run *r = g_new0(Run, 1);
	r->keys = vr_net_keys_new();
	vr_net_keys_add(r->keys, parse_ok("OPENAI_API_KEY@api.openai.com:as=bearer,basic"));
	vr_net_keys_add(r->keys, parse_ok("ANTHROPIC_API_KEY@api.anthropic.com:as=x-api-key:methods=POST:paths=/v1/*"));
	vr_net_keys_add(r->keys, parse_ok("GEMINI_API_KEY@generativelanguage.googleapis.com:as=x-goog-api-key,query"));
	assert_true(vr_net_key_set_value(vr_net_keys_find(r->keys, "OPENAI_API_KEY"), secret, 32, OPENAI, NULL));
	assert_true(vr_net_key_set_value(vr_net_keys_find(r->keys, "ANTHROPIC_API_KEY"), secret, 32, ANTHROPIC, NULL));
	assert_true(vr_net_key_set_value(vr_net_keys_find(r->keys, "GEMINI_API_KEY"), secret, 32, GEMINI, NULL));
	r->openai_s = g_strdup(vr_net_keys_find(r->keys, "OPENAI_API_KEY")->sentinel);
	r->anthropic_s = g_strdup(vr_net_keys_find(r->keys, "ANTHROPIC_API_KEY")->sentinel);
	r->gemini_s = g_strdup(vr_net_keys_find(r->keys, "GEMINI_API_KEY")->sentinel);
	r->read_hosts = g_ptr_array_new();
	g_ptr_array_add(r->read_hosts, (char *)"github.com");
	r->inj = vr_inject_new(r->keys, r->read_hosts);
	return r;
}

static void run_free(Run *r)
{
	vr_inject_free(r->inj);
	g_ptr_array_unref(r->read_hosts);
	vr_net_keys_free(r->keys);
	g_free(r->openai_s);
	g_free(r->anthropic_s);
	g_free(r->gemini_s);
	g_free(r);
}

typedef struct {
	gboolean ok;
	char *up;     /* what went to the server */
	char *reason; /* the refusal's */
	char *note;
	gboolean forbidden;
} Sent;

static void sent_clear(Sent *s)
{
	g_free(s->up);
	g_free(s->reason);
	g_free(s->note);
}

static Sent send_to(Run *r, const char *host, const char *request)
{
	g_autoptr(VrInjectSite) site = vr_inject_site_new(r->inj, host);
	g_autoptr(VrHttpGate) g = vr_inject_gate_new(site);
	g_autoptr(GByteArray) up = g_byte_array_new();
	g_autoptr(GPtrArray) events = g_ptr_array_new_with_free_func(vr_gate_event_free);
	Sent s = {0};
	s.ok = vr_http_gate_from_client(g, (const guint8 *)request, strlen(request), up, events);
	s.up = up->len ? g_strndup((const char *)up->data, up->len) : g_strdup("");
	for (guint i = 0; i < events->len; i++) {
		const VrGateEvent *e = events->pdata[i];
		if (e->kind == VR_GATE_REFUSED) {
			s.reason = g_strdup(e->reason);
			s.forbidden = e->forbidden;
		}
		if (e->note && !s.note)
			s.note = g_strdup(e->note);
	}
	return s;
}

static void test_inject_places(void **state)
{
	Run *r = run_new();
	assert_true(vr_inject_terminates(r->inj, "API.openai.com.", 443));
	assert_false(vr_inject_terminates(r->inj, "api.openai.com", 8443));
	assert_true(vr_inject_terminates(r->inj, "github.com", 443));
	assert_false(vr_inject_terminates(r->inj, "example.com", 443));

	g_autofree char *req = g_strdup_printf("POST /v1/chat/completions HTTP/1.1\r\nHost: api.openai.com\r\n"
	                                       "Authorization: Bearer %s\r\nAccept-Encoding: gzip, br\r\n"
	                                       "Content-Length: 2\r\n\r\n{}",
	                                       r->openai_s);
	Sent s = send_to(r, "api.openai.com", req);
	assert_true(s.ok);
	assert_non_null(strstr(s.up, "Authorization: Bearer " OPENAI "\r\n"));
	assert_null(strstr(s.up, r->openai_s));
	assert_null(strstr(s.up, "gzip"));
	assert_non_null(strstr(s.up, "Accept-Encoding: identity\r\n"));
	assert_true(g_str_has_suffix(s.up, "\r\n\r\n{}"));
	assert_string_equal(s.note, "OPENAI_API_KEY");
	sent_clear(&s);

	/* Basic, as git sends a token (user:token). */
	g_autofree char *cred = g_strdup_printf("x-access-token:%s", r->openai_s);
	g_autofree char *b64 = g_base64_encode((const guchar *)cred, strlen(cred));
	g_autofree char *basic = g_strdup_printf("GET /x HTTP/1.1\r\nHost: api.openai.com\r\nAuthorization: Basic %s\r\n\r\n", b64);
	s = send_to(r, "api.openai.com", basic);
	g_autofree char *want = g_base64_encode((const guchar *)"x-access-token:" OPENAI, strlen("x-access-token:" OPENAI));
	assert_true(s.ok);
	assert_non_null(strstr(s.up, want));
	sent_clear(&s);

	/* x-goog-api-key and ?key= for Gemini; the other parameters untouched. */
	g_autofree char *gq = g_strdup_printf("GET /v1beta/models?pageSize=5&key=%s&x=%s HTTP/1.1\r\n"
	                                      "Host: generativelanguage.googleapis.com\r\nx-goog-api-key: %s\r\n\r\n",
	                                      r->gemini_s, "y", r->gemini_s);
	s = send_to(r, "generativelanguage.googleapis.com", gq);
	assert_true(s.ok);
	assert_non_null(strstr(s.up, "&key=" GEMINI "&x=y"));
	assert_non_null(strstr(s.up, "x-goog-api-key: " GEMINI "\r\n"));
	sent_clear(&s);

	/* A place the key is not declared for: the sentinel goes on as it is. */
	g_autofree char *undeclared = g_strdup_printf("GET /x HTTP/1.1\r\nHost: api.openai.com\r\nx-api-key: %s\r\n\r\n",
	                                              r->openai_s);
	s = send_to(r, "api.openai.com", undeclared);
	assert_true(s.ok);
	assert_non_null(strstr(s.up, r->openai_s));
	assert_null(strstr(s.up, OPENAI));
	assert_null(s.note);
	sent_clear(&s);
	/* …and never into a body or a path. */
	g_autofree char *body = g_strdup_printf("POST /v1/%s HTTP/1.1\r\nHost: api.openai.com\r\nContent-Length: %zu\r\n\r\n%s",
	                                        r->openai_s, strlen(r->openai_s), r->openai_s);
	s = send_to(r, "api.openai.com", body);
	assert_true(s.ok);
	assert_null(strstr(s.up, OPENAI));
	sent_clear(&s);
	run_free(r);
}

static void refused(Run *r, const char *host, const char *req, const char *want, gboolean forbidden)
{
	Sent s = send_to(r, host, req);
	if (s.ok || !s.reason || !strstr(s.reason, want))
		fail_msg("%s: expected a refusal saying '%s', got %s", req, want, s.reason ? s.reason : "none");
	assert_int_equal(s.forbidden, forbidden);
	assert_null(strstr(s.up, OPENAI));
	assert_null(strstr(s.up, ANTHROPIC));
	sent_clear(&s);
}

static void test_inject_refusals(void **state)
{
	Run *r = run_new();
	g_autofree char *fronting = g_strdup_printf("GET / HTTP/1.1\r\nHost: evil.example\r\nAuthorization: Bearer %s\r\n\r\n",
	                                            r->openai_s);
	refused(r, "api.openai.com", fronting, "domain fronting", TRUE);
	refused(r, "api.openai.com", "GET / HTTP/1.1\r\nX: y\r\n\r\n", "no Host", TRUE);
	refused(r, "api.openai.com", "GET / HTTP/1.1\r\nHost: api.openai.com\r\nHost: api.openai.com\r\n\r\n",
	        "more than one Host", TRUE);
	refused(r, "api.openai.com", "GET https://api.openai.com/ HTTP/1.1\r\nHost: api.openai.com\r\n\r\n",
	        "origin form", FALSE);
	refused(r, "api.openai.com", "CONNECT api.openai.com:443 HTTP/1.1\r\nHost: api.openai.com\r\n\r\n",
	        "origin form", FALSE);
	refused(r, "api.openai.com", "CONNECT /x HTTP/1.1\r\nHost: api.openai.com\r\n\r\n", "CONNECT inside", TRUE);
	refused(r, "api.openai.com", "GET / HTTP/1.1\r\nHost: api.openai.com\r\nConnection: Upgrade\r\nUpgrade: h2c\r\n\r\n",
	        "Upgrade", FALSE);
	refused(r, "api.openai.com",
	        "POST / HTTP/1.1\r\nHost: api.openai.com\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n",
	        "smuggling", FALSE);
	/* The tripwire: a real value anywhere, a sentinel bound elsewhere. */
	refused(r, "api.openai.com", "GET /?q=" OPENAI " HTTP/1.1\r\nHost: api.openai.com\r\n\r\n", "real value of OPENAI_API_KEY",
	        TRUE);
	refused(r, "api.openai.com", "GET / HTTP/1.1\r\nHost: api.openai.com\r\nX-Note: " ANTHROPIC "\r\n\r\n",
	        "real value of ANTHROPIC_API_KEY", TRUE);
	/* Percent-encoded ("%73" is 's'): decoded before the scan. */
	g_autofree char *escaped = g_strdup_printf("GET /?x=%%73%s HTTP/1.1\r\nHost: api.openai.com\r\n\r\n", OPENAI + 1);
	refused(r, "api.openai.com", escaped, "real value", TRUE);
	g_autofree char *elsewhere = g_strdup_printf("POST /v1/messages HTTP/1.1\r\nHost: api.openai.com\r\nx-api-key: %s\r\n\r\n",
	                                             r->anthropic_s);
	refused(r, "api.openai.com", elsewhere, "sentinel of ANTHROPIC_API_KEY sent to api.openai.com", TRUE);
	g_autofree char *in_body = g_strdup_printf("POST /v1/x HTTP/1.1\r\nHost: api.openai.com\r\nContent-Length: %zu\r\n\r\n"
	                                           "x=%s",
	                                           strlen(ANTHROPIC) + 2, ANTHROPIC);
	refused(r, "api.openai.com", in_body, "in the request body", FALSE);
	g_autofree char *chunked = g_strdup_printf("POST /v1/x HTTP/1.1\r\nHost: api.openai.com\r\nTransfer-Encoding: chunked\r\n\r\n"
	                                           "5\r\nabc %c\r\n%zx\r\n%s\r\n0\r\n\r\n",
	                                           OPENAI[0], strlen(OPENAI) - 1, OPENAI + 1);
	refused(r, "api.openai.com", chunked, "real value of OPENAI_API_KEY", FALSE);

	/* A key's method and path lists. */
	g_autofree char *get = g_strdup_printf("GET /v1/models HTTP/1.1\r\nHost: api.anthropic.com\r\nx-api-key: %s\r\n\r\n",
	                                       r->anthropic_s);
	refused(r, "api.anthropic.com", get, "ANTHROPIC_API_KEY may not be used for GET /v1/models", TRUE);
	g_autofree char *dots = g_strdup_printf("POST /v1/../admin HTTP/1.1\r\nHost: api.anthropic.com\r\nx-api-key: %s\r\n\r\n",
	                                        r->anthropic_s);
	refused(r, "api.anthropic.com", dots, "may not be used", TRUE);
	/* What a server may cut a segment at or decode into one. */
	const char *odd[] = {"/v1/..;/admin", "/v1/x;jsessionid=1", "/v1/%2e%2e/admin", "/v1/x%00/../admin",
	                     "/v1/%252e%252e/admin", "/v1/x%3b/admin"};
	for (size_t i = 0; i < G_N_ELEMENTS(odd); i++) {
		g_autofree char *q = g_strdup_printf("POST %s HTTP/1.1\r\nHost: api.anthropic.com\r\nx-api-key: %s\r\n\r\n",
		                                     odd[i], r->anthropic_s);
		refused(r, "api.anthropic.com", q, "may not be used", TRUE);
	}
	g_autofree char *post = g_strdup_printf("POST /v1/messages HTTP/1.1\r\nHost: api.anthropic.com\r\nx-api-key: %s\r\n\r\n",
	                                        r->anthropic_s);
	Sent s = send_to(r, "api.anthropic.com", post);
	assert_true(s.ok);
	assert_non_null(strstr(s.up, "x-api-key: " ANTHROPIC "\r\n"));
	sent_clear(&s);

	/* A read-only host. */
	refused(r, "github.com", "POST /o/r.git/git-receive-pack HTTP/1.1\r\nHost: github.com\r\n\r\n", "read-only", TRUE);
	refused(r, "github.com", "PUT /x HTTP/1.1\r\nHost: github.com\r\n\r\n", "read-only", TRUE);
	refused(r, "github.com", "DELETE /x HTTP/1.1\r\nHost: github.com\r\n\r\n", "read-only", TRUE);
	refused(r, "github.com", "POST /o/r.git/git-receive-pack;/git-upload-pack HTTP/1.1\r\nHost: github.com\r\n\r\n",
	        "read-only", TRUE);
	refused(r, "github.com", "POST /o/r.git/git-receive-pack%00/git-upload-pack HTTP/1.1\r\nHost: github.com\r\n\r\n",
	        "read-only", TRUE);
	s = send_to(r, "github.com",
	            "GET /o/r.git/info/refs?service=git-upload-pack HTTP/1.1\r\nHost: github.com\r\n\r\n"
	            "POST /o/r.git/git-upload-pack HTTP/1.1\r\nHost: github.com\r\nContent-Length: 4\r\n\r\n0000"
	            "HEAD / HTTP/1.1\r\nHost: github.com\r\n\r\nOPTIONS / HTTP/1.1\r\nHost: github.com\r\n\r\n");
	assert_true(s.ok);
	assert_non_null(strstr(s.up, "OPTIONS / HTTP/1.1"));
	sent_clear(&s);
	/* The second request of a kept-alive connection is judged too. */
	g_autofree char *two = g_strdup_printf("GET /a HTTP/1.1\r\nHost: api.openai.com\r\n\r\n"
	                                       "GET /b HTTP/1.1\r\nHost: evil.example\r\nAuthorization: Bearer %s\r\n\r\n",
	                                       r->openai_s);
	s = send_to(r, "api.openai.com", two);
	assert_false(s.ok);
	assert_non_null(strstr(s.up, "GET /a"));
	assert_null(strstr(s.up, "GET /b"));
	sent_clear(&s);
	run_free(r);
}

static void test_tripwire_outside(void **state)
{
	Run *r = run_new();
	g_autofree char *lower = g_ascii_strdown(OPENAI, -1);
	g_autofree char *name = g_strdup_printf("%s.evil.test", lower);
	g_autofree char *h2 = vr_inject_check_host(r->inj, name);
	assert_non_null(h2); /* a DNS name has no case */
	assert_non_null(strstr(h2, "real value of OPENAI_API_KEY"));
	g_autofree char *sname = g_strdup_printf("%s.evil.test", r->gemini_s);
	g_autofree char *h3 = vr_inject_check_host(r->inj, sname);
	assert_non_null(strstr(h3, "sentinel of GEMINI_API_KEY"));
	assert_null(vr_inject_check_host(r->inj, "example.com"));
	g_autofree char *plain = g_strdup_printf("GET http://example.com/?k=%s HTTP/1.1\r\n\r\n", r->openai_s);
	g_autofree char *p = vr_inject_check_plain(r->inj, plain, strlen(plain), "example.com");
	assert_non_null(strstr(p, "plain HTTP"));
	/* A plain-HTTP body: every real value and every sentinel, however the
	 * body is cut; describe names the key, never the value. */
	const char *finds[] = {OPENAI, r->anthropic_s};
	for (guint k = 0; k < G_N_ELEMENTS(finds); k++) {
		g_autofree char *body = g_strdup_printf("{\"prompt\": \"%s\"}", finds[k]);
		for (gsize piece = 1; piece <= strlen(body); piece++) {
			g_autoptr(VrScrub) scan = vr_inject_plain_scan(r->inj);
			int id;
			g_autofree char *got = feed_pieces(scan, body, piece, &id);
			assert_true(id >= 0);
			assert_null(strstr(got, finds[k]));
			g_autofree char *why = vr_inject_describe(r->inj, id, "example.com");
			assert_non_null(strstr(why, k ? "sentinel of ANTHROPIC_API_KEY sent to example.com" :
			                              "real value of OPENAI_API_KEY"));
			assert_null(strstr(why, finds[k]));
		}
	}
	g_autoptr(VrScrub) scan = vr_inject_plain_scan(r->inj);
	int id;
	g_autofree char *got = feed_pieces(scan, "{\"prompt\": \"ask sk-\"}", 3, &id);
	assert_int_equal(id, -1);
	assert_string_equal(got, "{\"prompt\": \"ask sk-\"}");
	run_free(r);
}

static void test_inject_responses(void **state)
{
	Run *r = run_new();
	g_autoptr(VrInjectSite) site = vr_inject_site_new(r->inj, "api.openai.com");
	g_autoptr(VrHttpGate) g = vr_inject_gate_new(site);
	g_autoptr(GByteArray) up = g_byte_array_new();
	g_autoptr(GPtrArray) events = g_ptr_array_new_with_free_func(vr_gate_event_free);
	const char *reqs = "GET /echo HTTP/1.1\r\nHost: api.openai.com\r\n\r\nGET /sse HTTP/1.1\r\nHost: api.openai.com\r\n\r\n";
	assert_true(vr_http_gate_from_client(g, (const guint8 *)reqs, strlen(reqs), up, events));
	g_autofree char *resp = g_strdup_printf("HTTP/1.1 200 OK\r\nX-Echo: Bearer %s\r\nContent-Length: %zu\r\n\r\n%s"
	                                        "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
	                                        "5\r\ndata:\r\n%zx\r\n%.*s\r\n%zx\r\n%s\r\n0\r\nX-T: 1\r\n\r\n",
	                                        OPENAI, strlen(OPENAI), OPENAI, (size_t)10, 10, OPENAI,
	                                        strlen(OPENAI) - 10, OPENAI + 10);
	for (gsize piece = 1; piece <= strlen(resp); piece += 7) {
		g_autoptr(VrInjectSite) s2 = vr_inject_site_new(r->inj, "api.openai.com");
		g_autoptr(VrHttpGate) g2 = vr_inject_gate_new(s2);
		g_byte_array_set_size(up, 0);
		g_ptr_array_set_size(events, 0);
		vr_http_gate_from_client(g2, (const guint8 *)reqs, strlen(reqs), up, events);
		g_autoptr(GByteArray) down = g_byte_array_new();
		for (gsize i = 0; i < strlen(resp); i += piece)
			vr_http_gate_from_server_out(g2, (const guint8 *)resp + i, MIN(piece, strlen(resp) - i), down, events);
		g_autofree char *text = g_strndup((const char *)down->data, down->len);
		assert_null(strstr(text, OPENAI));
		assert_non_null(strstr(text, r->openai_s)); /* the Content-Length body, same length */
		assert_non_null(strstr(text, "X-Echo: Bearer "));
		assert_true(g_str_has_suffix(text, "0\r\n\r\n"));
		assert_int_equal(vr_http_gate_open_requests(g2), 0);
		/* The chunked body, de-chunked, is the sentinel too. */
		const char *sse = strstr(text, "chunked\r\n\r\n") + 11;
		g_autoptr(GString) body = g_string_new(NULL);
		while (sse && *sse) {
			char *end;
			gsize n = strtoul(sse, &end, 16);
			if (!n)
				break;
			g_string_append_len(body, end + 2, (gssize)n);
			sse = end + 2 + n + 2;
		}
		g_autofree char *want = g_strdup_printf("data:%s", r->openai_s);
		assert_string_equal(body->str, want);
	}
	run_free(r);
}

/* A bound host that compresses though it was asked for identity: the
 * scrubber cannot read the body, so the client gets a 502 instead of it,
 * and nothing after; the response's event says why. */
static void test_compressed_response(void **state)
{
	Run *r = run_new();
	const char *reqs = "GET /a HTTP/1.1\r\nHost: api.openai.com\r\n\r\nGET /b HTTP/1.1\r\nHost: api.openai.com\r\n\r\n";
	const char *resps[] = {
		"HTTP/1.1 200 OK\r\nContent-Encoding: gzip\r\nContent-Length: 6\r\n\r\nGZDATA",
		"HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip, chunked\r\n\r\n6\r\nGZDATA\r\n0\r\n\r\n",
		"HTTP/1.1 200 OK\r\nContent-Encoding: br\r\n\r\nGZDATA",
	};
	for (gsize k = 0; k < G_N_ELEMENTS(resps); k++) {
		g_autoptr(VrInjectSite) site = vr_inject_site_new(r->inj, "api.openai.com");
		g_autoptr(VrHttpGate) g = vr_inject_gate_new(site);
		g_autoptr(GByteArray) up = g_byte_array_new();
		g_autoptr(GByteArray) down = g_byte_array_new();
		g_autoptr(GPtrArray) events = g_ptr_array_new_with_free_func(vr_gate_event_free);
		assert_true(vr_http_gate_from_client(g, (const guint8 *)reqs, strlen(reqs), up, events));
		g_autofree char *two = g_strdup_printf("%s%s", resps[k], resps[0]);
		vr_http_gate_from_server_out(g, (const guint8 *)two, strlen(two), down, events);
		g_autofree char *text = g_strndup((const char *)down->data, down->len);
		assert_true(g_str_has_prefix(text, "HTTP/1.1 502 "));
		assert_null(strstr(text, "GZDATA"));
		assert_int_equal(vr_http_gate_reply_state(g), VR_GATE_REPLY_NEVER);
		const VrGateEvent *e = events->pdata[events->len - 1];
		assert_int_equal(e->kind, VR_GATE_RESPONSE);
		assert_int_equal(e->status, 502);
		assert_non_null(strstr(e->reason, "compressed"));
	}
	/* identity, and a HEAD's coded head without a body, pass. */
	g_autoptr(VrInjectSite) site = vr_inject_site_new(r->inj, "api.openai.com");
	g_autoptr(VrHttpGate) g = vr_inject_gate_new(site);
	g_autoptr(GByteArray) up = g_byte_array_new();
	g_autoptr(GByteArray) down = g_byte_array_new();
	g_autoptr(GPtrArray) events = g_ptr_array_new_with_free_func(vr_gate_event_free);
	const char *req2 = "HEAD /a HTTP/1.1\r\nHost: api.openai.com\r\n\r\nGET /b HTTP/1.1\r\nHost: api.openai.com\r\n\r\n";
	assert_true(vr_http_gate_from_client(g, (const guint8 *)req2, strlen(req2), up, events));
	const char *ok = "HTTP/1.1 200 OK\r\nContent-Encoding: gzip\r\nContent-Length: 6\r\n\r\n"
	                 "HTTP/1.1 200 OK\r\nContent-Encoding: identity\r\nContent-Length: 2\r\n\r\nok";
	vr_http_gate_from_server_out(g, (const guint8 *)ok, strlen(ok), down, events);
	assert_int_equal(down->len, strlen(ok));
	assert_int_equal(vr_http_gate_open_requests(g), 0);
	run_free(r);
}

/* A Basic credential is put in as base64 of the value: a server that
 * echoes the header hands that base64 back, which must come back as the
 * base64 the agent sent, on every request of the connection. */
static void test_basic_echo(void **state)
{
	Run *r = run_new();
	g_autoptr(VrInjectSite) site = vr_inject_site_new(r->inj, "api.openai.com");
	g_autoptr(VrHttpGate) g = vr_inject_gate_new(site);
	g_autoptr(GByteArray) up = g_byte_array_new();
	g_autoptr(GByteArray) down = g_byte_array_new();
	g_autoptr(GPtrArray) events = g_ptr_array_new_with_free_func(vr_gate_event_free);
	g_autofree char *plain_s = g_strdup_printf("x:%s", r->openai_s);
	g_autofree char *plain_v = g_strdup_printf("x:%s", OPENAI);
	g_autofree char *b64_s = g_base64_encode((const guchar *)plain_s, strlen(plain_s));
	g_autofree char *b64_v = g_base64_encode((const guchar *)plain_v, strlen(plain_v));
	g_autofree char *req = g_strdup_printf("GET /echo HTTP/1.1\r\nHost: api.openai.com\r\nAuthorization: Basic %s\r\n\r\n", b64_s);
	for (int round = 0; round < 2; round++) {
		g_byte_array_set_size(up, 0);
		g_byte_array_set_size(down, 0);
		assert_true(vr_http_gate_from_client(g, (const guint8 *)req, strlen(req), up, events));
		g_autofree char *sent = g_strndup((const char *)up->data, up->len);
		assert_non_null(strstr(sent, b64_v)); /* put in */
		g_autofree char *resp = g_strdup_printf("HTTP/1.1 200 OK\r\nX-Echo: Basic %s\r\nContent-Length: %zu\r\n\r\n%s",
		                                        b64_v, strlen(b64_v), b64_v);
		for (gsize i = 0; i < strlen(resp); i += 3)
			vr_http_gate_from_server_out(g, (const guint8 *)resp + i, MIN(3, strlen(resp) - i), down, events);
		g_autofree char *text = g_strndup((const char *)down->data, down->len);
		assert_null(strstr(text, b64_v));
		g_autofree char *want = g_strdup_printf("X-Echo: Basic %s\r\n", b64_s);
		assert_non_null(strstr(text, want));
		assert_true(g_str_has_suffix(text, b64_s));
	}
	run_free(r);
}

/* ---- the run CA --------------------------------------------------------- */

static void test_ca(void **state)
{
	g_autoptr(GError) e = NULL;
	g_autoptr(GPtrArray) hosts = g_ptr_array_new();
	g_ptr_array_add(hosts, (char *)"api.openai.com");
	g_ptr_array_add(hosts, (char *)"github.com");
	g_autoptr(VrNetCa) ca = vr_net_ca_new("20261201T101010-abc123", hosts, 3600, &e);
	assert_non_null(ca);
	assert_true(g_str_has_prefix(vr_net_ca_pem(ca), "-----BEGIN CERTIFICATE-----"));
	char *leaf = vr_net_ca_issue(ca, "api.openai.com", &e);
	assert_non_null(leaf);
	assert_non_null(strstr(leaf, "-----BEGIN PRIVATE KEY-----"));
	guint32 hash = 0;
	assert_true(vr_net_ca_subject_hash("20261201T101010-abc123", &hash, &e));
	assert_null(vr_net_ca_new("x", g_ptr_array_new(), 0, NULL));

	/* openssl as the oracle: the hash, the constraints, the chain. */
	if (system("command -v openssl >/dev/null 2>&1") == 0) {
		g_autofree char *dir = g_dir_make_tmp("vr-ca-XXXXXX", NULL);
		g_autofree char *ca_path = g_build_filename(dir, "ca.pem", NULL);
		g_autofree char *leaf_path = g_build_filename(dir, "leaf.pem", NULL);
		assert_true(g_file_set_contents(ca_path, vr_net_ca_pem(ca), -1, NULL));
		assert_true(g_file_set_contents(leaf_path, leaf, -1, NULL));
		g_autofree char *cmd = g_strdup_printf("openssl x509 -noout -hash -in %s", ca_path);
		g_autofree char *out = NULL;
		assert_true(g_spawn_command_line_sync(cmd, &out, NULL, NULL, NULL));
		g_autofree char *want = g_strdup_printf("%08x\n", hash);
		assert_string_equal(out, want);
		g_free(cmd);
		cmd = g_strdup_printf("openssl x509 -noout -text -in %s", ca_path);
		g_free(out);
		out = NULL;
		assert_true(g_spawn_command_line_sync(cmd, &out, NULL, NULL, NULL));
		assert_non_null(strstr(out, "CA:TRUE, pathlen:0"));
		assert_non_null(strstr(out, "DNS:api.openai.com"));
		assert_non_null(strstr(out, "IP:0.0.0.0/0.0.0.0"));
		assert_non_null(strstr(out, "ASN1 OID: prime256v1"));
		g_free(cmd);
		int st = 0;
		g_autofree char *vout = NULL;
		cmd = g_strdup_printf("openssl verify -CAfile %s -verify_hostname api.openai.com %s", ca_path, leaf_path);
		assert_true(g_spawn_command_line_sync(cmd, &vout, NULL, &st, NULL));
		assert_int_equal(st, 0);
		/* Name constraints: a leaf for a host outside them does not verify. */
		char *stray = vr_net_ca_issue(ca, "evil.example.com", &e);
		assert_true(g_file_set_contents(leaf_path, stray, -1, NULL));
		vr_net_secret_free(stray);
		g_free(cmd);
		cmd = g_strdup_printf("openssl verify -CAfile %s -verify_hostname evil.example.com %s", ca_path, leaf_path);
		g_autofree char *err = NULL;
		assert_true(g_spawn_command_line_sync(cmd, NULL, &err, &st, NULL));
		if (!strstr(err, "permitted subtree violation")) fail_msg("%s", err);
		assert_int_not_equal(st, 0);
		g_free(cmd);
		cmd = g_strdup_printf("rm -rf %s", dir);
		assert_true(g_spawn_command_line_sync(cmd, NULL, NULL, NULL, NULL));
	}
	vr_net_secret_free(leaf);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse),          cmocka_unit_test(test_sentinel),
		cmocka_unit_test(test_handover),       cmocka_unit_test(test_scrub),
		cmocka_unit_test(test_inject_places),  cmocka_unit_test(test_inject_refusals),
		cmocka_unit_test(test_tripwire_outside), cmocka_unit_test(test_inject_responses),
		cmocka_unit_test(test_compressed_response), cmocka_unit_test(test_basic_echo),
		cmocka_unit_test(test_ca),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
