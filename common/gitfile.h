/* What a `.git` *file* may name (DESIGN.md invariants 9 and 10).
 *
 * A `.git` file ("gitdir: PATH") tells git where the repository of a
 * working tree is. Whoever writes it chooses the git directory whose config
 * and hooks the host's git obeys on entering the tree, so vault-run accepts
 * exactly the two shapes git itself makes:
 *
 *  - a linked worktree: PATH is <C>/worktrees/<name>, <C> is a git
 *    directory (HEAD, objects/, refs/), <C>/worktrees/<name>/gitdir names
 *    this very .git file back, and its commondir resolves to exactly <C>;
 *  - a submodule: PATH lies in <A>/.git/modules/… of a directory <A> that
 *    is an ancestor of the .git file's own directory.
 *
 * Everything is decided on paths of plain names: PATH is absolute without
 * "." or ".." components, or relative with ".." only at its start (what
 * git writes), and every component that exists is opened one at a time
 * from root_fd with O_PATH|O_NOFOLLOW, so a symlink anywhere refuses the
 * file. Nothing here follows a symlink or calls realpath.
 *
 * Shared by the launcher (the project's own .git at the start of a run:
 * root "/") and the view daemon (a .git file the agent writes: root the
 * project). No glib: common/ is linked by every room. */
#pragma once
#include <limits.h>
#include <stddef.h>
#include <sys/types.h>

/* git writes "gitdir: " + a path + "\n"; anything bigger is not one. */
#define VR_GITFILE_MAX (PATH_MAX + 16)

typedef enum {
	VR_GITFILE_REFUSED = 0,
	VR_GITFILE_WORKTREE,  /* gitdir <C>/worktrees/<name>; common = <C> */
	VR_GITFILE_SUBMODULE, /* gitdir <A>/.git/modules/…; common = gitdir */
} VrGitfileKind;

typedef enum {
	/* The project's .git when a run starts: what it names must be
	 * complete (commondir there, the submodule's git directory made). */
	VR_GITFILE_AT_START,
	/* A .git the agent writes. git writes it before the rest is there:
	 * `git worktree add` before <gitdir>/commondir and HEAD, `git clone
	 * --separate-git-dir` (so `git submodule add`) before the git
	 * directory itself. What exists must still fit. */
	VR_GITFILE_AT_WRITE,
} VrGitfileWhen;

typedef struct {
	int root_fd;          /* O_PATH directory everything must lie beneath */
	const char *root;     /* its absolute path as the file's content names it ("/", "/home/u/p"), no trailing '/' */
	const char *dir;      /* absolute path of the directory holding the .git file, beneath root */
	VrGitfileWhen when;
} VrGitfileCheck;

typedef struct {
	VrGitfileKind kind;
	char gitdir[PATH_MAX];  /* absolute, normalized */
	char common[PATH_MAX];  /* worktree: <C>; submodule: the gitdir */
	const char *why;        /* refused: what is wrong (a phrase, static) */
} VrGitfileVerdict;

/* The path of "gitdir: PATH" (trailing CR/LF dropped) into ret (size
 * bytes). -EINVAL when the content is not that, or PATH is empty or holds a
 * NUL, CR or LF; -ENAMETOOLONG. */
int vr_gitfile_parse(const char *buf, size_t len, char *ret, size_t size);

/* PATH made absolute against DIR (absolute, normalized) without touching
 * the file system: absolute PATH must hold no "." or ".." component,
 * relative PATH may start with ".." components and then holds plain names
 * only. Repeated and trailing slashes are dropped. -EINVAL otherwise,
 * -ENAMETOOLONG. */
int vr_gitfile_resolve(const char *dir, const char *path, char *ret, size_t size);

/* Decides a .git file's content (LEN bytes). 0 when accepted (v->kind,
 * v->gitdir, v->common set); -EPERM when refused and -errno when something
 * could not be read, both with v->why. */
int vr_gitfile_check(const VrGitfileCheck *c, const char *content, size_t len, VrGitfileVerdict *v);

/* 1 when DIRFD is a git directory as git's is_git_directory() sees it:
 * HEAD (a file, or an old-style symlink), objects/ and refs/ (real
 * directories, not symlinks); else 0. */
int vr_gitfile_is_git_dir(int dirfd);
