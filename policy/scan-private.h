/* policy/scan-private.h — for tests and the fuzzer only. */
#pragma once
#include "policy/scan.h"

/* vr_scan_buffer() without the AVX2 block loop (whose prefilter also drops
 * '=' and ':' anchors that cannot follow a secret's key): the portable
 * path, against which the fast one is checked hit for hit. */
void vr_scan_buffer_portable(const char *buf, size_t len, GArray *hits);
