#!/usr/bin/env bash
# Invariant 11 is about the value, not the name: with --key NAME@HOST, a
# second variable holding the same value (another name for it in an
# --env-file, an allowed OPENAI_* twin, a URL with it in) must hold the
# sentinel too. The control runs without --key: those variables carry the
# real value in.
. "$(dirname "$0")/../lib/libtest.sh"
. "$(dirname "$0")/../lib/sandbox-lib.sh"
vr_require_sandbox
export XDG_STATE_HOME="$T/state"
mkdir -p "$T/project"
REAL=sk-proj-TwinValue0123456789abcdefghijKLMNOPqrstuv
printf 'OPENAI_API_KEY=%s\nLLM_KEY=%s\n' "$REAL" "$REAL" >"$T/keys.env"
export OPENAI_TWIN=$REAL DB_URL="https://user:$REAL@db.example/"
scan='cat /proc/[0-9]*/environ 2>/dev/null | tr "\0" "\n" | grep -E "^(OPENAI_API_KEY|LLM_KEY|OPENAI_TWIN|DB_URL)="'
run() {
	env -u OPENAI_API_KEY "$VR" --project "$T/project" --quiet --profile none --env-file "$T/keys.env" \
		--env-allow 'OPENAI_*' --env-allow DB_URL "$@" -- sh -c "$scan"
}
run --net none >"$T/control" 2>&1 || true
vr_check "control: without --key the twins carry the real value in" test "$(grep -c "$REAL" "$T/control")" -ge 4
run --key OPENAI_API_KEY@api.openai.com >"$T/out" 2>&1 || true
S=$(sed -n 's/^OPENAI_API_KEY=//p' "$T/out" | head -1)
vr_check "with --key, NAME is the sentinel" test -n "$S" -a "$S" != "$REAL" -a "${#S}" = "${#REAL}"
vr_check_not "no process environment holds the value under any name" grep -q "$REAL" "$T/out"
vr_check "… the twins hold the sentinel (--env-file, env-allow, inside a URL)" \
	test "$(grep -c "^LLM_KEY=$S$\|^OPENAI_TWIN=$S$\|^DB_URL=https://user:$S@db.example/$" "$T/out")" -ge 3
vr_done
