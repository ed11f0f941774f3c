/* The run's wait, from COMMAND's start to the sandbox's end: one loop over
 * the start-up's signalfd (run/startup.h) that reaps children, forwards
 * signals to the sandbox and enforces three deadlines:
 *
 *   --timeout      SIGTERM to the sandbox, exit status 124;
 *   kill_at        SIGKILL of the sandbox, 5 s after the timeout's SIGTERM
 *                  or 10 s after a SIGTERM/SIGHUP/SIGQUIT to us (docker's
 *                  grace period);
 *   abort_at       2 s after that SIGKILL, the sandbox still there: a view
 *                  daemon holds it in a FUSE wait; killing the daemons
 *                  aborts the connection.
 *
 * The supervisor is single-threaded: no handler runs, every signal is read
 * here, in order. */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <sys/signalfd.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/exitcode.h"
#include "common/log.h"
#include "run/run-private.h"

typedef struct {
	gint64 deadline;  /* --timeout, 0: none */
	gint64 kill_at;   /* SIGKILL the sandbox then, 0: not due */
	gint64 abort_at;  /* kill the daemons then, 0: not due */
	gboolean timed_out;
	gboolean daemon_died;
} Deadlines;

/* A view daemon (the project's or another) ended before the sandbox: the
 * sandbox is killed, its files would be gone. TRUE when PID was one. */
static gboolean reaped_view(VrRun *r, Deadlines *d, pid_t pid, int wst)
{
	gboolean view = pid == r->daemon;
	for (guint i = 0; i < r->guards->len && !view; i++) {
		if (g_array_index(r->guards, pid_t, i) == pid) {
			g_array_index(r->guards, pid_t, i) = -1;
			view = TRUE;
		}
	}
	if (!view)
		return FALSE;
	/* A view stopped for its audit log said why already. */
	gboolean said = pid == r->daemon && vr_exit_status(wst) == VR_VIEW_EXIT_AUDIT_FAILED;
	if (pid == r->daemon)
		r->daemon = -1;
	d->daemon_died = TRUE;
	if (!said)
		vr_error("a view daemon died (status %d); stopping the sandbox", vr_exit_status(wst));
	kill(r->sandbox, SIGKILL);
	return TRUE;
}

/* Reaps every child that ended. TRUE once the sandbox has. */
static gboolean reap(VrRun *r, Deadlines *d)
{
	int wst;
	pid_t pid;
	gboolean done = FALSE;
	while ((pid = waitpid(-1, &wst, WNOHANG)) > 0) {
		if (pid == r->sandbox) {
			r->status = vr_exit_status(wst);
			r->sandbox = -1;
			done = TRUE;
		} else if (pid == r->proxy) {
			/* Fail closed: without it the agent just has no network. */
			r->proxy = -1;
			vr_warning("the network proxy ended (status %d); the sandbox has no network now",
			           vr_exit_status(wst));
		} else {
			reaped_view(r, d, pid, wst);
		}
	}
	return done;
}

/* The poll timeout until the next deadline (-1: none), acting on those due. */
static int next_timeout(VrRun *r, Deadlines *d)
{
	int timeout_ms = -1;
	gint64 now = g_get_monotonic_time();
	if (d->deadline && !d->timed_out) {
		if (now >= d->deadline) {
			d->timed_out = TRUE;
			vr_error("timed out after %g s; stopping the sandbox", r->plan->timeout);
			kill(r->sandbox, SIGTERM);
			d->kill_at = now + 5 * G_USEC_PER_SEC;
		} else {
			timeout_ms = (int)((d->deadline - now) / 1000) + 1;
		}
	}
	if (d->kill_at) {
		if (now >= d->kill_at) {
			kill(r->sandbox, SIGKILL);
			d->kill_at = 0;
			d->abort_at = now + 2 * G_USEC_PER_SEC;
		} else {
			timeout_ms = (int)((d->kill_at - now) / 1000) + 1;
		}
	}
	if (d->abort_at) {
		if (now >= d->abort_at) {
			vr_error("the sandbox does not end; killing the view daemons");
			vr_run_signal_daemons(r, TRUE, SIGKILL);
			d->abort_at = 0;
		} else if (timeout_ms < 0 || (d->abort_at - now) / 1000 + 1 < timeout_ms) {
			timeout_ms = (int)((d->abort_at - now) / 1000) + 1;
		}
	}
	return timeout_ms;
}

static void on_signal(VrRun *r, Deadlines *d, const struct signalfd_siginfo *si)
{
	int sig = (int)si->ssi_signo;
	if (sig == SIGCHLD)
		return;
	/* A signal from the terminal already went to COMMAND through the
	 * process group; only others (kill from an orchestrator) are
	 * forwarded, so COMMAND does not get each ^C twice. */
	if (si->ssi_code != SI_KERNEL)
		kill(r->sandbox, sig);
	if (sig != SIGTERM && sig != SIGINT && sig != SIGHUP && sig != SIGQUIT)
		return;
	/* A stopped view daemon must not keep the run alive: a request it had
	 * read before stopping holds its caller in an unkillable wait. Let the
	 * daemons run. A request to end (not SIGINT: an agent's TUI takes ^C as
	 * "stop this step") is enforced after a grace period, as docker does:
	 * SIGKILL of the sandbox, and then of the daemons, which aborts any
	 * request still pending. */
	vr_run_signal_daemons(r, TRUE, SIGCONT);
	if (sig != SIGINT && !d->kill_at && !d->timed_out)
		d->kill_at = g_get_monotonic_time() + 10 * G_USEC_PER_SEC;
}

void vr_run_wait(VrRun *r)
{
	Deadlines d = {0};
	if (r->plan->timeout > 0)
		d.deadline = g_get_monotonic_time() + (gint64)(r->plan->timeout * G_USEC_PER_SEC);
	while (!reap(r, &d)) {
		int timeout_ms = next_timeout(r, &d);
		struct pollfd pfd = {r->sfd, POLLIN, 0};
		if (poll(&pfd, 1, timeout_ms) <= 0)
			continue;
		struct signalfd_siginfo si;
		if (read(r->sfd, &si, sizeof si) == sizeof si)
			on_signal(r, &d, &si);
	}
	if (d.timed_out)
		r->status = VR_EXIT_TIMEOUT;
	else if (d.daemon_died)
		r->status = VR_EXIT_ERROR;
}
