#!/usr/bin/env bash
# startup-bench.sh [BUILD_DIR] — start-up cost of a sandbox run:
# `vault-run --profile none --net none -- true` (namespaces, tmpfs root, FUSE
# view daemon, pid 1, seccomp, audit log at the default level) against the
# equivalent bubblewrap command line (same namespaces, the same system binds,
# the project bound plainly — bwrap has no view), and rows for the opencode
# profile (its extra views) and, where the build has it, --key (its CA).
# RUNS (30) interleaved rounds, each running every command once in turn
# (bash's EPOCHREALTIME: no fork to read the clock); prints the median and
# min-max of each and the ratio of medians to bwrap, with the load average.
# A run that fails stops the bench (it would look fast).
# Then CONC (20) of each started at once, the median wall time of CRUNS (5)
# batches. BASE=OTHER_BUILD_DIR adds that build's `--profile none` (and
# opencode, --key) rows to the same rounds: a before/after in one run. Not
# part of ctest.
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
"$VR" --profile none --project "$P" --net none -- true || { echo "vault-run fails here" >&2; exit 2; }

vr_base=("$VR" --profile none --project "$P" --net none -- true)
names=(bwrap vault-run vault-run-opencode) cmds=("bw" "vr_base" "vr_opencode")
vr_opencode=("$VR" --profile opencode --project "$P" --net none -- true)
"${vr_opencode[@]}" >/dev/null 2>&1 || { names=(bwrap vault-run); cmds=(bw vr_base); }
if [ -n "${BASE:-}" ]; then
	[ -x "$BASE/vault-run" ] || { echo "no vault-run in BASE=$BASE" >&2; exit 2; }
	vr_base_old=("$BASE/vault-run" --profile none --project "$P" --net none -- true)
	vr_opencode_old=("$BASE/vault-run" --profile opencode --project "$P" --net none -- true)
	names+=(base-vault-run) cmds+=(vr_base_old)
	if [[ " ${cmds[*]} " == *" vr_opencode "* ]]; then names+=(base-vault-run-opencode) cmds+=(vr_opencode_old); fi
fi
# A key's value is 16 to 4096 characters (run/keys.c).
BENCH_KEY=bench-key-0123456789abcdef
if "$VR" run --help 2>&1 | grep -q -- '--key'; then
	# A key bound to a host: the proxy terminates TLS with the run's CA.
	vr_key=("$VR" --profile none --project "$P" --net allow=example.org --key BENCH_KEY@example.org -- true)
	if BENCH_KEY=$BENCH_KEY "${vr_key[@]}" >/dev/null 2>&1; then names+=(vault-run-key); cmds+=(vr_key)
	else echo "no --key row: the --key run fails here" >&2; fi
	vr_key_old=("${BASE:-/nonexistent}/vault-run" "${vr_key[@]:1}")
	if [ -n "${BASE:-}" ] && [[ " ${cmds[*]} " == *" vr_key "* ]] && BENCH_KEY=$BENCH_KEY "${vr_key_old[@]}" >/dev/null 2>&1
	then names+=(base-vault-run-key); cmds+=(vr_key_old); fi
fi
export BENCH_KEY
us() {  # a failed run would look fast: say which and stop
	local s=$EPOCHREALTIME
	"$@" >/dev/null 2>"$W/u.err" || { echo "failed: $* ($(tail -1 "$W/u.err"))" >&2; exit 1; }
	local e=$EPOCHREALTIME; echo $(( (${e/./} - ${s/./}) ))
}
for _ in 1 2 3; do for c in "${cmds[@]}"; do declare -n a=$c; "${a[@]}" >/dev/null 2>&1 || true; unset -n a; done; done
load0=$(cut -d' ' -f1-3 /proc/loadavg)
for _ in $(seq "$RUNS"); do
	for k in "${!cmds[@]}"; do
		declare -n a=${cmds[$k]}
		us "${a[@]}" >>"$W/u.${names[$k]}"
		unset -n a
	done
done
echo "start-up, $RUNS interleaved rounds, load $load0 → $(cut -d' ' -f1-3 /proc/loadavg) ($(nproc) cores):"
python3 - "$W" "${names[@]}" <<'PY'
import statistics, sys
W, names = sys.argv[1], sys.argv[2:]
med = {}
for n in names:
    v = [int(x) / 1000 for x in open(f"{W}/u.{n}").read().split()]
    med[n] = statistics.median(v)
    print(f"  {n:20s} median {med[n]:6.1f} ms ({min(v):.1f}-{max(v):.1f}), {med[n] / med['bwrap'] if n != 'bwrap' else 1:.2f}x bwrap")
PY

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
	batch_secs "${vr_base[@]}" >>"$W/c.vr"
	batch_secs "${bw[@]}" >>"$W/c.bw"
done
awk -v a="$(median <"$W/c.vr")" -v b="$(median <"$W/c.bw")" -v n="$CONC" -v r="$CRUNS" 'BEGIN {
	printf "%d started at once, median of %d: vault-run %.1f ms, bwrap %.1f ms, ratio %.2fx\n", n, r, a, b, a / b }'
