/* vault-run-systemd: the systemd mechanism of run/cgroup.h as an executable
 * of its own, so that only runs with limits under systemd load GIO (its
 * D-Bus). The cgroup helper runs it (run/cgroup-systemd-call.c):
 *
 *   vault-run-systemd usable HOST_ROOT MEMORY PIDS CPU
 *   vault-run-systemd start  HOST_ROOT MEMORY PIDS CPU NAME PID
 *   vault-run-systemd stop   HOST_ROOT NAME
 *
 * HOST_ROOT 0 or 1 (the system manager, else the user's); MEMORY bytes,
 * PIDS a count, CPU CPUs (C locale), 0 for none. Exit 0 (yes / done) or 1,
 * with one line on stdout: usable's detail, start's error. Anything else:
 * 125. */
#include <stdio.h>
#include <string.h>

#include "common/exitcode.h"
#include "run/cgroup-systemd.h"

static gboolean parse_limits(char **arg, gboolean *host_root, VrLimits *l)
{
	guint64 root = 0, pids = 0;
	char *end = NULL;
	if (!g_ascii_string_to_unsigned(arg[0], 10, 0, 1, &root, NULL) ||
	    !g_ascii_string_to_unsigned(arg[1], 10, 0, G_MAXUINT64, &l->memory, NULL) ||
	    !g_ascii_string_to_unsigned(arg[2], 10, 0, G_MAXUINT, &pids, NULL))
		return FALSE;
	l->pids = (guint)pids;
	l->cpu = g_ascii_strtod(arg[3], &end);
	*host_root = root == 1;
	return end && !*end && l->cpu >= 0;
}

int main(int argc, char **argv)
{
	gboolean host_root = FALSE;
	VrLimits l = {0};
	g_autofree char *said = NULL;
	gboolean ok;
	guint64 pid = 0;
	if (argc == 6 && strcmp(argv[1], "usable") == 0 && parse_limits(argv + 2, &host_root, &l)) {
		ok = vr_systemd_scope_usable(&l, host_root, &said);
	} else if (argc == 8 && strcmp(argv[1], "start") == 0 && parse_limits(argv + 2, &host_root, &l) &&
	           g_ascii_string_to_unsigned(argv[7], 10, 1, G_MAXINT, &pid, NULL)) {
		ok = vr_systemd_scope_start(argv[6], (pid_t)pid, &l, host_root, &said);
	} else if (argc == 4 && strcmp(argv[1], "stop") == 0 && (!strcmp(argv[2], "0") || !strcmp(argv[2], "1"))) {
		vr_systemd_scope_stop(argv[3], strcmp(argv[2], "1") == 0);
		return VR_EXIT_OK;
	} else {
		fprintf(stderr, "vault-run-systemd: vault-run's cgroup helper runs this itself (see run/cgroup.h)\n");
		return VR_EXIT_ERROR;
	}
	if (said)
		printf("%s\n", said);
	return ok ? VR_EXIT_OK : 1;
}
