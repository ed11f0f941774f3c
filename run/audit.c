/* The audit side of a sandbox run: see run/audit.h. */
#include "run/audit.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/sockios.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "run/audit-file.h"
#include "audit/json.h"
#include "audit/read.h"
#include "audit/sinks.h"
#include "audit/summary.h"
#include "common/cleanup.h"
#include "common/log.h"
#include "audit/state-dir.h"

int vr_run_audit_open(VrRunAudit *a, const char *project, const VrRunPlan *plan, const VrConfig *config,
                      const VrAuditUnder *under, size_t n_under)
{
	*a = (VrRunAudit){.log_fd = -1, .dir_fd = -1, .daemon_fd = -1, .send_fd = -1};
	a->run_id = vr_state_new_run_id();
	const char *list = plan->audit_path ? plan->audit_path : config->audit_path ? config->audit_path : "state";
	VrAuditSinks sinks = {0};
	g_autofree char *why = NULL;
	if (!vr_audit_sinks_parse(list, &sinks, &why)) {
		vr_error("%s: %s", plan->audit_path ? "--audit" : "[audit] path in the config", why);
		return -EINVAL;
	}
	a->to_stderr = sinks.to_stderr;
	a->to_syslog = sinks.to_syslog;
	if (sinks.file) {
		/* Opened here, as the user, before anything is mounted: the view
		 * daemon only appends to it (run/audit-file.h says why). */
		VrAuditFile f;
		g_autofree char *why2 = NULL;
		int r = vr_audit_file_open(sinks.file, under, n_under, &f, &why2);
		if (r < 0) {
			vr_error("%s: %s", plan->audit_path ? "--audit" : "[audit] path in the config", why2);
			vr_audit_sinks_clear(&sinks);
			return r;
		}
		a->log_fd = f.fd;
		a->dir_fd = f.dir_fd;
		a->view_path = g_steal_pointer(&f.path);
	} else if (sinks.state) {
		/* Created here, O_EXCL in a checked 0700 directory, before any
		 * namespace is entered: the user's own files, the user's uid. */
		int r = vr_state_create_run_log(project, a->run_id, &a->log_fd, &a->view_path);
		if (r == 0)
			r = vr_state_open_project_dir(project, false, &a->dir_fd);
		if (r < 0) {
			vr_audit_sinks_clear(&sinks);
			return vr_log_errno(-r, "cannot create the run's audit log in the state directory (use --audit FILE)");
		}
		a->in_state_dir = true;
	}
	vr_audit_sinks_clear(&sinks);
	int sv[2];
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0)
		return vr_log_errno(errno, "socketpair");
	a->daemon_fd = sv[0];
	a->send_fd = sv[1];
	/* Nobody reads the supervisor's end: shutting its read side means a
	 * stray datagram can never pile up there. */
	shutdown(a->daemon_fd, SHUT_WR);
	return 0;
}

void vr_run_audit_view_options(const VrRunAudit *a, VrViewOptions *o)
{
	o->audit_path = a->view_path;
	o->audit_fd = a->log_fd;
	o->audit_dir_fd = a->dir_fd;
	o->audit_stderr = a->to_stderr;
	o->audit_syslog = a->to_syslog;
	/* The view lives in the supervisor's own mount namespace: if it stops
	 * for the log, a dead mount keeps the project covered. */
	o->audit_keep_mount = true;
}

static void send_event(VrRunAudit *a, GString *s)
{
	if (a->send_fd < 0)
		return;
	/* The daemon may be slow to take events (it never sheds ours): a
	 * blocking send waits for room rather than dropping the record. */
	ssize_t n;
	do
		n = send(a->send_fd, s->str, s->len, MSG_NOSIGNAL);
	while (n < 0 && errno == EINTR);
	if (n < 0)
		vr_log_errno(errno, "cannot send an audit event to the view daemon");
}

void vr_run_audit_send(VrRunAudit *a, const char *json)
{
	g_autoptr(GString) s = g_string_new(json);
	send_event(a, s);
}

char *vr_run_audit_policy_hash(const VrPolicy *policy)
{
	GChecksum *sum = g_checksum_new(G_CHECKSUM_SHA256);
	for (guint i = 0; i < vr_policy_n_rules(policy); i++) {
		const VrRule *r = vr_policy_rule(policy, i);
		g_autofree char *line = g_strdup_printf("%s\t%s\t%s:%d\n", vr_rule_kind_name(r->kind), r->pattern,
		                                        r->source ? r->source : "", r->line);
		g_checksum_update(sum, (const guchar *)line, (gssize)strlen(line));
	}
	char *hex = g_strdup(g_checksum_get_string(sum));
	g_checksum_free(sum);
	return hex;
}

void vr_run_audit_send_start(VrRunAudit *a, char *const *argv, const char *project, const char *features,
                             const char *policy_hash)
{
	g_autoptr(GString) cmd = g_string_new(NULL);
	for (char *const *p = argv; p && *p; p++) {
		g_autofree char *q = g_shell_quote(*p);
		if (cmd->len)
			g_string_append_c(cmd, ' ');
		/* g_shell_quote quotes even plain words; keep those bare. */
		gboolean plain = **p != '\0';
		for (const char *c = *p; *c && plain; c++)
			plain = g_ascii_isalnum(*c) || strchr("-_./=:,+@%", *c);
		g_string_append(cmd, plain ? *p : q);
	}
	g_autoptr(GString) s = g_string_new("{\"op\":\"run-start\",\"command\":");
	vr_json_append_string(s, cmd->str);
	g_string_append(s, ",\"version\":");
	vr_json_append_string(s, VR_VERSION);
	g_string_append(s, ",\"policy_hash\":");
	vr_json_append_string(s, policy_hash);
	g_string_append(s, ",\"features\":");
	vr_json_append_string(s, features);
	g_string_append(s, ",\"project\":");
	vr_json_append_string(s, project);
	g_string_append_printf(s, ",\"path\":\"\",\"result\":\"ok\",\"pid\":%d}", (int)getpid());
	send_event(a, s);
}

void vr_run_audit_send_gitfile(VrRunAudit *a, gboolean opened, const char *dir, const char *why)
{
	g_autoptr(GString) s = g_string_new("{\"op\":\"gitfile\",\"path\":\".git\",\"result\":");
	g_string_append(s, opened ? "\"ok\"" : "\"denied\"");
	g_string_append(s, ",\"target\":");
	vr_json_append_string(s, dir);
	g_string_append(s, ",\"reason\":");
	vr_json_append_string(s, why);
	g_string_append_printf(s, ",\"pid\":%d}", (int)getpid());
	send_event(a, s);
}

void vr_run_audit_send_end(VrRunAudit *a, int exit_status)
{
	g_autoptr(GString) s = g_string_new(NULL);
	g_string_printf(s, "{\"op\":\"run-end\",\"path\":\"\",\"result\":\"ok\",\"exit_status\":%d,\"pid\":%d}",
	                exit_status, (int)getpid());
	if (a->serving) {
		send_event(a, s);
	} else if (a->send_fd >= 0) {
		(void)!send(a->send_fd, s->str, s->len, MSG_NOSIGNAL | MSG_DONTWAIT);
		vr_clear_fd(&a->send_fd);
	}
	/* SIOCOUTQ on a unix socket: bytes sent but not yet received by the
	 * peer. The daemon's reader stops on SIGTERM without draining, so wait
	 * for it to have taken everything (the proxy's events too). It usually
	 * has within microseconds: sleep 50 µs first, doubling up to 5 ms, ~3 s
	 * in all (a flat 5 ms added 5 ms to every run). */
	long ns = 50 * 1000, waited = 0;
	while (a->send_fd >= 0 && waited < 3000L * 1000 * 1000) {
		int outq = 0;
		if (ioctl(a->send_fd, SIOCOUTQ, &outq) < 0 || outq == 0)
			break;
		struct timespec ts = {0, ns};
		nanosleep(&ts, NULL);
		waited += ns;
		ns = ns * 2 > 5 * 1000 * 1000 ? 5 * 1000 * 1000 : ns * 2;
	}
	/* Our end was the last one open (the proxy has ended, the other
	 * daemons closed theirs): the daemon's reader sees end-of-file now and
	 * stops at once, instead of noticing its stop flag on its next poll
	 * timeout (200 ms added to every run). */
	vr_clear_fd(&a->send_fd);
}

typedef struct {
	char *key;
	guint count;
} Denied;

static gint by_count(gconstpointer pa, gconstpointer pb)
{
	const Denied *a = *(Denied *const *)pa, *b = *(Denied *const *)pb;
	if (a->count != b->count)
		return a->count > b->count ? -1 : 1;
	return strcmp(a->key, b->key);
}

/* A key on its way where it must not go (net/inject.h): said in the
 * summary line, not only counted. */
static void note_tripwire(const VrAuditRecord *rec, unsigned long *count, char **first)
{
	const char *reason = rec->host ? vr_json_get_string(&rec->obj, "reason") : NULL;
	if (!reason || !g_str_has_prefix(reason, "tripwire: ") || !vr_audit_record_denied(rec))
		return;
	if (!(*count)++)
		*first = g_strdup(reason + strlen("tripwire: "));
}

static void append_tripwire(GString *line, unsigned long count, const char *first)
{
	if (!count)
		return;
	g_string_append_printf(line, ", %lu key%s refused (", count, count == 1 ? "" : "s");
	vr_audit_append_printable(line, first);
	g_string_append(line, count > 1 ? ", …)" : ")");
}

void vr_run_audit_print_summary(const VrRunAudit *a)
{
	const char *path = a->view_path;
	if (!path || strcmp(path, "-") == 0 || strcmp(path, "syslog") == 0)
		return; /* nothing to count from; the events went by already */
	g_autoptr(GPtrArray) parts = vr_audit_log_parts(path);
	/* "2 rotated parts": the user's `vault-run audit` reads them all. */
	g_autofree char *rotated = parts->len > 1 ? g_strdup_printf("%u rotated part%s", parts->len - 1,
	                                                           parts->len == 2 ? "" : "s")
	                                          : NULL;
	g_autofree char *where = NULL;
	if (a->in_state_dir)
		where = g_strdup_printf("vault-run audit %s  (log: %s%s%s)", a->run_id, path, rotated ? " + " : "",
		                        rotated ? rotated : "");
	else
		where = g_strdup_printf("vault-run audit %s%s%s%s", path, rotated ? " (+ " : "", rotated ? rotated : "",
		                        rotated ? ")" : "");
	VrAuditSummary *sum = vr_audit_summary_new();
	/* Which names were refused most: the summary keeps them internally
	 * for its table, but the line only wants the top three. */
	GHashTable *denied = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
	VrAuditRecord rec;
	vr_audit_record_init(&rec);
	unsigned long bad = 0, not_journaled = 0, tripped = 0;
	g_autofree char *first_trip = NULL; /* what the first key tripwire refused */
	bool readable = true;
	for (guint i = 0; i < parts->len; i++) {
		VrAuditReader *r = NULL;
		if (vr_audit_reader_open(parts->pdata[i], &r) < 0) {
			readable = false;
			break;
		}
		int n;
		while ((n = vr_audit_reader_next(r, &rec)) != 0) {
			if (n == -EBADMSG)
				continue;
			if (n < 0)
				break;
			vr_audit_summary_add(sum, &rec);
			if (g_strcmp0(rec.op, "journal") == 0 && g_strcmp0(rec.result, "skipped") == 0)
				not_journaled++;
			note_tripwire(&rec, &tripped, &first_trip);
			/* Refused connections have their own count below. */
			if (!vr_audit_record_denied(&rec) || rec.host)
				continue;
			g_autofree char *at = vr_audit_record_where(&rec, rec.path ? rec.path : "");
			g_autofree char *key = g_strdup(at && *at ? at : "/");
			gpointer old = g_hash_table_lookup(denied, key);
			g_hash_table_insert(denied, g_steal_pointer(&key), GUINT_TO_POINTER(GPOINTER_TO_UINT(old) + 1));
		}
		bad += vr_audit_reader_bad_lines(r);
		vr_audit_reader_free(r);
	}
	vr_audit_record_clear(&rec);
	if (!readable) {
		vr_error("audit: %s", where);
		g_hash_table_unref(denied);
		vr_audit_summary_free(sum);
		return;
	}
	vr_audit_summary_set_bad_lines(sum, bad);
	VrAuditCounts c;
	vr_audit_summary_counts(sum, &c);

	g_autoptr(GString) line = g_string_new(NULL);
	g_string_printf(line, "%u file%s read, %u written", c.files_read, c.files_read == 1 ? "" : "s",
	                c.files_written);
	if (c.files_created)
		g_string_append_printf(line, ", %u created", c.files_created);
	if (c.files_deleted)
		g_string_append_printf(line, ", %u deleted", c.files_deleted);
	/* Writes through --bind and profile views are writes to the host too. */
	if (c.files_outside)
		g_string_append_printf(line, " (%u of them outside the project)", c.files_outside);
	g_string_append_printf(line, ", %" G_GUINT64_FORMAT " denied", c.denied);
	g_autoptr(GPtrArray) list = g_ptr_array_new_with_free_func(g_free);
	GHashTableIter it;
	gpointer k, v;
	g_hash_table_iter_init(&it, denied);
	while (g_hash_table_iter_next(&it, &k, &v)) {
		Denied *d = g_new(Denied, 1);
		*d = (Denied){k, GPOINTER_TO_UINT(v)};
		g_ptr_array_add(list, d);
	}
	g_ptr_array_sort(list, by_count);
	for (guint i = 0; i < list->len && i < 3; i++) {
		const Denied *d = g_ptr_array_index(list, i);
		g_string_append(line, i ? ", " : " (");
		vr_audit_append_printable(line, d->key);
		if (d->count > 1)
			g_string_append_printf(line, " ×%u", d->count);
	}
	if (list->len > 3)
		g_string_append(line, ", …");
	if (list->len)
		g_string_append_c(line, ')');
	if (c.conn_allowed || c.conn_denied)
		g_string_append_printf(line, ", %" G_GUINT64_FORMAT " connection%s (%" G_GUINT64_FORMAT " denied)",
		                       c.conn_allowed + c.conn_denied, c.conn_allowed + c.conn_denied == 1 ? "" : "s",
		                       c.conn_denied);
	append_tripwire(line, tripped, first_trip);
	if (c.lost)
		g_string_append_printf(line, ", %" G_GUINT64_FORMAT " record%s lost (the log could not be written)",
		                       c.lost, c.lost == 1 ? "" : "s");
	if (not_journaled)
		g_string_append_printf(line, ", %lu change%s not kept for undo (over the journal cap or unreadable)", not_journaled,
		                       not_journaled == 1 ? "" : "s");
	g_string_append_printf(line, "; audit: %s", where);
	if (c.sealed && c.final_hash)
		g_string_append_printf(line, " hash %s", c.final_hash);
	vr_log_text(VR_LOG_NOTICE, line->str);
	g_hash_table_unref(denied);
	vr_audit_summary_free(sum);
}

void vr_run_audit_close(VrRunAudit *a)
{
	vr_clear_fd(&a->log_fd);
	vr_clear_fd(&a->dir_fd);
	vr_clear_fd(&a->daemon_fd);
	vr_clear_fd(&a->send_fd);
	g_free(a->run_id);
	g_free(a->view_path);
	*a = (VrRunAudit){.log_fd = -1, .dir_fd = -1, .daemon_fd = -1, .send_fd = -1};
}
