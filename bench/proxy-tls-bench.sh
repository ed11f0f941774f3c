#!/usr/bin/env bash
# proxy-tls-bench.sh [BUILD_DIR] — a TLS-terminated tunnel (--key NAME@HOST:
# the proxy decrypts, injects, scrubs, re-encrypts) against a plain CONNECT
# tunnel to the same loopback HTTPS origin, both from inside a run:
# throughput of a 64 MiB download and the time to the first byte of a small
# response on a fresh connection (median of 20). Needs the test build's
# tests/bin/vault-run-testhooks (its proxy can reach a loopback origin with
# a test CA), python3, openssl, curl. Not part of ctest.
set -euo pipefail
BUILD=${1:-$(cd "$(dirname "$0")/../build" 2>/dev/null && pwd || true)}
VRT="$BUILD/tests/bin/vault-run-testhooks"
SRC=$(cd "$(dirname "$0")/.." && pwd)
[ -x "$VRT" ] || { echo "no $VRT (build with -DVR_BUILD_TESTS=ON)" >&2; exit 2; }
W=$(mktemp -d "${TMPDIR:-/tmp}/vr-proxy-tls-bench.XXXXXX")
pids=()
trap 'for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; rm -rf "$W"' EXIT
mkdir -p "$W/project" "$W/state"
ec=(-newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes)
openssl req -x509 "${ec[@]}" -keyout "$W/ca.key" -out "$W/ca.pem" -days 1 -subj /CN=bench-ca \
	-addext basicConstraints=critical,CA:TRUE -addext keyUsage=critical,keyCertSign 2>/dev/null
openssl req -new "${ec[@]}" -keyout "$W/leaf.key" -out "$W/leaf.csr" -subj /CN=api.origin.test 2>/dev/null
printf 'subjectAltName=DNS:api.origin.test,DNS:plain.origin.test\nextendedKeyUsage=serverAuth\n' >"$W/ext"
openssl x509 -req -in "$W/leaf.csr" -CA "$W/ca.pem" -CAkey "$W/ca.key" -CAcreateserial -days 1 \
	-extfile "$W/ext" -out "$W/leaf.pem" 2>/dev/null
cat "$W/leaf.pem" "$W/ca.pem" "$W/leaf.key" >"$W/server.pem"
# Inside, under a name the view does not hide (*.pem is a secret shape).
cp "$W/ca.pem" "$W/project/origin-ca.crt"
python3 "$SRC/tests/helpers/tls-origin.py" "$W/server.pem" "$W/port" - >/dev/null 2>&1 & pids+=($!)
for _ in $(seq 100); do [ -s "$W/port" ] && break; sleep 0.05; done
OP=$(cat "$W/port")

cat >"$W/project/inside.sh" <<'INSIDE'
cd /tmp
median() { sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
# plain: the origin's own port, its own CA (the proxy only relays bytes)
plain="https://plain.origin.test:$1"
tls="https://api.origin.test"
for kind in plain tls; do
	url=$plain; ca=(--cacert "$2/origin-ca.crt"); [ $kind = tls ] && { url=$tls; ca=(); }
	curl -sS "${ca[@]}" -o /dev/null "$url/" # warm
	for i in 1 2 3; do curl -sS "${ca[@]}" -H "Authorization: Bearer $BENCH_KEY" -o /dev/null -w '%{time_total}\n' "$url/big?64"; done |
		median | sed "s/^/$kind-total /"
	for i in $(seq 20); do curl -sS "${ca[@]}" -H "Authorization: Bearer $BENCH_KEY" -o /dev/null -w '%{time_starttransfer}\n' "$url/echo"; done |
		median | sed "s/^/$kind-ttfb /"
done
INSIDE
out=$(BENCH_KEY=sk-proj-BenchValue0123456789abcdefghijklmnop XDG_STATE_HOME=$W/state \
	VR_TEST_RESOLVE=api.origin.test=127.0.0.1,plain.origin.test=127.0.0.1 VR_TEST_UPSTREAM_PORT=$OP \
	VR_TEST_UPSTREAM_CA=$W/ca.pem \
	"$VRT" --project "$W/project" --profile none --quiet --audit "$W/audit.jsonl" \
	--net "allow-private;allow=plain.origin.test:$OP" --key BENCH_KEY@api.origin.test \
	-- bash "$W/project/inside.sh" "$OP" "$W/project")
awk '{v[$1] = $2} END {
	mb = 64
	printf "%-34s %10s %10s %8s\n", "from inside a run (64 MiB)", "s", "MiB/s", "ratio"
	printf "%-34s %10.3f %10.0f %8s\n", "plain CONNECT tunnel", v["plain-total"], mb / v["plain-total"], "1.00"
	printf "%-34s %10.3f %10.0f %8.2f\n", "TLS terminated (--key)", v["tls-total"], mb / v["tls-total"], v["plain-total"] / v["tls-total"]
	printf "first byte, fresh connection (median of 20): plain %.1f ms, terminated %.1f ms: +%.1f ms\n",
		v["plain-ttfb"] * 1000, v["tls-ttfb"] * 1000, (v["tls-ttfb"] - v["plain-ttfb"]) * 1000
}' <<<"$out"
