/* A test tool for tests/integration/sandbox-limits.sh: runs into a limit
 * and says what happened.
 *   limits-probe fork N        forks up to N sleeping children; prints
 *                              "forked K" and "EAGAIN" if a fork was refused
 *   limits-probe alloc MIB     touches MIB MiB of fresh pages, printing
 *                              "touched M" every 16 MiB; "done" at the end
 *   limits-probe spin SECONDS  busy-loops for SECONDS of wall time; prints
 *                              "cpu-percent P" (CPU time / wall time)
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static double seconds(clockid_t clock)
{
	struct timespec ts;
	clock_gettime(clock, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int do_fork(long n)
{
	long k = 0;
	int refused = 0;
	pid_t kids[4096];
	if (n > 4096)
		n = 4096;
	for (; k < n; k++) {
		pid_t pid = fork();
		if (pid < 0) {
			refused = errno == EAGAIN;
			if (!refused)
				perror("fork");
			break;
		}
		if (pid == 0) {
			pause();
			_exit(0);
		}
		kids[k] = pid;
	}
	printf("forked %ld\n%s", k, refused ? "EAGAIN\n" : "");
	for (long i = 0; i < k; i++)
		kill(kids[i], SIGKILL);
	while (wait(NULL) > 0)
		;
	return 0;
}

static int do_alloc(long mib)
{
	size_t chunk = 1 << 20;
	for (long i = 1; i <= mib; i++) {
		char *p = mmap(NULL, chunk, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (p == MAP_FAILED) {
			perror("mmap");
			return 1;
		}
		memset(p, (int)i, chunk); /* every page becomes resident */
		if (i % 16 == 0) {
			printf("touched %ld\n", i);
			fflush(stdout);
		}
	}
	printf("done\n");
	return 0;
}

static int do_spin(double wall)
{
	double start = seconds(CLOCK_MONOTONIC), cpu0 = seconds(CLOCK_PROCESS_CPUTIME_ID);
	volatile unsigned long x = 0;
	while (seconds(CLOCK_MONOTONIC) - start < wall)
		for (int i = 0; i < 100000; i++)
			x++;
	double used = seconds(CLOCK_PROCESS_CPUTIME_ID) - cpu0, elapsed = seconds(CLOCK_MONOTONIC) - start;
	printf("cpu-percent %.0f\n", 100 * used / elapsed);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc != 3) {
		fprintf(stderr, "usage: limits-probe fork N | alloc MIB | spin SECONDS\n");
		return 2;
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (strcmp(argv[1], "fork") == 0)
		return do_fork(atol(argv[2]));
	if (strcmp(argv[1], "alloc") == 0)
		return do_alloc(atol(argv[2]));
	if (strcmp(argv[1], "spin") == 0)
		return do_spin(atof(argv[2]));
	return 2;
}
