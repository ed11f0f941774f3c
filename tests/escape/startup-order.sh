#!/usr/bin/env bash
# The start-up order (docs/PERFORMANCE.md, "Start-up"): the sandbox builds
# its root while the view daemon confines itself, but COMMAND starts only
# once the daemon said "ready" — confined, its audit log started — and a
# daemon that fails between "mounted" and "ready" stops the run before
# COMMAND. The daemon's test hook VR_TEST_CONFINE (fusefs/view-confine.c)
# acts right after the mount was reported, while the root is being built:
# COMMAND works in a host directory bound in (--chdir there), so nothing
# but the start-up order keeps it from running before the view serves.
#   fail: the confinement fails (after a second). COMMAND must never run; exit 125, one line
#     from the daemon and one from the supervisor; nothing left behind.
#   slow: the confinement waits a second. The moment COMMAND has started,
#     every thread of the daemon already shows NoNewPrivs 1 and Seccomp 2
#     (read from the host), and COMMAND reads its project through the view.
. "$(dirname "$0")/../lib/libtest.sh"
. "$(dirname "$0")/../lib/sandbox-lib.sh"
vr_require_sandbox
# The side channel is a directory of the project, COMMAND's working
# directory: a --bind from outside it would be a view of its own (one
# door), a second daemon to count; a bind from inside it would be built
# through the view before it serves.
mkdir -p "$T/p/src" "$T/p/ctl"
chmod 0777 "$T/p/ctl" # COMMAND runs as 65534 when we are host root
echo 'int main(void) { return 0; }' >"$T/p/src/main.c"
no_leftovers() {  # no_leftovers WHAT
	vr_check_not "$1: no mount is left under the test dir" sh -c "awk -v t='$T' 'index(\$5, t) == 1' /proc/self/mountinfo | grep -q ."
	# A view daemon may outlive the supervisor by its last teardown (after
	# its "stopped", run/daemons.c): a moment, never more.
	for _ in $(seq 40); do pgrep -f -- "--project $T/p" >/dev/null || break; sleep 0.05; done
	vr_check_not "$1: no process of the run is left 2 s later (keeper included)" pgrep -f -- "--project $T/p"
}

# --- fail: the daemon cannot confine itself after it mounted ---
st=0
VR_TEST_CONFINE=fail timeout 60 "$VR" --project "$T/p" --profile none \
	--chdir "$T/p/ctl" -- sh -c 'touch ran; echo leaked >'"$T/p"'/src/leaked' >"$T/fail.out" 2>"$T/fail.err" || st=$?
cat "$T/fail.err"
vr_check "fail: vault-run exits 125 (exit $st)" test "$st" = 125
vr_check_not "fail: COMMAND never ran" test -e "$T/p/ctl/ran"
vr_check_not "fail: nothing reached the project" test -e "$T/p/src/leaked"
vr_check "fail: the daemon said why" grep -q "cannot confine itself" "$T/fail.err"
vr_check "fail: the supervisor said the view could not be started" \
	grep -q "the project view could not be started" "$T/fail.err"
vr_check "fail: two lines, no noise from the sandbox" test "$(grep -c . "$T/fail.err")" = 2
no_leftovers fail

# --- slow: COMMAND starts only after the daemon is confined ---
VR_TEST_CONFINE=slow "$VR" --project "$T/p" --profile none --chdir "$T/p/ctl" -- sh -c '
	touch started
	cat '"$T/p"'/src/main.c >copy
	for i in $(seq 1 600); do [ -e stop ] && exit 0; sleep 0.1; done
	exit 3' >"$T/slow.out" 2>&1 &
VRPID=$!
for _ in $(seq 1 1200); do [ -e "$T/p/ctl/started" ] && break; sleep 0.05; done
status_of() { awk -v k="$2:" '$1 == k { print $2 }' "$1" 2>/dev/null; }
ourpidns=$(readlink /proc/self/ns/pid)
daemons=0
if [ -e "$T/p/ctl/started" ]; then
	vr_pass "slow: COMMAND started"
	for child in $(cat /proc/$VRPID/task/*/children 2>/dev/null); do
		[ "$(readlink /proc/$child/ns/pid 2>/dev/null)" = "$ourpidns" ] || continue # the sandbox
		daemons=$((daemons + 1))
		bad=
		for s in /proc/$child/task/*/status; do
			[ "$(status_of "$s" NoNewPrivs)" = 1 ] && [ "$(status_of "$s" Seccomp)" = 2 ] || bad="$bad $s"
		done
		if [ -z "$bad" ]; then vr_pass "slow: the daemon (pid $child) was confined when COMMAND started"
		else vr_fail "slow: COMMAND started before the daemon (pid $child) was confined:$bad"; fi
	done
else
	vr_fail "slow: COMMAND did not start within 60 s"
fi
vr_check "slow: the view daemon was found" test "$daemons" = 1
touch "$T/p/ctl/stop"
st=0
wait $VRPID || st=$?
vr_check "slow: the run ended normally (exit $st)" test "$st" = 0
vr_check "slow: COMMAND read its project through the view" cmp "$T/p/src/main.c" "$T/p/ctl/copy"
no_leftovers slow
[ "$vr_failures" = 0 ] || cat "$T/slow.out"
vr_done
