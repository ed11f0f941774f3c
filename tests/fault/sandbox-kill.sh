#!/usr/bin/env bash
# kill -9 of each process of a run — COMMAND, the sandbox's pid 1, the view
# daemon, the supervisor: the others end, no process and no mount is left,
# and what was written and closed before is intact on the host.
. "$(dirname "$0")/../lib/libtest.sh"
. "$(dirname "$0")/../lib/sandbox-lib.sh"
vr_require_sandbox
vr_require_cmd ps

P="$T/project"
mkdir -p "$P"
echo keep >"$P/Makefile"

children() { ps -o pid= --ppid "$1" | tr -d ' '; }
# The supervisor's child that is pid 1 of a new pid namespace.
sandbox_of() {
	local c
	for c in $(children "$1"); do
		if awk '/^NSpid:/ { exit !(NF == 3 && $3 == 1) }' "/proc/$c/status" 2>/dev/null; then echo "$c"; return; fi
	done
}
daemon_of() {
	local c s
	s=$(sandbox_of "$1")
	for c in $(children "$1"); do [ "$c" != "$s" ] && echo "$c" && return; done
}
gone() { # gone PID... — all have exited (polls up to 20 s)
	local i p alive
	for i in $(seq 1 400); do
		alive=0
		for p; do if [ -n "$p" ] && kill -0 "$p" 2>/dev/null && ! grep -q '^State:.*Z' "/proc/$p/status" 2>/dev/null; then alive=1; fi; done
		[ "$alive" = 0 ] && return 0
		sleep 0.05
	done
	return 1
}

scenario() {
	local target=$1 want=$2
	rm -f "$P/written.txt" "$P/marker"
	"$VR" --project "$P" -- sh -c 'echo data >written.txt && echo up >marker && exec sleep 300' 2>"$T/err.$target" &
	local sup=$!
	local i
	for i in $(seq 1 400); do [ -e "$P/marker" ] && break; sleep 0.05; done
	local pid1 daemon cmd
	pid1=$(sandbox_of "$sup") daemon=$(daemon_of "$sup")
	cmd=$(children "$pid1" | head -1)
	if [ -z "$pid1" ] || [ -z "$daemon" ] || [ -z "$cmd" ]; then
		vr_fail "$target: could not find the processes (sup=$sup pid1=$pid1 daemon=$daemon cmd=$cmd)"
		kill -9 "$sup" 2>/dev/null; wait "$sup" 2>/dev/null
		return
	fi
	case $target in
	command) kill -9 "$cmd" ;;
	pid1) kill -9 "$pid1" ;;
	daemon) kill -9 "$daemon" ;;
	supervisor) kill -9 "$sup" ;;
	esac
	local st=0
	wait "$sup" || st=$?
	if [ "$target" != supervisor ]; then
		vr_check "$target killed: vault-run exits $want (got $st)" test "$st" = "$want"
	fi
	vr_check "$target killed: no process of the run is left" gone "$sup" "$pid1" "$daemon" "$cmd"
	vr_check "$target killed: nothing is mounted on the project" \
		test -z "$(vr_mounts_under "$P")"
	vr_check "$target killed: the project is usable on the host" test "$(cat "$P/Makefile")" = keep
	vr_check "$target killed: a file written and closed before is intact" test "$(cat "$P/written.txt")" = data
	# A leftover would hold the test's output open and hang the runner.
	kill -9 "$sup" "$pid1" "$daemon" "$cmd" 2>/dev/null || true
}

scenario command 137
scenario pid1 137
scenario daemon 125
vr_check "daemon killed: the supervisor says so" grep -q "view daemon died" "$T/err.daemon"
scenario supervisor x
vr_done
