/* The sandbox's environment: a clean one built from an allow-list, never the
 * host's whole environment (DESIGN.md invariant 6). --env-file is read here,
 * outside, so the agent gets the values it needs and never the file. */
#include "run/run.h"

#include <stdio.h>
#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <stdarg.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "policy/config.h"
#include "run/dotenv.h"
#include "net/keys.h"
#include "common/cleanup.h"
#include "common/log.h"

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

static gint cmp_strp(gconstpointer a, gconstpointer b);

#define MAX_ENV_FILE_SIZE (1024 * 1024)

static gboolean env_fail(GError **error, const VrEnvOp *op, const char *fmt, ...) G_GNUC_PRINTF(3, 4);
static gboolean env_fail(GError **error, const VrEnvOp *op, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	g_autofree char *what = g_strdup_vprintf(fmt, ap);
	va_end(ap);
	g_set_error(error, VR_PLAN_ERROR, VR_PLAN_ERROR_BAD_VALUE, "%s %s: %s",
	            op->from_config ? "[sandbox] env-file" : "--env-file", op->name, what);
	return FALSE;
}

/* The file's text, read here, outside, as the user. */
static char *read_env_file(const VrEnvOp *op, GError **error)
{
	vr_cleanup_fd int fd = open(op->name, O_RDONLY | O_CLOEXEC | O_NOCTTY);
	struct stat st;
	if (fd < 0 || fstat(fd, &st) < 0) {
		int e = errno;
		/* `a:b` read as the file a and the name b: say how to name a:b. */
		g_autofree char *whole = op->value ? g_strconcat(op->name, ":", op->value, NULL) : NULL;
		if (whole && g_file_test(whole, G_FILE_TEST_EXISTS))
			env_fail(error, op, "%s (for the file %s, end it with ':' to import all of it, or add ':GLOB,...')",
			         g_strerror(e), whole);
		else
			env_fail(error, op, "%s", g_strerror(e));
		return NULL;
	}
	if (S_ISREG(st.st_mode) && st.st_size > MAX_ENV_FILE_SIZE) {
		env_fail(error, op, "larger than 1 MiB; expected a dotenv file (NAME=VALUE lines)");
		return NULL;
	}
	GString *s = g_string_new(NULL);
	char buf[8192];
	ssize_t n;
	while ((n = read(fd, buf, sizeof buf)) > 0 || (n < 0 && errno == EINTR)) {
		if (n > 0)
			g_string_append_len(s, buf, n);
		if (s->len > MAX_ENV_FILE_SIZE)
			break;
	}
	int e = errno;
	vr_clear_fd(&fd);
	if (n < 0 || s->len > MAX_ENV_FILE_SIZE) {
		g_string_free(s, TRUE);
		if (n < 0)
			env_fail(error, op, "%s", g_strerror(e));
		else
			env_fail(error, op, "larger than 1 MiB; expected a dotenv file (NAME=VALUE lines)");
		return NULL;
	}
	return g_string_free(s, FALSE);
}

static gboolean matches_any(const char *name, char **globs)
{
	for (char **g = globs; g && *g; g++)
		if (**g && fnmatch(*g, name, 0) == 0)
			return TRUE;
	return FALSE;
}

/* The names of FOUND that OP selects (all of them without a list), sorted;
 * an exact name in the list that the file lacks is an error, a glob that
 * matches nothing goes to *UNMATCHED. */
static GPtrArray *select_names(const VrEnvOp *op, GHashTable *found, GString *unmatched, GError **error)
{
	g_autoptr(GPtrArray) all = g_ptr_array_new();
	GHashTableIter it;
	gpointer k;
	g_hash_table_iter_init(&it, found);
	while (g_hash_table_iter_next(&it, &k, NULL))
		g_ptr_array_add(all, k);
	g_ptr_array_sort(all, cmp_strp);
	GPtrArray *picked = g_ptr_array_new();
	g_auto(GStrv) globs = op->value ? g_strsplit(op->value, ",", -1) : NULL;
	for (guint i = 0; i < all->len; i++)
		if (!globs || matches_any(all->pdata[i], globs))
			g_ptr_array_add(picked, all->pdata[i]);
	gboolean any = FALSE;
	for (char **g = globs; g && *g; g++) {
		if (!**g)
			continue;
		any = TRUE;
		gboolean hit = FALSE;
		for (guint i = 0; i < all->len && !hit; i++)
			hit = fnmatch(*g, all->pdata[i], 0) == 0;
		if (hit)
			continue;
		if (!strpbrk(*g, "*?[")) {
			g_ptr_array_unref(picked);
			env_fail(error, op, "no variable %s in it", *g);
			return NULL;
		}
		g_string_append_printf(unmatched, "%s%s", unmatched->len ? ", " : "", *g);
	}
	if (globs && !any) {
		g_ptr_array_unref(picked);
		env_fail(error, op, "no name after ':'; expected FILE:GLOB,... (OPENAI_*,LEGION_*)");
		return NULL;
	}
	return picked;
}

/* One line at the start of the run: what the file gave, names only (never
 * a value), so an import of a whole file is never silent. */
static void say_imported(const VrEnvOp *op, const VrRunPlan *plan, GPtrArray *picked, guint n_found,
                         const char *unmatched)
{
	if (plan->quiet)
		return;
	g_autoptr(GString) s = g_string_new(NULL);
	g_string_printf(s, "%s %s: ", op->from_config ? "[sandbox] env-file" : "--env-file", op->name);
	if (!op->value)
		g_string_append_printf(s, "imported all %u variable%s", n_found, n_found == 1 ? "" : "s");
	else
		g_string_append_printf(s, "imported %u of %u variable%s", picked->len, n_found, n_found == 1 ? "" : "s");
	gboolean outside_allow = FALSE;
	for (guint i = 0; i < picked->len; i++) {
		g_string_append_printf(s, "%s%s", i ? ", " : ": ", (const char *)picked->pdata[i]);
		outside_allow |= !vr_env_allowed(picked->pdata[i], plan->env_allow);
	}
	if (*unmatched)
		g_string_append_printf(s, "; nothing matches %s", unmatched);
	/* The issue-17 trap: --env-allow OPENAI_* does not filter a file. */
	if (!op->value && plan->env_allow->len && outside_allow)
		g_string_append(s, "; --env-allow filters host variables only, FILE:GLOB,... picks from a file");
	vr_notice("%s", s->str);
}

static gboolean load_env_file(GHashTable *env, const VrEnvOp *op, const VrRunPlan *plan, GError **error)
{
	/* The file holds values --key keeps out of the sandbox, whose pid 1 is
	 * a clone of this process: every copy is zeroed when freed. */
	g_autoptr(GHashTable) found = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, vr_net_secret_free);
	char *data = read_env_file(op, error);
	if (!data)
		return FALSE;
	gboolean parsed = vr_dotenv_parse(data, op->name, found, error);
	vr_net_secret_free(data);
	if (!parsed)
		return FALSE;
	g_autoptr(GString) unmatched = g_string_new(NULL);
	g_autoptr(GPtrArray) picked = select_names(op, found, unmatched, error);
	if (!picked)
		return FALSE;
	for (guint i = 0; i < picked->len; i++)
		g_hash_table_replace(env, g_strdup(picked->pdata[i]), g_strdup(g_hash_table_lookup(found, picked->pdata[i])));
	say_imported(op, plan, picked, g_hash_table_size(found), unmatched->str);
	return TRUE;
}

/* "~/x" in the user's config is under HOME; any other relative path is the
 * project's (the seed's `.env` next to the code). */
static char *config_path(const char *file, const char *project)
{
	if (g_str_has_prefix(file, "~/")) {
		const char *home = g_getenv("HOME");
		return g_build_filename(home && *home ? home : g_get_home_dir(), file + 2, NULL);
	}
	if (g_path_is_absolute(file) || !project)
		return g_strdup(file);
	return g_build_filename(project, file, NULL);
}

void vr_env_add_config(VrRunPlan *plan, const VrConfig *config, const char *project)
{
	for (guint i = 0; config->env_allow && i < config->env_allow->len; i++)
		g_ptr_array_add(plan->env_allow, g_strdup(g_ptr_array_index(config->env_allow, i)));
	/* The config's edits come before the command line's, files first,
	 * then setenv: a later edit wins. */
	g_autoptr(GArray) ops = g_array_new(FALSE, TRUE, sizeof(VrEnvOp));
	for (guint i = 0; config->env_files && i < config->env_files->len; i++) {
		g_autofree char *file = NULL, *patterns = NULL;
		vr_config_split_env_file(g_ptr_array_index(config->env_files, i), &file, &patterns);
		VrEnvOp op = {VR_ENV_FILE, config_path(file, project), g_steal_pointer(&patterns), TRUE};
		g_array_append_val(ops, op);
	}
	for (guint i = 0; config->env_set && i < config->env_set->len; i++) {
		const char *kv = g_ptr_array_index(config->env_set, i);
		const char *eq = strchr(kv, '=');
		if (!eq)
			continue;
		VrEnvOp op = {VR_ENV_SET, g_strndup(kv, eq - kv), g_strdup(eq + 1), TRUE};
		g_array_append_val(ops, op);
	}
	g_array_prepend_vals(plan->env_ops, ops->data, ops->len);
}

static gint cmp_strp(gconstpointer a, gconstpointer b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

char **vr_env_build(const VrRunPlan *plan, char **host_env, const char *home,
                    const char *user, GError **error)
{
	g_autoptr(GHashTable) env = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, vr_net_secret_free);
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
			if (!load_env_file(env, op, plan, error))
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
