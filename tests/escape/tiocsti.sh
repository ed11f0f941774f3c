#!/usr/bin/env bash
# TIOCSTI on a real terminal: pushing characters into the user's terminal
# input works from a plain process on a pty here, and fails from inside.
. "$(dirname "$0")/../lib/libtest.sh"
. "$(dirname "$0")/../lib/sandbox-lib.sh"
vr_require_sandbox
vr_require_cmd script
mkdir -p "$T/p" "$T/bin"
cp "$VR_BIN/attack-tiocsti" "$T/bin/"
if ! script -qec "'$T/bin/attack-tiocsti' </dev/tty" /dev/null >"$T/control" 2>&1; then
	cat "$T/control"
	vr_skip "TIOCSTI does not work on a pty here even without a sandbox (dev.tty.legacy_tiocsti=0?)"
fi
vr_pass "control: TIOCSTI works on a pty without the sandbox"
script -qec "'$VR' --project '$T/p' --ro-bind '$T/bin' /vr-bin -- /vr-bin/attack-tiocsti; echo status=\$?" /dev/null >"$T/inside" 2>&1 || true
cat "$T/inside"
vr_check "TIOCSTI (and its high-bits variant) fail inside" grep -q 'status=1' "$T/inside"
vr_done
