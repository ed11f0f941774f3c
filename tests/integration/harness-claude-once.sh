#!/usr/bin/env bash
# The real Claude Code (npm package @anthropic-ai/claude-code, installed by
# .ci/run) runs in the sandbox under its profile: --version prints its
# version and exits 0, with the claude profile chosen by the command's name.
. "$(dirname "$0")/../lib/libtest.sh"
. "$(dirname "$0")/../lib/sandbox-lib.sh"
command -v claude >/dev/null || vr_skip "claude is not installed (npm install -g @anthropic-ai/claude-code)"
vr_require_sandbox

export HOME="$T/home" XDG_CONFIG_HOME="$T/home/.config"
mkdir -p "$HOME"
P="$T/project"
vr_make_demo "$P"

st=0
out=$("$VR" --project "$P" -- claude --version 2>"$T/err") || st=$?
vr_check "claude --version exits 0 (got $st)" test "$st" = 0
vr_check "claude --version prints its version" grep -Eq '^[0-9]+\.[0-9]+\.[0-9]+ \(Claude Code\)' <<<"$out"
vr_check "the claude profile was chosen by the command's name" grep -q "using profile 'claude'" "$T/err"
[ "$vr_failures" = 0 ] || { echo "$out"; cat "$T/err"; }
vr_done
