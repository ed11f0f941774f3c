/* The summary of an audit log (`vault-run audit --summary`, `audit list`):
 * what a run read, wrote, created and deleted, what it was refused, where it
 * connected, which processes did the most, and the run's command, duration
 * and exit status. Memory grows with the number of distinct files,
 * processes, refusals and hosts — not with the number of events. */
#pragma once
#include <glib.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "audit/read.h"

typedef struct VrAuditSummary VrAuditSummary;

typedef struct {
	const char *run;           /* run id of the first record that names one */
	const char *command;       /* op "run-start" "command" */
	int64_t start_us, end_us;  /* first/last timestamp, or run-start/run-end; INT64_MIN unknown */
	int64_t exit_status;       /* op "run-end" "exit_status"; -1 unknown */
	bool ended;                /* a run-end was seen */
	bool sealed;               /* a seal was seen */
	const char *final_hash;    /* the last record's "hash", or NULL */
	uint64_t events, bad_lines, dropped;
	uint64_t lost;             /* records the writer could not write (op "lost" counts) */
	unsigned files_read, files_written, files_created, files_deleted, files_renamed;
	unsigned files_outside;    /* of those changed, how many outside the project (another view's root) */
	uint64_t denied;           /* denied attempts (events) */
	uint64_t conn_allowed, conn_denied;
} VrAuditCounts;

VrAuditSummary *vr_audit_summary_new(void);
void vr_audit_summary_free(VrAuditSummary *s);
void vr_audit_summary_add(VrAuditSummary *s, const VrAuditRecord *rec);
void vr_audit_summary_set_bad_lines(VrAuditSummary *s, uint64_t n);
void vr_audit_summary_counts(const VrAuditSummary *s, VrAuditCounts *ret);

/* The human table. LIMIT: at most that many lines per list (0: all). */
void vr_audit_summary_print(const VrAuditSummary *s, FILE *out, unsigned limit);
/* One JSON object (and a newline) with every count and list. */
void vr_audit_summary_print_json(const VrAuditSummary *s, FILE *out);

/* Appends S for display on a terminal: control characters (C0, DEL, C1)
 * and invalid UTF-8 become \xNN, so a file name made by the agent cannot
 * move the cursor or rewrite what the reviewer sees. */
void vr_audit_append_printable(GString *out, const char *s);
