/* The systemd mechanism of run/cgroup.h, from the cgroup helper's side: each
 * call runs vault-run-systemd (run/cgroup-systemd-main.c), which alone
 * talks D-Bus, and reads its one line. Its own calls time out after 10 s
 * each; the helper's reply timeout (run/cgroup.c) bounds the rest. */
#include "run/cgroup.h"

#include <limits.h>
#include <string.h>

#include "common/proc.h"

#define SYSTEMD_EXECUTABLE "vault-run-systemd"

/* Runs it with ARGS after its path; TRUE when it exits 0. *said: its line
 * (or why it could not run), g_free. */
static gboolean run_systemd(const char *const *args, char **said)
{
	char path[PATH_MAX];
	if (vr_find_helper_executable(SYSTEMD_EXECUTABLE, VR_LIBEXECDIR, path, sizeof path) < 0) {
		*said = g_strdup_printf("the helper " SYSTEMD_EXECUTABLE " is neither at %s nor in " VR_LIBEXECDIR
		                        " (install it with vault-run)",
		                        path);
		return FALSE;
	}
	g_autoptr(GPtrArray) argv = g_ptr_array_new();
	g_ptr_array_add(argv, path);
	for (const char *const *a = args; *a; a++)
		g_ptr_array_add(argv, (char *)*a);
	g_ptr_array_add(argv, NULL);
	g_autofree char *out = NULL;
	g_autoptr(GError) error = NULL;
	int status = 0;
	if (!g_spawn_sync(NULL, (char **)argv->pdata, NULL, G_SPAWN_CHILD_INHERITS_STDIN, NULL, NULL, &out, NULL,
	                  &status, &error)) {
		*said = g_strdup_printf("cannot run %s: %s", path, error->message);
		return FALSE;
	}
	*said = out && *out ? g_strdup(g_strchomp(out)) : NULL;
	return g_spawn_check_wait_status(status, NULL);
}

static void limit_args(char buf[4][G_ASCII_DTOSTR_BUF_SIZE], const VrLimits *l, gboolean host_root)
{
	g_snprintf(buf[0], G_ASCII_DTOSTR_BUF_SIZE, "%d", host_root ? 1 : 0);
	g_snprintf(buf[1], G_ASCII_DTOSTR_BUF_SIZE, "%" G_GUINT64_FORMAT, l->memory);
	g_snprintf(buf[2], G_ASCII_DTOSTR_BUF_SIZE, "%u", l->pids);
	g_ascii_dtostr(buf[3], G_ASCII_DTOSTR_BUF_SIZE, l->cpu);
}

gboolean vr_cgroup_systemd_usable(const VrLimits *want, gboolean host_root, char **detail)
{
	char a[4][G_ASCII_DTOSTR_BUF_SIZE];
	limit_args(a, want, host_root);
	const char *args[] = {"usable", a[0], a[1], a[2], a[3], NULL};
	gboolean ok = run_systemd(args, detail);
	if (!*detail)
		*detail = g_strdup(SYSTEMD_EXECUTABLE " said nothing");
	return ok;
}

gboolean vr_cgroup_systemd_start(const char *name, pid_t pid, const VrLimits *l, gboolean host_root, char **error)
{
	char a[4][G_ASCII_DTOSTR_BUF_SIZE], p[16];
	limit_args(a, l, host_root);
	g_snprintf(p, sizeof p, "%d", (int)pid);
	const char *args[] = {"start", a[0], a[1], a[2], a[3], name, p, NULL};
	g_autofree char *said = NULL;
	if (run_systemd(args, &said))
		return TRUE;
	*error = said ? g_steal_pointer(&said) : g_strdup_printf("systemd could not start the scope %s", name);
	return FALSE;
}

void vr_cgroup_systemd_stop(const char *name, gboolean host_root)
{
	const char *args[] = {"stop", host_root ? "1" : "0", name, NULL};
	g_autofree char *said = NULL;
	run_systemd(args, &said);
}
