/* Reading an audit log line by line: see audit/read.h. The reader does its
 * own buffering over read(2) (not stdio) so --follow can tell a complete line
 * from one the writer is still appending, and can switch files on rotation. */
#include "audit/read.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "common/cleanup.h"

#define CHUNK (64u << 10)

struct VrAuditReader {
	int fd;
	char *name;
	bool follow;
	char *buf;
	size_t cap, start, end;   /* unread data is buf[start..end) */
	unsigned long lineno, bad;
	bool skipping;            /* inside an over-long line, dropping its bytes */
	bool unterminated;        /* the last line returned had no newline */
	const char *error;
};

VrAuditReader *vr_audit_reader_new_fd(int fd, const char *name)
{
	VrAuditReader *r = g_new0(VrAuditReader, 1);
	r->fd = fd;
	r->name = g_strdup(name);
	return r;
}

GPtrArray *vr_audit_log_parts(const char *path)
{
	GPtrArray *files = g_ptr_array_new_with_free_func(g_free);
	if (strcmp(path, "-") != 0) {
		for (unsigned n = 1;; n++) {
			char *r = g_strdup_printf("%s.%u", path, n);
			if (access(r, F_OK) != 0) {
				g_free(r);
				break;
			}
			g_ptr_array_add(files, r);
		}
	}
	g_ptr_array_add(files, g_strdup(path));
	return files;
}

int vr_audit_reader_open(const char *path, VrAuditReader **ret)
{
	int fd;
	if (strcmp(path, "-") == 0) {
		fd = dup(STDIN_FILENO);
	} else {
		fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
	}
	if (fd < 0)
		return -errno;
	*ret = vr_audit_reader_new_fd(fd, strcmp(path, "-") == 0 ? "(stdin)" : path);
	return 0;
}

void vr_audit_reader_free(VrAuditReader *r)
{
	if (!r)
		return;
	vr_clear_fd(&r->fd);
	g_free(r->name);
	g_free(r->buf);
	g_free(r);
}

void vr_audit_reader_set_follow(VrAuditReader *r, bool follow) { r->follow = follow; }
unsigned long vr_audit_reader_lineno(const VrAuditReader *r) { return r->lineno; }
const char *vr_audit_reader_error(const VrAuditReader *r) { return r->error ? r->error : ""; }
unsigned long vr_audit_reader_bad_lines(const VrAuditReader *r) { return r->bad; }
const char *vr_audit_reader_name(const VrAuditReader *r) { return r->name; }
int vr_audit_reader_fd(const VrAuditReader *r) { return r->fd; }
bool vr_audit_reader_unterminated(const VrAuditReader *r) { return r->unterminated; }

void vr_audit_reader_reset(VrAuditReader *r, int new_fd)
{
	r->start = r->end = 0;
	r->skipping = false;
	if (new_fd >= 0) {
		vr_clear_fd(&r->fd);
		r->fd = new_fd;
	}
}

void vr_audit_record_init(VrAuditRecord *rec)
{
	memset(rec, 0, sizeof *rec);
	vr_json_object_init(&rec->obj);
}

void vr_audit_record_clear(VrAuditRecord *rec)
{
	vr_json_object_clear(&rec->obj);
	memset(rec, 0, sizeof *rec);
}

static int64_t get_num(const VrJsonObject *o, const char *key)
{
	int64_t v;
	return vr_json_get_int64(o, key, &v) ? v : -1;
}

void vr_audit_record_fill(VrAuditRecord *rec)
{
	const VrJsonObject *o = &rec->obj;
	rec->ts = vr_json_get_string(o, "ts");
	if (!rec->ts || vr_audit_parse_rfc3339(rec->ts, &rec->ts_us) < 0)
		rec->ts_us = INT64_MIN;
	rec->run = vr_json_get_string(o, "run");
	rec->op = vr_json_get_string(o, "op");
	rec->path = vr_json_get_string(o, "path");
	rec->root = vr_json_get_string(o, "root");
	rec->target = vr_json_get_string(o, "target");
	rec->result = vr_json_get_string(o, "result");
	rec->rule = vr_json_get_string(o, "rule");
	rec->comm = vr_json_get_string(o, "comm");
	rec->exe = vr_json_get_string(o, "exe");
	rec->host = vr_json_get_string(o, "host");
	rec->command = vr_json_get_string(o, "command");
	rec->pid = get_num(o, "pid");
	rec->port = get_num(o, "port");
	rec->bytes_read = get_num(o, "bytes_read");
	rec->bytes_written = get_num(o, "bytes_written");
	rec->exit_status = get_num(o, "exit_status");
	rec->seq = get_num(o, "seq");
}

char *vr_audit_record_where(const VrAuditRecord *rec, const char *path)
{
	if (!path)
		return NULL;
	if (!rec->root)
		return g_strdup(path);
	return *path ? g_build_filename(rec->root, path, NULL) : g_strdup(rec->root);
}

static int bad_line(VrAuditReader *r, const char *why)
{
	r->bad++;
	r->error = why;
	return -EBADMSG;
}

static int take_line(VrAuditReader *r, VrAuditRecord *rec, const char *line, size_t len)
{
	r->lineno++;
	r->unterminated = false;
	if (r->skipping) {
		r->skipping = false;
		return bad_line(r, "line too long");
	}
	rec->line = line;
	rec->line_len = len;
	rec->lineno = r->lineno;
	if (len == 0)
		return bad_line(r, "empty line");
	const char *why = NULL;
	int ret = vr_json_parse_object(&rec->obj, line, len, &why, NULL);
	if (ret == -ENOMEM)
		return ret;
	if (ret < 0)
		return bad_line(r, why);
	vr_audit_record_fill(rec);
	return 1;
}

int vr_audit_reader_next(VrAuditReader *r, VrAuditRecord *rec)
{
	for (;;) {
		char *nl = r->end > r->start ? memchr(r->buf + r->start, '\n', r->end - r->start) : NULL;
		if (nl) {
			char *line = r->buf + r->start;
			r->start = (size_t)(nl - r->buf) + 1;
			return take_line(r, rec, line, (size_t)(nl - line));
		}
		if (r->end - r->start > VR_AUDIT_MAX_LINE) {
			/* Too long to be one of ours: drop it up to its newline,
			 * in constant memory. */
			r->skipping = true;
			r->start = r->end = 0;
		}
		if (r->start > 0) {
			memmove(r->buf, r->buf + r->start, r->end - r->start);
			r->end -= r->start;
			r->start = 0;
		}
		if (r->cap - r->end < CHUNK) {
			r->cap = r->end + CHUNK;
			r->buf = g_realloc(r->buf, r->cap);
		}
		ssize_t n = read(r->fd, r->buf + r->end, r->cap - r->end);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (n == 0) {
			if (r->follow || (r->end == 0 && !r->skipping))
				return 0;
			/* The file ends without a newline (a writer killed mid-line,
			 * or a truncated copy): the rest is the last line. */
			char *line = r->buf;
			size_t len = r->end;
			r->start = r->end = 0;
			int ret = take_line(r, rec, line, len);
			r->unterminated = true;
			return ret;
		}
		r->end += (size_t)n;
	}
}

bool vr_audit_record_denied(const VrAuditRecord *rec)
{
	/* The view reports the class of a file it merely looked at ("lookup"
	 * of a read-only file says "readonly"): that is information, not a
	 * refusal. Only ops that cannot modify anything are exempt. */
	static const char *const looks[] = {
		"lookup", "getattr", "opendir", "readdir", "readlink", "read", "access",
		"statfs", "getxattr", "listxattr",
	};
	/* "skipped": work vault-run left undone (a file too big to scan, a
	 * change past the journal's cap), not something the agent was denied. */
	if (!rec->result || strcmp(rec->result, "ok") == 0 || strcmp(rec->result, "redacted") == 0 ||
	    strcmp(rec->result, "skipped") == 0)
		return false;
	if (strcmp(rec->result, "readonly") == 0 && rec->op)
		for (size_t i = 0; i < G_N_ELEMENTS(looks); i++)
			if (strcmp(rec->op, looks[i]) == 0)
				return false;
	return true;
}

bool vr_audit_record_is_write(const VrAuditRecord *rec)
{
	static const char *const ops[] = {
		"write", "create", "mkdir", "mknod", "symlink", "link", "unlink", "rmdir",
		"rename", "setattr", "truncate", "chmod", "chown", "utimens", "setxattr",
		"removexattr", "fallocate", "copy_file_range",
	};
	if (!rec->op)
		return false;
	for (size_t i = 0; i < G_N_ELEMENTS(ops); i++)
		if (strcmp(rec->op, ops[i]) == 0)
			return true;
	return strcmp(rec->op, "close") == 0 && rec->bytes_written > 0;
}

/* Days since 1970-01-01 of a proleptic Gregorian date (H. Hinnant's
 * days_from_civil), so no timegm()/TZ games are needed. */
static int64_t days_from_civil(int64_t y, unsigned m, unsigned d)
{
	y -= m <= 2;
	int64_t era = (y >= 0 ? y : y - 399) / 400;
	unsigned yoe = (unsigned)(y - era * 400);
	unsigned doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
	unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
	return era * 146097 + (int64_t)doe - 719468;
}

static bool digits(const char **s, int n, int *ret)
{
	int v = 0;
	for (int i = 0; i < n; i++) {
		char c = (*s)[i];
		if (c < '0' || c > '9')
			return false;
		v = v * 10 + (c - '0');
	}
	*s += n;
	*ret = v;
	return true;
}

int vr_audit_parse_rfc3339(const char *s, int64_t *ret_us)
{
	int Y, M, D, h, m, sec, oh = 0, om = 0;
	if (!digits(&s, 4, &Y) || *s++ != '-' || !digits(&s, 2, &M) || *s++ != '-' ||
	    !digits(&s, 2, &D))
		return -EINVAL;
	if (*s != 'T' && *s != 't' && *s != ' ')
		return -EINVAL;
	s++;
	if (!digits(&s, 2, &h) || *s++ != ':' || !digits(&s, 2, &m) || *s++ != ':' ||
	    !digits(&s, 2, &sec))
		return -EINVAL;
	if (M < 1 || M > 12 || D < 1 || D > 31 || h > 23 || m > 59 || sec > 60)
		return -EINVAL;
	int64_t frac = 0;
	if (*s == '.') {
		s++;
		int n = 0;
		if (*s < '0' || *s > '9')
			return -EINVAL;
		for (; *s >= '0' && *s <= '9'; s++, n++)
			if (n < 6)
				frac = frac * 10 + (*s - '0');
		for (; n < 6; n++)
			frac *= 10;
	}
	int sign = 0;
	if (*s == 'Z' || *s == 'z') {
		s++;
	} else if (*s == '+' || *s == '-') {
		sign = *s++ == '+' ? 1 : -1;
		if (!digits(&s, 2, &oh) || *s++ != ':' || !digits(&s, 2, &om) || oh > 23 || om > 59)
			return -EINVAL;
	} else {
		return -EINVAL;
	}
	if (*s)
		return -EINVAL;
	if (sec == 60)
		sec = 59; /* a leap second sorts with the second before it */
	int64_t t = days_from_civil(Y, (unsigned)M, (unsigned)D) * 86400 + h * 3600 + m * 60 + sec;
	t -= sign * (oh * 3600 + om * 60);
	*ret_us = t * 1000000 + frac;
	return 0;
}

int vr_audit_parse_time_arg(const char *s, int64_t now_us, int64_t *ret_us,
                            bool *ret_relative_to_start)
{
	*ret_relative_to_start = false;
	if (vr_audit_parse_rfc3339(s, ret_us) == 0)
		return 0;
	bool after_start = false;
	if (*s == '+') {
		after_start = true;
		s++;
	} else if (*s == '-') {
		s++;
	}
	if (*s < '0' || *s > '9')
		return -EINVAL;
	char *end;
	errno = 0;
	unsigned long long n = strtoull(s, &end, 10);
	int64_t unit;
	switch (*end) {
	case 's': unit = 1; break;
	case 'm': unit = 60; break;
	case 'h': unit = 3600; break;
	case 'd': unit = 86400; break;
	default: return -EINVAL;
	}
	if (errno || end[1] != '\0' || n > (unsigned long long)(INT64_MAX / 1000000 / unit))
		return -EINVAL;
	int64_t off = (int64_t)n * unit * 1000000;
	if (after_start) {
		*ret_relative_to_start = true;
		*ret_us = off;
	} else {
		*ret_us = now_us - off;
	}
	return 0;
}

void vr_audit_format_time(int64_t us, char *buf, size_t size)
{
	time_t secs = (time_t)(us >= 0 ? us / 1000000 : (us - 999999) / 1000000);
	int64_t frac = us - (int64_t)secs * 1000000;
	struct tm tm;
	if (!gmtime_r(&secs, &tm)) {
		snprintf(buf, size, "?");
		return;
	}
	char base[32];
	strftime(base, sizeof base, "%Y-%m-%dT%H:%M:%S", &tm);
	snprintf(buf, size, "%s.%06lldZ", base, (long long)frac);
}
