/* view-model VIEW NATIVE SEED NOPS — a model-based test of the view.
 *
 * Applies the same pseudo-random sequence of file system operations to a
 * directory seen through the view and to a native directory, and checks
 * that each returns the same result (and the same data for reads and
 * listings). The caller compares the two trees at the end. Names come from a
 * small pool so operations collide (rename onto existing, rmdir non-empty…).
 * Prints the first mismatches and exits 1 if there were any. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <unistd.h>

static int roots[2];
static uint64_t rng;
static long mismatches;

static uint32_t rnd(uint32_t n)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return (uint32_t)(rng % n);
}

static const char *const names[] = {"a", "b", "c", "d1", "d1/a", "d1/b", "d1/d2", "d1/d2/x", "d3", "d3/y"};
#define NNAMES (sizeof names / sizeof *names)

static const char *pick(void) { return names[rnd(NNAMES)]; }

static int res(int r) { return r < 0 ? -errno : r; }

static void report(long step, const char *what, const char *p, long a, long b)
{
	if (a == b)
		return;
	if (mismatches++ < 20)
		fprintf(stderr, "step %ld: %s %s: view %ld, native %ld\n", step, what, p, a, b);
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static long listing(int root, const char *p, char *out, size_t outlen)
{
	int fd = openat(root, p, O_RDONLY | O_DIRECTORY | O_NOFOLLOW);
	if (fd < 0)
		return -errno;
	DIR *d = fdopendir(fd);
	char *names_[64];
	int n = 0;
	struct dirent *de;
	while ((de = readdir(d)) && n < 64)
		names_[n++] = strdup(de->d_name);
	closedir(d);
	qsort(names_, n, sizeof *names_, cmp_str);
	out[0] = 0;
	for (int i = 0; i < n; i++) {
		strncat(out, names_[i], outlen - strlen(out) - 2);
		strcat(out, "/");
		free(names_[i]);
	}
	return n;
}

static unsigned long hash(const char *s, size_t n)
{
	unsigned long h = 5381;
	for (size_t i = 0; i < n; i++)
		h = h * 33 + (unsigned char)s[i];
	return h;
}

int main(int argc, char **argv)
{
	if (argc != 5) {
		fprintf(stderr, "usage: view-model VIEW NATIVE SEED NOPS\n");
		return 2;
	}
	for (int i = 0; i < 2; i++)
		if ((roots[i] = open(argv[1 + i], O_PATH | O_DIRECTORY)) < 0) {
			perror(argv[1 + i]);
			return 2;
		}
	rng = strtoull(argv[3], NULL, 0) * 2654435761u + 1;
	long nops = atol(argv[4]);
	umask(022);

	for (long step = 0; step < nops; step++) {
		int op = (int)rnd(16);
		const char *p = pick(), *q = pick();
		char buf[2][4096];
		long r[2];
		uint32_t off = rnd(3000), len = rnd(1500) + 1;
		unsigned mode = (unsigned[]){0600, 0644, 0755, 0700}[rnd(4)];
		uint64_t saved = rng;
		for (int s = 0; s < 2; s++) {
			int root = roots[s], fd;
			rng = saved; /* same random data for both sides */
			switch (op) {
			case 0: /* create/overwrite with content */
				fd = openat(root, p, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW, mode);
				r[s] = res(fd);
				if (fd >= 0) {
					for (uint32_t i = 0; i < len; i++)
						buf[s][i] = (char)('a' + rnd(26));
					r[s] = res((int)write(fd, buf[s], len));
					close(fd);
				}
				break;
			case 1: /* pwrite inside or past the end */
				fd = openat(root, p, O_WRONLY | O_NOFOLLOW);
				r[s] = res(fd);
				if (fd >= 0) {
					memset(buf[s], 'W', len);
					r[s] = res((int)pwrite(fd, buf[s], len, off));
					close(fd);
				}
				break;
			case 2: /* read and compare */
				fd = openat(root, p, O_RDONLY | O_NOFOLLOW);
				r[s] = res(fd);
				if (fd >= 0) {
					ssize_t n = pread(fd, buf[s], sizeof buf[s], off / 2);
					r[s] = n < 0 ? -errno : (long)(hash(buf[s], (size_t)n) & 0x7fffffff);
					close(fd);
				}
				break;
			case 3: r[s] = res(mkdirat(root, p, mode)); break;
			case 4: r[s] = res(unlinkat(root, p, AT_REMOVEDIR)); break;
			case 5: r[s] = res(unlinkat(root, p, 0)); break;
			case 6: r[s] = res(renameat2(root, p, root, q, 0)); break;
			case 7: r[s] = res(renameat2(root, p, root, q, RENAME_NOREPLACE)); break;
			case 8: r[s] = res(renameat2(root, p, root, q, RENAME_EXCHANGE)); break;
			case 9: r[s] = res(linkat(root, p, root, q, 0)); break;
			case 10: r[s] = res(symlinkat("a", root, p)); break;
			case 11: r[s] = res(fchmodat(root, p, mode, 0)); break;
			case 12: { /* truncate */
				fd = openat(root, p, O_WRONLY | O_NOFOLLOW);
				r[s] = res(fd);
				if (fd >= 0) {
					r[s] = res(ftruncate(fd, off));
					close(fd);
				}
				break;
			}
			case 13: { /* listing */
				char l[4096];
				long n = listing(root, rnd(2) ? "." : "d1", l, sizeof l);
				r[s] = n < 0 ? n : (long)(hash(l, strlen(l)) & 0x7fffffff);
				break;
			}
			case 14: { /* stat: type, mode, size, nlink */
				struct stat st;
				r[s] = res(fstatat(root, p, &st, AT_SYMLINK_NOFOLLOW));
				if (r[s] == 0)
					r[s] = (long)((st.st_mode & 0170777) ^ ((uint64_t)st.st_size << 20) ^
					              ((uint64_t)st.st_nlink << 50));
				break;
			}
			case 15: { /* append through O_APPEND */
				fd = openat(root, p, O_WRONLY | O_APPEND | O_NOFOLLOW);
				r[s] = res(fd);
				if (fd >= 0) {
					r[s] = res((int)write(fd, "appended\n", 9));
					close(fd);
				}
				break;
			}
			}
		}
		static const char *const opnames[] = {"create", "pwrite", "read", "mkdir", "rmdir",
			"unlink", "rename", "rename-noreplace", "rename-exchange", "link", "symlink",
			"chmod", "truncate", "readdir", "stat", "append"};
		char what[64];
		snprintf(what, sizeof what, "%s(->%s)", opnames[op], q);
		report(step, what, p, r[0], r[1]);
	}
	printf("%ld operations, %ld mismatches\n", nops, mismatches);
	return mismatches ? 1 : 0;
}
