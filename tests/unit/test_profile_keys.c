/* A profile's [keys]: parsing (good, bad: the error names the file, the
 * key and the declaration), the shipped profiles' keys, and what a run
 * makes of them: bound when the value exists, skipped when absent, an
 * explicit --key wins, --key none and [sandbox] key = none turn them off,
 * --net none gives sentinels only, --net host does not bind them. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>
#include <fnmatch.h>
#include <glib.h>
#include <glib/gstdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "net/keys.h"
#include "policy/config.h"
#include "run/keys.h"
#include "run/profile-keys.h"
#include "run/profile.h"

#define REAL_OPENAI "sk-proj-REALvalue0123456789abcdefghij"

static char *tmp_root;

/* A user profile NAME with TEXT, found first on the search path. */
static char *write_profile(const char *name, const char *text)
{
	g_autofree char *pdir = g_build_filename(tmp_root, "config", "vault-run", "profiles", NULL);
	g_mkdir_with_parents(pdir, 0700);
	g_autofree char *file = g_strconcat(name, ".profile", NULL);
	char *path = g_build_filename(pdir, file, NULL);
	assert_true(g_file_set_contents(path, text, -1, NULL));
	return path;
}

static void good_keys_parse(void **state)
{
	g_autofree char *path = write_profile(
		"withkeys", "[profile]\ndescription = t\n[net]\nallow = api.example.com\n[keys]\n"
		            "bind = K_ONE@api.example.com; K_TWO@api.example.com:as=x-api-key:methods=POST:paths=/v1/*\n");
	g_autoptr(GError) error = NULL;
	g_autoptr(VrProfile) p = vr_profile_load("withkeys", "/home/u", &error);
	assert_non_null(p);
	assert_int_equal(p->keys->len, 2);
	assert_string_equal(p->keys->pdata[0], "K_ONE@api.example.com");
	g_unlink(path);
}

static void bad_keys_are_refused(void **state)
{
	static const struct {
		const char *bind, *want;
	} bad[] = {
		{"bind = K@10.0.0.1\n", "IP literal"},
		{"bind = K@*.example.com\n", "wildcard"},
		{"bind = K@api.example.com:as=header\n", "'header' is not a place"},
		{"bind = K@api.example.com:443\n", "port"},
		{"bind = 1K@api.example.com\n", "not a variable name"},
		{"bind = OPENAI_API_KEY\n", "expected NAME@HOST"},
	};
	for (size_t i = 0; i < G_N_ELEMENTS(bad); i++) {
		g_autofree char *text = g_strconcat("[keys]\n", bad[i].bind, NULL);
		g_autofree char *path = write_profile("badkeys", text);
		g_autoptr(GError) e = NULL;
		assert_null(vr_profile_load("badkeys", "/home/u", &e));
		/* The file, the key and the declaration (the token) are named. */
		assert_non_null(strstr(e->message, path));
		assert_non_null(strstr(e->message, "[keys] bind"));
		g_autofree char *token = g_strstrip(g_strdup(bad[i].bind + strlen("bind = ")));
		assert_non_null(strstr(e->message, token));
		assert_non_null(strstr(e->message, bad[i].want));
		g_unlink(path);
	}
	g_autofree char *path = write_profile("typokeys", "[keys]\nbinds = K@api.example.com\n");
	g_autoptr(GError) e = NULL;
	assert_null(vr_profile_load("typokeys", "/home/u", &e));
	assert_non_null(strstr(e->message, "unknown key 'binds' in group [keys]"));
	g_unlink(path);
}

static gboolean allowed_by(GPtrArray *globs, const char *name)
{
	for (guint i = 0; i < globs->len; i++)
		if (fnmatch(globs->pdata[i], name, 0) == 0)
			return TRUE;
	return FALSE;
}

static const VrNetKey *find_key(const VrProfile *p, GPtrArray *parsed, const char *name)
{
	for (guint i = 0; i < p->keys->len; i++) {
		VrNetKey *k = vr_net_key_parse(p->keys->pdata[i], NULL);
		assert_non_null(k);
		g_ptr_array_add(parsed, k);
		if (strcmp(k->name, name) == 0)
			return k;
	}
	return NULL;
}

/* Each shipped key is a name the harness gets ([env] allow) bound to a
 * host it may reach ([net] allow): a profile's keys add no host. */
static void shipped_keys_fit_their_profiles(void **state)
{
	const char *names[] = {"aider", "claude", "codex", "gemini", "opencode"};
	for (size_t i = 0; i < G_N_ELEMENTS(names); i++) {
		g_autoptr(GError) error = NULL;
		g_autoptr(VrProfile) p = vr_profile_load(names[i], "/home/u", &error);
		assert_non_null(p);
		assert_true(p->keys->len > 0);
		for (guint j = 0; j < p->keys->len; j++) {
			g_autoptr(VrNetKey) k = vr_net_key_parse(p->keys->pdata[j], &error);
			assert_non_null(k);
			assert_true(allowed_by(p->env_allow, k->name));
			for (guint h = 0; h < k->hosts->len; h++)
				assert_true(g_ptr_array_find_with_equal_func(p->net_allow, k->hosts->pdata[h], g_str_equal, NULL));
		}
	}
	/* Each provider's own header. */
	static const struct {
		const char *profile, *name, *host;
		guint places;
	} want[] = {
		{"opencode", "OPENAI_API_KEY", "api.openai.com", VR_KEY_AS_BEARER},
		{"opencode", "ANTHROPIC_API_KEY", "api.anthropic.com", VR_KEY_AS_X_API_KEY},
		{"opencode", "GEMINI_API_KEY", "generativelanguage.googleapis.com", VR_KEY_AS_X_GOOG_API_KEY | VR_KEY_AS_QUERY},
		{"opencode", "GROQ_API_KEY", "api.groq.com", VR_KEY_AS_BEARER},
		{"opencode", "XAI_API_KEY", "api.x.ai", VR_KEY_AS_BEARER},
		{"opencode", "DEEPSEEK_API_KEY", "api.deepseek.com", VR_KEY_AS_BEARER},
		{"opencode", "OPENROUTER_API_KEY", "openrouter.ai", VR_KEY_AS_BEARER},
		{"claude", "ANTHROPIC_API_KEY", "api.anthropic.com", VR_KEY_AS_X_API_KEY},
		{"claude", "CLAUDE_CODE_OAUTH_TOKEN", "api.anthropic.com", VR_KEY_AS_BEARER},
		{"codex", "OPENAI_API_KEY", "api.openai.com", VR_KEY_AS_BEARER},
		{"gemini", "GEMINI_API_KEY", "generativelanguage.googleapis.com", VR_KEY_AS_X_GOOG_API_KEY | VR_KEY_AS_QUERY},
		{"gemini", "GOOGLE_API_KEY", "generativelanguage.googleapis.com", VR_KEY_AS_X_GOOG_API_KEY | VR_KEY_AS_QUERY},
		{"aider", "ANTHROPIC_API_KEY", "api.anthropic.com", VR_KEY_AS_X_API_KEY},
	};
	for (size_t i = 0; i < G_N_ELEMENTS(want); i++) {
		g_autoptr(VrProfile) p = vr_profile_load(want[i].profile, "/home/u", NULL);
		g_autoptr(GPtrArray) parsed = g_ptr_array_new_with_free_func((GDestroyNotify)vr_net_key_free);
		const VrNetKey *k = find_key(p, parsed, want[i].name);
		assert_non_null(k);
		assert_int_equal(k->hosts->len, 1);
		assert_string_equal(k->hosts->pdata[0], want[i].host);
		assert_int_equal(k->places, want[i].places);
	}
	/* Copilot's GitHub tokens are code-host tokens: not bound (docs/profiles.md). */
	g_autoptr(VrProfile) copilot = vr_profile_load("copilot", "/home/u", NULL);
	assert_int_equal(copilot->keys->len, 0);
}

/* A plan as the profile opencode leaves it: its keys, its allow-list. */
static VrRunPlan *profile_plan(VrNetMode net)
{
	VrRunPlan *plan = vr_run_plan_new();
	g_ptr_array_add(plan->profile_keys, g_strdup("OPENAI_API_KEY@api.openai.com"));
	g_ptr_array_add(plan->profile_keys, g_strdup("ANTHROPIC_API_KEY@api.anthropic.com:as=x-api-key"));
	plan->profile_applied = g_strdup("test");
	plan->net = net;
	if (net == VR_NET_ALLOW) {
		g_ptr_array_add(plan->net_allow, g_strdup("api.openai.com"));
		g_ptr_array_add(plan->net_allow, g_strdup("api.anthropic.com"));
	}
	return plan;
}

static char **env_of(const char *first, ...)
{
	GPtrArray *a = g_ptr_array_new();
	va_list ap;
	va_start(ap, first);
	for (const char *s = first; s; s = va_arg(ap, const char *))
		g_ptr_array_add(a, g_strdup(s));
	va_end(ap);
	g_ptr_array_add(a, NULL);
	return (char **)g_ptr_array_free(a, FALSE);
}

/* NAME's value in ENV only (not the host environment's). */
static const char *env_get(char **env, const char *name)
{
	gboolean in = FALSE;
	const char *v = vr_run_key_value(env, name, &in);
	return in ? v : NULL;
}

static void bound_when_present_skipped_when_absent(void **state)
{
	g_autoptr(VrRunPlan) plan = profile_plan(VR_NET_ALLOW);
	g_auto(VrRunKeys) rk = VR_RUN_KEYS_INIT;
	g_autoptr(GError) error = NULL;
	assert_true(vr_run_keys_plan(&rk, plan, NULL, &error));
	/* No host added: the profile's allow-list already names them, bare. */
	assert_int_equal(plan->net_allow->len, 2);
	assert_int_equal(rk.optional->len, 2);
	assert_true(rk.terminates);

	g_auto(GStrv) env = env_of("PATH=/bin", "OPENAI_API_KEY=" REAL_OPENAI, NULL);
	assert_true(vr_run_keys_take_values(&rk, &env, &error));
	const char *inside = env_get(env, "OPENAI_API_KEY");
	assert_non_null(inside);
	assert_string_not_equal(inside, REAL_OPENAI);
	assert_int_equal(strlen(inside), strlen(REAL_OPENAI));
	assert_true(g_str_has_prefix(inside, "sk-proj-"));
	/* The absent one is skipped without an error, and gets no variable. */
	assert_null(env_get(env, "ANTHROPIC_API_KEY"));
	assert_int_equal(vr_net_keys_count(rk.keys), 1);
	assert_true(rk.values_fd >= 0);
	assert_non_null(env_get(env, "SSL_CERT_FILE"));

	/* None present: nothing bound, nothing terminated, no trust store. */
	g_autoptr(VrRunPlan) p2 = profile_plan(VR_NET_ALLOW);
	g_auto(VrRunKeys) r2 = VR_RUN_KEYS_INIT;
	assert_true(vr_run_keys_plan(&r2, p2, NULL, &error));
	g_auto(GStrv) e2 = env_of("PATH=/bin", NULL);
	assert_true(vr_run_keys_take_values(&r2, &e2, &error));
	assert_null(r2.keys);
	assert_false(r2.terminates);
	assert_int_equal(r2.values_fd, -1);
	assert_null(env_get(e2, "SSL_CERT_FILE"));

	/* A value that cannot be a key (a local model's placeholder) is not
	 * bound: it stays as it is. */
	g_autoptr(VrRunPlan) p3 = profile_plan(VR_NET_ALLOW);
	g_auto(VrRunKeys) r3 = VR_RUN_KEYS_INIT;
	assert_true(vr_run_keys_plan(&r3, p3, NULL, &error));
	g_auto(GStrv) e3 = env_of("OPENAI_API_KEY=ollama", NULL);
	assert_true(vr_run_keys_take_values(&r3, &e3, &error));
	assert_string_equal(env_get(e3, "OPENAI_API_KEY"), "ollama");
	assert_null(r3.keys);
}

static void explicit_key_wins(void **state)
{
	g_autoptr(VrRunPlan) plan = profile_plan(VR_NET_ALLOW);
	g_ptr_array_add(plan->keys, g_strdup("OPENAI_API_KEY@llm.example.com:as=x-api-key"));
	g_auto(VrRunKeys) rk = VR_RUN_KEYS_INIT;
	g_autoptr(GError) error = NULL;
	assert_true(vr_run_keys_plan(&rk, plan, NULL, &error));
	const VrNetKey *k = vr_net_keys_find(rk.keys, "OPENAI_API_KEY");
	assert_non_null(k);
	assert_string_equal(k->hosts->pdata[0], "llm.example.com");
	assert_int_equal(k->places, VR_KEY_AS_X_API_KEY);
	/* It is the command line's now: no longer optional, its host added. */
	assert_false(g_ptr_array_find_with_equal_func(rk.optional, "OPENAI_API_KEY", g_str_equal, NULL));
	assert_true(g_ptr_array_find_with_equal_func(plan->net_allow, "llm.example.com:443", g_str_equal, NULL));
	/* An explicit key with no value is still an error. */
	g_auto(GStrv) env = env_of("PATH=/bin", NULL);
	g_unsetenv("OPENAI_API_KEY");
	g_autoptr(GError) e = NULL;
	assert_false(vr_run_keys_take_values(&rk, &env, &e));
	assert_non_null(strstr(e->message, "OPENAI_API_KEY has no value"));

	/* The config's key wins over the profile's too. */
	g_autoptr(VrRunPlan) p2 = profile_plan(VR_NET_ALLOW);
	g_autoptr(VrConfig) config = vr_config_new();
	g_ptr_array_add(config->keys, g_strdup("ANTHROPIC_API_KEY@gw.example.com"));
	g_auto(VrRunKeys) r2 = VR_RUN_KEYS_INIT;
	assert_true(vr_run_keys_plan(&r2, p2, config, &error));
	assert_string_equal(vr_net_keys_find(r2.keys, "ANTHROPIC_API_KEY")->hosts->pdata[0], "gw.example.com");
}

static void key_none_turns_them_off(void **state)
{
	g_autoptr(VrRunPlan) plan = profile_plan(VR_NET_ALLOW);
	g_ptr_array_add(plan->keys, g_strdup("none"));
	g_autoptr(VrConfig) config = vr_config_new();
	g_ptr_array_add(config->keys, g_strdup("OTHER_KEY@api.example.com"));
	g_auto(VrRunKeys) rk = VR_RUN_KEYS_INIT;
	g_autoptr(GError) error = NULL;
	assert_true(vr_run_keys_plan(&rk, plan, config, &error));
	assert_null(rk.keys);
	assert_false(rk.terminates);
	assert_true(g_ptr_array_find_with_equal_func(rk.unbound, "OPENAI_API_KEY", g_str_equal, NULL));
	assert_true(g_ptr_array_find_with_equal_func(rk.unbound, "OTHER_KEY", g_str_equal, NULL));
	g_auto(GStrv) env = env_of("OPENAI_API_KEY=" REAL_OPENAI, NULL);
	assert_true(vr_run_keys_take_values(&rk, &env, &error));
	assert_string_equal(env_get(env, "OPENAI_API_KEY"), REAL_OPENAI);

	/* Beside another --key: an error naming both. */
	g_autoptr(VrRunPlan) p2 = profile_plan(VR_NET_ALLOW);
	g_ptr_array_add(p2->keys, g_strdup("none"));
	g_ptr_array_add(p2->keys, g_strdup("K@api.example.com"));
	g_auto(VrRunKeys) r2 = VR_RUN_KEYS_INIT;
	g_autoptr(GError) e2 = NULL;
	assert_false(vr_run_keys_plan(&r2, p2, NULL, &e2));
	assert_non_null(strstr(e2->message, "--key none"));
	assert_non_null(strstr(e2->message, "another --key"));

	/* The config's key = none: the profile's keys off, a --key still bound. */
	g_autoptr(VrRunPlan) p3 = profile_plan(VR_NET_ALLOW);
	g_ptr_array_add(p3->keys, g_strdup("K_CLI@api.example.com"));
	g_autoptr(VrConfig) c3 = vr_config_new();
	g_ptr_array_add(c3->keys, g_strdup("none"));
	g_auto(VrRunKeys) r3 = VR_RUN_KEYS_INIT;
	assert_true(vr_run_keys_plan(&r3, p3, c3, &error));
	assert_int_equal(vr_net_keys_count(r3.keys), 1);
	assert_non_null(vr_net_keys_find(r3.keys, "K_CLI"));
	assert_true(g_ptr_array_find_with_equal_func(r3.unbound, "OPENAI_API_KEY", g_str_equal, NULL));
}

static void net_none_and_host(void **state)
{
	/* --net none: sentinels inside, the value nowhere (no proxy, no memfd). */
	g_autoptr(VrRunPlan) plan = profile_plan(VR_NET_NONE);
	g_auto(VrRunKeys) rk = VR_RUN_KEYS_INIT;
	g_autoptr(GError) error = NULL;
	assert_true(vr_run_keys_plan(&rk, plan, NULL, &error));
	assert_true(rk.no_proxy);
	assert_false(rk.terminates);
	g_auto(GStrv) env = env_of("OPENAI_API_KEY=" REAL_OPENAI, NULL);
	assert_true(vr_run_keys_take_values(&rk, &env, &error));
	const char *inside = env_get(env, "OPENAI_API_KEY");
	assert_non_null(inside);
	assert_string_not_equal(inside, REAL_OPENAI);
	assert_int_equal(rk.values_fd, -1);
	assert_null(env_get(env, "SSL_CERT_FILE"));
	assert_int_equal(plan->net, VR_NET_NONE);

	/* --net host: not bound, the real value passes (one warning). */
	g_autoptr(VrRunPlan) h = profile_plan(VR_NET_HOST);
	g_auto(VrRunKeys) hk = VR_RUN_KEYS_INIT;
	assert_true(vr_run_keys_plan(&hk, h, NULL, &error));
	assert_null(hk.keys);
	assert_true(g_ptr_array_find_with_equal_func(hk.unbound, "OPENAI_API_KEY", g_str_equal, NULL));
	g_auto(GStrv) he = env_of("OPENAI_API_KEY=" REAL_OPENAI, NULL);
	assert_true(vr_run_keys_take_values(&hk, &he, &error));
	assert_string_equal(env_get(he, "OPENAI_API_KEY"), REAL_OPENAI);
	/* An explicit --key with --net host stays an error. */
	g_autoptr(VrRunPlan) x = profile_plan(VR_NET_HOST);
	g_ptr_array_add(x->keys, g_strdup("K@api.example.com"));
	g_auto(VrRunKeys) xk = VR_RUN_KEYS_INIT;
	g_autoptr(GError) e = NULL;
	assert_false(vr_run_keys_plan(&xk, x, NULL, &e));
	assert_non_null(strstr(e->message, "--key K needs the proxy"));
}

int main(void)
{
	tmp_root = g_dir_make_tmp("vr-profile-keys-XXXXXX", NULL);
	g_autofree char *config = g_build_filename(tmp_root, "config", NULL);
	g_autofree char *stated = g_build_filename(tmp_root, "state", NULL);
	g_mkdir_with_parents(stated, 0700);
	/* Before anything reads them (glib caches the user directories). */
	g_setenv("XDG_CONFIG_HOME", config, TRUE);
	g_setenv("XDG_STATE_HOME", stated, TRUE);
	g_unsetenv("OPENAI_API_KEY");
	g_unsetenv("ANTHROPIC_API_KEY");
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(good_keys_parse),
		cmocka_unit_test(bad_keys_are_refused),
		cmocka_unit_test(shipped_keys_fit_their_profiles),
		cmocka_unit_test(bound_when_present_skipped_when_absent),
		cmocka_unit_test(explicit_key_wins),
		cmocka_unit_test(key_none_turns_them_off),
		cmocka_unit_test(net_none_and_host),
	};
	int r = cmocka_run_group_tests(tests, NULL, NULL);
	g_autofree char *cmd = g_strdup_printf("rm -rf '%s'", tmp_root);
	(void)!system(cmd);
	return r;
}
