/* The audit hash chain: see audit/chain.h for the format. */
#include "audit/chain.h"

#include <errno.h>
#include <glib.h>
#include <stdio.h>
#include <string.h>

#define SUFFIX_HEAD ",\"hash\":\""

void vr_audit_chain_next(const char *prev_hex, const char *body, size_t body_len, char *ret_hex)
{
	GChecksum *c = g_checksum_new(G_CHECKSUM_SHA256);
	g_checksum_update(c, (const guchar *)prev_hex, VR_AUDIT_HASH_HEX_LEN);
	g_checksum_update(c, (const guchar *)"\n", 1);
	g_checksum_update(c, (const guchar *)body, (gssize)body_len);
	/* g_checksum_get_string gives lowercase hex, 64 chars for SHA-256. */
	memcpy(ret_hex, g_checksum_get_string(c), VR_AUDIT_HASH_HEX_LEN);
	ret_hex[VR_AUDIT_HASH_HEX_LEN] = '\0';
	g_checksum_free(c);
}

int vr_audit_chain_format(char *buf, size_t size, uint64_t seq, const char *members,
                          size_t members_len, char *prev_hex, size_t *ret_len)
{
	if (members_len == 0)
		return -EINVAL;
	char head[40];
	int hn = snprintf(head, sizeof head, "{\"seq\":%llu,", (unsigned long long)seq);
	size_t body_len = (size_t)hn + members_len;
	size_t total = body_len + VR_AUDIT_CHAIN_SUFFIX_LEN + 1; /* + newline */
	if (total + 1 > size)  /* + NUL, so BUF can be printed as a string */
		return -ENOSPC;
	memcpy(buf, head, (size_t)hn);
	memcpy(buf + hn, members, members_len);
	char hex[VR_AUDIT_HASH_HEX_LEN + 1];
	vr_audit_chain_next(prev_hex, buf, body_len, hex);
	char *p = buf + body_len;
	memcpy(p, SUFFIX_HEAD, 9);
	memcpy(p + 9, hex, VR_AUDIT_HASH_HEX_LEN);
	memcpy(p + 9 + VR_AUDIT_HASH_HEX_LEN, "\"}\n", 4);
	memcpy(prev_hex, hex, VR_AUDIT_HASH_HEX_LEN + 1);
	*ret_len = total;
	return 0;
}

bool vr_audit_chain_is_hash(const char *s, size_t len)
{
	if (len != VR_AUDIT_HASH_HEX_LEN)
		return false;
	for (size_t i = 0; i < len; i++)
		if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f')))
			return false;
	return true;
}

int vr_audit_chain_split(const char *line, size_t len, size_t *ret_body_len, const char **ret_hash)
{
	if (len < VR_AUDIT_CHAIN_SUFFIX_LEN + 1)
		return -EINVAL;
	size_t body_len = len - VR_AUDIT_CHAIN_SUFFIX_LEN;
	const char *suffix = line + body_len;
	if (memcmp(suffix, SUFFIX_HEAD, 9) != 0 || memcmp(line + len - 2, "\"}", 2) != 0 ||
	    !vr_audit_chain_is_hash(suffix + 9, VR_AUDIT_HASH_HEX_LEN))
		return -EINVAL;
	*ret_body_len = body_len;
	*ret_hash = suffix + 9;
	return 0;
}
