/* Verifying an audit log's hash chain. A log passes only when every line is
 * a record whose hash chains from the one before, the seq numbers follow
 * each other, and the last record is a seal counting the records before it:
 * so a flipped byte, a deleted, inserted or reordered record and a cut tail
 * are all caught (the last one as "unsealed", which a run killed before its
 * seal also is; --expect tells those apart when the final hash is known). */
#include "audit/verify.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "audit/chain.h"
#include "audit/read.h"

static void tampered(VrVerifyResult *r, unsigned long line, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void tampered(VrVerifyResult *r, unsigned long line, const char *fmt, ...)
{
	va_list ap;
	r->state = VR_VERIFY_TAMPERED;
	r->bad_line = line;
	va_start(ap, fmt);
	vsnprintf(r->reason, sizeof r->reason, fmt, ap);
	va_end(ap);
}

int vr_audit_verify_file(const char *path, const char *expect, VrVerifyResult *ret)
{
	VrAuditReader *rd;
	int err = vr_audit_reader_open(path, &rd);
	if (err < 0)
		return err;
	memset(ret, 0, sizeof *ret);
	VrAuditRecord rec;
	vr_audit_record_init(&rec);
	char prev[VR_AUDIT_HASH_HEX_LEN + 1] = VR_AUDIT_CHAIN_GENESIS;
	int64_t last_seq = 0;
	bool sealed = false;
	int n;

	while ((n = vr_audit_reader_next(rd, &rec)) != 0) {
		unsigned long line = vr_audit_reader_lineno(rd);
		if (n == -EBADMSG) {
			if (vr_audit_reader_unterminated(rd) && !sealed) {
				/* A record cut short at the very end: the writer died in
				 * the middle of it, or the file was truncated. */
				snprintf(ret->reason, sizeof ret->reason,
				         "line %lu: last record incomplete", line);
				ret->state = VR_VERIFY_UNSEALED;
				goto out;
			}
			tampered(ret, line, "not a JSON record (%s)", vr_audit_reader_error(rd));
			goto out;
		}
		if (n < 0) {
			err = n;
			goto out;
		}
		if (sealed) {
			tampered(ret, line, "a record after the seal");
			goto out;
		}
		size_t body_len;
		const char *hash;
		if (vr_audit_chain_split(rec.line, rec.line_len, &body_len, &hash) < 0) {
			if (ret->records == 0) {
				ret->state = VR_VERIFY_NO_CHAIN;
				snprintf(ret->reason, sizeof ret->reason, "the records carry no \"hash\"");
				goto out;
			}
			tampered(ret, line, "no \"hash\" as the record's last member");
			goto out;
		}
		if (ret->records == 0) {
			const char *p = vr_json_get_string(&rec.obj, "prev");
			if (p) {
				if (!vr_audit_chain_is_hash(p, strlen(p))) {
					tampered(ret, line, "\"prev\" is not a hash");
					goto out;
				}
				memcpy(prev, p, sizeof prev);
			}
			memcpy(ret->first_prev, prev, sizeof prev);
		}
		if (rec.seq < 1) {
			tampered(ret, line, "no \"seq\"");
			goto out;
		}
		if (ret->records > 0 && rec.seq != last_seq + 1) {
			tampered(ret, line, "seq %lld follows %lld", (long long)rec.seq, (long long)last_seq);
			goto out;
		}
		char want[VR_AUDIT_HASH_HEX_LEN + 1];
		vr_audit_chain_next(prev, rec.line, body_len, want);
		if (memcmp(want, hash, VR_AUDIT_HASH_HEX_LEN) != 0) {
			tampered(ret, line, "hash does not chain from the previous record");
			goto out;
		}
		if (rec.op && strcmp(rec.op, "seal") == 0) {
			int64_t count;
			if (!vr_json_get_int64(&rec.obj, "records", &count) || count != rec.seq - 1) {
				tampered(ret, line, "the seal's \"records\" is not %lld", (long long)rec.seq - 1);
				goto out;
			}
			sealed = true;
		}
		memcpy(prev, want, sizeof prev);
		memcpy(ret->final_hash, want, sizeof want);
		last_seq = rec.seq;
		ret->records++;
	}
	if (ret->records == 0) {
		ret->state = VR_VERIFY_UNSEALED;
		snprintf(ret->reason, sizeof ret->reason, "no records");
	} else if (!sealed) {
		ret->state = VR_VERIFY_UNSEALED;
		snprintf(ret->reason, sizeof ret->reason, "no seal after record %lld", (long long)last_seq);
	} else {
		ret->state = VR_VERIFY_SEALED;
	}
out:
	if (err == 0 && expect && ret->state != VR_VERIFY_NO_CHAIN &&
	    strcmp(expect, ret->final_hash) != 0)
		ret->expect_mismatch = true;
	vr_audit_record_clear(&rec);
	vr_audit_reader_free(rd);
	return err;
}

int vr_audit_verify_exit_code(const VrVerifyResult *r)
{
	switch (r->state) {
	case VR_VERIFY_SEALED: return r->expect_mismatch ? 1 : 0;
	case VR_VERIFY_TAMPERED: return 1;
	case VR_VERIFY_UNSEALED: return r->expect_mismatch ? 1 : 2;
	case VR_VERIFY_NO_CHAIN: return 3;
	}
	return 1;
}
