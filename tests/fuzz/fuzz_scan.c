/* libFuzzer target: the secret-content scanner. Any bytes in; checks that
 * hits stay inside the buffer, come sorted and disjoint, name a rule of the
 * table, that the fast path finds what the portable one finds, and that
 * masking keeps the length and touches only hit bytes. The
 * input buffer is exactly `size` bytes, so ASan catches any overread. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "policy/scan.h"
#include "policy/scan-private.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size > (1u << 20))
		return 0;
	size_t n_rules;
	const VrScanRule *rules = vr_scan_rules(&n_rules);
	GArray *hits = g_array_new(FALSE, FALSE, sizeof(VrScanHit));
	vr_scan_buffer((const char *)data, size, hits);
	size_t prev_end = 0;
	for (guint i = 0; i < hits->len; i++) {
		const VrScanHit *h = &g_array_index(hits, VrScanHit, i);
		if (h->len == 0 || h->start > size || h->len > size - h->start || h->start < prev_end ||
		    h->rule < rules || h->rule >= rules + n_rules)
			abort();
		prev_end = h->start + h->len;
	}
	/* The AVX2 prefilter drops anchors the portable path keeps: it may
	 * drop only what the matchers would reject. */
	GArray *portable = g_array_new(FALSE, FALSE, sizeof(VrScanHit));
	vr_scan_buffer_portable((const char *)data, size, portable);
	if (portable->len != hits->len || memcmp(portable->data, hits->data, hits->len * sizeof(VrScanHit)) != 0)
		abort();
	g_array_unref(portable);
	uint8_t *copy = malloc(size ? size : 1);
	if (size)
		memcpy(copy, data, size);
	vr_scan_mask((char *)copy, size, hits);
	size_t next = 0;
	for (guint i = 0; i <= hits->len; i++) {
		size_t stop = i < hits->len ? g_array_index(hits, VrScanHit, i).start : size;
		if (size && memcmp(copy + next, data + next, stop - next) != 0)
			abort(); /* a byte outside every hit changed */
		if (i < hits->len) {
			const VrScanHit *h = &g_array_index(hits, VrScanHit, i);
			for (size_t j = h->start; j < h->start + h->len; j++)
				if (copy[j] != '*' && copy[j] != '\n' && copy[j] != '\r')
					abort();
			next = h->start + h->len;
		}
	}
	/* Masked text scans again without trouble. */
	g_array_set_size(hits, 0);
	vr_scan_buffer((const char *)copy, size, hits);
	free(copy);
	g_array_free(hits, TRUE);
	return 0;
}
