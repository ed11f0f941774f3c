/* Extended attributes: only user.* and POSIX ACLs pass. security.* and
 * trusted.* (capabilities, SELinux/IMA labels, overlay markers) are what the
 * host trusts, so the view neither shows nor sets them. */
#include <errno.h>
#include <string.h>
#include <sys/xattr.h>

#include "fusefs/view-private.h"

static bool xattr_allowed(const char *name)
{
	return strncmp(name, "user.", 5) == 0 || strcmp(name, "system.posix_acl_access") == 0 ||
	       strcmp(name, "system.posix_acl_default") == 0;
}

/* Symlinks carry no user xattrs on Linux, and the /proc/self/fd path would
 * name the link's target: refuse rather than risk following. */
static bool usable(VrInode *inode, char proc[static 64])
{
	if (S_ISLNK(inode->type))
		return false;
	vr_proc_path(proc, inode->fd);
	return true;
}

static bool modifiable(fuse_req_t req, VrInode *inode, const char *op)
{
	VrDecision d = vr_inode_decision(inode);
	g_autofree char *rel = vr_inode_relpath(inode);
	if (d.cls != VR_CLASS_VISIBLE) {
		vr_refuse(req, op, rel, d, d.cls == VR_CLASS_HIDE ? ENOENT : EACCES);
		return false;
	}
	/* A file holding a secret found by content is read-only: a POSIX ACL
	 * granting other users read is a chmod by another name. */
	return vr_content_scan_guard(req, op, inode, d, rel);
}

static void reply_sized(fuse_req_t req, const char *buf, ssize_t n, size_t size)
{
	if (n < 0)
		fuse_reply_err(req, errno);
	else if (size == 0)
		fuse_reply_xattr(req, (size_t)n);
	else
		fuse_reply_buf(req, buf, (size_t)n);
}

static void vr_ll_getxattr(fuse_req_t req, fuse_ino_t ino, const char *name, size_t size)
{
	VrInode *inode = vr_inode_get(ino);
	char proc[64];
	if (!xattr_allowed(name)) {
		/* "Not supported", not "no such attribute": tools cache that
		 * per file system (ls -l stops asking for security.selinux
		 * after the first file), while ENODATA costs a round trip per
		 * file. The kernel only gives up on all xattrs for ENOSYS. */
		fuse_reply_err(req, EOPNOTSUPP);
		return;
	}
	if (!usable(inode, proc)) {
		fuse_reply_err(req, ENODATA);
		return;
	}
	g_autofree char *buf = size ? g_malloc(size) : NULL;
	ssize_t n = getxattr(proc, name, buf, size);
	reply_sized(req, buf, n, size);
}

static void vr_ll_listxattr(fuse_req_t req, fuse_ino_t ino, size_t size)
{
	VrInode *inode = vr_inode_get(ino);
	char proc[64];
	if (!usable(inode, proc)) {
		reply_sized(req, NULL, 0, size);
		return;
	}
	ssize_t n = listxattr(proc, NULL, 0);
	if (n < 0) {
		fuse_reply_err(req, errno);
		return;
	}
	g_autofree char *all = g_malloc(n + 1);
	n = listxattr(proc, all, n);
	if (n < 0) {
		fuse_reply_err(req, errno == ERANGE ? EAGAIN : errno);
		return;
	}
	/* Filter in place: names the view would not serve are not listed. */
	size_t out = 0;
	for (ssize_t i = 0; i < n;) {
		size_t len = strlen(all + i) + 1;
		if (xattr_allowed(all + i)) {
			memmove(all + out, all + i, len);
			out += len;
		}
		i += (ssize_t)len;
	}
	if (size && out > size)
		fuse_reply_err(req, ERANGE);
	else
		reply_sized(req, all, (ssize_t)out, size);
}

static void vr_ll_setxattr(fuse_req_t req, fuse_ino_t ino, const char *name, const char *value,
                           size_t size, int flags)
{
	VrInode *inode = vr_inode_get(ino);
	char proc[64];
	if (!modifiable(req, inode, "setxattr"))
		return;
	if (!xattr_allowed(name) || !usable(inode, proc)) {
		g_autofree char *rel = vr_inode_relpath(inode);
		vr_audit_req(req, VR_AUDIT_DENIED, "setxattr", rel, "EPERM", NULL, NULL);
		fuse_reply_err(req, EPERM);
		return;
	}
	vr_change_begin(inode);
	int err = setxattr(proc, name, value, size, flags) < 0 ? errno : 0;
	vr_change_end(inode, err == 0);
	g_autofree char *rel = vr_inode_relpath(inode);
	vr_audit_req(req, VR_AUDIT_WRITES, "setxattr", rel, err ? vr_errno_name(err) : "ok", NULL, NULL);
	fuse_reply_err(req, err);
}

static void vr_ll_removexattr(fuse_req_t req, fuse_ino_t ino, const char *name)
{
	VrInode *inode = vr_inode_get(ino);
	char proc[64];
	if (!modifiable(req, inode, "removexattr"))
		return;
	if (!xattr_allowed(name) || !usable(inode, proc)) {
		fuse_reply_err(req, ENODATA);
		return;
	}
	vr_change_begin(inode);
	int err = removexattr(proc, name) < 0 ? errno : 0;
	vr_change_end(inode, err == 0);
	g_autofree char *rel = vr_inode_relpath(inode);
	vr_audit_req(req, VR_AUDIT_WRITES, "removexattr", rel, err ? vr_errno_name(err) : "ok", NULL,
	             NULL);
	fuse_reply_err(req, err);
}

void vr_ops_xattr(struct fuse_lowlevel_ops *ops)
{
	ops->getxattr = vr_ll_getxattr;
	ops->listxattr = vr_ll_listxattr;
	ops->setxattr = vr_ll_setxattr;
	ops->removexattr = vr_ll_removexattr;
}
