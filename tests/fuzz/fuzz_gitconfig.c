/* libFuzzer target: the git config parser and the gate (policy/gitconfig.h)
 * on any bytes. The parser keeps its entries inside the input, in order;
 * the gate, given the input split at its first NUL into the current file
 * and the new one (and, from the first byte, a masked copy of the current
 * file), never crashes, and what it accepts is the new file with only
 * masked lines given back their bytes (same length). Agreement with git
 * itself is tests/unit/test_gitconfig.c's differential test. */
#include <stdint.h>
#include <string.h>

#include "policy/gitconfig.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_entries(const char *buf, size_t len)
{
	VrGitConfig *c = vr_gitconfig_parse(buf, len);
	gsize prev = 0;
	for (guint i = 0; i < c->entries->len; i++) {
		const VrGitConfigEntry *e = &g_array_index(c->entries, VrGitConfigEntry, i);
		if (e->start < prev || e->start >= e->end || e->end > len || e->line > e->last_line ||
		    !e->key || !*e->key || !e->raw)
			__builtin_trap();
		prev = e->end;
		vr_gitconfig_key_kind(e->key);
		if (e->value)
			vr_gitconfig_url_problem(e->value);
	}
	if (c->status == VR_GITCONFIG_UNSUPPORTED && c->entries->len)
		__builtin_trap();
	vr_gitconfig_free(c);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1)
		return 0;
	const char *buf = (const char *)data + 1;
	size_t len = size - 1;
	check_entries(buf, len);

	const char *nul = memchr(buf, '\0', len);
	if (!nul)
		return 0;
	size_t cur_len = (size_t)(nul - buf);
	const char *new = nul + 1;
	size_t new_len = len - cur_len - 1;
	/* A masked copy: every byte the first byte's bit pattern picks turns
	 * into '*' (newlines kept), as the scanner's masking does. */
	char *masked = NULL;
	if (data[0] & 1) {
		masked = g_memdup2(buf, cur_len);
		for (size_t i = 0; i < cur_len; i++)
			if (masked[i] != '\n' && masked[i] != '\r' && ((i * 7 + data[0]) & 6) == 0)
				masked[i] = '*';
	}
	static const char *const paths[] = {".git/config", ".git/modules/a/config", "debian/config"};
	VrGitGateVerdict v = {0};
	GByteArray *out = NULL;
	gboolean ok = vr_gitgate_decide(paths[(data[0] >> 1) % 3], data[0] & 8 ? NULL : buf, cur_len,
	                                masked, new, new_len, &out, &v);
	if (ok != (out != NULL) || (!ok && !v.reason) || (ok && out->len != new_len))
		__builtin_trap();
	if (ok && !masked && memcmp(out->data, new, new_len) != 0)
		__builtin_trap();
	if (out)
		g_byte_array_unref(out);
	vr_gitgate_verdict_clear(&v);
	g_free(masked);
	return 0;
}
