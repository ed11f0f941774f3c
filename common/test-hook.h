/* Test hooks compiled into every build, for the start-up tests
 * (tests/fault/startup-kill.sh): they need a run stopped at a known moment
 * of its start-up, to signal it or kill -9 it there.
 *
 *   VR_TEST_PAUSE=PHASE[,PHASE...]
 *
 * A vault-run process that reaches one of the named phases (vr_test_pause
 * calls: the supervisor's in run/supervisor.c, the view's in fusefs/view.c)
 * writes "vault-run: test hook: PHASE, pid N" on stderr and stops itself
 * with SIGSTOP; SIGCONT lets it go on. Harmless: it only ever stops the
 * process that reads it, never acts on another, and secure_getenv keeps it
 * from a setuid caller. */
#pragma once

/* The hook at PHASE (a short lowercase name). */
void vr_test_pause(const char *phase);
/* A start-up deadline in milliseconds: DEFAULT_MS, or what
 * VR_TEST_STARTUP_TIMEOUT_MS says (1 to DEFAULT_MS: a test cannot lengthen
 * a wait, only shorten it to see the deadline work). */
int vr_test_startup_timeout_ms(int default_ms);
