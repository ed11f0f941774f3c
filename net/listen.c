/* The proxy's listening sockets, made before vault-run-proxy is exec'd
 * (net/listen.h). */
#include "net/listen.h"

#include <arpa/inet.h>
#include <errno.h>
#include <net/if.h>
#include <netinet/in.h>
#include <sched.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/cleanup.h"
#include "common/log.h"
#include "common/proc.h"

/* The sockets to listen on: HTTP and SOCKS on listen_host, then each
 * bridge's port on 127.0.0.1 and ::1 (a client of "localhost" may try
 * either). */
GArray *vr_proxy_listen_specs(const VrProxyOptions *opts)
{
	GArray *specs = g_array_new(FALSE, TRUE, sizeof(VrListenSpec));
	const char *host = opts->listen_host ? opts->listen_host : "127.0.0.1";
	VrListenSpec http = {VR_LISTEN_HTTP, NULL, host, opts->http_port, FALSE};
	VrListenSpec socks = {VR_LISTEN_SOCKS, NULL, host, opts->socks_port, FALSE};
	g_array_append_val(specs, http);
	g_array_append_val(specs, socks);
	for (guint i = 0; i < vr_net_allow_bridge_count(opts->allow); i++) {
		const VrNetBridge *b = vr_net_allow_bridge(opts->allow, i);
		VrListenSpec v4 = {VR_LISTEN_BRIDGE, b, "127.0.0.1", b->port, FALSE};
		VrListenSpec v6 = {VR_LISTEN_BRIDGE, b, "::1", b->port, TRUE};
		g_array_append_val(specs, v4);
		g_array_append_val(specs, v6);
	}
	return specs;
}

static int listen_on(const char *host, guint16 port, int *ret_fd)
{
	union {
		struct sockaddr sa;
		struct sockaddr_in in4;
		struct sockaddr_in6 in6;
	} a = {0};
	socklen_t len;
	if (inet_pton(AF_INET, host, &a.in4.sin_addr) == 1) {
		a.in4.sin_family = AF_INET;
		a.in4.sin_port = htons(port);
		len = sizeof a.in4;
	} else if (inet_pton(AF_INET6, host, &a.in6.sin6_addr) == 1) {
		a.in6.sin6_family = AF_INET6;
		a.in6.sin6_port = htons(port);
		len = sizeof a.in6;
	} else {
		return -EINVAL;
	}
	vr_cleanup_fd int fd = socket(a.sa.sa_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	int one = 1;
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
	if (a.sa.sa_family == AF_INET6)
		setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof one);
	if (bind(fd, &a.sa, len) < 0 || listen(fd, 512) < 0)
		return -errno;
	*ret_fd = vr_steal_fd(&fd);
	return 0;
}

static void close_fds(int *fds, guint n)
{
	for (guint i = 0; i < n; i++)
		if (fds[i] >= 0)
			close(fds[i]);
}

/* One socket per spec, in this netns; an optional one that cannot be made
 * is -1. */
static int listen_all(const GArray *specs, int *fds)
{
	for (guint i = 0; i < specs->len; i++)
		fds[i] = -1;
	for (guint i = 0; i < specs->len; i++) {
		const VrListenSpec *sp = &g_array_index(specs, VrListenSpec, i);
		int r = listen_on(sp->host, sp->port, &fds[i]);
		if (r < 0 && !sp->optional) {
			close_fds(fds, i);
			return r;
		}
	}
	return 0;
}

/* A fresh network namespace has `lo` down, and 127.0.0.1 cannot be bound
 * until it is up. Best effort: bind reports the real problem. */
static void loopback_up(void)
{
	vr_cleanup_fd int s = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (s < 0)
		return;
	struct ifreq ifr = {0};
	strcpy(ifr.ifr_name, "lo");
	if (ioctl(s, SIOCGIFFLAGS, &ifr) == 0 && !(ifr.ifr_flags & IFF_UP)) {
		ifr.ifr_flags |= IFF_UP;
		ioctl(s, SIOCSIFFLAGS, &ifr);
	}
}

typedef struct {
	int r;
	guint8 present[VR_PROXY_MAX_LISTENERS]; /* which specs have a socket in the message */
} ListenReport;

/* The listeners are made by a short-lived child that enters the target
 * netns, so this process never has to setns back (which needs privileges
 * over the host netns that an unprivileged supervisor lacks). */
static int listen_in_netns(int netns_fd, const GArray *specs, int *fds)
{
	if (specs->len > VR_PROXY_MAX_LISTENERS)
		return -E2BIG;
	vr_cleanup_pair int sp[2] = {-1, -1};
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sp) < 0)
		return -errno;
	/* A helper like the others (common/proc.c), though it lives only
	 * until its one message: it dies with the proxy that waits for it. */
	pid_t pid = vr_fork_helper(SIGKILL, 1);
	if (pid < 0)
		return -errno;
	if (pid == 0) {
		ListenReport rep = {0};
		int lfds[VR_PROXY_MAX_LISTENERS], sent[VR_PROXY_MAX_LISTENERS], n = 0;
		close(sp[0]);
		if (setns(netns_fd, CLONE_NEWNET) < 0)
			rep.r = -errno;
		if (rep.r == 0) {
			loopback_up();
			rep.r = listen_all(specs, lfds);
		}
		for (guint i = 0; rep.r == 0 && i < specs->len; i++)
			if (lfds[i] >= 0) {
				rep.present[i] = 1;
				sent[n++] = lfds[i];
			}
		char cbuf[CMSG_SPACE(sizeof sent)] = {0};
		struct iovec iov = {.iov_base = &rep, .iov_len = sizeof rep};
		struct msghdr msg = {.msg_iov = &iov, .msg_iovlen = 1};
		if (n) {
			msg.msg_control = cbuf;
			msg.msg_controllen = CMSG_SPACE(sizeof(int) * (size_t)n);
			struct cmsghdr *cm = CMSG_FIRSTHDR(&msg);
			cm->cmsg_level = SOL_SOCKET;
			cm->cmsg_type = SCM_RIGHTS;
			cm->cmsg_len = CMSG_LEN(sizeof(int) * (size_t)n);
			memcpy(CMSG_DATA(cm), sent, sizeof(int) * (size_t)n);
		}
		_exit(sendmsg(sp[1], &msg, MSG_NOSIGNAL) < 0 ? 1 : 0);
	}
	vr_clear_fd(&sp[1]);
	ListenReport rep = {.r = -EIO};
	char cbuf[CMSG_SPACE(sizeof(int) * VR_PROXY_MAX_LISTENERS)] = {0};
	struct iovec iov = {.iov_base = &rep, .iov_len = sizeof rep};
	struct msghdr msg = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = cbuf, .msg_controllen = sizeof cbuf};
	ssize_t got;
	while ((got = recvmsg(sp[0], &msg, MSG_CMSG_CLOEXEC)) < 0 && errno == EINTR)
		;
	vr_clear_fd(&sp[0]);
	while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
		;
	if (got != (ssize_t)sizeof rep)
		return -EIO;
	if (rep.r < 0)
		return rep.r;
	guint n = 0;
	for (guint i = 0; i < specs->len; i++)
		n += rep.present[i] != 0;
	struct cmsghdr *cm = CMSG_FIRSTHDR(&msg);
	if (!cm || cm->cmsg_type != SCM_RIGHTS || cm->cmsg_len != CMSG_LEN(sizeof(int) * n))
		return -EIO;
	const int *in = (const int *)CMSG_DATA(cm);
	for (guint i = 0, k = 0; i < specs->len; i++)
		fds[i] = rep.present[i] ? in[k++] : -1;
	return 0;
}

int vr_proxy_listen(const VrProxyOptions *opts, int netns_fd, const GArray *specs, int *fds)
{
	if (specs->len > VR_PROXY_MAX_LISTENERS)
		return -E2BIG;
	/* A bridge listens on the very 127.0.0.1:PORT it connects to: only in
	 * another netns is that not a loop onto itself. */
	if (netns_fd < 0 && vr_net_allow_bridge_count(opts->allow) > 0)
		return -EXDEV;
	return netns_fd >= 0 ? listen_in_netns(netns_fd, specs, fds) : listen_all(specs, fds);
}

void vr_proxy_log_listen_error(const VrProxyOptions *opts, int r)
{
	if (r == -EXDEV)
		vr_error("proxy: allow-localhost needs the listeners in another network namespace (--netns)");
	else
		vr_log_errno(-r, "proxy: cannot listen on %s ports %u/%u%s",
		             opts->listen_host ? opts->listen_host : "127.0.0.1", opts->http_port, opts->socks_port,
		             vr_net_allow_bridge_count(opts->allow) ? " and the allow-localhost ports" : "");
}
