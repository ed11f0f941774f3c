/* vault-run gc [--project DIR | --all] [--older-than DAYS] [--dry-run]:
 * deletes run journals (docs/undo.md) older than DAYS (default 14), judged
 * by their manifest's modification time. Audit logs are kept. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <glib.h>

#include "commands.h"
#include "common/exitcode.h"
#include "state-dir.h"

static const char usage[] =
	"usage: vault-run gc [--project DIR | --all] [--older-than DAYS] [--dry-run]\n"
	"Deletes the undo journals of runs older than DAYS (default 14).\n";

/* A journal holds manifest.jsonl and objects/<n> only: anything else in it
 * is not ours to delete, and the directory then stays. */
static int remove_journal(int parent, const char *name)
{
	int jfd = openat(parent, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (jfd < 0)
		return -errno;
	int ofd = openat(jfd, "objects", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (ofd >= 0) {
		DIR *d = fdopendir(ofd);
		struct dirent *de;
		while (d && (de = readdir(d)))
			if (de->d_name[0] != '.')
				unlinkat(ofd, de->d_name, 0);
		if (d)
			closedir(d);
		else
			close(ofd);
		unlinkat(jfd, "objects", AT_REMOVEDIR);
	}
	unlinkat(jfd, "manifest.jsonl", 0);
	close(jfd);
	return unlinkat(parent, name, AT_REMOVEDIR) < 0 ? -errno : 0;
}

static int gc_dir(const char *dir, time_t cutoff, bool dry_run, unsigned *removed)
{
	int fd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return errno == ENOENT ? 0 : -errno;
	DIR *d = fdopendir(fd);
	if (!d) {
		close(fd);
		return -errno;
	}
	struct dirent *de;
	int ret = 0;
	while ((de = readdir(d))) {
		if (!g_str_has_suffix(de->d_name, ".journal") || de->d_name[0] == '.')
			continue;
		g_autofree char *m = g_strdup_printf("%s/manifest.jsonl", de->d_name);
		struct stat st;
		if (fstatat(fd, m, &st, AT_SYMLINK_NOFOLLOW) < 0 &&
		    fstatat(fd, de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0)
			continue;
		if (st.st_mtime >= cutoff)
			continue;
		printf("%s %s/%s\n", dry_run ? "would delete" : "deleted", dir, de->d_name);
		if (!dry_run) {
			int r = remove_journal(fd, de->d_name);
			if (r < 0) {
				fprintf(stderr, "vault-run: gc: %s/%s: %s\n", dir, de->d_name, g_strerror(-r));
				ret = r;
				continue;
			}
		}
		(*removed)++;
	}
	closedir(d);
	return ret;
}

int vr_cmd_gc(int argc, char **argv)
{
	static const struct option longopts[] = {
		{"project", required_argument, NULL, 'p'},
		{"all", no_argument, NULL, 'a'},
		{"older-than", required_argument, NULL, 'o'},
		{"dry-run", no_argument, NULL, 'n'},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	const char *project = NULL;
	bool all = false, dry_run = false;
	double days = 14;
	int c;
	opterr = 0;
	optind = 1;
	while ((c = getopt_long(argc, argv, "+nh", longopts, NULL)) != -1) {
		char *end;
		switch (c) {
		case 'p': project = optarg; break;
		case 'a': all = true; break;
		case 'n': dry_run = true; break;
		case 'o':
			days = g_ascii_strtod(optarg, &end);
			if (!*optarg || *end || days < 0 || days > 36500) {
				fprintf(stderr, "vault-run: gc: --older-than: '%s' is not a number of days\n", optarg);
				return VR_EXIT_ERROR;
			}
			break;
		case 'h': fputs(usage, stdout); return VR_EXIT_OK;
		default:
			fprintf(stderr, "vault-run: gc: unknown option or missing value in '%s' (see vault-run gc --help)\n",
			        argv[optind - 1]);
			return VR_EXIT_ERROR;
		}
	}
	if (optind != argc) {
		fprintf(stderr, "vault-run: gc: unexpected argument '%s'\n", argv[optind]);
		return VR_EXIT_ERROR;
	}
	time_t cutoff = time(NULL) - (time_t)(days * 86400);
	unsigned removed = 0;
	int r = 0;
	if (all) {
		g_autofree char *base = NULL;
		if ((r = vr_state_base_dir(&base)) < 0) {
			fprintf(stderr, "vault-run: gc: no state directory: %s\n", g_strerror(-r));
			return VR_EXIT_ERROR;
		}
		g_autoptr(GDir) d = g_dir_open(base, 0, NULL);
		const char *name;
		while (d && (name = g_dir_read_name(d))) {
			g_autofree char *sub = g_build_filename(base, name, NULL);
			if (gc_dir(sub, cutoff, dry_run, &removed) < 0)
				r = -1;
		}
	} else {
		g_autofree char *dir = NULL;
		if ((r = vr_state_project_dir(project ? project : ".", &dir)) < 0) {
			fprintf(stderr, "vault-run: gc: %s: %s\n", project ? project : ".", g_strerror(-r));
			return VR_EXIT_ERROR;
		}
		r = gc_dir(dir, cutoff, dry_run, &removed);
	}
	printf("%s %u journal(s)\n", dry_run ? "would delete" : "deleted", removed);
	return r < 0 ? 1 : VR_EXIT_OK;
}
