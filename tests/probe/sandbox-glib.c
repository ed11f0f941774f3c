/* Must not compile: built by the test unit/sandbox-links-no-glib with
 * exactly what sandbox/'s own sources are compiled with (vr_sandbox's
 * usage requirements). If it ever compiles, the sandbox room could include
 * glib, and "no glib after clone" would be a comment again. */
#include <glib.h>

int vr_probe_sandbox_glib(void);
int vr_probe_sandbox_glib(void)
{
	return (int)g_str_hash("");
}
