/* The audit log's hash chain: pure functions shared by the writer (the view
 * daemon) and the reader (`vault-run audit verify`). No I/O, no locks.
 *
 * Format. Every record is one line
 *
 *     {"seq":N,<members>,"hash":"<64 lowercase hex>"}\n
 *
 * where N counts the run's records from 1 (it continues across rotated
 * files), "hash" is the LAST member, written exactly as above (no spaces),
 * and
 *
 *     hash = hex(SHA-256(prev_hash_hex || "\n" || body))
 *
 * with body = the line's bytes before `,"hash":` (so `{"seq":N,<members>`)
 * and prev_hash_hex = the previous record's hash; for the first record of a
 * file it is the file's first record's "prev" member if it has one (a
 * rotated file continues its predecessor's chain) and else 64 '0's.
 *
 * The run's first record is op "run-start" (command, version, policy_hash,
 * features); its last is op "seal" with "records": the number of records
 * before it (= its own seq − 1). A chain without a seal is "unsealed" (the
 * run was killed, or the tail was cut). The chain is unkeyed: whoever can
 * rewrite the file can recompute it, which is why the seal's hash is also
 * printed by the supervisor and sent to syslog, for `verify --expect HASH`. */
#pragma once
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define VR_AUDIT_HASH_HEX_LEN 64
#define VR_AUDIT_CHAIN_GENESIS "0000000000000000000000000000000000000000000000000000000000000000"
/* `,"hash":"` + 64 hex + `"}` */
#define VR_AUDIT_CHAIN_SUFFIX_LEN (9 + VR_AUDIT_HASH_HEX_LEN + 2)

/* RET_HEX (65 bytes, NUL-terminated) = the hash of the record whose body is
 * BODY[0..body_len), chained to PREV_HEX (64 hex). */
void vr_audit_chain_next(const char *prev_hex, const char *body, size_t body_len, char *ret_hex);

/* For the writer: formats one complete record line, newline included,
 *     {"seq":SEQ,MEMBERS,"hash":"…"}\n
 * into BUF (SIZE bytes); MEMBERS is the inside of a JSON object without its
 * braces (`"ts":"…","op":"…"`, at least one member, no "seq"/"hash" of its
 * own). PREV_HEX (65 bytes) is read as the previous hash and overwritten with
 * this record's. *ret_len: the line's length. -ENOSPC when BUF is too small
 * (nothing changed), -EINVAL when MEMBERS is empty. */
int vr_audit_chain_format(char *buf, size_t size, uint64_t seq, const char *members,
                          size_t members_len, char *prev_hex, size_t *ret_len);

/* For the reader: splits a line (without its newline) into its body and the
 * 64-hex hash of its trailing `,"hash":"…"}`. -EINVAL when the line does not
 * end that way. RET_HASH points into LINE (not NUL-terminated). */
int vr_audit_chain_split(const char *line, size_t len, size_t *ret_body_len, const char **ret_hash);

/* True when S[0..64) is 64 lowercase hex digits. */
bool vr_audit_chain_is_hash(const char *s, size_t len);
