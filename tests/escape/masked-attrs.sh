#!/usr/bin/env bash
# Invariant 3: a file that holds a secret found by content is served masked
# and read-only (docs/scanning.md) — its mode, times and extended attributes
# too. A chmod o+rw, a POSIX ACL granting every user read, would hand the
# secret the agent cannot read to every other user of the host; a user
# xattr or new times are changes the host did not make. From inside the
# sandbox on config/settings.py (an AWS key): chmod 0666, utime, setxattr
# user.*, setxattr system.posix_acl_access (other::rw-), removexattr.
# Expected: each is refused, audited with the scan's reason; the host file's
# bytes, mode, times, xattrs and ACL are unchanged; a clean file of the same
# project still takes the chmod. Control: every call works on a plain copy.
. "$(dirname "$0")/../lib/libtest.sh"
. "$(dirname "$0")/../lib/sandbox-lib.sh"
vr_require_sandbox
vr_require_cmd python3

P="$T/project"
mkdir -p "$P/config" "$P/src"
# Built from pieces so this test file itself holds no secret shape.
AWS="AKIA""QWERTYUIOPASDF12"
printf '# settings\nAWS_ACCESS_KEY_ID = "%s"\n' "$AWS" >"$P/config/settings.py"
printf 'def f():\n    return 42\n' >"$P/src/clean.py"
chmod 0600 "$P/config/settings.py"
chmod 0644 "$P/src/clean.py"
touch -d '2020-01-02 03:04:05' "$P/config/settings.py"

# One line "CALL=RESULT" per call, on the file named; the ACL value is
# version 2 with user::rw-, group::---, other::rw-.
ATTACK='import errno, os, sys
f = sys.argv[1]
acl = bytes.fromhex("02000000" "01000600ffffffff" "04000000ffffffff" "20000600ffffffff")
calls = [("chmod", lambda: os.chmod(f, 0o666)),
         ("utime", lambda: os.utime(f, (0, 0))),
         ("setxattr", lambda: os.setxattr(f, "user.planted", b"1")),
         ("acl", lambda: os.setxattr(f, "system.posix_acl_access", acl)),
         ("removexattr", lambda: os.removexattr(f, "user.kept"))]
for name, call in calls:
    try:
        call()
        print(name + "=ok")
    except OSError as e:
        print(name + "=" + errno.errorcode.get(e.errno, str(e.errno)))'
state() { # bytes, mode, times, xattrs and ACL of FILE, one line each
	sha256sum <"$1"
	stat -c '%a %Y %Z' "$1"
	python3 -c 'import os, sys; print(sorted((n, os.getxattr(sys.argv[1], n)) for n in os.listxattr(sys.argv[1])))' "$1"
}

setfattr_py() { python3 -c 'import os, sys; os.setxattr(sys.argv[1], "user.kept", b"host")' "$1"; }
xattrs=yes
setfattr_py "$P/config/settings.py" 2>/dev/null || xattrs=no

cp -a "$P" "$T/plain"
ctl=$(python3 -c "$ATTACK" "$T/plain/config/settings.py" 2>&1)
echo "$ctl"
vr_check "control: chmod of the file works on a plain directory" grep -qx 'chmod=ok' <<<"$ctl"
vr_check "control: … and so does utime" grep -qx 'utime=ok' <<<"$ctl"
if [ "$xattrs" = yes ]; then
	vr_check "control: … setxattr" grep -qx 'setxattr=ok' <<<"$ctl"
	vr_check "control: … and removexattr" grep -qx 'removexattr=ok' <<<"$ctl"
fi

before=$(state "$P/config/settings.py")
LOG="$T/audit.jsonl"
out=$("$VR" --project "$P" --audit "$LOG" --quiet -- sh -c '
	cat "$1/config/settings.py"; python3 -c "$2" "$1/config/settings.py"
	chmod 0664 "$1/src/clean.py"; echo clean=$?' sh "$P" "$ATTACK" 2>&1) || true
echo "$out"
vr_check "inside, the file is served masked" grep -q 'AWS_ACCESS_KEY_ID = "\*\{20\}"' <<<"$out"
for c in chmod utime setxattr acl removexattr; do
	vr_check "$c of the file holding a secret is refused inside" grep -qx "$c=E[A-Z]*" <<<"$out"
done
vr_check "the host file's bytes, mode, times and xattrs are unchanged" \
	test "$(state "$P/config/settings.py")" = "$before"
vr_check "a clean file still takes a chmod" grep -qx 'clean=0' <<<"$out"
vr_check "… on the host" test "$(stat -c %a "$P/src/clean.py")" = 664
for op in setattr setxattr removexattr; do
	[ "$xattrs" = no ] && [ "$op" != setattr ] && continue
	vr_check "the refused $op is audited with the scan's reason" \
		grep -q "\"op\":\"$op\",\"path\":\"config/settings.py\",\"result\":\"EACCES\".*holds a secret found by content" "$LOG"
done
vr_check_not "the audit log holds no secret" grep -qF "$AWS" "$LOG"
vr_done
