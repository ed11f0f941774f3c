/* See test-hook.h. No glib: the sandbox side may call it. */
#include "common/test-hook.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Whether the comma-separated LIST names PHASE. */
static int listed(const char *list, const char *phase)
{
	size_t n = strlen(phase);
	for (const char *p = list; *p;) {
		const char *end = strchr(p, ',');
		size_t len = end ? (size_t)(end - p) : strlen(p);
		if (len == n && strncmp(p, phase, n) == 0)
			return 1;
		if (!end)
			break;
		p = end + 1;
	}
	return 0;
}

void vr_test_pause(const char *phase)
{
	const char *list = secure_getenv("VR_TEST_PAUSE");
	if (!list || !listed(list, phase))
		return;
	char line[128];
	int n = snprintf(line, sizeof line, "vault-run: test hook: %s, pid %d\n", phase, (int)getpid());
	if (n > 0)
		(void)!write(STDERR_FILENO, line, (size_t)n < sizeof line ? (size_t)n : sizeof line - 1);
	raise(SIGSTOP);
}

int vr_test_startup_timeout_ms(int default_ms)
{
	const char *s = secure_getenv("VR_TEST_STARTUP_TIMEOUT_MS");
	if (!s || !*s)
		return default_ms;
	char *end;
	long v = strtol(s, &end, 10);
	return *end || v < 1 || v > default_ms ? default_ms : (int)v;
}
