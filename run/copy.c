/* Per-run copies of harness state files: see run/copy.h. */
#include "run/copy.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <dirent.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>


#include "audit/json.h"
#include "run/json-file.h"
#include "common/cleanup.h"
#include "common/fd-util.h"
#include "common/log.h"
#include "run/profile.h"
#include "audit/state-dir.h"

typedef struct {
	char *host;       /* the host file as the profile names it */
	char *copy;       /* its copy */
	char *original;   /* the content copied (what the run started from) */
	GPtrArray *merge; /* key paths */
} Item;

static void item_free(gpointer p)
{
	Item *it = p;
	g_free(it->host);
	g_free(it->copy);
	g_free(it->original);
	g_ptr_array_unref(it->merge);
	g_free(it);
}

guint vr_run_copies_count(const VrRunCopies *c) { return c->items ? c->items->len : 0; }
const char *vr_run_copies_copy_path(const VrRunCopies *c, guint i) { return ((Item *)c->items->pdata[i])->copy; }
const char *vr_run_copies_host_path(const VrRunCopies *c, guint i) { return ((Item *)c->items->pdata[i])->host; }

/* Takes DFD. */
static void remove_tree(int dfd)
{
	vr_cleanup_fd int owned = dfd;
	vr_cleanup_dir DIR *d = vr_fdopendir(&owned);
	struct dirent *de;
	while (d && (de = readdir(d))) {
		if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
			continue;
		if (unlinkat(dirfd(d), de->d_name, 0) == 0 || errno != EISDIR)
			continue;
		int sub = openat(dirfd(d), de->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (sub >= 0)
			remove_tree(sub);
		unlinkat(dirfd(d), de->d_name, AT_REMOVEDIR);
	}
}

/* The copies of runs killed before their end (a copy of ~/.claude.json
 * may hold a key): every copy-* directory of the state directory whose
 * lock nobody holds any more. Never follows a symlink. */
static void sweep_stale(const char *state)
{
	g_autoptr(GDir) dir = g_dir_open(state, 0, NULL);
	const char *name;
	while (dir && (name = g_dir_read_name(dir))) {
		if (!g_str_has_prefix(name, "copy-"))
			continue;
		g_autofree char *path = g_build_filename(state, name, NULL);
		vr_cleanup_fd int fd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (fd < 0)
			continue;
		if (flock(fd, LOCK_EX | LOCK_NB) < 0)
			continue; /* a live run's */
		remove_tree(dup(fd));
		rmdir(path);
	}
}

/* The copy directory, made on first use: copy-XXXXXX, 0700, in the
 * project's checked state directory (the user's own, outside any project),
 * locked for as long as this run lives (sweep_stale). */
static gboolean ensure_dir(VrRunCopies *c, const char *project, GError **error)
{
	if (c->dir)
		return TRUE;
	g_autofree char *state = NULL;
	int r;
	{
		vr_cleanup_fd int dfd = -1;
		r = vr_state_open_project_dir(project, true, &dfd);
		if (r == 0)
			r = vr_state_project_dir(project, &state);
	}
	if (r < 0) {
		g_set_error(error, G_FILE_ERROR, g_file_error_from_errno(-r), "cannot make the state directory for "
		            "per-run copies: %s", g_strerror(-r));
		return FALSE;
	}
	sweep_stale(state);
	g_autofree char *tmpl = g_build_filename(state, "copy-XXXXXX", NULL);
	if (!g_mkdtemp_full(tmpl, 0700)) {
		g_set_error(error, G_FILE_ERROR, g_file_error_from_errno(errno), "cannot make %s: %s", tmpl,
		            g_strerror(errno));
		return FALSE;
	}
	/* The lock goes with our descriptor (and the daemons' inherited
	 * copies): it ends when the run's last process does. */
	c->lock_fd = open(tmpl, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (c->lock_fd >= 0)
		flock(c->lock_fd, LOCK_EX);
	c->dir = g_steal_pointer(&tmpl);
	return TRUE;
}

gboolean vr_run_copies_prepare(VrRunCopies *c, const char *project, const VrRunPlan *plan, GError **error)
{
	*c = (VrRunCopies){NULL, g_ptr_array_new_with_free_func(item_free), -1};
	for (guint i = 0; plan->copies && i < plan->copies->len; i++) {
		const VrCopyFile *f = plan->copies->pdata[i];
		g_autofree char *data = NULL;
		gsize len = 0;
		g_autoptr(GError) local = NULL;
		if (!g_file_test(f->path, G_FILE_TEST_IS_REGULAR))
			continue; /* not written yet: the harness starts without it, as it would */
		if (!g_file_get_contents(f->path, &data, &len, &local)) {
			g_set_error(error, G_FILE_ERROR, local->code, "cannot copy %s for the run: %s", f->path,
			            local->message);
			return FALSE;
		}
		if (!ensure_dir(c, project, error))
			return FALSE;
		g_autofree char *base = g_path_get_basename(f->path);
		g_autofree char *name = g_strdup_printf("%u-%s", i, base);
		g_autofree char *dir = g_build_filename(c->dir, name, NULL);
		/* One directory per copy: its file view shows that one name. */
		if (mkdir(dir, 0700) < 0) {
			g_set_error(error, G_FILE_ERROR, g_file_error_from_errno(errno), "cannot make %s: %s", dir,
			            g_strerror(errno));
			return FALSE;
		}
		Item *it = g_new0(Item, 1);
		it->host = g_strdup(f->path);
		it->copy = g_build_filename(dir, base, NULL);
		it->original = g_strndup(data, len);
		it->merge = g_ptr_array_new_with_free_func(g_free);
		for (guint j = 0; f->merge && j < f->merge->len; j++)
			g_ptr_array_add(it->merge, g_strdup(f->merge->pdata[j]));
		g_ptr_array_add(c->items, it);
		vr_cleanup_fd int fd = open(it->copy, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
		/* No fsync: the copy lives for the run only. */
		if (fd < 0 || vr_write_all(fd, data, len) < 0) {
			int e = errno;
			g_set_error(error, G_FILE_ERROR, g_file_error_from_errno(e), "cannot write %s: %s", it->copy,
			            g_strerror(e));
			return FALSE;
		}
	}
	return TRUE;
}

/* A JSON object, or NULL. */
static json_t *parse(const char *data, gsize len)
{
	json_error_t e;
	json_t *root = json_loadb(data, len, VR_JSON_MERGE_FLAGS, &e);
	if (root && !json_is_object(root))
		g_clear_pointer(&root, json_decref);
	return root;
}

static gboolean matches(const char *want, const char *name, const char *project)
{
	if (strcmp(want, "*") == 0)
		return TRUE;
	if (strcmp(want, "{project}") == 0) {
		size_t n = strlen(project);
		return strncmp(name, project, n) == 0 && (name[n] == '\0' || name[n] == '/');
	}
	return strcmp(want, name) == 0;
}

/* Sets DST's members along KEY[0..] from SRC's, where SRC has them;
 * counts into *changed each value that differs. Intermediate objects are
 * made in DST as needed. */
static void merge_key(json_t *dst, json_t *src, char **key, const char *project, GString *changed,
                      const char *prefix)
{
	const char *name;
	json_t *from;
	json_object_foreach(src, name, from) {
		if (!matches(key[0], name, project))
			continue;
		g_autofree char *here = *prefix ? g_strconcat(prefix, ".", name, NULL) : g_strdup(name);
		json_t *to = json_object_get(dst, name);
		if (key[1]) {
			if (!json_is_object(from))
				continue;
			if (!to) {
				json_object_set_new(dst, name, json_object());
				to = json_object_get(dst, name);
			} else if (!json_is_object(to)) {
				continue; /* the host has something else there: leave it */
			}
			merge_key(to, from, key + 1, project, changed, here);
			continue;
		}
		if (to && json_equal(to, from))
			continue;
		json_object_set_new(dst, name, json_deep_copy(from));
		g_string_append_printf(changed, "%s%s", changed->len ? "," : "", here);
	}
}

/* What changed in the copy since it was made, as top-level names (and
 * projects.<path>.<name>): for the record, the part left out. */
static void changed_members(json_t *before, json_t *after, const char *prefix, int depth, GPtrArray *out)
{
	const char *name;
	json_t *a;
	json_object_foreach(after, name, a) {
		json_t *b = before ? json_object_get(before, name) : NULL;
		g_autofree char *here = *prefix ? g_strconcat(prefix, ".", name, NULL) : g_strdup(name);
		if (b && json_equal(a, b))
			continue;
		gboolean deeper = depth < 2 && json_is_object(a) && (!b || json_is_object(b)) &&
		                  (depth == 1 || strcmp(name, "projects") == 0);
		if (deeper)
			changed_members(b, a, here, depth + 1, out);
		else
			g_ptr_array_add(out, g_steal_pointer(&here));
	}
}

/* The host file replaced by TEXT where it really is (a symlinked dotfile
 * stays a symlink), atomically, with its mode. */
static int write_back(const char *host, const char *text)
{
	char real[PATH_MAX];
	struct stat st;
	if (!realpath(host, real) || stat(real, &st) < 0)
		return -errno;
	g_autofree char *tmp = g_strdup_printf("%s.vault-run-XXXXXX", real);
	vr_cleanup_fd int fd = g_mkstemp_full(tmp, O_WRONLY | O_CLOEXEC, (int)(st.st_mode & 07777));
	if (fd < 0)
		return -errno;
	int r = 0;
	if (fchmod(fd, st.st_mode & 07777) < 0 || vr_write_all(fd, text, strlen(text)) < 0 || fsync(fd) < 0 ||
	    rename(tmp, real) < 0)
		r = -errno;
	vr_clear_fd(&fd);
	if (r < 0)
		unlink(tmp);
	return r;
}

static void send_merge(VrRunAudit *audit, const char *host, const char *result, const char *keys,
                       GPtrArray *left_out)
{
	g_autofree char *dir = g_path_get_dirname(host);
	g_autofree char *base = g_path_get_basename(host);
	g_autoptr(GString) s = g_string_new("{\"op\":\"merge\",\"root\":");
	vr_json_append_string(s, dir);
	g_string_append(s, ",\"path\":");
	vr_json_append_string(s, base);
	g_string_append(s, ",\"result\":");
	vr_json_append_string(s, result);
	g_string_append(s, ",\"keys\":");
	vr_json_append_string(s, keys);
	if (left_out && left_out->len) {
		g_autoptr(GString) joined = g_string_new(NULL);
		for (guint i = 0; i < left_out->len; i++)
			g_string_append_printf(joined, "%s%s", i ? "," : "", (const char *)left_out->pdata[i]);
		g_string_append(s, ",\"not_merged\":");
		vr_json_append_string(s, joined->str);
	}
	g_string_append_printf(s, ",\"pid\":%d}", (int)getpid());
	vr_run_audit_send(audit, s->str);
}

static void finish_one(const Item *it, const char *project, VrRunAudit *audit)
{
	g_autofree char *copy = NULL, *host = NULL;
	gsize copy_len = 0, host_len = 0;
	if (!g_file_get_contents(it->copy, &copy, &copy_len, NULL) || strcmp(copy, it->original) == 0)
		return; /* unchanged: nothing to bring back */
	g_autoptr(json_t) after = parse(copy, copy_len);
	g_autoptr(json_t) before = parse(it->original, strlen(it->original));
	if (!g_file_get_contents(it->host, &host, &host_len, NULL)) {
		vr_warning("%s is gone: the run's changes to it are not merged back", it->host);
		return;
	}
	g_autoptr(json_t) now = parse(host, host_len);
	if (!after || !now) {
		vr_warning("%s: %s is not a JSON object; nothing merged back", it->host, !after ? "the run's copy" : "it");
		send_merge(audit, it->host, "EINVAL", "", NULL);
		return;
	}
	g_autoptr(GString) changed = g_string_new(NULL);
	for (guint i = 0; i < it->merge->len; i++) {
		if (!vr_profile_merge_key_allowed(it->merge->pdata[i]))
			continue; /* refused when the profile was loaded; never, even so */
		g_auto(GStrv) key = g_strsplit(it->merge->pdata[i], ".", -1);
		merge_key(now, after, key, project, changed, "");
	}
	/* What the agent changed and did not come back, for the reviewer. */
	g_autoptr(GPtrArray) touched = g_ptr_array_new_with_free_func(g_free);
	changed_members(before, after, "", 0, touched);
	g_autoptr(GPtrArray) left_out = g_ptr_array_new_with_free_func(g_free);
	g_auto(GStrv) merged = g_strsplit(changed->str, ",", -1);
	for (guint i = 0; i < touched->len; i++) {
		gboolean in = FALSE;
		for (char **m = merged; *m && !in; m++)
			in = strcmp(*m, touched->pdata[i]) == 0 || g_str_has_prefix(*m, touched->pdata[i]);
		if (!in)
			g_ptr_array_add(left_out, g_strdup(touched->pdata[i]));
	}
	if (!changed->len) {
		if (left_out->len)
			send_merge(audit, it->host, "ok", "", left_out);
		return;
	}
	/* As the harnesses write it (JSON.stringify(x, null, 2)): two spaces,
	 * "key": value, members in their order. */
	char *text = json_dumps(now, JSON_INDENT(2) | JSON_REAL_PRECISION(17));
	int r = text ? write_back(it->host, text) : -ENOMEM;
	free(text);
	if (r < 0)
		vr_warning("cannot merge the run's changes back into %s: %s", it->host, g_strerror(-r));
	const char *name = r < 0 ? strerrorname_np(-r) : "ok";
	send_merge(audit, it->host, name ? name : "EIO", changed->str, left_out);
}

void vr_run_copies_finish(VrRunCopies *c, const char *project_inside, VrRunAudit *audit)
{
	for (guint i = 0; c->items && i < c->items->len; i++)
		finish_one(c->items->pdata[i], project_inside, audit);
	vr_run_copies_clear(c);
}

void vr_run_copies_clear(VrRunCopies *c)
{
	for (guint i = 0; c->items && i < c->items->len; i++) {
		const Item *it = c->items->pdata[i];
		unlink(it->copy);
		g_autofree char *dir = g_path_get_dirname(it->copy);
		rmdir(dir);
	}
	if (c->dir)
		rmdir(c->dir);
	if (c->lock_fd > 0)
		vr_closep(&c->lock_fd);
	c->lock_fd = -1;
	g_clear_pointer(&c->dir, g_free);
	g_clear_pointer(&c->items, g_ptr_array_unref);
}
