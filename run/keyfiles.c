/* A profile's key files (see run/keyfiles.h). */
#include "run/keyfiles.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/cleanup.h"
#include "common/fd-util.h"
#include "common/log.h"
#include "common/proc.h"
#include "policy/keymask.h"
#include "run/json-file.h"
#include "run/plan.h"

#define FILE_MAX (1u << 20)

typedef struct {
	char *spec;
	char *path;   /* absolute host path */
	char *field;  /* dotted member path */
	char *bind;   /* "@HOST...[:as=...]" part without the '@', or NULL: concealed */
} Decl;

struct VrRunKeyFiles {
	GPtrArray *paths; /* char *: every declared path (add_declared) and each file a value came from */
	VrKeyMask *mask;  /* every (real, sentinel) pair */
};

static void decl_clear(Decl *d)
{
	g_free(d->spec);
	g_free(d->path);
	g_free(d->field);
	g_free(d->bind);
}

static gboolean spec_error(GError **error, const char *spec, const char *why)
{
	g_set_error(error, VR_PLAN_ERROR, VR_PLAN_ERROR_BAD_VALUE,
	            "[keys] file '%s': %s (expected PATH:FIELD[@HOST[,HOST...][:as=PLACE]])", spec, why);
	return FALSE;
}

static gboolean field_ok(const char *f)
{
	if (!*f || f[0] == '.' || g_str_has_suffix(f, ".") || strstr(f, ".."))
		return FALSE;
	for (; *f; f++)
		if (!g_ascii_isalnum(*f) && *f != '_' && *f != '-' && *f != '.')
			return FALSE;
	return TRUE;
}

static gboolean decl_parse(const char *spec, Decl *d, GError **error)
{
	memset(d, 0, sizeof *d);
	const char *colon = strchr(spec, ':');
	if (!colon || colon == spec)
		return spec_error(error, spec, "no ':' between the file and its field");
	if (spec[0] != '/')
		return spec_error(error, spec, "the file is not an absolute path (or ~/...)");
	const char *at = strchr(colon + 1, '@');
	d->spec = g_strdup(spec);
	d->path = g_strndup(spec, (gsize)(colon - spec));
	d->field = at ? g_strndup(colon + 1, (gsize)(at - colon - 1)) : g_strdup(colon + 1);
	if (!field_ok(d->field)) {
		g_autofree char *why = g_strdup_printf("'%s' is not a field (JSON member names joined by '.': "
		                                       "tokens.access_token)", d->field);
		decl_clear(d);
		return spec_error(error, spec, why);
	}
	if (at) {
		/* The binding is --key's grammar after the name. */
		g_autofree char *as_key = g_strconcat("FILE_KEY@", at + 1, NULL);
		g_autoptr(GError) e = NULL;
		g_autoptr(VrNetKey) k = vr_net_key_parse(as_key, &e);
		if (!k) {
			const char *why = strstr(e->message, "': ") ? strstr(e->message, "': ") + 3 : e->message;
			g_autofree char *copy = g_strdup(why);
			decl_clear(d);
			return spec_error(error, spec, copy);
		}
		d->bind = g_strdup(at + 1);
	}
	return TRUE;
}

gboolean vr_keyfile_spec_check(const char *spec, GError **error)
{
	Decl d;
	if (!decl_parse(spec, &d, error))
		return FALSE;
	decl_clear(&d);
	return TRUE;
}

/* ---- the child that reads the files ------------------------------------ */

static const char *field_value(json_t *root, const char *field)
{
	g_auto(GStrv) parts = g_strsplit(field, ".", -1);
	json_t *n = root;
	for (char **p = parts; *p; p++) {
		if (!json_is_object(n))
			return NULL;
		n = json_object_get(n, *p);
	}
	return json_is_string(n) ? json_string_value(n) : NULL;
}

/* One file, O_NOFOLLOW and by its descriptor: a regular file of at most
 * FILE_MAX bytes, parsed; NULL when missing or not JSON. */
static json_t *read_json(const char *path, char **ret_real)
{
	/* A symlink is followed: a user's own (stow); the views refuse one
	 * the agent would put at a key path (add_declared). */
	vr_cleanup_fd int fd = open(path, O_RDONLY | O_NOCTTY | O_CLOEXEC);
	struct stat st;
	if (fd < 0 || fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || st.st_size > FILE_MAX)
		return NULL;
	g_autofree char *buf = g_malloc((gsize)st.st_size + 1);
	ssize_t n = vr_read_all(fd, buf, (size_t)st.st_size);
	char proc[64];
	snprintf(proc, sizeof proc, "/proc/self/fd/%d", fd);
	*ret_real = realpath(proc, NULL);
	json_error_t e;
	return n < 0 ? NULL : json_loadb(buf, (size_t)n, VR_JSON_READ_FLAGS, &e);
}

/* In the child: for each declaration whose field has a value, a record
 * (u32 index, u32 length, value, u32 length, real path). */
static void child_read(GArray *decls, int out)
{
	for (guint i = 0; i < decls->len; i++) {
		Decl *d = &g_array_index(decls, Decl, i);
		char *real = NULL;
		g_autoptr(json_t) root = read_json(d->path, &real);
		const char *v = root ? field_value(root, d->field) : NULL;
		if (!v || !*v || !real)
			continue; /* missing, not a string, or empty: nothing to keep out */
		guint32 rec[2] = {i, (guint32)strlen(v)}, rl = (guint32)strlen(real);
		if (rec[1] > VR_NET_KEY_MAX_LENGTH)
			continue;
		if (vr_write_all(out, rec, sizeof rec) < 0 || vr_write_all(out, v, rec[1]) < 0 ||
		    vr_write_all(out, &rl, sizeof rl) < 0 || vr_write_all(out, real, rl) < 0)
			_exit(1);
	}
	_exit(0);
}

static char *read_string(int fd, guint32 max)
{
	guint32 n = 0;
	if (vr_read_all(fd, &n, sizeof n) != (ssize_t)sizeof n || n > max)
		return NULL;
	char *s = g_malloc0(n + 1);
	if (vr_read_all(fd, s, n) != (ssize_t)n) {
		vr_net_secret_free(s);
		return NULL;
	}
	return s;
}

static VrNetKey *decl_key(const Decl *d, const char *real)
{
	VrNetKey *k;
	if (d->bind) {
		g_autofree char *as_key = g_strconcat("FILE_KEY@", d->bind, NULL);
		k = vr_net_key_parse(as_key, NULL);
	} else {
		k = g_new0(VrNetKey, 1);
		k->hosts = g_ptr_array_new_with_free_func(g_free);
		k->places = 0;
	}
	g_free(k->spec);
	g_free(k->name);
	k->spec = g_strdup(d->spec);
	/* The sentinel's HMAC takes the name: stable for the same file and field. */
	k->name = g_strdup_printf("file:%s:%s", real, d->field);
	return k;
}

/* PATH (taken) into OUT once. */
static void add_path(GPtrArray *out, char *path)
{
	if (g_ptr_array_find_with_equal_func(out, path, g_str_equal, NULL))
		g_free(path);
	else
		g_ptr_array_add(out, path);
}

/* Adds the key of DECL whose value is VALUE (taken). */
static gboolean add_value(VrRunKeyFiles *kf, VrNetKeys *keys, const Decl *d, char *value, char *real,
                          const guint8 *secret, gsize secret_len, GError **error)
{
	g_autoptr(VrNetKey) k = decl_key(d, real);
	g_autoptr(GError) e = NULL;
	gboolean ok = vr_net_key_set_value(k, secret, secret_len, value, &e);
	vr_net_secret_free(value);
	if (!ok) {
		/* Not a key (too short, a byte no header carries: a local
		 * model's "ollama"): as it is, like a profile's environment key. */
		vr_warning("[keys] file '%s': %s; left as it is", d->spec, e->message);
		g_free(real);
		return TRUE;
	}
	vr_keymask_add_pair(kf->mask, k->value, k->sentinel);
	add_path(kf->paths, real);
	vr_net_keys_add(keys, g_steal_pointer(&k));
	return TRUE;
}

static gboolean collect(VrRunKeyFiles *kf, GArray *decls, int in, VrNetKeys *keys, VrKeyFilesSecretFn get_secret,
                        GError **error)
{
	guint8 secret[VR_NET_KEY_SECRET_SIZE];
	gboolean have = FALSE, ok = TRUE;
	while (ok) {
		guint32 idx = 0;
		if (vr_read_all(in, &idx, sizeof idx) != (ssize_t)sizeof idx || idx >= decls->len)
			break;
		char *value = read_string(in, VR_NET_KEY_MAX_LENGTH);
		char *real = value ? read_string(in, 4096) : NULL;
		if (!real) {
			vr_net_secret_free(value);
			break;
		}
		/* The secret is made or read only when some file holds a value. */
		if (!have && !(have = get_secret(secret, error))) {
			vr_net_secret_free(value);
			g_free(real);
			ok = FALSE;
			break;
		}
		ok = add_value(kf, keys, &g_array_index(decls, Decl, idx), value, real, secret, sizeof secret, error);
	}
	explicit_bzero(secret, sizeof secret);
	return ok;
}

/* PATH's names as key paths, into OUT: its directory's symlinks resolved,
 * the last name as it is (the name a view serves: nothing but a regular
 * file may come there, so the agent plants no symlink at it), and, when
 * that name is a symlink (stow links files one by one), the file it leads
 * to as well (the name another bind would serve it under). */
static void add_declared(GPtrArray *out, const char *path)
{
	g_autofree char *dir = g_path_get_dirname(path), *base = g_path_get_basename(path);
	g_autofree char *rdir = realpath(dir, NULL);
	add_path(out, rdir ? g_build_filename(rdir, base, NULL) : g_strdup(path));
	char *target = realpath(path, NULL);
	if (target)
		add_path(out, target);
}

VrRunKeyFiles *vr_run_keyfiles_load(GPtrArray *specs, VrNetKeys *keys, VrKeyFilesSecretFn get_secret,
                                     GError **error)
{
	g_autoptr(VrRunKeyFiles) kf = g_new0(VrRunKeyFiles, 1);
	kf->paths = g_ptr_array_new_with_free_func(g_free);
	kf->mask = vr_keymask_new();
	g_autoptr(GArray) decls = g_array_new(FALSE, TRUE, sizeof(Decl));
	g_array_set_clear_func(decls, (GDestroyNotify)decl_clear);
	for (guint i = 0; specs && i < specs->len; i++) {
		Decl d;
		if (!decl_parse(specs->pdata[i], &d, error))
			return NULL;
		g_array_append_val(decls, d);
		add_declared(kf->paths, d.path);
	}
	if (!decls->len)
		return g_steal_pointer(&kf);
	int p[2];
	if (pipe2(p, O_CLOEXEC) < 0) {
		g_set_error(error, VR_PLAN_ERROR, VR_PLAN_ERROR_BAD_VALUE, "[keys] file: pipe: %s", g_strerror(errno));
		return NULL;
	}
	/* The reader keeps the supervisor's blocked mask: a ^C during start-up
	 * is the supervisor's to handle, not a dead reader's error. */
	pid_t pid = vr_fork_helper_flags(SIGKILL, 1, VR_FORK_KEEP_SIGMASK);
	if (pid == 0) {
		close(p[0]);
		child_read(decls, p[1]);
	}
	close(p[1]);
	gboolean ok = pid > 0 && collect(kf, decls, p[0], keys, get_secret, error);
	close(p[0]);
	if (pid > 0)
		waitpid(pid, NULL, 0);
	if (!ok && error && !*error)
		g_set_error(error, VR_PLAN_ERROR, VR_PLAN_ERROR_BAD_VALUE, "[keys] file: fork: %s", g_strerror(errno));
	return ok ? g_steal_pointer(&kf) : NULL;
}

void vr_run_keyfiles_free(VrRunKeyFiles *kf)
{
	if (!kf)
		return;
	g_ptr_array_unref(kf->paths);
	vr_keymask_free(kf->mask);
	g_free(kf);
}

const GPtrArray *vr_run_keyfiles_paths(const VrRunKeyFiles *kf)
{
	return kf ? kf->paths : NULL;
}

void vr_run_keyfiles_forget(VrRunKeyFiles *kf)
{
	if (!kf)
		return;
	g_clear_pointer(&kf->mask, vr_keymask_free);
}

/* The key paths of ROOT's view into M: every declared one, also those
 * that gave no value. A file with no value at the start (a
 * logged-out harness's, or none yet) is a key path too, so that what the
 * host puts there during the run (a login on the host) is refused inside,
 * never served: the view knows only what it found at its start. */
static void add_view_paths(VrKeyMask *m, const GPtrArray *paths, const char *root)
{
	size_t n = strlen(root);
	for (guint i = 0; i < paths->len; i++) {
		const char *p = paths->pdata[i];
		if (strncmp(p, root, n) == 0 && p[n] == '/' && p[n + 1])
			vr_keymask_add_path(m, p + n + 1);
	}
}

int vr_run_keyfiles_view_fd(const VrRunKeyFiles *kf, const char *root)
{
	if (!kf || !kf->mask)
		return -1;
	g_autoptr(VrKeyMask) m = vr_keymask_copy(kf->mask); /* a value may sit in any of the files */
	add_view_paths(m, kf->paths, root);
	if (!vr_keymask_paths(m)->len)
		return -1;
	int fd = memfd_create("vault-run-keyfiles", MFD_CLOEXEC | MFD_ALLOW_SEALING);
	int r = fd < 0 ? -errno : vr_keymask_write(m, fd);
	if (r >= 0 && fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE | F_SEAL_SEAL) < 0)
		r = -errno;
	if (r < 0) {
		if (fd >= 0)
			close(fd);
		vr_log_errno(-r, "cannot hand the key files' values to the view of %s", root);
		return -1;
	}
	return fd;
}
