# bench-lib.sh — shared by the bench/*-bench.sh scripts that measure the
# view (sourced, not run): the work dir, mounting the view and bindfs,
# medians. Expects BUILD set by the caller; sets VR, W, RUNS.
VR="$BUILD/vault-run"
[ -x "$VR" ] || { echo "no vault-run at $VR (pass the build dir)" >&2; exit 2; }
RUNS=${RUNS:-5}
W=$(mktemp -d "${TMPDIR:-/tmp}/vr-bench.XXXXXX")
VIEW_PIDS=() BINDFS_MOUNTS=()
bench_cleanup() {
	local p
	for p in "${VIEW_PIDS[@]}"; do kill -TERM "$p" 2>/dev/null || true; done
	for p in "${VIEW_PIDS[@]}"; do wait "$p" 2>/dev/null || true; done
	for p in "${BINDFS_MOUNTS[@]}"; do fusermount3 -u -z "$p" 2>/dev/null || umount -l "$p" 2>/dev/null || true; done
	[ "${KEEP:-0}" = 1 ] || rm -rf "$W"
}
trap bench_cleanup EXIT

# install_missing PKG… — apt-get install what dpkg does not list (Debian).
install_missing() {
	local p need=()
	for p in "$@"; do
		dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || need+=("$p")
	done
	((${#need[@]})) || return 0
	local sudo=; [ "$(id -u)" = 0 ] || sudo=sudo
	$sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${need[@]}" >&2
}

# mount_view PROJECT MOUNTPOINT [ARGS…] — `vault-run mount`, waits for its
# ready line; the daemon's pid is left in VIEW_PID.
mount_view() {
	local p=$1 m=$2 i; shift 2
	mkdir -p "$m"
	: >"$W/ready"
	"$VR" mount "$@" "$p" "$m" >"$W/ready" 2>"$W/mount.err" &
	VIEW_PID=$!
	VIEW_PIDS+=("$VIEW_PID")
	for i in $(seq 1 200); do grep -q . "$W/ready" && return 0; sleep 0.05; done
	cat "$W/mount.err" >&2; exit 1
}
umount_view() {  # umount_view — stops the last view (SIGTERM: seal, unmount)
	kill -TERM "$VIEW_PID"; wait "$VIEW_PID" 2>/dev/null || true
}
# mount_bindfs PROJECT MOUNTPOINT — returns 1 when bindfs is missing or fails.
mount_bindfs() {
	mkdir -p "$2"
	command -v bindfs >/dev/null && bindfs --no-allow-other "$1" "$2" 2>/dev/null || return 1
	BINDFS_MOUNTS+=("$2")
}

median() { sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
secs() {  # secs CMD… — wall seconds of one run, output discarded
	local s e
	s=$(date +%s.%N); "$@" >/dev/null 2>&1 || true; e=$(date +%s.%N)
	echo "$e - $s" | bc -l
}
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (a == "-" || b == "-" || b == 0) print "-"; else printf "%.2f", a / b }'; }
