/* policy/scan.c — the secret-content scanner (see scan.h, docs/scanning.md).
 *
 * Speed comes from the prefilter, not from the matchers: every secret shape
 * has a two-byte anchor that is rare in source text ("AK", "gh", "yJ", "-B",
 * "k_", an '=' or ':' operator, an '@' …). A 16-byte vector compare finds the
 * anchor positions; only there does a hand-written matcher for the rules
 * owning that anchor run. No regex engine, no allocation on the hot path.
 *
 * Safety: every matcher indexes through at() or checks `< len` before reading;
 * the fuzzer (tests/fuzz/fuzz_scan.c) holds us to it. */
#include "policy/scan.h"
#include "policy/scan-private.h"

#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#ifdef __SSE2__
#include <emmintrin.h>
#endif
#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#endif

enum {
	R_PEM,
	R_AWS_ID,
	R_AWS_SECRET,
	R_GITHUB,
	R_GITLAB,
	R_SLACK,
	R_STRIPE,
	R_OPENAI,
	R_ANTHROPIC,
	R_GOOGLE,
	R_JWT,
	R_URL,
	R_AUTH,
	R_GENERIC,
	R_COUNT
};

static const VrScanRule rules[R_COUNT] = {
	[R_PEM] = {"pem-private-key", "PEM private key block"},
	[R_AWS_ID] = {"aws-access-key-id", "AWS access key id"},
	[R_AWS_SECRET] = {"aws-secret-access-key", "AWS secret access key"},
	[R_GITHUB] = {"github-token", "GitHub token"},
	[R_GITLAB] = {"gitlab-token", "GitLab personal access token"},
	[R_SLACK] = {"slack-token", "Slack token"},
	[R_STRIPE] = {"stripe-key", "Stripe secret or restricted key"},
	[R_OPENAI] = {"openai-api-key", "OpenAI API key"},
	[R_ANTHROPIC] = {"anthropic-api-key", "Anthropic API key"},
	[R_GOOGLE] = {"google-api-key", "Google API key"},
	[R_JWT] = {"jwt", "JSON Web Token"},
	[R_URL] = {"url-credentials", "password embedded in a URL"},
	[R_AUTH] = {"http-authorization", "HTTP Authorization credentials (e.g. git http.extraheader)"},
	[R_GENERIC] = {"generic-secret-assignment", "high-entropy value assigned to a password/secret/token/key"},
};

/* ---- character classes ---------------------------------------------------- */

enum {
	C_ALNUM = 1 << 0,  /* [A-Za-z0-9] */
	C_UPDIG = 1 << 1,  /* [A-Z0-9] */
	C_B64URL = 1 << 2, /* [A-Za-z0-9_-] */
	C_B64 = 1 << 3,    /* [A-Za-z0-9+/] */
	C_IDENT = 1 << 4,  /* [A-Za-z0-9_.-]: a config key or variable name */
	C_USERINFO = 1 << 5, /* what may stand in user:pass of a URL */
	C_CRED = 1 << 6,   /* an Authorization credential: [A-Za-z0-9+/=._~-] */
	C_ALPHA = 1 << 7,
	C_STOP = 1 << 8,   /* ends a bare value: quotes , ; & ) } ] ( [ */
	C_OPMOD = 1 << 9,  /* before '=', makes it another operator: == != <= += … */
};

#define LOWER (C_ALNUM | C_B64URL | C_B64 | C_IDENT | C_USERINFO | C_CRED | C_ALPHA)
#define UPPER (LOWER | C_UPDIG)
#define DIGIT (C_ALNUM | C_UPDIG | C_B64URL | C_B64 | C_IDENT | C_USERINFO | C_CRED)

static const uint16_t cls[256] = {
	['a' ... 'z'] = LOWER,
	['A' ... 'Z'] = UPPER,
	['0' ... '9'] = DIGIT,
	['_'] = C_B64URL | C_IDENT | C_USERINFO | C_CRED,
	['-'] = C_B64URL | C_IDENT | C_USERINFO | C_CRED,
	['.'] = C_IDENT | C_USERINFO | C_CRED,
	['+'] = C_B64 | C_USERINFO | C_CRED,
	['/'] = C_B64 | C_CRED | C_OPMOD,
	['='] = C_USERINFO | C_CRED | C_OPMOD,
	['~'] = C_USERINFO | C_CRED,
	['!'] = C_USERINFO | C_OPMOD,
	['$'] = C_USERINFO,
	['&'] = C_USERINFO | C_STOP | C_OPMOD,
	['*'] = C_USERINFO | C_OPMOD,
	[','] = C_USERINFO | C_STOP,
	[';'] = C_USERINFO | C_STOP,
	[':'] = C_USERINFO,
	['%'] = C_USERINFO | C_OPMOD,
	['"'] = C_STOP,
	['\''] = C_STOP,
	['`'] = C_STOP,
	[')'] = C_STOP,
	['}'] = C_STOP,
	[']'] = C_STOP,
	['('] = C_STOP,
	['['] = C_STOP,
	['<'] = C_OPMOD,
	['>'] = C_OPMOD,
	['|'] = C_OPMOD,
	['^'] = C_OPMOD,
};

typedef struct {
	const unsigned char *b;
	size_t len;
	GArray *hits;
} Scan;

static inline bool is(const Scan *s, size_t i, uint16_t c) { return i < s->len && (cls[s->b[i]] & c); }
static inline unsigned char at(const Scan *s, size_t i) { return i < s->len ? s->b[i] : 0; }
static inline bool has_n(const Scan *s, size_t i, const char *lit, size_t n)
{
	return i <= s->len && s->len - i >= n && memcmp(s->b + i, lit, n) == 0;
}
/* lit must be a string literal: its length is known at compile time. */
#define has(s, i, lit) has_n((s), (i), "" lit, sizeof(lit) - 1)
/* Length of the run of class c starting at i, at most max. */
static size_t run(const Scan *s, size_t i, uint16_t c, size_t max)
{
	size_t n = 0;
	while (n < max && is(s, i + n, c))
		n++;
	return n;
}
/* A token starts at a word boundary: nothing alphanumeric right before it. */
static inline bool starts_word(const Scan *s, size_t i) { return i == 0 || !(cls[s->b[i - 1]] & C_ALNUM); }

static void add(Scan *s, size_t start, size_t len, int rule)
{
	if (len == 0)
		return;
	VrScanHit h = {start, len, &rules[rule]};
	g_array_append_val(s->hits, h);
}

/* ---- value heuristics ------------------------------------------------------ */

/* log2 without libm (the policy library links none): exponent from the
 * IEEE-754 bits, mantissa through the atanh series; error < 1e-6, plenty
 * for an entropy threshold. */
static double log2_approx(double x)
{
	uint64_t bits;
	memcpy(&bits, &x, sizeof bits);
	int e = (int)((bits >> 52) & 0x7ff) - 1023;
	bits = (bits & ~(0x7ffULL << 52)) | (1023ULL << 52);
	double m;
	memcpy(&m, &bits, sizeof m);
	double z = (m - 1) / (m + 1), z2 = z * z;
	double ln = 2 * z * (1 + z2 * (1.0 / 3 + z2 * (1.0 / 5 + z2 * (1.0 / 7 + z2 * (1.0 / 9 + z2 / 11)))));
	return e + ln * 1.4426950408889634;
}

/* Shannon entropy in bits per byte of v[0..n). */
static double entropy(const unsigned char *v, size_t n)
{
	unsigned counts[256] = {0};
	for (size_t i = 0; i < n; i++)
		counts[v[i]]++;
	double h = 0;
	for (size_t i = 0; i < 256; i++)
		if (counts[i]) {
			double p = (double)counts[i] / n;
			h -= p * log2_approx(p);
		}
	return h;
}

static bool contains_ci(const unsigned char *v, size_t n, const char *word)
{
	size_t w = strlen(word);
	for (size_t i = 0; i + w <= n; i++)
		if (g_ascii_strncasecmp((const char *)v + i, word, w) == 0)
			return true;
	return false;
}

/* Values that stand for a secret rather than being one: variables, template
 * slots, documentation examples, already-masked text. */
static bool is_placeholder(const unsigned char *v, size_t n)
{
	static const char *const words[] = {
		"changeme", "change-me", "change_me", "example", "placeholder", "your", "xxxx",
		"****", "dummy", "redacted", "replace", "insert", "fixme", "todo", "secret",
		"password", "passwd", "token", "sample", "fake", "test1234", "1234567", "abcdef",
	};
	if (n == 0)
		return true;
	if (v[0] == '$' || v[0] == '<' || v[0] == '{' || v[0] == '%' || v[0] == '*')
		return true;
	size_t same = 1;
	for (size_t i = 1; i < n; i++)
		same += v[i] == v[0];
	if (same == n)
		return true;
	for (size_t i = 0; i < G_N_ELEMENTS(words); i++)
		if (contains_ci(v, n, words[i]))
			return true;
	return false;
}

/* A bare value that reads as code or a path: "__it->second",
 * "decay_t<F>", "/dev/urandom". */
static bool looks_like_code_or_path(const unsigned char *v, size_t n, bool quoted)
{
	bool path = n > 1 && (v[0] == '/' || (v[0] == '.' && v[1] == '/') || (v[0] == '~' && v[1] == '/'));
	for (size_t i = 0; i < n; i++) {
		unsigned char c = v[i];
		if (!quoted && (c == '<' || c == '>'))
			return true;
		if (path && !(cls[c] & C_ALNUM) && c != '/' && c != '.' && c != '_' && c != '-')
			path = false;
	}
	return path;
}

/* ---- matchers: each gets the anchor position p, returns where to go on ---- */

/* "-----BEGIN … PRIVATE KEY-----" … "-----END": anchored on the "-B". The
 * body is masked (newlines kept by vr_scan_mask); the marker lines are not
 * secret and stay readable so the file still looks like what it is. */
static size_t match_pem(Scan *s, size_t p)
{
	if (p < 4 || memcmp(s->b + p - 4, "-----", 5) != 0 || !has(s, p + 1, "BEGIN "))
		return p + 1;
	size_t label = p + 7, q = label;
	while (q < s->len && q - label < 64 && s->b[q] != '\n' && s->b[q] != '-')
		q++;
	if (!has(s, q, "-----") || !contains_ci(s->b + label, q - label, "PRIVATE KEY"))
		return p + 1;
	/* A real block's marker ends its line (or a "\n" escape in a JSON
	 * string); prose that mentions the marker goes on with text. */
	size_t body = q + 5;
	unsigned char after = at(s, body);
	if (body < s->len && after != '\n' && after != '\r' && after != '\\' && after != '"')
		return p + 1;
	const unsigned char *end = memmem(s->b + body, s->len - body, "-----END", 8);
	size_t stop = end ? (size_t)(end - s->b) : s->len;
	while (body < stop && (s->b[body] == '\n' || s->b[body] == '\r'))
		body++;
	add(s, body, stop - body, R_PEM);
	return stop > p + 1 ? stop : p + 1;
}

/* AKIA/ASIA + 16 [A-Z0-9], or AIza + 35 [A-Za-z0-9_-]: anchored on 'A'. */
static size_t match_A(Scan *s, size_t p)
{
	if (!starts_word(s, p))
		return p + 1;
	if (has(s, p, "AKIA") || has(s, p, "ASIA")) {
		size_t n = run(s, p + 4, C_UPDIG, 17);
		if (n != 16 || is(s, p + 20, C_ALNUM))
			return p + 1;
		/* AWS documents AKIAIOSFODNN7EXAMPLE; tests and docs copy it. */
		if (memcmp(s->b + p + 13, "EXAMPLE", 7) == 0)
			return p + 1;
		add(s, p, 20, R_AWS_ID);
		return p + 20;
	}
	if (has(s, p, "AIza")) {
		size_t n = run(s, p + 4, C_B64URL, 36);
		if (n != 35)
			return p + 1;
		add(s, p, 39, R_GOOGLE);
		return p + 39;
	}
	return p + 1;
}

/* gh[pousr]_ + ≥36 alnum (GitHub), glpat- + ≥20 (GitLab): anchored on 'g'. */
static size_t match_g(Scan *s, size_t p)
{
	if (!starts_word(s, p))
		return p + 1;
	unsigned char kind = at(s, p + 2);
	if (at(s, p + 1) == 'h' && (kind == 'p' || kind == 'o' || kind == 'u' || kind == 's' || kind == 'r') &&
	    at(s, p + 3) == '_') {
		size_t n = run(s, p + 4, C_ALNUM, 255);
		if (n < 36)
			return p + 1;
		add(s, p, 4 + n, R_GITHUB);
		return p + 4 + n;
	}
	if (has(s, p, "glpat-")) {
		size_t n = run(s, p + 6, C_B64URL, 255);
		if (n < 20)
			return p + 1;
		add(s, p, 6 + n, R_GITLAB);
		return p + 6 + n;
	}
	return p + 1;
}

/* github_pat_ + ≥22 [A-Za-z0-9_]: anchored on the "b_" inside "github_". */
static size_t match_b(Scan *s, size_t p)
{
	if (p < 5 || memcmp(s->b + p - 5, "github", 6) != 0 || !has(s, p + 1, "_pat_"))
		return p + 1;
	size_t start = p - 5;
	if (!starts_word(s, start))
		return p + 1;
	size_t n = 0;
	while (n < 255 && (is(s, start + 11 + n, C_ALNUM) || at(s, start + 11 + n) == '_'))
		n++;
	if (n < 22)
		return p + 1;
	add(s, start, 11 + n, R_GITHUB);
	return start + 11 + n;
}

/* xox[baprs]- + ≥10 [A-Za-z0-9-]: anchored on "xo". */
static size_t match_x(Scan *s, size_t p)
{
	unsigned char kind = at(s, p + 3);
	if (!starts_word(s, p) || !has(s, p, "xox") || at(s, p + 4) != '-' ||
	    !(kind == 'b' || kind == 'a' || kind == 'p' || kind == 'r' || kind == 's'))
		return p + 1;
	size_t n = 0;
	while (n < 255 && (is(s, p + 5 + n, C_ALNUM) || at(s, p + 5 + n) == '-'))
		n++;
	if (n < 10)
		return p + 1;
	add(s, p, 5 + n, R_SLACK);
	return p + 5 + n;
}

/* sk_live_/sk_test_/rk_live_/rk_test_ (Stripe), sk-ant- (Anthropic),
 * sk-… (OpenAI): anchored on "k_"/"k-". */
static size_t match_k(Scan *s, size_t p)
{
	if (p < 1 || (s->b[p - 1] != 's' && s->b[p - 1] != 'r') || !starts_word(s, p - 1))
		return p + 1;
	size_t start = p - 1, q = p + 2;
	if (at(s, p + 1) == '_') {
		if (!has(s, q, "live_") && !has(s, q, "test_"))
			return p + 1;
		size_t n = run(s, q + 5, C_ALNUM, 255);
		if (n < 16)
			return p + 1;
		add(s, start, 8 + n, R_STRIPE);
		return start + 8 + n;
	}
	if (at(s, p + 1) != '-' || s->b[start] != 's')
		return p + 1;
	size_t n = run(s, q, C_B64URL, 255);
	if (has(s, q, "ant-")) {
		if (n < 4 + 20)
			return p + 1;
		add(s, start, 3 + n, R_ANTHROPIC);
		return start + 3 + n;
	}
	/* Plain "sk-" also starts CSS classes and CLI flags: demand length and
	 * the mixed case and digits of a generated key. */
	bool up = false, lo = false, dig = false;
	for (size_t i = 0; i < n; i++) {
		unsigned char c = s->b[q + i];
		up |= c >= 'A' && c <= 'Z';
		lo |= c >= 'a' && c <= 'z';
		dig |= c >= '0' && c <= '9';
	}
	size_t min = has(s, q, "proj-") ? 5 + 20 : 32;
	if (n < min || !(up && lo && dig))
		return p + 1;
	add(s, start, 3 + n, R_OPENAI);
	return start + 3 + n;
}

/* eyJ….eyJ….sig: anchored on "yJ". */
static size_t match_y(Scan *s, size_t p)
{
	if (p < 1 || s->b[p - 1] != 'e')
		return p + 1;
	size_t start = p - 1;
	if (start > 0 && ((cls[s->b[start - 1]] & C_B64URL) || s->b[start - 1] == '.'))
		return p + 1;
	size_t n1 = run(s, start, C_B64URL, 8192);
	if (n1 < 10 || at(s, start + n1) != '.')
		return p + 1;
	size_t s2 = start + n1 + 1;
	size_t n2 = run(s, s2, C_B64URL, 16384);
	if (n2 < 10 || !has(s, s2, "eyJ") || at(s, s2 + n2) != '.')
		return p + 1;
	size_t s3 = s2 + n2 + 1;
	size_t n3 = run(s, s3, C_B64URL, 8192);
	if (n3 < 16)
		return p + 1;
	add(s, start, s3 + n3 - start, R_JWT);
	return s3 + n3;
}

/* ---- credentials in URLs ---------------------------------------------------- */

static bool ends_with_ci(const unsigned char *v, size_t n, const char *suffix)
{
	size_t l = strlen(suffix);
	return n >= l && g_ascii_strncasecmp((const char *)v + n - l, suffix, l) == 0;
}

static bool equals_ci(const unsigned char *v, size_t n, const char *word)
{
	return strlen(word) == n && g_ascii_strncasecmp((const char *)v, word, n) == 0;
}

/* A host that is nobody's server: loopback (localhost, 127.0.0.0/8, ::1,
 * 0.0.0.0), and the names RFC 2606 and RFC 6761 keep for documentation and
 * tests (example.com/.net/.org and below, the .example, .test, .invalid
 * and .localhost domains). A password for one of them is a README's or a
 * test's, and masking it would make that file read-only. */
static bool host_exempt(const unsigned char *h, size_t n)
{
	static const char *const domains[] = {"example.com", "example.net", "example.org", "example",
	                                      "test", "invalid", "localhost"};
	if (n && h[n - 1] == '.')
		n--; /* a fully qualified "example.com." */
	if (n == 0 || equals_ci(h, n, "::1") || equals_ci(h, n, "0.0.0.0"))
		return true;
	if (n > 4 && memcmp(h, "127.", 4) == 0) {
		size_t i = 4;
		while (i < n && (g_ascii_isdigit(h[i]) || h[i] == '.'))
			i++;
		if (i == n)
			return true;
	}
	for (size_t i = 0; i < G_N_ELEMENTS(domains); i++) {
		size_t l = strlen(domains[i]);
		if (equals_ci(h, n, domains[i]) || (n > l && h[n - l - 1] == '.' && ends_with_ci(h, n, domains[i])))
			return true;
	}
	return false;
}

/* The host after '@' at p: a bracketed IPv6 address, or a name up to the
 * port, path, query or the end of the URL. */
static void url_host(const Scan *s, size_t p, size_t *ret_start, size_t *ret_len)
{
	size_t h = p + 1, e = h;
	if (at(s, h) == '[') {
		h++;
		e = h;
		while (e < s->len && e - h < 64 && s->b[e] != ']')
			e++;
	} else {
		while (e < s->len && e - h < 256 && ((cls[s->b[e]] & C_ALNUM) || s->b[e] == '.' || s->b[e] == '-' ||
		                                     s->b[e] == '_'))
			e++;
	}
	*ret_start = h;
	*ret_len = e - h;
}

/* A URL password that stands for one, or that everybody knows: a template
 * slot (${…}, $VAR, <…>, {{…}}, %(…)s, ****), the well-known defaults of
 * development databases, brokers and images (postgres, password, changeme,
 * mysecretpassword…), and documentation words (your…, example, xxxx).
 * Not a substring of a real password: "mypassword" or "Secret2024" are
 * secrets. */
static bool url_password_exempt(const unsigned char *pw, size_t n)
{
	static const char *const defaults[] = {
		"postgres", "password", "passw0rd", "pass", "passwd", "pwd", "changeme", "change-me", "change_me",
		"secret", "example", "root", "admin", "guest", "test", "user", "dev", "default", "mysql", "redis",
		"mongo", "docker", "mysecretpassword", "123456", "12345678", "1234", "foo", "bar", "foobar",
		"demo", "sample", "dummy", "none", "null",
	};
	static const char *const words[] = {"your", "example", "xxxx", "placeholder", "changeme", "redacted"};
	if (n == 0 || pw[0] == '$' || pw[0] == '<' || pw[0] == '{' || pw[0] == '%' || pw[0] == '*')
		return true;
	size_t same = 1;
	for (size_t i = 1; i < n; i++)
		same += pw[i] == pw[0];
	if (same == n)
		return true;
	for (size_t i = 0; i < G_N_ELEMENTS(defaults); i++)
		if (equals_ci(pw, n, defaults[i]))
			return true;
	for (size_t i = 0; i < G_N_ELEMENTS(words); i++)
		if (contains_ci(pw, n, words[i]))
			return true;
	return false;
}

/* scheme://user:password@host — anchored on '@', looking back to "://". Only
 * the password is masked: the user and host stay readable. Every password
 * is a secret (git remotes, DATABASE_URL, pip's index-url, .npmrc
 * registries) except for a host that is nobody's (host_exempt), a password
 * equal to the user name (guest:guest, postgres:postgres) and the defaults
 * and slots of url_password_exempt: what READMEs and compose files hold.
 * A long random user with no password (https://TOKEN@host) is masked
 * whole. */
static size_t match_at(Scan *s, size_t p)
{
	if (!is(s, p + 1, C_ALNUM) && at(s, p + 1) != '[')
		return p + 1;
	size_t q = p;
	while (q > 0 && p - q < 512 && (cls[s->b[q - 1]] & C_USERINFO))
		q--;
	if (q == p || q < 4 || s->b[q - 1] != '/' || s->b[q - 2] != '/' || s->b[q - 3] != ':' ||
	    !(cls[s->b[q - 4]] & C_ALPHA))
		return p + 1;
	const unsigned char *colon = memchr(s->b + q, ':', p - q);
	if (colon) {
		size_t pw = (size_t)(colon - s->b) + 1, user = q, ulen = pw - 1 - q, hs, hl;
		url_host(s, p, &hs, &hl);
		/* A second ':' is no password (cvs's ":pserver:anoncvs@"). */
		if (pw < p && !memchr(s->b + pw, ':', p - pw) && !host_exempt(s->b + hs, hl) &&
		    !(ulen == p - pw && memcmp(s->b + user, s->b + pw, ulen) == 0) &&
		    !url_password_exempt(s->b + pw, p - pw))
			add(s, pw, p - pw, R_URL);
	} else if (p - q >= 16 && !is_placeholder(s->b + q, p - q) && entropy(s->b + q, p - q) >= 3.5) {
		add(s, q, p - q, R_URL);
	}
	return p + 1;
}

typedef enum { K_NONE, K_GENERIC, K_AWS, K_AUTH, K_SHELL_PWD } KeyKind;

/* Which kind of secret the key name promises, judged on its normalized form
 * (lowercase, without '_', '-', '.'), by suffix: "DB_PASSWORD",
 * "client-secret", "aws.secretAccessKey". */
static KeyKind key_kind(const unsigned char *k, size_t n)
{
	static const struct {
		const char *suffix;
		KeyKind kind;
	} keys[] = {
		{"secretaccesskey", K_AWS}, {"authorization", K_AUTH}, {"password", K_GENERIC},
		{"passwd", K_GENERIC}, {"passphrase", K_GENERIC}, {"pwd", K_GENERIC},
		{"secret", K_GENERIC}, {"token", K_GENERIC}, {"apikey", K_GENERIC},
		{"secretkey", K_GENERIC}, {"accesskey", K_GENERIC}, {"privatekey", K_GENERIC},
		{"authkey", K_GENERIC},
	};
	char norm[64];
	size_t m = 0;
	for (size_t i = n; i > 0 && m < sizeof norm; i--) {
		unsigned char c = k[i - 1];
		if (c == '_' || c == '-' || c == '.')
			continue;
		norm[sizeof norm - 1 - m++] = g_ascii_tolower(c);
	}
	const char *nk = norm + sizeof norm - m;
	/* $PWD and $OLDPWD hold directories, not passwords. */
	if ((m == 3 && memcmp(nk, "pwd", 3) == 0) || (m == 6 && memcmp(nk, "oldpwd", 6) == 0))
		return K_SHELL_PWD;
	for (size_t i = 0; i < G_N_ELEMENTS(keys); i++) {
		size_t l = strlen(keys[i].suffix);
		if (m >= l && memcmp(nk + m - l, keys[i].suffix, l) == 0)
			return keys[i].kind;
	}
	return K_NONE;
}

/* "Authorization: Basic XXX" (also git's http.extraheader): mask XXX. */
static void match_auth_value(Scan *s, size_t v, size_t vend)
{
	size_t w = 0;
	while (v + w < vend && w < 16 && (cls[s->b[v + w]] & C_ALPHA))
		w++;
	size_t c = v + w;
	if (w == 0 || c >= vend || (s->b[c] != ' ' && s->b[c] != '\t'))
		return;
	while (c < vend && (s->b[c] == ' ' || s->b[c] == '\t'))
		c++;
	size_t n = 0;
	while (c + n < vend && (cls[s->b[c + n]] & C_CRED))
		n++;
	if (n >= 8 && !is_placeholder(s->b + c, n))
		add(s, c, n, R_AUTH);
}

/* Where an assignment's key ends and its value starts. */
typedef struct {
	size_t v;    /* first byte after the operator */
	size_t k;    /* start of the key's last letters seen so far */
	size_t kend; /* end of the key name */
} AssignKey;

/* The cheap half of match_assign(), inlined into the block loop so that the
 * most frequent anchors ('=' and ':' in ordinary code) cost no call: is
 * this an operator whose key could end in one of key_kind()'s suffixes? */
static inline __attribute__((always_inline)) bool assign_key(const Scan *s, size_t p, AssignKey *ak)
{
	const unsigned char *b = s->b;
	unsigned char op = b[p], next = at(s, p + 1), prev = p ? b[p - 1] : 0;
	size_t opstart = p, v = p + 1;
	if (op == ':') {
		if (next == '=' || next == ':' || prev == ':' || next == '/')
			return false;
	} else {
		if (next == '=' || next == '~' || (cls[prev] & C_OPMOD) || prev == '+' || prev == '-')
			return false;
		if (prev == ':')
			opstart = p - 1;
		if (next == '>')
			v = p + 2;
	}
	/* The key: back over blanks, a closing quote or bracket, then name chars. */
	size_t k = opstart, blanks = 0;
	while (k > 0 && blanks < 8 && (b[k - 1] == ' ' || b[k - 1] == '\t'))
		k--, blanks++;
	if (k > 0 && b[k - 1] == ']')
		k--;
	if (k > 0 && (b[k - 1] == '"' || b[k - 1] == '\'' || b[k - 1] == '`'))
		k--;
	/* Cheap reject before walking the whole name: its last three letters
	 * must end one of the key suffixes of key_kind(). */
	size_t kend = k;
	uint32_t tail = 0;
	for (size_t got = 0; k > 0 && got < 3 && kend - k < 8 && (cls[b[k - 1]] & C_IDENT); k--) {
		unsigned char c = b[k - 1];
		if (c != '_' && c != '-' && c != '.')
			tail |= (uint32_t)(c | 0x20) << (8 * got++);
	}
#define T3(a, b, c) ((uint32_t)(c) | (uint32_t)(b) << 8 | (uint32_t)(a) << 16)
	switch (tail) {
	case T3('o', 'r', 'd'): case T3('s', 'w', 'd'): case T3('a', 's', 'e'): case T3('p', 'w', 'd'):
	case T3('r', 'e', 't'): case T3('k', 'e', 'n'): case T3('k', 'e', 'y'): case T3('i', 'o', 'n'):
		break;
	default:
		return false;
	}
#undef T3
	*ak = (AssignKey){v, k, kend};
	return true;
}

/* KEY = VALUE, KEY: VALUE, KEY := VALUE, KEY => VALUE, "KEY": "VALUE", with
 * KEY naming a secret: anchored on the operator. Only the value is masked. */
static size_t match_assign(Scan *s, size_t p)
{
	const unsigned char *b = s->b;
	AssignKey ak;
	if (!assign_key(s, p, &ak))
		return p + 1;
	size_t v = ak.v, k = ak.k, kend = ak.kend;
	while (k > 0 && kend - k < 64 && (cls[b[k - 1]] & C_IDENT))
		k--;
	KeyKind kind = key_kind(b + k, kend - k);
	if (kind == K_NONE || kind == K_SHELL_PWD)
		return p + 1;
	/* "https://__token__:pypi-…@host": the user of a URL, not a key; the
	 * URL rule masks its password (and not the host after it). */
	if (k >= 3 && b[k - 1] == '/' && b[k - 2] == '/' && b[k - 3] == ':')
		return p + 1;

	/* The value: quoted up to the same quote on the line, or a bare word. */
	size_t blank = 0;
	while (v < s->len && blank < 8 && (b[v] == ' ' || b[v] == '\t'))
		v++, blank++;
	if (v >= s->len)
		return p + 1;
	size_t vs, ve;
	bool quoted = b[v] == '"' || b[v] == '\'' || b[v] == '`';
	if (quoted) {
		unsigned char qc = b[v];
		vs = ve = v + 1;
		while (ve < s->len && ve - vs < 512 && b[ve] != qc && b[ve] != '\n')
			ve++;
		if (ve >= s->len || b[ve] != qc)
			return p + 1;
	} else {
		vs = ve = v;
		if (kind == K_AUTH) {
			/* The whole rest of the line: "basic XXX". */
			while (ve < s->len && ve - vs < 512 && b[ve] != '\n' && b[ve] != '\r' && b[ve] != '"')
				ve++;
		} else {
			while (ve < s->len && ve - vs < 512 && b[ve] > ' ' && b[ve] < 0x7f && !(cls[b[ve]] & C_STOP))
				ve++;
			if (ve < s->len && (b[ve] == '(' || b[ve] == '['))
				return p + 1; /* an expression: get_token(), os.environ["X"] */
		}
	}
	size_t n = ve - vs;
	if (kind == K_AUTH) {
		match_auth_value(s, vs, ve);
		return p + 1;
	}
	if (kind == K_AWS && n == 40 && run(s, vs, C_B64, 40) == 40 && !contains_ci(b + vs, n, "EXAMPLE")) {
		add(s, vs, n, R_AWS_SECRET);
		return p + 1;
	}
	if (n < 8 || is_placeholder(b + vs, n) || looks_like_code_or_path(b + vs, n, quoted))
		return p + 1;
	bool digit = false, symbol = false;
	for (size_t i = vs; i < ve; i++) {
		if (b[i] == ' ' || b[i] < 0x20 || b[i] >= 0x7f)
			return p + 1; /* prose or binary, not a credential */
		digit |= b[i] >= '0' && b[i] <= '9';
		symbol |= !(cls[b[i]] & C_ALPHA) && b[i] != '_' && b[i] != '.' && !(b[i] >= '0' && b[i] <= '9');
	}
	/* A bare word of letters and dots is an expression (self.token,
	 * process.env.TOKEN), not a literal. */
	if (!quoted && !digit && !symbol)
		return p + 1;
	if (entropy(b + vs, n) < 3.0)
		return p + 1;
	add(s, vs, n, R_GENERIC);
	return p + 1;
}

/* Out of line: the block loop inlines only the anchor test and the cheap
 * half of the assignment matcher. */
static __attribute__((noinline)) size_t dispatch(Scan *s, size_t p)
{
	switch (s->b[p]) {
	case '=':
	case ':': return match_assign(s, p);
	case '@': return match_at(s, p);
	case 'A': return match_A(s, p);
	case 'g': return match_g(s, p);
	case 'b': return match_b(s, p);
	case 'x': return match_x(s, p);
	case 'k': return match_k(s, p);
	case 'y': return match_y(s, p);
	case '-': return match_pem(s, p);
	default: return p + 1;
	}
}

/* ---- the prefilter ---------------------------------------------------------- */

/* Anchor bigrams: a is the vector of bytes at i, n the bytes at i+1. Must
 * stay a superset of what dispatch() acts on. */
#define ANCHORS(a, n)                                                                              \
	((a == '=') | (a == ':') | (a == '@') | ((a == 'A') & ((n == 'K') | (n == 'S') | (n == 'I'))) | \
	 ((a == 'g') & ((n == 'h') | (n == 'l'))) | ((a == 'x') & (n == 'o')) |                         \
	 ((a == 'k') & ((n == '-') | (n == '_'))) | ((a == 'b') & (n == '_')) | ((a == 'y') & (n == 'J')) | \
	 ((a == '-') & (n == 'B')))

typedef unsigned char v16 __attribute__((vector_size(16)));

/* Bit j set when position j of b holds an anchor; reads b[0..17). */
static inline uint32_t anchors16(const unsigned char *b)
{
	v16 a, n;
	memcpy(&a, b, 16);
	memcpy(&n, b + 1, 16);
	v16 m = (v16)ANCHORS(a, n);
#ifdef __SSE2__
	__m128i mm;
	memcpy(&mm, &m, 16);
	return (uint32_t)_mm_movemask_epi8(mm);
#else
	uint64_t w[2];
	memcpy(w, &m, 16);
	if (!(w[0] | w[1]))
		return 0;
	uint32_t bits = 0;
	for (int j = 0; j < 16; j++)
		bits |= (uint32_t)(m[j] != 0) << j;
	return bits;
#endif
}

/* Reads b[0..33). */
static inline uint32_t anchors32(const unsigned char *b)
{
	return anchors16(b) | anchors16(b + 16) << 16;
}

/* The block loop: finds the anchors of 32 bytes at a time and dispatches
 * each; returns where the byte-wise tail starts. Instantiated once per
 * instruction set, so the anchor test inlines into each. */
#define SCAN_BLOCKS(name, attr, anchors)                                        \
	attr static size_t name(Scan *s)                                        \
	{                                                                       \
		size_t i = 0;                                                   \
		while (s->len >= 33 && i <= s->len - 33) {                      \
			uint32_t bits = anchors(s->b + i, i);                   \
			size_t next_block = i + 32;                             \
			while (bits) {                                          \
				size_t p = i + (size_t)__builtin_ctz(bits);     \
				bits &= bits - 1;                               \
				unsigned char c = s->b[p];                      \
				AssignKey ak;                                   \
				if ((c == '=' || c == ':') && !assign_key(s, p, &ak)) \
					continue;                               \
				size_t go = dispatch(s, p);                     \
				if (go >= next_block) {                         \
					next_block = go;                        \
					break;                                  \
				}                                               \
				/* skip the anchors inside a consumed token */  \
				if (go > p + 1)                                 \
					bits &= ~0u << (go - i);                \
			}                                                       \
			i = next_block;                                         \
		}                                                               \
		return i;                                                       \
	}

static inline uint32_t anchors32_at(const unsigned char *b, size_t i)
{
	(void)i;
	return anchors32(b);
}
SCAN_BLOCKS(scan_blocks_generic, , anchors32_at)

#if defined(__x86_64__) && defined(__GNUC__)
#define HAVE_AVX2_PATH 1
typedef unsigned char v32 __attribute__((vector_size(32)));

__attribute__((target("avx2"))) static inline uint32_t anchors32_avx2(const unsigned char *b)
{
	v32 a, n;
	memcpy(&a, b, 32);
	memcpy(&n, b + 1, 32);
	v32 m = (v32)ANCHORS(a, n);
	__m256i mm;
	memcpy(&mm, &m, 32);
	return (uint32_t)_mm256_movemask_epi8(mm);
}
/* AVX2 set test of each byte of x against a nibble table pair: bit g of
 * lo[x & 15] & hi[x >> 4] (each bit stands for a set of bytes that is a
 * product of low and high nibbles). */
__attribute__((target("avx2"))) static inline __m256i nibble_classes(__m256i x, __m256i lo, __m256i hi)
{
	const __m256i nib = _mm256_set1_epi8(0x0f);
	return _mm256_and_si256(_mm256_shuffle_epi8(lo, _mm256_and_si256(x, nib)),
	                        _mm256_shuffle_epi8(hi, _mm256_and_si256(_mm256_srli_epi16(x, 4), nib)));
}

#define BCAST16(...) _mm256_setr_epi8(__VA_ARGS__, __VA_ARGS__)

/* Bit j set when b[j] is an anchor, and, for '=' and ':', only when the
 * operator could follow a secret's key: a superset of what assign_key()
 * accepts, decided on the two letters before the operator (or before one
 * blank in front of it). In code most '=' and ':' follow names like
 * "count", "x" or "index", a ')' or a digit; this drops them without
 * leaving the vector unit. Reads b[-3..33). */
__attribute__((target("avx2"))) static inline uint32_t anchors32_avx2_assign(const unsigned char *b)
{
	v32 a, n, p1;
	memcpy(&a, b, 32);
	memcpy(&n, b + 1, 32);
	memcpy(&p1, b - 1, 32);
	v32 any = (v32)ANCHORS(a, n);
	v32 op = (v32)((a == '=') | (a == ':'));
	/* assign_key()'s own first rejections: "==", ":=", "::", "://", "=~". */
	v32 reject = (v32)((n == '=') | ((a == ':') & ((n == ':') | (n == '/') | (p1 == ':'))) |
	                   ((a == '=') & (n == '~')));
	v32 blank1 = (v32)((p1 == ' ') | (p1 == '\t'));
	__m256i x1, x2, x3, bl;
	memcpy(&x1, b - 1, 32);
	memcpy(&x2, b - 2, 32);
	memcpy(&x3, b - 3, 32);
	memcpy(&bl, &blank1, 32);
	/* L: the last byte of the key's text, P: the one before it (after one
	 * blank, the two before that; more blanks leave L a blank: kept). */
	__m256i L = _mm256_blendv_epi8(x1, x2, bl);
	__m256i P = _mm256_blendv_epi8(x2, x3, bl);
	/* L classes: bits 0-4 the last letter of a key suffix (d e n t y),
	 * bits 5-7 bytes the scalar code looks past (blanks, quotes, ']', '_',
	 * '-', '.', ':' of ":="), so undecided here (plus a few extras). */
	__m256i lc = nibble_classes(L, BCAST16(0xa0, 0x00, 0x20, 0x00, 0x09, 0x02, 0x00, 0x20, 0x00, 0x50, 0x40, 0x00, 0x00, 0xa0, 0x24, 0x80),
	                            BCAST16(0x40, 0x00, 0x20, 0x40, 0x07, 0x98, 0x87, 0x18, 0, 0, 0, 0, 0, 0, 0, 0));
	/* P classes: bit i the letters that may precede L's letter i in a
	 * suffix: r/w before d (ord, swd, pwd), s before e (ase), e/o before n
	 * (ken, ion), e before t (ret) and y (key). */
	__m256i pc = nibble_classes(P, BCAST16(0x00, 0x00, 0x01, 0x02, 0x00, 0x1c, 0x00, 0x01, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x04),
	                            BCAST16(0, 0, 0, 0, 0x1c, 0x03, 0x1c, 0x03, 0, 0, 0, 0, 0, 0, 0, 0));
	/* A '_', '-' or '.' as P is looked past too: undecided. */
	const __m256i skip = _mm256_or_si256(
		_mm256_or_si256(_mm256_cmpeq_epi8(P, _mm256_set1_epi8('_')), _mm256_cmpeq_epi8(P, _mm256_set1_epi8('-'))),
		_mm256_cmpeq_epi8(P, _mm256_set1_epi8('.')));
	pc = _mm256_or_si256(pc, _mm256_and_si256(skip, _mm256_set1_epi8(0x1f)));
	__m256i keep = _mm256_or_si256(_mm256_and_si256(lc, _mm256_set1_epi8((char)0xe0)), _mm256_and_si256(lc, pc));
	keep = _mm256_xor_si256(_mm256_cmpeq_epi8(keep, _mm256_setzero_si256()), _mm256_set1_epi8(-1));
	v32 kv;
	memcpy(&kv, &keep, 32);
	v32 m = (any & ~op) | (op & kv & ~reject);
	__m256i mm;
	memcpy(&mm, &m, 32);
	return (uint32_t)_mm256_movemask_epi8(mm);
}
#undef BCAST16

/* The first block has no three bytes before it. */
__attribute__((target("avx2"))) static inline uint32_t anchors32_avx2_at(const unsigned char *b, size_t i)
{
	return i >= 3 ? anchors32_avx2_assign(b) : anchors32_avx2(b);
}
SCAN_BLOCKS(scan_blocks_avx2, __attribute__((target("avx2"))), anchors32_avx2_at)

static bool have_avx2(void)
{
	static int cached = -1; /* benign race: every thread computes the same */
	int v = __atomic_load_n(&cached, __ATOMIC_RELAXED);
	if (v < 0) {
		__builtin_cpu_init();
		v = __builtin_cpu_supports("avx2") ? 1 : 0;
		__atomic_store_n(&cached, v, __ATOMIC_RELAXED);
	}
	return v;
}
#endif

static gint hit_cmp(gconstpointer a, gconstpointer b)
{
	const VrScanHit *x = a, *y = b;
	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	return x->len > y->len ? -1 : x->len < y->len;
}

/* Shape rules name a secret better than context rules. */
static int rank(const VrScanRule *r)
{
	return r == &rules[R_GENERIC] ? 0 : (r == &rules[R_URL] || r == &rules[R_AUTH]) ? 1 : 2;
}

/* Overlaps happen where a specific rule fires inside a generic one
 * (token = "ghp_…"): keep one hit spanning both, named by the specific rule. */
static void sort_and_merge(GArray *hits, guint first)
{
	guint n = hits->len - first;
	if (n < 2)
		return;
	VrScanHit *h = &g_array_index(hits, VrScanHit, first);
	qsort(h, n, sizeof *h, (int (*)(const void *, const void *))hit_cmp);
	guint out = 0;
	for (guint i = 1; i < n; i++) {
		VrScanHit *prev = &h[out];
		size_t pend = prev->start + prev->len;
		if (h[i].start < pend) {
			size_t end = MAX(pend, h[i].start + h[i].len);
			if (rank(h[i].rule) > rank(prev->rule))
				prev->rule = h[i].rule;
			prev->len = end - prev->start;
		} else {
			h[++out] = h[i];
		}
	}
	g_array_set_size(hits, first + out + 1);
}

static void scan_buffer(const char *buf, size_t len, GArray *hits, bool portable)
{
	g_return_if_fail(hits != NULL);
	g_return_if_fail(g_array_get_element_size(hits) == sizeof(VrScanHit));
	if (!buf || len == 0)
		return;
	Scan s = {(const unsigned char *)buf, len, hits};
	guint first = hits->len;
#ifdef HAVE_AVX2_PATH
	size_t i = !portable && have_avx2() ? scan_blocks_avx2(&s) : scan_blocks_generic(&s);
#else
	(void)portable;
	size_t i = scan_blocks_generic(&s);
#endif
	while (i < len)
		i = dispatch(&s, i);
	sort_and_merge(hits, first);
}

void vr_scan_buffer(const char *buf, size_t len, GArray *hits)
{
	scan_buffer(buf, len, hits, false);
}

void vr_scan_buffer_portable(const char *buf, size_t len, GArray *hits)
{
	scan_buffer(buf, len, hits, true);
}

void vr_scan_mask(char *buf, size_t len, const GArray *hits)
{
	if (!buf || !hits)
		return;
	for (guint i = 0; i < hits->len; i++) {
		const VrScanHit *h = &g_array_index(hits, VrScanHit, i);
		if (h->start >= len)
			continue;
		size_t end = h->len > len - h->start ? len : h->start + h->len;
		for (size_t j = h->start; j < end; j++)
			if (buf[j] != '\n' && buf[j] != '\r')
				buf[j] = '*';
	}
}

const VrScanRule *vr_scan_rules(size_t *n_rules)
{
	if (n_rules)
		*n_rules = R_COUNT;
	return rules;
}

const VrScanRule *vr_scan_rule_lookup(const char *id)
{
	for (size_t i = 0; id && i < R_COUNT; i++)
		if (strcmp(rules[i].id, id) == 0)
			return &rules[i];
	return NULL;
}

void vr_scan_line_col(const char *buf, size_t len, size_t offset, size_t *ret_line, size_t *ret_col)
{
	size_t line = 1, bol = 0;
	if (offset > len)
		offset = len;
	for (const char *p = buf; p && (p = memchr(p, '\n', offset - (size_t)(p - buf))); p++) {
		line++;
		bol = (size_t)(p - buf) + 1;
	}
	if (ret_line)
		*ret_line = line;
	if (ret_col)
		*ret_col = offset - bol + 1;
}
