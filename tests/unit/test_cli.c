/* Option parsing of a sandbox run: bubblewrap names and argument counts,
 * order of mounts and environment edits, errors for what is missing. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>
#include <cmocka.h>

#include "cli/run-options.h"
#include "run/keys.h"
#include "run/run.h"

static VrRunPlan *parse(GError **error, ...)
{
	const char *args[64] = {"vault-run"};
	int n = 1;
	va_list ap;
	va_start(ap, error);
	const char *a;
	while ((a = va_arg(ap, const char *)))
		args[n++] = a;
	va_end(ap);
	VrRunPlan *plan = vr_run_plan_new();
	if (!vr_cli_parse(plan, n, (char **)args, error)) {
		vr_run_plan_free(plan);
		return NULL;
	}
	return plan;
}

static void test_basic(void **state)
{
	g_autoptr(GError) error = NULL;
	g_autoptr(VrRunPlan) p = parse(&error, "--project", "/p", "--net", "host", "--", "sh", "-c", "x", NULL);
	assert_non_null(p);
	assert_string_equal(p->project, "/p");
	assert_int_equal(p->net, VR_NET_HOST);
	assert_string_equal(p->command[0], "sh");
	assert_string_equal(p->command[2], "x");
	assert_null(p->command[3]);
}

static void test_allow_home_project(void **state)
{
	g_autoptr(GError) error = NULL;
	g_autoptr(VrRunPlan) d = parse(&error, "true", NULL);
	assert_false(d->allow_home_project);
	g_autoptr(VrRunPlan) p = parse(&error, "--allow-home-project", "--project", "~", "true", NULL);
	assert_non_null(p);
	assert_true(p->allow_home_project);
}

static void test_net_allow_profile_quiet(void **state)
{
	g_autoptr(GError) error = NULL;
	g_autoptr(VrRunPlan) p = parse(&error, "--net", "allow=a.example,*.b.example", "--net",
	                               "allow=c.example:443", "--net", "allow-private",
	                               "--profile", "opencode", "--quiet", "true", NULL);
	assert_non_null(p);
	assert_int_equal(p->net, VR_NET_ALLOW);
	assert_int_equal(p->net_allow->len, 3);
	assert_string_equal(p->net_allow->pdata[1], "*.b.example");
	assert_string_equal(p->net_allow->pdata[2], "c.example:443");
	assert_true(p->net_allow_private);
	assert_string_equal(p->profile, "opencode");
	assert_true(p->quiet);

	g_autoptr(GError) e2 = NULL;
	assert_null(parse(&e2, "--net", "allow=", "true", NULL));
	assert_non_null(strstr(e2->message, "allow=DOMAIN"));
}

static void test_net_localhost(void **state)
{
	/* allow-localhost alone does not choose the domains (a profile's or
	 * the config's still apply); with allow= in one ';' value it adds up. */
	g_autoptr(GError) error = NULL;
	g_autoptr(VrRunPlan) p = parse(&error, "--net", "allow-localhost=11434,8080/tcp", "true", NULL);
	assert_non_null(p);
	assert_int_equal(p->net, VR_NET_DEFAULT);
	assert_int_equal(p->net_localhost->len, 2);
	assert_string_equal(p->net_localhost->pdata[1], "8080/tcp");
	g_autoptr(VrRunPlan) q =
	        parse(&error, "--net", "allow=api.x.com;allow-localhost=1234;allow-private", "true", NULL);
	assert_non_null(q);
	assert_int_equal(q->net, VR_NET_ALLOW);
	assert_int_equal(q->net_allow->len, 1);
	assert_int_equal(q->net_localhost->len, 1);
	assert_true(q->net_allow_private);

	g_autoptr(GError) e1 = NULL;
	assert_null(parse(&e1, "--net", "allow-localhost=3128", "true", NULL));
	assert_non_null(strstr(e1->message, "--net: allow-localhost '3128'"));
	g_autoptr(GError) e2 = NULL;
	assert_null(parse(&e2, "--net", "host;allow-localhost=1", "true", NULL));
	assert_non_null(strstr(e2->message, "stand alone"));
}

static void test_keys(void **state)
{
	/* --key is kept as written for the run; --net read= is a name on 443. */
	g_autoptr(GError) error = NULL;
	g_autoptr(VrRunPlan) p = parse(&error, "--key", "OPENAI_API_KEY@api.openai.com", "--net",
	                               "read=Git.Example.com", "true", NULL);
	assert_non_null(p);
	assert_int_equal(p->keys->len, 1);
	assert_int_equal(p->net, VR_NET_ALLOW);
	assert_string_equal(p->net_read->pdata[0], "git.example.com");
	assert_string_equal(p->net_allow->pdata[0], "git.example.com:443");
	g_auto(VrRunKeys) rk = VR_RUN_KEYS_INIT;
	assert_true(vr_run_keys_plan(&rk, p, NULL, &error));
	assert_true(rk.terminates);
	assert_string_equal(p->net_allow->pdata[1], "api.openai.com:443");

	g_autoptr(GError) e1 = NULL;
	assert_null(parse(&e1, "--net", "read=10.0.0.1", "true", NULL));
	assert_non_null(strstr(e1->message, "IP literal"));
	/* --net host or none cannot carry a key. */
	g_autoptr(VrRunPlan) h = parse(&error, "--net", "host", "--key", "K@api.example.com", "true", NULL);
	assert_non_null(h);
	g_auto(VrRunKeys) hk = VR_RUN_KEYS_INIT;
	g_autoptr(GError) e2 = NULL;
	assert_false(vr_run_keys_plan(&hk, h, NULL, &e2));
	assert_non_null(strstr(e2->message, "--net host"));
	/* A key bound to a wildcard is refused when the run reads it. */
	g_autoptr(VrRunPlan) w = parse(&error, "--key", "K@*.example.com", "true", NULL);
	g_auto(VrRunKeys) wk = VR_RUN_KEYS_INIT;
	g_autoptr(GError) e3 = NULL;
	assert_false(vr_run_keys_plan(&wk, w, NULL, &e3));
	assert_non_null(strstr(e3->message, "wildcard"));
}

static void test_scan_mode(void **state)
{
	g_autoptr(GError) error = NULL;
	g_autoptr(VrRunPlan) p = parse(&error, "--scan", "refuse", "--scan=off", "true", NULL);
	assert_non_null(p);
	assert_string_equal(p->scan_mode, "off"); /* the last one wins */
	g_autoptr(VrRunPlan) d = parse(&error, "true", NULL);
	assert_null(d->scan_mode); /* the config's, else mask */
	g_autoptr(GError) e2 = NULL;
	assert_null(parse(&e2, "--scan", "loud", "true", NULL));
	assert_string_equal(e2->message, "--scan: 'loud' is not one of mask, refuse, off");
}

static void test_command_without_dashdash(void **state)
{
	g_autoptr(GError) error = NULL;
	g_autoptr(VrRunPlan) p = parse(&error, "--unshare-net", "ls", "--project", NULL);
	assert_non_null(p);
	assert_int_equal(p->net, VR_NET_NONE);
	/* options after COMMAND belong to COMMAND */
	assert_string_equal(p->command[0], "ls");
	assert_string_equal(p->command[1], "--project");
	assert_null(p->project);
}

static void test_dash_command_after_dashdash(void **state)
{
	g_autoptr(GError) error = NULL;
	g_autoptr(VrRunPlan) p = parse(&error, "--", "--help", NULL);
	assert_non_null(p);
	assert_false(p->help);
	assert_string_equal(p->command[0], "--help");
}

static void test_mounts_in_order(void **state)
{
	g_autoptr(GError) error = NULL;
	g_autoptr(VrRunPlan) p = parse(&error, "--ro-bind", "/a", "/b", "--tmpfs", "/t", "--bind-try", "x", "/y",
	                               "--dev-bind", "/dev/kvm", "/dev/kvm", "--symlink", "usr/lib", "/lib",
	                               "--dir", "/d", "--proc", "/proc", "--dev", "/dev", "true", NULL);
	assert_non_null(p);
	assert_int_equal(p->mounts->len, 8);
	VrUserMount *m = &g_array_index(p->mounts, VrUserMount, 0);
	assert_int_equal(m->kind, VR_OP_BIND);
	assert_string_equal(m->src, "/a");
	assert_string_equal(m->dest, "/b");
	assert_int_equal(m->flags, VR_BIND_RO);
	m = &g_array_index(p->mounts, VrUserMount, 1);
	assert_int_equal(m->kind, VR_OP_TMPFS);
	m = &g_array_index(p->mounts, VrUserMount, 2);
	assert_int_equal(m->flags, VR_BIND_TRY);
	m = &g_array_index(p->mounts, VrUserMount, 3);
	assert_int_equal(m->flags, VR_BIND_DEV);
	m = &g_array_index(p->mounts, VrUserMount, 4);
	assert_int_equal(m->kind, VR_OP_SYMLINK);
	assert_string_equal(m->src, "usr/lib");
}

static void test_missing_argument(void **state)
{
	g_autoptr(GError) error = NULL;
	assert_null(parse(&error, "--ro-bind", "/a", NULL));
	assert_true(g_error_matches(error, VR_PLAN_ERROR, VR_PLAN_ERROR_MISSING_ARGUMENT));
	assert_non_null(strstr(error->message, "--ro-bind"));
	g_clear_error(&error);
	assert_null(parse(&error, "--project", NULL));
	assert_true(g_error_matches(error, VR_PLAN_ERROR, VR_PLAN_ERROR_MISSING_ARGUMENT));
}

static void test_unknown_and_bad(void **state)
{
	g_autoptr(GError) error = NULL;
	assert_null(parse(&error, "--frobnicate", "ls", NULL));
	assert_true(g_error_matches(error, VR_PLAN_ERROR, VR_PLAN_ERROR_UNKNOWN_OPTION));
	g_clear_error(&error);
	assert_null(parse(&error, "--net", "maybe", "ls", NULL));
	assert_true(g_error_matches(error, VR_PLAN_ERROR, VR_PLAN_ERROR_BAD_VALUE));
	g_clear_error(&error);
	assert_null(parse(&error, "--tmpfs", "relative", "ls", NULL));
	assert_true(g_error_matches(error, VR_PLAN_ERROR, VR_PLAN_ERROR_BAD_VALUE));
	g_clear_error(&error);
	assert_null(parse(&error, "--timeout", "-3", "ls", NULL));
	g_clear_error(&error);
	assert_null(parse(&error, "--json-status-fd", "x", "ls", NULL));
	g_clear_error(&error);
	assert_null(parse(&error, "--project", ".", NULL));
	assert_true(g_error_matches(error, VR_PLAN_ERROR, VR_PLAN_ERROR_NO_COMMAND));
}

/* --audit adds up (a comma list, or repeated), refusing a second log file;
 * --audit-max-size and --audit-fail are checked at parse time. */
static void test_audit_options(void **state)
{
	g_autoptr(GError) error = NULL;
	g_autoptr(VrRunPlan) p = parse(&error, "--audit", "state,syslog", "--audit=-", "--audit-max-size", "2k",
	                               "--audit-fail=open", "ls", NULL);
	assert_non_null(p);
	assert_string_equal(p->audit_path, "state,syslog,-");
	assert_true(p->audit_max_size_set);
	assert_int_equal(p->audit_max_size, 2048);
	assert_string_equal(p->audit_fail, "open");
	g_autoptr(VrRunPlan) q = parse(&error, "--audit-max-size", "off", "ls", NULL);
	assert_true(q->audit_max_size_set);
	assert_int_equal(q->audit_max_size, 0);
	assert_null(q->audit_path);
	assert_null(parse(&error, "--audit", "/a.jsonl", "--audit", "/b.jsonl", "ls", NULL));
	assert_true(g_error_matches(error, VR_PLAN_ERROR, VR_PLAN_ERROR_BAD_VALUE));
	assert_non_null(strstr(error->message, "--audit: "));
	g_clear_error(&error);
	assert_null(parse(&error, "--audit", "state,,-", "ls", NULL));
	g_clear_error(&error);
	assert_null(parse(&error, "--audit-max-size", "12", "ls", NULL));
	g_clear_error(&error);
	assert_null(parse(&error, "--audit-fail", "half", "ls", NULL));
	assert_true(g_error_matches(error, VR_PLAN_ERROR, VR_PLAN_ERROR_BAD_VALUE));
}

static void test_help_version_inline(void **state)
{
	g_autoptr(GError) error = NULL;
	g_autoptr(VrRunPlan) p = parse(&error, "--help", NULL);
	assert_non_null(p);
	assert_true(p->help);
	g_autoptr(VrRunPlan) q = parse(&error, "--project=/x", "--timeout=2.5", "-v", "-v", "id", NULL);
	assert_non_null(q);
	assert_string_equal(q->project, "/x");
	assert_true(q->timeout > 2.4 && q->timeout < 2.6);
	assert_int_equal(q->verbose, 2);
}

static void test_env_file_spec(void **state)
{
	g_autoptr(GError) error = NULL;
	g_autoptr(VrRunPlan) p = parse(&error, "--env-file", "a.env:API_KEY,OTHER", "--env-file", "/x:y/b.env",
	                               "--setenv", "A", "1", "--unsetenv", "B", "--clearenv",
	                               "--env-file", ".env:OPENAI_*,LEGION_*", "--env-file", "my:file:", "true", NULL);
	assert_non_null(p);
	assert_int_equal(p->env_ops->len, 7);
	VrEnvOp *op = &g_array_index(p->env_ops, VrEnvOp, 0);
	assert_string_equal(op->name, "a.env");
	assert_string_equal(op->value, "API_KEY,OTHER");
	op = &g_array_index(p->env_ops, VrEnvOp, 1);
	assert_string_equal(op->name, "/x:y/b.env");
	assert_null(op->value);
	/* Globs after the last ':' (issue 17: read as a file name before). */
	op = &g_array_index(p->env_ops, VrEnvOp, 5);
	assert_string_equal(op->name, ".env");
	assert_string_equal(op->value, "OPENAI_*,LEGION_*");
	op = &g_array_index(p->env_ops, VrEnvOp, 6);
	assert_string_equal(op->name, "my:file");
	assert_null(op->value);
	assert_null(parse(&error, "--setenv", "A=B", "1", "true", NULL));
}

static void test_env_build(void **state)
{
	g_autoptr(GError) error = NULL;
	g_autofree char *dir = g_dir_make_tmp("vr-cli-XXXXXX", NULL);
	g_autofree char *file = g_build_filename(dir, "x.env", NULL);
	g_assert_true(g_file_set_contents(file, "# c\nexport API_KEY=\"k 1\"\nOTHER='o'\nTOKEN=t # note\n", -1, NULL));
	g_autofree char *spec = g_strconcat(file, ":API_KEY,TOKEN", NULL);
	g_autoptr(VrRunPlan) p = parse(&error, "--env-allow", "MY_*", "--env-file", spec, "--setenv", "S", "v",
	                               "--unsetenv", "LANG", "true", NULL);
	assert_non_null(p);
	char *host[] = {(char *)"PATH=/bin", (char *)"LANG=C", (char *)"SECRET=x", (char *)"MY_VAR=1", (char *)"LC_ALL=C", (char *)"HOME=/h", NULL};
	g_auto(GStrv) env = vr_env_build(p, host, "/home/u", "u", &error);
	assert_non_null(env);
	assert_true(g_strv_contains((const char *const *)env, "PATH=/bin"));
	assert_true(g_strv_contains((const char *const *)env, "MY_VAR=1"));
	assert_true(g_strv_contains((const char *const *)env, "LC_ALL=C"));
	assert_true(g_strv_contains((const char *const *)env, "HOME=/home/u"));
	assert_true(g_strv_contains((const char *const *)env, "API_KEY=k 1"));
	assert_true(g_strv_contains((const char *const *)env, "TOKEN=t"));
	assert_true(g_strv_contains((const char *const *)env, "S=v"));
	assert_false(g_strv_contains((const char *const *)env, "SECRET=x"));
	assert_false(g_strv_contains((const char *const *)env, "OTHER=o"));
	assert_false(g_strv_contains((const char *const *)env, "LANG=C"));
	g_autoptr(VrRunPlan) q = parse(&error, "--clearenv", "--setenv", "ONLY", "1", "true", NULL);
	g_auto(GStrv) env2 = vr_env_build(q, host, NULL, NULL, &error);
	assert_int_equal(g_strv_length(env2), 1);
	g_autofree char *missing = g_strconcat(file, ":NOPE", NULL);
	g_autoptr(VrRunPlan) r = parse(&error, "--env-file", missing, "true", NULL);
	assert_null(vr_env_build(r, host, NULL, NULL, &error));
	assert_non_null(strstr(error->message, "no variable NOPE in it"));
	g_clear_error(&error);
	/* Globs pick from the file; one that matches nothing is no error;
	 * --env-allow does not filter a file. */
	g_autofree char *globs = g_strconcat(file, ":API_*,NONE_*", NULL);
	g_autoptr(VrRunPlan) s = parse(&error, "--env-allow", "OTHER", "--env-file", globs, "true", NULL);
	g_auto(GStrv) env3 = vr_env_build(s, host, NULL, NULL, &error);
	assert_non_null(env3);
	assert_true(g_strv_contains((const char *const *)env3, "API_KEY=k 1"));
	assert_false(g_strv_contains((const char *const *)env3, "TOKEN=t"));
	assert_false(g_strv_contains((const char *const *)env3, "OTHER=o"));
	remove(file);
	remove(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_basic),
		cmocka_unit_test(test_allow_home_project),
		cmocka_unit_test(test_scan_mode),
		cmocka_unit_test(test_command_without_dashdash),
		cmocka_unit_test(test_dash_command_after_dashdash),
		cmocka_unit_test(test_mounts_in_order),
		cmocka_unit_test(test_missing_argument),
		cmocka_unit_test(test_unknown_and_bad),
		cmocka_unit_test(test_help_version_inline),
		cmocka_unit_test(test_env_file_spec),
		cmocka_unit_test(test_env_build),
		cmocka_unit_test(test_net_allow_profile_quiet),
		cmocka_unit_test(test_net_localhost),
		cmocka_unit_test(test_keys),
		cmocka_unit_test(test_audit_options),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
