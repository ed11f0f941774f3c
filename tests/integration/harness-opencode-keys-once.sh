#!/usr/bin/env bash
# The real opencode (npm opencode-ai, on Bun; installed by .ci/run) with
# OPENAI_API_KEY and no --key at all (DESIGN.md invariant 11): the opencode
# profile's [keys] binds it to api.openai.com. Its provider is the scripted
# OpenAI-compatible server (tests/helpers/openai-server.py) behind TLS with
# a test CA, reached through the test build's proxy as api.openai.com
# (tests/bin/vault-run-testhooks: the name resolves to loopback, the
# server's port stands for 443, its CA is trusted upstream). The session
# completes, the server gets the real value as the Bearer, and opencode's
# own bash tool, asked by the model to run `env`, sees only the sentinel. Once only: a real harness start costs ~20 s; the proxy's
# @user/@unshare variants are in net-keys.sh.
. "$(dirname "$0")/../lib/libtest.sh"
. "$(dirname "$0")/../lib/sandbox-lib.sh"
. "$(dirname "$0")/../lib/opencode-lib.sh"
vr_opencode_setup
vr_require_cmd openssl
VRT="$VR_BIN/vault-run-testhooks"

O="$T/origin"
mkdir -p "$O"
ec=(-newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes)
openssl req -x509 "${ec[@]}" -keyout "$O/ca.key" -out "$O/ca.pem" -days 2 -subj /CN=vr-test-origin-ca \
	-addext basicConstraints=critical,CA:TRUE -addext keyUsage=critical,keyCertSign 2>/dev/null
openssl req -new "${ec[@]}" -keyout "$O/leaf.key" -out "$O/leaf.csr" -subj /CN=api.openai.com 2>/dev/null
printf 'subjectAltName=DNS:api.openai.com\nextendedKeyUsage=serverAuth\n' >"$O/ext"
openssl x509 -req -in "$O/leaf.csr" -CA "$O/ca.pem" -CAkey "$O/ca.key" -CAcreateserial -days 2 \
	-extfile "$O/ext" -out "$O/leaf.pem" 2>/dev/null
cat "$O/leaf.pem" "$O/ca.pem" "$O/leaf.key" >"$O/server.pem"

vr_model_server TLS_CERT="$O/server.pem" TOOL_COMMAND=env REPLY=PONG-WITH-A-KEY

# An OpenAI-compatible provider at api.openai.com whose key is the variable
# (opencode's {env:NAME}): inside, the sentinel.
vr_opencode_provider keyed "Scripted model behind the profile's key" https://api.openai.com/v1 "{env:OPENAI_API_KEY}"

REAL=sk-proj-OpencodeReal0123456789abcdefghijklmn
st=0
start=$SECONDS
OPENAI_API_KEY=$REAL VR_TEST_RESOLVE=api.openai.com=127.0.0.1 VR_TEST_UPSTREAM_PORT=$MP \
	VR_TEST_UPSTREAM_CA="$O/ca.pem" timeout 300 "$VRT" --project "$P" --audit "$T/run.audit" --timeout 240 \
	--net allow-private -- \
	opencode run 'Answer with one word.' >"$T/run.out" 2>"$T/run.err" || st=$?
took=$((SECONDS - start))
vr_check "opencode run completes with the profile's key put in (exit $st after ${took}s)" test "$st" = 0
vr_check "… and prints the scripted model's answer" grep -q PONG-WITH-A-KEY "$T/run.out"
vr_check "the server got the real value as the Bearer" grep -qx "AUTH Bearer $REAL" "$T/served.log"
vr_check_not "… and never anything else" grep -v "^AUTH Bearer $REAL\$" <(grep '^AUTH' "$T/served.log")
vr_check "opencode's bash tool ran env for the model" grep -q '^TOOL .*OPENAI_API_KEY=sk-proj-' "$T/served.log"
vr_check_not "… and what it printed holds no real value" grep -q "OpencodeReal" <(grep '^TOOL' "$T/served.log")
vr_check "… but the sentinel (the value's prefix and length)" \
	grep -q "^TOOL .*OPENAI_API_KEY=sk-proj-[A-Za-z0-9]\{$((${#REAL} - 8))\}\\\\n" "$T/served.log"
vr_check "every chat request is audited as an https request with the key put in" \
	grep -q '"proto":"https","host":"api.openai.com".*"path":"/v1/chat/completions","status":200,"keys":"OPENAI_API_KEY"' \
	"$T/run.audit"
vr_check_not "no real value in opencode's output" grep -q "OpencodeReal" "$T/run.out" "$T/run.err"
[ "$vr_failures" = 0 ] || { tail -n 20 "$T/run.out" "$T/run.err"; cut -c1-400 "$T/served.log"; }
vr_done
