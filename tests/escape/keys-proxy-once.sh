#!/usr/bin/env bash
# Invariant 11 attacked through the proxy, as the agent: make a bound host
# hand the real value back in a shape the scrubber may miss, or make the
# proxy put the value into a request that a shared front end would route
# to another host. The origin (tests/helpers/tls-origin-evil.py) reflects
# the Authorization it got: split across a Content-Length that ends inside
# it, gzip whatever Accept-Encoding said, one byte per chunk, in a Location.
# Control: the same requests straight to the origin with the real value
# show it in every shape. Inside, the agent holds the sentinel and talks
# TLS through the proxy's CONNECT by hand (python3's ssl), so nothing a
# client library would tidy up is tidied.
. "$(dirname "$0")/../lib/libtest.sh"
. "$(dirname "$0")/../lib/origin-lib.sh"
. "$(dirname "$0")/../lib/sandbox-lib.sh"
vr_origin_require

P="$T/project"
mkdir -p "$P"
vr_origin_start tls-origin-evil.py api other
REAL=sk-proj-RealValue0123456789abcdefghijKLMNOPqrstuv
TOKEN=ghp_RealToken0123456789abcdefghijklmnopqr
export OPENAI_API_KEY=$REAL GIT_TOKEN=$TOKEN
B64REAL=$(printf 'x:%s' "$TOKEN" | base64 -w0)

# --- control: the origin hands the value back in every shape ---------------------
direct() { curl -sS --cacert "$O/ca.pem" --resolve "api.origin.test:$OP:127.0.0.1" -H "Authorization: Bearer $REAL" "$@"; }
vr_check "control: /split gives the value across its Content-Length" \
	grep -q "$REAL" <(python3 -c '
import socket, ssl, sys
s = ssl.create_default_context(cafile=sys.argv[1]).wrap_socket(socket.create_connection(("127.0.0.1", int(sys.argv[2]))),
	server_hostname="api.origin.test")
s.sendall(("GET /split HTTP/1.1\r\nHost: api.origin.test\r\nAuthorization: Bearer %s\r\n\r\n" % sys.argv[3]).encode())
out = b""
while True:
	b = s.recv(65536)
	if not b: break
	out += b
print(out.replace(b"\r\n\r\n", b"").decode())' "$O/ca.pem" "$OP" "$REAL")
vr_check "control: /gzip, decompressed, holds the value" grep -q "$REAL" <(direct --compressed "https://api.origin.test:$OP/gzip")
vr_check "control: /chunks holds it" grep -q "$REAL" <(direct "https://api.origin.test:$OP/chunks")
vr_check "control: /redirect's Location holds it" grep -q "$REAL" <(direct -sI "https://api.origin.test:$OP/redirect")
vr_check "control: /echo hands a Basic credential back in its base64" \
	grep -q "Basic $B64REAL" <(curl -sS --cacert "$O/ca.pem" --resolve "api.origin.test:$OP:127.0.0.1" -u "x:$TOKEN" \
		"https://api.origin.test:$OP/echo")

# --- inside: by hand through the proxy -------------------------------------------------
cat >"$P/tls.py" <<'EOF'
import base64, os, socket, ssl, sys, zlib
# Lines "NAME REQUEST" on stdin (REQUEST's | are CRLF, SENT the sentinel),
# each on a connection of its own to api.origin.test: "NAME: STATUS LINE | every byte".
ctx = ssl.create_default_context(cafile=os.environ["SSL_CERT_FILE"])
def one(req):
    s = socket.create_connection(("127.0.0.1", 3128))
    s.sendall(b"CONNECT api.origin.test:443 HTTP/1.1\r\nHost: api.origin.test:443\r\n\r\n")
    assert s.recv(4096).startswith(b"HTTP/1.1 200")
    t = ctx.wrap_socket(s, server_hostname="api.origin.test")
    basic = base64.b64encode(("x:" + os.environ["GIT_TOKEN"]).encode()).decode()
    t.sendall(req.replace("|", "\r\n").replace("SENT", os.environ["OPENAI_API_KEY"]).replace("B64", basic).encode())
    t.settimeout(5)
    out = b""
    try:
        while True:
            b = t.recv(65536)
            if not b:
                break
            out += b
    except (OSError, ssl.SSLError):
        pass
    t.close()
    if b"\x1f\x8b" in out:  # what a client would decompress
        out += zlib.decompress(out[out.index(b"\x1f\x8b"):], 47)
    # Every byte the agent got, framing dropped, so a value cut in two shows whole.
    return out.split(b"\r\n", 1)[0].decode(), out.replace(b"\r\n", b"").replace(b"\0", b"").decode(errors="replace")
for line in sys.stdin:
    name, req = line.rstrip("\n").split(" ", 1)
    print("%s: %s | %s" % ((name,) + one(req)), flush=True)
print("--end")
EOF
A='Authorization: Bearer SENT'
cat >"$P/requests" <<EOF
split GET /split HTTP/1.1|Host: api.origin.test|$A||
gzip GET /gzip HTTP/1.1|Host: api.origin.test|$A||
chunks GET /chunks HTTP/1.1|Host: api.origin.test|$A||
redirect GET /redirect HTTP/1.1|Host: api.origin.test|$A||
host-other GET /x HTTP/1.1|Host: other.origin.test|$A||
host-port GET /x HTTP/1.1|Host: api.origin.test:8443|$A||
host-dup GET /x HTTP/1.1|Host: api.origin.test|Host: other.origin.test|$A||
host-space GET /x HTTP/1.1|Host: api.origin.test|Host : other.origin.test|$A||
obs-fold GET /x HTTP/1.1|Host: api.origin.test|X-A: a| Host: other.origin.test|$A||
absolute GET https://other.origin.test/x HTTP/1.1|Host: api.origin.test|$A||
connect CONNECT other.origin.test:443 HTTP/1.1|Host: api.origin.test|$A||
h2c GET /x HTTP/1.1|Host: api.origin.test|Connection: Upgrade|Upgrade: h2c|$A||
http10 GET /x HTTP/1.0|$A||
idn GET /x HTTP/1.1|Host: api.xn--rigin-8ve.test|$A||
pipelined GET /a HTTP/1.1|Host: api.origin.test|$A||GET /b HTTP/1.1|Host: other.origin.test|$A||
smuggle POST /x HTTP/1.1|Host: api.origin.test|Transfer-Encoding: chunked|Content-Length: 5|$A||0||
te-twice POST /x HTTP/1.1|Host: api.origin.test|Transfer-Encoding: chunked|Transfer-Encoding: identity|$A||0||
host-case-dot GET /ok HTTP/1.1|Host: API.Origin.Test.|$A||
basic GET /echo HTTP/1.1|Host: api.origin.test|Authorization: Basic B64||
EOF
"$VRT" --project "$P" --profile none --quiet --audit "$T/audit" --net allow-private --net allow=other.origin.test \
	--key OPENAI_API_KEY@api.origin.test --key GIT_TOKEN@api.origin.test:as=basic -- sh -c 'cd /tmp && python3 "$1/tls.py" <"$1/requests"' _ "$P" \
	>"$T/out" 2>"$T/err" || true
res() { sed -n "s/^$1: \([^|]*\) |.*/\1/p" "$T/out" | sed 's/ *$//'; }
vr_check "the script ran to its end" grep -qx -- "--end" "$T/out"
vr_check_not "nothing the agent got holds a real value (split, gzip, chunks, Location, Basic)" \
	grep -q "$REAL\\|$TOKEN\\|$B64REAL" "$T/out"
vr_check "… nor its first half (the split's body end is the sentinel's)" \
	test "$(grep -c "${REAL:8:16}" "$T/out")" = 0
vr_check "the chunked and Location reflections came back as the sentinel" \
	test "$(res chunks)" = "HTTP/1.1 200 OK" -a "$(res redirect)" = "HTTP/1.1 302 Found"
vr_check "a compressed response is replaced by a 502" test "$(res gzip)" = "HTTP/1.1 502 Bad Gateway"
vr_check "… audited with the reason" grep -q '"result":"denied","rule":"api.origin.test:443","reason":"a compressed response' "$T/audit"
for a in host-other host-port host-dup http10 idn; do
	vr_check "$a: refused (403)" test "$(res $a)" = "HTTP/1.1 403 Forbidden"
done
for a in host-space obs-fold absolute connect h2c smuggle te-twice; do
	vr_check "$a: refused (400)" test "$(res $a)" = "HTTP/1.1 400 Bad Request"
done
vr_check "pipelined: the first request passes" test "$(res pipelined)" = "HTTP/1.1 200 OK"
vr_check "Host in another case with a trailing dot is the same host: injected" \
	test "$(res host-case-dot)" = "HTTP/1.1 200 OK"
# What the origin got: the value only in requests whose one Host is the bound host.
vr_check "a Basic credential echoed comes back as the base64 the agent sent" \
	sh -c 'grep "^basic: HTTP/1.1 200 OK |.*Authorization: Basic " "$1" | grep -vq "$2"' _ "$T/out" "$B64REAL"
vr_check "… while the origin got the real one" grep -q "Basic $B64REAL" "$O/log"
vr_check "the origin got the value (so the refusals above mattered)" grep -q "Bearer $REAL" "$O/log"
vr_check_not "… never in a request naming another host" \
	python3 -c 'import sys; hs=open(sys.argv[1],"rb").read().split(b"\n\n"); sys.exit(0 if any(b"other.origin" in h and sys.argv[2].encode() in h for h in hs) else 1)' \
	"$O/log" "$REAL"
vr_check_not "… and never the second request of the pipeline" grep -q "^GET /b " "$O/log"
vr_done
