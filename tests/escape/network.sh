#!/usr/bin/env bash
# Host sockets: a unix socket in the host's /tmp or /run, and a TCP listener
# on the host's loopback with --net none, are unreachable inside. Each is
# first reached from outside, and the TCP one also with --net host inside,
# so the check can tell.
. "$(dirname "$0")/../lib/libtest.sh"
. "$(dirname "$0")/../lib/sandbox-lib.sh"
vr_require_sandbox
PY=/usr/bin/python3
[ -x "$PY" ] || vr_skip "python3 is needed"
mkdir -p "$T/p"
run() { "$VR" --project "$T/p" "$@"; }

cat >"$T/server.py" <<'PYEOF'
import os, socket, sys, threading
def serve(s):
    while True:
        c, _ = s.accept(); c.sendall(b"HOSTSOCK\n"); c.close()
socks = []
u = socket.socket(socket.AF_UNIX); u.bind(sys.argv[1]); u.listen(8); socks.append(u)
if len(sys.argv) > 3:
    r = socket.socket(socket.AF_UNIX); r.bind(sys.argv[3]); r.listen(8); socks.append(r)
t = socket.socket(); t.bind(("127.0.0.1", 0)); t.listen(8); socks.append(t)
open(sys.argv[2] + ".tmp", "w").write(str(t.getsockname()[1]))
os.rename(sys.argv[2] + ".tmp", sys.argv[2])
for s in socks[:-1]:
    threading.Thread(target=serve, args=(s,), daemon=True).start()
serve(t)
PYEOF
cat >"$T/client.py" <<'PYEOF'
import socket, sys
a = sys.argv[1]
s = socket.socket(socket.AF_UNIX) if a.startswith("/") else socket.socket()
s.settimeout(5)
s.connect(a if a.startswith("/") else ("127.0.0.1", int(a)))
sys.exit(0 if s.recv(100).startswith(b"HOSTSOCK") else 1)
PYEOF
RUNSOCK=
if [ -w /run ]; then RUNSOCK=/run/vr-test-$$.sock; fi
"$PY" "$T/server.py" "$T/host.sock" "$T/port" $RUNSOCK &
SRV=$!
trap 'kill $SRV 2>/dev/null; rm -f "$RUNSOCK"; vr_cleanup' EXIT
for _ in $(seq 1 200); do [ -s "$T/port" ] && break; sleep 0.05; done
PORT=$(cat "$T/port")

vr_check "control: the /tmp unix socket answers outside" "$PY" "$T/client.py" "$T/host.sock"
vr_check_not "the host's /tmp unix socket is unreachable inside" \
	run --ro-bind "$T/client.py" /c.py -- "$PY" /c.py "$T/host.sock"
if [ -n "$RUNSOCK" ]; then
	vr_check "control: the /run unix socket answers outside" "$PY" "$T/client.py" "$RUNSOCK"
	vr_check_not "the host's /run unix socket is unreachable inside" \
		run --ro-bind "$T/client.py" /c.py -- "$PY" /c.py "$RUNSOCK"
fi
vr_check "control: loopback TCP answers outside" "$PY" "$T/client.py" "$PORT"
vr_check "control: --net host reaches it from inside" \
	run --net host --ro-bind "$T/client.py" /c.py -- "$PY" /c.py "$PORT"
vr_check_not "--net none: the host's loopback is unreachable inside" \
	run --net none --ro-bind "$T/client.py" /c.py -- "$PY" /c.py "$PORT"
vr_check "--net none: loopback inside is up (a listener there answers)" run -- "$PY" -c '
import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); s.listen(1)
socket.create_connection(s.getsockname(), timeout=5)'
vr_done
