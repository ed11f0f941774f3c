/* launcher/git-history.c — hidden files in the project's git history (see
 * git-history.h). Two git processes list every path the index tracks and
 * every path any commit reachable from a ref or a reflog touched; each
 * distinct path is decided by the policy, and the hidden or redacted ones
 * are reported. The processes write into memfds, so nothing has to read
 * their output while the supervisor goes on setting up the run. */
#include "git-history.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "common/fd-util.h"
#include "log.h"
#include "state-dir.h"

#define CACHE_NAME "git-history"
#define CACHE_MAGIC "vault-run git-history v1"
#define LIST_MAX 5

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
	gboolean cached_slow;
};

/* The fds of the check in progress, for vr_git_history_close_inherited(). */
static VrGitHistory *current;

void vr_git_history_close_inherited(void)
{
	if (!current)
		return;
	for (int i = 0; i < N_GIT; i++)
		if (current->out[i] >= 0)
			close(current->out[i]);
	if (current->state_dirfd >= 0)
		close(current->state_dirfd);
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
	if (!S_ISREG(st.st_mode) || st.st_size > 4096)
		return NULL;
	g_autofree char *text = NULL;
	if (!g_file_get_contents(dotgit, &text, NULL, NULL) || !g_str_has_prefix(text, "gitdir: "))
		return NULL;
	char *dir = g_strstrip(text + 8);
	return g_path_is_absolute(dir) ? g_strdup(dir) : g_build_filename(project, dir, NULL);
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

/* ---- the cache file: magic, key, "ok"/"slow", then NUL-terminated paths ---- */

static GPtrArray *cache_read(int dirfd, const char *key, gboolean *ret_slow)
{
	int fd = openat(dirfd, CACHE_NAME, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
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
	close(fd);
	if (!data)
		return NULL;
	g_autofree char *own = data;
	g_autofree char *want = g_strdup_printf(CACHE_MAGIC "\n%s\n", key);
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

static void cache_write(int dirfd, const char *key, const GPtrArray *paths, gboolean slow)
{
	g_autoptr(GString) s = g_string_new(NULL);
	g_string_append_printf(s, CACHE_MAGIC "\n%s\n%s\n", key, slow ? "slow" : "ok");
	for (guint i = 0; i < paths->len; i++)
		g_string_append_len(s, paths->pdata[i], (gssize)strlen(paths->pdata[i]) + 1);
	/* A temporary name and a rename: two runs starting at once never read
	 * half a file. */
	g_autofree char *tmp = g_strdup_printf(CACHE_NAME ".%d.tmp", (int)getpid());
	int fd = openat(dirfd, tmp, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0)
		return;
	gboolean ok = vr_write_all(fd, s->str, s->len) == 0;
	ok &= close(fd) == 0;
	if (!ok || renameat(dirfd, tmp, dirfd, CACHE_NAME) < 0)
		unlinkat(dirfd, tmp, 0);
}

/* ---- running git ---------------------------------------------------------------- */

static pid_t spawn_git(const char *git, const char *gitdir, const char *project, const char *const *args,
                       int out)
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

	pid_t parent = getpid();
	pid_t pid = fork();
	if (pid != 0)
		return pid;
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (getppid() != parent)
		_exit(127);
	sigset_t none;
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	int devnull = open("/dev/null", O_RDWR | O_CLOEXEC);
	if (devnull < 0 || dup2(devnull, 0) < 0 || dup2(out, 1) < 0 || dup2(devnull, 2) < 0)
		_exit(127);
	vr_close_from(3);
	execve(git, (char **)argv->pdata, (char **)envp->pdata);
	_exit(127);
}

VrGitHistory *vr_git_history_start(const char *project, const VrPolicy *policy, const char *policy_hash,
                                   gboolean cache)
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
	h->started = g_get_monotonic_time();
	for (int i = 0; i < N_GIT; i++)
		h->pid[i] = -1, h->out[i] = -1;
	if (cache && policy_hash && vr_state_open_project_dir(project, true, &h->state_dirfd) == 0) {
		h->key = cache_key(project, gitdir, policy_hash);
		h->cached = cache_read(h->state_dirfd, h->key, &h->cached_slow);
		if (h->cached) {
			close(h->state_dirfd); /* nothing to write back */
			h->state_dirfd = -1;
			h->start_cost = g_get_monotonic_time() - h->started;
			return h;
		}
	}
	static const char *const index_args[] = {"ls-files", "-z", "--cached", NULL};
	static const char *const log_args[] = {"log", "--all", "--reflog", "--format=", "--name-only", "-z",
	                                       "--no-renames", "--no-ext-diff", "--no-textconv",
	                                       "--no-show-signature", NULL};
	const char *const *args[N_GIT] = {index_args, log_args};
	for (int i = 0; i < N_GIT; i++) {
		h->out[i] = (int)syscall(SYS_memfd_create, "vault-run-git", MFD_CLOEXEC);
		if (h->out[i] >= 0)
			h->pid[i] = spawn_git(git, gitdir, project, args[i], h->out[i]);
	}
	h->start_cost = g_get_monotonic_time() - h->started;
	current = h;
	return h;
}

/* Waits for pid until deadline (monotonic µs); FALSE on timeout. *ret_ok:
 * git exited 0. */
static gboolean wait_until(pid_t pid, gint64 deadline, gboolean *ret_ok)
{
	int pfd = (int)syscall(SYS_pidfd_open, pid, 0);
	for (;;) {
		int st;
		pid_t r = waitpid(pid, &st, WNOHANG);
		if (r == pid || (r < 0 && errno != EINTR)) {
			if (pfd >= 0)
				close(pfd);
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
	if (pfd >= 0)
		close(pfd);
	kill(pid, SIGKILL);
	while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
		;
	*ret_ok = FALSE;
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

static gint cmp_paths(gconstpointer a, gconstpointer b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

GPtrArray *vr_git_history_finish(VrGitHistory *h, int timeout_ms, int *ret_slow)
{
	GPtrArray *found = g_ptr_array_new_with_free_func(g_free);
	if (ret_slow)
		*ret_slow = 0;
	if (!h)
		return found;
	gint64 wait_from = g_get_monotonic_time();
	gboolean from_cache = h->cached != NULL;
	if (h->cached) {
		g_ptr_array_extend_and_steal(found, g_steal_pointer(&h->cached));
		if (ret_slow)
			*ret_slow = h->cached_slow ? 2 : 0;
	} else {
		gint64 deadline = timeout_ms < 0 ? 0 : h->started + (gint64)timeout_ms * 1000;
		gboolean all_ok = TRUE, slow = FALSE;
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
			cache_write(h->state_dirfd, h->key, found, slow);
	}
	/* -vv: what the check cost the start-up (the wait) and in all. */
	gint64 now = g_get_monotonic_time();
	vr_debug("git history: %u hidden path%s, %s; %.2f ms to start, %.2f ms waited for, %.1f ms in all",
	         found->len, found->len == 1 ? "" : "s", from_cache ? "cached verdict" : "git ran",
	         (double)h->start_cost / 1000, (double)(now - wait_from) / 1000, (double)(now - h->started) / 1000);
	for (int i = 0; i < N_GIT; i++)
		if (h->out[i] >= 0)
			close(h->out[i]);
	if (h->state_dirfd >= 0)
		close(h->state_dirfd);
	if (current == h)
		current = NULL;
	g_free(h->key);
	if (h->cached)
		g_ptr_array_unref(h->cached);
	g_free(h);
	return found;
}

char *vr_git_history_message(const GPtrArray *paths)
{
	g_autoptr(GString) s = g_string_new(NULL);
	g_string_append_printf(s, "the project's git repository holds %u file%s the view hides, readable inside "
	                          "with `git show` or `git log -p`: ",
	                       paths->len, paths->len == 1 ? "" : "s");
	for (guint i = 0; i < paths->len && i < LIST_MAX; i++) {
		/* A file name must not forge terminal output. */
		g_autofree char *q = g_strescape(paths->pdata[i], NULL);
		g_string_append_printf(s, "%s%s", i ? ", " : "", q);
	}
	if (paths->len > LIST_MAX)
		g_string_append_printf(s, " and %u more", paths->len - LIST_MAX);
	/* The example names the first path only when it is plain text: quoting
	 * does not stop control characters from reaching the terminal. */
	const char *example = paths->len ? (const char *)paths->pdata[0] : ".env";
	for (const char *p = example; *p; p++)
		if ((unsigned char)*p < 0x20 || *p == 0x7f) {
			example = "PATH";
			break;
		}
	g_autofree char *first = g_shell_quote(example);
	g_string_append_printf(s, "; fix: rewrite the history (e.g. `git filter-repo --invert-paths --path %s`) "
	                          "and rotate those secrets, or run with --hide .git",
	                       first);
	return g_string_free(g_steal_pointer(&s), FALSE);
}
