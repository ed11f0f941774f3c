/* The fork-a-helper preamble (common/proc.c): the child's signal mask is
 * emptied unless the caller asks to keep its own (the key-file reader,
 * which must outlast a ^C the supervisor has blocked), and a helper whose
 * parent is already gone never runs. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/proc.h"

/* Forks a helper with FLAGS while SIGINT is blocked: the child's exit
 * status says whether SIGINT was still blocked in it (1) or not (0). */
static int child_blocks_sigint(unsigned flags)
{
	sigset_t intr, old;
	sigemptyset(&intr);
	sigaddset(&intr, SIGINT);
	assert_int_equal(sigprocmask(SIG_BLOCK, &intr, &old), 0);
	pid_t pid = vr_fork_helper_flags(SIGKILL, 2, flags);
	if (pid == 0) {
		sigset_t now;
		sigprocmask(SIG_SETMASK, NULL, &now);
		_exit(sigismember(&now, SIGINT) ? 1 : 0);
	}
	assert_true(pid > 0);
	assert_int_equal(sigprocmask(SIG_SETMASK, &old, NULL), 0);
	int status;
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status));
	return WEXITSTATUS(status);
}

static void mask_emptied(void **state)
{
	(void)state;
	assert_int_equal(child_blocks_sigint(0), 0);
}

static void mask_kept(void **state)
{
	(void)state;
	assert_int_equal(child_blocks_sigint(VR_FORK_KEEP_SIGMASK), 1);
}

/* A ^C sent to a kept-mask helper is held, not fatal: it exits as it
 * chooses once its work is done. */
static void kept_mask_survives_sigint(void **state)
{
	(void)state;
	sigset_t intr, old;
	sigemptyset(&intr);
	sigaddset(&intr, SIGINT);
	assert_int_equal(sigprocmask(SIG_BLOCK, &intr, &old), 0);
	int p[2];
	assert_int_equal(pipe(p), 0);
	pid_t pid = vr_fork_helper_flags(SIGKILL, 2, VR_FORK_KEEP_SIGMASK);
	if (pid == 0) {
		char c;
		close(p[1]);
		_exit(read(p[0], &c, 1) == 0 ? 0 : 3);
	}
	assert_true(pid > 0);
	assert_int_equal(sigprocmask(SIG_SETMASK, &old, NULL), 0);
	close(p[0]);
	assert_int_equal(kill(pid, SIGINT), 0);
	close(p[1]);
	int status;
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(mask_emptied),
		cmocka_unit_test(mask_kept),
		cmocka_unit_test(kept_mask_survives_sigint),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
