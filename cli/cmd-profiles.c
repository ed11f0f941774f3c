/* vault-run profiles [NAME]: lists the harness profiles, or shows one. */
#include <stdio.h>
#include <string.h>

#include "cli/commands.h"
#include "common/exitcode.h"
#include "run/profile.h"

static void print_list(const char *label, GPtrArray *items)
{
	if (items->len == 0)
		return;
	printf("  %-14s", label);
	for (guint i = 0; i < items->len; i++)
		printf("%s%s", i ? "\n                " : "", (char *)items->pdata[i]);
	printf("\n");
}

int vr_cmd_profiles(int argc, char **argv)
{
	if (argc > 1 && (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0)) {
		printf("Usage: vault-run profiles [NAME]\n"
		       "Lists the harness profiles, or shows what profile NAME binds and allows.\n");
		return VR_EXIT_OK;
	}
	if (argc > 2) {
		fprintf(stderr, "vault-run: profiles takes at most one NAME; see vault-run profiles --help\n");
		return VR_EXIT_ERROR;
	}
	const char *home = g_get_home_dir();
	if (argc == 2) {
		g_autoptr(GError) error = NULL;
		g_autoptr(VrProfile) p = vr_profile_load(argv[1], home, &error);
		if (!p) {
			fprintf(stderr, "vault-run: %s\n", error->message);
			return VR_EXIT_ERROR;
		}
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
		return VR_EXIT_OK;
	}
	g_autoptr(GPtrArray) names = vr_profile_list();
	for (guint i = 0; i < names->len; i++) {
		g_autoptr(VrProfile) p = vr_profile_load(names->pdata[i], home, NULL);
		printf("%-10s %s\n", (char *)names->pdata[i],
		       p && p->description ? p->description : "(cannot be loaded: run `vault-run profiles NAME`)");
	}
	return VR_EXIT_OK;
}
