#!/usr/bin/env bash
# `vault-run --net allow=…`: the sandbox has its own network namespace and
# reaches the outside only through the filtering proxy the supervisor starts
# in it. A local HTTP server on the host's 127.0.0.1 stands for the outside:
# through the proxy it is refused as a loopback address unless allow-private,
# refused for a name not in the allow list, and never reachable directly.
. "$(dirname "$0")/../lib/libtest.sh"
. "$(dirname "$0")/../lib/view-lib.sh"
. "$(dirname "$0")/../lib/sandbox-lib.sh"
vr_require_cmd curl python3
vr_require_sandbox

P="$T/project"
view_make_demo "$P"
cd "$P"

# --- a local origin server on the host's loopback ------------------------
mkdir -p "$T/www"
echo "hello from the origin" >"$T/www/index.txt"
(cd "$T/www" && exec python3 -u -m http.server 0 --bind 127.0.0.1) >"$T/web.log" 2>&1 &
vr_mount_pids+=("$!")
WP=
for _ in $(seq 1 600); do
	WP=$(sed -n 's/.*port \([0-9]*\).*/\1/p' "$T/web.log" | head -1)
	[ -n "$WP" ] && break
	sleep 0.05
done
[ -n "$WP" ] || { cat "$T/web.log"; vr_fail "the test HTTP server did not start"; vr_done; }
URL="http://localhost:$WP/index.txt"
vr_check "the server answers on the host (so a failure inside is the sandbox's doing)" \
	curl -s -f --max-time 20 --noproxy '*' -o /dev/null "http://127.0.0.1:$WP/index.txt"

# in_sandbox NAME NET-ARGS... -- SCRIPT: runs SCRIPT in the sandbox; stdout
# in $T/NAME.out, stderr in $T/NAME.err, audit log in $T/NAME.audit.
in_sandbox() {
	local name=$1; shift
	local args=()
	while [ "$1" != -- ]; do args+=("$1"); shift; done
	shift
	"$VR" --project "$P" --profile none --audit "$T/$name.audit" "${args[@]}" -- sh -c "$1" \
		>"$T/$name.out" 2>"$T/$name.err" || true
}
# Through the proxy the environment names (NO_PROXY lists localhost, so
# --noproxy '' makes curl use it for this loopback name all the same).
VIA_PROXY='curl -s --max-time 20 --noproxy "" -x "$HTTP_PROXY" -o body -w "%{http_code}" '"$URL"'; echo; cat body'

in_sandbox strict --net allow=localhost -- "cd /tmp; $VIA_PROXY"
vr_check "allowed name resolving to loopback → 403" grep -qx 403 <(head -1 "$T/strict.out")
vr_check "… the body names vault-run and the reason" grep -q "vault-run.*loopback" "$T/strict.out"
vr_check "… the refusal is in the run's audit log" \
	grep -q '"op":"connect".*"host":"localhost".*"result":"denied"' "$T/strict.audit"

in_sandbox private --net allow=localhost --net allow-private -- "cd /tmp; $VIA_PROXY"
vr_check "with allow-private the page arrives through the proxy" grep -qx 200 <(head -1 "$T/private.out")
vr_check "… its body" grep -q "hello from the origin" "$T/private.out"
vr_check "… an allowed connect event with bytes" \
	grep -q '"op":"connect".*"result":"ok"' "$T/private.audit"

in_sandbox socks --net allow=localhost --net allow-private -- \
	"curl -s --max-time 20 --noproxy '' --socks5-hostname \"\${ALL_PROXY#socks5h://}\" $URL"
vr_check "the SOCKS5 proxy (ALL_PROXY) also works" grep -q "hello from the origin" "$T/socks.out"

in_sandbox other --net allow=example.invalid --net allow-private -- "cd /tmp; $VIA_PROXY"
vr_check "a name not in the allow list → 403" grep -qx 403 <(head -1 "$T/other.out")
vr_check "… body: not in the allow list" grep -q "not in the allow list" "$T/other.out"

in_sandbox direct --net allow=localhost --net allow-private -- \
	"curl -s --max-time 10 --noproxy '*' -o /dev/null http://127.0.0.1:$WP/index.txt; echo direct=\$?"
vr_check "direct TCP to the host's loopback fails (own netns)" grep -q "direct=7" "$T/direct.out"

in_sandbox env --net allow=localhost -- 'env | grep -i _proxy= | sort'
vr_check "HTTP_PROXY points at the proxy inside" grep -qx "HTTP_PROXY=http://127.0.0.1:3128" "$T/env.out"
vr_check "ALL_PROXY is socks5h" grep -qx "ALL_PROXY=socks5h://127.0.0.1:1080" "$T/env.out"
vr_check "NO_PROXY keeps loopback direct" grep -q "^NO_PROXY=localhost" "$T/env.out"

in_sandbox none --net none -- 'env | grep -ci _proxy=; cat /proc/net/tcp | wc -l'
vr_check "--net none: no proxy variables" grep -qx 0 <(head -1 "$T/none.out")
vr_check "--net none: nothing listens" grep -qx 1 <(sed -n 2p "$T/none.out")

dry=$("$VR" --project "$P" --profile none --dry-run --net allow=localhost,example.com -- true)
vr_check "--dry-run shows the allow list" grep -q "^net: allow localhost,example.com" <<<"$dry"
vr_check "--dry-run lists the proxy variables by name" grep -qx "env HTTP_PROXY" <<<"$dry"

# The config's `net = allow=…` is the default when --net is not given.
mkdir -p "$T/xdg/vault-run"
printf '[sandbox]\nnet = allow=localhost\n' >"$T/xdg/vault-run/config"
XDG_CONFIG_HOME="$T/xdg" in_sandbox config -- "cd /tmp; $VIA_PROXY"
vr_check "config net = allow=localhost starts the proxy" grep -qx 403 <(head -1 "$T/config.out")
vr_check "… and no warning about it" bash -c "! grep -q 'not supported' '$T/config.err'"
# The proxy is a fork of vault-run: its command line names this run's log.
vr_check "the proxy is gone after the run" bash -c "! pgrep -f -- '[-]-audit $T/config.audit'"

bad=0
"$VR" --project "$P" --profile none --net 'allow=exa mple.com' -- true 2>"$T/bad.err" || bad=$?
vr_check "a malformed pattern is refused with 125" test "$bad" = 125
vr_done
