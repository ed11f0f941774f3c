/* The scan filter ([view] scan-disable, scan-allow): parsing in config
 * files (with FILE:LINE errors), refusal in a project's .vault-run, and
 * which hits are dropped for which path. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <glib.h>
#include <string.h>

#include "policy/config.h"
#include "policy/scan-filter.h"

static gboolean load(VrConfig *c, const char *text, VrConfigSource src, GError **error)
{
	return vr_config_load_data(c, text, strlen(text), src == VR_SOURCE_PROJECT ? "proj/.vault-run" : "cfg", src,
	                           error);
}

/* Scans text and returns the rule ids the filter keeps for relpath, joined by ','. */
static char *kept(const VrScanFilter *f, const char *relpath, const char *text)
{
	g_autoptr(GArray) hits = g_array_new(FALSE, FALSE, sizeof(VrScanHit));
	vr_scan_buffer(text, strlen(text), hits);
	vr_scan_filter_apply(f, relpath, hits);
	g_autoptr(GString) s = g_string_new(NULL);
	for (guint i = 0; i < hits->len; i++)
		g_string_append_printf(s, "%s%s", i ? "," : "", g_array_index(hits, VrScanHit, i).rule->id);
	return g_string_free(g_steal_pointer(&s), FALSE);
}

/* Two rules' worth of secrets in one file: an AWS key id and a JWT. */
static const char two_rules[] =
	"key = AKIAOXYIMCFIP6NZB353\n"
	"auth = eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U\n";

static void test_parse_and_apply(void **state)
{
	(void)state;
	g_autoptr(VrConfig) c = vr_config_new();
	g_autoptr(GError) e = NULL;
	assert_true(vr_scan_filter_is_empty(c->scan_filter));
	const char *text = "[view]\n"
	                   "scan = refuse\n"
	                   "scan-disable = slack-token\n"
	                   "scan-allow = tests/fixtures/:jwt; *.md:*;  docs/keys.txt : aws-access-key-id\n";
	assert_true(load(c, text, VR_SOURCE_USER, &e));
	assert_string_equal(c->scan_mode, "refuse");
	assert_string_equal(c->scan_mode_source, "cfg:2");
	assert_false(vr_scan_filter_is_empty(c->scan_filter));
	assert_int_equal(vr_scan_filter_n_disabled(c->scan_filter), 1);
	const VrScanDisabled *d = vr_scan_filter_disabled(c->scan_filter, 0);
	assert_string_equal(d->rule->id, "slack-token");
	assert_string_equal(d->source, "cfg");
	assert_int_equal(d->line, 3);
	assert_int_equal(vr_scan_filter_n_allowed(c->scan_filter), 3);
	const VrScanAllow *a = vr_scan_filter_allowed(c->scan_filter, 0);
	assert_string_equal(a->pattern, "tests/fixtures/");
	assert_string_equal(a->rule->id, "jwt");
	assert_int_equal(a->line, 4);
	assert_null(vr_scan_filter_allowed(c->scan_filter, 1)->rule); /* '*' */
	assert_string_equal(vr_scan_filter_allowed(c->scan_filter, 2)->pattern, "docs/keys.txt");

	const VrScanFilter *f = c->scan_filter;
	g_autofree char *everywhere = kept(f, "src/app.py", two_rules);
	assert_string_equal(everywhere, "aws-access-key-id,jwt");
	/* A directory pattern covers everything below it, for its rule only. */
	g_autofree char *fixture = kept(f, "tests/fixtures/deep/tok.txt", two_rules);
	assert_string_equal(fixture, "aws-access-key-id");
	/* ... and not a file named like it elsewhere. */
	g_autofree char *not_fixture = kept(f, "src/tests/fixtures", two_rules);
	assert_string_equal(not_fixture, "aws-access-key-id,jwt");
	/* '*': every rule; a basename pattern matches at any depth. */
	g_autofree char *md = kept(f, "a/b/README.md", two_rules);
	assert_string_equal(md, "");
	g_autofree char *keys = kept(f, "docs/keys.txt", two_rules);
	assert_string_equal(keys, "jwt");
	g_autofree char *keys_elsewhere = kept(f, "src/docs/keys.txt", two_rules);
	assert_string_equal(keys_elsewhere, "aws-access-key-id,jwt");
	/* A disabled rule is dropped everywhere. */
	g_autofree char *slack = kept(f, "src/x", "t = xoxb-123456789012-abcdefghijkl\n");
	assert_string_equal(slack, "");

	/* The key differs exactly when what is dropped differs. */
	assert_true(vr_scan_filter_key(f, "src/a.py") == vr_scan_filter_key(f, "lib/b.py"));
	assert_true(vr_scan_filter_key(f, "src/a.py") != vr_scan_filter_key(f, "tests/fixtures/a.py"));
	assert_true(vr_scan_filter_key(NULL, "x") == 0);
	/* NULL filter: nothing dropped. */
	g_autofree char *none = kept(NULL, "a.md", two_rules);
	assert_string_equal(none, "aws-access-key-id,jwt");
}

static void expect_error(VrConfigSource src, const char *text, const char *want)
{
	g_autoptr(VrConfig) c = vr_config_new();
	g_autoptr(GError) e = NULL;
	assert_false(load(c, text, src, &e));
	assert_non_null(e);
	if (!strstr(e->message, want))
		fail_msg("message '%s' lacks '%s'", e->message, want);
	assert_null(strchr(e->message, '\n'));
}

static void test_bad(void **state)
{
	(void)state;
	expect_error(VR_SOURCE_USER, "[view]\nscan-disable = jwt; no-such-rule\n",
	             "cfg:2: unknown scanner rule 'no-such-rule'; expected a rule id from `vault-run scan --rules`");
	expect_error(VR_SOURCE_USER, "[view]\n\nscan-allow = tests/fixtures/\n", "cfg:3: scan-allow entry 'tests/fixtures/'; expected PATTERN:RULE");
	expect_error(VR_SOURCE_USER, "[view]\nscan-allow = :jwt\n", "cfg:2: scan-allow entry ':jwt'");
	expect_error(VR_SOURCE_USER, "[view]\nscan-allow = a/**:\n", "cfg:2: scan-allow entry");
	expect_error(VR_SOURCE_USER, "[view]\nscan-allow = src/*.py:nope\n", "cfg:2: unknown scanner rule 'nope'");
	expect_error(VR_SOURCE_USER, "[view]\nscan-allow = src/[a:jwt\n", "cfg:2: scan-allow pattern:");
	expect_error(VR_SOURCE_USER, "[view]\nscan-allow = a:jwt\nscan-allow = b:jwt\n", "cfg:3: key 'scan-allow' in [view] repeats line 2");
	/* A project file may not loosen the scan: the group is refused where
	 * it starts, and the keys are unknown in [policy]. */
	expect_error(VR_SOURCE_PROJECT, "[policy]\nhide = x\n[view]\nscan-allow = src/**:*\n",
	             "proj/.vault-run:3: [view] is not allowed in a project config; project config may only add restrictions");
	expect_error(VR_SOURCE_PROJECT, "[policy]\nscan-disable = jwt\n",
	             "proj/.vault-run:2: unknown key 'scan-disable' in [policy]");
	/* The same lines are fine from a --policy file (the user's own). */
	g_autoptr(VrConfig) c = vr_config_new();
	g_autoptr(GError) e = NULL;
	const char *text = "[view]\nscan-allow = src/**:*\n";
	assert_true(vr_config_load_data(c, text, strlen(text), "pol", VR_SOURCE_POLICY, &e));
	assert_int_equal(vr_scan_filter_n_allowed(c->scan_filter), 1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse_and_apply),
		cmocka_unit_test(test_bad),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
