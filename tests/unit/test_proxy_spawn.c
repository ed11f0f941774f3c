/* vr_proxy_spawn, the supervisor's entry point: the child listens before
 * the call returns, decisions arrive as datagrams on event_fd, the parent
 * stays single-threaded, the child keeps none of the parent's other fds,
 * SIGTERM ends it with status 0, a busy port is reported as -EADDRINUSE. */
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

int main(void)
{
	signal(SIGPIPE, SIG_IGN);
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_busy_port),
		cmocka_unit_test(test_spawn_decide_stop),
		cmocka_unit_test(test_env),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
