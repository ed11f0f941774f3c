#!/usr/bin/env bash
# view-bench.sh [BUILD_DIR] — the view against native and bindfs on a
# generated 10k-file tree: find, du -s, rg, git status, ls -lR, tar x. Each timing is
# the median of 5 runs; ratios are against native. Not part of ctest.
# Env: FILES (default 10000), RUNS (default 5), KEEP=1 keeps the work dir.
set -euo pipefail
BUILD=${1:-$(cd "$(dirname "$0")/../build" 2>/dev/null && pwd || true)}
VR="$BUILD/vault-run"
[ -x "$VR" ] || { echo "no vault-run at $VR (pass the build dir)" >&2; exit 2; }
FILES=${FILES:-10000} RUNS=${RUNS:-5}
W=$(mktemp -d "${TMPDIR:-/tmp}/vr-bench.XXXXXX")
pids=()
cleanup() {
	local p
	for p in "${pids[@]}"; do kill -TERM "$p" 2>/dev/null || true; done
	for p in "${pids[@]}"; do wait "$p" 2>/dev/null || true; done
	fusermount3 -u -z "$W/bindfs" 2>/dev/null || umount -l "$W/bindfs" 2>/dev/null || true
	[ "${KEEP:-0}" = 1 ] || rm -rf "$W"
}
trap cleanup EXIT

# A reproducible tree: 100 directories of FILES/100 source-like files, in git.
gen() {
	local root=$1 d f
	mkdir -p "$root"
	for d in $(seq -w 0 99); do
		mkdir -p "$root/pkg$d/src"
		for f in $(seq -w 1 $((FILES / 100))); do
			printf 'package pkg%s\n// file %s\nfunc F%s() int { return %d }\n' "$d" "$f" "$f" "$((10#$d * 1000 + 10#$f))" \
				>"$root/pkg$d/src/f$f.go"
		done
	done
	printf 'SECRET=bench\n' >"$root/.env"
	git -C "$root" init -q
	git -C "$root" -c user.name=b -c user.email=b@e add -A . >/dev/null
	git -C "$root" -c user.name=b -c user.email=b@e -c gc.auto=0 commit -qm bench
	# Pack now: an automatic gc detached after the commit would rewrite
	# .git while the first workloads run.
	git -C "$root" gc -q
}
echo "generating $FILES files…" >&2
gen "$W/tree"
tar -C "$W/tree" --exclude=.git -cf "$W/tree.tar" .

median() { sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
# timeit CMD… — median wall seconds over RUNS runs (after one warm-up).
timeit() {
	local i s e
	"$@" >/dev/null 2>&1 || true
	for i in $(seq 1 "$RUNS"); do
		s=$(date +%s.%N)
		"$@" >/dev/null 2>&1 || true
		e=$(date +%s.%N)
		echo "$e - $s" | bc -l
	done | median
}

mkdir -p "$W/view" "$W/bindfs" "$W/untar"
"$VR" mount "$W/tree" "$W/view" >"$W/ready" 2>"$W/mount.err" &
pids+=($!)
for i in $(seq 1 200); do grep -q . "$W/ready" && break; sleep 0.05; done
grep -q . "$W/ready" || { cat "$W/mount.err"; exit 1; }
have_bindfs=0
if command -v bindfs >/dev/null && bindfs --no-allow-other "$W/tree" "$W/bindfs" 2>/dev/null; then have_bindfs=1; fi

untar() { rm -rf "$1/untar-x"; mkdir "$1/untar-x"; tar -C "$1/untar-x" -xf "$W/tree.tar"; rm -rf "$1/untar-x"; }
gst() { git -C "$1" -c safe.directory='*' status --porcelain; }
printf '%-12s %9s %9s %7s %9s %7s\n' work native view ratio bindfs ratio
for work in find du-s rg git-status ls-lR tar-x; do
	declare -A t=()
	for where in native view bindfs; do
		case $where in native) dir="$W/tree" ;; view) dir="$W/view" ;; bindfs) dir="$W/bindfs" ;; esac
		if [ "$where" = bindfs ] && [ "$have_bindfs" = 0 ]; then t[$where]=nan; continue; fi
		case $work in
		find) t[$where]=$(timeit find "$dir") ;;
		du-s) t[$where]=$(timeit du -s "$dir") ;;
		rg) t[$where]=$(timeit rg -c 'return 4' "$dir") ;;
		git-status) t[$where]=$(timeit gst "$dir") ;;
		ls-lR) t[$where]=$(timeit ls -lR "$dir") ;;
		tar-x) t[$where]=$(timeit untar "$dir") ;;
		esac
	done
	rv=$(echo "${t[view]} / ${t[native]}" | bc -l)
	rb=nan
	[ "${t[bindfs]}" != nan ] && rb=$(echo "${t[bindfs]} / ${t[native]}" | bc -l)
	printf '%-12s %9.3f %9.3f %7.2f %9s %7s\n' "$work" "${t[native]}" "${t[view]}" "$rv" \
		"$( [ "${t[bindfs]}" = nan ] && echo - || printf '%.3f' "${t[bindfs]}")" \
		"$( [ "$rb" = nan ] && echo - || printf '%.2f' "$rb")"
	unset t
done
