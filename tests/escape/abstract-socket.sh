#!/usr/bin/env bash
# Host abstract unix sockets with --net host (SECURITY.md: "Landlock
# scoping"). An abstract socket (@/tmp/.X11-unix/X0, a session bus, any
# daemon's @name) has no file to hide: it lives in the network namespace,
# and --net host shares the host's. With Landlock ABI >= 6 COMMAND runs in
# a domain scoped for abstract sockets, so connecting to one bound outside
# fails with EPERM while one bound inside still works.
# Controls: the host socket answers outside, and inside it is listed in
# /proc/net/unix (the namespace is really shared, so only the scope stops
# the connect). Without ABI 6 the exposure stays and is documented: skip.
. "$(dirname "$0")/../lib/libtest.sh"
. "$(dirname "$0")/../lib/sandbox-lib.sh"
vr_require_sandbox
PY=/usr/bin/python3
[ -x "$PY" ] || vr_skip "python3 is needed"
ABI=$("$PY" -c 'import ctypes; print(ctypes.CDLL(None, use_errno=True).syscall(444, None, 0, 1))')
[ "${ABI:-0}" -ge 6 ] 2>/dev/null || vr_skip "Landlock ABI $ABI < 6: no abstract-socket scoping on this kernel"
mkdir -p "$T/p"
run() { "$VR" --project "$T/p" --net host --ro-bind "$T/client.py" /c.py "$@"; }
NAME="vr-test-abstract-$$-$RANDOM"

cat >"$T/server.py" <<'PYEOF'
import os, socket, sys
s = socket.socket(socket.AF_UNIX); s.bind("\0" + sys.argv[1]); s.listen(8)
open(sys.argv[2] + ".tmp", "w").write("up"); os.rename(sys.argv[2] + ".tmp", sys.argv[2])
while True:
    c, _ = s.accept(); c.sendall(b"HOSTSOCK\n"); c.close()
PYEOF
cat >"$T/client.py" <<'PYEOF'
import errno, socket, sys, threading
def connect(name):
    s = socket.socket(socket.AF_UNIX); s.settimeout(5)
    s.connect("\0" + name)
    return s.recv(100)
if sys.argv[1] == "listed":   # is the host's socket in this netns at all?
    sys.exit(0 if any(("@" + sys.argv[2]) in l for l in open("/proc/net/unix")) else 1)
if sys.argv[1] == "self":     # a socket bound inside still works
    s = socket.socket(socket.AF_UNIX); s.bind("\0" + sys.argv[2] + "-inside"); s.listen(1)
    threading.Thread(target=lambda: s.accept()[0].sendall(b"HOSTSOCK\n"), daemon=True).start()
    sys.exit(0 if connect(sys.argv[2] + "-inside").startswith(b"HOSTSOCK") else 1)
try:
    ok = connect(sys.argv[2]).startswith(b"HOSTSOCK")
except OSError as e:
    print("connect: %s" % errno.errorcode.get(e.errno, e.errno), file=sys.stderr)
    sys.exit(3 if e.errno == errno.EPERM else 2)
sys.exit(0 if ok else 1)
PYEOF
"$PY" "$T/server.py" "$NAME" "$T/up" &
SRV=$!
trap 'kill $SRV 2>/dev/null; vr_cleanup' EXIT
for _ in $(seq 1 200); do [ -s "$T/up" ] && break; sleep 0.05; done

vr_check "control: the host's abstract socket answers outside" "$PY" "$T/client.py" connect "$NAME"
vr_check "control: --net host shares the namespace (the socket is listed inside)" \
	run -- "$PY" /c.py listed "$NAME"
vr_check "an abstract socket bound inside still works" run -- "$PY" /c.py self "$NAME"
vr_expect_status 3 "connecting to the host's abstract socket from inside fails with EPERM" \
	run -- "$PY" /c.py connect "$NAME"
vr_done
