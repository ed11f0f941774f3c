#!/usr/bin/env bash
# Scale: a 5 GiB sparse file through the view inside the sandbox. Its size
# is right; reads at the end, across the 4 GiB boundary (a 32-bit offset
# would wrap there) and in a hole are right; writes across the boundary and
# past the end land on the host at those offsets; the file stays sparse on
# the host (nothing copied it: the undo journal skips a file over its cap
# and the content scanner does not read it whole); the run's state
# directory stays small. Control: the same probe on the host file first.
# Root only (-once): nothing here depends on who runs vault-run (the @user
# and @unshare variants passed too when it ran in all three).
. "$(dirname "$0")/../lib/libtest.sh"
. "$(dirname "$0")/../lib/sandbox-lib.sh"
vr_require_sandbox
vr_require_cmd python3 truncate du
P="$T/project"
mkdir -p "$P"
G=$((1 << 30))
F="$P/sparse.img"
truncate -s $((5 * G)) "$F" || vr_skip "cannot make a 5 GiB sparse file here"
[ "$(du -k "$F" | cut -f1)" -lt 1024 ] || vr_skip "this file system does not keep sparse files sparse"
printf 'ABCDEFGH' | dd of="$F" bs=1 seek=$((4 * G - 4)) conv=notrunc status=none
printf 'ENDMARK!' | dd of="$F" bs=1 seek=$((5 * G - 8)) conv=notrunc status=none

# probe.py FILE read|write — one "what value" line per check.
cat >"$T/probe.py" <<'PY'
import os, sys
G = 1 << 30
path, mode = sys.argv[1], sys.argv[2]
if mode == "read":
    fd = os.open(path, os.O_RDONLY)
    print("size", os.fstat(fd).st_size)
    print("boundary", os.pread(fd, 8, 4 * G - 4).decode())
    print("end", os.pread(fd, 8, 5 * G - 8).decode())
    print("past-end", len(os.pread(fd, 8, 5 * G)))
    print("hole-zero", os.pread(fd, 4096, 2 * G + 12345) == bytes(4096))
    print("lseek-end", os.lseek(fd, 0, os.SEEK_END))
else:
    fd = os.open(path, os.O_RDWR)
    os.pwrite(fd, b"12345678", 4 * G - 4)
    os.pwrite(fd, b"TAIL", 5 * G)
    os.fsync(fd)
    print("size", os.fstat(fd).st_size)
    print("boundary", os.pread(fd, 8, 4 * G - 4).decode())
    print("tail", os.pread(fd, 12, 5 * G - 8).decode())
os.close(fd)
PY

host=$(python3 "$T/probe.py" "$F" read 2>&1)
echo "$host" | sed 's/^/host: /'
vr_check "control: on the host the probe reads the markers" \
	grep -qx "boundary ABCDEFGH" <<<"$host"

in=$("$VR" --project "$P" --profile none -- python3 - "$F" read <"$T/probe.py" 2>&1) || true
echo "$in" | sed 's/^/inside: /'
vr_check "inside, the size is 5 GiB" grep -qx "size $((5 * G))" <<<"$in"
vr_check "inside, a read across 4 GiB is right" grep -qx "boundary ABCDEFGH" <<<"$in"
vr_check "inside, a read at the end is right" grep -qx "end ENDMARK!" <<<"$in"
vr_check "inside, a read past the end is empty" grep -qx "past-end 0" <<<"$in"
vr_check "inside, a hole reads as zeros" grep -qx "hole-zero True" <<<"$in"
vr_check "inside, SEEK_END is at 5 GiB" grep -qx "lseek-end $((5 * G))" <<<"$in"

in=$("$VR" --project "$P" --profile none -- python3 - "$F" write <"$T/probe.py" 2>&1) || true
echo "$in" | sed 's/^/inside: /'
vr_check "inside, a write past the end grows the file" grep -qx "size $((5 * G + 4))" <<<"$in"
vr_check "inside, a write across 4 GiB reads back" grep -qx "boundary 12345678" <<<"$in"
vr_check "inside, the end reads back with the appended bytes" grep -qx "tail ENDMARK!TAIL" <<<"$in"
vr_check "on the host the size is 5 GiB + 4" test "$(stat -c %s "$F")" = $((5 * G + 4))
vr_check "on the host the bytes across 4 GiB are the written ones" \
	test "$(dd if="$F" bs=1 skip=$((4 * G - 4)) count=8 status=none)" = 12345678
vr_check "on the host the end has the appended bytes" \
	test "$(dd if="$F" bs=1 skip=$((5 * G - 8)) count=12 status=none)" = 'ENDMARK!TAIL'
kb=$(du -k "$F" | cut -f1)
vr_check "the file is still sparse on the host (${kb} KiB allocated)" test "$kb" -lt 1024
kb=$(du -sk "$XDG_STATE_HOME" | cut -f1)
vr_check "the state directory (audit logs, journals) stays small (${kb} KiB)" test "$kb" -lt 4096
vr_check "the journal noted the file as too big to keep" \
	grep -q '"reason":"cap"' "$XDG_STATE_HOME"/vault-run/project-*/*.journal/manifest.jsonl
vr_done
