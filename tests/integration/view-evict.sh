#!/usr/bin/env bash
# Cold-inode eviction (issue 3; fusefs/evict.c): each inode the kernel holds
# costs the daemon an O_PATH fd, so a walk over a tree bigger than the
# daemon's RLIMIT_NOFILE must still see every file — the daemon invalidates
# cold entries, the kernel forgets them, the fds come back.
. "$(dirname "$0")/../lib/libtest.sh"
. "$(dirname "$0")/../lib/view-lib.sh"
vr_require_fuse
vr_require_cmd python3
vr_require_cmd prlimit

P="$T/project" M="$T/view"
N_DIRS=30 PER_DIR=60   # 1800 files + 30 dirs, against 512 fds
python3 - "$P" "$N_DIRS" "$PER_DIR" <<'PY'
import os, sys
root, nd, nf = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
for d in range(nd):
    os.makedirs(f"{root}/d{d:02}")
    for f in range(nf):
        with open(f"{root}/d{d:02}/f{f:03}.txt", "w") as fh:
            fh.write(f"{d}/{f}\n")
PY
total=$((N_DIRS * PER_DIR))

vr_mount "$P" "$M" || vr_skip "cannot mount a FUSE view here"
# Lowered after start-up (the daemon raises its soft limit to the hard one
# when it starts): now both are 512.
prlimit --pid "$VR_MOUNT_PID" --nofile=512:512 || vr_skip "cannot lower the daemon's RLIMIT_NOFILE"
vr_check "the daemon's limit is 512" grep -q 'Max open files *512 *512' "/proc/$VR_MOUNT_PID/limits"

# Walk and read everything, twice (the second walk looks up evicted names again).
for pass in 1 2; do
	n=$(find "$M" -type f 2>"$T/find.err" | wc -l || true)
	vr_check "walk $pass: find sees all $total files (saw $n)" test "$n" = "$total"
	vr_check_not "walk $pass: without errors" test -s "$T/find.err"
	# A failed cat is reported by the checks below, not by set -e.
	find "$M" -type f -exec cat {} + >"$T/cat.out" 2>"$T/cat.err" || true
	vr_check "walk $pass: every file reads ($(wc -l <"$T/cat.out") lines)" test "$(wc -l <"$T/cat.out")" = "$total"
	vr_check_not "walk $pass: no read errors" test -s "$T/cat.err"
done
head -3 "$T/find.err" "$T/cat.err"
# Files go before directories (evict.c): invalidating a directory's entry
# drops its whole subtree, so under pressure the directories stay and a
# walk of them alone looks none of them up again. (Oldest first, as it
# was, evicted the directories: they are looked up before their files.)
counts() {
	local n; n=$(grep -c '^{"requests"' "$T/mount.err" || true)
	kill -USR1 "$VR_MOUNT_PID"
	for _ in $(seq 1 100); do
		[ "$(grep -c '^{"requests"' "$T/mount.err" || true)" -gt "$n" ] && break
		sleep 0.02
	done
	grep '^{"requests"' "$T/mount.err" | tail -1 | sed -n 's/.*"lookup":\([0-9]*\).*/\1/p'
}
sleep 1 # the evictor's last round (PERIOD_MS) is over
before=$(counts)
nd=$(find "$M" -mindepth 1 -type d | wc -l)
after=$(counts)
vr_check "the directories are all there ($nd)" test "$nd" = "$N_DIRS"
vr_check "and were still cached: $((after - before)) lookups (< 5)" test "$((after - before))" -lt 5
vr_check "evictions were counted" grep -q '"evict_inval_entry":[1-9]' <(kill -USR1 "$VR_MOUNT_PID"; sleep 0.3; tail -1 "$T/mount.err")
nfd=$(ls "/proc/$VR_MOUNT_PID/fd" | wc -l)
vr_check "the daemon stays under its limit ($nfd fds)" test "$nfd" -lt 512
vr_unmount
vr_check "the daemon ended cleanly" test "$(cat "$T/mount.err" | grep -c -i 'too many open files')" = 0

# The reserve's fd table is grown while the daemon has one thread
# (vr_evict_presize): growing it with threads running waits for an RCU
# grace period per doubling, 35-50 ms before the first request was served.
# Paused once confined, before the audit writer starts: one thread, and a
# table that holds the reserve already (the kernel's first one holds 64).
mkdir -p "$T/m2"
VR_TEST_PAUSE=view-confined "$VR" mount --audit "$T/m2.jsonl" "$P" "$T/m2" >/dev/null 2>"$T/m2.err" &
m2=$!
for _ in $(seq 1 500); do grep -q 'test hook: view-confined' "$T/m2.err" && break; sleep 0.02; done
pid=$(sed -n 's/.*test hook: view-confined, pid \([0-9]*\).*/\1/p' "$T/m2.err")
if vr_check "the second mount paused once confined" test -n "$pid"; then
	lim=$(awk '/^Max open files/ {print $4}' "/proc/$pid/limits")
	want=$((lim / 16 < 1024 ? lim / 16 : 1024))
	fdsize=$(awk '/^FDSize:/ {print $2}' "/proc/$pid/status")
	vr_check "one thread yet ($(awk '/^Threads:/ {print $2}' "/proc/$pid/status"))" grep -q '^Threads:[[:space:]]*1$' "/proc/$pid/status"
	vr_check "its fd table holds the reserve of $want already (FDSize $fdsize)" test "$fdsize" -gt "$want"
	kill -TERM "$pid"; kill -CONT "$pid"
fi
wait "$m2" || true
view_done
