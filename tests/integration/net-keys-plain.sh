#!/usr/bin/env bash
# The tripwire on plain-HTTP bodies (docs/network.md "Keys"): with a key
# bound, what a client sends after a plain-HTTP request head (the body, and
# anything after it) goes through the proxy's scan. A sentinel or the real
# value in it ends the connection before the bytes that complete it leave:
# a 403 to the client, a connect event denied with the tripwire's reason,
# the origin never holding the value whole, even when the value straddles
# two writes. Bodies without one arrive intact: an innocent one that ends
# in what could begin a key, and several MiB; a chunked body is refused
# while keys are bound, and nothing after a body is sent (a sentinel cut by
# the body's end, a second request).
#
# The origin (tests/helpers/plain-origin.py) is on the host's loopback,
# allowed with allow-private and allow=127.0.0.1:PORT, and keeps every byte
# each connection brought it.
. "$(dirname "$0")/../lib/libtest.sh"
. "$(dirname "$0")/../lib/view-lib.sh"
. "$(dirname "$0")/../lib/sandbox-lib.sh"
vr_require_cmd curl python3 sha256sum
vr_require_sandbox

P="$T/project"
view_make_demo "$P"
cd "$P"

O="$T/origin"
mkdir -p "$O"
python3 "$VR_SOURCE_DIR/tests/helpers/plain-origin.py" "$O/port" "$O" >"$O/out" 2>&1 &
vr_mount_pids+=("$!")
for _ in $(seq 1 200); do [ -s "$O/port" ] && break; sleep 0.05; done
[ -s "$O/port" ] || { cat "$O/out"; vr_fail "the origin did not start"; vr_done; }
OP=$(cat "$O/port")

REAL=sk-proj-PlainReal0123456789abcdefghijKLMNOPqrstuvw
printf 'OPENAI_API_KEY=%s\n' "$REAL" >"$T/keys.env"

# Inside: $1 the real value (the test knows it from outside; a file in the
# project holding it would be masked by the view's scanner), $2 the port.
cat >"$P/inside.sh" <<'EOF'
cd /tmp
real=$1 port=$2
U="http://127.0.0.1:$port"
# NO_PROXY lists 127.0.0.1: --noproxy '' sends it through the proxy all the same.
post() { curl -sS -m 60 --noproxy '' -x "$HTTP_PROXY" -H 'Expect:' -w '\ncode=%{http_code}\n' "$@" 2>&1 || true; }
echo "sentinel=$OPENAI_API_KEY"
echo "--sentinel"; post -d "note=hello&key=$OPENAI_API_KEY&more=1" "$U/sentinel"
printf 'note=%s\n' "$real" >real.txt
echo "--real"; post --data-binary @real.txt "$U/real"
echo "--split"; python3 - "$real" "$port" <<'PY'
import os, socket, sys, time
real, port = sys.argv[1].encode(), sys.argv[2]
proxy = os.environ["HTTP_PROXY"].split("//")[1].rstrip("/").rsplit(":", 1)
body = b"before=" + real + b"&after=1"
s = socket.create_connection((proxy[0], int(proxy[1])))
s.sendall(b"POST http://127.0.0.1:%s/split HTTP/1.1\r\nHost: 127.0.0.1:%s\r\nContent-Length: %d\r\n\r\n"
          % (port.encode(), port.encode(), len(body)))
half = 7 + len(real) // 2
s.sendall(body[:half])
time.sleep(1)  # two reads for the proxy, most likely: its scan must join them
try:
    s.sendall(body[half:])
    out = b""
    while True:
        b = s.recv(65536)
        if not b:
            break
        out += b
    print(out.decode("latin-1"))
    print("code=" + (out.split(b" ")[1].decode() if out else "none"))
except ConnectionResetError:
    print("code=reset")
PY
echo "--innocent"; post -d 'note=hello world&answer=yes' "$U/innocent"
echo "--chunked"; post -H 'Transfer-Encoding: chunked' -d 'chunked=yes' "$U/chunked"
echo "--cut"; python3 - "$OPENAI_API_KEY" "$port" <<'PY'
# The sentinel cut by the body's end: a Content-Length that ends the body
# 12 bytes into it, the rest right behind in the same write, then a second
# request: nothing after the body may reach the origin.
import os, socket, sys
sent, port = sys.argv[1].encode(), sys.argv[2].encode()
proxy = os.environ["HTTP_PROXY"].split("//")[1].rstrip("/").rsplit(":", 1)
body = b"x" + sent[:12]
s = socket.create_connection((proxy[0], int(proxy[1])))
s.sendall(b"POST http://127.0.0.1:%s/cut HTTP/1.1\r\nHost: 127.0.0.1:%s\r\nContent-Length: %d\r\n\r\n"
          % (port, port, len(body)) + body + sent[12:] +
          b"\r\n\r\nGET http://127.0.0.1:%s/second HTTP/1.1\r\nHost: 127.0.0.1:%s\r\n\r\n" % (port, port))
out = b""
s.settimeout(20)
try:
    while True:
        b = s.recv(65536)
        if not b:
            break
        out += b
except (ConnectionResetError, socket.timeout):
    pass
print("code=" + (out.split(b" ")[1].decode() if out else "none"))
PY
head -c 6000000 /dev/urandom >big.bin
echo "--big"; post --data-binary @big.bin "$U/big"
sha256sum <big.bin
echo "--end"
EOF

"$VR" --project "$P" --profile none --audit "$T/audit" --env-file "$T/keys.env" \
	--key OPENAI_API_KEY@api.example.test --net allow-private --net "allow=127.0.0.1:$OP" \
	-- sh "$P/inside.sh" "$REAL" "$OP" >"$T/out" 2>"$T/err" || true
out() { sed -n "/^--$1/,/^--/p" "$T/out"; }
S=$(sed -n 's/^sentinel=//p' "$T/out")
vr_check "inside, the key is a sentinel" test "${S:0:8}" = sk-proj- -a "${#S}" = "${#REAL}" -a "$S" != "$REAL"
vr_check "the whole script ran" grep -qx -- "--end" "$T/out"

# --- a key in a body: refused, audited, never whole at the origin ------------
vr_check "the sentinel in a POST body: 403 naming the tripwire" \
	grep -q "denied: tripwire: the sentinel of OPENAI_API_KEY sent to 127.0.0.1.*plain-HTTP request body" \
	<(out sentinel)
vr_check "… code 403" grep -qx "code=403" <(out sentinel)
vr_check "the real value in a body (curl --data-binary @file): 403" \
	grep -q "denied: tripwire: the real value of OPENAI_API_KEY.*plain-HTTP request body" <(out real)
vr_check "… code 403" grep -qx "code=403" <(out real)
vr_check "the real value split across two writes: refused all the same" \
	grep -q "denied: tripwire: the real value of OPENAI_API_KEY.*plain-HTTP request body" <(out split)
vr_check "… code 403" grep -qx "code=403" <(out split)
for path in sentinel real split; do
	n=$(awk -v p="/$path" '$2 == p { print $1 }' "$O/log")
	vr_check "/$path reached the origin (its head), which logged the connection" test -n "$n" -a -s "$O/conn-$n.bin"
	vr_check "… and never completed the body" grep -q "^$n /$path .* end=\(eof\|reset\)$" "$O/log"
done
vr_check_not "the origin never got the sentinel whole" grep -q -a -F "$S" "$O"/conn-*.bin
vr_check_not "… nor the real value" grep -q -a -F "$REAL" "$O"/conn-*.bin
vr_check_not "… nor the half the split request's second write completed" \
	grep -q -a -F "${REAL:0:$((${#REAL} / 2))}" "$O"/conn-*.bin
vr_check "the refusals are connect events, denied with the tripwire's reason" \
	test "$(grep -c '"op":"connect","proto":"http","host":"127.0.0.1","port":'"$OP"',"result":"denied".*"reason":"tripwire: .*plain-HTTP request body' \
		"$T/audit")" = 3
vr_check_not "… never holding a value (the run-start event has the command, the value its argument)" \
	bash -c 'grep "\"op\":\"connect\"" "$1" | grep -q -F -e "$2" -e "$3"' _ "$T/audit" "$REAL" "$S"
vr_check "vault-run audit --op connect lists them" \
	test "$("$VR" audit --op connect "$T/audit" | grep -c "denied.*127.0.0.1:$OP")" = 4
vr_check "the run's summary counts them" grep -q "3 keys refused (the sentinel of OPENAI_API_KEY" "$T/err"

# --- bodies without a key arrive intact ------------------------------------
vr_check "an innocent body ending in what could begin a key (…=yes, s of sk-) arrives whole" \
	test "$(out innocent | sed -n 's/^received=\([0-9]*\) sha256=\([0-9a-f]*\)$/\2/p')" = \
	"$(printf 'note=hello world&answer=yes' | sha256sum | cut -d' ' -f1)"
vr_check "… with a 200" grep -qx "code=200" <(out innocent)
vr_check "a chunked body is refused while keys are bound (its framing could cut a key): 403" \
	grep -q "denied: a chunked plain-HTTP body" <(out chunked)
vr_check_not "… and never reached the origin" grep -q " /chunked " "$O/log"
n=$(awk '$2 == "/cut" { print $1 }' "$O/log")
vr_check "a sentinel cut by the body's end: the body reached the origin" test -n "$n" -a -s "$O/conn-$n.bin"
vr_check "… and nothing after it (the rest of the sentinel, a second request)" \
	test "$(tail -c 17 "$O/conn-$n.bin" | od -An -c | tr -d ' \n')" = "\\r\\n\\r\\nx${S:0:12}"
vr_check_not "… no second request reached it" grep -q " /second " "$O/log"
big_sent=$(out big | sed -n 's/^\([0-9a-f]\{64\}\)  -$/\1/p')
vr_check "6 MB of random bytes arrive intact (nothing lost or reordered by the hold-back)" \
	grep -qx "received=6000000 sha256=$big_sent" <(out big)
vr_check "… allowed connect events for them" \
	test "$(grep -c '"proto":"http","host":"127.0.0.1","port":'"$OP"',"result":"ok"' "$T/audit")" = 3

# --- without a key, plain HTTP is relayed as before ------------------------
"$VR" --project "$P" --profile none --audit "$T/nokey.audit" --net allow-private --net "allow=127.0.0.1:$OP" \
	-- sh -c 'cd /tmp; curl -sS -m 60 --noproxy "" -x "$HTTP_PROXY" -d "x=$1" "http://127.0.0.1:$2/nokey"' \
	_ "$REAL" "$OP" >"$T/nokey.out" 2>&1 || true
vr_check "with no key bound, a body is not scanned (nothing to find)" grep -q "^received=" "$T/nokey.out"
vr_done
