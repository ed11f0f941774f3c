/* The view's life: options, the session (mount, loop, unmount) and the
 * kernel connection settings. The operations live in ops-*.c. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/resource.h>
#include <unistd.h>

#include "audit/out.h"
#include "common/confine.h"
#include "common/fd-util.h"
#include "fusefs/journal.h"
#include "common/log.h"
#include "common/test-hook.h"
#include "fusefs/view-private.h"

VrView *vr_view;

/* The audit log could not be written under --audit-fail=closed. Set by the
 * writer thread; the session pointer is what it needs to end the loop. */
static atomic_bool audit_failed;
static _Atomic(struct fuse_session *) audit_stop_se;
static bool audit_stop_by_signal;

bool vr_view_audit_failed(void)
{
	return atomic_load(&audit_failed);
}

/* audit/out.c's stop hook: end the session as SIGTERM would (the writer
 * blocks every signal, so it lands on a FUSE thread and interrupts its
 * read). Before the loop runs, vr_view_run sees the flag itself. */
static void stop_for_audit(void)
{
	atomic_store(&audit_failed, true);
	struct fuse_session *se = atomic_load(&audit_stop_se);
	if (!se)
		return;
	fuse_session_exit(se);
	if (audit_stop_by_signal)
		kill(getpid(), SIGTERM);
}

void vr_view_options_init(VrViewOptions *opts)
{
	memset(opts, 0, sizeof *opts);
	opts->audit_level = VR_AUDIT_READS;
	opts->entry_timeout = 1.0;
	opts->attr_timeout = 1.0;
	opts->present_uid = (uid_t)-1;
	opts->present_gid = (gid_t)-1;
	opts->ready_fd = -1;
	opts->event_fd = -1;
	opts->audit_forward_fd = -1;
	opts->seccomp_fd = -1;
	opts->audit_fd = -1;
	opts->scan_mode = VR_VIEW_SCAN_MASK;
	opts->scan_max_size = VR_VIEW_SCAN_MAX_SIZE_DEFAULT;
	opts->foreground_signals = true;
	opts->journal_dir_fd = -1;
	opts->keyfile_fd = -1;
	opts->audit_dir_fd = -1;
	opts->audit_max_size = VR_AUDIT_MAX_SIZE_DEFAULT;
}

/* One O_PATH fd per inode the kernel holds: large trees need many. */
static void raise_nofile(void)
{
	struct rlimit rl;
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
}

static void vr_ll_init(void *userdata, struct fuse_conn_info *conn)
{
	/* Read replies are spliced from the host file to /dev/fuse
	 * (fuse_reply_data). Write requests are read into a buffer and copied:
	 * splicing them (FUSE_CAP_SPLICE_READ) is not measured yet, so it
	 * stays off until bench/ shows it helps. */
	if (conn->capable & FUSE_CAP_SPLICE_MOVE)
		conn->want |= FUSE_CAP_SPLICE_MOVE;
	if (conn->capable & FUSE_CAP_SPLICE_WRITE)
		conn->want |= FUSE_CAP_SPLICE_WRITE;
	conn->want &= ~(unsigned)FUSE_CAP_SPLICE_READ;
	/* The host may change files behind the view: drop cached pages when
	 * mtime/size change (checked every attr_timeout). */
	if (conn->capable & FUSE_CAP_AUTO_INVAL_DATA)
		conn->want |= FUSE_CAP_AUTO_INVAL_DATA;
	/* The kernel caches POSIX ACLs (ls -l asks for one per file) and
	 * checks them itself, with default_permissions. A change on the host
	 * is seen when the inode is invalidated (host-watch.c) or evicted. */
	if (conn->capable & FUSE_CAP_POSIX_ACL)
		conn->want |= FUSE_CAP_POSIX_ACL;
	/* Symlink targets in the kernel's page cache: a readlink that
	 * reaches the daemon also marks the link's atime stale, so each walk
	 * cost a READLINK per symlink and the next lstat a GETATTR (issue 19).
	 * A symlink's target never changes in place; replacing it on the host
	 * is a new inode, which the host watch reports. At level "all" every
	 * readlink is an event, so there the kernel asks each time. */
	if ((conn->capable & FUSE_CAP_CACHE_SYMLINKS) && vr_view->opts->audit_level < VR_AUDIT_ALL)
		conn->want |= FUSE_CAP_CACHE_SYMLINKS;
	/* Write-back caching would let the kernel merge writes the daemon
	 * must see in order; keep writes synchronous. */
	conn->want &= ~(unsigned)FUSE_CAP_WRITEBACK_CACHE;
	/* No export support: the kernel never sends "..", and file handles
	 * cannot be turned back into hidden inodes. */
	conn->want &= ~(unsigned)FUSE_CAP_EXPORT_SUPPORT;
	/* No-open mode (file-handles.c): unless the audit level promises an
	 * event per open and close, the kernel opens and closes files without
	 * a round trip. (O_TRUNC must then reach the daemon as a SETATTR: atomic
	 * O_TRUNC, which would carry it in the OPEN never sent, is off below.)
	 * Only with the host watch: it is what tells the kernel soon that a
	 * name it caches was renamed or removed on the host, now that no OPEN
	 * checks it (host-watch.c). */
	VrAuditLevel level = vr_view->opts->audit_level;
	if ((conn->capable & FUSE_CAP_NO_OPEN_SUPPORT) && level < VR_AUDIT_OPENS && vr_watch_enabled())
		vr_view->no_open = true;
	/* The same for directories, where the host watch can drop a listing
	 * the kernel then keeps (opendir events are level "all"). */
	if ((conn->capable & FUSE_CAP_NO_OPENDIR_SUPPORT) && level < VR_AUDIT_ALL && vr_watch_enabled())
		vr_view->no_opendir = true;
	/* Set-user-ID and set-group-ID bits: the daemon, as root, writes and
	 * truncates with CAP_FSETID, so the host never drops them for it. The
	 * kernel drops them itself (a SETATTR of the mode) when the agent
	 * lacks CAP_FSETID, unless told that the daemon does (HANDLE_KILLPRIV,
	 * which libfuse 3.14 asks for by default), and for an open with
	 * O_TRUNC only when the truncation is a SETATTR of its own rather than
	 * a flag of OPEN (ATOMIC_O_TRUNC): an extra SETATTR per truncating
	 * open of an existing file; no-open mode (above) needs this too
	 * (tests/integration/view-killpriv.sh). */
	conn->want &= ~(unsigned)(FUSE_CAP_HANDLE_KILLPRIV | FUSE_CAP_ATOMIC_O_TRUNC);
	/* The caller's umask comes with CREATE, MKDIR and MKNOD, and the
	 * mode unmasked: a parent with a default ACL ignores the umask, as on
	 * the host (vr_new_mode; the daemon's own umask is 0). */
	if (conn->capable & FUSE_CAP_DONT_MASK)
		conn->want |= FUSE_CAP_DONT_MASK;
	/* The kernel keeps the smaller of this and the bdi's read-ahead,
	 * which vr_view_raise_readahead has just raised (or not). */
	if (conn->max_readahead < VR_VIEW_READ_AHEAD)
		conn->max_readahead = VR_VIEW_READ_AHEAD;
	/* What the max_read mount option says (libfuse checks they agree). */
	conn->max_read = VR_VIEW_MAX_READ;
}

static char *make_run_id(void)
{
	unsigned char b[8];
	if (getrandom(b, sizeof b, 0) != sizeof b) {
		guint32 r1 = g_random_int(), r2 = g_random_int();
		memcpy(b, &r1, 4);
		memcpy(b + 4, &r2, 4);
	}
	return g_strdup_printf("%02x%02x%02x%02x%02x%02x%02x%02x", b[0], b[1], b[2], b[3], b[4],
	                       b[5], b[6], b[7]);
}

/* The unmount marker also carries the run's request counts (counts). */
static void marker(const char *op, uint64_t lookups, const char *counts)
{
	g_autofree char *json = g_strdup_printf(
		"{\"op\":\"%s\",\"path\":\"\",\"result\":\"ok\",\"pid\":%d,\"lookups\":%" G_GUINT64_FORMAT "%s%s}",
		op, (int)getpid(), lookups, counts ? "," : "", counts ? counts : "");
	vr_audit_emit_raw(json, strlen(json));
}

/* The first of the two lines on ready_fd: the mount exists, so the caller
 * may bind it into a sandbox whose root it builds meanwhile. Nothing is
 * served yet: the loop starts after the confinement and the audit log's
 * first records, and only "ready" lets the caller start COMMAND. */
static int report_mounted(const VrViewOptions *opts)
{
	return opts->ready_fd >= 0 ? vr_write_all(opts->ready_fd, "mounted\n", 8) : 0;
}

/* The second line. The pipe stays open for the last one, "stopped". */
static int report_ready(const VrViewOptions *opts)
{
	if (opts->ready_fd >= 0)
		return vr_write_all(opts->ready_fd, "ready\n", 6);
	printf("vault-run: view of %s ready at %s\n", opts->project, opts->mountpoint);
	return fflush(stdout) == 0 ? 0 : -EIO;
}

/* The last line, "stopped N" with the exit status the daemon will have
 * (RET as vr_view_run returns it), once the view is unmounted and the
 * journal and the audit log are sealed, flushed and closed: nothing the
 * caller reads is written after it. What is left, the host watch's
 * teardown (an SRCU grace period, 5-17 ms) and the keeper's end, concerns
 * nobody, so the caller need not wait for the exit (run/daemons.c). */
static void report_stopped(const VrViewOptions *opts, int ret)
{
	if (opts->ready_fd < 0)
		return;
	/* A caller that went away already: no SIGPIPE for the last word. */
	signal(SIGPIPE, SIG_IGN);
	char line[32];
	int n = snprintf(line, sizeof line, "stopped %d\n",
	                 ret < 0 ? (vr_view_audit_failed() ? VR_VIEW_EXIT_AUDIT_FAILED : 1) : 0);
	(void)vr_write_all(opts->ready_fd, line, (size_t)n);
	close(opts->ready_fd);
}

int vr_view_init(VrView *v, const VrViewOptions *opts)
{
	*v = (VrView){.opts = opts, .policy = opts->policy, .daemon_uid = geteuid(), .daemon_gid = getegid()};
	vr_view = v;
	vr_ids_init(v);
	/* Opened before mounting: with mountpoint == project this fd is the
	 * only way left to the real directory under the view. */
	struct stat st;
	int rootfd = open(opts->project, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (rootfd < 0)
		return vr_log_errno(errno, "cannot open the project %s", opts->project);
	if (fstat(rootfd, &st) < 0) {
		int ret = vr_log_errno(errno, "cannot stat the project %s", opts->project);
		close(rootfd);
		return ret;
	}
	v->root.fd = rootfd;
	v->root.dev = st.st_dev;
	v->root.ino = st.st_ino;
	v->root.type = S_IFDIR;
	v->root.casefold = vr_dir_is_case_insensitive(rootfd);
	v->root.nlookup = 2;
	v->root.wd = -1;
	v->root.create_fd = -1;
	v->root.relpath = g_strdup("");
	v->root.decision = vr_policy_decide(v->policy, "", TRUE);
	vr_inode_table_init(v);
	vr_files_init(v);
	vr_content_scan_init(v);
	g_hash_table_add(v->table, &v->root);
	return vr_keyfile_init(v); /* key files: the values first, before anything is served */
}

void vr_view_free(VrView *v)
{
	vr_files_close_all(v);
	vr_inode_table_free(v);
	vr_links_free();
	vr_content_scan_free(v);
	vr_keyfile_free();
	g_free(v->root.relpath);
	g_free(v->agent_root);
	close(v->root.fd);
	vr_view = NULL;
}

void vr_view_ops(struct fuse_lowlevel_ops *ops)
{
	vr_ops_dir(ops);
	vr_ops_file(ops);
	vr_ops_attr(ops);
	vr_ops_xattr(ops);
}

/* The FUSE session (not mounted yet), with our signal handlers when the
 * view runs in the foreground. -errno (said). */
static int new_session(VrView *v)
{
	const VrViewOptions *opts = v->opts;
	struct fuse_lowlevel_ops ops = {.init = vr_ll_init};
	vr_view_ops(&ops);
	vr_count_wrap(&ops);
	/* default_permissions: the kernel checks mode bits against the
	 * presented owner before a request reaches the daemon, so another uid
	 * let in by allow_other gets no more than the modes say, and a
	 * read-only file (write bits hidden) is refused early. The daemon
	 * still enforces the policy itself: root bypasses mode bits.
	 * max_read: READ replies small enough to splice (VR_VIEW_MAX_READ). */
	g_autofree char *mount_opts = g_strdup_printf(
		"fsname=vault-run,subtype=vault-run,default_permissions,max_read=%u%s",
		VR_VIEW_MAX_READ, opts->allow_other ? ",allow_other" : "");
	char *argv[] = {(char *)"vault-run", (char *)"-o", mount_opts, NULL};
	struct fuse_args args = FUSE_ARGS_INIT(3, argv);
	v->se = fuse_session_new(&args, &ops, sizeof ops, NULL);
	fuse_opt_free_args(&args);
	if (!v->se)
		return vr_log_errno(EINVAL, "cannot start the FUSE session");
	if (opts->foreground_signals && fuse_set_signal_handlers(v->se) != 0) {
		fuse_session_destroy(v->se);
		v->se = NULL;
		return vr_log_errno(EIO, "cannot install signal handlers");
	}
	return 0;
}

/* The audit writer and the journal, then the log holds the mount marker
 * and the run's first records before anyone is told the view is ready. */
static int start_audit(VrView *v, const char *run_id)
{
	const VrViewOptions *opts = v->opts;
	atomic_store(&audit_failed, false);
	atomic_store(&audit_stop_se, NULL);
	audit_stop_by_signal = opts->foreground_signals;
	vr_audit_out_set_stop_hook(stop_for_audit);
	int ret = vr_audit_start(opts, run_id);
	if (ret == 0)
		ret = vr_journal_start(opts->journal_dir_fd, opts->journal_max_size, v->root.fd, opts->project,
		                       run_id);
	if (ret < 0)
		return ret;
	marker("mount", 0, NULL);
	atomic_store(&audit_stop_se, v->se);
	/* A log that cannot be written stops the run before the agent starts. */
	vr_audit_sync(2000);
	return vr_view_audit_failed() ? -EIO : 0;
}

/* The multithreaded loop with its helper threads, until unmount or a
 * signal. -errno when it failed. */
static int serve(VrView *v)
{
	struct fuse_loop_config *cfg = fuse_loop_cfg_create();
	fuse_loop_cfg_set_clone_fd(cfg, 0);
	fuse_loop_cfg_set_max_threads(cfg, 16);
	fuse_loop_cfg_set_idle_threads(cfg, 4);
	vr_evict_start(v);
	vr_inval_start(v);
	vr_watch_start();
	int r = fuse_session_loop_mt(v->se, cfg);
	vr_watch_stop();
	vr_inval_stop();
	vr_evict_stop();
	fuse_loop_cfg_destroy(cfg);
	int ret = r < 0 ? vr_log_errno(-r, "the view stopped") : 0;
	return vr_view_audit_failed() ? -EIO : ret; /* said by the writer */
}

int vr_view_run(const VrViewOptions *opts)
{
	VrView v;
	g_autofree char *run_id = NULL, *mountpoint_abs = NULL;
	if (!opts->project || !opts->mountpoint || !opts->policy)
		return vr_log_errno(EINVAL, "the view needs a project, a mount point and a policy");
	/* The kernel applied the caller's umask (or vr_new_mode does): the
	 * daemon's must not take more bits away. What the daemon creates
	 * for itself (audit log, journal) names its mode. */
	umask(0);
	raise_nofile();
	vr_evict_presize(); /* one thread yet */
	int ret = vr_view_init(&v, opts);
	if (ret < 0) {
		vr_view = NULL;
		return ret;
	}
	if ((ret = new_session(&v)) < 0)
		goto out_table;
	if (opts->foreground_signals)
		vr_count_dump_on_signal();
	/* Resolved before mounting: afterwards a stat of the mount point would
	 * wait for the INIT reply this thread has not sent yet. */
	mountpoint_abs = realpath(opts->mountpoint, NULL);
	v.agent_root = g_canonicalize_filename(opts->agent_root ? opts->agent_root
	                                       : mountpoint_abs ? mountpoint_abs : opts->project, "/");
	/* The keeper first: from the mount on, a kill -9 leaves nothing. */
	if ((ret = vr_view_keeper_start(opts->mountpoint)) < 0) {
		vr_log_errno(-ret, "cannot start the unmount helper");
		goto out_signals;
	}
	vr_test_pause("view-mount");
	if (fuse_session_mount(v.se, opts->mountpoint) != 0) {
		ret = vr_log_errno(EIO, "cannot mount the view on %s", opts->mountpoint);
		goto out_signals;
	}
	if ((ret = report_mounted(opts)) < 0) {
		vr_log_errno(-ret, "cannot report the mount");
		goto out_unmount;
	}
	vr_test_pause("view-mounted");
	vr_view_raise_readahead(mountpoint_abs);
	/* (libgcc_s, which pthread_cancel needs when the loop ends its
	 * workers, is loaded by vr_confine_apply while /usr/lib is readable.)
	 * The watch's inotify and eventfd descriptors, then confined before
	 * any thread starts (common/confine.h); the audit writer and the journal open
	 * what they need after it. */
	vr_watch_init(&v);
	/* Links at the root whose names a rule covers (.aws -> dotfiles/aws):
	 * their targets are decided under those names from the first lookup. */
	vr_links_scan_root(&v);
	if ((ret = vr_view_confine(&v)) < 0)
		goto out_unmount;
	vr_test_pause("view-confined");
	run_id = opts->run_id ? g_strdup(opts->run_id) : make_run_id();
	/* SIGTERM or SIGINT during the start-up (our handlers end the session):
	 * never said ready, the view stops here as it would have in the loop. */
	if ((ret = start_audit(&v, run_id)) < 0 || fuse_session_exited(v.se))
		goto out_unmount;
	if ((ret = report_ready(opts)) < 0) {
		vr_log_errno(-ret, "cannot report readiness");
		goto out_unmount;
	}
	vr_test_pause("view-ready");
	ret = serve(&v);

out_unmount:
	atomic_store(&audit_stop_se, NULL);
	/* In the caller's private namespace a dead mount (ENOTCONN) is safer
	 * than none: nothing can bind the project under it any more. */
	if (!(vr_view_audit_failed() && opts->audit_keep_mount))
		vr_view_unmount(v.se);
	else
		vr_view_keep_mount();
	char counts[2048];
	vr_count_format(counts, sizeof counts);
	marker("unmount", atomic_load(&v.n_lookups), counts);
	vr_info("view of %s: %s", opts->project, counts);
out_signals:
	if (opts->foreground_signals)
		fuse_remove_signal_handlers(v.se);
	fuse_session_destroy(v.se);
	vr_journal_stop(); /* after the unmount: no op can race the final records */
	vr_files_close_all(&v); /* before the writer stops: their close events */
	vr_audit_stop();
	vr_journal_wait(); /* its fsync ran beside the log's */
	if (vr_view_audit_failed())
		ret = -EIO; /* also when it was the last records, the seal, that failed */
	report_stopped(opts, ret);
	vr_evict_release();
out_table:
	vr_view_unmount_wait(); /* the keeper unmounted while the logs were flushed */
	vr_watch_stop(); /* when the loop never ran */
	vr_watch_free();
	vr_view_free(&v);
	return ret;
}
