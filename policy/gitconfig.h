/* policy/gitconfig.h — git's config files: a parser with git's own rules,
 * the allow-list of inert keys, and the gate that decides whether a new
 * version of a config file may replace the current one (DESIGN.md
 * invariant 9, docs/policy.md "The git config gate").
 *
 * The parser reads bytes exactly as git 2.39's config.c does
 * (git_parse_source and its helpers): section and key names case-folded
 * (ASCII), `[a "b"]` subsections kept as written, the deprecated `[a.b]`
 * form folded whole, `\` continuation lines, quoting, the escapes \n \t \b
 * \\ \", comments after `#` or `;`, a key without `=` (a boolean, value
 * NULL), "\r\n" as "\n", a UTF-8 BOM at the start. What it yields is what
 * `git config --list --null` prints for the same bytes
 * (tests/gitconfig-diff.sh checks that, on a corpus and on mutations).
 * Pure: no I/O. */
#pragma once
#include <glib.h>

typedef enum {
	VR_GITCONFIG_OK,          /* git reads the whole file */
	VR_GITCONFIG_INVALID,     /* git stops with "bad config line N"; entries: what it read before */
	VR_GITCONFIG_UNSUPPORTED, /* bytes vault-run will not vouch for (a NUL byte): refused */
} VrGitConfigStatus;

typedef struct {
	char *key;        /* "section.subsection.name" as git spells it: section, name lower-case */
	char *value;      /* NULL: a key written without '=' (boolean true) */
	char *raw;        /* the bytes after the key name up to the line end (comments and
	                   * quoting included, the final newline not): equal raw means equal
	                   * value in every git version */
	gsize start, end; /* byte range: the key's first byte .. after the newline that ends it */
	guint line, last_line; /* 1-based; last_line > line for continued values */
} VrGitConfigEntry;

typedef struct {
	VrGitConfigStatus status;
	GArray *entries;  /* VrGitConfigEntry, in file order */
	guint error_line; /* INVALID: the line git names */
} VrGitConfig;

VrGitConfig *vr_gitconfig_parse(const char *buf, gsize len);
void vr_gitconfig_free(VrGitConfig *c);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(VrGitConfig, vr_gitconfig_free)

/* The three parts of a key as git splits it: section up to the first '.',
 * name after the last, subsection between (NULL when there is none). */
void vr_gitconfig_key_split(const char *key, char **ret_section, char **ret_subsection,
                            char **ret_name);

/* --- the allow-list (policy/gitconfig-allow.c) --- */

typedef enum {
	VR_GITKEY_REFUSED,    /* runs or loads something, or unknown: never set or removed */
	VR_GITKEY_ALLOWED,    /* inert, any value */
	VR_GITKEY_URL,        /* remote.*.url/pushurl: value must be an allowed URL */
	VR_GITKEY_REMOTE_REF, /* branch.*.remote/pushRemote, remote.pushDefault: a configured
	                       * remote's name, ".", or an allowed URL */
} VrGitKeyKind;

VrGitKeyKind vr_gitconfig_key_kind(const char *key);
/* NULL when url is https://, ssh://, git:// or scp-like [user@]host:path
 * with no host, user or path starting with '-' and no "x::" helper form;
 * else a static string saying why not. */
const char *vr_gitconfig_url_problem(const char *url);
/* One line per allowed key pattern, for `policy explain` and the docs. */
const char *const *vr_gitconfig_allow_list(void);

typedef struct {
	char *key;        /* a refusal: the key that decided it; NULL when accepted */
	char *reason;     /* a refusal: one line */
	guint line;       /* a refusal: line of the new file (0: none) */
	GPtrArray *changed; /* keys set or removed (char *), accepted or not */
	gboolean inert;   /* the new file is not git config at all (git stops at once) */
	guint restored;   /* lines the agent was served masked, written back as they are */
} VrGitGateVerdict;

void vr_gitgate_verdict_clear(VrGitGateVerdict *v);

/* Decides whether NEW may replace CUR, the config file at RELPATH in the
 * project (cur NULL: the file does not exist). MASKED is CUR as the agent
 * was served it when the scanner masked secrets in it (same length as CUR),
 * else NULL: a line of NEW equal to a masked line is the line the agent was
 * shown and is written back with its real bytes. On acceptance returns TRUE
 * and *ret_out is what to write (NEW, with such lines restored); else FALSE
 * with v->key (NULL when no single key decided) and v->reason. */
gboolean vr_gitgate_decide(const char *relpath, const char *cur, gsize cur_len, const char *masked,
                           const char *new, gsize new_len, GByteArray **ret_out, VrGitGateVerdict *v);
