/* vault-run's own directories against the project: see run/own-dirs.h. */
#include "run/own-dirs.h"

#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "audit/state-dir.h"
#include "common/log.h"
#include "policy/config.h"

/* PATH made absolute and resolved as far as it exists (the state directory
 * may not yet): symlinks on the way lead where the files will really be. */
static char *resolve_existing(const char *path)
{
	g_autofree char *abs = g_canonicalize_filename(path, NULL);
	g_autofree char *rest = NULL;
	char real[PATH_MAX];
	while (!realpath(abs, real)) {
		if (strcmp(abs, "/") == 0)
			return NULL;
		g_autofree char *base = g_path_get_basename(abs);
		char *joined = rest ? g_build_filename(base, rest, NULL) : g_strdup(base);
		g_free(rest);
		rest = joined;
		char *parent = g_path_get_dirname(abs);
		g_free(abs);
		abs = parent;
	}
	return rest ? g_build_filename(real, rest, NULL) : g_strdup(real);
}

/* DIR (WHAT, the risk said by WHY) inside PROJECT: allowed only when the
 * project's policy gives it at least class MIN there. */
static int check_dir(const char *project, const VrPolicy *policy, const char *dir, VrClass min,
                     const char *what, const char *why, const char *fix)
{
	g_autofree char *real = resolve_existing(dir);
	char proj[PATH_MAX];
	if (!real || !realpath(project, proj))
		return 0;
	size_t n = strlen(proj);
	bool root = strcmp(proj, "/") == 0;
	if (!root && (strncmp(real, proj, n) != 0 || (real[n] != '/' && real[n] != '\0')))
		return 0;
	const char *rel = root ? real + 1 : real[n] ? real + n + 1 : "";
	if (*rel && vr_policy_decide(policy, rel, TRUE).cls >= min)
		return 0;
	g_autofree char *hint = *rel ? g_strdup_printf(", or run with --%s '/%s/'", min == VR_CLASS_HIDE ? "hide" : "readonly", rel)
	                             : g_strdup("");
	vr_error("%s %s is inside the project %s, where the agent %s; %s%s", what, real, proj, why, fix, hint);
	return -EACCES;
}

int vr_run_check_own_dirs(const char *project, const VrPolicy *policy)
{
	/* The state directory keeps every run's log and undo journal (the
	 * journal is written even with --audit FILE): inside the project the
	 * agent would read them and rewrite a journal that `vault-run undo`
	 * later restores on the host past the view's rules — unless the policy
	 * hides it there (--project ~ with the default
	 * ~/.local/state/vault-run: a built-in rule). */
	g_autofree char *state = NULL;
	if (vr_state_base_dir(&state) == 0) {
		int r = check_dir(project, policy, state, VR_CLASS_HIDE, "vault-run's state directory",
		                  "could read and rewrite the runs' audit logs and undo journals",
		                  "set XDG_STATE_HOME to a directory outside the project");
		if (r < 0)
			return r;
	}
	/* The config directory holds the user's rules and profiles: a profile
	 * planted there (profiles/shell.profile binding ~/.ssh) is what the
	 * next run of any project obeys. The config file itself is read-only
	 * in every view by its name, its profiles were not. */
	g_autofree char *user = vr_config_user_path();
	g_autofree char *config_dir = g_path_get_dirname(user);
	return check_dir(project, policy, config_dir, VR_CLASS_READONLY, "vault-run's config directory",
	                 "could rewrite the rules and profiles of the next run",
	                 "keep it out of the project");
}
