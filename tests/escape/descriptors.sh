#!/usr/bin/env bash
# Descriptors inside: COMMAND holds only 0-2 (+ the one ls uses to list its
# own /proc/self/fd), pid 1's are not readable or hold only 0-2, and none
# leads to the real project directory, /dev/fuse, the audit log or a socket
# (readlink of each). The caller leaks descriptors on purpose (the project
# directory, the audit log, a unix socket) to check that vault-run closes
# them; control: the same listing on the host shows them.
. "$(dirname "$0")/../lib/libtest.sh"
. "$(dirname "$0")/../lib/sandbox-lib.sh"
vr_require_sandbox
vr_require_cmd python3
P="$T/project"
mkdir -p "$P"
echo hello >"$P/file"
AUDIT="$T/audit.jsonl"
: >"$AUDIT"

# leaky CMD... — runs CMD with fd 7 on the project, 8 on the audit log and
# 9 a unix socket (python3 makes the socket and execs CMD with them).
leaky() {
	python3 - "$P" "$AUDIT" "$@" <<'PY'
import os, socket, sys
p, audit, cmd = sys.argv[1], sys.argv[2], sys.argv[3:]
a = os.open(p, os.O_RDONLY | os.O_DIRECTORY)
b = os.open(audit, os.O_WRONLY | os.O_APPEND)
s, _ = socket.socketpair()
for fd, want in ((a, 7), (b, 8), (s.fileno(), 9)):
    os.dup2(fd, want, inheritable=True)
os.execvp(cmd[0], cmd)
PY
}
list='for d in /proc/self/fd /proc/1/fd; do
	ls -l "$d/" 2>/dev/null | awk -v d="$d" "/->/ { print d, \$(NF-2), \$NF }" || echo "$d unreadable"
done'

host=$(leaky sh -c "$list")
vr_check "control: on the host the leaked project fd is there" grep -q "/proc/self/fd 7 $P\$" <<<"$host"
vr_check "control: on the host the leaked audit fd is there" grep -q "/proc/self/fd 8 $AUDIT\$" <<<"$host"
vr_check "control: on the host the leaked socket is there" grep -q '/proc/self/fd 9 socket:' <<<"$host"

in=$(leaky "$VR" --project "$P" --profile none --quiet --audit "$AUDIT" -- sh -c "$list" </dev/null 2>&1) || vr_fail "the sandbox run failed"
echo "$in"
fds=$(awk '$1 == "/proc/self/fd" { print $2 }' <<<"$in" | sort -n | tr '\n' ' ')
vr_check "COMMAND holds only 0-2 and the listed directory (got: $fds)" \
	test "$fds" = "0 1 2 3 "
vr_check "fd 3 is the directory being listed" grep -qE '^/proc/self/fd 3 /proc/[0-9]+/fd$' <<<"$in"
one=$(awk '$1 == "/proc/1/fd" { print $2 }' <<<"$in" | sort -n | tr '\n' ' ')
vr_check "pid 1's fds are unreadable or only 0-2 (got: ${one:-unreadable})" test -z "$one" -o "$one" = "0 1 2 "
vr_check_not "nothing leads to the real project" grep -q " $P" <<<"$in"
vr_check_not "nothing leads to /dev/fuse" grep -q '/dev/fuse' <<<"$in"
vr_check_not "nothing leads to the audit log" grep -q "$(basename "$AUDIT")" <<<"$in"
vr_check_not "no socket is held" grep -q 'socket:' <<<"$in"

# Every process of the sandbox, not just the two above.
all=$(leaky "$VR" --project "$P" --profile none --quiet --audit "$AUDIT" -- sh -c \
	'sleep 30 & for f in /proc/[0-9]*/fd/*; do readlink "$f"; done 2>/dev/null; kill $!' </dev/null 2>&1) || true
vr_check_not "no process inside holds a socket, the audit log or /dev/fuse" \
	grep -qE "socket:|/dev/fuse|$(basename "$AUDIT")" <<<"$all"
vr_done
