#!/usr/bin/env bash
# Model-based test: a few thousand pseudo-random operations (fixed seed)
# applied to the view and to a native directory must give the same results,
# and the two trees must end up the same (names, types, modes, sizes,
# content, link targets).
. "$(dirname "$0")/../lib/libtest.sh"
. "$(dirname "$0")/../lib/view-lib.sh"
vr_require_fuse
[ -x "$VR_BIN/view-model" ] || vr_fail "view-model helper is not built"

P="$T/project" M="$T/view" N="$T/native"
mkdir -p "$P" "$N"
vr_mount "$P" "$M" || vr_skip "cannot mount a FUSE view here"
seed=${VR_MODEL_SEED:-20240601}
nops=3000
[ "${VR_STRESS:-0}" = 1 ] && nops=30000
vr_check "same results op by op (seed $seed)" "$VR_BIN/view-model" "$M" "$N" "$seed" "$nops"
tree() { (cd "$1" && find . -printf '%P %y %m %s %l %n\n' | grep -v '^ ' | sort); }
vr_check "same tree through the view" diff <(tree "$M") <(tree "$N")
vr_check "same tree on the host" diff <(tree "$P") <(tree "$N")
vr_unmount
# Random modes may have made directories unsearchable: open them up on
# both sides alike before comparing content.
chmod -R u+rwX "$P" "$N"
vr_check "same content" diff -r --no-dereference "$P" "$N"
view_done
