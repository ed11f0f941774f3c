/* Reading an audit log (JSON Lines, schema in docs/audit.md): a reader that
 * yields one record per line, tolerant of bad lines (reported with their line
 * number, then skipped) and of a live file that is still being written
 * (a last line without its newline is held back until it is complete). */
#pragma once
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include <glib.h>

#include "audit/json.h"

/* One log line. The strings point into the reader and stay valid until the
 * next call of vr_audit_reader_next(); absent fields are NULL (strings) or -1
 * (numbers). */
typedef struct {
	const char *line;        /* the raw line, without its newline */
	size_t line_len;
	unsigned long lineno;    /* 1-based */
	VrJsonObject obj;        /* every field, for what is not named below */

	const char *ts;          /* RFC 3339 text as written */
	int64_t ts_us;           /* microseconds since the epoch; INT64_MIN when absent or unreadable */
	const char *run, *op, *path, *target, *result, *rule, *comm, *exe;
	const char *root;        /* the view's host directory that path is relative to; NULL: the project */
	const char *host;        /* op "connect" */
	const char *command;     /* op "run-start" */
	int64_t pid, port, bytes_read, bytes_written, exit_status, seq;
} VrAuditRecord;

typedef struct VrAuditReader VrAuditReader;

/* A log and the parts rotated out of it (audit/out.h): LOG.1 (the
 * oldest), LOG.2, … up to the first number missing, then LOG itself: the
 * order the records were written in. "-" is itself alone. A GPtrArray of
 * paths (char *) that frees them. */
GPtrArray *vr_audit_log_parts(const char *path);

/* Opens PATH ("-" is stdin) for reading. -errno on failure. */
int vr_audit_reader_open(const char *path, VrAuditReader **ret);
/* Takes ownership of FD; NAME is used in messages. */
VrAuditReader *vr_audit_reader_new_fd(int fd, const char *name);
void vr_audit_reader_free(VrAuditReader *r);

/* In follow mode a last line without its newline is not returned at end of
 * file: the writer may be half-way through it. Off by default. */
void vr_audit_reader_set_follow(VrAuditReader *r, bool follow);

/* 1: a record in *rec; 0: end of the data for now; -EBADMSG: line
 * vr_audit_reader_lineno() is not a JSON object (why: vr_audit_reader_error());
 * keep calling; other -errno: a read error. *rec is reused between calls
 * (initialise it with vr_audit_record_init). Lines longer than
 * VR_AUDIT_MAX_LINE are bad lines, skipped without being held in memory. */
#define VR_AUDIT_MAX_LINE (1u << 20)
int vr_audit_reader_next(VrAuditReader *r, VrAuditRecord *rec);
unsigned long vr_audit_reader_lineno(const VrAuditReader *r);
const char *vr_audit_reader_error(const VrAuditReader *r);
unsigned long vr_audit_reader_bad_lines(const VrAuditReader *r);
const char *vr_audit_reader_name(const VrAuditReader *r);
int vr_audit_reader_fd(const VrAuditReader *r);
/* True when the line just returned ended the file without a newline. */
bool vr_audit_reader_unterminated(const VrAuditReader *r);
/* For --follow after truncation or rotation: forget buffered bytes, and
 * (when NEW_FD >= 0) read from NEW_FD from now on (the old fd is closed). */
void vr_audit_reader_reset(VrAuditReader *r, int new_fd);

void vr_audit_record_init(VrAuditRecord *rec);
void vr_audit_record_clear(VrAuditRecord *rec);
/* Fills REC's named fields from an already parsed REC->obj. */
void vr_audit_record_fill(VrAuditRecord *rec);

/* "Denied" in every view of the log: the result is neither "ok" nor
 * "redacted" (a redacted read succeeded, with the secrets masked), nor
 * "readonly" on an op that only looks (lookup, getattr, read…). */
bool vr_audit_record_denied(const VrAuditRecord *rec);
/* Where REC's path is: the path as it is for the project's view, else its
 * view's "root" and the path joined (a host path). g_free() it. */
char *vr_audit_record_where(const VrAuditRecord *rec, const char *path);
/* Ops that change the project (write, create, unlink, rename, setattr…), or
 * a close that wrote bytes. */
bool vr_audit_record_is_write(const VrAuditRecord *rec);

/* Time. RFC 3339 ("2026-01-02T03:04:05.123456Z", any offset, fraction
 * optional) to microseconds since the epoch. -EINVAL when malformed. */
int vr_audit_parse_rfc3339(const char *s, int64_t *ret_us);
/* A --since/--until argument: RFC 3339, or a relative time: "10m", "-10m"
 * (that long before NOW_US), "+10m" (that long after RUN_START_US, the first
 * record of the log; INT64_MIN when unknown). Units s, m, h, d. Sets
 * *ret_relative_to_start for the "+" form, whose value is an offset. */
int vr_audit_parse_time_arg(const char *s, int64_t now_us, int64_t *ret_us,
                            bool *ret_relative_to_start);
/* "2026-01-02T03:04:05.123456Z" into BUF (at least 32 bytes). */
void vr_audit_format_time(int64_t us, char *buf, size_t size);
