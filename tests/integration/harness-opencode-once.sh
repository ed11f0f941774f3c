#!/usr/bin/env bash
# The real opencode (npm package opencode-ai, installed by .ci/run) runs in
# the sandbox under its profile: --version works, and `opencode run` starts,
# reaches its config and state directories, and ends for lack of network or
# credentials — never with a sandbox error (125/126/127).
. "$(dirname "$0")/../lib/libtest.sh"
. "$(dirname "$0")/../lib/sandbox-lib.sh"
command -v opencode >/dev/null || vr_skip "opencode is not installed (npm install -g opencode-ai)"
vr_require_sandbox

export HOME="$T/home" XDG_CONFIG_HOME="$T/home/.config"
mkdir -p "$HOME"
P="$T/project"
vr_make_demo "$P"

out=$("$VR" --project "$P" --quiet -- opencode --version 2>"$T/err") && st=0 || st=$?
vr_check "opencode --version exits 0" test "$st" = 0
vr_check "opencode --version prints a version" grep -Eq '^[0-9]+\.[0-9]+' <<<"$out"
[ "$st" = 0 ] || cat "$T/err"

# No credentials and a proxy that cannot reach the model in CI: opencode
# must get as far as its state directory; --timeout bounds the wait.
st=0
"$VR" --project "$P" --quiet --timeout 15 -- opencode run 'list the files' >"$T/run.out" 2>"$T/run.err" || st=$?
vr_check "opencode run is not a sandbox error (exit $st)" bash -c "[ $st != 125 ] && [ $st != 126 ] && [ $st != 127 ]"
vr_check "opencode reached its state directory" test -n "$(ls -A "$HOME/.local/share/opencode" 2>/dev/null)"
vr_check_not "no secret of the demo reached opencode's output" grep -q 'hunter2-demo' "$T/run.out" "$T/run.err"
[ "$vr_failures" = 0 ] || { tail -20 "$T/run.out" "$T/run.err"; }
vr_done
