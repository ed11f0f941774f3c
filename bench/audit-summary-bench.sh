#!/usr/bin/env bash
# audit-summary-bench.sh [BUILD_DIR] — `vault-run audit --summary` over a
# generated log of N events (default 1,000,000, ~190 MB), against `wc -l` on
# the same file as the native floor. Prints the median of RUNS runs (default
# 3), the ratio to wc -l, events per second and peak RSS. Not part of ctest.
# Env: EVENTS, RUNS, KEEP=1 keeps the work dir.
set -euo pipefail
BUILD=${1:-$(cd "$(dirname "$0")/../build" 2>/dev/null && pwd || true)}
VR="$BUILD/vault-run"
[ -x "$VR" ] || { echo "no vault-run at $VR (pass the build dir)" >&2; exit 2; }
EVENTS=${EVENTS:-1000000} RUNS=${RUNS:-3}
W=$(mktemp -d "${TMPDIR:-/tmp}/vr-audit-bench.XXXXXX")
trap '[ "${KEEP:-0}" = 1 ] || rm -rf "$W"' EXIT

awk -v n="$EVENTS" 'BEGIN { for (i = 0; i < n; i++)
	printf "{\"ts\":\"2020-12-01T10:%02d:%02d.%06dZ\",\"run\":\"r\",\"op\":\"%s\",\"path\":\"src/dir%d/file%d.c\",\"result\":\"%s\",\"pid\":%d,\"comm\":\"proc%d\",\"exe\":\"/usr/bin/proc%d\",\"bytes_read\":%d,\"bytes_written\":0}\n",
		int(i / 60000) % 60, int(i / 1000) % 60, i % 1000000, (i % 10 == 0) ? "lookup" : "close",
		i % 50, i % 1000, (i % 10 == 0) ? "hidden" : "ok", 1000 + i % 200, i % 20, i % 20, 1 + i % 4096 }' >"$W/log.jsonl"

median() { sort -n | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }'; }
timeit() {  # timeit CMD... : seconds (3 decimals) of one run
	local s e
	s=$(date +%s.%N); "$@" >/dev/null; e=$(date +%s.%N)
	awk -v s="$s" -v e="$e" 'BEGIN { printf "%.3f\n", e - s }'
}
cat "$W/log.jsonl" >/dev/null  # warm the page cache
native=$(for _ in $(seq "$RUNS"); do timeit wc -l "$W/log.jsonl"; done | median)
summary=$(for _ in $(seq "$RUNS"); do timeit "$VR" audit --summary "$W/log.jsonl"; done | median)
rss=$(/usr/bin/time -f '%M' "$VR" audit --summary "$W/log.jsonl" 2>&1 >/dev/null | tail -1)
printf 'events %d, log %d MB\n' "$EVENTS" $(( $(stat -c %s "$W/log.jsonl") / 1000000 ))
printf 'wc -l            %8.3f s\n' "$native"
printf 'audit --summary  %8.3f s  (x%.1f of wc -l, %.0f events/s, peak RSS %s KiB)\n' "$summary" \
	"$(awk -v a="$summary" -v b="$native" 'BEGIN { print (b > 0 ? a / b : 0) }')" \
	"$(awk -v a="$summary" -v n="$EVENTS" 'BEGIN { print (a > 0 ? n / a : 0) }')" "$rss"
