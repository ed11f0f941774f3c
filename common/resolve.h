/* Resolving a project-relative path from an fd of the project root without
 * following any symlink on the way: what the change journal and `vault-run
 * undo` use, so a symlink the agent planted (src -> ~/.ssh) cannot send a
 * restore outside the project. */
#pragma once

/* True when REL is a relative path of plain names: not empty, no leading
 * '/', no "." or ".." component, no empty component. */
int vr_relpath_ok(const char *rel);

/* Opens the directory holding REL's last component, beneath ROOTFD, with
 * openat2(RESOLVE_BENEATH|RESOLVE_NO_SYMLINKS|RESOLVE_NO_MAGICLINKS) or, on
 * kernels without it, one openat(O_PATH|O_NOFOLLOW|O_DIRECTORY) per
 * component. *ret_fd: O_PATH|O_DIRECTORY|O_CLOEXEC; *ret_name points into REL
 * (the last component). -ELOOP/-ENOTDIR when a component is a symlink or not
 * a directory, -EINVAL for a bad REL, else -errno. */
int vr_resolve_parent(int rootfd, const char *rel, int *ret_fd, const char **ret_name);
