/* The directories a command is given (the project, a mount point), checked
 * before anything is set up, with one line saying what is wrong. */
#pragma once

/* 0 when PATH is a directory. Else logs one line naming WHAT ("project",
 * "mount point") and PATH, and returns -errno (-ENOTDIR for another kind
 * of file). A FUSE mount whose daemon is gone (stat: ENOTCONN, "Transport
 * endpoint is not connected", left by a killed `vault-run mount`), or a
 * path below one, gets the command that unmounts it. */
int vr_dir_check(const char *what, const char *path);
