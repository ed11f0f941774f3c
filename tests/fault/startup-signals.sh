#!/usr/bin/env bash
# The start-up of a run and of `vault-run mount` (issue 17, item 3): no step
# waits without bound, SIGTERM and SIGINT at any phase end it cleanly
# (128+N for a run; 0, "stopped as asked", for mount, which then never says
# ready), and kill -9 at any phase leaves no process (D state included) and
# no mount. The test hook VR_TEST_PAUSE=PHASE (common/test-hook.h) stops the
# supervisor, or the view daemon, at each named phase; the test then signals
# it there. A run's processes are found by their command lines, which all
# name the case's own project (forks share the supervisor's; the keeper's
# fusermount3 and git name it too), even when they are non-dumpable.
#
# And --audit FILE where the sandbox (or the view) would show it: refused at
# once with 125 and one line, before anything is mounted; it used to hang
# forever in the daemon's own mount, SIGTERM did nothing, and kill -9 left
# the daemon behind in D state.
. "$(dirname "$0")/../lib/libtest.sh"
. "$(dirname "$0")/../lib/sandbox-lib.sh"
vr_require_sandbox
vr_require_cmd ps pgrep timeout

# run_procs DIR — pids of the processes whose command line names DIR/p
# (the project; git's --work-tree=) or DIR/m (mount's mount point, in the
# keeper's fusermount3).
run_procs() { pgrep -f -- "$1/[pm]([ /]|\$)" || true; }
# A case left stopped by a failed check must not hang the runner.
kill_all() {
	local d p
	for d in "$T"/c/*; do
		[ -d "$d" ] || continue
		for p in $(run_procs "$d"); do kill -9 "$p" 2>/dev/null || true; done
	done
}
trap 'kill_all; vr_cleanup' EXIT

# gone DIR — no process of the case is left (polls up to 10 s); says which.
gone() {
	local i left
	for i in $(seq 1 200); do
		left=$(run_procs "$1")
		[ -z "$left" ] && return 0
		sleep 0.05
	done
	ps -o pid,stat,wchan:24,args -p "$(echo $left | tr ' ' ,)" || true
	return 1
}
no_mount() { ! awk -v t="$1/" 'index($5 "/", t) == 1' /proc/self/mountinfo | grep -q .; }
state_of() { awk '{ print $3 }' "/proc/$1/stat" 2>/dev/null; }
# stopped_pid DIR PID — the pid the hook stopped (the supervisor PID, or the
# daemon that said so on stderr), once it is stopped; empty after 20 s.
stopped_pid() {
	local d=$1 sup=$2 i p
	for i in $(seq 1 400); do
		p=$(sed -n 's/^vault-run: test hook: .*, pid \([0-9]*\)$/\1/p' "$d/err" | head -1)
		if [ -n "$p" ] && [ "$(state_of "$p")" = T ]; then echo "$p"; return; fi
		kill -0 "$sup" 2>/dev/null || return 0
		sleep 0.05
	done
}

declare -A SUP WANT ACT HOOKED
# (env --default-signal: bash starts background jobs with SIGINT ignored,
# which a terminal's foreground vault-run never has.)
# launch NAME PHASE SIGNAL WANT [RUN OPTIONS...] — a run paused at PHASE.
# SIGNAL goes to the supervisor; KILL-SUP means kill -9 of the supervisor
# while the daemon is the one paused.
launch() {
	local name=$1 phase=$2 sig=$3 want=$4 d="$T/c/$1"
	shift 4
	mkdir -p "$d/p" "$d/home/.claude"
	# A repository whose history holds a hidden file: the run's git check
	# is under way in the first phases (its git must die with the run too).
	if [ "$phase" = begin ] && command -v git >/dev/null; then
		echo 'K=v' >"$d/p/.env"
		git -C "$d/p" init -q && git -C "$d/p" add .env &&
			git -C "$d/p" -c user.name=t -c user.email=t@e commit -qm x
	fi
	HOME="$d/home" VR_TEST_PAUSE=$phase env --default-signal=INT "$VR" --project "$d/p" "$@" -- sh -c 'echo ran >ran' \
		>"$d/out" 2>"$d/err" &
	SUP[$name]=$! WANT[$name]=$want ACT[$name]=$sig
}
# launch_mount NAME PHASE SIGNAL WANT — `vault-run mount` paused at PHASE.
launch_mount() {
	local name=$1 phase=$2 d="$T/c/$1"
	mkdir -p "$d/p" "$d/m"
	echo keep >"$d/p/f"
	VR_TEST_PAUSE=$phase env --default-signal=INT "$VR" mount --audit "$d/m.jsonl" "$d/p" "$d/m" >"$d/out" 2>"$d/err" &
	SUP[$name]=$! WANT[$name]=$4 ACT[$name]=$3
}
# settle — for every launched case: find it paused, act, wait, check.
settle() {
	local name d sup p st
	for name in "${!SUP[@]}"; do
		d="$T/c/$name" sup=${SUP[$name]}
		p=$(stopped_pid "$d" "$sup")
		if [ -z "$p" ]; then
			vr_fail "$name: never reached its phase"; cat "$d/err"; kill -9 "$sup" 2>/dev/null || true
			continue
		fi
		# The control: the case's processes are found by this very means.
		HOOKED[$name]=$(run_procs "$d" | wc -l)
		case ${ACT[$name]} in
		KILL) kill -9 "$sup" || true ;;
		KILL-SUP) kill -9 "$sup" || true; kill -CONT "$p" || true ;;
		*) kill -"${ACT[$name]}" "$sup" || true; kill -CONT "$p" || true ;;
		esac
	done
	for name in "${!SUP[@]}"; do
		d="$T/c/$name" st=0
		wait "${SUP[$name]}" 2>/dev/null || st=$?
		vr_check "$name: exit status ${WANT[$name]} (got $st)" test "$st" = "${WANT[$name]}"
		vr_check "$name: its processes were seen while paused (${HOOKED[$name]:-0})" test "${HOOKED[$name]:-0}" -ge 1
		vr_check "$name: no process of the run is left" gone "$d"
		vr_check "$name: no mount is left" no_mount "$d"
		vr_check_not "$name: COMMAND never ran" test -e "$d/p/ran"
		case ${ACT[$name]} in
		TERM|INT)
			if [ -d "$d/m" ]; then
				[[ $name == *view-ready* ]] || vr_check_not "$name: never said ready" grep -q ready "$d/out"
			else
				vr_check "$name: says why it stopped" grep -q "SIG${ACT[$name]} during start-up: stopping" "$d/err"
			fi ;;
		esac
		[ "$vr_failures" = 0 ] || { echo "--- $name stderr"; cat "$d/err"; }
	done
	SUP=() WANT=() ACT=() HOOKED=()
}

# --- a run: each phase of the supervisor, each way to end it ---
phases=(begin audit userns daemon mounted sandbox ready)
extra=()
mkdir -p "$T/cg-probe" # not $T itself: it holds the state directory, which a run refuses inside its project
if "$VR" --project "$T/cg-probe" --profile none --quiet --memory 256M -- true 2>/dev/null; then
	phases+=(cgroup)
else
	echo "note: no cgroup limits here; the cgroup phase is not tried"
fi
for ph in "${phases[@]}"; do
	args=(--profile none)
	[ "$ph" = cgroup ] && args+=(--memory 256M)
	launch "$ph-term" "$ph" TERM 143 "${args[@]}"
	launch "$ph-kill" "$ph" KILL 137 "${args[@]}"
	# SIGINT takes SIGTERM's path (run/startup.c): two phases suffice.
	case $ph in userns|mounted) launch "$ph-int" "$ph" INT 130 "${args[@]}" ;; esac
done
settle
# The phases that need a profile's guarded directory or the proxy.
launch guards-term guards TERM 143 --profile claude --net none
launch guards-kill guards KILL 137 --profile claude --net none
launch proxy-term proxy TERM 143 --profile none --net allow=example.com
launch proxy-kill proxy KILL 137 --profile none --net allow=example.com
# The view daemon paused at its own phases: the supervisor waits for it
# (at view-ready it does not: COMMAND starts, and the run is past start-up).
for ph in view-mount view-mounted view-confined view-ready; do
	launch "$ph-kill" "$ph" KILL-SUP 137 --profile none
	[ "$ph" = view-ready ] || launch "$ph-term" "$ph" TERM 143 --profile none
done
settle

# --- vault-run mount: each phase of the view, each way to end it ---
for ph in view-mount view-mounted view-confined view-ready; do
	launch_mount "m-$ph-term" "$ph" TERM 0
	launch_mount "m-$ph-kill" "$ph" KILL 137
	[ "$ph" != view-mounted ] || launch_mount "m-$ph-int" "$ph" INT 0
done
settle

# What follows does not depend on who runs it (no uid, no namespace of
# ours decides it): the plain variant alone, to keep the others fast.
if [ -n "${VR_TEST_USER:-}${VR_TEST_UNSHARE:-}" ]; then
	vr_done
fi

# --- no start-up wait is without bound: a daemon that never says "mounted" ---
d="$T/c/deadline"
mkdir -p "$d/p"
t0=$SECONDS st=0
VR_TEST_PAUSE=view-mount VR_TEST_STARTUP_TIMEOUT_MS=1000 timeout -k 5 60 \
	"$VR" --project "$d/p" --profile none -- sh -c 'echo ran >ran' >"$d/out" 2>"$d/err" || st=$?
vr_check "deadline: exit 125 (got $st)" test "$st" = 125
vr_check "deadline: within seconds ($((SECONDS - t0)) s)" test $((SECONDS - t0)) -lt 15
vr_check "deadline: says which wait ran out" grep -q "the project view did not say it was mounted within 1 s" "$d/err"
vr_check "deadline: no process is left" gone "$d"
vr_check "deadline: no mount is left" no_mount "$d"
vr_check_not "deadline: COMMAND never ran" test -e "$d/p/ran"

# --- --audit FILE where the sandbox would show it ---
P="$T/c/audit/p"
mkdir -p "$P" "$T/c/audit/b" "$T/c/audit/rb" "$T/c/audit/logs"
echo 'int main;' >"$P/main.c"
refused() { # refused NAME WANT-IN-MESSAGE(ERE) RUN-ARGS... — 125 at once, one line
	local name=$1 want=$2 st=0
	shift 2
	timeout -k 5 20 "$VR" "$@" -- sh -c 'echo ran >ran' >"$T/c/audit/out" 2>"$T/c/audit/err" || st=$?
	vr_check "$name: refused with 125 (got $st)" test "$st" = 125
	vr_check "$name: one line that says why" \
		test "$(grep -c . "$T/c/audit/err")" = 1 -a "$(grep -cE -e "$want" "$T/c/audit/err")" = 1
	vr_check "$name: nothing is left" gone "$T/c/audit"
	vr_check "$name: nothing is mounted" no_mount "$T/c/audit"
	vr_check_not "$name: COMMAND never ran" test -e "$P/ran"
	[ "$vr_failures" = 0 ] || cat "$T/c/audit/err"
}
refused "inside the project" "inside the project $P: the agent could read its own audit log" --project "$P" --profile none --audit "$P/a.jsonl"
vr_check_not "inside the project: no log file was created there" test -e "$P/a.jsonl"
mkdir -p "$P/logs" "$P/x"
refused "in a subdirectory, spelled with .." "inside the project $P: the agent could read its own audit log" --project "$P" --profile none --audit "$P/logs/../x/../logs/a.jsonl"
ln -s "$P" "$T/c/audit/alias"
refused "through a symlink to the project" "inside the project $P: the agent could read its own audit log" --project "$P" --profile none --audit "$T/c/audit/alias/a.jsonl"
echo old >"$P/old.jsonl"
ln -s "$P/old.jsonl" "$T/c/audit/logs/link.jsonl"
refused "a symlink to a file in the project" "inside the project $P: the agent could read its own audit log" --project "$P" --profile none --audit "$T/c/audit/logs/link.jsonl"
vr_check "a symlink to a file in the project: that file is untouched" test "$(cat "$P/old.jsonl")" = old
# (A writable bind holding the log is refused by the views' plan first,
# run/views.c, in its words; a read-only one here.)
refused "in a --bind directory" "--bind $T/c/audit/b: it holds the audit log" --project "$P" --profile none \
	--bind "$T/c/audit/b" /b --audit "$T/c/audit/b/a.jsonl"
refused "in a --ro-bind directory" "inside a path bound into the sandbox, $T/c/audit/rb: the agent could read" --project "$P" --profile none \
	--ro-bind "$T/c/audit/rb" /rb --audit "$T/c/audit/rb/a.jsonl"
mkdir -p "$T/bindalias"
if mount --bind "$P" "$T/bindalias" 2>/dev/null; then
	refused "through a bind mount of the project" "inside the project $P: the agent could read its own audit log" --project "$P" --profile none \
		--audit "$T/bindalias/a.jsonl"
	umount "$T/bindalias"
	# A --bind directory's view reached under another name: by inode.
	mount --bind "$T/c/audit/b" "$T/bindalias"
	refused "through a bind mount of a --bind directory" "inside a path bound into the sandbox, $T/c/audit/b: the agent could read" \
		--project "$P" --profile none --bind "$T/c/audit/b" /b --audit "$T/bindalias/a.jsonl"
	umount "$T/bindalias"
else
	echo "note: cannot bind-mount here (uid $(id -u)); the bind-mount alias is not tried"
fi
# The config's [audit] path is refused the same way.
mkdir -p "$T/c/audit/xdg/vault-run"
printf '[audit]\npath = %s\n' "$P/cfg.jsonl" >"$T/c/audit/xdg/vault-run/config"
st=0
XDG_CONFIG_HOME="$T/c/audit/xdg" timeout -k 5 20 "$VR" --project "$P" --profile none -- true 2>"$T/c/audit/err" || st=$?
vr_check "[audit] path inside the project: 125 (got $st)" test "$st" = 125
vr_check "[audit] path inside the project: named as the config's" grep -q "^vault-run: \[audit\] path in the config: .*inside the project" "$T/c/audit/err"

# Outside: the run works, the log is written (also through a symlink).
st=0
timeout -k 5 60 "$VR" --project "$P" --profile none --quiet --audit "$T/c/audit/logs/a.jsonl" -- cat main.c >/dev/null || st=$?
vr_check "outside: the run works (exit $st)" test "$st" = 0
vr_check "outside: the log has run-start and run-end" \
	sh -c 'grep -q "\"op\":\"run-start\"" "$1" && grep -q "\"op\":\"run-end\"" "$1"' sh "$T/c/audit/logs/a.jsonl"
: >"$T/c/audit/logs/real.jsonl"
ln -s "$T/c/audit/logs/real.jsonl" "$T/c/audit/logs/via.jsonl"
timeout -k 5 60 "$VR" --project "$P" --profile none --quiet --audit "$T/c/audit/logs/via.jsonl" -- true || true
vr_check "outside, through a symlink: the log is its target" grep -q '"op":"run-end"' "$T/c/audit/logs/real.jsonl"
vr_check "outside, through a symlink: the symlink stays one" test -L "$T/c/audit/logs/via.jsonl"

# vault-run mount: not in the project the view shows, nor under the mount.
mkdir -p "$T/c/audit/m"
for where in "$P/m.jsonl" "$T/c/audit/m/m.jsonl"; do
	st=0
	timeout -k 5 20 "$VR" mount --audit "$where" "$P" "$T/c/audit/m" >/dev/null 2>"$T/c/audit/err" || st=$?
	vr_check "mount --audit $where: refused with 125 (got $st)" test "$st" = 125
	vr_check "mount --audit $where: one line" test "$(grep -c "is inside the" "$T/c/audit/err")" = 1
	vr_check "mount --audit $where: nothing is mounted" no_mount "$T/c/audit/m"
	vr_check_not "mount --audit $where: no file was created" test -e "$where"
done
vr_done
