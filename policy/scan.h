/* policy/scan.h — find well-known secret shapes in a buffer, by content.
 *
 * Pure: no I/O, no FUSE. The view calls vr_scan_buffer() on a file's bytes at
 * open time and masks the returned ranges with vr_scan_mask() (same length,
 * offsets unchanged); `vault-run scan` prints the same hits without values.
 *
 * Hits are byte ranges of the *secret part* only (the password in a URL, the
 * value of a `token = ...` assignment, a PEM body between its BEGIN and END
 * lines), so what is masked is exactly what must not be seen and the rest of
 * the file still reads and diffs normally. */
#pragma once
#include <stddef.h>
#include <glib.h>

/* Bumped whenever what vr_scan_buffer finds changes for the same bytes:
 * verdicts kept across runs (run/git-history.c) are keyed by it. */
#define VR_SCAN_REVISION 2

typedef struct {
	const char *id;          /* stable, kebab-case: "aws-access-key-id" */
	const char *description; /* one line for humans, e.g. "AWS access key id" */
} VrScanRule;

typedef struct {
	size_t start, len;       /* the bytes to mask: [start, start + len) */
	const VrScanRule *rule;  /* points into the table of vr_scan_rules() */
} VrScanHit;

/* Scans buf[0..len) (need not be NUL-terminated; any bytes) and appends one
 * VrScanHit per finding to hits (a GArray of VrScanHit), in increasing order
 * of start, never overlapping one another. Hits already in the array are left
 * alone. Never reads outside buf. A PEM block whose END line is missing (a
 * truncated file or a chunk boundary) is masked to the end of buf: when in
 * doubt, mask. */
void vr_scan_buffer(const char *buf, size_t len, GArray *hits);

/* Overwrites each hit's bytes with '*', in place, except '\n' and '\r' (a PEM
 * body keeps its line structure). Ranges are clipped to len. */
void vr_scan_mask(char *buf, size_t len, const GArray *hits);

/* The rule table (static storage, *n_rules entries). */
const VrScanRule *vr_scan_rules(size_t *n_rules);
/* The rule with this id, or NULL (for config: per-rule on/off, allow-lists). */
const VrScanRule *vr_scan_rule_lookup(const char *id);

/* 1-based line and byte column of offset in buf (for reports). */
void vr_scan_line_col(const char *buf, size_t len, size_t offset,
                      size_t *ret_line, size_t *ret_col);
