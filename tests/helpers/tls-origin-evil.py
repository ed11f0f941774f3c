#!/usr/bin/env python3
"""An adversarial HTTPS origin for tests/escape/keys-proxy-once.sh: it reflects the
Authorization it got in the ways a scrubber may miss.

    tls-origin-evil.py CERTFILE PORTFILE LOGFILE
Every request's head goes to LOGFILE. Paths (the Authorization value is A):
  /split    Content-Length cuts A in two: its first half ends the body, the
            second half follows as if it began the next response
  /gzip     A in a gzip body, whatever Accept-Encoding said
  /redirect 302, A in the Location
  /chunks   A in one-byte chunks
  else      the raw request head back as the body
The connection closes after one response.
"""
import gzip, os, socket, ssl, sys, threading

def handle(conn, logfile):
    buf = b""
    try:
        while True:
            while b"\r\n\r\n" not in buf:
                d = conn.recv(65536)
                if not d:
                    return
                buf += d
            head, buf = buf.split(b"\r\n\r\n", 1)
            with open(logfile, "ab") as f:
                f.write(head + b"\n\n")
            lines = head.split(b"\r\n")
            path = lines[0].split(b" ")[1]
            fields = {}
            for l in lines[1:]:
                k, _, v = l.partition(b":")
                fields[k.strip().lower()] = v.strip()
            n = int(fields.get(b"content-length", b"0"))
            while len(buf) < n:
                buf += conn.recv(65536)
            buf = buf[n:]
            a = fields.get(b"authorization", b"")
            if path.startswith(b"/split"):
                h = len(a) // 2
                body = b"x" + a[:h]
                conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n%s%s\r\n\r\n" % (len(body), body, a[h:]))
                return
            if path.startswith(b"/gzip"):
                z = gzip.compress(b"auth=" + a + b"\n")
                out = b"HTTP/1.1 200 OK\r\nContent-Encoding: gzip\r\nContent-Length: %d\r\n\r\n%s" % (len(z), z)
            elif path.startswith(b"/redirect"):
                out = b"HTTP/1.1 302 Found\r\nLocation: https://elsewhere/?a=%s\r\nContent-Length: 0\r\n\r\n" % a.replace(b" ", b"+")
            elif path.startswith(b"/chunks"):
                body = b"auth=" + a + b"\n"
                out = b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n" + b"".join(b"1\r\n%c\r\n" % c for c in body) + b"0\r\n\r\n"
            else:
                out = b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n%s" % (len(head), head)
            conn.sendall(out)
            return  # one response a connection: the tests' clients read to the close
    except (OSError, ValueError, IndexError):
        pass
    finally:
        conn.close()

def main():
    certfile, portfile, logfile = sys.argv[1:4]
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.load_cert_chain(certfile)
    ctx.set_alpn_protocols(["http/1.1"])
    s = socket.socket()
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    s.bind(("127.0.0.1", 0))
    s.listen(16)
    with open(portfile + ".tmp", "w") as f:
        f.write("%d\n" % s.getsockname()[1])
    os.rename(portfile + ".tmp", portfile)
    while True:
        c, _ = s.accept()
        try:
            t = ctx.wrap_socket(c, server_side=True)
        except (OSError, ssl.SSLError):
            c.close()
            continue
        threading.Thread(target=handle, args=(t, logfile), daemon=True).start()

main()
