/* dotenv parsing: see dotenv.h. */
#include "dotenv.h"

#include <string.h>

#include "cli.h"

/* A dotenv value: optional `export `, quotes ('…' literal, "…" with \n \" \\). */
static char *dotenv_value(const char *v)
{
	while (*v == ' ' || *v == '\t')
		v++;
	if (*v == '\'') {
		const char *end = strchr(v + 1, '\'');
		return g_strndup(v + 1, end ? (gsize)(end - v - 1) : strlen(v + 1));
	}
	if (*v == '"') {
		GString *s = g_string_new(NULL);
		for (v++; *v && *v != '"'; v++) {
			if (*v == '\\' && v[1]) {
				v++;
				g_string_append_c(s, *v == 'n' ? '\n' : *v);
			} else {
				g_string_append_c(s, *v);
			}
		}
		return g_string_free(s, FALSE);
	}
	/* unquoted: up to an inline comment, trailing blanks trimmed */
	const char *hash = strstr(v, " #");
	g_autofree char *raw = hash ? g_strndup(v, hash - v) : g_strdup(v);
	return g_strdup(g_strchomp(raw));
}

gboolean vr_dotenv_parse(const char *data, const char *file, GHashTable *found, GError **error)
{
	g_auto(GStrv) lines = g_strsplit(data, "\n", -1);
	for (int n = 0; lines[n]; n++) {
		char *line = g_strstrip(lines[n]);
		if (!*line || *line == '#')
			continue;
		if (g_str_has_prefix(line, "export "))
			line = g_strchug(line + 7);
		char *eq = strchr(line, '=');
		if (!eq) {
			g_set_error(error, VR_CLI_ERROR, VR_CLI_ERROR_BAD_VALUE,
			            "%s:%d: expected NAME=VALUE", file, n + 1);
			return FALSE;
		}
		*eq = '\0';
		g_strchomp(line);
		g_hash_table_replace(found, g_strdup(line), dotenv_value(eq + 1));
	}
	return TRUE;
}
