#!/usr/bin/env python3
"""A loopback HTTPS origin for the key-injection tests (tests/integration/net-keys.sh).

    tls-origin.py CERTFILE PORTFILE LOGFILE

CERTFILE holds the leaf, its CA and the key (PEM). Listens on 127.0.0.1 on a
free port, written to PORTFILE; every request's line and headers go to LOGFILE
as one JSON object per line. Paths:

    /echo...   200, the Authorization, x-api-key, x-goog-api-key headers and the
               query string back in the body (what the proxy put in must come
               back as the sentinel)
    /leak      200, the body is the LEAK environment variable (the scrubber)
    /sse       an event stream, chunked: "data: one", a pause, "data: two"
    /big?MiB   that many MiB of zeros (bench/proxy-tls-bench.sh)
    anything else  200 "ok"
Keep-alive (HTTP/1.1) like a real API.
"""
import json
import os
import ssl
import sys
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import urlsplit


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def record(self):
        with open(self.server.logfile, "a") as f:
            f.write(json.dumps({"method": self.command, "path": self.path,
                                "headers": dict(self.headers.items())}) + "\n")

    def body(self, text, ctype="text/plain"):
        data = text.encode()
        self.send_response(200)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def handle_any(self):
        n = int(self.headers.get("Content-Length") or 0)
        if n:
            self.rfile.read(n)
        if self.server.logfile != "-":
            self.record()
        url = urlsplit(self.path)
        if url.path.startswith("/echo"):
            self.body("authorization=%s\nx-api-key=%s\nx-goog-api-key=%s\nquery=%s\n" % (
                self.headers.get("Authorization"), self.headers.get("x-api-key"),
                self.headers.get("x-goog-api-key"), url.query))
        elif url.path == "/leak":
            self.body("leaked: %s\n" % os.environ.get("LEAK", ""))
        elif url.path == "/big":
            n = int(url.query or "1") << 20
            self.send_response(200)
            self.send_header("Content-Length", str(n))
            self.end_headers()
            block = bytes(1 << 16)
            while n > 0:
                self.wfile.write(block[:min(n, len(block))])
                n -= len(block)
        elif url.path == "/sse":
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.send_header("Transfer-Encoding", "chunked")
            self.end_headers()
            for i, word in enumerate(("one", "two")):
                if i:
                    time.sleep(float(os.environ.get("SSE_PAUSE", "1")))
                chunk = ("data: %s\n\n" % word).encode()
                self.wfile.write(b"%x\r\n%s\r\n" % (len(chunk), chunk))
                self.wfile.flush()
            self.wfile.write(b"0\r\n\r\n")
        else:
            self.body("ok\n")

    do_GET = do_POST = do_HEAD = do_OPTIONS = do_PUT = do_DELETE = handle_any


def main():
    certfile, portfile, logfile = sys.argv[1:4]
    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.logfile = logfile
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.load_cert_chain(certfile)
    ctx.set_alpn_protocols(["http/1.1"])
    server.socket = ctx.wrap_socket(server.socket, server_side=True)
    with open(portfile + ".tmp", "w") as f:
        f.write("%d\n" % server.server_address[1])
    os.rename(portfile + ".tmp", portfile)
    server.serve_forever()


if __name__ == "__main__":
    main()
