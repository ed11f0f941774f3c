/* Lookup: the one place a name becomes a host object, and so the place the
 * policy decides. Each lookup is one openat(parent_fd, name, O_PATH|O_NOFOLLOW)
 * followed by an fstat of what was opened: the decision is made for the
 * object actually held, so swapping a directory for a symlink between two
 * steps cannot make the daemon follow anything. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/vfs.h>
#include <linux/fs.h>
#include <unistd.h>

#include "common/cleanup.h"
#include "fusefs/hardlinks.h"
#include "common/resolve.h"
#include "fusefs/view-private.h"

void vr_proc_path(char buf[static 64], int fd)
{
	snprintf(buf, 64, "/proc/self/fd/%d", fd);
}

bool vr_name_ok(const char *name)
{
	/* The kernel sends neither "." nor ".." (no export support), nor a
	 * slash; refuse them anyway: ".." of the root would be outside. */
	return name[0] && strcmp(name, ".") != 0 && strcmp(name, "..") != 0 && !strchr(name, '/');
}

char *vr_child_relpath(const char *parent, const char *name)
{
	return parent[0] ? g_strconcat(parent, "/", name, NULL) : g_strdup(name);
}

bool vr_dir_is_case_insensitive(int fd)
{
	static int assume = -1;
	if (assume < 0) {
		/* For tests on kernels without casefold: treat every directory
		 * as case-insensitive (only ever makes the view stricter). */
		const char *e = secure_getenv("VR_VIEW_ASSUME_CASEFOLD");
		assume = e && strcmp(e, "1") == 0;
	}
	if (assume)
		return true;
	struct statfs sf;
	if (fstatfs(fd, &sf) == 0) {
		switch ((unsigned long)sf.f_type) {
		case 0x4d44:     /* MSDOS_SUPER_MAGIC: vfat, msdos */
		case 0x2011BAB0: /* exfat */
		case 0x5346544e: /* ntfs */
		case 0x7366746e: /* ntfs3 */
		case 0xFF534D42: /* cifs */
		case 0xFE534D42: /* smb2 */
			return true;
		}
	}
	/* ext4/f2fs casefold is per directory (chattr +F). */
	char proc[64];
	vr_proc_path(proc, fd);
	vr_cleanup_fd int dfd = open(proc, O_RDONLY | O_DIRECTORY | O_NONBLOCK | O_CLOEXEC);
	if (dfd < 0)
		return false;
	int flags = 0;
	return ioctl(dfd, FS_IOC_GETFLAGS, &flags) == 0 && (flags & FS_CASEFOLD_FL);
}

/* A name that is not a directory is decided as a file and as a directory,
 * the stricter answer winning: a symlink named .vscode leads where a
 * directory of that name would, so `.vscode/` must hold for it; a file of
 * a directory's name is refused just as well. */
static VrDecision decide_one(VrDecision pd, const char *relpath, bool is_dir)
{
	const VrPolicy *pol = vr_view->policy;
	return is_dir ? vr_policy_decide_child(pol, pd, relpath, true)
	              : vr_policy_decide_child_either(pol, pd, relpath);
}

VrDecision vr_decide_path(VrDecision pd, const char *relpath, bool is_dir, bool casefold)
{
	VrDecision d = decide_one(pd, relpath, is_dir);
	if (casefold && d.cls != VR_CLASS_HIDE) {
		g_autofree char *lower = g_utf8_strdown(relpath, -1);
		if (strcmp(lower, relpath) != 0) {
			VrDecision l = decide_one(pd, lower, is_dir);
			if (l.cls > d.cls)
				d = l;
		}
	}
	return d;
}

VrDecision vr_decide_child_alias(VrInode *parent, const char *name, bool is_dir, char **ret_relpath,
                                 char **ret_alias, VrDecision *ret_ad)
{
	pthread_mutex_lock(&vr_view->table_lock);
	char *relpath = vr_child_relpath(parent->relpath, name);
	const char *pbase = strrchr(parent->relpath, '/');
	char *hooks_rel = parent->relpath[0] && vr_git_names_hooks(pbase ? pbase + 1 : parent->relpath)
	                          ? g_strdup(parent->relpath) : NULL;
	VrDecision pd = parent->decision;
	char *alias = parent->alias ? vr_child_relpath(parent->alias, name) : NULL;
	VrDecision apd = parent->alias_decision;
	pthread_mutex_unlock(&vr_view->table_lock);

	VrDecision d = vr_decide_path(pd, relpath, is_dir, parent->casefold);
	/* Below the target of a host link whose name a rule covers: also
	 * decided under the name the link gives it (links.c). */
	VrDecision ad = {VR_CLASS_VISIBLE, NULL};
	if (alias) {
		ad = vr_decide_path(apd, alias, is_dir, parent->casefold);
		if (ad.cls > d.cls)
			d = ad;
	}
	/* hooks/ of a git directory, decided on what the host holds now. */
	d = vr_git_floor(parent, hooks_rel, name, d);
	g_free(hooks_rel);
	if (ret_relpath)
		*ret_relpath = relpath;
	else
		g_free(relpath);
	if (ret_alias)
		*ret_alias = alias;
	else
		g_free(alias);
	if (ret_ad)
		*ret_ad = ad;
	return d;
}

VrDecision vr_decide_child(VrInode *parent, const char *name, bool is_dir, char **ret_relpath)
{
	return vr_decide_child_alias(parent, name, is_dir, ret_relpath, NULL, NULL);
}

const char *vr_result_of(VrDecision d)
{
	switch (d.cls) {
	case VR_CLASS_HIDE: return "hidden";
	case VR_CLASS_READONLY: return "readonly";
	case VR_CLASS_REDACT: return "redacted";
	default: return "ok";
	}
}

void vr_refuse(fuse_req_t req, const char *op, const char *relpath, VrDecision d, int err)
{
	const char *result = d.cls != VR_CLASS_VISIBLE ? vr_result_of(d) : vr_errno_name(err);
	vr_audit_req(req, VR_AUDIT_DENIED, op, relpath, result, d.rule, NULL);
	fuse_reply_err(req, err);
}

bool vr_inode_still_named(VrInode *inode)
{
	return vr_inode_name_state(inode) == 1;
}

int vr_inode_name_state(VrInode *inode)
{
	if (inode == &vr_view->root)
		return 1;
	g_autofree char *rel = vr_inode_relpath(inode);
	vr_cleanup_fd int dfd = -1;
	const char *name;
	int r, tries = 0;
	do {
		/* Beyond PATH_MAX and openat2's rename races are the
		 * resolver's (common/resolve.c). */
		r = vr_resolve_parent(vr_view->root.fd, rel, &dfd, &name);
		/* Out of fds is not "renamed": a walk bigger than our limit
		 * would otherwise answer ESTALE to opens that should work. */
	} while (r < 0 && vr_evict_retry(-r, &tries));
	if (r < 0)
		return r == -EACCES ? -EACCES : 0;
	struct stat st;
	int err = fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) == 0 ? 0 : errno;
	if (err == EACCES)
		return -EACCES;
	return err == 0 && st.st_dev == inode->dev && st.st_ino == inode->ino;
}

int vr_inode_sync(VrInode *inode, int datasync)
{
	char proc[64];
	vr_proc_path(proc, inode->fd);
	vr_cleanup_fd int fd = open(proc, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	return fd < 0 || (datasync ? fdatasync(fd) : fsync(fd)) < 0 ? -errno : 0;
}

bool vr_stale_parent(fuse_req_t req, VrInode *parent)
{
	if (vr_inode_still_named(parent))
		return false;
	fuse_reply_err(req, ESTALE);
	return true;
}

int vr_stat_inode(VrInode *inode, struct stat *st)
{
	if (fstatat(inode->fd, "", st, AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW) < 0)
		return -errno;
	vr_present_attr(st);
	return 0;
}

int vr_do_lookup(fuse_req_t req, fuse_ino_t parent_ino, const char *name,
                 struct fuse_entry_param *e, const char *op)
{
	VrInode *parent = vr_inode_get(parent_ino);
	struct stat st;

	atomic_fetch_add(&vr_view->n_lookups, 1);
	memset(e, 0, sizeof *e);
	if (!vr_name_ok(name))
		return -ENOENT;

	int fd = openat(parent->fd, name, O_PATH | O_NOFOLLOW | O_CLOEXEC);
	/* Out of fds (one per inode the kernel holds): cold entries are
	 * invalidated and the kernel's forgets give fds back. */
	for (int tries = 0; fd < 0 && vr_evict_retry(errno, &tries);)
		fd = openat(parent->fd, name, O_PATH | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0) {
		if (errno == ENOENT)
			e->entry_timeout = vr_watch_negative_timeout(parent, name); /* a cacheable miss */
		return -errno;
	}
	if (fstatat(fd, "", &st, AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW) < 0) {
		int err = errno;
		close(fd);
		return -err;
	}

	/* A symlink whose name a rule covers lends that name to its target. */
	if (S_ISLNK(st.st_mode)) {
		g_autofree char *prel = vr_inode_relpath(parent);
		vr_links_note(parent->fd, prel, name, parent->casefold);
	}
	g_autofree char *relpath = NULL;
	char *alias = NULL;
	VrDecision ad;
	VrDecision d = vr_decide_child_alias(parent, name, S_ISDIR(st.st_mode), &relpath, &alias, &ad);
	d = vr_gitgate_lookup_decision(parent, name, &st, d);
	char *lalias = vr_links_alias_of(&st);
	if (lalias) {
		g_free(alias);
		alias = lalias;
		ad = vr_policy_decide(vr_view->policy, alias, S_ISDIR(st.st_mode));
		if (ad.cls > d.cls)
			d = ad;
	}
	/* A file with several names takes the strictest class of them all. */
	vr_hardlinks_note(&st, d);
	d = vr_hardlinks_decide(vr_view->root.fd, &st, d);
	if (d.cls == VR_CLASS_HIDE) {
		close(fd);
		g_free(alias);
		if (op)
			vr_audit_req(req, VR_AUDIT_DENIED, op, relpath, "hidden", d.rule, NULL);
		return -ENOENT;
	}

	VrInode *inode = vr_inode_intern(fd, &st, relpath, d);
	g_autofree char *seen = g_strdup(lalias);
	if (alias)
		vr_inode_set_alias(inode, alias, ad);
	/* A link to it noted by another thread between the look-up above
	 * and the intern: its walk of the table may have missed this inode. */
	if (vr_links_recheck(inode, seen)) {
		vr_inode_forget(inode, 1);
		if (op)
			vr_audit_req(req, VR_AUDIT_DENIED, op, relpath, "hidden", NULL, NULL);
		return -ENOENT;
	}
	vr_inode_note_entry(inode, parent, name);
	/* A directory is watched from its first lookup on, before any of its
	 * names can be; what changed between the fstat and the watch is read
	 * again. */
	if (S_ISDIR(st.st_mode) && vr_watch_dir(inode) == VR_WATCH_NEW)
		fstatat(inode->fd, "", &st, AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW);
	atomic_store(&inode->attr_watched, atomic_load(&parent->watched));
	if (op && vr_audit_wants(VR_AUDIT_ALL))
		vr_audit_req(req, VR_AUDIT_ALL, op, relpath, vr_result_of(d), d.rule, NULL);
	vr_present_attr(&st);
	e->ino = (uintptr_t)inode;
	e->attr = st;
	e->attr_timeout = vr_watch_attr_timeout(inode, &st);
	e->entry_timeout = vr_watch_entry_timeout(parent);
	return 0;
}

/* Refuses (and logs) unless the new name is plainly visible: hidden,
 * read-only and redacted names cannot be created. */
bool vr_new_name_allowed(fuse_req_t req, const char *op, VrInode *parent, const char *name,
                         mode_t type, char **ret_rel)
{
	if (!vr_name_ok(name)) {
		fuse_reply_err(req, EINVAL);
		return false;
	}
	/* Decided for the parent's path: it must still be that path. */
	if (vr_stale_parent(req, parent))
		return false;
	char *rel = NULL;
	bool is_dir = type == S_IFDIR;
	VrDecision d = vr_decide_child(parent, name, is_dir, &rel);
	if (d.cls != VR_CLASS_VISIBLE && !vr_gitgate_new_name_exempt(op, parent, name, is_dir, d)) {
		vr_refuse(req, op, rel, d, EACCES);
		g_free(rel);
		return false;
	}
	const VrRule *git = vr_git_refuse_new(parent, rel, name, type);
	if (git) {
		vr_refuse(req, op, rel, (VrDecision){VR_CLASS_READONLY, git}, EACCES);
		g_free(rel);
		return false;
	}
	if (!vr_keyfile_new_name_allowed(req, op, rel, type)) {
		g_free(rel);
		return false;
	}
	*ret_rel = rel;
	return true;
}

