/* What the proxy does with the requests of a terminated tunnel (a host a
 * key is bound to, or a read-only host, on port 443; docs/network.md
 * "Keys"): the policy its VrHttpGate (net/gate.h) asks about every request
 * of the kept-alive connection, and the tripwire for everything else the
 * proxy sees.
 *
 * A request is let through only when it is origin form (no absolute form,
 * no CONNECT inside the tunnel: the gate refuses those, and Upgrade), its
 * one Host is the tunnel's host (no domain fronting on a shared front
 * end), no real value of any key is in it and no sentinel of a key bound
 * elsewhere; on a read-only host only GET, HEAD, OPTIONS and git's
 * POST .../git-upload-pack. Then each sentinel of a key bound to this host
 * that sits where the key's declaration says (Authorization: Bearer,
 * x-api-key, x-goog-api-key, ?key=, Basic) becomes the real value, if
 * the key's method and path lists allow the request, and the response is
 * asked for without compression (Accept-Encoding: identity) so the
 * scrubber can read it.
 *
 * Pure: no I/O (tests/fuzz/fuzz_inject.c drives the policy through a
 * gate). */
#pragma once
#include <glib.h>

#include "net/gate.h"
#include "net/keys.h"
#include "net/scrub.h"

typedef struct VrInject VrInject;

/* keys (with their values) and the read-only hosts (lower case) stay the
 * caller's and must outlive the VrInject. */
VrInject *vr_inject_new(const VrNetKeys *keys, GPtrArray *read_hosts);
void vr_inject_free(VrInject *inj);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(VrInject, vr_inject_free)

/* Whether a tunnel to host:port is terminated (a bound or read-only host,
 * port 443). */
gboolean vr_inject_terminates(const VrInject *inj, const char *host, guint16 port);
/* Every terminated host, each once (the run CA's names). */
GPtrArray *vr_inject_hosts(const VrInject *inj);

/* The policy of one terminated tunnel to host. */
typedef struct VrInjectSite VrInjectSite;
VrInjectSite *vr_inject_site_new(const VrInject *inj, const char *host);
void vr_inject_site_free(VrInjectSite *site);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(VrInjectSite, vr_inject_site_free)
extern const VrGatePolicy vr_inject_policy; /* its data: a VrInjectSite */
/* Its gate's scans: request bodies (real values, and the sentinels of keys
 * bound elsewhere: detected) and responses (real values → sentinels). */
VrHttpGate *vr_inject_gate_new(VrInjectSite *site);

/* The tripwire outside terminated tunnels: a real value, or any sentinel,
 * in a host name a client asked for (CONNECT, SOCKS, a plain-HTTP URL:
 * case does not matter in a name) or in a plain-HTTP request head. NULL,
 * or the reason ("tripwire: …"). */
char *vr_inject_check_host(const VrInject *inj, const char *host);
char *vr_inject_check_plain(const VrInject *inj, const char *head, gsize len, const char *host);
/* A plain-HTTP body: detects real values and sentinels (ids for
 * vr_inject_describe). */
VrScrub *vr_inject_plain_scan(const VrInject *inj);
/* The reason for a detection id of these scans, toward host. */
char *vr_inject_describe(const VrInject *inj, int id, const char *host);
