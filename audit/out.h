/* Where the audit writer's records go (the view's writer thread, fusefs/audit.c, hands them over in
 * batches): the hash chain (audit/chain.h), the file sink with its
 * size-based rotation, stderr and syslog, and what happens when the file
 * cannot be written. Writer thread only, no locks (docs/audit.md).
 *
 * Rotation. When the next record would take the file past max_size, LOG is
 * renamed LOG.N (N = 1 for the first part, then 2, …; an existing LOG.N is
 * never replaced) and a new LOG is created O_EXCL, whose first record is
 *     {"seq":…,"op":"rotate","prev":"<LOG.N's last hash>","previous_file":"LOG.N",…}
 * so the chain runs on across the parts (a record bigger than the limit
 * gets a part of its own).
 *
 * Failure. Records are written in chunks, each all or nothing: a chunk the
 * file refuses (ENOSPC, EIO, EFBIG…) is cut off again (ftruncate), and the
 * chain goes on from the last record the file holds, so the log stays
 * verifiable. closed (default): writing stops, one message says why, and
 * the stop hook ends the view. open: the records are counted as lost and
 * every later chunk tries again; the first one that is written starts with
 * {"op":"lost","count":N,"reason":"ENOSPC","since":"…"}.
 *
 * stderr and syslog get exactly the records the file got (or all of them
 * when there is no file); their own errors are ignored. */
#pragma once
#include <glib.h>
#include <stdbool.h>
#include <stdint.h>


/* Where the records go (the view's audit_* options, docs/audit.md). */
typedef struct {
	const char *path;     /* NULL: no file; "-": stderr; "syslog"; else a file (appended) */
	int fd;               /* >= 0: append to this fd instead (path only names it); left open */
	int dir_fd;           /* with fd: the directory that holds it, for rotation; -1: none */
	uint64_t max_size;    /* rotate before the file grows past this; 0: never */
	bool fail_open;       /* the file cannot be written: go on counting lost records */
	bool keep_mount;      /* closed mode keeps the view mounted (only changes the wording) */
	bool to_stderr;       /* also write the records to stderr */
	bool to_syslog;       /* also send them to syslog */
} VrAuditOutOptions;

typedef struct {
	const char *line;  /* one JSON object, no newline, no "seq"/"hash" yet */
	size_t len;
	bool denied;       /* a refusal: counted in the seal */
} VrAuditLine;

/* Opens the sinks of OPTS (audit_path/audit_fd/audit_dir_fd, audit_stderr,
 * audit_syslog) and starts the chain from 64 zeros. -errno (logged). */
int vr_audit_out_open(const VrAuditOutOptions *opts, const char *run_id);
/* Chains LINES and writes them, rotating and handling failures. */
void vr_audit_out_write(const VrAuditLine *lines, size_t n);
/* The seal: the last record, counting the records before it. */
void vr_audit_out_seal(uint64_t dropped);
/* fsyncs and closes what it opened (a caller's audit_fd is left open) and
 * tells syslog the final hash. */
void vr_audit_out_close(void);
/* Writing has stopped for good (closed mode after a failure). */
bool vr_audit_out_failed(void);
/* Called once, from the writer thread, when closed mode stops writing. */
void vr_audit_out_set_stop_hook(void (*hook)(void));

/* Records: the number written so far (the chain's last seq), records lost
 * (open mode), and the last hash. For tests and the stop message. */
uint64_t vr_audit_out_records(void);
uint64_t vr_audit_out_lost(void);
