/* view-race MOUNT ITERATIONS — the symlink-swap race against the view.
 *
 * In MOUNT (the view), "d" is a directory holding f ("real") and "s" is a
 * symlink to a host directory holding a canary f. One process swaps d and s
 * (RENAME_EXCHANGE through the view) as fast as it can; this process opens
 * d/f ITERATIONS times with RESOLVE_NO_SYMLINKS, so the opener itself never
 * follows a symlink: if canary bytes ever come back, the daemon followed one
 * on the host. Prints "opens=N real=N loop=N other=N canary=N"; exit 1 if
 * the canary was read. */
#include <errno.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	if (argc != 3) {
		fprintf(stderr, "usage: view-race MOUNT ITERATIONS\n");
		return 2;
	}
	long iters = atol(argv[2]);
	int mfd = open(argv[1], O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (mfd < 0) {
		perror("open mount");
		return 2;
	}
	pid_t swapper = fork();
	if (swapper == 0) {
		for (;;)
			renameat2(mfd, "d", mfd, "s", RENAME_EXCHANGE);
	}
	long real = 0, loop = 0, other = 0, canary = 0;
	struct open_how how = {.flags = O_RDONLY | O_CLOEXEC, .resolve = RESOLVE_NO_SYMLINKS};
	for (long i = 0; i < iters; i++) {
		int fd = (int)syscall(SYS_openat2, mfd, "d/f", &how, sizeof how);
		if (fd < 0) {
			if (errno == ELOOP)
				loop++;
			else
				other++;
			continue;
		}
		char buf[64] = {0};
		ssize_t n = read(fd, buf, sizeof buf - 1);
		close(fd);
		if (n > 0 && strstr(buf, "CANARY"))
			canary++;
		else if (n > 0 && strstr(buf, "real"))
			real++;
		else
			other++;
	}
	kill(swapper, SIGKILL);
	waitpid(swapper, NULL, 0);
	printf("opens=%ld real=%ld loop=%ld other=%ld canary=%ld\n", iters, real, loop, other, canary);
	return canary ? 1 : 0;
}
