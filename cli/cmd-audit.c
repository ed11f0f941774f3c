/* vault-run audit: reading a run's audit log.
 *
 *   vault-run audit [OPTIONS] [LOG|RUN-ID]     summary (default) or events
 *   vault-run audit list [--project DIR] [--json]
 *   vault-run audit verify [LOG|RUN-ID] [--expect HASH]
 *   vault-run audit dir [--project DIR]        where the project's logs go
 *
 * Bad lines are reported as LOG:LINE and skipped; only verify turns them into
 * a failing exit status. */
#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <glib.h>

#include "audit/chain.h"
#include "audit/json.h"
#include "audit/read.h"
#include "audit/summary.h"
#include "audit/verify.h"
#include "cli/commands.h"
#include "cli/options.h"
#include "common/exitcode.h"
#include "common/log.h"
#include "audit/state-dir.h"

#define MAX_BAD_LINE_MESSAGES 20

typedef struct {
	const char *project;
	bool summary, json, follow, verify, denied, writes;
	const char *expect;
	char **globs;          /* --path, any may match */
	char **ops;            /* --op, comma lists merged */
	int64_t pid;           /* -1: any */
	const char *since_arg, *until_arg;
	int64_t since, until;  /* resolved; INT64_MIN/INT64_MAX: open */
	bool since_rel, until_rel; /* "+DURATION": from the first record */
	bool filtering;
	unsigned limit;
} Options;

static volatile sig_atomic_t interrupted;

static void on_signal(int sig)
{
	interrupted = 1;
}

static const char usage_text[] =
	"Usage: vault-run audit [OPTIONS] [LOG|RUN-ID]\n"
	"       vault-run audit list [--project DIR] [--json]\n"
	"       vault-run audit verify [LOG|RUN-ID] [--expect HASH] [--project DIR]\n"
	"       vault-run audit dir [--project DIR]\n"
	"\n"
	"Shows a run's audit log: by default the summary of the latest run of the\n"
	"project in the current directory.\n"
	"\n"
	"  --project DIR   the project whose runs to look at (default: .)\n"
	"  --summary       the summary table (default without filters)\n"
	"  --json          JSON Lines: the matching records, or the summary as one object\n"
	"  --denied        only refused attempts\n"
	"  --writes        only changes (write, create, unlink, rename, setattr…)\n"
	"  --path GLOB     only paths matching GLOB ('*' crosses '/'; a GLOB without\n"
	"                  '/' also matches the base name); repeatable\n"
	"  --op OP[,OP]    only these ops (open, read, close, create, connect…)\n"
	"  --pid N         only records of process N\n"
	"  --since TIME    RFC 3339, or 10m / 2h / 1d ago, or +5m after the run's start\n"
	"  --until TIME    same forms\n"
	"  -f, --follow    keep reading a live log (until its run-end, or Ctrl-C)\n"
	"  --all           list every file in the summary (default: 20 per list)\n"
	"  --verify        check the hash chain (same as 'audit verify')\n"
	"  --expect HASH   with --verify: the final hash the log must end with\n";

static bool matches(const Options *o, const VrAuditRecord *r, int64_t first_us)
{
	if (o->denied && !vr_audit_record_denied(r))
		return false;
	if (o->writes && !vr_audit_record_is_write(r))
		return false;
	if (o->pid >= 0 && r->pid != o->pid)
		return false;
	if (o->ops) {
		bool any = false;
		for (char **p = o->ops; *p && !any; p++)
			any = r->op && strcmp(r->op, *p) == 0;
		if (!any)
			return false;
	}
	if (o->globs) {
		bool any = false;
		for (char **g = o->globs; *g && !any; g++) {
			/* Another view's paths match as host paths (root/path). */
			g_autofree char *path = vr_audit_record_where(r, r->path);
			g_autofree char *target = vr_audit_record_where(r, r->target);
			const char *cands[] = {path, target};
			for (size_t i = 0; i < 2 && !any; i++) {
				const char *p = cands[i];
				if (!p)
					continue;
				any = fnmatch(*g, p, 0) == 0;
				if (!any && !strchr(*g, '/')) {
					const char *base = strrchr(p, '/');
					any = fnmatch(*g, base ? base + 1 : p, 0) == 0;
				}
			}
		}
		if (!any)
			return false;
	}
	if (o->since != INT64_MIN || o->until != INT64_MAX) {
		if (r->ts_us == INT64_MIN)
			return false;
		int64_t since = o->since, until = o->until;
		if (o->since_rel)
			since = first_us == INT64_MIN ? INT64_MIN : first_us + o->since;
		if (o->until_rel)
			until = first_us == INT64_MIN ? INT64_MAX : first_us + o->until;
		if (r->ts_us < since || r->ts_us > until)
			return false;
	}
	return true;
}

static void print_event_header(void)
{
	printf("%-23s  %-9s  %-9s  %7s  %-15s  %s\n", "TIME", "OP", "RESULT", "PID", "COMM", "PATH");
}

static void print_event(const Options *o, const VrAuditRecord *r)
{
	if (o->json) {
		fwrite(r->line, 1, r->line_len, stdout);
		fputc('\n', stdout);
		return;
	}
	g_autoptr(GString) l = g_string_new(NULL);
	char ts[40] = "-";
	if (r->ts_us != INT64_MIN) {
		vr_audit_format_time(r->ts_us, ts, sizeof ts);
		ts[10] = ' ';
		ts[23] = '\0';  /* milliseconds are enough on screen; --json has all */
	}
	g_string_append_printf(l, "%-23s  ", ts);
	g_autoptr(GString) f = g_string_new(NULL);
	vr_audit_append_printable(f, r->op ? r->op : "-");
	g_string_append_printf(l, "%-9s  ", f->str);
	g_string_truncate(f, 0);
	vr_audit_append_printable(f, r->result ? r->result : "-");
	g_string_append_printf(l, "%-9s  ", f->str);
	if (r->pid >= 0)
		g_string_append_printf(l, "%7" PRId64 "  ", r->pid);
	else
		g_string_append_printf(l, "%7s  ", "-");
	g_string_truncate(f, 0);
	vr_audit_append_printable(f, r->comm ? r->comm : "-");
	g_string_append_printf(l, "%-15s  ", f->str);
	if (r->op && strcmp(r->op, "connect") == 0) {
		vr_audit_append_printable(l, r->host ? r->host : "?");
		g_string_append_printf(l, ":%" PRId64, r->port);
		/* A model-server bridge's request (proto localhost-http). */
		const char *method = vr_json_get_string(&r->obj, "method");
		if (method && r->path) {
			g_string_append_c(l, ' ');
			vr_audit_append_printable(l, method);
			g_string_append_c(l, ' ');
			vr_audit_append_printable(l, r->path);
		}
	} else if (r->op && strcmp(r->op, "run-start") == 0 && r->command) {
		vr_audit_append_printable(l, r->command);
	} else if (r->op && strcmp(r->op, "run-end") == 0) {
		g_string_append_printf(l, "exit %" PRId64, r->exit_status);
	} else {
		g_autofree char *where = vr_audit_record_where(r, r->path ? r->path : "");
		vr_audit_append_printable(l, where);
	}
	if (r->target) {
		g_autofree char *target = vr_audit_record_where(r, r->target);
		g_string_append(l, " -> ");
		vr_audit_append_printable(l, target);
	}
	if (r->rule) {
		g_string_append(l, "  [");
		vr_audit_append_printable(l, r->rule);
		const char *src = vr_json_get_string(&r->obj, "rule_source");
		if (src && *src) {
			g_string_append(l, " (");
			vr_audit_append_printable(l, src);
			g_string_append_c(l, ')');
		}
		g_string_append_c(l, ']');
	}
	g_string_append_c(l, '\n');
	fputs(l->str, stdout);
}

static void report_bad_line(VrAuditReader *rd)
{
	unsigned long n = vr_audit_reader_bad_lines(rd);
	if (n <= MAX_BAD_LINE_MESSAGES)
		vr_error("%s:%lu: skipped: %s", vr_audit_reader_name(rd), vr_audit_reader_lineno(rd),
		         vr_audit_reader_error(rd));
	else if (n == MAX_BAD_LINE_MESSAGES + 1)
		vr_error("%s: more bad lines; not showing them", vr_audit_reader_name(rd));
}

static void report_bad_total(VrAuditReader *rd)
{
	unsigned long n = vr_audit_reader_bad_lines(rd);
	if (n)
		vr_warning("%s: %lu bad line%s skipped", vr_audit_reader_name(rd), n, n == 1 ? "" : "s");
}

/* LOG|RUN-ID → a path. A name with a '/' (or "-", or an existing file that is
 * not a valid run id) is a file; otherwise it is a run of the project. */
static int resolve_log(const Options *o, const char *arg, char **ret)
{
	if (arg) {
		if (strcmp(arg, "-") == 0 || strchr(arg, '/') || !vr_state_run_id_valid(arg)) {
			*ret = g_strdup(arg);
			return 0;
		}
		g_autofree char *path = NULL;
		int err = vr_state_run_log_path(o->project, arg, &path);
		if (err == 0 && access(path, F_OK) == 0) {
			*ret = g_steal_pointer(&path);
			return 0;
		}
		if (access(arg, F_OK) == 0) {
			*ret = g_strdup(arg);
			return 0;
		}
		if (err < 0)
			vr_error("cannot resolve project %s: %s", o->project, g_strerror(-err));
		else
			vr_error("no run '%s' recorded for project %s (and no file of that name)", arg, o->project);
		return -ENOENT;
	}
	g_autoptr(GPtrArray) runs = NULL;
	int err = vr_state_list_runs(o->project, &runs);
	if (err < 0) {
		vr_error("cannot list the runs of project %s: %s", o->project, g_strerror(-err));
		return err;
	}
	if (runs->len == 0) {
		g_autofree char *dir = NULL;
		vr_state_project_dir(o->project, &dir);
		vr_error("no runs recorded for project %s (looked in %s)", o->project, dir ? dir : "?");
		return -ENOENT;
	}
	*ret = g_strdup(((VrStateRun *)runs->pdata[runs->len - 1])->path);
	return 0;
}

static int open_log(const char *path, VrAuditReader **ret)
{
	int err = vr_audit_reader_open(path, ret);
	if (err < 0)
		vr_error("cannot read %s: %s", path, g_strerror(-err));
	return err;
}

/* Reads a log (with its rotated parts) through the filters into the summary
 * or the event printer. */
static int read_log(Options *o, const char *path)
{
	g_autoptr(GPtrArray) files = vr_audit_log_parts(path);
	VrAuditRecord rec;
	vr_audit_record_init(&rec);
	VrAuditSummary *sum = o->summary ? vr_audit_summary_new() : NULL;
	int64_t first_us = INT64_MIN;
	uint64_t bad = 0;
	int status = VR_EXIT_OK, n;
	if (!sum && !o->json && isatty(STDOUT_FILENO))
		print_event_header();
	for (guint i = 0; i < files->len && status == VR_EXIT_OK; i++) {
		const char *file = files->pdata[i];
		VrAuditReader *rd;
		if (open_log(file, &rd) < 0) {
			status = VR_EXIT_ERROR;
			break;
		}
		while ((n = vr_audit_reader_next(rd, &rec)) != 0) {
			if (n == -EBADMSG) {
				report_bad_line(rd);
				continue;
			}
			if (n < 0) {
				vr_error("%s: %s", file, g_strerror(-n));
				status = VR_EXIT_ERROR;
				break;
			}
			if (first_us == INT64_MIN)
				first_us = rec.ts_us;
			if (!matches(o, &rec, first_us))
				continue;
			if (sum)
				vr_audit_summary_add(sum, &rec);
			else
				print_event(o, &rec);
		}
		report_bad_total(rd);
		bad += vr_audit_reader_bad_lines(rd);
		vr_audit_reader_free(rd);
	}
	if (sum) {
		if (status == VR_EXIT_OK) {
			vr_audit_summary_set_bad_lines(sum, bad);
			if (o->json)
				vr_audit_summary_print_json(sum, stdout);
			else
				vr_audit_summary_print(sum, stdout, o->limit);
		}
		vr_audit_summary_free(sum);
	}
	vr_audit_record_clear(&rec);
	return status;
}

/* The file that comes after the one open on FD (now renamed LOG.N by a
 * rotation): LOG.N+1 if it exists, else LOG. -1 when neither opens. */
static int open_next_part(const char *path, int fd)
{
	struct stat cur, st;
	if (fstat(fd, &cur) == 0) {
		g_autoptr(GPtrArray) parts = vr_audit_log_parts(path);
		for (guint i = 0; i + 1 < parts->len; i++) {
			if (stat(parts->pdata[i], &st) == 0 && st.st_dev == cur.st_dev && st.st_ino == cur.st_ino)
				return open(parts->pdata[i + 1], O_RDONLY | O_CLOEXEC | O_NOCTTY);
		}
	}
	return open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
}

typedef struct {
	Options *o;
	int64_t first_us;
	bool ended;            /* run-end seen */
	bool sealed;           /* seal seen, or run-end of a log without a chain */
	gint64 ended_at;       /* monotonic time of run-end */
} Follow;

static void follow_record(Follow *f, const VrAuditRecord *rec)
{
	if (f->first_us == INT64_MIN)
		f->first_us = rec->ts_us;
	if (rec->op && strcmp(rec->op, "run-end") == 0) {
		f->ended = true;
		f->ended_at = g_get_monotonic_time();
		/* A log without the chain gets no seal after it. */
		if (!vr_json_get_string(&rec->obj, "hash"))
			f->sealed = true;
	}
	if (rec->op && strcmp(rec->op, "seal") == 0)
		f->sealed = true;
	if (matches(f->o, rec, f->first_us))
		print_event(f->o, rec);
}

/* tail -f for a log: first the parts rotated out of it before we came,
 * then the live file, printing matching records as they are appended; it
 * follows the log across rotation (the old part is read to its end, then
 * the part after it) and truncation (start again from the top). Ends after
 * the seal (or 5 s after a run-end without one: the writer was killed), at
 * a run-end in a log without a chain, or on SIGINT/SIGTERM. */
static int follow_log(Options *o, const char *path)
{
	if (strcmp(path, "-") == 0) {
		vr_error("--follow needs a file, not stdin");
		return VR_EXIT_ERROR;
	}
	VrAuditReader *rd;
	if (open_log(path, &rd) < 0)
		return VR_EXIT_ERROR;
	vr_audit_reader_set_follow(rd, true);
	struct sigaction sa = {.sa_handler = on_signal};
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (!o->json && isatty(STDOUT_FILENO))
		print_event_header();

	VrAuditRecord rec;
	vr_audit_record_init(&rec);
	Follow f = {.o = o, .first_us = INT64_MIN};
	int status = VR_EXIT_OK;

	/* The parts before the file we opened (which a rotation may already
	 * have renamed into their list: the list stops there). */
	struct stat cur, st;
	if (fstat(vr_audit_reader_fd(rd), &cur) == 0) {
		g_autoptr(GPtrArray) parts = vr_audit_log_parts(path);
		for (guint i = 0; i + 1 < parts->len && !interrupted; i++) {
			const char *part = parts->pdata[i];
			if (stat(part, &st) == 0 && st.st_dev == cur.st_dev && st.st_ino == cur.st_ino)
				break;
			VrAuditReader *pr;
			if (open_log(part, &pr) < 0) {
				status = VR_EXIT_ERROR;
				break;
			}
			int n;
			while ((n = vr_audit_reader_next(pr, &rec)) != 0) {
				if (n == -EBADMSG) {
					report_bad_line(pr);
					continue;
				}
				if (n < 0)
					break;
				follow_record(&f, &rec);
			}
			report_bad_total(pr);
			vr_audit_reader_free(pr);
		}
	}

	bool rotated = false;
	while (!interrupted && status == VR_EXIT_OK) {
		int n = vr_audit_reader_next(rd, &rec);
		if (n == -EBADMSG) {
			report_bad_line(rd);
			continue;
		}
		if (n < 0) {
			vr_error("%s: %s", path, g_strerror(-n));
			status = VR_EXIT_ERROR;
			break;
		}
		if (n == 1) {
			follow_record(&f, &rec);
			continue;
		}
		/* At the end of what is there. */
		if (f.sealed || (f.ended && g_get_monotonic_time() - f.ended_at > 5 * G_USEC_PER_SEC))
			break;
		int fd = vr_audit_reader_fd(rd);
		if (rotated) {
			/* The renamed part was read to its end after the rename was
			 * seen: nothing more can come into it. */
			int nfd = open_next_part(path, fd);
			if (nfd >= 0) {
				vr_audit_reader_reset(rd, nfd);
				rotated = false;
				continue;
			}
		}
		struct stat now;
		if (!rotated && fstat(fd, &cur) == 0 && stat(path, &now) == 0) {
			if (now.st_ino != cur.st_ino || now.st_dev != cur.st_dev) {
				/* Rotated: what the writer put in before the rename is
				 * read first (one more pass to the end). */
				rotated = true;
				continue;
			} else if (cur.st_size < lseek(fd, 0, SEEK_CUR)) {
				vr_warning("%s was truncated; reading it from the start", path);
				lseek(fd, 0, SEEK_SET);
				vr_audit_reader_reset(rd, -1);
				continue;
			}
		}
		struct timespec ts = {0, 100 * 1000 * 1000};
		nanosleep(&ts, NULL); /* a signal cuts it short */
	}
	report_bad_total(rd);
	vr_audit_record_clear(&rec);
	vr_audit_reader_free(rd);
	return status;
}

static int print_verify(const Options *o, const char *path, const VrVerifyResult *res)
{
	switch (res->state) {
	case VR_VERIFY_SEALED:
		printf("%s: intact and sealed: %lu records, final hash %s\n", path, res->records, res->final_hash);
		break;
	case VR_VERIFY_UNSEALED:
		printf("%s: unsealed: %lu records chain correctly but %s (the run was killed before "
		       "its seal, or the tail was cut)%s%s\n",
		       path, res->records, res->reason, res->records ? "; last hash " : "", res->final_hash);
		break;
	case VR_VERIFY_TAMPERED:
		printf("%s:%lu: tampered: %s\n", path, res->bad_line, res->reason);
		break;
	case VR_VERIFY_NO_CHAIN:
		printf("%s: no hash chain: %s; nothing to verify\n", path, res->reason);
		break;
	}
	if (res->expect_mismatch)
		printf("%s: final hash %s is not the expected %s\n", path,
		       *res->final_hash ? res->final_hash : "(none)", o->expect);
	return vr_audit_verify_exit_code(res);
}

/* Each rotated part must be an intact, unsealed chain starting where the
 * part before it ended (the first from 64 zeros); the last part is judged
 * as a whole log. */
/* The highest N of a LOG.N next to PATH, 0 when there is none: parts past
 * a missing one are not read, but their presence names the gap. */
static unsigned last_part_number(const char *path)
{
	g_autofree char *dir = g_path_get_dirname(path);
	g_autofree char *base = g_path_get_basename(path);
	g_autoptr(GDir) d = g_dir_open(dir, 0, NULL);
	size_t n = strlen(base);
	unsigned max = 0;
	const char *name;
	while (d && (name = g_dir_read_name(d))) {
		if (strncmp(name, base, n) != 0 || name[n] != '.' || !g_ascii_isdigit(name[n + 1]))
			continue;
		char *end;
		unsigned long v = strtoul(name + n + 1, &end, 10);
		if (!*end && v > max && v < G_MAXUINT)
			max = (unsigned)v;
	}
	return max;
}

static int do_verify(const Options *o, const char *path)
{
	g_autoptr(GPtrArray) files = vr_audit_log_parts(path);
	if (strcmp(path, "-") != 0) {
		unsigned found = files->len - 1, last = last_part_number(path);
		if (last > found) {
			printf("%s.%u: tampered: this rotated part is missing (%s.%u exists)\n", path, found + 1, path, last);
			return 1;
		}
	}
	char prev_final[65] = VR_AUDIT_CHAIN_GENESIS;
	unsigned long before = 0; /* records in the parts before */
	for (guint i = 0; i < files->len; i++) {
		const char *file = files->pdata[i];
		bool last = i + 1 == files->len;
		VrVerifyResult res;
		int err = vr_audit_verify_file(file, last ? o->expect : NULL, &res);
		if (err < 0) {
			vr_error("cannot read %s: %s", file, g_strerror(-err));
			return VR_EXIT_ERROR;
		}
		if (res.records > 0 && strcmp(res.first_prev, prev_final) != 0 &&
		    res.state != VR_VERIFY_NO_CHAIN && res.state != VR_VERIFY_TAMPERED) {
			printf("%s:1: tampered: the chain does not continue from %s\n", file,
			       i ? (const char *)files->pdata[i - 1] : "the start of the run (64 zeros)");
			return 1;
		}
		if (!last) {
			if (res.state != VR_VERIFY_UNSEALED || res.records == 0) {
				int code = print_verify(o, file, &res);
				if (res.state == VR_VERIFY_SEALED)
					printf("%s: tampered: a rotated part carries the seal, yet %s follows it\n",
					       file, (const char *)files->pdata[i + 1]);
				return code ? code : 1;
			}
			memcpy(prev_final, res.final_hash, sizeof prev_final);
			before += res.records;
			continue;
		}
		if (files->len > 1 && res.state == VR_VERIFY_SEALED)
			printf("%s: %u rotated part%s chain into it\n", path, files->len - 1,
			       files->len == 2 ? "" : "s");
		if (res.state == VR_VERIFY_SEALED || res.state == VR_VERIFY_UNSEALED)
			res.records += before; /* the run's records, as the seal counts them */
		return print_verify(o, file, &res);
	}
	return VR_EXIT_ERROR;
}

static int do_list(const Options *o)
{
	g_autoptr(GPtrArray) runs = NULL;
	int err = vr_state_list_runs(o->project, &runs);
	if (err < 0) {
		vr_error("cannot list the runs of project %s: %s", o->project, g_strerror(-err));
		return VR_EXIT_ERROR;
	}
	if (runs->len == 0) {
		g_autofree char *dir = NULL;
		vr_state_project_dir(o->project, &dir);
		vr_error("no runs recorded for project %s (looked in %s)", o->project, dir ? dir : "?");
		return VR_EXIT_ERROR;
	}
	if (!o->json)
		printf("%-32s  %-20s  %9s  %-7s  %8s  %6s  %6s  %s\n", "RUN", "START", "DURATION", "EXIT",
		       "EVENTS", "DENIED", "WRITES", "COMMAND");
	for (guint i = 0; i < runs->len; i++) {
		VrStateRun *run = runs->pdata[i];
		g_autoptr(GPtrArray) files = vr_audit_log_parts(run->path);
		VrAuditRecord rec;
		vr_audit_record_init(&rec);
		VrAuditSummary *sum = vr_audit_summary_new();
		uint64_t bad = 0;
		for (guint f = 0; f < files->len; f++) {
			VrAuditReader *rd;
			if (open_log(files->pdata[f], &rd) < 0)
				continue;
			int n;
			while ((n = vr_audit_reader_next(rd, &rec)) != 0) {
				if (n == -EBADMSG)
					continue; /* counted; `audit RUN` names them */
				if (n < 0)
					break;
				vr_audit_summary_add(sum, &rec);
			}
			bad += vr_audit_reader_bad_lines(rd);
			vr_audit_reader_free(rd);
		}
		vr_audit_summary_set_bad_lines(sum, bad);
		VrAuditCounts c;
		vr_audit_summary_counts(sum, &c);
		char start[40] = "-";
		if (c.start_us != INT64_MIN) {
			vr_audit_format_time(c.start_us, start, sizeof start);
			start[10] = ' ';
			start[19] = '\0';
		}
		char exit_s[24] = "-";
		if (c.ended && c.exit_status >= 0)
			snprintf(exit_s, sizeof exit_s, "%" PRId64, c.exit_status);
		else if (!c.ended)
			snprintf(exit_s, sizeof exit_s, "none");
		char dur[24] = "-";
		if (c.start_us != INT64_MIN && c.end_us != INT64_MIN)
			snprintf(dur, sizeof dur, "%.1fs", (double)(c.end_us - c.start_us) / 1e6);
		uint64_t writes = c.files_written + c.files_created + c.files_deleted + c.files_renamed;
		if (o->json) {
			g_autoptr(GString) j = g_string_new("{\"run\":");
			vr_json_append_string(j, run->run_id);
			g_string_append(j, ",\"path\":");
			vr_json_append_string(j, run->path);
			g_string_append(j, ",\"start\":");
			if (c.start_us != INT64_MIN) {
				char full[40];
				vr_audit_format_time(c.start_us, full, sizeof full);
				vr_json_append_string(j, full);
			} else {
				g_string_append(j, "null");
			}
			g_string_append(j, ",\"command\":");
			if (c.command)
				vr_json_append_string(j, c.command);
			else
				g_string_append(j, "null");
			if (c.ended && c.exit_status >= 0)
				g_string_append_printf(j, ",\"exit_status\":%" PRId64, c.exit_status);
			else
				g_string_append(j, ",\"exit_status\":null");
			g_string_append_printf(j, ",\"events\":%" PRIu64 ",\"denied\":%" PRIu64
			                          ",\"files_read\":%u,\"files_changed\":%" PRIu64
			                          ",\"bad_lines\":%" PRIu64 ",\"sealed\":%s}\n",
			                       c.events, c.denied, c.files_read, writes, c.bad_lines,
			                       c.sealed ? "true" : "false");
			fputs(j->str, stdout);
		} else {
			g_autoptr(GString) cmd = g_string_new(NULL);
			vr_audit_append_printable(cmd, c.command ? c.command : "-");
			printf("%-32s  %-20s  %9s  %-7s  %8" PRIu64 "  %6" PRIu64 "  %6" PRIu64 "  %s\n",
			       run->run_id, start, dur, exit_s, c.events, c.denied, writes, cmd->str);
		}
		vr_audit_summary_free(sum);
		vr_audit_record_clear(&rec);
	}
	return VR_EXIT_OK;
}

static int do_dir(const Options *o)
{
	g_autofree char *dir = NULL;
	int err = vr_state_project_dir(o->project, &dir);
	if (err < 0) {
		vr_error("cannot resolve project %s: %s", o->project, g_strerror(-err));
		return VR_EXIT_ERROR;
	}
	printf("%s\n", dir);
	return VR_EXIT_OK;
}

static char **append_split(char **list, const char *arg, const char *sep)
{
	GStrvBuilder *b = g_strv_builder_new();
	if (list)
		g_strv_builder_addv(b, (const char **)list);
	if (sep) {
		g_auto(GStrv) parts = g_strsplit(arg, sep, -1);
		for (char **p = parts; *p; p++)
			if (**p)
				g_strv_builder_add(b, *p);
	} else {
		g_strv_builder_add(b, arg);
	}
	g_strfreev(list);
	char **r = g_strv_builder_end(b);
	g_strv_builder_unref(b);
	return r;
}

/* What the command line said, as text until checked. */
typedef struct {
	char *project, *pid, *since, *until, *expect;
	char **paths, **ops;
	gboolean summary, json, denied, writes, follow, verify, all;
} AuditArgs;

static void audit_args_clear(AuditArgs *a)
{
	g_free(a->project);
	g_free(a->pid);
	g_free(a->since);
	g_free(a->until);
	g_free(a->expect);
	g_strfreev(a->paths);
	g_strfreev(a->ops);
}
G_DEFINE_AUTO_CLEANUP_CLEAR_FUNC(AuditArgs, audit_args_clear)

/* Not strict: the documented form is `audit verify LOG --expect HASH`,
 * options after the LOG as before it ("--" before a LOG that starts
 * with "-"). */
static gboolean parse_args(AuditArgs *a, int *argc, char ***argv, int *ret_status)
{
	const GOptionEntry entries[] = {
		{"project", 0, 0, G_OPTION_ARG_FILENAME, &a->project, NULL, NULL},
		{"summary", 0, 0, G_OPTION_ARG_NONE, &a->summary, NULL, NULL},
		{"json", 0, 0, G_OPTION_ARG_NONE, &a->json, NULL, NULL},
		{"denied", 0, 0, G_OPTION_ARG_NONE, &a->denied, NULL, NULL},
		{"writes", 0, 0, G_OPTION_ARG_NONE, &a->writes, NULL, NULL},
		{"path", 0, 0, G_OPTION_ARG_STRING_ARRAY, &a->paths, NULL, NULL},
		{"op", 0, 0, G_OPTION_ARG_STRING_ARRAY, &a->ops, NULL, NULL},
		{"pid", 0, 0, G_OPTION_ARG_STRING, &a->pid, NULL, NULL},
		{"since", 0, 0, G_OPTION_ARG_STRING, &a->since, NULL, NULL},
		{"until", 0, 0, G_OPTION_ARG_STRING, &a->until, NULL, NULL},
		{"follow", 'f', 0, G_OPTION_ARG_NONE, &a->follow, NULL, NULL},
		{"verify", 0, 0, G_OPTION_ARG_NONE, &a->verify, NULL, NULL},
		{"expect", 0, 0, G_OPTION_ARG_STRING, &a->expect, NULL, NULL},
		{"all", 0, 0, G_OPTION_ARG_NONE, &a->all, NULL, NULL},
		{NULL},
	};
	const VrCliOptions o = {"audit", entries, FALSE, NULL};
	return vr_cli_options_parse(&o, usage_text, argc, argv, ret_status);
}

static bool parse_time(const char *opt, const char *arg, int64_t now, int64_t *ret, bool *ret_rel)
{
	if (!arg || vr_audit_parse_time_arg(arg, now, ret, ret_rel) == 0)
		return true;
	vr_error("%s: '%s' is not a time (RFC 3339, 10m, 2h, 1d, or +5m after the start)", opt, arg);
	return false;
}

/* The filters and views A asks for, checked, into O (whose strings stay A's). */
static bool options_from_args(const AuditArgs *a, Options *o)
{
	o->project = a->project ? a->project : ".";
	o->json = a->json;
	o->denied = a->denied;
	o->writes = a->writes;
	o->follow = a->follow;
	o->verify = o->verify || a->verify;
	o->expect = a->expect;
	o->limit = a->all ? 0 : 20;
	for (char **p = a->paths; p && *p; p++)
		o->globs = append_split(o->globs, *p, NULL);
	for (char **p = a->ops; p && *p; p++)
		o->ops = append_split(o->ops, *p, ",");
	o->since_arg = a->since;
	o->until_arg = a->until;
	o->filtering = a->denied || a->writes || a->paths || a->ops || a->pid || a->since || a->until;
	if (a->pid) {
		char *end;
		errno = 0;
		long long v = strtoll(a->pid, &end, 10);
		if (errno || !*a->pid || *end || v < 0) {
			vr_error("--pid: '%s' is not a process id", a->pid);
			return false;
		}
		o->pid = v;
	}
	int64_t now = g_get_real_time();
	if (!parse_time("--since", a->since, now, &o->since, &o->since_rel) ||
	    !parse_time("--until", a->until, now, &o->until, &o->until_rel))
		return false;
	if (o->expect && !o->verify) {
		vr_error("--expect goes with --verify");
		return false;
	}
	/* The summary is the default view; filters, --json or --follow alone
	 * ask for the records themselves. */
	o->summary = a->summary || (!o->filtering && !o->json && !o->follow);
	if (o->follow && a->summary) {
		vr_error("--follow prints records as they come; it does not go with --summary");
		return false;
	}
	return true;
}

/* `audit list|dir`, or a log's summary, records or verification. */
static int run_audit(Options *o, const char *sub, int n_operands, char **operands)
{
	if (sub && strcmp(sub, "list") == 0) {
		if (n_operands > 0) {
			vr_error("audit list takes no LOG (it lists the runs of --project)");
			return VR_EXIT_ERROR;
		}
		return do_list(o);
	}
	if (sub && strcmp(sub, "dir") == 0)
		return do_dir(o);
	if (n_operands > 1) {
		vr_error("audit takes one LOG or RUN-ID (got %d)", n_operands);
		fputs(usage_text, stderr);
		return VR_EXIT_ERROR;
	}
	g_autofree char *path = NULL;
	if (resolve_log(o, n_operands ? operands[0] : NULL, &path) < 0)
		return VR_EXIT_ERROR;
	if (o->verify)
		return do_verify(o, path);
	if (o->follow)
		return follow_log(o, path);
	return read_log(o, path);
}

int vr_cmd_audit(int argc, char **argv)
{
	const char *sub = NULL;
	if (argc > 1 && (strcmp(argv[1], "list") == 0 || strcmp(argv[1], "verify") == 0 ||
	                 strcmp(argv[1], "dir") == 0)) {
		sub = argv[1];
		argc--;
		argv++;
	}
	g_auto(AuditArgs) a = {0};
	int status;
	if (!parse_args(&a, &argc, &argv, &status))
		return status;
	Options o = {.pid = -1, .since = INT64_MIN, .until = INT64_MAX, .verify = sub && strcmp(sub, "verify") == 0};
	status = options_from_args(&a, &o) ? run_audit(&o, sub, argc - 1, argv + 1) : VR_EXIT_ERROR;
	g_strfreev(o.globs);
	g_strfreev(o.ops);
	fflush(stdout);
	return status;
}
