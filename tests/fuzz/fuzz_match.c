/* libFuzzer target: patterns and paths. Input: lines; a line starting with
 * 'p' is a pattern (kind from the next byte), anything else a path to
 * decide. Also checks the fast paths (and the quick last-component test)
 * against the general matcher, the one-pass file-or-directory decision
 * against two decisions, and the same-length promise of vr_redact_mask. */
#include <stdint.h>
#include <string.h>

#include "policy/match.h"
#include "policy/policy.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size > 4096)
		return 0;
	char *text = g_strndup((const char *)data, size);
	char **lines = g_strsplit(text, "\n", 64);
	VrPolicy *policy = vr_policy_new();
	GPtrArray *matches = g_ptr_array_new_with_free_func((GDestroyNotify)vr_match_free);
	for (char **l = lines; *l; l++) {
		char *line = *l;
		if (line[0] == 'p' && line[1]) {
			VrRuleKind kind = (VrRuleKind)((guchar)line[1] % 4);
			GError *error = NULL;
			if (!vr_policy_add(policy, kind, line + 2, "fuzz", 1, line[1] & 4 ? kind != VR_RULE_SHOW : FALSE, &error))
				g_error_free(error);
			VrMatch *m = vr_match_compile(line + 2, NULL);
			if (m)
				g_ptr_array_add(matches, m);
			continue;
		}
		const char *slash = strrchr(line, '/');
		const char *base = slash ? slash + 1 : line;
		for (guint i = 0; i < matches->len; i++) {
			const VrMatch *m = matches->pdata[i];
			gboolean fast = vr_match_path(m, line, base, TRUE);
			const char *glob = vr_match_glob(m);
			gboolean slow = vr_wildmatch(glob, vr_match_anchored(m) ? line : base);
			if (fast != slow)
				__builtin_trap();
		}
		VrDecision d = vr_policy_decide(policy, line, FALSE);
		if (d.cls > VR_CLASS_HIDE)
			__builtin_trap();
		/* One pass for a file and a directory = two decisions. */
		VrDecision none = {VR_CLASS_VISIBLE, NULL};
		VrDecision f = vr_policy_decide_child(policy, none, line, FALSE);
		VrDecision dd = vr_policy_decide_child(policy, none, line, TRUE);
		VrDecision e = vr_policy_decide_child_either(policy, none, line);
		if (e.cls != MAX(f.cls, dd.cls) || e.rule != (dd.cls > f.cls ? dd.rule : f.rule))
			__builtin_trap();
		vr_policy_dir_is_rule_sensitive(policy, line);
		gsize n = strlen(line);
		char *copy = g_strdup(line);
		vr_redact_mask(copy, n);
		if (strlen(copy) != n)
			__builtin_trap();
		g_free(copy);
	}
	g_ptr_array_unref(matches);
	vr_policy_free(policy);
	g_strfreev(lines);
	g_free(text);
	return 0;
}
