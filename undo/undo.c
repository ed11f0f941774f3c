/* The change journal, read back: locating it, listing it (`changes`) and
 * replaying it backwards (`undo`). Every path is resolved from an fd of the
 * project root without following symlinks (common/resolve.h), and every
 * final step uses *at calls with O_NOFOLLOW/AT_SYMLINK_NOFOLLOW: a symlink
 * the agent left behind cannot redirect a restore outside the project. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "audit/summary.h"
#include "common/cleanup.h"
#include "common/copy.h"
#include "common/fd-util.h"
#include "common/exitcode.h"
#include "common/log.h"
#include "common/resolve.h"
#include "undo/undo.h"

static bool selected(const char *path, char **paths)
{
	if (!paths || !*paths)
		return true;
	if (!path)
		return false;
	for (char **p = paths; *p; p++) {
		g_autofree char *want = g_strdup(*p);
		while (g_str_has_prefix(want, "./"))
			memmove(want, want + 2, strlen(want + 2) + 1);
		size_t n = strlen(want);
		while (n > 1 && want[n - 1] == '/')
			want[--n] = '\0';
		if (strcmp(path, want) == 0 || (g_str_has_prefix(path, want) && path[n] == '/'))
			return true;
	}
	return false;
}

static bool record_selected(const VrJournalRecord *r, char **paths)
{
	return selected(r->path, paths) || selected(r->new_path, paths);
}

static int open_root(const char *project)
{
	int fd = open(project, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		vr_log_errno(errno, "cannot open the project %s", project);
	return fd;
}

/* --- changes --- */

static bool looks_text(int fd)
{
	char buf[8192];
	ssize_t n = pread(fd, buf, sizeof buf, 0);
	return n >= 0 && !memchr(buf, '\0', (size_t)n);
}

static void show_diff(VrJournal *j, int rootfd, const VrJournalRecord *r)
{
	if (!r->object || j->objects_fd < 0)
		return;
	vr_cleanup_fd int old = openat(j->objects_fd, r->object, O_RDONLY | O_NOFOLLOW); /* inherited by diff */
	if (old < 0)
		return;
	vr_cleanup_fd int cur = -1;
	int pfd;
	const char *name;
	if (strcmp(r->op, "modified") == 0 && vr_resolve_parent(rootfd, r->path, &pfd, &name) == 0) {
		vr_cleanup_fd int parent = pfd;
		cur = openat(parent, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK);
	}
	struct stat st;
	if (cur >= 0 && (fstat(cur, &st) < 0 || !S_ISREG(st.st_mode)))
		vr_clear_fd(&cur);
	if (!looks_text(old) || (cur >= 0 && !looks_text(cur))) {
		printf("Binary files a/%s and b/%s differ\n", r->shown_path, r->shown_path);
	} else {
		g_autofree char *a = g_strdup_printf("/dev/fd/%d", old);
		g_autofree char *b = cur >= 0 ? g_strdup_printf("/dev/fd/%d", cur) : g_strdup("/dev/null");
		g_autofree char *la = g_strdup_printf("a/%s", r->shown_path);
		g_autofree char *lb = cur >= 0 ? g_strdup_printf("b/%s", r->shown_path) : g_strdup("/dev/null");
		char *argv[] = {(char *)"diff", (char *)"-u", (char *)"--label", la, (char *)"--label", lb, a, b, NULL};
		fflush(stdout);
		g_spawn_sync(NULL, argv, NULL, G_SPAWN_SEARCH_PATH | G_SPAWN_LEAVE_DESCRIPTORS_OPEN,
		             NULL, NULL, NULL, NULL, NULL, NULL);
	}
}

int vr_changes_print(VrJournal *j, const char *project, char **paths, bool diff)
{
	vr_cleanup_fd int rootfd = open_root(project);
	if (rootfd < 0)
		return VR_EXIT_ERROR;
	for (guint i = 0; i < j->records->len; i++) {
		VrJournalRecord *r = g_ptr_array_index(j->records, i);
		if (!record_selected(r, paths))
			continue;
		const char *slash = r->type && strcmp(r->type, "dir") == 0 ? "/" : "";
		if (strcmp(r->op, "created") == 0)
			printf("A  %s\n", r->shown_path);
		else if (strcmp(r->op, "modified") == 0)
			printf("M  %s\n", r->shown_path);
		else if (strcmp(r->op, "deleted") == 0)
			printf("D  %s%s\n", r->shown_path, slash);
		else if (strcmp(r->op, "renamed") == 0)
			printf("R  %s -> %s\n", r->shown_path, r->shown_new);
		else if (strcmp(r->op, "exchanged") == 0)
			printf("X  %s <-> %s\n", r->shown_path, r->shown_new);
		else if (strcmp(r->op, "chmod") == 0)
			printf("m  %s (mode was %04" PRIo64 ")\n", r->shown_path, (uint64_t)r->mode);
		else if (strcmp(r->op, "skipped") == 0)
			printf("!  %s (not kept for undo: %s)\n", r->shown_path, r->reason ? r->reason : "?");
		if (diff && (strcmp(r->op, "modified") == 0 || strcmp(r->op, "deleted") == 0))
			show_diff(j, rootfd, r);
	}
	if (!j->complete)
		vr_error("the run's view did not stop cleanly: the journal may end early");
	return VR_EXIT_OK;
}

/* --- undo --- */

/* The post-run state check: the host must still hold what the run left. */
static bool changed_after_run(VrJournal *j, int rootfd, const char *path, char **why)
{
	VrJournalRecord *f = g_hash_table_lookup(j->final, path);
	if (!f)
		return false;
	int pfd;
	const char *name;
	struct stat st;
	bool exists = false;
	if (vr_resolve_parent(rootfd, path, &pfd, &name) == 0) {
		vr_cleanup_fd int parent = pfd;
		exists = fstatat(parent, name, &st, AT_SYMLINK_NOFOLLOW) == 0;
	}
	bool was = f->type && strcmp(f->type, "none") != 0;
	if (exists != was) {
		*why = g_strdup(exists ? "it was created after the run" : "it was removed after the run");
		return true;
	}
	if (!exists)
		return false;
	if (g_strcmp0(f->type, S_ISREG(st.st_mode) ? "file" : S_ISDIR(st.st_mode) ? "dir"
	              : S_ISLNK(st.st_mode) ? "symlink" : S_ISFIFO(st.st_mode) ? "fifo" : "other")) {
		*why = g_strdup("its type changed after the run");
		return true;
	}
	if (S_ISDIR(st.st_mode))
		return false; /* entries come and go with the restores themselves */
	int64_t mt = (int64_t)st.st_mtim.tv_sec * 1000000000 + st.st_mtim.tv_nsec;
	if (st.st_size != f->size || mt != f->mtime_ns) {
		*why = g_strdup("its size or modification time changed after the run");
		return true;
	}
	return false;
}

static void set_mtime_at(int pfd, const char *name, int64_t mtime_ns)
{
	if (mtime_ns < 0)
		return;
	struct timespec tv[2] = {{.tv_nsec = UTIME_OMIT},
	                         {.tv_sec = mtime_ns / 1000000000, .tv_nsec = mtime_ns % 1000000000}};
	utimensat(pfd, name, tv, AT_SYMLINK_NOFOLLOW);
}

static int restore_file(VrJournal *j, int pfd, const char *name, const VrJournalRecord *r)
{
	if (j->objects_fd < 0 || !r->object)
		return -ENOENT;
	vr_cleanup_fd int in = openat(j->objects_fd, r->object, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	if (in < 0)
		return -errno;
	mode_t mode = r->mode >= 0 ? (mode_t)r->mode & 07777 : 0644;
	/* O_NONBLOCK: a fifo left in its place must not hang us; it is then
	 * refused below as not a regular file. */
	vr_cleanup_fd int out = openat(pfd, name, O_WRONLY | O_CREAT | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC, mode | 0200);
	int err = out < 0 ? -errno : 0;
	struct stat st;
	if (!err && (fstat(out, &st) < 0 || !S_ISREG(st.st_mode)))
		err = -EEXIST;
	if (!err && ftruncate(out, 0) < 0)
		err = -errno;
	if (!err) {
		struct stat ist;
		err = fstat(in, &ist) < 0 ? -errno : vr_copy_data(in, out, ist.st_size);
	}
	if (!err && fchmod(out, mode) < 0)
		err = -errno;
	if (!err && r->mtime_ns >= 0) {
		struct timespec tv[2] = {{.tv_nsec = UTIME_OMIT},
		                         {.tv_sec = r->mtime_ns / 1000000000,
		                          .tv_nsec = r->mtime_ns % 1000000000}};
		futimens(out, tv);
	}
	return err;
}

/* --- the undo's own journal: undo is undoable --- */

/* What undo overwrites, in the manifest format of fusefs/journal.c, so
 * `vault-run undo <this dir>` reverses the undo. */
typedef struct {
	int dir_fd, objects_fd, manifest_fd;
	uint64_t next, seq;
	GHashTable *paths;
	char *dir;
	bool closing; /* writing the final records: paths is being iterated */
} UndoJournal;

/* One record, one write(2) on the O_APPEND manifest (a kill -9 leaves whole
 * lines). */
static void uj_append(UndoJournal *u, GString *s)
{
	vr_journal_record_end(s);
	if (vr_write_all(u->manifest_fd, s->str, s->len) < 0)
		vr_error("undo: cannot write its own journal: %s", g_strerror(errno));
	g_string_free(s, TRUE);
}

static void uj_write(UndoJournal *u, const char *op, const char *path, const struct stat *st,
                     const char *object, const char *target, const char *new_path)
{
	if (!u)
		return;
	GString *s = vr_journal_record_new(++u->seq, op);
	if (path) {
		vr_journal_record_str(s, "path", path);
		if (!u->closing)
			g_hash_table_add(u->paths, g_strdup(path));
	}
	if (new_path) {
		vr_journal_record_str(s, "new", new_path);
		if (!u->closing)
			g_hash_table_add(u->paths, g_strdup(new_path));
	}
	if (object)
		vr_journal_record_str(s, "object", object);
	if (target)
		vr_journal_record_str(s, "target", target);
	if (st)
		vr_journal_record_stat(s, st);
	uj_append(u, s);
}

/* Before name in pfd is overwritten (OVERWRITE) or removed: keep it. */
static void uj_keep(UndoJournal *u, int pfd, const char *name, const char *path, bool overwrite)
{
	struct stat st;
	if (!u)
		return;
	if (fstatat(pfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0) {
		if (overwrite)
			uj_write(u, "created", path, NULL, NULL, NULL, NULL);
		return;
	}
	if (S_ISREG(st.st_mode)) {
		char obj[32];
		snprintf(obj, sizeof obj, "%" PRIu64, u->next++);
		vr_cleanup_fd int in = openat(pfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
		vr_cleanup_fd int out = openat(u->objects_fd, obj, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
		if (in >= 0 && out >= 0 && vr_copy_data(in, out, st.st_size) == 0)
			uj_write(u, overwrite ? "modified" : "deleted", path, &st, obj, NULL, NULL);
		else
			vr_error("undo: %s: cannot keep it in the undo's journal", path);
	} else if (S_ISLNK(st.st_mode)) {
		char target[PATH_MAX + 1];
		ssize_t n = readlinkat(pfd, name, target, sizeof target - 1);
		target[n < 0 ? 0 : n] = '\0';
		uj_write(u, "deleted", path, &st, NULL, target, NULL);
	} else if (!overwrite) {
		uj_write(u, "deleted", path, &st, NULL, NULL, NULL);
	}
}

static UndoJournal *uj_open(VrJournal *j, const char *project)
{
	g_autofree char *base = g_str_has_suffix(j->dir, ".journal")
		? g_strndup(j->dir, strlen(j->dir) - 8) : g_strdup(j->dir);
	g_autoptr(GDateTime) now = g_date_time_new_now_utc();
	g_autofree char *stamp = g_date_time_format(now, "%Y%m%dT%H%M%SZ");
	UndoJournal *u = g_new0(UndoJournal, 1);
	u->dir = g_strdup_printf("%s-undo-%s-%06u.journal", base, stamp, g_random_int_range(0, 1000000));
	u->dir_fd = u->objects_fd = u->manifest_fd = -1;
	if (mkdir(u->dir, 0700) < 0 ||
	    (u->dir_fd = open(u->dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) < 0 ||
	    mkdirat(u->dir_fd, "objects", 0700) < 0 ||
	    (u->objects_fd = openat(u->dir_fd, "objects", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) < 0 ||
	    (u->manifest_fd = openat(u->dir_fd, "manifest.jsonl",
	                             O_WRONLY | O_CREAT | O_EXCL | O_APPEND | O_NOFOLLOW | O_CLOEXEC, 0600)) < 0) {
		vr_error("undo: cannot create its own journal %s: %s", u->dir, g_strerror(errno));
		vr_clear_fd(&u->dir_fd);
		vr_clear_fd(&u->objects_fd);
		g_free(u->dir);
		g_free(u);
		return NULL;
	}
	u->paths = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
	GString *s = vr_journal_record_new(++u->seq, "start");
	g_autofree char *real = realpath(project, NULL);
	vr_journal_record_str(s, "project", real ? real : project);
	vr_journal_record_str(s, "undo_of", j->dir);
	uj_append(u, s);
	return u;
}

static void uj_close(UndoJournal *u, int rootfd)
{
	if (!u)
		return;
	u->closing = true;
	GList *keys = g_list_sort(g_hash_table_get_keys(u->paths), (GCompareFunc)strcmp);
	for (GList *l = keys; l; l = l->next) {
		int pfd;
		const char *name;
		struct stat st;
		bool ok = vr_resolve_parent(rootfd, l->data, &pfd, &name) == 0;
		if (ok) {
			vr_cleanup_fd int parent = pfd;
			ok = fstatat(parent, name, &st, AT_SYMLINK_NOFOLLOW) == 0;
		}
		if (ok) {
			uj_write(u, "final", l->data, &st, NULL, NULL, NULL);
		} else {
			GString *s = vr_journal_record_new(++u->seq, "final");
			vr_journal_record_str(s, "path", l->data);
			vr_journal_record_str(s, "type", "none");
			uj_append(u, s);
		}
	}
	g_list_free(keys);
	uj_append(u, vr_journal_record_new(++u->seq, "stop"));
	fsync(u->manifest_fd);
	vr_clear_fd(&u->manifest_fd);
	vr_clear_fd(&u->objects_fd);
	vr_clear_fd(&u->dir_fd);
	g_hash_table_unref(u->paths);
	printf("undo journal: %s (vault-run undo %s reverses this undo)\n", u->dir, u->dir);
	g_free(u->dir);
	g_free(u);
}

/* A record that restores content from an object. */
static bool restores_object(const VrJournalRecord *r)
{
	return r->object && (strcmp(r->op, "modified") == 0 ||
	                     (strcmp(r->op, "deleted") == 0 && g_strcmp0(r->type, "file") == 0));
}

/* Is r's object still what the journal kept? A changed size or ctime
 * means something wrote it after it was kept (the agent through a
 * descriptor it held, or anyone on the host since): restoring it could put
 * the agent's bytes back into the project. *why: g_free. */
static bool object_changed(VrJournal *j, const VrJournalRecord *r, char **why)
{
	VrJournalSeal *seal = g_hash_table_lookup(j->seals, r->object);
	struct stat st;
	if (!seal || j->objects_fd < 0 || g_hash_table_contains(j->dropped, r->object))
		return false; /* unsealed (the daemon was killed) or dropped: said elsewhere */
	if (fstatat(j->objects_fd, r->object, &st, AT_SYMLINK_NOFOLLOW) < 0) {
		*why = g_strdup_printf("its kept content (objects/%s) is gone", r->object);
		return true;
	}
	int64_t ct = (int64_t)st.st_ctim.tv_sec * 1000000000 + st.st_ctim.tv_nsec;
	if (st.st_size != seal->size || ct != seal->ctime_ns) {
		*why = g_strdup_printf("its kept content (%s/objects/%s) changed after it was kept "
		                       "(%s): it may hold what the agent wrote", j->dir, r->object,
		                       st.st_size != seal->size ? "other size" : "other ctime");
		return true;
	}
	return false;
}

static int undo_one(VrJournal *j, int rootfd, const VrJournalRecord *r, bool dry_run, UndoJournal *u)
{
	vr_cleanup_fd int pfd = -1;
	const char *name;
	int err = vr_resolve_parent(rootfd, r->path, &pfd, &name);
	if (err < 0)
		return err;
	const char *op = r->op;
	struct stat st;
	if (strcmp(op, "created") == 0) {
		if (fstatat(pfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0) {
			err = errno == ENOENT ? 0 : -errno; /* already gone */
		} else {
			printf("removed %s%s\n", r->shown_path, S_ISDIR(st.st_mode) ? "/" : "");
			uj_keep(u, pfd, name, r->path, false);
			if (!dry_run && unlinkat(pfd, name, S_ISDIR(st.st_mode) ? AT_REMOVEDIR : 0) < 0)
				err = -errno;
		}
	} else if (restores_object(r) && g_hash_table_contains(j->dropped, r->object)) {
		err = -EFBIG;
	} else if (strcmp(op, "modified") == 0 || (strcmp(op, "deleted") == 0 && g_strcmp0(r->type, "file") == 0)) {
		printf("restored %s\n", r->shown_path);
		uj_keep(u, pfd, name, r->path, true);
		if (!dry_run)
			err = restore_file(j, pfd, name, r);
	} else if (strcmp(op, "deleted") == 0 && g_strcmp0(r->type, "dir") == 0) {
		printf("restored %s/\n", r->shown_path);
		if (fstatat(pfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
			uj_write(u, "created", r->path, NULL, NULL, NULL, NULL);
		if (!dry_run && mkdirat(pfd, name, 0700) < 0 &&
		    !(errno == EEXIST && fstatat(pfd, name, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISDIR(st.st_mode)))
			err = -errno;
		if (!dry_run && !err) {
			vr_cleanup_fd int dfd = openat(pfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
			if (dfd < 0 || fchmod(dfd, (mode_t)r->mode & 07777) < 0)
				err = -errno;
		}
	} else if (strcmp(op, "deleted") == 0 && g_strcmp0(r->type, "symlink") == 0 && r->target) {
		printf("restored %s -> %s\n", r->shown_path, r->shown_target);
		uj_write(u, "created", r->path, NULL, NULL, NULL, NULL);
		if (!dry_run && symlinkat(r->target, pfd, name) < 0)
			err = -errno;
		if (!dry_run && !err)
			set_mtime_at(pfd, name, r->mtime_ns);
	} else if (strcmp(op, "deleted") == 0 && g_strcmp0(r->type, "fifo") == 0) {
		printf("restored %s\n", r->shown_path);
		uj_write(u, "created", r->path, NULL, NULL, NULL, NULL);
		if (!dry_run && mkfifoat(pfd, name, (mode_t)r->mode & 07777) < 0)
			err = -errno;
	} else if ((strcmp(op, "renamed") == 0 || strcmp(op, "exchanged") == 0) && r->new_path) {
		vr_cleanup_fd int npfd = -1;
		const char *nname;
		err = vr_resolve_parent(rootfd, r->new_path, &npfd, &nname);
		if (err == 0) {
			printf("moved %s back to %s\n", r->shown_new, r->shown_path);
			uj_write(u, strcmp(op, "exchanged") == 0 ? "exchanged" : "renamed", r->new_path, NULL,
			         NULL, NULL, r->path);
			unsigned flags = strcmp(op, "exchanged") == 0 ? RENAME_EXCHANGE : RENAME_NOREPLACE;
			if (!dry_run && renameat2(npfd, nname, pfd, name, flags) < 0)
				err = -errno;
		}
	} else if (strcmp(op, "chmod") == 0 && r->mode >= 0) {
		vr_cleanup_fd int fd = openat(pfd, name, O_PATH | O_NOFOLLOW | O_CLOEXEC);
		if (fd < 0) {
			err = -errno;
		} else {
			if (fstat(fd, &st) == 0 && !S_ISLNK(st.st_mode)) {
				char proc[64];
				snprintf(proc, sizeof proc, "/proc/self/fd/%d", fd);
				printf("mode of %s back to %04o\n", r->shown_path, (unsigned)r->mode & 07777);
				uj_write(u, "chmod", r->path, &st, NULL, NULL, NULL);
				if (!dry_run && chmod(proc, (mode_t)r->mode & 07777) < 0)
					err = -errno;
			}
		}
	} else if (strcmp(op, "skipped") == 0) {
		/* One that names an object gave up that object: the record using
		 * it says so. */
		return r->object ? 0 : -EFBIG;
	}
	return err;
}

int vr_undo_apply(VrJournal *j, const char *project, char **paths, bool force, bool dry_run)
{
	vr_cleanup_fd int rootfd = open_root(project);
	if (rootfd < 0)
		return VR_EXIT_ERROR;
	if (!j->complete)
		vr_error("undo: the run's view did not stop cleanly: changes made "
		        "after the run cannot be detected");
	/* Refuse up front, before touching anything, where the host changed a
	 * path after the run: restoring would destroy that newer work. */
	g_autoptr(GHashTable) checked = g_hash_table_new(g_str_hash, g_str_equal);
	int refused = 0;
	for (guint i = 0; i < j->records->len && !force; i++) {
		VrJournalRecord *r = g_ptr_array_index(j->records, i);
		if (!record_selected(r, paths))
			continue;
		const char *ps[2] = {r->path, r->new_path};
		for (int k = 0; k < 2; k++) {
			g_autofree char *why = NULL;
			if (!ps[k] || !g_hash_table_add(checked, (gpointer)ps[k]))
				continue;
			if (changed_after_run(j, rootfd, ps[k], &why)) {
				vr_error("undo: %s: %s (--force restores it anyway)", ps[k], why);
				refused++;
			}
		}
	}
	/* Objects that changed since they were kept are never restored, not
	 * even with --force (which then restores the rest). */
	g_autoptr(GHashTable) tainted = g_hash_table_new(NULL, NULL);
	for (guint i = 0; i < j->records->len; i++) {
		VrJournalRecord *r = g_ptr_array_index(j->records, i);
		g_autofree char *why = NULL;
		if (!record_selected(r, paths) || !restores_object(r) || !object_changed(j, r, &why))
			continue;
		vr_error("undo: %s: %s: not restored%s", r->path, why,
		        force ? "" : " (--force restores the rest)");
		g_hash_table_add(tainted, r);
		refused++;
	}
	if (refused && !force)
		return 1;
	int failed = (int)g_hash_table_size(tainted);
	g_autoptr(GHashTable) not_kept = g_hash_table_new(g_str_hash, g_str_equal);
	UndoJournal *u = dry_run ? NULL : uj_open(j, project);
	for (guint i = j->records->len; i-- > 0;) {
		VrJournalRecord *r = g_ptr_array_index(j->records, i);
		if (!record_selected(r, paths) || g_hash_table_contains(tainted, r))
			continue;
		int err = undo_one(j, rootfd, r, dry_run, u);
		if (err == -EFBIG) {
			const char *why = r->object ? g_hash_table_lookup(j->dropped, r->object) : NULL;
			if (g_hash_table_add(not_kept, r->path)) /* once per path */
				vr_error("undo: %s: its content was not kept (%s): not restored",
				        r->path, why ? why : r->reason ? r->reason : "skipped");
			failed++;
		} else if (err < 0) {
			vr_error("undo: %s: %s%s", r->path, g_strerror(-err),
			        err == -ELOOP || err == -ENOTDIR ? " (a symlink or file is in the way: "
			        "nothing is written through it)" : "");
			failed++;
		}
	}
	uj_close(u, rootfd);
	return failed ? 1 : VR_EXIT_OK;
}
