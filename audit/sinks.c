/* Parsing the audit sinks: see audit/sinks.h. */
#include "audit/sinks.h"

#include <string.h>

void vr_audit_sinks_clear(VrAuditSinks *s)
{
	g_free(s->file);
	*s = (VrAuditSinks){0};
}

gboolean vr_audit_sinks_parse(const char *list, VrAuditSinks *ret, char **error)
{
	vr_audit_sinks_clear(ret);
	g_auto(GStrv) items = g_strsplit(list ? list : "", ",", -1);
	if (!items[0]) {
		*error = g_strdup("no sink given; expected state, -, syslog or a FILE (a comma list for several)");
		return FALSE;
	}
	for (char **it = items; *it; it++) {
		const char *v = *it;
		if (!*v) {
			*error = g_strdup_printf("'%s' has an empty sink; expected state, -, syslog or a FILE, "
			                         "separated by single commas", list);
			vr_audit_sinks_clear(ret);
			return FALSE;
		}
		if (strcmp(v, "-") == 0) {
			ret->to_stderr = true;
			continue;
		}
		if (strcmp(v, "syslog") == 0) {
			ret->to_syslog = true;
			continue;
		}
		bool state = strcmp(v, "state") == 0;
		if (state && ret->state)
			continue;
		if (ret->state || ret->file) {
			*error = g_strdup_printf("'%s' names two log files (%s and %s); the hash chain runs through "
			                         "one: keep one, and add - or syslog for copies",
			                         list, ret->file ? ret->file : "state", v);
			vr_audit_sinks_clear(ret);
			return FALSE;
		}
		if (state)
			ret->state = true;
		else
			ret->file = g_strdup(v);
	}
	return TRUE;
}

int vr_audit_fail_parse(const char *s)
{
	if (s && strcmp(s, "closed") == 0)
		return 0;
	if (s && strcmp(s, "open") == 0)
		return 1;
	return -1;
}
