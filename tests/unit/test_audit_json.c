/* The audit log's line parser (audit/json.c): the schema's lines,
 * every JSON escape, malformed input refused, and a mutation fuzz loop over
 * inputs that are not NUL-terminated (so an ASan build catches overreads). */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "audit/json.h"

static int parse(VrJsonObject *o, const char *s)
{
	/* An exact-size copy: reading past len would be caught by ASan. */
	size_t n = strlen(s);
	char *copy = malloc(n ? n : 1);
	memcpy(copy, s, n);
	int ret = vr_json_parse_object(o, copy, n, NULL, NULL);
	/* Values point into o->buf, not the input: freeing it must be safe. */
	free(copy);
	return ret;
}

static void test_schema_line(void **state)
{
	VrJsonObject o;
	vr_json_object_init(&o);
	assert_int_equal(parse(&o, "{\"ts\":\"2026-12-01T08:00:00.000001Z\",\"run\":\"r1\",\"op\":\"close\","
	                           "\"path\":\"src/main.c\",\"result\":\"ok\",\"rule\":null,\"pid\":42,"
	                           "\"bytes_read\":1024,\"bytes_written\":0,\"big\":true,\"neg\":-3.5e2}"),
	                 0);
	assert_int_equal(o.n_fields, 11);
	assert_string_equal(vr_json_get_string(&o, "op"), "close");
	assert_string_equal(vr_json_get_string(&o, "path"), "src/main.c");
	assert_null(vr_json_get_string(&o, "rule"));
	assert_int_equal(vr_json_get(&o, "rule")->kind, VR_JSON_NULL);
	assert_int_equal(vr_json_get(&o, "big")->kind, VR_JSON_TRUE);
	int64_t v;
	assert_true(vr_json_get_int64(&o, "pid", &v));
	assert_int_equal(v, 42);
	assert_true(vr_json_get_int64(&o, "bytes_read", &v));
	assert_int_equal(v, 1024);
	assert_false(vr_json_get_int64(&o, "neg", &v));   /* not an integer */
	assert_false(vr_json_get_int64(&o, "path", &v));  /* a string */
	assert_false(vr_json_get_int64(&o, "nope", &v));
	assert_string_equal(vr_json_get(&o, "neg")->value, "-3.5e2");
	assert_int_equal(parse(&o, "  {}  "), 0);
	assert_int_equal(o.n_fields, 0);
	assert_int_equal(parse(&o, "{ \"a\" : 1 , \"b\" : \"x\" }\r"), 0);
	assert_int_equal(o.n_fields, 2);
	vr_json_object_clear(&o);
}

static void test_escapes(void **state)
{
	VrJsonObject o;
	vr_json_object_init(&o);
	assert_int_equal(parse(&o, "{\"p\":\"a\\\"b\\\\c\\/d\\n\\t\\r\\b\\f\"}"), 0);
	assert_string_equal(vr_json_get_string(&o, "p"), "a\"b\\c/d\n\t\r\b\f");
	assert_int_equal(parse(&o, "{\"p\":\"\\u00e9\\u20ac\\ud83d\\ude00\"}"), 0);
	assert_string_equal(vr_json_get_string(&o, "p"), "\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80");
	/* Lone surrogates become U+FFFD rather than invalid UTF-8. */
	assert_int_equal(parse(&o, "{\"p\":\"\\ud800x\\udc00\\ud800\\u0041\"}"), 0);
	assert_string_equal(vr_json_get_string(&o, "p"), "\xef\xbf\xbdx\xef\xbf\xbd\xef\xbf\xbd" "A");
	/* Raw non-UTF-8 bytes (a path is bytes) pass through. */
	assert_int_equal(parse(&o, "{\"p\":\"\xff\xfe\"}"), 0);
	assert_string_equal(vr_json_get_string(&o, "p"), "\xff\xfe");
	/* Escaped keys. */
	assert_int_equal(parse(&o, "{\"\\u006fp\":\"x\"}"), 0);
	assert_string_equal(vr_json_get_string(&o, "op"), "x");
	vr_json_object_clear(&o);
}

static void test_nested(void **state)
{
	VrJsonObject o;
	vr_json_object_init(&o);
	assert_int_equal(parse(&o, "{\"a\":[1,{\"b\":\"}\"},[]],\"c\":3,\"d\":{}}"), 0);
	assert_int_equal(vr_json_get(&o, "a")->kind, VR_JSON_NESTED);
	assert_string_equal(vr_json_get(&o, "a")->value, "[1,{\"b\":\"}\"},[]]");
	int64_t v;
	assert_true(vr_json_get_int64(&o, "c", &v));
	assert_int_equal(v, 3);
	assert_string_equal(vr_json_get(&o, "d")->value, "{}");
	vr_json_object_clear(&o);
}

static void test_malformed(void **state)
{
	static const char *const bad[] = {
		"", " ", "[]", "1", "\"x\"", "{", "}", "{\"a\"}", "{\"a\":}", "{\"a\":1,}", "{a:1}",
		"{\"a\":01}", "{\"a\":1.}", "{\"a\":.5}", "{\"a\":-}", "{\"a\":1e}", "{\"a\":+1}",
		"{\"a\":tru}", "{\"a\":nul}", "{\"a\":True}", "{\"a\":\"\\u12\"}", "{\"a\":\"\\u12g4\"}",
		"{\"a\":\"x\\q\"}", "{\"a\":\"x\\", "{\"a\":\"x", "{\"a\":1} x", "{\"a\":1}{}",
		"{\"a\":1,\"a\":2}", "{\"a\":\"\\u0000\"}", "{\"a\":\"x\ty\"}", "{\"a\":\"x\ny\"}",
		"{\"a\":[1,]}", "{\"a\":[1 2]}", "{\"a\":{\"b\"}}", "{\"a\":{1:2}}", "{\"a\":[}",
		"{\"a\" 1}", "{,}", "{\"a\":1 \"b\":2}",
	};
	VrJsonObject o;
	vr_json_object_init(&o);
	for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
		const char *why = NULL;
		size_t n = strlen(bad[i]);
		int ret = vr_json_parse_object(&o, bad[i], n, &why, NULL);
		if (ret != -EINVAL)
			fail_msg("accepted: %s", bad[i]);
		assert_non_null(why);
		assert_int_equal(o.n_fields, 0);
	}
	/* Nesting is capped, not recursed into without bound. */
	GString *deep = g_string_new("{\"a\":");
	for (int i = 0; i < 10000; i++)
		g_string_append_c(deep, '[');
	for (int i = 0; i < 10000; i++)
		g_string_append_c(deep, ']');
	g_string_append_c(deep, '}');
	assert_int_equal(vr_json_parse_object(&o, deep->str, deep->len, NULL, NULL), -EINVAL);
	g_string_free(deep, TRUE);
	/* So is the number of fields. */
	GString *wide = g_string_new("{");
	for (int i = 0; i < VR_JSON_MAX_FIELDS + 1; i++)
		g_string_append_printf(wide, "%s\"k%d\":%d", i ? "," : "", i, i);
	g_string_append_c(wide, '}');
	assert_int_equal(vr_json_parse_object(&o, wide->str, wide->len, NULL, NULL), -EINVAL);
	g_string_free(wide, TRUE);
	/* The input is (text, len): a NUL-free prefix of a longer buffer parses. */
	assert_int_equal(vr_json_parse_object(&o, "{\"a\":1}garbage", 7, NULL, NULL), 0);
	vr_json_object_clear(&o);
}

static void test_append_string(void **state)
{
	GString *s = g_string_new(NULL);
	vr_json_append_string(s, "a\"b\\c\n\x01\x7f\xc3\xa9\xff/");
	assert_string_equal(s->str, "\"a\\\"b\\\\c\\n\\u0001\\u007f\xc3\xa9\\udcff/\"");
	/* What it writes parses back. */
	VrJsonObject o;
	vr_json_object_init(&o);
	g_string_prepend(s, "{\"k\":");
	g_string_append_c(s, '}');
	assert_int_equal(vr_json_parse_object(&o, s->str, s->len, NULL, NULL), 0);
	/* ...exactly: the byte that is not UTF-8 comes back as that byte. */
	assert_string_equal(vr_json_get_string(&o, "k"), "a\"b\\c\n\x01\x7f\xc3\xa9\xff/");
	vr_json_object_clear(&o);
	g_string_free(s, TRUE);
}

/* Random mutations of real lines: the parser must neither crash, nor read
 * out of bounds, nor return a string value with an embedded NUL. */
static void test_fuzz(void **state)
{
	static const char *const seeds[] = {
		"{\"ts\":\"2026-12-01T08:00:00Z\",\"op\":\"open\",\"path\":\"a\\u00e9\\ud83d\\ude00\",\"pid\":1}",
		"{\"a\":[1,{\"b\":[true,false,null,-1.5e+3]}],\"c\":\"\\\\\\\"\"}",
		"{\"seq\":1,\"hash\":\"00\",\"n\":0.0001}",
	};
	const char alphabet[] = "{}[]\":,\\u0123456789abcdefE+-.tfn \x80\xff\n";
	VrJsonObject o;
	vr_json_object_init(&o);
	srand(7);
	for (int iter = 0; iter < 200000; iter++) {
		const char *seed = seeds[iter % 3];
		size_t n = strlen(seed);
		char *buf = malloc(n + 8);
		memcpy(buf, seed, n);
		int muts = 1 + rand() % 4;
		for (int m = 0; m < muts; m++) {
			int kind = rand() % 3;
			size_t at = (size_t)rand() % (n ? n : 1);
			if (kind == 0 && n > 0) {
				buf[at] = alphabet[rand() % (sizeof alphabet - 1)];
			} else if (kind == 1 && n > 0) {
				memmove(buf + at, buf + at + 1, n - at - 1);
				n--;
			} else if (n < strlen(seed) + 7) {
				memmove(buf + at + 1, buf + at, n - at);
				buf[at] = alphabet[rand() % (sizeof alphabet - 1)];
				n++;
			}
		}
		char *exact = malloc(n ? n : 1);
		memcpy(exact, buf, n);
		free(buf);
		if (vr_json_parse_object(&o, exact, n, NULL, NULL) == 0) {
			for (size_t i = 0; i < o.n_fields; i++)
				if (o.fields[i].kind == VR_JSON_STRING)
					assert_int_equal(strlen(o.fields[i].value), o.fields[i].value_len);
		}
		free(exact);
	}
	vr_json_object_clear(&o);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_schema_line),
		cmocka_unit_test(test_escapes),
		cmocka_unit_test(test_nested),
		cmocka_unit_test(test_malformed),
		cmocka_unit_test(test_append_string),
		cmocka_unit_test(test_fuzz),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
