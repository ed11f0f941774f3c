/* vault-run scan [--json] PATH... — lists the secrets the view would mask, by
 * position and rule, never by value. Thin: the scanner is policy/scan.c. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <glib.h>

#include "audit/json.h"
#include "cli/commands.h"
#include "cli/options.h"
#include "common/cleanup.h"
#include "common/exitcode.h"
#include "common/log.h"
#include "policy/config.h"
#include "policy/scan.h"

static const char usage[] =
	"Usage: vault-run scan [OPTIONS] [PATH...]\n"
	"\n"
	"Scans files for secrets by content (private keys, cloud and API tokens,\n"
	"passwords in assignments and URLs) and prints one line per finding:\n"
	"  FILE:LINE:COL: RULE-ID description (N bytes)\n"
	"The secret itself is never printed. Directories are scanned recursively;\n"
	"symlinks below a PATH are not followed; in .git only config is read.\n"
	"Without PATH, the project directory (default: the current directory).\n"
	"\n"
	"Options:\n"
	"  --project DIR   scan DIR when no PATH is given\n"
	"  --json          one JSON object per finding (path, line, col, offset,\n"
	"                  length, rule, description)\n"
	"  --all           also findings your config drops ([view] scan-disable,\n"
	"                  scan-allow; paths relative to the project)\n"
	"  --rules         list the rules and exit\n"
	"  -h, --help      this text\n"
	"\n"
	"Exit status: 0 nothing found, 1 something found, 125 an error (a path that\n"
	"cannot be read; the others are still scanned). See docs/scanning.md.\n";

/* Larger files are skipped with a warning: secrets live in text, and a
 * multi-GiB blob would only cost memory. */
#define MAX_FILE_SIZE (256u << 20)

typedef struct {
	gboolean json;
	gboolean error;
	guint64 findings;
	guint64 dropped;            /* by the filter: counted, not printed */
	const VrScanFilter *filter; /* NULL: --all */
} ScanRun;

/* Paths are printed, not trusted: control bytes would let a file name forge
 * a finding line. */
static void print_text_path(const char *path)
{
	for (const unsigned char *p = (const unsigned char *)path; *p; p++)
		putchar(*p < 0x20 || *p == 0x7f ? '?' : *p);
}

static void print_json_string(const char *str)
{
	g_autoptr(GString) s = g_string_new(NULL);
	vr_json_append_string(s, str);
	fputs(s->str, stdout);
}

static void report(ScanRun *run, const char *path, const char *buf, GArray *hits)
{
	size_t line = 1, bol = 0, pos = 0;
	for (guint i = 0; i < hits->len; i++) {
		const VrScanHit *h = &g_array_index(hits, VrScanHit, i);
		/* Hits come sorted: count newlines incrementally. */
		for (const char *nl; pos < h->start && (nl = memchr(buf + pos, '\n', h->start - pos));) {
			line++;
			pos = (size_t)(nl - buf) + 1;
			bol = pos;
		}
		pos = h->start;
		size_t col = h->start - bol + 1;
		if (run->json) {
			fputs("{\"path\":", stdout);
			print_json_string(path);
			printf(",\"line\":%zu,\"col\":%zu,\"offset\":%zu,\"length\":%zu,\"rule\":", line, col, h->start,
			       h->len);
			print_json_string(h->rule->id);
			fputs(",\"description\":", stdout);
			print_json_string(h->rule->description);
			fputs("}\n", stdout);
		} else {
			print_text_path(path);
			printf(":%zu:%zu: %s %s (%zu bytes)\n", line, col, h->rule->id, h->rule->description, h->len);
		}
		run->findings++;
	}
}

/* REL: the path relative to the project (what scan-allow patterns match),
 * or NULL outside it (then only scan-disable applies). */
static void scan_file(ScanRun *run, int atfd, const char *name, const char *path, const char *rel)
{
	vr_cleanup_fd int fd = openat(atfd, name, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NOCTTY | O_NONBLOCK);
	if (fd < 0) {
		vr_error("scan: %s: %s", path, g_strerror(errno));
		run->error = TRUE;
		return;
	}
	struct stat st;
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode))
		return; /* replaced by something else since we looked: not ours to read */
	if ((guint64)st.st_size > MAX_FILE_SIZE) {
		vr_warning("scan: %s: skipped, larger than %u MiB", path, MAX_FILE_SIZE >> 20);
		return;
	}
	size_t cap = (size_t)st.st_size + 1, len = 0;
	g_autofree char *buf = g_malloc(cap);
	for (;;) {
		if (len == cap) {
			if (cap > MAX_FILE_SIZE)
				break; /* grew while we read: scan what we have */
			cap *= 2;
			buf = g_realloc(buf, cap);
		}
		ssize_t n = read(fd, buf + len, cap - len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			vr_error("scan: %s: %s", path, g_strerror(errno));
			run->error = TRUE;
			return;
		}
		if (n == 0)
			break;
		len += (size_t)n;
	}
	vr_clear_fd(&fd);
	g_autoptr(GArray) hits = g_array_new(FALSE, FALSE, sizeof(VrScanHit));
	vr_scan_buffer(buf, len, hits);
	if (run->filter)
		run->dropped += vr_scan_filter_apply(run->filter, rel ? rel : "", hits);
	report(run, path, buf, hits);
}

static gint cmp_names(gconstpointer a, gconstpointer b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static void scan_at(ScanRun *run, int atfd, const char *name, const char *path, const char *rel, int flags,
                    int depth);

static void scan_dir(ScanRun *run, int atfd, const char *name, const char *path, const char *rel, int depth)
{
	if (depth > 256) {
		vr_error("scan: %s: too deep", path);
		run->error = TRUE;
		return;
	}
	vr_cleanup_fd int fd = openat(atfd, name, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
	vr_cleanup_dir DIR *d = fd >= 0 ? vr_fdopendir(&fd) : NULL;
	if (!d) {
		vr_error("scan: %s: %s", path, g_strerror(errno));
		run->error = TRUE;
		return;
	}
	/* Sorted, so the report is the same on every run and file system. */
	g_autoptr(GPtrArray) names = g_ptr_array_new_with_free_func(g_free);
	struct dirent *de;
	while ((errno = 0, de = readdir(d)))
		if (strcmp(de->d_name, ".") != 0 && strcmp(de->d_name, "..") != 0)
			g_ptr_array_add(names, g_strdup(de->d_name));
	if (errno) {
		vr_error("scan: %s: %s", path, g_strerror(errno));
		run->error = TRUE;
	}
	g_ptr_array_sort(names, cmp_names);
	/* .git holds compressed objects (nothing to find) and one file worth
	 * reading: config, where remote URLs and extraheaders keep credentials. */
	const char *base = strrchr(path, '/');
	gboolean in_git = strcmp(base ? base + 1 : path, ".git") == 0;
	for (guint i = 0; i < names->len; i++) {
		const char *child = names->pdata[i];
		if (in_git && strcmp(child, "config") != 0)
			continue;
		g_autofree char *child_path = strcmp(path, "/") == 0 ? g_strconcat("/", child, NULL)
		                                                     : g_strconcat(path, "/", child, NULL);
		g_autofree char *child_rel = !rel ? NULL : *rel ? g_strconcat(rel, "/", child, NULL) : g_strdup(child);
		scan_at(run, dirfd(d), child, child_path, child_rel, AT_SYMLINK_NOFOLLOW, depth + 1);
	}
}

/* flags: AT_SYMLINK_NOFOLLOW below the command line; 0 for a PATH given
 * there (a symlinked project directory is what the user asked for). */
static void scan_at(ScanRun *run, int atfd, const char *name, const char *path, const char *rel, int flags,
                    int depth)
{
	struct stat st;
	if (fstatat(atfd, name, &st, flags) < 0) {
		vr_error("scan: %s: %s", path, g_strerror(errno));
		run->error = TRUE;
		return;
	}
	if (S_ISDIR(st.st_mode)) {
		if (flags == 0) {
			/* Resolve the command-line symlink once, then never again. */
			g_autofree char *real = realpath(name, NULL);
			scan_dir(run, atfd, real ? real : name, path, rel, depth);
		} else {
			scan_dir(run, atfd, name, path, rel, depth);
		}
	} else if (S_ISREG(st.st_mode)) {
		if (flags == 0) {
			g_autofree char *real = realpath(name, NULL);
			scan_file(run, atfd, real ? real : name, path, rel);
		} else {
			scan_file(run, atfd, name, path, rel);
		}
	}
	/* symlinks, fifos, sockets, devices: not content we should read */
}

/* PATH relative to the project directory PROJECT_REAL ("" for the project
 * itself), or NULL when it lies outside. */
static char *relative_to(const char *project_real, const char *path)
{
	g_autofree char *real = realpath(path, NULL);
	if (!project_real || !real)
		return NULL;
	size_t n = strlen(project_real);
	if (strcmp(project_real, "/") == 0)
		return g_strdup(real + 1);
	if (strncmp(real, project_real, n) != 0 || (real[n] != '/' && real[n] != '\0'))
		return NULL;
	return g_strdup(real[n] ? real + n + 1 : "");
}

int vr_cmd_scan(int argc, char **argv)
{
	ScanRun run = {0};
	g_autofree char *project_opt = NULL;
	gboolean list_rules = FALSE, all = FALSE;
	const GOptionEntry entries[] = {
		{"json", 0, 0, G_OPTION_ARG_NONE, &run.json, NULL, NULL},
		{"project", 0, 0, G_OPTION_ARG_FILENAME, &project_opt, NULL, NULL},
		{"rules", 0, 0, G_OPTION_ARG_NONE, &list_rules, NULL, NULL},
		{"all", 0, 0, G_OPTION_ARG_NONE, &all, NULL, NULL},
		{NULL},
	};
	const VrCliOptions o = {"scan", entries, TRUE, NULL};
	int status;
	if (!vr_cli_options_parse(&o, usage, &argc, &argv, &status))
		return status;
	const char *project = project_opt ? project_opt : ".";
	if (list_rules) {
		size_t n;
		const VrScanRule *rules = vr_scan_rules(&n);
		for (size_t i = 0; i < n; i++)
			printf("%-26s %s\n", rules[i].id, rules[i].description);
		return VR_EXIT_OK;
	}
	/* The user's config (and the project's, which cannot loosen) decides
	 * which findings are dropped, as in the view. */
	g_autoptr(VrConfig) config = vr_config_new();
	g_autoptr(GError) error = NULL;
	if (!vr_config_load_all(config, project, NULL, &error)) {
		vr_error("scan: %s", error->message);
		return VR_EXIT_ERROR;
	}
	run.filter = all ? NULL : config->scan_filter;
	g_autofree char *project_real = realpath(project, NULL);
	if (argc == 1)
		scan_at(&run, AT_FDCWD, project, project, "", 0, 0);
	for (int i = 1; i < argc; i++) {
		g_autofree char *rel = relative_to(project_real, argv[i]);
		scan_at(&run, AT_FDCWD, argv[i], argv[i], rel, 0, 0);
	}
	if (run.dropped)
		vr_notice("scan: %" G_GUINT64_FORMAT " finding%s not shown: rule turned off or allow-listed in your "
		          "config ([view] scan-disable, scan-allow); --all shows them",
		          run.dropped, run.dropped == 1 ? "" : "s");
	if (fflush(stdout) != 0) {
		vr_error("scan: writing the report: %s", g_strerror(errno));
		return VR_EXIT_ERROR;
	}
	if (run.error)
		return VR_EXIT_ERROR;
	return run.findings ? 1 : VR_EXIT_OK;
}
