/* The sandbox's environment: a clean one built from an allow-list, never the
 * host's whole environment (DESIGN.md invariant 6). --env-file is read here,
 * outside, so the agent gets the values it needs and never the file. */
#include "run.h"

#include <fnmatch.h>
#include <string.h>

#include "dotenv.h"
#include "log.h"

static const char *const default_allow[] = {
	"PATH", "HOME", "TERM", "LANG", "LC_*", "USER", "SHELL", "TZ", "COLORTERM", NULL,
};

gboolean vr_env_allowed(const char *name, GPtrArray *extra)
{
	for (const char *const *p = default_allow; *p; p++)
		if (fnmatch(*p, name, 0) == 0)
			return TRUE;
	for (guint i = 0; extra && i < extra->len; i++)
		if (fnmatch(g_ptr_array_index(extra, i), name, 0) == 0)
			return TRUE;
	return FALSE;
}

static gboolean load_env_file(GHashTable *env, const char *file, const char *vars, GError **error)
{
	g_autofree char *data = NULL;
	if (!g_file_get_contents(file, &data, NULL, error))
		return FALSE;
	g_autoptr(GHashTable) found = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, g_free);
	if (!vr_dotenv_parse(data, file, found, error))
		return FALSE;
	if (!vars) {
		GHashTableIter it;
		gpointer k, v;
		g_hash_table_iter_init(&it, found);
		while (g_hash_table_iter_next(&it, &k, &v))
			g_hash_table_replace(env, g_strdup(k), g_strdup(v));
		return TRUE;
	}
	g_auto(GStrv) names = g_strsplit(vars, ",", -1);
	for (int n = 0; names[n]; n++) {
		if (!names[n][0])
			continue;
		const char *v = g_hash_table_lookup(found, names[n]);
		if (!v) {
			g_set_error(error, VR_CLI_ERROR, VR_CLI_ERROR_BAD_VALUE,
			            "--env-file %s: no variable %s in it", file, names[n]);
			return FALSE;
		}
		g_hash_table_replace(env, g_strdup(names[n]), g_strdup(v));
	}
	return TRUE;
}

static gint cmp_strp(gconstpointer a, gconstpointer b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

char **vr_env_build(const VrRunPlan *plan, char **host_env, const char *home,
                    const char *user, GError **error)
{
	g_autoptr(GHashTable) env = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, g_free);
	for (char **e = host_env; e && *e; e++) {
		const char *eq = strchr(*e, '=');
		if (!eq)
			continue;
		g_autofree char *name = g_strndup(*e, eq - *e);
		if (vr_env_allowed(name, plan->env_allow))
			g_hash_table_replace(env, g_steal_pointer(&name), g_strdup(eq + 1));
	}
	if (home)
		g_hash_table_replace(env, g_strdup("HOME"), g_strdup(home));
	if (user && g_hash_table_contains(env, "USER"))
		g_hash_table_replace(env, g_strdup("USER"), g_strdup(user));
	if (!g_hash_table_contains(env, "PATH"))
		g_hash_table_replace(env, g_strdup("PATH"),
		                     g_strdup("/usr/local/bin:/usr/bin:/bin:/usr/local/sbin:/usr/sbin:/sbin"));
	for (guint i = 0; i < plan->env_ops->len; i++) {
		const VrEnvOp *op = &g_array_index(plan->env_ops, VrEnvOp, i);
		switch (op->kind) {
		case VR_ENV_SET:
			g_hash_table_replace(env, g_strdup(op->name), g_strdup(op->value));
			break;
		case VR_ENV_UNSET:
			g_hash_table_remove(env, op->name);
			break;
		case VR_ENV_CLEAR:
			g_hash_table_remove_all(env);
			break;
		case VR_ENV_FILE:
			if (!load_env_file(env, op->name, op->value, error))
				return NULL;
			break;
		}
	}
	GPtrArray *out = g_ptr_array_new();
	GHashTableIter it;
	gpointer k, v;
	g_hash_table_iter_init(&it, env);
	while (g_hash_table_iter_next(&it, &k, &v))
		g_ptr_array_add(out, g_strdup_printf("%s=%s", (char *)k, (char *)v));
	g_ptr_array_sort(out, cmp_strp);
	g_ptr_array_add(out, NULL);
	return (char **)g_ptr_array_free(out, FALSE);
}
