#!/usr/bin/env bash
# The view daemon and the proxy confine themselves (SECURITY.md: "vault-run's
# own processes"). During a run with --net allow, every thread of every
# process the supervisor started outside the sandbox (the project view, the
# proxy) shows NoNewPrivs: 1 and Seccomp: 2 in /proc/PID/task/TID/status,
# read from the host. Control: the supervisor itself shows Seccomp: 0, so
# the check tells the two apart. What Landlock allows them is tested on the
# confinement functions themselves (tests/unit/test_confine.c): there is no
# request that makes a daemon open a path of the caller's choosing.
# The proxy is vault-run-proxy, exec'd (net/proxy-launch.h), and holds no
# capability in any thread: the listeners in the sandbox's netns were made
# before the exec. Control: the supervisor, root of the run's user
# namespace, holds some. After the run: no mount and no unmount keeper left.
. "$(dirname "$0")/../lib/libtest.sh"
. "$(dirname "$0")/../lib/sandbox-lib.sh"
vr_require_sandbox
mkdir -p "$T/p" "$T/ctl"

"$VR" --project "$T/p" --net allow=localhost --ro-bind "$T/ctl" /ctl -- sh -c '
	touch ready
	for i in $(seq 1 600); do [ -e /ctl/stop ] && exit 0; sleep 0.1; done
	exit 3' >"$T/run.out" 2>&1 &
VRPID=$!
for _ in $(seq 1 600); do [ -e "$T/p/ready" ] && break; sleep 0.05; done
vr_check "the run started (COMMAND wrote through the view)" test -e "$T/p/ready"

status_of() { awk -v k="$2:" '$1 == k { print $2 }' "$1" 2>/dev/null; }
vr_check "control: the supervisor is not confined (Seccomp: 0)" \
	test "$(status_of /proc/$VRPID/status Seccomp)" = 0

# How deep a process's pid namespace is (NSpid: one pid per level). Not
# /proc/PID/ns/pid: the proxy is not dumpable (it holds keys), and that
# link needs ptrace access.
pidns_depth() { awk '$1 == "NSpid:" { print NF - 1 }' "/proc/$1/status" 2>/dev/null; }
ourdepth=$(pidns_depth "$VRPID")
confined=0
for child in $(cat /proc/$VRPID/task/*/children 2>/dev/null); do
	# The sandbox's pid 1 lives in its own pid namespace: it has its own filter.
	[ "$(pidns_depth "$child")" = "$ourdepth" ] || continue
	name=$(cat /proc/$child/comm 2>/dev/null)
	bad=
	for st in /proc/$child/task/*/status; do
		[ "$(status_of "$st" NoNewPrivs)" = 1 ] && [ "$(status_of "$st" Seccomp)" = 2 ] || bad="$bad $st"
	done
	if [ -z "$bad" ]; then
		confined=$((confined + 1))
		vr_pass "pid $child ($name): every thread NoNewPrivs 1, Seccomp 2"
	else
		vr_fail "pid $child ($name) not confined:$bad"
	fi
done
vr_check "the view daemon and the proxy were both found ($confined)" test "$confined" -ge 2

vr_check_not "control: the supervisor holds capabilities (CapEff not 0)" \
	test "$(status_of /proc/$VRPID/status CapEff)" = 0000000000000000
proxy=
for child in $(cat /proc/$VRPID/task/*/children 2>/dev/null); do
	[ "$(cat /proc/$child/comm 2>/dev/null)" = vault-run-proxy ] && proxy=$child
done
vr_check "the proxy is the vault-run-proxy executable (pid ${proxy:-none})" test -n "$proxy"
if [ -n "$proxy" ]; then
	held=
	for st in /proc/$proxy/task/*/status; do
		for k in CapPrm CapEff CapInh CapAmb; do
			[ "$(status_of "$st" $k)" = 0000000000000000 ] || held="$held $st:$k=$(status_of "$st" $k)"
		done
	done
	vr_check "… and holds no capability in any thread${held:+:$held}" test -z "$held"
	# Not dumpable, though the exec made it so again: a process of the
	# same uid without capabilities (the @user variant; root may read it
	# anyway) cannot read its /proc/PID/environ (or mem). Control: COMMAND, of
	# the same uid and dumpable, can be read.
	if [ -n "${VR_TEST_USER:-}" ]; then
		agent=
		for c in $(cat /proc/$VRPID/task/*/children 2>/dev/null); do
			[ "$(pidns_depth "$c")" = "$ourdepth" ] || agent=$(cat /proc/$c/task/*/children 2>/dev/null | awk '{print $1}')
		done
		vr_check "control: COMMAND's /proc/PID/environ reads from the host (pid ${agent:-none})" \
			sh -c "test -n '$agent' && cat /proc/$agent/environ >/dev/null"
		vr_check_not "the proxy is not dumpable: its /proc/PID/environ does not read" \
			sh -c "cat /proc/$proxy/environ >/dev/null 2>&1"
	fi
fi

touch "$T/ctl/stop"
st=0
wait $VRPID || st=$?
vr_check "the run ended normally (exit $st)" test "$st" = 0
vr_check_not "no mount is left under the test dir" sh -c "vr_mounts_under() { awk -v t=\"\$1\" 'index(\$5, t) == 1 { print \$5 }' /proc/self/mountinfo; }; vr_mounts_under '$T' | grep -q ."
# The view daemon may outlive the supervisor by its last teardown (it said
# "stopped" once its logs were closed, run/daemons.c): a moment, never more.
for _ in $(seq 40); do pgrep -f -- "--project $T/p" >/dev/null || break; sleep 0.05; done
vr_check_not "no process of the run is left 2 s later (keeper included)" pgrep -f -- "--project $T/p"
[ "$vr_failures" = 0 ] || cat "$T/run.out"
vr_done
