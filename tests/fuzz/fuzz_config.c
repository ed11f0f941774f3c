/* libFuzzer target: the config parser never crashes, and every error is one
 * line naming the file. The first byte picks the source (user, project,
 * --policy) so the project-only checks are fuzzed too. */
#include <stdint.h>
#include <string.h>

#include "policy/config.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1)
		return 0;
	VrConfigSource source = (VrConfigSource)(data[0] % 3);
	VrConfig *config = vr_config_new();
	GError *error = NULL;
	if (!vr_config_load_data(config, (const char *)data + 1, size - 1, "fuzz", source, &error)) {
		if (!error || !g_str_has_prefix(error->message, "fuzz:") || strchr(error->message, '\n'))
			__builtin_trap();
		g_error_free(error);
	} else {
		/* Whatever loaded must decide without crashing. */
		vr_policy_decide(config->policy, "a/b/.env", FALSE);
		vr_policy_dir_is_rule_sensitive(config->policy, "a/b");
	}
	vr_config_free(config);
	return 0;
}
