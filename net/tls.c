/* TLS termination for the hosts keys are bound to and the read-only hosts
 * (docs/network.md "Keys"). Every other tunnel stays opaque.
 *
 * Why GIO's TLS (glib-networking, itself GnuTLS) for the connections and
 * GnuTLS directly only for the certificates (net/ca.c): the relay is GIO
 * streams end to end, and a GTlsConnection is a GIOStream, so a terminated
 * tunnel is the same async pumps with a gate between them, no second event
 * loop, no hand-written record layer. GIO cannot make certificates, so the
 * CA and the leaves are GnuTLS's, handed over as PEM.
 *
 * The order in a CONNECT (or SOCKS) to a terminated host:443: the decision
 * (net/proxy.c), then TLS to the origin verified against the system store
 * (the run CA is never trusted upstream), and only then the front end's
 * "200"; then TLS with the client on a leaf of the run CA for that host,
 * ALPN http/1.1, and the relay through the inject gate. A client that
 * refuses the leaf (pinning) ends the tunnel with an audit event naming the
 * host. */
#include "net/proxy-private.h"

#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <string.h>
#include <unistd.h>

#include <gnutls/gnutls.h>
#include <gnutls/x509.h>

#include "common/log.h"
#include "net/ca.h"

struct VrProxyTls {
	VrNetKeys *keys;       /* the child's copy of the options' keys, with the values */
	GPtrArray *read_hosts; /* the options' */
	VrInject *inj;
	VrNetCa *ca;
	/* The system store (or, in test builds, a test CA), read before the
	 * proxy confines itself; the upstream chain is verified against it
	 * here, not by a GTlsDatabase, which glib-networking re-reads from
	 * its file on every connection (Landlock forbids that). */
	gnutls_x509_trust_list_t trust;
	GMutex lock;           /* guards ca and leaves: handshakes run in the pool */
	GHashTable *leaves;    /* host → GTlsCertificate */
#ifdef VR_TEST_HOOKS
	GHashTable *test_resolve; /* name → address text */
	guint16 test_port;
#endif
};

static const char *const alpn[] = {"http/1.1", NULL};

VrInject *proxy_tls_inject(VrProxyTls *tls)
{
	return tls->inj;
}

#ifdef VR_TEST_HOOKS
/* Test builds only: the loopback origin of tests/integration/net-keys.sh
 * has its own CA, listens on a port a user can bind, and has a name no DNS
 * knows. None of this exists in the installed binary: anywhere else, a way
 * to trust another CA upstream is a way to send the keys out. */
static const char *test_hooks(VrProxyTls *tls)
{
	const char *resolve = g_getenv("VR_TEST_RESOLVE");
	tls->test_resolve = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, g_free);
	g_auto(GStrv) items = g_strsplit(resolve ? resolve : "", ",", -1);
	for (char **it = items; *it; it++) {
		char *eq = strchr(*it, '=');
		if (eq)
			g_hash_table_replace(tls->test_resolve, g_strndup(*it, eq - *it), g_strdup(eq + 1));
	}
	const char *port = g_getenv("VR_TEST_UPSTREAM_PORT");
	tls->test_port = port ? (guint16)g_ascii_strtoull(port, NULL, 10) : 0;
	return g_getenv("VR_TEST_UPSTREAM_CA");
}
#endif

GList *proxy_tls_test_resolve(const VrProxyTls *tls, const char *host)
{
#ifdef VR_TEST_HOOKS
	const char *a = tls && tls->test_resolve ? g_hash_table_lookup(tls->test_resolve, host) : NULL;
	GInetAddress *addr = a ? g_inet_address_new_from_string(a) : NULL;
	return addr ? g_list_append(NULL, addr) : NULL;
#else
	(void)tls;
	(void)host;
	return NULL;
#endif
}

guint16 proxy_tls_upstream_port(const ProxyConn *c)
{
#ifdef VR_TEST_HOOKS
	if (c->proxy->tls && c->proxy->tls->test_port && proxy_tls_terminates(c->proxy, c))
		return c->proxy->tls->test_port;
#endif
	return c->port;
}

VrProxyTls *proxy_tls_new(const VrProxyOptions *opts, char **ret_ca_pem, GError **error)
{
	g_autofree VrProxyTls *tls = g_new0(VrProxyTls, 1);
	/* This process is a fork of the supervisor: its copy of the keys is
	 * its own to fill. */
	tls->keys = (VrNetKeys *)opts->keys;
	if (!tls->keys)
		tls->keys = vr_net_keys_new();
	if (opts->keys_fd >= 0) {
		int r = vr_net_keys_read_values(tls->keys, opts->keys_fd);
		close(opts->keys_fd);
		if (r < 0) {
			g_set_error(error, G_IO_ERROR, G_IO_ERROR_FAILED, "cannot read the keys' values: %s", strerror(-r));
			return NULL;
		}
	}
	tls->read_hosts = opts->read_hosts;
	tls->inj = vr_inject_new(tls->keys, tls->read_hosts);
	g_autoptr(GPtrArray) hosts = vr_inject_hosts(tls->inj);
	tls->ca = vr_net_ca_new(opts->run_id ? opts->run_id : "proxy", hosts,
	                        opts->ca_valid_s > 0 ? opts->ca_valid_s : VR_NET_CA_VALID_S, error);
	if (!tls->ca)
		return NULL;
	g_mutex_init(&tls->lock);
	tls->leaves = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, g_object_unref);
	*ret_ca_pem = g_strdup(vr_net_ca_pem(tls->ca));
	return g_steal_pointer(&tls);
}

gboolean proxy_tls_load_trust(VrProxyTls *tls, GError **error)
{
	GTlsBackend *backend = g_tls_backend_get_default();
	if (!g_tls_backend_supports_tls(backend)) {
		g_set_error(error, G_IO_ERROR, G_IO_ERROR_NOT_SUPPORTED,
		            "GIO has no TLS backend (install glib-networking)");
		return FALSE;
	}
	const char *test_ca = NULL;
#ifdef VR_TEST_HOOKS
	test_ca = test_hooks(tls);
#endif
	/* Now, before Landlock: it cannot read /etc/ssl afterwards. */
	int n = gnutls_x509_trust_list_init(&tls->trust, 0);
	if (n == 0)
		n = test_ca ? gnutls_x509_trust_list_add_trust_file(tls->trust, test_ca, NULL, GNUTLS_X509_FMT_PEM, 0, 0)
		            : gnutls_x509_trust_list_add_system_trust(tls->trust, 0, 0);
	if (n <= 0) {
		g_set_error(error, G_IO_ERROR, G_IO_ERROR_FAILED, "no system trust store to verify the origins with: %s",
		            n < 0 ? gnutls_strerror(n) : "it holds no certificate");
		return FALSE;
	}
	return TRUE;
}

gboolean proxy_tls_terminates(const VrProxy *proxy, const ProxyConn *c)
{
	return proxy->tls && vr_inject_terminates(proxy->tls->inj, c->host, c->port);
}

/* The leaf for host, made once per run. */
static GTlsCertificate *leaf_for(VrProxyTls *tls, const char *host, GError **error)
{
	g_autofree char *h = g_ascii_strdown(host, -1);
	g_mutex_lock(&tls->lock);
	GTlsCertificate *cert = g_hash_table_lookup(tls->leaves, h);
	if (!cert) {
		char *pem = vr_net_ca_issue(tls->ca, h, error);
		if (pem) {
			cert = g_tls_certificate_new_from_pem(pem, -1, error);
			vr_net_secret_free(pem);
		}
		if (cert)
			g_hash_table_insert(tls->leaves, g_strdup(h), cert);
	}
	if (cert)
		g_object_ref(cert);
	g_mutex_unlock(&tls->lock);
	return cert;
}

typedef struct {
	VrProxyTls *tls;
	const char *host;
	char *why; /* the verification's verdict when it failed */
} Verify;

/* The peer's chain as GnuTLS certificates, leaf first (at most 16). */
static guint chain_import(GTlsCertificate *peer, gnutls_x509_crt_t *crts, guint max)
{
	guint n = 0;
	for (GTlsCertificate *c = peer; c && n < max; c = g_tls_certificate_get_issuer(c)) {
		g_autoptr(GByteArray) der = NULL;
		g_object_get(c, "certificate", &der, NULL);
		if (!der || gnutls_x509_crt_init(&crts[n]) < 0)
			break;
		gnutls_datum_t d = {der->data, der->len};
		if (gnutls_x509_crt_import(crts[n], &d, GNUTLS_X509_FMT_DER) < 0) {
			gnutls_x509_crt_deinit(crts[n]);
			break;
		}
		n++;
	}
	return n;
}

/* GIO has no database (so it calls this for every chain): the chain must
 * lead to the trust list, name the host and be for a TLS server. */
static gboolean on_accept_certificate(GTlsConnection *conn, GTlsCertificate *peer, GTlsCertificateFlags errors,
                                      gpointer data)
{
	Verify *v = data;
	(void)conn;
	(void)errors;
	gnutls_x509_crt_t crts[16];
	guint n = chain_import(peer, crts, G_N_ELEMENTS(crts));
	if (n == 0) {
		v->why = g_strdup("no certificate could be read");
		return FALSE;
	}
	gnutls_typed_vdata_st vdata[] = {
		{GNUTLS_DT_DNS_HOSTNAME, (unsigned char *)v->host, 0},
		{GNUTLS_DT_KEY_PURPOSE_OID, (unsigned char *)GNUTLS_KP_TLS_WWW_SERVER, 0},
	};
	unsigned int status = 0;
	int r = gnutls_x509_trust_list_verify_crt2(v->tls->trust, crts, n, vdata, G_N_ELEMENTS(vdata), 0, &status,
	                                           NULL);
	for (guint i = 0; i < n; i++)
		gnutls_x509_crt_deinit(crts[i]);
	if (r == 0 && status == 0)
		return TRUE;
	gnutls_datum_t text = {NULL, 0};
	if (r < 0)
		v->why = g_strdup(gnutls_strerror(r));
	else if (gnutls_certificate_verification_status_print(status, GNUTLS_CRT_X509, &text, 0) == 0) {
		v->why = g_strndup((const char *)text.data, text.size);
		gnutls_free(text.data);
	} else {
		v->why = g_strdup("not verified");
	}
	return FALSE;
}

/* TLS writes a handshake flight, and the gate a head, in several pieces:
 * Nagle's algorithm would hold each after the first until the peer's
 * delayed ACK (40 ms a round). */
static void no_delay(GSocketConnection *conn)
{
	g_socket_set_option(g_socket_connection_get_socket(conn), IPPROTO_TCP, TCP_NODELAY, 1, NULL);
}

GIOStream *proxy_tls_upstream(ProxyConn *c, GSocketConnection *up)
{
	VrProxyTls *tls = c->proxy->tls;
	g_autoptr(GError) error = NULL;
	g_autoptr(GSocketConnectable) id = g_network_address_new(c->host, c->port);
	Verify v = {tls, c->host, NULL};
	no_delay(up);
	GIOStream *conn = g_tls_client_connection_new(G_IO_STREAM(up), id, &error);
	if (conn) {
		g_tls_connection_set_database(G_TLS_CONNECTION(conn), NULL);
		g_signal_connect(conn, "accept-certificate", G_CALLBACK(on_accept_certificate), &v);
		g_tls_connection_set_advertised_protocols(G_TLS_CONNECTION(conn), alpn);
		gboolean ok = g_tls_connection_handshake(G_TLS_CONNECTION(conn), NULL, &error);
		g_signal_handlers_disconnect_by_data(conn, &v);
		if (!ok)
			g_clear_object(&conn);
	}
	if (!conn) {
		c->result = "failed";
		c->reason = g_strdup_printf("TLS to %s not verified against the system trust store: %s", c->host,
		                            v.why ? v.why : error ? error->message : "?");
	}
	g_free(v.why);
	return conn;
}

void proxy_tls_serve(ProxyConn *c, GSocketConnection *client, GInputStream *client_in, GSocketConnection *up,
                     GIOStream *up_tls)
{
	VrProxyTls *tls = c->proxy->tls;
	g_autoptr(GError) error = NULL;
	/* GIO's TLS reads a pollable stream, the socket's, not the front end's
	 * buffer: a client that sent its ClientHello before the tunnel's "200"
	 * (none of curl, Node, Python, Bun does) is told so. */
	if (G_IS_BUFFERED_INPUT_STREAM(client_in) &&
	    g_buffered_input_stream_get_available(G_BUFFERED_INPUT_STREAM(client_in)) > 0) {
		c->result = "failed";
		c->reason = g_strdup_printf("TLS with the client for %s: it sent data before the tunnel was "
		                            "established",
		                            c->host);
		proxy_conn_finish(c);
		return;
	}
	no_delay(client);
	g_autoptr(GTlsCertificate) cert = leaf_for(tls, c->host, &error);
	g_autoptr(GIOStream) conn = cert ? g_tls_server_connection_new(G_IO_STREAM(client), cert, &error) : NULL;
	if (conn) {
		g_tls_connection_set_advertised_protocols(G_TLS_CONNECTION(conn), alpn);
		if (!g_tls_connection_handshake(G_TLS_CONNECTION(conn), NULL, &error))
			g_clear_object(&conn);
	}
	if (!conn) {
		/* Never silent: a client that pins its certificates ends here. */
		c->result = "failed";
		c->reason = g_strdup_printf("TLS with the client for %s failed (does it pin certificates, or not "
		                            "trust the run CA at " "/etc/ssl/certs/vault-run-ca.pem?): %s",
		                            c->host, error ? error->message : "?");
		vr_warning("proxy: %s", c->reason);
		proxy_conn_finish(c);
		return;
	}
	VrInjectSite *site = vr_inject_site_new(tls->inj, c->host);
	VrHttpGate *gate = vr_inject_gate_new(site);
	proxy_relay_terminated(c, conn, client, up_tls, up, gate, site);
}

void proxy_tunnel(ProxyConn *c, GSocketConnection *client, GInputStream *client_in, GSocketConnection *up,
                  GIOStream *up_tls)
{
	if (up_tls)
		proxy_tls_serve(c, client, client_in, up, up_tls);
	else
		proxy_relay(c, client, client_in, up);
}
