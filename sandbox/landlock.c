/* Landlock scopes for COMMAND (no glib here: runs after fork). With ABI 6
 * or later, COMMAND and everything it starts can neither connect to an
 * abstract unix socket created outside the sandbox (with --net host the
 * host's network namespace, and so @/tmp/.X11-unix/X0, a session bus or
 * any daemon's abstract socket, would otherwise be reachable) nor signal a
 * process outside it. Older kernels: nothing to add (docs/sandbox.md). No
 * file-system rights are handled: the mount namespace already decides what
 * COMMAND sees. */
#include "sandbox/sandbox.h"

#include "common/landlock.h"

int vr_sandbox_landlock_scope(void)
{
	VrLandlock ll;
	int r = vr_landlock_begin(&ll, 0, false, VR_LL_SCOPE_ABSTRACT_UNIX_SOCKET | VR_LL_SCOPE_SIGNAL);
	if (r < 0)
		return r;
	return vr_landlock_enforce(&ll);
}
