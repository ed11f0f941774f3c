/* A profile's keys in a run (see run/profile-keys.h). */
#include "run/profile-keys.h"

#include <string.h>

#include "common/log.h"

const char *vr_run_key_value(char **envp, const char *name, gboolean *ret_inside)
{
	size_t n = strlen(name);
	for (char **e = envp; e && *e; e++)
		if (strncmp(*e, name, n) == 0 && (*e)[n] == '=') {
			if (ret_inside)
				*ret_inside = TRUE;
			return *e + n + 1;
		}
	if (ret_inside)
		*ret_inside = FALSE;
	return g_getenv(name);
}

gboolean vr_run_profile_keys_add(VrNetKeys *keys, GPtrArray *optional, const VrRunPlan *plan, GError **error)
{
	for (guint i = 0; i < plan->profile_keys->len; i++) {
		g_autoptr(GError) e = NULL;
		VrNetKey *k = vr_net_key_parse(plan->profile_keys->pdata[i], &e);
		if (!k) {
			g_set_error(error, VR_PLAN_ERROR, VR_PLAN_ERROR_BAD_VALUE, "profile %s: [keys] bind: %s",
			            plan->profile_applied ? plan->profile_applied : "?", e->message);
			return FALSE;
		}
		g_ptr_array_add(optional, g_strdup(k->name));
		vr_net_keys_add(keys, k);
	}
	return TRUE;
}

void vr_run_profile_keys_drop_absent(VrNetKeys *keys, GPtrArray *optional, char **envp, const char *profile)
{
	for (guint i = 0; optional && i < optional->len; i++) {
		const char *name = optional->pdata[i];
		gboolean inside = FALSE;
		const char *value = vr_run_key_value(envp, name, &inside);
		if (!vr_net_keys_find(keys, name))
			continue;
		if (!value || !*value) {
			vr_net_keys_remove(keys, name);
			continue;
		}
		/* The sentinel's shape does not depend on the secret: a zero one
		 * tells whether the value can be a key at all. */
		static const guint8 probe[VR_NET_KEY_SECRET_SIZE];
		g_autoptr(GError) e = NULL;
		g_autofree char *sentinel = vr_net_key_sentinel(probe, sizeof probe, name, value, &e);
		if (sentinel)
			continue;
		vr_net_keys_remove(keys, name);
		if (inside)
			vr_warning("profile %s: %s is not bound (%s): it enters the sandbox as it is", profile ? profile : "?",
			           name, e ? e->message : "not a key");
	}
}

void vr_run_keys_warn_unbound(GPtrArray *names, char **envp, const char *why)
{
	g_autoptr(GString) s = g_string_new(NULL);
	guint n = 0;
	for (guint i = 0; names && i < names->len; i++) {
		gboolean inside = FALSE;
		const char *v = vr_run_key_value(envp, names->pdata[i], &inside);
		gboolean seen = FALSE;
		for (guint j = 0; j < i && !seen; j++)
			seen = strcmp(names->pdata[j], names->pdata[i]) == 0;
		if (!inside || !v || !*v || seen)
			continue;
		g_string_append_printf(s, "%s%s", n++ ? ", " : "", (const char *)names->pdata[i]);
	}
	if (n)
		vr_warning("%s %s the sandbox as %s real value%s: %s", s->str, n == 1 ? "enters" : "enter",
		           n == 1 ? "its" : "their", n == 1 ? "" : "s", why);
}
