/* policy/match.c — one .gitignore pattern: parsing as git reads a line of
 * .gitignore, and git's wildmatch (WM_PATHNAME) re-written here so that the
 * answers agree with `git check-ignore` (tests/unit/test_match.c checks this
 * against git itself). */
#include <string.h>

#include "policy/match.h"
#include "policy/policy.h"

struct VrMatch {
	char *glob;         /* leading '/' and one trailing '/' removed */
	gboolean anchored;  /* had a slash (not the trailing one): match the whole path */
	gboolean dir_only;  /* had a trailing slash */
	VrMatchShape shape;
	const char *key;    /* into glob: the literal, or the suffix after '*' */
	/* For VR_MATCH_GENERAL: what the path's last component must start and
	 * end with (the literal ends of the pattern's last component), checked
	 * before the matcher runs; most paths fail it. Off (filter FALSE) when
	 * the last component is "**" or the pattern has '[' or '\'. */
	gboolean filter;
	gboolean last_literal; /* the last component has no glob character: equal */
	const char *last;      /* into glob: the last component */
	gsize pre_n, suf_n;
};

enum { WM_MATCH, WM_NOMATCH, WM_ABORT_ALL, WM_ABORT_TO_STARSTAR };

static gboolean is_glob_special(char c)
{
	return c == '*' || c == '?' || c == '[' || c == '\\';
}

/* [:name:] classes of POSIX brackets, ASCII only (as git's sane_ctype). */
static int class_matches(const char *name, gsize n, guchar c, gboolean *ret_known)
{
	static const char *const names[] = {"alnum", "alpha", "blank", "cntrl", "digit", "graph",
	                                     "lower", "print", "punct", "space", "upper", "xdigit"};
	gsize i;
	for (i = 0; i < G_N_ELEMENTS(names); i++)
		if (strlen(names[i]) == n && memcmp(names[i], name, n) == 0)
			break;
	*ret_known = TRUE;
	switch (i) {
	case 0: return g_ascii_isalnum(c);
	case 1: return g_ascii_isalpha(c);
	case 2: return c == ' ' || c == '\t';
	case 3: return g_ascii_iscntrl(c);
	case 4: return g_ascii_isdigit(c);
	case 5: return g_ascii_isgraph(c);
	case 6: return g_ascii_islower(c);
	case 7: return g_ascii_isprint(c);
	case 8: return g_ascii_ispunct(c);
	case 9: return g_ascii_isspace(c);
	case 10: return g_ascii_isupper(c);
	case 11: return g_ascii_isxdigit(c);
	}
	*ret_known = FALSE;
	return 0;
}

/* git's dowild() with WM_PATHNAME, without case folding. */
static int dowild(const guchar *p, const guchar *text, const guchar *pstart)
{
	guchar p_ch;
	for (; (p_ch = *p) != '\0'; text++, p++) {
		int matched, match_slash, negated;
		guchar t_ch, prev_ch;
		if ((t_ch = *text) == '\0' && p_ch != '*')
			return WM_ABORT_ALL;
		switch (p_ch) {
		case '\\':
			/* Literal match with the following character. */
			p_ch = *++p;
			/* fallthrough */
		default:
			if (t_ch != p_ch)
				return WM_NOMATCH;
			continue;
		case '?':
			if (t_ch == '/')
				return WM_NOMATCH;
			continue;
		case '*':
			if (*++p == '*') {
				const guchar *prev_p = p - 2;
				while (*++p == '*') {
				}
				if ((prev_p < pstart || *prev_p == '/') &&
				    (*p == '\0' || *p == '/' || (p[0] == '\\' && p[1] == '/'))) {
					/* "**" as a whole component: it may match no
					 * directory at all, so "a/ **" + "/b" matches "a/b". */
					if (p[0] == '/' && dowild(p + 1, text, pstart) == WM_MATCH)
						return WM_MATCH;
					match_slash = 1;
				} else {
					match_slash = 0;
				}
			} else {
				match_slash = 0;
			}
			if (*p == '\0') {
				/* Trailing "**" matches everything, "*" only within a component. */
				if (!match_slash && strchr((const char *)text, '/'))
					return WM_NOMATCH;
				return WM_MATCH;
			} else if (!match_slash && *p == '/') {
				/* One '*' then '/': the rest of this component. */
				const char *slash = strchr((const char *)text, '/');
				if (!slash)
					return WM_NOMATCH;
				text = (const guchar *)slash;
				break; /* the slash is consumed by the for loop */
			}
			for (;;) {
				if (t_ch == '\0')
					break;
				/* Skip quickly to the next place the literal after '*' occurs. */
				if (!is_glob_special((char)*p)) {
					p_ch = *p;
					while ((t_ch = *text) != '\0' && (match_slash || t_ch != '/')) {
						if (t_ch == p_ch)
							break;
						text++;
					}
					if (t_ch != p_ch)
						return WM_NOMATCH;
				}
				if ((matched = dowild(p, text, pstart)) != WM_NOMATCH) {
					if (!match_slash || matched != WM_ABORT_TO_STARSTAR)
						return matched;
				} else if (!match_slash && t_ch == '/') {
					return WM_ABORT_TO_STARSTAR;
				}
				t_ch = *++text;
			}
			return WM_ABORT_ALL;
		case '[':
			p_ch = *++p;
			if (p_ch == '^')
				p_ch = '!';
			negated = p_ch == '!';
			if (negated)
				p_ch = *++p;
			prev_ch = 0;
			matched = 0;
			do {
				if (!p_ch)
					return WM_ABORT_ALL;
				if (p_ch == '\\') {
					p_ch = *++p;
					if (!p_ch)
						return WM_ABORT_ALL;
					if (t_ch == p_ch)
						matched = 1;
				} else if (p_ch == '-' && prev_ch && p[1] && p[1] != ']') {
					p_ch = *++p;
					if (p_ch == '\\') {
						p_ch = *++p;
						if (!p_ch)
							return WM_ABORT_ALL;
					}
					if (t_ch <= p_ch && t_ch >= prev_ch)
						matched = 1;
					p_ch = 0; /* so prev_ch becomes 0: "a-c-e" is not a chain */
				} else if (p_ch == '[' && p[1] == ':') {
					const guchar *s;
					gboolean known;
					for (s = p += 2; (p_ch = *p) && p_ch != ']'; p++) {
					}
					if (!p_ch)
						return WM_ABORT_ALL;
					if (p - s - 1 < 0 || p[-1] != ':') {
						/* No ":]": a plain '['. */
						p = s - 2;
						p_ch = '[';
						if (t_ch == p_ch)
							matched = 1;
						continue;
					}
					if (class_matches((const char *)s, (gsize)(p - s - 1), t_ch, &known))
						matched = 1;
					if (!known)
						return WM_ABORT_ALL;
					p_ch = 0;
				} else if (t_ch == p_ch) {
					matched = 1;
				}
			} while (prev_ch = p_ch, (p_ch = *++p) != ']');
			if (matched == negated || t_ch == '/')
				return WM_NOMATCH;
			continue;
		}
	}
	return *text ? WM_NOMATCH : WM_MATCH;
}

gboolean vr_wildmatch(const char *pattern, const char *text)
{
	return dowild((const guchar *)pattern, (const guchar *)text, (const guchar *)pattern) ==
	       WM_MATCH;
}

const char *vr_glob_check(const char *glob, gsize *ret_offset)
{
	for (const char *p = glob; *p; p++) {
		if (*p == '\\') {
			if (!p[1]) {
				*ret_offset = (gsize)(p - glob);
				return "trailing backslash escapes nothing";
			}
			p++;
			continue;
		}
		if (*p != '[')
			continue;
		const char *open = p, *q = p + 1;
		if (*q == '!' || *q == '^')
			q++;
		gboolean first = TRUE;
		for (;; q++, first = FALSE) {
			if (!*q) {
				*ret_offset = (gsize)(open - glob);
				return "unclosed '['";
			}
			if (*q == ']' && !first)
				break;
			if (*q == '\\') {
				if (!q[1]) {
					*ret_offset = (gsize)(open - glob);
					return "unclosed '['";
				}
				q++;
			} else if (*q == '[' && q[1] == ':') {
				const char *s = q + 2, *r = s;
				while (*r && *r != ']')
					r++;
				if (!*r) {
					*ret_offset = (gsize)(open - glob);
					return "unclosed '['";
				}
				if (r - s - 1 < 0 || r[-1] != ':')
					continue; /* a plain '[' */
				gboolean known;
				class_matches(s, (gsize)(r - s - 1), 'a', &known);
				if (!known) {
					*ret_offset = (gsize)(q - glob);
					return "unknown character class";
				}
				q = r;
			}
		}
		p = q;
	}
	return NULL;
}

/* git's trim_trailing_spaces(): unescaped trailing spaces are not part of a
 * pattern. */
static void trim_trailing_spaces(char *buf)
{
	char *last_space = NULL;
	for (char *p = buf; *p; p++) {
		switch (*p) {
		case ' ':
			if (!last_space)
				last_space = p;
			break;
		case '\\':
			p++;
			if (!*p)
				return;
			/* fallthrough */
		default:
			last_space = NULL;
		}
	}
	if (last_space)
		*last_space = '\0';
}

VrMatch *vr_match_compile(const char *pattern, GError **error)
{
	g_autofree char *buf = g_strdup(pattern);
	trim_trailing_spaces(buf);
	gsize len = strlen(buf);
	gboolean dir_only = FALSE;
	if (len > 0 && buf[len - 1] == '/') {
		buf[--len] = '\0';
		dir_only = TRUE;
	}
	gboolean anchored = strchr(buf, '/') != NULL;
	const char *glob = buf[0] == '/' ? buf + 1 : buf;
	if (!*glob) {
		g_autofree char *quoted = g_strescape(pattern, NULL);
		g_set_error(error, VR_POLICY_ERROR, VR_POLICY_ERROR_PATTERN,
		            "empty pattern '%s'; expected a file name or glob", quoted);
		return NULL;
	}
	gsize off = 0;
	const char *what = vr_glob_check(glob, &off);
	if (what) {
		/* Escaped: a message stays one line whatever the pattern holds. */
		g_autofree char *quoted = g_strescape(pattern, NULL);
		g_set_error(error, VR_POLICY_ERROR, VR_POLICY_ERROR_PATTERN,
		            "bad pattern '%s': %s at offset %zu; expected a .gitignore glob",
		            quoted, what, off + (gsize)(glob - buf));
		return NULL;
	}
	VrMatch *m = g_new0(VrMatch, 1);
	m->glob = g_strdup(glob);
	m->anchored = anchored;
	m->dir_only = dir_only;
	m->shape = VR_MATCH_GENERAL;
	gboolean special = FALSE;
	for (const char *p = m->glob; *p; p++)
		special |= is_glob_special(*p);
	if (!special) {
		m->shape = VR_MATCH_LITERAL;
		m->key = m->glob;
	} else if (!anchored && m->glob[0] == '*' && m->glob[1]) {
		gboolean rest_special = FALSE;
		for (const char *p = m->glob + 1; *p; p++)
			rest_special |= is_glob_special(*p);
		if (!rest_special) {
			m->shape = VR_MATCH_SUFFIX;
			m->key = m->glob + 1;
		}
	}
	if (m->shape == VR_MATCH_GENERAL && !strchr(m->glob, '[') && !strchr(m->glob, '\\')) {
		const char *slash = strrchr(m->glob, '/');
		const char *last = slash ? slash + 1 : m->glob;
		if (strcmp(last, "**") != 0) {
			gsize n = strlen(last), pre = 0, suf = 0;
			while (pre < n && !is_glob_special(last[pre]))
				pre++;
			while (suf < n - pre && !is_glob_special(last[n - 1 - suf]))
				suf++;
			m->filter = TRUE;
			m->last = last;
			m->last_literal = pre == n;
			m->pre_n = pre;
			m->suf_n = suf;
		}
	}
	return m;
}

/* The quick test of the path's last component against the pattern's. */
static gboolean filter_passes(const VrMatch *m, const char *basename)
{
	if (m->last_literal)
		return strcmp(basename, m->last) == 0;
	gsize n = strlen(basename);
	if (n < m->pre_n + m->suf_n)
		return FALSE;
	return strncmp(basename, m->last, m->pre_n) == 0 &&
	       memcmp(basename + n - m->suf_n, m->last + strlen(m->last) - m->suf_n, m->suf_n) == 0;
}

void vr_match_free(VrMatch *m)
{
	if (!m)
		return;
	g_free(m->glob);
	g_free(m);
}

gboolean vr_match_path(const VrMatch *m, const char *relpath, const char *basename,
                       gboolean is_dir)
{
	if (m->dir_only && !is_dir)
		return FALSE;
	const char *text = m->anchored ? relpath : basename;
	switch (m->shape) {
	case VR_MATCH_LITERAL:
		return strcmp(m->key, text) == 0;
	case VR_MATCH_SUFFIX:
		return g_str_has_suffix(text, m->key);
	case VR_MATCH_GENERAL:
		break;
	}
	if (m->filter && !filter_passes(m, basename))
		return FALSE;
	return vr_wildmatch(m->glob, text);
}

gboolean vr_match_anchored(const VrMatch *m) { return m->anchored; }
gboolean vr_match_dir_only(const VrMatch *m) { return m->dir_only; }
const char *vr_match_glob(const VrMatch *m) { return m->glob; }

VrMatchShape vr_match_shape(const VrMatch *m, const char **ret_key)
{
	if (ret_key)
		*ret_key = m->key;
	return m->shape;
}
