/* vault-run profiles [NAME]: lists the harness profiles, or shows one, with
 * its keys and where a run would find each key's value (never the value). */
#include <stdio.h>
#include <string.h>

#include "cli/commands.h"
#include "cli/options.h"
#include "common/exitcode.h"
#include "common/log.h"
#include "net/keys.h"
#include "policy/config.h"
#include "run/plan.h"
#include "run/profile-keys.h"
#include "run/profile.h"
#include "run/run.h"

static const char usage_text[] =
	"Usage: vault-run profiles [NAME [--env-file FILE[:GLOB,...]]...]\n"
	"Lists the harness profiles, or shows what profile NAME binds and allows, and\n"
	"for each of its keys whether a run would find a value (in an --env-file given\n"
	"here, or the environment) and bind it: never the value.\n";

static void print_list(const char *label, GPtrArray *items)
{
	if (items->len == 0)
		return;
	printf("  %-14s", label);
	for (guint i = 0; i < items->len; i++)
		printf("%s%s", i ? "\n                " : "", (char *)items->pdata[i]);
	printf("\n");
}

/* The variables the --env-file options give (only theirs: no host
 * variable), read as a run reads them; NULL with the error printed. */
static char **env_files_env(char **files)
{
	g_autoptr(VrRunPlan) plan = vr_run_plan_new();
	plan->quiet = TRUE;
	for (char **f = files; f && *f; f++) {
		VrEnvOp op = {VR_ENV_FILE, NULL, NULL, FALSE};
		vr_config_split_env_file(*f, &op.name, &op.value);
		g_array_append_val(plan->env_ops, op);
	}
	g_autoptr(GError) error = NULL;
	char **env = vr_env_build(plan, NULL, NULL, NULL, &error);
	if (!env)
		vr_error("%s", error->message);
	return env;
}

/* A GPtrArray of strings joined by commas (its pdata has no NULL end, so
 * not g_strjoinv). */
static char *join(const GPtrArray *a)
{
	GString *s = g_string_new(NULL);
	for (guint i = 0; i < a->len; i++)
		g_string_append_printf(s, "%s%s", i ? "," : "", (const char *)a->pdata[i]);
	return g_string_free(s, FALSE);
}

/* Where a run finds KEY's value, and whether it can be bound. */
static void print_key(const VrNetKey *k, char **file_env, gboolean first)
{
	g_autofree char *places = vr_net_key_places_text(k->places);
	g_autofree char *hosts = join(k->hosts);
	printf("  %-14s%s@%s  as %s", first ? "keys" : "", k->name, hosts, places);
	if (k->methods) {
		g_autofree char *m = join(k->methods);
		printf("  methods %s", m);
	}
	if (k->paths) {
		g_autofree char *p = join(k->paths);
		printf("  paths %s", p);
	}
	gboolean in_file = FALSE;
	const char *value = vr_run_key_value(file_env, k->name, &in_file);
	const char *where = !value || !*value ? NULL : in_file ? "env-file" : "environment";
	if (!where) {
		printf("\n                  value: none (not bound)\n");
		return;
	}
	static const guint8 probe[VR_NET_KEY_SECRET_SIZE];
	g_autoptr(GError) e = NULL;
	g_autofree char *sentinel = vr_net_key_sentinel(probe, sizeof probe, k->name, value, &e);
	if (sentinel)
		printf("\n                  value: found in the %s (bound: a sentinel inside)\n", where);
	else
		printf("\n                  value: found in the %s, not bound: %s\n", where, e->message);
}

static int show(const char *name, char **env_files)
{
	g_autoptr(GError) error = NULL;
	g_autoptr(VrProfile) p = vr_profile_load(name, g_get_home_dir(), &error);
	if (!p) {
		vr_error("%s", error->message);
		return VR_EXIT_ERROR;
	}
	g_auto(GStrv) file_env = env_files_env(env_files);
	if (!file_env)
		return VR_EXIT_ERROR;
	printf("%s — %s\n  (%s)\n", p->name, p->description ? p->description : "", p->source);
	print_list("commands", p->commands);
	print_list("toolchains", p->toolchains);
	print_list("read-only", p->ro);
	print_list("writable", p->rw);
	print_list("kept ro", p->ro_inside);
	print_list("per-run copy", p->copy);
	print_list("merged back", p->merge);
	print_list("per-run tmpfs", p->tmpfs);
	print_list("env", p->env_allow);
	print_list("net", p->net_allow);
	for (guint i = 0; i < p->keys->len; i++) {
		g_autoptr(VrNetKey) k = vr_net_key_parse(p->keys->pdata[i], NULL);
		if (k) /* checked when the profile loaded */
			print_key(k, file_env, i == 0);
	}
	print_list("key files", p->key_files);
	return VR_EXIT_OK;
}

int vr_cmd_profiles(int argc, char **argv)
{
	g_auto(GStrv) env_files = NULL;
	const GOptionEntry entries[] = {
		{"env-file", 0, 0, G_OPTION_ARG_FILENAME_ARRAY, &env_files, NULL, NULL},
		{NULL},
	};
	const VrCliOptions o = {"profiles", entries, FALSE, NULL};
	int status;
	if (!vr_cli_options_parse(&o, usage_text, &argc, &argv, &status))
		return status;
	if (argc > 2) {
		vr_error("profiles takes at most one NAME; see vault-run profiles --help");
		return VR_EXIT_ERROR;
	}
	if (argc == 2)
		return show(argv[1], env_files);
	if (env_files) {
		vr_error("profiles: --env-file needs a profile NAME; see vault-run profiles --help");
		return VR_EXIT_ERROR;
	}
	g_autoptr(GPtrArray) names = vr_profile_list();
	for (guint i = 0; i < names->len; i++) {
		g_autoptr(VrProfile) p = vr_profile_load(names->pdata[i], g_get_home_dir(), NULL);
		printf("%-10s %s\n", (char *)names->pdata[i],
		       p && p->description ? p->description : "(cannot be loaded: run `vault-run profiles NAME`)");
	}
	return VR_EXIT_OK;
}
