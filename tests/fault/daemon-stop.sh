#!/usr/bin/env bash
# The view daemon SIGSTOPped while the agent reads through the view: the
# agent's reads hang (nothing answers FUSE), yet SIGTERM to vault-run still
# ends the run within a few seconds (6 s here), and no process of the run
# and no mount is left. (docs/sandbox.md: signals to vault-run are forwarded
# to COMMAND; when the sandbox ends the daemon is stopped.)
#
# The supervisor lets stopped daemons run (SIGCONT) on every termination
# signal and when it stops them, SIGKILLs the sandbox after a 5 s grace, and
# kills the daemons 2 s later if the sandbox is still held in a FUSE wait.
. "$(dirname "$0")/../lib/libtest.sh"
. "$(dirname "$0")/../lib/sandbox-lib.sh"
vr_require_sandbox
vr_require_cmd ps

P="$T/project"
mkdir -p "$P"
seq 1 10000 >"$P/data"

children() { ps -o pid= --ppid "$1" | tr -d ' '; }
sandbox_of() { # the supervisor's child that is pid 1 of a new pid namespace
	local c
	for c in $(children "$1"); do
		if awk '/^NSpid:/ { exit !(NF == 3 && $3 == 1) }' "/proc/$c/status" 2>/dev/null; then echo "$c"; return; fi
	done
}
daemon_of() { # the view daemon: the child with threads (FUSE workers, the audit writer)
	local c s
	s=$(sandbox_of "$1")
	for c in $(children "$1"); do
		[ "$c" != "$s" ] || continue
		awk '/^Threads:/ { exit !($2 > 1) }' "/proc/$c/status" 2>/dev/null && echo "$c" && return
	done
}
alive() { kill -0 "$1" 2>/dev/null && ! grep -q '^State:.*Z' "/proc/$1/status" 2>/dev/null; }
gone() { # gone SECONDS PID... — all have exited within SECONDS (wall clock)
	local end=$((SECONDS + $1)) p any; shift
	while :; do
		any=0
		for p; do [ -n "$p" ] && alive "$p" && any=1; done
		[ "$any" = 0 ] && return 0
		[ "$SECONDS" -lt "$end" ] || return 1
		sleep 0.05
	done
}

"$VR" --project "$P" --profile none -- sh -c 'echo up >marker; while :; do cat data >/dev/null; echo x >>reads; done' 2>"$T/err" &
sup=$!
for i in $(seq 1 400); do [ -s "$P/reads" ] && break; sleep 0.05; done
pid1=$(sandbox_of "$sup") daemon=$(daemon_of "$sup")
agent=$(children "$pid1" | head -1)
if [ -z "$pid1" ] || [ -z "$daemon" ] || [ -z "$agent" ]; then
	vr_fail "could not find the processes (sup=$sup pid1=$pid1 daemon=$daemon agent=$agent)"
	kill -9 "$sup" 2>/dev/null; wait "$sup" 2>/dev/null
	vr_done
fi
vr_check "the agent reads through the view" test -s "$P/reads"
ps -o pid,ppid,nlwp,stat,comm --ppid "$sup" | sed 's/^/  /'
kill -STOP "$daemon"
# Control: with the daemon stopped, the agent's reads stop making progress.
n1=$(wc -l <"$P/reads")
sleep 1
n2=$(wc -l <"$P/reads")
vr_check "control: with the daemon stopped the agent is stuck ($n1 -> $n2 reads)" test "$n2" -le $((n1 + 1))

start=$SECONDS
kill -TERM "$sup"
if gone 6 "$sup"; then
	vr_pass "SIGTERM to vault-run ended the run in $((SECONDS - start)) s with the daemon stopped"
else
	vr_fail "vault-run still runs 6 s after SIGTERM with the daemon stopped"
	ps -o pid,ppid,stat,wchan:30,comm -p "$sup,$pid1,$agent,$daemon" || true
fi
# Leftovers would hang the runner: let a stopped daemon go and kill it
# (closing /dev/fuse aborts the requests the agent waits on), then the rest.
for p in "$daemon" "$agent" "$pid1" "$sup"; do
	if alive "$p"; then kill -CONT "$p" 2>/dev/null || true; kill -9 "$p" 2>/dev/null || true; fi
done
st=0
wait "$sup" || st=$?
echo "vault-run exit status: $st"
vr_check "no process of the run is left" gone 10 "$sup" "$pid1" "$agent" "$daemon"
vr_check "nothing is mounted on the project" test -z "$(vr_mounts_under "$P")"
vr_check "the project is intact on the host" test "$(wc -l <"$P/data")" = 10000
vr_done
