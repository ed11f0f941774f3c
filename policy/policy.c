/* policy/policy.c — rule sets and decisions.
 *
 * Two kinds of rules combine differently:
 *  - the user's rules (built-ins, user config, --policy, command line): last
 *    match wins, as in .gitignore; a SHOW rule makes a path visible again;
 *  - the project's rules (its .vault-run, written by whoever controls the
 *    repository, perhaps the agent itself in an earlier run): the strictest
 *    matching one counts, and only when it is stricter than the user's
 *    verdict, so a project file can add restrictions and never remove one.
 * A directory's class is a floor for everything below it (git: a path in an
 * excluded directory cannot be re-included). */
#include <string.h>

#include "policy/match.h"
#include "policy/policy-private.h"

G_DEFINE_QUARK(vr-policy-error-quark, vr_policy_error)

typedef struct {
	VrRule rule; /* first: a VrRule * is a Item * */
	VrMatch *match; /* NULL for the rules about git's files (below) */
} Item;

struct VrPolicy {
	GPtrArray *items;    /* Item *, in the order added */
	VrMatchSet *user;    /* rank: index (last match wins) */
	VrMatchSet *project; /* rank: class, then index (strictest wins) */
	/* Rules no pattern can say: they hold for what is not a directory.
	 * Keys are the rules' patterns (a basename, or a relpath). */
	GHashTable *git_names;  /* basename → Item * (config, config.worktree) */
	GHashTable *git_files;  /* relpath → Item * (included config files) */
	GHashTable *nondirs;    /* relpath → Item * (must stay directories) */
};

static void item_free(gpointer p)
{
	Item *it = p;
	g_free(it->rule.pattern);
	g_free(it->rule.source);
	g_free(it->rule.why);
	vr_match_free(it->match);
	g_free(it);
}

VrPolicy *vr_policy_new(void)
{
	VrPolicy *policy = g_new0(VrPolicy, 1);
	policy->items = g_ptr_array_new_with_free_func(item_free);
	policy->user = vr_match_set_new();
	policy->project = vr_match_set_new();
	policy->git_names = g_hash_table_new(g_str_hash, g_str_equal);
	policy->git_files = g_hash_table_new(g_str_hash, g_str_equal);
	policy->nondirs = g_hash_table_new(g_str_hash, g_str_equal);
	return policy;
}

void vr_policy_free(VrPolicy *policy)
{
	if (!policy)
		return;
	vr_match_set_free(policy->user);
	vr_match_set_free(policy->project);
	g_hash_table_unref(policy->git_names);
	g_hash_table_unref(policy->git_files);
	g_hash_table_unref(policy->nondirs);
	g_ptr_array_unref(policy->items);
	g_free(policy);
}

static VrClass kind_class(VrRuleKind kind)
{
	switch (kind) {
	case VR_RULE_HIDE:
		return VR_CLASS_HIDE;
	case VR_RULE_REDACT:
		return VR_CLASS_REDACT;
	case VR_RULE_READONLY:
		return VR_CLASS_READONLY;
	case VR_RULE_SHOW:
		break;
	}
	return VR_CLASS_VISIBLE;
}

VrRule *vr_policy_add_rule(VrPolicy *policy, VrRuleKind kind, const char *pattern,
                           const char *source, int line, gboolean project, GError **error)
{
	g_autoptr(GError) local = NULL;
	if (project && kind == VR_RULE_SHOW) {
		g_autofree char *quoted = g_strescape(pattern, NULL);
		g_set_error(error, VR_POLICY_ERROR, VR_POLICY_ERROR_CONFIG,
		            "%s:%d: a project config cannot un-hide '%s'; project config may only add "
		            "restrictions; put it in ~/.config/vault-run/config",
		            source, line, quoted);
		return NULL;
	}
	VrMatch *m = vr_match_compile(pattern, &local);
	if (!m) {
		g_set_error(error, VR_POLICY_ERROR, VR_POLICY_ERROR_PATTERN, "%s:%d: %s", source,
		            line, local->message);
		return NULL;
	}
	Item *it = g_new0(Item, 1);
	it->rule.pattern = g_strdup(pattern);
	it->rule.kind = kind;
	it->rule.source = g_strdup(source);
	it->rule.line = line;
	it->rule.project = project;
	it->match = m;
	gint64 index = policy->items->len;
	g_ptr_array_add(policy->items, it);
	if (project)
		vr_match_set_add(policy->project, m, ((gint64)kind_class(kind) << 32) | index, it);
	else
		vr_match_set_add(policy->user, m, index, it);
	return &it->rule;
}

gboolean vr_policy_add(VrPolicy *policy, VrRuleKind kind, const char *pattern,
                       const char *source, int line, gboolean project, GError **error)
{
	return vr_policy_add_rule(policy, kind, pattern, source, line, project, error) != NULL;
}

static Item *git_item_new(VrPolicy *policy, const char *pattern, const char *source, int line,
                          const char *why, gboolean gitconfig)
{
	Item *it = g_new0(Item, 1);
	it->rule.pattern = g_strdup(pattern);
	it->rule.kind = VR_RULE_READONLY;
	it->rule.source = g_strdup(source);
	it->rule.line = line;
	it->rule.why = g_strdup(why);
	it->rule.gitconfig = gitconfig;
	g_ptr_array_add(policy->items, it);
	return it;
}

VrRule *vr_policy_add_gitconfig_name(VrPolicy *policy, const char *name, int line, const char *why)
{
	Item *it = git_item_new(policy, name, "built-in", line, why, TRUE);
	g_hash_table_insert(policy->git_names, it->rule.pattern, it);
	return &it->rule;
}

void vr_policy_add_gitconfig_file(VrPolicy *policy, const char *relpath, const char *source,
                                  int line)
{
	if (!*relpath || g_hash_table_contains(policy->git_files, relpath))
		return;
	Item *it = git_item_new(policy, relpath, source, line,
	                        "included by a git config: changes pass the config gate", TRUE);
	g_hash_table_insert(policy->git_files, it->rule.pattern, it);
}

void vr_policy_add_nondir_readonly(VrPolicy *policy, const char *relpath, const char *source,
                                   int line, const char *why)
{
	if (!*relpath || g_hash_table_contains(policy->nondirs, relpath))
		return;
	Item *it = git_item_new(policy, relpath, source, line, why, FALSE);
	g_hash_table_insert(policy->nondirs, it->rule.pattern, it);
}

/* The rule about git's files for relpath, which is not a directory. */
static const Item *git_rule(const VrPolicy *policy, const char *relpath)
{
	const Item *it = g_hash_table_lookup(policy->git_files, relpath);
	if (!it)
		it = g_hash_table_lookup(policy->nondirs, relpath);
	if (!it) {
		const char *slash = strrchr(relpath, '/');
		it = g_hash_table_lookup(policy->git_names, slash ? slash + 1 : relpath);
	}
	return it;
}

/* The decision from the best user rule U and project rule P for relpath. */
static VrDecision decide_from(const VrPolicy *policy, VrDecision parent, const char *relpath,
                              gboolean is_dir, const Item *u, const Item *p)
{
	VrDecision own = {VR_CLASS_VISIBLE, NULL};
	if (u)
		own = (VrDecision){kind_class(u->rule.kind), &u->rule};
	if (p && kind_class(p->rule.kind) > own.cls)
		own = (VrDecision){kind_class(p->rule.kind), &p->rule};
	/* git's files are read-only at least, unless the user (not a
	 * built-in) names the path in a show rule of their own. */
	if (!is_dir && own.cls < VR_CLASS_READONLY &&
	    !(u && u->rule.kind == VR_RULE_SHOW && strcmp(u->rule.source, "built-in") != 0)) {
		const Item *g = git_rule(policy, relpath);
		if (g)
			own = (VrDecision){VR_CLASS_READONLY, &g->rule};
	}
	/* The directory's verdict is the floor; on a tie it is the reason
	 * (as git reports the excluded directory for a path inside it). */
	if (parent.cls != VR_CLASS_VISIBLE && parent.cls >= own.cls)
		return parent;
	return own;
}

VrDecision vr_policy_decide_child(const VrPolicy *policy, VrDecision parent,
                                  const char *relpath, gboolean is_dir)
{
	/* Nothing is stricter than hidden: skip the look-ups. */
	if (parent.cls == VR_CLASS_HIDE)
		return parent;
	const Item *u = vr_match_set_best(policy->user, relpath, is_dir, NULL);
	const Item *p = vr_match_set_best(policy->project, relpath, is_dir, NULL);
	return decide_from(policy, parent, relpath, is_dir, u, p);
}

VrDecision vr_policy_decide_child_either(const VrPolicy *policy, VrDecision parent, const char *relpath)
{
	if (parent.cls == VR_CLASS_HIDE)
		return parent;
	gpointer uf, ud, pf, pd;
	vr_match_set_best_both(policy->user, relpath, &uf, &ud);
	vr_match_set_best_both(policy->project, relpath, &pf, &pd);
	VrDecision f = decide_from(policy, parent, relpath, FALSE, uf, pf);
	VrDecision d = decide_from(policy, parent, relpath, TRUE, ud, pd);
	return d.cls > f.cls ? d : f;
}

VrDecision vr_policy_decide(const VrPolicy *policy, const char *relpath, gboolean is_dir)
{
	VrDecision d = {VR_CLASS_VISIBLE, NULL};
	if (!*relpath)
		return d; /* the project root itself is always there */
	char stackbuf[512];
	g_autofree char *heapbuf = NULL;
	gsize len = strlen(relpath);
	char *buf = stackbuf;
	if (len >= sizeof stackbuf)
		buf = heapbuf = g_malloc(len + 1);
	memcpy(buf, relpath, len + 1);
	/* Ancestors are directories by construction. */
	for (char *s = strchr(buf, '/'); s; s = strchr(s + 1, '/')) {
		*s = '\0';
		d = vr_policy_decide_child(policy, d, buf, TRUE);
		*s = '/';
		if (d.cls == VR_CLASS_HIDE)
			return d;
	}
	return vr_policy_decide_child(policy, d, relpath, is_dir);
}

/* Could pattern components pc[i..] line up with the directory's components
 * dc[j..] and go on below it (or end exactly at it)? "**" is taken as yes. */
static gboolean reaches(char **pc, guint npc, guint i, char **dc, guint nd, guint j)
{
	for (;; i++, j++) {
		if (j == nd)
			return TRUE;
		if (i == npc)
			return FALSE; /* the pattern ends at an ancestor of the directory */
		if (strcmp(pc[i], "**") == 0)
			return TRUE;
		gsize off;
		if (vr_glob_check(pc[i], &off))
			return TRUE; /* a bracket spanning a '/': unsure, so yes */
		if (!vr_wildmatch(pc[i], dc[j]))
			return FALSE;
	}
}

gboolean vr_policy_dir_is_rule_sensitive(const VrPolicy *policy, const char *relpath)
{
	g_auto(GStrv) dc = *relpath ? g_strsplit(relpath, "/", -1) : g_new0(char *, 1);
	guint nd = g_strv_length(dc);
	for (guint k = 0; k < policy->items->len; k++) {
		const Item *it = policy->items->pdata[k];
		/* Basename rules look at one name, which a move keeps. */
		if (!it->match) {
			/* A path of git's: moving an ancestor moves it. */
			const char *p = it->rule.pattern;
			gsize n = strlen(relpath);
			if (g_hash_table_lookup(policy->git_names, p) != it &&
			    (!n || (strncmp(p, relpath, n) == 0 && (p[n] == '/' || p[n] == '\0'))))
				return TRUE;
			continue;
		}
		if (!vr_match_anchored(it->match))
			continue;
		g_auto(GStrv) pc = g_strsplit(vr_match_glob(it->match), "/", -1);
		guint npc = g_strv_length(pc);
		if (npc > 0 && strcmp(pc[0], "**") == 0) {
			/* "**" + "/R": R may start at any of the directory's components;
			 * a match starting below the directory moves with it. */
			if (nd == 0)
				return TRUE;
			for (guint j = 0; j < nd; j++)
				if (reaches(pc, npc, 1, dc, nd, j))
					return TRUE;
		} else if (reaches(pc, npc, 0, dc, nd, 0)) {
			return TRUE;
		}
	}
	return FALSE;
}

guint vr_policy_n_rules(const VrPolicy *policy)
{
	return policy->items->len;
}

const VrRule *vr_policy_rule(const VrPolicy *policy, guint index)
{
	if (index >= policy->items->len)
		return NULL;
	return &((const Item *)policy->items->pdata[index])->rule;
}

const char *vr_class_name(VrClass cls)
{
	switch (cls) {
	case VR_CLASS_VISIBLE:
		return "visible";
	case VR_CLASS_READONLY:
		return "readonly";
	case VR_CLASS_REDACT:
		return "redacted";
	case VR_CLASS_HIDE:
		return "hidden";
	}
	return "?";
}

const char *vr_rule_kind_name(VrRuleKind kind)
{
	switch (kind) {
	case VR_RULE_HIDE:
		return "hide";
	case VR_RULE_READONLY:
		return "readonly";
	case VR_RULE_REDACT:
		return "redact";
	case VR_RULE_SHOW:
		return "show";
	}
	return "?";
}
