/* common/fd-util.h's descriptor closing (the one way the sandbox, the
 * proxy and the helpers shed what they inherited) and common/cleanup.h's
 * descriptor helpers. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/cleanup.h"
#include "common/fd-util.h"

static int is_open(int fd)
{
	return fcntl(fd, F_GETFD) >= 0;
}

/* In a child, so that the test's own descriptors (cmocka's) survive. */
static void close_all_except_keeps_only_the_kept(void **state)
{
	(void)state;
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		int fds[6];
		for (int i = 0; i < 6; i++)
			if ((fds[i] = open("/dev/null", O_RDONLY)) < 0)
				_exit(10);
		int keep[] = {fds[4], -1, fds[1], fds[4], 1};
		if (vr_close_all_except(3, keep, sizeof keep / sizeof *keep) < 0)
			_exit(11);
		for (int i = 0; i < 6; i++)
			if (is_open(fds[i]) != (i == 1 || i == 4))
				_exit(20 + i);
		if (!is_open(0) || !is_open(1) || !is_open(2))
			_exit(30);
		if (vr_close_from(3) < 0 || is_open(fds[1]) || is_open(fds[4]))
			_exit(31);
		_exit(0);
	}
	int status;
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
}

static void too_many_kept_is_refused(void **state)
{
	(void)state;
	int keep[VR_CLOSE_KEEP_MAX + 1] = {0};
	assert_int_equal(vr_close_all_except(3, keep, VR_CLOSE_KEEP_MAX + 1), -E2BIG);
}

static int opened(int *ret_fd)
{
	vr_cleanup_fd int fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	*ret_fd = vr_steal_fd(&fd);
	return 0;
}

static void cleanup_fd_closes_and_keeps_errno(void **state)
{
	(void)state;
	int seen;
	{
		vr_cleanup_fd int fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
		assert_true(fd >= 0);
		seen = fd;
		errno = ENOSPC;
	}
	assert_int_equal(errno, ENOSPC);
	assert_false(is_open(seen));
	int kept = -1;
	assert_int_equal(opened(&kept), 0);
	assert_true(is_open(kept));
	close(kept);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(close_all_except_keeps_only_the_kept),
		cmocka_unit_test(too_many_kept_is_refused),
		cmocka_unit_test(cleanup_fd_closes_and_keeps_errno),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
