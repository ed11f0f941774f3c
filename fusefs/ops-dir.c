/* Directory operations: lookup/forget, listing, and everything that adds,
 * removes or moves a name. Each creation decides the policy for the new name
 * *before* touching the host, so a hidden or read-only name is refused
 * without the host file of that name being opened, truncated or replaced. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/cleanup.h"
#include "fusefs/journal.h"
#include "fusefs/view-private.h"

static void vr_ll_lookup(fuse_req_t req, fuse_ino_t parent, const char *name)
{
	struct fuse_entry_param e;
	int r = vr_do_lookup(req, parent, name, &e, "lookup");
	if (r == -ENOENT && e.entry_timeout > 0) {
		/* A missing (not hidden) name: let the kernel cache the miss
		 * like any entry; hidden names are not cached so every probe
		 * reaches the daemon and the audit log. */
		e.ino = 0;
		fuse_reply_entry(req, &e);
	} else if (r < 0) {
		fuse_reply_err(req, -r);
	} else {
		fuse_reply_entry(req, &e);
	}
}

static void vr_ll_forget(fuse_req_t req, fuse_ino_t ino, uint64_t nlookup)
{
	vr_inode_forget(vr_inode_get(ino), nlookup);
	fuse_reply_none(req);
}

static void vr_ll_forget_multi(fuse_req_t req, size_t count, struct fuse_forget_data *forgets)
{
	for (size_t i = 0; i < count; i++)
		vr_inode_forget(vr_inode_get(forgets[i].ino), forgets[i].nlookup);
	fuse_reply_none(req);
}

/* --- listing --- */

/* A directory stream filtered for the inode's path, or NULL after replying
 * with the refusal. */
static VrDir *dir_open(fuse_req_t req, VrInode *inode)
{
	VrDecision d = vr_inode_decision(inode);
	if (d.cls == VR_CLASS_HIDE) {
		g_autofree char *rel = vr_inode_relpath(inode);
		vr_refuse(req, "opendir", rel, d, ENOENT);
		return NULL;
	}
	/* Filtered by the rules for its path: it must still be that path. */
	if (!vr_inode_still_named(inode)) {
		fuse_reply_err(req, ESTALE);
		return NULL;
	}
	/* Through /proc/self/fd, not openat(fd, "."): resolving "." would
	 * need search permission on the directory, which listing does not. */
	char proc[64];
	vr_proc_path(proc, inode->fd);
	vr_cleanup_fd int fd = open(proc, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	for (int tries = 0; fd < 0 && vr_evict_retry(errno, &tries);)
		fd = open(proc, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0) {
		fuse_reply_err(req, errno);
		return NULL;
	}
	DIR *dp = fdopendir(fd);
	if (!dp) {
		fuse_reply_err(req, errno);
		return NULL;
	}
	vr_steal_fd(&fd); /* closedir's now */
	VrDir *dir = g_new0(VrDir, 1);
	pthread_mutex_init(&dir->lock, NULL);
	dir->dp = dp;
	dir->relpath = vr_inode_relpath(inode);
	dir->decision = d;
	dir->casefold = inode->casefold;
	return dir;
}

/* Directories OPENDIR handed to the kernel: its RELEASEDIR is asynchronous
 * and may not arrive before the daemon ends (vr_dirs_close_all). */
static pthread_mutex_t open_dirs_lock = PTHREAD_MUTEX_INITIALIZER;
static GHashTable *open_dirs;

static void dir_track(VrDir *dir, bool open)
{
	pthread_mutex_lock(&open_dirs_lock);
	if (open) {
		if (!open_dirs)
			open_dirs = g_hash_table_new(NULL, NULL);
		g_hash_table_add(open_dirs, dir);
	} else if (open_dirs) {
		g_hash_table_remove(open_dirs, dir);
	}
	pthread_mutex_unlock(&open_dirs_lock);
}

static void dir_close(VrDir *dir)
{
	closedir(dir->dp);
	pthread_mutex_destroy(&dir->lock);
	g_free(dir->relpath);
	g_free(dir);
}

static void vr_ll_opendir(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	if (vr_view->no_opendir) {
		/* The kernel opens directories itself from now on and keeps
		 * their listings (FOPEN_CACHE_DIR); READDIR comes with fh 0. */
		fuse_reply_err(req, ENOSYS);
		return;
	}
	VrInode *inode = vr_inode_get(ino);
	VrDir *dir = dir_open(req, inode);
	if (!dir)
		return;
	if (vr_audit_wants(VR_AUDIT_ALL))
		vr_audit_req(req, VR_AUDIT_ALL, "opendir", dir->relpath, "ok", NULL, NULL);
	fi->fh = (uintptr_t)dir;
	dir_track(dir, true);
	/* In a watched directory the kernel keeps the listing: the host
	 * watch drops it when a name changes. It was filtered for the path the
	 * directory had then: a new path (a rename on the host) lists afresh. */
	if (atomic_load(&inode->watched)) {
		unsigned gen = atomic_load(&inode->relpath_gen);
		fi->cache_readdir = 1;
		fi->keep_cache = atomic_exchange(&inode->listed_gen, gen) == gen;
	}
	fuse_reply_open(req, fi);
}

static bool entry_hidden(VrDir *dir, struct dirent *de)
{
	if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
		return false;
	bool is_dir = de->d_type == DT_DIR;
	if (de->d_type == DT_UNKNOWN) {
		struct stat st;
		if (fstatat(dirfd(dir->dp), de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0)
			return true; /* gone meanwhile */
		is_dir = S_ISDIR(st.st_mode);
	}
	g_autofree char *rel = vr_child_relpath(dir->relpath, de->d_name);
	VrDecision d = vr_decide_path(dir->decision, rel, is_dir, dir->casefold);
	return d.cls == VR_CLASS_HIDE;
}

static void do_readdir(fuse_req_t req, fuse_ino_t ino, size_t size, off_t offset,
                       struct fuse_file_info *fi, bool plus)
{
	VrDir *dir = (VrDir *)(uintptr_t)fi->fh, *own = NULL;
	if (!dir) {
		/* No-opendir mode: a stream for this request only, at offset. */
		dir = own = dir_open(req, vr_inode_get(ino));
		if (!dir)
			return;
	}
	g_autofree char *buf = g_malloc0(size);
	char *p = buf;
	size_t rem = size;
	int err = 0;

	pthread_mutex_lock(&dir->lock);
	if (offset != dir->offset) {
		seekdir(dir->dp, offset);
		dir->entry = NULL;
		dir->offset = offset;
	}
	for (;;) {
		if (!dir->entry) {
			errno = 0;
			dir->entry = readdir(dir->dp);
			if (!dir->entry) {
				err = errno;
				break;
			}
		}
		struct dirent *de = dir->entry;
		off_t next = de->d_off;
		/* Hidden names are skipped here and refused again at lookup:
		 * the listing is never the only guard. */
		if (!entry_hidden(dir, de)) {
			size_t entsize;
			int lr;
			bool dot = strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0;
			if (plus) {
				struct fuse_entry_param e;
				if (dot) {
					memset(&e, 0, sizeof e);
					e.attr.st_ino = de->d_ino;
					e.attr.st_mode = DTTOIF(de->d_type);
				} else if ((lr = vr_do_lookup(req, ino, de->d_name, &e, NULL)) < 0) {
					if (lr == -ENOENT)
						goto skip; /* vanished or hidden meanwhile */
					/* Unsearchable directory (mode without x): list the
					 * name without attributes, as a native readdir would. */
					memset(&e, 0, sizeof e);
					e.attr.st_ino = de->d_ino;
					e.attr.st_mode = DTTOIF(de->d_type);
					dot = true; /* nothing to forget */
				}
				entsize = fuse_add_direntry_plus(req, p, rem, de->d_name, &e, next);
				if (entsize > rem) {
					if (!dot)
						vr_inode_forget(vr_inode_get(e.ino), 1);
					break;
				}
			} else {
				struct stat st = {.st_ino = de->d_ino, .st_mode = DTTOIF(de->d_type)};
				entsize = fuse_add_direntry(req, p, rem, de->d_name, &st, next);
				if (entsize > rem)
					break;
			}
			p += entsize;
			rem -= entsize;
		}
	skip:
		dir->entry = NULL;
		dir->offset = next;
	}
	pthread_mutex_unlock(&dir->lock);
	if (own)
		dir_close(own);
	/* An error after some entries: return what we have, as passthrough_ll. */
	if (err && rem == size)
		fuse_reply_err(req, err);
	else
		fuse_reply_buf(req, buf, size - rem);
}

static void vr_ll_readdir(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off,
                          struct fuse_file_info *fi)
{
	do_readdir(req, ino, size, off, fi, false);
}

static void vr_ll_readdirplus(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off,
                              struct fuse_file_info *fi)
{
	do_readdir(req, ino, size, off, fi, true);
}

static void vr_ll_releasedir(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	if (fi->fh) {
		dir_track((VrDir *)(uintptr_t)fi->fh, false);
		dir_close((VrDir *)(uintptr_t)fi->fh);
	}
	fuse_reply_err(req, 0);
}

static void vr_ll_fsyncdir(fuse_req_t req, fuse_ino_t ino, int datasync, struct fuse_file_info *fi)
{
	VrDir *dir = (VrDir *)(uintptr_t)fi->fh;
	if (!dir) {
		fuse_reply_err(req, -vr_inode_sync(vr_inode_get(ino), datasync));
		return;
	}
	int fd = dirfd(dir->dp);
	int err = (datasync ? fdatasync(fd) : fsync(fd)) < 0 ? errno : 0;
	fuse_reply_err(req, err);
}

/* --- creating names --- */

static void reply_new_entry(fuse_req_t req, fuse_ino_t parent, const char *name, const char *op,
                            const char *rel)
{
	struct fuse_entry_param e;
	int r = vr_do_lookup(req, parent, name, &e, NULL);
	vr_audit_req(req, VR_AUDIT_WRITES, op, rel, r < 0 ? vr_errno_name(-r) : "ok", NULL, NULL);
	if (r < 0)
		fuse_reply_err(req, -r);
	else
		fuse_reply_entry(req, &e);
}

static void vr_ll_mkdir(fuse_req_t req, fuse_ino_t parent, const char *name, mode_t mode)
{
	VrInode *p = vr_inode_get(parent);
	g_autofree char *rel = NULL;
	if (!vr_new_name_allowed(req, "mkdir", p, name, S_IFDIR, &rel))
		return;
	VR_CREATING(p);
	vr_journal_before_create(p, name, rel);
	if (mkdirat(p->fd, name, vr_new_mode(req, p, mode)) < 0) {
		fuse_reply_err(req, errno);
		return;
	}
	vr_ids_give_name(req, p, name, true);
	vr_gitgate_note_mkdir(p, name, vr_decide_child(p, name, true, NULL));
	reply_new_entry(req, parent, name, "mkdir", rel);
}

static void vr_ll_mknod(fuse_req_t req, fuse_ino_t parent, const char *name, mode_t mode, dev_t rdev)
{
	VrInode *p = vr_inode_get(parent);
	g_autofree char *rel = NULL;
	if (!vr_new_name_allowed(req, "mknod", p, name, mode & S_IFMT, &rel))
		return;
	if (!S_ISREG(mode)) {
		/* No device nodes (the host would trust them), no fifos or
		 * sockets (a host tool that later opens or reads one hangs:
		 * grep -r, an editor's file picker, a backup). */
		vr_audit_req(req, VR_AUDIT_DENIED, "mknod", rel, "EPERM", NULL, NULL);
		fuse_reply_err(req, EPERM);
		return;
	}
	VR_CREATING(p);
	vr_journal_before_create(p, name, rel);
	if (mknodat(p->fd, name, vr_new_mode(req, p, mode), 0) < 0) {
		fuse_reply_err(req, errno);
		return;
	}
	vr_ids_give_name(req, p, name, false);
	vr_keyfile_created(p->fd, name, rel); /* at a key path: a key file again */
	reply_new_entry(req, parent, name, "mknod", rel);
}

static void vr_ll_symlink(fuse_req_t req, const char *link, fuse_ino_t parent, const char *name)
{
	VrInode *p = vr_inode_get(parent);
	g_autofree char *rel = NULL;
	/* The target is stored as given: it is resolved in the reader's
	 * namespace (on the view again), never by the daemon. */
	if (!vr_new_name_allowed(req, "symlink", p, name, S_IFLNK, &rel))
		return;
	VR_CREATING(p);
	vr_journal_before_create(p, name, rel);
	if (symlinkat(link, p->fd, name) < 0) {
		fuse_reply_err(req, errno);
		return;
	}
	vr_ids_give_name(req, p, name, false);
	reply_new_entry(req, parent, name, "symlink", rel);
}

static void vr_ll_link(fuse_req_t req, fuse_ino_t ino, fuse_ino_t newparent, const char *newname)
{
	VrInode *inode = vr_inode_get(ino), *np = vr_inode_get(newparent);
	VrDecision sd = vr_inode_decision(inode);
	g_autofree char *srel = vr_inode_relpath(inode);
	g_autofree char *rel = NULL;
	/* A second name for a read-only or redacted file would be a writable
	 * or unmasked door to it. */
	if (sd.cls != VR_CLASS_VISIBLE) {
		vr_refuse(req, "link", srel, sd, sd.cls == VR_CLASS_HIDE ? ENOENT : EACCES);
		return;
	}
	/* Writes through a second name of a .git file would bypass its gate. */
	if (vr_git_is_gitfile(inode)) {
		vr_refuse(req, "link", srel, (VrDecision){VR_CLASS_READONLY, vr_git_dotgit_rule()}, EACCES);
		return;
	}
	if (!vr_inode_still_named(inode)) {
		fuse_reply_err(req, ESTALE);
		return;
	}
	if (!vr_new_name_allowed(req, "link", np, newname, 0, &rel))
		return;
	if (!vr_keyfile_link_allowed(req, inode, srel, rel))
		return;
	VR_CREATING(np);
	vr_journal_before_create(np, newname, rel);
	char proc[64];
	vr_proc_path(proc, inode->fd);
	if (linkat(AT_FDCWD, proc, np->fd, newname, AT_SYMLINK_FOLLOW) < 0) {
		fuse_reply_err(req, errno);
		return;
	}
	struct fuse_entry_param e;
	int r = vr_do_lookup(req, newparent, newname, &e, NULL);
	vr_audit_req(req, VR_AUDIT_WRITES, "link", srel, r < 0 ? vr_errno_name(-r) : "ok", NULL, rel);
	if (r < 0)
		fuse_reply_err(req, -r);
	else
		fuse_reply_entry(req, &e);
}

/* --- removing names --- */

static void do_remove(fuse_req_t req, fuse_ino_t parent, const char *name, bool is_dir)
{
	const char *op = is_dir ? "rmdir" : "unlink";
	VrInode *p = vr_inode_get(parent);
	if (!vr_name_ok(name)) {
		fuse_reply_err(req, EINVAL);
		return;
	}
	if (vr_stale_parent(req, p))
		return;
	g_autofree char *rel = NULL;
	VrDecision d = vr_decide_child(p, name, is_dir, &rel);
	if (!is_dir && vr_gitgate_applies(d)) {
		if (!vr_gitgate_unlink_allowed(req, p, name, rel, d))
			return;
	} else if (d.cls != VR_CLASS_VISIBLE) {
		vr_refuse(req, op, rel, d, d.cls == VR_CLASS_HIDE ? ENOENT : EACCES);
		return;
	}
	if (!is_dir && !vr_content_scan_guard_name(req, op, p->fd, name, d, rel))
		return;
	vr_journal_before_remove(p, name, rel);
	struct stat st;
	bool linked = !is_dir && fstatat(p->fd, name, &st, AT_SYMLINK_NOFOLLOW) == 0 && st.st_nlink > 1;
	int err = unlinkat(p->fd, name, is_dir ? AT_REMOVEDIR : 0) < 0 ? errno : 0;
	if (err == 0 && linked)
		vr_inode_name_removed(st.st_dev, st.st_ino, rel);
	if (err == 0) {
		vr_handles_name_changed();
		vr_watch_name_removed(p, name);
	}
	vr_audit_req(req, VR_AUDIT_WRITES, op, rel, err ? vr_errno_name(err) : "ok", NULL, NULL);
	fuse_reply_err(req, err);
}

static void vr_ll_unlink(fuse_req_t req, fuse_ino_t parent, const char *name)
{
	do_remove(req, parent, name, false);
}

static void vr_ll_rmdir(fuse_req_t req, fuse_ino_t parent, const char *name)
{
	do_remove(req, parent, name, true);
}

/* --- rename --- */

static void vr_ll_rename(fuse_req_t req, fuse_ino_t parent, const char *name,
                         fuse_ino_t newparent, const char *newname, unsigned int flags)
{
	VrInode *p = vr_inode_get(parent), *np = vr_inode_get(newparent);
	struct stat sst, dst;
	bool dst_exists;
	const VrPolicy *pol = vr_view->policy;

	if (flags & ~(unsigned)(RENAME_NOREPLACE | RENAME_EXCHANGE)) {
		fuse_reply_err(req, EINVAL); /* no RENAME_WHITEOUT */
		return;
	}
	if (!vr_name_ok(name) || !vr_name_ok(newname)) {
		fuse_reply_err(req, EINVAL);
		return;
	}
	if (vr_stale_parent(req, p) || (np != p && vr_stale_parent(req, np)))
		return;
	if (fstatat(p->fd, name, &sst, AT_SYMLINK_NOFOLLOW) < 0) {
		fuse_reply_err(req, errno);
		return;
	}
	dst_exists = fstatat(np->fd, newname, &dst, AT_SYMLINK_NOFOLLOW) == 0;

	g_autofree char *srel = NULL, *drel = NULL;
	VrDecision sd = vr_decide_child(p, name, S_ISDIR(sst.st_mode), &srel);
	VrDecision dd = vr_decide_child(np, newname, S_ISDIR(sst.st_mode), &drel);
	if (sd.cls == VR_CLASS_HIDE) {
		vr_refuse(req, "rename", srel, sd, ENOENT);
		return;
	}
	if (sd.cls != VR_CLASS_VISIBLE) {
		vr_refuse(req, "rename", srel, sd, EACCES);
		return;
	}
	if (vr_gitgate_applies(dd)) {
		/* Onto git config: the daemon writes what the gate accepts (a
		 * source holding a secret found by content stays put, as below). */
		if (vr_content_scan_guard_name(req, "rename", p->fd, name, sd, srel))
			vr_gitgate_rename(req, p, name, srel, &sst, np, newname, drel, dd, flags);
		return;
	}
	if (dd.cls != VR_CLASS_VISIBLE) {
		/* Onto a hidden or read-only name, or into such an area. */
		vr_refuse(req, "rename", drel, dd, EACCES);
		return;
	}
	const VrRule *git = vr_git_refuse_rename(p, srel, name, sst.st_mode & S_IFMT, np, drel, newname, flags);
	if (git) {
		vr_refuse(req, "rename", drel, (VrDecision){VR_CLASS_READONLY, git}, EACCES);
		return;
	}
	/* A file holding a secret found by content is read-only: not moved,
	 * and not replaced (an editor's temp-and-rename save of the masked
	 * text would overwrite the real secret). */
	if (!vr_content_scan_guard_name(req, "rename", p->fd, name, sd, srel) ||
	    (dst_exists && !vr_content_scan_guard_name(req, "rename", np->fd, newname, dd, drel)))
		return;
	if (dst_exists) {
		/* What is replaced (or swapped) must itself be modifiable. */
		VrDecision od = vr_decide_child(np, newname, S_ISDIR(dst.st_mode), NULL);
		if (od.cls != VR_CLASS_VISIBLE) {
			vr_refuse(req, "rename", drel, od, EACCES);
			return;
		}
	}
	if ((flags & RENAME_EXCHANGE) && dst_exists) {
		VrDecision xd = vr_decide_child(p, name, S_ISDIR(dst.st_mode), NULL);
		if (xd.cls != VR_CLASS_VISIBLE) {
			vr_refuse(req, "rename", srel, xd, EACCES);
			return;
		}
		if (S_ISDIR(dst.st_mode) && (vr_policy_dir_is_rule_sensitive(pol, srel) ||
		                             vr_policy_dir_is_rule_sensitive(pol, drel))) {
			vr_refuse(req, "rename", drel, xd, EXDEV);
			return;
		}
	}
	if (S_ISDIR(sst.st_mode) && (vr_policy_dir_is_rule_sensitive(pol, srel) ||
	                             vr_policy_dir_is_rule_sensitive(pol, drel))) {
		/* Anchored rules look into this directory: moving it would
		 * change what they match. mv falls back to copy + delete. */
		vr_refuse(req, "rename", srel, sd, EXDEV);
		return;
	}

	/* Onto a key file's name: the daemon's own unmasked copy goes there. */
	if (vr_keyfile_rename(req, p, name, srel, &sst, np, newname, drel, dd, flags))
		return;

	VR_CREATING(np);
	vr_journal_before_rename(p, name, srel, np, newname, drel, flags);
	int err = renameat2(p->fd, name, np->fd, newname, flags) < 0 ? errno : 0;
	if (err == 0) {
		vr_handles_name_changed();
		if (!(flags & RENAME_EXCHANGE))
			vr_watch_name_removed(p, name);
		vr_inode_renamed(sst.st_dev, sst.st_ino, srel, drel, np, newname);
		if ((flags & RENAME_EXCHANGE) && dst_exists)
			vr_inode_renamed(dst.st_dev, dst.st_ino, drel, srel, p, name);
	}
	vr_audit_req(req, VR_AUDIT_WRITES, "rename", srel, err ? vr_errno_name(err) : "ok", NULL, drel);
	fuse_reply_err(req, err);
}

void vr_dirs_close_all(void)
{
	pthread_mutex_lock(&open_dirs_lock);
	GHashTable *left = open_dirs;
	open_dirs = NULL;
	pthread_mutex_unlock(&open_dirs_lock);
	if (!left)
		return;
	GHashTableIter it;
	gpointer dir;
	g_hash_table_iter_init(&it, left);
	while (g_hash_table_iter_next(&it, &dir, NULL))
		dir_close(dir);
	g_hash_table_unref(left);
}

void vr_ops_dir(struct fuse_lowlevel_ops *ops)
{
	ops->lookup = vr_ll_lookup;
	ops->forget = vr_ll_forget;
	ops->forget_multi = vr_ll_forget_multi;
	ops->opendir = vr_ll_opendir;
	ops->readdir = vr_ll_readdir;
	ops->readdirplus = vr_ll_readdirplus;
	ops->releasedir = vr_ll_releasedir;
	ops->fsyncdir = vr_ll_fsyncdir;
	ops->mkdir = vr_ll_mkdir;
	ops->mknod = vr_ll_mknod;
	ops->symlink = vr_ll_symlink;
	ops->link = vr_ll_link;
	ops->unlink = vr_ll_unlink;
	ops->rmdir = vr_ll_rmdir;
	ops->rename = vr_ll_rename;
}
