/* Keys the agent can use but never holds (`--key NAME@HOST`, docs/network.md
 * "Keys"). Inside the sandbox NAME holds a sentinel of the real value's
 * shape; the proxy alone holds the real value and puts it into requests to
 * the hosts the key is bound to, at the places its declaration names.
 *
 *   NAME@HOST[,HOST...][:as=PLACE[,PLACE...]][:methods=M[,M...]][:paths=GLOB[,GLOB...]]
 *
 *   PLACE   bearer          Authorization: Bearer SENTINEL (the default)
 *           x-api-key       x-api-key: SENTINEL (Anthropic)
 *           x-goog-api-key  x-goog-api-key: SENTINEL (Gemini)
 *           query           a key=SENTINEL query parameter (Gemini's REST examples)
 *           basic           Authorization: Basic base64(USER:SENTINEL) (git's HTTPS tokens)
 *   methods the only methods the key may be used with (GET,POST)
 *   paths   the only paths (fnmatch globs, the query aside: /v1/...) it may be used on
 *
 * A HOST is a DNS name, never an IP literal or a wildcard: a key is bound to
 * a name, on port 443, through TLS that the proxy verified. Pure: glib only,
 * no I/O but the value transfer (a descriptor), so unit tests and the
 * fuzz targets reach it directly. */
#pragma once
#include <glib.h>

typedef enum {
	VR_KEY_AS_BEARER = 1 << 0,
	VR_KEY_AS_X_API_KEY = 1 << 1,
	VR_KEY_AS_X_GOOG_API_KEY = 1 << 2,
	VR_KEY_AS_QUERY = 1 << 3,
	VR_KEY_AS_BASIC = 1 << 4,
} VrKeyPlace;

typedef struct {
	char *spec;         /* as written, for messages */
	char *name;         /* the variable */
	GPtrArray *hosts;   /* lower case, no trailing dot */
	guint places;       /* VrKeyPlace */
	GPtrArray *methods; /* NULL: any */
	GPtrArray *paths;   /* NULL: any */
	char *sentinel;     /* what the sandbox holds (vr_net_key_set_value) */
	char *value;        /* the real value: in the proxy, and in the supervisor until it hands it over */
} VrNetKey;

typedef struct VrNetKeys VrNetKeys;

/* The shortest value a key may have: a shorter one would be scrubbed out of
 * ordinary text, and is no API key anyway. */
#define VR_NET_KEY_MIN_LENGTH 16
#define VR_NET_KEY_MAX_LENGTH 4096
/* The per-user secret the sentinels are derived from. */
#define VR_NET_KEY_SECRET_SIZE 32

VrNetKeys *vr_net_keys_new(void);
void vr_net_keys_free(VrNetKeys *keys);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(VrNetKeys, vr_net_keys_free)

/* Parses one declaration (above). Errors name the declaration and what is
 * wrong with it. */
VrNetKey *vr_net_key_parse(const char *spec, GError **error);
void vr_net_key_free(VrNetKey *key);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(VrNetKey, vr_net_key_free)

/* Takes key; a key of the same name is replaced. */
void vr_net_keys_add(VrNetKeys *keys, VrNetKey *key);
guint vr_net_keys_count(const VrNetKeys *keys);
VrNetKey *vr_net_keys_get(const VrNetKeys *keys, guint i);
VrNetKey *vr_net_keys_find(const VrNetKeys *keys, const char *name);
void vr_net_keys_remove(VrNetKeys *keys, const char *name);
/* Every host some key is bound to, each once (strings owned by the keys). */
GPtrArray *vr_net_keys_hosts(const VrNetKeys *keys);
gboolean vr_net_key_bound_to(const VrNetKey *key, const char *host);
/* HOST as a key (or --net read=) may name it: a DNS name with a dot, no IP
 * literal, wildcard or port. The lower-case name without a trailing dot
 * (g_free), or NULL with *ret_why (static text). */
char *vr_net_key_host(const char *host, const char **ret_why);

/* The sentinel of NAME whose real value is VALUE: VALUE's known prefix
 * (sk-ant-, sk-proj-, sk-, AIza, ghp_, github_pat_…) as it is, every other
 * character replaced by one of the same class (digit, lower, upper; the rest
 * kept), drawn from HMAC-SHA256(secret, NAME): same length, same shape, the
 * same in every run for the same name and shape. NULL (with the reason)
 * when VALUE cannot be a key: too short, too long, or a byte a header
 * cannot carry. */
char *vr_net_key_sentinel(const guint8 *secret, gsize secret_len, const char *name, const char *value,
                          GError **error);
/* Sets key->value (copied) and key->sentinel. */
gboolean vr_net_key_set_value(VrNetKey *key, const guint8 *secret, gsize secret_len, const char *value,
                              GError **error);

/* The real values cross from the supervisor to the proxy in a descriptor
 * (a memfd), never in argv or the environment: one record per key, in
 * order (name, value). write: 0 or -errno. read: fills the values of the
 * keys named, 0 or -errno (-EBADMSG for a record that does not parse). */
int vr_net_keys_write_values(const VrNetKeys *keys, int fd);
int vr_net_keys_read_values(VrNetKeys *keys, int fd);
/* Overwrites every value in memory (explicit_bzero) and drops it. */
void vr_net_keys_forget_values(VrNetKeys *keys);

/* Overwrites S with zeros before it is freed (secrets in glib strings). */
void vr_net_secret_free(gpointer s);

/* "bearer,x-api-key": the places as declared, for messages and --dry-run. */
char *vr_net_key_places_text(guint places);
