/* libFuzzer target: the redaction mask (policy/redact.c). Any bytes in;
 * checks that the length is kept (the buffer is exactly `size` bytes, so
 * ASan catches any overrun), that every '\n' survives where it was (line
 * counts do not shift), and that masking is idempotent on what it already
 * masked. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "policy/policy.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size > (1u << 20))
		return 0;
	char *buf = malloc(size ? size : 1);
	memcpy(buf, data, size);
	vr_redact_mask(buf, size);
	for (size_t i = 0; i < size; i++)
		if ((data[i] == '\n') != (buf[i] == '\n'))
			abort();
	char *again = malloc(size ? size : 1);
	memcpy(again, buf, size);
	vr_redact_mask(again, size);
	if (memcmp(again, buf, size) != 0)
		abort();
	free(again);
	free(buf);
	return 0;
}
