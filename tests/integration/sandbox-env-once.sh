#!/usr/bin/env bash
# --env-file and [sandbox] env-file (issue 17, item 6): the seed's dotenv
# trick — read .env outside, pass in only the names with allowed prefixes.
# `--env-file .env:OPENAI_*,LEGION_*` picks by glob (it used to be read as a
# file name and fail); `--env-file .env` imports all of it, and says so by
# name (never by value) — `--env-allow OPENAI_*` filters host variables only,
# never a file: it used to let AWS_SECRET_ACCESS_KEY in without a word.
# The .env has 30 keys of real shapes: `export`, both quotes, comments,
# CRLF lines, a multi-line PEM, empty and blank-padded values. Once: the
# environment is built before any uid matters.
. "$(dirname "$0")/../lib/libtest.sh"
. "$(dirname "$0")/../lib/sandbox-lib.sh"
vr_require_sandbox

P="$T/project"
mkdir -p "$P"
# Values as they should arrive (the file below encodes them in its ways).
pem=$'-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEA3Tz2mr7SZiAMfQyuvBjM2AAM\n-----END RSA PRIVATE KEY-----'
{
	printf '# Local settings for the legion launcher. Do not commit.\r\n'
	printf 'export OPENAI_API_KEY=sk-proj-Xa9dQ2LmWv7RtY3pZk5N8bHcJ4eFgT1sU6iO0aP\r\n'
	printf 'OPENAI_ORG_ID="org-4s9KdL2mQ7xVb1NzR8tYc3Wp"\n'
	printf "OPENAI_BASE_URL='https://api.openai.com/v1'\n"
	printf 'LEGION_MODE=dev   # the launcher reads this\n'
	printf 'export LEGION_WORKERS = 4\r\n'
	printf 'LEGION_NOTE="a # is not a comment in quotes"\n'
	printf '\n'
	printf '# --- cloud ---\n'
	printf 'AWS_ACCESS_KEY_ID=AKIAIOSFODNN7EXAMPLE\r\n'
	printf 'AWS_SECRET_ACCESS_KEY=wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY\r\n'
	printf 'AWS_REGION=eu-west-1\n'
	printf 'GOOGLE_APPLICATION_CREDENTIALS=/home/dev/.config/gcloud/app.json\n'
	printf 'AZURE_CLIENT_SECRET="Qx8~kR2.vN5_mZ7-pL3sT9wY1"\n'
	printf 'DATABASE_URL=postgres://app:Zx8kq2Vm@db.internal:5432/app?sslmode=require\n'
	printf "REDIS_URL='redis://:p4ssw0rd@localhost:6379/0'\n"
	printf 'STRIPE_SECRET_KEY=sk_test_51HbQ2xLkT9vWm3Nc8RpY\n'
	printf 'STRIPE_WEBHOOK_SECRET=whsec_5Xq9LmT2vR8kWp3N\n'
	printf 'ANTHROPIC_API_KEY="sk-ant-api03-Rk2mX9vQ7LtW3pN8bZc5"\r\n'
	printf 'GITHUB_TOKEN=ghp_16C7e42F292c6912E7710c838347Ae178B4a\r\n'
	printf 'SLACK_WEBHOOK_URL="https://hooks.slack.com/services/T000/B000/XXXX"\n'
	printf 'SENTRY_DSN=https://3f2a@o1234.ingest.sentry.io/567\n'
	printf 'JWT_SECRET="line\\nbreak and \\"quotes\\""\n'
	printf 'PRIVATE_KEY="-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEA3Tz2mr7SZiAMfQyuvBjM2AAM\n-----END RSA PRIVATE KEY-----"\n'
	printf 'SINGLE_QUOTED=%s\n' "'literal \\n and \$HOME stay'"
	printf 'EMPTY=\n'
	printf 'BLANK_PADDED=    padded value   \n'
	printf '   INDENTED=yes\n'
	printf 'NODE_ENV=development\n'
	printf 'PORT=3000\n'
	printf 'LOG_LEVEL=debug #trailing\n'
	printf 'FEATURE_FLAGS=a,b,c\n'
	printf 'export SMTP_PASSWORD="s3cr3t-smtp"\n'
} >"$P/.env"
vr_check "the .env has 30 keys" test "$(grep -cE '^ *(export )?[A-Z_]+ ?=' "$P/.env")" = 30

# Inside, COMMAND writes NAME=VALUE lines (values with newlines escaped) of
# what it got beyond the default allow-list, to a file outside.
mkdir -p "$T/out"
chmod 0777 "$T/out"
dump='for n in $(env | sed -n "s/^\([A-Z_][A-Z_0-9]*\)=.*/\1/p" | sort -u); do
	case $n in PATH|HOME|TERM|LANG|USER|SHELL|TZ|COLORTERM|PWD|SHLVL|OLDPWD|LC_*|_) continue ;; esac
	printf "%s=" "$n"; eval "printf %s \"\$$n\"" | od -An -c | tr -s " \n" " "; echo
done >/out/env'
run() { "$VR" --project "$P" --profile none --bind "$T/out" /out "$@" -- sh -c "$dump" 2>"$T/err"; }
names() { cut -d= -f1 "$T/out/env" | tr '\n' ' '; }
# got NAME VALUE — NAME arrived with exactly VALUE.
got() { test "$(sed -n "s/^$1=//p" "$T/out/env")" = "$(printf '%s' "$2" | od -An -c | tr -s ' \n' ' ')"; }
never_valued() { # no value of the file appears on stderr
	local v
	for v in sk-proj-Xa9dQ2 org-4s9KdL2 wJalrXUtnFEMI AKIAIOSFODNN7 Zx8kq2Vm ghp_16C7 s3cr3t-smtp; do
		grep -q -- "$v" "$T/err" && { echo "value $v on stderr"; return 1; }
	done
	return 0
}

# --- the seed's trick: globs after the last ':' ---
st=0
run --env-file "$P/.env:OPENAI_*,LEGION_*" || st=$?
vr_check "globs: the run works (exit $st)" test "$st" = 0
vr_check "globs: exactly the OPENAI_* and LEGION_* names came in ($(names))" \
	test "$(names)" = "LEGION_MODE LEGION_NOTE LEGION_WORKERS OPENAI_API_KEY OPENAI_BASE_URL OPENAI_ORG_ID "
vr_check "globs: an exported value, CRLF line" got OPENAI_API_KEY sk-proj-Xa9dQ2LmWv7RtY3pZk5N8bHcJ4eFgT1sU6iO0aP
vr_check "globs: a double-quoted value" got OPENAI_ORG_ID org-4s9KdL2mQ7xVb1NzR8tYc3Wp
vr_check "globs: a single-quoted value" got OPENAI_BASE_URL https://api.openai.com/v1
vr_check "globs: an inline comment cut" got LEGION_MODE dev
vr_check "globs: blanks around '=' after export, CRLF" got LEGION_WORKERS 4
vr_check "globs: '#' inside quotes kept" got LEGION_NOTE "a # is not a comment in quotes"
vr_check "globs: the first line names what came in, by name" \
	grep -qx "vault-run: --env-file $P/.env: imported 6 of 30 variables: LEGION_MODE, LEGION_NOTE, LEGION_WORKERS, OPENAI_API_KEY, OPENAI_BASE_URL, OPENAI_ORG_ID" "$T/err"
vr_check "globs: no value on stderr" never_valued
vr_check_not "globs: AWS_SECRET_ACCESS_KEY stayed out" grep -q AWS_SECRET "$T/out/env"

# --- the trap: --env-allow does not filter a file; the import says so ---
run --env-file "$P/.env" --env-allow 'OPENAI_*' || true
vr_check "whole file: all 30 came in" test "$(wc -l <"$T/out/env")" = 30
vr_check "whole file: the line names AWS_SECRET_ACCESS_KEY" grep -q "imported all 30 variables: .*AWS_SECRET_ACCESS_KEY" "$T/err"
vr_check "whole file: and says --env-allow filters host variables only" \
	grep -q -- "--env-allow filters host variables only, FILE:GLOB,... picks from a file" "$T/err"
vr_check "whole file: no value on stderr" never_valued
vr_check "whole file: a multi-line PEM" got PRIVATE_KEY "$pem"
vr_check "whole file: escapes in double quotes" got JWT_SECRET $'line\nbreak and "quotes"'
vr_check "whole file: single quotes are literal" got SINGLE_QUOTED 'literal \n and $HOME stay'
vr_check "whole file: an empty value" got EMPTY ""
vr_check "whole file: blank padding trimmed" got BLANK_PADDED "padded value"
vr_check "whole file: an indented line" got INDENTED yes
vr_check "whole file: '#' after a blank starts a comment" got LOG_LEVEL debug
vr_check "whole file: a CRLF line's CR is gone" got AWS_SECRET_ACCESS_KEY wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY
st=0
"$VR" --project "$P" --profile none --quiet --env-file "$P/.env" -- true 2>"$T/err" || st=$?
vr_check "--quiet: no import line (exit $st)" test ! -s "$T/err"

# --- precedence: host variables, then edits in command-line order ---
export OPENAI_API_KEY=from-the-host VR_TEST_ONLY_HOST=h
run --env-allow 'OPENAI_*' --env-allow VR_TEST_ONLY_HOST --env-file "$P/.env:OPENAI_API_KEY" || true
vr_check "order: the file's value replaces an allowed host variable" got OPENAI_API_KEY sk-proj-Xa9dQ2LmWv7RtY3pZk5N8bHcJ4eFgT1sU6iO0aP
vr_check "order: --env-allow still passes host variables" got VR_TEST_ONLY_HOST h
run --env-file "$P/.env:LEGION_MODE" --setenv LEGION_MODE cli || true
vr_check "order: --setenv after --env-file wins" got LEGION_MODE cli
run --setenv LEGION_MODE cli --env-file "$P/.env:LEGION_MODE" || true
vr_check "order: --env-file after --setenv wins" got LEGION_MODE dev
run --env-file "$P/.env:LEGION_MODE" --unsetenv LEGION_MODE || true
vr_check "order: --unsetenv after it removes it" test "$(names)" = ""
unset OPENAI_API_KEY VR_TEST_ONLY_HOST

# --- errors: one line, 125 ---
st=0
run --env-file "$P/.env:NOT_THERE" || st=$?
vr_check "an exact name the file lacks: 125 (got $st)" test "$st" = 125
vr_check "an exact name the file lacks: one line" grep -qx "vault-run: --env-file $P/.env: no variable NOT_THERE in it" "$T/err"
st=0
run --env-file "$P/.env:NOPE_*" || st=$?
vr_check "a glob that matches nothing: no error (exit $st)" test "$st" = 0
vr_check "a glob that matches nothing: said" grep -q "imported 0 of 30 variables; nothing matches NOPE_\*" "$T/err"
printf 'GOOD=1\nnot a line\n' >"$T/bad.env"
st=0
run --env-file "$T/bad.env" || st=$?
vr_check "a malformed line: 125 (got $st)" test "$st" = 125
vr_check "a malformed line: FILE:LINE" grep -q "$T/bad.env:2: expected NAME=VALUE" "$T/err"
printf 'K="never closed\nL=2\n' >"$T/open.env"
run --env-file "$T/open.env" || st=$?
vr_check "an unclosed quote: FILE:LINE" grep -q "$T/open.env:1: a \"…\" value is never closed" "$T/err"

# --- a file name with ':' in it ---
printf 'COLON=yes\n' >"$T/keys:prod"
st=0
run --env-file "$T/keys:prod" || st=$?
vr_check "keys:prod reads as the file keys, name prod: 125 (got $st)" test "$st" = 125
vr_check "keys:prod: the error says how to name the file" grep -q "for the file $T/keys:prod, end it with ':'" "$T/err"
run --env-file "$T/keys:prod:" || true
vr_check "keys:prod: (a trailing ':') is the file, all of it" got COLON yes
run --env-file "$T/keys:prod:COL*" || true
vr_check "keys:prod:COL* is the file and a glob" got COLON yes
cp "$T/keys:prod" "$T/dir:x.env"
run --env-file "$T/dir:x.env" || true
vr_check "dir:x.env (no name after ':' could be that) is the file" got COLON yes

# --- [sandbox] env-file in the user's config: the project's .env, picked ---
mkdir -p "$T/xdg/vault-run"
printf '[sandbox]\nenv-file = .env:OPENAI_*\n' >"$T/xdg/vault-run/config"
XDG_CONFIG_HOME="$T/xdg" run --env-file "$P/.env:PORT" || st=$?
vr_check "config: a relative env-file is the project's, its globs apply" \
	test "$(names)" = "OPENAI_API_KEY OPENAI_BASE_URL OPENAI_ORG_ID PORT "
vr_check "config: named as the config's in the line" \
	grep -q "^vault-run: \[sandbox\] env-file $P/.env: imported 3 of 30 variables: OPENAI_API_KEY" "$T/err"
XDG_CONFIG_HOME="$T/xdg" run --setenv OPENAI_BASE_URL cli || true
vr_check "config: the command line's edits come after the config's" got OPENAI_BASE_URL cli
# A project may not pull anything in: only restrictions there.
printf '[sandbox]\nenv-file = .env\n' >"$P/.vault-run"
st=0
run || st=$?
vr_check "a project .vault-run with env-file: 125 (got $st)" test "$st" = 125
vr_check "a project .vault-run with env-file: says only restrictions" grep -q "project config may only add restrictions" "$T/err"
rm "$P/.vault-run"
vr_check "the sandbox never sees the .env itself" \
	test "$("$VR" --project "$P" --profile none --quiet --env-file "$P/.env:PORT" -- sh -c 'cat .env 2>/dev/null || echo hidden')" = hidden
vr_done
