/* See run/startup.h. */
#include "run/startup.h"

#include <errno.h>
#include <stdbool.h>
#include <poll.h>
#include <signal.h>
#include <string.h>
#include <sys/signalfd.h>
#include <time.h>
#include <unistd.h>

#include "common/log.h"
#include "common/test-hook.h"

static struct {
	int sfd;
	int signo; /* the end signal seen, or 0 */
} S = {-1, 0};

int vr_startup_begin(void)
{
	static const int handled[] = {SIGCHLD, SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2};
	sigset_t mask;
	sigemptyset(&mask);
	for (size_t i = 0; i < sizeof handled / sizeof *handled; i++)
		sigaddset(&mask, handled[i]);
	/* Children reset the mask (each says so where it is forked). */
	sigprocmask(SIG_BLOCK, &mask, NULL);
	S.sfd = signalfd(-1, &mask, SFD_CLOEXEC | SFD_NONBLOCK);
	if (S.sfd < 0)
		return vr_log_errno(errno, "signalfd");
	return S.sfd;
}

/* Takes what is queued on the signalfd: true once an end signal was seen.
 * The others mean nothing yet: SIGCHLD (a child that died is found by its
 * pipe's EOF), SIGUSR1/2 (for COMMAND, which does not exist). */
static bool drain(void)
{
	struct signalfd_siginfo si;
	while (!S.signo && read(S.sfd, &si, sizeof si) == (ssize_t)sizeof si) {
		int n = (int)si.ssi_signo;
		if (n == SIGINT || n == SIGTERM || n == SIGHUP || n == SIGQUIT) {
			S.signo = n;
			vr_error("SIG%s during start-up: stopping (COMMAND did not start)", sigabbrev_np(n));
		}
	}
	return S.signo != 0;
}

int vr_startup_phase(const char *phase)
{
	vr_test_pause(phase);
	return S.sfd >= 0 && drain() ? -EINTR : 0;
}

int vr_startup_wait(int fd, int timeout_ms)
{
	struct timespec t0;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (;;) {
		if (S.sfd >= 0 && drain())
			return -EINTR;
		struct timespec now;
		clock_gettime(CLOCK_MONOTONIC, &now);
		long left = timeout_ms - ((now.tv_sec - t0.tv_sec) * 1000 + (now.tv_nsec - t0.tv_nsec) / 1000000);
		if (left <= 0)
			return -ETIMEDOUT;
		struct pollfd p[2] = {{fd, POLLIN, 0}, {S.sfd, POLLIN, 0}};
		int r = poll(p, S.sfd >= 0 ? 2 : 1, (int)left);
		if (r < 0 && errno != EINTR)
			return -errno;
		if (r > 0 && p[0].revents)
			return 0;
	}
}

int vr_startup_signal(void)
{
	return S.signo;
}
