# sandbox-lib.sh — helpers for the sandbox tests (after libtest.sh).

# Skips (77) when this machine cannot start a sandbox at all; prints why.
vr_require_sandbox() {
	vr_require_fuse
	vr_require_userns
	mkdir -p "$T/.probe"
	if ! "$VR" --project "$T/.probe" -- true 2>"$T/.probe.err"; then
		cat "$T/.probe.err"
		vr_skip "the sandbox cannot start here"
	fi
	rmdir "$T/.probe"
}

# vr_expect_status WANT DESCRIPTION COMMAND... — runs COMMAND, compares $?.
vr_expect_status() {
	local want=$1 what=$2 got=0
	shift 2
	"$@" || got=$?
	if [ "$got" = "$want" ]; then vr_pass "$what (exit $got)"; else vr_fail "$what: exit $got, wanted $want"; fi
}

# Mounts of this mount namespace that live below DIR (for leftover checks).
vr_mounts_under() {
	awk -v t="$1" 'index($5, t) == 1 { print $5 }' /proc/self/mountinfo
}

# vr_private_home [DIR...] — the demo project in $P (the current directory
# then), and a private HOME, XDG_CONFIG_HOME (with vault-run/profiles/ for a
# test's own profiles) and XDG_STATE_HOME under $T; DIRs (relative to the
# home) are made in it.
vr_private_home() {
	P="$T/project"
	vr_make_demo "$P"
	cd "$P"
	export HOME="$T/home" XDG_CONFIG_HOME="$T/config" XDG_STATE_HOME="$T/state"
	mkdir -p "$HOME" "$XDG_CONFIG_HOME/vault-run/profiles" "$XDG_STATE_HOME"
	local d
	for d in "$@"; do mkdir -p "$HOME/$d"; done
}
