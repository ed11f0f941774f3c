/* scale-probe — the scale faults of tests/fault/scale-*.sh. Host side it
 * makes the big trees fast; inside the sandbox it drives the view.
 *
 *   scale-probe mkfiles DIR N       creates empty files DIR/f0000000 …, N of them
 *   scale-probe readdir DIR BUF SEEKBUF SEEKS SEED
 *       lists DIR with getdents64 in BUF-byte reads, recording each entry's
 *       d_off; prints "name NAME" per entry, then "entries N", "dups N"
 *       (names seen twice). Then SEEKS times: lseek to a recorded d_off
 *       (random, from SEED) and one SEEKBUF-byte getdents64 must return
 *       exactly the entries recorded after it; prints "seeks N bad M" (and
 *       the first few mismatches as "mismatch …"). lseek(0) must restart at
 *       entry 0.
 *   scale-probe statfiles DIR N     fstatat DIR/f0000000 … (N of them); prints
 *       "stat N ok K"
 *   scale-probe holdopen DIR N READY WAIT
 *       opens DIR/f0000000 … read-only until N are open or open fails;
 *       prints "held K errno NAME"; then creates READY and waits (up to
 *       120 s) until WAIT exists; then closes everything, prints "closed".
 *
 * Nothing outside DIR (and READY) is written. */
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

struct linux_dirent64 {
	uint64_t d_ino;
	int64_t d_off;
	unsigned short d_reclen;
	unsigned char d_type;
	char d_name[];
};

typedef struct {
	char *name;
	int64_t off; /* d_off: where the entry after this one starts */
} Entry;

static int mkfiles(const char *dir, long n)
{
	int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0) {
		perror(dir);
		return 1;
	}
	char name[32];
	for (long i = 0; i < n; i++) {
		snprintf(name, sizeof name, "f%07ld", i);
		if (mknodat(dfd, name, S_IFREG | 0644, 0) < 0) { /* no open/close: cheaper */
			perror(name);
			return 1;
		}
	}
	close(dfd);
	return 0;
}

static int name_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static long getdents(int fd, char *buf, size_t size)
{
	return syscall(SYS_getdents64, fd, buf, size);
}

static int do_readdir(const char *dir, size_t bufsize, size_t seekbuf, long seeks, unsigned seed)
{
	int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0) {
		perror(dir);
		return 1;
	}
	char *buf = malloc(bufsize > seekbuf ? bufsize : seekbuf);
	size_t cap = 1024, n = 0;
	Entry *ents = malloc(cap * sizeof *ents);
	for (;;) {
		long got = getdents(fd, buf, bufsize);
		if (got < 0) {
			printf("getdents error %s\n", strerror(errno));
			return 1;
		}
		if (got == 0)
			break;
		for (long pos = 0; pos < got;) {
			struct linux_dirent64 *d = (struct linux_dirent64 *)(buf + pos);
			if (n == cap)
				ents = realloc(ents, (cap *= 2) * sizeof *ents);
			ents[n].name = strdup(d->d_name);
			ents[n].off = d->d_off;
			n++;
			pos += d->d_reclen;
		}
	}
	for (size_t i = 0; i < n; i++)
		printf("name %s\n", ents[i].name);
	char **sorted = malloc((n ? n : 1) * sizeof *sorted);
	for (size_t i = 0; i < n; i++)
		sorted[i] = ents[i].name;
	qsort(sorted, n, sizeof *sorted, name_cmp);
	long dups = 0;
	for (size_t i = 1; i < n; i++)
		if (strcmp(sorted[i - 1], sorted[i]) == 0)
			dups++;
	printf("entries %zu\ndups %ld\n", n, dups);

	/* Seeks: from entry i's d_off the listing goes on at entry i+1. */
	long bad = 0;
	srand(seed);
	if (lseek(fd, 0, SEEK_SET) != 0 || getdents(fd, buf, bufsize) <= 0 || n == 0 ||
	    strcmp(((struct linux_dirent64 *)buf)->d_name, ents[0].name) != 0) {
		printf("mismatch rewind\n");
		bad++;
	}
	for (long s = 0; s < seeks && n > 1; s++) {
		size_t i = (size_t)rand() % (n - 1);
		if (lseek(fd, ents[i].off, SEEK_SET) < 0) {
			printf("mismatch lseek %lld: %s\n", (long long)ents[i].off, strerror(errno));
			bad++;
			continue;
		}
		long got = getdents(fd, buf, seekbuf);
		size_t j = i + 1;
		bool ok = got > 0;
		for (long pos = 0; ok && pos < got; j++) {
			struct linux_dirent64 *d = (struct linux_dirent64 *)(buf + pos);
			if (j >= n || strcmp(d->d_name, ents[j].name) != 0 || d->d_off != ents[j].off) {
				if (bad < 5)
					printf("mismatch after #%zu (%s): got %s, want %s\n", i, ents[i].name,
					       d->d_name, j < n ? ents[j].name : "(end)");
				ok = false;
			}
			pos += d->d_reclen;
		}
		if (!ok)
			bad++;
	}
	printf("seeks %ld bad %ld\n", seeks, bad);
	close(fd);
	return 0;
}

static int statfiles(const char *dir, long n)
{
	int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0) {
		perror(dir);
		return 1;
	}
	long ok = 0;
	char name[32];
	struct stat st;
	for (long i = 0; i < n; i++) {
		snprintf(name, sizeof name, "f%07ld", i);
		if (fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISREG(st.st_mode))
			ok++;
	}
	printf("stat %ld ok %ld\n", n, ok);
	close(dfd);
	return 0;
}

static int holdopen(const char *dir, long n, const char *ready, const char *wait)
{
	int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0) {
		perror(dir);
		return 1;
	}
	int *fds = malloc((size_t)n * sizeof *fds);
	long k = 0;
	int err = 0;
	char name[32];
	for (; k < n; k++) {
		snprintf(name, sizeof name, "f%07ld", k);
		fds[k] = openat(dfd, name, O_RDONLY | O_CLOEXEC);
		if (fds[k] < 0) {
			err = errno;
			break;
		}
	}
	printf("held %ld errno %s\n", k, err == EMFILE ? "EMFILE" : err ? strerror(err) : "none");
	fflush(stdout);
	/* The marker needs one fd: make room for it. */
	if (k > 0)
		close(fds[--k]);
	int r = open(ready, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
	if (r >= 0)
		close(r);
	struct timespec ts = {0, 100 * 1000 * 1000};
	for (int i = 0; i < 1200 && access(wait, F_OK) != 0; i++)
		nanosleep(&ts, NULL);
	for (long i = 0; i < k; i++)
		close(fds[i]);
	printf("closed\n");
	return 0;
}

int main(int argc, char **argv)
{
	setvbuf(stdout, NULL, _IOFBF, 1 << 16);
	if (argc == 4 && strcmp(argv[1], "mkfiles") == 0)
		return mkfiles(argv[2], atol(argv[3]));
	if (argc == 7 && strcmp(argv[1], "readdir") == 0)
		return do_readdir(argv[2], (size_t)atol(argv[3]), (size_t)atol(argv[4]), atol(argv[5]),
		                  (unsigned)atol(argv[6]));
	if (argc == 4 && strcmp(argv[1], "statfiles") == 0)
		return statfiles(argv[2], atol(argv[3]));
	if (argc == 6 && strcmp(argv[1], "holdopen") == 0)
		return holdopen(argv[2], atol(argv[3]), argv[4], argv[5]);
	fprintf(stderr, "usage: scale-probe mkfiles DIR N | readdir DIR BUF SEEKBUF SEEKS SEED | "
	                "statfiles DIR N | holdopen DIR N READY WAIT\n");
	return 2;
}
