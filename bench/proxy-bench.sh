#!/usr/bin/env bash
# proxy-bench.sh [BUILD_DIR] — the filtering proxy against a direct loopback
# transfer: throughput of a 256 MiB download (HTTP CONNECT tunnel and plain
# HTTP forwarding) and the added latency of 200 small requests. Prints
# ratios (proxy / direct). Not part of ctest.
set -euo pipefail
BUILD=${1:-$(cd "$(dirname "$0")/../build" 2>/dev/null && pwd || true)}
VR="$BUILD/vault-run"
[ -x "$VR" ] || { echo "no vault-run at $VR (pass the build dir)" >&2; exit 2; }
W=$(mktemp -d "${TMPDIR:-/tmp}/vr-proxy-bench.XXXXXX")
pids=()
trap 'for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; rm -rf "$W"' EXIT
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }

head -c $((256 << 20)) /dev/zero >"$W/big"
echo small >"$W/small"
web=$(free_port) proxy=$(free_port)
(cd "$W" && exec python3 -m http.server --bind 127.0.0.1 "$web" >/dev/null 2>&1) & pids+=($!)
"$VR" proxy --listen "127.0.0.1:$proxy" --socks-port 0 --allow 127.0.0.1 --allow-private >/dev/null 2>&1 & pids+=($!)
for _ in $(seq 100); do
	curl -s -o /dev/null "http://127.0.0.1:$web/small" && curl -s -o /dev/null -x "http://127.0.0.1:$proxy" "http://127.0.0.1:$web/small" && break
	sleep 0.1
done

secs() { local s e; s=$(date +%s%N); "$@" >/dev/null; e=$(date +%s%N); echo "$(( (e - s) / 1000000 ))"; }
median() { sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
url="http://127.0.0.1:$web"
run3() { for _ in 1 2 3; do secs "$@"; done | median; }
direct=$(run3 curl -s -o /dev/null "$url/big")
fwd=$(run3 curl -s -o /dev/null -x "http://127.0.0.1:$proxy" "$url/big")
tunnel=$(run3 curl -s -o /dev/null -p -x "http://127.0.0.1:$proxy" "$url/big")
small() { local i; for i in $(seq 200); do curl -s -o /dev/null "$@" "$url/small"; done; }
lat_direct=$(secs small)
lat_proxy=$(secs small -x "http://127.0.0.1:$proxy")
awk -v d="$direct" -v f="$fwd" -v t="$tunnel" -v ld="$lat_direct" -v lp="$lat_proxy" 'BEGIN {
	mb = 256
	printf "%-28s %10s %12s %8s\n", "transfer (256 MiB)", "ms", "MiB/s", "ratio"
	printf "%-28s %10d %12.0f %8s\n", "direct", d, mb / (d / 1000), "1.00"
	printf "%-28s %10d %12.0f %8.2f\n", "proxy, HTTP forwarding", f, mb / (f / 1000), (mb / (f / 1000)) / (mb / (d / 1000))
	printf "%-28s %10d %12.0f %8.2f\n", "proxy, CONNECT tunnel", t, mb / (t / 1000), (mb / (t / 1000)) / (mb / (d / 1000))
	printf "200 small requests: direct %d ms, proxy %d ms: +%.2f ms per request\n", ld, lp, (lp - ld) / 200
}'
