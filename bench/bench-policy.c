/* bench-policy: decisions per second for the built-in policy over 100k
 * generated project paths (a fixed seed: the same paths every run).
 * Prints two figures: full decisions (every ancestor walked, as
 * `policy explain` does) and per-lookup decisions given the parent's
 * decision (as the view does, parent first). */
#include <stdio.h>
#include <string.h>
#include <time.h>

#include <glib.h>

#include "policy/policy.h"

#define N_PATHS 100000

static const char *const dirs[] = {
	"src", "src/core", "src/util", "lib", "include", "tests", "tests/unit", "docs",
	"node_modules/react/cjs", "node_modules/lodash", "node_modules/@types/node",
	".git/objects/3f", ".git/refs/heads", ".git/hooks", "config", "scripts", "build/obj",
	"vendor/github.com/x/y", "app/models", "app/views", ".github/workflows", "assets/img",
};
static const char *const names[] = {
	"main", "index", "util", "parser", "server", "client", "README", "config", "test_api",
	"helpers", "types", "Makefile", "package", "setup", "routes", "schema",
};
static const char *const exts[] = {
	".c", ".h", ".js", ".ts", ".py", ".go", ".rs", ".md", ".json", ".yml", ".txt", ".o",
	".css", ".html", "", ".lock", ".pem", ".key", ".sample",
};
static const char *const specials[] = {
	".env", ".env.local", ".env.example", "id_rsa", "credentials.json", ".npmrc",
	".gitignore", "Dockerfile", ".vscode/settings.json", ".git/config",
};

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

int main(void)
{
	g_autoptr(VrPolicy) policy = vr_policy_new();
	vr_policy_add_builtins(policy);
	GRand *rand = g_rand_new_with_seed(42);
	char **paths = g_new0(char *, N_PATHS);
	for (int i = 0; i < N_PATHS; i++) {
		const char *d = dirs[g_rand_int_range(rand, 0, G_N_ELEMENTS(dirs))];
		if (g_rand_int_range(rand, 0, 50) == 0)
			paths[i] = g_strdup_printf("%s/%s", d, specials[g_rand_int_range(rand, 0, G_N_ELEMENTS(specials))]);
		else
			paths[i] = g_strdup_printf("%s/%s%d%s", d,
			                           names[g_rand_int_range(rand, 0, G_N_ELEMENTS(names))],
			                           g_rand_int_range(rand, 0, 100),
			                           exts[g_rand_int_range(rand, 0, G_N_ELEMENTS(exts))]);
	}
	g_rand_free(rand);

	int counts[4] = {0};
	int rounds = 5;
	double t0 = now();
	for (int r = 0; r < rounds; r++)
		for (int i = 0; i < N_PATHS; i++)
			counts[vr_policy_decide(policy, paths[i], FALSE).cls]++;
	double full = now() - t0;

	/* Parent decisions computed once, as the view keeps them on the inode. */
	VrDecision *parents = g_new(VrDecision, N_PATHS);
	for (int i = 0; i < N_PATHS; i++) {
		g_autofree char *dir = g_path_get_dirname(paths[i]);
		parents[i] = vr_policy_decide(policy, dir, TRUE);
	}
	t0 = now();
	for (int r = 0; r < rounds; r++)
		for (int i = 0; i < N_PATHS; i++)
			vr_policy_decide_child(policy, parents[i], paths[i], FALSE);
	double child = now() - t0;

	printf("policy: %u built-in rules, %d paths x %d rounds (visible %d, readonly %d, redact %d, hidden %d)\n",
	       vr_policy_n_rules(policy), N_PATHS, rounds, counts[0] / rounds, counts[1] / rounds,
	       counts[2] / rounds, counts[3] / rounds);
	printf("decide (ancestors walked): %.0f decisions/s\n", N_PATHS * rounds / full);
	printf("decide_child (parent known): %.0f decisions/s\n", N_PATHS * rounds / child);
	for (int i = 0; i < N_PATHS; i++)
		g_free(paths[i]);
	g_free(paths);
	g_free(parents);
	return 0;
}
