/* The run plan's life cycle and the --net grammar it shares with the
 * config's `net =` (see plan.h). */
#include "run/plan.h"
#include "net/allow.h"
#include "net/keys.h"
#include "policy/config.h"

#include <string.h>

G_DEFINE_QUARK(vr-plan-error-quark, vr_plan_error)

static void env_op_clear(gpointer p)
{
	VrEnvOp *op = p;
	g_free(op->name);
	g_free(op->value);
}

static void user_mount_clear(gpointer p)
{
	VrUserMount *m = p;
	g_free(m->src);
	g_free(m->dest);
}

static void plan_rule_clear(gpointer p)
{
	g_free(((VrPlanRule *)p)->pattern);
}

static void guarded_dir_free(gpointer p)
{
	VrGuardedDir *g = p;
	g_free(g->dir);
	g_free(g->source);
	g_ptr_array_unref(g->readonly);
	g_free(g);
}

static void copy_file_free(gpointer p)
{
	VrCopyFile *c = p;
	g_free(c->path);
	g_ptr_array_unref(c->merge);
	g_free(c);
}

VrRunPlan *vr_run_plan_new(void)
{
	VrRunPlan *plan = g_new0(VrRunPlan, 1);
	plan->env_allow = g_ptr_array_new_with_free_func(g_free);
	plan->net_allow = g_ptr_array_new_with_free_func(g_free);
	plan->net_localhost = g_ptr_array_new_with_free_func(g_free);
	plan->net_read = g_ptr_array_new_with_free_func(g_free);
	plan->keys = g_ptr_array_new_with_free_func(g_free);
	plan->profile_keys = g_ptr_array_new_with_free_func(g_free);
	plan->key_files = g_ptr_array_new_with_free_func(g_free);
	plan->guarded_dirs = g_ptr_array_new_with_free_func(guarded_dir_free);
	plan->copies = g_ptr_array_new_with_free_func(copy_file_free);
	plan->env_ops = g_array_new(FALSE, TRUE, sizeof(VrEnvOp));
	g_array_set_clear_func(plan->env_ops, env_op_clear);
	plan->mounts = g_array_new(FALSE, TRUE, sizeof(VrUserMount));
	g_array_set_clear_func(plan->mounts, user_mount_clear);
	plan->rules = g_array_new(FALSE, TRUE, sizeof(VrPlanRule));
	g_array_set_clear_func(plan->rules, plan_rule_clear);
	plan->json_status_fd = -1;
	return plan;
}

void vr_run_plan_free(VrRunPlan *plan)
{
	if (!plan)
		return;
	g_free(plan->project);
	g_free(plan->mount_at);
	g_free(plan->gitfile_dir);
	g_free(plan->gitfile_why);
	g_ptr_array_unref(plan->env_allow);
	g_ptr_array_unref(plan->net_allow);
	g_ptr_array_unref(plan->net_read);
	g_ptr_array_unref(plan->keys);
	g_ptr_array_unref(plan->profile_keys);
	g_free(plan->profile_applied);
	g_ptr_array_unref(plan->key_files);
	g_ptr_array_unref(plan->net_localhost);
	g_ptr_array_unref(plan->guarded_dirs);
	g_ptr_array_unref(plan->copies);
	g_free(plan->profile);
	g_array_unref(plan->env_ops);
	g_array_unref(plan->mounts);
	g_array_unref(plan->rules);
	g_free(plan->rootfs);
	g_free(plan->chdir);
	g_free(plan->hostname);
	g_free(plan->audit_path);
	g_free(plan->audit_level);
	g_free(plan->audit_fail);
	g_free(plan->policy_file);
	g_free(plan->scan_mode);
	g_strfreev(plan->command);
	g_free(plan);
}

static gboolean bad_value(GError **error, const char *opt, const char *value, const char *want)
{
	g_set_error(error, VR_PLAN_ERROR, VR_PLAN_ERROR_BAD_VALUE, "%s: '%s' is not %s", opt, value, want);
	return FALSE;
}

#define NET_FORMS                                                                                              \
	"'none', 'host', 'allow=DOMAIN[,DOMAIN...]', 'read=HOST[,HOST...]', 'allow-localhost=PORT[/tcp][,PORT...]' " \
	"or 'allow-private'"

/* read=HOST,...: terminated like a key's host, on 443 only (net/inject.h):
 * a pattern without a port would let a CONNECT to :22 push. */
static gboolean add_net_read(VrRunPlan *plan, const char *list, const char *what, GError **error)
{
	g_auto(GStrv) items = g_strsplit(list, ",", -1);
	for (char **it = items; *it; it++) {
		const char *why = NULL;
		if (!*g_strstrip(*it))
			continue;
		char *h = vr_net_key_host(*it, &why);
		if (!h) {
			g_set_error(error, VR_PLAN_ERROR, VR_PLAN_ERROR_BAD_VALUE, "%s: read=%s: %s", what, *it, why);
			return FALSE;
		}
		g_ptr_array_add(plan->net_allow, g_strconcat(h, ":443", NULL));
		g_ptr_array_add(plan->net_read, h);
	}
	plan->net = VR_NET_ALLOW;
	return TRUE;
}

/* allow-localhost=PORT,...: checked here, so a bad port is an error before
 * anything starts. */
static gboolean add_net_localhost(VrRunPlan *plan, const char *item, const char *list, const char *what,
                                  GError **error)
{
	g_autoptr(VrNetAllow) check = vr_net_allow_new();
	g_autoptr(GError) e = NULL;
	if (!vr_net_allow_add(check, item, &e)) {
		g_set_error(error, VR_PLAN_ERROR, VR_PLAN_ERROR_BAD_VALUE, "%s: %s", what, e->message);
		return FALSE;
	}
	g_auto(GStrv) ports = g_strsplit(list, ",", -1);
	for (char **it = ports; *it; it++)
		g_ptr_array_add(plan->net_localhost, g_strdup(g_strstrip(*it)));
	return TRUE;
}

/* One item of a --net value (see vr_run_plan_add_net). */
static gboolean add_net_item(VrRunPlan *plan, const char *item, const char *value, const char *what,
                             gboolean alone, GError **error)
{
	const char *list;
	switch (vr_config_net_item(item, &list)) {
	case VR_NET_ITEM_NONE:
	case VR_NET_ITEM_HOST:
		if (!alone)
			return bad_value(error, what, value, "a list: 'none' and 'host' stand alone");
		plan->net = item[0] == 'n' ? VR_NET_NONE : VR_NET_HOST;
		plan->net_explicit = TRUE;
		return TRUE;
	case VR_NET_ITEM_READ: return add_net_read(plan, list, what, error);
	case VR_NET_ITEM_PRIVATE: plan->net_allow_private = TRUE; return TRUE;
	case VR_NET_ITEM_ALLOW: {
		/* Repeatable: each --net allow= adds its patterns. */
		g_auto(GStrv) items = g_strsplit(list, ",", -1);
		for (char **it = items; *it; it++)
			if (**it)
				g_ptr_array_add(plan->net_allow, g_strdup(g_strstrip(*it)));
		plan->net = VR_NET_ALLOW;
		plan->net_explicit = TRUE;
		return TRUE;
	}
	case VR_NET_ITEM_LOCALHOST: return add_net_localhost(plan, item, list, what, error);
	case VR_NET_ITEM_BAD: break;
	}
	return bad_value(error, what, value, NET_FORMS);
}

gboolean vr_run_plan_add_net(VrRunPlan *plan, const char *value, const char *what, GError **error)
{
	g_auto(GStrv) items = vr_config_net_split(value);
	guint n = g_strv_length(items);
	if (n == 0)
		return bad_value(error, what, value, NET_FORMS);
	for (char **it = items; *it; it++)
		if (!add_net_item(plan, *it, value, what, n == 1, error))
			return FALSE;
	return TRUE;
}
