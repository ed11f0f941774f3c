/* An audit log FILE (--audit FILE, [audit] path), opened by the caller of
 * the view (the supervisor of a run, `vault-run mount`) before anything is
 * mounted, and refused where the sandbox could read it.
 *
 * Why before: a view daemon that opened the path itself after its own mount
 * looked it up through that mount when the file was inside the project, and
 * waited for the INIT reply only it could send: the run hung in an
 * unkillable wait (issue 17, item 3). Opened first, the log is the host's
 * file whatever is mounted over its directory later; the daemon appends to
 * the descriptor and rotates in the directory's descriptor. */
#pragma once
#include <glib.h>

typedef struct {
	const char *dir;  /* a host path the sandbox (or the view) shows */
	const char *what; /* how the refusal names it: "the project", "a directory bound into the sandbox" */
	const char *why;  /* and says why: "the agent could read its own audit log there" */
} VrAuditUnder;

typedef struct {
	int fd;      /* O_WRONLY|O_APPEND|O_CLOEXEC, or -1 */
	int dir_fd;  /* the directory that holds it (O_PATH), for rotation, or -1 */
	char *path;  /* where it is (a symlink's target when PATH was one) */
} VrAuditFile;

/* Opens PATH for appending (created 0600 when missing; a symlink is followed
 * only to a file that exists, a non-regular file is allowed: a FIFO, a tty).
 * Refused with -EACCES when the file or a directory above it is one of
 * UNDER's N directories (by device and inode, so a bind mount of the
 * project elsewhere or a symlink into it is caught too): the agent could
 * read its own audit log there. 0, or -errno with a one-line *ERROR (the
 * caller adds the option's name). *RET is filled on success only. */
int vr_audit_file_open(const char *path, const VrAuditUnder *under, size_t n, VrAuditFile *ret, char **error);
void vr_audit_file_close(VrAuditFile *f);
