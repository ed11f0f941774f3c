/* The network proxy confines itself before it serves (docs/network.md,
 * docs/SECURITY.md): it parses HTTP and SOCKS requests from the agent, so
 * after this a bug there reaches no more than a resolver needs. Landlock
 * lets it read only the resolver's configuration (/etc/resolv.conf, hosts,
 * nsswitch.conf, gai.conf, host.conf, services, protocols, ld.so.cache),
 * the shared libraries glibc's NSS loads on the first lookup, and its own
 * /proc/PID; it writes nowhere (its audit goes to descriptors it already
 * holds). The seccomp deny-list is the view daemon's (common/confine.c). */
#include "net/proxy-private.h"

#include "common/confine.h"
#include "common/log.h"

static const char *const resolver_files[] = {
	"/etc/resolv.conf", "/etc/hosts", "/etc/nsswitch.conf", "/etc/gai.conf", "/etc/host.conf",
	"/etc/services", "/etc/protocols", "/etc/ld.so.cache", "/etc/localtime",
};
/* libnss_*.so and what they link, wherever the distribution keeps them. */
static const char *const library_dirs[] = {"/usr/lib", "/usr/lib64", "/usr/lib32", "/lib", "/lib64", "/lib32"};

int vr_proxy_confine(void)
{
	VrLandlock ll;
	int r = vr_landlock_begin(&ll, VR_LL_FS_ALL, false,
	                          VR_LL_SCOPE_ABSTRACT_UNIX_SOCKET | VR_LL_SCOPE_SIGNAL);
	for (size_t i = 0; r == 0 && i < G_N_ELEMENTS(resolver_files); i++)
		r = vr_landlock_allow_path(&ll, resolver_files[i], VR_LL_FS_READ_FILE);
	for (size_t i = 0; r == 0 && i < G_N_ELEMENTS(library_dirs); i++)
		r = vr_landlock_allow_path(&ll, library_dirs[i], VR_LL_FS_READ);
	/* Its own /proc/PID (resolved now) and nothing else of /proc: glib
	 * and the sanitizers' leak check read their own maps and tasks. */
	if (r == 0)
		r = vr_landlock_allow_path(&ll, "/proc/self", VR_LL_FS_READ);
	if (r < 0) {
		vr_landlock_abandon(&ll);
		return vr_log_errno(-r, "proxy: cannot build its Landlock ruleset");
	}
	r = vr_confine_apply(&ll, 0);
	if (r < 0)
		return vr_log_errno(-r, "proxy: cannot confine itself (no_new_privs, Landlock, seccomp)");
	return 0;
}
