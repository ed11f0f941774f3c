#!/usr/bin/env bash
# `--key NAME@HOST` and `--net read=HOST` (docs/network.md "Keys", DESIGN.md
# invariant 11): inside, NAME holds a sentinel and no process holds the real
# value; the proxy terminates TLS for the bound host, puts the value in where
# the key is declared, scrubs it out of what comes back, streams, refuses a
# key on its way anywhere else, and lets a read-only host be read only.
#
# The origin is python3's http.server behind TLS on the host's loopback with
# a CA of the test's own (openssl); the test build's vault-run-testhooks
# resolves *.origin.test to 127.0.0.1, connects to the origin's port in place
# of 443 and trusts that CA upstream (net/tls.c, VR_TEST_HOOKS: not in the
# installed binary, which the last check shows).
. "$(dirname "$0")/../lib/libtest.sh"
. "$(dirname "$0")/../lib/origin-lib.sh"
. "$(dirname "$0")/../lib/view-lib.sh"
. "$(dirname "$0")/../lib/sandbox-lib.sh"
vr_origin_require

P="$T/project"
view_make_demo "$P"
cd "$P"

# --- the origin and its CA -------------------------------------------------

REAL=sk-proj-RealValue0123456789abcdefghijKLMNOPqrstuv
GREAL=AIzaRealGoogleValue0123456789abcdefghij
TOKEN=ghp_RealToken0123456789abcdefghijklmnopqr
LEAK=$REAL SSE_PAUSE=1 vr_origin_start tls-origin.py api other read
# The values are the host's: the environment for two, an --env-file for one.
printf 'GEMINI_API_KEY=%s\n' "$GREAL" >"$T/keys.env"
export OPENAI_API_KEY=$REAL GIT_TOKEN=$TOKEN
KEYS=(--env-file "$T/keys.env"
	--key OPENAI_API_KEY@api.origin.test
	--key GEMINI_API_KEY@api.origin.test:as=query,x-goog-api-key
	--key GIT_TOKEN@other.origin.test:as=basic)

# A kept-alive connection through the proxy's CONNECT, by hand: each request
# of it is judged (python3's ssl, the sandbox's trust store).
cat >"$P/pipeline.py" <<'EOF'
import os, re, socket, ssl, sys
host, reqs = sys.argv[1], sys.argv[2:]
s = socket.create_connection(("127.0.0.1", 3128))
s.sendall(("CONNECT %s:443 HTTP/1.1\r\nHost: %s:443\r\n\r\n" % (host, host)).encode())
assert s.recv(4096).startswith(b"HTTP/1.1 200")
t = ssl.create_default_context(cafile=os.environ["SSL_CERT_FILE"]).wrap_socket(s, server_hostname=host)
t.sendall("".join(r.replace("|", "\r\n").replace("HOST", host) for r in reqs).encode())
out = b""
while True:
    b = t.recv(65536)
    if not b:
        break
    out += b
print(" ".join(c.decode() for c in re.findall(rb"HTTP/1\.1 (\d{3}) ", out)))
EOF

# Node, which trusts NODE_EXTRA_CA_CERTS (the run CA alone) and does not
# read the proxy variables: CONNECT by hand, then TLS with ALPN.
cat >"$P/node-tls.js" <<'EOF'
const http = require('http'), tls = require('tls');
const host = process.argv[2];
http.request({host: '127.0.0.1', port: 3128, method: 'CONNECT', path: host + ':443'}).on('connect', (res, sock) => {
  const t = tls.connect({socket: sock, servername: host, ALPNProtocols: ['http/1.1']}, () => t.write(
    `GET /echo/node HTTP/1.1\r\nHost: ${host}\r\nAuthorization: Bearer ${process.env.OPENAI_API_KEY}\r\nConnection: close\r\n\r\n`));
  let out = '';
  t.on('data', d => out += d);
  t.on('end', () => console.log('alpn=' + t.alpnProtocol + ' ' + out.split('\r\n\r\n')[1].split('\n')[0]));
  t.on('error', e => console.log('node error ' + e.message));
}).end();
EOF

cat >"$P/inside.sh" <<'EOF'
cd /tmp
echo "openai=$OPENAI_API_KEY"
echo "gemini=$GEMINI_API_KEY"
# Every process's environment it can read, its own included.
echo "environ-hits=$(cat /proc/[0-9]*/environ 2>/dev/null | tr '\0' '\n' | grep -c "$1" || true)"
echo "ca-hash=$(openssl x509 -hash -noout -in "$NODE_EXTRA_CA_CERTS")"
ls /etc/ssl/certs/ >ls.txt; echo "ca-link=$(readlink /etc/ssl/certs/"$(openssl x509 -hash -noout -in "$NODE_EXTRA_CA_CERTS")".0)"
echo "bundle=$SSL_CERT_FILE $REQUESTS_CA_BUNDLE $CURL_CA_BUNDLE $GIT_SSL_CAINFO"
echo "--echo"; curl -sS -H "Authorization: Bearer $OPENAI_API_KEY" "https://api.origin.test/echo/v1?x=1"
echo "--gemini"; curl -sS -H "x-goog-api-key: $GEMINI_API_KEY" "https://api.origin.test/echo/g?key=$GEMINI_API_KEY"
echo "--basic"; curl -sS -u "x:$GIT_TOKEN" https://other.origin.test/echo/git
echo "--leak"; curl -sS https://api.origin.test/leak
echo "--sse"; curl -sSN https://api.origin.test/sse | while IFS= read -r l; do [ -n "$l" ] && echo "$(date +%s%N) $l"; done
echo "--trip-other"; curl -sS -H "Authorization: Bearer $OPENAI_API_KEY" https://other.origin.test/echo/x
echo "--trip-plain"; curl -sS -H "x-api-key: $OPENAI_API_KEY" http://other.origin.test/plain
echo "--read"; curl -sS -o /dev/null -w '%{http_code}\n' https://read.origin.test/r.git/info/refs
curl -sS -o /dev/null -w '%{http_code}\n' -X POST -d x https://read.origin.test/r.git/git-upload-pack
curl -sS -o /dev/null -w '%{http_code}\n' -X POST -d x https://read.origin.test/r.git/git-receive-pack
curl -sS -o /dev/null -w '%{http_code}\n' -X PUT -d x https://read.origin.test/r.git/x
echo "--pipeline $(python3 "$2/pipeline.py" read.origin.test 'GET /a HTTP/1.1|Host: HOST||' \
	'POST /r.git/git-receive-pack HTTP/1.1|Host: HOST|Content-Length: 1||x')"
echo "--smuggle $(python3 "$2/pipeline.py" read.origin.test \
	'POST /r.git/git-upload-pack HTTP/1.1|Host: HOST|Content-Length: 3|Transfer-Encoding: chunked||0||')"
echo "--node"; if command -v node >/dev/null; then node "$2/node-tls.js" api.origin.test; else echo "no node"; fi
echo "--end"
EOF

"$VRT" --project "$P" --profile none --audit "$T/main.audit" --net allow-private --net read=read.origin.test \
	"${KEYS[@]}" -- sh "$P/inside.sh" "RealValue0123456789" "$P" >"$T/main.out" 2>"$T/main.err" || true
out() { sed -n "/^--$1/,/^--/p" "$T/main.out"; }
S=$(sed -n 's/^openai=//p' "$T/main.out")
GS=$(sed -n 's/^gemini=//p' "$T/main.out")

# --- inside: sentinels only ------------------------------------------------
vr_check "inside, OPENAI_API_KEY is a sentinel of the value's shape (prefix, length)" \
	test "${S:0:8}" = sk-proj- -a "${#S}" = "${#REAL}" -a "$S" != "$REAL"
vr_check "… GEMINI_API_KEY (from --env-file) too" test "${GS:0:4}" = AIza -a "${#GS}" = "${#GREAL}" -a "$GS" != "$GREAL"
vr_check "no process environment inside holds a real value" grep -qx "environ-hits=0" "$T/main.out"
vr_check_not "… nor anything the sandbox printed" grep -q "RealValue0123456789abc\|RealGoogle\|RealToken" "$T/main.out"
vr_check "the trust variables name the merged bundle" \
	grep -qx "bundle=$(printf '/etc/ssl/certs/ca-certificates.crt %.0s' 1 2 3)/etc/ssl/certs/ca-certificates.crt" \
	"$T/main.out"
vr_check "… with a <hash>.0 link to the run CA (CApath)" grep -qx "ca-link=vault-run-ca.pem" "$T/main.out"

# --- the origin gets the values; what comes back holds the sentinels ------
vr_check "the origin got the real value as the Bearer" grep -q "\"Authorization\": \"Bearer $REAL\"" "$O/log"
vr_check "… the Gemini value as x-goog-api-key and as key=" \
	grep -q "\"path\": \"/echo/g?key=$GREAL\".*\"x-goog-api-key\": \"$GREAL\"" "$O/log"
B64=$(printf 'x:%s' "$TOKEN" | base64 -w0)
vr_check "… the git token in Basic, re-encoded" grep -q "\"Authorization\": \"Basic $B64\"" "$O/log"
vr_check "… and asked for no compression" grep -q '"Accept-Encoding": "identity"' "$O/log"
vr_check "the echo returns the sentinel, not the value" grep -qx "authorization=Bearer $S" <(out echo)
vr_check "… in the query and x-goog-api-key too" \
	bash -c 'grep -qx "query=key=$1" <<<"$2" && grep -qx "x-goog-api-key=$1" <<<"$2"' _ "$GS" "$(out gemini)"
vr_check "a body that carries the value arrives scrubbed" grep -qx "leaked: $S" <(out leak)
vr_check "the request events name the key put in" \
	grep -q '"proto":"https","host":"api.origin.test".*"path":"/echo/v1".*"keys":"OPENAI_API_KEY"' "$T/main.audit"

# --- streaming -------------------------------------------------------------
t1=$(out sse | sed -n 's/ data: one$//p')
t2=$(out sse | sed -n 's/ data: two$//p')
vr_check "an SSE stream arrives in chunks (the first event a pause before the second)" \
	test -n "$t1" -a -n "$t2" -a $(((${t2:-0} - ${t1:-0}) / 1000000)) -ge 600

# --- the tripwire -------------------------------------------------------------
vr_check "a sentinel sent to another terminated host is refused" \
	grep -q "refused: tripwire: the sentinel of OPENAI_API_KEY sent to other.origin.test" <(out trip-other)
vr_check "… and over plain HTTP to an allowed host" \
	grep -q "denied: tripwire: the sentinel of OPENAI_API_KEY.*plain HTTP" <(out trip-plain)
vr_check "… both audited as connect events with the reason" \
	test "$(grep -c '"op":"connect".*"result":"denied".*"reason":"tripwire: the sentinel of OPENAI_API_KEY' \
		"$T/main.audit")" = 2
vr_check_not "the origin never saw the sentinel" grep -q "$S" "$O/log"
vr_check "the run's summary says a key was refused" grep -q "2 keys refused (the sentinel of OPENAI_API_KEY" "$T/main.err"

# --- read-only hosts -----------------------------------------------------------
vr_check "read=: GET and git's upload-pack pass, receive-pack and PUT are refused" \
	test "$(out read | sed 1d | head -4 | tr '\n' ' ')" = "200 200 403 403 "
vr_check "… on a kept-alive connection the second request is judged too" grep -qx -- "--pipeline 200 403" "$T/main.out"
vr_check "… Content-Length with Transfer-Encoding is refused (smuggling)" grep -qx -- "--smuggle 400" "$T/main.out"
vr_check "… refusals audited" grep -q '"reason":"POST /r.git/git-receive-pack refused.*"path":"/r.git/git-receive-pack"' \
	"$T/main.audit"
if grep -qx "no node" <(out node); then
	echo "(node is not installed: its check is left out)"
else
	vr_check "Node accepts the leaf (NODE_EXTRA_CA_CERTS) with ALPN http/1.1, and gets the key put in" \
		grep -qx "alpn=http/1.1 authorization=Bearer $S" <(out node)
fi
vr_check "the whole script ran" grep -qx -- "--end" "$T/main.out"

# --- a real value, wherever it goes, is refused ----------------------------------
"$VRT" --project "$P" --profile none --audit "$T/real.audit" --net allow-private --net allow=other.origin.test \
	--key OPENAI_API_KEY@api.origin.test -- sh -c '
	cd /tmp; k=$1
	curl -sS "https://api.origin.test/echo?q=$k"; echo
	curl -sS -H "Authorization: Bearer $k" https://api.origin.test/echo; echo
	curl -sS -o /dev/null -w "%{http_code}\n" "http://other.origin.test/?q=$k"
	curl -sS -o /dev/null -w "%{http_code}\n" "https://$k.origin.test/"
	curl -sS -o /dev/null -w "%{http_code}\n" --socks5-hostname 127.0.0.1:1080 "https://$k.origin.test/"
	echo "again=$OPENAI_API_KEY"' _ "$REAL" >"$T/real.out" 2>"$T/real.err" || true
vr_check "the same sentinel in the next run (an HMAC under the user's secret)" grep -qx "again=$S" "$T/real.out"
vr_check "a real value in a URL, an inner header, plain HTTP, a CONNECT or SOCKS host: all refused" \
	test "$(grep -c '"result":"denied".*"reason":"tripwire: the real value of OPENAI_API_KEY' "$T/real.audit")" = 5
vr_check_not "… none reached the origin" grep -q "q=$REAL" "$O/log"

# --- the trust store's entries are not on the host's disk ---------------------------
# A tmpfs of the run's mount namespace holds them (run/keys.c): while the
# sandbox runs, the host's directory in $TMPDIR is empty, and it goes after.
mkdir -p "$T/ktmp"
TMPDIR="$T/ktmp" "$VRT" --project "$P" --profile none --net allow-private --key OPENAI_API_KEY@api.origin.test \
	-- sh -c 'ls /etc/ssl/certs | wc -l >certs-inside; sleep 2' >/dev/null 2>"$T/ktmp.err" &
kpid=$!
for _ in $(seq 1 250); do [ -s "$P/certs-inside" ] && break; sleep 0.04; done
vr_check "inside, the trust store has entries ($(cat "$P/certs-inside" 2>/dev/null))" test "$(cat "$P/certs-inside" 2>/dev/null || echo 0)" -gt 2
vr_check "the host's directory of it exists" compgen -G "$T/ktmp/vault-run-certs-*"
vr_check "… and is empty ($(ls -A "$T"/ktmp/vault-run-certs-* 2>/dev/null | wc -l) entries)" \
	test "$(ls -A "$T"/ktmp/vault-run-certs-* 2>/dev/null | wc -l)" = 0
wait "$kpid" || true
vr_check_not "… and goes with the run" compgen -G "$T/ktmp/vault-run-certs-*"
rm -f "$P/certs-inside"

# --- bad input ---------------------------------------------------------------------
vr_expect_status 125 "a key with no value" env -u NOKEY "$VRT" --project "$P" --key NOKEY@api.origin.test -- true
vr_check "… names the variable" grep -q "NOKEY has no value" <("$VRT" --project "$P" --key NOKEY@api.origin.test -- true 2>&1)
vr_expect_status 125 "a key bound to an IP literal" "$VRT" --project "$P" --key OPENAI_API_KEY@127.0.0.1 -- true
vr_expect_status 125 "a key bound to a wildcard" "$VRT" --project "$P" --key 'OPENAI_API_KEY@*.origin.test' -- true
vr_expect_status 125 "--key with --net host" "$VRT" --project "$P" --net host --key OPENAI_API_KEY@api.origin.test -- true
vr_expect_status 125 "--key with --net none" "$VRT" --project "$P" --net none --key OPENAI_API_KEY@api.origin.test -- true

# --- a proxy that cannot verify the origins stops the run before COMMAND --------
# (it starts while the root is built; the supervisor reads how it went
# just before COMMAND starts: net/proxy.h vr_proxy_await_start)
st=0
VR_TEST_UPSTREAM_CA=/nonexistent/ca.pem "$VRT" --project "$P" --key OPENAI_API_KEY@api.origin.test \
	-- touch "$P/trust-ran" 2>"$T/trust.err" || st=$?
vr_check "no trust store for the origins: the run is refused with 125 (exit $st)" test "$st" = 125
vr_check "… saying why" grep -q 'no system trust store to verify the origins' "$T/trust.err"
vr_check_not "… before COMMAND ran" test -e "$P/trust-ran"

# --- the installed proxy has none of the test hooks -------------------------------
# (they are in net/tls.c, which only vault-run-proxy links)
vr_check_not "vault-run-proxy itself does not know VR_TEST_UPSTREAM_CA" \
	grep -q VR_TEST_UPSTREAM_CA "$(dirname "$VR")/vault-run-proxy"
vr_check "… the test build's does (so the check above can fail)" \
	grep -q VR_TEST_UPSTREAM_CA "$(dirname "$VRT")/vault-run-proxy"
vr_done
