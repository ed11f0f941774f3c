/* Summarising an audit log: see audit/summary.h. What counts as what:
 *   read     "read" (first read of a file), or "close" with bytes_read > 0
 *   written  "write", "close" with bytes_written > 0, "setattr"/"truncate"/"fallocate",
 *            "merge" (a per-run copy merged back into its host file)
 *   created  "create", "mkdir", "mknod", "symlink", "link" (its target)
 *   deleted  "unlink", "rmdir";   renamed  "rename" (path → target)
 * each counted once per distinct path and only when the result is ok (or
 * redacted, for reads); denied attempts (vr_audit_record_denied) are counted
 * per event and grouped by (rule, path). */
#include "audit/summary.h"

#include <inttypes.h>
#include <string.h>

#include "audit/json.h"

typedef struct {
	uint64_t count;
	char *op;      /* first op seen; "op,op2" when several */
	char *result;
	char *rule;    /* rule (source) or "" */
	char *path;
} Denied;

typedef struct {
	uint64_t count;
	char *host;
	int64_t port;
	char *result;
} Conn;

typedef struct {
	uint64_t count;
	char *comm, *exe;
} Proc;

struct VrAuditSummary {
	char *run, *command, *final_hash;
	int64_t first_us, last_us, start_us, end_us, exit_status;
	bool ended, sealed;
	uint64_t events, bad_lines, dropped, denied, conn_allowed, conn_denied;
	uint64_t lost;
	GHashTable *read, *written, *created, *deleted, *renamed; /* path → NULL (sets) */
	GHashTable *outside;  /* changed paths of views other than the project's (host paths) */
	GHashTable *denials;  /* "rule\0path" key → Denied */
	GHashTable *conns;    /* "host\0port\0result" → Conn */
	GHashTable *procs;    /* comm → Proc */
	GString *scratch;     /* lookup keys, reused */
	GString *where;       /* another view's root/path, reused */
};

static void denied_free(gpointer p)
{
	Denied *d = p;
	g_free(d->op);
	g_free(d->result);
	g_free(d->rule);
	g_free(d->path);
	g_free(d);
}

static void conn_free(gpointer p)
{
	Conn *c = p;
	g_free(c->host);
	g_free(c->result);
	g_free(c);
}

static void proc_free(gpointer p)
{
	Proc *c = p;
	g_free(c->comm);
	g_free(c->exe);
	g_free(c);
}

static GHashTable *set_new(void)
{
	return g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
}

VrAuditSummary *vr_audit_summary_new(void)
{
	VrAuditSummary *s = g_new0(VrAuditSummary, 1);
	s->first_us = s->last_us = s->start_us = s->end_us = INT64_MIN;
	s->exit_status = -1;
	s->read = set_new();
	s->written = set_new();
	s->created = set_new();
	s->deleted = set_new();
	s->renamed = set_new();
	s->outside = set_new();
	s->denials = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, denied_free);
	s->conns = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, conn_free);
	s->procs = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, proc_free);
	s->scratch = g_string_new(NULL);
	s->where = g_string_new(NULL);
	return s;
}

void vr_audit_summary_free(VrAuditSummary *s)
{
	if (!s)
		return;
	g_free(s->run);
	g_free(s->command);
	g_free(s->final_hash);
	g_hash_table_unref(s->read);
	g_hash_table_unref(s->written);
	g_hash_table_unref(s->created);
	g_hash_table_unref(s->deleted);
	g_hash_table_unref(s->renamed);
	g_hash_table_unref(s->outside);
	g_hash_table_unref(s->denials);
	g_hash_table_unref(s->conns);
	g_hash_table_unref(s->procs);
	g_string_free(s->scratch, TRUE);
	g_string_free(s->where, TRUE);
	g_free(s);
}

void vr_audit_summary_set_bad_lines(VrAuditSummary *s, uint64_t n)
{
	s->bad_lines = n;
}

static bool op_is(const VrAuditRecord *r, const char *op)
{
	return r->op && strcmp(r->op, op) == 0;
}

static bool op_in(const VrAuditRecord *r, const char *const *ops)
{
	for (; *ops; ops++)
		if (op_is(r, *ops))
			return true;
	return false;
}

static void set_add(GHashTable *set, const char *path)
{
	if (path && *path && !g_hash_table_contains(set, path))
		g_hash_table_add(set, g_strdup(path));
}

/* A path of another view than the project's counts under its host path
 * (root + path): `settings.json` of ~/.claude is not the project's. */
static void set_add_rec(VrAuditSummary *s, GHashTable *set, const VrAuditRecord *r, const char *path)
{
	if (!r->root) {
		set_add(set, path); /* no allocation per line: a million-line log in constant memory */
		return;
	}
	if (!path)
		return;
	GString *w = s->where;
	g_string_assign(w, r->root);
	if (*path) {
		if (w->len && w->str[w->len - 1] != '/')
			g_string_append_c(w, '/');
		g_string_append(w, path);
	}
	if (set != s->read)
		set_add(s->outside, w->str);
	set_add(set, w->str);
}

static void add_denied(VrAuditSummary *s, const VrAuditRecord *r)
{
	const char *src = vr_json_get_string(&r->obj, "rule_source");
	const char *path = r->path ? r->path : "";
	if (r->root) { /* another view's: its host path (rare: refusals there) */
		g_string_assign(s->where, r->root);
		if (*path)
			g_string_append_printf(s->where, "/%s", path);
		path = s->where->str;
	}
	/* The key is built in a reused buffer: a log of a million refusals
	 * costs no allocation per line. */
	GString *k = s->scratch;
	g_string_truncate(k, 0);
	if (r->rule) {
		g_string_append(k, r->rule);
		if (src && *src)
			g_string_append_printf(k, " (%s)", src);
	}
	size_t rule_len = k->len;
	g_string_append_c(k, '\x1f');
	g_string_append(k, path);
	Denied *d = g_hash_table_lookup(s->denials, k->str);
	if (!d) {
		d = g_new0(Denied, 1);
		d->op = g_strdup(r->op ? r->op : "?");
		d->result = g_strdup(r->result);
		d->rule = g_strndup(k->str, rule_len);
		d->path = g_strdup(path);
		g_hash_table_insert(s->denials, g_strdup(k->str), d);
	} else if (r->op) {
		/* Keep the distinct ops that hit this (rule, path), in order. */
		size_t n = strlen(r->op);
		bool seen = false;
		for (const char *p = d->op; p && !seen; p = strchr(p, ',') ? strchr(p, ',') + 1 : NULL)
			seen = strncmp(p, r->op, n) == 0 && (p[n] == ',' || p[n] == '\0');
		if (!seen && strlen(d->op) < 64) {
			char *joined = g_strconcat(d->op, ",", r->op, NULL);
			g_free(d->op);
			d->op = joined;
		}
	}
	d->count++;
}

static void add_conn(VrAuditSummary *s, const VrAuditRecord *r)
{
	const char *result = r->result ? r->result : "?";
	bool ok = strcmp(result, "ok") == 0;
	if (ok)
		s->conn_allowed++;
	else
		s->conn_denied++;
	GString *k = s->scratch;
	g_string_truncate(k, 0);
	g_string_append_printf(k, "%s\x1f%" PRId64 "\x1f%s", r->host ? r->host : "", r->port, result);
	Conn *c = g_hash_table_lookup(s->conns, k->str);
	if (!c) {
		c = g_new0(Conn, 1);
		c->host = g_strdup(r->host ? r->host : "");
		c->port = r->port;
		c->result = g_strdup(result);
		g_hash_table_insert(s->conns, g_strdup(k->str), c);
	}
	c->count++;
}

/* Processes are counted by comm: the writer reads exe best effort, and a
 * process that is gone by then must not split into a second row. The first
 * exe seen stands for the group. */
static void add_proc(VrAuditSummary *s, const VrAuditRecord *r)
{
	if (!r->comm || !*r->comm)
		return;
	Proc *p = g_hash_table_lookup(s->procs, r->comm);
	if (!p) {
		p = g_new0(Proc, 1);
		p->comm = g_strdup(r->comm);
		p->exe = g_strdup("");
		g_hash_table_insert(s->procs, g_strdup(r->comm), p);
	}
	if (!*p->exe && r->exe && *r->exe) {
		g_free(p->exe);
		p->exe = g_strdup(r->exe);
	}
	p->count++;
}

void vr_audit_summary_add(VrAuditSummary *s, const VrAuditRecord *r)
{
	static const char *const created_ops[] = {"create", "mkdir", "mknod", "symlink", NULL};
	static const char *const deleted_ops[] = {"unlink", "rmdir", NULL};
	static const char *const written_ops[] = {"write", "setattr", "truncate", "fallocate", "merge", NULL};
	s->events++;
	if (r->ts_us != INT64_MIN) {
		if (s->first_us == INT64_MIN || r->ts_us < s->first_us)
			s->first_us = r->ts_us;
		if (s->last_us == INT64_MIN || r->ts_us > s->last_us)
			s->last_us = r->ts_us;
	}
	if (!s->run && r->run)
		s->run = g_strdup(r->run);
	const char *hash = vr_json_get_string(&r->obj, "hash");
	if (hash) {
		g_free(s->final_hash);
		s->final_hash = g_strdup(hash);
	}
	if (op_is(r, "run-start")) {
		g_free(s->command);
		s->command = g_strdup(r->command);
		s->start_us = r->ts_us;
		return;
	}
	if (op_is(r, "run-end")) {
		s->ended = true;
		s->exit_status = r->exit_status;
		s->end_us = r->ts_us;
		return;
	}
	if (op_is(r, "seal")) {
		s->sealed = true;
		return;
	}
	if (op_is(r, "rotate"))
		return; /* a new part of the log begins */
	if (op_is(r, "lost")) {
		int64_t n;
		if (vr_json_get_int64(&r->obj, "count", &n) && n > 0)
			s->lost += (uint64_t)n;
		return;
	}
	if (op_is(r, "dropped")) {
		int64_t n;
		if (vr_json_get_int64(&r->obj, "count", &n) && n > 0)
			s->dropped += (uint64_t)n;
		return;
	}
	add_proc(s, r);
	if (op_is(r, "connect")) {
		add_conn(s, r);
		return;
	}
	if (vr_audit_record_denied(r)) {
		s->denied++;
		add_denied(s, r);
		return;
	}
	bool ok = r->result == NULL || strcmp(r->result, "ok") == 0 || strcmp(r->result, "redacted") == 0;
	if (!ok)
		return;
	if (op_is(r, "read") || (op_is(r, "close") && r->bytes_read > 0))
		set_add_rec(s, s->read, r, r->path);
	if ((op_is(r, "close") && r->bytes_written > 0) || op_in(r, written_ops))
		set_add_rec(s, s->written, r, r->path);
	if (op_in(r, created_ops))
		set_add_rec(s, s->created, r, r->path);
	if (op_is(r, "link"))
		set_add_rec(s, s->created, r, r->target ? r->target : r->path);
	if (op_in(r, deleted_ops))
		set_add_rec(s, s->deleted, r, r->path);
	if (op_is(r, "rename"))
		set_add_rec(s, s->renamed, r, r->path);
}

void vr_audit_summary_counts(const VrAuditSummary *s, VrAuditCounts *c)
{
	memset(c, 0, sizeof *c);
	c->run = s->run;
	c->command = s->command;
	c->start_us = s->start_us != INT64_MIN ? s->start_us : s->first_us;
	c->end_us = s->end_us != INT64_MIN ? s->end_us : s->last_us;
	c->exit_status = s->exit_status;
	c->ended = s->ended;
	c->sealed = s->sealed;
	c->final_hash = s->final_hash;
	c->events = s->events;
	c->bad_lines = s->bad_lines;
	c->dropped = s->dropped;
	c->lost = s->lost;
	c->files_read = g_hash_table_size(s->read);
	c->files_written = g_hash_table_size(s->written);
	c->files_created = g_hash_table_size(s->created);
	c->files_deleted = g_hash_table_size(s->deleted);
	c->files_renamed = g_hash_table_size(s->renamed);
	c->files_outside = g_hash_table_size(s->outside);
	c->denied = s->denied;
	c->conn_allowed = s->conn_allowed;
	c->conn_denied = s->conn_denied;
}

void vr_audit_append_printable(GString *out, const char *s)
{
	const char *end = s + strlen(s);
	while (*s) {
		unsigned char c = (unsigned char)*s;
		if (c >= 0x80) {
			gunichar ch = g_utf8_get_char_validated(s, end - s);
			if (ch != (gunichar)-1 && ch != (gunichar)-2 && !(ch >= 0x80 && ch < 0xa0)) {
				const char *after = g_utf8_next_char(s);
				g_string_append_len(out, s, after - s);
				s = after;
				continue;
			}
		} else if (c >= 0x20 && c != 0x7f && c != '\\') {
			g_string_append_c(out, (char)c);
			s++;
			continue;
		}
		if (c == '\\')
			g_string_append(out, "\\\\");
		else
			g_string_append_printf(out, "\\x%02x", c);
		s++;
	}
}

static char *printable(const char *s)
{
	GString *g = g_string_new(NULL);
	vr_audit_append_printable(g, s ? s : "");
	return g_string_free(g, FALSE);
}

static gint cmp_str(gconstpointer a, gconstpointer b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static GPtrArray *sorted_keys(GHashTable *set)
{
	GPtrArray *a = g_ptr_array_new();
	GHashTableIter it;
	gpointer k;
	g_hash_table_iter_init(&it, set);
	while (g_hash_table_iter_next(&it, &k, NULL))
		g_ptr_array_add(a, k);
	g_ptr_array_sort(a, cmp_str);
	return a;
}

/* Values of a count-carrying table, most first (ties: key order, so the
 * output is stable). Every value type starts with its uint64_t count. */
static gint cmp_count(gconstpointer a, gconstpointer b)
{
	const uint64_t *x = *(const uint64_t *const *)a, *y = *(const uint64_t *const *)b;
	return *x < *y ? 1 : *x > *y ? -1 : 0;
}

static GPtrArray *by_count(GHashTable *t)
{
	/* Sort by key first so the stable order among equal counts is fixed. */
	g_autoptr(GPtrArray) keys = sorted_keys(t);
	GPtrArray *a = g_ptr_array_new();
	for (guint i = 0; i < keys->len; i++)
		g_ptr_array_add(a, g_hash_table_lookup(t, keys->pdata[i]));
	g_ptr_array_sort(a, cmp_count); /* g_ptr_array_sort is a stable merge sort */
	return a;
}

static void print_time_line(FILE *out, const char *label, int64_t us)
{
	char buf[40];
	if (us == INT64_MIN) {
		fprintf(out, "%-10s -\n", label);
		return;
	}
	vr_audit_format_time(us, buf, sizeof buf);
	fprintf(out, "%-10s %s\n", label, buf);
}

static void print_paths(FILE *out, const char *label, GHashTable *set, unsigned limit)
{
	g_autoptr(GPtrArray) keys = sorted_keys(set);
	for (guint i = 0; i < keys->len; i++) {
		if (limit && i == limit) {
			fprintf(out, "  %-9s … and %u more\n", "", keys->len - limit);
			break;
		}
		g_autofree char *p = printable(keys->pdata[i]);
		fprintf(out, "  %-9s %s\n", i == 0 ? label : "", p);
	}
}

void vr_audit_summary_print(const VrAuditSummary *s, FILE *out, unsigned limit)
{
	VrAuditCounts c;
	vr_audit_summary_counts(s, &c);
	g_autofree char *run = printable(c.run ? c.run : "-");
	g_autofree char *cmd = printable(c.command ? c.command : "-");
	fprintf(out, "%-10s %s\n", "run", run);
	fprintf(out, "%-10s %s\n", "command", cmd);
	print_time_line(out, "started", c.start_us);
	if (c.start_us != INT64_MIN && c.end_us != INT64_MIN)
		fprintf(out, "%-10s %.3f s%s\n", "duration", (double)(c.end_us - c.start_us) / 1e6,
		        c.ended ? "" : " (so far: no run-end)");
	else
		fprintf(out, "%-10s -\n", "duration");
	if (c.ended && c.exit_status >= 0)
		fprintf(out, "%-10s %" PRId64 "\n", "exit", c.exit_status);
	else
		fprintf(out, "%-10s unknown (%s)\n", "exit",
		        c.ended ? "run-end without exit_status" : "no run-end: still running or killed");
	fprintf(out, "%-10s %" PRIu64, "events", c.events);
	if (c.bad_lines || c.dropped)
		fprintf(out, " (%" PRIu64 " bad lines, %" PRIu64 " dropped by the writer)", c.bad_lines, c.dropped);
	if (c.lost)
		fprintf(out, " (%" PRIu64 " lost: the log could not be written)", c.lost);
	fputc('\n', out);
	if (c.final_hash) {
		g_autofree char *h = printable(c.final_hash);
		fprintf(out, "%-10s %s %s\n", "hash", h, c.sealed ? "(sealed)" : "(unsealed)");
	}

	fprintf(out, "\nfiles      read %u  written %u  created %u  deleted %u  renamed %u\n",
	        c.files_read, c.files_written, c.files_created, c.files_deleted, c.files_renamed);
	print_paths(out, "read", s->read, limit);
	print_paths(out, "written", s->written, limit);
	print_paths(out, "created", s->created, limit);
	print_paths(out, "deleted", s->deleted, limit);
	print_paths(out, "renamed", s->renamed, limit);

	fprintf(out, "\ndenied     %" PRIu64 " attempt%s\n", c.denied, c.denied == 1 ? "" : "s");
	if (g_hash_table_size(s->denials)) {
		g_autoptr(GPtrArray) rows = by_count(s->denials);
		int wop = 2, wres = 6, wrule = 4;
		for (guint i = 0; i < rows->len; i++) {
			Denied *d = rows->pdata[i];
			wop = MAX(wop, (int)strlen(d->op));
			wres = MAX(wres, (int)strlen(d->result ? d->result : "-"));
			wrule = MAX(wrule, (int)g_utf8_strlen(d->rule, -1));
		}
		wrule = MIN(wrule, 48);
		fprintf(out, "  %7s  %-*s  %-*s  %-*s  %s\n", "COUNT", wop, "OP", wres, "RESULT", wrule, "RULE", "PATH");
		for (guint i = 0; i < rows->len; i++) {
			if (limit && i == limit) {
				fprintf(out, "  … and %u more\n", rows->len - limit);
				break;
			}
			Denied *d = rows->pdata[i];
			g_autofree char *rule = printable(*d->rule ? d->rule : "-");
			g_autofree char *path = printable(d->path);
			g_autofree char *res = printable(d->result ? d->result : "-");
			g_autofree char *op = printable(d->op);
			fprintf(out, "  %7" PRIu64 "  %-*s  %-*s  %-*s  %s\n", d->count, wop, op, wres, res,
			        wrule, rule, path);
		}
	}

	fprintf(out, "\nconnections  allowed %" PRIu64 "  denied %" PRIu64 "\n", c.conn_allowed, c.conn_denied);
	if (g_hash_table_size(s->conns)) {
		g_autoptr(GPtrArray) rows = by_count(s->conns);
		fprintf(out, "  %7s  %-8s  %s\n", "COUNT", "RESULT", "HOST:PORT");
		for (guint i = 0; i < rows->len && (!limit || i < limit); i++) {
			Conn *k = rows->pdata[i];
			g_autofree char *host = printable(k->host);
			g_autofree char *res = printable(k->result);
			fprintf(out, "  %7" PRIu64 "  %-8s  %s:%" PRId64 "\n", k->count, res, host, k->port);
		}
	}

	if (g_hash_table_size(s->procs)) {
		g_autoptr(GPtrArray) rows = by_count(s->procs);
		int wcomm = 4;
		for (guint i = 0; i < rows->len && i < 5; i++)
			wcomm = MAX(wcomm, (int)strlen(((Proc *)rows->pdata[i])->comm));
		fprintf(out, "\nprocesses (most events first)\n  %7s  %-*s  %s\n", "EVENTS", wcomm, "COMM", "EXE");
		for (guint i = 0; i < rows->len && i < 5; i++) {
			Proc *p = rows->pdata[i];
			g_autofree char *comm = printable(p->comm);
			g_autofree char *exe = printable(*p->exe ? p->exe : "-");
			fprintf(out, "  %7" PRIu64 "  %-*s  %s\n", p->count, wcomm, comm, exe);
		}
	}
}

static void json_paths(GString *j, const char *name, GHashTable *set)
{
	g_autoptr(GPtrArray) keys = sorted_keys(set);
	g_string_append_printf(j, ",\"%s\":[", name);
	for (guint i = 0; i < keys->len; i++) {
		if (i)
			g_string_append_c(j, ',');
		vr_json_append_string(j, keys->pdata[i]);
	}
	g_string_append_c(j, ']');
}

static void json_opt_string(GString *j, const char *name, const char *v)
{
	g_string_append_printf(j, ",\"%s\":", name);
	if (v)
		vr_json_append_string(j, v);
	else
		g_string_append(j, "null");
}

/* The fields of one counted row after its count, as JSON. */
static void json_denial(GString *j, gconstpointer row)
{
	const Denied *d = row;
	g_string_append(j, ",\"op\":");
	vr_json_append_string(j, d->op);
	json_opt_string(j, "result", d->result);
	json_opt_string(j, "rule", *d->rule ? d->rule : NULL);
	json_opt_string(j, "path", d->path);
}

static void json_conn(GString *j, gconstpointer row)
{
	const Conn *k = row;
	g_string_append(j, ",\"host\":");
	vr_json_append_string(j, k->host);
	g_string_append_printf(j, ",\"port\":%" PRId64, k->port);
	json_opt_string(j, "result", k->result);
}

static void json_proc(GString *j, gconstpointer row)
{
	const Proc *p = row;
	g_string_append(j, ",\"comm\":");
	vr_json_append_string(j, p->comm);
	json_opt_string(j, "exe", *p->exe ? p->exe : NULL);
}

/* ,"NAME":[{"COUNT_KEY":N,…},…] for a count-carrying table, most first. */
static void json_rows(GString *j, const char *name, const char *count_key, GHashTable *t,
                      void (*fields)(GString *, gconstpointer))
{
	g_string_append_printf(j, ",\"%s\":[", name);
	g_autoptr(GPtrArray) rows = by_count(t);
	for (guint i = 0; i < rows->len; i++) {
		g_string_append_printf(j, "%s{\"%s\":%" PRIu64, i ? "," : "", count_key,
		                       *(const uint64_t *)rows->pdata[i]);
		fields(j, rows->pdata[i]);
		g_string_append_c(j, '}');
	}
	g_string_append_c(j, ']');
}

void vr_audit_summary_print_json(const VrAuditSummary *s, FILE *out)
{
	VrAuditCounts c;
	vr_audit_summary_counts(s, &c);
	g_autoptr(GString) j = g_string_new("{\"run\":");
	if (c.run)
		vr_json_append_string(j, c.run);
	else
		g_string_append(j, "null");
	json_opt_string(j, "command", c.command);
	char buf[40];
	if (c.start_us != INT64_MIN) {
		vr_audit_format_time(c.start_us, buf, sizeof buf);
		json_opt_string(j, "start", buf);
	} else {
		json_opt_string(j, "start", NULL);
	}
	if (c.start_us != INT64_MIN && c.end_us != INT64_MIN)
		g_string_append_printf(j, ",\"duration_us\":%" PRId64, c.end_us - c.start_us);
	else
		g_string_append(j, ",\"duration_us\":null");
	if (c.ended && c.exit_status >= 0)
		g_string_append_printf(j, ",\"exit_status\":%" PRId64, c.exit_status);
	else
		g_string_append(j, ",\"exit_status\":null");
	g_string_append_printf(j, ",\"ended\":%s,\"sealed\":%s", c.ended ? "true" : "false",
	                       c.sealed ? "true" : "false");
	json_opt_string(j, "hash", c.final_hash);
	g_string_append_printf(j, ",\"events\":%" PRIu64 ",\"bad_lines\":%" PRIu64 ",\"dropped\":%" PRIu64
	                          ",\"files_read\":%u,\"files_written\":%u,\"files_created\":%u"
	                          ",\"files_deleted\":%u,\"files_renamed\":%u,\"denied\":%" PRIu64
	                          ",\"connections_allowed\":%" PRIu64 ",\"connections_denied\":%" PRIu64,
	                       c.events, c.bad_lines, c.dropped, c.files_read, c.files_written,
	                       c.files_created, c.files_deleted, c.files_renamed, c.denied,
	                       c.conn_allowed, c.conn_denied);
	g_string_append_printf(j, ",\"files_outside\":%u", c.files_outside);
	g_string_append_printf(j, ",\"lost\":%" PRIu64, c.lost);
	json_paths(j, "read", s->read);
	json_paths(j, "written", s->written);
	json_paths(j, "created", s->created);
	json_paths(j, "deleted", s->deleted);
	json_paths(j, "renamed", s->renamed);

	json_rows(j, "denials", "count", s->denials, json_denial);
	json_rows(j, "connections", "count", s->conns, json_conn);
	json_rows(j, "processes", "events", s->procs, json_proc);
	g_string_append(j, "}\n");
	fputs(j->str, out);
}
