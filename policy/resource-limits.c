/* Parsing and describing resource limits (resource-limits.h). Pure functions. */
#include "policy/resource-limits.h"

#include <math.h>
#include <string.h>

#include "common/size.h"

#define MIN_MEMORY (1ULL << 20)

gboolean vr_limits_parse_memory(const char *text, guint64 *ret)
{
	uint64_t v;
	if (vr_size_parse(text, &v) < 0 || v < MIN_MEMORY || v > (1ULL << 60))
		return FALSE;
	*ret = v;
	return TRUE;
}

gboolean vr_limits_parse_pids(const char *text, guint *ret)
{
	if (!text || !g_ascii_isdigit(text[0]))
		return FALSE;
	char *end;
	guint64 v = g_ascii_strtoull(text, &end, 10);
	if (*end || v < 2 || v > G_MAXINT32)
		return FALSE;
	*ret = (guint)v;
	return TRUE;
}

gboolean vr_limits_parse_cpu(const char *text, double *ret)
{
	if (!text || !(g_ascii_isdigit(text[0]) || text[0] == '.'))
		return FALSE;
	char *end;
	double v = g_ascii_strtod(text, &end);
	if (strcmp(end, "%") == 0)
		v /= 100;
	else if (*end)
		return FALSE;
	if (!isfinite(v) || v < 0.01 - 1e-9 || v > 1024)
		return FALSE;
	*ret = v;
	return TRUE;
}

gboolean vr_limits_any(const VrLimits *l)
{
	return l->memory || l->pids || l->cpu > 0;
}

static char *format_size(guint64 bytes)
{
	static const char units[] = "KMGT";
	for (int i = 3; i >= 0; i--) {
		guint64 unit = 1ULL << (10 * (i + 1));
		if (bytes >= unit && bytes % unit == 0)
			return g_strdup_printf("%" G_GUINT64_FORMAT "%c", bytes / unit, units[i]);
	}
	return g_strdup_printf("%" G_GUINT64_FORMAT, bytes);
}

char *vr_limits_describe(const VrLimits *l)
{
	GString *s = g_string_new(NULL);
	if (l->memory) {
		g_autofree char *m = format_size(l->memory);
		g_string_append_printf(s, "memory %s", m);
	}
	if (l->pids)
		g_string_append_printf(s, "%spids %u", s->len ? ", " : "", l->pids);
	if (l->cpu > 0)
		g_string_append_printf(s, "%scpu %g", s->len ? ", " : "", l->cpu);
	return g_string_free(s, FALSE);
}

void vr_limits_fill(VrLimits *l, const VrLimits *defaults)
{
	if (!l->memory)
		l->memory = defaults->memory;
	if (!l->pids)
		l->pids = defaults->pids;
	if (!(l->cpu > 0))
		l->cpu = defaults->cpu;
}
