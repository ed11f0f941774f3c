/* One door (DESIGN.md invariant 10, docs/SECURITY.md): every host directory
 * the agent can write reaches it through a view with the run's policy and
 * its audit log. The project has its own view (run/supervisor.c); this module
 * decides the others — a profile's or a worktree's guarded directories and
 * every writable --bind — and how the sandbox takes each bind from them.
 *
 * Each of these views runs in a daemon with a mount namespace of its own,
 * mounted there on /tmp, so nothing it shows covers a path of the
 * supervisor's namespace (a view of a file's parent would cover the parent).
 * The supervisor clones that mount out of the daemon's namespace
 * (open_tree) once it is mounted, and the sandbox attaches the clone under
 * its base tmpfs (VR_OP_ATTACH) and binds from there (VR_BIND_STAGED). */
#pragma once
#include <glib.h>
#include <sys/types.h>

#include "run/plan.h"
#include "policy/config.h"
#include "policy/policy.h"

typedef struct {
	char *root;          /* the real host directory the view serves */
	char *only;          /* a file view: the one name of root it shows; NULL: all of root */
	GPtrArray *readonly; /* read-only patterns of its own, relative to root (profile, worktree) */
	char *source;        /* who asked for it, the source of those rules: "profile claude", "--bind" */
	char *label;         /* the host path of what it serves (root, or root/only) */
	gboolean guarded;    /* a profile's or a worktree's directory (their harness or git reads its own
	                      * credentials there: no content scanning) */
	gboolean pruned;     /* a --bind inside another view: served by that one */
	VrPolicy *policy;    /* vr_views_build_policies */
	int root_fd;         /* O_PATH of root, opened before any view is mounted; -1 */
	int index;           /* its staging path in the sandbox is /views/INDEX */
	pid_t pid;           /* its daemon, or -1 */
	int ready_fd;        /* the daemon's start-up lines, or -1 */
	int tree_fd;         /* its mount cloned out of the daemon's namespace, or -1 */
	guint attach_op;     /* the index of its VR_OP_ATTACH in the run's op list */
} VrExtraView;

typedef struct {
	char *project;       /* the real project directory */
	GPtrArray *views;    /* VrExtraView *, the live ones in start order */
	GPtrArray *protected; /* char *: "C|O\nPATH\nWHAT" of vault-run's own (C: only containing it counts) */
	GPtrArray *keys;     /* char *: the real paths of the run's key files (vr_views_set_key_files) */
} VrViews;

/* Where a daemon mounts its view, in its own mount namespace. */
#define VR_VIEWS_MOUNTPOINT "/tmp"

VrViews *vr_views_new(const char *project);
void vr_views_free(VrViews *v);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(VrViews, vr_views_free)

/* A profile's or worktree's directory (followed to its real path: a
 * symlinked ~/.claude is guarded where it really is). A directory that is
 * missing is skipped; one inside the project is the project view's. */
gboolean vr_views_add_guarded(VrViews *v, const VrGuardedDir *g, GError **error);
/* SRC, a bind's source, resolved on the host (realpath) into *ret_real
 * (g_free). Refused (an error naming SRC) when a symlink inside the
 * project leads out of it: the agent makes those, and nothing the project
 * holds may open a host path the user did not name (DESIGN.md invariant
 * 10). FALSE without an error: a missing source of a VR_BIND_TRY bind. */
gboolean vr_views_resolve_source(const VrViews *v, const char *src, int flags, char **ret_real,
                                 GError **error);
/* A writable --bind/--bind-try (or a config `bind`) of SRC: a directory
 * becomes a view of its own, unless it is inside another one. Refused
 * (VR_PLAN_ERROR_BAD_VALUE, the message names SRC and why) when it is or
 * contains the project or another guarded view. */
gboolean vr_views_add_bind(VrViews *v, const char *src, int flags, GError **error);
/* PATH (WHAT names it in messages) is vault-run's own — its state
 * directory with the audit logs, its config directory, the --audit file: a
 * writable bind that contains it (or, unless ONLY_CONTAINING, lies inside
 * it) is refused. Call before vr_views_add_bind. */
void vr_views_protect(VrViews *v, const char *path, const char *what, gboolean only_containing);
/* The real paths of the run's key files (docs/network.md "Keys in files"):
 * a read-only bind that is or holds one goes through a view too, which
 * serves it masked (vr_views_add_ro_bind). Call before any add. */
void vr_views_set_key_files(VrViews *v, const GPtrArray *paths);
/* A read-only --ro-bind/--ro-bind-try (or a config `ro-bind`, or a
 * profile's read-only path) of SRC that is or holds a key file: a
 * directory becomes a view of its own (read-only in the sandbox), unless
 * it is inside another one. Refused (the message names SRC, the key file
 * and what to bind instead) when it holds the project or a guarded view,
 * whose key files only that view may serve. Nothing for any other bind:
 * it stays a plain read-only bind (vr_views_ro_keyed). */
gboolean vr_views_add_ro_bind(VrViews *v, const char *src, int flags, GError **error);
/* SRC (a read-only bind's source, already resolved) is or holds a key
 * file: it is routed through a view (vr_views_route) and bound read-only. */
gboolean vr_views_ro_keyed(const VrViews *v, const char *real);
/* After vr_views_prune: a key file inside the project that no other view
 * serves would be served raw by the project's view (which holds no key
 * file's values): refused, naming it. */
gboolean vr_views_check_key_files(VrViews *v, GError **error);
/* After every add: --bind views inside others are served by those. */
void vr_views_prune(VrViews *v);

/* How the sandbox binds SRC (a writable bind, FLAGS VR_BIND_*): into
 * *ret_src and *ret_flags (g_free the path). A staged path of a view; the path
 * itself when it is in the project (the project's view is mounted there
 * in our namespace); a socket or FIFO read-only as it is (a view cannot
 * connect a socket; read-only does not stop connecting or writing to
 * them). FALSE with *ret_src NULL: a missing --bind-try source, skipped.
 * FALSE with an error: refused. A regular file outside every view gets a
 * view of its parent that shows only that name. */
gboolean vr_views_route(VrViews *v, const char *src, int flags, char **ret_src, int *ret_flags, GError **error);

/* A file the run serves through a file view of its own whatever holds it
 * (a per-run copy in the state directory, run/copy.h), with no content
 * scan (the harness's own state): *ret_src and *ret_flags as for
 * vr_views_route. FALSE: refused (error set). */
gboolean vr_views_route_own_file(VrViews *v, const char *path, char **ret_src, int *ret_flags, GError **error);

/* Each view's policy: POLICY's rules (built-ins, user config, --policy,
 * the command line; not the project's .vault-run, which speaks of the
 * project's paths) relative to the view's root, after its own read-only
 * patterns; a file view hides every other name first. */
gboolean vr_views_build_policies(VrViews *v, const VrPolicy *policy, GError **error);

/* What a view's records say as "root", and messages: its host directory. */
const char *vr_views_label(const VrExtraView *e);
/* The staging path /views/INDEX of a view, for its VR_OP_ATTACH. */
char *vr_views_stage(const VrExtraView *e);

/* Clones the view mounted at VR_VIEWS_MOUNTPOINT in the mount namespace of
 * DAEMON into a detached mount (open_tree), entering that namespace for the
 * call and coming back (the supervisor is single-threaded; its working
 * directory is restored). 0 or -errno (logged). */
int vr_views_clone_tree(pid_t daemon, const char *what, int *ret_fd);
/* In a view daemon's child, before vr_view_run: a mount namespace of its
 * own, where nothing propagates either way. 0 or -errno. */
int vr_views_enter_own_mount_ns(void);

/* --project ~ (DESIGN.md invariant 9): a project that is or holds HOME (a
 * real path; NULL or "/" when there is none) is refused unless ALLOW
 * (--allow-home-project): a home's autostart has no end (.bashrc, .profile,
 * .config/autostart, ~/bin in PATH…). Allowed, every top-level dot entry of
 * the home and its bin/ become read-only in POLICY, combined by strictness
 * (what is hidden stays hidden); the profile's state directories there stay
 * writable through views of their own. */
gboolean vr_views_check_home(VrPolicy *policy, const char *project, const char *home, gboolean allow,
                             GError **error);
