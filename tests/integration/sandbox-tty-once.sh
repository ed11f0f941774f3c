#!/usr/bin/env bash
# The agent on the user's terminal (tmux): a window resize reaches it
# (tput cols changes), Ctrl-Z stops the run and fg resumes it, Ctrl-C ends it
# with 130.
. "$(dirname "$0")/../lib/libtest.sh"
. "$(dirname "$0")/../lib/sandbox-lib.sh"
vr_require_cmd tmux tput
vr_require_sandbox
P="$T/project"
mkdir -p "$P"
S="vr-tty-$$"
# HISTFILE= : the shell tmux kills at the end would write $T/.bash_history
# while vr_cleanup removes $T ("Directory not empty", 1 run in 6).
tm() { tmux -L "$S" -f /dev/null "$@"; }
trap 'tm kill-server 2>/dev/null; vr_cleanup' EXIT
tm new-session -d -s main -x 100 -y 30 "env -i PATH=$PATH TERM=screen HOME=$T HISTFILE= bash --norc --noprofile"
wait_for() { # wait_for DESCRIPTION COMMAND... — polls up to 20 s
	local what=$1 i; shift
	for i in $(seq 1 400); do if "$@"; then vr_pass "$what"; return 0; fi; sleep 0.05; done
	vr_fail "$what"; tm capture-pane -p -t main; return 1
}
tick() { cat "$P/tick" 2>/dev/null; }
cols_is() { [ "$(cat "$P/cols" 2>/dev/null)" = "$1" ]; }

tm send-keys -t main "cd '$P' && '$VR' --project '$P' -- sh -c 'while :; do tput cols >c.tmp; mv c.tmp cols; date +%s%N >tick; sleep 0.1; done'" Enter
wait_for "the run starts on the terminal with 100 columns" cols_is 100
tm resize-window -t main -x 120 -y 30
wait_for "a window resize changes tput cols inside" cols_is 120

tm send-keys -t main C-z
stopped() { local a b; a=$(tick); sleep 0.5; b=$(tick); [ "$a" = "$b" ]; }
wait_for "Ctrl-Z stops COMMAND" stopped
wait_for "the shell reports the job stopped" sh -c "tmux -L '$S' capture-pane -p -t main | grep -qi stopped"
tm send-keys -t main "fg" Enter
running() { local a b; a=$(tick); sleep 0.5; b=$(tick); [ "$a" != "$b" ]; }
wait_for "fg resumes it" running
tm send-keys -t main C-c
# fg's status is the job's: bash's $? after it is vault-run's exit status.
ended() { ! running; }
wait_for "Ctrl-C ends the run" ended
tm send-keys -t main 'echo rc=$? >rc' Enter
wait_for "the shell gets its prompt back" test -s "$P/rc"
vr_check "with status 130 (got $(cat "$P/rc"))" grep -qx rc=130 "$P/rc"
vr_done
