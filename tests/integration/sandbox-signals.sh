#!/usr/bin/env bash
# For orchestrators: signals sent to vault-run reach COMMAND (once), the
# status follows, --timeout stops a run, --json-status-fd speaks bwrap's format.
. "$(dirname "$0")/../lib/libtest.sh"
. "$(dirname "$0")/../lib/sandbox-lib.sh"
vr_require_sandbox
P="$T/project"
mkdir -p "$P"

# COMMAND counts the SIGTERMs it gets, then exits 0 after the first: a
# forwarded signal arrives exactly once.
"$VR" --project "$P" --timeout 60 -- sh -c 'n=0; trap "n=\$((n+1)); echo term >>got; exit 0" TERM; echo up >marker; while :; do sleep 0.05; done' &
sup=$!
for _ in $(seq 1 400); do [ -e "$P/marker" ] && break; sleep 0.05; done
kill -TERM "$sup"
st=0; wait "$sup" || st=$?
vr_check "SIGTERM to vault-run reaches COMMAND, which exits 0" test "$st" = 0
vr_check "COMMAND got SIGTERM exactly once" test "$(cat "$P/got" 2>/dev/null)" = term

rm -f "$P/marker"
"$VR" --project "$P" --timeout 60 -- sh -c 'echo up >marker; exec sleep 300' &
sup=$!
for _ in $(seq 1 400); do [ -e "$P/marker" ] && break; sleep 0.05; done
kill -HUP "$sup"
st=0; wait "$sup" || st=$?
vr_check "SIGHUP kills a COMMAND that does not handle it: 128+1" test "$st" = 129

st=0
start=$(date +%s)
"$VR" --project "$P" --timeout 1 -- sleep 60 2>"$T/timeout.err" || st=$?
vr_check "--timeout ends the run with 124" test "$st" = 124
vr_check "--timeout ends it soon" test $(( $(date +%s) - start )) -lt 20
vr_check "--timeout says so" grep -q "timed out" "$T/timeout.err"

"$VR" --project "$P" --json-status-fd 3 -- sh -c 'exit 7' 3>"$T/status.json" || true
vr_check "json status: child-pid" grep -qE '^\{ "child-pid": [0-9]+' "$T/status.json"
vr_check "json status: exit-code" grep -qE '^\{ "exit-code": 7 \}' "$T/status.json"
# SIGINT is "stop this step" to an agent's TUI: a COMMAND that handles it
# keeps running — vault-run never escalates an interrupt to SIGKILL.
"$VR" --project "$P" --quiet -- sh -c 'trap "echo interrupted" INT; i=0; while [ $i -lt 70 ]; do sleep 0.1; i=$((i+1)); done; echo survived' \
	>"$T/int.out" 2>&1 &
sup=$!
for _ in $(seq 100); do pgrep -P "$sup" >/dev/null && break; sleep 0.05; done
sleep 0.5
kill -INT "$sup"
st=0; wait "$sup" || st=$?
vr_check "a handled SIGINT does not end the run (exit $st)" test "$st" = 0
vr_check "COMMAND handled it and ran on" grep -q survived "$T/int.out"
vr_check "--hostname sets the sandbox's host name" test "$("$VR" --project "$P" --hostname vrbox -- cat /proc/sys/kernel/hostname)" = vrbox
vr_done
