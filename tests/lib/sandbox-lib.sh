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
