/* Secrets by content (issue 8): a file the policy shows is scanned
 * (policy/scan.h) the first time it is opened in a run, and the verdict is
 * kept per *file version* — (dev, ino, size, mtime, ctime) — so later opens
 * cost one fstat and a hash lookup, and a host edit (new mtime/ctime) is
 * scanned again. A file with a hit is then served like the redact class: the
 * masked copy (same length, same offsets) from memory, read-only; a file
 * without hits keeps the normal spliced path and never passes through here
 * again. Hits are logged with the rule id and the byte range, never the
 * bytes. */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

#include "policy/scan.h"
#include "policy/scan-filter.h"
#include "fusefs/view-private.h"
#include "policy/config.h"

/* Past this many versions the cache starts again: a tree rewritten in a
 * loop must not grow the daemon without bound. Re-scanning is only slower. */
#define SCAN_CACHE_MAX 200000

typedef struct {
	uint64_t dropped; /* vr_scan_filter_key(): allow-lists depend on the path */
	dev_t dev;
	ino_t ino;
	off_t size;
	int64_t mtime_s, mtime_ns, ctime_s, ctime_ns;
} VersionKey;

static guint key_hash(gconstpointer p)
{
	const VersionKey *k = p;
	return (guint)(k->ino ^ (k->ino >> 32) ^ k->dropped ^ ((guint64)k->size * 31u) ^ (guint64)k->mtime_ns ^
	               (guint64)k->ctime_ns ^ (k->dev * 0x9e3779b1u));
}

static gboolean key_equal(gconstpointer a, gconstpointer b)
{
	return memcmp(a, b, sizeof(VersionKey)) == 0;
}

static void key_of(const struct stat *st, uint64_t dropped, VersionKey *k)
{
	memset(k, 0, sizeof *k); /* padding too: keys are compared with memcmp */
	k->dropped = dropped;
	k->dev = st->st_dev;
	k->ino = st->st_ino;
	k->size = st->st_size;
	k->mtime_s = st->st_mtim.tv_sec;
	k->mtime_ns = st->st_mtim.tv_nsec;
	k->ctime_s = st->st_ctim.tv_sec;
	k->ctime_ns = st->st_ctim.tv_nsec;
}

int vr_view_scan_mode_parse(const char *name)
{
	G_STATIC_ASSERT(VR_VIEW_SCAN_OFF == 0 && VR_VIEW_SCAN_MASK == 1 && VR_VIEW_SCAN_REFUSE == 2);
	return vr_config_scan_mode_parse(name); /* the config's list */
}

void vr_content_scan_init(VrView *v)
{
	pthread_mutex_init(&v->scan_lock, NULL);
	v->scan_cache = g_hash_table_new_full(key_hash, key_equal, g_free, NULL);
	v->scan_skipped = g_hash_table_new_full(g_bytes_hash, g_bytes_equal,
	                                        (GDestroyNotify)g_bytes_unref, NULL);
}

void vr_content_scan_free(VrView *v)
{
	g_clear_pointer(&v->scan_cache, g_hash_table_unref);
	g_clear_pointer(&v->scan_skipped, g_hash_table_unref);
}

bool vr_content_scan_applies(const VrInode *inode, VrDecision d)
{
	/* Hidden files are never served and redacted ones are masked already;
	 * read-only ones (.git/config) are scanned: they are readable. */
	return vr_view->opts->scan_mode != VR_VIEW_SCAN_OFF && S_ISREG(inode->type) &&
	       (d.cls == VR_CLASS_VISIBLE || d.cls == VR_CLASS_READONLY);
}

static VrScanVerdict cache_get(const VersionKey *k)
{
	pthread_mutex_lock(&vr_view->scan_lock);
	VrScanVerdict v = GPOINTER_TO_INT(g_hash_table_lookup(vr_view->scan_cache, k));
	pthread_mutex_unlock(&vr_view->scan_lock);
	return v;
}

/* False when another thread stored this version first (it logged it). */
static bool cache_put(const VersionKey *k, VrScanVerdict verdict)
{
	pthread_mutex_lock(&vr_view->scan_lock);
	if (g_hash_table_size(vr_view->scan_cache) >= SCAN_CACHE_MAX)
		g_hash_table_remove_all(vr_view->scan_cache);
	bool added = !g_hash_table_contains(vr_view->scan_cache, k);
	if (added)
		g_hash_table_insert(vr_view->scan_cache, g_memdup2(k, sizeof *k), GINT_TO_POINTER(verdict));
	pthread_mutex_unlock(&vr_view->scan_lock);
	return added;
}

/* The "skipped" note goes out once per file in a run, not once per
 * version: a file written while it is read (fio, a log, a database) is a
 * new version at every handle, and each would log again. */
static bool first_skip(const struct stat *st)
{
	struct { dev_t dev; ino_t ino; } id = {st->st_dev, st->st_ino};
	GBytes *key = g_bytes_new(&id, sizeof id);
	pthread_mutex_lock(&vr_view->scan_lock);
	bool first = g_hash_table_add(vr_view->scan_skipped, key);
	pthread_mutex_unlock(&vr_view->scan_lock);
	return first;
}

static void log_hits(fuse_req_t req, const char *relpath, const GArray *hits)
{
	const char *result = vr_view->opts->scan_mode == VR_VIEW_SCAN_REFUSE ? "EACCES" : "redacted";
	for (guint i = 0; i < hits->len; i++) {
		const VrScanHit *h = &g_array_index(hits, VrScanHit, i);
		/* Where and which rule: never the bytes themselves. */
		g_autofree char *extra = g_strdup_printf(
			"\"rule\":\"%s\",\"rule_kind\":\"scan\",\"offset\":%zu,\"length\":%zu",
			h->rule->id, h->start, h->len);
		VrAuditEvent ev = {
			.op = "scan", .path = relpath, .result = result,
			.pid = req ? fuse_req_ctx(req)->pid : 0,
			.bytes_read = -1, .bytes_written = -1, .extra = extra,
		};
		vr_audit_emit(VR_AUDIT_DENIED, &ev);
	}
}

VrScanVerdict vr_content_scan_check(fuse_req_t req, VrInode *inode, const char *relpath)
{
	struct stat st;
	VersionKey k;
	if (fstatat(inode->fd, "", &st, AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW) < 0 || !S_ISREG(st.st_mode))
		return VR_SCAN_UNKNOWN;
	/* Nothing to read (the first write to a file just created): no open,
	 * and no cache entry per empty file. */
	if (st.st_size == 0)
		return VR_SCAN_CLEAN;
	/* The same bytes under two names (hard links) may be allow-listed
	 * under one of them only: the verdict is per version *and* filter. */
	uint64_t dropped = vr_scan_filter_key(vr_view->opts->scan_filter, relpath);
	key_of(&st, dropped, &k);
	VrScanVerdict v = cache_get(&k);
	if (v != VR_SCAN_UNKNOWN)
		return v;

	uint64_t max = vr_view->opts->scan_max_size;
	if ((uint64_t)st.st_size > max) {
		cache_put(&k, VR_SCAN_SKIPPED);
		if (first_skip(&st)) {
			g_autofree char *extra = g_strdup_printf("\"size\":%lld,\"scan_max_size\":%llu",
			                                         (long long)st.st_size, (unsigned long long)max);
			VrAuditEvent ev = {
				.op = "scan", .path = relpath, .result = "skipped",
				.pid = req ? fuse_req_ctx(req)->pid : 0,
				.bytes_read = -1, .bytes_written = -1, .extra = extra,
			};
			vr_audit_emit(VR_AUDIT_DENIED, &ev);
		}
		return VR_SCAN_SKIPPED;
	}

	/* A read-only fd of our own: the open being decided may be
	 * write-only, and it must not have happened yet (O_TRUNC). */
	char proc[64];
	vr_proc_path(proc, inode->fd);
	int fd = open(proc, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	if (fd < 0)
		return VR_SCAN_UNKNOWN; /* unreadable: a read open fails anyway */
	char *buf = NULL;
	size_t len = 0;
	int r = vr_file_load(fd, (size_t)max, &buf, &len);
	struct stat after;
	bool stable = r == 0 && fstat(fd, &after) == 0;
	close(fd);
	if (r == -EFBIG) {
		/* Grew past the limit while being read: the next open sees the
		 * new size and is skipped with its note. */
		return VR_SCAN_SKIPPED;
	}
	if (r < 0)
		return VR_SCAN_UNKNOWN;

	g_autoptr(GArray) hits = g_array_new(FALSE, FALSE, sizeof(VrScanHit));
	vr_scan_buffer(buf, len, hits);
	vr_scan_filter_apply(vr_view->opts->scan_filter, relpath, hits);
	g_free(buf);
	v = hits->len ? VR_SCAN_HIT : VR_SCAN_CLEAN;

	/* Changed while read: the verdict is this open's only; the next open
	 * sees the new version and scans it. */
	VersionKey k2;
	if (stable) {
		key_of(&after, dropped, &k2);
		stable = key_equal(&k, &k2);
	}
	if (!stable || cache_put(&k, v))
		if (hits->len)
			log_hits(req, relpath, hits);
	return v;
}

int vr_content_scan_load_masked(int fd, const char *relpath, char **ret_buf, size_t *ret_len)
{
	/* Masking must not depend on the scan limit: a file found to hold a
	 * secret is served masked or not at all, like a redacted one. */
	int r = vr_file_load(fd, MAX((size_t)vr_view->opts->scan_max_size, (size_t)VR_REDACT_MAX),
	                     ret_buf, ret_len);
	if (r < 0)
		return r;
	g_autoptr(GArray) hits = g_array_new(FALSE, FALSE, sizeof(VrScanHit));
	vr_scan_buffer(*ret_buf, *ret_len, hits);
	vr_scan_filter_apply(vr_view->opts->scan_filter, relpath, hits);
	vr_scan_mask(*ret_buf, *ret_len, hits);
	return 0;
}

void vr_content_scan_refuse(fuse_req_t req, const char *op, const char *relpath)
{
	VrAuditEvent ev = {
		.op = op, .path = relpath, .result = "EACCES",
		.pid = req ? fuse_req_ctx(req)->pid : 0,
		.bytes_read = -1, .bytes_written = -1,
		.extra = "\"rule_kind\":\"scan\",\"reason\":\"holds a secret found by content\"",
	};
	vr_audit_emit(VR_AUDIT_DENIED, &ev);
	fuse_reply_err(req, EACCES);
}

bool vr_content_scan_guard(fuse_req_t req, const char *op, VrInode *inode, VrDecision d,
                           const char *relpath)
{
	if (!vr_content_scan_applies(inode, d) ||
	    vr_content_scan_check(req, inode, relpath) != VR_SCAN_HIT)
		return true;
	vr_content_scan_refuse(req, op, relpath);
	return false;
}

bool vr_content_scan_guard_name(fuse_req_t req, const char *op, int dirfd, const char *name,
                                VrDecision d, const char *relpath)
{
	struct stat st;
	if (vr_view->opts->scan_mode == VR_VIEW_SCAN_OFF ||
	    fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0 || !S_ISREG(st.st_mode))
		return true;
	VrInode tmp = {.fd = openat(dirfd, name, O_PATH | O_NOFOLLOW | O_CLOEXEC), .type = S_IFREG};
	if (tmp.fd < 0)
		return true; /* gone: the operation itself will say so */
	bool ok = vr_content_scan_guard(req, op, &tmp, d, relpath);
	close(tmp.fd);
	return ok;
}
