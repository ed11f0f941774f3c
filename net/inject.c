/* The policy of terminated tunnels and the tripwire (see net/inject.h). */
#include "net/inject.h"

#include <fnmatch.h>
#include <string.h>

struct VrInject {
	const VrNetKeys *keys;
	GPtrArray *read_hosts; /* not owned */
	VrScrub *values;       /* every real value → its sentinel */
	VrScrub *tripwire;     /* every real value and every sentinel: detected */
};

struct VrInjectSite {
	const VrInject *inj;
	char *host;
	gboolean read_only;
	VrScrub *up_scan; /* real values, and the sentinels of keys bound elsewhere */
};

/* Detection ids: 2i the real value of key i, 2i + 1 its sentinel. */
#define ID_VALUE(i) (2 * (int)(i))
#define ID_SENTINEL(i) (2 * (int)(i) + 1)

VrInject *vr_inject_new(const VrNetKeys *keys, GPtrArray *read_hosts)
{
	VrInject *inj = g_new0(VrInject, 1);
	inj->keys = keys;
	inj->read_hosts = read_hosts;
	inj->values = vr_scrub_new();
	inj->tripwire = vr_scrub_new();
	for (guint i = 0; i < vr_net_keys_count(keys); i++) {
		const VrNetKey *k = vr_net_keys_get(keys, i);
		if (!k->value || !k->sentinel)
			continue;
		vr_scrub_add(inj->values, k->value, k->sentinel, ID_VALUE(i));
		vr_scrub_add(inj->tripwire, k->value, NULL, ID_VALUE(i));
		vr_scrub_add(inj->tripwire, k->sentinel, NULL, ID_SENTINEL(i));
	}
	return inj;
}

void vr_inject_free(VrInject *inj)
{
	if (!inj)
		return;
	vr_scrub_free(inj->values);
	vr_scrub_free(inj->tripwire);
	g_free(inj);
}

static gboolean is_read_host(const VrInject *inj, const char *host)
{
	for (guint i = 0; inj->read_hosts && i < inj->read_hosts->len; i++)
		if (g_ascii_strcasecmp(inj->read_hosts->pdata[i], host) == 0)
			return TRUE;
	return FALSE;
}

static gboolean is_bound_host(const VrInject *inj, const char *host)
{
	for (guint i = 0; i < vr_net_keys_count(inj->keys); i++)
		if (vr_net_key_bound_to(vr_net_keys_get(inj->keys, i), host))
			return TRUE;
	return FALSE;
}

/* Lower case, one trailing dot dropped. */
static char *host_norm(const char *host)
{
	char *h = g_ascii_strdown(host, -1);
	size_t n = strlen(h);
	if (n > 1 && h[n - 1] == '.')
		h[n - 1] = '\0';
	return h;
}

gboolean vr_inject_terminates(const VrInject *inj, const char *host, guint16 port)
{
	if (!inj || port != 443)
		return FALSE;
	g_autofree char *h = host_norm(host);
	return is_bound_host(inj, h) || is_read_host(inj, h);
}

GPtrArray *vr_inject_hosts(const VrInject *inj)
{
	GPtrArray *hosts = vr_net_keys_hosts(inj->keys);
	for (guint i = 0; inj->read_hosts && i < inj->read_hosts->len; i++)
		if (!g_ptr_array_find_with_equal_func(hosts, inj->read_hosts->pdata[i], g_str_equal, NULL))
			g_ptr_array_add(hosts, inj->read_hosts->pdata[i]);
	return hosts;
}

char *vr_inject_describe(const VrInject *inj, int id, const char *host)
{
	guint i = (guint)id / 2;
	if (id < 0 || i >= vr_net_keys_count(inj->keys))
		return g_strdup("tripwire: a key");
	const VrNetKey *k = vr_net_keys_get(inj->keys, i);
	if (id % 2 == 0)
		return g_strdup_printf("tripwire: the real value of %s, which nothing inside the sandbox may hold", k->name);
	g_autoptr(GString) bound = g_string_new(NULL);
	for (guint j = 0; j < k->hosts->len; j++)
		g_string_append_printf(bound, "%s%s", j ? "," : "", (const char *)k->hosts->pdata[j]);
	return g_strdup_printf("tripwire: the sentinel of %s sent to %s, a host it is not bound to (%s)", k->name,
	                       host ? host : "?", bound->str);
}

/* ---- one tunnel --------------------------------------------------------- */

VrInjectSite *vr_inject_site_new(const VrInject *inj, const char *host)
{
	VrInjectSite *site = g_new0(VrInjectSite, 1);
	site->inj = inj;
	site->host = host_norm(host);
	site->read_only = is_read_host(inj, site->host);
	site->up_scan = vr_scrub_new();
	for (guint i = 0; i < vr_net_keys_count(inj->keys); i++) {
		const VrNetKey *k = vr_net_keys_get(inj->keys, i);
		if (!k->value || !k->sentinel)
			continue;
		vr_scrub_add(site->up_scan, k->value, NULL, ID_VALUE(i));
		if (!vr_net_key_bound_to(k, site->host))
			vr_scrub_add(site->up_scan, k->sentinel, NULL, ID_SENTINEL(i));
	}
	return site;
}

void vr_inject_site_free(VrInjectSite *site)
{
	if (!site)
		return;
	g_free(site->host);
	vr_scrub_free(site->up_scan);
	g_free(site);
}

/* The first detection in s (a real value, a sentinel not bound here), or -1. */
static int scan_text(const VrScrub *scan, const char *s, gboolean fold)
{
	g_autofree char *copy = g_strdup(s);
	int id = vr_scrub_buffer(scan, (guint8 *)copy, strlen(copy), fold);
	explicit_bzero(copy, strlen(copy));
	return id;
}

/* The request line (its method too: any token is one, and a sentinel
 * fits in a token: fuzz_inject), its target as sent and percent-decoded,
 * and every field. */
static int scan_request(const VrInjectSite *site, const VrGateRequest *req)
{
	int id = scan_text(site->up_scan, req->method, FALSE);
	if (id < 0)
		id = scan_text(site->up_scan, req->target, FALSE);
	if (id < 0) {
		g_autofree char *decoded = g_uri_unescape_string(req->target, NULL);
		if (decoded)
			id = scan_text(site->up_scan, decoded, FALSE);
	}
	for (guint i = 0; id < 0 && i < req->names->len; i++) {
		id = scan_text(site->up_scan, req->names->pdata[i], FALSE);
		if (id < 0)
			id = scan_text(site->up_scan, req->values->pdata[i], FALSE);
	}
	return id;
}

static gboolean host_matches(const char *value, const char *host)
{
	g_autofree char *v = host_norm(value);
	size_t n = strlen(v);
	if (n > 4 && strcmp(v + n - 4, ":443") == 0)
		v[n - 4] = '\0';
	n = strlen(v);
	if (n > 1 && v[n - 1] == '.')
		v[n - 1] = '\0';
	return strcmp(v, host) == 0;
}

/* One Host, the tunnel's. NULL or the reason. */
static char *check_host_field(const VrInjectSite *site, const VrGateRequest *req)
{
	const char *host = NULL;
	for (guint i = 0; i < req->names->len; i++) {
		if (g_ascii_strcasecmp(req->names->pdata[i], "Host") != 0)
			continue;
		if (host)
			return g_strdup("more than one Host field");
		host = req->values->pdata[i];
	}
	if (!host)
		return g_strdup("no Host field");
	if (!host_matches(host, site->host))
		return g_strdup_printf("Host %s is not the tunnel's host %s (domain fronting)", host, site->host);
	return NULL;
}

/* A path a glob can judge: no dot segment, no empty segment, no escaped
 * dot, slash or backslash that a server would read as one, and nothing a
 * server may cut a segment at or end it with: ';' (path parameters:
 * Tomcat and Spring read "/v1/..;/admin" as "/admin"), NUL, escaped or
 * not, and control characters. Path allow-lists guard what a key may do,
 * so what does not look plain is refused rather than judged. */
static gboolean path_is_plain(const char *path)
{
	if (strstr(path, "/./") || strstr(path, "/../") || strstr(path, "//") || strchr(path, '\\') ||
	    strchr(path, ';') || g_str_has_suffix(path, "/.") || g_str_has_suffix(path, "/.."))
		return FALSE;
	for (const char *p = path; *p; p++)
		if ((unsigned char)*p < 0x20 || *p == 0x7f)
			return FALSE;
	for (const char *p = strchr(path, '%'); p; p = strchr(p + 1, '%'))
		if (g_ascii_strncasecmp(p, "%2e", 3) == 0 || g_ascii_strncasecmp(p, "%2f", 3) == 0 ||
		    g_ascii_strncasecmp(p, "%5c", 3) == 0 || g_ascii_strncasecmp(p, "%3b", 3) == 0 ||
		    strncmp(p, "%00", 3) == 0 || g_ascii_strncasecmp(p, "%25", 3) == 0)
			return FALSE;
	return TRUE;
}

static char *check_read_only(const VrInjectSite *site, const VrGateRequest *req)
{
	const char *m = req->method;
	if (strcmp(m, "GET") == 0 || strcmp(m, "HEAD") == 0 || strcmp(m, "OPTIONS") == 0)
		return NULL;
	/* git's fetch and clone: the one POST that only reads. */
	if (strcmp(m, "POST") == 0 && g_str_has_suffix(req->path, "/git-upload-pack") && path_is_plain(req->path))
		return NULL;
	return g_strdup_printf("%s %s refused: %s is read-only (--net read=%s): GET, HEAD, OPTIONS and git's "
	                       "POST .../git-upload-pack only",
	                       m, req->path, site->host, site->host);
}

static char *check_key_use(const VrNetKey *k, const VrGateRequest *req)
{
	gboolean ok = TRUE;
	if (k->methods) {
		ok = FALSE;
		for (guint i = 0; i < k->methods->len && !ok; i++)
			ok = strcmp(k->methods->pdata[i], req->method) == 0;
	}
	if (ok && k->paths) {
		ok = FALSE;
		for (guint i = 0; path_is_plain(req->path) && i < k->paths->len && !ok; i++)
			ok = fnmatch(k->paths->pdata[i], req->path, 0) == 0;
	}
	if (ok)
		return NULL;
	return g_strdup_printf("%s may not be used for %s %s (--key %s)", k->name, req->method, req->path, k->spec);
}

/* The key bound here, declared for place, whose sentinel is s. */
static const VrNetKey *key_for(const VrInjectSite *site, guint place, const char *s, gsize len)
{
	for (guint i = 0; i < vr_net_keys_count(site->inj->keys); i++) {
		const VrNetKey *k = vr_net_keys_get(site->inj->keys, i);
		if ((k->places & place) && k->value && vr_net_key_bound_to(k, site->host) &&
		    strlen(k->sentinel) == len && memcmp(k->sentinel, s, len) == 0)
			return k;
	}
	return NULL;
}

/* Replaces every sentinel in s of a key declared for place (same length:
 * in place). The keys used go to used. */
static void inject_all(const VrInjectSite *site, guint place, char *s, GPtrArray *used)
{
	for (guint i = 0; i < vr_net_keys_count(site->inj->keys); i++) {
		const VrNetKey *k = vr_net_keys_get(site->inj->keys, i);
		if (!(k->places & place) || !k->value || !vr_net_key_bound_to(k, site->host))
			continue;
		size_t n = strlen(k->sentinel);
		for (char *p = strstr(s, k->sentinel); p; p = strstr(p + n, k->sentinel)) {
			memcpy(p, k->value, n);
			if (!g_ptr_array_find(used, k, NULL))
				g_ptr_array_add(used, (gpointer)k);
		}
	}
}

/* "Basic base64(user:password)": the sentinel anywhere in it (git puts a
 * token as the password, some hosts as the user name). */
static char *inject_basic(const VrInjectSite *site, const char *b64, GPtrArray *used)
{
	gsize len = 0;
	g_autofree char *plain = NULL;
	if (!*b64 || strspn(b64, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/=") != strlen(b64))
		return NULL;
	plain = (char *)g_base64_decode(b64, &len);
	if (!plain || memchr(plain, '\0', len))
		return NULL;
	char *text = g_strndup(plain, len);
	explicit_bzero(plain, len);
	guint before = used->len;
	inject_all(site, VR_KEY_AS_BASIC, text, used);
	char *out = used->len > before ? g_base64_encode((const guchar *)text, strlen(text)) : NULL;
	vr_net_secret_free(text);
	return out;
}

/* One field's value, with a key put in where its declaration says; NULL
 * when nothing changes. */
static char *inject_field(const VrInjectSite *site, const char *name, const char *value, GPtrArray *used)
{
	const VrNetKey *k = NULL;
	if (g_ascii_strcasecmp(name, "Authorization") == 0) {
		const char *sp = strchr(value, ' ');
		if (!sp)
			return NULL;
		const char *cred = sp + strspn(sp, " ");
		if ((gsize)(sp - value) == 6 && g_ascii_strncasecmp(value, "Bearer", 6) == 0)
			k = key_for(site, VR_KEY_AS_BEARER, cred, strlen(cred));
		else if ((gsize)(sp - value) == 5 && g_ascii_strncasecmp(value, "Basic", 5) == 0) {
			g_autofree char *b64 = inject_basic(site, cred, used);
			return b64 ? g_strconcat("Basic ", b64, NULL) : NULL;
		}
		if (!k)
			return NULL;
		g_ptr_array_add(used, (gpointer)k);
		return g_strconcat("Bearer ", k->value, NULL);
	}
	if (g_ascii_strcasecmp(name, "x-api-key") == 0)
		k = key_for(site, VR_KEY_AS_X_API_KEY, value, strlen(value));
	else if (g_ascii_strcasecmp(name, "x-goog-api-key") == 0)
		k = key_for(site, VR_KEY_AS_X_GOOG_API_KEY, value, strlen(value));
	if (!k)
		return NULL;
	g_ptr_array_add(used, (gpointer)k);
	return g_strdup(k->value);
}

/* ?key=SENTINEL (any parameter named key, the one place a query may carry
 * a key): replaced in the target, in place. */
static void inject_query(const VrInjectSite *site, char *target, GPtrArray *used)
{
	char *q = strchr(target, '?');
	for (char *p = q; p; p = strchr(p + 1, '&')) {
		if (strncmp(p + 1, "key=", 4) != 0)
			continue;
		char *v = p + 5;
		gsize n = strcspn(v, "&");
		const VrNetKey *k = key_for(site, VR_KEY_AS_QUERY, v, n);
		if (k) {
			memcpy(v, k->value, n);
			g_ptr_array_add(used, (gpointer)k);
		}
	}
}

/* A Basic credential put in is the value in base64: an echo of the
 * header must come back as the base64 that was sent. */
static void note_basic(VrGateRequest *req, const char *was, const char *now)
{
	if (g_ascii_strncasecmp(now, "Basic ", 6) != 0)
		return;
	const char *sp = strchr(was, ' ');
	const char *old = sp ? sp + strspn(sp, " ") : "";
	if (strlen(old) != strlen(now + 6))
		return;
	if (!req->reflected)
		req->reflected = g_ptr_array_new_with_free_func(vr_net_secret_free);
	g_ptr_array_add(req->reflected, g_strdup(now + 6));
	g_ptr_array_add(req->reflected, g_strdup(old));
}

/* Accept-Encoding: identity, once: the scrubber reads what comes back. */
static void ask_identity(VrGateRequest *req)
{
	for (guint i = req->names->len; i-- > 0;) {
		if (g_ascii_strcasecmp(req->names->pdata[i], "Accept-Encoding") == 0) {
			g_ptr_array_remove_index(req->names, i);
			g_ptr_array_remove_index(req->values, i);
		}
	}
	g_ptr_array_add(req->names, g_strdup("Accept-Encoding"));
	g_ptr_array_add(req->values, g_strdup("identity"));
}

static char *judge(gpointer data, VrGateRequest *req, gboolean *ret_forbidden)
{
	VrInjectSite *site = data;
	*ret_forbidden = TRUE;
	if (strcmp(req->method, "CONNECT") == 0)
		return g_strdup("CONNECT inside a terminated tunnel");
	int id = scan_request(site, req);
	if (id >= 0)
		return vr_inject_describe(site->inj, id, site->host);
	char *why = check_host_field(site, req);
	if (!why && site->read_only)
		why = check_read_only(site, req);
	if (why)
		return why;

	g_autoptr(GPtrArray) used = g_ptr_array_new();
	for (guint i = 0; i < req->names->len; i++) {
		char *v = inject_field(site, req->names->pdata[i], req->values->pdata[i], used);
		if (v)
			note_basic(req, req->values->pdata[i], v);
		if (v) {
			vr_net_secret_free(req->values->pdata[i]);
			req->values->pdata[i] = v;
		}
	}
	inject_query(site, req->target, used);
	GString *note = g_string_new(NULL);
	for (guint i = 0; i < used->len; i++) {
		const VrNetKey *k = used->pdata[i];
		guint first = 0;
		g_ptr_array_find(used, k, &first);
		if (first < i)
			continue;
		g_string_append_printf(note, "%s%s", note->len ? "," : "", k->name);
		if (!why)
			why = check_key_use(k, req);
	}
	req->note = note->len ? g_string_free(note, FALSE) : (g_string_free(note, TRUE), NULL);
	if (why)
		return why; /* the values put in are zeroed with the request */
	ask_identity(req);
	return NULL;
}

static char *body_refusal(gpointer data, int id)
{
	VrInjectSite *site = data;
	g_autofree char *what = vr_inject_describe(site->inj, id, site->host);
	return g_strdup_printf("%s (in the request body)", what);
}

const VrGatePolicy vr_inject_policy = {judge, body_refusal};

VrHttpGate *vr_inject_gate_new(VrInjectSite *site)
{
	return vr_http_gate_new_policy(&vr_inject_policy, site, site->up_scan, site->inj->values);
}

/* ---- outside terminated tunnels ---------------------------------------- */

char *vr_inject_check_host(const VrInject *inj, const char *host)
{
	if (!inj || !host)
		return NULL;
	g_autofree char *copy = g_strdup(host);
	int id = vr_scrub_buffer(inj->tripwire, (guint8 *)copy, strlen(copy), TRUE);
	explicit_bzero(copy, strlen(copy));
	if (id < 0)
		return NULL;
	g_autofree char *what = vr_inject_describe(inj, id, "a host name");
	return g_strdup_printf("%s (in the host name asked for)", what);
}

char *vr_inject_check_plain(const VrInject *inj, const char *head, gsize len, const char *host)
{
	if (!inj)
		return NULL;
	g_autofree char *copy = g_strndup(head, len);
	int id = vr_scrub_buffer(inj->tripwire, (guint8 *)copy, strlen(copy), FALSE);
	if (id < 0) {
		g_autofree char *decoded = g_uri_unescape_string(copy, NULL);
		if (decoded)
			id = vr_scrub_buffer(inj->tripwire, (guint8 *)decoded, strlen(decoded), FALSE);
		if (decoded)
			explicit_bzero(decoded, strlen(decoded));
	}
	explicit_bzero(copy, strlen(copy));
	if (id < 0)
		return NULL;
	g_autofree char *what = vr_inject_describe(inj, id, host);
	return g_strdup_printf("%s (over plain HTTP: keys are only ever put in over TLS)", what);
}

VrScrub *vr_inject_plain_scan(const VrInject *inj)
{
	return vr_scrub_copy(inj->tripwire);
}
