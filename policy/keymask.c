/* Same-length masking of keys' real values in files (policy/keymask.h). */
#include "policy/keymask.h"

#include <errno.h>
#include <string.h>

#include "common/fd-util.h"

#define MAX_RECORD 4096u
#define MAX_RECORDS 4096u

struct VrKeyMask {
	GPtrArray *real;     /* char *, zeroed when freed */
	GPtrArray *sentinel; /* char *, in the same order */
	GPtrArray *paths;    /* char * */
};

static void secret_free(gpointer s)
{
	if (!s)
		return;
	explicit_bzero(s, strlen(s));
	g_free(s);
}

VrKeyMask *vr_keymask_new(void)
{
	VrKeyMask *m = g_new0(VrKeyMask, 1);
	m->real = g_ptr_array_new_with_free_func(secret_free);
	m->sentinel = g_ptr_array_new_with_free_func(g_free);
	m->paths = g_ptr_array_new_with_free_func(g_free);
	return m;
}

void vr_keymask_free(VrKeyMask *m)
{
	if (!m)
		return;
	g_ptr_array_unref(m->real);
	g_ptr_array_unref(m->sentinel);
	g_ptr_array_unref(m->paths);
	g_free(m);
}

VrKeyMask *vr_keymask_copy(const VrKeyMask *m)
{
	VrKeyMask *c = vr_keymask_new();
	for (guint i = 0; i < m->real->len; i++)
		vr_keymask_add_pair(c, m->real->pdata[i], m->sentinel->pdata[i]);
	for (guint i = 0; i < m->paths->len; i++)
		vr_keymask_add_path(c, m->paths->pdata[i]);
	return c;
}

void vr_keymask_add_pair(VrKeyMask *m, const char *real, const char *sentinel)
{
	g_return_if_fail(real && sentinel && *real && strlen(real) == strlen(sentinel));
	for (guint i = 0; i < m->real->len; i++)
		if (strcmp(m->real->pdata[i], real) == 0)
			return;
	g_ptr_array_add(m->real, g_strdup(real));
	g_ptr_array_add(m->sentinel, g_strdup(sentinel));
}

void vr_keymask_add_path(VrKeyMask *m, const char *relpath)
{
	if (!vr_keymask_has_path(m, relpath))
		g_ptr_array_add(m->paths, g_strdup(relpath));
}

guint vr_keymask_pairs(const VrKeyMask *m)
{
	return m ? m->real->len : 0;
}

gboolean vr_keymask_has_path(const VrKeyMask *m, const char *relpath)
{
	for (guint i = 0; m && i < m->paths->len; i++)
		if (strcmp(m->paths->pdata[i], relpath) == 0)
			return TRUE;
	return FALSE;
}

const GPtrArray *vr_keymask_paths(const VrKeyMask *m)
{
	return m->paths;
}

/* Every occurrence of each FROM[i] in the original bytes is found first,
 * then written over with TO[i] in a copy: where occurrences overlap, the
 * later one's bytes win, and no byte of any occurrence keeps its own. */
static guint replace_all(GPtrArray *from, GPtrArray *to, char *buf, gsize len)
{
	if (!from->len || !len)
		return 0;
	char *orig = g_memdup2(buf, len);
	guint n = 0;
	for (guint i = 0; i < from->len; i++) {
		const char *f = from->pdata[i], *t = to->pdata[i];
		gsize fl = strlen(f);
		for (const char *p = orig; fl <= len && p <= orig + len - fl;) {
			const char *hit = memmem(p, (gsize)(orig + len - p), f, fl);
			if (!hit)
				break;
			memcpy(buf + (hit - orig), t, fl);
			n++;
			p = hit + 1; /* a value may overlap itself ("aaaa" in "aaaaa") */
		}
	}
	explicit_bzero(orig, len);
	g_free(orig);
	return n;
}

guint vr_keymask_mask(const VrKeyMask *m, char *buf, gsize len)
{
	return m ? replace_all(m->real, m->sentinel, buf, len) : 0;
}

guint vr_keymask_unmask(const VrKeyMask *m, char *buf, gsize len)
{
	return m ? replace_all(m->sentinel, m->real, buf, len) : 0;
}

/* ---- the hand-over: u32 count of paths, the paths, then (real, sentinel)
 * records to the end; each record a u32 length and its bytes. ---------- */

static int write_record(int fd, const char *s)
{
	guint32 n = (guint32)strlen(s);
	int r = vr_write_all(fd, &n, sizeof n);
	return r < 0 ? r : vr_write_all(fd, s, n);
}

int vr_keymask_write(const VrKeyMask *m, int fd)
{
	guint32 np = m->paths->len;
	int r = vr_write_all(fd, &np, sizeof np);
	for (guint i = 0; r >= 0 && i < np; i++)
		r = write_record(fd, m->paths->pdata[i]);
	for (guint i = 0; r >= 0 && i < m->real->len; i++) {
		r = write_record(fd, m->real->pdata[i]);
		if (r >= 0)
			r = write_record(fd, m->sentinel->pdata[i]);
	}
	return r < 0 ? r : 0;
}

/* One record, or NULL at the end (*ret_r 0) or on an error (*ret_r < 0). */
static char *read_record(int fd, int *ret_r)
{
	guint32 n = 0;
	ssize_t got = vr_read_all(fd, &n, sizeof n);
	*ret_r = 0;
	if (got == 0)
		return NULL;
	if (got != (ssize_t)sizeof n || n == 0 || n > MAX_RECORD) {
		*ret_r = got < 0 ? (int)got : -EBADMSG;
		return NULL;
	}
	char *s = g_malloc0(n + 1);
	got = vr_read_all(fd, s, n);
	if (got != (ssize_t)n || memchr(s, '\0', n)) {
		secret_free(s);
		*ret_r = got < 0 ? (int)got : -EBADMSG;
		return NULL;
	}
	return s;
}

VrKeyMask *vr_keymask_read(int fd, int *ret_r)
{
	g_autoptr(VrKeyMask) m = vr_keymask_new();
	guint32 np = 0;
	ssize_t got = vr_read_all(fd, &np, sizeof np);
	int r = got == (ssize_t)sizeof np && np <= MAX_RECORDS ? 0 : got < 0 ? (int)got : -EBADMSG;
	for (guint32 i = 0; r == 0 && i < np; i++) {
		char *p = read_record(fd, &r);
		if (!p && r == 0)
			r = -EBADMSG;
		if (p)
			g_ptr_array_add(m->paths, p);
	}
	for (guint i = 0; r == 0 && i < MAX_RECORDS; i++) {
		char *real = read_record(fd, &r);
		if (!real)
			break;
		char *sentinel = read_record(fd, &r);
		if (!sentinel || strlen(sentinel) != strlen(real)) {
			r = r < 0 ? r : -EBADMSG;
			secret_free(real);
			g_free(sentinel);
			break;
		}
		g_ptr_array_add(m->real, real);
		g_ptr_array_add(m->sentinel, sentinel);
	}
	*ret_r = r;
	return r < 0 ? NULL : g_steal_pointer(&m);
}
