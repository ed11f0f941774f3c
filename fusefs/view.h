/* fusefs/ — the filtered view of a project (libfuse3 low-level API). */
#pragma once
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include "policy/policy.h"

/* Audit levels, each including the ones before it. */
typedef enum {
	VR_AUDIT_DENIED = 0,
	VR_AUDIT_WRITES = 1,
	VR_AUDIT_READS = 2,  /* default: first read of each file in a run */
	VR_AUDIT_OPENS = 3,
	VR_AUDIT_ALL = 4,
} VrAuditLevel;

/* Parses "denied".."all"; -1 when unknown. */
int vr_audit_level_parse(const char *name);

/* Secrets found by content (policy/scan.h) in files the policy shows. */
typedef enum {
	VR_VIEW_SCAN_OFF = 0,
	VR_VIEW_SCAN_MASK = 1,    /* default: served masked, same length, read-only */
	VR_VIEW_SCAN_REFUSE = 2,  /* opening the file fails with EACCES */
} VrViewScanMode;
#define VR_VIEW_SCAN_MAX_SIZE_DEFAULT (8u << 20)

/* Parses "off", "mask", "refuse"; -1 when unknown. */
int vr_view_scan_mode_parse(const char *name);

typedef struct {
	const char *project;     /* host path of the project directory */
	const char *mountpoint;  /* where to mount; may equal project (mount over it) */
	const char *agent_root;  /* the project's absolute path as the view's users name it (a sandbox's --mount-at),
	                          * against which absolute paths in .git files are read; NULL: the mount point */
	const VrPolicy *policy;
	const char *audit_path;  /* NULL: no log; "-": stderr; "syslog"; else a file (appended) */
	int audit_fd;            /* >= 0: append the log to this fd instead (audit_path only names it in
	                          * messages); fsynced at the end, not closed. -1: use audit_path */
	int audit_dir_fd;        /* with audit_fd: the directory that holds it (O_PATH is enough), so the log
	                          * can be rotated there; not closed. -1: a path's own directory, opened by the view */
	uint64_t audit_max_size; /* rotate the log file before it grows past this; 0: never.
	                          * Default VR_AUDIT_MAX_SIZE_DEFAULT */
	bool audit_fail_open;    /* the file cannot be written: go on, counting lost records (default: stop
	                          * the view, vr_view_audit_failed()) */
	bool audit_keep_mount;   /* on that stop, leave the view mounted but dead (ENOTCONN) rather than
	                          * unmount it: the caller's private mount namespace, where an unmount would
	                          * bare the project under it */
	bool audit_stderr;       /* also write the records to stderr */
	bool audit_syslog;       /* also send them to syslog */
	VrAuditLevel audit_level;
	const char *run_id;      /* NULL: a random id is made */
	double entry_timeout;    /* seconds the kernel caches names (host edits seen after at most this) */
	double attr_timeout;     /* seconds the kernel caches attributes */
	bool allow_other;        /* let other uids of this user namespace in (the sandbox's agent uid) */
	/* When the agent runs under another uid than the daemon (vault-run run as
	 * root: agent is 65534), files owned by the daemon's uid (and ids without
	 * a mapping in its user namespace) are presented as owned by
	 * present_uid/present_gid, and what the agent creates stays the daemon's.
	 * (uid_t)-1: the daemon's own ids (docs/view.md, "Permissions and owners"). */
	uid_t present_uid;
	gid_t present_gid;
	int ready_fd;            /* written "mounted\n" once mounted, "ready\n" once confined with the audit log
	                          * started (nothing is served before), then closed; -1: print a line on stdout */
	int seccomp_fd;          /* >= 0: the daemon's seccomp filter, compiled (BPF until EOF; nothing: compile
	                          * it here), read before confining; vault-run run compiles it while we mount */
	int event_fd;            /* other processes of the run send audit events (one JSON object per datagram); -1 none */
	int audit_forward_fd;    /* >= 0: a view other than the run's main one: its records go as datagrams to
	                          * this socket (the main view's event_fd), which chains and writes them into
	                          * the run's one log; no sink of its own. -1: the view writes its own log */
	const char *audit_root;  /* NULL: the project's view. Else the host directory this view serves: every
	                          * record carries it as "root" (its "path" is relative to it) */
	bool foreground_signals; /* install SIGINT/SIGTERM/SIGHUP handlers that unmount and exit 0 */
	int journal_dir_fd;      /* >= 0: keep what the run changes there, for undo (docs/undo.md); -1: off */
	uint64_t journal_max_size; /* bytes the journal may copy; 0: 1 GiB */
	VrViewScanMode scan_mode; /* default VR_VIEW_SCAN_MASK */
	uint64_t scan_max_size;  /* bigger files are not scanned (an audit note says so); default 8 MiB */
	const struct VrScanFilter *scan_filter; /* rules off, allow-listed findings (policy/scan-filter.h); NULL: none */
	int keyfile_fd;          /* >= 0: a sealed memfd of the key files this view serves masked (policy/keymask.h,
	                          * fusefs/keyfile.c); read at start, not closed. -1: none */
} VrViewOptions;

void vr_view_options_init(VrViewOptions *opts);

#define VR_AUDIT_MAX_SIZE_DEFAULT (64u << 20)
/* The exit status a daemon process gives when its view stopped because the
 * audit log could not be written (audit_fail_open false): the message has
 * been printed already. */
#define VR_VIEW_EXIT_AUDIT_FAILED 3
/* Whether the last vr_view_run stopped for that reason. */
bool vr_view_audit_failed(void);

/* Mounts the view and serves it until it is unmounted or a termination
 * signal arrives; flushes the audit log and unmounts before returning.
 * 0 on a clean end, -errno on failure (logged once, here). */
int vr_view_run(const VrViewOptions *opts);
