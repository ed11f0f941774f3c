/* Key declarations, sentinels and the hand-over of the real values (see
 * net/keys.h). */
#include "net/keys.h"

#include <errno.h>
#include <string.h>
#include <unistd.h>

#include "common/fd-util.h"
#include "net/allow.h"

struct VrNetKeys {
	GPtrArray *keys; /* VrNetKey *, in the order added */
};

void vr_net_secret_free(gpointer s)
{
	if (!s)
		return;
	explicit_bzero(s, strlen(s));
	g_free(s);
}

void vr_net_key_free(VrNetKey *key)
{
	if (!key)
		return;
	g_free(key->spec);
	g_free(key->name);
	g_ptr_array_unref(key->hosts);
	if (key->methods)
		g_ptr_array_unref(key->methods);
	if (key->paths)
		g_ptr_array_unref(key->paths);
	g_free(key->sentinel);
	vr_net_secret_free(key->value);
	g_free(key);
}

VrNetKeys *vr_net_keys_new(void)
{
	VrNetKeys *keys = g_new0(VrNetKeys, 1);
	keys->keys = g_ptr_array_new_with_free_func((GDestroyNotify)vr_net_key_free);
	return keys;
}

void vr_net_keys_free(VrNetKeys *keys)
{
	if (!keys)
		return;
	g_ptr_array_unref(keys->keys);
	g_free(keys);
}

/* ---- declarations ------------------------------------------------------- */

static const struct {
	const char *name;
	VrKeyPlace place;
} places[] = {
	{"bearer", VR_KEY_AS_BEARER},
	{"x-api-key", VR_KEY_AS_X_API_KEY},
	{"x-goog-api-key", VR_KEY_AS_X_GOOG_API_KEY},
	{"query", VR_KEY_AS_QUERY},
	{"basic", VR_KEY_AS_BASIC},
};

char *vr_net_key_places_text(guint set)
{
	GString *s = g_string_new(NULL);
	for (size_t i = 0; i < G_N_ELEMENTS(places); i++)
		if (set & places[i].place)
			g_string_append_printf(s, "%s%s", s->len ? "," : "", places[i].name);
	return g_string_free(s, FALSE);
}

static VrNetKey *key_error(GError **error, const char *spec, const char *fmt, ...) G_GNUC_PRINTF(3, 4);
static VrNetKey *key_error(GError **error, const char *spec, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	g_autofree char *why = g_strdup_vprintf(fmt, ap);
	va_end(ap);
	g_set_error(error, VR_NET_ERROR, VR_NET_ERROR_PATTERN, "--key '%s': %s", spec, why);
	return NULL;
}

static gboolean name_is_variable(const char *s)
{
	if (!*s || g_ascii_isdigit(*s))
		return FALSE;
	for (; *s; s++)
		if (!g_ascii_isalnum(*s) && *s != '_')
			return FALSE;
	return TRUE;
}

/* A host a key may be bound to: a DNS name, not an IP literal, no '*', no
 * port. NULL (and *why) otherwise; the lower-case name without a trailing
 * dot. */
static char *bound_host(const char *host, const char **why)
{
	if (!*host) {
		*why = "an empty host name";
		return NULL;
	}
	if (strchr(host, '*')) {
		*why = "a wildcard: a key is bound to one name, each listed";
		return NULL;
	}
	if (g_hostname_is_ip_address(host) || host[0] == '[') {
		*why = "an IP literal: a key is bound to a name, which the upstream certificate must carry";
		return NULL;
	}
	if (strchr(host, ':')) {
		*why = "a port: a key is bound to HOST on port 443, through TLS";
		return NULL;
	}
	char *h = g_ascii_strdown(host, -1);
	size_t n = strlen(h);
	if (n > 1 && h[n - 1] == '.')
		h[n - 1] = '\0';
	if (!vr_net_host_is_valid(h) || !strchr(h, '.')) {
		g_free(h);
		*why = "not a DNS name with a dot in it (api.example.com)";
		return NULL;
	}
	return h;
}

char *vr_net_key_host(const char *host, const char **ret_why)
{
	return bound_host(host, ret_why);
}

static gboolean method_is_token(const char *m)
{
	if (!*m)
		return FALSE;
	for (; *m; m++)
		if (!g_ascii_isupper(*m))
			return FALSE;
	return TRUE;
}

/* One ":name=value" option after the hosts. */
static gboolean key_option(VrNetKey *key, const char *opt, GError **error)
{
	const char *eq = strchr(opt, '=');
	if (*opt && strspn(opt, "0123456789") == strlen(opt)) {
		key_error(error, key->spec, "':%s' is a port: a key is bound to HOST on port 443, through TLS", opt);
		return FALSE;
	}
	if (!eq || eq == opt || !eq[1]) {
		key_error(error, key->spec, "'%s' is not OPTION=VALUE (as=, methods=, paths=)", opt);
		return FALSE;
	}
	g_autofree char *name = g_strndup(opt, (gsize)(eq - opt));
	g_auto(GStrv) items = g_strsplit(eq + 1, ",", -1);
	if (strcmp(name, "as") == 0) {
		key->places = 0;
		for (char **it = items; *it; it++) {
			guint found = 0;
			for (size_t i = 0; i < G_N_ELEMENTS(places); i++)
				if (strcmp(*it, places[i].name) == 0)
					found = places[i].place;
			if (!found) {
				key_error(error, key->spec, "'%s' is not a place (bearer, x-api-key, x-goog-api-key, query, basic)",
				          *it);
				return FALSE;
			}
			key->places |= found;
		}
	} else if (strcmp(name, "methods") == 0) {
		key->methods = g_ptr_array_new_with_free_func(g_free);
		for (char **it = items; *it; it++) {
			if (!method_is_token(*it) || strcmp(*it, "CONNECT") == 0) {
				key_error(error, key->spec, "'%s' is not a method (GET, POST… in capitals; never CONNECT)", *it);
				return FALSE;
			}
			g_ptr_array_add(key->methods, g_strdup(*it));
		}
	} else if (strcmp(name, "paths") == 0) {
		key->paths = g_ptr_array_new_with_free_func(g_free);
		for (char **it = items; *it; it++) {
			if ((*it)[0] != '/' || strpbrk(*it, "?# \t")) {
				key_error(error, key->spec, "'%s' is not a path glob (/v1/*, without a query)", *it);
				return FALSE;
			}
			g_ptr_array_add(key->paths, g_strdup(*it));
		}
	} else {
		key_error(error, key->spec, "unknown option '%s' (as=, methods=, paths=)", name);
		return FALSE;
	}
	return TRUE;
}

VrNetKey *vr_net_key_parse(const char *spec, GError **error)
{
	const char *at = strchr(spec, '@');
	if (!at)
		return key_error(error, spec, "expected NAME@HOST[,HOST...][:as=PLACE]");
	g_autoptr(VrNetKey) key = g_new0(VrNetKey, 1);
	key->spec = g_strdup(spec);
	key->name = g_strndup(spec, (gsize)(at - spec));
	key->hosts = g_ptr_array_new_with_free_func(g_free);
	key->places = VR_KEY_AS_BEARER;
	if (!name_is_variable(key->name))
		return key_error(error, spec, "'%s' is not a variable name (letters, digits, '_')", key->name);
	g_auto(GStrv) parts = g_strsplit(at + 1, ":", -1);
	g_auto(GStrv) hosts = g_strsplit(parts[0], ",", -1);
	for (char **h = hosts; *h; h++) {
		const char *why = NULL;
		char *host = bound_host(g_strstrip(*h), &why);
		if (!host)
			return key_error(error, spec, "host '%s' is %s", *h, why);
		if (!g_ptr_array_find_with_equal_func(key->hosts, host, g_str_equal, NULL))
			g_ptr_array_add(key->hosts, host);
		else
			g_free(host);
	}
	for (char **opt = parts + 1; *opt; opt++)
		if (!key_option(key, *opt, error))
			return NULL;
	return g_steal_pointer(&key);
}

void vr_net_keys_add(VrNetKeys *keys, VrNetKey *key)
{
	vr_net_keys_remove(keys, key->name);
	g_ptr_array_add(keys->keys, key);
}

guint vr_net_keys_count(const VrNetKeys *keys)
{
	return keys ? keys->keys->len : 0;
}

VrNetKey *vr_net_keys_get(const VrNetKeys *keys, guint i)
{
	return keys->keys->pdata[i];
}

VrNetKey *vr_net_keys_find(const VrNetKeys *keys, const char *name)
{
	for (guint i = 0; keys && i < keys->keys->len; i++)
		if (strcmp(vr_net_keys_get(keys, i)->name, name) == 0)
			return vr_net_keys_get(keys, i);
	return NULL;
}

void vr_net_keys_remove(VrNetKeys *keys, const char *name)
{
	VrNetKey *k = vr_net_keys_find(keys, name);
	if (k)
		g_ptr_array_remove(keys->keys, k);
}

gboolean vr_net_key_bound_to(const VrNetKey *key, const char *host)
{
	for (guint i = 0; i < key->hosts->len; i++)
		if (g_ascii_strcasecmp(key->hosts->pdata[i], host) == 0)
			return TRUE;
	return FALSE;
}

GPtrArray *vr_net_keys_hosts(const VrNetKeys *keys)
{
	GPtrArray *hosts = g_ptr_array_new();
	for (guint i = 0; i < vr_net_keys_count(keys); i++) {
		const VrNetKey *k = vr_net_keys_get(keys, i);
		for (guint j = 0; j < k->hosts->len; j++)
			if (!g_ptr_array_find_with_equal_func(hosts, k->hosts->pdata[j], g_str_equal, NULL))
				g_ptr_array_add(hosts, k->hosts->pdata[j]);
	}
	return hosts;
}

/* ---- sentinels ---------------------------------------------------------- */

/* Prefixes that say what a key is, kept as they are in its sentinel (the
 * longest that fits first): a harness that checks the shape of its key
 * (sk-ant- for Anthropic, AIza for Google; ya29. and 1// for Google's OAuth
 * access and refresh tokens) takes the sentinel too. */
static const char *const known_prefixes[] = {
	"sk-ant-api03-", "sk-ant-admin01-", "sk-ant-oat01-", "sk-ant-ort01-", "sk-ant-", "sk-proj-", "sk-svcacct-",
	"sk-admin-", "sk-or-v1-", "sk-", "AIza", "gsk_", "xai-", "github_pat_", "ghp_", "gho_", "ghu_", "ghs_", "ghr_",
	"glpat-", "hf_", "r8_", "pplx-", "csk-", "nvapi-", "tvly-", "fw_", "ya29.", "1//", NULL,
};

static gsize prefix_length(const char *value)
{
	for (const char *const *p = known_prefixes; *p; p++)
		if (g_str_has_prefix(value, *p))
			return strlen(*p);
	return 0;
}

/* A byte a header value, a URL and a JSON string all carry as it is. */
static gboolean key_byte_ok(unsigned char c)
{
	return c > 0x20 && c < 0x7f && c != '"' && c != '\\';
}

char *vr_net_key_sentinel(const guint8 *secret, gsize secret_len, const char *name, const char *value,
                          GError **error)
{
	gsize n = strlen(value);
	if (n < VR_NET_KEY_MIN_LENGTH || n > VR_NET_KEY_MAX_LENGTH) {
		g_set_error(error, VR_NET_ERROR, VR_NET_ERROR_PATTERN,
		            "the value of %s is %zu characters long; a key bound to a host is %d to %d (an API key or token)",
		            name, n, VR_NET_KEY_MIN_LENGTH, VR_NET_KEY_MAX_LENGTH);
		return NULL;
	}
	gsize alnum = 0;
	for (gsize i = 0; i < n; i++) {
		if (!key_byte_ok((unsigned char)value[i])) {
			g_set_error(error, VR_NET_ERROR, VR_NET_ERROR_PATTERN,
			            "the value of %s holds a space, a quote, a backslash or a byte outside printable ASCII "
			            "(character %zu); a key bound to a host cannot",
			            name, i + 1);
			return NULL;
		}
		alnum += g_ascii_isalnum(value[i]) != 0;
	}
	gsize keep = prefix_length(value);
	if (alnum < VR_NET_KEY_MIN_LENGTH / 2 + keep) {
		g_set_error(error, VR_NET_ERROR, VR_NET_ERROR_PATTERN,
		            "the value of %s has too few letters and digits to be a key", name);
		return NULL;
	}
	char *s = g_strdup(value);
	guint8 block[32];
	gsize used = sizeof block;
	guint32 counter = 0;
	for (gsize i = keep; i < n; i++) {
		char c = value[i];
		int classes = g_ascii_isdigit(c) ? 10 : g_ascii_islower(c) || g_ascii_isupper(c) ? 26 : 0;
		if (!classes)
			continue;
		if (used == sizeof block) {
			/* HMAC(secret, "vault-run sentinel" NUL name NUL counter). */
			g_autoptr(GHmac) h = g_hmac_new(G_CHECKSUM_SHA256, secret, secret_len);
			g_hmac_update(h, (const guchar *)"vault-run sentinel", 19);
			g_hmac_update(h, (const guchar *)name, (gssize)strlen(name) + 1);
			g_hmac_update(h, (const guchar *)&counter, sizeof counter);
			gsize len = sizeof block;
			g_hmac_get_digest(h, block, &len);
			counter++;
			used = 0;
		}
		/* 256 % 26 and 256 % 10 bias a few letters slightly: a sentinel
		 * need not be uniform, only unlike the value and the same each run. */
		guint8 r = block[used++];
		s[i] = g_ascii_isdigit(c) ? (char)('0' + r % 10)
		       : g_ascii_islower(c) ? (char)('a' + r % 26)
		                            : (char)('A' + r % 26);
	}
	explicit_bzero(block, sizeof block);
	if (strcmp(s, value) == 0) {
		/* 26^-k: never, but a sentinel equal to its value would hand it out. */
		vr_net_secret_free(s);
		g_set_error(error, VR_NET_ERROR, VR_NET_ERROR_PATTERN, "cannot derive a sentinel for %s", name);
		return NULL;
	}
	return s;
}

gboolean vr_net_key_set_value(VrNetKey *key, const guint8 *secret, gsize secret_len, const char *value,
                              GError **error)
{
	char *sentinel = vr_net_key_sentinel(secret, secret_len, key->name, value, error);
	if (!sentinel)
		return FALSE;
	g_free(key->sentinel);
	key->sentinel = sentinel;
	vr_net_secret_free(key->value);
	key->value = g_strdup(value);
	return TRUE;
}

/* ---- the hand-over ------------------------------------------------------ */

static int write_record(int fd, const char *s)
{
	guint32 n = (guint32)strlen(s);
	int r = vr_write_all(fd, &n, sizeof n);
	return r < 0 ? r : vr_write_all(fd, s, n);
}

int vr_net_keys_write_values(const VrNetKeys *keys, int fd)
{
	for (guint i = 0; i < vr_net_keys_count(keys); i++) {
		const VrNetKey *k = vr_net_keys_get(keys, i);
		if (!k->value)
			return -ENOKEY;
		int r = write_record(fd, k->name);
		if (r >= 0)
			r = write_record(fd, k->value);
		if (r < 0)
			return r;
	}
	return 0;
}

/* One record, or NULL at the end (*ret_r 0) or on an error (*ret_r < 0). */
static char *read_record(int fd, int *ret_r)
{
	guint32 n = 0;
	ssize_t got = vr_read_all(fd, &n, sizeof n);
	*ret_r = 0;
	if (got == 0)
		return NULL;
	if (got != (ssize_t)sizeof n || n > VR_NET_KEY_MAX_LENGTH) {
		*ret_r = got < 0 ? (int)got : -EBADMSG;
		return NULL;
	}
	char *s = g_malloc0(n + 1);
	got = vr_read_all(fd, s, n);
	if (got != (ssize_t)n) {
		vr_net_secret_free(s);
		*ret_r = got < 0 ? (int)got : -EBADMSG;
		return NULL;
	}
	return s;
}

int vr_net_keys_read_values(VrNetKeys *keys, int fd)
{
	for (;;) {
		int r;
		g_autofree char *name = read_record(fd, &r);
		if (!name)
			return r;
		char *value = read_record(fd, &r);
		if (!value)
			return r < 0 ? r : -EBADMSG;
		VrNetKey *k = vr_net_keys_find(keys, name);
		if (!k) {
			vr_net_secret_free(value);
			return -EBADMSG;
		}
		vr_net_secret_free(k->value);
		k->value = value;
	}
}

void vr_net_keys_forget_values(VrNetKeys *keys)
{
	for (guint i = 0; i < vr_net_keys_count(keys); i++) {
		VrNetKey *k = vr_net_keys_get(keys, i);
		vr_net_secret_free(k->value);
		k->value = NULL;
	}
}
