/* The change journal's manifest format: see audit/journal.h. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "audit/journal.h"
#include "audit/json.h"
#include "audit/state-dir.h"
#include "audit/summary.h"
#include "common/cleanup.h"
#include "common/log.h"
#include "common/resolve.h"

/* --- writing --- */

GString *vr_journal_record_new(uint64_t seq, const char *op)
{
	GString *s = g_string_new(NULL);
	g_string_append_printf(s, "{\"seq\":%" PRIu64 ",\"op\":\"%s\"", seq, op);
	return s;
}

void vr_journal_record_str(GString *s, const char *key, const char *v)
{
	vr_audit_json_member(s, key, v); /* undo reads names back byte for byte */
}

static const char *type_name(mode_t m)
{
	return S_ISREG(m) ? "file" : S_ISDIR(m) ? "dir" : S_ISLNK(m) ? "symlink"
	     : S_ISFIFO(m) ? "fifo" : "other";
}

void vr_journal_record_stat(GString *s, const struct stat *st)
{
	g_string_append_printf(s, ",\"type\":\"%s\",\"mode\":%u,\"size\":%" PRId64
	                       ",\"mtime_ns\":%" PRId64, type_name(st->st_mode),
	                       (unsigned)(st->st_mode & 07777), (int64_t)st->st_size,
	                       (int64_t)st->st_mtim.tv_sec * 1000000000 + st->st_mtim.tv_nsec);
}

void vr_journal_record_end(GString *s)
{
	g_string_append(s, "}\n");
}

/* --- reading --- */

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
	vr_clear_fd(&j->dir_fd);
	vr_clear_fd(&j->objects_fd);
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
	vr_cleanup_fd int fd = openat(j->dir_fd, "manifest.jsonl", O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return vr_log_errno(errno, "cannot open %s/manifest.jsonl", dir);
	FILE *f = fdopen(fd, "r");
	if (!f)
		return vr_log_errno(errno, "cannot read %s/manifest.jsonl", dir);
	vr_steal_fd(&fd); /* f's now */
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
		vr_cleanup_fd int pfd = -1;
		if ((err = vr_state_open_project_dir(project ? project : ".", false, &pfd)) < 0)
			return err == -ENOENT ? vr_log_errno(ENOENT, "no runs recorded in %s", dir) : err;
		g_autofree char *jname = g_strdup_printf("%s.journal", run);
		struct stat st;
		bool real_dir = fstatat(pfd, jname, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISDIR(st.st_mode);
		vr_clear_fd(&pfd);
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

int vr_journal_dir_create(const char *project, const char *run_id, int *ret_fd)
{
	if (!vr_state_run_id_valid(run_id))
		return vr_log_errno(EINVAL, "journal: bad run id '%s'", run_id);
	vr_cleanup_fd int dirfd = -1;
	int err = vr_state_open_project_dir(project, true, &dirfd);
	if (err < 0)
		return vr_log_errno(-err, "journal: cannot open the state directory of %s", project);
	g_autofree char *name = g_strdup_printf("%s.journal", run_id);
	int fd = -1;
	if (mkdirat(dirfd, name, 0700) < 0)
		err = vr_log_errno(errno, "journal: cannot create %s", name);
	else if ((fd = openat(dirfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) < 0)
		err = vr_log_errno(errno, "journal: cannot open %s", name);
	if (err < 0)
		return err;
	*ret_fd = fd;
	return 0;
}
