/* The run's CA and its leaf certificates (see net/ca.h). */
#include "net/ca.h"

#include <gnutls/crypto.h>
#include <gnutls/gnutls.h>
#include <gnutls/x509.h>
#include <libtasn1.h>
#include <string.h>
#include <time.h>

#include "net/allow.h"
#include "net/keys.h"

struct VrNetCa {
	gnutls_x509_privkey_t key;      /* the CA's: never leaves this process */
	gnutls_x509_crt_t crt;
	gnutls_x509_privkey_t leaf_key; /* one for every leaf of the run */
	time_t not_before, not_after;
	char *pem;
};

static gboolean tls_fail(GError **error, const char *what, int r)
{
	g_set_error(error, VR_NET_ERROR, VR_NET_ERROR_PATTERN, "%s: %s", what, gnutls_strerror(r));
	return FALSE;
}

/* CN as a DER UTF8String, which is what OpenSSL's canonical name (the
 * subject hash) encodes: GnuTLS alone would choose PrintableString. */
static gboolean set_name(gnutls_x509_crt_t crt, const char *cn, gboolean issuer, GError **error)
{
	unsigned char tl[ASN1_MAX_TL_SIZE];
	unsigned int tl_len = sizeof tl;
	gsize n = strlen(cn);
	if (asn1_encode_simple_der(ASN1_ETYPE_UTF8_STRING, (const unsigned char *)cn, (unsigned)n, tl, &tl_len) !=
	    ASN1_SUCCESS) {
		g_set_error(error, VR_NET_ERROR, VR_NET_ERROR_PATTERN, "cannot encode the name %s", cn);
		return FALSE;
	}
	g_autofree guint8 *raw = g_malloc(tl_len + n);
	memcpy(raw, tl, tl_len);
	memcpy(raw + tl_len, cn, n);
	int r = issuer ? gnutls_x509_crt_set_issuer_dn_by_oid(crt, GNUTLS_OID_X520_COMMON_NAME, 1, raw, tl_len + n)
	               : gnutls_x509_crt_set_dn_by_oid(crt, GNUTLS_OID_X520_COMMON_NAME, 1, raw, tl_len + n);
	return r == 0 || tls_fail(error, "cannot set a certificate's name", r);
}

static char *ca_name(const char *run_id)
{
	/* Lower case, single spaces: OpenSSL's canonical form of it is itself. */
	g_autofree char *id = g_ascii_strdown(run_id ? run_id : "", -1);
	for (char *p = id; *p; p++)
		if (!g_ascii_isalnum(*p) && *p != '-')
			*p = '-';
	return g_strdup_printf("vault-run run ca %s", *id ? id : "0");
}

static gboolean set_serial(gnutls_x509_crt_t crt, GError **error)
{
	guint8 serial[16];
	int r = gnutls_rnd(GNUTLS_RND_NONCE, serial, sizeof serial);
	if (r < 0)
		return tls_fail(error, "cannot draw a serial number", r);
	serial[0] = (serial[0] & 0x7f) | 0x01; /* positive, not zero */
	r = gnutls_x509_crt_set_serial(crt, serial, sizeof serial);
	return r == 0 || tls_fail(error, "cannot set a serial number", r);
}

static gboolean new_key(gnutls_x509_privkey_t *key, GError **error)
{
	int r = gnutls_x509_privkey_init(key);
	if (r == 0)
		r = gnutls_x509_privkey_generate(*key, GNUTLS_PK_ECDSA,
		                                 GNUTLS_CURVE_TO_BITS(GNUTLS_ECC_CURVE_SECP256R1), 0);
	return r == 0 || tls_fail(error, "cannot generate an ECDSA P-256 key", r);
}

/* Permitted: each host (and what is below it, RFC 5280's reading of a
 * dNSName constraint); excluded: every IPv4 and IPv6 address, so no
 * certificate of this CA is good for an IP literal either. */
static gboolean set_constraints(gnutls_x509_crt_t crt, GPtrArray *hosts, GError **error)
{
	gnutls_x509_name_constraints_t nc;
	int r = gnutls_x509_name_constraints_init(&nc);
	if (r < 0)
		return tls_fail(error, "cannot make name constraints", r);
	for (guint i = 0; r == 0 && i < hosts->len; i++) {
		const char *h = hosts->pdata[i];
		gnutls_datum_t d = {(unsigned char *)h, (unsigned)strlen(h)};
		r = gnutls_x509_name_constraints_add_permitted(nc, GNUTLS_SAN_DNSNAME, &d);
	}
	guint8 any4[8] = {0}, any6[32] = {0};
	gnutls_datum_t d4 = {any4, sizeof any4}, d6 = {any6, sizeof any6};
	if (r == 0)
		r = gnutls_x509_name_constraints_add_excluded(nc, GNUTLS_SAN_IPADDRESS, &d4);
	if (r == 0)
		r = gnutls_x509_name_constraints_add_excluded(nc, GNUTLS_SAN_IPADDRESS, &d6);
	if (r == 0)
		r = gnutls_x509_crt_set_name_constraints(crt, nc, 1);
	gnutls_x509_name_constraints_deinit(nc);
	return r == 0 || tls_fail(error, "cannot set the name constraints", r);
}

static gboolean set_key_ids(gnutls_x509_crt_t crt, gnutls_x509_crt_t issuer, GError **error)
{
	guint8 id[64];
	size_t len = sizeof id;
	int r = gnutls_x509_crt_get_key_id(crt, GNUTLS_KEYID_USE_SHA1, id, &len);
	if (r == 0)
		r = gnutls_x509_crt_set_subject_key_id(crt, id, len);
	if (r == 0 && issuer) {
		len = sizeof id;
		r = gnutls_x509_crt_get_subject_key_id(issuer, id, &len, NULL);
		if (r == 0)
			r = gnutls_x509_crt_set_authority_key_id(crt, id, len);
	}
	return r == 0 || tls_fail(error, "cannot set the key identifiers", r);
}

static char *export_crt(gnutls_x509_crt_t crt, GError **error)
{
	gnutls_datum_t out = {NULL, 0};
	int r = gnutls_x509_crt_export2(crt, GNUTLS_X509_FMT_PEM, &out);
	if (r < 0) {
		tls_fail(error, "cannot export a certificate", r);
		return NULL;
	}
	char *pem = g_strndup((const char *)out.data, out.size);
	gnutls_free(out.data);
	return pem;
}

void vr_net_ca_free(VrNetCa *ca)
{
	if (!ca)
		return;
	/* deinit zeroes the key material. */
	if (ca->key)
		gnutls_x509_privkey_deinit(ca->key);
	if (ca->leaf_key)
		gnutls_x509_privkey_deinit(ca->leaf_key);
	if (ca->crt)
		gnutls_x509_crt_deinit(ca->crt);
	g_free(ca->pem);
	g_free(ca);
}

VrNetCa *vr_net_ca_new(const char *run_id, GPtrArray *hosts, gint64 valid_s, GError **error)
{
	if (!hosts || !hosts->len) {
		g_set_error(error, VR_NET_ERROR, VR_NET_ERROR_PATTERN, "a run CA needs at least one host");
		return NULL;
	}
	g_autoptr(VrNetCa) ca = g_new0(VrNetCa, 1);
	ca->not_before = time(NULL) - 60;
	ca->not_after = time(NULL) + (valid_s > 0 ? valid_s : VR_NET_CA_VALID_S);
	g_autofree char *name = ca_name(run_id);
	if (!new_key(&ca->key, error) || !new_key(&ca->leaf_key, error))
		return NULL;
	int r = gnutls_x509_crt_init(&ca->crt);
	if (r < 0) {
		tls_fail(error, "cannot make a certificate", r);
		return NULL;
	}
	gnutls_x509_crt_t c = ca->crt;
	if ((r = gnutls_x509_crt_set_version(c, 3)) < 0 || (r = gnutls_x509_crt_set_key(c, ca->key)) < 0 ||
	    (r = gnutls_x509_crt_set_activation_time(c, ca->not_before)) < 0 ||
	    (r = gnutls_x509_crt_set_expiration_time(c, ca->not_after)) < 0 ||
	    (r = gnutls_x509_crt_set_basic_constraints(c, 1, 0)) < 0 ||
	    (r = gnutls_x509_crt_set_key_usage(c, GNUTLS_KEY_KEY_CERT_SIGN | GNUTLS_KEY_CRL_SIGN)) < 0) {
		tls_fail(error, "cannot make the run CA", r);
		return NULL;
	}
	if (!set_serial(c, error) || !set_name(c, name, FALSE, error) || !set_name(c, name, TRUE, error) ||
	    !set_constraints(c, hosts, error) || !set_key_ids(c, NULL, error))
		return NULL;
	if ((r = gnutls_x509_crt_sign2(c, c, ca->key, GNUTLS_DIG_SHA256, 0)) < 0) {
		tls_fail(error, "cannot sign the run CA", r);
		return NULL;
	}
	ca->pem = export_crt(c, error);
	return ca->pem ? g_steal_pointer(&ca) : NULL;
}

const char *vr_net_ca_pem(const VrNetCa *ca)
{
	return ca->pem;
}

static gboolean leaf_fields(VrNetCa *ca, gnutls_x509_crt_t leaf, const char *host, GError **error)
{
	int r;
	if ((r = gnutls_x509_crt_set_version(leaf, 3)) < 0 || (r = gnutls_x509_crt_set_key(leaf, ca->leaf_key)) < 0 ||
	    (r = gnutls_x509_crt_set_activation_time(leaf, ca->not_before)) < 0 ||
	    (r = gnutls_x509_crt_set_expiration_time(leaf, ca->not_after)) < 0 ||
	    (r = gnutls_x509_crt_set_basic_constraints(leaf, 0, -1)) < 0 ||
	    (r = gnutls_x509_crt_set_key_usage(leaf, GNUTLS_KEY_DIGITAL_SIGNATURE)) < 0 ||
	    (r = gnutls_x509_crt_set_key_purpose_oid(leaf, GNUTLS_KP_TLS_WWW_SERVER, 0)) < 0 ||
	    (r = gnutls_x509_crt_set_subject_alt_name(leaf, GNUTLS_SAN_DNSNAME, host, (unsigned)strlen(host),
	                                              GNUTLS_FSAN_SET)) < 0)
		return tls_fail(error, "cannot make a leaf certificate", r);
	if (!set_serial(leaf, error) || !set_name(leaf, host, FALSE, error) || !set_key_ids(leaf, ca->crt, error))
		return FALSE;
	return TRUE;
}

char *vr_net_ca_issue(VrNetCa *ca, const char *host, GError **error)
{
	gnutls_x509_crt_t leaf;
	int r = gnutls_x509_crt_init(&leaf);
	if (r < 0) {
		tls_fail(error, "cannot make a leaf certificate", r);
		return NULL;
	}
	char *out = NULL;
	if (leaf_fields(ca, leaf, host, error)) {
		/* sign2 takes the issuer's name from the CA certificate. */
		r = gnutls_x509_crt_sign2(leaf, ca->crt, ca->key, GNUTLS_DIG_SHA256, 0);
		if (r < 0) {
			tls_fail(error, "cannot sign a leaf certificate", r);
		} else {
			g_autofree char *pem = export_crt(leaf, error);
			gnutls_datum_t key = {NULL, 0};
			r = pem ? gnutls_x509_privkey_export2_pkcs8(ca->leaf_key, GNUTLS_X509_FMT_PEM, NULL,
			                                            GNUTLS_PKCS_PLAIN, &key)
			        : -1;
			if (pem && r < 0)
				tls_fail(error, "cannot export the leaf key", r);
			if (pem && r == 0) {
				out = g_strdup_printf("%s%s%.*s", pem, ca->pem, (int)key.size, (const char *)key.data);
				explicit_bzero(key.data, key.size);
				gnutls_free(key.data);
			}
		}
	}
	gnutls_x509_crt_deinit(leaf);
	return out;
}

gboolean vr_net_ca_subject_hash(const char *run_id, guint32 *ret_hash, GError **error)
{
	gnutls_x509_crt_t crt;
	int r = gnutls_x509_crt_init(&crt);
	if (r < 0)
		return tls_fail(error, "cannot make a certificate", r);
	g_autofree char *name = ca_name(run_id);
	gboolean ok = set_name(crt, name, FALSE, error);
	gnutls_x509_dn_t dn = NULL;
	gnutls_datum_t der = {NULL, 0};
	if (ok && ((r = gnutls_x509_crt_get_subject(crt, &dn)) < 0 ||
	           (r = gnutls_x509_dn_export2(dn, GNUTLS_X509_FMT_DER, &der)) < 0))
		ok = tls_fail(error, "cannot encode the CA's name", r);
	if (ok) {
		/* OpenSSL hashes the RDNs without the SEQUENCE around them:
		 * libtasn1 reads that header's length. */
		unsigned char cls;
		unsigned long tag;
		int tag_len = 0, len_len = 0;
		long len = -1;
		if (asn1_get_tag_der(der.data, (int)der.size, &cls, &tag_len, &tag) == ASN1_SUCCESS)
			len = asn1_get_length_der(der.data + tag_len, (int)der.size - tag_len, &len_len);
		guint8 sha1[20];
		if (len < 0 || (gsize)(tag_len + len_len + len) != der.size ||
		    gnutls_hash_fast(GNUTLS_DIG_SHA1, der.data + tag_len + len_len, (size_t)len, sha1) < 0) {
			g_set_error(error, VR_NET_ERROR, VR_NET_ERROR_PATTERN, "cannot hash the CA's name");
			ok = FALSE;
		} else {
			*ret_hash = (guint32)sha1[0] | (guint32)sha1[1] << 8 | (guint32)sha1[2] << 16 |
			            (guint32)sha1[3] << 24;
		}
	}
	gnutls_free(der.data);
	gnutls_x509_crt_deinit(crt);
	return ok;
}
