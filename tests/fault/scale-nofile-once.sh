#!/usr/bin/env bash
# Scale: the agent holds as many files open through the view as its limit
# allows (ulimit -n raised to its hard limit) and gets EMFILE; meanwhile a
# second process of the run still reads a file, the view daemon stays up
# (no crash), and its fds and peak RSS, sampled from the host side, stay
# below its RLIMIT_NOFILE and 256 MiB (printed for docs/view.md "Limits").
# Each file held open costs the daemon two fds, so the sandbox lowers
# COMMAND's hard RLIMIT_NOFILE to 7/16 of the daemon's
# (sandbox/nofile.c); without that the agent alone exhausted the daemon and
# the second read failed with EMFILE. Root only (-once): the daemon's fds
# are read from /proc as root.
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
hard=$(ulimit -Hn)
[ "$hard" != unlimited ] || vr_skip "RLIMIT_NOFILE has no hard limit here"
N=$((hard + 100)) # more files than the agent could ever hold
mkdir -p "$T/bin"
cp "$VR_BIN/scale-probe" "$T/bin/" || vr_fail "the scale-probe helper is not built"
P="$T/project"
vr_fast_dir "$P"
mkdir -p "$P/many"
"$T/bin/scale-probe" mkfiles "$P/many" "$N"
echo hello >"$P/other.txt"

"$VR" --project "$P" --profile none --ro-bind "$T/bin" /vr-bin -- sh -c '
	ulimit -Hn >limit.out
	ulimit -n "$(ulimit -Hn)"
	/vr-bin/scale-probe holdopen many '"$N"' ready finish >hold.out &
	while [ ! -e ready ]; do sleep 0.1; done
	cat other.txt >second.out 2>&1 || echo "second read failed" >>second.out
	: >second.done
	wait' 2>"$T/err" &
sup=$!
daemon=$(vr_wait_daemon "$sup") || vr_fail "the view daemon did not show up"
vr_watch_start "$daemon"
vr_wait_file "$P/second.done" 120 || vr_fail "the second process did not finish in 120 s"
sleep 0.3 # one more sample while the files are held
vr_watch_stop
fds=$(vr_watch_fds) hwm=$(vr_watch_hwm_kb)
limit=$(awk '/^Max open files/ { print $4 }' "/proc/$daemon/limits")
vr_check "the view daemon is alive while the agent holds its files" kill -0 "$daemon"
: >"$P/finish"
st=0
wait "$sup" || st=$?
cat "$T/err" "$P/hold.out"
inner=$(cat "$P/limit.out")
held=$(awk '/^held/ { print $2 }' "$P/hold.out")
echo "measured: agent hard limit $inner (host $hard), held $held files;" \
	"view daemon peak fds $fds (RLIMIT_NOFILE $limit), peak RSS $((hwm / 1024)) MiB"
vr_check "the run exits 0 (got $st)" test "$st" = 0
vr_check "the agent's fd limit leaves the daemon room (2 x $inner < $limit)" test $((2 * inner)) -lt "$limit"
vr_check "the agent ends with EMFILE" grep -q 'errno EMFILE' "$P/hold.out"
vr_check "the agent held about its limit ($held of $inner)" test "$held" -gt $((inner - 20))
vr_check "the agent closed its files and exited normally" grep -qx closed "$P/hold.out"
vr_check "a second process read a file meanwhile" grep -qx hello "$P/second.out"
vr_check "the daemon's fds stay below its limit ($fds < $limit)" test "$fds" -gt "$held" -a "$fds" -lt "$limit"
vr_check "the daemon's peak RSS is below 256 MiB ($((hwm / 1024)) MiB)" test "$hwm" -gt 0 -a "$hwm" -lt $((256 * 1024))
vr_check "no view is left mounted on the project" test -z "$(awk -v t="$P" 'index($5, t) == 1 && / - fuse/' /proc/self/mountinfo)"
vr_done
