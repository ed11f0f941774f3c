/* Hidden (and other protected) files that have more than one name.
 *
 * The view decides by name, but a host file can carry several: `ln .env hl`
 * made on the host before the run gives the secret a visible name. A file
 * with one name is decided by that name; a regular file with st_nlink > 1
 * takes the strictest class of every name it has in the project. The other
 * names are unknown at lookup, so on the first lookup of such a file the
 * daemon walks the project once (readdir only; a stat only for protected
 * names) and remembers the (dev, ino) of every protected multi-link file.
 * Later lookups of multi-link files consult that set; files with one name
 * never wait. Hidden names met at lookup later are added too. */
#pragma once
#include <stdbool.h>
#include <sys/stat.h>

#include "policy/policy.h"

/* The decision for a multi-link regular file: d, or the stricter class
 * recorded for its (dev, ino). Walks the project on first use. */
VrDecision vr_hardlinks_decide(int root_fd, const struct stat *st, VrDecision d);
/* Records a protected name met at lookup (st of the object it names). */
void vr_hardlinks_note(const struct stat *st, VrDecision d);
