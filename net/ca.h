/* The run's certificate authority for TLS termination (`--key`, `--net
 * read=`; docs/network.md "Keys"): made by the proxy when it starts, its
 * private key only ever in the proxy's memory. ECDSA P-256, basic
 * constraints CA with path length 0, critical name constraints that permit
 * exactly the terminated hosts (and no IP address), valid from a minute
 * before the run for valid_s seconds. Leaf certificates (one ECDSA key for
 * the run, one certificate per host) are issued under it. GnuTLS does the
 * crypto and the encoding, libtasn1 the one DER string of the name. */
#pragma once
#include <glib.h>

typedef struct VrNetCa VrNetCa;

/* Default validity of a run's CA when the run has no --timeout. */
#define VR_NET_CA_VALID_S (30 * 24 * 3600)

/* hosts: the terminated names (at least one). run_id names the CA
 * ("vault-run run ca RUN-ID"). */
VrNetCa *vr_net_ca_new(const char *run_id, GPtrArray *hosts, gint64 valid_s, GError **error);
void vr_net_ca_free(VrNetCa *ca);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(VrNetCa, vr_net_ca_free)

/* The CA certificate (PEM), for the sandbox's trust store. */
const char *vr_net_ca_pem(const VrNetCa *ca);

/* A leaf for host: its certificate and the CA's (PEM), then the leaf's
 * private key (PKCS#8 PEM): what g_tls_certificate_new_from_pem takes.
 * g_malloc'd; the caller zeroes it (vr_net_secret_free). */
char *vr_net_ca_issue(VrNetCa *ca, const char *host, GError **error);

/* OpenSSL's subject hash of the CA that vr_net_ca_new makes for run_id
 * (the name of its <hash>.0 link in a CApath directory): known before the
 * CA exists, from the name alone. */
gboolean vr_net_ca_subject_hash(const char *run_id, guint32 *ret_hash, GError **error);
