#!/usr/bin/env bash
# The real opencode (npm package opencode-ai, installed by .ci/run), under
# its profile, with a project opencode.json whose provider is a scripted
# OpenAI-compatible server on the host's loopback (tests/helpers/
# openai-server.py): `opencode run` completes one session through
# `--net allow-localhost=PORT/http`, every request it makes passes the
# bridge's HTTP filter and is audited, and nothing but the inference paths
# reached the server. Once only: the @user/@unshare variants of the bridge
# are in net-localhost.sh; this one costs a real harness start.
. "$(dirname "$0")/../lib/libtest.sh"
. "$(dirname "$0")/../lib/sandbox-lib.sh"
. "$(dirname "$0")/../lib/opencode-lib.sh"
vr_opencode_setup
vr_model_server REPLY=PONG-FROM-THE-BRIDGE
vr_opencode_provider bridge "Scripted model behind allow-localhost" "http://127.0.0.1:$MP/v1" not-a-real-key

st=0
start=$SECONDS
timeout 300 "$VR" --project "$P" --audit "$T/run.audit" --timeout 240 --net allow-localhost="$MP/http" -- \
	opencode run 'Answer with one word.' >"$T/run.out" 2>"$T/run.err" || st=$?
took=$((SECONDS - start))
vr_check "opencode run completes through the bridge (exit $st after ${took}s)" test "$st" = 0
vr_check "… and prints the scripted model's answer" grep -q PONG-FROM-THE-BRIDGE "$T/run.out"
vr_check "the server was asked for chat completions" grep -q '^POST /v1/chat/completions$' "$T/served.log"
vr_check_not "nothing but the inference and listing paths reached it" \
	grep -vE '^(POST|GET) /(v1/(chat/completions|completions|embeddings|models|responses)|api/(chat|generate|tags|embed|embeddings))(\?.*)?$' \
	"$T/served.log"
vr_check "every request is a connect event of the bridge, allowed, with its path" \
	grep -q '"op":"connect","proto":"localhost-http","host":"127.0.0.1","port":'"$MP"',"result":"ok".*"path":"/v1/chat/completions","status":200' \
	"$T/run.audit"
vr_check_not "no secret of the demo reached opencode's output" grep -q 'hunter2-demo' "$T/run.out" "$T/run.err"
[ "$vr_failures" = 0 ] || { tail -n 20 "$T/run.out" "$T/run.err"; cat "$T/served.log"; }
vr_done
