/* attack-swap DIR OP ITERATIONS — the symlink-swap race against one
 * path-taking operation.
 *
 * DIR holds "d", a directory with files f and u, and "s", a symlink to a
 * directory elsewhere. A child swaps d and s (RENAME_EXCHANGE) as fast as it
 * can while this process runs OP on d/… ITERATIONS times through ordinary
 * path resolution, undoing each success so the loop can go on:
 *   truncate  truncate(d/f, 5)             chmod    chmod(d/f, 0600) + back
 *   setxattr  setxattr(d/f, user.vr-swap)  rename   d/f -> d/g + back
 *   link      link(d/f, d/h) + unlink       unlink   create d/x + unlink
 *   mkdir     mkdir(d/m) + rmdir
 * On a plain directory the operation lands in the symlink's target half the
 * time (the control). Through the view the test points s at a relative
 * target that leads to a host canary only when resolved from the host
 * project, and nowhere from the mount point: if the canary changes, the
 * daemon followed the symlink on the host.
 * Prints "op=OP iterations=N ok=N failed=N swaps=N"; exit 2 on bad usage. */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <sys/xattr.h>
#include <unistd.h>

/* Undoing goes through the same race: retry while d is the symlink. */
static void undo(int (*fn)(const char *, const char *), const char *a, const char *b)
{
	for (int i = 0; i < 100000; i++)
		if (fn(a, b) == 0 || (errno != ENOENT && errno != ENOTDIR && errno != ELOOP))
			return;
}
static int rename2(const char *a, const char *b) { return rename(a, b); }
static int unlink1(const char *a, const char *b) { (void)b; return unlink(a); }
static int rmdir1(const char *a, const char *b) { (void)b; return rmdir(a); }

static int do_op(const char *op)
{
	if (strcmp(op, "truncate") == 0)
		return truncate("d/f", 5);
	if (strcmp(op, "chmod") == 0) {
		if (chmod("d/f", 0600) < 0)
			return -1;
		chmod("d/f", 0644);
		return 0;
	}
	if (strcmp(op, "setxattr") == 0) {
		if (setxattr("d/f", "user.vr-swap", "1", 1, 0) < 0)
			return -1;
		removexattr("d/f", "user.vr-swap");
		return 0;
	}
	if (strcmp(op, "rename") == 0) {
		if (rename("d/f", "d/g") < 0)
			return -1;
		undo(rename2, "d/g", "d/f");
		return 0;
	}
	if (strcmp(op, "link") == 0) {
		if (link("d/f", "d/h") < 0)
			return -1;
		undo(unlink1, "d/h", NULL);
		return 0;
	}
	if (strcmp(op, "unlink") == 0) {
		int fd = open("d/x", O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
		if (fd >= 0)
			close(fd);
		return unlink("d/x");
	}
	if (strcmp(op, "mkdir") == 0) {
		if (mkdir("d/m", 0755) < 0)
			return -1;
		undo(rmdir1, "d/m", NULL);
		return 0;
	}
	errno = EINVAL;
	return -2;
}

int main(int argc, char **argv)
{
	if (argc != 4) {
		fprintf(stderr, "usage: attack-swap DIR OP ITERATIONS\n");
		return 2;
	}
	long iters = atol(argv[3]);
	if (chdir(argv[1]) < 0) {
		perror("chdir");
		return 2;
	}
	long *swaps = mmap(NULL, sizeof *swaps, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (swaps == MAP_FAILED)
		return 2;
	pid_t swapper = fork();
	if (swapper == 0) {
		for (;;)
			if (renameat2(AT_FDCWD, "d", AT_FDCWD, "s", RENAME_EXCHANGE) == 0)
				__atomic_add_fetch(swaps, 1, __ATOMIC_RELAXED);
	}
	/* Start only once the swapper runs, or a short loop may finish first. */
	while (__atomic_load_n(swaps, __ATOMIC_RELAXED) < 2)
		sched_yield();
	long ok = 0, failed = 0;
	for (long i = 0; i < iters; i++) {
		int r = do_op(argv[2]);
		if (r == -2) {
			fprintf(stderr, "attack-swap: unknown op %s\n", argv[2]);
			kill(swapper, SIGKILL);
			waitpid(swapper, NULL, 0);
			return 2;
		}
		if (r == 0)
			ok++;
		else
			failed++;
	}
	kill(swapper, SIGKILL);
	waitpid(swapper, NULL, 0);
	/* Leave d a directory again, as the caller set it up. */
	struct stat st;
	if (lstat("d", &st) == 0 && S_ISLNK(st.st_mode))
		renameat2(AT_FDCWD, "d", AT_FDCWD, "s", RENAME_EXCHANGE);
	printf("op=%s iterations=%ld ok=%ld failed=%ld swaps=%ld\n", argv[2], iters, ok, failed, *swaps);
	return 0;
}
