/* The git config gate, the view's side (DESIGN.md invariant 9; the decision
 * itself is policy/gitconfig.h's).
 *
 * git writes a config file by filling config.lock and renaming it onto
 * config. When something is renamed onto a file the policy marks as git
 * config, the daemon reads the source once, through an fd of its own, and
 * has the policy compare those bytes with the current file. What it accepts
 * it writes itself into a new file (hidden by a built-in rule, so the agent
 * cannot get a handle on it) and renames that into place; the agent's file
 * is never renamed, so an fd, a hard link or an mmap of config.lock it kept
 * changes nothing that was checked. Then the agent's file is removed, as the
 * rename would have removed its name, and the kernel is told the rename
 * happened: git goes on as after its own rename.
 *
 * The kernel, told the rename happened, moves its node for the agent's file
 * to the new name: that node is rebound to the daemon's file
 * (vr_inode_rebind), so what git does next reaches the file on the host. Its
 * cached pages are the bytes the agent wrote (the masked view of what was
 * written) until the new mtime makes the kernel drop them.
 *
 * Also here, each in its own function: new repositories' hooks/ (only
 * *.sample files may be made in a hooks directory the view itself created),
 * and chmod of the exec bits of a git config file (git init's probe). */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "common/cleanup.h"
#include "audit/out.h"
#include "policy/gitconfig.h"
#include "fusefs/journal.h"
#include "policy/scan.h"
#include "policy/scan-filter.h"
#include "fusefs/view-private.h"

/* git config files are small; a bigger one is not what git writes. */
#define GATE_MAX_SIZE (1u << 20)

bool vr_gitgate_applies(VrDecision d)
{
	return d.cls == VR_CLASS_READONLY && d.rule && d.rule->gitconfig;
}

static void refuse(fuse_req_t req, const char *srel, const char *drel, VrDecision dd, int err,
                   const char *key, guint line, const char *reason)
{
	g_autoptr(GString) extra = g_string_new("\"gate\":\"gitconfig\"");
	if (key) {
		g_string_append(extra, ",\"key\":");
		vr_audit_json_str(extra, key);
	}
	if (line)
		g_string_append_printf(extra, ",\"line\":%u", line);
	g_string_append(extra, ",\"reason\":");
	vr_audit_json_str(extra, reason);
	VrAuditEvent ev = {
		.op = "rename", .path = srel, .target = drel, .result = vr_errno_name(err),
		.rule = dd.rule, .pid = fuse_req_ctx(req)->pid, .bytes_read = -1, .bytes_written = -1,
		.extra = extra->str,
	};
	vr_audit_emit(VR_AUDIT_DENIED, &ev);
	fuse_reply_err(req, err);
}


/* The bytes of name in dirfd, read once through our own fd: a regular file
 * that is (still) the object expect describes (NULL: any). */
static int read_once(int dirfd, const char *name, const struct stat *expect, char **ret_buf,
                     size_t *ret_len, struct stat *ret_st)
{
	vr_cleanup_fd int fd =
	        openat(dirfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	int r = fstat(fd, ret_st) < 0 ? -errno : 0;
	if (r == 0 && (!S_ISREG(ret_st->st_mode) || (expect && !vr_same_file(expect, ret_st))))
		r = -EACCES;
	if (r == 0)
		r = vr_file_load(fd, GATE_MAX_SIZE, ret_buf, ret_len);
	return r;
}

/* CUR as the agent was served it: masked where the scanner finds secrets
 * (content-scan.c does the same for reads), or NULL when nothing is. */
static char *masked_view(const char *cur, size_t len, const char *drel)
{
	if (!cur || vr_view->opts->scan_mode == VR_VIEW_SCAN_OFF)
		return NULL;
	g_autoptr(GArray) hits = g_array_new(FALSE, FALSE, sizeof(VrScanHit));
	vr_scan_buffer(cur, len, hits);
	vr_scan_filter_apply(vr_view->opts->scan_filter, drel, hits);
	if (!hits->len)
		return NULL;
	char *m = g_memdup2(cur, len);
	vr_scan_mask(m, len, hits);
	return m;
}

static int write_all(int fd, const guint8 *p, size_t len)
{
	while (len) {
		ssize_t n = write(fd, p, len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

int vr_write_hidden_new(int dir, const void *data, size_t len, const struct stat *like,
                        char **ret_name, struct stat *ret_st)
{
	vr_cleanup_fd int fd = -1;
	g_autofree char *name = NULL;
	for (int tries = 0; fd < 0 && tries < 16; tries++) {
		g_free(name);
		name = g_strdup_printf(".vault-run-gate.%08x%08x", g_random_int(), g_random_int());
		fd = openat(dir, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
		if (fd < 0 && errno != EEXIST)
			break;
	}
	if (fd < 0)
		return -errno;
	int r = write_all(fd, data, len);
	/* As the agent's own file would have been: its owner (a root daemon
	 * creates as root), its mode (git gives config.lock the old one). */
	if (r == 0 && geteuid() == 0 && fchown(fd, like->st_uid, like->st_gid) < 0)
		r = -errno;
	if (r == 0 && fchmod(fd, like->st_mode & 0777) < 0)
		r = -errno;
	if (r == 0 && fsync(fd) < 0)
		r = -errno;
	if (r == 0 && fstat(fd, ret_st) < 0)
		r = -errno;
	if (r < 0) {
		unlinkat(dir, name, 0);
		return r;
	}
	*ret_name = g_steal_pointer(&name);
	return 0;
}

void vr_rebind_to_written(const struct stat *sst, const struct stat *made, const char *srel,
                          const char *drel, VrDecision dd, VrInode *np, const char *newname)
{
	struct stat now;
	int fd = openat(np->fd, newname, O_PATH | O_NOFOLLOW | O_CLOEXEC);
	if (fd >= 0 && (fstat(fd, &now) < 0 || !vr_same_file(&now, made))) {
		close(fd);
		fd = -1;
	}
	if (fd >= 0)
		vr_inode_rebind(sst->st_dev, sst->st_ino, fd, &now, drel, dd, np, newname);
	else
		vr_inode_renamed(sst->st_dev, sst->st_ino, srel, drel, np, newname);
}

static void log_accepted(fuse_req_t req, const char *srel, const char *drel, VrDecision dd,
                         const VrGitGateVerdict *v)
{
	if (!vr_audit_wants(VR_AUDIT_WRITES))
		return;
	g_autoptr(GString) extra = g_string_new("\"gate\":\"gitconfig\",\"keys\":[");
	for (guint k = 0; k < v->changed->len; k++) {
		if (k)
			g_string_append_c(extra, ',');
		vr_audit_json_str(extra, v->changed->pdata[k]);
	}
	g_string_append_c(extra, ']');
	if (v->inert)
		g_string_append(extra, ",\"inert\":true");
	if (v->restored)
		g_string_append_printf(extra, ",\"restored_lines\":%u", v->restored);
	VrAuditEvent ev = {
		.op = "rename", .path = srel, .target = drel, .result = "ok", .rule = dd.rule,
		.pid = fuse_req_ctx(req)->pid, .bytes_read = -1, .bytes_written = -1, .extra = extra->str,
	};
	vr_audit_emit(VR_AUDIT_WRITES, &ev);
}

/* Reads both versions, decides; on acceptance *ret_out is what to write.
 * Refuses (replying) otherwise. */
static bool decide(fuse_req_t req, VrInode *p, const char *name, const char *srel,
                   const struct stat *sst, VrInode *np, const char *newname, const char *drel,
                   VrDecision dd, GByteArray **ret_out, struct stat *ret_dst, bool *ret_dst_exists,
                   VrGitGateVerdict *v)
{
	g_autofree char *new = NULL, *cur = NULL, *masked = NULL;
	size_t new_len = 0, cur_len = 0;
	struct stat nst;
	int r = read_once(p->fd, name, sst, &new, &new_len, &nst);
	if (r < 0) {
		refuse(req, srel, drel, dd, r == -EFBIG ? EACCES : -r, NULL, 0,
		       r == -EFBIG ? "the new file is bigger than 1 MiB" : "the new file cannot be read");
		return false;
	}
	r = read_once(np->fd, newname, NULL, &cur, &cur_len, ret_dst);
	*ret_dst_exists = r != -ENOENT;
	if (r < 0 && r != -ENOENT) {
		refuse(req, srel, drel, dd, EACCES, NULL, 0,
		       "the current file is not a regular file vault-run can read");
		return false;
	}
	masked = masked_view(cur, cur_len, drel);
	if (!vr_gitgate_decide(drel, cur, cur_len, masked, new, new_len, ret_out, v)) {
		refuse(req, srel, drel, dd, EACCES, v->key, v->line, v->reason);
		return false;
	}
	return true;
}

void vr_gitgate_rename(fuse_req_t req, VrInode *p, const char *name, const char *srel,
                       const struct stat *sst, VrInode *np, const char *newname, const char *drel,
                       VrDecision dd, unsigned flags)
{
	if (flags & RENAME_EXCHANGE) {
		refuse(req, srel, drel, dd, EACCES, NULL, 0, "an exchange cannot pass the config gate");
		return;
	}
	if (!S_ISREG(sst->st_mode)) {
		refuse(req, srel, drel, dd, EACCES, NULL, 0, "only a regular file can become git config");
		return;
	}
	VrGitGateVerdict v = {0};
	g_autoptr(GByteArray) out = NULL;
	struct stat dst, now, made;
	bool dst_exists;
	if (!decide(req, p, name, srel, sst, np, newname, drel, dd, &out, &dst, &dst_exists, &v)) {
		vr_gitgate_verdict_clear(&v);
		return;
	}

	VR_CREATING(np);
	vr_journal_before_rename(p, name, srel, np, newname, drel, flags);
	g_autofree char *tmp = NULL;
	int r = vr_write_hidden_new(np->fd, out->data, out->len, sst, &tmp, &made);
	/* What was compared against must still be there: a change on the host
	 * meanwhile is not overwritten. */
	if (r == 0 && (dst_exists ? fstatat(np->fd, newname, &now, AT_SYMLINK_NOFOLLOW) < 0 ||
	                            !vr_same_version(&dst, &now)
	                          : fstatat(np->fd, newname, &now, AT_SYMLINK_NOFOLLOW) == 0))
		r = -EBUSY;
	if (r == 0 && renameat2(np->fd, tmp, np->fd, newname, flags & RENAME_NOREPLACE) < 0)
		r = -errno;
	if (r < 0) {
		if (tmp)
			unlinkat(np->fd, tmp, 0);
		vr_audit_req(req, VR_AUDIT_WRITES, "rename", srel, vr_errno_name(-r), dd.rule, drel);
		vr_gitgate_verdict_clear(&v);
		fuse_reply_err(req, -r);
		return;
	}
	/* The agent's file goes as a rename would take its name; not if it is
	 * no longer the file that was read. */
	if (fstatat(p->fd, name, &now, AT_SYMLINK_NOFOLLOW) == 0 && vr_same_file(sst, &now))
		unlinkat(p->fd, name, 0);
	vr_handles_name_changed();
	/* The kernel moves its entry for the agent's file to newname: that
	 * node is made to mean our file, so what git does next (git init's
	 * chmod probe, the next read) reaches the file on the host. */
	vr_rebind_to_written(sst, &made, srel, drel, dd, np, newname);
	log_accepted(req, srel, drel, dd, &v);
	vr_gitgate_verdict_clear(&v);
	fuse_reply_err(req, 0);
}

/* A file named config that git reads no key from (not git config at all,
 * or empty) may be removed, so `rm -rf` of a tree holding some tool's
 * `config` works; one git reads keys from stays (removing them is no
 * change the gate would vouch for: a hooksPath, a user's settings). */
bool vr_gitgate_unlink_allowed(fuse_req_t req, VrInode *p, const char *name, const char *rel,
                               VrDecision d)
{
	struct stat st;
	if (fstatat(p->fd, name, &st, AT_SYMLINK_NOFOLLOW) < 0 || !S_ISREG(st.st_mode))
		return true; /* gone, or no file git reads: unlink itself decides */
	g_autofree char *cur = NULL;
	size_t cur_len = 0;
	int r = read_once(p->fd, name, &st, &cur, &cur_len, &st);
	g_autoptr(VrGitConfig) c = r == 0 ? vr_gitconfig_parse(cur, cur_len) : NULL;
	if (c && c->status != VR_GITCONFIG_UNSUPPORTED && c->entries->len == 0)
		return true;
	const char *key = c && c->entries->len ? g_array_index(c->entries, VrGitConfigEntry, 0).key : NULL;
	g_autoptr(GString) extra = g_string_new("\"gate\":\"gitconfig\"");
	if (key) {
		g_string_append(extra, ",\"key\":");
		vr_audit_json_str(extra, key);
	}
	g_string_append(extra, ",\"reason\":");
	vr_audit_json_str(extra, !c ? "the file cannot be read"
	                            : "git reads keys from it: a git config file is not removed");
	VrAuditEvent ev = {
		.op = "unlink", .path = rel, .result = "EACCES", .rule = d.rule,
		.pid = fuse_req_ctx(req)->pid, .bytes_read = -1, .bytes_written = -1, .extra = extra->str,
	};
	vr_audit_emit(VR_AUDIT_DENIED, &ev);
	fuse_reply_err(req, EACCES);
	return false;
}

/* --- hooks/ of a repository the view creates --- */

/* Directories named hooks that this view made (mkdir) where a built-in
 * rule makes hooks read-only: (dev, ino). In them, and only there, regular
 * files named *.sample may be created (git init and clone copy their
 * templates): git never runs those. */
static pthread_mutex_t hooks_lock = PTHREAD_MUTEX_INITIALIZER;
static GHashTable *hooks_made;

static gpointer hooks_key(dev_t dev, ino_t ino)
{
	return g_bytes_new(&(struct {
		dev_t d;
		ino_t i;
	}){dev, ino}, sizeof(dev_t) + sizeof(ino_t));
}

static bool hooks_made_has(VrInode *dir)
{
	pthread_mutex_lock(&hooks_lock);
	GBytes *k = hooks_key(dir->dev, dir->ino);
	bool has = hooks_made && g_hash_table_contains(hooks_made, k);
	g_bytes_unref(k);
	pthread_mutex_unlock(&hooks_lock);
	return has;
}

/* A hooks directory read-only by a built-in rule of its own, in a directory
 * that is not read-only itself (.git, .git/modules/x; not .vscode/hooks),
 * and git's (a rule about .git/…: not .claude/hooks/, whose scripts the
 * harness runs whatever their names). */
static bool is_new_hooks_dir(VrInode *parent, const char *name, VrDecision d)
{
	return strcmp(name, "hooks") == 0 && d.cls == VR_CLASS_READONLY && d.rule &&
	       strcmp(d.rule->source, "built-in") == 0 && strstr(d.rule->pattern, ".git/") &&
	       vr_inode_decision(parent).cls == VR_CLASS_VISIBLE;
}

static bool is_sample_name(const char *name)
{
	size_t n = strlen(name);
	return n > 7 && strcmp(name + n - 7, ".sample") == 0;
}

bool vr_gitgate_new_name_exempt(const char *op, VrInode *parent, const char *name, bool is_dir,
                                VrDecision d)
{
	if (is_dir)
		return strcmp(op, "mkdir") == 0 && is_new_hooks_dir(parent, name, d);
	return strcmp(op, "create") == 0 && d.cls == VR_CLASS_READONLY && is_sample_name(name) &&
	       hooks_made_has(parent);
}

void vr_gitgate_note_mkdir(VrInode *parent, const char *name, VrDecision d)
{
	struct stat st;
	if (!is_new_hooks_dir(parent, name, d) ||
	    fstatat(parent->fd, name, &st, AT_SYMLINK_NOFOLLOW) < 0 || !S_ISDIR(st.st_mode))
		return;
	pthread_mutex_lock(&hooks_lock);
	if (!hooks_made)
		hooks_made = g_hash_table_new_full(g_bytes_hash, g_bytes_equal,
		                                   (GDestroyNotify)g_bytes_unref, NULL);
	g_hash_table_add(hooks_made, hooks_key(st.st_dev, st.st_ino));
	pthread_mutex_unlock(&hooks_lock);
}

VrDecision vr_gitgate_lookup_decision(VrInode *parent, const char *name, const struct stat *st,
                                      VrDecision d)
{
	/* A sample the view let git create stays writable for it (no-open
	 * mode decides every write by the inode's class). */
	if (S_ISREG(st->st_mode) && d.cls == VR_CLASS_READONLY && is_sample_name(name) &&
	    hooks_made_has(parent))
		return (VrDecision){VR_CLASS_VISIBLE, NULL};
	return d;
}

/* --- chmod of a git config file --- */

bool vr_gitgate_setattr_exempt(VrInode *inode, VrDecision d, const struct stat *attr, int valid)
{
	/* git init probes whether the file system keeps the exec bit by
	 * flipping it on config; exec bits change nothing git reads. */
	struct stat st;
	if (!vr_gitgate_applies(d) || !S_ISREG(inode->type) ||
	    (valid & ~(FUSE_SET_ATTR_MODE | FUSE_SET_ATTR_CTIME)) || !(valid & FUSE_SET_ATTR_MODE) ||
	    fstatat(inode->fd, "", &st, AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW) < 0)
		return false;
	return ((st.st_mode ^ attr->st_mode) & 07777 & ~(mode_t)0111) == 0;
}
