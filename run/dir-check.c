/* Checking a given directory: see run/dir-check.h. */
#include "run/dir-check.h"

#include <errno.h>
#include <string.h>
#include <sys/stat.h>

#include <glib.h>

#include "common/log.h"

int vr_dir_check(const char *what, const char *path)
{
	struct stat st;
	if (stat(path, &st) == 0) {
		if (S_ISDIR(st.st_mode))
			return 0;
		vr_error("the %s %s is not a directory", what, path);
		return -ENOTDIR;
	}
	int e = errno;
	if (e == ENOTCONN) {
		/* Nothing answers there any more: vault-run does not unmount it
		 * on its own (it may not be ours), it says how. The dead mount
		 * is the highest ancestor that still fails so. */
		g_autofree char *top = g_strdup(path);
		for (;;) {
			g_autofree char *up = g_path_get_dirname(top);
			if (strcmp(up, top) == 0 || stat(up, &st) == 0 || errno != ENOTCONN)
				break;
			g_free(top);
			top = g_steal_pointer(&up);
		}
		g_autofree char *q = g_shell_quote(top);
		vr_error("the %s %s is on a FUSE mount whose daemon is gone (a killed `vault-run "
		         "mount`?): unmount it first with: fusermount3 -u -z %s", what, path, q);
	} else {
		vr_error("the %s %s: %s", what, path, g_strerror(e));
	}
	return -e;
}
