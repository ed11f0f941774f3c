/* dotenv parsing: see run/dotenv.h. */
#include "run/dotenv.h"

#include <string.h>

#include "run/plan.h"

static gboolean bad(GError **error, const char *file, int line, const char *what)
{
	g_set_error(error, VR_PLAN_ERROR, VR_PLAN_ERROR_BAD_VALUE, "%s:%d: %s", file, line, what);
	return FALSE;
}

static const char *skip_blanks(const char *p)
{
	while (*p == ' ' || *p == '\t' || *p == '\r' || *p == '\f' || *p == '\v')
		p++;
	return p;
}

static const char *end_of_line(const char *p)
{
	const char *nl = strchr(p, '\n');
	return nl ? nl : p + strlen(p);
}

/* A quoted value from *P (at its quote) to the closing one, over as many
 * lines as it takes (a PEM key pasted into a .env): '…' literal, "…" with
 * \n \r \t and \x → x. *P ends after the closing quote, *LINE counts the
 * newlines crossed. NULL when the quote is never closed. */
static char *quoted_value(const char **p, int *line)
{
	char q = **p;
	GString *s = g_string_new(NULL);
	const char *c = *p + 1;
	for (; *c && *c != q; c++) {
		if (*c == '\n')
			(*line)++;
		if (q == '"' && *c == '\\' && c[1]) {
			c++;
			if (*c == '\n')
				(*line)++;
			g_string_append_c(s, *c == 'n' ? '\n' : *c == 'r' ? '\r' : *c == 't' ? '\t' : *c);
		} else {
			g_string_append_c(s, *c);
		}
	}
	if (*c != q) {
		g_string_free(s, TRUE);
		return NULL;
	}
	*p = c + 1;
	return g_string_free(s, FALSE);
}

/* An unquoted value: the rest of the line, up to an inline comment
 * (blank + '#'), trailing blanks (and a CRLF's CR) trimmed. */
static char *plain_value(const char *v, const char *eol)
{
	const char *end = v;
	for (const char *c = v; c < eol; c++) {
		if (*c == '#' && c > v && (c[-1] == ' ' || c[-1] == '\t'))
			break;
		end = c + 1;
	}
	while (end > v && (end[-1] == ' ' || end[-1] == '\t' || end[-1] == '\r'))
		end--;
	return g_strndup(v, (gsize)(end - v));
}

gboolean vr_dotenv_parse(const char *data, const char *file, GHashTable *found, GError **error)
{
	int line = 1;
	const char *p = data;
	while (*p) {
		p = skip_blanks(p);
		if (*p == '\n' || *p == '#' || !*p) {
			p = end_of_line(p);
			if (*p == '\n') {
				p++;
				line++;
			}
			continue;
		}
		if (strncmp(p, "export", 6) == 0 && (p[6] == ' ' || p[6] == '\t'))
			p = skip_blanks(p + 6);
		const char *eol = end_of_line(p), *eq = memchr(p, '=', (size_t)(eol - p));
		if (!eq)
			return bad(error, file, line, "expected NAME=VALUE");
		const char *name_end = eq;
		while (name_end > p && (name_end[-1] == ' ' || name_end[-1] == '\t'))
			name_end--;
		g_autofree char *name = g_strndup(p, (gsize)(name_end - p));
		if (!*name || strpbrk(name, " \t\r\f\v'\""))
			return bad(error, file, line, "expected NAME=VALUE (a name has no blanks or quotes)");
		int at = line;
		const char *v = skip_blanks(eq + 1);
		char *value;
		if (*v == '\'' || *v == '"') {
			value = quoted_value(&v, &line);
			if (!value)
				return bad(error, file, at, *v == '"' ? "a \"…\" value is never closed"
				                                      : "a '…' value is never closed");
			/* After the closing quote: blanks or a comment (anything else is ignored). */
			p = end_of_line(v);
		} else {
			value = plain_value(v, eol);
			p = eol;
		}
		g_hash_table_replace(found, g_steal_pointer(&name), value);
		if (*p == '\n') {
			p++;
			line++;
		}
	}
	return TRUE;
}
