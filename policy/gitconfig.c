/* policy/gitconfig.c — git's config syntax, read the way git 2.39 reads it
 * (config.c: get_next_char, parse_value, get_value, get_base_var,
 * get_extended_base_var, git_parse_source), one function each, so the two
 * can be compared line by line. Where git's character classes matter they
 * are git's (ctype.c: ASCII only; "space" is ' ', \t, \n, \r — not \v, \f).
 *
 * Differences from git are refusals, never other readings: a NUL byte makes
 * the whole file UNSUPPORTED (git's strings would end there). Newer git
 * keeps a tab inside an unquoted value as a tab where 2.39 writes a space;
 * nothing the gate decides depends on that (refused keys are compared by
 * their raw bytes, URLs may hold no whitespace). */
#include <string.h>

#include "policy/gitconfig.h"

typedef struct {
	const guchar *b;
	gsize len, pos;
	gboolean eof;
	guint line;      /* lines finished so far: the current one is line + 1 */
	GString *var;    /* "section." prefix, then the key being read */
	GString *value;
	GArray *entries;
} Parser;

static gboolean git_isspace(int c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

static gboolean git_isalpha(int c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

static gboolean git_isalnum(int c)
{
	return git_isalpha(c) || (c >= '0' && c <= '9');
}

static int git_tolower(int c)
{
	return c >= 'A' && c <= 'Z' ? c + 0x20 : c;
}

static gboolean iskeychar(int c)
{
	return git_isalnum(c) || c == '-';
}

/* git's get_next_char: "\r\n" reads as '\n', the end of the file as a
 * '\n' that sets eof (and keeps doing so). */
static int next_char(Parser *p)
{
	if (p->pos >= p->len) {
		p->eof = TRUE;
		p->line++;
		return '\n';
	}
	int c = p->b[p->pos++];
	if (c == '\r' && p->pos < p->len && p->b[p->pos] == '\n') {
		p->pos++;
		c = '\n';
	}
	if (c == '\n')
		p->line++;
	return c;
}

/* git's parse_value: NULL where git reports a bad line. */
static const char *parse_value(Parser *p)
{
	gboolean quote = FALSE, comment = FALSE;
	gsize space = 0;

	g_string_truncate(p->value, 0);
	for (;;) {
		int c = next_char(p);
		if (c == '\n') {
			if (quote)
				return NULL;
			return p->value->str;
		}
		if (comment)
			continue;
		if (git_isspace(c) && !quote) {
			if (p->value->len)
				space++;
			continue;
		}
		if (!quote && (c == ';' || c == '#')) {
			comment = TRUE;
			continue;
		}
		for (; space; space--)
			g_string_append_c(p->value, ' ');
		if (c == '\\') {
			c = next_char(p);
			switch (c) {
			case '\n':
				continue; /* a continuation line */
			case 't':
				c = '\t';
				break;
			case 'b':
				c = '\b';
				break;
			case 'n':
				c = '\n';
				break;
			case '\\':
			case '"':
				break;
			default:
				return NULL; /* git rejects unknown escapes */
			}
			g_string_append_c(p->value, (char)c);
			continue;
		}
		if (c == '"') {
			quote = !quote;
			continue;
		}
		g_string_append_c(p->value, (char)c);
	}
}

static void add_entry(Parser *p, gsize start, guint line, gsize raw_start, const char *value)
{
	VrGitConfigEntry e = {
		.key = g_strdup(p->var->str),
		.value = g_strdup(value),
		.start = start,
		.end = p->pos,
		.line = line,
		.last_line = MAX(line, p->line),
	};
	/* The value's bytes without the newline that ends them. */
	gsize raw_end = MAX(raw_start, p->pos);
	if (raw_end > raw_start && p->b[raw_end - 1] == '\n')
		raw_end--;
	if (raw_end > raw_start && p->b[raw_end - 1] == '\r')
		raw_end--;
	e.raw = g_strndup((const char *)p->b + raw_start, raw_end - raw_start);
	g_array_append_val(p->entries, e);
}

/* git's get_value, after the key's first letter: -1 for a bad line. */
static int get_value(Parser *p, gsize start, guint line)
{
	int c;
	gsize name_end;
	for (;;) {
		name_end = p->pos;
		c = next_char(p);
		if (p->eof)
			break;
		if (!iskeychar(c))
			break;
		g_string_append_c(p->var, (char)git_tolower(c));
	}
	while (c == ' ' || c == '\t')
		c = next_char(p);
	const char *value = NULL;
	if (c != '\n') {
		if (c != '=')
			return -1;
		value = parse_value(p);
		if (!value)
			return -1;
	}
	add_entry(p, start, line, name_end, value);
	return 0;
}

/* git's get_extended_base_var: `[base "sub"]`, from the first space. */
static int get_extended_base_var(Parser *p, int c)
{
	do {
		if (c == '\n')
			return -1;
		c = next_char(p);
	} while (git_isspace(c));
	if (c != '"')
		return -1;
	g_string_append_c(p->var, '.');
	for (;;) {
		c = next_char(p);
		if (c == '\n')
			return -1;
		if (c == '"')
			break;
		if (c == '\\') {
			c = next_char(p);
			if (c == '\n')
				return -1;
		}
		g_string_append_c(p->var, (char)c); /* subsections keep their case */
	}
	return next_char(p) == ']' ? 0 : -1;
}

/* git's get_base_var: after '['. */
static int get_base_var(Parser *p)
{
	for (;;) {
		int c = next_char(p);
		if (p->eof)
			return -1;
		if (c == ']')
			return 0;
		if (git_isspace(c))
			return get_extended_base_var(p, c);
		if (!iskeychar(c) && c != '.')
			return -1;
		g_string_append_c(p->var, (char)git_tolower(c));
	}
}

/* git's git_parse_source: TRUE when the whole file was read. */
static gboolean parse_source(Parser *p)
{
	static const guchar bom[] = {0xef, 0xbb, 0xbf};
	gsize bom_seen = 0;
	gboolean bom_done = FALSE, comment = FALSE;
	gsize baselen = 0;

	for (;;) {
		gsize at = p->pos;
		guint line = p->line + 1;
		int c = next_char(p);
		if (!bom_done) {
			/* A UTF-8 BOM at the very start is skipped; a partial one is
			 * an error. */
			if (bom_seen < sizeof bom && c == bom[bom_seen]) {
				if (++bom_seen == sizeof bom)
					bom_done = TRUE;
				continue;
			}
			if (bom_seen)
				return FALSE;
			bom_done = TRUE;
		}
		if (c == '\n') {
			if (p->eof)
				return TRUE;
			comment = FALSE;
			continue;
		}
		if (comment)
			continue;
		if (git_isspace(c))
			continue;
		if (c == '#' || c == ';') {
			comment = TRUE;
			continue;
		}
		if (c == '[') {
			g_string_truncate(p->var, 0);
			if (get_base_var(p) < 0 || p->var->len < 1)
				return FALSE;
			g_string_append_c(p->var, '.');
			baselen = p->var->len;
			continue;
		}
		if (!git_isalpha(c))
			return FALSE;
		g_string_truncate(p->var, baselen);
		g_string_append_c(p->var, (char)git_tolower(c));
		if (get_value(p, at, line) < 0)
			return FALSE;
	}
}

static void entry_clear(gpointer data)
{
	VrGitConfigEntry *e = data;
	g_free(e->key);
	g_free(e->value);
	g_free(e->raw);
}

VrGitConfig *vr_gitconfig_parse(const char *buf, gsize len)
{
	VrGitConfig *c = g_new0(VrGitConfig, 1);
	c->entries = g_array_new(FALSE, TRUE, sizeof(VrGitConfigEntry));
	g_array_set_clear_func(c->entries, entry_clear);
	if (len && memchr(buf, '\0', len)) {
		c->status = VR_GITCONFIG_UNSUPPORTED;
		return c;
	}
	Parser p = {
		.b = (const guchar *)buf, .len = len,
		.var = g_string_new(NULL), .value = g_string_new(NULL), .entries = c->entries,
	};
	if (parse_source(&p)) {
		c->status = VR_GITCONFIG_OK;
	} else {
		c->status = VR_GITCONFIG_INVALID;
		/* git names the line it was on; a newline it had just read
		 * belongs to the line before (git's linenr-- on those paths). */
		c->error_line = p.line + (p.pos > 0 && p.b[p.pos - 1] == '\n' && !p.eof ? 0 : 1);
	}
	g_string_free(p.var, TRUE);
	g_string_free(p.value, TRUE);
	return c;
}

void vr_gitconfig_free(VrGitConfig *c)
{
	if (!c)
		return;
	g_array_unref(c->entries);
	g_free(c);
}

void vr_gitconfig_key_split(const char *key, char **ret_section, char **ret_subsection,
                            char **ret_name)
{
	const char *first = strchr(key, '.'), *last = strrchr(key, '.');
	if (!first) {
		*ret_section = g_strdup(key);
		*ret_subsection = NULL;
		*ret_name = g_strdup("");
		return;
	}
	*ret_section = g_strndup(key, (gsize)(first - key));
	*ret_subsection = first == last ? NULL : g_strndup(first + 1, (gsize)(last - first - 1));
	*ret_name = g_strdup(last + 1);
}
