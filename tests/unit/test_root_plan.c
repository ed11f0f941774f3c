/* The sandbox's root plan (run/root-plan.c): the mount list a run hands the
 * sandbox, checked as a list instead of by grepping --dry-run. Every case
 * builds a plan the way the supervisor does (a VrRunPlan, the config, the
 * agent's identity) over a scratch tree:
 *
 *     T/project        the project (mounted at /work/p inside)
 *     T/outside/       a directory outside it, with a file and a socket
 *     T/rootfs/        a --rootfs: usr/, lib -> usr/lib, proc/ (skipped)
 *     T/state, T/config  XDG_STATE_HOME / XDG_CONFIG_HOME (vault-run's own) */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <glib.h>
#include <glib/gstdio.h>

#include "policy/config.h"
#include "run/copy.h"
#include "run/root-plan.h"
#include "run/views.h"

#define AGENT 4123456 /* an id no passwd or group file holds */

static char *T, *project, *outside;

static char *path(const char *rel)
{
	return g_build_filename(T, rel, NULL);
}

static void write_file(const char *rel, const char *content)
{
	g_autofree char *p = path(rel);
	assert_true(g_file_set_contents(p, content, -1, NULL));
}

static int setup(void **state)
{
	T = g_dir_make_tmp("vr-root-plan-XXXXXX", NULL);
	if (!T)
		return -1;
	project = path("project");
	outside = path("outside");
	const char *dirs[] = {"project", "project/src", "outside", "outside/sub", "rootfs", "rootfs/usr",
	                      "rootfs/usr/lib", "rootfs/proc", "rootfs/etc", "state", "config"};
	for (size_t i = 0; i < G_N_ELEMENTS(dirs); i++) {
		g_autofree char *d = path(dirs[i]);
		assert_int_equal(g_mkdir(d, 0700), 0);
	}
	write_file("outside/notes.txt", "n\n");
	write_file("outside/state.json", "{\"n\":1}\n");
	g_autofree char *lib = path("rootfs/lib");
	assert_int_equal(symlink("usr/lib", lib), 0);
	/* A socket: a view cannot connect one, so it is bound read-only as is. */
	g_autofree char *sock = path("outside/agent.sock");
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	g_strlcpy(sa.sun_path, sock, sizeof sa.sun_path);
	int s = socket(AF_UNIX, SOCK_STREAM, 0);
	assert_int_equal(bind(s, (struct sockaddr *)&sa, sizeof sa), 0);
	close(s);
	g_autofree char *st = path("state"), *cf = path("config");
	g_setenv("XDG_STATE_HOME", st, TRUE);
	g_setenv("XDG_CONFIG_HOME", cf, TRUE);
	return 0;
}

static int teardown(void **state)
{
	g_autofree char *cmd = g_strdup_printf("rm -rf '%s'", T);
	assert_int_equal(system(cmd), 0);
	g_free(project);
	g_free(outside);
	g_free(T);
	return 0;
}

/* One run's inputs and what it made. */
typedef struct {
	VrRunPlan *plan;
	VrConfig *config;
	VrRootInput in;
	VrRootPlan root;
	VrViews *views;
	VrRunCopies copies;
	GError *error;
} Case;

static void case_init(Case *c)
{
	memset(c, 0, sizeof *c);
	c->plan = vr_run_plan_new();
	c->config = vr_config_new();
	c->in = (VrRootInput){.plan = c->plan, .config = c->config, .project = project, .mount_at = "/work/p",
	                      .agent_uid = AGENT, .agent_gid = AGENT, .user = "agent", .home = "/home/agent"};
	c->copies.lock_fd = -1;
}

static void case_clear(Case *c)
{
	vr_root_plan_clear(&c->root);
	vr_views_free(c->views);
	vr_run_copies_clear(&c->copies);
	vr_config_free(c->config);
	vr_run_plan_free(c->plan);
	g_clear_error(&c->error);
}

static void mount_op(Case *c, VrOpKind kind, const char *src, const char *dest, int flags)
{
	VrUserMount m = {kind, g_strdup(src), g_strdup(dest), flags};
	g_array_append_val(c->plan->mounts, m);
}

static gboolean build(Case *c)
{
	vr_root_plan_init(&c->root);
	c->views = vr_views_new(project);
	return vr_root_plan_build(&c->root, &c->in, c->views, &c->error);
}

static void build_ok(Case *c)
{
	if (!build(c))
		fail_msg("refused: %s", c->error->message);
}

/* The index of the op at DEST (the last one: later ops win), or -1. */
static int find(const Case *c, const char *dest)
{
	for (guint i = c->root.ops->len; i-- > 0;)
		if (strcmp(g_array_index(c->root.ops, VrSandboxOp, i).dest, dest) == 0)
			return (int)i;
	return -1;
}

static const VrSandboxOp *op_at(const Case *c, const char *dest)
{
	int i = find(c, dest);
	if (i < 0)
		fail_msg("no op at %s", dest);
	return &g_array_index(c->root.ops, VrSandboxOp, i);
}

static void assert_op(const Case *c, const char *dest, VrOpKind kind, const char *src, int flags)
{
	const VrSandboxOp *op = op_at(c, dest);
	assert_int_equal(op->kind, kind);
	if (src)
		assert_string_equal(op->src, src);
	else
		assert_null(op->src);
	assert_int_equal(op->flags, flags);
}

static void system_dirs_from_the_host(void **state)
{
	Case c;
	case_init(&c);
	build_ok(&c);
	const char *top[] = {"/usr", "/bin", "/sbin", "/lib", "/lib64"};
	for (size_t i = 0; i < G_N_ELEMENTS(top); i++) {
		struct stat st;
		if (lstat(top[i], &st) < 0) {
			assert_int_equal(find(&c, top[i]), -1);
			continue;
		}
		if (S_ISLNK(st.st_mode)) {
			g_autofree char *target = g_file_read_link(top[i], NULL);
			assert_op(&c, top[i], VR_OP_SYMLINK, target, 0); /* usrmerge: /bin -> usr/bin */
		} else {
			assert_op(&c, top[i], VR_OP_BIND, top[i], VR_BIND_RO);
		}
	}
	/* The system first: nothing the plan adds comes before /usr. */
	assert_true(find(&c, "/usr") < find(&c, "/proc"));
	case_clear(&c);
}

static void etc_is_a_short_list(void **state)
{
	Case c;
	case_init(&c);
	build_ok(&c);
	char real[4096];
	if (realpath("/etc/hosts", real))
		assert_op(&c, "/etc/hosts", VR_OP_BIND, real, VR_BIND_RO); /* symlinks resolved on the host */
	/* Never the secrets of the host. */
	assert_int_equal(find(&c, "/etc/shadow"), -1);
	assert_int_equal(find(&c, "/etc/ssh"), -1);
	assert_int_equal(find(&c, "/etc/machine-id"), -1);
	/* An agent the host's passwd does not know gets an entry of its own. */
	const VrSandboxOp *pw = op_at(&c, "/etc/passwd");
	assert_int_equal(pw->kind, VR_OP_FILE);
	assert_non_null(strstr(pw->src, "agent:x:4123456:4123456::/home/agent:/bin/sh\n"));
	assert_non_null(strstr(pw->src, "root:x:0:0:")); /* the host's entries stay */
	const VrSandboxOp *gr = op_at(&c, "/etc/group");
	assert_int_equal(gr->kind, VR_OP_FILE);
	assert_non_null(strstr(gr->src, "agent:x:4123456:\n"));
	case_clear(&c);
	/* One it knows (root): the host's file as it is. */
	case_init(&c);
	c.in.agent_uid = c.in.agent_gid = 0;
	build_ok(&c);
	assert_op(&c, "/etc/passwd", VR_OP_BIND, "/etc/passwd", VR_BIND_RO | VR_BIND_TRY);
	assert_op(&c, "/etc/group", VR_OP_BIND, "/etc/group", VR_BIND_RO | VR_BIND_TRY);
	case_clear(&c);
}

static void base_home_and_project_view(void **state)
{
	Case c;
	case_init(&c);
	g_ptr_array_add(c.config->ro_binds, g_strdup(outside));
	g_ptr_array_add(c.config->ro_binds, g_strdup("/nonexistent-vr-test"));
	build_ok(&c);
	assert_op(&c, "/proc", VR_OP_PROC, NULL, 0);
	assert_op(&c, "/dev", VR_OP_DEV, NULL, 0);
	assert_op(&c, "/tmp", VR_OP_TMPFS, NULL, VR_TMPFS_AGENT);
	assert_int_equal(op_at(&c, "/tmp")->mode, 01777);
	assert_op(&c, "/var/tmp", VR_OP_TMPFS, NULL, VR_TMPFS_AGENT);
	assert_op(&c, "/run", VR_OP_TMPFS, NULL, 0);
	assert_int_equal(op_at(&c, "/run")->mode, 0755);
	/* An empty home of the agent's. */
	assert_op(&c, "/home/agent", VR_OP_TMPFS, NULL, VR_TMPFS_AGENT);
	assert_int_equal(op_at(&c, "/home/agent")->mode, 0700);
	/* The project: its view, never stat'ed (it may not serve yet). */
	assert_op(&c, "/work/p", VR_OP_BIND, project, VR_BIND_DIR);
	assert_true(find(&c, "/home/agent") < find(&c, "/work/p"));
	/* The config's read-only binds, after the project, their sources
	 * resolved on the host and opened without following a link; a
	 * missing one is skipped here. */
	assert_op(&c, outside, VR_OP_BIND, outside, VR_BIND_RO | VR_BIND_TRY | VR_BIND_NOFOLLOW);
	assert_true(find(&c, "/work/p") < find(&c, outside));
	assert_int_equal(find(&c, "/nonexistent-vr-test"), -1);
	assert_int_equal(c.views->views->len, 0);
	case_clear(&c);
	/* A project that holds the home keeps it: no tmpfs over it. */
	case_init(&c);
	c.in.home = "/work/p/me";
	build_ok(&c);
	assert_int_equal(find(&c, "/work/p/me"), -1);
	case_clear(&c);
	case_init(&c);
	c.in.home = "/";
	build_ok(&c);
	assert_int_equal(find(&c, "/"), -1); /* no tmpfs over the whole root */
	case_clear(&c);
}

static void rootfs_replaces_the_system(void **state)
{
	g_autofree char *rootfs = path("rootfs");
	g_autofree char *usr = path("rootfs/usr"), *etc = path("rootfs/etc");
	Case c;
	case_init(&c);
	c.plan->rootfs = g_strdup(rootfs);
	build_ok(&c);
	assert_op(&c, "/usr", VR_OP_BIND, usr, VR_BIND_RO);
	assert_op(&c, "/lib", VR_OP_SYMLINK, "usr/lib", 0);
	assert_op(&c, "/etc", VR_OP_BIND, etc, VR_BIND_RO); /* its own /etc, whole */
	assert_op(&c, "/proc", VR_OP_PROC, NULL, 0);         /* rootfs/proc skipped: a fresh one */
	assert_int_equal(find(&c, "/etc/passwd"), -1);       /* nothing of the host's /etc */
	assert_int_equal(find(&c, "/etc/hosts"), -1);
	case_clear(&c);
	/* bwrap's `--ro-bind DIR /` as the first mount means the same. */
	case_init(&c);
	mount_op(&c, VR_OP_BIND, rootfs, "/", VR_BIND_RO);
	mount_op(&c, VR_OP_TMPFS, NULL, "/scratch", 0);
	build_ok(&c);
	assert_op(&c, "/usr", VR_OP_BIND, usr, VR_BIND_RO);
	assert_int_equal(find(&c, "/"), -1); /* not applied as a mount of its own */
	assert_int_equal(find(&c, "/etc/passwd"), -1);
	assert_op(&c, "/scratch", VR_OP_TMPFS, NULL, VR_TMPFS_AGENT);
	case_clear(&c);
	/* Not as a later mount: then it is a read-only bind like any. */
	case_init(&c);
	mount_op(&c, VR_OP_TMPFS, NULL, "/scratch", 0);
	mount_op(&c, VR_OP_BIND, rootfs, "/", VR_BIND_RO);
	build_ok(&c);
	assert_op(&c, "/", VR_OP_BIND, rootfs, VR_BIND_RO | VR_BIND_NOFOLLOW);
	assert_op(&c, "/usr", VR_OP_BIND, "/usr", VR_BIND_RO);
	case_clear(&c);
	/* A --rootfs that is not a directory is refused, naming it. */
	case_init(&c);
	g_autofree char *file = path("outside/notes.txt");
	c.plan->rootfs = g_strdup(file);
	assert_false(build(&c));
	g_autofree char *want = g_strdup_printf("--rootfs %s: not a directory", file);
	assert_string_equal(c.error->message, want);
	case_clear(&c);
}

static void user_mounts_keep_their_order(void **state)
{
	Case c;
	case_init(&c);
	mount_op(&c, VR_OP_BIND, outside, "/data", VR_BIND_RO);
	mount_op(&c, VR_OP_TMPFS, NULL, "/data/cache", 0);
	mount_op(&c, VR_OP_DIR, NULL, "/data/cache/x", 0);
	mount_op(&c, VR_OP_SYMLINK, "/data", "/d", 0);
	mount_op(&c, VR_OP_BIND, "/nonexistent-vr-test", "/maybe", VR_BIND_RO | VR_BIND_TRY);
	build_ok(&c);
	assert_op(&c, "/data", VR_OP_BIND, outside, VR_BIND_RO | VR_BIND_NOFOLLOW);
	assert_op(&c, "/data/cache", VR_OP_TMPFS, NULL, VR_TMPFS_AGENT);
	assert_int_equal(op_at(&c, "/data/cache")->mode, 0755);
	assert_op(&c, "/data/cache/x", VR_OP_DIR, NULL, 0);
	assert_op(&c, "/d", VR_OP_SYMLINK, "/data", 0);
	/* --ro-bind-try of a missing source: skipped, no op. */
	assert_int_equal(find(&c, "/maybe"), -1);
	assert_true(find(&c, "/work/p") < find(&c, "/data"));
	assert_true(find(&c, "/data") < find(&c, "/data/cache"));
	assert_true(find(&c, "/data/cache") < find(&c, "/data/cache/x"));
	assert_true(find(&c, "/data/cache/x") < find(&c, "/d"));
	assert_int_equal(c.views->views->len, 0); /* nothing writable: no view */
	case_clear(&c);
}

static void writable_binds_go_through_views(void **state)
{
	g_autofree char *notes = path("outside/notes.txt"), *src = path("project/src");
	g_autofree char *sock = path("outside/agent.sock");
	Case c;
	case_init(&c);
	mount_op(&c, VR_OP_BIND, outside, "/data", 0);
	mount_op(&c, VR_OP_BIND, notes, "/notes.txt", 0);
	mount_op(&c, VR_OP_BIND, src, "/src", 0);
	mount_op(&c, VR_OP_BIND, sock, "/agent.sock", 0);
	mount_op(&c, VR_OP_BIND, "/nonexistent-vr-test", "/gone", VR_BIND_TRY);
	build_ok(&c);
	/* One view: the directory; the file inside it is that view's too. */
	assert_int_equal(c.views->views->len, 1);
	const VrExtraView *e = c.views->views->pdata[0];
	assert_string_equal(e->root, outside);
	/* Its attach op comes first of all: the binds take from it. */
	const VrSandboxOp *attach = &g_array_index(c.root.ops, VrSandboxOp, 0);
	assert_int_equal(attach->kind, VR_OP_ATTACH);
	assert_string_equal(attach->dest, "/views/0");
	assert_op(&c, "/data", VR_OP_BIND, "/views/0", VR_BIND_STAGED | VR_BIND_DIR);
	assert_op(&c, "/notes.txt", VR_OP_BIND, "/views/0/notes.txt", VR_BIND_STAGED);
	/* Inside the project: the project's view is mounted there already. */
	assert_op(&c, "/src", VR_OP_BIND, src, VR_BIND_DIR | VR_BIND_NOFOLLOW);
	/* A socket: read-only as it is (a view cannot connect it). */
	assert_op(&c, "/agent.sock", VR_OP_BIND, sock, VR_BIND_RO | VR_BIND_NOFOLLOW);
	/* --bind-try of a missing source: skipped, no op. */
	assert_int_equal(find(&c, "/gone"), -1);
	/* Where the audit log may not be: the project, what is bound, what the views serve. */
	g_autoptr(GArray) u = vr_root_plan_audit_unders(&c.root, c.views, project);
	gboolean has_project = FALSE, has_outside = FALSE, has_sock = FALSE;
	for (guint i = 0; i < u->len; i++) {
		const VrAuditUnder *a = &g_array_index(u, VrAuditUnder, i);
		has_project |= strcmp(a->dir, project) == 0;
		has_outside |= strcmp(a->dir, outside) == 0;
		has_sock |= strcmp(a->dir, sock) == 0;
	}
	assert_true(has_project && has_outside && has_sock);
	case_clear(&c);
}

static void a_file_outside_gets_a_file_view(void **state)
{
	g_autofree char *notes = path("outside/notes.txt");
	Case c;
	case_init(&c);
	mount_op(&c, VR_OP_BIND, notes, "/home/agent/notes.txt", 0);
	build_ok(&c);
	assert_int_equal(c.views->views->len, 1);
	const VrExtraView *e = c.views->views->pdata[0];
	assert_string_equal(e->root, outside);
	assert_string_equal(e->only, "notes.txt"); /* it shows that one name */
	assert_op(&c, "/home/agent/notes.txt", VR_OP_BIND, "/views/0/notes.txt", VR_BIND_STAGED);
	assert_true(find(&c, "/home/agent") < find(&c, "/home/agent/notes.txt"));
	case_clear(&c);
}

static void refused_binds(void **state)
{
	g_autofree char *notes = path("outside/notes.txt");
	Case c;
	/* A missing source, not -try. */
	case_init(&c);
	mount_op(&c, VR_OP_BIND, "/nonexistent-vr-test", "/x", VR_BIND_RO);
	assert_false(build(&c));
	assert_string_equal(c.error->message, "bind source /nonexistent-vr-test: No such file or directory");
	case_clear(&c);
	/* --dev-bind binds device nodes only. */
	case_init(&c);
	mount_op(&c, VR_OP_BIND, notes, "/dev/notes", VR_BIND_DEV);
	assert_false(build(&c));
	assert_true(g_str_has_prefix(c.error->message, "--dev-bind "));
	assert_non_null(strstr(c.error->message, "not a device node"));
	case_clear(&c);
	case_init(&c);
	mount_op(&c, VR_OP_BIND, "/dev/null", "/dev/mine", VR_BIND_DEV);
	build_ok(&c);
	assert_op(&c, "/dev/mine", VR_OP_BIND, "/dev/null", VR_BIND_DEV | VR_BIND_NOFOLLOW);
	case_clear(&c);
	/* A symlink in the project (the agent's) that leads out of it: the
	 * bind would open a host path nobody named (invariant 10). */
	g_autofree char *link = path("project/cache");
	assert_int_equal(symlink(outside, link), 0);
	case_init(&c);
	mount_op(&c, VR_OP_BIND, link, "/cache", VR_BIND_RO);
	assert_false(build(&c));
	assert_non_null(strstr(c.error->message, "leads out of it"));
	case_clear(&c);
	/* One that stays inside is followed: the project's view serves it. */
	assert_int_equal(unlink(link), 0);
	assert_int_equal(symlink("src", link), 0);
	case_init(&c);
	mount_op(&c, VR_OP_BIND, link, "/cache", 0);
	build_ok(&c);
	g_autofree char *src = path("project/src");
	assert_op(&c, "/cache", VR_OP_BIND, src, VR_BIND_DIR | VR_BIND_NOFOLLOW);
	case_clear(&c);
	assert_int_equal(unlink(link), 0);
	/* One door: a writable bind that holds the project is refused. */
	case_init(&c);
	mount_op(&c, VR_OP_BIND, T, "/all", 0);
	assert_false(build(&c));
	assert_non_null(strstr(c.error->message, T));
	case_clear(&c);
	/* … and so is one that holds vault-run's state (the audit logs). */
	case_init(&c);
	g_autofree char *st = path("state");
	mount_op(&c, VR_OP_BIND, st, "/state", 0);
	assert_false(build(&c));
	assert_non_null(strstr(c.error->message, "state directory"));
	case_clear(&c);
}

static void per_run_copies_are_file_views(void **state)
{
	g_autofree char *host = path("outside/state.json");
	Case c;
	case_init(&c);
	VrCopyFile *f = g_new0(VrCopyFile, 1);
	f->path = g_strdup(host);
	f->merge = g_ptr_array_new_with_free_func(g_free);
	g_ptr_array_add(c.plan->copies, f);
	GError *error = NULL;
	assert_true(vr_run_copies_prepare(&c.copies, project, c.plan, &error));
	c.in.copies = &c.copies;
	build_ok(&c);
	/* At the host file's path, from a view of the copy (not of outside/). */
	const VrSandboxOp *op = op_at(&c, host);
	assert_int_equal(op->kind, VR_OP_BIND);
	assert_int_equal(op->flags, VR_BIND_STAGED);
	assert_string_equal(op->src, "/views/0/state.json");
	assert_int_equal(c.views->views->len, 1);
	const VrExtraView *e = c.views->views->pdata[0];
	assert_string_not_equal(e->root, outside);
	assert_true(e->guarded);
	case_clear(&c);
}

/* A read-only bind that is or holds a key file goes through a view, bound
 * read-only from it; one that holds a profile's directory with a key file
 * is refused; one without a key file stays a plain bind. */
static void read_only_binds_of_key_files(void **state)
{
	g_autofree char *key = path("outside/state.json"), *sub = path("outside/sub");
	g_autoptr(GPtrArray) keys = g_ptr_array_new();
	g_ptr_array_add(keys, key);
	Case c;
	case_init(&c);
	c.in.key_files = keys;
	mount_op(&c, VR_OP_BIND, outside, "/data", VR_BIND_RO);
	mount_op(&c, VR_OP_BIND, key, "/state.json", VR_BIND_RO);
	mount_op(&c, VR_OP_BIND, sub, "/sub", VR_BIND_RO);
	build_ok(&c);
	assert_int_equal(c.views->views->len, 1);
	const VrExtraView *e = c.views->views->pdata[0];
	assert_string_equal(e->root, outside);
	assert_op(&c, "/data", VR_OP_BIND, "/views/0", VR_BIND_RO | VR_BIND_STAGED | VR_BIND_DIR);
	assert_op(&c, "/state.json", VR_OP_BIND, "/views/0/state.json", VR_BIND_RO | VR_BIND_STAGED);
	/* No key file below it: plain. */
	assert_op(&c, "/sub", VR_OP_BIND, sub, VR_BIND_RO | VR_BIND_NOFOLLOW);
	case_clear(&c);

	/* The key file's directory is a profile's: a bind above it is refused. */
	case_init(&c);
	c.in.key_files = keys;
	VrGuardedDir *g = g_new0(VrGuardedDir, 1);
	g->dir = g_strdup(outside);
	g->source = g_strdup("profile t");
	g->readonly = g_ptr_array_new_with_free_func(g_free);
	g_ptr_array_add(c.plan->guarded_dirs, g);
	mount_op(&c, VR_OP_BIND, T, "/all", VR_BIND_RO);
	assert_false(build(&c));
	assert_non_null(strstr(c.error->message, "--ro-bind"));
	assert_non_null(strstr(c.error->message, key));
	case_clear(&c);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(system_dirs_from_the_host),
		cmocka_unit_test(etc_is_a_short_list),
		cmocka_unit_test(base_home_and_project_view),
		cmocka_unit_test(rootfs_replaces_the_system),
		cmocka_unit_test(user_mounts_keep_their_order),
		cmocka_unit_test(writable_binds_go_through_views),
		cmocka_unit_test(a_file_outside_gets_a_file_view),
		cmocka_unit_test(refused_binds),
		cmocka_unit_test(per_run_copies_are_file_views),
		cmocka_unit_test(read_only_binds_of_key_files),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
