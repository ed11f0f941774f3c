/* The sandbox child's contract with the supervisor: a plain, glib-free
 * description of the root to build and the command to run. The supervisor
 * fills it (host-side decisions: which host paths exist, where symlinks
 * point) before clone(); the child after clone only executes it, so it needs
 * no allocation library and can _exit on the first failure. */
#pragma once
#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "common/seccomp-util.h"

typedef enum {
	VR_OP_BIND,     /* src (host path) → dest; flags VR_BIND_* */
	VR_OP_TMPFS,    /* fresh tmpfs at dest, mode, owned by the agent when VR_TMPFS_AGENT */
	VR_OP_DIR,      /* mkdir -p dest */
	VR_OP_SYMLINK,  /* symlink src → dest */
	VR_OP_PROC,     /* fresh /proc at dest; sys, sysrq-trigger, irq, bus read-only */
	VR_OP_DEV,      /* minimal /dev at dest */
	VR_OP_FILE,     /* a file at dest holding src (a string), read-only with the root */
	VR_OP_REMOUNT_RO, /* dest and everything below it read-only */
	VR_OP_ATTACH,   /* fd: a detached view (open_tree); attached at dest, a path of the base tmpfs outside
	                 * the new root, for VR_BIND_STAGED binds to take from; src: what it serves (messages) */
} VrOpKind;

enum {
	VR_BIND_RO = 1 << 0,   /* read-only, applied to every submount */
	VR_BIND_DEV = 1 << 1,  /* keep device nodes usable (--dev-bind) */
	VR_BIND_TRY = 1 << 2,  /* a missing source is skipped */
	VR_TMPFS_AGENT = 1 << 3, /* the tmpfs belongs to the agent's uid/gid */
	VR_BIND_DIR = 1 << 4,  /* the source is a directory: not stat'ed (a view that serves nothing yet) */
	VR_BIND_STAGED = 1 << 5, /* src is below a VR_OP_ATTACH dest (not a host path): never stat'ed, a file
	                          * unless VR_BIND_DIR */
	VR_BIND_NOFOLLOW = 1 << 6, /* src is a real path (no symlink): opened without following any, so a
	                            * link put there since (another run's agent) fails the bind */
};

typedef struct {
	VrOpKind kind;
	const char *src;
	const char *dest;  /* absolute path inside the sandbox */
	int flags;
	unsigned mode;     /* tmpfs/dir mode, 0: default */
	int fd;            /* VR_OP_ATTACH: the detached mount, closed once attached */
} VrSandboxOp;

typedef struct {
	const VrSandboxOp *ops;
	size_t n_ops;
	char *const *argv;        /* COMMAND and its arguments */
	char *const *envp;        /* the environment COMMAND gets */
	const char *cwd;          /* inside the sandbox; falls back to fallback_cwd */
	const char *fallback_cwd;
	const char *hostname;     /* NULL: keep */
	bool net_none;            /* own net ns: bring loopback up */
	bool new_session;         /* setsid() before exec (no controlling terminal) */
	bool allow_userns;        /* do not filter CLONE_NEWUSER */
	bool switch_uid;          /* become agent_uid/agent_gid before exec (host root case) */
	uid_t agent_uid;
	gid_t agent_gid;
	VrSeccompProg seccomp;    /* COMMAND's filter, compiled (vr_sandbox_seccomp_prepare); NULL insns: compile it */
	int sync_fd;              /* one byte before building the root, a second before COMMAND starts
	                           * (the views are ready); EOF = stop without running COMMAND */
} VrSandboxSpec;

/* sandbox/root.c: builds the root from spec->ops under a fresh tmpfs and
 * pivots into it; dies (exit 125) with one line on failure. It touches no
 * file of a VR_BIND_DIR source: the view may not serve yet. */
void vr_sandbox_build_root(const VrSandboxSpec *spec);
/* Then, once the views serve: spec->cwd, else fallback_cwd, else /. */
void vr_sandbox_enter_cwd(const VrSandboxSpec *spec);
/* sandbox/init.c: the entry point of the cloned child (pid 1). Never returns. */
_Noreturn void vr_sandbox_main(const VrSandboxSpec *spec);
/* sandbox/caps.c: drop the bounding set and the ambient set (then
 * vr_drop_all_caps, common/proc.h, every other set). 0 or -errno. */
int vr_sandbox_drop_bounding(void);
/* Every set empty but CAP_KILL in permitted+effective (for pid 1). */
int vr_sandbox_keep_only_kill(void);
/* sandbox/nofile.c: lowers COMMAND's hard RLIMIT_NOFILE to 7/16 of ours
 * (the soft one with it, if above), so one process of the run that opens
 * files until EMFILE cannot take the view daemon's last descriptors.
 * 0 or -errno. */
int vr_sandbox_limit_nofile(void);
/* sandbox/seccomp.c: COMMAND's filter (native + compat ABIs), compiled
 * ahead (in the supervisor), and loaded: spec->seccomp, or compiled now
 * when that is empty. 0 or -errno. */
int vr_sandbox_seccomp_prepare(bool allow_userns, VrSeccompProg *prog);
int vr_sandbox_load_seccomp(const VrSandboxSpec *spec);
/* sandbox/landlock.c: Landlock scopes (abstract unix sockets, signals) where
 * the kernel has ABI >= 6; a no-op before. Needs no_new_privs. 0 or -errno. */
int vr_sandbox_landlock_scope(void);
