/* Config files (glib GKeyFile) from their sources, merged into a VrConfig.
 * See docs/policy.md for the format. */
#pragma once
#include "policy/policy.h"
#include "policy/resource-limits.h"
#include "policy/scan-filter.h"

typedef enum {
	VR_SOURCE_USER,     /* $XDG_CONFIG_HOME/vault-run/config: may hold everything */
	VR_SOURCE_PROJECT,  /* the project's .vault-run: may only tighten */
	VR_SOURCE_POLICY,   /* --policy FILE: as the user's own */
} VrConfigSource;

typedef struct {
	VrPolicy *policy;
	/* [sandbox] settings, NULL/empty when unset (never from a project file) */
	char *net;                /* "none", "host", "allow=a,b" */
	GPtrArray *env_allow;     /* globs of variable names (char *) */
	GPtrArray *env_set;       /* "NAME=VALUE" (char *) */
	GPtrArray *env_files;     /* env-file: "FILE[:PATTERN,...]" as --env-file takes them (char *) */
	GPtrArray *keys;          /* key: "NAME@HOST,..." as --key takes them (char *) */
	GPtrArray *ro_binds;      /* host paths (char *) bound read-only */
	GPtrArray *rw_binds;      /* host paths (char *) bound read-write */
	char *profile;
	VrLimits limits;          /* memory, pids, cpu; 0: unset */
	/* [audit] */
	char *audit_level;        /* "denied".."all" */
	char *audit_path;         /* sinks, as --audit takes them: "state,syslog" */
	guint64 audit_max_size;   /* max-size: bytes per part, 0: no rotation (when audit_max_size_set) */
	gboolean audit_max_size_set;
	char *audit_fail;         /* "closed", "open" */
	/* [view] (never from a project file) */
	char *scan_mode;          /* "mask", "refuse", "off"; NULL: the view's default (mask) */
	char *scan_mode_source;   /* "FILE:LINE" of scan_mode, for `config show` */
	guint64 scan_max_size;    /* bytes; 0: the view's default (8 MiB) */
	VrScanFilter *scan_filter; /* scan-disable / scan-allow; never NULL (empty: nothing dropped) */
} VrConfig;

VrConfig *vr_config_new(void);   /* with the built-in rules already added */
void vr_config_free(VrConfig *config);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(VrConfig, vr_config_free)

/* Loads one file. A missing file is not an error when optional is TRUE.
 * Errors name FILE:LINE and what was expected. */
gboolean vr_config_load_file(VrConfig *config, const char *path, VrConfigSource source,
                             gboolean optional, GError **error);
/* Loads the same from memory (for tests and the fuzzer); name stands for the path. */
gboolean vr_config_load_data(VrConfig *config, const char *data, gsize len, const char *name,
                             VrConfigSource source, GError **error);
/* Fails (VR_POLICY_ERROR_IO, one line naming both) when the user config
 * path USER is reached through a symlink inside PROJECT_DIR, or through any
 * symlink while it lies inside PROJECT_DIR. */
gboolean vr_config_check_user_path(const char *user, const char *project_dir, GError **error);
/* Built-ins → user config (checked as above when project_dir is given) →
 * project's .vault-run (if project_dir; then what the project's git configs
 * include and name as core.hooksPath) → policy_file. */
gboolean vr_config_load_all(VrConfig *config, const char *project_dir, const char *policy_file,
                            GError **error);
/* A size (common/size.h) of at most 1G, as --scan-max-size and [view]
 * scan-max-size take it. */
gboolean vr_config_parse_size(const char *text, guint64 *ret);
#define VR_CONFIG_SCAN_MAX_SIZE_SYNTAX "a size such as 8M, 512K or 1048576 (bytes), at most 1G"
/* An audit log's part size (--audit-max-size, [audit] max-size): "off" or
 * "0" (no rotation: *ret = 0), or a size from 1K to 1G. */
gboolean vr_config_parse_audit_max_size(const char *text, guint64 *ret);
#define VR_CONFIG_AUDIT_MAX_SIZE_SYNTAX "a size from 1K to 1G such as 64M, or off"
/* --audit-level and [audit] level: denied 0 .. all 4 (VrAuditLevel's
 * order), -1 when unknown. The one list of them. */
int vr_config_audit_level_parse(const char *name);
#define VR_CONFIG_AUDIT_LEVELS "denied, writes, reads, opens, all"
/* --scan and [view] scan: off 0, mask 1, refuse 2 (VrViewScanMode's
 * order), -1 when unknown. */
int vr_config_scan_mode_parse(const char *name);
#define VR_CONFIG_SCAN_MODES "mask, refuse, off"
/* The user config path ($XDG_CONFIG_HOME/vault-run/config); newly allocated. */
char *vr_config_user_path(void);
/* --env-file FILE[:PATTERN,...] and [sandbox] env-file, split: the last ':'
 * starts the list when what follows it is empty or only names, globs over
 * names (OPENAI_*, [A-Z]*_KEY) and commas; otherwise the whole of SPEC is
 * the file (`/mnt/c:/x/.env`). So a file whose name holds a ':' is always
 * expressible: `a:b:` is the file a:b, every variable; `a:b:K` its K.
 * *RET_PATTERNS: the comma list, or NULL for every variable. */
void vr_config_split_env_file(const char *spec, char **ret_file, char **ret_patterns);

/* The `net` grammar, one for [sandbox] net and --net: items joined by ';'
 * (white space around them and empty ones dropped), each one of these.
 * What an item's list holds (patterns, hosts, ports) is checked by the run. */
typedef enum {
	VR_NET_ITEM_BAD,
	VR_NET_ITEM_NONE,      /* none: stands alone */
	VR_NET_ITEM_HOST,      /* host: stands alone */
	VR_NET_ITEM_ALLOW,     /* allow=PATTERN,... */
	VR_NET_ITEM_READ,      /* read=HOST,... */
	VR_NET_ITEM_LOCALHOST, /* allow-localhost=PORT,... */
	VR_NET_ITEM_PRIVATE,   /* allow-private */
} VrNetItem;
/* VALUE's items, stripped, without the empty ones (maybe none). */
GStrv vr_config_net_split(const char *value);
/* ITEM's kind; *RET_LIST (may be NULL) is what follows its '='. */
VrNetItem vr_config_net_item(const char *item, const char **ret_list);
