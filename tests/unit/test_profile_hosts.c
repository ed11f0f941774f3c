/* The hosts the shipped profiles allow (issue 16 item 10): only what each
 * harness needs to work, none of the telemetry services that take uploads
 * (not by name, nor under a wildcard), and docs/profiles.md names every
 * allowed host of every profile with its reason. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>
#include <glib.h>
#include <string.h>

#include "net/allow.h"
#include "run/profile.h"

/* Error reports, analytics and log intake of the harnesses (and the
 * services they use): each takes uploads, none is needed to work. */
static const char *const telemetry[] = {
	"statsig.anthropic.com", "sentry.io", "o1.ingest.sentry.io", "http-intake.logs.us5.datadoghq.com",
	"browser-intake-us5-datadoghq.com", "api.datadoghq.com", "cdn.growthbook.io", "play.googleapis.com",
	"api.segment.io", "us.i.posthog.com", "app.posthog.com", "api.mixpanel.com",
	"copilot-telemetry.githubusercontent.com", "telemetry.individual.githubcopilot.com",
	"telemetry.business.githubcopilot.com", "api.opencode.ai", "opncd.ai", "ab.chatgpt.com",
};

static void no_telemetry_host_is_allowed(void **state)
{
	g_autoptr(GPtrArray) names = vr_profile_list();
	for (guint i = 0; i < names->len; i++) {
		g_autoptr(VrProfile) p = vr_profile_load(names->pdata[i], "/home/u", NULL);
		assert_non_null(p);
		g_autoptr(VrNetAllow) allow = vr_net_allow_new();
		for (guint j = 0; j < p->net_allow->len; j++) {
			g_autoptr(GError) error = NULL;
			if (!vr_net_allow_add(allow, p->net_allow->pdata[j], &error))
				fail_msg("%s: %s", (char *)names->pdata[i], error->message);
		}
		for (size_t t = 0; t < G_N_ELEMENTS(telemetry); t++) {
			const char *rule = vr_net_allow_match(allow, telemetry[t], 443);
			if (rule)
				fail_msg("profile %s allows %s (through '%s')", (char *)names->pdata[i], telemetry[t], rule);
		}
	}
}

static void docs_name_every_host(void **state)
{
	const char *src = g_getenv("VR_SOURCE_DIR");
	assert_non_null(src);
	g_autofree char *path = g_build_filename(src, "docs", "profiles.md", NULL);
	g_autofree char *doc = NULL;
	assert_true(g_file_get_contents(path, &doc, NULL, NULL));
	g_autoptr(GPtrArray) names = vr_profile_list();
	for (guint i = 0; i < names->len; i++) {
		g_autoptr(VrProfile) p = vr_profile_load(names->pdata[i], "/home/u", NULL);
		/* The profile's table: from "### NAME" to the next heading. */
		g_autofree char *heading = g_strdup_printf("\n#### `%s`\n", (char *)names->pdata[i]);
		const char *at = strstr(doc, heading);
		if (p->net_allow->len == 0)
			continue;
		if (!at)
			fail_msg("docs/profiles.md has no '#### `%s`' host table", (char *)names->pdata[i]);
		const char *end = strstr(at + strlen(heading), "\n#");
		g_autofree char *section = end ? g_strndup(at, (gsize)(end - at)) : g_strdup(at);
		for (guint j = 0; j < p->net_allow->len; j++) {
			g_autofree char *cell = g_strdup_printf("| `%s` |", (char *)p->net_allow->pdata[j]);
			if (!strstr(section, cell))
				fail_msg("docs/profiles.md: profile %s allows %s but its table does not say why",
				         (char *)names->pdata[i], (char *)p->net_allow->pdata[j]);
		}
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(no_telemetry_host_is_allowed),
		cmocka_unit_test(docs_name_every_host),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
