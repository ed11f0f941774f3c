#!/usr/bin/env bash
# A profile's keys (docs/network.md "Keys", "A profile's keys"): with a
# profile whose [keys] bind names OPENAI_API_KEY and NO --key, `vault-run
# --env-file .env -- sh` gives a sentinel inside and the loopback HTTPS
# origin receives the real value; a key whose value is absent is skipped
# without a word; --key none passes the real value with one warning (the
# control: the same run without the profile's binding shows the value);
# --net none gives the sentinel with no proxy; --net host passes the value
# with one warning; `vault-run profiles NAME` lists the keys and where
# their values are, never the value; --dry-run says what each key becomes.
#
# The origin is tests/helpers/tls-origin.py as in net-keys.sh; the test
# build's vault-run-testhooks resolves *.origin.test to 127.0.0.1, uses the
# origin's port in place of 443 and trusts its CA upstream.
. "$(dirname "$0")/../lib/libtest.sh"
. "$(dirname "$0")/../lib/origin-lib.sh"
. "$(dirname "$0")/../lib/view-lib.sh"
. "$(dirname "$0")/../lib/sandbox-lib.sh"
vr_origin_require

P="$T/project"
view_make_demo "$P"
cd "$P"

vr_origin_start tls-origin.py api other

# A user profile (found first on the search path) that names two keys: one
# with a value in the --env-file, one with none anywhere.
export XDG_CONFIG_HOME="$T/config"
mkdir -p "$XDG_CONFIG_HOME/vault-run/profiles"
cat >"$XDG_CONFIG_HOME/vault-run/profiles/keytest.profile" <<'EOF2'
[profile]
description = a harness with two keys
[env]
allow = OPENAI_API_KEY;ABSENT_API_KEY
[net]
allow = api.origin.test;other.origin.test
[keys]
bind = OPENAI_API_KEY@api.origin.test;ABSENT_API_KEY@other.origin.test:as=x-api-key
EOF2
REAL=sk-proj-ProfileReal0123456789abcdefghijKLMNOP
printf 'OPENAI_API_KEY=%s\n' "$REAL" >"$T/.env"
unset OPENAI_API_KEY ABSENT_API_KEY

cat >"$P/inside.sh" <<'EOF2'
cd /tmp
echo "openai=$OPENAI_API_KEY"
echo "absent=${ABSENT_API_KEY-unset}"
echo "environ-hits=$(cat /proc/[0-9]*/environ 2>/dev/null | tr '\0' '\n' | grep -c "$1" || true)"
echo "--echo"; curl -sS -H "Authorization: Bearer $OPENAI_API_KEY" "https://api.origin.test/echo/profile"
echo "--end"
EOF2

# --- the profile binds it: no --key -------------------------------------------
st=0
"$VRT" --project "$P" --profile keytest --audit "$T/main.audit" --net allow-private --env-file "$T/.env" \
	-- sh "$P/inside.sh" ProfileReal0123 >"$T/main.out" 2>"$T/main.err" || st=$?
S=$(sed -n 's/^openai=//p' "$T/main.out")
vr_check "the run completes (exit $st)" test "$st" = 0
vr_check "inside, OPENAI_API_KEY is a sentinel of the value's shape" \
	test "${S:0:8}" = sk-proj- -a "${#S}" = "${#REAL}" -a "$S" != "$REAL"
vr_check "no process environment inside holds the real value" grep -qx "environ-hits=0" "$T/main.out"
vr_check "the origin got the real value as the Bearer" grep -q "\"Authorization\": \"Bearer $REAL\"" "$O/log"
vr_check "the echo returns the sentinel" grep -qx "authorization=Bearer $S" "$T/main.out"
vr_check "the key with no value is skipped: no variable inside" grep -qx "absent=unset" "$T/main.out"
vr_check_not "… and not a word about it" grep -q "ABSENT_API_KEY" "$T/main.err"
vr_check_not "… nor a warning about keys" grep -q "warning: .*\(API_KEY\|--key\|--net\)" "$T/main.err"
vr_check "the request event names the key put in" \
	grep -q '"host":"api.origin.test".*"path":"/echo/profile".*"keys":"OPENAI_API_KEY"' "$T/main.audit"
vr_check "the whole script ran" grep -qx -- "--end" "$T/main.out"
[ "$vr_failures" = 0 ] || cat "$T/main.err"

# --- --key none: the old way, with one warning (the control) ------------------
"$VRT" --project "$P" --profile keytest --net allow-private --env-file "$T/.env" --key none \
	-- sh -c 'echo "openai=$OPENAI_API_KEY"' >"$T/none.out" 2>"$T/none.err" || true
vr_check "--key none: the real value enters" grep -qx "openai=$REAL" "$T/none.out"
vr_check "… with one warning line that names it" \
	test "$(grep -c 'warning: OPENAI_API_KEY enters the sandbox as its real value: --key none' "$T/none.err")" = 1
vr_expect_status 125 "--key none beside another --key" \
	"$VRT" --project "$P" --profile keytest --key none --key OPENAI_API_KEY@api.origin.test -- true
vr_check "… says so in one line" \
	grep -q "cannot stand beside another --key" <("$VRT" --project "$P" --key none --key K@api.origin.test -- true 2>&1)

# --- --net none: the sentinel, no proxy --------------------------------------------
"$VRT" --project "$P" --profile keytest --net none --env-file "$T/.env" \
	-- sh -c 'echo "openai=$OPENAI_API_KEY"; echo "cert=${SSL_CERT_FILE-none}"; cat /proc/[0-9]*/environ | tr "\0" "\n" | grep -c ProfileReal0123' \
	>"$T/netnone.out" 2>"$T/netnone.err" || true
vr_check "--net none: the same sentinel" grep -qx "openai=$S" "$T/netnone.out"
vr_check "… no trust store (no proxy to trust)" grep -qx "cert=none" "$T/netnone.out"
vr_check "… and the real value in no environment inside" grep -qx "0" "$T/netnone.out"

# --- --net host: cannot be injected; the old way, one warning -----------------------
"$VRT" --project "$P" --profile keytest --net host --env-file "$T/.env" \
	-- sh -c 'echo "openai=$OPENAI_API_KEY"' >"$T/host.out" 2>"$T/host.err" || true
vr_check "--net host: the real value enters" grep -qx "openai=$REAL" "$T/host.out"
vr_check "… with one warning line that says why and how to avoid it" \
	test "$(grep -c 'warning: OPENAI_API_KEY enters the sandbox as its real value: --net host has no proxy.*without --net host' "$T/host.err")" = 1

# --- vault-run profiles NAME ------------------------------------------------------
"$VR" profiles keytest --env-file "$T/.env" >"$T/profiles.out" 2>&1 || vr_fail "profiles keytest failed"
vr_check "profiles NAME lists each key with its host and place" \
	grep -q "OPENAI_API_KEY@api.origin.test  as bearer" "$T/profiles.out"
vr_check "… where its value was found" \
	grep -q "value: found in the env-file" <(grep -A1 "OPENAI_API_KEY@" "$T/profiles.out")
vr_check "… or that there is none" \
	grep -q "value: none" <(grep -A1 "ABSENT_API_KEY@other.origin.test  as x-api-key" "$T/profiles.out")
vr_check_not "… never the value" grep -q "ProfileReal" "$T/profiles.out"
ABSENT_API_KEY=sk-AbsentFromFile0123456789abcdef "$VR" profiles keytest >"$T/profiles-env.out" 2>&1
vr_check "… a value in the environment says so" \
	grep -q "value: found in the environment" <(grep -A1 "ABSENT_API_KEY@" "$T/profiles-env.out")
"$VR" profiles opencode >"$T/opencode.out" 2>&1
vr_check "profiles opencode lists its keys" grep -q "OPENAI_API_KEY@api.openai.com  as bearer" "$T/opencode.out"
vr_check "… Anthropic's as x-api-key" grep -q "ANTHROPIC_API_KEY@api.anthropic.com  as x-api-key" "$T/opencode.out"
# --- --dry-run: one line per key, never a value ------------------------------
dry() { "$VRT" --project "$P" --profile keytest --env-file "$T/.env" "$@" --dry-run -- true 2>/dev/null; }
out=$(dry --net allow-private)
vr_check "--dry-run: the bound key, its host and place" \
	grep -qx 'key: OPENAI_API_KEY -> api.origin.test as bearer (a sentinel inside; the proxy puts the value in)' <<<"$out"
vr_check_not "--dry-run: no line for the key with no value" grep -q ABSENT_API_KEY <<<"$out"
vr_check "--dry-run --net none: a sentinel, no proxy" grep -q '^key: OPENAI_API_KEY -> a sentinel inside; no proxy' <<<"$(dry --net none)"
out=$(dry --net allow-private --key none)
vr_check "--dry-run --key none: the real value, not bound" grep -q '^key: OPENAI_API_KEY -> its real value, not bound: --key none' <<<"$out"
vr_check_not "--dry-run never prints a value" grep -q ProfileReal0123 <<<"$out$(dry --net allow-private)"
vr_done
