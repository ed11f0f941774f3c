/* Keys in files (docs/network.md, "Keys in files"): a harness's credential
 * file, served through a view, shows each real value it holds as that
 * value's sentinel (the same length: sizes and offsets stay true), and a
 * sentinel written back becomes the real value again on the host.
 *
 * A VrKeyMask holds the (real, sentinel) pairs and the key files' paths
 * (relative to the view's root). Masking replaces every byte of every
 * occurrence of a real value, found in the original bytes, by the bytes of
 * its sentinel: overlapping or repeated values leave no byte of a value
 * behind. Unmasking does the same from sentinels to real values.
 *
 * The pairs cross from the supervisor to the view daemon in a sealed memfd,
 * never argv or the environment (vr_keymask_write / vr_keymask_read).
 * Pure but for that descriptor: tests/unit/test_keymask.c drives it. */
#pragma once
#include <glib.h>
#include <stdbool.h>

typedef struct VrKeyMask VrKeyMask;

VrKeyMask *vr_keymask_new(void);
/* Zeroes every value before freeing. */
void vr_keymask_free(VrKeyMask *m);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(VrKeyMask, vr_keymask_free)

/* REAL and SENTINEL: the same length, not empty (copied). */
/* A copy of M (pairs and paths). */
VrKeyMask *vr_keymask_copy(const VrKeyMask *m);
void vr_keymask_add_pair(VrKeyMask *m, const char *real, const char *sentinel);
void vr_keymask_add_path(VrKeyMask *m, const char *relpath);
guint vr_keymask_pairs(const VrKeyMask *m);
gboolean vr_keymask_has_path(const VrKeyMask *m, const char *relpath);
const GPtrArray *vr_keymask_paths(const VrKeyMask *m);

/* In place: every real value becomes its sentinel. The number of
 * occurrences replaced. */
guint vr_keymask_mask(const VrKeyMask *m, char *buf, gsize len);
/* In place: every sentinel becomes its real value. */
guint vr_keymask_unmask(const VrKeyMask *m, char *buf, gsize len);

/* The paths and pairs, to fd (0 or -errno), and back (NULL and *ret_r
 * -errno, -EBADMSG for records that do not parse). */
int vr_keymask_write(const VrKeyMask *m, int fd);
VrKeyMask *vr_keymask_read(int fd, int *ret_r);
