/* The per-run change journal: keeps what a run modifies, removes or moves so
 * `vault-run undo` can give it back. One lock serialises the journal: the
 * copies it makes are the expensive part and happen once per file per run.
 *
 * An object never changes once recorded, or undo would restore whatever
 * the agent made of it. A copy is the journal's own file. A removed file is
 * kept as a second hard link (nothing copied), which shares its inode with
 * whatever the agent still holds: so such links are copy-on-write. Only an
 * inode nobody can write is linked: one already opened for writing or
 * truncated in the run has its original kept already, and its removal
 * refers to that object. Any later way to write it (a write open through
 * another hard link, a reopen of /proc/self/fd/N, a truncate) passes
 * keep_original first, which replaces the link with a copy. Each object's
 * ctime and size are recorded once it is final (a copy at once, a link at
 * the clean stop) and undo refuses an object that no longer matches. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/cleanup.h"
#include "audit/journal.h"
#include "audit/json.h"
#include "common/copy.h"
#include "common/resolve.h"
#include "common/fd-util.h"
#include "fusefs/journal.h"
#include "common/log.h"


static struct {
	pthread_mutex_t lock;
	bool on;
	int dir_fd, objects_fd, manifest_fd, root_fd;
	uint64_t max_size, used;
	uint64_t next_object, seq;
	bool cap_noted;
	bool append_failed; /* said once: a full disk fails every record after */
	GHashTable *modified; /* (dev, ino) → Kept: whose original is kept (or skipped) */
	/* ino → object number + 1: removed files kept as a hard link. All on
	 * objects_dev (a link cannot cross file systems), so the inode number
	 * alone is the key: ~40 bytes per removed file. */
	GHashTable *linked;
	dev_t objects_dev;
	GHashTable *paths;    /* every relpath recorded, for the final records */
	GString *batch;       /* at the stop: records gathered into few writes */
	pthread_t syncer;     /* at the stop: fsyncs and closes the manifest */
	bool syncing;
} J = {.lock = PTHREAD_MUTEX_INITIALIZER, .dir_fd = -1, .objects_fd = -1, .manifest_fd = -1,
       .root_fd = -1};

/* The original of a modified inode: its object (empty: skipped, for
 * REASON) and the file's stat when it was taken. */
typedef struct {
	char obj[32];
	const char *reason;
	struct stat st;
} Kept;

static GBytes *inode_key(const struct stat *st)
{
	struct { dev_t dev; ino_t ino; } key = {st->st_dev, st->st_ino};
	return g_bytes_new(&key, sizeof key);
}

static int64_t ctime_ns(const struct stat *st)
{
	return (int64_t)st->st_ctim.tv_sec * 1000000000 + st->st_ctim.tv_nsec;
}

static GString *record_new(const char *op, const char *rel)
{
	GString *s = vr_journal_record_new(++J.seq, op);
	if (rel) {
		vr_journal_record_str(s, "path", rel);
		g_hash_table_add(J.paths, g_strdup(rel));
	}
	return s;
}

static void manifest_append(const char *buf, size_t len)
{
	if (vr_write_all(J.manifest_fd, buf, len) < 0 && !J.append_failed) {
		J.append_failed = true;
		vr_log(0, "journal: cannot append to the manifest: %s; vault-run undo will not know of this "
		       "run's later changes", g_strerror(errno));
	}
}

/* One write(2) per record on an O_APPEND fd: a kill -9 leaves whole lines,
 * and every record reaches the file before the change it describes. At the
 * stop (J.batch), where no change follows, records go out 64 KiB at a time:
 * a kill -9 there tears at most the last line, which undo skips. */
static void record_write(GString *s)
{
	vr_journal_record_end(s);
	if (J.batch) {
		g_string_append_len(J.batch, s->str, (gssize)s->len);
		if (J.batch->len >= 65536) {
			manifest_append(J.batch->str, J.batch->len);
			g_string_truncate(J.batch, 0);
		}
	} else {
		manifest_append(s->str, s->len);
	}
	g_string_free(s, TRUE);
}

/* The audit log's way to the kept original: a reviewer goes from "the agent
 * wrote X" to objects/<n> of the run's journal. */
static void audit_link(const char *rel, const char *op, const char *obj)
{
	GString *a = g_string_new("{\"op\":\"journal\"");
	vr_audit_json_member(a, "path", rel);
	vr_audit_json_member(a, "result", "ok");
	vr_audit_json_member(a, "change", op);
	g_string_append_printf(a, ",\"journal\":\"objects/%s\"}", obj);
	vr_audit_emit_raw(a->str, a->len);
	g_string_free(a, TRUE);
}

static void note_skipped(const char *rel, const struct stat *st, const char *why)
{
	GString *s = record_new("skipped", rel);
	vr_journal_record_stat(s, st);
	vr_journal_record_str(s, "reason", why);
	record_write(s);
	GString *a = g_string_new("{\"op\":\"journal\"");
	vr_audit_json_member(a, "path", rel);
	vr_audit_json_member(a, "result", "skipped");
	vr_audit_json_member(a, "reason", why);
	g_string_append(a, "}");
	vr_audit_emit_raw(a->str, a->len);
	g_string_free(a, TRUE);
	if (!J.cap_noted && strcmp(why, "cap") == 0) {
		J.cap_noted = true;
		vr_log(0, "journal: the size cap (%" PRIu64 " bytes) is reached: larger files are no "
		       "longer kept for undo (first: %s)", J.max_size, rel);
	}
}

static void record_seal(const char *obj);

/* Saves the content of IN (st) as a new object, sealed at once (a copy is
 * final); its name in *ret. */
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
	/* Closed before the seal: on some file systems (NFS, FUSE) the close
	 * writes back, and the ctime the seal records must be the last. */
	close(out);
	if (r < 0) {
		unlinkat(J.objects_fd, ret, 0);
		note_skipped(rel, st, "cannot copy");
		return r;
	}
	J.used += (uint64_t)st->st_size;
	record_seal(ret);
	return 0;
}

/* The object's ctime and size as they must stay ("sealed"): undo compares. */
static void record_seal(const char *obj)
{
	struct stat st;
	if (fstatat(J.objects_fd, obj, &st, AT_SYMLINK_NOFOLLOW) < 0)
		return;
	GString *s = record_new("sealed", NULL);
	vr_journal_record_str(s, "object", obj);
	g_string_append_printf(s, ",\"size\":%" PRId64 ",\"ctime_ns\":%" PRId64, (int64_t)st.st_size,
	                       ctime_ns(&st));
	record_write(s);
}

/* Under J.lock: the object a removed file (st) is kept as by a hard link,
 * or -1. */
static int64_t linked_object(const struct stat *st)
{
	if (st->st_dev != J.objects_dev)
		return -1;
	gpointer v = g_hash_table_lookup(J.linked, GSIZE_TO_POINTER(st->st_ino));
	return v ? (int64_t)GPOINTER_TO_SIZE(v) - 1 : -1;
}

/* Under J.lock. The inode st (reached as rel) is about to be written: if
 * the journal holds it as a link, replace the link with a copy of its
 * content (still the kept one: nothing could write it before this),
 * renamed over it. When no copy can be made the object goes, with a
 * "skipped" record naming it: a link left in place would take the agent's
 * writes. */
static void unshare_linked(const struct stat *cur, const char *rel)
{
	int64_t n = linked_object(cur);
	if (n < 0)
		return;
	char obj[32], tmp[40];
	snprintf(obj, sizeof obj, "%" PRId64, n);
	snprintf(tmp, sizeof tmp, "%s-cow", obj);
	const char *why = NULL;
	int in = openat(J.objects_fd, obj, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	int out = -1;
	struct stat st;
	if (in < 0 || fstat(in, &st) < 0)
		why = "cannot open";
	else if ((uint64_t)st.st_size > J.max_size - MIN(J.used, J.max_size))
		why = "cap";
	else if ((out = openat(J.objects_fd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600)) < 0)
		why = "cannot create the object";
	else if (vr_copy_data(in, out, st.st_size) < 0 || renameat(J.objects_fd, tmp, J.objects_fd, obj) < 0)
		why = "cannot copy";
	if (in >= 0)
		close(in);
	if (out >= 0)
		close(out);
	if (why) {
		unlinkat(J.objects_fd, tmp, 0);
		unlinkat(J.objects_fd, obj, 0);
		GString *s = record_new("skipped", rel);
		vr_journal_record_str(s, "object", obj);
		vr_journal_record_stat(s, cur);
		vr_journal_record_str(s, "reason", why);
		record_write(s);
		vr_log(0, "journal: %s: its kept original is dropped (%s): undo cannot restore it", rel, why);
	} else {
		J.used += (uint64_t)st.st_size;
		record_seal(obj);
	}
	g_hash_table_remove(J.linked, GSIZE_TO_POINTER(cur->st_ino));
}

int vr_journal_start(int dir_fd, uint64_t max_size, int root_fd, const char *project,
                     const char *run_id)
{
	vr_journal_wait(); /* a previous run's last fsync */
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
	J.cap_noted = J.append_failed = false;
	J.modified = g_hash_table_new_full(g_bytes_hash, g_bytes_equal,
	                                   (GDestroyNotify)g_bytes_unref, g_free);
	J.linked = g_hash_table_new(g_direct_hash, g_direct_equal);
	struct stat ost;
	J.objects_dev = fstat(J.objects_fd, &ost) == 0 ? ost.st_dev : 0;
	J.paths = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
	GString *s = record_new("start", NULL);
	g_autofree char *real = realpath(project, NULL);
	vr_journal_record_str(s, "project", real ? real : project);
	if (run_id)
		vr_journal_record_str(s, "run", run_id);
	g_string_append_printf(s, ",\"max_size\":%" PRIu64, J.max_size);
	record_write(s);
	J.on = true;
	return 0;
}

static void *sync_close_main(void *arg)
{
	int fd = (int)(intptr_t)arg;
	fsync(fd);
	close(fd);
	return NULL;
}

void vr_journal_wait(void)
{
	if (J.syncing)
		pthread_join(J.syncer, NULL);
	J.syncing = false;
}

void vr_journal_stop(void)
{
	if (!J.on)
		return;
	pthread_mutex_lock(&J.lock);
	J.batch = g_string_sized_new(65536 + 4096);
	/* The agent is gone: the links still held are final now. */
	GHashTableIter it;
	gpointer v;
	g_hash_table_iter_init(&it, J.linked);
	while (g_hash_table_iter_next(&it, NULL, &v)) {
		char obj[32];
		snprintf(obj, sizeof obj, "%zu", GPOINTER_TO_SIZE(v) - 1);
		record_seal(obj);
	}
	GList *keys = g_list_sort(g_hash_table_get_keys(J.paths), (GCompareFunc)strcmp);
	for (GList *l = keys; l; l = l->next) {
		const char *rel = l->data, *name;
		vr_cleanup_fd int pfd = -1;
		struct stat st;
		GString *s = vr_journal_record_new(++J.seq, "final");
		vr_journal_record_str(s, "path", rel);
		if (vr_resolve_parent(J.root_fd, rel, &pfd, &name) == 0) {
			if (fstatat(pfd, name, &st, AT_SYMLINK_NOFOLLOW) == 0)
				vr_journal_record_stat(s, &st);
			else
				vr_journal_record_str(s, "type", "none");
		} else {
			vr_journal_record_str(s, "type", "none");
		}
		record_write(s);
	}
	g_list_free(keys);
	GString *s = record_new("stop", NULL);
	g_string_append_printf(s, ",\"copied\":%" PRIu64, J.used);
	record_write(s);
	manifest_append(J.batch->str, J.batch->len);
	g_string_free(J.batch, TRUE);
	J.batch = NULL;
	J.on = false;
	/* The manifest's fsync runs beside the audit log's seal and fsync
	 * (vr_journal_wait, before the daemon says "stopped"): two commits of
	 * the same file system in one, ~1 ms of every run's end. Inline when
	 * no thread can be made. */
	sigset_t all, old;
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old); /* signals stay with the main thread */
	J.syncing = pthread_create(&J.syncer, NULL, sync_close_main, (void *)(intptr_t)J.manifest_fd) == 0;
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (!J.syncing) {
		fsync(J.manifest_fd);
		close(J.manifest_fd);
	}
	close(J.objects_fd);
	close(J.dir_fd);
	close(J.root_fd);
	J.manifest_fd = J.objects_fd = J.dir_fd = J.root_fd = -1;
	g_clear_pointer(&J.modified, g_hash_table_unref);
	g_clear_pointer(&J.linked, g_hash_table_unref);
	g_clear_pointer(&J.paths, g_hash_table_unref);
	pthread_mutex_unlock(&J.lock);
}

/* Under J.lock. First modification of (dev, ino) in the run: keep it (and
 * first, if the journal holds that inode as a removed file's link, make
 * that object a copy of its own). */
static void keep_original(int fd_path, const struct stat *st, const char *rel)
{
	unshare_linked(st, rel);
	GBytes *k = inode_key(st);
	if (g_hash_table_contains(J.modified, k)) {
		g_bytes_unref(k);
		return;
	}
	Kept *kept = g_new0(Kept, 1);
	kept->st = *st;
	g_hash_table_insert(J.modified, k, kept);
	char proc[64];
	snprintf(proc, sizeof proc, "/proc/self/fd/%d", fd_path);
	/* Not O_NOFOLLOW: the /proc magic link is the way to the O_PATH fd. */
	vr_cleanup_fd int in = open(proc, O_RDONLY | O_CLOEXEC);
	if (in < 0) {
		kept->reason = "cannot open";
		note_skipped(rel, st, kept->reason);
		return;
	}
	int r = save_copy(in, st, rel, kept->obj);
	if (r < 0) {
		kept->obj[0] = '\0';
		kept->reason = r == -EFBIG ? "cap" : "cannot copy";
		return;
	}
	GString *s = record_new("modified", rel);
	vr_journal_record_str(s, "object", kept->obj);
	vr_journal_record_stat(s, st);
	record_write(s);
	audit_link(rel, "modified", kept->obj);
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
		vr_journal_record_stat(s, &st);
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
		vr_cleanup_fd int fd = openat(parent->fd, name, O_PATH | O_NOFOLLOW | O_CLOEXEC);
		if (fd < 0)
			return;
		pthread_mutex_lock(&J.lock);
		if (J.on)
			keep_original(fd, &st, rel);
		pthread_mutex_unlock(&J.lock);
		return;
	}
	pthread_mutex_lock(&J.lock);
	if (J.on)
		record_write(record_new("created", rel));
	pthread_mutex_unlock(&J.lock);
}

/* Under J.lock: the "deleted" record of a regular file, whose content
 * is object OBJ (st: the file as kept). */
static void record_deleted_file(const char *rel, const char *obj, const struct stat *st)
{
	GString *s = record_new("deleted", rel);
	vr_journal_record_str(s, "object", obj);
	audit_link(rel, "deleted", obj);
	vr_journal_record_stat(s, st);
	record_write(s);
}

/* Under J.lock: a regular file is about to lose the name rel. */
static void keep_removed_file(int dirfd, const char *name, const char *rel, const struct stat *st)
{
	char obj[32];
	GBytes *key = inode_key(st);
	Kept *had = g_hash_table_lookup(J.modified, key);
	int64_t linked = had ? -1 : linked_object(st);
	if (had) {
		/* Its original was kept at its first change in the run (maybe
		 * made through another name): that is what undo must bring back
		 * here, not what the agent made of it since. */
		if (had->obj[0]) {
			record_deleted_file(rel, had->obj, &had->st);
		} else {
			GString *s = record_new("skipped", rel);
			vr_journal_record_stat(s, st);
			vr_journal_record_str(s, "reason", had->reason ? had->reason : "not kept");
			record_write(s);
		}
		/* Its last name: the inode number may come back for another
		 * file, which must not pass for this one. */
		if (st->st_nlink <= 1)
			g_hash_table_remove(J.modified, key);
		g_bytes_unref(key);
		return;
	}
	g_bytes_unref(key);
	if (linked >= 0) {
		/* Another name of it was removed before, and nothing wrote it
		 * since (that would have unshared the link): the same object. */
		snprintf(obj, sizeof obj, "%" PRId64, linked);
		record_deleted_file(rel, obj, st);
		return;
	}
	snprintf(obj, sizeof obj, "%" PRIu64, J.next_object);
	/* Same file system: a second name keeps the data, nothing copied.
	 * Nobody can write this inode now (see the top of the file); the
	 * ways to start are hooked by keep_original. */
	if (linkat(dirfd, name, J.objects_fd, obj, 0) == 0) {
		g_hash_table_insert(J.linked, GSIZE_TO_POINTER(st->st_ino), GSIZE_TO_POINTER(J.next_object + 1));
		J.next_object++;
		record_deleted_file(rel, obj, st);
		return;
	}
	vr_cleanup_fd int in = openat(dirfd, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	int r = in < 0 ? -errno : save_copy(in, st, rel, obj);
	if (in < 0)
		note_skipped(rel, st, "cannot open");
	if (r == 0)
		record_deleted_file(rel, obj, st);
}

/* Under J.lock: records (and keeps) what name in dirfd holds before it goes. */
static void keep_removed(int dirfd, const char *name, const char *rel)
{
	struct stat st;
	if (fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
		return; /* the op will fail with the same error */
	if (S_ISREG(st.st_mode)) {
		keep_removed_file(dirfd, name, rel, &st);
		return;
	}
	GString *s;
	if (S_ISLNK(st.st_mode)) {
		char target[PATH_MAX + 1];
		ssize_t n = readlinkat(dirfd, name, target, sizeof target - 1);
		if (n < 0)
			return;
		target[n] = '\0';
		s = record_new("deleted", rel);
		vr_journal_record_str(s, "target", target);
	} else {
		s = record_new("deleted", rel);
	}
	vr_journal_record_stat(s, &st);
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
		vr_journal_record_str(s, "new", drel);
		g_hash_table_add(J.paths, g_strdup(drel));
		record_write(s);
	}
	pthread_mutex_unlock(&J.lock);
}
