/* The per-run change journal: keeps what a run modifies, removes or moves so
 * `vault-run undo` can give it back. One lock serialises the journal: the
 * copies it makes are the expensive part and happen once per file per run. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "audit-out.h"
#include "common/copy.h"
#include "common/resolve.h"
#include "fd-util.h"
#include "journal.h"
#include "log.h"


static struct {
	pthread_mutex_t lock;
	bool on;
	int dir_fd, objects_fd, manifest_fd, root_fd;
	uint64_t max_size, used;
	uint64_t next_object, seq;
	bool cap_noted;
	GHashTable *modified; /* (dev, ino) whose original is kept (or skipped) */
	GHashTable *paths;    /* every relpath recorded, for the final records */
} J = {.lock = PTHREAD_MUTEX_INITIALIZER, .dir_fd = -1, .objects_fd = -1, .manifest_fd = -1,
       .root_fd = -1};

static const char *type_name(mode_t m)
{
	return S_ISREG(m) ? "file" : S_ISDIR(m) ? "dir" : S_ISLNK(m) ? "symlink"
	     : S_ISFIFO(m) ? "fifo" : "other";
}

static void append_str(GString *s, const char *key, const char *v)
{
	g_string_append_printf(s, ",\"%s\":", key);
	vr_audit_json_str(s, v); /* undo reads names back byte for byte */
}

static GString *record_new(const char *op, const char *rel)
{
	GString *s = g_string_new(NULL);
	g_string_append_printf(s, "{\"seq\":%" PRIu64 ",\"op\":\"%s\"", ++J.seq, op);
	if (rel) {
		append_str(s, "path", rel);
		g_hash_table_add(J.paths, g_strdup(rel));
	}
	return s;
}

static void append_stat(GString *s, const struct stat *st)
{
	g_string_append_printf(s, ",\"type\":\"%s\",\"mode\":%u,\"size\":%" PRId64
	                       ",\"mtime_ns\":%" PRId64, type_name(st->st_mode),
	                       (unsigned)(st->st_mode & 07777), (int64_t)st->st_size,
	                       (int64_t)st->st_mtim.tv_sec * 1000000000 + st->st_mtim.tv_nsec);
}

/* One write(2) per record on an O_APPEND fd: a kill -9 leaves whole lines,
 * and every record reaches the file before the change it describes. */
static void record_write(GString *s)
{
	g_string_append(s, "}\n");
	if (vr_write_all(J.manifest_fd, s->str, s->len) < 0)
		vr_log(0, "journal: cannot append to the manifest: %s", g_strerror(errno));
	g_string_free(s, TRUE);
}

/* The audit log's way to the kept original: a reviewer goes from "the agent
 * wrote X" to objects/<n> of the run's journal. */
static void audit_link(const char *rel, const char *op, const char *obj)
{
	GString *a = g_string_new("{\"op\":\"journal\"");
	append_str(a, "path", rel);
	append_str(a, "result", "ok");
	append_str(a, "change", op);
	g_string_append_printf(a, ",\"journal\":\"objects/%s\"}", obj);
	vr_audit_emit_raw(a->str, a->len);
	g_string_free(a, TRUE);
}

static void note_skipped(const char *rel, const struct stat *st, const char *why)
{
	GString *s = record_new("skipped", rel);
	append_stat(s, st);
	append_str(s, "reason", why);
	record_write(s);
	GString *a = g_string_new("{\"op\":\"journal\"");
	append_str(a, "path", rel);
	append_str(a, "result", "skipped");
	append_str(a, "reason", why);
	g_string_append(a, "}");
	vr_audit_emit_raw(a->str, a->len);
	g_string_free(a, TRUE);
	if (!J.cap_noted && strcmp(why, "cap") == 0) {
		J.cap_noted = true;
		vr_log(0, "journal: the size cap (%" PRIu64 " bytes) is reached: larger files are no "
		       "longer kept for undo (first: %s)", J.max_size, rel);
	}
}

/* Saves the content of IN (st) as a new object; its name in *ret. */
static int save_copy(int in, const struct stat *st, const char *rel, char ret[32])
{
	if ((uint64_t)st->st_size > J.max_size - MIN(J.used, J.max_size)) {
		note_skipped(rel, st, "cap");
		return -EFBIG;
	}
	snprintf(ret, 32, "%" PRIu64, J.next_object++);
	int out = openat(J.objects_fd, ret, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (out < 0) {
		int err = errno;
		note_skipped(rel, st, "cannot create the object");
		return -err;
	}
	int r = vr_copy_data(in, out, st->st_size);
	close(out);
	if (r < 0) {
		unlinkat(J.objects_fd, ret, 0);
		note_skipped(rel, st, "cannot copy");
		return r;
	}
	J.used += (uint64_t)st->st_size;
	return 0;
}

int vr_journal_start(int dir_fd, uint64_t max_size, int root_fd, const char *project,
                     const char *run_id)
{
	if (dir_fd < 0)
		return 0;
	J.dir_fd = fcntl(dir_fd, F_DUPFD_CLOEXEC, 3);
	J.root_fd = fcntl(root_fd, F_DUPFD_CLOEXEC, 3);
	if (J.dir_fd < 0 || J.root_fd < 0)
		return vr_log_errno(errno, "journal: cannot duplicate its descriptors");
	if (mkdirat(J.dir_fd, "objects", 0700) < 0 && errno != EEXIST)
		return vr_log_errno(errno, "journal: cannot create objects/");
	J.objects_fd = openat(J.dir_fd, "objects", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (J.objects_fd < 0)
		return vr_log_errno(errno, "journal: cannot open objects/");
	/* O_EXCL: one journal per run; a reused directory would mix runs. */
	J.manifest_fd = openat(J.dir_fd, "manifest.jsonl",
	                       O_WRONLY | O_CREAT | O_EXCL | O_APPEND | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (J.manifest_fd < 0)
		return vr_log_errno(errno, "journal: cannot create manifest.jsonl (a journal directory "
		                    "serves one run)");
	J.max_size = max_size ? max_size : VR_JOURNAL_DEFAULT_MAX;
	J.used = J.next_object = J.seq = 0;
	J.cap_noted = false;
	J.modified = g_hash_table_new_full(g_bytes_hash, g_bytes_equal,
	                                   (GDestroyNotify)g_bytes_unref, NULL);
	J.paths = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
	GString *s = record_new("start", NULL);
	g_autofree char *real = realpath(project, NULL);
	append_str(s, "project", real ? real : project);
	if (run_id)
		append_str(s, "run", run_id);
	g_string_append_printf(s, ",\"max_size\":%" PRIu64, J.max_size);
	record_write(s);
	J.on = true;
	return 0;
}

void vr_journal_stop(void)
{
	if (!J.on)
		return;
	pthread_mutex_lock(&J.lock);
	GList *keys = g_list_sort(g_hash_table_get_keys(J.paths), (GCompareFunc)strcmp);
	for (GList *l = keys; l; l = l->next) {
		const char *rel = l->data, *name;
		int pfd;
		struct stat st;
		GString *s = g_string_new(NULL);
		g_string_append_printf(s, "{\"seq\":%" PRIu64 ",\"op\":\"final\"", ++J.seq);
		append_str(s, "path", rel);
		if (vr_resolve_parent(J.root_fd, rel, &pfd, &name) == 0) {
			if (fstatat(pfd, name, &st, AT_SYMLINK_NOFOLLOW) == 0)
				append_stat(s, &st);
			else
				append_str(s, "type", "none");
			close(pfd);
		} else {
			append_str(s, "type", "none");
		}
		record_write(s);
	}
	g_list_free(keys);
	GString *s = record_new("stop", NULL);
	g_string_append_printf(s, ",\"copied\":%" PRIu64, J.used);
	record_write(s);
	J.on = false;
	fsync(J.manifest_fd);
	close(J.manifest_fd);
	close(J.objects_fd);
	close(J.dir_fd);
	close(J.root_fd);
	J.manifest_fd = J.objects_fd = J.dir_fd = J.root_fd = -1;
	g_clear_pointer(&J.modified, g_hash_table_unref);
	g_clear_pointer(&J.paths, g_hash_table_unref);
	pthread_mutex_unlock(&J.lock);
}

/* Under J.lock. First modification of (dev, ino) in the run: keep it. */
static void keep_original(int fd_path, const struct stat *st, const char *rel)
{
	struct { dev_t dev; ino_t ino; } key = {st->st_dev, st->st_ino};
	GBytes *k = g_bytes_new(&key, sizeof key);
	if (!g_hash_table_add(J.modified, k))
		return;
	char proc[64], obj[32];
	snprintf(proc, sizeof proc, "/proc/self/fd/%d", fd_path);
	/* Not O_NOFOLLOW: the /proc magic link is the way to the O_PATH fd. */
	int in = open(proc, O_RDONLY | O_CLOEXEC);
	if (in < 0) {
		note_skipped(rel, st, "cannot open");
		return;
	}
	int r = save_copy(in, st, rel, obj);
	close(in);
	if (r < 0)
		return;
	GString *s = record_new("modified", rel);
	append_str(s, "object", obj);
	append_stat(s, st);
	record_write(s);
	audit_link(rel, "modified", obj);
}

void vr_journal_before_modify(VrInode *inode)
{
	if (!J.on || !S_ISREG(inode->type))
		return;
	struct stat st;
	if (fstat(inode->fd, &st) < 0)
		return;
	g_autofree char *rel = vr_inode_relpath(inode);
	pthread_mutex_lock(&J.lock);
	if (J.on)
		keep_original(inode->fd, &st, rel);
	pthread_mutex_unlock(&J.lock);
}

void vr_journal_before_setattr(VrInode *inode, int valid)
{
	if (!J.on || !(valid & (FUSE_SET_ATTR_SIZE | FUSE_SET_ATTR_MODE)))
		return;
	struct stat st;
	if (fstat(inode->fd, &st) < 0)
		return;
	g_autofree char *rel = vr_inode_relpath(inode);
	pthread_mutex_lock(&J.lock);
	if (J.on && (valid & FUSE_SET_ATTR_MODE)) {
		GString *s = record_new("chmod", rel);
		append_stat(s, &st);
		record_write(s);
	}
	if (J.on && (valid & FUSE_SET_ATTR_SIZE) && S_ISREG(st.st_mode))
		keep_original(inode->fd, &st, rel);
	pthread_mutex_unlock(&J.lock);
}

void vr_journal_before_create(VrInode *parent, const char *name, const char *rel)
{
	if (!J.on)
		return;
	struct stat st;
	if (fstatat(parent->fd, name, &st, AT_SYMLINK_NOFOLLOW) == 0) {
		/* Not a creation: an existing file opened by create (no O_EXCL)
		 * may be truncated; anything else makes the op fail. */
		if (!S_ISREG(st.st_mode))
			return;
		int fd = openat(parent->fd, name, O_PATH | O_NOFOLLOW | O_CLOEXEC);
		if (fd < 0)
			return;
		pthread_mutex_lock(&J.lock);
		if (J.on)
			keep_original(fd, &st, rel);
		pthread_mutex_unlock(&J.lock);
		close(fd);
		return;
	}
	pthread_mutex_lock(&J.lock);
	if (J.on)
		record_write(record_new("created", rel));
	pthread_mutex_unlock(&J.lock);
}

/* Under J.lock: records (and keeps) what name in dirfd holds before it goes. */
static void keep_removed(int dirfd, const char *name, const char *rel)
{
	struct stat st;
	if (fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
		return; /* the op will fail with the same error */
	GString *s;
	if (S_ISREG(st.st_mode)) {
		char obj[32];
		snprintf(obj, sizeof obj, "%" PRIu64, J.next_object);
		/* Same file system: a second name keeps the data, nothing copied. */
		if (linkat(dirfd, name, J.objects_fd, obj, 0) == 0) {
			J.next_object++;
		} else {
			int in = openat(dirfd, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
			if (in < 0) {
				note_skipped(rel, &st, "cannot open");
				return;
			}
			int r = save_copy(in, &st, rel, obj);
			close(in);
			if (r < 0)
				return;
		}
		s = record_new("deleted", rel);
		append_str(s, "object", obj);
		audit_link(rel, "deleted", obj);
	} else if (S_ISLNK(st.st_mode)) {
		char target[PATH_MAX + 1];
		ssize_t n = readlinkat(dirfd, name, target, sizeof target - 1);
		if (n < 0)
			return;
		target[n] = '\0';
		s = record_new("deleted", rel);
		append_str(s, "target", target);
	} else {
		s = record_new("deleted", rel);
	}
	append_stat(s, &st);
	record_write(s);
}

void vr_journal_before_remove(VrInode *parent, const char *name, const char *rel)
{
	if (!J.on)
		return;
	pthread_mutex_lock(&J.lock);
	if (J.on)
		keep_removed(parent->fd, name, rel);
	pthread_mutex_unlock(&J.lock);
}

void vr_journal_before_rename(VrInode *parent, const char *name, const char *srel,
                              VrInode *newparent, const char *newname, const char *drel,
                              unsigned flags)
{
	if (!J.on)
		return;
	pthread_mutex_lock(&J.lock);
	if (J.on) {
		struct stat dst;
		bool exchange = flags & RENAME_EXCHANGE;
		if (!exchange && fstatat(newparent->fd, newname, &dst, AT_SYMLINK_NOFOLLOW) == 0)
			keep_removed(newparent->fd, newname, drel);
		GString *s = record_new(exchange ? "exchanged" : "renamed", srel);
		append_str(s, "new", drel);
		g_hash_table_add(J.paths, g_strdup(drel));
		record_write(s);
	}
	pthread_mutex_unlock(&J.lock);
}
