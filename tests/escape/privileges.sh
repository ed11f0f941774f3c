#!/usr/bin/env bash
# COMMAND's privileges: every capability set empty, no_new_privs, a seccomp
# filter; /proc/sys/kernel/core_pattern and /proc/sysrq-trigger not writable
# inside; and, when vault-run runs as host root, COMMAND does not run as host
# uid 0 (seen from the host). Probes are harmless if they ever worked:
# core_pattern gets the value it already holds, sysrq-trigger is opened for
# appending and closed without a byte written. Nothing is written on the host.
. "$(dirname "$0")/../lib/libtest.sh"
. "$(dirname "$0")/../lib/sandbox-lib.sh"
vr_require_sandbox
vr_require_cmd ps
P="$T/project"
mkdir -p "$P"
run() { "$VR" --project "$P" --profile none "$@"; }

st=$(run -- cat /proc/self/status)
for c in CapEff CapPrm CapInh CapBnd CapAmb; do
	vr_check "$c is 0 inside" grep -qP "^$c:\t0+$" <<<"$st"
done
vr_check "NoNewPrivs is 1 inside" grep -qP '^NoNewPrivs:\t1$' <<<"$st"
vr_check "Seccomp is 2 (filter) inside" grep -qP '^Seccomp:\t2$' <<<"$st"
# Control: the test's own shell has what the checks look for, or they prove
# nothing (root outside has a full bounding set; every process has CapBnd).
vr_check "control: outside, the bounding set is not empty" grep -qvP '^CapBnd:\t0+$' <(grep CapBnd /proc/self/status)

# core_pattern: the same value written back; sysrq-trigger: opened, nothing written.
probe='
	if v=$(cat /proc/sys/kernel/core_pattern 2>/dev/null); then
		{ printf "%s\n" "$v" >/proc/sys/kernel/core_pattern; } 2>/dev/null && echo "core_pattern writable"
	fi
	if [ -e /proc/sysrq-trigger ]; then
		{ exec 3>>/proc/sysrq-trigger; } 2>/dev/null && echo "sysrq-trigger writable"
		exec 3>&-
	fi
	true'
if vr_is_host_root; then
	# Control: the host's root may write core_pattern (same value, no change).
	v=$(cat /proc/sys/kernel/core_pattern)
	vr_check "control: host root can write core_pattern (its own value)" \
		sh -c "printf '%s\n' '$v' >/proc/sys/kernel/core_pattern"
	vr_check "core_pattern is unchanged" test "$(cat /proc/sys/kernel/core_pattern)" = "$v"
fi
out=$(run -- sh -c "$probe" 2>&1) || vr_fail "the probe run failed"
echo "$out"
vr_check_not "core_pattern is not writable inside" grep -q 'core_pattern writable' <<<"$out"
vr_check_not "sysrq-trigger is not writable inside" grep -q 'sysrq-trigger writable' <<<"$out"
vr_check_not "/proc/sys is not writable inside" run -- sh -c 'test -w /proc/sys/kernel/hostname'

# The uid COMMAND runs under, as the host sees it (supervisor -> pid 1 -> sleep).
rm -f "$P/up"
"$VR" --project "$P" --profile none -- sh -c 'touch "$1/up"; exec sleep 60' sh "$P" &
sup=$!
for i in $(seq 1 400); do [ -e "$P/up" ] && break; sleep 0.05; done
cmd=""
for c in $(ps -o pid= --ppid "$sup"); do
	for g in $(ps -o pid= --ppid "$c"); do
		[ "$(ps -o comm= -p "$g")" = sleep ] && cmd=$g
	done
done
if [ -n "$cmd" ]; then
	uids=$(awk '/^Uid:/ { print $2, $3, $4, $5 }' "/proc/$cmd/status")
	echo "COMMAND's uids seen from the host: $uids"
	if vr_is_host_root; then
		vr_check "as host root, COMMAND's real/effective/saved/fs uids are not 0 on the host" \
			sh -c "! echo '$uids' | tr ' ' '\n' | grep -qx 0"
	else
		vr_check "COMMAND runs as the caller's uid or less (not host 0)" \
			sh -c "! echo '$uids' | tr ' ' '\n' | grep -qx 0 || test \"\$(id -u)\" = 0"
	fi
else
	vr_fail "could not find COMMAND's process"
fi
kill -TERM "$sup" 2>/dev/null || true
wait "$sup" 2>/dev/null || true
vr_done
