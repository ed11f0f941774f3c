#!/usr/bin/env bash
# POSIX behaviour through `vault-run mount`, case by case where pjdfstest and
# libfuse's test_syscalls found the view differing from the host (docs/view.md,
# "POSIX conformance"): modes of new objects under the caller's umask and a
# default ACL, a name removed through the view and made again by the host,
# fifos and sockets refused, the scanner's "skipped" note once per file, and
# refused writes (read-only, masked) failing with EACCES, audited, and
# leaving no bytes in the kernel's page cache that the host does not have.
# Objects made for another uid: tests/integration/view-ids-once.sh.
. "$(dirname "$0")/../lib/libtest.sh"
. "$(dirname "$0")/../lib/view-lib.sh"
vr_require_fuse
vr_require_cmd python3

P="$T/project" M="$T/mnt" A="$T/audit.jsonl"
mkdir -p "$P/sub" "$P/.git"
printf '[core]\n\tbare = false\n' >"$P/.git/config"
AWS="AKIA""QWERTYUIOPASDF12"
printf 'key = %s\n' "$AWS" >"$P/creds.txt"
head -c 4096 /dev/zero | tr '\0' a >"$P/big.log"
# The daemon starts under the usual umask: it must not apply it again.
umask 022
vr_mount "$P" "$M" --audit "$A" --scan-max-size 1K || vr_skip "cannot mount a FUSE view here"

# --- the modes of new objects ------------------------------------------------
python3 - "$M" <<'EOF'
import os, sys
m = sys.argv[1]
os.umask(0)
os.close(os.open(m + "/f666", os.O_CREAT | os.O_WRONLY, 0o666))
os.mkdir(m + "/d777", 0o777)
os.mknod(m + "/n666", 0o100666)
os.umask(0o027)
os.close(os.open(m + "/f027", os.O_CREAT | os.O_WRONLY, 0o666))
os.mkdir(m + "/d027", 0o777)
EOF
mode() { stat -c %a "$1"; }
vr_check "umask 0: create 0666 is 0666 on the host (was 0644)" test "$(mode "$P/f666")" = 666
vr_check "umask 0: mkdir 0777 is 0777 on the host (was 0755)" test "$(mode "$P/d777")" = 777
vr_check "umask 0: mknod 0666 is 0666 on the host" test "$(mode "$P/n666")" = 666
vr_check "umask 027: create 0666 is 0640" test "$(mode "$P/f027")" = 640
vr_check "umask 027: mkdir 0777 is 0750" test "$(mode "$P/d027")" = 750

# A default ACL replaces the umask, on the host and so through the view.
mkdir "$P/acl" "$T/native-acl"
if command -v setfacl >/dev/null && setfacl -d -m u::rwx,g::rwx,o::rwx "$P/acl" "$T/native-acl" 2>/dev/null; then
	for d in "$M/acl" "$T/native-acl"; do
		(umask 022 && touch "$d/f" && mkdir "$d/d")
	done
	vr_check "default ACL: a new file's mode is the host's ($(mode "$T/native-acl/f"))" \
		test "$(mode "$P/acl/f")" = "$(mode "$T/native-acl/f")"
	vr_check "default ACL: a new directory's mode is the host's ($(mode "$T/native-acl/d"))" \
		test "$(mode "$P/acl/d")" = "$(mode "$T/native-acl/d")"
else
	echo "note: no default ACLs here; that part is not checked"
fi

# --- a name removed through the view, then made by the host -----------------
# libfuse's test_syscalls (open #27-29): unlink through the view, the host
# creates the name, the view opens it microseconds later. The kernel must
# not answer from a miss it cached before the host watch could drop it.
python3 - "$M" "$P" <<'EOF' >"$T/recreate.out"
import os, sys
m, p = sys.argv[1], sys.argv[2]
bad = 0
for d in ("", "sub/"):
    for i in range(40):
        v, h = m + "/" + d + "again", p + "/" + d + "again"
        os.close(os.open(v, os.O_CREAT | os.O_WRONLY, 0o644))
        os.unlink(v)
        try:
            os.stat(v)
        except FileNotFoundError:
            pass
        with open(h, "w") as f:
            f.write("host\n")
        try:
            os.close(os.open(v, os.O_RDONLY))
        except FileNotFoundError:
            bad += 1
print(bad)
EOF
vr_check "a removed name the host makes again is found at once ($(cat "$T/recreate.out") of 80 misses)" \
	test "$(cat "$T/recreate.out")" = 0

# --- fifos and sockets are not made in the project -----------------------------
vr_check_not "mkfifo through the view fails" mkfifo "$M/pipe" 2>/dev/null
vr_check "…with EPERM" python3 -c '
import errno, os, sys
try: os.mkfifo(sys.argv[1])
except OSError as e: sys.exit(e.errno != errno.EPERM)
sys.exit(1)' "$M/pipe2"
vr_check "binding a unix socket in the view fails with EPERM" python3 -c '
import errno, socket, sys
s = socket.socket(socket.AF_UNIX)
try: s.bind(sys.argv[1])
except OSError as e: sys.exit(e.errno != errno.EPERM)
sys.exit(1)' "$M/sock"
vr_check "no fifo or socket reached the host" test ! -e "$P/pipe" -a ! -e "$P/pipe2" -a ! -e "$P/sock"

# --- a file too large to scan: one note per run --------------------------------
for i in 1 2 3 4; do
	printf 'more\n' >>"$P/big.log"  # a new version each time
	sleep 0.1
	cat "$M/big.log" >/dev/null
done

# --- refused writes: EACCES, audited, and nothing left in the page cache -------
cat "$M/creds.txt" >/dev/null  # the scan finds the key: masked, read-only
python3 - "$M" <<'EOF' >"$T/refused.out" 2>&1
import errno, mmap, os, sys, time
m = sys.argv[1]
def expect(what, fn):
    try:
        fn()
        print("FAIL", what, "succeeded")
    except OSError as e:
        print("ok" if e.errno == errno.EACCES else "FAIL", what, errno.errorcode[e.errno])
for name in ("creds.txt", ".git/config"):
    p = m + "/" + name
    fd = os.open(p, os.O_WRONLY)
    expect(name + " write", lambda: os.write(fd, b"x"))
    expect(name + " pwrite", lambda: os.pwrite(fd, b"x", 3))
    expect(name + " fallocate", lambda: os.posix_fallocate(fd, 0, 4096))
    os.close(fd)
    fd = os.open(p, os.O_WRONLY | os.O_APPEND)
    expect(name + " append", lambda: os.write(fd, b"x\n"))
    os.close(fd)
    expect(name + " O_TRUNC", lambda: os.close(os.open(p, os.O_WRONLY | os.O_TRUNC)))
    expect(name + " truncate", lambda: os.truncate(p, 1))
    # A shared mmap's page is written back and refused: the page the
    # process changed must not be what the view serves afterwards.
    fd = os.open(p, os.O_RDWR)
    mm = mmap.mmap(fd, 0)
    mm[0:1] = b"Z"
    expect(name + " mmap writeback", mm.flush)
    mm.close()
    os.close(fd)
    for i in range(100):
        with open(p, "rb") as f:
            if f.read(1) != b"Z":
                break
        time.sleep(0.02)
    else:
        print("FAIL", name, "the view still serves the refused byte 2 s later")
EOF
while read -r st what; do
	if [ "$st" = ok ]; then vr_pass "$what"; else vr_fail "$what"; fi
done <"$T/refused.out"
vr_check "the host files are untouched" test "$(cat "$P/creds.txt")" = "key = $AWS" -a \
	"$(head -c 6 "$P/.git/config")" = "[core]"

vr_unmount
vr_check "the mkfifo refusals are audited" \
	test "$(grep '"op":"mknod"' "$A" | grep -c '"result":"EPERM"')" -ge 3
vr_check "one \"skipped\" note for the large file (4 versions read)" \
	test "$(grep '"op":"scan"' "$A" | grep '"path":"big.log"' | grep -c '"result":"skipped"')" = 1
vr_check "the refused writes of the masked file are audited" \
	grep -q '"op":"write","path":"creds.txt","result":"EACCES"' "$A"
vr_check "the refused writes of the read-only file are audited" \
	grep -q '"op":"write","path":".git/config","result":"readonly"' "$A"
view_done
