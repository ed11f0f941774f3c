/* Where the audit writer's records go: see audit/out.h. */
#include "audit/out.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <syslog.h>
#include <unistd.h>

#include "audit/chain.h"
#include "common/fd-util.h"
#include "common/log.h"
#include "audit/json.h"

/* How many failure episodes (open mode) are reported on stderr; the log
 * itself records every one. */
#define MAX_EPISODE_MESSAGES 5

typedef struct {
	uint64_t seq;                          /* records in the chain */
	char prev[VR_AUDIT_HASH_HEX_LEN + 1];  /* the last one's hash */
} Chain;

static struct {
	char *run_id;
	/* the file sink */
	int fd;                 /* -1: none */
	bool own_fd;            /* opened here (or a rotated part): ours to close */
	int dir_fd;             /* for rotation (ours), -1: no rotation */
	char *name;             /* LOG's name in dir_fd */
	char *shown;            /* LOG as the user named it, for messages */
	bool regular;           /* a regular file: rotation and roll-back work */
	uint64_t size, max_size;
	unsigned next_part;     /* the lowest N that LOG.N may be */
	char *previous_file;    /* the part LOG continues (its first record says so), or NULL */
	bool need_head;         /* LOG is a new part without its "rotate" record yet */
	bool rotate_warned;
	bool keep_mount_wording;
	/* the other sinks */
	bool to_stderr, to_syslog;
	/* the chain as the file holds it */
	Chain chain;
	uint64_t denied;        /* refusals written */
	/* failures */
	bool fail_open;
	uint64_t lost;          /* records lost since the last write that worked */
	uint64_t lost_total;    /* records lost and already reported in the log */
	int lost_errno;
	gint64 lost_since;
	unsigned episodes;
	bool failed;            /* closed mode: writing has stopped */
	int failed_errno;
	void (*stop_hook)(void);
} O = {.fd = -1, .dir_fd = -1};

void vr_audit_out_set_stop_hook(void (*hook)(void)) { O.stop_hook = hook; }
bool vr_audit_out_failed(void) { return O.failed; }
uint64_t vr_audit_out_records(void) { return O.chain.seq; }
uint64_t vr_audit_out_lost(void) { return O.lost_total + O.lost; }

int vr_audit_out_open(const VrAuditOutOptions *opts, const char *run_id)
{
	void (*hook)(void) = O.stop_hook;
	O = (typeof(O)){.fd = -1, .dir_fd = -1, .next_part = 1, .stop_hook = hook};
	memcpy(O.chain.prev, VR_AUDIT_CHAIN_GENESIS, sizeof O.chain.prev);
	O.run_id = g_strdup(run_id);
	O.max_size = opts->max_size;
	O.fail_open = opts->fail_open;
	O.keep_mount_wording = opts->keep_mount;
	O.to_stderr = opts->to_stderr;
	O.to_syslog = opts->to_syslog;
	const char *path = opts->path;
	if (opts->fd >= 0) {
		/* Opened by the caller (O_EXCL in the state directory): appended
		 * to, fsynced at the end, left for the caller to close. */
		O.fd = opts->fd;
		O.shown = g_strdup(path ? path : "(the audit descriptor)");
		if (path && opts->dir_fd >= 0) {
			O.dir_fd = fcntl(opts->dir_fd, F_DUPFD_CLOEXEC, 3);
			O.name = g_path_get_basename(path);
		}
	} else if (!path || strcmp(path, "-") == 0) {
		/* No file but events to pass on: stderr, like "-". */
		if (path || !O.to_syslog)
			O.to_stderr = true;
	} else if (strcmp(path, "syslog") == 0) {
		O.to_syslog = true;
	} else {
		/* The directory first, so a rotation renames and creates in the
		 * directory the log was opened in, whatever happens to the path. */
		g_autofree char *dir = g_path_get_dirname(path);
		O.dir_fd = open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
		if (O.dir_fd < 0)
			return vr_log_errno(errno, "cannot open the audit log's directory %s", dir);
		O.name = g_path_get_basename(path);
		O.fd = openat(O.dir_fd, O.name, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC | O_NOCTTY, 0600);
		if (O.fd < 0) {
			int e = errno;
			close(O.dir_fd);
			O.dir_fd = -1;
			return vr_log_errno(e, "cannot open the audit log %s", path);
		}
		O.own_fd = true;
		O.shown = g_strdup(path);
	}
	if (O.fd >= 0) {
		struct stat st;
		if (fstat(O.fd, &st) == 0 && S_ISREG(st.st_mode)) {
			O.regular = true;
			O.size = (uint64_t)st.st_size;
		}
	}
	if (O.to_syslog)
		openlog("vault-run", LOG_PID, LOG_USER);
	return 0;
}

/* --- the chain --- */

/* Appends to OUT the chained record for LINE (one JSON object), advancing C. */
static void chain_line(GString *out, Chain *c, const char *line, size_t len)
{
	while (len && (line[len - 1] == '\n' || line[len - 1] == ' '))
		len--;
	if (len < 3 || line[0] != '{' || line[len - 1] != '}')
		return; /* never happens: every producer makes an object */
	size_t old = out->len, room = len + 64 + VR_AUDIT_CHAIN_SUFFIX_LEN;
	g_string_set_size(out, old + room);
	size_t n;
	if (vr_audit_chain_format(out->str + old, room, c->seq + 1, line + 1, len - 2, c->prev, &n) < 0) {
		g_string_truncate(out, old);
		return;
	}
	c->seq++;
	g_string_truncate(out, old + n);
}

static void record_start(GString *s, const char *op)
{
	g_string_append(s, "{\"ts\":");
	vr_audit_json_ts(s, g_get_real_time());
	g_string_append(s, ",\"run\":");
	vr_audit_json_str(s, O.run_id);
	g_string_append_printf(s, ",\"op\":\"%s\",\"path\":\"\",\"result\":\"ok\"", op);
}

/* The records a chunk starts with: "rotate" at the head of a new part, and
 * "lost" after records could not be written. */
static void head_records(GString *out, Chain *c)
{
	g_autoptr(GString) l = g_string_new(NULL);
	if (O.need_head) {
		record_start(l, "rotate");
		g_string_append_printf(l, ",\"prev\":\"%s\",\"previous_file\":", c->prev);
		vr_audit_json_str(l, O.previous_file ? O.previous_file : "");
		g_string_append_c(l, '}');
		chain_line(out, c, l->str, l->len);
	}
	if (O.lost) {
		g_string_truncate(l, 0);
		record_start(l, "lost");
		g_string_append_printf(l, ",\"count\":%" G_GUINT64_FORMAT ",\"reason\":\"%s\",\"since\":", O.lost,
		                       vr_errno_name(O.lost_errno));
		vr_audit_json_ts(l, O.lost_since);
		g_string_append_c(l, '}');
		chain_line(out, c, l->str, l->len);
	}
}

/* --- the sinks --- */

/* All of BUF or nothing: what a failed write left of it is cut off again. */
static int file_write(const char *buf, size_t len)
{
	size_t done = 0;
	int err = 0;
	while (done < len) {
		ssize_t n = write(O.fd, buf + done, len - done);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			err = n < 0 ? errno : EIO;
			break;
		}
		done += (size_t)n;
	}
	if (!err) {
		O.size += len;
		return 0;
	}
	struct stat st;
	if (done > 0 && O.regular && fstat(O.fd, &st) == 0 && (uint64_t)st.st_size >= done &&
	    ftruncate(O.fd, st.st_size - (off_t)done) < 0) {
		/* The half record stays; verify will name its line. */
	}
	return -err;
}

static void other_sinks(GString *s)
{
	if (O.to_stderr && vr_write_all(STDERR_FILENO, s->str, s->len) < 0) {
		/* Best effort: the file is the log that counts. */
	}
	if (O.to_syslog) {
		const char *line = s->str, *nl;
		while ((nl = memchr(line, '\n', s->len - (size_t)(line - s->str)))) {
			syslog(LOG_INFO, "%.*s", (int)(nl - line), line);
			line = nl + 1;
		}
	}
}

static void failed(int err, uint64_t n_records)
{
	if (!O.fail_open) {
		O.failed = true;
		O.failed_errno = err;
		vr_error("cannot write the audit log %s: %s; %s (--audit-fail=closed). Free space (or fix the "
		         "disk) and run again, or use --audit-fail=open to go on without a complete log",
		         O.shown, g_strerror(err),
		         O.keep_mount_wording ? "stopping the agent" : "unmounting the view");
		if (O.stop_hook)
			O.stop_hook();
		return;
	}
	if (O.lost == 0) {
		O.lost_errno = err;
		O.lost_since = g_get_real_time();
		if (O.episodes++ < MAX_EPISODE_MESSAGES)
			vr_warning("cannot write the audit log %s: %s; going on (--audit-fail=open): the records "
			           "lost are counted, and the log says how many once it can be written again",
			           O.shown, g_strerror(err));
	}
	O.lost += n_records;
}

/* Writes one chunk: OUT, chained as C, holding N_RECORDS of the caller's
 * records of which N_DENIED refusals. */
static void commit(GString *out, const Chain *c, uint64_t n_records, uint64_t n_denied)
{
	if (O.fd >= 0) {
		int r = file_write(out->str, out->len);
		if (r < 0) {
			failed(-r, n_records);
			return;
		}
	}
	O.chain = *c;
	O.denied += n_denied;
	O.need_head = false;
	if (O.lost) {
		if (O.episodes <= MAX_EPISODE_MESSAGES)
			vr_warning("the audit log %s can be written again; %" G_GUINT64_FORMAT
			           " records were lost (the log says so in an op \"lost\" record)",
			           O.shown, O.lost);
		O.lost_total += O.lost;
		O.lost = 0;
	}
	other_sinks(out);
}

/* LOG → LOG.N and a new, empty LOG. False (said once) when it cannot be
 * done: the log then grows past the limit rather than losing records. */
static bool rotate(void)
{
	bool *warned = &O.rotate_warned;
	if (O.dir_fd < 0 || !O.regular || !O.name)
		return false;
	/* Only the file we write: if LOG was moved or replaced, leave it. */
	struct stat ours, there;
	if (fstat(O.fd, &ours) < 0 || fstatat(O.dir_fd, O.name, &there, AT_SYMLINK_NOFOLLOW) < 0 ||
	    ours.st_dev != there.st_dev || ours.st_ino != there.st_ino) {
		if (!*warned)
			vr_warning("the audit log %s was moved or replaced; not rotating it", O.shown);
		*warned = true;
		return false;
	}
	g_autofree char *part = NULL;
	for (;; O.next_part++) {
		g_free(part);
		part = g_strdup_printf("%s.%u", O.name, O.next_part);
		if (fstatat(O.dir_fd, part, &there, AT_SYMLINK_NOFOLLOW) < 0 && errno == ENOENT)
			break;
	}
	fdatasync(O.fd);
	int r = renameat2(O.dir_fd, O.name, O.dir_fd, part, RENAME_NOREPLACE);
	if (r < 0 && errno == EINVAL) /* no RENAME_NOREPLACE here: LOG.N was checked free above */
		r = renameat(O.dir_fd, O.name, O.dir_fd, part);
	if (r < 0) {
		if (!*warned)
			vr_warning("cannot rotate the audit log %s: %s; it grows past its limit", O.shown,
			           g_strerror(errno));
		*warned = true;
		return false;
	}
	int fd = openat(O.dir_fd, O.name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_APPEND | O_CLOEXEC | O_NOCTTY, 0600);
	if (fd < 0) {
		int e = errno;
		/* Put the part back: better one big file than a gap. */
		if (renameat2(O.dir_fd, part, O.dir_fd, O.name, RENAME_NOREPLACE) < 0) {
			/* Then LOG.N holds it and the next part starts the chain there. */
		}
		if (!*warned)
			vr_warning("cannot start a new part of the audit log %s: %s; it grows past its limit",
			           O.shown, g_strerror(e));
		*warned = true;
		return false;
	}
	if (O.own_fd)
		close(O.fd);
	O.fd = fd;
	O.own_fd = true;
	O.size = 0;
	O.next_part++;
	g_free(O.previous_file);
	O.previous_file = g_steal_pointer(&part);
	O.need_head = true;
	return true;
}

void vr_audit_out_write(const VrAuditLine *lines, size_t n)
{
	g_autoptr(GString) out = g_string_new(NULL);
	bool can_rotate = O.max_size > 0 && O.fd >= 0 && O.regular && O.dir_fd >= 0;
	size_t i = 0;
	while (i < n && !O.failed) {
		Chain c = O.chain;
		g_string_truncate(out, 0);
		head_records(out, &c);
		size_t first = i;
		uint64_t n_denied = 0;
		while (i < n) {
			size_t before = out->len;
			Chain save = c;
			chain_line(out, &c, lines[i].line, lines[i].len);
			/* The record that would cross the limit starts the next
			 * part; a part has at least one record. */
			if (can_rotate && O.size + out->len > O.max_size && (O.size > 0 || i > first)) {
				g_string_truncate(out, before);
				c = save;
				break;
			}
			n_denied += lines[i].denied;
			i++;
		}
		if (out->len)
			commit(out, &c, i - first, n_denied);
		if (i < n && !O.failed && !rotate())
			can_rotate = false;
	}
}

/* The seal record (and the head records before it) into OUT, chained as C. */
static void build_seal(GString *out, Chain *c, uint64_t dropped)
{
	g_autoptr(GString) l = g_string_new(NULL);
	*c = O.chain;
	g_string_truncate(out, 0);
	head_records(out, c);
	record_start(l, "seal");
	g_string_append_printf(l, ",\"records\":%" G_GUINT64_FORMAT ",\"denied\":%" G_GUINT64_FORMAT
	                          ",\"dropped\":%" G_GUINT64_FORMAT ",\"lost\":%" G_GUINT64_FORMAT "}",
	                       c->seq, O.denied, dropped, O.lost_total + O.lost);
	chain_line(out, c, l->str, l->len);
}

void vr_audit_out_seal(uint64_t dropped)
{
	if (O.failed)
		return;
	g_autoptr(GString) out = g_string_new(NULL);
	Chain c;
	build_seal(out, &c, dropped);
	/* The seal keeps to the limit like any record. */
	if (O.max_size && O.fd >= 0 && O.regular && O.size > 0 && O.size + out->len > O.max_size && rotate())
		build_seal(out, &c, dropped);
	commit(out, &c, 1, 0);
}

void vr_audit_out_close(void)
{
	if (O.fd > STDERR_FILENO || O.own_fd)
		fsync(O.fd);
	if (O.own_fd && O.fd >= 0)
		close(O.fd);
	if (O.dir_fd >= 0)
		close(O.dir_fd);
	/* The chain is unkeyed: the last hash is also said somewhere the
	 * agent cannot rewrite, for `vault-run audit verify --expect`. */
	if (!O.to_syslog)
		openlog("vault-run", LOG_PID, LOG_USER);
	if (O.failed)
		syslog(LOG_WARNING, "audit run %s stopped unsealed: cannot write %s (%s) after %" G_GUINT64_FORMAT
		       " records, last hash %s", O.run_id, O.shown, vr_errno_name(O.failed_errno), O.chain.seq,
		       O.chain.prev);
	else if (O.lost)
		syslog(LOG_WARNING, "audit run %s not sealed: %" G_GUINT64_FORMAT " records lost at the end (%s), "
		       "%" G_GUINT64_FORMAT " records, last hash %s", O.run_id, O.lost,
		       vr_errno_name(O.lost_errno), O.chain.seq, O.chain.prev);
	else
		syslog(LOG_NOTICE, "audit run %s sealed: %" G_GUINT64_FORMAT " records, final hash %s", O.run_id,
		       O.chain.seq, O.chain.prev);
	closelog();
	g_clear_pointer(&O.run_id, g_free);
	g_clear_pointer(&O.name, g_free);
	g_clear_pointer(&O.shown, g_free);
	g_clear_pointer(&O.previous_file, g_free);
	O.fd = O.dir_fd = -1;
	O.own_fd = false;
}
