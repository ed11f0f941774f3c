/* `vault-run audit verify`: checks a log's hash chain (audit/chain.h). */
#pragma once
#include <stdbool.h>
#include <stdint.h>

typedef enum {
	VR_VERIFY_SEALED = 0,   /* every record chains, and the last is the seal */
	VR_VERIFY_TAMPERED,     /* a record does not chain, parse, or count: see bad_line */
	VR_VERIFY_UNSEALED,     /* chain intact but no seal: killed run, or the tail was cut */
	VR_VERIFY_NO_CHAIN,     /* the log carries no hashes (a writer without the chain) */
} VrVerifyState;

typedef struct {
	VrVerifyState state;
	unsigned long bad_line;     /* first line that broke the chain (TAMPERED) */
	char reason[160];
	unsigned long records;
	char final_hash[65];        /* the last good record's hash ("" if none) */
	char first_prev[65];        /* the chain's start: genesis, or a rotated file's "prev" */
	bool expect_mismatch;       /* --expect HASH given and not the final hash */
} VrVerifyResult;

/* Reads PATH to its end. EXPECT (may be NULL): the hash the seal must have.
 * -errno when PATH cannot be read; else 0 with *ret filled. */
int vr_audit_verify_file(const char *path, const char *expect, VrVerifyResult *ret);
/* 0 sealed (and as expected), 1 tampered or not as expected, 2 unsealed,
 * 3 no chain. */
int vr_audit_verify_exit_code(const VrVerifyResult *r);
