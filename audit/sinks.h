/* Where a run's audit records go (--audit, [audit] path), parsed:
 *
 *     SINK[,SINK...]   (--audit may also be repeated: the lists add up)
 *
 * SINK is `state` (the run's log in the state directory, the default), `-`
 * (stderr), `syslog` (syslog(3); journald on systemd hosts) or a FILE. At
 * most one file (`state` or a FILE): the hash chain, rotation and
 * --audit-fail apply to it; stderr and syslog get the same records. A FILE
 * whose name holds a comma cannot be named here. Pure: unit-tested. */
#pragma once
#include <glib.h>
#include <stdbool.h>

typedef struct {
	bool state;       /* the run's log in the state directory */
	char *file;       /* a FILE, or NULL */
	bool to_stderr;   /* "-" */
	bool to_syslog;   /* "syslog" */
} VrAuditSinks;

/* Fills *RET from LIST (a previous content is cleared). FALSE with a one-line
 * message in *ERROR (no option name in it: the caller adds it). */
gboolean vr_audit_sinks_parse(const char *list, VrAuditSinks *ret, char **error);
void vr_audit_sinks_clear(VrAuditSinks *s);

/* --audit-fail, [audit] fail: "closed" 0, "open" 1, else -1. */
int vr_audit_fail_parse(const char *s);
