#!/usr/bin/env bash
# door-bench.sh [BUILD_DIR] — what one door costs (docs/PERFORMANCE.md, "One
# door"): every writable directory of a run is a view of its own.
#   start-up: `vault-run --net none -- true` with the claude and opencode
#     profiles (their directories served by views, ~/.claude.json a per-run
#     copy) against the same paths bound plainly (--profile none --ro-bind:
#     a plain bind is read-only now) and against no profile; median of SRUNS.
#   tar x: a 10k-file tree untarred into a --bind directory (a view) against
#     the same into a plain bind (bubblewrap --bind, as vault-run had it) and
#     natively; median of RUNS.
# Not part of ctest. Env: RUNS (default 20 for start-up, 5 for tar x).
set -euo pipefail
BUILD=${1:-$(cd "$(dirname "$0")/../build" 2>/dev/null && pwd || true)}
. "$(dirname "$0")/bench-lib.sh"
command -v bwrap >/dev/null || { echo "bwrap is not installed" >&2; exit 2; }
SRUNS=${SRUNS:-20}

P="$W/project" H="$W/home"
mkdir -p "$P/src" "$H/.claude/projects" "$H/.local/share/opencode" "$H/.local/state/opencode"
echo 'int main(void) { return 0; }' >"$P/src/main.c"
echo '{"hooks":{}}' >"$H/.claude/settings.json"
for i in $(seq 50); do echo "{\"s\":$i}" >"$H/.claude/projects/s$i.jsonl"; done
printf '{"numStartups": 1, "projects": {"%s": {"history": []}}}\n' "$P" >"$H/.claude.json"
export HOME="$H" XDG_CONFIG_HOME="$H/.config" XDG_STATE_HOME="$W/state"

mean_ms() {  # mean_ms CMD… — median wall milliseconds of SRUNS runs
	local s e
	"$@" >/dev/null 2>&1 || { echo "fails: $*" >&2; "$@"; exit 1; }
	for _ in $(seq "$SRUNS"); do
		s=$(date +%s%N); "$@" >/dev/null 2>&1; e=$(date +%s%N)
		echo "$(( (e - s) / 1000 ))e-3"
	done | sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'
}
run=("$VR" --project "$P" --net none --quiet)
none=$(mean_ms "${run[@]}" --profile none -- true)
claude=$(mean_ms "${run[@]}" --profile claude -- true)
claude_plain=$(mean_ms "${run[@]}" --profile none --ro-bind "$H/.claude" "$H/.claude" \
	--ro-bind "$H/.claude.json" "$H/.claude.json" -- true)
opencode=$(mean_ms "${run[@]}" --profile opencode -- true)
opencode_plain=$(mean_ms "${run[@]}" --profile none --ro-bind "$H/.local/share/opencode" "$H/.local/share/opencode" \
	--ro-bind "$H/.local/state/opencode" "$H/.local/state/opencode" --tmpfs "$H/.cache/opencode" -- true)
printf 'start-up, median of %d runs (ms):\n' "$SRUNS"
printf '  %-44s %7.1f\n' "no profile" "$none" \
	"claude (1 dir view + .claude.json copy)" "$claude" "claude's paths as plain ro binds" "$claude_plain" \
	"opencode (2 dir views + tmpfs cache)" "$opencode" "opencode's paths as plain ro binds" "$opencode_plain"
awk -v a="$claude" -v b="$claude_plain" -v c="$opencode" -v d="$opencode_plain" -v n="$none" 'BEGIN {
	printf "  views vs plain binds: claude %.2fx (+%.1f ms), opencode %.2fx (+%.1f ms); vs no profile: +%.1f, +%.1f ms\n",
	       a / b, a - b, c / d, c - d, a - n, c - n }'

# tar x: 10k small files in 100 directories, into the bind each time fresh.
mkdir -p "$W/tree"
for d in $(seq 100); do
	mkdir -p "$W/tree/d$d"
	for f in $(seq 100); do echo "file $d/$f" >"$W/tree/d$d/f$f.txt"; done
done
tar -C "$W/tree" -cf "$W/tree.tar" .
B="$W/bind"
mkdir -p "$B"
untar='rm -rf "$0/x" && mkdir "$0/x" && tar -C "$0/x" -xf "$1" && rm -rf "$0/x"'
bw=(bwrap --unshare-user --unshare-pid --unshare-net --die-with-parent --ro-bind /usr /usr)
for d in /bin /sbin /lib /lib64; do
	if [ -L "$d" ]; then bw+=(--symlink "$(readlink "$d")" "$d"); elif [ -d "$d" ]; then bw+=(--ro-bind "$d" "$d"); fi
done
bw+=(--proc /proc --dev /dev --tmpfs /tmp --ro-bind "$W/tree.tar" /tree.tar --bind "$B" "$B" --)
# The three alternate run by run (a shared machine's load drifts), then
# each one's median.
for _ in $(seq "$RUNS"); do
	secs sh -c "$untar" "$B" "$W/tree.tar" >>"$W/t.native"
	secs "${bw[@]}" sh -c "$untar" "$B" /tree.tar >>"$W/t.plain"
	secs "${run[@]}" --profile none --ro-bind "$W/tree.tar" /tree.tar --bind "$B" "$B" -- \
		sh -c "$untar" "$B" /tree.tar >>"$W/t.view"
done
declare -A t
for where in native plain view; do t[$where]=$(median <"$W/t.$where"); done
printf 'tar x of 10,000 files + rm -r, median of %d (s): native %.3f, plain bind (bwrap) %.3f, --bind view %.3f\n' \
	"$RUNS" "${t[native]}" "${t[plain]}" "${t[view]}"
printf '  view vs plain bind %sx, vs native %sx\n' "$(ratio "${t[view]}" "${t[plain]}")" "$(ratio "${t[view]}" "${t[native]}")"
