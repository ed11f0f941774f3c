#!/usr/bin/env bash
# view-bench.sh [BUILD_DIR] — the view (`vault-run mount`, default settings,
# audit log at the default level) against the native directory and bindfs,
# on a tree that looks like a user's (bench/real-tree.sh: a git repository
# with history vendoring /usr/include and Python's standard library, a
# 512 MiB file, directories 11 deep) and on the old flat tree (100
# directories of 100 small files). Not part of ctest.
#
# ROUNDS (10) interleaved rounds; in each, native, view and bindfs take
# turns (the order rotates per round) through three states:
#   cold   each read workload alone, first thing after a fresh mount (the
#          host's caches are warm: this is the FUSE cost of a first walk);
#   warm   the same mount after WARMUP (3) passes of every read workload,
#          in turn (the state an agent's session settles in: the kernel's
#          own invalidations after a first read or listing take three
#          passes to die out, docs/PERFORMANCE.md);
#   after  the same mount after writes: untar 4,000 files, create and remove
#          4,000 files, two more untar/remove cycles.
# Prints, per tree, a markdown table: medians (ms) with their min–max, the
# ratios of the medians, and the view's requests per workload (a counter per
# FUSE opcode, read with `kill -USR1` from the daemon: the median of the
# rounds). Env: TREE (real, flat or both: both), ROUNDS, WARMUP, TREE_CACHE
# (a directory where the real tree is kept between runs), KEEP=1.
set -euo pipefail
BUILD=${1:-$(cd "$(dirname "$0")/../build" 2>/dev/null && pwd || true)}
here=$(cd "$(dirname "$0")" && pwd)
. "$here/bench-lib.sh"
install_missing bindfs ripgrep git python3 openssl
ROUNDS=${ROUNDS:-10} TREE=${TREE:-both} WARMUP=${WARMUP:-3}
NEEDLE=vr-bench-absent-needle
have_bindfs=1; command -v bindfs >/dev/null || have_bindfs=0

real_tree() {  # the real tree at $1 (from TREE_CACHE when it has one)
	if [ -n "${TREE_CACHE:-}" ]; then
		mkdir -p "$TREE_CACHE"
		[ -d "$TREE_CACHE/real" ] || "$here/real-tree.sh" "$TREE_CACHE/real" >&2
		ln -s "$TREE_CACHE/real" "$1"
	else
		"$here/real-tree.sh" "$1" >&2
	fi
}
flat_tree() {  # 100 directories × 100 Go-like files, in git, packed
	local root=$1 d f
	mkdir -p "$root"
	for d in $(seq -w 0 99); do
		mkdir -p "$root/pkg$d/src"
		for f in $(seq -w 1 100); do
			printf 'package pkg%s\n// file %s\nfunc F%s() int { return %d }\n' "$d" "$f" "$f" "$((10#$d * 1000 + 10#$f))" \
				>"$root/pkg$d/src/f$f.go"
		done
	done
	printf 'SECRET=bench\n' >"$root/.env"
	git -C "$root" init -q
	git -C "$root" -c user.name=b -c user.email=b@e add -A . >/dev/null
	git -C "$root" -c user.name=b -c user.email=b@e -c gc.auto=0 commit -qm bench
	git -C "$root" gc -q
}

now_ns() { date +%s%N; }
# ms CMD… — wall milliseconds of one run, output discarded.
ms() { local s e; s=$(now_ns); "$@" >/dev/null 2>&1 || true; e=$(now_ns); echo $(((e - s) / 1000000)); }

# The workloads, on directory $1.
w_find() { find "$1"; }
w_ls-lR() { ls -lR "$1"; }
w_du-s() { du -s "$1"; }
w_git-status() { git -C "$1" -c safe.directory='*' status --porcelain; }
w_rg() { rg -uu -c "$NEEDLE" "$1"; }
w_read-512M() { dd if="$1/data/big.bin" of=/dev/null bs=1M status=none; }
w_untar() { rm -rf "$1/untar-x"; mkdir "$1/untar-x"; tar -C "$1/untar-x" -xf "$W/untar.tar"; }
w_create-rm() {
	local i; mkdir "$1/cr-x"
	for i in $(seq 1 4000); do printf '%s\n' "$i" >"$1/cr-x/f$i"; done
	rm -rf "$1/cr-x"
}

# The view's request counts so far, one JSON line (its SIGUSR1 dump).
counts() {
	local n i; n=$(grep -c '^{"requests"' "$W/mount.err" || true)
	kill -USR1 "$VIEW_PID"
	for i in $(seq 1 200); do
		[ "$(grep -c '^{"requests"' "$W/mount.err" || true)" -gt "$n" ] && break
		sleep 0.01
	done
	grep '^{"requests"' "$W/mount.err" | tail -1
}

dir_of() { case $1 in native) echo "$TD" ;; view) echo "$W/view" ;; bindfs) echo "$W/bindfs" ;; esac; }
mount_place() {
	case $1 in
	view) mount_view "$TD" "$W/view" --audit "$W/audit.jsonl" ;;
	bindfs) mount_bindfs "$TD" "$W/bindfs" ;;
	esac
}
umount_place() {
	case $1 in
	view) umount_view ;;
	bindfs) fusermount3 -u "$W/bindfs" 2>/dev/null || umount "$W/bindfs" ;;
	esac
}
# sample PLACE WORK STATE — one timed run, its requests for the view.
sample() {
	local p=$1 w=$2 s=$3 d before t
	d=$(dir_of "$p")
	[ "$p" = view ] && before=$(counts)
	t=$(ms "w_$w" "$d")
	echo "$t" >>"$W/s/$T.$w.$s.$p"
	if [ "$p" = view ]; then
		printf '%s\t%s\n' "$before" "$(counts)" >>"$W/c/$T.$w.$s"
	fi
	[ "$w" = untar ] && rm -rf "$d/untar-x"
	return 0
}

round() {  # round N — one round of every place through the three states
	local r=$1 places=(native view) p w k
	((have_bindfs)) && places+=(bindfs)
	for ((k = 0; k < r % ${#places[@]}; k++)); do places=("${places[@]:1}" "${places[0]}"); done
	for p in "${places[@]}"; do
		for w in "${READS[@]}"; do
			[ "$p" = native ] || mount_place "$p"
			sample "$p" "$w" cold
			[ "$p" = native ] || umount_place "$p"
		done
		[ "$p" = native ] || mount_place "$p"
		for k in $(seq 1 "$WARMUP"); do for w in "${READS[@]}"; do w_"$w" "$(dir_of "$p")" >/dev/null 2>&1 || true; done; done
		for w in "${READS[@]}"; do sample "$p" "$w" warm; done
		sample "$p" untar writes
		sample "$p" create-rm writes
		for k in 1 2; do w_untar "$(dir_of "$p")" >/dev/null 2>&1 || true; rm -rf "$(dir_of "$p")/untar-x"; done
		for w in "${READS[@]}"; do sample "$p" "$w" after; done
		[ "$p" = native ] || umount_place "$p"
	done
}

report() {  # the markdown table of tree $T
	python3 - "$W" "$T" "$have_bindfs" "${READS[@]}" <<'PY'
import json, os, statistics, sys
W, T, have_bindfs, reads = sys.argv[1], sys.argv[2], sys.argv[3] == "1", sys.argv[4:]
def samples(w, s, p):
    try:
        return [int(x) for x in open(f"{W}/s/{T}.{w}.{s}.{p}").read().split()]
    except FileNotFoundError:
        return []
def cell(v):
    if not v: return "–", None
    m = statistics.median(v)
    return f"{m:.0f} ({min(v)}–{max(v)})", m
def ratio(a, b):
    return f"**{a / b:.2f}**" if a is not None and b else "–"
def requests(w, s):
    try:
        lines = open(f"{W}/c/{T}.{w}.{s}").read().splitlines()
    except FileNotFoundError:
        return "–"
    per = []
    for ln in lines:
        a, b = (json.loads(x) if x.startswith("{") else {} for x in ln.split("\t"))
        d = {k: b["requests"].get(k, 0) - a.get("requests", {}).get(k, 0) for k in b["requests"]}
        per.append({k: v for k, v in d.items() if v and k not in ("forget", "batch_forget", "statfs")})
    keys = sorted({k for d in per for k in d})
    med = {k: statistics.median([d.get(k, 0) for d in per]) for k in keys}
    total = sum(med.values())
    top = sorted(((v, k) for k, v in med.items() if v), reverse=True)[:4]
    return f"{total:.0f}" + (" (" + ", ".join(f"{k} {v:.0f}" for v, k in top) + ")" if top else "")
rows = [(w, s) for s in ("cold", "warm") for w in reads] + \
       [("untar", "writes"), ("create-rm", "writes")] + [(w, "after") for w in reads]
hdr = "| work | state | native ms | view ms | view/native | bindfs ms | bindfs/native | view requests |"
print(hdr); print("|" + "---|" * 8)
for w, s in rows:
    n, nm = cell(samples(w, s, "native"))
    v, vm = cell(samples(w, s, "view"))
    b, bm = cell(samples(w, s, "bindfs")) if have_bindfs else ("–", None)
    print(f"| `{w}` | {s} | {n} | {v} | {ratio(vm, nm)} | {b} | {ratio(bm, nm)} | {requests(w, s)} |")
PY
}

mkdir -p "$W/s" "$W/c"
echo "# view-bench: $(nproc) cores, $(uname -r), uid $(id -u), RLIMIT_NOFILE $(ulimit -Hn), $(date -u +%Y-%m-%dT%H:%MZ), load $(cut -d' ' -f1-3 /proc/loadavg)"
case $TREE in both) trees=(real flat) ;; *) trees=("$TREE") ;; esac
for T in "${trees[@]}"; do
	if [ "$T" = real ]; then
		real_tree "$W/real"
		READS=(find ls-lR du-s git-status rg read-512M)
		( cd "$W/real" && find vendor/include -type f | LC_ALL=C sort | awk 'NR <= 4000' ) >"$W/untar.list"
		tar -C "$W/real" -cf "$W/untar.tar" -T "$W/untar.list"
	else
		flat_tree "$W/flat"
		READS=(find ls-lR du-s git-status rg)
		( cd "$W/flat" && find . -name '*.go' | LC_ALL=C sort | awk 'NR <= 4000' ) >"$W/untar.list"
		tar -C "$W/flat" -cf "$W/untar.tar" -T "$W/untar.list"
	fi
	TD=$(readlink -f "$W/$T")
	cat "$TD/data/big.bin" >/dev/null 2>&1 || true
	for r in $(seq 1 "$ROUNDS"); do
		echo "$T: round $r of $ROUNDS (load $(cut -d' ' -f1 /proc/loadavg))" >&2
		round "$r"
	done
	echo
	echo "## $T tree ($(find "$TD" -mindepth 1 | wc -l) entries), $ROUNDS rounds, load $(cut -d' ' -f1-3 /proc/loadavg)"
	echo
	report
done
