/* Keys in files (docs/network.md, "Keys in files"): a profile's
 * `[keys] file = PATH:FIELD[@HOST[,HOST...][:as=PLACE]...]` declarations.
 * At start the supervisor reads each declared JSON file (O_NOFOLLOW, in a
 * child: the parser's buffers never live in this process, which the
 * sandbox's pid 1 is a clone of), adds each field's value as a key (bound
 * to its hosts with its placement; with no host, *concealed*: bound to none,
 * so the proxy's tripwire refuses its sentinel everywhere), and hands the
 * view serving each file its (real, sentinel) pairs on a sealed memfd
 * (fusefs/keyfile.c serves the file masked). A missing file or field
 * gives nothing. */
#pragma once
#include <glib.h>

#include "net/keys.h"

typedef struct VrRunKeyFiles VrRunKeyFiles;

/* Checks one declaration; errors name it and what is wrong. */
gboolean vr_keyfile_spec_check(const char *spec, GError **error);

/* The per-user secret of the sentinels (VR_NET_KEY_SECRET_SIZE bytes). */
typedef gboolean (*VrKeyFilesSecretFn)(guint8 *secret, GError **error);

/* Reads the files of SPECS (char *, "~" expanded) and adds their keys to
 * KEYS (a key per field found, named "file:PATH:FIELD"; sentinels from the
 * secret GET_SECRET gives, asked for only when a file holds a value). NULL
 * with error set for a value that cannot be a key, or no secret. */
VrRunKeyFiles *vr_run_keyfiles_load(GPtrArray *specs, VrNetKeys *keys, VrKeyFilesSecretFn get_secret,
                                     GError **error);
void vr_run_keyfiles_free(VrRunKeyFiles *kf);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(VrRunKeyFiles, vr_run_keyfiles_free)

/* For the view of host directory ROOT (a real path): a sealed memfd with
 * the key files below it (paths relative to ROOT) and every pair, or -1
 * when it serves none (or on an error, logged). */
int vr_run_keyfiles_view_fd(const VrRunKeyFiles *kf, const char *root);
/* Every declared key file's path, resolved as far as it exists (borrowed):
 * also those that hold no value yet, so a bind of one goes through a view
 * that refuses what the host writes there during the run. */
const GPtrArray *vr_run_keyfiles_paths(const VrRunKeyFiles *kf);
/* Once every view has its memfd: the values this process held, zeroed. */
void vr_run_keyfiles_forget(VrRunKeyFiles *kf);
