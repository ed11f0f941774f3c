/* policy/config.c — config files in GKeyFile format, merged into a VrConfig.
 *
 * GKeyFile gives no line numbers and keeps the last of two equal keys
 * without a word, so a pre-scan of the lines comes first: it maps every key
 * to its line, and refuses unknown groups and keys, duplicated keys and, in
 * a project file, anything that is not a restriction. Every message is one
 * line: "FILE:LINE: what is wrong; what was expected". */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "policy/config.h"
#include "common/cleanup.h"
#include "common/size.h"

#define MAX_CONFIG_SIZE (1024 * 1024)

#define PROJECT_HINT "project config may only add restrictions; put it in ~/.config/vault-run/config"

typedef struct {
	const char *group;
	const char *keys[12];
	const char *expected; /* for the "unknown key" message */
} GroupSpec;

static const GroupSpec groups[] = {
	{"policy", {"hide", "readonly", "redact", "show"}, "hide, readonly, redact or show"},
	{"sandbox", {"net", "env-allow", "setenv", "env-file", "ro-bind", "bind", "profile", "memory", "pids", "cpu", "key"},
	 "net, env-allow, setenv, env-file, ro-bind, bind, profile, memory, pids, cpu or key"},
	{"audit", {"level", "path", "max-size", "fail"}, "level, path, max-size or fail"},
	/* Not from a project file (only [policy] is): turning the scan off
	 * or raising its limit would loosen the view. */
	{"view", {"scan", "scan-max-size", "scan-disable", "scan-allow"},
	 "scan, scan-max-size, scan-disable or scan-allow"},
};

typedef struct {
	char *group;
	char *key;
	int line;
} KeyLine;

static void key_line_clear(gpointer p)
{
	KeyLine *kl = p;
	g_free(kl->group);
	g_free(kl->key);
}

static const GroupSpec *find_group(const char *name)
{
	for (gsize i = 0; i < G_N_ELEMENTS(groups); i++)
		if (strcmp(groups[i].group, name) == 0)
			return &groups[i];
	return NULL;
}

static gboolean group_has_key(const GroupSpec *g, const char *key)
{
	for (gsize i = 0; i < G_N_ELEMENTS(g->keys) && g->keys[i]; i++)
		if (strcmp(g->keys[i], key) == 0)
			return TRUE;
	return FALSE;
}

G_GNUC_PRINTF(4, 5)
static gboolean fail(GError **error, const char *name, int line, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	g_autofree char *msg = g_strdup_vprintf(fmt, ap);
	va_end(ap);
	/* One line whatever a value held (GKeyFile unescapes "\n"). */
	for (char *p = msg; *p; p++)
		if ((guchar)*p < 0x20)
			*p = '?';
	g_set_error(error, VR_POLICY_ERROR, VR_POLICY_ERROR_CONFIG, "%s:%d: %s", name, line, msg);
	return FALSE;
}

/* Fills keys (KeyLine, in file order) and checks everything that needs a
 * line number. */
static gboolean prescan(const char *data, gsize len, const char *name, VrConfigSource source,
                        GArray *keys, GError **error)
{
	g_autofree char *group = NULL;
	const GroupSpec *spec = NULL;
	int lineno = 0;
	for (const char *line = data; line < data + len;) {
		const char *nl = memchr(line, '\n', (gsize)(data + len - line));
		const char *end = nl ? nl : data + len;
		lineno++;
		if (memchr(line, '\0', (gsize)(end - line)))
			return fail(error, name, lineno, "NUL byte; expected a text file");
		if (!g_utf8_validate(line, end - line, NULL))
			return fail(error, name, lineno, "invalid UTF-8; expected UTF-8 text");
		g_autofree char *text = g_strstrip(g_strndup(line, (gsize)(end - line)));
		line = nl ? nl + 1 : data + len;
		if (!*text || text[0] == '#')
			continue;
		if (text[0] == '[') {
			gsize n = strlen(text);
			if (text[n - 1] != ']' || n < 3 || strpbrk(text + 1, "[]") != text + n - 1)
				return fail(error, name, lineno, "malformed group header '%s'; expected [policy], [sandbox], [audit] or [view]", text);
			g_free(group);
			group = g_strndup(text + 1, n - 2);
			spec = find_group(group);
			if (!spec)
				return fail(error, name, lineno, "unknown group [%s]; expected [policy], [sandbox], [audit] or [view]", group);
			if (source == VR_SOURCE_PROJECT && strcmp(group, "policy") != 0)
				return fail(error, name, lineno, "[%s] is not allowed in a project config; " PROJECT_HINT, group);
			continue;
		}
		char *eq = strchr(text, '=');
		if (!eq)
			return fail(error, name, lineno, "'%s' is not a KEY=VALUE line; expected KEY=VALUE, [group] or # comment", text);
		*eq = '\0';
		g_strchomp(text);
		if (!spec)
			return fail(error, name, lineno, "key '%s' outside a group; expected a [policy], [sandbox] or [audit] line first", text);
		if (!group_has_key(spec, text))
			return fail(error, name, lineno, "unknown key '%s' in [%s]; expected %s", text, group, spec->expected);
		if (source == VR_SOURCE_PROJECT && strcmp(text, "show") == 0)
			return fail(error, name, lineno, "'show' is not allowed in a project config; " PROJECT_HINT);
		for (guint i = 0; i < keys->len; i++) {
			KeyLine *kl = &g_array_index(keys, KeyLine, i);
			if (strcmp(kl->group, group) == 0 && strcmp(kl->key, text) == 0)
				return fail(error, name, lineno, "key '%s' in [%s] repeats line %d; expected each key once (join lists with ';')", text, group, kl->line);
		}
		KeyLine kl = {g_strdup(group), g_strdup(text), lineno};
		g_array_append_val(keys, kl);
	}
	return TRUE;
}

static VrRuleKind kind_of(const char *key)
{
	if (strcmp(key, "hide") == 0)
		return VR_RULE_HIDE;
	if (strcmp(key, "readonly") == 0)
		return VR_RULE_READONLY;
	if (strcmp(key, "redact") == 0)
		return VR_RULE_REDACT;
	return VR_RULE_SHOW;
}

static gboolean load_policy_key(VrConfig *config, GKeyFile *kf, const KeyLine *kl,
                                const char *name, VrConfigSource source, GError **error)
{
	g_autoptr(GError) local = NULL;
	g_auto(GStrv) items = g_key_file_get_string_list(kf, kl->group, kl->key, NULL, &local);
	if (!items)
		return fail(error, name, kl->line, "%s; expected a ';'-separated list of patterns", local->message);
	for (char **it = items; *it; it++) {
		char *pat = g_strchug(*it);
		g_autofree char *quoted = g_strescape(pat, NULL);
		VrRuleKind kind = kind_of(kl->key);
		if (!*pat)
			continue;
		/* "!pattern" negates, as in .gitignore. */
		if (kind != VR_RULE_SHOW && pat[0] == '!') {
			if (source == VR_SOURCE_PROJECT)
				return fail(error, name, kl->line, "'%s' un-hides; " PROJECT_HINT, quoted);
			kind = VR_RULE_SHOW;
			pat++;
		}
		if (!vr_policy_add(config->policy, kind, pat, name, kl->line,
		                   source == VR_SOURCE_PROJECT, error))
			return FALSE;
	}
	return TRUE;
}

static gboolean get_string(GKeyFile *kf, const KeyLine *kl, const char *name, char **ret,
                           GError **error)
{
	g_autoptr(GError) local = NULL;
	char *v = g_key_file_get_string(kf, kl->group, kl->key, &local);
	if (!v)
		return fail(error, name, kl->line, "%s; expected a string", local->message);
	g_strstrip(v);
	g_free(*ret);
	*ret = v;
	return TRUE;
}

static gboolean append_list(GKeyFile *kf, const KeyLine *kl, const char *name, GPtrArray *to,
                            gboolean need_assignment, GError **error)
{
	g_autoptr(GError) local = NULL;
	g_auto(GStrv) items = g_key_file_get_string_list(kf, kl->group, kl->key, NULL, &local);
	if (!items)
		return fail(error, name, kl->line, "%s; expected a ';'-separated list", local->message);
	for (char **it = items; *it; it++) {
		char *v = g_strstrip(*it);
		if (!*v)
			continue;
		if (need_assignment && (v[0] == '=' || !strchr(v, '='))) {
			g_autofree char *quoted = g_strescape(v, NULL);
			return fail(error, name, kl->line, "'%s' in %s; expected NAME=VALUE", quoted, kl->key);
		}
		g_ptr_array_add(to, g_strdup(v));
	}
	return TRUE;
}

/* [sandbox] memory/pids/cpu: the syntax of --memory/--pids/--cpu (resource-limits.h). */
static gboolean load_limit_key(VrConfig *config, GKeyFile *kf, const KeyLine *kl,
                               const char *name, GError **error)
{
	g_autofree char *v = NULL;
	if (!get_string(kf, kl, name, &v, error))
		return FALSE;
	const char *k = kl->key;
	gboolean ok = strcmp(k, "memory") == 0 ? vr_limits_parse_memory(v, &config->limits.memory)
	              : strcmp(k, "pids") == 0 ? vr_limits_parse_pids(v, &config->limits.pids)
	                                       : vr_limits_parse_cpu(v, &config->limits.cpu);
	if (!ok)
		return fail(error, name, kl->line, "%s = '%s'; expected %s", k, v,
		            strcmp(k, "memory") == 0 ? vr_size_expected(v, VR_LIMITS_MEMORY_SYNTAX)
		            : strcmp(k, "pids") == 0 ? VR_LIMITS_PIDS_SYNTAX : VR_LIMITS_CPU_SYNTAX);
	return TRUE;
}

GStrv vr_config_net_split(const char *value)
{
	g_auto(GStrv) parts = g_strsplit(value, ";", -1);
	GPtrArray *items = g_ptr_array_new();
	for (char **it = parts; *it; it++)
		if (*g_strstrip(*it))
			g_ptr_array_add(items, g_strdup(*it));
	g_ptr_array_add(items, NULL);
	return (GStrv)g_ptr_array_free(items, FALSE);
}

VrNetItem vr_config_net_item(const char *item, const char **ret_list)
{
	static const struct {
		const char *prefix;
		VrNetItem kind;
	} lists[] = {
		{"allow=", VR_NET_ITEM_ALLOW},
		{"read=", VR_NET_ITEM_READ},
		{"allow-localhost=", VR_NET_ITEM_LOCALHOST},
	};
	if (ret_list)
		*ret_list = NULL;
	if (strcmp(item, "none") == 0)
		return VR_NET_ITEM_NONE;
	if (strcmp(item, "host") == 0)
		return VR_NET_ITEM_HOST;
	if (strcmp(item, "allow-private") == 0)
		return VR_NET_ITEM_PRIVATE;
	for (size_t i = 0; i < G_N_ELEMENTS(lists); i++) {
		size_t n = strlen(lists[i].prefix);
		if (strncmp(item, lists[i].prefix, n) == 0 && item[n]) {
			if (ret_list)
				*ret_list = item + n;
			return lists[i].kind;
		}
	}
	return VR_NET_ITEM_BAD;
}

/* The shape of `net =` (the run checks patterns and ports). */
static gboolean net_value_is_valid(const char *value)
{
	g_auto(GStrv) items = vr_config_net_split(value);
	guint n = g_strv_length(items);
	for (char **it = items; *it; it++) {
		VrNetItem k = vr_config_net_item(*it, NULL);
		if (k == VR_NET_ITEM_BAD || ((k == VR_NET_ITEM_NONE || k == VR_NET_ITEM_HOST) && n > 1))
			return FALSE;
	}
	return n > 0;
}

static gboolean load_sandbox_key(VrConfig *config, GKeyFile *kf, const KeyLine *kl,
                                 const char *name, GError **error)
{
	const char *k = kl->key;
	if (strcmp(k, "net") == 0) {
		if (!get_string(kf, kl, name, &config->net, error))
			return FALSE;
		if (!net_value_is_valid(config->net))
			return fail(error, name, kl->line,
			            "net = '%s'; expected none, host, or allow=DOMAIN,..., read=HOST,..., allow-localhost=PORT,... and "
			            "allow-private joined by ';'",
			            config->net);
		return TRUE;
	}
	if (strcmp(k, "profile") == 0)
		return get_string(kf, kl, name, &config->profile, error);
	if (strcmp(k, "memory") == 0 || strcmp(k, "pids") == 0 || strcmp(k, "cpu") == 0)
		return load_limit_key(config, kf, kl, name, error);
	if (strcmp(k, "env-allow") == 0)
		return append_list(kf, kl, name, config->env_allow, FALSE, error);
	if (strcmp(k, "setenv") == 0)
		return append_list(kf, kl, name, config->env_set, TRUE, error);
	if (strcmp(k, "env-file") == 0)
		return append_list(kf, kl, name, config->env_files, FALSE, error);
	/* NAME@HOST,...: checked by the run (net/keys.h), which names the config. */
	if (strcmp(k, "key") == 0)
		return append_list(kf, kl, name, config->keys, FALSE, error);
	if (strcmp(k, "ro-bind") == 0)
		return append_list(kf, kl, name, config->ro_binds, FALSE, error);
	return append_list(kf, kl, name, config->rw_binds, FALSE, error); /* bind */
}

static gboolean load_audit_key(VrConfig *config, GKeyFile *kf, const KeyLine *kl,
                               const char *name, GError **error)
{
	if (strcmp(kl->key, "path") == 0)
		return get_string(kf, kl, name, &config->audit_path, error);
	if (strcmp(kl->key, "max-size") == 0) {
		g_autofree char *v = NULL;
		if (!get_string(kf, kl, name, &v, error))
			return FALSE;
		if (!vr_config_parse_audit_max_size(v, &config->audit_max_size))
			return fail(error, name, kl->line, "max-size = '%s'; expected %s", v,
			            vr_size_expected(v, VR_CONFIG_AUDIT_MAX_SIZE_SYNTAX));
		config->audit_max_size_set = TRUE;
		return TRUE;
	}
	if (strcmp(kl->key, "fail") == 0) {
		if (!get_string(kf, kl, name, &config->audit_fail, error))
			return FALSE;
		if (strcmp(config->audit_fail, "closed") != 0 && strcmp(config->audit_fail, "open") != 0)
			return fail(error, name, kl->line, "fail = '%s'; expected closed or open", config->audit_fail);
		return TRUE;
	}
	if (!get_string(kf, kl, name, &config->audit_level, error))
		return FALSE;
	if (vr_config_audit_level_parse(config->audit_level) >= 0)
		return TRUE;
	return fail(error, name, kl->line, "level = '%s'; expected one of " VR_CONFIG_AUDIT_LEVELS, config->audit_level);
}

/* The one list of each (the view's enums follow their order: fusefs/view.h). */
static int index_of(const char *const *names, const char *name)
{
	for (int i = 0; name && names[i]; i++)
		if (strcmp(name, names[i]) == 0)
			return i;
	return -1;
}

int vr_config_audit_level_parse(const char *name)
{
	return index_of((const char *const[]){"denied", "writes", "reads", "opens", "all", NULL}, name);
}

int vr_config_scan_mode_parse(const char *name)
{
	return index_of((const char *const[]){"off", "mask", "refuse", NULL}, name);
}

/* A size (common/size.h) of at most 1 GiB. */
static gboolean parse_size(const char *s, guint64 *ret)
{
	uint64_t v;
	if (!s || vr_size_parse(s, &v) < 0 || v > (1ull << 30))
		return FALSE;
	*ret = v;
	return TRUE;
}

gboolean vr_config_parse_size(const char *text, guint64 *ret)
{
	return parse_size(text, ret);
}

gboolean vr_config_parse_audit_max_size(const char *text, guint64 *ret)
{
	if (!text)
		return FALSE;
	if (strcmp(text, "off") == 0 || strcmp(text, "0") == 0) {
		*ret = 0;
		return TRUE;
	}
	guint64 v;
	if (!parse_size(text, &v) || v < 1024)
		return FALSE;
	*ret = v;
	return TRUE;
}

/* scan-disable = RULE; RULE and scan-allow = PATTERN:RULE; ...: each item
 * goes to the scan filter, errors get FILE:LINE in front. */
static gboolean load_scan_filter_key(VrConfig *config, GKeyFile *kf, const KeyLine *kl,
                                     const char *name, GError **error)
{
	g_autoptr(GError) local = NULL;
	g_auto(GStrv) items = g_key_file_get_string_list(kf, kl->group, kl->key, NULL, &local);
	if (!items)
		return fail(error, name, kl->line, "%s; expected a ';'-separated list", local->message);
	gboolean disable = strcmp(kl->key, "scan-disable") == 0;
	for (char **it = items; *it; it++) {
		char *v = g_strstrip(*it);
		if (!*v)
			continue;
		gboolean ok = disable ? vr_scan_filter_disable(config->scan_filter, v, name, kl->line, &local)
		                      : vr_scan_filter_allow(config->scan_filter, v, name, kl->line, &local);
		if (!ok)
			return fail(error, name, kl->line, "%s", local->message);
	}
	return TRUE;
}

static gboolean load_view_key(VrConfig *config, GKeyFile *kf, const KeyLine *kl,
                              const char *name, GError **error)
{
	if (strcmp(kl->key, "scan-disable") == 0 || strcmp(kl->key, "scan-allow") == 0)
		return load_scan_filter_key(config, kf, kl, name, error);
	if (strcmp(kl->key, "scan") == 0) {
		if (!get_string(kf, kl, name, &config->scan_mode, error))
			return FALSE;
		g_free(config->scan_mode_source);
		config->scan_mode_source = g_strdup_printf("%s:%d", name, kl->line);
		if (vr_config_scan_mode_parse(config->scan_mode) < 0)
			return fail(error, name, kl->line, "scan = '%s'; expected one of " VR_CONFIG_SCAN_MODES, config->scan_mode);
		return TRUE;
	}
	g_autofree char *v = NULL;
	if (!get_string(kf, kl, name, &v, error))
		return FALSE;
	if (!parse_size(v, &config->scan_max_size))
		return fail(error, name, kl->line, "scan-max-size = '%s'; expected %s", v,
		            vr_size_expected(v, VR_CONFIG_SCAN_MAX_SIZE_SYNTAX));
	return TRUE;
}

gboolean vr_config_load_data(VrConfig *config, const char *data, gsize len, const char *name,
                             VrConfigSource source, GError **error)
{
	if (len > MAX_CONFIG_SIZE)
		return fail(error, name, 0, "larger than 1 MiB (%zu bytes); expected a small text file", len);
	g_autoptr(GArray) keys = g_array_new(FALSE, FALSE, sizeof(KeyLine));
	g_array_set_clear_func(keys, key_line_clear);
	if (!prescan(data, len, name, source, keys, error))
		return FALSE;
	g_autoptr(GKeyFile) kf = g_key_file_new();
	g_autoptr(GError) local = NULL;
	if (!g_key_file_load_from_data(kf, data, len, G_KEY_FILE_NONE, &local))
		return fail(error, name, 1, "%s; expected GKeyFile syntax", local->message);
	for (guint i = 0; i < keys->len; i++) {
		const KeyLine *kl = &g_array_index(keys, KeyLine, i);
		gboolean ok;
		if (strcmp(kl->group, "policy") == 0)
			ok = load_policy_key(config, kf, kl, name, source, error);
		else if (strcmp(kl->group, "sandbox") == 0)
			ok = load_sandbox_key(config, kf, kl, name, error);
		else if (strcmp(kl->group, "view") == 0)
			ok = load_view_key(config, kf, kl, name, error);
		else
			ok = load_audit_key(config, kf, kl, name, error);
		if (!ok)
			return FALSE;
	}
	return TRUE;
}

gboolean vr_config_load_file(VrConfig *config, const char *path, VrConfigSource source,
                             gboolean optional, GError **error)
{
	/* A project's .vault-run is the repository's: a symlink there could
	 * point the parser (and its error messages) at any file the user can
	 * read, so it is refused. O_NONBLOCK: a FIFO must not hang us. */
	int flags = O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK;
	if (source == VR_SOURCE_PROJECT)
		flags |= O_NOFOLLOW;
	vr_cleanup_fd int fd = open(path, flags);
	if (fd < 0) {
		int err = errno;
		if (err == ENOENT && optional)
			return TRUE;
		g_set_error(error, VR_POLICY_ERROR, VR_POLICY_ERROR_IO, "%s: %s; expected a readable config file",
		            path, err == ELOOP ? "is a symbolic link" : g_strerror(err));
		return FALSE;
	}
	struct stat st;
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		g_set_error(error, VR_POLICY_ERROR, VR_POLICY_ERROR_IO,
		            "%s: not a regular file; expected a config file", path);
		return FALSE;
	}
	if (st.st_size > MAX_CONFIG_SIZE) {
		g_set_error(error, VR_POLICY_ERROR, VR_POLICY_ERROR_IO,
		            "%s: larger than 1 MiB (%lld bytes); expected a small text file", path,
		            (long long)st.st_size);
		return FALSE;
	}
	/* Read at most one byte more than allowed: the file may grow meanwhile. */
	g_autofree char *buf = g_malloc(MAX_CONFIG_SIZE + 1);
	gsize len = 0;
	for (;;) {
		ssize_t n = read(fd, buf + len, MAX_CONFIG_SIZE + 1 - len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			int err = errno;
			g_set_error(error, VR_POLICY_ERROR, VR_POLICY_ERROR_IO,
			            "%s: %s; expected a readable config file", path, g_strerror(err));
			return FALSE;
		}
		if (n == 0 || (len += (gsize)n) > MAX_CONFIG_SIZE)
			break;
	}
	vr_clear_fd(&fd);
	return vr_config_load_data(config, buf, len, path, source, error);
}

char *vr_config_user_path(void)
{
	const char *xdg = g_getenv("XDG_CONFIG_HOME");
	if (xdg && g_path_is_absolute(xdg))
		return g_build_filename(xdg, "vault-run", "config", NULL);
	const char *home = g_getenv("HOME");
	if (!home || !*home)
		home = g_get_home_dir();
	return g_build_filename(home, ".config", "vault-run", "config", NULL);
}

static gboolean is_within(const char *path, const char *dir)
{
	size_t n = strlen(dir);
	if (n == 1 && dir[0] == '/')
		return TRUE;
	return strncmp(path, dir, n) == 0 && (path[n] == '/' || path[n] == '\0');
}

/* The user config may not be reached through a symlink that lies in the
 * project, nor through any symlink when it lies there itself: an agent
 * writes the project, and a link there would hand it the user's own rules
 * (net = host, a read-write bind of /) at the next run. Skipping the file
 * would drop the user's hide rules, so the run is refused. */
gboolean vr_config_check_user_path(const char *user, const char *project_dir, GError **error)
{
	g_autofree char *project = project_dir ? realpath(project_dir, NULL) : NULL;
	if (!project)
		return TRUE; /* no project, or the caller reports it */
	g_autofree char *lexical = g_canonicalize_filename(user, "/");
	g_autofree char *crossed = NULL; /* the first symlink on the way */
	g_autofree char *real_end = NULL; /* where the part that exists really is */
	for (char *s = lexical + 1;; s++) {
		if (*s != '/' && *s != '\0')
			continue;
		char c = *s;
		*s = '\0';
		struct stat st;
		gboolean exists = lstat(lexical, &st) == 0;
		if (exists && S_ISLNK(st.st_mode)) {
			g_autofree char *dir = g_path_get_dirname(lexical);
			g_autofree char *rdir = realpath(dir, NULL);
			g_autofree char *base = g_path_get_basename(lexical);
			g_autofree char *link = rdir ? g_build_filename(rdir, base, NULL) : NULL;
			if (link && is_within(link, project)) {
				g_set_error(error, VR_POLICY_ERROR, VR_POLICY_ERROR_IO,
				            "%s: reached through the symlink %s inside the project %s, which the agent can "
				            "rewrite; expected a real directory there (replace the link by its target)",
				            user, link, project);
				*s = c;
				return FALSE;
			}
			if (!crossed)
				crossed = g_strdup(lexical);
		}
		if (exists) {
			g_free(real_end);
			real_end = realpath(lexical, NULL);
		}
		*s = c;
		if (!exists || c == '\0')
			break;
	}
	if (crossed && real_end && is_within(real_end, project)) {
		g_set_error(error, VR_POLICY_ERROR, VR_POLICY_ERROR_IO,
		            "%s: reached through the symlink %s into the project %s, which the agent can rewrite; "
		            "expected the user config outside the project or without a symlink on its path",
		            user, crossed, project);
		return FALSE;
	}
	return TRUE;
}

/* FILE, when it is inside the project, read-only there by its path. */
static void protect_in_project(VrPolicy *policy, const char *file, const char *project_dir)
{
	g_autofree char *real = realpath(file, NULL);
	g_autofree char *project = project_dir ? realpath(project_dir, NULL) : NULL;
	if (!real || !project || !is_within(real, project) || strcmp(real, project) == 0)
		return;
	const char *rel = strcmp(project, "/") == 0 ? real + 1 : real + strlen(project) + 1;
	vr_policy_add_nondir_readonly(policy, rel, "--policy", 0,
	                              "the --policy file: the user's rules, which the agent must not rewrite");
}

gboolean vr_config_load_all(VrConfig *config, const char *project_dir, const char *policy_file,
                            GError **error)
{
	g_autofree char *user = vr_config_user_path();
	if (!vr_config_check_user_path(user, project_dir, error))
		return FALSE;
	if (!vr_config_load_file(config, user, VR_SOURCE_USER, TRUE, error))
		return FALSE;
	if (project_dir) {
		g_autofree char *proj = g_build_filename(project_dir, ".vault-run", NULL);
		if (!vr_config_load_file(config, proj, VR_SOURCE_PROJECT, TRUE, error))
			return FALSE;
		/* What the project's git configs include and run from. */
		vr_policy_protect_git_configs(config->policy, project_dir);
	}
	if (policy_file) {
		/* A --policy file in the project holds the user's rules where the
		 * agent writes: never reached through a symlink there (it could
		 * repoint it), and read-only in the view (it could rewrite it into
		 * `show = .env`, `net = host` for the next run). */
		if (!vr_config_check_user_path(policy_file, project_dir, error))
			return FALSE;
		if (!vr_config_load_file(config, policy_file, VR_SOURCE_POLICY, FALSE, error))
			return FALSE;
		protect_in_project(config->policy, policy_file, project_dir);
	}
	return TRUE;
}

VrConfig *vr_config_new(void)
{
	VrConfig *config = g_new0(VrConfig, 1);
	config->policy = vr_policy_new();
	vr_policy_add_builtins(config->policy);
	config->env_allow = g_ptr_array_new_with_free_func(g_free);
	config->env_set = g_ptr_array_new_with_free_func(g_free);
	config->env_files = g_ptr_array_new_with_free_func(g_free);
	config->keys = g_ptr_array_new_with_free_func(g_free);
	config->ro_binds = g_ptr_array_new_with_free_func(g_free);
	config->rw_binds = g_ptr_array_new_with_free_func(g_free);
	config->scan_filter = vr_scan_filter_new();
	return config;
}

void vr_config_free(VrConfig *config)
{
	if (!config)
		return;
	vr_policy_free(config->policy);
	g_free(config->net);
	g_ptr_array_unref(config->env_allow);
	g_ptr_array_unref(config->env_set);
	g_ptr_array_unref(config->env_files);
	g_ptr_array_unref(config->keys);
	g_ptr_array_unref(config->ro_binds);
	g_ptr_array_unref(config->rw_binds);
	g_free(config->profile);
	g_free(config->audit_level);
	g_free(config->audit_path);
	g_free(config->audit_fail);
	g_free(config->scan_mode);
	g_free(config->scan_mode_source);
	vr_scan_filter_free(config->scan_filter);
	g_free(config);
}

/* Characters of a variable name and of a glob over names ([A-Z]*, ?). */
#define NAME_GLOB_CHARS "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_*?[]!^-"

void vr_config_split_env_file(const char *spec, char **ret_file, char **ret_patterns)
{
	const char *colon = strrchr(spec, ':');
	gboolean list = colon && colon > spec;
	/* What follows must be nothing or names and globs joined by commas:
	 * `/mnt/c:/x/.env` stays one file name. */
	for (const char *c = list ? colon + 1 : ""; list && *c; c++)
		list = *c == ',' || strchr(NAME_GLOB_CHARS, *c) != NULL;
	if (!list) {
		*ret_file = g_strdup(spec);
		*ret_patterns = NULL;
		return;
	}
	*ret_file = g_strndup(spec, (gsize)(colon - spec));
	*ret_patterns = colon[1] ? g_strdup(colon + 1) : NULL;
}
