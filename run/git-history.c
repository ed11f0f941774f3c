/* run/git-history.c — hidden files in the project's git history (see
 * run/git-history.h). Two git processes list every path the index tracks and
 * every path any commit reachable from a ref or a reflog touched; each
 * distinct path is decided by the policy, and the hidden or redacted ones
 * are reported. The processes write into memfds, so nothing has to read
 * their output while the supervisor goes on setting up the run.
 *
 * A third child, a fork of the supervisor, looks at the content of what is
 * tracked (HEAD and the index): `git ls-tree`/`ls-files` name the blobs of
 * the files the view shows, `git cat-file --batch` gives those the blob
 * cache does not know yet, and the scanner says which rules hit each. The
 * view masks those files, but `git show HEAD:file` prints them in clear. */
#include "run/git-history.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "common/cleanup.h"
#include "common/fd-util.h"
#include "common/gitfile.h"
#include "common/log.h"
#include "common/proc.h"
#include "policy/scan.h"
#include "audit/state-dir.h"

#define CACHE_NAME "git-history"
#define CACHE_MAGIC "vault-run git-history v1"
#define LIST_MAX 5
/* The content check's verdict (the tracked paths the scanner masks), keyed
 * by the repository's state, the policy and the scan settings; written by
 * the content child itself when it is done, so a run that started COMMAND
 * before it finished still leaves it to the next. Same format as
 * CACHE_NAME. */
#define CONTENT_NAME "git-content"
#define CONTENT_MAGIC "vault-run git-content v1"
/* The scanner's verdict per blob: "<oid> <rules hit, hex>\n" after a header
 * naming the scanner revision and rule table. Appended to as blobs are
 * scanned; rewritten from scratch past BLOBS_MAX. */
#define BLOBS_NAME "git-blobs"
#define BLOBS_MAGIC "vault-run git-blobs v1"
#define BLOBS_MAX (8 << 20)
/* A content check still running once the run has started goes on in the
 * background this long at most (it dies with the supervisor anyway). */
#define CONTENT_BUDGET_US (60 * G_USEC_PER_SEC)

enum { GIT_INDEX, GIT_LOG, N_GIT };

struct VrGitHistory {
	const VrPolicy *policy;
	char *key;         /* cache key (hex), NULL: no cache */
	int state_dirfd;   /* the project's state directory, or -1 */
	pid_t pid[N_GIT];  /* -1 when not running */
	int out[N_GIT];    /* memfd with the child's stdout, or -1 */
	gint64 started;    /* monotonic µs */
	gint64 start_cost; /* µs spent in vr_git_history_start() */
	GPtrArray *cached; /* the verdict from the cache: no children */
	GPtrArray *cached_masked;
	gboolean cached_slow;
	/* The content check (a fork of ours): */
	VrGitScan scan;
	gboolean scan_on;
	gboolean blob_cache;   /* keep per-blob verdicts in state_dirfd */
	char *content_key;     /* the content verdict's cache key, NULL: no cache */
	pid_t content_pid;     /* -1 when not running */
	int content_out;       /* memfd with the masked paths, NUL-separated, or -1 */
};

/* The fds of the check in progress, for vr_git_history_close_inherited(). */
static VrGitHistory *current;

void vr_git_history_close_inherited(void)
{
	if (!current)
		return;
	for (int i = 0; i < N_GIT; i++)
		vr_clear_fd(&current->out[i]);
	vr_clear_fd(&current->content_out);
	vr_clear_fd(&current->state_dirfd);
	current = NULL;
}

/* ---- where the repository is ------------------------------------------------ */

/* project/.git as a directory, or what its gitfile names; NULL otherwise. */
static char *find_git_dir(const char *project, gboolean *ret_is_file)
{
	g_autofree char *dotgit = g_build_filename(project, ".git", NULL);
	struct stat st;
	if (lstat(dotgit, &st) < 0)
		return NULL;
	*ret_is_file = S_ISREG(st.st_mode);
	if (S_ISDIR(st.st_mode))
		return g_steal_pointer(&dotgit);
	if (!S_ISREG(st.st_mode) || st.st_size > VR_GITFILE_MAX)
		return NULL;
	g_autofree char *text = NULL;
	gsize len = 0;
	if (!g_file_get_contents(dotgit, &text, &len, NULL))
		return NULL;
	/* Only what the run itself would open (run/worktree.c): a .git file
	 * an agent wrote must not send even this host-side git elsewhere. */
	vr_cleanup_fd int root = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (root < 0)
		return NULL;
	g_autofree char *dir = realpath(project, NULL);
	VrGitfileCheck c = {.root_fd = root, .root = "/", .dir = dir ? dir : project, .when = VR_GITFILE_AT_START};
	VrGitfileVerdict v;
	int r = dir ? vr_gitfile_check(&c, text, len, &v) : -ENOENT;
	return r == 0 ? g_strdup(v.gitdir) : NULL;
}

static char *common_dir(const char *gitdir)
{
	g_autofree char *file = g_build_filename(gitdir, "commondir", NULL);
	g_autofree char *text = NULL;
	if (!g_file_get_contents(file, &text, NULL, NULL))
		return g_strdup(gitdir);
	g_strstrip(text);
	return g_path_is_absolute(text) ? g_strdup(text) : g_build_filename(gitdir, text, NULL);
}

/* ---- the cache key: what git's answer depends on ------------------------------ */

static void key_stat(GChecksum *sum, const char *path)
{
	struct stat st;
	g_autofree char *line = lstat(path, &st) < 0
		? g_strdup_printf("%s -\n", path)
		: g_strdup_printf("%s %llu %lld %lld.%09ld\n", path, (unsigned long long)st.st_ino,
		                  (long long)st.st_size, (long long)st.st_mtim.tv_sec, st.st_mtim.tv_nsec);
	g_checksum_update(sum, (const guchar *)line, -1);
}

static gint cmp_names(gconstpointer a, gconstpointer b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Every file below dir (loose refs, reflogs), in name order. */
static void key_walk(GChecksum *sum, const char *dir, int depth)
{
	g_autoptr(GDir) d = depth < 32 ? g_dir_open(dir, 0, NULL) : NULL;
	if (!d)
		return;
	g_autoptr(GPtrArray) names = g_ptr_array_new_with_free_func(g_free);
	const char *name;
	while ((name = g_dir_read_name(d)))
		g_ptr_array_add(names, g_strdup(name));
	g_ptr_array_sort(names, cmp_names);
	for (guint i = 0; i < names->len; i++) {
		g_autofree char *path = g_build_filename(dir, names->pdata[i], NULL);
		struct stat st;
		if (lstat(path, &st) == 0 && S_ISDIR(st.st_mode))
			key_walk(sum, path, depth + 1);
		else
			key_stat(sum, path);
	}
}

/* The scanner's revision and rule table: what a blob's verdict means. */
static void key_scanner(GChecksum *sum)
{
	size_t n;
	const VrScanRule *rules = vr_scan_rules(&n);
	g_autofree char *rev = g_strdup_printf("scan %d\n", VR_SCAN_REVISION);
	g_checksum_update(sum, (const guchar *)rev, -1);
	for (size_t i = 0; i < n; i++) {
		g_checksum_update(sum, (const guchar *)rules[i].id, -1);
		g_checksum_update(sum, (const guchar *)"\n", 1);
	}
}

/* What the view masks: the content verdict depends on it. */
static void key_scan(GChecksum *sum, const VrGitHistory *h)
{
	g_autofree char *head = g_strdup_printf("scan-on %d %" G_GUINT64_FORMAT "\n", h->scan_on,
	                                        h->scan.max_size);
	g_checksum_update(sum, (const guchar *)head, -1);
	if (!h->scan_on)
		return;
	key_scanner(sum);
	const VrScanFilter *f = h->scan.filter;
	for (guint i = 0; f && i < vr_scan_filter_n_disabled(f); i++) {
		g_autofree char *line = g_strdup_printf("off %s\n", vr_scan_filter_disabled(f, i)->rule->id);
		g_checksum_update(sum, (const guchar *)line, -1);
	}
	for (guint i = 0; f && i < vr_scan_filter_n_allowed(f); i++) {
		const VrScanAllow *a = vr_scan_filter_allowed(f, i);
		g_autofree char *line = g_strdup_printf("allow %s:%s\n", a->pattern, a->rule ? a->rule->id : "*");
		g_checksum_update(sum, (const guchar *)line, -1);
	}
}

static char *cache_key(const char *project, const char *gitdir, const char *policy_hash)
{
	g_autoptr(GChecksum) sum = g_checksum_new(G_CHECKSUM_SHA256);
	g_autofree char *head = g_strdup_printf(CACHE_MAGIC "\n%s\n%s\n", project, policy_hash);
	g_checksum_update(sum, (const guchar *)head, -1);
	g_autofree char *common = common_dir(gitdir);
	const char *own[] = {"HEAD", "index", "logs/HEAD", "refs", NULL};
	const char *shared[] = {"packed-refs", "refs", "logs/refs", NULL};
	for (int i = 0; own[i]; i++) {
		g_autofree char *p = g_build_filename(gitdir, own[i], NULL);
		if (strcmp(own[i], "refs") == 0) {
			if (strcmp(common, gitdir) != 0)
				key_walk(sum, p, 0);
		} else {
			key_stat(sum, p);
		}
	}
	for (int i = 0; shared[i]; i++) {
		g_autofree char *p = g_build_filename(common, shared[i], NULL);
		if (strcmp(shared[i], "packed-refs") == 0)
			key_stat(sum, p);
		else
			key_walk(sum, p, 0);
	}
	return g_strdup(g_checksum_get_string(sum));
}

/* The content verdict's key: the repository's state (KEY) and what the
 * view masks. */
static char *content_key(const VrGitHistory *h, const char *key)
{
	g_autoptr(GChecksum) sum = g_checksum_new(G_CHECKSUM_SHA256);
	g_checksum_update(sum, (const guchar *)key, -1);
	key_scan(sum, h);
	return g_strdup(g_checksum_get_string(sum));
}

/* ---- the cache files: magic, key, "ok"/"slow", then NUL-terminated paths ---- */

static GPtrArray *cache_read(int dirfd, const char *name, const char *magic, const char *key, gboolean *ret_slow)
{
	vr_cleanup_fd int fd = openat(dirfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0)
		return NULL;
	struct stat st;
	char *data = NULL;
	if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size < (16 << 20)) {
		data = g_malloc((size_t)st.st_size + 1);
		if (vr_read_all(fd, data, (size_t)st.st_size) != st.st_size)
			g_clear_pointer(&data, g_free);
		else
			data[st.st_size] = '\0';
	}
	vr_clear_fd(&fd);
	if (!data)
		return NULL;
	g_autofree char *own = data;
	g_autofree char *want = g_strdup_printf("%s\n%s\n", magic, key);
	size_t n = strlen(want);
	if ((size_t)st.st_size < n + 3 || memcmp(data, want, n) != 0)
		return NULL;
	const char *p = data + n, *end = data + st.st_size;
	if (strncmp(p, "ok\n", 3) != 0 && strncmp(p, "slow\n", 5) != 0)
		return NULL;
	*ret_slow = p[0] == 's';
	p = (const char *)memchr(p, '\n', (size_t)(end - p)) + 1;
	GPtrArray *paths = g_ptr_array_new_with_free_func(g_free);
	while (p < end) {
		size_t len = strnlen(p, (size_t)(end - p));
		if (len)
			g_ptr_array_add(paths, g_strndup(p, len));
		p += len + 1;
	}
	return paths;
}

static void cache_write(int dirfd, const char *name, const char *magic, const char *key, const GPtrArray *paths,
                        gboolean slow)
{
	g_autoptr(GString) s = g_string_new(NULL);
	g_string_append_printf(s, "%s\n%s\n%s\n", magic, key, slow ? "slow" : "ok");
	for (guint i = 0; i < paths->len; i++)
		g_string_append_len(s, paths->pdata[i], (gssize)strlen(paths->pdata[i]) + 1);
	/* A temporary name and a rename: two runs starting at once never read
	 * half a file. */
	g_autofree char *tmp = g_strdup_printf("%s.%d.tmp", name, (int)getpid());
	int fd = openat(dirfd, tmp, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0)
		return;
	gboolean ok = vr_write_all(fd, s->str, s->len) == 0;
	ok &= close(fd) == 0;
	if (!ok || renameat(dirfd, tmp, dirfd, name) < 0)
		unlinkat(dirfd, tmp, 0);
}

/* ---- running git ---------------------------------------------------------------- */

/* git ARGS with stdin IN (-1: /dev/null) and stdout OUT. */
static pid_t spawn_git(const char *git, const char *gitdir, const char *project, const char *const *args,
                       int in, int out)
{
	/* Configuration that could make git run a program is overridden on
	 * the command line (which beats the repository's own config). */
	static const char *const safe[] = {
		"-c", "core.fsmonitor=false", "-c", "core.hooksPath=/dev/null",
		"-c", "core.untrackedCache=false", "-c", "log.showSignature=false",
		"-c", "protocol.allow=never", "--no-pager", "--no-optional-locks",
	};
	g_autoptr(GPtrArray) argv = g_ptr_array_new_with_free_func(g_free);
	g_ptr_array_add(argv, g_strdup(git));
	for (gsize i = 0; i < G_N_ELEMENTS(safe); i++)
		g_ptr_array_add(argv, g_strdup(safe[i]));
	g_ptr_array_add(argv, g_strconcat("--git-dir=", gitdir, NULL));
	g_ptr_array_add(argv, g_strconcat("--work-tree=", project, NULL));
	for (const char *const *a = args; *a; a++)
		g_ptr_array_add(argv, g_strdup(*a));
	g_ptr_array_add(argv, NULL);

	/* A minimal environment: none of the caller's GIT_* (GIT_DIR,
	 * GIT_EXTERNAL_DIFF, GIT_TRACE…) and no pager, prompt or system config. */
	g_autoptr(GPtrArray) envp = g_ptr_array_new_with_free_func(g_free);
	const char *pass[] = {"HOME", "XDG_CONFIG_HOME", NULL};
	for (int i = 0; pass[i]; i++)
		if (g_getenv(pass[i]))
			g_ptr_array_add(envp, g_strconcat(pass[i], "=", g_getenv(pass[i]), NULL));
	const char *fixed[] = {"PATH=/usr/bin:/bin", "LC_ALL=C", "GIT_CONFIG_NOSYSTEM=1",
	                       "GIT_TERMINAL_PROMPT=0", "GIT_OPTIONAL_LOCKS=0", "GIT_NO_REPLACE_OBJECTS=1",
	                       "GIT_PAGER=cat", "PAGER=cat", "GIT_ASKPASS=/bin/false", "SSH_ASKPASS=/bin/false",
	                       NULL};
	for (int i = 0; fixed[i]; i++)
		g_ptr_array_add(envp, g_strdup(fixed[i]));
	g_ptr_array_add(envp, NULL);

	pid_t pid = vr_fork_helper(SIGKILL, 127);
	if (pid != 0)
		return pid;
	int devnull = open("/dev/null", O_RDWR | O_CLOEXEC);
	if (devnull < 0 || dup2(in >= 0 ? in : devnull, 0) < 0 || dup2(out, 1) < 0 || dup2(devnull, 2) < 0)
		_exit(127);
	vr_close_from(3);
	execve(git, (char **)argv->pdata, (char **)envp->pdata);
	_exit(127);
}

/* ---- the content check: tracked files the scanner masks ----------------------- */

static gint cmp_paths(gconstpointer a, gconstpointer b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static gboolean wait_until(pid_t pid, gint64 deadline, gboolean *ret_ok);

/* Runs each git ARGS[i] into a new memfd, all at once, and waits for them
 * (until deadline): ret[i] is the memfd, or -1 when that git failed (no
 * HEAD yet, say). */
static void git_outputs(const char *git, const char *gitdir, const char *project, const char *const *const *args,
                        int n, gint64 deadline, int *ret)
{
	pid_t pid[4];
	for (int i = 0; i < n; i++) {
		ret[i] = (int)syscall(SYS_memfd_create, "vault-run-git", MFD_CLOEXEC);
		pid[i] = ret[i] < 0 ? -1 : spawn_git(git, gitdir, project, args[i], -1, ret[i]);
	}
	for (int i = 0; i < n; i++) {
		gboolean ok = FALSE;
		if (pid[i] < 0 || !wait_until(pid[i], deadline, &ok) || !ok) {
			vr_clear_fd(&ret[i]);
		}
	}
}

/* Calls fn on each NUL-terminated record of fd. */
static void each_record(int fd, void (*fn)(const char *rec, size_t len, gpointer data), gpointer data)
{
	struct stat st;
	if (fd < 0 || fstat(fd, &st) < 0 || st.st_size == 0)
		return;
	char *map = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
	if (map == MAP_FAILED)
		return;
	for (const char *p = map, *end = map + st.st_size; p < end;) {
		const char *nul = memchr(p, '\0', (size_t)(end - p));
		size_t len = nul ? (size_t)(nul - p) : (size_t)(end - p);
		if (len)
			fn(p, len, data);
		p += len + 1;
	}
	munmap(map, (size_t)st.st_size);
}

typedef struct {
	const VrGitHistory *h;
	GHashTable *pairs;  /* "oid path" strings (owned by tracked): each tracked version once */
	GPtrArray *tracked; /* the same, in order: oid, NUL, path */
	GHashTable *oids;   /* oid → nothing: the blobs to know */
} Tracked;

static gboolean is_oid(const char *s, size_t len)
{
	if (len != 40 && len != 64)
		return FALSE;
	for (size_t i = 0; i < len; i++)
		if (!g_ascii_isxdigit(s[i]))
			return FALSE;
	return TRUE;
}

/* One record of `ls-tree -r -l -z` ("MODE blob OID SIZE\tPATH", SIZE padded)
 * or `ls-files -s -z` ("MODE OID STAGE\tPATH"): a regular file the view
 * shows (hidden and redacted ones are reported by name already) and the
 * scanner would read. */
static void add_tracked(const char *rec, size_t len, gpointer data, gboolean tree)
{
	Tracked *t = data;
	const char *tab = memchr(rec, '\t', len);
	if (!tab || (strncmp(rec, "100644 ", 7) != 0 && strncmp(rec, "100755 ", 7) != 0))
		return;
	g_autofree char *meta = g_strndup(rec + 7, (size_t)(tab - rec - 7));
	g_auto(GStrv) f = g_strsplit_set(meta, " ", -1);
	char *w[3] = {NULL, NULL, NULL};
	int n = 0;
	for (char **p = f; *p && n < 3; p++)
		if (**p)
			w[n++] = *p;
	const char *oid = tree ? w[1] : w[0];
	if (n < (tree ? 3 : 2) || (tree && strcmp(w[0], "blob") != 0) || !is_oid(oid, strlen(oid)))
		return;
	if (tree && g_ascii_strtoull(w[2], NULL, 10) > t->h->scan.max_size)
		return;
	g_autofree char *path = g_strndup(tab + 1, len - (size_t)(tab + 1 - rec));
	if (vr_policy_decide(t->h->policy, path, FALSE).cls > VR_CLASS_READONLY)
		return;
	char *pair = g_strconcat(oid, " ", path, NULL);
	if (g_hash_table_contains(t->pairs, pair)) {
		g_free(pair);
		return;
	}
	g_ptr_array_add(t->tracked, pair); /* owns it; pairs only points */
	g_hash_table_add(t->pairs, pair);
	if (!g_hash_table_contains(t->oids, oid))
		g_hash_table_add(t->oids, g_strdup(oid));
}

static void add_from_tree(const char *rec, size_t len, gpointer data)
{
	add_tracked(rec, len, data, TRUE);
}

static void add_from_index(const char *rec, size_t len, gpointer data)
{
	add_tracked(rec, len, data, FALSE);
}

/* The blob cache: oid → rules hit + 1 (guint), from the file when its
 * header is this scanner's. *ret_fd: open for appending (the file made
 * afresh when missing, stale or too big), or -1. */
static GHashTable *blobs_load(int dirfd, int *ret_fd)
{
	GHashTable *v = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
	*ret_fd = -1;
	if (dirfd < 0)
		return v;
	g_autoptr(GChecksum) sum = g_checksum_new(G_CHECKSUM_SHA256);
	key_scanner(sum);
	g_autofree char *header = g_strdup_printf(BLOBS_MAGIC " %s\n", g_checksum_get_string(sum));
	int fd = openat(dirfd, BLOBS_NAME, O_RDWR | O_APPEND | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	struct stat st;
	g_autofree char *data = NULL;
	if (fd >= 0 && fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size <= BLOBS_MAX) {
		data = g_malloc((size_t)st.st_size + 1);
		if (pread(fd, data, (size_t)st.st_size, 0) != st.st_size ||
		    (data[st.st_size] = '\0', !g_str_has_prefix(data, header)))
			g_clear_pointer(&data, g_free);
	}
	if (!data) {
		/* A fresh file, renamed into place: no reader sees half a header. */
		if (fd >= 0)
			close(fd);
		g_autofree char *tmp = g_strdup_printf(BLOBS_NAME ".%d.tmp", (int)getpid());
		fd = openat(dirfd, tmp, O_RDWR | O_CREAT | O_TRUNC | O_APPEND | O_NOFOLLOW | O_CLOEXEC, 0600);
		if (fd >= 0 && (vr_write_all(fd, header, strlen(header)) < 0 ||
		                renameat(dirfd, tmp, dirfd, BLOBS_NAME) < 0)) {
			unlinkat(dirfd, tmp, 0);
			close(fd);
			fd = -1;
		}
		*ret_fd = fd;
		return v;
	}
	*ret_fd = fd;
	/* A torn last line (a run killed while appending) is not a record. */
	for (char *line = data + strlen(header), *nl; (nl = strchr(line, '\n')); line = nl + 1) {
		*nl = '\0';
		char *sp = strchr(line, ' ');
		guint64 mask;
		if (sp && is_oid(line, (size_t)(sp - line)) &&
		    g_ascii_string_to_unsigned(sp + 1, 16, 0, G_MAXUINT32 - 1, &mask, NULL))
			g_hash_table_replace(v, g_strndup(line, (size_t)(sp - line)), GUINT_TO_POINTER((guint)mask + 1));
	}
	return v;
}

/* Scans blob content and returns the rules that hit, one bit each. */
static guint scan_rules(const char *buf, size_t len)
{
	size_t n;
	const VrScanRule *rules = vr_scan_rules(&n);
	g_autoptr(GArray) hits = g_array_new(FALSE, FALSE, sizeof(VrScanHit));
	vr_scan_buffer(buf, len, hits);
	guint mask = 0;
	for (guint i = 0; i < hits->len; i++)
		mask |= 1u << (g_array_index(hits, VrScanHit, i).rule - rules);
	return mask;
}

/* Asks `git cat-file --batch` for every oid of need that verdicts lacks
 * and scans each, adding to verdicts and appending to the blob cache
 * (cache_fd, may be -1). FALSE when it had to stop (deadline, git failed). */
static gboolean scan_blobs(const char *git, const char *gitdir, const char *project, GHashTable *need,
                           GHashTable *verdicts, guint64 max_size, int cache_fd, gint64 deadline)
{
	int list = (int)syscall(SYS_memfd_create, "vault-run-oids", MFD_CLOEXEC);
	if (list < 0)
		return FALSE;
	g_autoptr(GString) s = g_string_new(NULL);
	GHashTableIter it;
	gpointer oid;
	g_hash_table_iter_init(&it, need);
	while (g_hash_table_iter_next(&it, &oid, NULL))
		if (!g_hash_table_contains(verdicts, oid))
			g_string_append_printf(s, "%s\n", (const char *)oid);
	if (s->len == 0) {
		close(list);
		return TRUE;
	}
	int fds[2];
	if (vr_write_all(list, s->str, s->len) < 0 || lseek(list, 0, SEEK_SET) < 0 || pipe2(fds, O_CLOEXEC) < 0) {
		close(list);
		return FALSE;
	}
	/* --batch alone: the raw blob, no textconv, no filter driver. */
	static const char *const args[] = {"cat-file", "--batch", NULL};
	pid_t pid = spawn_git(git, gitdir, project, args, list, fds[1]);
	close(list);
	close(fds[1]);
	FILE *in = fdopen(fds[0], "r");
	gboolean complete = in != NULL && pid > 0;
	g_string_truncate(s, 0);
	char *line = NULL;
	size_t cap = 0;
	ssize_t n;
	gint64 flushed = g_get_monotonic_time();
	while (complete && (n = getline(&line, &cap, in)) > 0) {
		/* "<oid> blob <size>" then the bytes and a newline; "<oid> missing" */
		g_auto(GStrv) w = g_strsplit(g_strchomp(line), " ", 3);
		if (g_strv_length(w) != 3 || !is_oid(w[0], strlen(w[0])))
			continue;
		guint64 size = g_ascii_strtoull(w[2], NULL, 10);
		if (size > max_size) {
			/* A staged file too big for the view to scan (ls-tree named
			 * no such blob): read past it, keep no verdict. */
			char skip[65536];
			guint64 left = size + 1;
			while (left && (n = (ssize_t)fread(skip, 1, MIN(left, sizeof skip), in)) > 0)
				left -= (guint64)n;
			complete = left == 0;
			continue;
		}
		g_autofree char *buf = g_try_malloc(size + 1);
		if (!buf || fread(buf, 1, size, in) != size || fgetc(in) != '\n') {
			complete = FALSE;
			break;
		}
		guint mask = scan_rules(buf, size);
		g_hash_table_replace(verdicts, g_strdup(w[0]), GUINT_TO_POINTER(mask + 1));
		g_string_append_printf(s, "%s %x\n", w[0], mask);
		/* Often: a short run kills us with it, and what is written is
		 * not scanned again by the next. */
		gint64 now = g_get_monotonic_time();
		if (s->len >= 4096 || now - flushed > 20000 || now > deadline) {
			if (cache_fd >= 0)
				vr_write_all(cache_fd, s->str, s->len);
			g_string_truncate(s, 0);
			flushed = now;
			complete = now <= deadline;
		}
	}
	free(line);
	if (cache_fd >= 0 && s->len)
		vr_write_all(cache_fd, s->str, s->len);
	if (in)
		fclose(in);
	else
		close(fds[0]);
	gboolean ok = FALSE;
	if (pid > 0)
		wait_until(pid, complete ? deadline : 0, &ok);
	return complete && ok;
}

/* The content child: writes to out the tracked paths whose content the
 * scanner masks (NUL-terminated, in tree order) and exits 0, or 2 when it
 * could not finish. */
static _Noreturn void content_main(VrGitHistory *h, const char *git, const char *gitdir, const char *project,
                                   int out)
{
	gint64 deadline = g_get_monotonic_time() + CONTENT_BUDGET_US;
	static const char *const tree_args[] = {"ls-tree", "-r", "-l", "-z", "--full-tree", "HEAD", NULL};
	static const char *const index_args[] = {"ls-files", "-s", "-z", NULL};
	Tracked t = {h, g_hash_table_new(g_str_hash, g_str_equal), g_ptr_array_new_with_free_func(g_free),
	             g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL)};
	const char *const *const args[] = {tree_args, index_args};
	int fd[2];
	git_outputs(git, gitdir, project, args, 2, deadline, fd);
	if (fd[1] < 0)
		_exit(2);
	each_record(fd[0], add_from_tree, &t); /* -1: no commit yet */
	each_record(fd[1], add_from_index, &t);
	for (int i = 0; i < 2; i++)
		vr_clear_fd(&fd[i]);
	int cache_fd = -1;
	GHashTable *verdicts = blobs_load(h->blob_cache ? h->state_dirfd : -1, &cache_fd);
	gboolean complete = scan_blobs(git, gitdir, project, t.oids, verdicts, h->scan.max_size, cache_fd, deadline);
	g_autoptr(GString) s = g_string_new(NULL);
	g_autoptr(GPtrArray) masked = g_ptr_array_new_with_free_func(g_free);
	g_autoptr(GHashTable) seen = g_hash_table_new(g_str_hash, g_str_equal);
	for (guint i = 0; i < t.tracked->len; i++) {
		const char *pair = t.tracked->pdata[i], *path = strchr(pair, ' ') + 1;
		g_autofree char *oid = g_strndup(pair, (size_t)(path - 1 - pair));
		guint v = GPOINTER_TO_UINT(g_hash_table_lookup(verdicts, oid));
		/* What the view would still mask there: the user's scan-disable
		 * and scan-allow drop rules per path. */
		if (v && ((v - 1) & ~(guint)vr_scan_filter_key(h->scan.filter, path)) && g_hash_table_add(seen, (char *)path))
			g_ptr_array_add(masked, g_strdup(path));
	}
	g_ptr_array_sort(masked, cmp_paths);
	for (guint i = 0; i < masked->len; i++)
		g_string_append_len(s, masked->pdata[i], (gssize)strlen(masked->pdata[i]) + 1);
	if (vr_write_all(out, s->str, s->len) < 0)
		_exit(2);
	if (complete && h->content_key)
		cache_write(h->state_dirfd, CONTENT_NAME, CONTENT_MAGIC, h->content_key, masked, FALSE);
	_exit(complete ? 0 : 2);
}

/* Forks the content child; its pid, or -1. */
static pid_t start_content(VrGitHistory *h, const char *git, const char *gitdir, const char *project)
{
	h->content_out = (int)syscall(SYS_memfd_create, "vault-run-git", MFD_CLOEXEC);
	if (h->content_out < 0)
		return -1;
	fflush(NULL);
	/* The supervisor blocks the signals it handles: git's children must
	 * not inherit that, and we want SIGTERM/SIGKILL to end us. */
	pid_t pid = vr_fork_helper(SIGKILL, 2);
	if (pid != 0)
		return pid;
	/* Nothing of the supervisor's but the output and the state directory:
	 * not the caller's stdout (its reader waits for EOF), not git's other
	 * output memfds, not what the run opened before. */
	int out = fcntl(h->content_out, F_DUPFD_CLOEXEC, 100);
	int dirfd = h->state_dirfd >= 0 ? fcntl(h->state_dirfd, F_DUPFD_CLOEXEC, 101) : -1;
	int devnull = open("/dev/null", O_RDWR | O_CLOEXEC);
	if (out < 0 || devnull < 0 || dup2(devnull, 0) < 0 || dup2(devnull, 1) < 0 || dup2(devnull, 2) < 0 ||
	    dup3(out, 3, O_CLOEXEC) < 0 || (dirfd >= 0 && dup3(dirfd, 4, O_CLOEXEC) < 0))
		_exit(2);
	vr_close_from(dirfd >= 0 ? 5 : 4);
	/* Scanning is the CPU-heavy part of the start: it must not slow the
	 * run's own setup, which goes on meanwhile. */
	if (setpriority(PRIO_PROCESS, 0, 10) < 0) {}
	h->content_out = 3;
	h->state_dirfd = dirfd >= 0 ? 4 : -1;
	for (int i = 0; i < N_GIT; i++)
		h->out[i] = -1;
	content_main(h, git, gitdir, project, h->content_out);
}

VrGitHistory *vr_git_history_start(const char *project, const VrPolicy *policy, const VrGitScan *scan,
                                   const char *policy_hash, gboolean cache)
{
	gboolean is_file = FALSE;
	g_autofree char *gitdir = find_git_dir(project, &is_file);
	if (!gitdir)
		return NULL;
	/* Hidden objects cannot be read: nothing to warn about. */
	if (!is_file && (vr_policy_decide(policy, ".git", TRUE).cls == VR_CLASS_HIDE ||
	                 vr_policy_decide(policy, ".git/objects", TRUE).cls == VR_CLASS_HIDE))
		return NULL;
	g_autofree char *git = g_find_program_in_path("git");
	if (!git)
		return NULL;

	VrGitHistory *h = g_new0(VrGitHistory, 1);
	h->policy = policy;
	h->state_dirfd = -1;
	h->content_pid = -1;
	h->content_out = -1;
	if (scan && scan->on) {
		h->scan = *scan;
		h->scan_on = TRUE;
	}
	h->started = g_get_monotonic_time();
	for (int i = 0; i < N_GIT; i++)
		h->pid[i] = -1, h->out[i] = -1;
	if (cache && policy_hash && vr_state_open_project_dir(project, true, &h->state_dirfd) == 0) {
		h->blob_cache = TRUE;
		h->key = cache_key(project, gitdir, policy_hash);
		h->cached = cache_read(h->state_dirfd, CACHE_NAME, CACHE_MAGIC, h->key, &h->cached_slow);
		if (h->scan_on) {
			gboolean unused;
			h->content_key = content_key(h, h->key);
			h->cached_masked = cache_read(h->state_dirfd, CONTENT_NAME, CONTENT_MAGIC, h->content_key, &unused);
		}
		if (h->cached && (h->cached_masked || !h->scan_on)) {
			vr_clear_fd(&h->state_dirfd); /* nothing to write back */
			h->start_cost = g_get_monotonic_time() - h->started;
			return h;
		}
	}
	/* The content check first: it has the longest way to go. */
	if (h->scan_on && !h->cached_masked)
		h->content_pid = start_content(h, git, gitdir, project);
	if (!h->cached) {
		static const char *const index_args[] = {"ls-files", "-z", "--cached", NULL};
		static const char *const log_args[] = {"log", "--all", "--reflog", "--format=", "--name-only", "-z",
		                                       "--no-renames", "--no-ext-diff", "--no-textconv",
		                                       "--no-show-signature", NULL};
		const char *const *args[N_GIT] = {index_args, log_args};
		for (int i = 0; i < N_GIT; i++) {
			h->out[i] = (int)syscall(SYS_memfd_create, "vault-run-git", MFD_CLOEXEC);
			if (h->out[i] >= 0)
				h->pid[i] = spawn_git(git, gitdir, project, args[i], -1, h->out[i]);
		}
	}
	h->start_cost = g_get_monotonic_time() - h->started;
	current = h;
	return h;
}

/* Waits for pid until deadline (monotonic µs); FALSE when it still runs
 * then. *ret_ok: git exited 0. */
static gboolean ended_by(pid_t pid, gint64 deadline, gboolean *ret_ok)
{
	vr_cleanup_fd int pfd = (int)syscall(SYS_pidfd_open, pid, 0);
	*ret_ok = FALSE;
	for (;;) {
		int st;
		pid_t r = waitpid(pid, &st, WNOHANG);
		if (r == pid || (r < 0 && errno != EINTR)) {
			*ret_ok = r == pid && WIFEXITED(st) && WEXITSTATUS(st) == 0;
			return TRUE;
		}
		gint64 left = deadline - g_get_monotonic_time();
		if (left <= 0)
			break;
		if (pfd >= 0) {
			struct pollfd p = {pfd, POLLIN, 0};
			poll(&p, 1, (int)MIN(left / 1000 + 1, 1000));
		} else {
			struct timespec ts = {0, 2 * 1000 * 1000};
			nanosleep(&ts, NULL);
		}
	}
	return FALSE;
}

/* The same, and a child still running at the deadline is killed and reaped. */
static gboolean wait_until(pid_t pid, gint64 deadline, gboolean *ret_ok)
{
	if (ended_by(pid, deadline, ret_ok))
		return TRUE;
	kill(pid, SIGKILL);
	while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
		;
	return FALSE;
}

/* Adds the hidden paths of a NUL-separated list to found. */
static void collect(const VrGitHistory *h, int fd, GHashTable *seen, GPtrArray *found)
{
	struct stat st;
	if (fstat(fd, &st) < 0 || st.st_size == 0)
		return;
	char *map = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
	if (map == MAP_FAILED)
		return;
	const char *p = map, *end = map + st.st_size;
	while (p < end) {
		const char *nul = memchr(p, '\0', (size_t)(end - p));
		size_t len = nul ? (size_t)(nul - p) : (size_t)(end - p);
		/* --name-only prints each path once per commit that touched
		 * it: decide each distinct path once. */
		if (len) {
			char *path = g_strndup(p, len);
			if (g_hash_table_add(seen, path) && vr_policy_decide(h->policy, path, FALSE).cls >= VR_CLASS_REDACT)
				g_ptr_array_add(found, g_strdup(path));
		}
		p += len + 1;
	}
	munmap(map, (size_t)st.st_size);
}

/* The content child's answer: TRUE when it finished (its paths, sorted,
 * in masked). Waited for until DEADLINE; a child still running then is
 * left to finish in the background (it keeps the blob verdicts for the
 * next run) unless KILL. */
static gboolean content_collect(VrGitHistory *h, gint64 deadline, gboolean kill_it, GPtrArray *masked)
{
	if (!h->scan_on)
		return TRUE; /* nothing to look for */
	gboolean ok = FALSE;
	if (h->content_pid < 0)
		return FALSE;
	if (kill_it ? !wait_until(h->content_pid, deadline, &ok) : !ended_by(h->content_pid, deadline, &ok)) {
		vr_debug("git history: the content check goes on in the background");
		return FALSE;
	}
	if (!ok)
		return FALSE;
	g_autoptr(GHashTable) seen = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
	struct stat st;
	if (fstat(h->content_out, &st) == 0 && st.st_size > 0) {
		char *map = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, h->content_out, 0);
		if (map != MAP_FAILED) {
			for (const char *p = map, *end = map + st.st_size; p < end;) {
				size_t len = strnlen(p, (size_t)(end - p));
				if (len && g_hash_table_add(seen, g_strndup(p, len)))
					g_ptr_array_add(masked, g_strndup(p, len));
				p += len + 1;
			}
			munmap(map, (size_t)st.st_size);
		}
	}
	g_ptr_array_sort(masked, cmp_paths);
	return TRUE;
}

GPtrArray *vr_git_history_finish(VrGitHistory *h, int timeout_ms, int *ret_slow, GPtrArray **ret_masked)
{
	GPtrArray *found = g_ptr_array_new_with_free_func(g_free);
	g_autoptr(GPtrArray) masked = g_ptr_array_new_with_free_func(g_free);
	if (ret_slow)
		*ret_slow = 0;
	if (ret_masked)
		*ret_masked = NULL;
	if (!h) {
		if (ret_masked)
			*ret_masked = g_steal_pointer(&masked);
		return found;
	}
	gint64 wait_from = g_get_monotonic_time();
	gint64 deadline = timeout_ms < 0 ? 0 : h->started + (gint64)timeout_ms * 1000;
	gboolean from_cache = h->cached != NULL, slow = FALSE, content_done = TRUE;
	if (h->cached) {
		g_ptr_array_extend_and_steal(found, g_steal_pointer(&h->cached));
		slow = h->cached_slow;
		if (ret_slow)
			*ret_slow = h->cached_slow ? 2 : 0;
	} else {
		gboolean all_ok = TRUE;
		for (int i = 0; i < N_GIT; i++) {
			gboolean ok = FALSE;
			if (h->pid[i] < 0)
				all_ok = FALSE;
			else if (!wait_until(h->pid[i], deadline, &ok))
				slow = TRUE;
			all_ok &= ok;
		}
		if (!slow) {
			g_autoptr(GHashTable) seen = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
			for (int i = 0; i < N_GIT; i++)
				if (h->out[i] >= 0)
					collect(h, h->out[i], seen, found);
			g_ptr_array_sort(found, cmp_paths);
		}
		if (ret_slow)
			*ret_slow = slow;
		/* Only a complete answer is kept: a git that failed (not a
		 * repository, "dubious ownership") is asked again next time, and
		 * an abandoned check (timeout_ms < 0) says nothing. */
		if (h->key && timeout_ms >= 0 && (slow || all_ok))
			cache_write(h->state_dirfd, CACHE_NAME, CACHE_MAGIC, h->key, found, slow);
	}
	if (h->cached_masked) {
		g_ptr_array_extend_and_steal(masked, g_steal_pointer(&h->cached_masked));
	} else {
		/* The content check may take no longer than the rest did (it
		 * must not delay COMMAND), except for doctor (no limit). Not
		 * done then, it finishes in the background and keeps its
		 * verdict for the next run. */
		gboolean patient = timeout_ms == G_MAXINT;
		content_done = content_collect(h, patient ? deadline : MIN(deadline, g_get_monotonic_time()),
		                               patient || timeout_ms < 0 || slow, masked);
	}
	/* -vv: what the check cost the start-up (the wait) and in all. */
	gint64 now = g_get_monotonic_time();
	vr_debug("git history: %u hidden path%s, %u masked by content%s, %s; %.2f ms to start, %.2f ms waited "
	         "for, %.1f ms in all", found->len, found->len == 1 ? "" : "s", masked->len,
	         content_done ? "" : " (content check still running)", from_cache ? "cached verdict" : "git ran",
	         (double)h->start_cost / 1000, (double)(now - wait_from) / 1000, (double)(now - h->started) / 1000);
	for (int i = 0; i < N_GIT; i++)
		vr_clear_fd(&h->out[i]);
	vr_clear_fd(&h->content_out);
	vr_clear_fd(&h->state_dirfd);
	if (current == h)
		current = NULL;
	g_free(h->key);
	g_free(h->content_key);
	if (h->cached)
		g_ptr_array_unref(h->cached);
	if (h->cached_masked)
		g_ptr_array_unref(h->cached_masked);
	g_free(h);
	if (ret_masked)
		*ret_masked = g_steal_pointer(&masked);
	return found;
}

/* A path as the warning shows it: a file name must not forge terminal
 * output. */
static void append_shown(GString *s, const char *path, const char *suffix, gboolean first)
{
	g_autofree char *q = g_strescape(path, NULL);
	g_string_append_printf(s, "%s%s%s", first ? "" : ", ", q, suffix);
}

char *vr_git_history_message(const GPtrArray *hidden, const GPtrArray *masked)
{
	guint nh = hidden->len, nm = masked ? masked->len : 0;
	g_autoptr(GString) s = g_string_new("the project's git repository holds ");
	if (nh)
		g_string_append_printf(s, "%u file%s the view hides", nh, nh == 1 ? "" : "s");
	if (nm)
		g_string_append_printf(s, "%s%u tracked file%s whose secrets %s masks but git keeps in clear",
		                       nh ? " and " : "", nm, nm == 1 ? "" : "s", nh ? "it" : "the view");
	g_string_append(s, ", readable inside with `git show` or `git log -p`: ");
	guint shown = 0;
	for (guint i = 0; i < nh && shown < LIST_MAX; i++, shown++)
		append_shown(s, hidden->pdata[i], "", shown == 0);
	for (guint i = 0; i < nm && shown < LIST_MAX; i++, shown++)
		append_shown(s, masked->pdata[i], " (masked)", shown == 0);
	if (nh + nm > LIST_MAX)
		g_string_append_printf(s, " and %u more", nh + nm - LIST_MAX);
	/* The example names the first path only when it is plain text: quoting
	 * does not stop control characters from reaching the terminal. */
	const char *example = nh ? (const char *)hidden->pdata[0] : nm ? (const char *)masked->pdata[0] : ".env";
	for (const char *p = example; *p; p++)
		if ((unsigned char)*p < 0x20 || *p == 0x7f) {
			example = "PATH";
			break;
		}
	g_autofree char *first = g_shell_quote(example);
	g_string_append_printf(s, "; fix: rewrite the history (e.g. `git filter-repo --invert-paths --path %s`%s) "
	                          "and rotate those secrets, or run with --hide .git",
	                       first, nm ? ", or `--replace-text` for a secret inside a file" : "");
	return g_string_free(g_steal_pointer(&s), FALSE);
}
