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

typedef struct VrHttpGate VrHttpGate;

typedef enum {
	VR_GATE_REQUEST,  /* a request was let through: method, path */
	VR_GATE_REFUSED,  /* a request was refused: method and path when parsed, reason */
	VR_GATE_RESPONSE, /* the oldest open request is answered: method, path, status, bytes_up, bytes_down */
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
} VrGateEvent;

void vr_gate_event_free(gpointer event);

/* The paths let through (NULL-terminated). */
extern const char *const vr_http_gate_paths[];

VrHttpGate *vr_http_gate_new(void);
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

/* The server closed its side: ends a response that runs to the close. */
void vr_http_gate_server_closed(VrHttpGate *g, GPtrArray *events);

typedef enum {
	VR_GATE_REPLY_NOW,   /* every response is complete: a refusal can be written now */
	VR_GATE_REPLY_WAIT,  /* responses are still on their way: ask again after more server bytes */
	VR_GATE_REPLY_NEVER, /* the response stream cannot be followed (or ends at the close) */
} VrGateReplyState;

VrGateReplyState vr_http_gate_reply_state(const VrHttpGate *g);

/* Requests forwarded whose response has not ended. */
guint vr_http_gate_open_requests(const VrHttpGate *g);
