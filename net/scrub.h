/* A streaming matcher for the real values of keys and their sentinels
 * (net/keys.h): it replaces each value by its sentinel (the same length,
 * so Content-Length, chunk sizes and offsets stay true) or, for a pattern
 * with no replacement, reports it (the tripwire). To keep a stream (SSE,
 * chunked) flowing it holds back only the longest suffix of what it was
 * given that could begin a pattern; everything before goes out at once.
 *
 * Pure: bytes in, bytes out (tests/fuzz/fuzz_scrub.c drives it). */
#pragma once
#include <glib.h>

typedef struct VrScrub VrScrub;

VrScrub *vr_scrub_new(void);
void vr_scrub_free(VrScrub *s);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(VrScrub, vr_scrub_free)

/* find (not empty) is replaced by replace (the same length), or, when
 * replace is NULL, detected: feed reports id. Copies both (the copies are
 * zeroed when freed: they are secrets). A scrubber is built before it is
 * fed and then shared by none: one per stream, or vr_scrub_copy. */
void vr_scrub_add(VrScrub *s, const char *find, const char *replace, int id);
VrScrub *vr_scrub_copy(const VrScrub *s);
guint vr_scrub_count(const VrScrub *s);

/* The next bytes of the stream: what may go on is appended to out, with
 * every replacement made. -1, or the id of the first detected pattern:
 * nothing from its first byte on was appended, and from then on the
 * scrubber takes nothing more (it returns that id again). */
int vr_scrub_feed(VrScrub *s, const guint8 *buf, gsize len, GByteArray *out);
/* The end of the stream (or of a body): the bytes held back, which no
 * pattern can complete now, with any pattern whole in them replaced and
 * the start of one to be replaced that runs to the end replaced by the
 * start of its replacement (a value cut by a response's end never goes
 * out in part). A pattern detected in them: nothing from it on. -1, or
 * the id of the first pattern detected in the stream (now or before). */
int vr_scrub_flush(VrScrub *s, GByteArray *out);
/* Bytes held back now (at most the longest pattern minus one). */
gsize vr_scrub_held(const VrScrub *s);

/* A whole buffer at once (a head, a host name), in place: replacements
 * made, and the id of the first detected pattern from the start, or -1.
 * case_fold compares ASCII letters without case (DNS names). */
int vr_scrub_buffer(const VrScrub *s, guint8 *buf, gsize len, gboolean case_fold);
