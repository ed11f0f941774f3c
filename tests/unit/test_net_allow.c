/* The network allow-list: pattern parsing, matching, address classes. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <string.h>

#include "net/allow.h"

static VrNetAllow *allow_of(const char *spec)
{
	VrNetAllow *allow = vr_net_allow_new();
	g_autoptr(GError) error = NULL;
	gboolean ok = vr_net_allow_add(allow, spec, &error);
	if (!ok)
		fail_msg("%s: %s", spec, error->message);
	return allow;
}

static void test_exact_and_port(void **state)
{
	g_autoptr(VrNetAllow) a = allow_of("allow=api.example.com,registry.test:443");
	assert_int_equal(vr_net_allow_count(a), 2);
	assert_string_equal(vr_net_allow_match(a, "api.example.com", 443), "api.example.com");
	assert_non_null(vr_net_allow_match(a, "api.example.com", 22)); /* bare: any port */
	assert_non_null(vr_net_allow_match(a, "API.Example.COM.", 80)); /* case, trailing dot */
	assert_null(vr_net_allow_match(a, "example.com", 443));
	assert_null(vr_net_allow_match(a, "xapi.example.com", 443));
	assert_null(vr_net_allow_match(a, "api.example.com.evil.test", 443));
	assert_string_equal(vr_net_allow_match(a, "registry.test", 443), "registry.test:443");
	assert_null(vr_net_allow_match(a, "registry.test", 80));
	assert_null(vr_net_allow_match(a, "", 80));
	assert_null(vr_net_allow_match(a, NULL, 80));
}

static void test_wildcard(void **state)
{
	g_autoptr(VrNetAllow) a = allow_of("*.example.com:443");
	assert_non_null(vr_net_allow_match(a, "a.example.com", 443));
	assert_non_null(vr_net_allow_match(a, "a.b.example.com", 443));
	assert_null(vr_net_allow_match(a, "example.com", 443)); /* apex not included */
	assert_null(vr_net_allow_match(a, "aexample.com", 443));
	assert_null(vr_net_allow_match(a, "a.example.com", 80));
	assert_null(vr_net_allow_match(a, "a.example.com.test", 443));

	g_autoptr(VrNetAllow) any = allow_of("*");
	assert_non_null(vr_net_allow_match(any, "whatever.test", 1));
	assert_non_null(vr_net_allow_match(any, "10.0.0.1", 1));
}

static void test_empty_denies(void **state)
{
	g_autoptr(VrNetAllow) a = allow_of("allow=");
	assert_int_equal(vr_net_allow_count(a), 0);
	assert_null(vr_net_allow_match(a, "example.com", 443));
	assert_false(vr_net_allow_get_private(a));
	g_autoptr(GError) error = NULL;
	assert_true(vr_net_allow_add(a, "allow-private", &error));
	assert_true(vr_net_allow_get_private(a));
}

static void test_ip_literals(void **state)
{
	g_autoptr(VrNetAllow) a = allow_of("198.51.100.7, [2001:db8::1]:443 ,2001:db8::2");
	assert_int_equal(vr_net_allow_count(a), 3);
	assert_non_null(vr_net_allow_match(a, "198.51.100.7", 8080));
	assert_null(vr_net_allow_match(a, "198.51.100.8", 8080));
	assert_non_null(vr_net_allow_match(a, "2001:db8::1", 443));
	assert_non_null(vr_net_allow_match(a, "2001:DB8:0::1", 443)); /* compared as addresses */
	assert_null(vr_net_allow_match(a, "2001:db8::1", 80));
	assert_non_null(vr_net_allow_match(a, "2001:db8::2", 80));
	/* A name is never matched by an address pattern, nor the reverse. */
	g_autoptr(VrNetAllow) b = allow_of("localhost");
	assert_null(vr_net_allow_match(b, "127.0.0.1", 80));
}

static void expect_bad(const char *spec, const char *needle)
{
	g_autoptr(VrNetAllow) a = vr_net_allow_new();
	g_autoptr(GError) error = NULL;
	if (vr_net_allow_add(a, spec, &error))
		fail_msg("'%s' was accepted", spec);
	assert_true(g_error_matches(error, VR_NET_ERROR, VR_NET_ERROR_PATTERN));
	if (!strstr(error->message, needle))
		fail_msg("'%s': message '%s' lacks '%s'", spec, error->message, needle);
	assert_int_equal(vr_net_allow_count(a), 0); /* all or nothing */
}

static void test_bad_patterns(void **state)
{
	expect_bad("allow=ok.test,example.com:0", "1 to 65535");
	expect_bad("example.com:65536", "1 to 65535");
	expect_bad("example.com:", "1 to 65535");
	expect_bad("example.com:http", "1 to 65535");
	expect_bad("example.com:-1", "1 to 65535");
	expect_bad("a..b", "not a valid host name");
	expect_bad("exa mple.com", "not a valid host name");
	expect_bad("ex*ample.com", "'*' is only allowed");
	expect_bad("*.*.example.com", "*.NAME");
	expect_bad("a.*.com", "'*' is only allowed");
	expect_bad("[::1", "missing ']'");
	expect_bad("[::1]x", "':PORT'");
	expect_bad("[example.com]:443", "IPv6");
	expect_bad(":443", "no host");
	expect_bad("a,,b", "empty pattern");
	g_autofree char *longlabel = g_strnfill(64, 'a');
	expect_bad(longlabel, "not a valid host name");
}

static void test_host_valid(void **state)
{
	assert_true(vr_net_host_is_valid("example.com"));
	assert_true(vr_net_host_is_valid("example.com."));
	assert_true(vr_net_host_is_valid("::1"));
	assert_true(vr_net_host_is_valid("10.1.2.3"));
	assert_false(vr_net_host_is_valid(""));
	assert_false(vr_net_host_is_valid("a b"));
	assert_false(vr_net_host_is_valid("a\nb"));
	assert_false(vr_net_host_is_valid("evil.test/x"));
	assert_false(vr_net_host_is_valid("a..b"));
}

static const char *cls(const char *text)
{
	VrIpAddr addr;
	if (!vr_ip_addr_parse(text, &addr))
		fail_msg("bad address %s", text);
	return vr_net_addr_forbidden(&addr);
}

#define assert_class(addr, want) assert_string_equal(cls(addr), want)

static void test_addr_classes(void **state)
{
	assert_null(cls("93.184.216.34"));
	assert_null(cls("198.51.100.1")); /* documentation ranges are not refused */
	assert_null(cls("172.32.0.1"));
	assert_null(cls("100.128.0.1"));
	assert_null(cls("2606:2800:220:1::1"));
	assert_class("127.0.0.1", "loopback");
	assert_class("127.255.255.254", "loopback");
	assert_class("0.0.0.0", "unspecified");
	assert_class("0.1.2.3", "unspecified");
	assert_class("10.0.0.1", "private");
	assert_class("172.16.0.1", "private");
	assert_class("172.31.255.255", "private");
	assert_class("192.168.1.1", "private");
	assert_class("169.254.169.254", "link-local");
	assert_class("100.64.0.1", "cgnat");
	assert_class("100.100.100.200", "cgnat");
	assert_class("224.0.0.1", "multicast");
	assert_class("255.255.255.255", "reserved");
	assert_class("::", "unspecified");
	assert_class("::1", "loopback");
	assert_class("fe80::1", "link-local");
	assert_class("fc00::1", "private");
	assert_class("fd00:ec2::254", "private");
	assert_class("fec0::1", "private");
	assert_class("ff02::1", "multicast");
	/* IPv4 inside IPv6: judged by the IPv4 address it reaches. */
	assert_class("::ffff:127.0.0.1", "loopback");
	assert_class("::ffff:169.254.169.254", "link-local");
	assert_class("::ffff:10.1.1.1", "private");
	assert_null(cls("::ffff:93.184.216.34"));
	assert_class("64:ff9b::10.0.0.1", "private");
	assert_null(cls("64:ff9b::93.184.216.34"));
	assert_class("2002:7f00:1::1", "loopback");
	assert_class("::127.0.0.1", "reserved");
}

static void test_localhost_bridges(void **state)
{
	/* A known model-server port gets the HTTP filter, another the whole
	 * port; /http and /tcp say which; the same port twice is one bridge. */
	g_autoptr(VrNetAllow) a = allow_of("allow-localhost=11434, 9999,8080/tcp,7000/http,11434");
	assert_int_equal(vr_net_allow_bridge_count(a), 4);
	assert_int_equal(vr_net_allow_count(a), 0);
	const VrNetBridge *b = vr_net_allow_bridge(a, 0);
	assert_int_equal(b->port, 11434);
	assert_int_equal(b->kind, VR_BRIDGE_HTTP);
	assert_string_equal(b->rule, "allow-localhost=11434/http");
	assert_int_equal(vr_net_allow_bridge(a, 1)->kind, VR_BRIDGE_TCP);
	assert_string_equal(vr_net_allow_bridge(a, 2)->rule, "allow-localhost=8080/tcp");
	assert_int_equal(vr_net_allow_bridge(a, 3)->kind, VR_BRIDGE_HTTP);
	for (const guint16 *p = vr_net_model_server_ports; *p; p++)
		assert_true(vr_net_is_model_server_port(*p));
	assert_false(vr_net_is_model_server_port(3000));

	/* One value, ';'-joined, with domains and allow-private. */
	g_autoptr(VrNetAllow) c = allow_of("allow=api.x.com ; allow-localhost=1234;allow-private;");
	assert_int_equal(vr_net_allow_count(c), 1);
	assert_int_equal(vr_net_allow_bridge_count(c), 1);
	assert_int_equal(vr_net_allow_bridge(c, 0)->kind, VR_BRIDGE_HTTP); /* LM Studio */
	assert_true(vr_net_allow_get_private(c));
	assert_non_null(vr_net_allow_match(c, "api.x.com", 443));
}

static void expect_bad_bridge(const char *spec, const char *needle)
{
	g_autoptr(VrNetAllow) a = allow_of("allow-localhost=5555");
	g_autoptr(GError) error = NULL;
	if (vr_net_allow_add(a, spec, &error))
		fail_msg("'%s' was accepted", spec);
	if (!strstr(error->message, needle))
		fail_msg("'%s': message '%s' lacks '%s'", spec, error->message, needle);
	assert_int_equal(vr_net_allow_bridge_count(a), 1); /* all or nothing */
}

static void test_bad_bridges(void **state)
{
	expect_bad_bridge("allow-localhost=0", "1 to 65535");
	expect_bad_bridge("allow-localhost=70000", "1 to 65535");
	expect_bad_bridge("allow-localhost=", "1 to 65535");
	expect_bad_bridge("allow-localhost=6000,x", "1 to 65535");
	expect_bad_bridge("allow-localhost=3128", "proxy's own");
	expect_bad_bridge("allow-localhost=1080/tcp", "proxy's own");
	expect_bad_bridge("allow-localhost=11434/udp", "http or tcp");
	expect_bad_bridge("allow-localhost=5555/http", "both as /http and as /tcp");
	expect_bad_bridge("allow-localhost=6000/tcp,6000/http", "both as /http and as /tcp");
	GString *many = g_string_new("allow-localhost=");
	for (int i = 0; i < VR_NET_MAX_BRIDGES; i++)
		g_string_append_printf(many, "%s%d", i ? "," : "", 20000 + i);
	expect_bad_bridge(many->str, "too many");
	g_string_free(many, TRUE);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_exact_and_port), cmocka_unit_test(test_wildcard),
		cmocka_unit_test(test_empty_denies),   cmocka_unit_test(test_ip_literals),
		cmocka_unit_test(test_bad_patterns),   cmocka_unit_test(test_host_valid),
		cmocka_unit_test(test_addr_classes),   cmocka_unit_test(test_localhost_bridges),
		cmocka_unit_test(test_bad_bridges),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
