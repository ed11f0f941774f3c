/* A profile's keys in a run (docs/network.md "Keys", "Profile keys"). A
 * profile's `[keys] bind` names every key its harness could use, in the
 * --key grammar (net/keys.h); the run binds those whose value exists (an
 * --env-file, the host environment) and skips the others without a word.
 * An explicit --key or [sandbox] key of the same name wins. A profile's
 * keys never widen the network: their hosts are the profile's [net] allow
 * already, and a key whose host the run cannot reach holds its sentinel
 * all the same.
 *
 * run/keys.c carries them out with the --key machinery; this file holds
 * what is the profile's own: which keys are optional, which are dropped,
 * and the one warning when real values enter anyway (--key none, --net
 * host). */
#pragma once
#include <glib.h>

#include "net/keys.h"
#include "run/plan.h"

/* The value a run takes for NAME: ENVP's (the sandbox's environment as
 * built: an --env-file, an allowed host variable) or else the host
 * environment's; NULL or "" when there is none. *ret_inside (may be NULL):
 * whether ENVP holds it, i.e. it would enter the sandbox unbound. */
const char *vr_run_key_value(char **envp, const char *name, gboolean *ret_inside);

/* Adds plan->profile_keys to KEYS and their names to OPTIONAL (g_free'd
 * strings). A declaration that does not parse (a profile checked at load
 * cannot have one) is an error naming the profile. */
gboolean vr_run_profile_keys_add(VrNetKeys *keys, GPtrArray *optional, const VrRunPlan *plan, GError **error);

/* Drops from KEYS each key named in OPTIONAL that has no value in ENVP or
 * the host environment (silently: a profile names every key its harness
 * could use), and each whose value cannot be a key (too short, a byte a
 * header cannot carry: a local model's "sk-no-key"), which gets one
 * warning when the value enters the sandbox as it is. */
void vr_run_profile_keys_drop_absent(VrNetKeys *keys, GPtrArray *optional, char **envp, const char *profile);

/* One warning line when some of NAMES have a real value in ENVP, which
 * therefore enters the sandbox: WHY says why they are not bound and how
 * to bind them. Nothing when none does. */
void vr_run_keys_warn_unbound(GPtrArray *names, char **envp, const char *why);
