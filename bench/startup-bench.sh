#!/usr/bin/env bash
# startup-bench.sh [BUILD_DIR] — start-up cost of a sandbox run:
# `vault-run --net none -- true` (namespaces, tmpfs root, FUSE view daemon,
# pid 1, seccomp) against the equivalent bubblewrap command line (same
# namespaces, the same system binds, the project bound plainly — bwrap has
# no view). Prints mean times and the ratio; then CONC (20) of each started
# at once, the median wall time of CRUNS (5) batches. Not part of ctest.
# Env: RUNS (default 30), CONC, CRUNS.
set -euo pipefail
BUILD=${1:-$(cd "$(dirname "$0")/../build" 2>/dev/null && pwd || true)}
VR="$BUILD/vault-run"
[ -x "$VR" ] || { echo "no vault-run at $VR (pass the build dir)" >&2; exit 2; }
command -v bwrap >/dev/null || { echo "bwrap is not installed" >&2; exit 2; }
RUNS=${RUNS:-30}
W=$(mktemp -d "${TMPDIR:-/tmp}/vr-startup-bench.XXXXXX")
trap 'rm -rf "$W"' EXIT
P="$W/project"
mkdir -p "$P/src"
echo 'int main(void) { return 0; }' >"$P/src/main.c"
echo 'SECRET=x' >"$P/.env"

# bwrap with what vault-run sets up by default: user, mount, pid, ipc, uts,
# net namespaces; /usr and the merged-usr links; the same /etc entries;
# /proc, /dev, tmpfs /tmp /var/tmp /run $HOME; the project at its path.
bw=(bwrap --unshare-user --unshare-pid --unshare-ipc --unshare-uts --unshare-net
	--die-with-parent --ro-bind /usr /usr)
for d in /bin /sbin /lib /lib32 /lib64 /libx32; do
	if [ -L "$d" ]; then bw+=(--symlink "$(readlink "$d")" "$d");
	elif [ -d "$d" ]; then bw+=(--ro-bind "$d" "$d"); fi
done
for e in hosts host.conf resolv.conf nsswitch.conf gai.conf services protocols ssl ca-certificates \
	ca-certificates.conf localtime timezone alternatives ld.so.cache ld.so.conf ld.so.conf.d \
	os-release bash.bashrc inputrc profile shells mime.types gitconfig locale.alias passwd group; do
	[ -e "/etc/$e" ] && bw+=(--ro-bind "$(readlink -f "/etc/$e")" "/etc/$e")
done
bw+=(--proc /proc --dev /dev --tmpfs /tmp --tmpfs /var/tmp --tmpfs /run --tmpfs "$HOME"
	--bind "$P" "$P" --chdir "$P" -- true)

"${bw[@]}" || { echo "the bwrap command line fails here" >&2; exit 2; }
"$VR" --project "$P" --net none -- true || { echo "vault-run fails here" >&2; exit 2; }

if command -v hyperfine >/dev/null; then
	hyperfine -N --warmup 3 --runs "$RUNS" --export-json "$W/h.json" \
		-n vault-run "$(printf '%q ' "$VR" --project "$P" --net none -- true)" \
		-n bwrap "$(printf '%q ' "${bw[@]}")" >/dev/null
	read -r vr bw_t < <(python3 -c 'import json,sys; r=json.load(open(sys.argv[1]))["results"]; print(r[0]["mean"]*1000, r[1]["mean"]*1000)' "$W/h.json")
else
	t() { local s e; s=$(date +%s%N); for _ in $(seq "$RUNS"); do "$@" >/dev/null; done; e=$(date +%s%N); echo $(( (e - s) / RUNS / 1000 ))e-3; }
	vr=$(t "$VR" --project "$P" --net none -- true)
	bw_t=$(t "${bw[@]}")
fi
awk -v a="$vr" -v b="$bw_t" -v n="$RUNS" 'BEGIN {
	printf "start-up, mean of %d runs: vault-run %.1f ms, bwrap %.1f ms, ratio %.2fx\n", n, a, b, a / b }'

# CONC (default 20) sandboxes started at once, against CONC bwraps; runs
# alternate, median of CRUNS (default 5) wall times of the whole batch.
CONC=${CONC:-20} CRUNS=${CRUNS:-5}
batch() {  # every one must succeed: a refused concurrent start would look fast
	local i pids=() bad=0
	for i in $(seq "$CONC"); do "$@" >/dev/null 2>"$W/c.err" & pids+=($!); done
	for i in "${pids[@]}"; do wait "$i" || bad=$((bad + 1)); done
	((bad == 0)) || { echo "$bad of $CONC concurrent runs failed: $(tail -1 "$W/c.err")" >&2; exit 1; }
}
batch_secs() { local s e; s=$(date +%s%N); batch "$@" >&2; e=$(date +%s%N); echo $(( (e - s) / 1000 ))e-3; }
median() { sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
for _ in $(seq "$CRUNS"); do
	batch_secs "$VR" --project "$P" --net none -- true >>"$W/c.vr"
	batch_secs "${bw[@]}" >>"$W/c.bw"
done
awk -v a="$(median <"$W/c.vr")" -v b="$(median <"$W/c.bw")" -v n="$CONC" -v r="$CRUNS" 'BEGIN {
	printf "%d started at once, median of %d: vault-run %.1f ms, bwrap %.1f ms, ratio %.2fx\n", n, r, a, b, a / b }'
