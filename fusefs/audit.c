/* The audit log: request handlers queue events; one writer thread formats
 * them as JSON Lines (schema in docs/audit.md) and writes them in batches, so
 * a handler never waits for the disk. The queue is bounded: refusals and
 * writes wait for room (they are never lost), reads/opens/lookups are shed
 * when it is full and the number shed is logged. A second thread reads the
 * events other processes of the run send as datagrams on event_fd.
 *
 * Every line is chained (audit/chain.h): the writer alone numbers and hashes
 * records, in the order it writes them, so the chain is the file's order.
 * At stop it writes the seal, which counts the records before it. Where the
 * records go, rotation and write failures: audit/out.c.
 *
 * A run's other views (a --bind directory, a profile's directory) do not
 * write a log: their writer sends each record, "root" member included, as
 * one datagram to the main view's event_fd (audit_forward_fd), whose reader
 * queues it like any other process's event. So the run has one file and
 * one chain, in the order the main writer took the records; each view's
 * records keep their own order, and a record's "ts" (stamped by the view
 * that made it) may be a little earlier than the one before it. */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "audit/chain.h"
#include "audit/json.h"
#include "audit/out.h"
#include "common/cleanup.h"
#include "common/fd-util.h"
#include "common/log.h"
#include "fusefs/view-private.h"
#include "policy/config.h"

#define QUEUE_CAP 8192

typedef struct {
	gint64 ts_us;
	const char *op;     /* static */
	char *path;
	char *result;
	char *rule;         /* pattern, NULL when none */
	const char *rule_kind;
	char *rule_source;  /* "file:line" */
	pid_t pid;
	char *comm, *exe;   /* read in the handler for refusals, else by the writer */
	int64_t bytes_read, bytes_written;
	char *target;
	char *extra;        /* members to add, preformatted */
	char *raw;          /* a whole preformatted object (event_fd, markers) */
	bool raw_denied;    /* raw: a refusal forwarded by another view of the run (counted in the seal) */
} QEvent;

static struct {
	bool active;
	VrAuditLevel level;
	char *run_id;
	char *root;         /* audit_root: every record's "root", or NULL (the project's view) */
	int event_fd;
	int forward_fd;     /* audit_forward_fd: records go there as datagrams, or -1 */

	pthread_mutex_t lock;
	pthread_cond_t not_empty, not_full;
	QEvent *ring[QUEUE_CAP];
	size_t head, count;
	uint64_t dropped;   /* shed since the last "dropped" line */
	bool stop;          /* writer: drain and end */
	atomic_bool reader_stop;
	int reader_wake;    /* eventfd: vr_audit_stop wakes the reader's poll, or -1 */
	pthread_t writer, reader;
	bool reader_started;

	/* writer thread only: last process looked up in /proc */
	pid_t cache_pid;
	gint64 cache_time;
	char *cache_comm, *cache_exe;
	/* writer thread only */
	uint64_t dropped_total;
	bool idle;          /* under lock: the writer has written all it took */
	pthread_cond_t idle_cond;
} A = {.event_fd = -1, .forward_fd = -1, .reader_wake = -1, .idle_cond = PTHREAD_COND_INITIALIZER,
       .lock = PTHREAD_MUTEX_INITIALIZER, .not_empty = PTHREAD_COND_INITIALIZER, .not_full = PTHREAD_COND_INITIALIZER};

int vr_audit_level_parse(const char *name)
{
	G_STATIC_ASSERT(VR_AUDIT_DENIED == 0 && VR_AUDIT_ALL == 4); /* the config's list's order */
	return vr_config_audit_level_parse(name);
}

bool vr_audit_wants(VrAuditLevel level)
{
	return A.active && level <= A.level;
}

/* --- formatting (writer thread) --- */

static char *read_small(const char *path)
{
	char *data = NULL;
	if (!g_file_get_contents(path, &data, NULL, NULL))
		return NULL;
	g_strchomp(data);
	return data;
}

static void process_info(pid_t pid, const char **comm, const char **exe)
{
	gint64 now = g_get_monotonic_time();
	/* One process usually makes many events in a row; its name is read
	 * once a second at most. Best effort: it may have exited already. */
	if (pid != A.cache_pid || now - A.cache_time > G_USEC_PER_SEC) {
		g_free(A.cache_comm);
		g_free(A.cache_exe);
		char path[64];
		snprintf(path, sizeof path, "/proc/%d/comm", (int)pid);
		A.cache_comm = read_small(path);
		snprintf(path, sizeof path, "/proc/%d/exe", (int)pid);
		A.cache_exe = g_file_read_link(path, NULL);
		A.cache_pid = pid;
		A.cache_time = now;
	}
	*comm = A.cache_comm;
	*exe = A.cache_exe;
}

static void format_event(GString *s, QEvent *e)
{
	if (e->raw) {
		g_string_append(s, e->raw);
		g_string_append_c(s, '\n');
		return;
	}
	g_string_append(s, "{\"ts\":");
	vr_audit_json_ts(s, e->ts_us);
	g_string_append(s, ",\"run\":");
	vr_audit_json_str(s, A.run_id);
	if (A.root) {
		g_string_append(s, ",\"root\":");
		vr_audit_json_str(s, A.root);
	}
	g_string_append_printf(s, ",\"op\":\"%s\",\"path\":", e->op);
	vr_audit_json_str(s, e->path ? e->path : "");
	if (e->target) {
		g_string_append(s, ",\"target\":");
		vr_audit_json_str(s, e->target);
	}
	g_string_append(s, ",\"result\":");
	vr_audit_json_str(s, e->result ? e->result : "ok");
	if (e->rule) {
		g_string_append(s, ",\"rule\":");
		vr_audit_json_str(s, e->rule);
		g_string_append_printf(s, ",\"rule_kind\":\"%s\",\"rule_source\":", e->rule_kind);
		vr_audit_json_str(s, e->rule_source);
	}
	if (e->pid > 0) {
		const char *comm = e->comm, *exe = e->exe;
		if (!comm)
			process_info(e->pid, &comm, &exe);
		g_string_append_printf(s, ",\"pid\":%d", (int)e->pid);
		if (comm) {
			g_string_append(s, ",\"comm\":");
			vr_audit_json_str(s, comm);
		}
		if (exe) {
			g_string_append(s, ",\"exe\":");
			vr_audit_json_str(s, exe);
		}
	}
	if (e->bytes_read >= 0)
		g_string_append_printf(s, ",\"bytes_read\":%" G_GINT64_FORMAT, e->bytes_read);
	if (e->bytes_written >= 0)
		g_string_append_printf(s, ",\"bytes_written\":%" G_GINT64_FORMAT, e->bytes_written);
	if (e->extra) {
		g_string_append_c(s, ',');
		g_string_append(s, e->extra);
	}
	g_string_append(s, "}\n");
}

/* A refusal, as `vault-run audit` counts them (audit/read.c
 * vr_audit_record_denied): "readonly" on an op that only looks is the class
 * of what was looked at, not a refusal. */
static bool result_denied(const char *op, const char *result)
{
	static const char *const looks[] = {
		"lookup", "getattr", "opendir", "readdir", "readlink", "read", "access",
		"statfs", "getxattr", "listxattr",
	};
	if (!result || strcmp(result, "ok") == 0 || strcmp(result, "redacted") == 0)
		return false;
	if (strcmp(result, "readonly") == 0 && op)
		for (size_t i = 0; i < G_N_ELEMENTS(looks); i++)
			if (strcmp(op, looks[i]) == 0)
				return false;
	return true;
}

static void qevent_free(QEvent *e)
{
	g_free(e->path);
	g_free(e->result);
	g_free(e->rule);
	g_free(e->rule_source);
	g_free(e->target);
	g_free(e->comm);
	g_free(e->exe);
	g_free(e->extra);
	g_free(e->raw);
	g_free(e);
}

/* Another view of the run: each record, without its newline, as one
 * datagram to the main view. A blocking send: like the file, the socket
 * makes the writer wait for room rather than lose a record (the main
 * view's reader never sheds them). Records sent after the main view is
 * gone are lost with the run, which is being stopped then. */
static void forward_lines(const VrAuditLine *lines, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		size_t len = lines[i].len;
		while (len && lines[i].line[len - 1] == '\n')
			len--;
		ssize_t r;
		do
			r = send(A.forward_fd, lines[i].line, len, MSG_NOSIGNAL);
		while (r < 0 && errno == EINTR);
	}
}

static void *writer_main(void *arg)
{
	g_autoptr(GString) s = g_string_new(NULL);
	g_autoptr(GArray) lines = g_array_new(FALSE, FALSE, sizeof(VrAuditLine));
	g_autoptr(GArray) ends = g_array_new(FALSE, FALSE, sizeof(size_t));
	QEvent *batch[256];

	for (;;) {
		size_t n = 0;
		uint64_t dropped;
		bool stop;
		pthread_mutex_lock(&A.lock);
		A.idle = true;
		pthread_cond_broadcast(&A.idle_cond);
		while (!A.count && !A.stop)
			pthread_cond_wait(&A.not_empty, &A.lock);
		A.idle = false;
		while (A.count && n < G_N_ELEMENTS(batch)) {
			batch[n++] = A.ring[A.head];
			A.head = (A.head + 1) % QUEUE_CAP;
			A.count--;
		}
		dropped = A.dropped;
		A.dropped = 0;
		stop = A.stop && !A.count;
		pthread_cond_broadcast(&A.not_full);
		pthread_mutex_unlock(&A.lock);

		/* One string with every record, then the records as slices of
		 * it (it may move while it grows). */
		g_string_truncate(s, 0);
		g_array_set_size(lines, 0);
		g_array_set_size(ends, 0);
		for (size_t i = 0; i < n; i++) {
			format_event(s, batch[i]);
			VrAuditLine l = {.denied = batch[i]->raw ? batch[i]->raw_denied
			                                         : result_denied(batch[i]->op, batch[i]->result)};
			g_array_append_val(lines, l);
			g_array_append_val(ends, s->len);
			qevent_free(batch[i]);
		}
		if (dropped) {
			A.dropped_total += dropped;
			g_string_append(s, "{\"ts\":");
			vr_audit_json_ts(s, g_get_real_time());
			g_string_append(s, ",\"run\":");
			vr_audit_json_str(s, A.run_id);
			if (A.root) {
				g_string_append(s, ",\"root\":");
				vr_audit_json_str(s, A.root);
			}
			g_string_append(s, ",\"op\":\"dropped\"");
			g_string_append_printf(s, ",\"path\":\"\",\"result\":\"ok\",\"count\":%" G_GUINT64_FORMAT "}\n",
			                       dropped);
			VrAuditLine l = {0};
			g_array_append_val(lines, l);
			g_array_append_val(ends, s->len);
		}
		for (guint i = 0, start = 0; i < lines->len; i++) {
			size_t end = g_array_index(ends, size_t, i);
			VrAuditLine *l = &g_array_index(lines, VrAuditLine, i);
			l->line = s->str + start;
			l->len = end - start;
			start = (guint)end;
		}
		if (lines->len && A.forward_fd >= 0)
			forward_lines((const VrAuditLine *)lines->data, lines->len);
		else if (lines->len)
			vr_audit_out_write((const VrAuditLine *)lines->data, lines->len);
		if (stop) {
			if (A.forward_fd < 0)
				vr_audit_out_seal(A.dropped_total); /* the main view seals the run's log */
			break;
		}
	}
	return NULL;
}

/* --- queueing (any thread) --- */

static void enqueue(QEvent *e, bool may_drop)
{
	pthread_mutex_lock(&A.lock);
	while (A.count == QUEUE_CAP) {
		if (may_drop) {
			A.dropped++;
			pthread_mutex_unlock(&A.lock);
			qevent_free(e);
			return;
		}
		pthread_cond_wait(&A.not_full, &A.lock);
	}
	A.ring[(A.head + A.count) % QUEUE_CAP] = e;
	A.count++;
	pthread_cond_signal(&A.not_empty);
	pthread_mutex_unlock(&A.lock);
}

void vr_audit_emit(VrAuditLevel level, const VrAuditEvent *ev)
{
	if (!vr_audit_wants(level))
		return;
	QEvent *e = g_new0(QEvent, 1);
	e->ts_us = g_get_real_time();
	e->op = ev->op;
	e->path = g_strdup(ev->path);
	e->result = g_strdup(ev->result);
	if (ev->rule) {
		e->rule = g_strdup(ev->rule->pattern);
		e->rule_kind = vr_rule_kind_name(ev->rule->kind);
		e->rule_source = ev->rule->line > 0
			? g_strdup_printf("%s:%d", ev->rule->source, ev->rule->line)
			: g_strdup(ev->rule->source);
	}
	e->pid = ev->pid;
	if (level == VR_AUDIT_DENIED && ev->pid > 0) {
		/* The refused process is blocked in its syscall right now; by the
		 * time the writer runs, a short-lived one (cat .env) is gone and
		 * /proc would no longer name it. Refusals are rare: read it here. */
		char path[64];
		snprintf(path, sizeof path, "/proc/%d/comm", (int)ev->pid);
		e->comm = read_small(path);
		snprintf(path, sizeof path, "/proc/%d/exe", (int)ev->pid);
		e->exe = g_file_read_link(path, NULL);
	}
	e->bytes_read = ev->bytes_read;
	e->bytes_written = ev->bytes_written;
	e->target = g_strdup(ev->target);
	e->extra = g_strdup(ev->extra);
	enqueue(e, level >= VR_AUDIT_READS);
}

void vr_audit_req(fuse_req_t req, VrAuditLevel level, const char *op, const char *path,
                  const char *result, const VrRule *rule, const char *target)
{
	if (!vr_audit_wants(level))
		return;
	VrAuditEvent ev = {
		.op = op, .path = path, .result = result, .rule = rule,
		.pid = req ? fuse_req_ctx(req)->pid : 0,
		.bytes_read = -1, .bytes_written = -1, .target = target,
	};
	vr_audit_emit(level, &ev);
}

/* The value of the string member KEY of a record our own writer formatted
 * (`"key":"value"`, no spaces), unescaped only as far as op and result
 * names need; NULL when absent. */
static char *raw_member(const char *obj, const char *key)
{
	g_autofree char *needle = g_strdup_printf("\"%s\":\"", key);
	const char *p = strstr(obj, needle);
	if (!p || (p != obj + 1 && p[-1] != ','))
		return NULL;
	p += strlen(needle);
	const char *end = strchr(p, '"');
	return end ? g_strndup(p, (gsize)(end - p)) : NULL;
}

void vr_audit_emit_raw(const char *json, size_t len)
{
	if (!A.active)
		return;
	g_autofree char *copy = g_strndup(json, len);
	g_strstrip(copy);
	size_t n = strlen(copy);
	if (n < 2 || copy[0] != '{' || copy[n - 1] != '}')
		return; /* not an object: not ours to log */
	/* The chain's own members are the writer's to write: a record that
	 * brought its own would verify ambiguously. (Inside a JSON string a
	 * quote is always escaped, so `,"seq":` can only be a key.) */
	static const char *const reserved[] = {
		"{\"seq\":", ",\"seq\":", "{\"hash\":", ",\"hash\":", "{\"prev\":", ",\"prev\":",
	};
	for (size_t i = 0; i < G_N_ELEMENTS(reserved); i++)
		if (strstr(copy, reserved[i]))
			return;
	/* One line per event, whatever the sender did. */
	for (char *p = copy; *p; p++)
		if (*p == '\n' || *p == '\r')
			*p = ' ';
	GString *s = g_string_new("{");
	if (!strstr(copy, "\"ts\"")) {
		g_string_append(s, "\"ts\":");
		vr_audit_json_ts(s, g_get_real_time());
		g_string_append_c(s, ',');
	}
	if (!strstr(copy, "\"run\"")) {
		g_string_append(s, "\"run\":");
		vr_audit_json_str(s, A.run_id);
		g_string_append_c(s, ',');
	}
	/* This view's own markers; a forwarded record has its root already. */
	bool has_root = strstr(copy, ",\"root\":") || strstr(copy, "{\"root\":");
	if (A.root && !has_root) {
		g_string_append(s, "\"root\":");
		vr_audit_json_str(s, A.root);
		g_string_append_c(s, ',');
	}
	if (s->len == 1)
		g_string_truncate(s, 0);
	g_string_append(s, s->len ? copy + 1 : copy);
	if (s->str[s->len - 2] == ',' && s->str[s->len - 1] == '}') /* "{...,}" from "{}" */
		g_string_erase(s, (gssize)s->len - 2, 1);
	QEvent *e = g_new0(QEvent, 1);
	if (has_root && !A.root) {
		/* Another view's record: a refusal there counts in the seal as
		 * one of ours would. */
		g_autofree char *op = raw_member(copy, "op"), *result = raw_member(copy, "result");
		e->raw_denied = result_denied(op, result);
	}
	e->raw = g_string_free(s, FALSE);
	enqueue(e, false);
}

/* Told to stop (reader_stop, then a write to reader_wake), the reader
 * takes what is queued and ends: the stop no longer waits for the next
 * datagram or the poll's 200 ms (up to 14 ms of every run's end with the
 * other views forwarding to this one, docs/PERFORMANCE.md). */
static void *reader_main(void *arg)
{
	char buf[65536];
	for (;;) {
		bool stopping = atomic_load(&A.reader_stop);
		struct pollfd pfd[2] = {{.fd = A.event_fd, .events = POLLIN}, {.fd = A.reader_wake, .events = POLLIN}};
		if (!stopping && poll(pfd, A.reader_wake >= 0 ? 2 : 1, 200) <= 0)
			continue;
		ssize_t n = recv(A.event_fd, buf, sizeof buf, MSG_DONTWAIT);
		if (n > 0)
			vr_audit_emit_raw(buf, (size_t)n);
		else if (n == 0 || (errno != EAGAIN && errno != EINTR))
			break; /* peer gone (stream) or socket unusable */
		else if (stopping)
			break; /* all that was queued is taken */
	}
	return NULL;
}

int vr_audit_start(const VrViewOptions *opts, const char *run_id)
{
	/* A process may run the view more than once (tests): start clean. */
	A.head = A.count = 0;
	A.dropped = 0;
	A.reader_started = false;
	atomic_store(&A.reader_stop, false);
	A.cache_pid = 0;
	A.dropped_total = 0;
	A.level = opts->audit_level;
	A.run_id = g_strdup(run_id);
	A.event_fd = opts->event_fd;
	A.forward_fd = opts->audit_forward_fd;
	g_free(A.root);
	A.root = g_strdup(opts->audit_root);
	if (!opts->audit_path && opts->event_fd < 0 && opts->audit_fd < 0 && !opts->audit_stderr &&
	    !opts->audit_syslog && opts->audit_forward_fd < 0)
		return 0;
	const VrAuditOutOptions out = {
		.path = opts->audit_path, .fd = opts->audit_fd, .dir_fd = opts->audit_dir_fd,
		.max_size = opts->audit_max_size, .fail_open = opts->audit_fail_open,
		.keep_mount = opts->audit_keep_mount, .to_stderr = opts->audit_stderr,
		.to_syslog = opts->audit_syslog,
	};
	int r = A.forward_fd >= 0 ? 0 : vr_audit_out_open(&out, run_id);
	if (r < 0)
		return r;
	A.active = true;
	A.stop = false;
	A.idle = false;
	/* The threads block every signal: SIGTERM must land on a FUSE thread
	 * (whose read it interrupts), or the loop would not notice the exit. */
	sigset_t all, old;
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	int err = pthread_create(&A.writer, NULL, writer_main, NULL); /* an errno, not -1 */
	if (err == 0 && A.event_fd >= 0)
		A.reader_wake = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK); /* -1: the poll's timeout wakes it */
	if (err == 0 && A.event_fd >= 0 && pthread_create(&A.reader, NULL, reader_main, NULL) == 0)
		A.reader_started = true;
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (err) {
		A.active = false;
		if (A.forward_fd < 0)
			vr_audit_out_close();
		return vr_log_errno(err, "cannot start the audit writer");
	}
	return 0;
}

void vr_audit_sync(int timeout_ms)
{
	if (!A.active)
		return;
	struct timespec deadline;
	clock_gettime(CLOCK_REALTIME, &deadline);
	deadline.tv_sec += timeout_ms / 1000;
	deadline.tv_nsec += (long)(timeout_ms % 1000) * 1000000;
	if (deadline.tv_nsec >= 1000000000) {
		deadline.tv_sec++;
		deadline.tv_nsec -= 1000000000;
	}
	pthread_mutex_lock(&A.lock);
	while ((A.count || !A.idle) &&
	       pthread_cond_timedwait(&A.idle_cond, &A.lock, &deadline) == 0)
		;
	pthread_mutex_unlock(&A.lock);
}

void vr_audit_stop(void)
{
	if (!A.active) {
		g_clear_pointer(&A.run_id, g_free);
		g_clear_pointer(&A.root, g_free);
		return;
	}
	/* The reader first, so its last events are queued before the writer
	 * is told to drain and end. */
	atomic_store(&A.reader_stop, true);
	if (A.reader_wake >= 0)
		(void)!eventfd_write(A.reader_wake, 1);
	if (A.reader_started)
		pthread_join(A.reader, NULL);
	vr_clear_fd(&A.reader_wake);
	pthread_mutex_lock(&A.lock);
	A.stop = true;
	pthread_cond_broadcast(&A.not_empty);
	pthread_mutex_unlock(&A.lock);
	pthread_join(A.writer, NULL);
	A.active = false;
	if (A.forward_fd < 0)
		vr_audit_out_close();
	A.forward_fd = -1;
	g_clear_pointer(&A.run_id, g_free);
	g_clear_pointer(&A.root, g_free);
	g_clear_pointer(&A.cache_comm, g_free);
	g_clear_pointer(&A.cache_exe, g_free);
}
