/* policy/match.h — one .gitignore pattern, compiled; and match sets (hash
 * fast paths for literal names and "*.suffix"). Private to policy/ (and its
 * tests, the fuzzer and the benchmark). */
#pragma once
#include <glib.h>

typedef struct VrMatch VrMatch;

/* How a compiled pattern can be looked up without running the matcher. */
typedef enum {
	VR_MATCH_GENERAL, /* run vr_match_path */
	VR_MATCH_LITERAL, /* no slash, no wildcard: equal to the basename */
	VR_MATCH_SUFFIX,  /* "*SUFFIX", no slash, no wildcard in SUFFIX: basename ends with it */
} VrMatchShape;

/* Compiles one pattern as a .gitignore line would be read, without the
 * leading "!" (negation is the caller's rule kind). On a bad pattern returns
 * NULL and sets VR_POLICY_ERROR_PATTERN with a message saying what is wrong
 * (the caller prefixes source:line). */
VrMatch *vr_match_compile(const char *pattern, GError **error);
void vr_match_free(VrMatch *m);

/* relpath: relative to the project root, no leading '/'; basename: its last
 * component (a pointer into relpath). */
gboolean vr_match_path(const VrMatch *m, const char *relpath, const char *basename,
                       gboolean is_dir);

gboolean vr_match_anchored(const VrMatch *m);  /* matched against the whole path */
gboolean vr_match_dir_only(const VrMatch *m);  /* trailing '/' */
/* The glob matched (leading '/' and trailing '/' removed, escapes kept). */
const char *vr_match_glob(const VrMatch *m);
/* The fast-path shape; *ret_key is the literal name or the suffix. */
VrMatchShape vr_match_shape(const VrMatch *m, const char **ret_key);

/* git's wildmatch with WM_PATHNAME: '*' and '?' stop at '/', "**" between
 * slashes spans directories. TRUE on a match. */
gboolean vr_wildmatch(const char *pattern, const char *text);
/* Checks the bracket expressions and escapes of a glob; NULL when fine, else
 * a static string naming what is wrong and sets *ret_offset. */
const char *vr_glob_check(const char *glob, gsize *ret_offset);

/* A set of compiled patterns, each with a rank; a query returns the highest
 * rank among the matching entries. Literal names and suffixes are hash
 * look-ups; the rest is scanned from the highest rank down, stopping early. */
typedef struct VrMatchSet VrMatchSet;
VrMatchSet *vr_match_set_new(void);
void vr_match_set_free(VrMatchSet *set);
/* The set does not own m. */
void vr_match_set_add(VrMatchSet *set, const VrMatch *m, gint64 rank, gpointer data);
/* Highest-ranked match (returns its data, sets *ret_rank), or NULL. */
gpointer vr_match_set_best(const VrMatchSet *set, const char *relpath, gboolean is_dir,
                           gint64 *ret_rank);
/* The best for relpath as a file and as a directory, in one pass. */
void vr_match_set_best_both(const VrMatchSet *set, const char *relpath, gpointer *ret_file, gpointer *ret_dir);
