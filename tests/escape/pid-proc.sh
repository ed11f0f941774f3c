#!/usr/bin/env bash
# The pid namespace and /proc: no host process can be seen, signalled or
# ptraced; pid 1 (vault-run's init) gives away neither its environment, its
# command line (vault-run's: it is the supervisor's clone) nor its
# executable; only fds 0-2 are inherited. (Never a broadcast kill here:
# were the pid namespace missing, it would hit the whole machine.)
. "$(dirname "$0")/../lib/libtest.sh"
. "$(dirname "$0")/../lib/sandbox-lib.sh"
vr_require_sandbox
mkdir -p "$T/p" "$T/bin"
cp "$VR_BIN/attack-ptrace" "$T/bin/"
run() { "$VR" --project "$T/p" --ro-bind "$T/bin" /vr-bin "$@"; }

sleep 300 &
H=$!
vr_check "control: the host process is signalable outside" kill -0 "$H"
vr_check_not "kill -0 of a host pid fails inside" run -- sh -c "kill -0 $H"
vr_check_not "/proc/<host pid> is not there inside" run -- test -e "/proc/$H"
vr_check "ps sees only the sandbox (at most 4 processes)" test "$(run -- sh -c 'ls -d /proc/[0-9]* | wc -l')" -le 4
vr_check "COMMAND's parent is pid 1" test "$(run -- sh -c 'cut -d" " -f4 /proc/$$/stat')" = 1

vr_check "control: ptrace of an own child works outside" "$T/bin/attack-ptrace" "$H"
vr_check_not "ptrace of pid 1 fails inside" run -- /vr-bin/attack-ptrace 1
kill "$H" 2>/dev/null || true
wait "$H" 2>/dev/null || true

export VR_TEST_HOST_SECRET=s3cret
vr_check "control: /proc/self/environ is readable inside" run -- sh -c 'cat /proc/self/environ >/dev/null'
vr_check_not "/proc/1/environ is not readable inside" run -- cat /proc/1/environ
vr_check_not "no process inside has the unallowed host variable" \
	run -- sh -c 'cat /proc/[0-9]*/environ 2>/dev/null | tr "\0" "\n" | grep -q VR_TEST_HOST_SECRET'
# /proc/1/cmdline needs no ptrace access, and pid 1 is a clone of the
# supervisor: its command line (bind sources, the log's path, a --setenv
# value) must not be there. Control: the supervisor's own shows it.
"$VR" --project "$T/p" --hide zzz-cmdline-marker -- sh -c 'tr "\0" " " </proc/1/cmdline; sleep 1' >"$T/cmdline" 2>/dev/null &
V=$!
sleep 0.5
vr_check "control: the supervisor's command line shows the marker" grep -q zzz-cmdline-marker "/proc/$V/cmdline"
wait "$V" || true
vr_check_not "/proc/1/cmdline inside does not" grep -q zzz-cmdline-marker "$T/cmdline"
vr_check_not "… nor any word of it" grep -q -e --project -e vault-run "$T/cmdline"
vr_check "COMMAND still gets its own arguments" test "$(run -- sh -c 'echo "$0 $1"' a b)" = "a b"
vr_check_not "/proc/1/exe cannot be opened for writing" run -- sh -c 'exec 3>>/proc/1/exe'
vr_check_not "/proc/1/exe cannot be read" run -- sh -c 'cat /proc/1/exe >/dev/null'
vr_check_not "/proc/1/root cannot be entered" run -- ls /proc/1/root/

exec 7</dev/null 8>"$T/fd8"
vr_check "control: fds 7 and 8 are inherited without a sandbox" \
	grep -qx 7 <(sh -c 'ls /proc/$$/fd')
# What COMMAND inherited, as ls (exec'd, so no shell of ours holds a pipe
# or a saved descriptor meanwhile) sees it, less the directory ls reads.
fds_inside() {
	run -- sh -c 'exec ls -l /proc/self/fd/' 2>/dev/null |
		awk '/ -> / && $NF !~ /^\/proc\/[0-9]+\/fd$/ { printf "%s ", $(NF-2) }'
}
vr_check "only fds 0-2 inside" test "$(fds_inside)" = "0 1 2 "
exec 7<&- 8>&-
vr_done
