/* vault-run-proxy: the network proxy and its CA as an executable of their
 * own, so that GnuTLS is loaded only by runs that have a network
 * (net/proxy-launch.h). vault-run starts it with its options in a memfd;
 * it is not meant to be run by hand (`vault-run proxy` is). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <unistd.h>

#include "common/exitcode.h"
#include "common/log.h"
#include "common/proc.h"
#include "net/proxy-launch.h"

/* The real values of keys come into this process (keys_fd): no core file,
 * no ptrace or /proc/PID/mem for a process of the same uid. The exec made
 * the process dumpable again, so this is the first thing it does. */
static void protect_memory(void)
{
	struct rlimit none = {0, 0};
	setrlimit(RLIMIT_CORE, &none);
	prctl(PR_SET_DUMPABLE, 0);
}

int main(int argc, char **argv)
{
	protect_memory();
	/* vault-run made the listeners; an exec as root (in the run's user
	 * namespace or the host's) gave this process every capability again. */
	int r = vr_drop_all_caps();
	if (r < 0) {
		vr_log_errno(-r, "proxy: cannot drop its capabilities");
		_exit(VR_EXIT_ERROR);
	}
	char *end = NULL;
	long fd = argc == 3 && strcmp(argv[1], "--options-fd") == 0 ? strtol(argv[2], &end, 10) : -1;
	if (fd < 0 || !end || *end) {
		fprintf(stderr, "vault-run-proxy: vault-run starts this itself; for a proxy in the foreground, run "
		                "`vault-run proxy --help`\n");
		_exit(VR_EXIT_ERROR);
	}
	g_auto(VrProxyLaunch) l = {0};
	g_autoptr(GError) error = NULL;
	if (!vr_proxy_launch_read((int)fd, &l, &error)) {
		vr_error("proxy: %s", error->message);
		_exit(VR_EXIT_ERROR);
	}
	close((int)fd);
	vr_log_set_level(l.log_level);
	if (l.foreground)
		r = vr_proxy_foreground_main(&l.opts, l.listen_fds, l.n_listen_fds) < 0 ? VR_EXIT_ERROR : VR_EXIT_OK;
	else
		r = vr_proxy_child_main(&l.opts, l.listen_fds, l.n_listen_fds, l.report_fd);
	/* _exit, as the fork it replaces did: handshake threads may still
	 * use what serve() keeps (net/proxy.c), and a leak checker at exit
	 * cannot attach to a process that is not dumpable. */
	_exit(r);
}
