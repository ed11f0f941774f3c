/* The proxy's byte relay, in the main thread only: two pumps (client →
 * upstream, upstream → client) of async reads and writes, so an idle tunnel
 * holds no thread. A gated relay (a model-server bridge of the http form)
 * puts the client's bytes through a VrHttpGate and writes what the gate
 * forwards; one audit event per request instead of one per connection.
 * A scanned relay (plain HTTP while keys are bound) puts the client's bytes
 * through the tripwire's scan (net/inject.h) and ends the connection on a
 * hit, before the bytes that complete the value leave.
 *
 * Every callback of a relay runs in the main context, so nothing here takes
 * a lock. `active` counts the chains of operations still running (the two
 * pumps, and the write of a refusal); the last one to end frees the relay. */
#include "net/proxy-private.h"

#include <string.h>
#include <sys/socket.h>

#include "net/gate.h"

#define RELAY_BUFSIZE (64 * 1024)
/* How long, and for how many bytes, a refused client may go on sending. */
#define LINGER_S 2
#define LINGER_MAX (1024 * 1024)

typedef struct Relay Relay;
typedef struct {
	Relay *relay;
	gboolean up;        /* client → upstream */
	GInputStream *in;
	GOutputStream *out;
	GSocket *out_sock;
	guint64 *counter;
	gboolean writing;   /* a write to out is pending */
	gboolean eof_after; /* the write pending is the last: the stream ended */
	GByteArray *gated;  /* gated relay: what the gate forwards (up) or scrubbed (down, terminated);
	                     * scanned relay: what the scan lets go (up) */
	char buf[RELAY_BUFSIZE];
} Pump;

struct Relay {
	VrProxy *proxy;
	ProxyConn *c; /* the connection's event; NULL when gated (one per request) */
	GSocketConnection *client, *upstream;
	GIOStream *client_io, *upstream_io; /* the sockets, or TLS over them (terminated) */
	GInputStream *client_in;
	GCancellable *cancel;
	int active;
	Pump up, down;
	guint64 uncounted; /* a gated relay's bytes: counted per request by the gate */

	/* gated relays */
	VrHttpGate *gate;
	const VrNetBridge *bridge; /* a model-server bridge; NULL: a terminated tunnel (c is the tunnel's event) */
	VrInjectSite *site;        /* a terminated tunnel's policy */
	char *address;     /* the host address connected to */
	GQueue requests;   /* ProxyConn * let through and not answered, oldest first */
	char *refusal;     /* the response to write once every response is complete */
	gboolean refusal_sent, upstream_shut;
	GCancellable *linger; /* the drain after a refusal (not r->cancel: that ends the pumps) */
	guint linger_timer;
	gsize lingered;
	char drain[4096];

	/* scanned relays (plain HTTP, keys bound) */
	VrScrub *scan;        /* what the client sends after the head; NULL: not scanned */
	guint64 body_left;    /* bytes of the request's body still to come */
	gboolean body_done;   /* the body ended (or there was none): nothing more is sent */
	gboolean tripped;     /* the scan found a key: nothing more goes either way */
	gboolean down_ended;  /* the upstream → client pump has ended */
};

static void pump_read(Pump *p);
static void write_out(Pump *p, const void *buf, gsize len);

/* How much to ask of in. The client's stream is buffered (the front end
 * read its head through it): GBufferedInputStream's read_async of more
 * than it holds copies what it holds and then waits on the socket for the
 * rest, so a body that came with the head (a small POST, all of it sent at
 * once) would stay in the buffer until the client sent more or closed,
 * while the origin waited for it. Never more than is buffered, then. */
static gsize read_size(GInputStream *in, gsize want)
{
	if (!G_IS_BUFFERED_INPUT_STREAM(in))
		return want;
	gsize avail = g_buffered_input_stream_get_available(G_BUFFERED_INPUT_STREAM(in));
	return avail ? MIN(avail, want) : want;
}

static void finish_open_requests(Relay *r, const char *reason)
{
	ProxyConn *c;
	while ((c = g_queue_pop_head(&r->requests))) {
		c->reason = g_strdup(reason);
		proxy_conn_finish(c);
	}
}

static void relay_free(Relay *r)
{
	g_hash_table_remove(r->proxy->relays, r);
	g_io_stream_close(r->client_io, NULL, NULL);
	g_io_stream_close(r->upstream_io, NULL, NULL);
	g_io_stream_close(G_IO_STREAM(r->client), NULL, NULL);
	g_io_stream_close(G_IO_STREAM(r->upstream), NULL, NULL);
	g_object_unref(r->client_io);
	g_object_unref(r->upstream_io);
	g_object_unref(r->client);
	g_object_unref(r->upstream);
	g_object_unref(r->client_in);
	g_object_unref(r->cancel);
	g_clear_object(&r->linger);
	if (r->c)
		proxy_conn_finish(r->c);
	finish_open_requests(r, "closed before the response ended");
	vr_http_gate_free(r->gate);
	vr_inject_site_free(r->site);
	vr_scrub_free(r->scan);
	if (r->up.gated)
		g_byte_array_unref(r->up.gated);
	if (r->down.gated)
		g_byte_array_unref(r->down.gated);
	g_free(r->address);
	g_free(r->refusal);
	g_free(r);
}

void proxy_relays_stop(VrProxy *proxy)
{
	/* Connections still open get their audit event before the proxy goes;
	 * their relays are not freed: the process ends right after. */
	GList *open = g_hash_table_get_keys(proxy->relays);
	for (GList *l = open; l; l = l->next) {
		Relay *r = l->data;
		if (r->c) {
			g_free(r->c->reason);
			r->c->reason = g_strdup("proxy stopped");
			proxy_conn_finish(r->c);
			r->c = NULL;
		}
		finish_open_requests(r, "proxy stopped");
	}
	g_list_free(open);
}

static void chain_end(Relay *r)
{
	if (--r->active == 0)
		relay_free(r);
}

static void pump_done(Pump *p, gboolean error)
{
	Relay *r = p->relay;
	if (!p->up)
		r->down_ended = TRUE;
	if (error) {
		/* A reset on one side ends both: the other pump may otherwise
		 * wait forever on a peer that has nothing more to say. */
		g_cancellable_cancel(r->cancel);
	} else if (!p->out_sock) {
		/* TLS has no half-close to pass on: one side's end is the end. */
		g_cancellable_cancel(r->cancel);
	} else {
		/* EOF: pass the half-close on, the other direction may go on. */
		g_socket_shutdown(p->out_sock, FALSE, TRUE, NULL);
	}
	chain_end(r);
}

/* ---- gated relays ------------------------------------------------------- */

static ProxyConn *request_conn(Relay *r, const VrGateEvent *e)
{
	ProxyConn *c;
	if (r->bridge) {
		c = proxy_conn_new(r->proxy, "localhost-http");
		c->host = g_strdup("127.0.0.1");
		c->port = r->bridge->port;
		c->rule = r->bridge->rule;
		c->address = g_strdup(r->address);
	} else {
		/* A request inside a terminated tunnel: the tunnel's place. */
		c = proxy_conn_new(r->proxy, "https");
		c->host = g_strdup(r->c->host);
		c->port = r->c->port;
		c->rule = r->c->rule;
		c->address = g_strdup(r->c->address);
	}
	c->method = g_strdup(e->method);
	c->path = g_strdup(e->path ? e->path : "");
	c->keys = g_strdup(e->note);
	return c;
}

static char *refusal_response(const Relay *r, const VrGateEvent *e)
{
	g_autofree char *what = e->method ? g_strdup_printf("%s %s", e->method, e->path) : g_strdup("a request");
	g_autofree char *body =
	        r->bridge ? g_strdup_printf("vault-run: %s to the host's 127.0.0.1:%u refused: %s "
	                                    "(--net allow-localhost=%u/tcp bridges the whole port)\n",
	                                    what, r->bridge->port, e->reason, r->bridge->port)
	                  : g_strdup_printf("vault-run: %s to %s refused: %s\n", what, r->c->host, e->reason);
	gboolean forbidden = e->forbidden;
	return g_strdup_printf("HTTP/1.1 %s\r\n"
	                       "Content-Type: text/plain; charset=utf-8\r\n"
	                       "Content-Length: %zu\r\n"
	                       "Connection: close\r\n"
	                       "Server: vault-run\r\n"
	                       "\r\n%s",
	                       forbidden ? "403 Forbidden" : "400 Bad Request", strlen(body), body);
}

/* Audit events for what the gate saw. FALSE when the relay must end now (a
 * request refused halfway through its body: the server holds part of it). */
static gboolean gate_events(Relay *r, GPtrArray *events)
{
	gboolean go_on = TRUE;
	for (guint i = 0; i < events->len; i++) {
		const VrGateEvent *e = events->pdata[i];
		ProxyConn *c;
		switch (e->kind) {
		case VR_GATE_REQUEST:
			c = request_conn(r, e);
			c->result = "ok";
			g_queue_push_tail(&r->requests, c);
			break;
		case VR_GATE_RESPONSE:
			c = g_queue_pop_head(&r->requests);
			if (c) {
				if (e->reason) { /* the gate did not pass the response on */
					c->result = "denied";
					c->reason = g_strdup(e->reason);
				}
				c->status = e->status;
				c->bytes_up = e->bytes_up;
				c->bytes_down = e->bytes_down;
				proxy_conn_finish(c);
			}
			break;
		case VR_GATE_REFUSED:
			c = e->mid_body ? g_queue_pop_tail(&r->requests) : NULL;
			if (!c)
				c = request_conn(r, e);
			c->result = "denied";
			c->reason = g_strdup(e->reason);
			c->bytes_up = e->mid_body ? e->bytes_up : 0;
			proxy_conn_finish(c);
			if (e->mid_body)
				go_on = FALSE;
			else
				r->refusal = refusal_response(r, e);
			break;
		}
	}
	g_ptr_array_set_size(events, 0);
	return go_on;
}

/* A lingering close, as web servers do it. The client may still be sending
 * (the rest of a refused request, a pipelined one); a socket closed with
 * bytes unread answers with a reset, and a reset can discard the refusal
 * before the client has read it. So the refusal is followed by a FIN, and
 * what the client still sends is read and dropped until it closes, for at
 * most LINGER_S seconds and LINGER_MAX bytes. */
static gboolean on_linger_timeout(gpointer data)
{
	Relay *r = data;
	r->linger_timer = 0;
	g_cancellable_cancel(r->linger);
	return G_SOURCE_REMOVE;
}

static void on_drained(GObject *src, GAsyncResult *res, gpointer data)
{
	Relay *r = data;
	gssize n = g_input_stream_read_finish(G_INPUT_STREAM(src), res, NULL);
	if (n > 0 && (r->lingered += (gsize)n) < LINGER_MAX) {
		g_input_stream_read_async(r->client_in, r->drain, read_size(r->client_in, sizeof r->drain),
		                          G_PRIORITY_DEFAULT, r->linger, on_drained, r);
		return;
	}
	g_clear_handle_id(&r->linger_timer, g_source_remove);
	chain_end(r);
}

static void on_refusal_written(GObject *src, GAsyncResult *res, gpointer data)
{
	Relay *r = data;
	g_output_stream_write_all_finish(G_OUTPUT_STREAM(src), res, NULL, NULL);
	/* Connection: close: the down pump's read ends here; the client's side
	 * lingers. */
	g_cancellable_cancel(r->cancel);
	g_socket_shutdown(g_socket_connection_get_socket(r->client), FALSE, TRUE, NULL);
	r->linger = g_cancellable_new();
	r->linger_timer = g_timeout_add_seconds(LINGER_S, on_linger_timeout, r);
	g_input_stream_read_async(r->client_in, r->drain, read_size(r->client_in, sizeof r->drain),
	                          G_PRIORITY_DEFAULT, r->linger, on_drained, r);
}

/* Writes the pending refusal once no response is on its way, so it never
 * lands inside one. When the responses can no longer be followed, the
 * client gets none: the server is told the requests ended, and the relay
 * runs until it closes. */
static void try_refusal(Relay *r)
{
	if (!r->refusal || r->refusal_sent)
		return;
	switch (vr_http_gate_reply_state(r->gate)) {
	case VR_GATE_REPLY_NEVER:
		if (!r->upstream_shut)
			g_socket_shutdown(g_socket_connection_get_socket(r->upstream), FALSE, TRUE, NULL);
		r->upstream_shut = TRUE;
		return;
	case VR_GATE_REPLY_WAIT: return;
	case VR_GATE_REPLY_NOW: break;
	}
	if (r->down.writing)
		return; /* the down pump calls again when its write is done */
	r->refusal_sent = TRUE;
	r->active++;
	GOutputStream *out = g_io_stream_get_output_stream(r->client_io);
	g_output_stream_write_all_async(out, r->refusal, strlen(r->refusal), G_PRIORITY_DEFAULT, NULL,
	                                 on_refusal_written, r);
}

/* ---- scanned relays ------------------------------------------------------- */

/* The client's next bytes through the scan: what may go on is appended to
 * out. -1, or the id found. The head went with Connection: close and the
 * body's length, so nothing after the body is a request of this
 * connection: it is not sent (else a value cut across the body's end would
 * leave in two parts that each look innocent, and a second head would
 * have no tripwire of its own). At the body's end what the scan holds back
 * goes too: the origin reads no further before it answers, and a body
 * ending in what could begin a value ("…&q=yes", a prefix of sk-) would
 * otherwise wait for bytes that never come. */
static int scan_feed(Relay *r, const guint8 *buf, gsize n, GByteArray *out)
{
	if (r->body_done)
		return -1;
	gsize k = (gsize)MIN((guint64)n, r->body_left);
	int id = vr_scrub_feed(r->scan, buf, k, out);
	if (id >= 0)
		return id;
	r->body_left -= k;
	if (r->body_left)
		return -1;
	r->body_done = TRUE;
	return vr_scrub_flush(r->scan, out);
}

/* Closed with SO_LINGER 0: a reset, not a FIN. The origin must not take a
 * cut body for a whole one, nor the client a cut response that runs to the
 * close for a whole one. */
static void reset_on_close(GSocketConnection *conn)
{
	struct linger l = {.l_onoff = 1, .l_linger = 0};
	setsockopt(g_socket_get_fd(g_socket_connection_get_socket(conn)), SOL_SOCKET, SO_LINGER, &l, sizeof l);
}

/* The scan found key id: the chunk that completes it is not sent, the
 * event says why (first: a client that ends the run on its 403 must find
 * it in the log), nothing more goes either way. The client gets a 403
 * when nothing of the response has reached it, else a reset; the origin,
 * which holds part of the request, a reset. Ends the up pump's chain. */
static void scan_tripped(Relay *r, int id)
{
	ProxyConn *c = g_steal_pointer(&r->c);
	r->tripped = TRUE;
	/* The bytes read hold the value: not kept (the scan zeroes its own). */
	explicit_bzero(r->up.buf, sizeof r->up.buf);
	if (r->up.gated->len)
		explicit_bzero(r->up.gated->data, r->up.gated->len);
	r->up.counter = r->down.counter = &r->uncounted;
	if (!c) {
		/* The proxy is stopping (its event is written): just cut. */
		g_cancellable_cancel(r->cancel);
		reset_on_close(r->upstream);
		reset_on_close(r->client);
		chain_end(r);
		return;
	}
	g_autofree char *what = vr_inject_describe(proxy_tls_inject(r->proxy->tls), id, c->host);
	c->result = "denied";
	g_free(c->reason);
	c->reason = g_strdup_printf("%s (in a plain-HTTP request body: keys are only ever put in over TLS)", what);
	gboolean answered = c->bytes_down > 0 || r->down.writing || r->down_ended;
	g_autofree char *body = g_strdup_printf("vault-run: connection to %s:%u denied: %s\n", c->host, c->port,
	                                        c->reason);
	proxy_conn_finish(c);
	/* The down pump's read or write ends (its callback sees tripped). */
	g_cancellable_cancel(r->cancel);
	reset_on_close(r->upstream);
	if (answered) {
		reset_on_close(r->client);
	} else {
		r->refusal = proxy_http_message(403, "Forbidden", body);
		r->refusal_sent = TRUE;
		r->active++;
		GOutputStream *out = g_io_stream_get_output_stream(r->client_io);
		g_output_stream_write_all_async(out, r->refusal, strlen(r->refusal), G_PRIORITY_DEFAULT, NULL,
		                                 on_refusal_written, r);
	}
	chain_end(r);
}

/* The client ended its side: what the scan held back, unless it holds a
 * key whole, then the half-close. */
static void scan_end(Pump *p)
{
	Relay *r = p->relay;
	g_byte_array_set_size(p->gated, 0);
	int id = vr_scrub_flush(r->scan, p->gated);
	if (id >= 0) {
		scan_tripped(r, id);
		return;
	}
	if (p->gated->len) {
		p->eof_after = TRUE;
		write_out(p, p->gated->data, p->gated->len);
		return;
	}
	pump_done(p, FALSE);
}

/* ---- pumps ---------------------------------------------------------------- */

static void after_write(Pump *p)
{
	Relay *r = p->relay;
	p->writing = FALSE;
	if (p->eof_after) {
		pump_done(p, FALSE);
		return;
	}
	if (r->gate) {
		if (p->up && r->refusal) {
			/* Nothing after a refused request is read. */
			try_refusal(r);
			chain_end(r);
			return;
		}
		if (!p->up) {
			try_refusal(r);
			if (r->refusal_sent) {
				chain_end(r); /* nothing more goes to the client after it */
				return;
			}
		}
	}
	pump_read(p);
}

static void on_written(GObject *src, GAsyncResult *res, gpointer data)
{
	Pump *p = data;
	gsize written = 0;
	gboolean ok = g_output_stream_write_all_finish(G_OUTPUT_STREAM(src), res, &written, NULL);
	*p->counter += written;
	if (!ok) {
		p->writing = FALSE;
		pump_done(p, TRUE);
		return;
	}
	after_write(p);
}

static void write_out(Pump *p, const void *buf, gsize len)
{
	if (len == 0) {
		after_write(p);
		return;
	}
	p->writing = TRUE;
	g_output_stream_write_all_async(p->out, buf, len, G_PRIORITY_DEFAULT, p->relay->cancel, on_written, p);
}

static void on_read(GObject *src, GAsyncResult *res, gpointer data)
{
	Pump *p = data;
	Relay *r = p->relay;
	gssize n = g_input_stream_read_finish(G_INPUT_STREAM(src), res, NULL);
	if (r->tripped) {
		chain_end(r); /* the scan found a key: nothing more goes either way */
		return;
	}
	if (r->scan && p->up) {
		if (n == 0) {
			scan_end(p);
			return;
		}
		if (n < 0) {
			pump_done(p, TRUE);
			return;
		}
		g_byte_array_set_size(p->gated, 0);
		int id = scan_feed(r, (const guint8 *)p->buf, (gsize)n, p->gated);
		if (id >= 0) {
			scan_tripped(r, id);
			return;
		}
		write_out(p, p->gated->data, p->gated->len);
		return;
	}
	if (r->gate && !p->up && r->refusal_sent) {
		chain_end(r); /* the refusal is being written: nothing else goes to the client */
		return;
	}
	if (n <= 0) {
		if (r->gate && !p->up && n == 0) {
			g_autoptr(GPtrArray) events = g_ptr_array_new_with_free_func(vr_gate_event_free);
			if (p->gated) {
				/* What the scrubber held back, then the end. */
				g_byte_array_set_size(p->gated, 0);
				vr_http_gate_server_closed_out(r->gate, p->gated, events);
				gate_events(r, events);
				if (p->gated->len) {
					p->eof_after = TRUE;
					write_out(p, p->gated->data, p->gated->len);
					return;
				}
			} else {
				vr_http_gate_server_closed(r->gate, events);
				gate_events(r, events);
			}
		}
		pump_done(p, n < 0);
		return;
	}
	if (!r->gate) {
		write_out(p, p->buf, (gsize)n);
		return;
	}
	g_autoptr(GPtrArray) events = g_ptr_array_new_with_free_func(vr_gate_event_free);
	if (p->up) {
		g_byte_array_set_size(p->gated, 0);
		vr_http_gate_from_client(r->gate, (const guint8 *)p->buf, (gsize)n, p->gated, events);
		if (!gate_events(r, events)) {
			pump_done(p, TRUE);
			return;
		}
		write_out(p, p->gated->data, p->gated->len);
	} else if (p->gated) {
		/* A terminated tunnel: responses scrubbed of the real values. */
		g_byte_array_set_size(p->gated, 0);
		vr_http_gate_from_server_out(r->gate, (const guint8 *)p->buf, (gsize)n, p->gated, events);
		gate_events(r, events);
		write_out(p, p->gated->data, p->gated->len);
	} else {
		vr_http_gate_from_server(r->gate, (const guint8 *)p->buf, (gsize)n, events);
		gate_events(r, events);
		write_out(p, p->buf, (gsize)n);
	}
}

static void pump_read(Pump *p)
{
	g_input_stream_read_async(p->in, p->buf, read_size(p->in, sizeof p->buf), G_PRIORITY_DEFAULT, p->relay->cancel,
	                          on_read, p);
}

static gboolean relay_start(gpointer data)
{
	Relay *r = data;
	g_hash_table_add(r->proxy->relays, r);
	r->up.relay = r;
	r->up.up = TRUE;
	r->up.in = r->client_in;
	r->up.out = g_io_stream_get_output_stream(r->upstream_io);
	r->up.out_sock = r->site ? NULL : g_socket_connection_get_socket(r->upstream);
	r->up.counter = r->c ? &r->c->bytes_up : &r->uncounted;
	r->down.relay = r;
	r->down.in = g_io_stream_get_input_stream(r->upstream_io);
	r->down.out = g_io_stream_get_output_stream(r->client_io);
	r->down.out_sock = r->site ? NULL : g_socket_connection_get_socket(r->client);
	r->down.counter = r->c ? &r->c->bytes_down : &r->uncounted;
	r->active = 2;
	pump_read(&r->up);
	pump_read(&r->down);
	return G_SOURCE_REMOVE;
}

static Relay *relay_new(VrProxy *proxy, GSocketConnection *client, GInputStream *client_in,
                        GSocketConnection *upstream)
{
	Relay *r = g_new0(Relay, 1);
	r->proxy = proxy;
	r->client = g_object_ref(client);
	r->upstream = g_object_ref(upstream);
	r->client_io = g_object_ref(G_IO_STREAM(client));
	r->upstream_io = g_object_ref(G_IO_STREAM(upstream));
	r->client_in = g_object_ref(client_in);
	r->cancel = g_cancellable_new();
	g_queue_init(&r->requests);
	/* The handshake timeout must not cut an idle but healthy tunnel. */
	g_socket_set_timeout(g_socket_connection_get_socket(client), 0);
	g_socket_set_timeout(g_socket_connection_get_socket(upstream), 0);
	return r;
}

void proxy_relay(ProxyConn *c, GSocketConnection *client, GInputStream *client_in, GSocketConnection *upstream)
{
	Relay *r = relay_new(c->proxy, client, client_in, upstream);
	r->c = c;
	/* Start the async copy in the main context, so every callback of this
	 * relay runs in the main thread and needs no lock. */
	g_main_context_invoke(NULL, relay_start, r);
}

void proxy_relay_plain(ProxyConn *c, GSocketConnection *client, GInputStream *client_in,
                       GSocketConnection *upstream, VrScrub *scan, guint64 body_len)
{
	Relay *r = relay_new(c->proxy, client, client_in, upstream);
	r->c = c;
	r->scan = scan;
	r->body_left = body_len;
	r->body_done = body_len == 0;
	r->up.gated = g_byte_array_sized_new(RELAY_BUFSIZE + 4096);
	g_main_context_invoke(NULL, relay_start, r);
}

void proxy_relay_gated(VrProxy *proxy, const VrNetBridge *bridge, const char *address, GSocketConnection *client,
                       GSocketConnection *upstream)
{
	Relay *r = relay_new(proxy, client, g_io_stream_get_input_stream(G_IO_STREAM(client)), upstream);
	r->gate = vr_http_gate_new();
	r->bridge = bridge;
	r->address = g_strdup(address);
	r->up.gated = g_byte_array_sized_new(RELAY_BUFSIZE + 4096);
	g_main_context_invoke(NULL, relay_start, r);
}

void proxy_relay_terminated(ProxyConn *c, GIOStream *client, GSocketConnection *client_sock, GIOStream *upstream,
                            GSocketConnection *upstream_sock, VrHttpGate *gate, VrInjectSite *site)
{
	/* The client's bytes come through its TLS stream now. */
	Relay *r = relay_new(c->proxy, client_sock, g_io_stream_get_input_stream(client), upstream_sock);
	g_object_unref(r->client_io);
	g_object_unref(r->upstream_io);
	r->client_io = g_object_ref(client);
	r->upstream_io = g_object_ref(upstream);
	g_object_unref(r->client_in);
	r->client_in = g_object_ref(g_io_stream_get_input_stream(client));
	r->c = c;
	r->gate = gate;
	r->site = site;
	r->up.gated = g_byte_array_sized_new(RELAY_BUFSIZE + 4096);
	r->down.gated = g_byte_array_sized_new(RELAY_BUFSIZE + 4096);
	g_main_context_invoke(NULL, relay_start, r);
}
