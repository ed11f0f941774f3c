#include "run/profile-apply.h"

#include <stdio.h>
#include <errno.h>
#include <string.h>
#include <sys/stat.h>


#include "policy/config.h"
#include "common/log.h"
#include "run/json-file.h"
#include "run/profile.h"

static void add_bind(GArray *mounts, guint *at, const char *path, gboolean writable)
{
	VrUserMount m = {
		.kind = VR_OP_BIND,
		.src = g_strdup(path),
		.dest = g_strdup(path),
		/* try: a harness not installed, or a settings file not written yet,
		 * is simply not there inside either. */
		.flags = VR_BIND_TRY | (writable ? 0 : VR_BIND_RO),
	};
	g_array_insert_val(mounts, (*at)++, m);
}

static gboolean path_is_in(const char *path, const char *dir)
{
	size_t n = strlen(dir);
	return strncmp(path, dir, n) == 0 && path[n] == '/';
}

/* The words of S that name a path below DIR ("~/" and "$HOME/" expanded
 * with HOME), anchored at DIR's root, into OUT: a settings file's
 * statusLine or hook command naming a script the harness keeps there. */
static void add_named(GPtrArray *out, const char *s, const char *dir, const char *home)
{
	g_auto(GStrv) words = g_strsplit_set(s, " \t\n\"'=;:|&()<>", -1);
	for (char **w = words; *w; w++) {
		g_autofree char *path = NULL;
		if (g_str_has_prefix(*w, "~/"))
			path = g_build_filename(home, *w + 2, NULL);
		else if (g_str_has_prefix(*w, "$HOME/") || g_str_has_prefix(*w, "${HOME}/"))
			path = g_build_filename(home, strchr(*w, '/') + 1, NULL);
		else if (**w == '/')
			path = g_canonicalize_filename(*w, NULL);
		if (path && path_is_in(path, dir))
			g_ptr_array_add(out, g_strdup(path + strlen(dir)));
	}
}

static void walk_strings(json_t *node, GPtrArray *out, const char *dir, const char *home)
{
	if (json_is_object(node)) {
		const char *name;
		json_t *member;
		json_object_foreach(node, name, member)
			walk_strings(member, out, dir, home);
	} else if (json_is_array(node)) {
		size_t i;
		json_t *element;
		json_array_foreach(node, i, element)
			walk_strings(element, out, dir, home);
	} else if (json_is_string(node)) {
		add_named(out, json_string_value(node), dir, home);
	}
}

/* Scripts the read-only settings name inside DIR (a statusLine command,
 * a hook) are code the host runs: read-only too. A settings file that does
 * not parse names nothing (the harness will not run it either). */
static void add_named_by_settings(GPtrArray *readonly, const VrProfile *p, const char *dir)
{
	const char *home = g_get_home_dir();
	for (guint j = 0; j < p->ro_inside->len; j++) {
		const char *inside = p->ro_inside->pdata[j];
		if (!path_is_in(inside, dir) || !g_str_has_suffix(inside, ".json"))
			continue;
		json_error_t e;
		g_autoptr(json_t) root = json_load_file(inside, VR_JSON_READ_FLAGS, &e);
		if (root)
			walk_strings(root, readonly, dir, home);
	}
}

/* Every writable harness directory is served through a view of its own
 * (run/views.h), at its real path (a symlinked ~/.claude is guarded where
 * it is): the run's policy plus its read-only paths (ro-inside, and what
 * the settings there name) — a bind of a file on top would not cover a
 * settings file the harness has not written yet, which the agent could
 * then create. */
static void add_guarded(VrRunPlan *plan, const VrProfile *p)
{
	for (guint i = 0; i < p->rw->len; i++) {
		const char *dir = p->rw->pdata[i];
		if (!g_file_test(dir, G_FILE_TEST_IS_DIR))
			continue;
		VrGuardedDir *g = g_new0(VrGuardedDir, 1);
		g->dir = g_strdup(dir);
		g->source = g_strdup_printf("profile %s", p->name);
		g->readonly = g_ptr_array_new_with_free_func(g_free);
		for (guint j = 0; j < p->ro_inside->len; j++) {
			const char *inside = p->ro_inside->pdata[j];
			/* Anchored at the directory's root: "/settings.json". */
			if (path_is_in(inside, dir))
				g_ptr_array_add(g->readonly, g_strdup(inside + strlen(dir)));
		}
		add_named_by_settings(g->readonly, p, dir);
		g_ptr_array_add(plan->guarded_dirs, g);
	}
}

/* State files the run works on a copy of (run/copy.h). */
static void add_copies(VrRunPlan *plan, const VrProfile *p)
{
	for (guint i = 0; i < p->copy->len; i++) {
		VrCopyFile *c = g_new0(VrCopyFile, 1);
		c->path = g_strdup(p->copy->pdata[i]);
		c->merge = g_ptr_array_new_with_free_func(g_free);
		for (guint j = 0; j < p->merge->len; j++)
			g_ptr_array_add(c->merge, g_strdup(p->merge->pdata[j]));
		g_ptr_array_add(plan->copies, c);
	}
}

/* Caches of code the host runs (opencode's node_modules and bin/): an
 * empty tmpfs of the agent's for the run, never the host's. */
static void add_tmpfs(GArray *mounts, guint *at, const char *path)
{
	VrUserMount m = {.kind = VR_OP_TMPFS, .dest = g_strdup(path)};
	g_array_insert_val(mounts, (*at)++, m);
}

gboolean vr_run_apply_profile(VrRunPlan *plan, GError **error)
{
	/* The user's config may name a profile, and its `net` beats the
	 * profile's default (only --net on the command line beats both). A
	 * broken config is reported when the supervisor loads it for real. */
	g_autoptr(VrConfig) config = vr_config_new();
	if (!vr_config_load_all(config, plan->project ? plan->project : ".", plan->policy_file, NULL))
		g_clear_pointer(&config, vr_config_free);
	if (!plan->profile && config && config->profile)
		plan->profile = g_strdup(config->profile);

	g_autofree char *name = NULL;
	if (plan->profile) {
		if (strcmp(plan->profile, "none") == 0)
			return TRUE;
		name = g_strdup(plan->profile);
	} else if (plan->command && plan->command[0]) {
		name = vr_profile_for_command(plan->command[0]);
		if (!name)
			return TRUE;
		if (!plan->quiet)
			vr_notice("using profile '%s' for %s (--profile none turns this off)", name,
			       plan->command[0]);
	} else
		return TRUE;

	g_autoptr(VrProfile) p = vr_profile_load(name, g_get_home_dir(), error);
	if (!p)
		return FALSE;

	for (guint i = 0; i < p->create->len; i++) {
		const char *dir = p->create->pdata[i];
		if (g_mkdir_with_parents(dir, 0700) < 0)
			vr_warning("profile %s: cannot create %s: %s", name, dir, g_strerror(errno));
	}

	/* Profile binds go before the user's own --bind options so those can
	 * override them, but after a leading `--ro-bind DIR /` that replaces the
	 * root (the supervisor recognises it as the first mount). */
	guint at = 0;
	if (plan->mounts->len) {
		const VrUserMount *first = &g_array_index(plan->mounts, VrUserMount, 0);
		if (first->kind == VR_OP_BIND && first->dest && strcmp(first->dest, "/") == 0)
			at = 1;
	}
	for (guint i = 0; i < p->ro->len; i++)
		add_bind(plan->mounts, &at, p->ro->pdata[i], FALSE);
	for (guint i = 0; i < p->rw->len; i++)
		add_bind(plan->mounts, &at, p->rw->pdata[i], TRUE);
	for (guint i = 0; i < p->tmpfs->len; i++)
		add_tmpfs(plan->mounts, &at, p->tmpfs->pdata[i]);
	add_guarded(plan, p);
	add_copies(plan, p);
	for (guint i = 0; i < p->key_files->len; i++)
		g_ptr_array_add(plan->key_files, g_strdup(p->key_files->pdata[i]));

	for (guint i = 0; i < p->env_allow->len; i++)
		g_ptr_array_add(plan->env_allow, g_strdup(p->env_allow->pdata[i]));
	/* Its keys: bound by the run when their values exist (run/profile-keys.h). */
	for (guint i = 0; i < p->keys->len; i++)
		g_ptr_array_add(plan->profile_keys, g_strdup(p->keys->pdata[i]));
	g_free(plan->profile_applied);
	plan->profile_applied = g_strdup(p->name);

	if (plan->net == VR_NET_DEFAULT && p->net_allow->len && !(config && config->net)) {
		plan->net = VR_NET_ALLOW;
		for (guint i = 0; i < p->net_allow->len; i++)
			g_ptr_array_add(plan->net_allow, g_strdup(p->net_allow->pdata[i]));
	}
	return TRUE;
}
