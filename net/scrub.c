/* The streaming matcher of keys (see net/scrub.h). */
#include "net/scrub.h"

#include <string.h>

#include "net/keys.h"

typedef struct {
	char *find;
	char *replace; /* NULL: detect */
	gsize len;
	int id;
} Pattern;

struct VrScrub {
	GArray *patterns;  /* Pattern */
	guint8 first[256]; /* first[c]: some pattern starts with c (either case when folded) */
	GByteArray *held;  /* the suffix that could begin a pattern */
	int detected;      /* -1, or the id found: the stream stops */
};

static void pattern_clear(gpointer p)
{
	Pattern *pat = p;
	vr_net_secret_free(pat->find);
	vr_net_secret_free(pat->replace);
}

VrScrub *vr_scrub_new(void)
{
	VrScrub *s = g_new0(VrScrub, 1);
	s->patterns = g_array_new(FALSE, TRUE, sizeof(Pattern));
	g_array_set_clear_func(s->patterns, pattern_clear);
	s->held = g_byte_array_new();
	s->detected = -1;
	return s;
}

void vr_scrub_free(VrScrub *s)
{
	if (!s)
		return;
	g_array_unref(s->patterns);
	if (s->held->len)
		explicit_bzero(s->held->data, s->held->len);
	g_byte_array_unref(s->held);
	g_free(s);
}

void vr_scrub_add(VrScrub *s, const char *find, const char *replace, int id)
{
	gsize n = strlen(find);
	if (!n || (replace && strlen(replace) != n))
		return; /* the caller's bug: a replacement must keep every offset */
	for (guint k = 0; k < s->patterns->len; k++) {
		const Pattern *q = &g_array_index(s->patterns, Pattern, k);
		if (q->len == n && memcmp(q->find, find, n) == 0)
			return; /* the same request again on a kept-alive connection */
	}
	Pattern p = {g_strdup(find), g_strdup(replace), n, id};
	g_array_append_val(s->patterns, p);
	guint8 c = (guint8)find[0];
	s->first[c] = 1;
	s->first[(guint8)g_ascii_tolower(c)] = 1;
	s->first[(guint8)g_ascii_toupper(c)] = 1;
}

VrScrub *vr_scrub_copy(const VrScrub *s)
{
	VrScrub *c = vr_scrub_new();
	for (guint i = 0; i < s->patterns->len; i++) {
		const Pattern *p = &g_array_index(s->patterns, Pattern, i);
		vr_scrub_add(c, p->find, p->replace, p->id);
	}
	return c;
}

guint vr_scrub_count(const VrScrub *s)
{
	return s->patterns->len;
}

gsize vr_scrub_held(const VrScrub *s)
{
	return s->held->len;
}

static gboolean same(const guint8 *a, const char *b, gsize n, gboolean fold)
{
	if (!fold)
		return memcmp(a, b, n) == 0;
	for (gsize i = 0; i < n; i++)
		if (g_ascii_tolower(a[i]) != g_ascii_tolower((guchar)b[i]))
			return FALSE;
	return TRUE;
}

typedef enum { SCAN_DONE, SCAN_DETECTED, SCAN_PARTIAL } ScanEnd;

/* Scans buf[from, len): replaces what is to be replaced; stops at the
 * first detected pattern or, when partial is allowed, at the first place
 * where a pattern runs past the end. *at: where it stopped. */
static ScanEnd scan(const VrScrub *s, guint8 *buf, gsize len, gboolean fold, gboolean partial, gsize *at,
                    int *ret_id)
{
	gsize i = 0;
	while (i < len) {
		if (!s->first[buf[i]]) {
			i++;
			continue;
		}
		gsize skip = 1;
		const Pattern *whole = NULL;
		/* The first pattern in order that matches here wins. One before
		 * it that runs past the end may still match: held, so the
		 * decision is the same however the stream was cut. */
		for (guint k = 0; k < s->patterns->len && !whole; k++) {
			const Pattern *p = &g_array_index(s->patterns, Pattern, k);
			if (len - i >= p->len) {
				if (same(buf + i, p->find, p->len, fold))
					whole = p;
			} else if (partial && same(buf + i, p->find, len - i, fold)) {
				*at = i;
				return SCAN_PARTIAL;
			}
		}
		if (whole && !whole->replace) {
			*at = i;
			*ret_id = whole->id;
			return SCAN_DETECTED;
		}
		if (whole) {
			memcpy(buf + i, whole->replace, whole->len);
			skip = whole->len;
		} else if (partial) {
			/* A pattern that runs past the end may still come: held. */
			for (guint k = 0; k < s->patterns->len; k++) {
				const Pattern *p = &g_array_index(s->patterns, Pattern, k);
				if (len - i < p->len && same(buf + i, p->find, len - i, fold)) {
					*at = i;
					return SCAN_PARTIAL;
				}
			}
		}
		i += skip;
	}
	*at = len;
	return SCAN_DONE;
}

int vr_scrub_feed(VrScrub *s, const guint8 *buf, gsize len, GByteArray *out)
{
	if (s->detected >= 0 || !len)
		return s->detected;
	if (!s->patterns->len) {
		g_byte_array_append(out, buf, (guint)len);
		return -1;
	}
	g_byte_array_append(s->held, buf, (guint)len);
	gsize at = 0;
	int id = -1;
	ScanEnd end = scan(s, s->held->data, s->held->len, FALSE, TRUE, &at, &id);
	g_byte_array_append(out, s->held->data, (guint)at);
	if (end == SCAN_DETECTED) {
		s->detected = id;
		explicit_bzero(s->held->data, s->held->len);
		g_byte_array_set_size(s->held, 0);
		return id;
	}
	g_byte_array_remove_range(s->held, 0, (guint)at);
	return -1;
}

/* From the first place where what is held begins a pattern to be
 * replaced, the replacement's first bytes instead: the end of a body (or
 * of the stream) never lets the start of a value out, whatever comes
 * after it. A known prefix (sk-proj-) is its sentinel's too, so ordinary
 * text ending in one goes out as it was. */
static void mask_tail(const VrScrub *s, guint8 *buf, gsize len)
{
	for (gsize i = 0; i < len; i++) {
		for (guint k = 0; k < s->patterns->len; k++) {
			const Pattern *p = &g_array_index(s->patterns, Pattern, k);
			if (p->replace && len - i < p->len && same(buf + i, p->find, len - i, FALSE)) {
				memcpy(buf + i, p->replace, len - i);
				return;
			}
		}
	}
}

int vr_scrub_flush(VrScrub *s, GByteArray *out)
{
	if (s->detected < 0 && s->held->len) {
		/* What is held begins a pattern, and may hold others whole. */
		gsize at = 0;
		int id = -1;
		if (scan(s, s->held->data, s->held->len, FALSE, FALSE, &at, &id) == SCAN_DETECTED) {
			g_byte_array_append(out, s->held->data, (guint)at);
			s->detected = id;
		} else {
			mask_tail(s, s->held->data, s->held->len);
			g_byte_array_append(out, s->held->data, s->held->len);
		}
	}
	if (s->held->len)
		explicit_bzero(s->held->data, s->held->len);
	g_byte_array_set_size(s->held, 0);
	return s->detected;
}

int vr_scrub_buffer(const VrScrub *s, guint8 *buf, gsize len, gboolean case_fold)
{
	gsize at = 0;
	int id = -1;
	/* Several replacements, and a detection only from the start: keep going
	 * after a detected one would not change what is reported. */
	return scan(s, buf, len, case_fold, FALSE, &at, &id) == SCAN_DETECTED ? id : -1;
}
