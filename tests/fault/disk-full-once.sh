#!/usr/bin/env bash
# Disk full under the project: the project lives on a 1 MiB tmpfs (mounted
# in a private mount namespace of this test, so the host's mounts are never
# touched; needs host root, hence -once). Writing 3 MiB inside the sandbox
# must fail with ENOSPC from write, fsync or close — never report success
# for a half-written file — and the view keeps working afterwards.
# Control: the same writer on the tmpfs directly gets ENOSPC.
. "$(dirname "$0")/../lib/libtest.sh"
. "$(dirname "$0")/../lib/sandbox-lib.sh"
if [ "${VR_DISKFULL_INNER:-}" != 1 ]; then
	vr_is_host_root || vr_skip "mounting a small tmpfs needs host root"
	vr_require_cmd unshare python3
	vr_require_sandbox
	# Not exec: this shell's EXIT trap removes its own $T afterwards.
	VR_DISKFULL_INNER=1 unshare -m --propagation private bash "$0"
	exit $?
fi
mkdir -p "$T/small"
mount -t tmpfs -o size=1m,mode=0755 vr-diskfull "$T/small" || vr_skip "cannot mount a tmpfs here"
P="$T/small/project"
mkdir -p "$P"
echo keep >"$P/keep.txt"

# writer PATH — 3 MiB in 64 KiB writes, then fsync, then close; prints
# "ENOSPC at write|fsync|close" or "all succeeded".
writer='
import errno, os, sys
fd = os.open(sys.argv[1], os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
stage = "write"
try:
    left = 3 << 20
    while left > 0:  # a short write is fine; the next one must fail
        left -= os.write(fd, b"x" * min(left, 65536))
    stage = "fsync"; os.fsync(fd)
    stage = "close"; os.close(fd); fd = -1
    print("all succeeded")
except OSError as e:
    print(("ENOSPC" if e.errno == errno.ENOSPC else errno.errorcode.get(e.errno, str(e.errno))) + " at " + stage)
    if fd >= 0:
        try: os.close(fd)
        except OSError: pass
'
out=$(python3 -c "$writer" "$T/small/control")
vr_check "control: on the tmpfs itself a 3 MiB write fails ($out)" grep -q '^ENOSPC at' <<<"$out"
rm -f "$T/small/control"

out=$("$VR" --project "$P" --profile none -- python3 -c "$writer" "$P/big" 2>&1) || true
echo "inside: $out"
vr_check "inside, ENOSPC reaches write/fsync/close" grep -q '^ENOSPC at' <<<"$out"
vr_check_not "inside, no success is reported for the half-written file" grep -q 'all succeeded' <<<"$out"
out=$("$VR" --project "$P" --profile none -- sh -c 'head -c 3000000 /dev/zero >big2 && echo "shell write succeeded"' 2>&1) || true
echo "inside (shell): $out"
vr_check "a shell redirection reports the failure too" grep -qi 'no space left' <<<"$out"
vr_check_not "the shell write is not reported as done" grep -q 'shell write succeeded' <<<"$out"
rm -f "$P/big" "$P/big2"
vr_check "after freeing space the view works again" \
	"$VR" --project "$P" --profile none -- sh -c 'echo small >small.txt && cat keep.txt small.txt >/dev/null'
vr_check "the earlier file is intact" test "$(cat "$P/keep.txt")" = keep
umount "$T/small"
vr_done
