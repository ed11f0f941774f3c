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

# No credentials and no way to the model: opencode must get as far as its
# state directory and then fail by itself, promptly (not at --timeout), with
# a message about the network. Its model host is reached through the proxy:
# where it does not resolve (no network here) the proxy answers 404, not a
# 5xx that opencode retries with backoff for a minute; where it does resolve,
# the test takes the model host out of the allow list (403).
net=()
getent hosts opencode.ai >/dev/null 2>&1 && net=(--net allow=registry.npmjs.org)
st=0
start=$SECONDS
"$VR" --project "$P" --quiet --timeout 240 "${net[@]}" -- opencode run 'list the files' >"$T/run.out" 2>"$T/run.err" || st=$?
took=$((SECONDS - start))
vr_check "opencode run fails by itself, not at --timeout (exit $st after ${took}s)" bash -c "[ $st != 0 ] && [ $st != 124 ]"
vr_check "opencode run is not a sandbox error (exit $st)" bash -c "[ $st != 125 ] && [ $st != 126 ] && [ $st != 127 ]"
vr_check "opencode says it cannot reach its model host" \
	grep -qE 'vault-run: (cannot reach opencode\.ai|connection to opencode\.ai:443 denied)' "$T/run.out" "$T/run.err"
# The time it takes depends on the load; how often it asked does not: one
# request per stream (title and answer), no retries with backoff.
asks=$(cat "$XDG_STATE_HOME"/vault-run/*/*.jsonl | grep '"op":"connect"' | grep -c '"host":"opencode.ai"' || true)
vr_check "opencode gave up without retrying ($asks requests to opencode.ai, at most 3)" test "$asks" -ge 1 -a "$asks" -le 3
vr_check "opencode reached its state directory" test -n "$(ls -A "$HOME/.local/share/opencode" 2>/dev/null)"
vr_check_not "no secret of the demo reached opencode's output" grep -q 'hunter2-demo' "$T/run.out" "$T/run.err"
[ "$vr_failures" = 0 ] || { tail -20 "$T/run.out" "$T/run.err"; }
vr_done
