/* The size grammar (size.h). */
#include "common/size.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* The unit after the number: its power of 1024 in *RET_SHIFT (0: none).
 * -EDOM for KB/MB/GB/TB, -EINVAL for anything else that is not one. */
static int parse_unit(const char *u, unsigned *ret_shift)
{
	static const char units[] = "KMGT";
	*ret_shift = 0;
	if (!*u)
		return 0;
	char c = (char)(u[0] & ~0x20); /* upper case */
	const char *p = c ? strchr(units, c) : NULL;
	if (!p)
		return -EINVAL;
	*ret_shift = 10 * (unsigned)(p - units + 1);
	if (!u[1] || strcasecmp(u + 1, "iB") == 0)
		return 0;
	return strcasecmp(u + 1, "B") == 0 ? -EDOM : -EINVAL;
}

int vr_size_parse(const char *text, uint64_t *ret)
{
	if (!text || text[0] < '0' || text[0] > '9')
		return -EINVAL;
	char *end;
	errno = 0;
	unsigned long long whole = strtoull(text, &end, 10);
	if (errno)
		return -ERANGE;
	unsigned shift;
	if (*end != '.') {
		int r = parse_unit(end, &shift);
		if (r < 0)
			return r;
		if (shift && whole > (UINT64_MAX >> shift))
			return -ERANGE;
		*ret = (uint64_t)whole << shift;
		return 0;
	}
	/* A fraction needs a unit: bytes are whole. Read by hand, not with
	 * strtod, whose decimal point is the locale's. */
	double frac = 0, scale = 1;
	for (end++; *end >= '0' && *end <= '9'; end++)
		frac += (*end - '0') * (scale /= 10);
	int r = parse_unit(end, &shift);
	if (r < 0)
		return r;
	if (!shift || scale == 1)
		return -EINVAL;
	double bytes = ((double)whole + frac) * (double)(1ULL << shift);
	if (bytes >= 18446744073709551616.0)
		return -ERANGE;
	*ret = (uint64_t)bytes;
	return 0;
}

const char *vr_size_expected(const char *text, const char *syntax)
{
	uint64_t v;
	if (vr_size_parse(text, &v) == -EDOM)
		return "a size in powers of 1024 (K, M, G, T or KiB, MiB, GiB, TiB; KB, MB and GB are "
		       "refused, since some read them as powers of 1000)";
	return syntax;
}
