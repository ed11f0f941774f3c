/* policy/match-set.c — many patterns, one question: which matching pattern
 * ranks highest? Most real rules are literal names (".env", "id_rsa"),
 * literal paths (".git/config") or "*.suffix" ("*.pem"): those are hash
 * look-ups, so a decision costs a few look-ups plus the general patterns
 * that outrank the best hit so far. */
#include <string.h>

#include "policy/match.h"

typedef struct {
	const VrMatch *m;
	gint64 rank;
	gpointer data;
} Entry;

struct VrMatchSet {
	GHashTable *names;    /* basename → GArray of Entry, rank descending */
	GHashTable *paths;    /* whole relpath → same */
	GHashTable *suffixes; /* suffix → same */
	GArray *suffix_lens;  /* distinct suffix lengths (gsize), to know what to look up */
	GArray *general;      /* Entry, rank descending */
};

static void free_array(gpointer p) { g_array_unref(p); }

VrMatchSet *vr_match_set_new(void)
{
	VrMatchSet *set = g_new0(VrMatchSet, 1);
	set->names = g_hash_table_new_full(g_str_hash, g_str_equal, NULL, free_array);
	set->paths = g_hash_table_new_full(g_str_hash, g_str_equal, NULL, free_array);
	set->suffixes = g_hash_table_new_full(g_str_hash, g_str_equal, NULL, free_array);
	set->suffix_lens = g_array_new(FALSE, FALSE, sizeof(gsize));
	set->general = g_array_new(FALSE, FALSE, sizeof(Entry));
	return set;
}

void vr_match_set_free(VrMatchSet *set)
{
	if (!set)
		return;
	g_hash_table_unref(set->names);
	g_hash_table_unref(set->paths);
	g_hash_table_unref(set->suffixes);
	g_array_unref(set->suffix_lens);
	g_array_unref(set->general);
	g_free(set);
}

/* Keeps each array sorted by rank, highest first, so a scan can stop at the
 * first entry that cannot beat the best match found so far. */
static void insert_sorted(GArray *a, Entry e)
{
	guint i = 0;
	while (i < a->len && g_array_index(a, Entry, i).rank >= e.rank)
		i++;
	g_array_insert_val(a, i, e);
}

static void add_keyed(GHashTable *h, const char *key, Entry e)
{
	GArray *a = g_hash_table_lookup(h, key);
	if (!a) {
		a = g_array_new(FALSE, FALSE, sizeof(Entry));
		g_hash_table_insert(h, (gpointer)key, a);
	}
	insert_sorted(a, e);
}

void vr_match_set_add(VrMatchSet *set, const VrMatch *m, gint64 rank, gpointer data)
{
	Entry e = {m, rank, data};
	const char *key;
	switch (vr_match_shape(m, &key)) {
	case VR_MATCH_LITERAL:
		add_keyed(vr_match_anchored(m) ? set->paths : set->names, key, e);
		return;
	case VR_MATCH_SUFFIX: {
		gsize n = strlen(key);
		gboolean known = FALSE;
		for (guint i = 0; i < set->suffix_lens->len; i++)
			known |= g_array_index(set->suffix_lens, gsize, i) == n;
		if (!known)
			g_array_append_val(set->suffix_lens, n);
		add_keyed(set->suffixes, key, e);
		return;
	}
	case VR_MATCH_GENERAL:
		insert_sorted(set->general, e);
		return;
	}
}

/* The first entry of a bucket whose dirs-only condition holds: a keyed
 * entry matches by construction otherwise. */
static void best_in(GArray *a, gboolean is_dir, const Entry **best)
{
	if (!a)
		return;
	for (guint i = 0; i < a->len; i++) {
		const Entry *e = &g_array_index(a, Entry, i);
		if (*best && e->rank <= (*best)->rank)
			return;
		if (vr_match_dir_only(e->m) && !is_dir)
			continue;
		*best = e;
		return;
	}
}

gpointer vr_match_set_best(const VrMatchSet *set, const char *relpath, gboolean is_dir,
                           gint64 *ret_rank)
{
	const char *slash = strrchr(relpath, '/');
	const char *base = slash ? slash + 1 : relpath;
	gsize blen = strlen(base);
	const Entry *best = NULL;

	if (g_hash_table_size(set->names))
		best_in(g_hash_table_lookup(set->names, base), is_dir, &best);
	if (g_hash_table_size(set->paths))
		best_in(g_hash_table_lookup(set->paths, relpath), is_dir, &best);
	for (guint i = 0; i < set->suffix_lens->len; i++) {
		gsize n = g_array_index(set->suffix_lens, gsize, i);
		if (n <= blen)
			best_in(g_hash_table_lookup(set->suffixes, base + blen - n), is_dir, &best);
	}
	for (guint i = 0; i < set->general->len; i++) {
		const Entry *e = &g_array_index(set->general, Entry, i);
		if (best && e->rank <= best->rank)
			break;
		if (vr_match_path(e->m, relpath, base, is_dir)) {
			best = e;
			break;
		}
	}
	if (!best)
		return NULL;
	if (ret_rank)
		*ret_rank = best->rank;
	return best->data;
}

/* best_in for a file and a directory at once: a dirs-only entry can only
 * be the directory's. */
static void best_in_both(GArray *a, const Entry **file, const Entry **dir)
{
	if (!a)
		return;
	for (guint i = 0; i < a->len; i++) {
		const Entry *e = &g_array_index(a, Entry, i);
		gboolean want_file = !*file || e->rank > (*file)->rank;
		gboolean want_dir = !*dir || e->rank > (*dir)->rank;
		if (!want_file && !want_dir)
			return;
		if (want_dir)
			*dir = e;
		if (want_file && !vr_match_dir_only(e->m)) {
			*file = e;
			return;
		}
		if (!want_file)
			return;
	}
}

void vr_match_set_best_both(const VrMatchSet *set, const char *relpath, gpointer *ret_file, gpointer *ret_dir)
{
	const char *slash = strrchr(relpath, '/');
	const char *base = slash ? slash + 1 : relpath;
	gsize blen = strlen(base);
	const Entry *file = NULL, *dir = NULL;

	if (g_hash_table_size(set->names))
		best_in_both(g_hash_table_lookup(set->names, base), &file, &dir);
	if (g_hash_table_size(set->paths))
		best_in_both(g_hash_table_lookup(set->paths, relpath), &file, &dir);
	for (guint i = 0; i < set->suffix_lens->len; i++) {
		gsize n = g_array_index(set->suffix_lens, gsize, i);
		if (n <= blen)
			best_in_both(g_hash_table_lookup(set->suffixes, base + blen - n), &file, &dir);
	}
	/* One scan of the general patterns serves both: only a dirs-only
	 * pattern answers differently for a directory. */
	for (guint i = 0; i < set->general->len; i++) {
		const Entry *e = &g_array_index(set->general, Entry, i);
		gboolean want_file = !file || e->rank > file->rank;
		gboolean want_dir = !dir || e->rank > dir->rank;
		if (!want_file && !want_dir)
			break;
		if (vr_match_dir_only(e->m)) {
			if (want_dir && vr_match_path(e->m, relpath, base, TRUE))
				dir = e;
		} else if (vr_match_path(e->m, relpath, base, FALSE)) {
			if (want_file)
				file = e;
			if (want_dir)
				dir = e;
		}
	}
	*ret_file = file ? file->data : NULL;
	*ret_dir = dir ? dir->data : NULL;
}
