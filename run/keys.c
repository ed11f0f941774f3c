/* --key and --net read= on the run's side (see run/keys.h). */
#include "run/keys.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include "audit/state-dir.h"
#include "common/cleanup.h"
#include "common/fd-util.h"
#include "common/log.h"
#include "net/scrub.h"
#include "run/profile-keys.h"
#include "run/root-plan.h"

extern char **environ;

#define SECRET_FILE "key-secret"
#define HOST_BUNDLE "/etc/ssl/certs/ca-certificates.crt"

void vr_run_keys_clear(VrRunKeys *rk)
{
	vr_net_keys_free(rk->keys);
	rk->keys = NULL;
	g_clear_pointer(&rk->files, vr_run_keyfiles_free);
	if (rk->values_fd >= 0)
		close(rk->values_fd);
	if (rk->bundle_fd >= 0)
		close(rk->bundle_fd);
	if (rk->ca_fd >= 0)
		close(rk->ca_fd);
	rk->values_fd = rk->bundle_fd = rk->ca_fd = -1;
	vr_run_keys_certs_remove(rk);
	g_clear_pointer(&rk->optional, g_ptr_array_unref);
	g_clear_pointer(&rk->unbound, g_ptr_array_unref);
	g_clear_pointer(&rk->sentinel_only, g_ptr_array_unref);
	g_clear_pointer(&rk->profile, g_free);
}

static gboolean add_key_files(VrRunKeys *rk, VrNetKeys *keys, const VrRunPlan *plan, GError **error);

/* The declarations of SPECS into KEYS; each replaces a profile's key of
 * its name, which is then no longer optional. */
static gboolean add_specs(VrRunKeys *rk, VrNetKeys *keys, GPtrArray *specs, const char *what, GError **error)
{
	for (guint i = 0; specs && i < specs->len; i++) {
		g_autoptr(GError) e = NULL;
		VrNetKey *k = vr_net_key_parse(specs->pdata[i], &e);
		if (!k) {
			/* The parser names the declaration; what says where it came from. */
			g_set_error(error, VR_PLAN_ERROR, VR_PLAN_ERROR_BAD_VALUE, "%s%s",
			            g_str_has_prefix(what, "--") ? "" : "[sandbox] key: ", e->message);
			return FALSE;
		}
		guint j;
		if (g_ptr_array_find_with_equal_func(rk->optional, k->name, g_str_equal, &j))
			g_ptr_array_remove_index_fast(rk->optional, j);
		vr_net_keys_add(keys, k);
	}
	return TRUE;
}

/* Whether SPECS is "none" (injection off); "none" beside a declaration is
 * an error. */
static gboolean keys_none(GPtrArray *specs, gboolean config, gboolean *ret_none, GError **error)
{
	*ret_none = FALSE;
	for (guint i = 0; specs && i < specs->len; i++)
		*ret_none |= strcmp(g_strstrip((char *)specs->pdata[i]), "none") == 0;
	if (*ret_none && specs->len > 1) {
		g_set_error_literal(error, VR_PLAN_ERROR, VR_PLAN_ERROR_BAD_VALUE,
		                    config ? "[sandbox] key = none turns the keys off: it cannot stand beside a "
		                             "declaration in the same key list"
		                           : "--key none turns every key off: it cannot stand beside another --key");
		return FALSE;
	}
	return TRUE;
}

/* The names KEYS would have bound, now not bound: their values enter the
 * sandbox as they are (through the profile's env allow), with one warning. */
static void add_unbound(VrRunKeys *rk, const VrNetKeys *keys, gboolean optional_only, const char *why)
{
	if (!rk->unbound)
		rk->unbound = g_ptr_array_new_with_free_func(g_free);
	for (guint i = 0; i < vr_net_keys_count(keys); i++) {
		const char *name = vr_net_keys_get(keys, i)->name;
		if (!optional_only || g_ptr_array_find_with_equal_func(rk->optional, name, g_str_equal, NULL))
			g_ptr_array_add(rk->unbound, g_strdup(name));
	}
	rk->unbound_why = why;
}

/* With --key none: the names the profile and the config would have bound. */
static gboolean plan_keys_off(VrRunKeys *rk, VrRunPlan *plan, const VrConfig *config, gboolean cli_off,
                              gboolean config_off, GError **error)
{
	g_autoptr(VrNetKeys) off = vr_net_keys_new();
	if (!vr_run_profile_keys_add(off, rk->optional, plan, error))
		return FALSE;
	if (cli_off && !config_off && config && !add_specs(rk, off, config->keys, "[sandbox] key", error))
		return FALSE;
	g_ptr_array_set_size(rk->optional, 0);
	add_unbound(rk, off, FALSE,
	            cli_off ? "--key none turns injection off (without it the sandbox holds a sentinel and the proxy "
	                      "puts the value in)"
	                    : "[sandbox] key = none turns injection off (without it the sandbox holds a sentinel and "
	                      "the proxy puts the value in)");
	return TRUE;
}

gboolean vr_run_keys_plan(VrRunKeys *rk, VrRunPlan *plan, const VrConfig *config, GError **error)
{
	gboolean cli_off = FALSE, config_off = FALSE;
	if (!keys_none(plan->keys, FALSE, &cli_off, error) ||
	    !keys_none(config ? config->keys : NULL, TRUE, &config_off, error))
		return FALSE;
	rk->optional = g_ptr_array_new_with_free_func(g_free);
	rk->reads = plan->net_read->len > 0;
	rk->profile = g_strdup(plan->profile_applied);
	g_autoptr(VrNetKeys) keys = vr_net_keys_new();
	if (cli_off || config_off) {
		if (!plan_keys_off(rk, plan, config, cli_off, config_off, error))
			return FALSE;
	} else if (!vr_run_profile_keys_add(keys, rk->optional, plan, error) ||
	           !add_specs(rk, keys, config ? config->keys : NULL, "[sandbox] key", error))
		return FALSE;
	if (!cli_off && !add_specs(rk, keys, plan->keys, "--key", error))
		return FALSE;
	guint explicit = vr_net_keys_count(keys) - rk->optional->len;
	const VrNetKey *first = NULL;
	for (guint i = 0; i < vr_net_keys_count(keys) && !first; i++)
		if (!g_ptr_array_find_with_equal_func(rk->optional, vr_net_keys_get(keys, i)->name, g_str_equal, NULL))
			first = vr_net_keys_get(keys, i);
	if (explicit && (plan->net == VR_NET_HOST || plan->net == VR_NET_NONE)) {
		g_set_error(error, VR_PLAN_ERROR, VR_PLAN_ERROR_BAD_VALUE,
		            "--key %s needs the proxy, which puts the value in: --net %s cannot carry it "
		            "(drop --net %s; --key implies --net allow=HOST)",
		            first->name, plan->net == VR_NET_HOST ? "host" : "none",
		            plan->net == VR_NET_HOST ? "host" : "none");
		return FALSE;
	}
	if (plan->net == VR_NET_HOST && rk->optional->len) {
		/* No proxy to put them in, and refusing would break every run
		 * that chose the host's network before profiles had keys. */
		add_unbound(rk, keys, TRUE,
		            "--net host has no proxy to put it in (without --net host the sandbox holds a sentinel and "
		            "the proxy puts the value in)");
		for (guint i = 0; i < rk->optional->len; i++)
			vr_net_keys_remove(keys, rk->optional->pdata[i]);
		g_ptr_array_set_size(rk->optional, 0);
	}
	/* The key files' after the rest: `--key none` leaves them bound (the
	 * files are served masked whatever it says), the network decides. */
	guint before_files = vr_net_keys_count(keys);
	if (plan->key_files->len && !add_key_files(rk, keys, plan, error))
		return FALSE;
	gboolean files_bound = vr_net_keys_count(keys) > before_files;
	/* Port 443 only: the only port a key is ever put in on. A profile's
	 * keys add no host: they are its [net] allow already. */
	for (guint i = 0; i < vr_net_keys_count(keys); i++) {
		const VrNetKey *k = vr_net_keys_get(keys, i);
		if (g_ptr_array_find_with_equal_func(rk->optional, k->name, g_str_equal, NULL))
			continue;
		for (guint j = 0; j < k->hosts->len; j++) {
			g_autofree char *h = g_strconcat(k->hosts->pdata[j], ":443", NULL);
			if (!g_ptr_array_find_with_equal_func(plan->net_allow, h, g_str_equal, NULL))
				g_ptr_array_add(plan->net_allow, g_steal_pointer(&h));
		}
	}
	if (explicit || files_bound)
		plan->net = VR_NET_ALLOW;
	/* No proxy will run (--net none, or no network chosen): the
	 * profile's keys are sentinels inside and their values go nowhere. */
	rk->no_proxy = plan->net != VR_NET_ALLOW && !(plan->net != VR_NET_HOST && plan->net_localhost->len);
	rk->terminates = rk->reads || (!rk->no_proxy && vr_net_keys_count(keys) > 0);
	if (vr_net_keys_count(keys) > 0)
		rk->keys = g_steal_pointer(&keys);
	return TRUE;
}

/* ---- the per-user secret ------------------------------------------------ */

static gboolean load_secret(guint8 *secret, GError **error);

/* A profile's key files: their fields' keys join KEYS (after the others:
 * their names, "file:PATH:FIELD", can be no variable's). Without the proxy
 * (--net none, host) or with no bound field at all, they are no keys for
 * it: the files are still served masked. */
static gboolean add_key_files(VrRunKeys *rk, VrNetKeys *keys, const VrRunPlan *plan, GError **error)
{
	guint before = vr_net_keys_count(keys);
	rk->files = vr_run_keyfiles_load(plan->key_files, keys, load_secret, error);
	if (!rk->files)
		return FALSE;
	gboolean bound = FALSE;
	for (guint i = before; i < vr_net_keys_count(keys); i++)
		bound = bound || vr_net_keys_get(keys, i)->hosts->len > 0;
	gboolean proxied = plan->net != VR_NET_HOST && plan->net != VR_NET_NONE;
	if (vr_net_keys_count(keys) > before && !proxied)
		vr_warning("--net %s: the profile's key files are served with sentinels, and the logins they hold "
		           "cannot work inside without the proxy", plan->net == VR_NET_HOST ? "host" : "none");
	while ((!proxied || !bound) && vr_net_keys_count(keys) > before)
		vr_net_keys_remove(keys, vr_net_keys_get(keys, before)->name);
	return TRUE;
}

static int read_secret(int dir, guint8 *secret)
{
	vr_cleanup_fd int fd = openat(dir, SECRET_FILE, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	struct stat st;
	ssize_t n = fstat(fd, &st) < 0 ? -errno : vr_read_all(fd, secret, VR_NET_KEY_SECRET_SIZE);
	if (n < 0)
		return (int)n;
	if (!S_ISREG(st.st_mode) || st.st_uid != geteuid() || (st.st_mode & 077) || n != VR_NET_KEY_SECRET_SIZE)
		return -EBADMSG;
	return 0;
}

/* Made once, 0600, in vault-run's state directory: the sentinels are the
 * same in every run, because harnesses persist the keys they were given. */
static int write_secret(int dir, guint8 *secret)
{
	if (getrandom(secret, VR_NET_KEY_SECRET_SIZE, 0) != VR_NET_KEY_SECRET_SIZE)
		return -EIO;
	g_autofree char *tmp = g_strdup_printf(SECRET_FILE ".%d", (int)getpid());
	vr_cleanup_fd int fd = openat(dir, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0)
		return -errno;
	int r = vr_write_all(fd, secret, VR_NET_KEY_SECRET_SIZE);
	if (r >= 0 && fsync(fd) < 0)
		r = -errno;
	vr_clear_fd(&fd);
	/* Two first runs at once: the first link wins, the other reads it. */
	if (r >= 0 && linkat(dir, tmp, dir, SECRET_FILE, 0) < 0)
		r = errno == EEXIST ? read_secret(dir, secret) : -errno;
	unlinkat(dir, tmp, 0);
	return r < 0 ? r : 0;
}

static gboolean load_secret(guint8 *secret, GError **error)
{
	vr_cleanup_fd int pathfd = -1;
	int r = vr_state_open_base_dir(true, &pathfd);
	if (r < 0) {
		g_set_error(error, VR_PLAN_ERROR, VR_PLAN_ERROR_BAD_VALUE,
		            "--key: cannot open vault-run's state directory for the sentinels' secret: %s", strerror(-r));
		return FALSE;
	}
	/* An O_PATH descriptor cannot be a dirfd for creating: reopen it. */
	vr_cleanup_fd int dir = openat(pathfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	vr_clear_fd(&pathfd);
	r = dir < 0 ? -errno : read_secret(dir, secret);
	if (r == -ENOENT)
		r = write_secret(dir, secret);
	vr_clear_fd(&dir);
	if (r < 0) {
		g_autofree char *base = NULL;
		vr_state_base_dir(&base);
		g_set_error(error, VR_PLAN_ERROR, VR_PLAN_ERROR_BAD_VALUE,
		            "--key: %s/" SECRET_FILE ": %s (it must be a 0600 file of %d bytes owned by you; remove it "
		            "to make a new one, which changes every sentinel)",
		            base ? base : "$XDG_STATE_HOME/vault-run", r == -EBADMSG ? "not vault-run's secret" : strerror(-r),
		            VR_NET_KEY_SECRET_SIZE);
		return FALSE;
	}
	return TRUE;
}

/* ---- the values ----------------------------------------------------------- */

/* The entry NAME=… of env, or NULL. */
static char **env_find(char **env, const char *name)
{
	size_t n = strlen(name);
	for (char **e = env; e && *e; e++)
		if (strncmp(*e, name, n) == 0 && (*e)[n] == '=')
			return e;
	return NULL;
}

/* The host's NAME=value, where this process keeps it, now holds the
 * sentinel (the same length): the sandbox's pid 1 is a clone of this
 * process, and /proc/PID/environ reads that very memory. */
static void env_overwrite(char **env, const char *name, const char *sentinel)
{
	char **e = env_find(env, name);
	if (!e)
		return;
	char *v = strchr(*e, '=') + 1;
	size_t n = strlen(v), m = strlen(sentinel);
	memcpy(v, sentinel, MIN(n, m));
	if (n > m)
		explicit_bzero(v + m, n - m);
}

static int values_memfd(const VrNetKeys *keys)
{
	vr_cleanup_fd int fd = memfd_create("vault-run-keys", MFD_CLOEXEC | MFD_ALLOW_SEALING);
	if (fd < 0)
		return -errno;
	int r = vr_net_keys_write_values(keys, fd);
	if (r >= 0 && fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE | F_SEAL_SEAL) < 0)
		r = -errno;
	if (r >= 0 && lseek(fd, 0, SEEK_SET) < 0)
		r = -errno;
	return r < 0 ? r : vr_steal_fd(&fd);
}

static void env_set(GPtrArray *env, const char *name, const char *value)
{
	size_t n = strlen(name);
	for (guint i = 0; i < env->len; i++) {
		char *e = env->pdata[i];
		if (strncmp(e, name, n) == 0 && e[n] == '=') {
			vr_net_secret_free(e);
			env->pdata[i] = g_strconcat(name, "=", value, NULL);
			return;
		}
	}
	g_ptr_array_add(env, g_strconcat(name, "=", value, NULL));
}

/* The merged bundle for the variables OpenSSL, Python, curl and git read;
 * Node adds NODE_EXTRA_CA_CERTS to its own store, so it gets the run CA
 * alone. */
static void trust_env(GPtrArray *env)
{
	static const char *const bundle_vars[] = {"SSL_CERT_FILE", "REQUESTS_CA_BUNDLE", "CURL_CA_BUNDLE",
	                                          "GIT_SSL_CAINFO"};
	for (size_t i = 0; i < G_N_ELEMENTS(bundle_vars); i++)
		env_set(env, bundle_vars[i], VR_RUN_KEYS_BUNDLE);
	env_set(env, "NODE_EXTRA_CA_CERTS", VR_RUN_KEYS_CA);
}

/* Every other variable that holds a key's value (a second name for it in
 * an --env-file, a URL with it in, an allowed OPENAI_* twin) holds its
 * sentinel there too: the value is what must stay out, whatever its name. */
static void env_mask_values(GPtrArray *env, const VrNetKeys *keys)
{
	g_autoptr(VrScrub) s = vr_scrub_new();
	for (guint i = 0; i < vr_net_keys_count(keys); i++) {
		const VrNetKey *k = vr_net_keys_get(keys, i);
		if (k->value && k->sentinel)
			vr_scrub_add(s, k->value, k->sentinel, (int)i);
	}
	for (guint i = 0; i < env->len; i++) {
		char *v = strchr(env->pdata[i], '=');
		if (v)
			vr_scrub_buffer(s, (guint8 *)v + 1, strlen(v + 1), FALSE);
	}
}

/* Each key's sentinel into ENV and over the host environment's copy. */
static gboolean set_sentinels(VrRunKeys *rk, char **envp, GPtrArray *env, GError **error)
{
	for (guint i = 0; rk->keys && i < vr_net_keys_count(rk->keys); i++) {
		VrNetKey *k = vr_net_keys_get(rk->keys, i);
		if (k->sentinel)
			continue; /* a key file's: its value came from the file */
		const char *value = vr_run_key_value(envp, k->name, NULL);
		if (!value || !*value) {
			g_set_error(error, VR_PLAN_ERROR, VR_PLAN_ERROR_BAD_VALUE,
			            "--key %s: %s has no value: set it in the environment or read it with --env-file "
			            "FILE:%s",
			            k->spec, k->name, k->name);
			return FALSE;
		}
		g_autoptr(GError) e = NULL;
		guint8 secret[VR_NET_KEY_SECRET_SIZE];
		gboolean ok = load_secret(secret, error);
		ok = ok && vr_net_key_set_value(k, secret, sizeof secret, value, &e);
		explicit_bzero(secret, sizeof secret);
		if (!ok) {
			if (e)
				g_set_error(error, VR_PLAN_ERROR, VR_PLAN_ERROR_BAD_VALUE, "--key %s: %s", k->spec, e->message);
			return FALSE;
		}
		env_set(env, k->name, k->sentinel);
		env_overwrite(environ, k->name, k->sentinel);
	}
	return TRUE;
}

gboolean vr_run_keys_take_values(VrRunKeys *rk, char ***envp, GError **error)
{
	vr_run_keys_warn_unbound(rk->unbound, *envp, rk->unbound_why);
	if (rk->keys && rk->optional && rk->optional->len) {
		vr_run_profile_keys_drop_absent(rk->keys, rk->optional, *envp, rk->profile);
		if (vr_net_keys_count(rk->keys) == 0) {
			g_clear_pointer(&rk->keys, vr_net_keys_free);
			rk->terminates = rk->reads;
		}
	}
	if (!rk->terminates && !rk->keys)
		return TRUE;
	g_autoptr(GPtrArray) env = g_ptr_array_new_with_free_func(vr_net_secret_free);
	for (char **e = *envp; *e; e++)
		g_ptr_array_add(env, g_strdup(*e));
	if (!set_sentinels(rk, *envp, env, error))
		return FALSE;
	if (rk->keys) {
		env_mask_values(env, rk->keys);
		int fd = rk->no_proxy ? -1 : values_memfd(rk->keys);
		vr_net_keys_forget_values(rk->keys);
		if (rk->no_proxy) {
			/* Nothing to put them into: the sentinels are all there is. */
			rk->sentinel_only = g_ptr_array_new_with_free_func(g_free);
			for (guint i = 0; i < vr_net_keys_count(rk->keys); i++)
				g_ptr_array_add(rk->sentinel_only, g_strdup(vr_net_keys_get(rk->keys, i)->name));
			g_clear_pointer(&rk->keys, vr_net_keys_free);
		} else if (fd < 0) {
			g_set_error(error, VR_PLAN_ERROR, VR_PLAN_ERROR_BAD_VALUE,
			            "--key: cannot hand the values to the proxy (memfd): %s", strerror(-fd));
			return FALSE;
		} else
			rk->values_fd = fd;
	}
	if (rk->terminates)
		trust_env(env);
	/* The old environment's strings held real values: zeroed as freed. */
	for (char **e = *envp; *e; e++)
		explicit_bzero(*e, strlen(*e));
	g_strfreev(*envp);
	g_ptr_array_add(env, NULL);
	*envp = (char **)g_ptr_array_free(g_steal_pointer(&env), FALSE);
	return TRUE;
}

/* ---- the sandbox's trust store ------------------------------------------ */

/* The host's /etc/ssl/certs as links (names stay what CApath users look
 * up), but the bundle, which certs_fill writes. */
static int link_host_entries(int dir)
{
	DIR *d = opendir(VR_RUN_KEYS_CERTS);
	if (!d)
		return 0; /* no host store: the run CA alone */
	struct dirent *e;
	while ((e = readdir(d))) {
		if (e->d_name[0] == '.' || strcmp(e->d_name, "ca-certificates.crt") == 0)
			continue;
		char target[4096];
		g_autofree char *host = g_build_filename(VR_RUN_KEYS_CERTS, e->d_name, NULL);
		ssize_t n = readlink(host, target, sizeof target - 1);
		if (n < 0) {
			/* A file or directory of the host's (java/): linked by its
			 * host path, which the sandbox's /etc/ssl/certs hides, so
			 * it is left out. */
			continue;
		}
		target[n] = '\0';
		if (symlinkat(target, dir, e->d_name) < 0 && errno != EEXIST) {
			int err = errno;
			closedir(d);
			return -err;
		}
	}
	closedir(d);
	return 0;
}

gboolean vr_run_keys_certs_prepare(VrRunKeys *rk, const char *project, GError **error)
{
	if (!rk->terminates)
		return TRUE;
	g_autoptr(GError) e = NULL;
	rk->certs_dir = g_dir_make_tmp("vault-run-certs-XXXXXX", &e);
	if (!rk->certs_dir) {
		g_set_error(error, VR_PLAN_ERROR, VR_PLAN_ERROR_BAD_VALUE,
		            "--key: cannot make the sandbox's trust store: %s", e->message);
		return FALSE;
	}
	char real[PATH_MAX];
	if (project && realpath(rk->certs_dir, real) && vr_path_is_under(real, project)) {
		g_set_error(error, VR_PLAN_ERROR, VR_PLAN_ERROR_BAD_VALUE,
		            "--key: the temporary directory %s is inside the project %s: the sandbox would see the "
		            "run CA through the view; set TMPDIR elsewhere",
		            rk->certs_dir, project);
		vr_run_keys_certs_remove(rk);
		return FALSE;
	}
	chmod(rk->certs_dir, 0755);
	/* The entries go on a tmpfs of the run's own mount namespace (the
	 * supervisor entered it; the host sees an empty directory): ~290
	 * links made and removed again on the host's disk cost 40-90 ms of
	 * every --key run's start and 10 ms of its end. Without it (a mount
	 * refused), on the host directory as before. */
	rk->certs_tmpfs = mount("tmpfs", rk->certs_dir, "tmpfs", MS_NOSUID | MS_NODEV | MS_NOEXEC,
	                        "mode=0755,size=16m,nr_inodes=65536") == 0;
	int dir = open(rk->certs_dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	int r = dir < 0 ? -errno : link_host_entries(dir);
	if (r == 0) {
		rk->bundle_fd = openat(dir, "ca-certificates.crt", O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
		rk->ca_fd = openat(dir, "vault-run-ca.pem", O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
		if (rk->bundle_fd < 0 || rk->ca_fd < 0)
			r = -errno;
	}
	if (dir >= 0)
		close(dir);
	if (r < 0) {
		g_set_error(error, VR_PLAN_ERROR, VR_PLAN_ERROR_BAD_VALUE, "--key: cannot fill %s: %s", rk->certs_dir,
		            strerror(-r));
		return FALSE;
	}
	return TRUE;
}

int vr_run_keys_certs_fill(VrRunKeys *rk, const char *ca_pem, guint32 ca_hash)
{
	if (rk->bundle_fd < 0)
		return 0;
	/* The CA's CApath name, which the proxy computed as it made the CA. */
	g_autofree char *hash_name = g_strdup_printf("%08x.0", ca_hash);
	vr_cleanup_fd int dir = open(rk->certs_dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	int r = dir < 0 || (symlinkat("vault-run-ca.pem", dir, hash_name) < 0 && errno != EEXIST) ? -errno : 0;
	g_autofree char *host = NULL;
	gsize len = 0;
	if (r >= 0)
		g_file_get_contents(HOST_BUNDLE, &host, &len, NULL);
	if (r >= 0 && host)
		r = vr_write_all(rk->bundle_fd, host, len);
	if (r >= 0 && len && host[len - 1] != '\n')
		r = vr_write_all(rk->bundle_fd, "\n", 1);
	if (r >= 0)
		r = vr_write_all(rk->bundle_fd, ca_pem, strlen(ca_pem));
	if (r >= 0)
		r = vr_write_all(rk->ca_fd, ca_pem, strlen(ca_pem));
	close(rk->bundle_fd);
	close(rk->ca_fd);
	rk->bundle_fd = rk->ca_fd = -1;
	return r < 0 ? r : 0;
}

void vr_run_keys_certs_remove(VrRunKeys *rk)
{
	if (!rk->certs_dir)
		return;
	if (rk->certs_tmpfs)
		umount2(rk->certs_dir, MNT_DETACH); /* its entries go with it */
	rk->certs_tmpfs = FALSE;
	DIR *d = opendir(rk->certs_dir);
	if (d) {
		struct dirent *e;
		while ((e = readdir(d)))
			if (e->d_name[0] != '.' || (e->d_name[1] && strcmp(e->d_name, "..") != 0))
				unlinkat(dirfd(d), e->d_name, 0);
		closedir(d);
	}
	rmdir(rk->certs_dir);
	g_clear_pointer(&rk->certs_dir, g_free);
}
