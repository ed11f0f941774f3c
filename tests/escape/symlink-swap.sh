#!/usr/bin/env bash
# Invariant 2 (the daemon never follows a symlink on the host) against every
# path-taking operation but open (integration/view-race.sh): truncate, chmod,
# setxattr, rename, link, unlink, mkdir on d/… while d is swapped with a
# symlink s. s points at "../canary": from the host project that is a canary
# directory next to it, from the mount point it is nothing. So the kernel
# following s for the attacker reaches nothing, and only a daemon that
# followed s on the host could touch the canary. Expected: the canary's
# content, modes, xattrs, times and listing never change.
# 10^4 iterations in all (1500 per operation); VR_STRESS=1 runs 10x more.
. "$(dirname "$0")/../lib/libtest.sh"
. "$(dirname "$0")/../lib/view-lib.sh"
vr_require_fuse
A="$VR_BIN/attack-swap"
[ -x "$A" ] || vr_fail "attack-swap helper is not built"
ops="truncate chmod setxattr rename link unlink mkdir"
iters=1500
[ "${VR_STRESS:-0}" = 1 ] && iters=15000

# setup ROOT — ROOT/project/{d/f,d/u,s -> ../canary}, ROOT/canary/{f,u}.
setup() {
	mkdir -p "$1/project/d" "$1/canary"
	echo real >"$1/project/d/f"
	echo real >"$1/project/d/u"
	printf 'CANARY\n' >"$1/canary/f"
	printf 'CANARY\n' >"$1/canary/u"
	chmod 0644 "$1/canary/f" "$1/canary/u"
	ln -s ../canary "$1/project/s"
}
# Everything an operation could change: names, modes, sizes, ctimes, mtimes,
# content, xattrs (setxattr and removexattr both move the ctime).
state() {
	(cd "$1" && find . -printf '%p %m %s %C@ %T@\n' | sort; cat f u 2>/dev/null | sha256sum) || true
}

# Control: on a plain directory the same race reaches the symlink's target.
setup "$T/plain"
for op in $ops; do
	before=$(state "$T/plain/canary")
	# On a plain file system a loop is a few ms: it may fit in one time
	# slice of the swapper, so try again until the race shows (or 30 times).
	for try in $(seq 1 30); do
		out=$("$A" "$T/plain/project" "$op" 2000)
		after=$(state "$T/plain/canary")
		[ "$before" = "$after" ] || break
	done
	if [ "$before" != "$after" ]; then
		vr_pass "control: $op through the swapped symlink changes the target ($out)"
	else
		vr_fail "control: $op never reached the symlink's target on a plain directory ($out)"
	fi
	rm -rf "$T/plain"
	setup "$T/plain"
done

setup "$T/r"
mkdir -p "$T/mnt"
M="$T/mnt/view"
vr_mount "$T/r/project" "$M" --entry-timeout 0 --attr-timeout 0 --audit "$T/audit.jsonl" --audit-level denied ||
	vr_skip "cannot mount a FUSE view here"
vr_check "from the mount point s leads nowhere" test ! -e "$M/s/f"
start=$SECONDS
for op in $ops; do
	before=$(state "$T/r/canary")
	out=$(timeout 120 "$A" "$M" "$op" "$iters") || vr_fail "$op: attack-swap failed"
	echo "$out"
	vr_check "$op: the operation worked on the real directory at times" \
		test "$(sed -n 's/.* ok=\([0-9]*\).*/\1/p' <<<"$out")" -gt 0
	vr_check "$op: the swap happened during the run" \
		test "$(sed -n 's/.* swaps=\([0-9]*\).*/\1/p' <<<"$out")" -gt 0
	after=$(state "$T/r/canary")
	vr_check "$op: the host canary is unchanged" test "$before" = "$after"
	# A success whose undo lost the race may have left d/f renamed away.
	rm -rf "$T/r/project/d/g" "$T/r/project/d/h" "$T/r/project/d/m" "$T/r/project/d/x"
	[ -e "$T/r/project/d/f" ] || echo real >"$T/r/project/d/f"
done
echo "race time: $((SECONDS - start)) s"
vr_unmount
vr_check "the canary still holds its content" test "$(cat "$T/r/canary/f")" = CANARY
view_done
