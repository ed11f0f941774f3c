/* The state directory: see audit/state-dir.h. */
#include "audit/state-dir.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pwd.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/cleanup.h"
#include "common/log.h"

int vr_state_base_dir(char **ret)
{
	const char *xdg = g_getenv("XDG_STATE_HOME");
	if (xdg && xdg[0] == '/') {
		*ret = g_build_filename(xdg, "vault-run", NULL);
		return 0;
	}
	const char *home = g_getenv("HOME");
	if (!home || home[0] != '/') {
		struct passwd *pw = getpwuid(geteuid());
		if (!pw || !pw->pw_dir || pw->pw_dir[0] != '/')
			return -ENOENT;
		home = pw->pw_dir;
	}
	*ret = g_build_filename(home, ".local", "state", "vault-run", NULL);
	return 0;
}

static char *safe_name(const char *real)
{
	const char *base = strrchr(real, '/');
	base = base && base[1] ? base + 1 : "root";
	GString *s = g_string_new(NULL);
	for (const char *p = base; *p && s->len < 64; p++) {
		char c = *p;
		bool ok = g_ascii_isalnum(c) || c == '_' || c == '-' || (c == '.' && s->len > 0);
		g_string_append_c(s, ok ? c : '_');
	}
	return g_string_free(s, FALSE);
}

int vr_state_project_dir(const char *project, char **ret)
{
	char *real = realpath(project, NULL);
	if (!real)
		return -errno;
	g_autofree char *base = NULL;
	int err = vr_state_base_dir(&base);
	if (err < 0) {
		free(real);
		return err;
	}
	g_autofree char *sum = g_compute_checksum_for_string(G_CHECKSUM_SHA256, real, -1);
	g_autofree char *name = safe_name(real);
	free(real);
	g_autofree char *leaf = g_strdup_printf("%s-%.16s", name, sum);
	*ret = g_build_filename(base, leaf, NULL);
	return 0;
}

bool vr_state_run_id_valid(const char *run_id)
{
	size_t n = strlen(run_id);
	if (n == 0 || n > 64 || run_id[0] == '.')
		return false;
	for (size_t i = 0; i < n; i++) {
		char c = run_id[i];
		if (!g_ascii_isalnum(c) && c != '.' && c != '_' && c != '-')
			return false;
	}
	return true;
}

int vr_state_run_log_path(const char *project, const char *run_id, char **ret)
{
	if (!vr_state_run_id_valid(run_id))
		return -EINVAL;
	g_autofree char *dir = NULL;
	int err = vr_state_project_dir(project, &dir);
	if (err < 0)
		return err;
	g_autofree char *leaf = g_strconcat(run_id, ".jsonl", NULL);
	*ret = g_build_filename(dir, leaf, NULL);
	return 0;
}

char *vr_state_new_run_id(void)
{
	g_autoptr(GDateTime) now = g_date_time_new_now_utc();
	g_autofree char *stamp = g_date_time_format(now, "%Y%m%dT%H%M%SZ");
	return g_strdup_printf("%s-%06x", stamp, g_random_int_range(0, 0x1000000));
}

/* One component below an already checked directory fd: created if asked,
 * then opened without following a symlink and checked for owner and mode.
 * Components above vault-run's own directory (the user's ~/.local/state) are
 * the user's business and only need to exist. */
int vr_state_open_child(int parent, const char *name, const char *shown, bool create, int *ret)
{
	if (create && mkdirat(parent, name, 0700) < 0 && errno != EEXIST)
		return vr_log_errno(errno, "cannot create %s", shown);
	int fd = openat(parent, name, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0) {
		int e = errno;
		if (e == ENOTDIR || e == ELOOP) {
			struct stat st;
			if (fstatat(parent, name, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISLNK(st.st_mode)) {
				vr_error("%s is a symlink; refusing to use it as vault-run's state directory "
				         "(remove it: vault-run makes a fresh one)", shown);
				return -ELOOP;
			}
		}
		if (e != ENOENT)
			vr_error("cannot open %s: %s", shown, g_strerror(e));
		return -e;
	}
	vr_cleanup_fd int owned = fd;
	struct stat st;
	if (fstat(owned, &st) < 0)
		return -errno;
	if (st.st_uid != geteuid() || (st.st_mode & 077) != 0) {
		vr_error("%s must be owned by uid %u with mode 0700 (it is uid %u, mode %04o); "
		         "refusing to keep audit logs there",
		         shown, (unsigned)geteuid(), (unsigned)st.st_uid, (unsigned)(st.st_mode & 07777));
		return -EPERM;
	}
	*ret = vr_steal_fd(&owned);
	return 0;
}

int vr_state_open_base_dir(bool create, int *ret_dirfd)
{
	g_autofree char *top = NULL;
	int err = vr_state_base_dir(&top);
	if (err < 0)
		return err;
	g_autofree char *above = g_path_get_dirname(top);   /* $XDG_STATE_HOME */
	g_autofree char *top_name = g_path_get_basename(top);
	if (create && g_mkdir_with_parents(above, 0700) < 0)
		return vr_log_errno(errno, "cannot create %s", above);
	vr_cleanup_fd int afd = open(above, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (afd < 0)
		return -errno;
	return vr_state_open_child(afd, top_name, top, create, ret_dirfd);
}

int vr_state_open_project_dir(const char *project, bool create, int *ret_dirfd)
{
	g_autofree char *dir = NULL;
	int err = vr_state_project_dir(project, &dir);
	if (err < 0)
		return err;
	g_autofree char *leaf = g_path_get_basename(dir);
	vr_cleanup_fd int tfd = -1;
	err = vr_state_open_base_dir(create, &tfd);
	if (err < 0)
		return err;
	return vr_state_open_child(tfd, leaf, dir, create, ret_dirfd);
}

int vr_state_create_run_log(const char *project, const char *run_id, int *ret_fd, char **ret_path)
{
	if (!vr_state_run_id_valid(run_id))
		return -EINVAL;
	vr_cleanup_fd int dfd = -1;
	int err = vr_state_open_project_dir(project, true, &dfd);
	if (err < 0)
		return err;
	g_autofree char *leaf = g_strconcat(run_id, ".jsonl", NULL);
	int fd = openat(dfd, leaf, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_APPEND | O_CLOEXEC | O_NOCTTY, 0600);
	err = fd < 0 ? -errno : 0;
	vr_clear_fd(&dfd);
	if (err < 0)
		return err;
	if (ret_path) {
		g_autofree char *dir = NULL;
		if (vr_state_project_dir(project, &dir) == 0)
			*ret_path = g_build_filename(dir, leaf, NULL);
		else
			*ret_path = g_strdup(leaf);
	}
	*ret_fd = fd;
	return 0;
}

void vr_state_run_free(VrStateRun *run)
{
	if (!run)
		return;
	g_free(run->run_id);
	g_free(run->path);
	g_free(run);
}

static gint run_cmp(gconstpointer a, gconstpointer b)
{
	const VrStateRun *x = *(VrStateRun *const *)a, *y = *(VrStateRun *const *)b;
	if (x->mtime_ns != y->mtime_ns)
		return x->mtime_ns < y->mtime_ns ? -1 : 1;
	return strcmp(x->run_id, y->run_id);
}

int vr_state_list_runs(const char *project, GPtrArray **ret)
{
	g_autofree char *dir = NULL;
	int err = vr_state_project_dir(project, &dir);
	if (err < 0)
		return err;
	GPtrArray *runs = g_ptr_array_new_with_free_func((GDestroyNotify)vr_state_run_free);
	/* The checked open: a symlink or a foreign directory in the state
	 * path is refused (one message), never listed. */
	vr_cleanup_fd int pfd = -1;
	err = vr_state_open_project_dir(project, false, &pfd);
	if (err < 0) {
		if (err == -ENOENT) {
			*ret = runs;
			return 0;
		}
		g_ptr_array_unref(runs);
		return err;
	}
	vr_cleanup_fd int dfd = openat(pfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	err = dfd < 0 ? -errno : 0;
	vr_clear_fd(&pfd);
	if (err < 0) {
		g_ptr_array_unref(runs);
		return err;
	}
	DIR *d = vr_fdopendir(&dfd);
	if (!d) {
		err = -errno;
		g_ptr_array_unref(runs);
		return err;
	}
	struct dirent *de;
	while ((de = readdir(d))) {
		size_t n = strlen(de->d_name);
		if (n <= 6 || strcmp(de->d_name + n - 6, ".jsonl") != 0)
			continue;
		g_autofree char *id = g_strndup(de->d_name, n - 6);
		if (!vr_state_run_id_valid(id))
			continue;
		struct stat st;
		if (fstatat(dirfd(d), de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0 || !S_ISREG(st.st_mode))
			continue;
		VrStateRun *r = g_new0(VrStateRun, 1);
		r->run_id = g_steal_pointer(&id);
		r->path = g_build_filename(dir, de->d_name, NULL);
		r->mtime_ns = (int64_t)st.st_mtim.tv_sec * 1000000000 + st.st_mtim.tv_nsec;
		g_ptr_array_add(runs, r);
	}
	closedir(d);
	g_ptr_array_sort(runs, run_cmp);
	*ret = runs;
	return 0;
}
