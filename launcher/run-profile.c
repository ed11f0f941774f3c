#include "run-profile.h"

#include <errno.h>
#include <string.h>
#include <sys/stat.h>

#include "config.h"
#include "log.h"
#include "profile.h"

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

/* Every writable harness directory is served through a view of its own:
 * its read-only paths (ro-inside) are that view's whole policy — a bind of
 * a file on top would not cover a settings file the harness has not written
 * yet, which the agent could then create — and when vault-run runs as root
 * the view presents the directory as owned by the agent's uid, as it does the
 * project. (These views keep no audit log of their own yet.) */
static void add_guarded(VrRunPlan *plan, const VrProfile *p)
{
	for (guint i = 0; i < p->rw->len; i++) {
		const char *dir = p->rw->pdata[i];
		if (!g_file_test(dir, G_FILE_TEST_IS_DIR) || g_file_test(dir, G_FILE_TEST_IS_SYMLINK))
			continue;
		VrGuardedDir *g = g_new0(VrGuardedDir, 1);
		g->dir = g_strdup(dir);
		g->readonly = g_ptr_array_new_with_free_func(g_free);
		for (guint j = 0; j < p->ro_inside->len; j++) {
			const char *inside = p->ro_inside->pdata[j];
			/* Anchored at the directory's root: "/settings.json". */
			if (path_is_in(inside, dir))
				g_ptr_array_add(g->readonly, g_strdup(inside + strlen(dir)));
		}
		g_ptr_array_add(plan->guarded_dirs, g);
	}
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
	add_guarded(plan, p);

	for (guint i = 0; i < p->env_allow->len; i++)
		g_ptr_array_add(plan->env_allow, g_strdup(p->env_allow->pdata[i]));

	if (plan->net == VR_NET_DEFAULT && p->net_allow->len && !(config && config->net)) {
		plan->net = VR_NET_ALLOW;
		for (guint i = 0; i < p->net_allow->len; i++)
			g_ptr_array_add(plan->net_allow, g_strdup(p->net_allow->pdata[i]));
	}
	return TRUE;
}
