#!/usr/bin/env bash
# proxy-bench.sh [BUILD_DIR] — the plain (not terminated) proxy path against
# a direct loopback connection, measured in one run: throughput of a 256 MiB
# download (median of ROUNDS, 3, interleaved) and the time to the first byte
# of a small response on a fresh connection (curl's time_starttransfer,
# median of 20), from a local `python3 -m http.server`, for:
#   direct                 curl on the host;
#   `vault-run proxy`      the standalone proxy: HTTP forwarding and a
#                          CONNECT tunnel (curl -p);
#   inside a run           curl in `vault-run --profile none --net
#                          allow-private;allow=127.0.0.1:PORT`, through the
#                          run's own proxy (forwarding and CONNECT): what an
#                          agent's traffic takes.
# Every time is curl's own (-w), so the run's start-up is not in it. The
# terminated path (--key) follows, from bench/proxy-tls-bench.sh, when the
# test build is there. Not part of ctest.
set -euo pipefail
BUILD=${1:-$(cd "$(dirname "$0")/../build" 2>/dev/null && pwd || true)}
VR="$BUILD/vault-run"
[ -x "$VR" ] || { echo "no vault-run at $VR (pass the build dir)" >&2; exit 2; }
ROUNDS=${ROUNDS:-3} N=${N:-20} MB=${MB:-256}
W=$(mktemp -d "${TMPDIR:-/tmp}/vr-proxy-bench.XXXXXX")
pids=()
trap 'for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; rm -rf "$W"' EXIT
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }

mkdir -p "$W/web" "$W/project"
head -c $((MB << 20)) /dev/zero >"$W/web/big"
echo small >"$W/web/small"
web=$(free_port) proxy=$(free_port)
(cd "$W/web" && exec python3 -m http.server --bind 127.0.0.1 "$web" >/dev/null 2>&1) & pids+=($!)
"$VR" proxy --listen "127.0.0.1:$proxy" --socks-port 0 --allow 127.0.0.1 --allow-private >/dev/null 2>&1 & pids+=($!)
for _ in $(seq 100); do
	curl -s -o /dev/null "http://127.0.0.1:$web/small" && curl -s -o /dev/null -x "http://127.0.0.1:$proxy" "http://127.0.0.1:$web/small" && break
	sleep 0.1
done
url="http://127.0.0.1:$web"

# Each line "KEY SECONDS". The same shell function runs on the host and,
# with PROXY set to the run's, inside the sandbox.
cat >"$W/project/measure.sh" <<'MEASURE'
# measure.sh URL WHAT N PREFIX PROXY: WHAT "big" (one download) or "ttfb" (N)
url=$1 what=$2 n=$3 prefix=$4 proxy=$5
one() {  # one() KEY CURL-ARGS…
	local key=$1; shift
	if [ "$what" = big ]; then
		curl -sS --noproxy '' "$@" -o /dev/null -w "$key %{time_total}\n" "$url/big"
	else
		for _ in $(seq "$n"); do curl -sS --noproxy '' "$@" -o /dev/null -w "$key %{time_starttransfer}\n" "$url/small"; done
	fi
}
if [ -z "$proxy" ]; then
	one "$prefix-direct"
else
	one "$prefix-forward" -x "$proxy"
	one "$prefix-connect" -p -x "$proxy"
fi
MEASURE
inside() {  # the run's proxy is $HTTP_PROXY inside
	"$VR" --quiet --profile none --project "$W/project" --net "allow-private;allow=127.0.0.1:$web" \
		-- bash -c 'bash "$1" "$2" "$3" "$4" run "$HTTP_PROXY"' _ "$W/project/measure.sh" "$url" "$1" "$N"
}
host() { bash "$W/project/measure.sh" "$url" "$1" "$N" "$2" "$3"; }
load0=$(cut -d' ' -f1-3 /proc/loadavg)
for _ in $(seq "$ROUNDS"); do
	host big host ""
	host big proxy "http://127.0.0.1:$proxy"
	inside big
done >"$W/big"
{ host ttfb host ""; host ttfb proxy "http://127.0.0.1:$proxy"; inside ttfb; } >"$W/ttfb"
echo "plain proxy path, loopback, load $load0 → $(cut -d' ' -f1-3 /proc/loadavg) ($(nproc) cores):"
python3 - "$W" "$MB" "$ROUNDS" "$N" <<'PY'
import statistics, sys
W, mb, rounds, n = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]
def load(name):
    d = {}
    for line in open(f"{W}/{name}"):
        k, v = line.split()
        d.setdefault(k, []).append(float(v))
    return d
big, ttfb = load("big"), load("ttfb")
rows = [("host-direct", "direct"), ("proxy-forward", "`vault-run proxy`, HTTP forwarding"),
        ("proxy-connect", "`vault-run proxy`, CONNECT tunnel"), ("run-forward", "inside a run, HTTP forwarding"),
        ("run-connect", "inside a run, CONNECT tunnel")]
d_rate = mb / statistics.median(big["host-direct"])
d_ttfb = statistics.median(ttfb["host-direct"]) * 1000
print(f"| path | {mb} MiB, MiB/s (median of {rounds}) | / direct | first byte, ms (median of {n}) | − direct |")
print("|---|---:|---:|---:|---:|")
for key, label in rows:
    rate = mb / statistics.median(big[key])
    t = statistics.median(ttfb[key]) * 1000
    print(f"| {label} | {rate:.0f} | {rate / d_rate:.2f} | {t:.2f} | {t - d_ttfb:+.2f} |")
PY

# The terminated path (--key: decrypt, inject, scrub, re-encrypt) against a
# plain CONNECT tunnel to the same HTTPS origin, when the test build's
# vault-run-testhooks is there to reach a loopback origin with a test CA.
if [ -x "$BUILD/tests/bin/vault-run-testhooks" ]; then
	echo
	"$(dirname "$0")/proxy-tls-bench.sh" "$BUILD"
else
	echo "(the TLS-terminated rows need $BUILD/tests/bin/vault-run-testhooks: bench/proxy-tls-bench.sh)"
fi
