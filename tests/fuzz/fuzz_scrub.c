/* libFuzzer target: the stream scrubber (net/scrub.c), which keeps the
 * real values of keys out of what comes back from a bound host.
 *
 * Input: byte 0 = how many bytes to feed at a time (1 + b % 64), bytes 1
 * and 2 = the lengths of two patterns taken from the start of the rest
 * (1 + b % 24 each; the first is replaced by its reversal, the second only
 * detected), then the stream. Checks, beyond "no crash":
 *  - fed in pieces or at once, the output and the detection are the same;
 *  - nothing is lost or added: without a detection the output is exactly
 *    as long as the input, with one it is no longer than the input;
 *  - at most the longest pattern minus one byte is ever held back;
 *  - the replaced pattern never comes out: its replacement is one letter
 *    the pattern does not hold, so any occurrence left in the output is
 *    one the scrubber let through. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "net/scrub.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Which check failed, then the crash libFuzzer keeps. */
static void fail(const char *why)
{
	fprintf(stderr, "%s: %s\n", __FILE__, why);
	abort();
}

static int run(const VrScrub *proto, const guint8 *buf, gsize len, gsize step, gsize max_held, GByteArray *out)
{
	VrScrub *s = vr_scrub_copy(proto);
	int id = -1;
	for (gsize i = 0; i < len && id < 0; i += step) {
		id = vr_scrub_feed(s, buf + i, MIN(step, len - i), out);
		if (vr_scrub_held(s) > max_held)
			fail("more held back than the longest pattern minus one");
	}
	if (id < 0) {
		vr_scrub_flush(s, out);
		id = vr_scrub_feed(s, NULL, 0, out); /* a pattern found whole in what was held */
	}
	vr_scrub_free(s);
	return id;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 3 || size > (1u << 16))
		return 0;
	gsize step = 1 + data[0] % 64, n1 = 1 + data[1] % 24, n2 = 1 + data[2] % 24;
	if (size < 3 + n1 + n2)
		return 0;
	g_autofree char *find = g_strndup((const char *)data + 3, n1);
	g_autofree char *detect = g_strndup((const char *)data + 3 + n1, n2);
	if (strlen(find) != n1 || strlen(detect) != n2)
		return 0; /* patterns are C strings */
	char fill = 'A';
	while (fill < 'z' && strchr(find, fill))
		fill++;
	if (strchr(find, fill))
		return 0;
	g_autofree char *replace = g_strnfill(n1, fill);
	const guint8 *stream = data + 3 + n1 + n2;
	gsize len = size - 3 - n1 - n2;

	VrScrub *s = vr_scrub_new();
	vr_scrub_add(s, find, replace, 0);
	vr_scrub_add(s, detect, NULL, 1);
	gsize max_held = MAX(n1, n2) - 1;
	GByteArray *whole = g_byte_array_new(), *steps = g_byte_array_new();
	int id_whole = run(s, stream, len, len ? len : 1, max_held, whole);
	int id_steps = run(s, stream, len, step, max_held, steps);
	if (id_whole != id_steps || whole->len != steps->len ||
	    (whole->len && memcmp(whole->data, steps->data, whole->len) != 0))
		fail("pieces and the whole differ");
	if ((id_whole < 0 && whole->len != len) || whole->len > len)
		fail("bytes lost or added");
	if (id_whole < 0 && whole->len && memmem(whole->data, whole->len, find, n1) != NULL)
		fail("the pattern came out");
	g_byte_array_unref(whole);
	g_byte_array_unref(steps);
	vr_scrub_free(s);
	return 0;
}
