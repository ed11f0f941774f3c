/* policy/scan-filter.c — rules turned off and allow-listed findings (see
 * scan-filter.h). Patterns are the policy's (.gitignore syntax, match.h),
 * matched against the path and each of its parent directories, so
 * "tests/fixtures/" covers every file below it, as in a hide rule. */
#include <string.h>

#include "policy/match.h"
#include "policy/policy.h"
#include "policy/scan-filter.h"

typedef struct {
	VrScanAllow pub;
	VrMatch *match;
} Allow;

struct VrScanFilter {
	guint64 disabled_mask; /* bit i: rule i of vr_scan_rules() is off */
	GArray *disabled;      /* VrScanDisabled, in config order */
	GPtrArray *allowed;    /* Allow *, in config order */
};

static void disabled_clear(gpointer p)
{
	g_free(((VrScanDisabled *)p)->source);
}

static void allow_free(gpointer p)
{
	Allow *a = p;
	g_free(a->pub.pattern);
	g_free(a->pub.source);
	vr_match_free(a->match);
	g_free(a);
}

VrScanFilter *vr_scan_filter_new(void)
{
	VrScanFilter *f = g_new0(VrScanFilter, 1);
	f->disabled = g_array_new(FALSE, TRUE, sizeof(VrScanDisabled));
	g_array_set_clear_func(f->disabled, disabled_clear);
	f->allowed = g_ptr_array_new_with_free_func(allow_free);
	return f;
}

void vr_scan_filter_free(VrScanFilter *f)
{
	if (!f)
		return;
	g_array_unref(f->disabled);
	g_ptr_array_unref(f->allowed);
	g_free(f);
}

static guint rule_index(const VrScanRule *r)
{
	return (guint)(r - vr_scan_rules(NULL));
}

static gboolean unknown_rule(GError **error, const char *id)
{
	g_autofree char *quoted = g_strescape(id, NULL);
	g_set_error(error, VR_POLICY_ERROR, VR_POLICY_ERROR_CONFIG,
	            "unknown scanner rule '%s'; expected a rule id from `vault-run scan --rules`", quoted);
	return FALSE;
}

gboolean vr_scan_filter_disable(VrScanFilter *f, const char *rule_id, const char *source, int line,
                                GError **error)
{
	const VrScanRule *r = vr_scan_rule_lookup(rule_id);
	if (!r)
		return unknown_rule(error, rule_id);
	G_STATIC_ASSERT(sizeof f->disabled_mask * 8 >= 14); /* one bit per rule */
	f->disabled_mask |= G_GUINT64_CONSTANT(1) << rule_index(r);
	VrScanDisabled d = {r, g_strdup(source), line};
	g_array_append_val(f->disabled, d);
	return TRUE;
}

gboolean vr_scan_filter_allow(VrScanFilter *f, const char *entry, const char *source, int line,
                              GError **error)
{
	const char *colon = strrchr(entry, ':');
	if (!colon || colon == entry || !colon[1]) {
		g_autofree char *quoted = g_strescape(entry, NULL);
		g_set_error(error, VR_POLICY_ERROR, VR_POLICY_ERROR_CONFIG,
		            "scan-allow entry '%s'; expected PATTERN:RULE (e.g. tests/fixtures/**:jwt, or PATTERN:* for every rule)",
		            quoted);
		return FALSE;
	}
	g_autofree char *pattern = g_strstrip(g_strndup(entry, (gsize)(colon - entry)));
	g_autofree char *rule_id = g_strstrip(g_strdup(colon + 1));
	const VrScanRule *r = NULL;
	if (strcmp(rule_id, "*") != 0 && !(r = vr_scan_rule_lookup(rule_id)))
		return unknown_rule(error, rule_id);
	g_autoptr(GError) local = NULL;
	VrMatch *m = vr_match_compile(pattern, &local);
	if (!m) {
		g_set_error(error, VR_POLICY_ERROR, VR_POLICY_ERROR_CONFIG, "scan-allow pattern: %s", local->message);
		return FALSE;
	}
	Allow *a = g_new0(Allow, 1);
	a->pub = (VrScanAllow){g_strdup(pattern), r, g_strdup(source), line};
	a->match = m;
	g_ptr_array_add(f->allowed, a);
	return TRUE;
}

gboolean vr_scan_filter_is_empty(const VrScanFilter *f)
{
	return !f || (f->disabled_mask == 0 && f->allowed->len == 0);
}

/* The path itself, or one of its parent directories, matches. */
static gboolean covers(const VrMatch *m, const char *relpath)
{
	char stackbuf[512];
	g_autofree char *heapbuf = NULL;
	gsize len = strlen(relpath);
	char *buf = len < sizeof stackbuf ? stackbuf : (heapbuf = g_malloc(len + 1));
	memcpy(buf, relpath, len + 1);
	for (char *s = strchr(buf, '/'); s; s = strchr(s + 1, '/')) {
		*s = '\0';
		const char *base = strrchr(buf, '/');
		gboolean hit = vr_match_path(m, buf, base ? base + 1 : buf, TRUE);
		*s = '/';
		if (hit)
			return TRUE;
	}
	const char *base = strrchr(relpath, '/');
	return vr_match_path(m, relpath, base ? base + 1 : relpath, FALSE);
}

static guint n_rules(void)
{
	size_t n;
	vr_scan_rules(&n);
	return (guint)n;
}

/* Rules dropped for relpath: one bit per rule. */
static guint64 dropped(const VrScanFilter *f, const char *relpath)
{
	guint64 mask = f->disabled_mask;
	guint64 all = (G_GUINT64_CONSTANT(1) << n_rules()) - 1;
	for (guint i = 0; i < f->allowed->len && mask != all; i++) {
		const Allow *a = f->allowed->pdata[i];
		guint64 bits = a->pub.rule ? G_GUINT64_CONSTANT(1) << rule_index(a->pub.rule) : all;
		if ((mask & bits) != bits && covers(a->match, relpath))
			mask |= bits;
	}
	return mask;
}

guint64 vr_scan_filter_key(const VrScanFilter *f, const char *relpath)
{
	return f ? dropped(f, relpath) : 0;
}

guint vr_scan_filter_apply(const VrScanFilter *f, const char *relpath, GArray *hits)
{
	if (vr_scan_filter_is_empty(f) || !hits->len)
		return 0;
	guint64 mask = dropped(f, relpath);
	if (!mask)
		return 0;
	guint out = 0, n = hits->len;
	for (guint i = 0; i < n; i++) {
		VrScanHit *h = &g_array_index(hits, VrScanHit, i);
		if (!(mask & (G_GUINT64_CONSTANT(1) << rule_index(h->rule))))
			g_array_index(hits, VrScanHit, out++) = *h;
	}
	g_array_set_size(hits, out);
	return n - out;
}

guint vr_scan_filter_n_disabled(const VrScanFilter *f) { return f ? f->disabled->len : 0; }
const VrScanDisabled *vr_scan_filter_disabled(const VrScanFilter *f, guint i)
{
	return &g_array_index(f->disabled, VrScanDisabled, i);
}
guint vr_scan_filter_n_allowed(const VrScanFilter *f) { return f ? f->allowed->len : 0; }
const VrScanAllow *vr_scan_filter_allowed(const VrScanFilter *f, guint i)
{
	return &((const Allow *)f->allowed->pdata[i])->pub;
}
