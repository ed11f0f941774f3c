/* The network proxy of `--net allow=…`: an HTTP proxy (absolute-URI requests
 * forwarded, CONNECT tunnels) and a SOCKS5 proxy (no auth, CONNECT, domain /
 * IPv4 / IPv6), deny by default, every decision audited as op "connect".
 *
 * How the supervisor uses it (it stays single-threaded: the proxy is a child
 * that execs vault-run-proxy, and all GIO work happens there only):
 *
 *   g_autoptr(VrNetAllow) allow = vr_net_allow_new();
 *   vr_net_allow_add(allow, cfg->net, &error);        // "allow=a.com,*.b.org:443"
 *   VrProxyOptions o;
 *   vr_proxy_options_init(&o);                        // 127.0.0.1:3128 + :1080
 *   o.allow = allow; o.event_fd = audit_sock; o.ready_fd = -1;
 *   int netns = open("/proc/<sandbox pid>/ns/net", O_RDONLY|O_CLOEXEC);
 *   pid_t proxy;
 *   r = vr_proxy_spawn(&o, netns, &proxy);            // returns once listening
 *   …let the sandbox exec the agent, with vr_proxy_env() in its environment…
 *   kill(proxy, SIGTERM); waitpid(proxy, …);          // at the end of the run
 *
 * vr_proxy_spawn forks and execs vault-run-proxy (GnuTLS is loaded there
 * only). In the child, a short-lived grandchild enters netns_fd,
 * brings `lo` up, creates the listening sockets there (HTTP and SOCKS on
 * 127.0.0.1, each allow-localhost port of opts->allow on 127.0.0.1 and ::1) and
 * passes them back over a socketpair, then exits; so the listeners live in the
 * sandbox's netns while the proxy itself (outbound connects and DNS) stays in
 * the supervisor's netns. This needs CAP_SYS_ADMIN over the netns's owning
 * user namespace (the supervisor is root of it), but never a setns back into
 * the host netns, which an unprivileged supervisor could not do. The child
 * sets PR_SET_PDEATHSIG(SIGKILL), ignores SIGINT/SIGHUP (the supervisor
 * forwards what matters), and exits 0 on SIGTERM. vr_proxy_spawn returns
 * 0 with *ret_pid after the child reported it is listening, or -errno (the
 * child is reaped) — e.g. -EADDRINUSE.
 *
 * Audit: one JSON object per decision, when the connection ends (at once for
 * a denial):
 *   {"ts":"2026-…Z","op":"connect","proto":"http"|"connect"|"socks5",
 *    "host":"api.example.com","port":443,"result":"ok"|"denied"|"failed",
 *    "rule":"*.example.com"|null,"reason":"…"|null,"address":"93.184.216.34"|null,
 *    "bytes_up":N,"bytes_down":N,"duration_ms":N}
 * (proto also "localhost" for an allow-localhost port of the tcp form, and
 * "localhost-http", one event per request, with "method", "path", "status")
 * sent as ONE datagram (no newline) on event_fd (a SOCK_DGRAM/SOCK_SEQPACKET
 * unix socket), and/or written as one line to audit_fd. "failed" means
 * allowed but unreachable (DNS failure, refused, timeout). */
#pragma once
#include <glib.h>
#include <sys/types.h>

#include "net/allow.h"
#include "net/keys.h"

#define VR_PROXY_DEFAULT_HTTP_PORT 3128
#define VR_PROXY_DEFAULT_SOCKS_PORT 1080

typedef struct {
	const VrNetAllow *allow; /* required; its allow-private flag applies */
	const char *listen_host; /* IP literal; NULL: 127.0.0.1 */
	guint16 http_port;       /* 0: any free port (foreground debugging) */
	guint16 socks_port;
	int event_fd; /* audit datagrams, or -1 */
	int audit_fd; /* audit JSON lines, or -1 */
	int ready_fd; /* vr_proxy_spawn: unused; vr_proxy_run: a line "http=H:P socks=H:P\n" is written here, or -1 */
	/* TLS termination (docs/network.md "Keys"; vr_proxy_spawn only): */
	const VrNetKeys *keys;     /* --key: names, hosts, sentinels; NULL: none */
	int keys_fd;               /* their real values (vr_net_keys_write_values), read at the start; -1 */
	GPtrArray *read_hosts;     /* --net read= hosts (char *, lower case); NULL: none */
	const char *run_id;        /* names the run's CA */
	gint64 ca_valid_s;         /* its validity; 0: VR_NET_CA_VALID_S */
} VrProxyOptions;

/* Defaults: 127.0.0.1, ports 3128/1080, no audit, no ready fd. */
void vr_proxy_options_init(VrProxyOptions *opts);

/* Start the proxy as a child process (see above): a fork that execs
 * vault-run-proxy (net/proxy-launch.h). netns_fd < 0: listen in the
 * current netns. The fds in opts stay open in the parent. A proxy
 * executable that cannot be found: -ENOENT, after saying where it looked. */
int vr_proxy_spawn(const VrProxyOptions *opts, int netns_fd, pid_t *ret_pid);

/* Whether the proxy terminates TLS (keys, or read hosts: an empty key list
 * counts), and so makes the run's CA. */
gboolean vr_proxy_terminates_tls(const VrProxyOptions *opts);

/* What vr_proxy_spawn_tls returns. */
typedef struct {
	pid_t pid;
	int report_fd; /* the rest of the proxy's report, for vr_proxy_await_start */
} VrProxyStart;

/* The same, in two steps: vr_proxy_spawn_tls returns once the listeners
 * exist (a client's connect then waits in their backlog), and the proxy
 * execs and starts meanwhile; vr_proxy_await_start reads how its start
 * went (vr_startup_wait report_fd first) and closes the fd: 0, -EPROTO
 * after the proxy said why (a CA that cannot be made, no trust store),
 * -ECHILD when it died. With keys or read hosts, *ret_ca_pem (g_free) is
 * then the run CA's certificate (PEM) and *ret_ca_hash its OpenSSL subject
 * hash (the name of its <hash>.0 link in a CApath directory); else NULL. */
int vr_proxy_spawn_tls(const VrProxyOptions *opts, int netns_fd, VrProxyStart *ret);
int vr_proxy_await_start(const VrProxyOptions *opts, int report_fd, char **ret_ca_pem, guint32 *ret_ca_hash);

/* Whether vault-run-proxy can be found (net/proxy-launch.h): 0, or -ENOENT
 * after one line that says where it was looked for. */
int vr_proxy_check_executable(void);

/* Run the proxy in this process until SIGTERM/SIGINT (`vault-run proxy`):
 * execs vault-run-proxy in place, so it returns only on failure, -errno
 * (said). */
int vr_proxy_run(const VrProxyOptions *opts, int netns_fd);

/* Appends the sandbox's proxy variables ("KEY=VALUE", g_free-able strings) to
 * env: HTTP_PROXY, HTTPS_PROXY, ALL_PROXY (socks5h://…) in both cases, and
 * NO_PROXY=localhost,127.0.0.1,::1 in both cases. */
void vr_proxy_env(const VrProxyOptions *opts, GPtrArray *env);
