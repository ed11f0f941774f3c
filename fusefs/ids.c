/* Who owns what the view shows and what it makes, and the mode of what it
 * makes.
 *
 * Presented owners. The kernel checks permissions (default_permissions)
 * against the ids in our attribute replies, read in the user namespace
 * the view is mounted in. Two kinds of ids are shown otherwise than the
 * host has them:
 *  - the daemon's own (vault-run run as root: the agent is present_uid,
 *    65534, and the project is root's): shown as present_uid/present_gid;
 *  - ids with no mapping in the daemon's user namespace (fstat gives the
 *    overflow id, 65534): the kernel would refuse every write to such an
 *    inode (HAS_UNMAPPED_ID in inode_permission), so a project whose files
 *    belong to the user's group `staff` would be read-only for them. They
 *    are shown as the agent's own. That grants nothing on the host: the
 *    daemon does the operation as the user (with the user's supplementary
 *    groups; its capabilities in its own namespace do not reach inodes
 *    with unmapped ids), so the host refuses what the user may not do.
 *
 * New objects. The kernel has already applied the caller's umask, or,
 * with FUSE_CAP_DONT_MASK, hands it over so that a parent with a default
 * ACL can ignore it as the host would: the daemon's own umask is 0 (set
 * in vr_view_run) and vr_new_mode() applies the caller's. Under `vault-run
 * mount --allow-other` as root, what another uid creates is given to that
 * uid right after the create (as bindfs does), so it can chmod, truncate
 * or link its own file; in a parent with the set-group-ID bit the group
 * the host gave stays. In `vault-run` run as root the agent's uid is only
 * a presentation of the user who ran it: what the agent creates is root's
 * on the host, presented as the agent's. */
#include <errno.h>
#include <fcntl.h>
#include <linux/capability.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "common/cleanup.h"
#include "fusefs/view-private.h"

/* Parses /proc/self/{uid,gid}_map: "inside outside count" per line. */
static void read_map(const char *path, VrIdMap *m)
{
	m->n = 0;
	m->all = false;
	FILE *f = fopen(path, "re");
	if (!f) {
		m->all = true; /* no user namespaces: every id is mapped */
		return;
	}
	unsigned long in, out, count;
	while (m->n < G_N_ELEMENTS(m->first) && fscanf(f, "%lu %lu %lu", &in, &out, &count) == 3) {
		m->first[m->n] = (uint32_t)in;
		m->count[m->n] = (uint32_t)count;
		m->n++;
	}
	fclose(f);
	m->all = m->n == 1 && m->first[0] == 0 && m->count[0] == 4294967295u;
}

static bool id_mapped(const VrIdMap *m, uint32_t id)
{
	if (m->all || m->n == 0) /* n == 0: never initialised (the fuzz harness) */
		return true;
	for (unsigned k = 0; k < m->n; k++)
		if (id >= m->first[k] && id - m->first[k] < m->count[k])
			return true;
	return false;
}

static bool has_cap_chown(void)
{
	struct __user_cap_header_struct hdr = {.version = _LINUX_CAPABILITY_VERSION_3};
	struct __user_cap_data_struct data[2] = {0};
	if (syscall(SYS_capget, &hdr, data) < 0)
		return false;
	return data[0].effective & (1u << CAP_CHOWN);
}

void vr_ids_init(VrView *v)
{
	read_map("/proc/self/uid_map", &v->uid_map);
	read_map("/proc/self/gid_map", &v->gid_map);
	/* Only where it matters: other uids can reach the view, and they are
	 * not the agent that present_uid stands for. */
	v->create_as_caller = v->opts->allow_other && v->opts->present_uid == (uid_t)-1 && has_cap_chown();
}

static uid_t present_uid(uid_t uid)
{
	VrView *v = vr_view;
	if (uid != v->daemon_uid && id_mapped(&v->uid_map, uid))
		return uid;
	return v->opts->present_uid != (uid_t)-1 ? v->opts->present_uid : v->daemon_uid;
}

static gid_t present_gid(gid_t gid)
{
	VrView *v = vr_view;
	if (gid != v->daemon_gid && id_mapped(&v->gid_map, gid))
		return gid;
	return v->opts->present_gid != (gid_t)-1 ? v->opts->present_gid : v->daemon_gid;
}

void vr_present_attr(struct stat *st)
{
	st->st_uid = present_uid(st->st_uid);
	st->st_gid = present_gid(st->st_gid);
}

/* A chown to the owner the file is presented with changes nothing on the
 * host (a `cp -p` or `tar` inside must not turn a `staff` file into the
 * user's group, or root's file into 65534's). Otherwise the agent's
 * presented id stands for the daemon's. ctime still changes, as chown(2)
 * of the same owner does. */
uid_t vr_ids_host_uid(uid_t want, uid_t now)
{
	if (want == (uid_t)-1 || want == present_uid(now))
		return (uid_t)-1;
	const VrViewOptions *o = vr_view->opts;
	return o->present_uid != (uid_t)-1 && want == o->present_uid ? vr_view->daemon_uid : want;
}

gid_t vr_ids_host_gid(gid_t want, gid_t now)
{
	if (want == (gid_t)-1 || want == present_gid(now))
		return (gid_t)-1;
	const VrViewOptions *o = vr_view->opts;
	return o->present_gid != (gid_t)-1 && want == o->present_gid ? vr_view->daemon_gid : want;
}

mode_t vr_new_mode(fuse_req_t req, VrInode *parent, mode_t mode)
{
	/* Nothing set-id comes out of the view. */
	mode &= ~(mode_t)(S_ISUID | S_ISGID);
	mode_t mask = fuse_req_ctx(req)->umask;
	if (!(mode & mask))
		return mode;
	/* A default ACL replaces the umask (POSIX.1e): the host applies the
	 * ACL when it creates, to the mode as asked for. */
	char proc[64];
	vr_proc_path(proc, parent->fd);
	if (getxattr(proc, "system.posix_acl_default", NULL, 0) > 0)
		return mode;
	return mode & ~mask;
}

/* After the daemon (root) made an object for another uid: fd is the new
 * object (a create's open file, or an O_PATH fd of the name just made). */
static int give(fuse_req_t req, VrInode *parent, int fd, bool is_dir)
{
	const struct fuse_ctx *ctx = fuse_req_ctx(req);
	struct stat st, pst;
	if (ctx->uid == vr_view->daemon_uid && ctx->gid == vr_view->daemon_gid)
		return 0;
	if (fstatat(fd, "", &st, AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW) < 0)
		return -errno;
	/* Still what we made: ours, and no second name the host could have
	 * linked to it meanwhile (a chown would give that file away too). */
	if (st.st_uid != vr_view->daemon_uid || (!is_dir && st.st_nlink != 1) ||
	    S_ISDIR(st.st_mode) != is_dir)
		return -ESTALE;
	uid_t uid = ctx->uid != vr_view->daemon_uid ? ctx->uid : (uid_t)-1;
	gid_t gid = ctx->gid != st.st_gid ? ctx->gid : (gid_t)-1;
	/* A set-group-ID parent gave the new object its group, as it would
	 * have for the caller on the host. */
	if (fstatat(parent->fd, "", &pst, AT_EMPTY_PATH) == 0 && (pst.st_mode & S_ISGID))
		gid = (gid_t)-1;
	if (uid == (uid_t)-1 && gid == (gid_t)-1)
		return 0;
	return fchownat(fd, "", uid, gid, AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW) < 0 ? -errno : 0;
}

void vr_ids_give_fd(fuse_req_t req, VrInode *parent, int fd)
{
	if (vr_view->create_as_caller)
		give(req, parent, fd, false);
}

void vr_ids_give_name(fuse_req_t req, VrInode *parent, const char *name, bool is_dir)
{
	const struct fuse_ctx *ctx = fuse_req_ctx(req);
	if (!vr_view->create_as_caller ||
	    (ctx->uid == vr_view->daemon_uid && ctx->gid == vr_view->daemon_gid))
		return;
	vr_cleanup_fd int fd = openat(parent->fd, name, O_PATH | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return;
	give(req, parent, fd, is_dir);
}
