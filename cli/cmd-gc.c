/* vault-run gc [--project DIR | --all] [--older-than DAYS] [--dry-run]:
 * deletes run journals (docs/undo.md) older than DAYS (default 14), judged
 * by their manifest's modification time. Audit logs are kept. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <glib.h>

#include "cli/commands.h"
#include "cli/options.h"
#include "common/cleanup.h"
#include "common/log.h"
#include "common/exitcode.h"
#include "audit/state-dir.h"

static const char usage[] =
	"usage: vault-run gc [--project DIR | --all] [--older-than DAYS] [--dry-run]\n"
	"Deletes the undo journals of runs older than DAYS (default 14).\n";

/* A journal holds manifest.jsonl and objects/<n> only: anything else in it
 * is not ours to delete, and the directory then stays. JFD is the journal,
 * already opened without following a symlink. */
static int remove_journal(int parent, int jfd, const char *name)
{
	vr_cleanup_fd int ofd = openat(jfd, "objects", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (ofd >= 0) {
		vr_cleanup_dir DIR *d = vr_fdopendir(&ofd);
		struct dirent *de;
		while (d && (de = readdir(d)))
			if (de->d_name[0] != '.')
				unlinkat(dirfd(d), de->d_name, 0);
		unlinkat(jfd, "objects", AT_REMOVEDIR);
	}
	unlinkat(jfd, "manifest.jsonl", 0);
	return unlinkat(parent, name, AT_REMOVEDIR) < 0 ? -errno : 0;
}

/* The journals of one project directory DIR_FD (checked, O_PATH; SHOWN its
 * path). Only real directories named *.journal are considered: a symlink
 * of that name is left alone, so gc never deletes outside the state
 * directory. */
static int gc_dir(int dir_fd, const char *shown, time_t cutoff, bool dry_run, unsigned *removed)
{
	vr_cleanup_fd int fd = openat(dir_fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	vr_cleanup_dir DIR *d = vr_fdopendir(&fd);
	if (!d)
		return -errno;
	struct dirent *de;
	int ret = 0;
	while ((de = readdir(d))) {
		if (!g_str_has_suffix(de->d_name, ".journal") || de->d_name[0] == '.')
			continue;
		vr_cleanup_fd int jfd = openat(dirfd(d), de->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (jfd < 0) {
			if (errno == ELOOP || errno == ENOTDIR)
				vr_error("gc: %s/%s is not a directory (a symlink?): left alone",
				        shown, de->d_name);
			continue;
		}
		struct stat st;
		if (fstatat(jfd, "manifest.jsonl", &st, AT_SYMLINK_NOFOLLOW) < 0 && fstat(jfd, &st) < 0)
			continue;
		if (st.st_mtime >= cutoff)
			continue;
		printf("%s %s/%s\n", dry_run ? "would delete" : "deleted", shown, de->d_name);
		int r = dry_run ? 0 : remove_journal(dirfd(d), jfd, de->d_name);
		vr_clear_fd(&jfd);
		if (r < 0) {
			vr_error("gc: %s/%s: %s", shown, de->d_name, g_strerror(-r));
			ret = r;
			continue;
		}
		(*removed)++;
	}
	return ret;
}

/* Every project directory below vault-run's checked state directory BFD
 * (BASE: its path). */
static int gc_all(int bfd, const char *base, time_t cutoff, bool dry_run, unsigned *removed)
{
	vr_cleanup_fd int lfd = openat(bfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	vr_cleanup_dir DIR *d = lfd >= 0 ? vr_fdopendir(&lfd) : NULL;
	if (!d)
		return -errno;
	struct dirent *de;
	int ret = 0;
	while ((de = readdir(d))) {
		if (de->d_name[0] == '.')
			continue;
		g_autofree char *shown = g_build_filename(base, de->d_name, NULL);
		struct stat st;
		if (fstatat(bfd, de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0 ||
		    !(S_ISDIR(st.st_mode) || S_ISLNK(st.st_mode)))
			continue; /* a symlink is reported by the checked open below */
		vr_cleanup_fd int pfd = -1;
		if (vr_state_open_child(bfd, de->d_name, shown, false, &pfd) < 0) {
			ret = -1; /* said why */
			continue;
		}
		if (gc_dir(pfd, shown, cutoff, dry_run, removed) < 0)
			ret = -1;
	}
	return ret;
}

int vr_cmd_gc(int argc, char **argv)
{
	g_autofree char *project = NULL, *older = NULL;
	gboolean all = FALSE, dry_run = FALSE;
	const GOptionEntry entries[] = {
		{"project", 0, 0, G_OPTION_ARG_FILENAME, &project, NULL, NULL},
		{"all", 0, 0, G_OPTION_ARG_NONE, &all, NULL, NULL},
		{"older-than", 0, 0, G_OPTION_ARG_STRING, &older, NULL, NULL},
		{"dry-run", 'n', 0, G_OPTION_ARG_NONE, &dry_run, NULL, NULL},
		{NULL},
	};
	const VrCliOptions o = {"gc", entries, TRUE, NULL};
	int status;
	if (!vr_cli_options_parse(&o, usage, &argc, &argv, &status))
		return status;
	double days = 14;
	if (older) {
		char *end;
		days = g_ascii_strtod(older, &end);
		if (!*older || *end || days < 0 || days > 36500) {
			vr_error("gc: --older-than: '%s' is not a number of days", older);
			return VR_EXIT_ERROR;
		}
	}
	if (argc > 1) {
		vr_error("gc: unexpected argument '%s'", argv[1]);
		return VR_EXIT_ERROR;
	}
	time_t cutoff = time(NULL) - (time_t)(days * 86400);
	unsigned removed = 0;
	int r = 0;
	if (all) {
		g_autofree char *base = NULL;
		if ((r = vr_state_base_dir(&base)) < 0) {
			vr_error("gc: no state directory: %s", g_strerror(-r));
			return VR_EXIT_ERROR;
		}
		vr_cleanup_fd int bfd = -1;
		r = vr_state_open_base_dir(false, &bfd);
		if (r == -ENOENT) {
			r = 0;
		} else if (r < 0) {
			return VR_EXIT_ERROR; /* the refusal is logged */
		} else {
			r = gc_all(bfd, base, cutoff, dry_run, &removed);
		}
	} else {
		g_autofree char *dir = NULL;
		if ((r = vr_state_project_dir(project ? project : ".", &dir)) < 0) {
			vr_error("gc: %s: %s", project ? project : ".", g_strerror(-r));
			return VR_EXIT_ERROR;
		}
		vr_cleanup_fd int pfd = -1;
		r = vr_state_open_project_dir(project ? project : ".", false, &pfd);
		if (r == -ENOENT) {
			r = 0;
		} else if (r < 0) {
			return VR_EXIT_ERROR; /* the refusal is logged */
		} else {
			r = gc_dir(pfd, dir, cutoff, dry_run, &removed);
		}
	}
	printf("%s %u journal(s)\n", dry_run ? "would delete" : "deleted", removed);
	return r < 0 ? 1 : VR_EXIT_OK;
}
