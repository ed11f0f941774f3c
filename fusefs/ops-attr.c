/* Attributes: getattr/setattr, readlink, statfs. setattr is a modification:
 * read-only and redacted inodes refuse every part of it. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include "fusefs/journal.h"
#include "fusefs/view-private.h"

static void reply_attr(fuse_req_t req, VrInode *inode)
{
	struct stat st;
	int r = vr_stat_inode(inode, &st);
	if (r < 0) {
		fuse_reply_err(req, -r);
		return;
	}
	/* Read-only files keep their write bits: with default_permissions the
	 * kernel would otherwise refuse the write itself, and the refusal
	 * would never reach the audit log. */
	fuse_reply_attr(req, &st, vr_watch_attr_timeout(inode, &st));
}

static void vr_ll_getattr(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	reply_attr(req, vr_inode_get(ino));
}

static int set_times(VrInode *inode, int fd, const struct stat *attr, int valid)
{
	struct timespec tv[2] = {{.tv_nsec = UTIME_OMIT}, {.tv_nsec = UTIME_OMIT}};
	if (valid & FUSE_SET_ATTR_ATIME_NOW)
		tv[0].tv_nsec = UTIME_NOW;
	else if (valid & FUSE_SET_ATTR_ATIME)
		tv[0] = attr->st_atim;
	if (valid & FUSE_SET_ATTR_MTIME_NOW)
		tv[1].tv_nsec = UTIME_NOW;
	else if (valid & FUSE_SET_ATTR_MTIME)
		tv[1] = attr->st_mtim;
	if (fd >= 0)
		return futimens(fd, tv) < 0 ? -errno : 0;
	/* AT_EMPTY_PATH works on the O_PATH fd itself, symlinks included
	 * (tar sets their times); /proc/self/fd/N for older kernels. */
	if (utimensat(inode->fd, "", tv, AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW) == 0)
		return 0;
	if (errno != EINVAL && errno != ENOENT)
		return -errno;
	if (S_ISLNK(inode->type))
		return -EPERM;
	char proc[64];
	vr_proc_path(proc, inode->fd);
	return utimensat(AT_FDCWD, proc, tv, 0) < 0 ? -errno : 0;
}

static void vr_ll_setattr(fuse_req_t req, fuse_ino_t ino, struct stat *attr, int valid,
                          struct fuse_file_info *fi)
{
	VrInode *inode = vr_inode_get(ino);
	VrDecision d = vr_inode_decision(inode);
	/* fh is 0 for files the kernel opened itself (no-open mode). */
	int fd = fi && fi->fh ? ((VrFile *)(uintptr_t)fi->fh)->fd : -1;
	char proc[64];
	int r = 0;

	if (d.cls != VR_CLASS_VISIBLE && !vr_gitgate_setattr_exempt(inode, d, attr, valid)) {
		g_autofree char *rel = vr_inode_relpath(inode);
		vr_refuse(req, "setattr", rel, d, d.cls == VR_CLASS_HIDE ? ENOENT : EACCES);
		return;
	}
	{
		/* A file holding a secret found by content is read-only, its
		 * mode and owner too: a chmod o+r would hand the secret the
		 * agent cannot read to every other user of the host. */
		g_autofree char *rel = vr_inode_relpath(inode);
		if (!vr_content_scan_guard(req, "setattr", inode, d, rel))
			return;
	}
	vr_proc_path(proc, inode->fd);
	vr_journal_before_setattr(inode, valid);
	vr_change_begin(inode);

	if (valid & FUSE_SET_ATTR_MODE) {
		/* Nothing set-id comes out of the view. A directory keeps the
		 * set-group-ID bit it has (a shared group's directory: new files
		 * take its group; nothing runs with it), or `chmod g+w` inside
		 * would end the sharing. */
		mode_t mode = attr->st_mode & 07777 & ~(mode_t)(S_ISUID | S_ISGID);
		struct stat now;
		if (S_ISDIR(inode->type) && (attr->st_mode & S_ISGID) &&
		    fstatat(inode->fd, "", &now, AT_EMPTY_PATH) == 0 && (now.st_mode & S_ISGID))
			mode |= S_ISGID;
		if (fd >= 0)
			r = fchmod(fd, mode) < 0 ? -errno : 0;
		else if (S_ISLNK(inode->type))
			r = -EOPNOTSUPP;
		else
			r = fchmodat(AT_FDCWD, proc, mode, 0) < 0 ? -errno : 0;
		if (r < 0)
			goto out;
	}
	if (valid & (FUSE_SET_ATTR_UID | FUSE_SET_ATTR_GID)) {
		struct stat now;
		if (fstatat(inode->fd, "", &now, AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW) < 0) {
			r = -errno;
			goto out;
		}
		uid_t uid = valid & FUSE_SET_ATTR_UID ? vr_ids_host_uid(attr->st_uid, now.st_uid) : (uid_t)-1;
		gid_t gid = valid & FUSE_SET_ATTR_GID ? vr_ids_host_gid(attr->st_gid, now.st_gid) : (gid_t)-1;
		if (fchownat(inode->fd, "", uid, gid, AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW) < 0) {
			r = -errno;
			goto out;
		}
	}
	if (valid & FUSE_SET_ATTR_SIZE) {
		if (vr_keyfile_is(inode))
			r = vr_keyfile_truncate(inode, attr->st_size); /* through its masked image */
		else if (vr_git_is_gitfile(inode))
			r = vr_git_truncate(req, inode, fd, attr->st_size); /* checked first */
		else if (fd >= 0)
			r = ftruncate(fd, attr->st_size) < 0 ? -errno : 0;
		else if (!S_ISREG(inode->type))
			r = -EINVAL;
		else
			r = truncate(proc, attr->st_size) < 0 ? -errno : 0;
		if (r < 0)
			goto out;
	}
	if (valid & (FUSE_SET_ATTR_ATIME | FUSE_SET_ATTR_MTIME)) {
		r = set_times(inode, fd, attr, valid);
		if (r < 0)
			goto out;
	}
out:
	vr_change_end(inode, true); /* a failed part may follow a done one */
	if (vr_audit_wants(VR_AUDIT_WRITES)) {
		g_autofree char *rel = vr_inode_relpath(inode);
		vr_audit_req(req, VR_AUDIT_WRITES, "setattr", rel, r < 0 ? vr_errno_name(-r) : "ok",
		             NULL, NULL);
	}
	if (r < 0) {
		fuse_reply_err(req, -r);
		return;
	}
	reply_attr(req, inode);
}

static void vr_ll_readlink(fuse_req_t req, fuse_ino_t ino)
{
	VrInode *inode = vr_inode_get(ino);
	char buf[PATH_MAX + 1];
	ssize_t n = readlinkat(inode->fd, "", buf, sizeof buf);
	if (n < 0) {
		fuse_reply_err(req, errno);
		return;
	}
	if (n == sizeof buf) {
		fuse_reply_err(req, ENAMETOOLONG);
		return;
	}
	buf[n] = '\0';
	if (vr_audit_wants(VR_AUDIT_ALL)) {
		g_autofree char *rel = vr_inode_relpath(inode);
		vr_audit_req(req, VR_AUDIT_ALL, "readlink", rel, "ok", NULL, NULL);
	}
	fuse_reply_readlink(req, buf);
}

static void vr_ll_statfs(fuse_req_t req, fuse_ino_t ino)
{
	struct statvfs sv;
	if (fstatvfs(vr_inode_get(ino)->fd, &sv) < 0)
		fuse_reply_err(req, errno);
	else
		fuse_reply_statfs(req, &sv);
}

void vr_ops_attr(struct fuse_lowlevel_ops *ops)
{
	ops->getattr = vr_ll_getattr;
	ops->setattr = vr_ll_setattr;
	ops->readlink = vr_ll_readlink;
	ops->statfs = vr_ll_statfs;
}
