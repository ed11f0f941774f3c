#!/usr/bin/env bash
# Scale: a directory of 200,000 entries seen through the view inside the
# sandbox. getdents64 in 1 KiB reads lists every entry exactly once and the
# same names as the host; an lseek back to a recorded d_off (3,000 random
# ones, each followed by a 256-byte read) continues with exactly the entries
# recorded after it; lseek(0) restarts. Then 1.5 x RLIMIT_NOFILE entries
# (30,000 here) are stat'ed: more inodes than the daemon has fds, so every
# stat succeeds only if its evictor keeps the fds bounded. The daemon's
# peak RSS and fd count, sampled from the host side, stay bounded (RSS <
# 256 MiB, fds below its RLIMIT_NOFILE) and are printed for docs/view.md
# "Limits".
# Control: the same probe on the host directory gives the same answers.
# As host root the tree lives on a private tmpfs (vr_fast_dir): 200,000
# creations on a busy ext4 took over a minute here. (A read smaller than a
# page costs a whole FUSE request: 256-byte reads of the full listing take
# ~4x as long as 1 KiB ones, which is why only the seeks use them.)
# Root only (-once): the view code is the same in every variant.
# Host root: a private mount namespace for the tmpfs of vr_fast_dir (the
# host's mounts are never touched). Before libtest.sh, so no $T is left behind.
if [ "${VR_SCALE_PRIVATE_NS:-}" != 1 ] && [ "$(id -u)" = 0 ] &&
	[ "$(awk 'NR==1 {print $2 $3}' /proc/self/uid_map)" = 04294967295 ] && command -v unshare >/dev/null; then
	VR_SCALE_PRIVATE_NS=1 exec unshare -m --propagation private bash "$0" "$@"
fi
. "$(dirname "$0")/../lib/libtest.sh"
. "$(dirname "$0")/../lib/sandbox-lib.sh"
. "$(dirname "$0")/../lib/scale-lib.sh"
vr_require_sandbox
vr_require_cmd ps
N=200000
hard=$(ulimit -Hn)
S=$N
[ "$hard" = unlimited ] || [ $((hard * 3 / 2)) -ge "$N" ] || S=$((hard * 3 / 2))
mkdir -p "$T/bin"
cp "$VR_BIN/scale-probe" "$T/bin/" || vr_fail "the scale-probe helper is not built"
P="$T/project"
vr_fast_dir "$P"
mkdir -p "$P/big"
"$T/bin/scale-probe" mkfiles "$P/big" "$N"

"$T/bin/scale-probe" readdir "$P/big" 1024 256 3000 7 >"$T/host.out"
vr_check "control: on the host the probe lists $N names, each once" \
	grep -qx "entries $((N + 2))" "$T/host.out"
vr_check "control: on the host every seek continues consistently" grep -qx 'seeks 3000 bad 0' "$T/host.out"

start=$SECONDS
"$VR" --project "$P" --profile none --ro-bind "$T/bin" /vr-bin -- sh -c '
	/vr-bin/scale-probe readdir big 1024 256 3000 7 >in1.out
	/vr-bin/scale-probe statfiles big '"$S"' >stat.out
	: >done
	while [ ! -e finish ]; do sleep 0.1; done' 2>"$T/err" &
sup=$!
daemon=$(vr_wait_daemon "$sup") || vr_fail "the view daemon did not show up"
vr_watch_start "$daemon"
vr_wait_file "$P/done" 120 || vr_fail "the listing inside did not finish in 120 s"
sleep 0.2 # one more sample
vr_watch_stop
fds=$(vr_watch_fds) hwm=$(vr_watch_hwm_kb)
limit=$(awk '/^Max open files/ { print $4 }' "/proc/$daemon/limits")
: >"$P/finish"
st=0
wait "$sup" || st=$?
cat "$T/err"
vr_check "the run exits 0 (got $st)" test "$st" = 0
echo "measured: $N entries listed + 3000 seeks + $S stats in $((SECONDS - start)) s;" \
	"view daemon peak RSS $((hwm / 1024)) MiB, peak fds $fds (RLIMIT_NOFILE $limit)"

for f in in1; do
	grep mismatch "$P/$f.out" | head -5 || true
	vr_check "$f: every entry listed once inside" grep -qx "entries $((N + 2))" "$P/$f.out"
	vr_check "$f: no name listed twice inside" grep -qx 'dups 0' "$P/$f.out"
	vr_check "$f: every seek inside continues with the recorded entries" grep -qx 'seeks 3000 bad 0' "$P/$f.out"
done
vr_check "$S entries stat inside" grep -qx "stat $S ok $S" "$P/stat.out"
vr_check "the listing inside has the host's names" \
	cmp -s <(grep '^name ' "$T/host.out" | sort) <(grep '^name ' "$P/in1.out" | sort)
# Under AddressSanitizer freed memory waits in a quarantine (256 MiB by
# default) and counts as resident: each READDIR of the no-opendir mode opens
# and frees a directory stream, so 25,000 small READDIRs fill it. The bound
# is about the daemon, not about ASan's allocator.
rss_max=256
if ldd "$VR" 2>/dev/null | grep -q libasan; then rss_max=1024; fi
vr_check "the daemon's peak RSS is below $rss_max MiB ($((hwm / 1024)) MiB)" test "$hwm" -gt 0 -a "$hwm" -lt $((rss_max * 1024))
vr_check "the daemon's fds stay below its limit ($fds < $limit)" test "$fds" -gt 0 -a "$fds" -lt "$limit"
vr_done
