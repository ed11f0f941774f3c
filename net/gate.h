/* The HTTP filter of a model-server bridge (`--net allow-localhost=PORT`,
 * the http form; see docs/network.md). A bridged port carries the server's
 * whole API (ollama's /api/pull makes the host fetch from anywhere,
 * /api/create reads host paths), so this form lets through only the
 * inference and listing paths, and reads EVERY request of a kept-alive
 * connection, not just the first:
 *
 *   client → gate → server   each request head is parsed strictly and
 *                            written again by the gate (request line, one
 *                            "Name: value" per field, CRLF), its body
 *                            re-framed (Content-Length bytes, or chunks
 *                            re-encoded without extensions or trailers), so
 *                            the server reads exactly what was judged;
 *   server → client          bytes pass unchanged; the gate follows the
 *                            responses' framing only to know when each
 *                            request is answered (audit, and when a refusal
 *                            can be written without cutting a response).
 *
 * Refused: a method other than GET, HEAD, POST; a target that is not origin
 * form or whose path (before '?') is not on the list; both Content-Length
 * and Transfer-Encoding; a Transfer-Encoding other than "chunked"; more than
 * one of either; Upgrade; malformed heads and chunks. After a refusal the
 * gate takes nothing more from the client.
 *
 * Pure: no I/O, no GIO (tests/fuzz/fuzz_http.c drives it with bytes). */
#pragma once
#include <glib.h>

#include "net/scrub.h"

typedef struct VrHttpGate VrHttpGate;

/* A request as a policy sees it, once the gate has parsed and checked it
 * (request line, origin form, every field well-formed, one framing). The
 * policy may edit target, names and values (the gate writes the head from
 * them) and set note (g_malloc'd), which the request's events carry. */
typedef struct {
	const char *method;
	const char *version;
	char *target;     /* as sent */
	const char *path; /* the target before '?' */
	GPtrArray *names, *values; /* the fields in order (char *), the values without surrounding blanks */
	char *note;
	/* The policy's: pairs (what it put in, what was there), each the same
	 * length, that the responses are scrubbed of from now on (a Basic
	 * credential is a key's value in base64, which a server that echoes
	 * the header would hand back). NULL, or char * freed zeroed. */
	GPtrArray *reflected;
} VrGateRequest;

/* Who decides instead of the model-server lists (the terminated tunnels of
 * keys and read-only hosts, net/inject.h). judge returns NULL to let the
 * request through, or the reason (g_malloc'd) with *ret_forbidden TRUE for
 * a well-formed request the policy does not allow (403), FALSE for one it
 * cannot read (400). */
typedef struct {
	char *(*judge)(gpointer data, VrGateRequest *req, gboolean *ret_forbidden);
	/* The reason of a refusal when up_scan found pattern id in a body. */
	char *(*body_refusal)(gpointer data, int id);
} VrGatePolicy;

typedef enum {
	VR_GATE_REQUEST,  /* a request was let through: method, path */
	VR_GATE_REFUSED,  /* a request was refused: method and path when parsed, reason */
	VR_GATE_RESPONSE, /* the oldest open request is answered: method, path, status, bytes_up, bytes_down;
	                   * reason when it was not passed on (a compressed body to scrub: a 502 instead) */
} VrGateEventKind;

typedef struct {
	VrGateEventKind kind;
	char *method;
	char *path;
	char *reason;
	int status;          /* the final response's status; 0 when none was seen */
	guint64 bytes_up;    /* the request as forwarded (head and body) */
	guint64 bytes_down;  /* the response as received */
	gboolean mid_body;   /* REFUSED: part of this request already went to the server */
	gboolean forbidden;  /* REFUSED: well-formed but not allowed (a 403), else malformed (a 400) */
	char *note;          /* the policy's note on the request (VrGateRequest.note) */
	int detected;        /* REFUSED mid-body: the id of the pattern the body scan found, else -1 */
} VrGateEvent;

void vr_gate_event_free(gpointer event);

/* The paths let through (NULL-terminated). */
extern const char *const vr_http_gate_paths[];

VrHttpGate *vr_http_gate_new(void);
/* A gate whose requests policy judges (data is its argument; both outlive
 * the gate). up_scan: request bodies go through a copy of it, held back and
 * refused before a detected pattern leaves (chunked bodies are then
 * re-chunked as the scan lets bytes go); down_scrub: responses, heads and
 * bodies, go through a copy of it, vr_http_gate_from_server_out writing
 * them scrubbed (chunked ones re-chunked, trailers dropped); a response
 * with a body in a Content-Encoding or a Transfer-Encoding coding other
 * than chunked cannot be scrubbed: the client gets a 502 in its place and
 * nothing after it. Either NULL. */
VrHttpGate *vr_http_gate_new_policy(const VrGatePolicy *policy, gpointer data, const VrScrub *up_scan,
                                    const VrScrub *down_scrub);
void vr_http_gate_free(VrHttpGate *g);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(VrHttpGate, vr_http_gate_free)

/* Bytes from the client: what may go to the server is appended to
 * to_server, events (VrGateEvent *) to events. Bytes of an incomplete head
 * stay inside the gate. FALSE once a request has been refused (now or
 * before); nothing after it is taken. */
gboolean vr_http_gate_from_client(VrHttpGate *g, const guint8 *buf, gsize len, GByteArray *to_server,
                                  GPtrArray *events);

/* Bytes from the server (to be passed to the client unchanged). */
void vr_http_gate_from_server(VrHttpGate *g, const guint8 *buf, gsize len, GPtrArray *events);

/* The same, writing what goes to the client into to_client: the bytes
 * unchanged, or scrubbed by down_scrub (the held-back tail of a body comes
 * out at its end, or at the server's close). */
void vr_http_gate_from_server_out(VrHttpGate *g, const guint8 *buf, gsize len, GByteArray *to_client,
                                  GPtrArray *events);

/* The server closed its side: ends a response that runs to the close.
 * to_client (may be NULL) gets what the scrubber still held. */
void vr_http_gate_server_closed(VrHttpGate *g, GPtrArray *events);
void vr_http_gate_server_closed_out(VrHttpGate *g, GByteArray *to_client, GPtrArray *events);

typedef enum {
	VR_GATE_REPLY_NOW,   /* every response is complete: a refusal can be written now */
	VR_GATE_REPLY_WAIT,  /* responses are still on their way: ask again after more server bytes */
	VR_GATE_REPLY_NEVER, /* the response stream cannot be followed (or ends at the close) */
} VrGateReplyState;

VrGateReplyState vr_http_gate_reply_state(const VrHttpGate *g);

/* Requests forwarded whose response has not ended. */
guint vr_http_gate_open_requests(const VrHttpGate *g);
