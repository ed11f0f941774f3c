#!/usr/bin/env bash
# daemon-bench.sh [BUILD_DIR] — the view daemon's own costs:
# 1. memory: peak RSS (VmHWM) of `vault-run mount` after a full walk
#    (`find -printf` stats every entry, then `du -s`) of a generated tree of
#    BIG files (default 100,000: 1,000 directories × 100);
# 2. audit: `rg` for a missing string over a 10k-file tree through four
#    views of it logging to a file at level `writes`, `reads` (the default of
#    a run), `opens` and `all`; runs alternate, medians of RUNS (default 5);
#    events written per second at `all` and the `dropped` count the log
#    reports. Below `opens` the kernel opens files without asking the daemon
#    (docs/view.md, no-open mode); `opens` and `all` promise an event per
#    open and close, so the kernel sends them: `all`/`opens` is what logging
#    every event costs, `opens`/`writes` what the opens themselves cost.
# Not part of ctest. Env: BIG, RUNS, KEEP=1.
set -euo pipefail
BUILD=${1:-$(cd "$(dirname "$0")/../build" 2>/dev/null && pwd || true)}
. "$(dirname "$0")/bench-lib.sh"
install_missing ripgrep
BIG=${BIG:-100000}

# gen ROOT DIRS FILES — DIRS/100 top directories of 100 directories of FILES
# small files, the same bytes on every run (python3: fast).
gen() {
	python3 - "$@" <<'PY'
import os, sys
root, dirs, files = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
for d in range(dirs):
    p = os.path.join(root, "top%02d" % (d // 100), "pkg%03d" % d, "src")
    os.makedirs(p, exist_ok=True)
    for f in range(files):
        with open(os.path.join(p, "f%03d.go" % f), "w") as fh:
            fh.write("package pkg%d\n// file %d\nfunc F%d() int { return %d }\n" % (d, f, f, d * 1000 + f) * (1 + (d + f) % 7))
PY
}
# kib FIELD PID — FIELD of /proc/PID/status summed with its children's (the
# daemon forks a small keeper that unmounts if it dies).
kib() {
	local p t=0
	for p in "$2" $(cat "/proc/$2"/task/*/children 2>/dev/null); do
		t=$((t + $(awk -v k="$1" '$1 == k":" { print $2 }' "/proc/$p/status")))
	done
	echo "$t"
}

echo "generating $BIG files…" >&2
gen "$W/big" $((BIG / 100)) 100
mount_view "$W/big" "$W/bigview"
rss0=$(kib VmRSS "$VIEW_PID")
s=$(date +%s.%N)
n=$(find "$W/bigview" -printf '%s %m %n\n' | wc -l)
du -s "$W/bigview" >/dev/null
e=$(date +%s.%N)
hwm=$(kib VmHWM "$VIEW_PID") rss1=$(kib VmRSS "$VIEW_PID")
umount_view
printf 'memory: %d entries walked (find -printf + du -s) in %.1f s; daemon (+ keeper) RSS %d MiB at the start, %d MiB after, peak (VmHWM) %d MiB (fd limit %s)\n' \
	"$n" "$(echo "$e - $s" | bc -l)" $((rss0 / 1024)) $((rss1 / 1024)) $((hwm / 1024)) "$(ulimit -n)"
rm -rf "$W/big"

echo "generating 10,000 files…" >&2
gen "$W/tree" 100 100
levels=(writes reads opens all)
for l in "${levels[@]}"; do
	mount_view "$W/tree" "$W/view-$l" --audit "$W/audit-$l.jsonl" --audit-level "$l"
	eval "pid_$l=\$VIEW_PID"
	rg -c 'return -4' "$W/view-$l" >/dev/null || true  # warm-up (and the first reads at `reads`)
done
sleep 1
before=$(wc -l <"$W/audit-all.jsonl")
for i in $(seq 1 "$RUNS"); do
	for l in "${levels[@]}"; do secs rg -c 'return -4' "$W/view-$l" >>"$W/t.$l"; done
done
for l in "${levels[@]}"; do eval "kill -TERM \$pid_$l; wait \$pid_$l 2>/dev/null || true"; done
after=$(wc -l <"$W/audit-all.jsonl")
dropped=$(cat "$W"/audit-*.jsonl | python3 -c '
import json, sys
n = 0
for line in sys.stdin:
    r = json.loads(line)
    if r.get("op") == "dropped": n += r.get("count", 0)
print(n)')
seal=$(grep '"op":"seal"' "$W/audit-all.jsonl" | tail -1 || true)
tw=$(median <"$W/t.writes") tr=$(median <"$W/t.reads") ta=$(median <"$W/t.all")
printf '%-28s %9s %7s\n' "rg, 10k files, audit level" seconds "/writes"
for l in "${levels[@]}"; do
	t=$(median <"$W/t.$l"); printf '%-28s %9.3f %7s\n' "$l" "$t" "$(ratio "$t" "$tw")"
done
to=$(median <"$W/t.opens")
printf 'all / opens (the same requests, logged or not): %s\n' "$(ratio "$ta" "$to")"
ev=$(( (after - before) / RUNS ))
printf 'level all: %d events per rg run, %.0f events/s; dropped events in the logs: %s\n' "$ev" \
	"$(awk -v e="$ev" -v t="$ta" 'BEGIN { print e / t }')" "$dropped"
printf 'seal of the all log: %s\n' "${seal:-none}"
