/* vr_proxy_spawn, the supervisor's entry point: the child listens before
 * the call returns, decisions arrive as datagrams on event_fd, the parent
 * stays single-threaded, the child keeps none of the parent's other fds,
 * SIGTERM ends it with status 0, a busy port is reported as -EADDRINUSE.
 * The child is vault-run-proxy (net/proxy-launch.h): its options survive
 * the trip through a GVariant, and a missing executable is -ENOENT. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "net/proxy-launch.h"
#include "net/proxy.h"

/* A listening socket on 127.0.0.1 with a kernel-chosen port. */
static int listener(guint16 *ret_port)
{
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	assert_true(fd >= 0);
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	socklen_t len = sizeof a;
	assert_int_equal(bind(fd, (struct sockaddr *)&a, sizeof a), 0);
	assert_int_equal(listen(fd, 1), 0);
	assert_int_equal(getsockname(fd, (struct sockaddr *)&a, &len), 0);
	*ret_port = ntohs(a.sin_port);
	return fd;
}

static int threads_of_self(void)
{
	FILE *f = fopen("/proc/self/status", "r");
	char line[256];
	int n = -1;
	while (f && fgets(line, sizeof line, f))
		if (sscanf(line, "Threads: %d", &n) == 1)
			break;
	if (f)
		fclose(f);
	return n;
}

static void test_busy_port(void **state)
{
	guint16 port;
	int busy = listener(&port);
	g_autoptr(VrNetAllow) allow = vr_net_allow_new();
	VrProxyOptions o;
	vr_proxy_options_init(&o);
	o.allow = allow;
	o.http_port = port;
	o.socks_port = 0;
	pid_t pid = 0;
	assert_int_equal(vr_proxy_spawn(&o, -1, &pid), -EADDRINUSE);
	assert_int_equal(waitpid(-1, NULL, WNOHANG), -1); /* the child was reaped */
	assert_int_equal(errno, ECHILD);
	close(busy);
}

static void test_spawn_decide_stop(void **state)
{
	/* Free ports: taken by the kernel, released just before the spawn. */
	guint16 http_port, socks_port;
	int a = listener(&http_port), b = listener(&socks_port);
	close(a);
	close(b);

	int ev[2], canary[2];
	assert_int_equal(socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, ev), 0);
	assert_int_equal(pipe2(canary, O_CLOEXEC), 0);

	g_autoptr(VrNetAllow) allow = vr_net_allow_new();
	g_autoptr(GError) error = NULL;
	assert_true(vr_net_allow_add(allow, "allow=only.test:443", &error));
	VrProxyOptions o;
	vr_proxy_options_init(&o);
	o.allow = allow;
	o.http_port = http_port;
	o.socks_port = socks_port;
	o.event_fd = ev[1];
	pid_t pid = 0;
	int r = vr_proxy_spawn(&o, -1, &pid);
	if (r == -EADDRINUSE)
		skip(); /* someone took the port in between */
	assert_int_equal(r, 0);
	assert_true(pid > 0);
	assert_int_equal(threads_of_self(), 1); /* no glib thread in the parent */

	/* The child closed its copy of our pipe: EOF once we close ours. */
	close(canary[1]);
	char x;
	assert_int_equal(read(canary[0], &x, 1), 0);
	close(canary[0]);

	/* Listening already: a denied CONNECT gets its 403. */
	int c = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons(http_port),
	                         .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	assert_int_equal(connect(c, (struct sockaddr *)&sa, sizeof sa), 0);
	static const char req[] = "CONNECT denied.test:443 HTTP/1.1\r\nHost: denied.test:443\r\n\r\n";
	assert_int_equal(write(c, req, strlen(req)), (ssize_t)strlen(req));
	char buf[1024] = {0};
	size_t got = 0;
	ssize_t n;
	while (got < sizeof buf - 1 && (n = read(c, buf + got, sizeof buf - 1 - got)) > 0)
		got += (size_t)n;
	close(c);
	assert_true(g_str_has_prefix(buf, "HTTP/1.1 403 "));
	assert_non_null(strstr(buf, "vault-run: connection to denied.test:443 denied"));

	/* One decision, one datagram, no newline. */
	char dg[2048] = {0};
	n = recv(ev[0], dg, sizeof dg - 1, 0);
	assert_true(n > 0);
	assert_int_not_equal(dg[n - 1], '\n');
	assert_non_null(strstr(dg, "\"op\":\"connect\""));
	assert_non_null(strstr(dg, "\"host\":\"denied.test\""));
	assert_non_null(strstr(dg, "\"port\":443"));
	assert_non_null(strstr(dg, "\"result\":\"denied\""));

	int st;
	assert_int_equal(kill(pid, SIGTERM), 0);
	assert_int_equal(waitpid(pid, &st, 0), pid);
	assert_true(WIFEXITED(st));
	assert_int_equal(WEXITSTATUS(st), 0);
	close(ev[0]);
	close(ev[1]);
}

static void test_env(void **state)
{
	VrProxyOptions o;
	vr_proxy_options_init(&o);
	g_autoptr(GPtrArray) env = g_ptr_array_new_with_free_func(g_free);
	vr_proxy_env(&o, env);
	g_ptr_array_add(env, NULL);
	char **e = (char **)env->pdata;
	assert_true(g_strv_contains((const char *const *)e, "HTTP_PROXY=http://127.0.0.1:3128"));
	assert_true(g_strv_contains((const char *const *)e, "https_proxy=http://127.0.0.1:3128"));
	assert_true(g_strv_contains((const char *const *)e, "ALL_PROXY=socks5h://127.0.0.1:1080"));
	assert_true(g_strv_contains((const char *const *)e, "no_proxy=localhost,127.0.0.1,::1"));
}

/* Every option, and NULL kept apart from empty. */
static void test_launch_round_trip(void **state)
{
	(void)state;
	g_autoptr(VrNetAllow) allow = vr_net_allow_new();
	assert_true(vr_net_allow_add(allow, "allow=api.example.com,*.example.org:443", NULL));
	assert_true(vr_net_allow_add(allow, "allow-localhost=11434/http", NULL));
	vr_net_allow_set_private(allow, TRUE);
	g_autoptr(VrNetKeys) keys = vr_net_keys_new();
	VrNetKey *k = vr_net_key_parse("OPENAI_API_KEY@api.openai.com:as=bearer,x-api-key:methods=POST", NULL);
	assert_non_null(k);
	k->sentinel = g_strdup("vr-sentinel-0123456789");
	vr_net_keys_add(keys, k);
	g_autoptr(GPtrArray) read_hosts = g_ptr_array_new_with_free_func(g_free);
	g_ptr_array_add(read_hosts, g_strdup("docs.example.com"));
	VrProxyOptions o;
	vr_proxy_options_init(&o);
	o.allow = allow;
	o.keys = keys;
	o.read_hosts = read_hosts;
	o.http_port = 4128;
	o.socks_port = 0;
	o.event_fd = 7;
	o.keys_fd = 9;
	o.run_id = "20261202T183233Z-f6bb75";
	o.ca_valid_s = 3600;
	g_autoptr(GVariant) v = g_variant_ref_sink(vr_proxy_launch_encode(&o, FALSE, (const int[]){5, -1}, 2, 12));
	g_auto(VrProxyLaunch) l = {0};
	assert_true(vr_proxy_launch_decode(v, &l, NULL));
	assert_false(l.foreground);
	assert_int_equal(l.n_listen_fds, 2);
	assert_int_equal(l.listen_fds[0], 5);
	assert_int_equal(l.listen_fds[1], -1);
	assert_int_equal(l.report_fd, 12);
	assert_string_equal(l.opts.listen_host, "127.0.0.1");
	assert_int_equal(l.opts.http_port, 4128);
	assert_int_equal(l.opts.socks_port, 0);
	assert_int_equal(l.opts.event_fd, 7);
	assert_int_equal(l.opts.audit_fd, -1);
	assert_int_equal(l.opts.keys_fd, 9);
	assert_string_equal(l.opts.run_id, o.run_id);
	assert_int_equal(l.opts.ca_valid_s, 3600);
	assert_true(vr_net_allow_get_private(l.opts.allow));
	assert_string_equal(vr_net_allow_match(l.opts.allow, "x.example.org", 443), "*.example.org:443");
	assert_null(vr_net_allow_match(l.opts.allow, "x.example.org", 80));
	assert_int_equal(vr_net_allow_bridge_count(l.opts.allow), 1);
	assert_int_equal(vr_net_keys_count(l.opts.keys), 1);
	const VrNetKey *got = vr_net_keys_get(l.opts.keys, 0);
	assert_string_equal(got->name, "OPENAI_API_KEY");
	assert_string_equal(got->spec, k->spec);
	assert_string_equal(got->hosts->pdata[0], "api.openai.com");
	assert_int_equal(got->places, k->places);
	assert_int_equal(got->methods->len, 1);
	assert_null(got->paths);
	assert_string_equal(got->sentinel, "vr-sentinel-0123456789");
	assert_null(got->value);
	assert_int_equal(l.opts.read_hosts->len, 1);

	/* No keys, no read hosts: still none after the trip. */
	o.keys = NULL;
	o.read_hosts = NULL;
	o.listen_host = NULL;
	g_autoptr(GVariant) v2 = g_variant_ref_sink(vr_proxy_launch_encode(&o, TRUE, NULL, 0, -1));
	g_auto(VrProxyLaunch) l2 = {0};
	assert_true(vr_proxy_launch_decode(v2, &l2, NULL));
	assert_true(l2.foreground);
	assert_null(l2.opts.keys);
	assert_null(l2.opts.read_hosts);
	assert_null(l2.opts.listen_host);
}

static void test_missing_executable(void **state)
{
	(void)state;
	g_autoptr(VrNetAllow) allow = vr_net_allow_new();
	VrProxyOptions o;
	vr_proxy_options_init(&o);
	o.allow = allow;
	vr_proxy_launch_set_executable("/nonexistent/vault-run-proxy");
	pid_t pid = -1;
	assert_int_equal(vr_proxy_spawn(&o, -1, &pid), -ENOENT);
	assert_int_equal(pid, -1);
	vr_proxy_launch_set_executable(VR_PROXY_EXE);
}

int main(void)
{
	signal(SIGPIPE, SIG_IGN);
	/* The build's vault-run-proxy: this test runs from tests/unit/. */
	vr_proxy_launch_set_executable(VR_PROXY_EXE);
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_busy_port),
		cmocka_unit_test(test_spawn_decide_stop),
		cmocka_unit_test(test_env),
		cmocka_unit_test(test_launch_round_trip),
		cmocka_unit_test(test_missing_executable),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
