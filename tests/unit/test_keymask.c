/* Unit tests of policy/keymask.c: same-length masking of key files' real
 * values (docs/network.md "Keys in files"). The view serves a key file from
 * its masked image and writes go through that image (fusefs/keyfile.c):
 * what these check is what every read and write path rests on. The values
 * are made up. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <glib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "policy/keymask.h"

#define REAL_A "sk-ant-oat01-RealAccess0123456789abcdef"
#define SENT_A "sk-ant-oat01-QxzwSentin9876543210zyxwvu"
#define REAL_R "rt-RealRefresh0123456789ABCDEFGHIJ"
#define SENT_R "rt-SnmqQwertyu5555544444ZZZZZYYYYY"

static VrKeyMask *two(void)
{
	VrKeyMask *m = vr_keymask_new();
	vr_keymask_add_pair(m, REAL_A, SENT_A);
	vr_keymask_add_pair(m, REAL_R, SENT_R);
	return m;
}

/* No window of WIN bytes of REAL appears anywhere in buf. */
static void assert_no_part(const char *buf, size_t len, const char *real, size_t win)
{
	size_t n = strlen(real);
	for (size_t i = 0; i + win <= n; i++)
		assert_null(memmem(buf, len, real + i, win));
}

static void test_twice_same_length(void **state)
{
	(void)state;
	g_autoptr(VrKeyMask) m = two();
	g_autofree char *text = g_strdup("{\"a\":\"" REAL_A "\",\"copy\":\"" REAL_A "\",\"r\":\"" REAL_R "\"}");
	size_t len = strlen(text);
	assert_int_equal(vr_keymask_mask(m, text, len), 3);
	assert_int_equal(strlen(text), len);
	assert_string_equal(text, "{\"a\":\"" SENT_A "\",\"copy\":\"" SENT_A "\",\"r\":\"" SENT_R "\"}");
	assert_int_equal(vr_keymask_unmask(m, text, len), 3);
	assert_string_equal(text, "{\"a\":\"" REAL_A "\",\"copy\":\"" REAL_A "\",\"r\":\"" REAL_R "\"}");
}

/* Two values that overlap in the text (the end of one is the start of the
 * other), and one that overlaps itself: no byte of either survives. */
static void test_overlapping(void **state)
{
	(void)state;
	const char *a = "AAAAbbbbCCCCdddd1234", *b = "1234EEEEffffGGGGhhhh";
	g_autoptr(VrKeyMask) m = vr_keymask_new();
	vr_keymask_add_pair(m, a, "xxxxxxxxxxxxxxxxxxxx");
	vr_keymask_add_pair(m, b, "yyyyyyyyyyyyyyyyyyyy");
	char text[] = "<AAAAbbbbCCCCdddd1234EEEEffffGGGGhhhh>";
	size_t len = strlen(text);
	vr_keymask_mask(m, text, len);
	assert_int_equal(strlen(text), len);
	assert_no_part(text, len, a, 2);
	assert_no_part(text, len, b, 2);
	assert_true(text[0] == '<' && text[len - 1] == '>');

	const char *self = "xyxyxyxyxyxyxyxy";
	g_autoptr(VrKeyMask) s = vr_keymask_new();
	vr_keymask_add_pair(s, self, "QQQQQQQQQQQQQQQQ");
	char t2[] = "xyxyxyxyxyxyxyxyxy!";
	vr_keymask_mask(s, t2, strlen(t2));
	assert_string_equal(t2, "QQQQQQQQQQQQQQQQQQ!");
}

/* The view answers READs from the masked image: a value split across any
 * read boundary arrives as the sentinel's bytes, whatever the read size. */
static void test_read_boundaries(void **state)
{
	(void)state;
	g_autoptr(VrKeyMask) m = two();
	const char *orig = "head " REAL_A " mid " REAL_R " tail " REAL_A;
	size_t len = strlen(orig);
	g_autofree char *img = g_strdup(orig);
	vr_keymask_mask(m, img, len);
	for (size_t size = 1; size <= len; size++) {
		GString *got = g_string_new(NULL);
		for (size_t off = 0; off < len; off += size)
			g_string_append_len(got, img + off, (gssize)MIN(size, len - off));
		assert_int_equal(got->len, len);
		assert_memory_equal(got->str, img, len);
		/* Past the prefix a sentinel keeps (sk-ant-oat01-, rt-). */
		assert_no_part(got->str, got->len, REAL_A + 13, 6);
		assert_no_part(got->str, got->len, REAL_R + 3, 6);
		g_string_free(got, TRUE);
	}
}

/* Writes go to the image, the host gets it unmasked: written back in
 * pieces of any size (a sentinel split across two writes), the host ends
 * with the real values, and never holds part of one before the whole
 * sentinel is in. */
static void test_write_back_in_pieces(void **state)
{
	(void)state;
	g_autoptr(VrKeyMask) m = two();
	const char *host0 = "{\"a\":\"" REAL_A "\",\"other\":2,\"r\":\"" REAL_R "\"}";
	size_t len = strlen(host0);
	g_autofree char *img = g_strdup(host0);
	vr_keymask_mask(m, img, len);
	for (size_t size = 1; size <= len; size++) {
		g_autofree char *image = g_malloc0(len + 1);
		g_autofree char *host = g_malloc0(len + 1);
		for (size_t off = 0; off < len; off += size) {
			size_t n = MIN(size, len - off);
			memcpy(image + off, img + off, n);
			memcpy(host, image, len);
			vr_keymask_unmask(m, host, off + n);
			/* Either the whole real value or none of it beyond its
			 * first (shared) prefix. */
			if (!strstr(host, REAL_A))
				assert_no_part(host, off + n, REAL_A + 13, 6);
		}
		assert_string_equal(host, host0);
	}
	/* The concealed refresh token's sentinel, written back, is the host's
	 * real refresh token again. */
	char t[] = "{\"r\":\"" SENT_R "\"}";
	vr_keymask_unmask(m, t, strlen(t));
	assert_string_equal(t, "{\"r\":\"" REAL_R "\"}");
	/* A sentinel changed by one byte is not the value's. */
	char u[] = "{\"r\":\"" SENT_R "\"}";
	u[10] = 'z';
	assert_int_equal(vr_keymask_unmask(m, u, strlen(u)), 0);
}

static void test_hand_over(void **state)
{
	(void)state;
	g_autoptr(VrKeyMask) m = two();
	vr_keymask_add_path(m, ".credentials.json");
	vr_keymask_add_path(m, "sub/auth.json");
	int fd = memfd_create("t", MFD_CLOEXEC);
	assert_true(fd >= 0);
	assert_int_equal(vr_keymask_write(m, fd), 0);
	lseek(fd, 0, SEEK_SET);
	int r = 1;
	g_autoptr(VrKeyMask) back = vr_keymask_read(fd, &r);
	assert_int_equal(r, 0);
	assert_non_null(back);
	assert_int_equal(vr_keymask_pairs(back), 2);
	assert_true(vr_keymask_has_path(back, "sub/auth.json"));
	assert_false(vr_keymask_has_path(back, "auth.json"));
	char t[] = REAL_R;
	vr_keymask_mask(back, t, strlen(t));
	assert_string_equal(t, SENT_R);
	/* Cut short: refused, not half read. */
	assert_int_equal(ftruncate(fd, 20), 0);
	lseek(fd, 0, SEEK_SET);
	assert_null(vr_keymask_read(fd, &r));
	assert_true(r < 0);
	close(fd);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_twice_same_length), cmocka_unit_test(test_overlapping),
		cmocka_unit_test(test_read_boundaries), cmocka_unit_test(test_write_back_in_pieces),
		cmocka_unit_test(test_hand_over),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
