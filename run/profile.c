#include "run/profile.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "net/keys.h"
#include "policy/config.h"
#include "policy/policy.h"
#include "run/keyfiles.h"

#define PROFILE_SUFFIX ".profile"

/* The test builds' override: the binary in the build tree (the tests run
 * it) also finds the source tree's profiles. An installed binary never
 * does: the source tree can be a project an agent writes. */
static gboolean running_from_build_tree(void)
{
	char exe[PATH_MAX];
	if (!realpath("/proc/self/exe", exe))
		return FALSE;
	size_t n = strlen(VR_BUILDDIR);
	return strncmp(exe, VR_BUILDDIR, n) == 0 && exe[n] == '/';
}

/* Directories searched for profiles, most specific first. */
static GPtrArray *profile_dirs(const char *subdir)
{
	GPtrArray *dirs = g_ptr_array_new_with_free_func(g_free);
	/* Next to the user config, as policy/config.c places it. */
	g_autofree char *config = vr_config_user_path();
	g_autofree char *config_dir = g_path_get_dirname(config);
	g_ptr_array_add(dirs, g_build_filename(config_dir, "profiles", subdir, NULL));
	g_ptr_array_add(dirs, g_build_filename(VR_DATADIR, "profiles", subdir, NULL));
	if (running_from_build_tree())
		g_ptr_array_add(dirs, g_build_filename(VR_SRCDATADIR, "profiles", subdir, NULL));
	return dirs;
}

static char *find_profile_file(const char *name, const char *subdir)
{
	g_autoptr(GPtrArray) dirs = profile_dirs(subdir);
	g_autofree char *file = g_strconcat(name, PROFILE_SUFFIX, NULL);
	for (guint i = 0; i < dirs->len; i++) {
		char *path = g_build_filename(dirs->pdata[i], file, NULL);
		if (g_file_test(path, G_FILE_TEST_IS_REGULAR))
			return path;
		g_free(path);
	}
	return NULL;
}

static gboolean valid_name(const char *name)
{
	if (!*name || strlen(name) > 64)
		return FALSE;
	for (const char *p = name; *p; p++)
		if (!g_ascii_isalnum(*p) && *p != '-' && *p != '_')
			return FALSE;
	return TRUE;
}

static char *expand_home(const char *path, const char *home)
{
	if (path[0] == '~' && (path[1] == '/' || path[1] == '\0'))
		return g_build_filename(home, path + 1, NULL);
	return g_strdup(path);
}

/* The keys a profile may hold; anything else is a typo the user must hear of. */
static const struct {
	const char *group, *key;
} known_keys[] = {
	{"profile", "description"}, {"profile", "commands"}, {"profile", "toolchains"},
	{"paths", "ro"}, {"paths", "rw"}, {"paths", "create"}, {"paths", "ro-inside"},
	{"paths", "copy"}, {"paths", "tmpfs"}, {"copy", "merge"},
	{"env", "allow"}, {"net", "allow"}, {"keys", "bind"}, {"keys", "file"},
};

static gboolean check_keys(GKeyFile *kf, const char *path, GError **error)
{
	g_auto(GStrv) groups = g_key_file_get_groups(kf, NULL);
	for (char **g = groups; *g; g++) {
		g_auto(GStrv) keys = g_key_file_get_keys(kf, *g, NULL, NULL);
		for (char **k = keys; k && *k; k++) {
			gboolean ok = FALSE;
			for (size_t i = 0; i < G_N_ELEMENTS(known_keys) && !ok; i++)
				ok = strcmp(known_keys[i].group, *g) == 0 && strcmp(known_keys[i].key, *k) == 0;
			if (!ok) {
				g_set_error(error, VR_POLICY_ERROR, VR_POLICY_ERROR_CONFIG,
				            "%s: unknown key '%s' in group [%s]", path, *k, *g);
				return FALSE;
			}
		}
	}
	return TRUE;
}

static void add_list(GKeyFile *kf, const char *group, const char *key, GPtrArray *out,
                     const char *home)
{
	g_auto(GStrv) items = g_key_file_get_string_list(kf, group, key, NULL, NULL);
	for (char **it = items; it && *it; it++) {
		g_autofree char *item = g_strstrip(g_strdup(*it));
		if (*item)
			g_ptr_array_add(out, home ? expand_home(item, home) : g_strdup(item));
	}
}

/* [keys] bind: each item a --key declaration, checked now so a typo is an
 * error naming the file and the declaration, not a surprise in a run. */
static gboolean add_keys(GKeyFile *kf, VrProfile *p, const char *path, GError **error)
{
	guint from = p->keys->len;
	add_list(kf, "keys", "bind", p->keys, NULL);
	for (guint i = from; i < p->keys->len; i++) {
		g_autoptr(GError) e = NULL;
		g_autoptr(VrNetKey) k = vr_net_key_parse(p->keys->pdata[i], &e);
		if (!k) {
			const char *why = g_str_has_prefix(e->message, "--key ") ? e->message + 6 : e->message;
			g_set_error(error, VR_POLICY_ERROR, VR_POLICY_ERROR_CONFIG, "%s: [keys] bind: %s", path, why);
			return FALSE;
		}
	}
	return TRUE;
}

/* [keys] file (run/keyfiles.h): checked here, so a typo names the profile. */
static gboolean add_key_files(GKeyFile *kf, VrProfile *p, const char *path, const char *home, GError **error)
{
	guint before = p->key_files->len;
	add_list(kf, "keys", "file", p->key_files, home);
	for (guint i = before; i < p->key_files->len; i++) {
		g_autoptr(GError) e = NULL;
		if (!vr_keyfile_spec_check(p->key_files->pdata[i], &e)) {
			g_set_error(error, VR_POLICY_ERROR, VR_POLICY_ERROR_CONFIG, "%s: %s", path, e->message);
			return FALSE;
		}
	}
	return TRUE;
}

static gboolean merge_file(VrProfile *p, const char *path, const char *home, GError **error)
{
	g_autoptr(GKeyFile) kf = g_key_file_new();
	g_autoptr(GError) local = NULL;
	if (!g_key_file_load_from_file(kf, path, G_KEY_FILE_NONE, &local)) {
		g_set_error(error, VR_POLICY_ERROR, VR_POLICY_ERROR_CONFIG, "%s: %s", path, local->message);
		return FALSE;
	}
	if (!check_keys(kf, path, error))
		return FALSE;
	add_list(kf, "paths", "ro", p->ro, home);
	add_list(kf, "paths", "rw", p->rw, home);
	add_list(kf, "paths", "create", p->create, home);
	add_list(kf, "paths", "ro-inside", p->ro_inside, home);
	add_list(kf, "paths", "copy", p->copy, home);
	add_list(kf, "paths", "tmpfs", p->tmpfs, home);
	guint merged = p->merge->len;
	add_list(kf, "copy", "merge", p->merge, NULL);
	for (guint i = merged; i < p->merge->len; i++) {
		if (!vr_profile_merge_key_allowed(p->merge->pdata[i])) {
			g_set_error(error, VR_POLICY_ERROR, VR_POLICY_ERROR_CONFIG,
			            "%s: [copy] merge: '%s' would bring back what makes the host run commands "
			            "(MCP servers, allowed tools); it is never merged", path, (const char *)p->merge->pdata[i]);
			return FALSE;
		}
	}
	add_list(kf, "env", "allow", p->env_allow, NULL);
	add_list(kf, "net", "allow", p->net_allow, NULL);
	if (!add_keys(kf, p, path, error) || !add_key_files(kf, p, path, home, error))
		return FALSE;
	if (!p->description)
		p->description = g_key_file_get_string(kf, "profile", "description", NULL);
	add_list(kf, "profile", "commands", p->commands, NULL);
	add_list(kf, "profile", "toolchains", p->toolchains, NULL);
	return TRUE;
}

static VrProfile *profile_new(const char *name)
{
	VrProfile *p = g_new0(VrProfile, 1);
	p->name = g_strdup(name);
	GPtrArray **lists[] = {&p->commands, &p->ro, &p->rw, &p->create, &p->ro_inside, &p->copy, &p->merge,
	                       &p->tmpfs, &p->env_allow, &p->net_allow, &p->keys, &p->toolchains, &p->key_files};
	for (size_t i = 0; i < G_N_ELEMENTS(lists); i++)
		*lists[i] = g_ptr_array_new_with_free_func(g_free);
	return p;
}

void vr_profile_free(VrProfile *p)
{
	if (!p)
		return;
	g_free(p->name);
	g_free(p->description);
	g_free(p->source);
	GPtrArray *lists[] = {p->commands, p->ro, p->rw, p->create, p->ro_inside, p->copy, p->merge,
	                      p->tmpfs, p->env_allow, p->net_allow, p->keys, p->toolchains, p->key_files};
	for (size_t i = 0; i < G_N_ELEMENTS(lists); i++)
		g_ptr_array_unref(lists[i]);
	g_free(p);
}

VrProfile *vr_profile_load(const char *name, const char *home, GError **error)
{
	if (!valid_name(name)) {
		g_set_error(error, VR_POLICY_ERROR, VR_POLICY_ERROR_CONFIG,
		            "'%s' is not a profile name (letters, digits, '-', '_')", name);
		return NULL;
	}
	g_autofree char *path = find_profile_file(name, "");
	if (!path) {
		g_set_error(error, VR_POLICY_ERROR, VR_POLICY_ERROR_CONFIG,
		            "no profile '%s'; `vault-run profiles` lists them", name);
		return NULL;
	}
	g_autoptr(VrProfile) p = profile_new(name);
	p->source = g_strdup(path);
	if (!merge_file(p, path, home, error))
		return NULL;
	/* Toolchains add to the profile; they cannot name further toolchains. */
	for (guint i = 0; i < p->toolchains->len; i++) {
		const char *tc = p->toolchains->pdata[i];
		g_autofree char *tc_path = valid_name(tc) ? find_profile_file(tc, "toolchains") : NULL;
		if (!tc_path) {
			g_set_error(error, VR_POLICY_ERROR, VR_POLICY_ERROR_CONFIG,
			            "%s: unknown toolchain '%s'", path, tc);
			return NULL;
		}
		guint before = p->toolchains->len;
		if (!merge_file(p, tc_path, home, error))
			return NULL;
		if (p->toolchains->len != before) {
			g_set_error(error, VR_POLICY_ERROR, VR_POLICY_ERROR_CONFIG,
			            "%s: a toolchain cannot name toolchains", tc_path);
			return NULL;
		}
	}
	return g_steal_pointer(&p);
}

/* Key paths that make the host run or allow something, and so never come
 * back from a copy; "*" is any one member. */
static const char *const never_merged[] = {
	"mcpServers", "projects.*.mcpServers", "projects.*.allowedTools", "projects.*.enabledMcpjsonServers",
	"projects.*.enableAllProjectMcpServers", "projects.*.hasTrustDialogAccepted", "bypassPermissionsModeAccepted",
	"customApiKeyResponses", "env", "hooks", "permissions",
};

/* Whether the key paths A and B can name the same member or one a member
 * of the other ("{project}" and "*" stand for any member name). */
static gboolean keys_overlap(char **a, char **b)
{
	for (; *a && *b; a++, b++) {
		gboolean wild = strcmp(*a, "*") == 0 || strcmp(*a, "{project}") == 0 || strcmp(*b, "*") == 0;
		if (!wild && strcmp(*a, *b) != 0)
			return FALSE;
	}
	return TRUE;
}

gboolean vr_profile_merge_key_allowed(const char *key)
{
	g_auto(GStrv) k = g_strsplit(key, ".", -1);
	if (!k[0] || !*k[0])
		return FALSE;
	for (size_t i = 0; i < G_N_ELEMENTS(never_merged); i++) {
		g_auto(GStrv) n = g_strsplit(never_merged[i], ".", -1);
		if (keys_overlap(k, n))
			return FALSE;
	}
	return TRUE;
}

static void collect_names(GPtrArray *names)
{
	g_autoptr(GPtrArray) dirs = profile_dirs("");
	for (guint i = 0; i < dirs->len; i++) {
		g_autoptr(GDir) dir = g_dir_open(dirs->pdata[i], 0, NULL);
		const char *entry;
		while (dir && (entry = g_dir_read_name(dir))) {
			if (!g_str_has_suffix(entry, PROFILE_SUFFIX))
				continue;
			char *name = g_strndup(entry, strlen(entry) - strlen(PROFILE_SUFFIX));
			gboolean seen = FALSE;
			for (guint j = 0; j < names->len && !seen; j++)
				seen = strcmp(names->pdata[j], name) == 0;
			if (seen || !valid_name(name))
				g_free(name);
			else
				g_ptr_array_add(names, name);
		}
	}
}

static gint compare_strings(gconstpointer a, gconstpointer b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

GPtrArray *vr_profile_list(void)
{
	GPtrArray *names = g_ptr_array_new_with_free_func(g_free);
	collect_names(names);
	g_ptr_array_sort(names, compare_strings);
	return names;
}

char *vr_profile_for_command(const char *command)
{
	g_autofree char *base = g_path_get_basename(command);
	g_autoptr(GPtrArray) names = vr_profile_list();
	for (guint i = 0; i < names->len; i++) {
		g_autoptr(VrProfile) p = vr_profile_load(names->pdata[i], "/", NULL);
		for (guint j = 0; p && j < p->commands->len; j++)
			if (strcmp(p->commands->pdata[j], base) == 0)
				return g_strdup(p->name);
	}
	return NULL;
}
