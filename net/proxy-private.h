/* Inside the proxy: what net/proxy.c (server, decisions, relay, audit) shares
 * with the protocol front ends net/http.c and net/socks.c.
 *
 * Threading: the main thread accepts; a pool of threads runs each new
 * client's handshake (parse, decide, resolve, connect: short and blocking,
 * so written as plain sequential code) with socket timeouts; the long-lived
 * byte relay then moves to the main loop as async GIO operations, so an idle
 * tunnel holds no thread. */
#pragma once
#include <gio/gio.h>

#include "net/inject.h"
#include "net/proxy.h"

typedef struct VrProxyTls VrProxyTls;

typedef struct VrProxy {
	const VrProxyOptions *opts;
	GResolver *resolver;
	GMutex audit_lock;       /* serialises writes to opts->audit_fd */
	GHashTable *relays;      /* active relays, touched only in the main thread */
	GPtrArray *listeners;    /* marker objects of the listening sockets (net/proxy.c) */
	const GArray *specs;     /* what each listening socket serves (net/proxy.c); lives to the exit */
	GSocketService *service; /* accepts in the main thread */
	GThreadPool *pool;       /* runs the handshakes */
	int handshakes;          /* queued or running; main thread only */
	gboolean serving;        /* main thread only */
	VrProxyTls *tls;         /* TLS termination for keys and read= hosts (net/tls.c); NULL: none */
} VrProxy;

typedef enum {
	PROXY_OK,
	PROXY_DENIED,      /* refused by the policy: 403 / SOCKS 0x02 */
	PROXY_NO_HOST,     /* name did not resolve: 404 / SOCKS 0x04 */
	PROXY_REFUSED,     /* upstream refused: 502 / SOCKS 0x05 */
	PROXY_UNREACHABLE, /* timeout, no route…: 504 / SOCKS 0x04 */
} ProxyStatus;

/* One client request, from its decision to the audit event. */
typedef struct {
	VrProxy *proxy;
	const char *proto; /* "http", "connect", "socks5" */
	char *host;
	guint16 port;
	const char *rule; /* the matching pattern (owned by the allow-list) */
	char *reason;     /* why denied / failed, for the audit event and the client */
	char *address;    /* the address actually connected to */
	const char *result;
	gint64 start_us; /* monotonic */
	GDateTime *start;
	guint64 bytes_up, bytes_down;
	char *method, *path; /* a request on a model-server bridge (proto "localhost-http") */
	int status;          /* … and its response's status, 0 when none */
	char *keys;          /* a terminated request: the keys put in ("OPENAI_API_KEY") */
} ProxyConn;

ProxyConn *proxy_conn_new(VrProxy *proxy, const char *proto);

/* Decides on c->host:c->port and connects to a checked address. NULL (with
 * *ret_status, c->result and c->reason set) when denied or unreachable. */
GSocketConnection *proxy_open(ProxyConn *c, ProxyStatus *ret_status);

/* Emits the audit event and frees c. For requests that never reach relay. */
void proxy_conn_finish(ProxyConn *c);

/* A refusal, in its order: C's audit event first (with RESULT and REASON,
 * which it takes, when not NULL), then the client hears MSG. A client that
 * ends the run on its 403 must find the event in the log: the supervisor
 * stops the proxy as soon as the sandbox is gone. Takes c. */
void proxy_refuse(ProxyConn *c, const char *result, char *reason, GSocketConnection *client, const void *msg,
                  gsize len);

/* Hands both sides to the main loop, which copies bytes both ways until both
 * directions have ended, then closes everything and calls proxy_conn_finish.
 * client_in may be a buffered stream holding bytes already read. Takes
 * ownership of c and references to the rest. */
void proxy_relay(ProxyConn *c, GSocketConnection *client, GInputStream *client_in,
                 GSocketConnection *upstream);

/* A plain-HTTP request's relay when keys are bound: every byte the client
 * sends after the head goes through scan (net/inject.h's
 * vr_inject_plain_scan; taken), which holds back only what could begin a
 * value; a value or a sentinel found ends the connection, the chunk that
 * completes it unsent, c denied with the tripwire's reason (a 403 when the
 * client has had nothing of the response yet). body_len: the request's
 * Content-Length (0: none, or chunked), where what the scan holds back is
 * let go, so a body that ends in what could begin a value is not kept from
 * the origin waiting for it. */
void proxy_relay_plain(ProxyConn *c, GSocketConnection *client, GInputStream *client_in,
                       GSocketConnection *upstream, VrScrub *scan, guint64 body_len);

/* A model-server bridge of the http form: the client's requests go through
 * a VrHttpGate, one audit event per request. Takes references. */
void proxy_relay_gated(VrProxy *proxy, const VrNetBridge *bridge, const char *address, GSocketConnection *client,
                       GSocketConnection *upstream);

/* A terminated tunnel (net/tls.c): both sides TLS, the client's requests
 * through gate (an inject gate: net/inject.h), one audit event per request
 * (proto "https") and the tunnel's own at its end. Takes c, gate and site,
 * and references to the rest. */
void proxy_relay_terminated(ProxyConn *c, GIOStream *client, GSocketConnection *client_sock, GIOStream *upstream,
                            GSocketConnection *upstream_sock, VrHttpGate *gate, VrInjectSite *site);

/* ---- net/tls.c ---- */
/* In the proxy, before it confines itself: reads the keys' values from
 * opts->keys_fd and makes the run's CA (*ret_ca_pem: its certificate). */
VrProxyTls *proxy_tls_new(const VrProxyOptions *opts, char **ret_ca_pem, GError **error);
/* Then, before the proxy reports its start: GIO's TLS backend and the
 * system trust store for the upstream side (145 certificates parsed:
 * ~10 ms, which the sandbox's root build overlaps). */
gboolean proxy_tls_load_trust(VrProxyTls *tls, GError **error);
VrInject *proxy_tls_inject(VrProxyTls *tls);
/* Whether a tunnel to c's host and port is terminated. */
gboolean proxy_tls_terminates(const VrProxy *proxy, const ProxyConn *c);
/* TLS to the origin, verified against the system store (never the run CA),
 * ALPN http/1.1. NULL with c->result/c->reason set (a 502 for the client). */
GIOStream *proxy_tls_upstream(ProxyConn *c, GSocketConnection *up);
/* The client's side: TLS with a leaf for c->host, then the relay. Takes c. */
void proxy_tls_serve(ProxyConn *c, GSocketConnection *client, GInputStream *client_in, GSocketConnection *up,
                     GIOStream *up_tls);
/* The plain tunnel, or the terminated one (after the front end's reply). */
void proxy_tunnel(ProxyConn *c, GSocketConnection *client, GInputStream *client_in, GSocketConnection *up,
                  GIOStream *up_tls);
/* Test builds only (VR_TEST_HOOKS), else NULL / c->port: the addresses
 * VR_TEST_RESOLVE gives a name, the port VR_TEST_UPSTREAM_PORT puts in
 * place of a terminated tunnel's 443. */
GList *proxy_tls_test_resolve(const VrProxyTls *tls, const char *host);
guint16 proxy_tls_upstream_port(const ProxyConn *c);

/* At the end: the audit events of the connections still open. */
void proxy_relays_stop(VrProxy *proxy);

/* A complete response of the proxy's own (text/plain, Connection: close). */
char *proxy_http_message(int code, const char *status, const char *body);

/* Protocol front ends, run in a worker thread for one accepted client. */
void proxy_http_handle(VrProxy *proxy, GSocketConnection *client);
void proxy_socks_handle(VrProxy *proxy, GSocketConnection *client);
/* net/bridge.c: connects to the host's loopback port, then relays. */
void proxy_bridge_handle(VrProxy *proxy, GSocketConnection *client, const VrNetBridge *bridge);

/* Connect timeout for upstream connections. */
#define PROXY_CONNECT_TIMEOUT_S 30

/* net/confine.c: no_new_privs, Landlock, seccomp; before serving. 0 or -errno (logged). */
int vr_proxy_confine(void);
