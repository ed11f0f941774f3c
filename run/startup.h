/* A run's start-up (run/supervisor.c), from its first step to COMMAND's start:
 * every wait is bounded, and SIGINT, SIGTERM, SIGHUP or SIGQUIT end it
 * cleanly, with 128+N. The signals are blocked from the very first step and
 * read from a signalfd, so one never lands half-way through a step: it is
 * seen at the next phase or wait, and the supervisor undoes what exists
 * (its `out:` path). After start-up the same signalfd serves the run's wait
 * loop, which forwards signals to COMMAND instead.
 *
 * One run per process: the state is this module's. */
#pragma once

/* The longest a start-up step waits for one of the run's processes (a view
 * daemon's "mounted" and "ready"; they take milliseconds). */
#define VR_STARTUP_TIMEOUT_MS 30000

/* Blocks the run's signals and opens the signalfd. The fd (O_CLOEXEC), or
 * -errno (logged). */
int vr_startup_begin(void);
/* PHASE begins (its test hook: test-hook.h). 0, or -EINTR when an end
 * signal came meanwhile (said once, on stderr). */
int vr_startup_phase(const char *phase);
/* Waits until FD is readable (or at EOF/error), at most TIMEOUT_MS.
 * 0; -EINTR on an end signal (said); -ETIMEDOUT (for the caller to say). */
int vr_startup_wait(int fd, int timeout_ms);
/* The end signal that stopped the start-up, or 0. */
int vr_startup_signal(void);
