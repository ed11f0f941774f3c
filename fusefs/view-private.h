/* fusefs/ internals: shared by the files of the view, never seen outside. */
#pragma once
#include <fuse_lowlevel.h>
#include <glib.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <sys/stat.h>

#include "audit/json.h"  /* vr_errno_name, vr_audit_json_str: every handler audits */
#include "fusefs/view.h"

/* One host object the kernel knows about. Keyed by (dev, ino) like
 * passthrough_ll: two names of one hard-linked file share it. */
typedef struct VrInode {
	int fd;             /* O_PATH|O_NOFOLLOW on the host object; never re-resolved by name */
	dev_t dev;
	ino_t ino;
	mode_t type;        /* S_IFMT bits, fixed for the life of the host inode */
	bool casefold;      /* a directory whose names the host compares case-insensitively */
	/* Guarded by the table lock: */
	uint64_t nlookup;   /* kernel references (lookup replies minus forgets) */
	char *relpath;      /* last name it was reached by, relative to the project ("" = root) */
	VrDecision decision;
	atomic_bool read_logged; /* the "first read in this run" event went out */
	/* For eviction (evict.c): when the kernel last looked it up, and the
	 * entry it was last looked up as. parent is only ever used as the
	 * kernel's node id for a notification, never dereferenced: a stale one
	 * makes the kernel answer ENOENT. Guarded by the table lock. */
	atomic_int_fast64_t last_used; /* g_get_monotonic_time() */
	struct VrInode *parent;
	char *name;
	/* host-watch.c: */
	int wd;                  /* a directory's inotify watch, or -1; guarded by the watch lock */
	atomic_bool watched;     /* a directory whose host changes are reported */
	atomic_bool attr_watched; /* last looked up in a watched directory */
	atomic_uint relpath_gen; /* bumped when relpath changes */
	atomic_uint listed_gen;  /* relpath_gen when the kernel last cached the listing */
	atomic_int creating;     /* handlers making a name in this directory now */
	atomic_bool name_removed; /* relpath, one of several names, was unlinked through the view */
	/* No-open mode: the fd CREATE made a file with, kept when its mode
	 * would refuse the creator a new one (git's 0444 objects); -1. */
	atomic_int create_fd;
	/* host-watch.c: the ctime (ns) right after the view's own last change
	 * to it, so the watch does not report that change back as the host's. */
	atomic_int_fast64_t own_ctime;
	atomic_int changing;     /* handlers changing it now (vr_change_begin) */
	/* links.c: the path a host symlink whose name a rule covers gives
	 * this object (or an ancestor), and its decision; NULL when none.
	 * Guarded by the table lock. */
	char *alias;
	VrDecision alias_decision;
} VrInode;

/* An open file: fi->fh of an OPEN, or (no-open mode, file-handles.c) a
 * handle the daemon keeps for an inode the kernel reads or writes without
 * having opened it. */
typedef struct VrFile {
	int fd;
	VrInode *inode;
	char *redacted;          /* masked content when the inode is redact class, else NULL */
	size_t redacted_len;
	atomic_uint_fast64_t bytes_read;
	atomic_uint_fast64_t bytes_written;
	pid_t pid;               /* who opened it, for the close event */
	bool writable;
	bool keyfile;            /* keyfile.c: redacted is the masked image of a key file */
	/* file-handles.c only: */
	bool cached;             /* a handle of the cache (refs), not an fh */
	atomic_bool wrote;       /* its first write is logged */
	int refs;                /* guarded by the cache lock */
	unsigned relpath_gen;    /* inode->relpath_gen when it was checked */
	uint64_t epoch;          /* the host-rename epoch when it was checked */
	gint64 last_used;        /* monotonic µs */
	struct timespec ctime, mtime; /* the version it was checked (and masked) for */
	off_t size;
} VrFile;

/* An open directory (fi->fh). */
typedef struct {
	pthread_mutex_t lock;    /* the kernel may race readdir calls on one handle */
	DIR *dp;
	off_t offset;
	struct dirent *entry;    /* read ahead but not yet returned */
	char *relpath;           /* copy taken at opendir */
	VrDecision decision;
	bool casefold;
} VrDir;

/* A user namespace's id map as seen from inside (ids.c). */
typedef struct {
	bool all;             /* the initial namespace: every id */
	unsigned n;           /* 0: not read, every id counts as mapped */
	uint32_t first[8], count[8];
} VrIdMap;

typedef struct VrView {
	const VrViewOptions *opts;
	const VrPolicy *policy;
	struct fuse_session *se;
	VrInode root;
	uid_t daemon_uid;
	gid_t daemon_gid;
	VrIdMap uid_map, gid_map;   /* the daemon's user namespace (ids.c) */
	bool create_as_caller;      /* root under allow_other: new objects go to their creator */
	pthread_mutex_t table_lock; /* guards the table and every inode's nlookup/relpath/decision */
	GHashTable *table;          /* VrInode* keyed by itself (dev, ino hash) */
	atomic_uint_fast64_t n_lookups;
	pthread_mutex_t files_lock; /* guards open_files and read_seen */
	GHashTable *open_files;     /* VrFile*: closed at unmount if the kernel did not release them */
	GHashTable *read_seen;      /* (dev, ino) already logged as read in this run */
	/* No-open mode (file-handles.c): the kernel neither opens nor
	 * releases files (FUSE_CAP_NO_OPEN_SUPPORT) or directories
	 * (no_opendir); reads and writes come with fh 0. Chosen in init. */
	bool no_open;
	bool no_opendir;
	atomic_size_t create_fds;   /* inodes' create_fd held: the evictor counts them */
	char *agent_root;           /* the project's absolute path as the agent names it (what .git files name) */
	pthread_mutex_t scan_lock;  /* guards scan_cache and scan_skipped */
	GHashTable *scan_cache;     /* file version (dev, ino, size, mtime, ctime) → VrScanVerdict */
	GHashTable *scan_skipped;   /* (dev, ino) whose "too large to scan" note is out */
} VrView;

extern VrView *vr_view;

/* inode.c */
VrInode *vr_inode_get(fuse_ino_t ino);
int vr_inode_table_init(VrView *v);
void vr_inode_table_free(VrView *v);
/* Finds or adds the inode for fd/st (taking ownership of fd: closed when an
 * existing inode is reused), bumps nlookup, records relpath/decision. */
VrInode *vr_inode_intern(int fd, const struct stat *st, const char *relpath, VrDecision decision);
void vr_inode_forget(VrInode *inode, uint64_t n);
/* One more reference, dropped with vr_inode_forget(inode, 1): keeps an
 * inode alive past the reply, after which the kernel may forget it. */
void vr_inode_pin(VrInode *inode);
/* The same for an inode whose memory the caller knows is still allocated
 * (a watched directory under the watch lock) but which the kernel may
 * have forgotten: false, and no reference, when it has. */
bool vr_inode_pin_live(VrInode *inode);
/* With the table lock held: the inodes of the table as a set of pointers,
 * to test a pointer that may be stale (a parent) without dereferencing it. */
GHashTable *vr_inode_live_set(VrView *v);
char *vr_inode_relpath(VrInode *inode);          /* copy, g_free it */
VrDecision vr_inode_decision(VrInode *inode);
/* After a rename through the view: the moved object and, for a directory,
 * every cached descendant get their new relative path. */
void vr_inode_renamed(dev_t dev, ino_t ino, const char *oldpath, const char *newpath,
                      VrInode *newparent, const char *newname);
/* After the config gate (git-gate.c) put its own file (fd: O_PATH, st) where
 * the kernel believes the agent's file (dev, ino) now is: the kernel's node
 * for it means the new file from now on, at relpath with decision. Takes fd. */
void vr_inode_rebind(dev_t dev, ino_t ino, int fd, const struct stat *st, const char *relpath,
                     VrDecision decision, VrInode *parent, const char *name);
/* After unlinking relpath through the view: a file that keeps other names
 * is marked (name_removed) when relpath was the name it was known by. */
void vr_inode_name_removed(dev_t dev, ino_t ino, const char *relpath);

/* inode.c: after a lookup reply is decided, the entry that names inode. */
void vr_inode_note_entry(VrInode *inode, VrInode *parent, const char *name);

/* evict.c: cold inodes are forgotten by invalidating their entries from a
 * helper thread (never from a request handler: the kernel would wait for
 * that very handler). */
int vr_evict_start(VrView *v);
void vr_evict_stop(void);
/* Grows the fd table for the reserve; called while the daemon has one
 * thread (a later growth waits for an RCU grace period per doubling). */
void vr_evict_presize(void);
/* After vr_evict_stop: the reserve's placeholders closed. */
void vr_evict_release(void);
/* A lookup ran out of fds: evict now, and wait (bounded) for room. */
bool vr_evict_wait_for_room(void);
/* For a loop around an fd-making call that failed with err: true (after
 * waiting for room) when err is EMFILE/ENFILE and *tries allows another
 * go. Every host call that makes an fd goes through it: a walk over a
 * tree bigger than RLIMIT_NOFILE must not turn "no fd now" into an error
 * the agent sees (ESTALE from a name check, EMFILE from an open). */
bool vr_evict_retry(int err, int *tries);
/* Called after an inode is added: wakes the evictor past the high mark. */
void vr_evict_kick_if_full(size_t table_size);

/* inval.c: after a WRITE that failed or was refused, the inode's cached
 * pages are dropped from a helper thread (the kernel may hold bytes the
 * host does not have; from the handler the notification would deadlock).
 * A no-op unless started. */
int vr_inval_start(VrView *v);
void vr_inval_stop(void);
void vr_inval_pages(VrInode *inode);

/* readahead.c: the mount's read-ahead, raised through sysfs (root only)
 * after mounting and before INIT is answered; vr_ll_init asks for the same
 * size in max_readahead so the INIT reply does not lower it again. */
#define VR_VIEW_READ_AHEAD (2u << 20)
/* The largest READ: libfuse splices a reply (host file → pipe → /dev/fuse,
 * no copy in the daemon) only when the pipe can hold it, and a pipe grows
 * to /proc/sys/fs/pipe-max-size (1 MiB) without CAP_SYS_RESOURCE; the
 * kernel's 1 MiB READs (max_pages) would be copied twice instead. */
#define VR_VIEW_MAX_READ (512u << 10)
void vr_view_raise_readahead(const char *mountpoint); /* absolute, no symlinks */

/* host-watch.c: long cache timeouts where inotify reports host changes;
 * the invalidations go out from a helper thread. */
#define VR_WATCHED_TIMEOUT 3600.0
typedef enum { VR_WATCH_NONE, VR_WATCH_ALREADY, VR_WATCH_NEW } VrWatchResult;
int vr_watch_init(VrView *v);      /* before serving: the inotify fd, the root's watch */
int vr_watch_start(void);          /* after mounting: the thread */
void vr_watch_stop(void);
void vr_watch_free(void);
/* Watches a directory inode (lookup handlers); NEW: its attributes
 * should be read again, they may predate the watch. */
VrWatchResult vr_watch_dir(VrInode *dir);
void vr_watch_forget(VrInode *dir); /* before the inode's fd is closed */
double vr_watch_entry_timeout(VrInode *parent);
/* How long the kernel may cache a miss of NAME in PARENT: 0 for a name
 * the view removed (vr_watch_name_removed), which the host may make again
 * before the watch could tell the kernel. */
double vr_watch_negative_timeout(VrInode *parent, const char *name);
void vr_watch_name_removed(VrInode *dir, const char *name);
double vr_watch_attr_timeout(VrInode *inode, const struct stat *st);
uint64_t vr_watch_overflows(void);
bool vr_watch_enabled(void);
/* Around the view's own change to inode (write, setattr, xattrs), before
 * the reply: the watch holds back what it sees of inode meanwhile, and does
 * not invalidate the kernel's cache for the events of that change. */
void vr_change_begin(VrInode *inode);
void vr_change_end(VrInode *inode, bool changed);
/* While a handler makes a name in dir, the host watch holds back what it
 * sees appear there until the reply is out (then the kernel knows the entry
 * and nothing needs invalidating): VR_CREATING(dir); at the top of the
 * handler's part that creates, ended when the handler returns — after the
 * reply, when a FORGET may already have dropped the kernel's last
 * reference: so dir is pinned until then. */
static inline VrInode *vr_creating_begin(VrInode *dir)
{
	vr_inode_pin(dir);
	atomic_fetch_add(&dir->creating, 1);
	return dir;
}
static inline void vr_creating_end(VrInode **dir)
{
	atomic_fetch_sub(&(*dir)->creating, 1);
	vr_inode_forget(*dir, 1);
}
#define VR_CREATING(dir) \
	__attribute__((cleanup(vr_creating_end), unused)) VrInode *vr_creating_ = vr_creating_begin(dir)

/* links.c: host symlinks whose names a rule covers lend that name to their
 * in-project target (docs/policy.md, "Symlinks"). */
/* Before serving: the links at the project's root. */
void vr_links_scan_root(VrView *v);
/* A symlink NAME in DIRFD (the directory at DIR_REL) met by a lookup. */
void vr_links_note(int dirfd, const char *dir_rel, const char *name, bool casefold);
/* The host watch saw NAME appear in DIR: when it is such a link and its
 * target is cached, true with the target and the entry (parent, name) the
 * kernel knows it by, to invalidate (ids only, never dereferenced). */
bool vr_links_host_changed(VrInode *dir, const char *name, VrInode **ret_target, VrInode **ret_parent,
                           char **ret_name);
/* The alias of the object st, or NULL (g_free). */
char *vr_links_alias_of(const struct stat *st);
/* After inode was interned: a link noted meanwhile (SEEN: the alias the
 * lookup already applied, or NULL) is applied now; true when that hides it. */
bool vr_links_recheck(VrInode *inode, const char *seen);
void vr_links_free(void);
/* inode.c: sets inode's alias (taking it) and its decision. */
void vr_inode_set_alias(VrInode *inode, char *alias, VrDecision ad);

/* lookup.c */
char *vr_child_relpath(const char *parent, const char *name);
/* The policy for relpath below a parent decided pd. In a case-insensitive
 * directory (casefold, vfat…) the lower-cased path is decided too and the
 * stricter answer wins: ".ENV" there is the same file as ".env". */
VrDecision vr_decide_path(VrDecision pd, const char *relpath, bool is_dir, bool casefold);
bool vr_dir_is_case_insensitive(int fd);
/* The decision for name in parent (is_dir as the op implies). ret_relpath is
 * the child's relative path (g_free). */
VrDecision vr_decide_child(VrInode *parent, const char *name, bool is_dir, char **ret_relpath);
/* The same, also giving the child's alias (links.c) and its decision when
 * parent has one (*ret_alias NULL otherwise). */
VrDecision vr_decide_child_alias(VrInode *parent, const char *name, bool is_dir, char **ret_relpath,
                                 char **ret_alias, VrDecision *ret_ad);
int vr_do_lookup(fuse_req_t req, fuse_ino_t parent, const char *name, struct fuse_entry_param *e,
                 const char *op);
int vr_stat_inode(VrInode *inode, struct stat *st);
void vr_proc_path(char buf[static 64], int fd);
/* Whether the inode's relative path still leads to it on the host, without
 * following symlinks. The kernel may hold an entry the host has renamed
 * since: open, opendir and name changes answer ESTALE when it does not
 * (the kernel then looks the path up again). */
bool vr_inode_still_named(VrInode *inode);
/* The same as 1 (named) or 0 (not), or -EACCES when a directory on the
 * path cannot be searched by the daemon, so it cannot tell. */
int vr_inode_name_state(VrInode *inode);
/* fsync/fdatasync of the inode's host object through a read-only fd of our
 * own (no-open mode: the kernel's FSYNC/FSYNCDIR come without fh). 0 or
 * -errno. */
int vr_inode_sync(VrInode *inode, int datasync);
/* Replies ESTALE (true) unless parent still has its name. */
bool vr_stale_parent(fuse_req_t req, VrInode *parent);
/* Replies err after logging a refusal of op on relpath by d. */
void vr_refuse(fuse_req_t req, const char *op, const char *relpath, VrDecision d, int err);
bool vr_name_ok(const char *name);
/* Refuses (replying) unless a new entry of TYPE (S_IFDIR, S_IFREG, S_IFLNK,
 * S_IFIFO; 0 for a second name of an existing file) may be made under that
 * name: the policy's decision (a non-directory takes the stricter of its
 * file and directory decisions) and git's own names (gitnames.c). */
bool vr_new_name_allowed(fuse_req_t req, const char *op, VrInode *parent, const char *name,
                         mode_t type, char **ret_rel);

/* gitnames.c: git's own names (docs/policy.md, "Git's own files"). */
bool vr_git_is_dotgit(const char *name);
bool vr_git_names_hooks(const char *name);
/* D, made at least read-only when NAME in PARENT is hooks/ of a git
 * directory, or PARENT is such a hooks/ (HOOKS_REL: PARENT's relative path
 * when its name is hooks, else NULL). */
VrDecision vr_git_floor(VrInode *parent, const char *hooks_rel, const char *name, VrDecision d);
/* The rule refusing a new entry of TYPE (as vr_new_name_allowed) at REL,
 * NAME in PARENT, or NULL when git's names allow it. */
const VrRule *vr_git_refuse_new(VrInode *parent, const char *rel, const char *name, mode_t type);
/* The same for renaming NAME (of type STYPE) in P to NEWNAME in NP. */
const VrRule *vr_git_refuse_rename(VrInode *p, const char *srel, const char *name, mode_t stype,
                                   VrInode *np, const char *drel, const char *newname, unsigned flags);
/* A regular file reached as .git: its content is gated. */
bool vr_git_is_gitfile(VrInode *inode);
const VrRule *vr_git_dotgit_rule(void);
/* A write or truncate of a .git file, done only when the content after it
 * is empty or passes common/gitfile.h's check (a refusal is audited and
 * gives -EACCES). vr_git_write: bytes written or -errno, f's counters
 * updated; vr_git_truncate: fd is the caller's open file or -1. */
ssize_t vr_git_write(fuse_req_t req, VrFile *f, struct fuse_bufvec *in, off_t off);
int vr_git_truncate(fuse_req_t req, VrInode *inode, int fd, off_t size);

/* ids.c: presented owners and what new objects get (see there). */
void vr_ids_init(VrView *v);
/* The ids the kernel is shown for st: the daemon's own as present_uid/gid,
 * ids without a mapping in the daemon's namespace as the agent's own. */
void vr_present_attr(struct stat *st);
/* For a SETATTR of the owner: the host id to set for WANT on an object
 * owned by NOW on the host; (uid_t)-1 (unchanged) when WANT is what the
 * object is presented with. */
uid_t vr_ids_host_uid(uid_t want, uid_t now);
gid_t vr_ids_host_gid(gid_t want, gid_t now);
/* The mode a new object is made with: no set-id bits, the caller's umask
 * unless the parent has a default ACL (the daemon's own umask is 0). */
mode_t vr_new_mode(fuse_req_t req, VrInode *parent, mode_t mode);
/* Under allow_other as root: gives what was just made (FD of the new
 * file, or NAME in PARENT) to the requesting uid/gid, as bindfs does. */
void vr_ids_give_fd(fuse_req_t req, VrInode *parent, int fd);
void vr_ids_give_name(fuse_req_t req, VrInode *parent, const char *name, bool is_dir);

/* file-handles.c: in no-open mode, what stands in for an open file. Gets a
 * handle to read (write = false) or write the inode, deciding what an OPEN
 * would have decided (policy class, the stale-name check, secrets by
 * content, the journal's copy of the original, the audit event): a new
 * handle is made when there is none younger than a second for the same
 * name and file version. NULL after replying with the refusal. */
VrFile *vr_handle_get(fuse_req_t req, VrInode *inode, bool write);
void vr_handle_put(VrFile *f);
/* After a write through f succeeded: a handle's first one is logged (level
 * writes), where open mode logs the close with its byte count. */
void vr_handle_wrote(fuse_req_t req, VrFile *f);
/* Renames on the host or through the view: every handle checks its name
 * again before its next use. */
void vr_handles_name_changed(void);
void vr_handles_close_all(void);
/* A file CREATE just made (no-open mode: no fh): keeps fd on the inode when
 * its mode would refuse the creator a new one (git's 0444 objects), else
 * closes it. */
void vr_handle_keep_create_fd(VrInode *inode, int fd, mode_t mode, int flags);
/* The same fd, of a file this CREATE made (not one it opened): a copy
 * becomes the inode's cached write handle, so the first WRITE needs no
 * reopen and no scan (an empty file it just created holds no secret, and
 * the journal noted the creation). FLAGS: the open's. */
void vr_handle_adopt_created(fuse_req_t req, VrInode *inode, int fd, int flags);

/* ops-file.c: at the end of a run, log and close what is still open
 * (the kernel's RELEASE is asynchronous and may not arrive before exit). */
void vr_files_init(VrView *v);
void vr_files_close_all(VrView *v);
/* ops-dir.c: the same for directory streams OPENDIR handed out. */
void vr_dirs_close_all(void);

/* view.c: the view's state before anything is mounted, for vr_view_run
 * and for the fuzz harness alike: the project opened (O_PATH; with the
 * mount point over the project, the only way left to it), the root inode
 * (no watch, no create fd yet: -1), the inode table, the open files, the
 * content scan, the id maps; vr_view set to V. -errno (said). */
int vr_view_init(VrView *v, const VrViewOptions *opts);
/* What vr_view_init made, freed; the project's fd closed. */
void vr_view_free(VrView *v);
/* The ops table: every op of ops-*.c (vr_view_run adds INIT). */
void vr_view_ops(struct fuse_lowlevel_ops *ops);
/* req-count.c: requests per opcode and the notifications sent back
 * (docs/PERFORMANCE.md measures with them). */
typedef enum {
	VR_NOTE_WATCH_ENTRY,    /* host watch: a name dropped */
	VR_NOTE_WATCH_INODE,    /* host watch: attributes dropped */
	VR_NOTE_WATCH_PAGES,    /* host watch: attributes, pages and listing dropped */
	VR_NOTE_WATCH_OVERFLOW, /* inotify queue overflows (everything dropped) */
	VR_NOTE_WATCH_FULL,     /* directories left unwatched: no watch could be added */
	VR_NOTE_EVICT_ENTRY,    /* evictor: a cold name dropped */
	VR_NOTE_PAGES_DROPPED,  /* inval.c: pages after a refused write */
	VR_NOTE_N
} VrNote;
void vr_count_note(VrNote n);
/* Replaces each handler ops has with one that counts, then calls it. */
void vr_count_wrap(struct fuse_lowlevel_ops *ops);
/* `"requests":{...},"notifications":{...}` (JSON members, zeros left out);
 * async-signal-safe. The length written. */
size_t vr_count_format(char *buf, size_t cap);
/* SIGUSR1 prints the counts so far as one JSON line on stderr. */
void vr_count_dump_on_signal(void);

/* ops-*.c fill their part of the table. */
void vr_ops_dir(struct fuse_lowlevel_ops *ops);
void vr_ops_file(struct fuse_lowlevel_ops *ops);
void vr_ops_attr(struct fuse_lowlevel_ops *ops);
void vr_ops_xattr(struct fuse_lowlevel_ops *ops);

/* redact.c: whole file, masked, capped at VR_REDACT_MAX bytes. */
#define VR_REDACT_MAX (16u << 20)
int vr_redact_load(int fd, char **ret_buf, size_t *ret_len);
/* The whole file, unmasked, at most max bytes (-EFBIG beyond). */
int vr_file_load(int fd, size_t max, char **ret_buf, size_t *ret_len);

/* keyfile.c: key files (docs/network.md "Keys in files"), served masked. */
int vr_keyfile_init(VrView *v);   /* reads opts->keyfile_fd; -errno (said) */
void vr_keyfile_free(void);
/* An inode reached by RELPATH: a key file from now on when that is a key path. */
void vr_keyfile_note(dev_t dev, ino_t ino, const char *relpath);
bool vr_keyfile_is(VrInode *inode);
/* A regular file's inode fd is about to be closed (its VrInode freed). */
void vr_keyfile_inode_closing(int fd);
/* After a rename through the view to NEWNAME in NEWPARENT (NEWPATH). */
void vr_keyfile_renamed(VrInode *newparent, const char *newname, const char *newpath);
/* A rename that puts a file at a key file's name (or takes one in an
 * exchange), after the handler's checks: true when it replied (the
 * daemon's own unmasked copy renamed there, or a refusal); false: an
 * ordinary rename does. */
bool vr_keyfile_rename(fuse_req_t req, VrInode *p, const char *name, const char *srel,
                       const struct stat *sst, VrInode *np, const char *newname, const char *drel,
                       VrDecision dd, unsigned flags);
/* link() to REL of inode: false (refused, replied) when REL is a key file's
 * name and inode is not a key file found at start. */
bool vr_keyfile_link_allowed(fuse_req_t req, VrInode *inode, const char *srel, const char *rel);
/* A new name REL of TYPE (S_IFREG, S_IFDIR, S_IFLNK…; 0: a link) made by
 * OP: false (replied EACCES, audited) for anything but a regular file at a
 * key path, or a symlink at a directory above one. */
bool vr_keyfile_new_name_allowed(fuse_req_t req, const char *op, const char *rel, mode_t type);
/* The file the daemon just made at NAME of DIRFD (REL): a key file again
 * when REL is a key path (unmasked on write, masked on read). */
void vr_keyfile_created(int dirfd, const char *name, const char *rel);
/* Gives f (open or handle) the masked image of a key file (f->keyfile);
 * 0 (also for any other file) or -errno (refused, audited). */
int vr_keyfile_attach(fuse_req_t req, VrFile *f);
/* A write or truncation of a key file: through its masked image, then
 * unmasked onto the host. Bytes written or -errno; 0 or -errno. */
ssize_t vr_keyfile_write(VrFile *f, struct fuse_bufvec *in, off_t off);
int vr_keyfile_truncate(VrInode *inode, off_t size);

/* content-scan.c: secrets by content in files the policy shows (visible or
 * read-only class). The verdict is cached per file version. */
typedef enum {
	VR_SCAN_UNKNOWN = 0,  /* could not be read: nothing known */
	VR_SCAN_CLEAN,
	VR_SCAN_HIT,
	VR_SCAN_SKIPPED,      /* larger than scan_max_size */
} VrScanVerdict;
void vr_content_scan_init(VrView *v);
void vr_content_scan_free(VrView *v);
/* True when scanning applies to a file of this class and type. */
bool vr_content_scan_applies(const VrInode *inode, VrDecision d);
/* The verdict for the inode's current version: cached, or found by reading
 * the file (logging each hit: rule id and byte range, never the bytes). */
VrScanVerdict vr_content_scan_check(fuse_req_t req, VrInode *inode, const char *relpath);
/* Logs op on relpath as refused for a secret found by content and replies
 * EACCES. */
void vr_content_scan_refuse(fuse_req_t req, const char *op, const char *relpath);
/* For ops that modify or replace a file (setattr size, rename onto, unlink):
 * refuses (replying) when inode holds a secret found by content. */
bool vr_content_scan_guard(fuse_req_t req, const char *op, VrInode *inode, VrDecision d,
                           const char *relpath);
/* The same for the entry NAME in directory DIRFD (unlink, rename). */
bool vr_content_scan_guard_name(fuse_req_t req, const char *op, int dirfd, const char *name,
                                VrDecision d, const char *relpath);
/* Loads fd's content and masks what the scanner finds (same length), less
 * what the scan filter drops for relpath. */
int vr_content_scan_load_masked(int fd, const char *relpath, char **ret_buf, size_t *ret_len);

/* git-gate.c: the git config gate (rename onto a file the policy marks as
 * git config), and new repositories' hooks/. */
bool vr_gitgate_applies(VrDecision d);
/* Replies: the new file is written by the daemon when the policy accepts
 * it, else EACCES with an audit record naming the key. */
/* Writes data to a new file in dir, named by a built-in hidden pattern
 * (".vault-run-gate.*": never reachable through the view), owned and
 * moded like the agent's file, fsynced. *ret_name: its name (g_free). The
 * config gate's and the key files' (keyfile.c) file in the making. */
int vr_write_hidden_new(int dir, const void *data, size_t len, const struct stat *like,
                        char **ret_name, struct stat *ret_st);
/* After the daemon's file MADE took NEWNAME in place of the agent's SST:
 * the kernel's node for the agent's file (the rename moved it there) is
 * made to mean MADE, or, if NEWNAME no longer holds it, just renamed. */
void vr_rebind_to_written(const struct stat *sst, const struct stat *made, const char *srel,
                          const char *drel, VrDecision dd, VrInode *np, const char *newname);
static inline bool vr_same_file(const struct stat *a, const struct stat *b)
{
	return a->st_dev == b->st_dev && a->st_ino == b->st_ino;
}
/* Not ctime: the journal links the file it keeps, which changes it. */
static inline bool vr_same_version(const struct stat *a, const struct stat *b)
{
	return vr_same_file(a, b) && a->st_size == b->st_size &&
	       a->st_mtim.tv_sec == b->st_mtim.tv_sec && a->st_mtim.tv_nsec == b->st_mtim.tv_nsec;
}
void vr_gitgate_rename(fuse_req_t req, VrInode *p, const char *name, const char *srel,
                       const struct stat *sst, VrInode *np, const char *newname, const char *drel,
                       VrDecision dd, unsigned flags);
/* unlink of a git config file: allowed when git reads no key from it (not
 * git config at all, or empty); else refuses, replying. */
bool vr_gitgate_unlink_allowed(fuse_req_t req, VrInode *p, const char *name, const char *rel,
                               VrDecision d);
/* A name vr_new_name_allowed lets through although d refuses it: mkdir of
 * a new repository's hooks/, create of *.sample in such a directory. */
bool vr_gitgate_new_name_exempt(const char *op, VrInode *parent, const char *name, bool is_dir,
                                VrDecision d);
/* After a successful mkdir: remembers a hooks/ made that way. */
void vr_gitgate_note_mkdir(VrInode *parent, const char *name, VrDecision d);
/* At lookup: a *.sample file in such a hooks/ stays writable. */
VrDecision vr_gitgate_lookup_decision(VrInode *parent, const char *name, const struct stat *st,
                                      VrDecision d);
/* setattr of a git config file that only flips exec bits (git init's probe). */
bool vr_gitgate_setattr_exempt(VrInode *inode, VrDecision d, const struct stat *attr, int valid);

/* audit.c */
typedef struct {
	const char *op;
	const char *path;
	const char *result;        /* "ok", "hidden", "readonly", "redacted", or an errno name */
	const VrRule *rule;
	pid_t pid;
	int64_t bytes_read;        /* -1: absent */
	int64_t bytes_written;
	const char *target;        /* rename/link destination, or NULL */
	const char *extra;         /* more members, preformatted JSON without braces, or NULL */
} VrAuditEvent;
int vr_audit_start(const VrViewOptions *opts, const char *run_id);
/* Queues an event if level admits it. Refusals and writes wait for room;
 * others are shed (and counted) when the queue is full. */
void vr_audit_emit(VrAuditLevel level, const VrAuditEvent *ev);
bool vr_audit_wants(VrAuditLevel level);
/* Queues a preformatted JSON object (from event_fd); never dropped. */
void vr_audit_emit_raw(const char *json, size_t len);
void vr_audit_stop(void);      /* drains the queue, writes, closes */
/* Waits (at most TIMEOUT_MS) until the writer has written what is queued. */
void vr_audit_sync(int timeout_ms);
/* Convenience: an event for a request. */
void vr_audit_req(fuse_req_t req, VrAuditLevel level, const char *op, const char *path,
                  const char *result, const VrRule *rule, const char *target);
const char *vr_result_of(VrDecision d);

/* view-confine.c: the daemon's own confinement and its unmount keeper. */
/* The view daemon, before it mounts on MOUNTPOINT: forks the unmount
 * keeper (view-confine.c). 0 or -errno. */
int vr_view_keeper_start(const char *mountpoint);
/* The view daemon: after mounting, before any thread starts. Confines the
 * daemon to the project, the journal, the audit log's directory and /proc
 * (read-only). 0 or -errno (logged). */
int vr_view_confine(VrView *v);
/* Replaces fuse_session_unmount(): closes the FUSE device, then has the
 * keeper unmount (without waiting: vr_view_unmount_wait). Without a
 * keeper, fuse_session_unmount. */
void vr_view_unmount(struct fuse_session *se);
/* Waits (up to 10 s) for the keeper to have unmounted and ended; tells it
 * to unmount first if nothing did. A no-op without a keeper. */
void vr_view_unmount_wait(void);
/* Instead of vr_view_unmount (--audit-fail closed with keep-mount): the
 * keeper leaves without unmounting; the mount stays, dead, once the
 * session's device is closed. */
void vr_view_keep_mount(void);
