/* JSON for the harnesses' own files (key files, settings, state), read and
 * written with jansson: it depends on libc alone, where json-glib brought
 * GIO and seven more shared objects into every exec of vault-run
 * (docs/PERFORMANCE.md "Start-up"). */
#pragma once
#include <glib.h>
#include <jansson.h>

G_DEFINE_AUTOPTR_CLEANUP_FUNC(json_t, json_decref)

/* Reading what only strings are taken from (a key file's field, the paths a
 * settings file names): as the harness's own parser would, as far as
 * jansson can. A NUL escaped in a string (\u0000) is taken, not refused (a
 * refused key file would go unread, so unmasked); an integer of any size
 * is read as a real, not refused; any value may be the root. */
#define VR_JSON_READ_FLAGS (JSON_ALLOW_NUL | JSON_DECODE_INT_AS_REAL | JSON_DECODE_ANY)
/* Reading what is written back (a state file's merge): integers stay
 * integers, so one beyond 64 bits makes the file not JSON to us and
 * nothing is merged into it (the host's file is left as it is). */
#define VR_JSON_MERGE_FLAGS (JSON_ALLOW_NUL)
