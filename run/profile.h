/* Harness profiles: data files (GKeyFile) naming what an agent needs —
 * host paths read-only or read-write, environment variables, domains.
 * Search order: $XDG_CONFIG_HOME/vault-run/profiles/, the installed
 * share/vault-run/profiles/, and — for the binary of a build tree only —
 * the source tree's share/profiles/ (a source tree can be a project the
 * agent writes: the installed binary never reads profiles from it). */
#pragma once
#include <glib.h>

typedef struct {
	char *name;
	char *description;
	char *source;          /* the file it came from */
	GPtrArray *commands;   /* command basenames that select it */
	GPtrArray *ro;         /* absolute host paths, bound read-only when present */
	GPtrArray *rw;         /* absolute host paths, bound read-write when present */
	GPtrArray *create;     /* rw directories the harness would create anyway */
	GPtrArray *ro_inside;  /* paths inside an rw directory that stay read-only */
	GPtrArray *copy;       /* host files the run works on a copy of (run/copy.h) */
	GPtrArray *merge;      /* JSON key paths of a copy that go back to the host file */
	GPtrArray *tmpfs;      /* directories that are an empty per-run tmpfs inside (caches of code the
	                        * host runs: never the host's) */
	GPtrArray *env_allow;  /* variable name globs */
	GPtrArray *net_allow;  /* domain patterns */
	GPtrArray *keys;       /* [keys] bind: the harness's keys, each a --key declaration (net/keys.h),
	                        * checked at load; bound in a run only when the value exists (run/profile-keys.h) */
	GPtrArray *toolchains; /* toolchain profiles merged in */
	GPtrArray *key_files;  /* [keys] file: PATH:FIELD[@HOST...] (run/keyfiles.h), "~" expanded */
} VrProfile;

/* Loads profile NAME (and its toolchains), with "~" expanded to home. */
VrProfile *vr_profile_load(const char *name, const char *home, GError **error);
void vr_profile_free(VrProfile *profile);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(VrProfile, vr_profile_free)

/* The profile whose `commands` names basename(command), or NULL. */
char *vr_profile_for_command(const char *command);
/* Whether KEY ("projects.{project}.history") may go back from a copy: not
 * one of the keys that make the host run something (mcpServers,
 * projects.*.mcpServers, projects.*.allowedTools…), nor an object holding
 * one. */
gboolean vr_profile_merge_key_allowed(const char *key);

/* Every profile name found on the search path, sorted, without toolchains. */
GPtrArray *vr_profile_list(void);
