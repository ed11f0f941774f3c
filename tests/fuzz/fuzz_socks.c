/* libFuzzer target: the SOCKS5 parsers of the proxy (net/parse.c)
 * on the bytes a client sends: the greeting, then the request right after
 * it. Checks, beyond "no crash": a message's length never passes the bytes
 * given; every shorter prefix of a complete message asks for more bytes
 * (the parser never decides on bytes it has not seen); a name never holds a
 * NUL (it would cut the checked name short of the one used). */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "net/parse.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size > 4096)
		return 0;
	gboolean no_auth = FALSE;
	gssize g = vr_socks5_parse_greeting(data, size, &no_auth);
	if (g > (gssize)size || (g < 0 && g != -EPROTO))
		abort();
	for (gsize n = 0; g > 0 && n < (gsize)g; n++) {
		gboolean dummy;
		if (vr_socks5_parse_greeting(data, n, &dummy) != 0)
			abort();
	}
	const guint8 *req = g > 0 ? data + g : data;
	gsize len = g > 0 ? size - (gsize)g : size;
	VrSocksRequest r = {0};
	gssize n = vr_socks5_parse_request(req, len, &r);
	if (n > (gssize)len || (n < 0 && n != -EPROTO && n != -EAFNOSUPPORT))
		abort();
	if (n > 0) {
		if (!r.host || (req[3] == 3 && strlen(r.host) != req[4]))
			abort();
		for (gsize k = 0; k < (gsize)n; k++) {
			VrSocksRequest p = {0};
			if (vr_socks5_parse_request(req, k, &p) != 0 || p.host)
				abort();
		}
	}
	g_free(r.host);
	return 0;
}
