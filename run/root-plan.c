/* The sandbox's root as a list of ops: see root-plan.h. */
#include "run/root-plan.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "audit/sinks.h"
#include "audit/state-dir.h"
#include "run/audit.h"

void vr_root_plan_init(VrRootPlan *r)
{
	r->ops = g_array_new(FALSE, TRUE, sizeof(VrSandboxOp));
	r->strings = g_ptr_array_new_with_free_func(g_free);
}

void vr_root_plan_clear(VrRootPlan *r)
{
	g_clear_pointer(&r->ops, g_array_unref);
	g_clear_pointer(&r->strings, g_ptr_array_unref);
}

static const char *keep(VrRootPlan *l, char *s)
{
	g_ptr_array_add(l->strings, s);
	return s;
}

void vr_root_plan_add(VrRootPlan *l, VrOpKind kind, const char *src, const char *dest, int flags, unsigned mode)
{
	VrSandboxOp op = {kind, src ? keep(l, g_strdup(src)) : NULL, keep(l, g_strdup(dest)), flags, mode, -1};
	g_array_append_val(l->ops, op);
}

/* The system part of the root: the host's /usr & co, or another root fs. */
static void add_system(VrRootPlan *l, const char *rootfs)
{
	if (rootfs) {
		g_autoptr(GDir) dir = g_dir_open(rootfs, 0, NULL);
		const char *name;
		while (dir && (name = g_dir_read_name(dir))) {
			if (g_strv_contains((const char *const[]){"proc", "dev", "tmp", "run", "sys", "home", "root", NULL}, name))
				continue;
			g_autofree char *src = g_build_filename(rootfs, name, NULL);
			g_autofree char *dest = g_strconcat("/", name, NULL);
			g_autofree char *target = g_file_read_link(src, NULL);
			if (target)
				vr_root_plan_add(l, VR_OP_SYMLINK, target, dest, 0, 0);
			else
				vr_root_plan_add(l, VR_OP_BIND, src, dest, VR_BIND_RO, 0);
		}
		return;
	}
	static const char *const top[] = {"/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", NULL};
	for (const char *const *p = top; *p; p++) {
		struct stat st;
		if (lstat(*p, &st) < 0)
			continue;
		if (S_ISLNK(st.st_mode)) {
			g_autofree char *target = g_file_read_link(*p, NULL);
			if (target)
				vr_root_plan_add(l, VR_OP_SYMLINK, target, *p, 0, 0);
		} else {
			vr_root_plan_add(l, VR_OP_BIND, *p, *p, VR_BIND_RO, 0);
		}
	}
}

/* Whether FILE (passwd/group format) has an entry whose third field is id. */
static gboolean db_has_id(const char *file, unsigned id)
{
	g_autofree char *data = NULL;
	if (!g_file_get_contents(file, &data, NULL, NULL))
		return FALSE;
	g_auto(GStrv) lines = g_strsplit(data, "\n", -1);
	for (int i = 0; lines[i]; i++) {
		g_auto(GStrv) f = g_strsplit(lines[i], ":", 4);
		if (g_strv_length(f) >= 3 && strtoul(f[2], NULL, 10) == id && f[2][0])
			return TRUE;
	}
	return FALSE;
}

/* /etc: what programs need to run, resolve names and verify TLS, and no
 * more (no shadow, no ssh config, no machine-id). Symlinks are resolved
 * here, on the host: /etc/resolv.conf often points into /run, which the
 * sandbox replaces with an empty tmpfs. */
static void add_etc(VrRootPlan *l, uid_t uid, gid_t gid, const char *user, const char *home)
{
	static const char *const etc[] = {
		"hosts", "host.conf", "resolv.conf", "nsswitch.conf", "gai.conf", "services", "protocols",
		"ssl", "ca-certificates", "ca-certificates.conf", "pki", "crypto-policies", "localtime",
		"timezone", "alternatives", "ld.so.cache", "ld.so.conf", "ld.so.conf.d", "os-release",
		"bash.bashrc", "inputrc", "profile", "shells", "mime.types", "gitconfig", "papersize",
		"locale.alias", "locale.conf", "default/locale", NULL,
	};
	for (const char *const *p = etc; *p; p++) {
		g_autofree char *host = g_strconcat("/etc/", *p, NULL);
		char real[PATH_MAX];
		if (!realpath(host, real))
			continue;
		vr_root_plan_add(l, VR_OP_BIND, real, host, VR_BIND_RO, 0);
	}
	/* passwd/group: the host files, plus an entry for the agent when the
	 * host resolves it elsewhere (SSSD, LDAP), so `id`, git and ssh-less
	 * tools find a name and a home. */
	struct {
		const char *file;
		gboolean has;
		char *extra;
	} db[2] = {
		{"/etc/passwd", db_has_id("/etc/passwd", uid),
		 g_strdup_printf("%s:x:%u:%u::%s:/bin/sh\n", user, (unsigned)uid, (unsigned)gid, home)},
		{"/etc/group", db_has_id("/etc/group", gid), g_strdup_printf("%s:x:%u:\n", user, (unsigned)gid)},
	};
	for (int i = 0; i < 2; i++) {
		if (db[i].has) {
			vr_root_plan_add(l, VR_OP_BIND, db[i].file, db[i].file, VR_BIND_RO | VR_BIND_TRY, 0);
		} else {
			g_autofree char *data = NULL;
			g_file_get_contents(db[i].file, &data, NULL, NULL);
			GString *s = g_string_new(data ? data : "");
			if (s->len && s->str[s->len - 1] != '\n')
				g_string_append_c(s, '\n');
			g_string_append(s, db[i].extra);
			vr_root_plan_add(l, VR_OP_FILE, s->str, db[i].file, 0, 0);
			g_string_free(s, TRUE);
		}
		g_free(db[i].extra);
	}
}

gboolean vr_path_is_under(const char *path, const char *dir)
{
	size_t n = strlen(dir);
	if (strcmp(dir, "/") == 0)
		return TRUE;
	return strncmp(path, dir, n) == 0 && (path[n] == '\0' || path[n] == '/');
}

/* A writable bind goes through a view (run/views.h), a --dev-bind is a
 * device node, a read-only bind that is or holds a key file goes through a
 * view too, anything else is read-only as it is. FALSE: refused (*error
 * set). */
static gboolean add_bind_op(VrRootPlan *l, VrViews *views, const char *given, const char *dest, int flags,
                            GError **error)
{
	g_autoptr(GError) local = NULL;
	g_autofree char *src = NULL;
	if (!vr_views_resolve_source(views, given, flags, &src, &local)) {
		if (!local)
			return TRUE; /* a missing --bind-try source is skipped */
		g_propagate_error(error, g_steal_pointer(&local));
		return FALSE;
	}
	if (flags & VR_BIND_DEV) {
		struct stat st;
		if (stat(src, &st) < 0) {
			if (flags & VR_BIND_TRY)
				return TRUE;
			g_set_error(error, VR_PLAN_ERROR, VR_PLAN_ERROR_BAD_VALUE, "--dev-bind %s: %s", src,
			            g_strerror(errno));
			return FALSE;
		}
		if (!S_ISCHR(st.st_mode) && !S_ISBLK(st.st_mode)) {
			g_set_error(error, VR_PLAN_ERROR, VR_PLAN_ERROR_BAD_VALUE,
			            "--dev-bind %s: not a device node (--dev-bind binds device nodes only, "
			            "--bind a directory or file, --ro-bind what must stay as it is)", src);
			return FALSE;
		}
		vr_root_plan_add(l, VR_OP_BIND, src, dest, flags | VR_BIND_NOFOLLOW, 0);
		return TRUE;
	}
	/* Read-only as it is, unless it is or holds a key file: then
	 * through a view (vr_views_add_ro_bind registered it), which serves
	 * the key file masked, and read-only in the sandbox. */
	if ((flags & VR_BIND_RO) && !vr_views_ro_keyed(views, src)) {
		vr_root_plan_add(l, VR_OP_BIND, src, dest, flags | VR_BIND_NOFOLLOW, 0);
		return TRUE;
	}
	g_autofree char *routed = NULL;
	int routed_flags;
	if (!vr_views_route(views, src, flags, &routed, &routed_flags, &local)) {
		if (!local)
			return TRUE; /* a missing --bind-try source is skipped */
		g_propagate_error(error, g_steal_pointer(&local));
		return FALSE;
	}
	vr_root_plan_add(l, VR_OP_BIND, routed, dest, routed_flags, 0);
	return TRUE;
}

/* The views every writable bind of the run needs, registered before any
 * is routed: guarded directories first, then the binds. FALSE: refused. */
static gboolean plan_views(VrViews *views, const VrRunPlan *plan, const VrConfig *config, guint first_user,
                           GError **error)
{
	/* vault-run's own: the logs, the rules, the --audit file. */
	g_autofree char *state = NULL, *user_config = vr_config_user_path();
	if (vr_state_base_dir(&state) == 0)
		vr_views_protect(views, state, "vault-run's state directory (the audit logs)", FALSE);
	g_autofree char *config_dir = g_path_get_dirname(user_config);
	vr_views_protect(views, config_dir, "vault-run's config directory", FALSE);
	VrAuditSinks sinks = {0};
	const char *list = plan->audit_path ? plan->audit_path : config->audit_path;
	if (list && vr_audit_sinks_parse(list, &sinks, NULL) && sinks.file)
		vr_views_protect(views, sinks.file, "the audit log", TRUE);
	vr_audit_sinks_clear(&sinks);
	for (guint i = 0; plan->guarded_dirs && i < plan->guarded_dirs->len; i++)
		if (!vr_views_add_guarded(views, g_ptr_array_index(plan->guarded_dirs, i), error))
			return FALSE;
	for (guint i = 0; config->rw_binds && i < config->rw_binds->len; i++)
		if (!vr_views_add_bind(views, g_ptr_array_index(config->rw_binds, i), VR_BIND_TRY, error))
			return FALSE;
	for (guint i = first_user; i < plan->mounts->len; i++) {
		const VrUserMount *m = &g_array_index(plan->mounts, VrUserMount, i);
		if (m->kind == VR_OP_BIND && !(m->flags & (VR_BIND_RO | VR_BIND_DEV)) &&
		    !vr_views_add_bind(views, m->src, m->flags, error))
			return FALSE;
	}
	/* Read-only binds that are or hold a key file: views too. */
	for (guint i = 0; config->ro_binds && i < config->ro_binds->len; i++)
		if (!vr_views_add_ro_bind(views, g_ptr_array_index(config->ro_binds, i), VR_BIND_TRY, error))
			return FALSE;
	for (guint i = first_user; i < plan->mounts->len; i++) {
		const VrUserMount *m = &g_array_index(plan->mounts, VrUserMount, i);
		if (m->kind == VR_OP_BIND && (m->flags & VR_BIND_RO) && !(m->flags & VR_BIND_DEV) &&
		    !vr_views_add_ro_bind(views, m->src, m->flags, error))
			return FALSE;
	}
	vr_views_prune(views);
	return vr_views_check_key_files(views, error);
}

/* Each view's attach op, first of all: the binds take from them. */
static void add_attach_ops(VrRootPlan *l, VrViews *views)
{
	for (guint i = 0; i < views->views->len; i++) {
		VrExtraView *e = views->views->pdata[i];
		g_autofree char *stage = vr_views_stage(e);
		VrSandboxOp op = {VR_OP_ATTACH, keep(l, g_strdup(vr_views_label(e))), keep(l, g_strdup(stage)), 0, 0, -1};
		g_array_insert_val(l->ops, i, op);
		e->attach_op = i;
	}
}

/* The system part: --rootfs, else bwrap's `--ro-bind DIR /` as the first
 * mount (*FIRST_USER: the first of the plan's mounts still to apply), else
 * the host's. *RET_ROOTFS: its absolute path, or NULL. */
static gboolean root_fs(const VrRunPlan *plan, char **ret_rootfs, guint *first_user, GError **error)
{
	const char *rootfs = plan->rootfs;
	*first_user = 0;
	if (!rootfs && plan->mounts->len) {
		const VrUserMount *m = &g_array_index(plan->mounts, VrUserMount, 0);
		if (m->kind == VR_OP_BIND && strcmp(m->dest, "/") == 0) {
			rootfs = m->src; /* bwrap's `--ro-bind DIR /` as the first mount */
			*first_user = 1;
		}
	}
	*ret_rootfs = rootfs ? g_canonicalize_filename(rootfs, NULL) : NULL;
	if (*ret_rootfs && !g_file_test(*ret_rootfs, G_FILE_TEST_IS_DIR)) {
		g_set_error(error, VR_PLAN_ERROR, VR_PLAN_ERROR_BAD_VALUE, "--rootfs %s: not a directory", *ret_rootfs);
		return FALSE;
	}
	return TRUE;
}

/* What every root has: /proc, /dev, the tmpfs directories, an empty home
 * (unless the project is the home or holds it), the project's view
 * (mounted over the project in our namespace) and the config's read-only
 * binds. */
static gboolean add_base(VrRootPlan *l, VrViews *views, const VrRootInput *in, GError **error)
{
	vr_root_plan_add(l, VR_OP_PROC, NULL, "/proc", 0, 0);
	vr_root_plan_add(l, VR_OP_DEV, NULL, "/dev", 0, 0);
	vr_root_plan_add(l, VR_OP_TMPFS, NULL, "/tmp", VR_TMPFS_AGENT, 01777);
	vr_root_plan_add(l, VR_OP_TMPFS, NULL, "/var/tmp", VR_TMPFS_AGENT, 01777);
	vr_root_plan_add(l, VR_OP_TMPFS, NULL, "/run", 0, 0755);
	if (strcmp(in->home, "/") != 0 && !vr_path_is_under(in->home, in->mount_at) && strcmp(in->home, "/tmp") != 0)
		vr_root_plan_add(l, VR_OP_TMPFS, NULL, in->home, VR_TMPFS_AGENT, 0700);
	vr_root_plan_add(l, VR_OP_BIND, in->project, in->mount_at, VR_BIND_DIR, 0);
	const GPtrArray *ro = in->config->ro_binds;
	for (guint i = 0; ro && i < ro->len; i++)
		if (!add_bind_op(l, views, ro->pdata[i], ro->pdata[i], VR_BIND_RO | VR_BIND_TRY, error))
			return FALSE;
	return TRUE;
}

/* One door: the config's writable binds, then the command line's mounts
 * in their order, every writable bind through a view (run/views.h). */
static gboolean add_binds(VrRootPlan *l, VrViews *views, const VrRootInput *in, guint first_user, GError **error)
{
	const GPtrArray *rw = in->config->rw_binds;
	for (guint i = 0; rw && i < rw->len; i++)
		if (!add_bind_op(l, views, rw->pdata[i], rw->pdata[i], VR_BIND_TRY, error))
			return FALSE;
	const GArray *mounts = in->plan->mounts;
	for (guint i = first_user; i < mounts->len; i++) {
		const VrUserMount *m = &g_array_index(mounts, VrUserMount, i);
		if (m->kind != VR_OP_BIND) {
			vr_root_plan_add(l, m->kind, m->src, m->dest, m->kind == VR_OP_TMPFS ? VR_TMPFS_AGENT : 0,
			                 m->kind == VR_OP_TMPFS ? 0755 : 0);
			continue;
		}
		g_autofree char *src = g_canonicalize_filename(m->src, NULL);
		if (!(m->flags & VR_BIND_TRY) && access(src, F_OK) < 0) {
			g_set_error(error, VR_PLAN_ERROR, VR_PLAN_ERROR_BAD_VALUE, "bind source %s: %s", src,
			            g_strerror(errno));
			return FALSE;
		}
		if (!add_bind_op(l, views, src, m->dest, m->flags, error))
			return FALSE;
	}
	return TRUE;
}

/* The profile's state files: the run works on copies (run/copy.h), each
 * served by a file view of its own at the host file's path. */
static gboolean add_copies(VrRootPlan *l, VrViews *views, const VrRunCopies *copies, GError **error)
{
	for (guint i = 0; copies && i < vr_run_copies_count(copies); i++) {
		g_autofree char *src = NULL;
		int flags;
		if (!vr_views_route_own_file(views, vr_run_copies_copy_path(copies, i), &src, &flags, error))
			return FALSE;
		vr_root_plan_add(l, VR_OP_BIND, src, vr_run_copies_host_path(copies, i), flags, 0);
	}
	return TRUE;
}

gboolean vr_root_plan_build(VrRootPlan *r, const VrRootInput *in, VrViews *views, GError **error)
{
	g_autofree char *rootfs = NULL;
	guint first_user;
	if (!root_fs(in->plan, &rootfs, &first_user, error))
		return FALSE;
	add_system(r, rootfs);
	if (!rootfs)
		add_etc(r, in->agent_uid, in->agent_gid, in->user, in->home);
	/* The views first: the config's read-only binds (add_base) may take
	 * from one. */
	vr_views_set_key_files(views, in->key_files);
	if (!plan_views(views, in->plan, in->config, first_user, error) || !add_base(r, views, in, error) ||
	    !add_binds(r, views, in, first_user, error) ||
	    !add_copies(r, views, in->copies, error))
		return FALSE;
	add_attach_ops(r, views);
	return vr_views_build_policies(views, in->config->policy, error);
}

void vr_root_plan_print(const VrRootPlan *r)
{
	static const char *const kinds[] = {"bind", "tmpfs", "dir", "symlink", "proc", "dev", "file", "remount-ro", "attach"};
	for (guint i = 0; i < r->ops->len; i++) {
		const VrSandboxOp *op = &g_array_index(r->ops, VrSandboxOp, i);
		if (op->kind == VR_OP_FILE)
			printf("%-10s %s (synthesized)\n", kinds[op->kind], op->dest);
		else
			printf("%-10s %s%s%s%s%s%s\n", kinds[op->kind], op->dest, op->src ? " <- " : "",
			       op->src ? op->src : "", op->flags & VR_BIND_RO ? " ro" : "",
			       op->flags & VR_BIND_TRY ? " try" : "", op->flags & VR_BIND_STAGED ? " (view)" : "");
	}
}

/* Every host path the sandbox binds (the project's view, --ro-bind, the
 * system directories and /etc files) and what the other views serve
 * (writable binds, profile directories; a file view: its one file). */
GArray *vr_root_plan_audit_unders(const VrRootPlan *l, const VrViews *views, const char *project)
{
	static const char why[] = "the agent could read its own audit log there";
	GArray *u = g_array_new(FALSE, FALSE, sizeof(VrAuditUnder));
	VrAuditUnder p = {project, "the project", why};
	g_array_append_val(u, p);
	for (guint i = 0; i < l->ops->len; i++) {
		const VrSandboxOp *op = &g_array_index(l->ops, VrSandboxOp, i);
		if (op->kind != VR_OP_BIND || !op->src || strcmp(op->src, project) == 0)
			continue;
		VrAuditUnder b = {op->src, "a path bound into the sandbox,", why};
		g_array_append_val(u, b);
	}
	for (guint i = 0; i < views->views->len; i++) {
		const VrExtraView *e = views->views->pdata[i];
		VrAuditUnder b = {e->only ? e->label : e->root,
		                  e->guarded ? "a directory the sandbox sees," : "a path bound into the sandbox,", why};
		g_array_append_val(u, b);
	}
	return u;
}
