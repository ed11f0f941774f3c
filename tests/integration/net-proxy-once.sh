#!/bin/bash
# The network proxy on its own (`vault-run proxy`), against a local HTTP
# server on 127.0.0.1: deny by default, names resolving to loopback refused
# unless --allow-private, port-restricted patterns, HTTP / CONNECT / SOCKS5,
# 403 bodies naming the reason, audit lines with byte counts, and a proxy
# listening inside a separate network namespace (unshare -r, as the
# supervisor does it). All traffic stays on this machine's loopback.
. "$(dirname "$0")/../lib/libtest.sh"
vr_require_cmd curl python3

# --- a local origin server ------------------------------------------------
mkdir -p "$T/www"
echo "hello from the origin" >"$T/www/index.txt"
(cd "$T/www" && exec python3 -u -m http.server 0 --bind 127.0.0.1) >"$T/web.log" 2>&1 &
WEB_PID=$!
vr_mount_pids+=("$WEB_PID") # killed at exit by libtest
WP=
for _ in $(seq 1 600); do
	WP=$(sed -n 's/.*port \([0-9]*\).*/\1/p' "$T/web.log" | head -1)
	[ -n "$WP" ] && break
	sleep 0.05
done
[ -n "$WP" ] || { cat "$T/web.log"; vr_fail "the test HTTP server did not start"; vr_done; }

# start_proxy NAME ARGS... — runs `vault-run proxy` on ephemeral ports;
# sets HP (HTTP port), SP (SOCKS port), PROXY_PID.
start_proxy() {
	local name=$1; shift
	"$VR" proxy --listen 127.0.0.1:0 --audit "$T/$name.audit" "$@" >"$T/$name.ready" 2>"$T/$name.err" &
	PROXY_PID=$!
	vr_mount_pids+=("$PROXY_PID")
	for _ in $(seq 1 600); do
		if grep -q socks= "$T/$name.ready" 2>/dev/null; then
			HP=$(sed -n 's/^http=127.0.0.1:\([0-9]*\) .*/\1/p' "$T/$name.ready")
			SP=$(sed -n 's/.* socks=127.0.0.1:\([0-9]*\)$/\1/p' "$T/$name.ready")
			return 0
		fi
		kill -0 "$PROXY_PID" 2>/dev/null || break
		sleep 0.05
	done
	cat "$T/$name.err"
	vr_fail "proxy $name did not start"
	vr_done
}

# http_code CURL-ARGS... — prints the HTTP status (000 when none), body in $T/body.
http_code() { curl -s -m 20 -o "$T/body" -w '%{http_code}' "$@" || true; }
connect_code() { curl -s -m 20 -o /dev/null -w '%{http_connect}' -p "$@" || true; }
body_has() { grep -q -- "$1" "$T/body"; }

# --- without --allow-private: names of the loopback are refused ----------
start_proxy strict --allow "localhost,*.allowed.test"
STRICT_PID=$PROXY_PID
code=$(http_code -x "http://127.0.0.1:$HP" "http://localhost:$WP/index.txt")
vr_check "allowed name resolving to loopback → 403" [ "$code" = 403 ]
vr_check "… and the body says why (vault-run, loopback, the flag)" \
	bash -c "grep -q vault-run '$T/body' && grep -q 'loopback' '$T/body' && grep -q 'allow-private' '$T/body'"
code=$(http_code -x "http://127.0.0.1:$HP" "http://other.test/")
vr_check "name not in the allow list → 403" [ "$code" = 403 ]
vr_check "… body names the allow list" body_has "not in the allow list"
code=$(connect_code -x "http://127.0.0.1:$HP" "http://other.test:$WP/")
vr_check "CONNECT to a denied name → 403" [ "$code" = 403 ]
code=$(connect_code -x "http://127.0.0.1:$HP" "http://127.0.0.1:$WP/")
vr_check "CONNECT to an IP literal not in the list → 403" [ "$code" = 403 ]
vr_check_not "SOCKS5 to an allowed name resolving to loopback fails" \
	curl -s -m 20 -o /dev/null --socks5-hostname "127.0.0.1:$SP" "http://localhost:$WP/index.txt"
code=$(http_code "http://127.0.0.1:$HP/index.txt")
vr_check "a request that is not a proxy request → 400" [ "$code" = 400 ]
# Negative control: the origin itself answers, so the 403s above are the proxy's.
vr_check "the origin answers directly" bash -c "curl -s -m 20 'http://127.0.0.1:$WP/index.txt' | grep -q 'hello from the origin'"

# --- with --allow-private, and a port-restricted pattern ----------------
start_proxy open --allow "localhost:$WP" --allow-private
OPEN_PID=$PROXY_PID
code=$(http_code -x "http://127.0.0.1:$HP" "http://localhost:$WP/index.txt")
vr_check "allowed name + --allow-private → 200" [ "$code" = 200 ]
vr_check "… with the origin's body" body_has "hello from the origin"
code=$(http_code -p -x "http://127.0.0.1:$HP" "http://localhost:$WP/index.txt")
vr_check "CONNECT tunnel to an allowed name → 200" [ "$code" = 200 ]
vr_check "… with the origin's body" body_has "hello from the origin"
vr_check "SOCKS5 (socks5h) to an allowed name works" \
	bash -c "curl -s -m 20 --socks5-hostname '127.0.0.1:$SP' 'http://localhost:$WP/index.txt' | grep -q 'hello from the origin'"
vr_check_not "SOCKS5 to a denied name fails" \
	curl -s -m 20 -o /dev/null --socks5-hostname "127.0.0.1:$SP" "http://other.test:$WP/"
code=$(http_code -x "http://127.0.0.1:$HP" "http://localhost:$((WP == 65535 ? 1 : WP + 1))/")
vr_check "the allowed name on another port → 403" [ "$code" = 403 ]

# --- load: 200 concurrent tunnels, all answered, no fd leak -------------
fds_before=$(ls /proc/"$OPEN_PID"/fd | wc -l)
mkdir -p "$T/load"
for i in $(seq 1 200); do
	curl -s -m 60 -p -x "http://127.0.0.1:$HP" "http://localhost:$WP/index.txt" -o "$T/load/$i" &
done
wait_status=0
for job in $(jobs -p); do
	case " ${vr_mount_pids[*]} " in *" $job "*) continue ;; esac
	wait "$job" || wait_status=1
done
answered=$(cat "$T/load"/* | grep -c "hello from the origin" || true)
vr_check "200 concurrent CONNECT tunnels all answered ($answered)" [ "$answered" = 200 ]
fds_after=
for _ in $(seq 1 200); do
	fds_after=$(ls /proc/"$OPEN_PID"/fd | wc -l)
	[ "$fds_after" -le "$fds_before" ] && break
	sleep 0.05
done
vr_check "no fd leak in the proxy ($fds_before before, $fds_after after)" [ "$fds_after" -le "$fds_before" ]

# --- audit ---------------------------------------------------------------
for p in "$STRICT_PID" "$OPEN_PID"; do kill -TERM "$p"; done
st=0; wait "$STRICT_PID" || st=$?
vr_check "proxy exits 0 on SIGTERM" [ "$st" = 0 ]
st=0; wait "$OPEN_PID" || st=$?
vr_check "the proxy that carried the load exits 0 too (it once died in libgio)" [ "$st" = 0 ]
vr_check_not "no sanitizer report from either proxy (ASan builds)" \
	grep -qE 'Sanitizer|runtime error' "$T/strict.err" "$T/open.err"
cat >"$T/check_audit.py" <<'EOF'
import json, sys
strict = [json.loads(l) for l in open(sys.argv[1])]
opened = [json.loads(l) for l in open(sys.argv[2])]
def has(events, **kw):
    return any(all(e.get(k) == v for k, v in kw.items()) for e in events)
assert all(e["op"] == "connect" for e in strict + opened)
assert has(strict, proto="http", host="localhost", result="denied", rule="localhost")
assert any("loopback" in (e["reason"] or "") for e in strict)
assert has(strict, proto="http", host="other.test", port=80, result="denied", rule=None)
assert has(strict, proto="connect", host="other.test", result="denied")
assert has(strict, proto="socks5", host="localhost", result="denied")
ok = [e for e in opened if e["result"] == "ok"]
assert {e["proto"] for e in ok} == {"http", "connect", "socks5"}, ok
assert all(e["bytes_up"] > 0 and e["bytes_down"] > 20 and e["address"] == "127.0.0.1" for e in ok), ok
assert all(isinstance(e["duration_ms"], int) for e in opened)
assert has(opened, proto="socks5", host="other.test", result="denied")
EOF
vr_check "audit: every decision, with reasons, rules and byte counts" \
	python3 "$T/check_audit.py" "$T/strict.audit" "$T/open.audit"

# --- CLI errors --------------------------------------------------------
st=0; "$VR" proxy --allow "example.com:99999" 2>"$T/bad.err" || st=$?
vr_check "a port out of range is an error (125)" [ "$st" = 125 ]
vr_check "… naming the pattern" grep -q "example.com:99999" "$T/bad.err"
st=0; "$VR" proxy --allow "a..b" 2>"$T/bad.err" || st=$?
vr_check "a malformed name is an error" [ "$st" = 125 ]

# --- the listener inside another netns (as the supervisor does it) -------
# As root of a user namespace (unshare -r), like an unprivileged
# supervisor: a holder process owns a fresh netns; the proxy listens in it,
# while its outbound connections leave from our netns, where the origin is.
if unshare -r -n true 2>/dev/null && command -v nsenter >/dev/null; then
	cat >"$T/inner.sh" <<'EOF'
set -u
unshare -n sleep 600 &
holder=$!
for _ in $(seq 1 600); do
	[ "$(readlink /proc/$holder/ns/net)" != "$(readlink /proc/self/ns/net)" ] && break
	sleep 0.05
done
"$VR" proxy --netns /proc/$holder/ns/net --listen 127.0.0.1:3128 --allow-private \
	--allow "localhost:$WP" --audit "$T/netns.audit" >"$T/netns.ready" 2>"$T/netns.err" &
proxy=$!
for _ in $(seq 1 600); do grep -q socks= "$T/netns.ready" 2>/dev/null && break; sleep 0.05; done
inside() { nsenter --net=/proc/$holder/ns/net "$@"; }
r=0
inside curl -s -m 20 -x http://127.0.0.1:3128 "http://localhost:$WP/index.txt" >"$T/netns.body" || r=1
grep -q "hello from the origin" "$T/netns.body" || { echo "netns: no body through the proxy"; r=1; }
if inside curl -s -m 5 -o /dev/null "http://127.0.0.1:$WP/index.txt"; then
	echo "netns: the origin is reachable directly from inside"; r=1
fi
code=$(inside curl -s -m 20 -o /dev/null -w '%{http_code}' -x http://127.0.0.1:3128 http://other.test/ || true)
[ "$code" = 403 ] || { echo "netns: denied name gave $code"; r=1; }
if curl -s -m 5 -o /dev/null -x http://127.0.0.1:3128 "http://localhost:$WP/index.txt"; then
	echo "netns: the proxy is reachable from outside its netns"; r=1
fi
kill -TERM $proxy; wait $proxy
kill $holder; wait $holder 2>/dev/null
cat "$T/netns.err"
exit $r
EOF
	vr_check "proxy listening in a separate netns (unshare -r): reachable inside only, forwards out" \
		env VR="$VR" T="$T" WP="$WP" unshare -r bash "$T/inner.sh"
else
	echo "note: no user+net namespaces here, netns part not run"
	[ "${VR_TESTS_MUST_WORK:-0}" = 1 ] && vr_fail "VR_TESTS_MUST_WORK=1 but unshare -r -n is not available"
fi

vr_done
