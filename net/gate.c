/* The HTTP filter of a model-server bridge (see net/gate.h). */
#include "net/gate.h"

#include <string.h>

#include "net/keys.h"
#include "net/parse.h"

#define MAX_FIELDS 100
#define MAX_LINE 4096                 /* a chunk-size line or a trailer line */
#define MAX_RESPONSE_HEAD (64 * 1024) /* beyond this the responses are not followed */
#define MAX_LENGTH_DIGITS 18          /* < 2^63 */

/* Inference and listing, nothing that makes the server fetch, load, copy,
 * delete or read a host path (/api/pull, /api/create, /api/copy,
 * /api/delete, /api/push, /api/blobs, /api/show with its modelfile…). */
const char *const vr_http_gate_paths[] = {
	"/v1/chat/completions", "/v1/completions", "/v1/embeddings", "/v1/models", "/v1/responses",
	"/api/chat",            "/api/generate",   "/api/tags",      "/api/embed", "/api/embeddings",
	NULL,
};

static const char *const allowed_methods[] = {"GET", "HEAD", "POST", NULL};

typedef enum {
	C_HEAD,       /* between requests, or inside a head (cbuf) */
	C_BODY,       /* c_remaining bytes of a Content-Length body */
	C_CHUNK_LINE, /* chunk-size [; ext] CRLF (cbuf) */
	C_CHUNK_DATA, /* c_remaining bytes of chunk data */
	C_CHUNK_END,  /* the CRLF after chunk data (cbuf) */
	C_TRAILER,    /* trailer lines up to the empty line (cbuf) */
	C_REFUSED,
} ClientState;

typedef enum {
	S_HEAD, /* a response head (sbuf) */
	S_BODY,
	S_CHUNK_LINE,
	S_CHUNK_DATA,
	S_CHUNK_END,
	S_TRAILER,
	S_CLOSE, /* the body runs to the server's close */
	S_LOST,  /* the stream cannot be followed (unsolicited response, 101, bad framing) */
	S_CUT,   /* scrubbing: a body the scrubber cannot read; nothing more goes to the client */
} ServerState;

typedef struct {
	char *method, *path;
	gboolean no_body_response; /* HEAD */
	guint64 bytes_up, bytes_down;
	int status;
	char *note; /* the policy's (VrGateRequest.note) */
	char *cut;  /* why its response was not passed on (S_CUT), or NULL */
	gboolean request_done, response_done;
} Exchange;

struct VrHttpGate {
	ClientState cs;
	GByteArray *cbuf;
	guint64 c_remaining;
	Exchange *current; /* the request being forwarded, NULL between requests */

	ServerState ss;
	GByteArray *sbuf;
	guint64 s_remaining;
	gboolean s_complete; /* the oldest open request's response just ended */
	GQueue open; /* Exchange *, oldest first: forwarded and not fully answered */

	const VrGatePolicy *policy; /* NULL: the model-server lists */
	gpointer policy_data;
	VrScrub *up_scan;    /* request bodies: held back, refused on a hit; NULL: as they come */
	VrScrub *down_scrub; /* responses: scrubbed and re-chunked; NULL: unchanged */
	gboolean c_chunked;  /* the current request's body is chunked */
	GByteArray *tmp;     /* scratch for what a scan lets go */
};

void vr_gate_event_free(gpointer event)
{
	VrGateEvent *e = event;
	if (!e)
		return;
	g_free(e->method);
	g_free(e->path);
	g_free(e->reason);
	g_free(e->note);
	g_free(e);
}

static void exchange_free(Exchange *x)
{
	g_free(x->cut);
	g_free(x->method);
	g_free(x->path);
	g_free(x->note);
	g_free(x);
}

VrHttpGate *vr_http_gate_new(void)
{
	VrHttpGate *g = g_new0(VrHttpGate, 1);
	g->cbuf = g_byte_array_new();
	g->sbuf = g_byte_array_new();
	g->tmp = g_byte_array_new();
	g_queue_init(&g->open);
	return g;
}

VrHttpGate *vr_http_gate_new_policy(const VrGatePolicy *policy, gpointer data, const VrScrub *up_scan,
                                    const VrScrub *down_scrub)
{
	VrHttpGate *g = vr_http_gate_new();
	g->policy = policy;
	g->policy_data = data;
	if (up_scan && vr_scrub_count(up_scan))
		g->up_scan = vr_scrub_copy(up_scan);
	if (down_scrub && vr_scrub_count(down_scrub))
		g->down_scrub = vr_scrub_copy(down_scrub);
	return g;
}

void vr_http_gate_free(VrHttpGate *g)
{
	if (!g)
		return;
	if (g->current && g->current->response_done)
		exchange_free(g->current); /* answered already, so no longer in open */
	g_queue_clear_full(&g->open, (GDestroyNotify)exchange_free);
	g_byte_array_unref(g->cbuf);
	g_byte_array_unref(g->sbuf);
	g_byte_array_unref(g->tmp);
	vr_scrub_free(g->up_scan);
	vr_scrub_free(g->down_scrub);
	g_free(g);
}

static VrGateEvent *event_new(GPtrArray *events, VrGateEventKind kind, const Exchange *x)
{
	VrGateEvent *e = g_new0(VrGateEvent, 1);
	e->kind = kind;
	if (x) {
		e->method = g_strdup(x->method);
		e->path = g_strdup(x->path);
		e->status = x->status;
		e->bytes_up = x->bytes_up;
		e->bytes_down = x->bytes_down;
		e->note = g_strdup(x->note);
		e->reason = g_strdup(x->cut);
	}
	e->detected = -1;
	g_ptr_array_add(events, e);
	return e;
}

/* ---- small text helpers ------------------------------------------------- */

static gboolean in_list(const char *const *list, const char *s)
{
	for (; *list; list++)
		if (strcmp(*list, s) == 0)
			return TRUE;
	return FALSE;
}

static gboolean is_token(const char *s)
{
	if (!*s)
		return FALSE;
	for (; *s; s++)
		if (!g_ascii_isalnum(*s) && !strchr("!#$%&'*+-.^_`|~", *s))
			return FALSE;
	return TRUE;
}

/* 1*DIGIT, at most MAX_LENGTH_DIGITS of them. */
static gboolean parse_length(const char *s, guint64 *ret)
{
	size_t n = strlen(s);
	if (n == 0 || n > MAX_LENGTH_DIGITS || strspn(s, "0123456789") != n)
		return FALSE;
	*ret = g_ascii_strtoull(s, NULL, 10);
	return TRUE;
}

/* "NAME: value" (already vr_http_field_is_valid): the name, and the value
 * without the whitespace around it. */
static void split_field(const char *line, char **ret_name, char **ret_value)
{
	const char *colon = strchr(line, ':');
	*ret_name = g_strndup(line, (gsize)(colon - line));
	*ret_value = g_strstrip(g_strdup(colon + 1));
}

/* Collects bytes into acc up to and including the next LF. TRUE (with
 * *used) once acc holds a whole line; FALSE when more bytes are needed,
 * or (with *too_long) when the line passes max. */
static gboolean take_line(GByteArray *acc, const guint8 *buf, gsize len, gsize max, gsize *used,
                          gboolean *too_long)
{
	const guint8 *nl = memchr(buf, '\n', len);
	gsize n = nl ? (gsize)(nl - buf) + 1 : len;
	*used = n;
	*too_long = acc->len + n > max;
	if (*too_long)
		return FALSE;
	g_byte_array_append(acc, buf, (guint)n);
	return nl != NULL;
}

/* A chunk-size line: 1*HEXDIG, then nothing or BWS ";" extensions, then
 * CRLF (strict: a chunk line is where smuggling hides). Its size, or -1. */
static gint64 parse_chunk_line(const GByteArray *line, gboolean strict)
{
	gsize len = line->len;
	const char *s = (const char *)line->data;
	if (len >= 2 && s[len - 2] == '\r')
		len -= 2;
	else if (strict)
		return -1;
	else
		len -= 1;
	gsize digits = 0;
	guint64 size = 0;
	while (digits < len && g_ascii_isxdigit(s[digits])) {
		if (digits == 15)
			return -1; /* past 2^60: no model request is that big */
		size = size * 16 + (guint64)g_ascii_xdigit_value(s[digits]);
		digits++;
	}
	if (digits == 0)
		return -1;
	gsize i = digits;
	while (i < len && (s[i] == ' ' || s[i] == '\t'))
		i++;
	if (i < len && s[i] != ';')
		return -1;
	for (; i < len; i++)
		if (((unsigned char)s[i] < 0x20 && s[i] != '\t') || s[i] == 0x7f || s[i] == '\r' || s[i] == '\0')
			return -1;
	return (gint64)size;
}

/* ---- client → server ---------------------------------------------------- */

static gboolean refuse(VrHttpGate *g, GPtrArray *events, const char *method, const char *path, char *reason,
                       gboolean mid_body)
{
	VrGateEvent *e = event_new(events, VR_GATE_REFUSED, NULL);
	e->method = g_strdup(method);
	e->path = g_strdup(path);
	e->reason = reason;
	e->mid_body = mid_body;
	g->cs = C_REFUSED;
	return FALSE;
}

/* A well-formed request the policy does not allow. */
static gboolean forbid(VrHttpGate *g, GPtrArray *events, const char *method, const char *path, char *reason)
{
	refuse(g, events, method, path, reason, FALSE);
	((VrGateEvent *)events->pdata[events->len - 1])->forbidden = TRUE;
	return FALSE;
}

static gboolean refuse_body(VrHttpGate *g, GPtrArray *events, const char *why)
{
	Exchange *x = g->current;
	refuse(g, events, x ? x->method : NULL, x ? x->path : NULL, g_strdup(why), TRUE);
	if (x)
		((VrGateEvent *)events->pdata[events->len - 1])->bytes_up = x->bytes_up;
	return FALSE;
}

static void request_done(VrHttpGate *g)
{
	Exchange *x = g->current;
	g->current = NULL;
	g->cs = C_HEAD;
	x->request_done = TRUE;
	if (x->response_done)
		exchange_free(x);
}

static void emit(VrHttpGate *g, GByteArray *out, const void *buf, gsize len)
{
	g_byte_array_append(out, buf, (guint)len);
	g->current->bytes_up += len;
}

/* What the body scan let go (g->tmp), as it is or as one chunk. */
static void body_piece(VrHttpGate *g, GByteArray *out)
{
	if (!g->tmp->len)
		return;
	if (g->c_chunked) {
		char hex[32];
		int n = g_snprintf(hex, sizeof hex, "%x\r\n", g->tmp->len);
		emit(g, out, hex, (gsize)n);
	}
	emit(g, out, g->tmp->data, g->tmp->len);
	if (g->c_chunked)
		emit(g, out, "\r\n", 2);
	g_byte_array_set_size(g->tmp, 0);
}

/* Body bytes of the current request: as they come, or through the scan.
 * FALSE: the scan found a pattern, and the request is refused before any
 * byte of it left. */
static gboolean body_out(VrHttpGate *g, GByteArray *out, const guint8 *buf, gsize n, GPtrArray *events)
{
	if (!g->up_scan) {
		emit(g, out, buf, n);
		return TRUE;
	}
	int id = vr_scrub_feed(g->up_scan, buf, n, g->tmp);
	body_piece(g, out);
	if (id < 0)
		return TRUE;
	g_autofree char *why = g->policy && g->policy->body_refusal ? g->policy->body_refusal(g->policy_data, id)
	                                                            : g_strdup("a refused pattern in the body");
	refuse_body(g, events, why);
	((VrGateEvent *)events->pdata[events->len - 1])->detected = id;
	return FALSE;
}

/* The end of the current request's body: what the scan still held. */
static void body_end(VrHttpGate *g, GByteArray *out)
{
	if (!g->up_scan)
		return;
	vr_scrub_flush(g->up_scan, g->tmp);
	body_piece(g, out);
}

/* The model-server lists (a gate without a policy). FALSE: refused. */
static gboolean model_server_allows(VrHttpGate *g, GPtrArray *events, const char *method, const char *path)
{
	if (!in_list(allowed_methods, method))
		return forbid(g, events, method, path,
		              g_strdup_printf("method %s is not allowed on a model-server port (GET, HEAD, POST)", method));
	if (!in_list(vr_http_gate_paths, path))
		return forbid(g, events, method, path,
		              g_strdup_printf("%s is not an inference or listing path of a model server", path));
	return TRUE;
}

/* The policy's verdict on a checked request; it may edit req. FALSE:
 * refused. */
static gboolean policy_allows(VrHttpGate *g, GPtrArray *events, VrGateRequest *req)
{
	gboolean forbidden = FALSE;
	char *why = g->policy->judge(g->policy_data, req, &forbidden);
	if (!why)
		return TRUE;
	if (forbidden)
		forbid(g, events, req->method, req->path, why);
	else
		refuse(g, events, req->method, req->path, why, FALSE);
	((VrGateEvent *)events->pdata[events->len - 1])->note = g_steal_pointer(&req->note);
	return FALSE;
}

static void gate_request_clear(VrGateRequest *req)
{
	g_free(req->target);
	g_ptr_array_unref(req->names);
	/* Values may hold a key the policy put in: zeroed. */
	g_ptr_array_unref(req->values);
	g_free(req->note);
	if (req->reflected)
		g_ptr_array_unref(req->reflected);
}

/* What the policy put into the request, to be scrubbed out of what comes
 * back as what was there. */
static void reflected_scrub(VrHttpGate *g, const VrGateRequest *req)
{
	for (guint i = 0; g->down_scrub && req->reflected && i + 1 < req->reflected->len; i += 2)
		vr_scrub_add(g->down_scrub, req->reflected->pdata[i], req->reflected->pdata[i + 1], -1);
}

/* A complete request head in g->cbuf: judge it, write it again. */
static gboolean request_head(VrHttpGate *g, GByteArray *out, GPtrArray *events)
{
	g_auto(GStrv) lines = vr_http_head_lines((const char *)g->cbuf->data, g->cbuf->len);
	if (!lines || !lines[0])
		return refuse(g, events, NULL, NULL, g_strdup("malformed request head (a control byte or a bare CR)"),
		              FALSE);
	g_auto(GStrv) rl = g_strsplit(lines[0], " ", 4);
	if (g_strv_length(rl) != 3 || !is_token(rl[0]) ||
	    (strcmp(rl[2], "HTTP/1.1") != 0 && strcmp(rl[2], "HTTP/1.0") != 0))
		return refuse(g, events, NULL, NULL, g_strdup("malformed request line (METHOD /PATH HTTP/1.1)"),
		              FALSE);
	const char *method = rl[0], *target = rl[1];
	g_autofree char *path = g_strndup(target, strcspn(target, "?"));
	if (target[0] != '/')
		return refuse(g, events, method, path,
		              g_strdup(g->policy ? "the target must be a path (origin form): no absolute form, no CONNECT "
		                                   "inside the tunnel"
		                                 : "the target must be a path (origin form)"),
		              FALSE);
	for (const char *p = target; *p; p++)
		if ((unsigned char)*p <= 0x20 || (unsigned char)*p >= 0x7f || *p == '#')
			return refuse(g, events, method, path, g_strdup("a byte in the target that HTTP does not allow"),
			              FALSE);
	if (!g->policy && !model_server_allows(g, events, method, path))
		return FALSE;

	VrGateRequest req = {method, rl[2], g_strdup(target), path, g_ptr_array_new_with_free_func(g_free),
	                     g_ptr_array_new_with_free_func(vr_net_secret_free), NULL, NULL};
	guint n_length = 0, n_te = 0, n_fields = 0;
	guint64 length = 0;
	gboolean chunked = FALSE, ok = TRUE;
	for (char **l = lines + 1; *l && ok; l++) {
		if (!vr_http_field_is_valid(*l)) {
			ok = refuse(g, events, method, path, g_strdup("a header field that is not NAME: VALUE"), FALSE);
			break;
		}
		if (++n_fields > MAX_FIELDS) {
			ok = refuse(g, events, method, path, g_strdup("too many header fields"), FALSE);
			break;
		}
		char *name = NULL, *value = NULL;
		split_field(*l, &name, &value);
		g_ptr_array_add(req.names, name);
		g_ptr_array_add(req.values, value);
		if (g_ascii_strcasecmp(name, "Content-Length") == 0) {
			if (++n_length > 1 || !parse_length(value, &length))
				ok = refuse(g, events, method, path, g_strdup("Content-Length must be given once, as digits"),
				            FALSE);
		} else if (g_ascii_strcasecmp(name, "Transfer-Encoding") == 0) {
			if (++n_te > 1 || g_ascii_strcasecmp(value, "chunked") != 0)
				ok = refuse(g, events, method, path,
				            g_strdup("Transfer-Encoding must be given once, as chunked"), FALSE);
			chunked = TRUE;
		} else if (g_ascii_strcasecmp(name, "Upgrade") == 0) {
			/* h2c or a websocket: after the switch nothing is read. */
			ok = refuse(g, events, method, path,
			            g_strdup(g->policy ? "Upgrade is not allowed in a terminated tunnel (h2c, websockets)"
			                               : "Upgrade is not allowed on a model-server port"),
			            FALSE);
		}
	}
	if (ok && n_length && n_te)
		/* The request smuggling shape: two framings, and whoever reads
		 * the other one sees a second request inside the body. */
		ok = refuse(g, events, method, path,
		            g_strdup("both Content-Length and Transfer-Encoding (request smuggling)"), FALSE);
	if (ok && chunked && strcmp(rl[2], "HTTP/1.0") == 0)
		ok = refuse(g, events, method, path, g_strdup("Transfer-Encoding in an HTTP/1.0 request"), FALSE);
	if (ok && g->policy)
		ok = policy_allows(g, events, &req);
	if (!ok) {
		gate_request_clear(&req);
		return FALSE;
	}

	Exchange *x = g_new0(Exchange, 1);
	x->method = g_strdup(method);
	x->path = g_strdup(path);
	x->note = g_steal_pointer(&req.note);
	x->no_body_response = strcmp(method, "HEAD") == 0;
	reflected_scrub(g, &req);
	g->current = x;
	g_queue_push_tail(&g->open, x);

	/* Written again: one space, CRLF, "Name: value": the server reads the
	 * head this gate judged, whatever its own tolerance. */
	g_autoptr(GString) h = g_string_new(NULL);
	g_string_append_printf(h, "%s %s %s\r\n", method, req.target, rl[2]);
	for (guint i = 0; i < req.names->len; i++)
		g_string_append_printf(h, "%s: %s\r\n", (char *)req.names->pdata[i], (char *)req.values->pdata[i]);
	g_string_append(h, "\r\n");
	emit(g, out, h->str, h->len);
	explicit_bzero(h->str, h->len);
	gate_request_clear(&req);
	event_new(events, VR_GATE_REQUEST, x);

	g->c_chunked = chunked;
	if (chunked) {
		g->cs = C_CHUNK_LINE;
	} else if (length) {
		g->cs = C_BODY;
		g->c_remaining = length;
	} else {
		request_done(g);
	}
	return TRUE;
}

/* Takes head bytes; returns how many of buf were used (all of it unless the
 * head ended inside). */
static gsize client_head(VrHttpGate *g, const guint8 *buf, gsize len, GByteArray *out, GPtrArray *events)
{
	gsize skipped = 0;
	if (g->cbuf->len == 0) {
		/* RFC 9112 2.2: empty lines before a request line are ignored (some
		 * clients send a CRLF after a body). */
		while (skipped < len && (buf[skipped] == '\r' || buf[skipped] == '\n'))
			skipped++;
		if (skipped == len)
			return len;
	}
	gsize before = g->cbuf->len;
	gsize take = MIN(len - skipped, (gsize)VR_HTTP_MAX_HEAD + 1 - before);
	g_byte_array_append(g->cbuf, buf + skipped, (guint)take);
	gsize head = vr_http_head_length((const char *)g->cbuf->data, g->cbuf->len);
	if (!head) {
		if (g->cbuf->len > VR_HTTP_MAX_HEAD)
			refuse(g, events, NULL, NULL, g_strdup("request head too large"), FALSE);
		return skipped + take;
	}
	g_byte_array_set_size(g->cbuf, (guint)head);
	request_head(g, out, events);
	g_byte_array_set_size(g->cbuf, 0);
	return skipped + (head - before);
}

static gsize client_line(VrHttpGate *g, const guint8 *buf, gsize len, GByteArray *out, GPtrArray *events)
{
	gsize used;
	gboolean too_long;
	if (!take_line(g->cbuf, buf, len, MAX_LINE, &used, &too_long)) {
		if (too_long)
			refuse_body(g, events, "a chunk line or trailer too long");
		return used;
	}
	GByteArray *line = g->cbuf;
	if (g->cs == C_CHUNK_LINE) {
		gint64 size = parse_chunk_line(line, TRUE);
		if (size < 0) {
			refuse_body(g, events, "malformed chunk size line");
		} else if (size == 0) {
			g->cs = C_TRAILER;
		} else {
			/* Re-framed: the size alone, no extensions. A scanned body is
			 * re-chunked as the scan lets bytes go (body_piece). */
			char hex[32];
			int n = g_snprintf(hex, sizeof hex, "%" G_GINT64_MODIFIER "x\r\n", size);
			if (!g->up_scan)
				emit(g, out, hex, (gsize)n);
			g->c_remaining = (guint64)size;
			g->cs = C_CHUNK_DATA;
		}
	} else if (g->cs == C_CHUNK_END) {
		if (line->len != 2 || line->data[0] != '\r') {
			refuse_body(g, events, "chunk data not followed by CRLF");
		} else {
			if (!g->up_scan)
				emit(g, out, "\r\n", 2);
			g->cs = C_CHUNK_LINE;
		}
	} else { /* C_TRAILER */
		gboolean crlf = line->len >= 2 && line->data[line->len - 2] == '\r';
		g_autofree char *text = g_strndup((const char *)line->data, line->len - (crlf ? 2 : 1));
		if (!crlf || memchr(line->data, '\0', line->len) || strchr(text, '\r')) {
			refuse_body(g, events, "malformed trailer");
		} else if (!*text) {
			/* Trailers are not forwarded: a field after the body is one
			 * more place for a server to read something we did not. */
			body_end(g, out);
			emit(g, out, "0\r\n\r\n", 5);
			request_done(g);
		} else if (!vr_http_field_is_valid(text)) {
			refuse_body(g, events, "malformed trailer");
		}
	}
	g_byte_array_set_size(g->cbuf, 0);
	return used;
}

gboolean vr_http_gate_from_client(VrHttpGate *g, const guint8 *buf, gsize len, GByteArray *to_server,
                                  GPtrArray *events)
{
	gsize i = 0;
	while (i < len && g->cs != C_REFUSED) {
		switch (g->cs) {
		case C_HEAD: i += client_head(g, buf + i, len - i, to_server, events); break;
		case C_BODY:
		case C_CHUNK_DATA: {
			gsize n = (gsize)MIN((guint64)(len - i), g->c_remaining);
			if (!body_out(g, to_server, buf + i, n, events))
				break;
			g->c_remaining -= n;
			i += n;
			if (g->c_remaining == 0) {
				if (g->cs == C_BODY) {
					body_end(g, to_server);
					request_done(g);
				} else
					g->cs = C_CHUNK_END;
			}
			break;
		}
		case C_CHUNK_LINE:
		case C_CHUNK_END:
		case C_TRAILER: i += client_line(g, buf + i, len - i, to_server, events); break;
		case C_REFUSED: break;
		}
	}
	return g->cs != C_REFUSED;
}

/* ---- server → client: follow the framing only ------------------------- */

static void response_done(VrHttpGate *g, GPtrArray *events)
{
	Exchange *x = g_queue_pop_head(&g->open);
	if (!x)
		return;
	x->response_done = TRUE;
	event_new(events, VR_GATE_RESPONSE, x);
	if (x->request_done)
		exchange_free(x);
}

/* The end of the oldest open request's response, once its bytes are
 * counted (vr_http_gate_from_server). */
static void response_complete(VrHttpGate *g)
{
	g->ss = S_HEAD;
	g->s_complete = TRUE;
}

/* "HTTP/1.x NNN[ reason]": NNN, or 0. */
static guint status_of(const char *line)
{
	guint64 status = 0;
	char digits[4] = {0};
	if (!g_str_has_prefix(line, "HTTP/1.") || strlen(line) < 12 || line[8] != ' ' ||
	    (line[12] != '\0' && line[12] != ' '))
		return 0;
	memcpy(digits, line + 9, 3);
	if (!g_ascii_string_to_unsigned(digits, 10, 100, 999, &status, NULL))
		return 0;
	return (guint)status;
}

static void response_head(VrHttpGate *g)
{
	Exchange *x = g_queue_peek_head(&g->open);
	g_auto(GStrv) lines = vr_http_head_lines((const char *)g->sbuf->data, g->sbuf->len);
	guint status = lines && lines[0] ? status_of(lines[0]) : 0;
	if (!x || !status) {
		g->ss = S_LOST; /* an answer to no request, or no HTTP/1 status line */
		return;
	}
	if (status == 101) {
		g->ss = S_LOST; /* a protocol switch the gate refused to ask for */
		return;
	}
	if (status < 200)
		return; /* interim (100 Continue, 103): the final response follows */
	x->status = (int)status;
	gboolean have_length = FALSE, have_te = FALSE, chunked = FALSE, bad = FALSE, coded = FALSE;
	guint64 length = 0;
	for (char **l = lines + 1; *l; l++) {
		const char *colon = strchr(*l, ':');
		if (!colon)
			continue;
		g_autofree char *name = g_strndup(*l, (gsize)(colon - *l));
		g_autofree char *value = g_strstrip(g_strdup(colon + 1));
		if (g_ascii_strcasecmp(name, "Content-Length") == 0) {
			guint64 v = 0;
			if (!parse_length(value, &v) || (have_length && v != length))
				bad = TRUE;
			have_length = TRUE;
			length = v;
		} else if (g_ascii_strcasecmp(name, "Transfer-Encoding") == 0) {
			have_te = TRUE;
			/* The final coding decides (RFC 9112 6.3). */
			const char *last = strrchr(value, ',');
			g_autofree char *coding = g_strstrip(g_strdup(last ? last + 1 : value));
			chunked = g_ascii_strcasecmp(coding, "chunked") == 0;
			coded |= !chunked || last;
		} else if (g_ascii_strcasecmp(name, "Content-Encoding") == 0) {
			coded |= *value && g_ascii_strcasecmp(value, "identity") != 0;
		}
	}
	gboolean has_body = !x->no_body_response && status != 204 && status != 304;
	if (g->down_scrub && coded && has_body) {
		/* Asked for identity, sent gzip (or br, or a coded chunked
		 * stream): the scrubber reads bytes, and the client would
		 * decompress a real value out of them. Not passed on. */
		x->status = 502;
		x->cut = g_strdup("a compressed response from a host keys are bound to, which the scrubber cannot read "
		                  "(it was asked for Accept-Encoding: identity)");
		response_complete(g);
		g->ss = S_CUT;
		return;
	}
	if (x->no_body_response || status == 204 || status == 304)
		response_complete(g);
	else if (have_te)
		g->ss = chunked ? S_CHUNK_LINE : S_CLOSE;
	else if (bad)
		g->ss = S_LOST;
	else if (have_length && length == 0)
		response_complete(g);
	else if (have_length)
		g->ss = S_BODY, g->s_remaining = length;
	else
		g->ss = S_CLOSE;
}

/* out (scrubbing only): gets the head once it is whole, scrubbed, or what
 * was gathered when it turns out too large to follow. */
static gsize server_head(VrHttpGate *g, const guint8 *buf, gsize len, GByteArray *out)
{
	gsize before = g->sbuf->len;
	gsize take = MIN(len, (gsize)MAX_RESPONSE_HEAD + 1 - before);
	g_byte_array_append(g->sbuf, buf, (guint)take);
	gsize head = vr_http_head_length((const char *)g->sbuf->data, g->sbuf->len);
	if (!head) {
		if (g->sbuf->len > MAX_RESPONSE_HEAD) {
			/* Too large to follow; when scrubbing, as unfollowable as
			 * an unsolicited head (below): dropped. */
			g->ss = out ? S_CUT : S_LOST;
			if (out)
				g_byte_array_set_size(g->sbuf, 0);
		}
		return take;
	}
	g_byte_array_set_size(g->sbuf, (guint)head);
	guint at = out ? out->len : 0;
	if (out) {
		/* A head is whole: scrubbed at once, nothing held back. */
		g_byte_array_append(out, g->sbuf->data, (guint)head);
		vr_scrub_buffer(g->down_scrub, out->data + at, head, FALSE);
	}
	response_head(g);
	if (out && g->ss == S_CUT) {
		static const char body[] = "vault-run: the response was compressed, which the key scrubber cannot read\n";
		g_byte_array_set_size(out, at);
		g_autofree char *reply = g_strdup_printf("HTTP/1.1 502 Bad Gateway\r\nContent-Type: text/plain\r\n"
		                                         "Content-Length: %zu\r\nConnection: close\r\n\r\n%s",
		                                         strlen(body), body);
		g_byte_array_append(out, (const guint8 *)reply, (guint)strlen(reply));
	} else if (out && g->ss == S_LOST) {
		/* An answer to no request, or no status line: bytes the client
		 * cannot take for a response. After a body that ended holding
		 * back the start of a value (masked as the sentinel's start,
		 * which shares the value's prefix), the value's rest would come
		 * here, in a new scrub stream that cannot match it (fuzz_inject):
		 * nothing more goes to the client. */
		g_byte_array_set_size(out, at);
		g->ss = S_CUT;
	}
	g_byte_array_set_size(g->sbuf, 0);
	return head - before;
}

static gsize server_line(VrHttpGate *g, const guint8 *buf, gsize len)
{
	gsize used;
	gboolean too_long;
	if (!take_line(g->sbuf, buf, len, MAX_LINE, &used, &too_long)) {
		if (too_long)
			g->ss = S_LOST;
		return used;
	}
	GByteArray *line = g->sbuf;
	gboolean empty = line->len == 1 || (line->len == 2 && line->data[0] == '\r');
	if (g->ss == S_CHUNK_LINE) {
		gint64 size = parse_chunk_line(line, FALSE);
		if (size < 0)
			g->ss = S_LOST;
		else if (size == 0)
			g->ss = S_TRAILER;
		else
			g->ss = S_CHUNK_DATA, g->s_remaining = (guint64)size;
	} else if (g->ss == S_CHUNK_END) {
		g->ss = empty ? S_CHUNK_LINE : S_LOST;
	} else if (empty) { /* S_TRAILER */
		response_complete(g);
	}
	g_byte_array_set_size(g->sbuf, 0);
	return used;
}

void vr_http_gate_from_server(VrHttpGate *g, const guint8 *buf, gsize len, GPtrArray *events)
{
	gsize i = 0;
	while (i < len) {
		Exchange *x = g_queue_peek_head(&g->open);
		gsize n = len - i; /* S_CLOSE, S_LOST: the rest belongs to the current response */
		switch (g->ss) {
		case S_HEAD: n = server_head(g, buf + i, len - i, NULL); break;
		case S_BODY:
		case S_CHUNK_DATA:
			n = (gsize)MIN((guint64)(len - i), g->s_remaining);
			g->s_remaining -= n;
			if (g->s_remaining == 0) {
				if (g->ss == S_CHUNK_DATA)
					g->ss = S_CHUNK_END;
				else
					response_complete(g);
			}
			break;
		case S_CHUNK_LINE:
		case S_CHUNK_END:
		case S_TRAILER: n = server_line(g, buf + i, len - i); break;
		case S_CLOSE:
		case S_LOST:
		case S_CUT: break;
		}
		if (x)
			x->bytes_down += n;
		if (g->s_complete) {
			g->s_complete = FALSE;
			response_done(g, events);
		}
		i += n;
	}
}

void vr_http_gate_server_closed(VrHttpGate *g, GPtrArray *events)
{
	vr_http_gate_server_closed_out(g, NULL, events);
}

/* ---- server → client, scrubbed ---------------------------------------- */

/* What the scrubber let go (g->tmp), as one chunk of a re-chunked body. */
static void chunk_out(VrHttpGate *g, GByteArray *out)
{
	if (!g->tmp->len)
		return;
	char hex[32];
	int n = g_snprintf(hex, sizeof hex, "%x\r\n", g->tmp->len);
	g_byte_array_append(out, (const guint8 *)hex, (guint)n);
	g_byte_array_append(out, g->tmp->data, g->tmp->len);
	g_byte_array_append(out, (const guint8 *)"\r\n", 2);
	g_byte_array_set_size(g->tmp, 0);
}

/* The responses follow the same framing as vr_http_gate_from_server, and
 * what goes out is written here: heads scrubbed whole, bodies through the
 * scrubber (Content-Length ones keep their length: a sentinel is as long
 * as its value), chunked ones re-chunked as the scrubber lets bytes go,
 * their trailers dropped; the held-back tail goes out at the body's end. */
static void from_server_scrubbed(VrHttpGate *g, const guint8 *buf, gsize len, GByteArray *out, GPtrArray *events)
{
	gsize i = 0;
	while (i < len) {
		Exchange *x = g_queue_peek_head(&g->open);
		ServerState was = g->ss;
		gsize n = len - i;
		switch (g->ss) {
		case S_HEAD: n = server_head(g, buf + i, len - i, out); break;
		case S_BODY:
			n = (gsize)MIN((guint64)(len - i), g->s_remaining);
			vr_scrub_feed(g->down_scrub, buf + i, n, out);
			g->s_remaining -= n;
			if (g->s_remaining == 0) {
				vr_scrub_flush(g->down_scrub, out);
				response_complete(g);
			}
			break;
		case S_CHUNK_DATA:
			n = (gsize)MIN((guint64)(len - i), g->s_remaining);
			vr_scrub_feed(g->down_scrub, buf + i, n, g->tmp);
			chunk_out(g, out);
			g->s_remaining -= n;
			if (g->s_remaining == 0)
				g->ss = S_CHUNK_END;
			break;
		case S_CHUNK_LINE:
		case S_CHUNK_END:
		case S_TRAILER:
			n = server_line(g, buf + i, len - i);
			if (was == S_CHUNK_LINE && g->ss == S_TRAILER) {
				vr_scrub_flush(g->down_scrub, g->tmp);
				chunk_out(g, out);
			} else if (was == S_TRAILER && g->s_complete) {
				g_byte_array_append(out, (const guint8 *)"0\r\n\r\n", 5);
			}
			break;
		case S_CLOSE:
		case S_LOST: vr_scrub_feed(g->down_scrub, buf + i, n, out); break;
		case S_CUT: break; /* dropped */
		}
		if (x)
			x->bytes_down += n;
		if (g->s_complete) {
			g->s_complete = FALSE;
			response_done(g, events);
		}
		i += n;
	}
}

void vr_http_gate_from_server_out(VrHttpGate *g, const guint8 *buf, gsize len, GByteArray *to_client,
                                  GPtrArray *events)
{
	if (g->down_scrub) {
		from_server_scrubbed(g, buf, len, to_client, events);
		return;
	}
	g_byte_array_append(to_client, buf, (guint)len);
	vr_http_gate_from_server(g, buf, len, events);
}

void vr_http_gate_server_closed_out(VrHttpGate *g, GByteArray *to_client, GPtrArray *events)
{
	if (to_client && g->down_scrub && (g->ss == S_CLOSE || g->ss == S_LOST))
		vr_scrub_flush(g->down_scrub, to_client);
	if (g->ss == S_CLOSE) {
		g->ss = S_LOST; /* nothing follows a close */
		response_done(g, events);
	}
}

VrGateReplyState vr_http_gate_reply_state(const VrHttpGate *g)
{
	if (g->ss == S_LOST || g->ss == S_CLOSE || g->ss == S_CUT)
		return VR_GATE_REPLY_NEVER;
	return g->open.length ? VR_GATE_REPLY_WAIT : VR_GATE_REPLY_NOW;
}

guint vr_http_gate_open_requests(const VrHttpGate *g)
{
	return g->open.length;
}
