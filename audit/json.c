/* The audit log's line parser: see audit/json.h. A hand-written recursive
 * descent over a (text, len) pair; the input is never assumed to be
 * NUL-terminated, and every read checks the position against the end.
 * And the writer's side: the string escaper, the timestamp and errno names
 * every record uses (the view's writer, the journal, the proxy, the run). */
#include "audit/json.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

typedef struct {
	const char *s;
	size_t len, pos;
	char *out;        /* next free byte of the object's buffer */
	const char *error;
} Parser;

void vr_json_object_init(VrJsonObject *o)
{
	memset(o, 0, sizeof *o);
}

void vr_json_object_clear(VrJsonObject *o)
{
	free(o->fields);
	free(o->buf);
	memset(o, 0, sizeof *o);
}

static bool fail(Parser *p, const char *why)
{
	if (!p->error)
		p->error = why;
	return false;
}

static void skip_ws(Parser *p)
{
	while (p->pos < p->len) {
		char c = p->s[p->pos];
		if (c != ' ' && c != '\t' && c != '\n' && c != '\r')
			break;
		p->pos++;
	}
}

static int hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

static bool read_hex4(Parser *p, unsigned *ret)
{
	unsigned v = 0;
	if (p->len - p->pos < 4)
		return fail(p, "truncated \\u escape");
	for (int i = 0; i < 4; i++) {
		int h = hexval(p->s[p->pos + i]);
		if (h < 0)
			return fail(p, "bad \\u escape");
		v = v << 4 | (unsigned)h;
	}
	p->pos += 4;
	*ret = v;
	return true;
}

static void put_utf8(Parser *p, unsigned cp)
{
	if (cp < 0x80) {
		*p->out++ = (char)cp;
	} else if (cp < 0x800) {
		*p->out++ = (char)(0xc0 | cp >> 6);
		*p->out++ = (char)(0x80 | (cp & 0x3f));
	} else if (cp < 0x10000) {
		*p->out++ = (char)(0xe0 | cp >> 12);
		*p->out++ = (char)(0x80 | (cp >> 6 & 0x3f));
		*p->out++ = (char)(0x80 | (cp & 0x3f));
	} else {
		*p->out++ = (char)(0xf0 | cp >> 18);
		*p->out++ = (char)(0x80 | (cp >> 12 & 0x3f));
		*p->out++ = (char)(0x80 | (cp >> 6 & 0x3f));
		*p->out++ = (char)(0x80 | (cp & 0x3f));
	}
}

/* A string literal at p->pos (the opening quote), decoded into p->out.
 * The decoded form is never longer than the source (an escape of n bytes
 * yields at most n bytes: \uXXXX → ≤3, a surrogate pair of 12 → 4), so the
 * buffer bound of parse_object holds. Raw bytes ≥ 0x80 are copied as they
 * are: paths need not be UTF-8, and the printers escape what they show. */
static bool parse_string(Parser *p, const char **ret, size_t *ret_len)
{
	char *start = p->out;
	p->pos++; /* opening quote */
	for (;;) {
		if (p->pos >= p->len)
			return fail(p, "unterminated string");
		unsigned char c = (unsigned char)p->s[p->pos];
		if (c == '"') {
			p->pos++;
			break;
		}
		if (c < 0x20)
			return fail(p, "control character in string");
		if (c != '\\') {
			*p->out++ = (char)c;
			p->pos++;
			continue;
		}
		if (++p->pos >= p->len)
			return fail(p, "unterminated escape");
		char e = p->s[p->pos++];
		switch (e) {
		case '"': *p->out++ = '"'; break;
		case '\\': *p->out++ = '\\'; break;
		case '/': *p->out++ = '/'; break;
		case 'b': *p->out++ = '\b'; break;
		case 'f': *p->out++ = '\f'; break;
		case 'n': *p->out++ = '\n'; break;
		case 'r': *p->out++ = '\r'; break;
		case 't': *p->out++ = '\t'; break;
		case 'u': {
			unsigned cp;
			if (!read_hex4(p, &cp))
				return false;
			if (cp == 0)
				return fail(p, "\\u0000 in string");
			if (cp >= 0xd800 && cp < 0xdc00) {
				unsigned lo;
				if (p->len - p->pos >= 6 && p->s[p->pos] == '\\' && p->s[p->pos + 1] == 'u') {
					size_t save = p->pos;
					p->pos += 2;
					if (!read_hex4(p, &lo))
						return false;
					if (lo >= 0xdc00 && lo < 0xe000) {
						cp = 0x10000 + ((cp - 0xd800) << 10) + (lo - 0xdc00);
					} else {
						p->pos = save; /* not a pair: the next escape stands alone */
						cp = 0xfffd;
					}
				} else {
					cp = 0xfffd;
				}
			} else if (cp >= 0xdc80 && cp < 0xdd00) {
				/* Our writers' escape for a byte that is not UTF-8
				 * (vr_audit_json_str): back to that byte. */
				*p->out++ = (char)(cp - 0xdc00);
				break;
			} else if (cp >= 0xdc00 && cp < 0xe000) {
				cp = 0xfffd; /* lone low surrogate */
			}
			put_utf8(p, cp);
			break;
		}
		default:
			return fail(p, "unknown escape in string");
		}
	}
	*p->out++ = '\0';
	*ret = start;
	*ret_len = (size_t)(p->out - start - 1);
	return true;
}

static bool is_digit(Parser *p)
{
	return p->pos < p->len && p->s[p->pos] >= '0' && p->s[p->pos] <= '9';
}

/* JSON's number grammar exactly: -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)? */
static bool parse_number(Parser *p, const char **ret, size_t *ret_len)
{
	size_t start = p->pos;
	if (p->s[p->pos] == '-')
		p->pos++;
	if (!is_digit(p))
		return fail(p, "bad number");
	if (p->s[p->pos] == '0')
		p->pos++;
	else
		while (is_digit(p))
			p->pos++;
	if (p->pos < p->len && p->s[p->pos] == '.') {
		p->pos++;
		if (!is_digit(p))
			return fail(p, "bad number");
		while (is_digit(p))
			p->pos++;
	}
	if (p->pos < p->len && (p->s[p->pos] == 'e' || p->s[p->pos] == 'E')) {
		p->pos++;
		if (p->pos < p->len && (p->s[p->pos] == '+' || p->s[p->pos] == '-'))
			p->pos++;
		if (!is_digit(p))
			return fail(p, "bad number");
		while (is_digit(p))
			p->pos++;
	}
	size_t n = p->pos - start;
	memcpy(p->out, p->s + start, n);
	*ret = p->out;
	*ret_len = n;
	p->out += n;
	*p->out++ = '\0';
	return true;
}

static bool skip_value(Parser *p, int depth);

/* A nested object or array is checked for well-formedness and skipped; the
 * log's schema is flat, so nothing reads inside it. */
static bool skip_container(Parser *p, int depth)
{
	if (depth >= VR_JSON_MAX_DEPTH)
		return fail(p, "nested too deep");
	char close = p->s[p->pos] == '{' ? '}' : ']';
	bool object = close == '}';
	p->pos++;
	skip_ws(p);
	if (p->pos < p->len && p->s[p->pos] == close) {
		p->pos++;
		return true;
	}
	for (;;) {
		skip_ws(p);
		if (object) {
			if (p->pos >= p->len || p->s[p->pos] != '"')
				return fail(p, "expected a key");
			if (!skip_value(p, depth + 1))
				return false;
			skip_ws(p);
			if (p->pos >= p->len || p->s[p->pos] != ':')
				return fail(p, "expected ':'");
			p->pos++;
			skip_ws(p);
		}
		if (!skip_value(p, depth + 1))
			return false;
		skip_ws(p);
		if (p->pos >= p->len)
			return fail(p, "unterminated object or array");
		if (p->s[p->pos] == close) {
			p->pos++;
			return true;
		}
		if (p->s[p->pos] != ',')
			return fail(p, "expected ',' or the end of an object or array");
		p->pos++;
	}
}

static bool literal(Parser *p, const char *word)
{
	size_t n = strlen(word);
	if (p->len - p->pos < n || memcmp(p->s + p->pos, word, n) != 0)
		return fail(p, "unexpected token");
	p->pos += n;
	return true;
}

/* Parses a value without keeping it (used inside nested containers). The
 * decoded bytes land in the buffer and are then forgotten. */
static bool skip_value(Parser *p, int depth)
{
	const char *v;
	size_t n;
	char *mark = p->out;
	bool ok;
	if (p->pos >= p->len)
		return fail(p, "expected a value");
	switch (p->s[p->pos]) {
	case '"': ok = parse_string(p, &v, &n); break;
	case '{':
	case '[': ok = skip_container(p, depth); break;
	case 't': ok = literal(p, "true"); break;
	case 'f': ok = literal(p, "false"); break;
	case 'n': ok = literal(p, "null"); break;
	default: ok = parse_number(p, &v, &n); break;
	}
	p->out = mark;
	return ok;
}

static bool parse_value(Parser *p, VrJsonField *f)
{
	if (p->pos >= p->len)
		return fail(p, "expected a value");
	char c = p->s[p->pos];
	switch (c) {
	case '"':
		f->kind = VR_JSON_STRING;
		return parse_string(p, &f->value, &f->value_len);
	case 't':
		f->kind = VR_JSON_TRUE;
		f->value = "true";
		f->value_len = 4;
		return literal(p, "true");
	case 'f':
		f->kind = VR_JSON_FALSE;
		f->value = "false";
		f->value_len = 5;
		return literal(p, "false");
	case 'n':
		f->kind = VR_JSON_NULL;
		f->value = "null";
		f->value_len = 4;
		return literal(p, "null");
	case '{':
	case '[': {
		size_t start = p->pos;
		if (!skip_container(p, 1))
			return false;
		size_t n = p->pos - start;
		memcpy(p->out, p->s + start, n);
		f->kind = VR_JSON_NESTED;
		f->value = p->out;
		f->value_len = n;
		p->out += n;
		*p->out++ = '\0';
		return true;
	}
	default:
		if (c != '-' && (c < '0' || c > '9'))
			return fail(p, "unexpected token");
		f->kind = VR_JSON_NUMBER;
		return parse_number(p, &f->value, &f->value_len);
	}
}

int vr_json_parse_object(VrJsonObject *o, const char *text, size_t len,
                         const char **ret_error, size_t *ret_offset)
{
	/* Each token decodes to at most its own length plus a NUL, and a token
	 * is at least one byte: 2*len+1 bounds everything written. */
	if (len > (SIZE_MAX - 1) / 2)
		return -ENOMEM;
	size_t need = 2 * len + 1;
	if (o->buf_cap < need) {
		char *nb = realloc(o->buf, need);
		if (!nb)
			return -ENOMEM;
		o->buf = nb;
		o->buf_cap = need;
	}
	o->n_fields = 0;
	Parser p = {.s = text, .len = len, .out = o->buf};
	bool ok = false;

	skip_ws(&p);
	if (p.pos >= p.len || p.s[p.pos] != '{') {
		fail(&p, "not a JSON object");
		goto out;
	}
	p.pos++;
	skip_ws(&p);
	if (p.pos < p.len && p.s[p.pos] == '}') {
		p.pos++;
	} else {
		for (;;) {
			skip_ws(&p);
			if (p.pos >= p.len || p.s[p.pos] != '"') {
				fail(&p, "expected a key");
				goto out;
			}
			if (o->n_fields == o->cap_fields) {
				if (o->cap_fields >= VR_JSON_MAX_FIELDS) {
					fail(&p, "too many fields");
					goto out;
				}
				size_t nc = o->cap_fields ? o->cap_fields * 2 : 16;
				VrJsonField *nf = realloc(o->fields, nc * sizeof *nf);
				if (!nf)
					return -ENOMEM;
				o->fields = nf;
				o->cap_fields = nc;
			}
			VrJsonField *f = &o->fields[o->n_fields];
			size_t klen;
			if (!parse_string(&p, &f->key, &klen))
				goto out;
			for (size_t i = 0; i < o->n_fields; i++)
				if (strcmp(o->fields[i].key, f->key) == 0) {
					fail(&p, "duplicate key");
					goto out;
				}
			skip_ws(&p);
			if (p.pos >= p.len || p.s[p.pos] != ':') {
				fail(&p, "expected ':'");
				goto out;
			}
			p.pos++;
			skip_ws(&p);
			if (!parse_value(&p, f))
				goto out;
			o->n_fields++;
			skip_ws(&p);
			if (p.pos >= p.len) {
				fail(&p, "unterminated object");
				goto out;
			}
			if (p.s[p.pos] == '}') {
				p.pos++;
				break;
			}
			if (p.s[p.pos] != ',') {
				fail(&p, "expected ',' or '}'");
				goto out;
			}
			p.pos++;
		}
	}
	skip_ws(&p);
	if (p.pos != p.len) {
		fail(&p, "text after the object");
		goto out;
	}
	ok = true;
out:
	if (ret_error)
		*ret_error = ok ? NULL : p.error;
	if (ret_offset)
		*ret_offset = p.pos;
	if (!ok)
		o->n_fields = 0;
	return ok ? 0 : -EINVAL;
}

const VrJsonField *vr_json_get(const VrJsonObject *o, const char *key)
{
	for (size_t i = 0; i < o->n_fields; i++)
		if (strcmp(o->fields[i].key, key) == 0)
			return &o->fields[i];
	return NULL;
}

const char *vr_json_get_string(const VrJsonObject *o, const char *key)
{
	const VrJsonField *f = vr_json_get(o, key);
	return f && f->kind == VR_JSON_STRING ? f->value : NULL;
}

bool vr_json_get_int64(const VrJsonObject *o, const char *key, int64_t *ret)
{
	const VrJsonField *f = vr_json_get(o, key);
	if (!f || f->kind != VR_JSON_NUMBER)
		return false;
	char *end;
	errno = 0;
	long long v = strtoll(f->value, &end, 10);
	if (errno || *end != '\0')
		return false; /* a fraction, an exponent, or out of range */
	*ret = v;
	return true;
}

void vr_json_append_string(GString *out, const char *s)
{
	vr_audit_json_str(out, s);
}

void vr_audit_json_str(GString *s, const char *str)
{
	g_string_append_c(s, '"');
	for (const char *p = str; *p;) {
		gunichar c = g_utf8_get_char_validated(p, -1);
		if (c == (gunichar)-1 || c == (gunichar)-2) {
			/* Not UTF-8 (file names are bytes): the byte as a lone low
			 * surrogate U+DC80..U+DCFF (Python's "surrogateescape"), which
			 * our reader turns back into that byte, so a name survives
			 * the round trip exactly; \u00XX would read back as a
			 * different, two-byte character. */
			g_string_append_printf(s, "\\udc%02x", (unsigned char)*p);
			p++;
			continue;
		}
		if (c == '"' || c == '\\')
			g_string_append_printf(s, "\\%c", (char)c);
		else if (c == '\n' || c == '\t' || c == '\r')
			g_string_append_printf(s, "\\%c", c == '\n' ? 'n' : c == '\t' ? 't' : 'r');
		else if (c < 0x20 || c == 0x7f)
			g_string_append_printf(s, "\\u%04x", c);
		else
			g_string_append_len(s, p, g_utf8_next_char(p) - p);
		p = g_utf8_next_char(p);
	}
	g_string_append_c(s, '"');
}

void vr_audit_json_member(GString *s, const char *key, const char *v)
{
	g_string_append_printf(s, ",\"%s\":", key);
	vr_audit_json_str(s, v);
}

void vr_audit_json_ts(GString *s, gint64 us)
{
	time_t secs = (time_t)(us / G_USEC_PER_SEC);
	struct tm tm;
	gmtime_r(&secs, &tm);
	char buf[40];
	strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%S", &tm);
	g_string_append_printf(s, "\"%s.%06dZ\"", buf, (int)(us % G_USEC_PER_SEC));
}

const char *vr_errno_name(int err)
{
	const char *n = strerrorname_np(err);
	return n ? n : "EIO";
}
