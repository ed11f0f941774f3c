/* Git's own names, wherever they are in the view (docs/policy.md, "Git's
 * own files"). The host's git obeys a directory's config and runs its
 * hooks/ as soon as something makes it a git directory, so these rules
 * look at what the names are and at what exists on the host, not only at
 * patterns:
 *
 *  - a `.git` is made by mkdir (git init, clone, submodule add) or is a
 *    regular file; never a symlink, a FIFO, a second name (link) or the
 *    target of a rename. A `.git` file's content is checked at every change
 *    that reaches the host (write, truncate): each state the host can ever
 *    read is empty (git refuses to use it) or names what common/gitfile.h
 *    accepts. git writes the file with open(O_CREAT|O_TRUNC) + one write +
 *    close, so the empty file it creates first and the one write are the
 *    only states, both checked; a later write cannot slip past a check done
 *    at close, because there is no such check to slip past.
 *  - hooks/ of any git directory is read-only: a directory holding HEAD,
 *    commondir, or both objects and refs (what git needs to take it as
 *    one), decided on the host at each decision, so no cached verdict goes
 *    stale. The other way round, making a directory a git directory (its
 *    HEAD, commondir, objects or refs) is refused while its hooks/ holds
 *    anything but git's own *.sample files: creating hooks first and the
 *    repository after cannot win.
 *  - no symlink is made where git keeps a submodule's or a worktree's git
 *    directory (.git/modules/x, .git/worktrees/x): one there would point
 *    that git directory elsewhere. (Elsewhere in .git git makes symlinks
 *    to probe whether the file system has them: refusing those would set
 *    core.symlinks = false.)
 *
 * A directory named .git also falls under the built-in patterns
 * (**\/.git/hooks/, …) of policy/defaults.c. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "common/cleanup.h"
#include "audit/out.h"
#include "common/fd-util.h"
#include "common/gitfile.h"
#include "common/resolve.h"
#include "fusefs/view-private.h"

static VrRule rule_dotgit = {
	.pattern = (char *)".git",
	.kind = VR_RULE_READONLY,
	.source = (char *)"built-in:git",
	.why = (char *)"a .git is a directory made by mkdir, or a file naming a worktree or submodule git directory",
};
static VrRule rule_hooks = {
	.pattern = (char *)"<git directory>/hooks/",
	.kind = VR_RULE_READONLY,
	.source = (char *)"built-in:git",
	.why = (char *)"git runs these on the host; any directory holding HEAD, commondir or objects and refs is a git directory",
};
static VrRule rule_marker = {
	.pattern = (char *)"<directory with hooks/>/{HEAD,commondir,objects,refs}",
	.kind = VR_RULE_READONLY,
	.source = (char *)"built-in:git",
	.why = (char *)"would make a directory whose hooks/ holds more than *.sample files a git directory",
};
static VrRule rule_link_in_gitdir = {
	.pattern = (char *)"**/.git/**/{modules,worktrees}/*",
	.kind = VR_RULE_READONLY,
	.source = (char *)"built-in:git",
	.why = (char *)"no symlink where git keeps a submodule's or worktree's git directory: it would point one elsewhere",
};

/* Case-insensitively: on a casefold directory ".GIT" is ".git", and a
 * stricter answer elsewhere costs nothing. */
static bool name_is(const char *name, const char *lit)
{
	return strcasecmp(name, lit) == 0;
}

static const char *base_of(const char *rel)
{
	const char *s = strrchr(rel, '/');
	return s ? s + 1 : rel;
}

bool vr_git_is_dotgit(const char *name)
{
	return name_is(name, ".git");
}

static bool has(int dirfd, const char *name)
{
	struct stat st;
	return fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) == 0;
}

/* What makes git take a directory as a git directory (is_git_directory:
 * HEAD, and objects/ and refs/ here or in the commondir's). Any file type
 * counts: stricter than git, never looser. */
static bool gitdir_like(int dirfd)
{
	return has(dirfd, "HEAD") || has(dirfd, "commondir") || (has(dirfd, "objects") && has(dirfd, "refs"));
}

static VrDecision stricter(VrDecision a, VrDecision b)
{
	return b.cls > a.cls ? b : a;
}

bool vr_git_names_hooks(const char *name)
{
	return name_is(name, "hooks");
}

VrDecision vr_git_floor(VrInode *parent, const char *hooks_rel, const char *name, VrDecision d)
{
	if (d.cls >= VR_CLASS_READONLY || !S_ISDIR(parent->type))
		return d;
	VrDecision ro = {VR_CLASS_READONLY, &rule_hooks};
	if (name_is(name, "hooks"))
		return gitdir_like(parent->fd) ? stricter(d, ro) : d;
	/* Inside a hooks/ directory: is its parent a git directory now? Found
	 * by name from the root, never by "..": the root is covered by the
	 * view itself, and ".." arriving there would cross into that mount. */
	if (hooks_rel) {
		vr_cleanup_fd int up = -1;
		const char *base;
		if (vr_resolve_parent(vr_view->root.fd, hooks_rel, &up, &base) < 0)
			return stricter(d, ro); /* cannot tell: the stricter */
		return gitdir_like(up) ? stricter(d, ro) : d;
	}
	return d;
}

/* Whether dirfd's hooks/ is absent, or a directory of regular files named
 * *.sample only (what git init copies from its templates). */
static bool hooks_harmless(int dirfd)
{
	struct stat st;
	if (fstatat(dirfd, "hooks", &st, AT_SYMLINK_NOFOLLOW) < 0)
		return errno == ENOENT;
	if (!S_ISDIR(st.st_mode))
		return false;
	vr_cleanup_fd int fd = openat(dirfd, "hooks", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return false;
	DIR *dp = fdopendir(fd);
	if (!dp)
		return false;
	int hfd = vr_steal_fd(&fd); /* closedir closes it */
	bool ok = true;
	struct dirent *de;
	while (ok && (de = readdir(dp))) {
		if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
			continue;
		size_t n = strlen(de->d_name);
		ok = n > 7 && strcmp(de->d_name + n - 7, ".sample") == 0 &&
		     fstatat(hfd, de->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISREG(st.st_mode);
	}
	closedir(dp);
	return ok;
}

/* NAME would make parent a git directory it is not yet. Looks at the
 * host only for git's marker names: every creation asks. */
static bool makes_gitdir(int dirfd, const char *name)
{
	bool marker;
	if (name_is(name, "HEAD") || name_is(name, "commondir"))
		marker = true;
	else if (name_is(name, "objects"))
		marker = has(dirfd, "refs");
	else if (name_is(name, "refs"))
		marker = has(dirfd, "objects");
	else
		return false;
	return marker && !gitdir_like(dirfd);
}

/* rel is an entry of a modules/ or worktrees/ directory inside a .git
 * directory: where git keeps a submodule's or a worktree's git directory
 * (.git/modules/m, .git/modules/a/modules/b, .git/worktrees/w). A symlink
 * there would point that git directory elsewhere. (git itself makes
 * symlinks only to probe for them, as .git/tXXXXXX.) */
static bool gitdir_slot(const char *rel)
{
	const char *slash = strrchr(rel, '/');
	if (!slash)
		return false;
	const char *pb = slash;
	while (pb > rel && pb[-1] != '/')
		pb--;
	size_t n = (size_t)(slash - pb);
	bool slot = (n == 7 && strncasecmp(pb, "modules", 7) == 0) || (n == 9 && strncasecmp(pb, "worktrees", 9) == 0);
	if (!slot)
		return false;
	for (const char *p = rel; p < pb;) {
		const char *e = strchrnul(p, '/');
		if (e - p == 4 && strncasecmp(p, ".git", 4) == 0)
			return true;
		p = *e ? e + 1 : e;
	}
	return false;
}

const VrRule *vr_git_refuse_new(VrInode *parent, const char *rel, const char *name, mode_t type)
{
	if (vr_git_is_dotgit(name) && type != S_IFDIR && type != S_IFREG)
		return &rule_dotgit; /* symlink, FIFO, device, second name (type 0) */
	if (type == S_IFLNK && gitdir_slot(rel))
		return &rule_link_in_gitdir;
	if (makes_gitdir(parent->fd, name) && !hooks_harmless(parent->fd))
		return &rule_marker;
	return NULL;
}

const VrRule *vr_git_refuse_rename(VrInode *p, const char *srel, const char *name, mode_t stype,
                                   VrInode *np, const char *drel, const char *newname, unsigned flags)
{
	(void)p;
	(void)srel;
	if (vr_git_is_dotgit(newname))
		return &rule_dotgit; /* "git init" makes it with mkdir, "git worktree add" with open */
	if ((flags & RENAME_EXCHANGE) && vr_git_is_dotgit(name))
		return &rule_dotgit;
	if (stype == S_IFLNK && gitdir_slot(drel))
		return &rule_link_in_gitdir;
	if (makes_gitdir(np->fd, newname) && !hooks_harmless(np->fd))
		return &rule_marker;
	return NULL;
}

bool vr_git_is_gitfile(VrInode *inode)
{
	if (!S_ISREG(inode->type))
		return false;
	pthread_mutex_lock(&vr_view->table_lock);
	bool is = inode->relpath && vr_git_is_dotgit(base_of(inode->relpath));
	pthread_mutex_unlock(&vr_view->table_lock);
	return is;
}

const VrRule *vr_git_dotgit_rule(void)
{
	return &rule_dotgit;
}

/* Serializes the check and the change of every .git file: two writers (or
 * a writer and a truncate) must not each pass a check against the content
 * before the other's change. */
static pthread_mutex_t gate_lock = PTHREAD_MUTEX_INITIALIZER;

/* The host content of inode (at most VR_GITFILE_MAX + 1 bytes), read
 * through a descriptor of our own: the agent's may be write-only. */
static ssize_t read_current(VrInode *inode, char *buf, size_t size)
{
	char proc[64];
	vr_proc_path(proc, inode->fd);
	vr_cleanup_fd int fd = open(proc, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	return vr_read_all(fd, buf, size);
}

/* Whether CONTENT may be a .git file at rel: empty, or what the checker
 * accepts as written now (the view's root, as the agent names it). On a
 * refusal, *ret_why says why. */
static bool content_ok(const char *rel, const char *content, size_t len, const char **ret_why)
{
	*ret_why = NULL;
	if (len == 0)
		return true;
	if (len > VR_GITFILE_MAX) {
		*ret_why = "larger than any .git file git writes";
		return false;
	}
	const char *root = vr_view->agent_root ? vr_view->agent_root : vr_view->opts->project;
	const char *slash = strrchr(rel, '/');
	g_autofree char *dir = slash ? g_strdup_printf("%s/%.*s", strcmp(root, "/") == 0 ? "" : root,
	                                               (int)(slash - rel), rel)
	                             : g_strdup(root);
	VrGitfileCheck c = {.root_fd = vr_view->root.fd, .root = root, .dir = dir, .when = VR_GITFILE_AT_WRITE};
	VrGitfileVerdict v;
	if (vr_gitfile_check(&c, content, len, &v) == 0)
		return true;
	*ret_why = v.why;
	return false;
}

static void refuse(fuse_req_t req, const char *op, const char *rel, const char *why)
{
	g_autoptr(GString) extra = g_string_new("\"reason\":");
	vr_audit_json_str(extra, why);
	VrAuditEvent ev = {
		.op = op, .path = rel, .result = "EACCES", .rule = &rule_dotgit,
		.pid = req ? fuse_req_ctx(req)->pid : 0, .bytes_read = -1, .bytes_written = -1,
		.extra = extra->str,
	};
	vr_audit_emit(VR_AUDIT_DENIED, &ev);
}

ssize_t vr_git_write(fuse_req_t req, VrFile *f, struct fuse_bufvec *in, off_t off)
{
	size_t len = fuse_buf_size(in);
	g_autofree char *rel = vr_inode_relpath(f->inode);
	if (off < 0 || len > VR_GITFILE_MAX || (size_t)off > VR_GITFILE_MAX - len) {
		refuse(req, "write", rel, "larger than any .git file git writes");
		return -EACCES;
	}
	/* The request's bytes, copied once: what is checked is what is
	 * written (the agent cannot change them in between). */
	g_autofree char *data = g_malloc(len ? len : 1);
	struct fuse_bufvec mem = FUSE_BUFVEC_INIT(len);
	mem.buf[0].mem = data;
	ssize_t got = fuse_buf_copy(&mem, in, 0);
	if (got < 0)
		return got;
	len = (size_t)got;

	pthread_mutex_lock(&gate_lock);
	char cur[VR_GITFILE_MAX + 2];
	ssize_t n = read_current(f->inode, cur, sizeof cur);
	ssize_t res;
	const char *why = NULL;
	if (n < 0) {
		res = n;
	} else {
		size_t end = MAX((size_t)n, (size_t)off + len);
		g_autofree char *next = g_malloc0(end + 1);
		memcpy(next, cur, MIN((size_t)n, end));
		memcpy(next + off, data, len);
		if (!content_ok(rel, next, end, &why)) {
			res = -EACCES;
		} else {
			vr_change_begin(f->inode);
			res = pwrite(f->fd, data, len, off);
			if (res < 0)
				res = -errno;
			vr_change_end(f->inode, res > 0);
		}
	}
	pthread_mutex_unlock(&gate_lock);
	if (why)
		refuse(req, "write", rel, why);
	if (res >= 0) {
		atomic_fetch_add(&f->bytes_written, (uint64_t)res);
		vr_handle_wrote(req, f);
	}
	return res;
}

int vr_git_truncate(fuse_req_t req, VrInode *inode, int fd, off_t size)
{
	g_autofree char *rel = vr_inode_relpath(inode);
	pthread_mutex_lock(&gate_lock);
	char cur[VR_GITFILE_MAX + 2];
	ssize_t n = read_current(inode, cur, sizeof cur);
	int r;
	const char *why = NULL;
	if (n < 0) {
		r = (int)n;
	} else if (size < 0 || size > VR_GITFILE_MAX) {
		why = "larger than any .git file git writes";
		r = -EACCES;
	} else {
		/* Growing fills with NULs, which no accepted content has. */
		g_autofree char *next = g_malloc0((size_t)size + 1);
		memcpy(next, cur, MIN((size_t)n, (size_t)size));
		if (!content_ok(rel, next, (size_t)size, &why)) {
			r = -EACCES;
		} else if (fd >= 0) {
			r = ftruncate(fd, size) < 0 ? -errno : 0;
		} else {
			char proc[64];
			vr_proc_path(proc, inode->fd);
			r = truncate(proc, size) < 0 ? -errno : 0;
		}
	}
	pthread_mutex_unlock(&gate_lock);
	if (why)
		refuse(req, "setattr", rel, why);
	return r;
}
