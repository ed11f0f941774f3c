# scale-lib.sh — the processes of a run and the view daemon's footprint, for
# tests/fault/scale-*.sh (after libtest.sh).

vr_children() { ps -o pid= --ppid "$1" | tr -d ' '; }
# The supervisor's child that is pid 1 of a new pid namespace.
vr_sandbox_of() {
	local c
	for c in $(vr_children "$1"); do
		if awk '/^NSpid:/ { exit !(NF == 3 && $3 == 1) }' "/proc/$c/status" 2>/dev/null; then echo "$c"; return; fi
	done
}
# The view daemon: the supervisor's other child (--profile none: the only one).
vr_daemon_of() {
	local c s
	s=$(vr_sandbox_of "$1")
	[ -n "$s" ] || return 0
	for c in $(vr_children "$1"); do [ "$c" != "$s" ] && echo "$c" && return; done
}
# vr_wait_daemon SUP — prints the daemon's pid once the run is up (60 s).
vr_wait_daemon() {
	local i d
	for i in $(seq 1 600); do
		d=$(vr_daemon_of "$1")
		[ -n "$d" ] && echo "$d" && return 0
		kill -0 "$1" 2>/dev/null || return 1
		sleep 0.1
	done
	return 1
}

# vr_watch_start PID — samples PID's open fds and peak RSS (VmHWM) every
# 0.1 s in the background into $T/watch ("fds MAX hwm_kb KB" after each
# sample) until vr_watch_stop; both values are maxima over the samples.
vr_watch_start() {
	local pid=$1
	(
		maxfd=0 hwm=0
		while [ -d "/proc/$pid" ]; do
			fds=$(ls "/proc/$pid/fd" 2>/dev/null | wc -l)
			h=$(awk '/^VmHWM:/ { print $2 }' "/proc/$pid/status" 2>/dev/null || true)
			[ "$fds" -gt "$maxfd" ] && maxfd=$fds
			[ -n "$h" ] && [ "$h" -gt "$hwm" ] && hwm=$h
			echo "fds $maxfd hwm_kb $hwm" >"$T/watch.tmp" && mv "$T/watch.tmp" "$T/watch"
			sleep 0.1
		done
	) &
	VR_WATCH_PID=$!
}
vr_watch_stop() { kill "$VR_WATCH_PID" 2>/dev/null || true; wait "$VR_WATCH_PID" 2>/dev/null || true; }
vr_watch_fds() { awk '{ print $2 }' "$T/watch"; }
vr_watch_hwm_kb() { awk '{ print $4 }' "$T/watch"; }

# vr_wait_file FILE SECONDS — true once FILE exists.
vr_wait_file() {
	local end=$((SECONDS + $2))
	while [ ! -e "$1" ]; do
		[ "$SECONDS" -lt "$end" ] || return 1
		sleep 0.1
	done
}

# vr_fast_dir DIR — makes DIR, on a private tmpfs when this is host root (the
# caller runs in its own mount namespace: vr_private_mountns), so that
# creating and removing 10^5 files costs seconds even when the machine's
# disk is busy; elsewhere a plain directory under $T.
vr_fast_dir() {
	mkdir -p "$1"
	if [ "${VR_SCALE_PRIVATE_NS:-}" = 1 ]; then
		mount -t tmpfs -o size=1g,mode=0755 vr-scale "$1" || vr_skip "cannot mount a tmpfs here"
	fi
}
