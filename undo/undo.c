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

#include "audit/json.h"
#include "audit/summary.h"
#include "common/copy.h"
#include "common/exitcode.h"
#include "common/log.h"
#include "common/resolve.h"
#include "audit/state-dir.h"
#include "undo/undo.h"

static void record_free(VrJournalRecord *r)
{
	g_free(r->op);
	g_free(r->path);
	g_free(r->new_path);
	g_free(r->object);
	g_free(r->type);
	g_free(r->target);
	g_free(r->reason);
	g_free(r->shown_path);
	g_free(r->shown_new);
	g_free(r->shown_target);
	g_free(r);
}

static char *printable(const char *s)
{
	if (!s)
		return g_strdup("?");
	GString *out = g_string_new(NULL);
	vr_audit_append_printable(out, s);
	return g_string_free(out, FALSE);
}

void vr_journal_free(VrJournal *j)
{
	if (!j)
		return;
	g_free(j->dir);
	g_free(j->project);
	g_free(j->run);
	if (j->dir_fd >= 0)
		close(j->dir_fd);
	if (j->objects_fd >= 0)
		close(j->objects_fd);
	g_ptr_array_unref(j->records);
	g_hash_table_unref(j->final);
	g_hash_table_unref(j->seals);
	g_hash_table_unref(j->dropped);
	g_free(j);
}

static char *dup_field(const VrJsonObject *o, const char *key)
{
	return g_strdup(vr_json_get_string(o, key));
}

/* An object's size and ctime when it became final (a "sealed" record). */
static void seal_add(VrJournal *j, const VrJsonObject *o)
{
	const char *obj = vr_json_get_string(o, "object");
	VrJournalSeal *s = g_new(VrJournalSeal, 1);
	if (!obj || strchr(obj, '/') || !vr_json_get_int64(o, "size", &s->size) ||
	    !vr_json_get_int64(o, "ctime_ns", &s->ctime_ns)) {
		g_free(s);
		return;
	}
	g_hash_table_replace(j->seals, g_strdup(obj), s);
}

int vr_journal_load(const char *dir, VrJournal **ret)
{
	g_autoptr(VrJournal) j = g_new0(VrJournal, 1);
	j->dir = g_strdup(dir);
	j->objects_fd = -1;
	j->records = g_ptr_array_new_with_free_func((GDestroyNotify)record_free);
	j->final = g_hash_table_new_full(g_str_hash, g_str_equal, NULL, (GDestroyNotify)record_free);
	j->seals = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, g_free);
	j->dropped = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, g_free);
	j->dir_fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (j->dir_fd < 0)
		return vr_log_errno(errno, "cannot open the journal %s", dir);
	j->objects_fd = openat(j->dir_fd, "objects", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	int fd = openat(j->dir_fd, "manifest.jsonl", O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return vr_log_errno(errno, "cannot open %s/manifest.jsonl", dir);
	FILE *f = fdopen(fd, "r");
	if (!f) {
		close(fd);
		return vr_log_errno(errno, "cannot read %s/manifest.jsonl", dir);
	}
	VrJsonObject o;
	vr_json_object_init(&o);
	char *line = NULL;
	size_t cap = 0;
	ssize_t n;
	unsigned lineno = 0;
	while ((n = getline(&line, &cap, f)) > 0) {
		lineno++;
		if (vr_json_parse_object(&o, line, (size_t)n, NULL, NULL) < 0) {
			/* A kill -9 can only leave a torn last line. */
			vr_log(0, "%s/manifest.jsonl:%u: not a JSON record, skipped", dir, lineno);
			continue;
		}
		const char *op = vr_json_get_string(&o, "op");
		if (!op)
			continue;
		if (strcmp(op, "start") == 0) {
			j->project = dup_field(&o, "project");
			j->run = dup_field(&o, "run");
			continue;
		}
		if (strcmp(op, "stop") == 0) {
			j->complete = true;
			continue;
		}
		if (strcmp(op, "sealed") == 0) {
			seal_add(j, &o);
			continue;
		}
		const char *path = vr_json_get_string(&o, "path");
		if (!path || !vr_relpath_ok(path)) {
			vr_log(0, "%s/manifest.jsonl:%u: bad path, skipped", dir, lineno);
			continue;
		}
		VrJournalRecord *r = g_new0(VrJournalRecord, 1);
		r->op = g_strdup(op);
		r->path = g_strdup(path);
		r->new_path = dup_field(&o, "new");
		r->object = dup_field(&o, "object");
		r->type = dup_field(&o, "type");
		r->target = dup_field(&o, "target");
		r->reason = dup_field(&o, "reason");
		r->shown_path = printable(r->path);
		r->shown_new = printable(r->new_path);
		r->shown_target = printable(r->target);
		r->mode = r->size = r->mtime_ns = -1;
		vr_json_get_int64(&o, "mode", &r->mode);
		vr_json_get_int64(&o, "size", &r->size);
		vr_json_get_int64(&o, "mtime_ns", &r->mtime_ns);
		if (r->new_path && !vr_relpath_ok(r->new_path)) {
			record_free(r);
			continue;
		}
		if (r->object && (strchr(r->object, '/') || r->object[0] == '.')) {
			record_free(r);
			continue;
		}
		if (r->object && strcmp(op, "skipped") == 0)
			g_hash_table_replace(j->dropped, g_strdup(r->object), g_strdup(r->reason ? r->reason : "?"));
		if (strcmp(op, "final") == 0)
			g_hash_table_replace(j->final, r->path, r);
		else
			g_ptr_array_add(j->records, r);
	}
	free(line);
	fclose(f);
	vr_json_object_clear(&o);
	*ret = g_steal_pointer(&j);
	return 0;
}

static bool has_manifest(const char *dir)
{
	g_autofree char *m = g_build_filename(dir, "manifest.jsonl", NULL);
	return g_file_test(m, G_FILE_TEST_IS_REGULAR);
}

int vr_journal_locate(const char *project, const char *run, char **ret)
{
	if (run && has_manifest(run)) {
		*ret = g_strdup(run);
		return 0;
	}
	g_autofree char *dir = NULL;
	int err = vr_state_project_dir(project ? project : ".", &dir);
	if (err < 0)
		return vr_log_errno(-err, "cannot find the runs of %s", project ? project : ".");
	if (run) {
		if (!vr_state_run_id_valid(run))
			return vr_log_errno(EINVAL, "'%s' is neither a journal directory nor a run id", run);
		/* The checked open: never a journal reached through a symlink
		 * planted in the state directory. */
		int pfd;
		if ((err = vr_state_open_project_dir(project ? project : ".", false, &pfd)) < 0)
			return err == -ENOENT ? vr_log_errno(ENOENT, "no runs recorded in %s", dir) : err;
		g_autofree char *jname = g_strdup_printf("%s.journal", run);
		struct stat st;
		bool real_dir = fstatat(pfd, jname, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISDIR(st.st_mode);
		close(pfd);
		g_autofree char *j = g_strdup_printf("%s/%s.journal", dir, run);
		if (!real_dir || !has_manifest(j))
			return vr_log_errno(ENOENT, "run %s has no journal (%s)", run, j);
		*ret = g_steal_pointer(&j);
		return 0;
	}
	g_autoptr(GPtrArray) runs = NULL;
	err = vr_state_list_runs(project ? project : ".", &runs);
	if (err < 0)
		return vr_log_errno(-err, "cannot list the runs in %s", dir);
	for (guint i = runs->len; i-- > 0;) {
		VrStateRun *r = g_ptr_array_index(runs, i);
		g_autofree char *j = g_strdup_printf("%s/%s.journal", dir, r->run_id);
		if (!g_file_test(j, G_FILE_TEST_IS_SYMLINK) && has_manifest(j)) {
			*ret = g_steal_pointer(&j);
			return 0;
		}
	}
	return vr_log_errno(ENOENT, "no run of this project has a journal (in %s)", dir);
}

int vr_undo_journal_create(const char *project, const char *run_id, int *ret_fd)
{
	if (!vr_state_run_id_valid(run_id))
		return vr_log_errno(EINVAL, "journal: bad run id '%s'", run_id);
	int dirfd;
	int err = vr_state_open_project_dir(project, true, &dirfd);
	if (err < 0)
		return vr_log_errno(-err, "journal: cannot open the state directory of %s", project);
	g_autofree char *name = g_strdup_printf("%s.journal", run_id);
	int fd = -1;
	if (mkdirat(dirfd, name, 0700) < 0)
		err = vr_log_errno(errno, "journal: cannot create %s", name);
	else if ((fd = openat(dirfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) < 0)
		err = vr_log_errno(errno, "journal: cannot open %s", name);
	close(dirfd);
	if (err < 0)
		return err;
	*ret_fd = fd;
	return 0;
}

int vr_undo_parse_size(const char *s, uint64_t *ret)
{
	char *end;
	errno = 0;
	unsigned long long v = strtoull(s, &end, 10);
	if (errno || end == s || s[0] == '-')
		return -EINVAL;
	unsigned shift = 0;
	if (*end) {
		const char *units = "KMGT", *u = strchr(units, g_ascii_toupper(*end));
		if (!u || (end[1] && !(g_ascii_toupper(end[1]) == 'I' && end[2] == 'B' && !end[3]) &&
		           !(g_ascii_toupper(end[1]) == 'B' && !end[2])))
			return -EINVAL;
		shift = 10 * (unsigned)(u - units + 1);
	}
	if (shift && v > (UINT64_MAX >> shift))
		return -EINVAL;
	*ret = (uint64_t)v << shift;
	return 0;
}

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
	int old = openat(j->objects_fd, r->object, O_RDONLY | O_NOFOLLOW); /* inherited by diff */
	if (old < 0)
		return;
	int cur = -1, pfd;
	const char *name;
	if (strcmp(r->op, "modified") == 0 && vr_resolve_parent(rootfd, r->path, &pfd, &name) == 0) {
		cur = openat(pfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK);
		close(pfd);
	}
	struct stat st;
	if (cur >= 0 && (fstat(cur, &st) < 0 || !S_ISREG(st.st_mode))) {
		close(cur);
		cur = -1;
	}
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
	close(old);
	if (cur >= 0)
		close(cur);
}

int vr_changes_print(VrJournal *j, const char *project, char **paths, bool diff)
{
	int rootfd = open_root(project);
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
		fprintf(stderr, "vault-run: the run's view did not stop cleanly: the journal may end early\n");
	close(rootfd);
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
		exists = fstatat(pfd, name, &st, AT_SYMLINK_NOFOLLOW) == 0;
		close(pfd);
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
	int in = openat(j->objects_fd, r->object, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	if (in < 0)
		return -errno;
	mode_t mode = r->mode >= 0 ? (mode_t)r->mode & 07777 : 0644;
	/* O_NONBLOCK: a fifo left in its place must not hang us; it is then
	 * refused below as not a regular file. */
	int out = openat(pfd, name, O_WRONLY | O_CREAT | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC, mode | 0200);
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
	if (out >= 0)
		close(out);
	close(in);
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

static void uj_str(GString *s, const char *key, const char *v)
{
	g_string_append_printf(s, ",\"%s\":", key);
	vr_json_append_string(s, v);
}

static void uj_write(UndoJournal *u, const char *op, const char *path, const struct stat *st,
                     const char *object, const char *target, const char *new_path)
{
	if (!u)
		return;
	GString *s = g_string_new(NULL);
	g_string_append_printf(s, "{\"seq\":%" PRIu64 ",\"op\":\"%s\"", ++u->seq, op);
	if (path) {
		uj_str(s, "path", path);
		if (!u->closing)
			g_hash_table_add(u->paths, g_strdup(path));
	}
	if (new_path) {
		uj_str(s, "new", new_path);
		if (!u->closing)
			g_hash_table_add(u->paths, g_strdup(new_path));
	}
	if (object)
		uj_str(s, "object", object);
	if (target)
		uj_str(s, "target", target);
	if (st)
		g_string_append_printf(s, ",\"type\":\"%s\",\"mode\":%u,\"size\":%" PRId64 ",\"mtime_ns\":%" PRId64,
		                       S_ISREG(st->st_mode) ? "file" : S_ISDIR(st->st_mode) ? "dir"
		                       : S_ISLNK(st->st_mode) ? "symlink" : S_ISFIFO(st->st_mode) ? "fifo" : "other",
		                       (unsigned)(st->st_mode & 07777), (int64_t)st->st_size,
		                       (int64_t)st->st_mtim.tv_sec * 1000000000 + st->st_mtim.tv_nsec);
	g_string_append(s, "}\n");
	if (write(u->manifest_fd, s->str, s->len) != (ssize_t)s->len)
		fprintf(stderr, "vault-run: undo: cannot write its own journal: %s\n", g_strerror(errno));
	g_string_free(s, TRUE);
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
		int in = openat(pfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
		int out = openat(u->objects_fd, obj, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
		if (in >= 0 && out >= 0 && vr_copy_data(in, out, st.st_size) == 0)
			uj_write(u, overwrite ? "modified" : "deleted", path, &st, obj, NULL, NULL);
		else
			fprintf(stderr, "vault-run: undo: %s: cannot keep it in the undo's journal\n", path);
		if (in >= 0)
			close(in);
		if (out >= 0)
			close(out);
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
		fprintf(stderr, "vault-run: undo: cannot create its own journal %s: %s\n", u->dir, g_strerror(errno));
		if (u->dir_fd >= 0)
			close(u->dir_fd);
		if (u->objects_fd >= 0)
			close(u->objects_fd);
		g_free(u->dir);
		g_free(u);
		return NULL;
	}
	u->paths = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
	GString *s = g_string_new("{\"seq\":0,\"op\":\"start\"");
	g_autofree char *real = realpath(project, NULL);
	uj_str(s, "project", real ? real : project);
	g_string_append(s, ",\"undo_of\":");
	vr_json_append_string(s, j->dir);
	g_string_append(s, "}\n");
	if (write(u->manifest_fd, s->str, s->len) < 0)
		fprintf(stderr, "vault-run: undo: cannot write its own journal: %s\n", g_strerror(errno));
	g_string_free(s, TRUE);
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
			ok = fstatat(pfd, name, &st, AT_SYMLINK_NOFOLLOW) == 0;
			close(pfd);
		}
		if (ok) {
			uj_write(u, "final", l->data, &st, NULL, NULL, NULL);
		} else {
			GString *s = g_string_new(NULL);
			g_string_append_printf(s, "{\"seq\":%" PRIu64 ",\"op\":\"final\"", ++u->seq);
			uj_str(s, "path", l->data);
			g_string_append(s, ",\"type\":\"none\"}\n");
			if (write(u->manifest_fd, s->str, s->len) < 0) {}
			g_string_free(s, TRUE);
		}
	}
	g_list_free(keys);
	const char stop[] = "{\"op\":\"stop\"}\n";
	if (write(u->manifest_fd, stop, sizeof stop - 1) < 0) {}
	fsync(u->manifest_fd);
	close(u->manifest_fd);
	close(u->objects_fd);
	close(u->dir_fd);
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
	int pfd = -1, r2;
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
			int dfd = openat(pfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
			if (dfd < 0 || fchmod(dfd, (mode_t)r->mode & 07777) < 0)
				err = -errno;
			if (dfd >= 0)
				close(dfd);
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
		int npfd;
		const char *nname;
		err = vr_resolve_parent(rootfd, r->new_path, &npfd, &nname);
		if (err == 0) {
			printf("moved %s back to %s\n", r->shown_new, r->shown_path);
			uj_write(u, strcmp(op, "exchanged") == 0 ? "exchanged" : "renamed", r->new_path, NULL,
			         NULL, NULL, r->path);
			unsigned flags = strcmp(op, "exchanged") == 0 ? RENAME_EXCHANGE : RENAME_NOREPLACE;
			if (!dry_run && renameat2(npfd, nname, pfd, name, flags) < 0)
				err = -errno;
			close(npfd);
		}
	} else if (strcmp(op, "chmod") == 0 && r->mode >= 0) {
		int fd = openat(pfd, name, O_PATH | O_NOFOLLOW | O_CLOEXEC);
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
			close(fd);
		}
	} else if (strcmp(op, "skipped") == 0) {
		/* One that names an object gave up that object: the record using
		 * it says so. */
		r2 = r->object ? 0 : -EFBIG;
		close(pfd);
		return r2;
	}
	close(pfd);
	return err;
}

int vr_undo_apply(VrJournal *j, const char *project, char **paths, bool force, bool dry_run)
{
	int rootfd = open_root(project);
	if (rootfd < 0)
		return VR_EXIT_ERROR;
	if (!j->complete)
		fprintf(stderr, "vault-run: undo: the run's view did not stop cleanly: changes made "
		        "after the run cannot be detected\n");
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
				fprintf(stderr, "vault-run: undo: %s: %s (--force restores it anyway)\n", ps[k], why);
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
		fprintf(stderr, "vault-run: undo: %s: %s: not restored%s\n", r->path, why,
		        force ? "" : " (--force restores the rest)");
		g_hash_table_add(tainted, r);
		refused++;
	}
	if (refused && !force) {
		close(rootfd);
		return 1;
	}
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
				fprintf(stderr, "vault-run: undo: %s: its content was not kept (%s): not restored\n",
				        r->path, why ? why : r->reason ? r->reason : "skipped");
			failed++;
		} else if (err < 0) {
			fprintf(stderr, "vault-run: undo: %s: %s%s\n", r->path, g_strerror(-err),
			        err == -ELOOP || err == -ENOTDIR ? " (a symlink or file is in the way: "
			        "nothing is written through it)" : "");
			failed++;
		}
	}
	uj_close(u, rootfd);
	close(rootfd);
	return failed ? 1 : VR_EXIT_OK;
}
