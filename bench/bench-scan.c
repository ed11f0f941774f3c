/* bench-scan: throughput of the secret-content scanner (policy/scan.c).
 *
 *   build/bench/bench-scan [MiB]        (default 64)
 *
 * Generates reproducible source-like text (C, Python, YAML, shell, Markdown
 * lines with random identifiers — full of '=', ':', '_', '-', '@', the bytes
 * the prefilter looks at), scans it several times and prints the best
 * throughput; then the same text with a secret planted every ~50 lines.
 * Target (issue 8): >= 1000 MB/s on the no-hit text. MB = 10^6 bytes. */
#include <glib.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "policy/scan.h"

static const char *const templates[] = {
	"static int %s_%s(struct %s *%s, size_t %s_len)\n{\n",
	"\tint %s = %s_%s(%s, %d);\n",
	"\tif (%s->%s == NULL || %s_count > %d)\n\t\treturn -EINVAL;\n",
	"\tfor (size_t i = 0; i < %s_len; i++) %s[i] = %s_%s(%s, i);\n",
	"/* %s the %s before %s: the %s may race with %s (see %s.c). */\n",
	"def %s_%s(self, %s: int = %d) -> dict:\n    return {\"%s\": self.%s, \"%s\": %d}\n",
	"    %s = os.environ.get(\"%s_%s\", \"%s\")\n",
	"%s:\n  %s: \"%s-%s\"\n  %s_%s: %d\n  image: registry.example.com/%s/%s:v%d\n",
	"export %s_%s=\"$HOME/.%s/%s:$PATH\"\n",
	"- [%s](https://docs.example.com/%s/%s) — %s the %s with `--%s-%s`\n",
	"    @pytest.mark.parametrize(\"%s\", [%d, %d])\n",
	"\tconst char *%s_token = getenv(\"%s_TOKEN\"); /* never logged */\n",
	"    password: \"${%s_PASSWORD}\"  # from %s\n",
	"\t%s = %s ? %s->%s : %s_default; // %s::%s\n",
};
static const char *const words[] = {
	"buffer", "config", "parse", "node", "value", "entry", "list", "state", "cache", "read",
	"write", "client", "server", "request", "handle", "path", "name", "size", "open", "close",
	"user", "session", "queue", "item", "flags", "mode", "key", "offset", "index", "result",
	"error", "table", "hash", "lookup", "policy", "rule", "view", "inode", "audit", "event",
};
static const char *const secrets[] = {
	"AWS_ACCESS_KEY_ID=AKIAOXYIMCFIP6NZB353\n",
	"token = \"ghp_rcBqyt1T5AlQzhk7Q2bmXkthaYWyv1kKB5oi\"\n",
	"DATABASE_URL=postgres://app:q84Zm9hacCT1nuub@db:5432/app\n",
	"    api_key: \"q84Zm9hacCT1nuub\"\n",
	"jwt = eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U\n",
	"-----BEGIN PRIVATE KEY-----\nMIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQC7\n-----END PRIVATE KEY-----\n",
};

static GString *generate(size_t bytes, gboolean with_hits, GRand *r)
{
	GString *s = g_string_sized_new(bytes + 4096);
	unsigned line = 0;
	while (s->len < bytes) {
		if (with_hits && ++line % 50 == 0) {
			g_string_append(s, secrets[g_rand_int_range(r, 0, G_N_ELEMENTS(secrets))]);
			continue;
		}
		const char *t = templates[g_rand_int_range(r, 0, G_N_ELEMENTS(templates))];
		for (const char *p = t; *p; p++) {
			if (p[0] == '%' && p[1] == 's') {
				g_string_append(s, words[g_rand_int_range(r, 0, G_N_ELEMENTS(words))]);
				p++;
			} else if (p[0] == '%' && p[1] == 'd') {
				g_string_append_printf(s, "%d", g_rand_int_range(r, 0, 5000));
				p++;
			} else {
				g_string_append_c(s, *p);
			}
		}
	}
	return s;
}

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* Best of `rounds` scans, in MB/s; *ret_hits gets the hit count. */
static double measure(const GString *text, int rounds, guint *ret_hits)
{
	double best = 0;
	for (int i = 0; i < rounds; i++) {
		g_autoptr(GArray) hits = g_array_new(FALSE, FALSE, sizeof(VrScanHit));
		double t0 = now();
		vr_scan_buffer(text->str, text->len, hits);
		double dt = now() - t0;
		double mbs = text->len / 1e6 / (dt > 0 ? dt : 1e-9);
		if (mbs > best)
			best = mbs;
		*ret_hits = hits->len;
	}
	return best;
}

int main(int argc, char **argv)
{
	size_t mib = argc > 1 ? strtoul(argv[1], NULL, 10) : 64;
	if (mib == 0)
		mib = 64;
	GRand *r = g_rand_new_with_seed(20240808);
	GString *clean = generate(mib << 20, FALSE, r);
	GString *dirty = generate(mib << 20, TRUE, r);
	guint clean_hits, dirty_hits;
	double clean_mbs = measure(clean, 5, &clean_hits);
	double dirty_mbs = measure(dirty, 5, &dirty_hits);

	/* memchr over the same bytes: the "memory speed" the target refers to. */
	double t0 = now();
	size_t nl = 0;
	for (const char *p = clean->str; (p = memchr(p, '\n', clean->len - (size_t)(p - clean->str))); p++)
		nl++;
	double memchr_mbs = clean->len / 1e6 / (now() - t0);

	printf("bench-scan: %zu MiB of generated source text, best of 5\n", mib);
	printf("  no-hit text : %8.0f MB/s (%u hits)\n", clean_mbs, clean_hits);
	printf("  with hits   : %8.0f MB/s (%u hits, one secret per ~50 lines)\n", dirty_mbs, dirty_hits);
	printf("  memchr('\\n') : %8.0f MB/s (reference, %zu lines)\n", memchr_mbs, nl);
	printf("  target >= 1000 MB/s on no-hit text: %s\n", clean_mbs >= 1000 ? "met" : "NOT met");
	g_string_free(clean, TRUE);
	g_string_free(dirty, TRUE);
	g_rand_free(r);
	return clean_hits == 0 && dirty_hits > 0 ? 0 : 1;
}
