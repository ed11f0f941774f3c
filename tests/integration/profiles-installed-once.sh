#!/usr/bin/env bash
# The installed binary never reads profiles from the source tree (issue 16,
# item 5): a source tree can be a project an agent writes, and a profile
# decides what of the home is bound and writable. Only the binary of a build
# tree (the one the tests run) also searches the source tree's
# share/profiles/. The control: the build tree's binary finds the shipped
# profiles; the same binary copied elsewhere (as an install would put it)
# finds none of them unless they are installed.
. "$(dirname "$0")/../lib/libtest.sh"
export XDG_CONFIG_HOME="$T/config"
vr_check "control: the build tree's binary finds the shipped claude profile" \
	bash -c "'$VR' profiles | grep -q '^claude '"
mkdir -p "$T/bin"
cp "$VR" "$T/bin/vault-run"
out=$("$T/bin/vault-run" profiles 2>&1) || true
if grep -q '^claude ' <<<"$out" && "$T/bin/vault-run" profiles claude 2>/dev/null | grep -q "$VR_SOURCE_DIR"; then
	vr_fail "a binary outside the build tree read the source tree's profiles"
elif grep -q '^claude ' <<<"$out"; then
	vr_pass "a binary outside the build tree finds claude only where it is installed"
else
	vr_pass "a binary outside the build tree does not search the source tree"
fi
vr_check_not "… and never names the source tree" bash -c "'$T/bin/vault-run' profiles claude 2>&1 | grep -q '$VR_SOURCE_DIR/share'"
vr_done
