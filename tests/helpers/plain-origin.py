#!/usr/bin/env python3
"""A plain-HTTP origin that keeps every byte it is sent (tests/integration/net-keys-plain.sh).

    plain-origin.py PORTFILE LOGDIR

Listens on 127.0.0.1 on a free port, written to PORTFILE. Connection N's bytes,
exactly as they arrived (the head, the body, anything after), go to
LOGDIR/conn-N.bin as they come, and one line per connection to LOGDIR/log:

    N PATH body=RECEIVED/CONTENT-LENGTH sha256=HEX end=complete|eof|reset

It answers a whole request (Content-Length, or chunked) with 200 and
"received=BYTES sha256=HEX" of the body (decoded when chunked), and
"Expect: 100-continue" with a 100 first. The raw socket, not http.server: a
request the proxy cut must show what reached the origin, and nothing else.
"""
import hashlib
import os
import socket
import sys
import threading

port_file, log_dir = sys.argv[1], sys.argv[2]
lock = threading.Lock()
count = [0]


def serve(conn, n):
    raw = open(os.path.join(log_dir, "conn-%d.bin" % n), "wb")
    buf = b""
    end = "eof"

    def more():
        b = conn.recv(65536)
        raw.write(b)
        raw.flush()
        return b

    path, length, body = "?", -1, b""
    try:
        while b"\r\n\r\n" not in buf:
            b = more()
            if not b:
                raise EOFError
            buf += b
        head, rest = buf.split(b"\r\n\r\n", 1)
        lines = head.decode("latin-1").split("\r\n")
        path = lines[0].split(" ")[1] if len(lines[0].split(" ")) > 1 else "?"
        fields = {}
        for line in lines[1:]:
            name, _, value = line.partition(":")
            fields[name.strip().lower()] = value.strip()
        if fields.get("expect", "").lower() == "100-continue":
            conn.sendall(b"HTTP/1.1 100 Continue\r\n\r\n")
        if "chunked" in fields.get("transfer-encoding", "").lower():
            data = bytearray(rest)
            while True:
                # Decode as far as the bytes go; the last chunk ends it.
                out, at, done = b"", 0, False
                while True:
                    nl = data.find(b"\r\n", at)
                    if nl < 0:
                        break
                    size = int(data[at:nl].split(b";")[0], 16)
                    if size == 0:
                        done = data.find(b"\r\n", nl + 2) >= 0
                        break
                    if len(data) < nl + 2 + size + 2:
                        break
                    out += data[nl + 2:nl + 2 + size]
                    at = nl + 2 + size + 2
                if done:
                    body = out
                    break
                b = more()
                if not b:
                    body = out
                    raise EOFError
                data += b
            length = len(body)
        else:
            length = int(fields.get("content-length", "0"))
            body = bytearray(rest)  # appended to in place: no copy per read
            while len(body) < length:
                b = more()
                if not b:
                    raise EOFError
                body += b
            body = bytes(body[:length])
        end = "complete"
        digest = hashlib.sha256(body).hexdigest()
        msg = ("received=%d sha256=%s\n" % (len(body), digest)).encode()
        conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: %d\r\n"
                     b"Connection: close\r\n\r\n" % len(msg) + msg)
    except EOFError:
        end = "eof"
    except (ConnectionResetError, BrokenPipeError):
        end = "reset"
    finally:
        raw.close()
        with lock, open(os.path.join(log_dir, "log"), "a") as f:
            f.write("%d %s body=%d/%d sha256=%s end=%s\n" % (
                n, path, len(body), length, hashlib.sha256(body).hexdigest(), end))
        conn.close()


s = socket.socket()
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("127.0.0.1", 0))
s.listen(64)
with open(port_file + ".tmp", "w") as f:
    f.write(str(s.getsockname()[1]))
os.rename(port_file + ".tmp", port_file)
while True:
    c, _ = s.accept()
    with lock:
        count[0] += 1
        n = count[0]
    threading.Thread(target=serve, args=(c, n), daemon=True).start()
