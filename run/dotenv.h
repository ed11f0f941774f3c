/* The --env-file reader: dotenv text into a table. One NAME=VALUE per
 * line, an optional `export `, blank lines and `#` comments (also after a
 * value, following a blank); '…' is literal, "…" takes \n \r \t and \x
 * for x; a quoted value may run over several lines; CRLF line ends are
 * fine; the last of two equal names wins. Its own file so the fuzzer
 * (tests/fuzz/fuzz_dotenv.c) can take it alone. */
#pragma once
#include <glib.h>

/* Adds every NAME → VALUE of data (NUL-terminated) to found (g_free'd
 * keys and values). FILE names the source in the one-line error
 * ("FILE:LINE: what"). */
gboolean vr_dotenv_parse(const char *data, const char *file, GHashTable *found, GError **error);
