#!/usr/bin/env bash
# The symlink-swap race: d flips between a directory and a symlink to a host
# directory holding a canary while another process opens d/f. With entry and
# attribute caching off every open is a fresh lookup; the daemon must never
# follow the symlink on the host. VR_STRESS=1 runs ten times longer.
. "$(dirname "$0")/../lib/libtest.sh"
. "$(dirname "$0")/../lib/view-lib.sh"
vr_require_fuse
[ -x "$VR_BIN/view-race" ] || vr_fail "view-race helper is not built"

P="$T/project" M="$T/view" C="$T/canary"
mkdir -p "$P/d" "$C"
echo real >"$P/d/f"
echo CANARY >"$C/f"
ln -s "$C" "$P/s"
canary_sum=$(sha256sum <"$C/f")

# Without the view the race is real: a plain open of d/f through the symlink
# reaches the canary (so a daemon that followed it would leak it).
vr_check "the canary is reachable by following the symlink" grep -q CANARY "$P/s/f"

vr_mount "$P" "$M" --entry-timeout 0 --attr-timeout 0 --audit "$T/audit.jsonl" --audit-level denied ||
	vr_skip "cannot mount a FUSE view here"
iters=10000
[ "${VR_STRESS:-0}" = 1 ] && iters=100000
out=$(timeout 120 "$VR_BIN/view-race" "$M" "$iters") && rc=0 || rc=$?
echo "$out"
vr_check "the canary was never read through the view" test "$rc" = 0
real=$(sed -n 's/.* real=\([0-9]*\).*/\1/p' <<<"$out")
loop=$(sed -n 's/.* loop=\([0-9]*\).*/\1/p' <<<"$out")
vr_check "both sides of the swap were seen" test "${real:-0}" -gt 0 -a "${loop:-0}" -gt 0
vr_unmount
lookups=$(sed -n 's/.*"op":"unmount".*"lookups":\([0-9]*\).*/\1/p' "$T/audit.jsonl")
echo "daemon lookups: ${lookups:-none}"
vr_check "the daemon served at least 10^4 lookups" test "${lookups:-0}" -ge 10000
vr_check "the host canary is unchanged" test "$(sha256sum <"$C/f")" = "$canary_sum"
vr_check "the real f is unchanged" sh -c "grep -qx real '$P/d/f' || grep -qx real '$P/s/f'"
view_done
