/* The run's side of `--key NAME@HOST` and `--net read=HOST` (docs/network.md
 * "Keys"): the declarations, the network they imply, the sentinels in the
 * sandbox's environment, the real values in a sealed memfd for the proxy
 * (never argv, never the environment), and the sandbox's trust store with
 * the run's CA in it.
 *
 * Order in the supervisor: vr_run_keys_plan before the allow-list is built,
 * vr_run_keys_take_values once the environment is, vr_run_keys_certs_prepare
 * before the sandbox is cloned (its root binds the directory), and
 * vr_run_keys_certs_fill once the proxy made the CA, before COMMAND starts
 * (the root binds the directory, so what is written then is seen inside). */
#pragma once
#include <glib.h>

#include "net/keys.h"
#include "policy/config.h"
#include "run/keyfiles.h"
#include "run/plan.h"

typedef struct {
	VrNetKeys *keys;     /* NULL: no --key; names, hosts, sentinels (no values after take_values) */
	int values_fd;       /* memfd of the real values (net/keys.h), for the proxy; -1 */
	gboolean terminates; /* keys or read= hosts: the proxy terminates TLS, the sandbox trusts its CA */
	char *certs_dir;     /* host directory bound at /etc/ssl/certs; NULL before certs_prepare */
	gboolean certs_tmpfs; /* a tmpfs of the run's mount namespace holds its entries */
	int bundle_fd, ca_fd;
	VrRunKeyFiles *files; /* a profile's key files (run/keyfiles.h); NULL: none */
	/* The profile's keys (run/profile-keys.h): */
	GPtrArray *optional;    /* names in keys bound only when their value exists */
	GPtrArray *unbound;     /* names not bound (--key none, --net host) whose values enter as they are */
	const char *unbound_why; /* the one warning's reason (static text) */
	gboolean reads;         /* --net read= hosts: terminated with no key at all */
	gboolean no_proxy;      /* --net none: sentinels inside, the values nowhere */
	GPtrArray *sentinel_only; /* no_proxy: the names whose sentinels are all there is (for --dry-run) */
	char *profile;          /* the profile's name, for messages */
} VrRunKeys;

#define VR_RUN_KEYS_INIT {.values_fd = -1, .bundle_fd = -1, .ca_fd = -1}

void vr_run_keys_clear(VrRunKeys *rk);
G_DEFINE_AUTO_CLEANUP_CLEAR_FUNC(VrRunKeys, vr_run_keys_clear)

/* Parses the declarations (the profile's first, then the config's; the
 * command line's win by name) and fits the network to them: --key implies
 * allow=HOST:443 for its hosts (added to an allow= list); with --net none
 * or host it is an error. The profile's keys add no host; with --net none
 * they are sentinels only, with --net host they are not bound (one warning
 * in take_values). `--key none` (or the config's `key = none`) binds none
 * of the profile's and the config's; with another --key it is an error.
 * A profile's key files are read here (run/keyfiles.h): their bound fields
 * are keys like --key's, `--key none` or not (with --net none or host, a
 * warning: their files are still served masked, and the login cannot work
 * inside). */
gboolean vr_run_keys_plan(VrRunKeys *rk, VrRunPlan *plan, const VrConfig *config, GError **error);

/* Each key's real value from *envp (an --env-file, an allowed variable) or
 * else the host environment; NAME=SENTINEL in *envp in its place (over a
 * profile's env allow), the values into rk->values_fd (not with --net
 * none: there is no proxy), and the copies this process held zeroed (the
 * host environment's in place: the sandbox is a clone of this process).
 * A profile's key without a value is dropped first. Adds the trust store
 * variables. */
gboolean vr_run_keys_take_values(VrRunKeys *rk, char ***envp, GError **error);

/* The sandbox's /etc/ssl/certs: a private directory holding the host's
 * entries (as links), the merged bundle and the run CA, the files empty
 * and the CA's <hash>.0 link missing until certs_fill. In $TMPDIR, which must not be
 * inside PROJECT (the sandbox would get it through the view, which hides
 * *.pem); its entries on a tmpfs mounted there in the run's own mount
 * namespace (called after the user namespace is entered), so the host
 * sees an empty directory. */
gboolean vr_run_keys_certs_prepare(VrRunKeys *rk, const char *project, GError **error);
/* ca_hash: the CA's OpenSSL subject hash (vr_proxy_spawn_tls), for its
 * <hash>.0 link. */
int vr_run_keys_certs_fill(VrRunKeys *rk, const char *ca_pem, guint32 ca_hash);
/* The directory goes once the sandbox bound it (its mount keeps it). */
void vr_run_keys_certs_remove(VrRunKeys *rk);

/* Where the sandbox finds them. */
#define VR_RUN_KEYS_CERTS "/etc/ssl/certs"
#define VR_RUN_KEYS_BUNDLE VR_RUN_KEYS_CERTS "/ca-certificates.crt"
#define VR_RUN_KEYS_CA VR_RUN_KEYS_CERTS "/vault-run-ca.pem"
