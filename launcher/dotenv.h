/* The --env-file reader: dotenv text (NAME=VALUE lines, `export `, '…'
 * literal and "…" with \n \" \\ escapes, # comments) into a table. Its own
 * file so the fuzzer (tests/fuzz/fuzz_dotenv.c) can take it alone. */
#pragma once
#include <glib.h>

/* Adds every NAME → VALUE of data (NUL-terminated) to found (g_free'd
 * keys and values). FILE names the source in the one-line error. */
gboolean vr_dotenv_parse(const char *data, const char *file, GHashTable *found, GError **error);
