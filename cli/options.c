/* See cli/options.h. */
#include "cli/options.h"

#include <stdio.h>
#include <string.h>

#include "common/exitcode.h"
#include "common/log.h"

/* GOption keeps a "--" when option-looking words follow it and drops it
 * otherwise; getopt drops the first one (in strict mode: only where the
 * operands begin; a later one is an operand's). Do as getopt. */
static void drop_double_dash(int *argc, char **argv, gboolean strict)
{
	for (int i = 1; i < (strict ? MIN(*argc, 2) : *argc); i++) {
		if (strcmp(argv[i], "--") == 0) {
			memmove(argv + i, argv + i + 1, (size_t)(*argc - i) * sizeof *argv);
			(*argc)--;
			return;
		}
	}
}

gboolean vr_cli_options_parse(const VrCliOptions *o, const char *usage, int *argc, char ***argv, int *ret_status)
{
	gboolean help = FALSE;
	const GOptionEntry help_entry[] = {{"help", 'h', 0, G_OPTION_ARG_NONE, &help, NULL, NULL}, {NULL}};
	g_autoptr(GOptionContext) ctx = g_option_context_new(NULL);
	GOptionGroup *main = g_option_group_new(o->cmd, NULL, NULL, o->data, NULL);
	g_option_group_add_entries(main, o->entries);
	g_option_group_add_entries(main, help_entry);
	g_option_context_set_main_group(ctx, main);
	/* Our own usage text, not GOption's generated one. */
	g_option_context_set_help_enabled(ctx, FALSE);
	g_option_context_set_strict_posix(ctx, o->strict);
	g_autoptr(GError) error = NULL;
	if (!g_option_context_parse(ctx, argc, argv, &error)) {
		vr_error("%s: %s (see vault-run %s --help)", o->cmd, error->message, o->cmd);
		*ret_status = VR_EXIT_ERROR;
		return FALSE;
	}
	if (help) {
		fputs(usage, stdout);
		*ret_status = VR_EXIT_OK;
		return FALSE;
	}
	drop_double_dash(argc, *argv, o->strict);
	return TRUE;
}

static void rule_clear(gpointer p)
{
	g_free(((VrCliRule *)p)->pattern);
}

GArray *vr_cli_rules_new(void)
{
	GArray *a = g_array_new(FALSE, FALSE, sizeof(VrCliRule));
	g_array_set_clear_func(a, rule_clear);
	return a;
}

gboolean vr_cli_rule_option(const char *name, const char *value, gpointer rules, GError **error)
{
	(void)error;
	/* NAME is "--hide" or "--hide=…"'s option part; VALUE is GOption's
	 * copy, freed after this call. */
	VrCliRule r = {strcmp(name, "--hide") == 0       ? VR_RULE_HIDE
	               : strcmp(name, "--readonly") == 0 ? VR_RULE_READONLY
	               : strcmp(name, "--redact") == 0   ? VR_RULE_REDACT
	                                                 : VR_RULE_SHOW,
	               g_strdup(value)};
	g_array_append_val((GArray *)rules, r);
	return TRUE;
}

gboolean vr_cli_rules_add(const GArray *rules, VrPolicy *policy, GError **error)
{
	for (guint i = 0; i < rules->len; i++) {
		const VrCliRule *r = &g_array_index(rules, VrCliRule, i);
		if (!vr_policy_add(policy, r->kind, r->pattern, "command line", (int)i + 1, FALSE, error))
			return FALSE;
	}
	return TRUE;
}
