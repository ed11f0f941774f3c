/* policy/redact.c — same-length masking for the redact class. The view
 * serves the masked bytes at the same offsets, so sizes, mmap and partial
 * reads stay consistent; only '\n' survives inside a secret so line counts
 * (and editors' views) do not shift. */
#include <string.h>

#include "policy/policy.h"

static gboolean is_key_char(char c)
{
	return g_ascii_isalnum(c) || c == '_' || c == '-' || c == '.';
}

static gboolean starts_with(const char *p, const char *end, const char *prefix)
{
	gsize n = strlen(prefix);
	return (gsize)(end - p) >= n && memcmp(p, prefix, n) == 0;
}

/* "KEY=VALUE", "export KEY=VALUE", "KEY: VALUE" (dotenv, ini, yaml-ish):
 * masks VALUE, keeping surrounding whitespace and a pair of enclosing quotes
 * so the file still parses. Comments and section headers stay. */
static void mask_assignment(char *p, char *end)
{
	while (p < end && (*p == ' ' || *p == '\t'))
		p++;
	if (p == end || *p == '#' || *p == ';' || *p == '[')
		return;
	if (starts_with(p, end, "export ") || starts_with(p, end, "export\t"))
		p += 7;
	while (p < end && (*p == ' ' || *p == '\t'))
		p++;
	char *key = p;
	while (p < end && is_key_char(*p))
		p++;
	if (p == key)
		return;
	while (p < end && (*p == ' ' || *p == '\t'))
		p++;
	if (p == end || (*p != '=' && *p != ':'))
		return;
	p++;
	while (p < end && (*p == ' ' || *p == '\t'))
		p++;
	char *vend = end;
	while (vend > p && (vend[-1] == ' ' || vend[-1] == '\t' || vend[-1] == '\r'))
		vend--;
	if (vend - p >= 2 && (*p == '"' || *p == '\'') && vend[-1] == *p) {
		p++;
		vend--;
	}
	memset(p, '*', (gsize)(vend - p));
}

void vr_redact_mask(char *buf, size_t len)
{
	char *end = buf + len;
	gboolean in_pem = FALSE;
	for (char *line = buf; line < end;) {
		char *nl = memchr(line, '\n', (gsize)(end - line));
		char *lend = nl ? nl : end;
		char *t = line;
		while (t < lend && (*t == ' ' || *t == '\t'))
			t++;
		if (in_pem) {
			if (starts_with(t, lend, "-----END ")) {
				in_pem = FALSE;
			} else {
				for (char *q = line; q < lend; q++)
					if (*q != '\r')
						*q = '*';
			}
		} else if (starts_with(t, lend, "-----BEGIN ")) {
			in_pem = TRUE;
		} else {
			mask_assignment(line, lend);
		}
		line = nl ? nl + 1 : end;
	}
}
