/* One size grammar for every option and config key that takes a size
 * (--journal-max-size, --audit-max-size, --scan-max-size, --memory and
 * their config keys), in `vault-run mount` and in a run alike:
 *
 *   1048576        a bare number is bytes;
 *   512K, 64M, 2G, 1T, 2GiB   K, M, G, T and KiB, MiB, GiB, TiB (any case)
 *                  are powers of 1024; a fraction may come before a unit
 *                  ("1.5G"), whole bytes are kept;
 *   64MB, 1GB      refused, with a hint: some read MB as 10^6 bytes, and
 *                  a limit is no place to guess which was meant.
 *
 * Each caller adds its own range. Plain C, no glib: any room may use it. */
#pragma once
#include <stdint.h>

/* What "expected …" says of the grammar; callers add their range. */
#define VR_SIZE_SYNTAX "a size such as 1048576 (bytes), 512K, 64M or 2GiB"

/* TEXT as a number of bytes in *RET (untouched on error). 0; -EINVAL
 * when it is not a size; -EDOM for a decimal unit (KB, MB, GB, TB);
 * -ERANGE past 2^64-1. */
int vr_size_parse(const char *text, uint64_t *ret);

/* For the error about TEXT refused as a size: SYNTAX (the caller's
 * "expected" text), or, when TEXT used a decimal unit, why that is
 * refused and what to write instead. */
const char *vr_size_expected(const char *text, const char *syntax);
