#!/usr/bin/env bash
# vault-run scan: finds planted secrets by position and rule, never prints
# their values, skips symlinks and .git internals, reads .git/config, and
# exits 0 (clean) / 1 (found) / 125 (error).
. "$(dirname "$0")/../lib/libtest.sh"

P=$T/project
mkdir -p "$P/src" "$P/config" "$P/.git/objects/ab" "$P/docs"
AWS_ID=AKIAOXYIMCFIP6NZB353
GH=ghp_rcBqyt1T5AlQzhk7Q2bmXkthaYWyv1kKB5oi
URLPW=q84Zm9hacCT1nuub
DBPW='Tr0ub4dor9xQz!'
printf 'import os\n\nAWS_KEY = "%s"\n' "$AWS_ID" >"$P/src/settings.py"
printf 'services:\n  db:\n    password: "%s"\n' "$DBPW" >"$P/config/app.yml"
printf '[remote "origin"]\n\turl = https://bob:%s@git.acme-corp.io/r.git\n' "$URLPW" >"$P/.git/config"
printf '%s\n' "$GH" >"$P/.git/objects/ab/cdef"                    # compressed objects: not read
printf 'token = "%s"\n' "$GH" >"$T/outside.txt"
ln -s "$T/outside.txt" "$P/docs/link.txt"                           # never followed
printf 'password = "${DB_PASSWORD}"\nSee https://git.example.com/r.git\n' >"$P/docs/README.md"

set +e
out=$(cd "$P" && "$VR" scan 2>"$T/err"); rc=$?
set -e
echo "$out"
vr_check "exit 1 when something is found" [ "$rc" = 1 ]
vr_check "AWS key id reported at line 3 col 12" grep -qx './src/settings.py:3:12: aws-access-key-id AWS access key id (20 bytes)' <<<"$out"
vr_check "YAML password reported" grep -q '^./config/app.yml:3:16: generic-secret-assignment .* (14 bytes)$' <<<"$out"
vr_check ".git/config URL password reported" grep -q '^./.git/config:2:20: url-credentials .* (16 bytes)$' <<<"$out"
vr_check "exactly three findings (no symlink, no .git/objects, no placeholder)" [ "$(wc -l <<<"$out")" = 3 ]
# The check below means something only because the values are in the files.
vr_check "the planted values are really in the files" grep -rqF "$AWS_ID" "$P/src"
for secret in "$AWS_ID" "$GH" "$URLPW" "$DBPW"; do
	vr_check_not "value ${secret:0:4}… never printed" grep -qF -- "$secret" <<<"$out$(cat "$T/err")"
done

set +e
json=$("$VR" scan --json "$P/src" "$P/config"); rc=$?
set -e
vr_check "--json exits 1 too" [ "$rc" = 1 ]
if command -v python3 >/dev/null; then
	vr_check "--json lines are JSON with rule and range" python3 -c '
import json, sys
rows = [json.loads(l) for l in sys.stdin.read().splitlines()]
assert [r["rule"] for r in rows] == ["aws-access-key-id", "generic-secret-assignment"], rows
assert rows[0]["offset"] == 22 and rows[0]["length"] == 20 and rows[0]["line"] == 3, rows
assert rows[0]["path"].endswith("/src/settings.py"), rows
' <<<"$json"
else
	vr_check "--json names the rule" grep -q '"rule":"aws-access-key-id"' <<<"$json"
fi

# Explicit paths: a file, and a symlink given on the command line is followed.
set +e
"$VR" scan "$P/docs" >/dev/null; rc_docs=$?
"$VR" scan "$P/docs/link.txt" >/dev/null; rc_link=$?
"$VR" scan "$P/docs/README.md" >/dev/null; rc_clean=$?
"$VR" scan "$P/src" "$T/does-not-exist" >"$T/o" 2>"$T/e"; rc_missing=$?
set -e
vr_check "a symlink inside a directory is not followed (exit 0)" [ "$rc_docs" = 0 ]
vr_check "a symlink named on the command line is followed (exit 1)" [ "$rc_link" = 1 ]
vr_check "placeholders and plain URLs are no finding (exit 0)" [ "$rc_clean" = 0 ]
vr_check "a missing path is an error (exit 125)" [ "$rc_missing" = 125 ]
vr_check "... and the other paths are still scanned" grep -q aws-access-key-id "$T/o"
vr_check "... and the error names the path" grep -q does-not-exist "$T/e"

# The user's config drops findings: a rule turned off, a path+rule
# allow-listed (relative to the project); --all shows them again.
export XDG_CONFIG_HOME=$T/cfg
mkdir -p "$XDG_CONFIG_HOME/vault-run"
printf '[view]\nscan-disable = url-credentials\nscan-allow = src/settings.py:aws-access-key-id; config/:jwt\n' \
	>"$XDG_CONFIG_HOME/vault-run/config"
set +e
out=$(cd "$P" && "$VR" scan 2>"$T/err"); rc=$?
set -e
vr_check "with the filter: only the YAML password is left" [ "$out" = './config/app.yml:3:16: generic-secret-assignment high-entropy value assigned to a password/secret/token/key (14 bytes)' ]
vr_check "... exit 1 still" [ "$rc" = 1 ]
vr_check "... and a note says two were dropped" grep -q '2 findings not shown.*--all shows them' "$T/err"
out=$("$VR" scan --project "$P" "$P/src/settings.py" || true)
vr_check "an explicit PATH is matched relative to the project" [ -z "$out" ]
out=$(cd "$P" && "$VR" scan --all || true)
vr_check "--all shows every finding" [ "$(wc -l <<<"$out")" = 3 ]
printf '[view]\nscan-allow = src/settings.py\n' >"$XDG_CONFIG_HOME/vault-run/config"
set +e
(cd "$P" && "$VR" scan) >/dev/null 2>"$T/err"; rc=$?
set -e
vr_check "a bad scan-allow entry is an error (125)" [ "$rc" = 125 ]
vr_check "... naming FILE:LINE" grep -q "config:2: scan-allow entry 'src/settings.py'; expected PATTERN:RULE" "$T/err"
rm -f "$XDG_CONFIG_HOME/vault-run/config"

vr_done
