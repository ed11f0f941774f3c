/* Resolving a project-relative path from an fd of the project root without
 * following any symlink on the way: the one walker of the tree. The change
 * journal and `vault-run undo` use it, so a symlink the agent planted
 * (src -> ~/.ssh) cannot send a restore outside the project; the view uses
 * it to ask whether an inode still has its name (fusefs/lookup.c). */
#pragma once
#include <stddef.h>

/* True when REL is a relative path of plain names: not empty, no leading
 * '/', no "." or ".." component, no empty component. */
int vr_relpath_ok(const char *rel);

/* Opens the directory holding REL's last component, beneath ROOTFD, with
 * openat2(RESOLVE_BENEATH|RESOLVE_NO_SYMLINKS|RESOLVE_NO_MAGICLINKS),
 * called again while it answers EAGAIN (a rename raced it), or with
 * vr_resolve_walk where openat2 cannot: a kernel without it, a seccomp
 * filter refusing it (EPERM), a directory part longer than PATH_MAX, an
 * EAGAIN that persists. Never follows a symlink, never joins strings to
 * reach anything. *ret_fd: O_PATH|O_DIRECTORY|O_CLOEXEC, untouched on
 * failure; *ret_name points into REL (the last component, not looked at).
 * -ELOOP when a component on the way is a symlink, -ENOTDIR when it is
 * anything else but a directory (a caller may allow a file in the way
 * and refuse a link: fusefs/keyfile.c's dir_brings),
 * -EINVAL for a bad REL, else -errno: -EMFILE/-ENFILE are the caller's to
 * retry once it has freed fds (the view's evictor, vr_evict_retry). */
int vr_resolve_parent(int rootfd, const char *rel, int *ret_fd, const char **ret_name);

/* The component walk alone: the LEN bytes of DIR (plain names, as
 * vr_relpath_ok checks; no NUL needed at LEN) opened one
 * openat(O_PATH|O_NOFOLLOW|O_DIRECTORY) at a time from ROOTFD, holding at
 * most two fds. LEN 0 dups ROOTFD. *ret_fd as above; -ENAMETOOLONG only
 * for a name over NAME_MAX. For vr_resolve_parent and its tests. */
int vr_resolve_walk(int rootfd, const char *dir, size_t len, int *ret_fd);
