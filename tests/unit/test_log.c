/* common/log.c: vr_log's lines and vr_log_text, which writes a line of
 * any length (the run's summary) with the same prefix, in one write. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/log.h"

/* What FN wrote on stderr, into BUF. */
static size_t capture(void (*fn)(void), char *buf, size_t size)
{
	FILE *f = tmpfile();
	assert_non_null(f);
	int saved = dup(STDERR_FILENO);
	dup2(fileno(f), STDERR_FILENO);
	fn();
	dup2(saved, STDERR_FILENO);
	close(saved);
	rewind(f);
	size_t n = fread(buf, 1, size - 1, f);
	buf[n] = '\0';
	fclose(f);
	return n;
}

static char long_text[5000];

static void say_long(void) { vr_log_text(VR_LOG_NOTICE, long_text); }
static void say_debug(void) { vr_log_text(VR_LOG_DEBUG, "not shown"); }
static void say_warning(void) { vr_log_text(VR_LOG_WARNING, "careful"); }
static void say_formatted(void) { vr_notice("%d files", 3); }

static void text_is_whole_and_prefixed(void **state)
{
	(void)state;
	memset(long_text, 'x', sizeof long_text - 1);
	static char buf[8192];
	size_t n = capture(say_long, buf, sizeof buf);
	assert_int_equal(n, strlen("vault-run: ") + sizeof long_text - 1 + 1);
	assert_memory_equal(buf, "vault-run: xxx", 14);
	assert_int_equal(buf[n - 1], '\n');
	assert_int_equal(capture(say_debug, buf, sizeof buf), 0);
	capture(say_warning, buf, sizeof buf);
	assert_string_equal(buf, "vault-run: warning: careful\n");
	capture(say_formatted, buf, sizeof buf);
	assert_string_equal(buf, "vault-run: 3 files\n");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(text_is_whole_and_prefixed),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
