/* The systemd mechanism of run/cgroup.h: a transient scope around the sandbox's
 * pid 1, asked of the systemd manager over D-Bus (the user's manager on the
 * session bus; the system manager when host root), with MemoryMax,
 * MemorySwapMax=0, TasksMax and CPUQuotaPerSecUSec. The scope is collected
 * by systemd when its processes are gone, even if we are killed. Only the
 * executable vault-run-systemd (run/cgroup-systemd-main.c) links this, and
 * with it GIO: loading GIO cost every run of vault-run ~1.7 ms
 * (docs/PERFORMANCE.md "Start-up"). */
#include "run/cgroup-systemd.h"

#include "run/cgroup.h"

#include <gio/gio.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#define SYSTEMD "org.freedesktop.systemd1"
#define MANAGER_PATH "/org/freedesktop/systemd1"
#define MANAGER "org.freedesktop.systemd1.Manager"
#define TIMEOUT_MS 10000

/* A private connection to the manager's bus, or NULL and why. Never
 * autolaunches a bus. */
static GDBusConnection *connect_bus(gboolean host_root, char **why)
{
	g_autofree char *address = NULL;
	if (host_root) {
		if (access("/run/systemd/system", F_OK) < 0) {
			*why = g_strdup("systemd is not the init system here");
			return NULL;
		}
		address = g_strdup("unix:path=/run/dbus/system_bus_socket");
	} else if (g_getenv("DBUS_SESSION_BUS_ADDRESS")) {
		address = g_strdup(g_getenv("DBUS_SESSION_BUS_ADDRESS"));
	} else {
		const char *run = g_getenv("XDG_RUNTIME_DIR");
		g_autofree char *path = run ? g_build_filename(run, "bus", NULL) : NULL;
		if (!path || access(path, F_OK) < 0) {
			*why = g_strdup("no systemd user session (no DBUS_SESSION_BUS_ADDRESS, no $XDG_RUNTIME_DIR/bus)");
			return NULL;
		}
		address = g_strconcat("unix:path=", path, NULL);
	}
	g_autoptr(GError) error = NULL;
	GDBusConnection *bus = g_dbus_connection_new_for_address_sync(
		address, G_DBUS_CONNECTION_FLAGS_AUTHENTICATION_CLIENT | G_DBUS_CONNECTION_FLAGS_MESSAGE_BUS_CONNECTION,
		NULL, NULL, &error);
	if (!bus)
		*why = g_strdup_printf("cannot reach the %s bus: %s", host_root ? "system" : "user", error->message);
	return bus;
}

gboolean vr_systemd_scope_usable(const VrLimits *want, gboolean host_root, char **detail)
{
	g_autoptr(GDBusConnection) bus = connect_bus(host_root, detail);
	if (!bus)
		return FALSE;
	g_autoptr(GError) error = NULL;
	g_autoptr(GVariant) r = g_dbus_connection_call_sync(
		bus, SYSTEMD, MANAGER_PATH, "org.freedesktop.DBus.Properties", "Get",
		g_variant_new("(ss)", MANAGER, "ControlGroup"), G_VARIANT_TYPE("(v)"), G_DBUS_CALL_FLAGS_NONE,
		TIMEOUT_MS, NULL, &error);
	if (!r) {
		*detail = g_strdup_printf("no systemd manager answers on the %s bus (%s)", host_root ? "system" : "user",
		                          error->message);
		return FALSE;
	}
	g_autoptr(GVariant) v = NULL;
	g_variant_get(r, "(v)", &v);
	const char *cg = g_variant_is_of_type(v, G_VARIANT_TYPE_STRING) ? g_variant_get_string(v, NULL) : "";
	/* The controllers the manager may hand out: those offered to its cgroup. */
	g_autofree char *mount = vr_cgroup_v2_mount();
	g_autofree char *path = mount ? g_build_filename(mount, cg, "cgroup.controllers", NULL) : NULL;
	g_autofree char *offered = NULL;
	if (!path || !g_file_get_contents(path, &offered, NULL, NULL)) {
		*detail = g_strdup_printf("the systemd manager's cgroup %s is not on a cgroup v2 hierarchy", cg);
		return FALSE;
	}
	g_auto(GStrv) have = g_strsplit_set(g_strstrip(offered), " ", -1);
	const char *need[] = {want->memory ? "memory" : NULL, want->pids ? "pids" : NULL, want->cpu > 0 ? "cpu" : NULL};
	for (int i = 0; i < 3; i++) {
		if (need[i] && !g_strv_contains((const char *const *)have, need[i])) {
			*detail = g_strdup_printf("the systemd %s manager has no %s controller delegated (%s)",
			                          host_root ? "system" : "user", need[i], path);
			return FALSE;
		}
	}
	*detail = g_strdup_printf("a transient scope of the systemd %s manager", host_root ? "system" : "user");
	return TRUE;
}

typedef struct {
	GHashTable *done; /* job path → result, as JobRemoved reports them */
} Jobs;

static void on_job_removed(GDBusConnection *c, const char *sender, const char *path, const char *iface,
                           const char *signal, GVariant *params, gpointer data)
{
	(void)c, (void)sender, (void)path, (void)iface, (void)signal;
	Jobs *jobs = data;
	guint32 id;
	const char *job, *unit, *result;
	g_variant_get(params, "(u&o&s&s)", &id, &job, &unit, &result);
	g_hash_table_insert(jobs->done, g_strdup(job), g_strdup(result));
}

static gboolean timed_out(gpointer data)
{
	*(gboolean *)data = TRUE;
	return G_SOURCE_REMOVE;
}

gboolean vr_systemd_scope_start(const char *name, pid_t pid, const VrLimits *l, gboolean host_root, char **error)
{
	g_autoptr(GDBusConnection) bus = connect_bus(host_root, error);
	if (!bus)
		return FALSE;
	Jobs jobs = {g_hash_table_new_full(g_str_hash, g_str_equal, g_free, g_free)};
	guint sub = g_dbus_connection_signal_subscribe(bus, SYSTEMD, MANAGER, "JobRemoved", MANAGER_PATH, NULL,
	                                               G_DBUS_SIGNAL_FLAGS_NONE, on_job_removed, &jobs, NULL);
	GVariantBuilder props;
	g_variant_builder_init(&props, G_VARIANT_TYPE("a(sv)"));
	g_variant_builder_add(&props, "(sv)", "Description", g_variant_new_string("vault-run sandbox"));
	guint32 pids[] = {(guint32)pid};
	g_variant_builder_add(&props, "(sv)", "PIDs",
	                      g_variant_new_fixed_array(G_VARIANT_TYPE_UINT32, pids, 1, sizeof pids[0]));
	g_variant_builder_add(&props, "(sv)", "Delegate", g_variant_new_boolean(TRUE));
	/* A scope the OOM killer failed is collected too, not kept for inspection. */
	g_variant_builder_add(&props, "(sv)", "CollectMode", g_variant_new_string("inactive-or-failed"));
	if (l->memory) {
		g_variant_builder_add(&props, "(sv)", "MemoryMax", g_variant_new_uint64(l->memory));
		g_variant_builder_add(&props, "(sv)", "MemorySwapMax", g_variant_new_uint64(0));
	}
	if (l->pids)
		g_variant_builder_add(&props, "(sv)", "TasksMax", g_variant_new_uint64(l->pids));
	if (l->cpu > 0)
		g_variant_builder_add(&props, "(sv)", "CPUQuotaPerSecUSec", g_variant_new_uint64((guint64)(l->cpu * 1e6 + 0.5)));
	g_autoptr(GError) err = NULL;
	g_autoptr(GVariant) r = g_dbus_connection_call_sync(
		bus, SYSTEMD, MANAGER_PATH, MANAGER, "StartTransientUnit",
		g_variant_new("(ssa(sv)a(sa(sv)))", name, "fail", &props, NULL), G_VARIANT_TYPE("(o)"),
		G_DBUS_CALL_FLAGS_NONE, TIMEOUT_MS, NULL, &err);
	gboolean ok = FALSE;
	if (!r) {
		*error = g_strdup_printf("systemd refused the scope %s: %s", name, err->message);
	} else {
		const char *job;
		g_variant_get(r, "(&o)", &job);
		gboolean late = FALSE;
		guint timer = g_timeout_add(TIMEOUT_MS, timed_out, &late);
		while (!late && !g_hash_table_contains(jobs.done, job))
			g_main_context_iteration(NULL, TRUE);
		const char *result = g_hash_table_lookup(jobs.done, job);
		if (!late)
			g_source_remove(timer);
		ok = result && strcmp(result, "done") == 0;
		if (!ok)
			*error = g_strdup_printf("systemd could not start the scope %s (%s)", name,
			                         result ? result : "no answer in time");
	}
	g_dbus_connection_signal_unsubscribe(bus, sub);
	g_hash_table_unref(jobs.done);
	return ok;
}

void vr_systemd_scope_stop(const char *name, gboolean host_root)
{
	g_autofree char *why = NULL;
	g_autoptr(GDBusConnection) bus = connect_bus(host_root, &why);
	if (!bus || !g_str_has_suffix(name, ".scope"))
		return;
	/* Usually gone already: systemd stops a scope whose processes ended. */
	GVariant *r = g_dbus_connection_call_sync(bus, SYSTEMD, MANAGER_PATH, MANAGER, "StopUnit",
	                                          g_variant_new("(ss)", name, "replace"), NULL,
	                                          G_DBUS_CALL_FLAGS_NONE, TIMEOUT_MS, NULL, NULL);
	if (r)
		g_variant_unref(r);
}
