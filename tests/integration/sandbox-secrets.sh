#!/usr/bin/env bash
# Secrets at the start of a run (issue 8, docs/scanning.md): the git history
# warning (a hidden file tracked now or once: one warning, cached, shown with
# --quiet, silenced by --hide .git, reported by doctor --project; a tracked
# file whose content the view masks, in clear in git; nothing
# for a clean repository, a non-repository or without git; git runs with
# the repository's hooks/fsmonitor/signature programs disabled) and the
# content scan settings of a run (--scan, [view] scan-disable / scan-allow
# from the user's config; refused in a project's .vault-run).
. "$(dirname "$0")/../lib/libtest.sh"
. "$(dirname "$0")/../lib/sandbox-lib.sh"
vr_require_cmd git
vr_require_sandbox

export XDG_CONFIG_HOME="$T/cfg"
mkdir -p "$XDG_CONFIG_HOME/vault-run"
G=(git -c user.name=t -c user.email=t@e -c init.defaultBranch=main)
commit() { "${G[@]}" -C "$1" add -A . && "${G[@]}" -C "$1" commit -qm "${2:-c}"; }
warnings() { grep -c "warning: the project's git repository holds" "$1" || true; }

# --- a repository whose history once tracked .env ----------------------------
H="$T/history"
mkdir -p "$H/src"
"${G[@]}" init -q "$H"
echo 'print(1)' >"$H/src/main.py"
echo 'API_TOKEN=from-history' >"$H/.env"
commit "$H" "with .env"
"${G[@]}" -C "$H" rm -q --cached .env
echo '.env' >"$H/.gitignore"
commit "$H" "untrack .env"
vr_check "sanity: .env is no longer tracked" test -z "$(git -C "$H" ls-files .env)"
vr_check "sanity: ... but git show still has it" sh -c "git -C '$H' show HEAD~1:.env | grep -q from-history"

vr_expect_status 0 "a run in the repository" sh -c "'$VR' --project '$H' -- true 2>'$T/h1.err'"
cat "$T/h1.err"
vr_check "one history warning" test "$(warnings "$T/h1.err")" = 1
vr_check "it names .env" grep -q "holds 1 file the view hides.*: \.env; fix:" "$T/h1.err"
vr_check "it names the fix" grep -q "git filter-repo --invert-paths --path '.env'.*--hide .git" "$T/h1.err"
vr_check "the verdict is cached in the state directory" sh -c "ls '$XDG_STATE_HOME'/vault-run/*/git-history"
vr_expect_status 0 "a second run (cached verdict)" sh -c "'$VR' --quiet --project '$H' -- true 2>'$T/h2.err'"
vr_check "the cached verdict warns the same, --quiet or not" test "$(warnings "$T/h2.err")" = 1
vr_check "the cached warning names .env" grep -q ': \.env; fix:' "$T/h2.err"
"$VR" --hide .git --project "$H" -- true 2>"$T/h3.err"
vr_check "--hide .git: no warning" test "$(warnings "$T/h3.err")" = 0
vr_check "--dry-run warns too" sh -c "'$VR' --dry-run --project '$H' -- true 2>&1 >/dev/null | grep -q 'holds 1 file'"

rc=0; "$VR" doctor --project "$H" >"$T/doc.out" 2>&1 || rc=$?
cat "$T/doc.out"
if grep -q '^FAIL' <(grep -v 'git history' "$T/doc.out"); then
	vr_check "doctor --project: the git history line" grep -q 'FAIL  git history: .*: \.env; fix:' "$T/doc.out"
else
	vr_check "doctor --project: exit 1 for a history leak" test "$rc" = 1
	vr_check "doctor --project: the same message" grep -q 'FAIL  git history: .*: \.env; fix:' "$T/doc.out"
fi

# --- a new commit changes the refs: the cache is not stale ------------------
for n in 1 2 3 4 5 6; do echo k >"$H/key$n.pem"; done
echo 'x: 1' >"$H/secrets.yaml"
commit "$H" "more secrets"
"$VR" --project "$H" -- true 2>"$T/h4.err"
vr_check "after a commit: the new paths are found" grep -q 'holds 8 files the view hides' "$T/h4.err"
vr_check "at most five are named, then 'and N more'" grep -q ': \.env, key1\.pem, key2\.pem, key3\.pem, key4\.pem and 3 more; fix:' "$T/h4.err"

# --- the index: staged, never committed ------------------------------------
I="$T/index"
mkdir -p "$I"
"${G[@]}" init -q "$I"
echo 'a' >"$I/README"
commit "$I"
echo 'fake key' >"$I/id_rsa"
git -C "$I" add id_rsa
"$VR" --project "$I" -- true 2>"$T/i.err"
vr_check "a staged hidden file is reported" grep -q 'holds 1 file the view hides.*: id_rsa; fix:' "$T/i.err"

# --- a clean repository, a non-repository -----------------------------------
C="$T/clean"
mkdir -p "$C"
"${G[@]}" init -q "$C"
echo 'ok' >"$C/README"
echo '.env' >"$C/.gitignore"
commit "$C"
echo 'API_TOKEN=never-tracked' >"$C/.env"
"$VR" --project "$C" -- true 2>"$T/c.err"
vr_check "clean repository (ignored .env): no warning" test "$(warnings "$T/c.err")" = 0
rc=0; "$VR" doctor --project "$C" >"$T/cdoc.out" 2>&1 || rc=$?
vr_check "doctor --project on a clean repository: ok line" grep -q '^ok    git history' "$T/cdoc.out"
N="$T/plain"
mkdir -p "$N"
echo 'SECRET=x' >"$N/.env"
vr_expect_status 0 "a non-repository" sh -c "'$VR' --project '$N' -- true 2>'$T/n.err'"
vr_check "a non-repository: nothing said" test ! -s "$T/n.err" -o "$(warnings "$T/n.err")" = 0
rm -rf "$XDG_STATE_HOME"/vault-run/history-*/git-history
vr_expect_status 0 "without a git binary (PATH without git)" \
	sh -c "PATH=/nonexistent '$VR' --project '$H' -- /bin/sh -c 'exit 0' 2>'$T/nogit.err'"
vr_check "without git: silently nothing" test "$(warnings "$T/nogit.err")" = 0

# --- tracked files whose content the view masks -----------------------------
# The view masks the AWS key in config/settings.py, but git keeps the
# committed version in clear: the warning names it "(masked)". The content
# check never delays COMMAND: it may finish after COMMAND started, and then
# the next run names the file (its verdict is cached).
M="$T/masked"
mkdir -p "$M/config"
"${G[@]}" init -q "$M"
AWS_M="AKIA""MASKEDQWERTY1234"
printf 'DEBUG = False\nAWS_ACCESS_KEY_ID = "%s"\n' "$AWS_M" >"$M/config/settings.py"
echo 'plain text' >"$M/README"
commit "$M"
content_known() { # waits (at most 20 s) for a run to leave the content verdict of M
	local i
	for i in $(seq 200); do
		ls "$XDG_STATE_HOME"/vault-run/masked-*/git-content >/dev/null 2>&1 && return 0
		sleep 0.1
	done
	return 1
}
"$VR" --quiet --project "$M" -- sleep 60 2>/dev/null &
bg=$!
vr_check "a run leaves the content verdict while COMMAND runs" content_known
kill -TERM "$bg"; wait "$bg" 2>/dev/null || true
"$VR" --project "$M" -- true 2>"$T/m1.err"
cat "$T/m1.err"
vr_check "the next run names the tracked file the view masks" \
	grep -q "holds 1 tracked file whose secrets the view masks but git keeps in clear.*: config/settings\.py (masked); fix:" "$T/m1.err"
vr_check "... and not the clean one" sh -c "! grep -q README '$T/m1.err'"
"$VR" --quiet --project "$M" -- cat config/settings.py >"$T/m-cat" 2>&1 || true
"$VR" --quiet --project "$M" -- git -c safe.directory='*' show HEAD:config/settings.py >"$T/m-show" 2>&1 || true
vr_check "control: inside, the file is masked..." sh -c "grep -q '^AWS_ACCESS_KEY_ID' '$T/m-cat' && ! grep -qF '$AWS_M' '$T/m-cat'"
vr_check "... and git show prints it in clear (what the warning is about)" grep -qF "$AWS_M" "$T/m-show"
rc=0; "$VR" doctor --project "$M" >"$T/mdoc.out" 2>&1 || rc=$?
vr_check "doctor --project names it and exits 1" sh -c "test $rc = 1 && grep -q 'FAIL  git history: .*config/settings\.py (masked)' '$T/mdoc.out'"
"$VR" --scan off --project "$M" -- true 2>"$T/m2.err"
vr_check "--scan off: nothing masked, nothing said" test "$(warnings "$T/m2.err")" = 0
printf '[view]\nscan-allow = config/settings.py:aws-access-key-id\n' >"$XDG_CONFIG_HOME/vault-run/config"
rc=0; "$VR" doctor --project "$M" >"$T/mdoc2.out" 2>&1 || rc=$?
vr_check "an allow-listed path+rule is not named" grep -q '^ok    git history' "$T/mdoc2.out"
rm -f "$XDG_CONFIG_HOME/vault-run/config"
"${G[@]}" -C "$M" rm -q config/settings.py
commit "$M" "drop settings"
rc=0; "$VR" doctor --project "$M" >"$T/mdoc3.out" 2>&1 || rc=$?
vr_check "once no longer tracked, not named (the history is git log -p's)" grep -q '^ok    git history' "$T/mdoc3.out"

# --- host git must not run what the repository configures -------------------
E="$T/evil"
mkdir -p "$E"
"${G[@]}" init -q "$E"
echo 'SECRET=1' >"$E/.env"
commit "$E"
printf '#!/bin/sh\ntouch %s/ran-$1\nexit 1\n' "$T" >"$T/trap.sh"
chmod +x "$T/trap.sh"
git -C "$E" config core.fsmonitor "$T/trap.sh fsmonitor"
git -C "$E" config core.hooksPath "$T/hooks"
git -C "$E" config log.showSignature true
git -C "$E" config gpg.program "$T/trap.sh gpg"
git -C "$E" config core.pager "$T/trap.sh pager"
mkdir -p "$T/hooks"
for h in post-index-change reference-transaction post-checkout; do
	printf '#!/bin/sh\ntouch %s/ran-hook\n' "$T" >"$T/hooks/$h"
	chmod +x "$T/hooks/$h"
done
# A filter driver for every file: the content check reads blobs, which
# `cat-file --filters` would pass through it.
git -C "$E" config filter.trap.smudge "$T/trap.sh smudge"
git -C "$E" config filter.trap.textconv "$T/trap.sh textconv"
git -C "$E" config diff.trap.textconv "$T/trap.sh textconv"
printf '* filter=trap diff=trap\n' >"$E/.gitattributes"
echo 'x = 1' >"$E/app.py"
"${G[@]}" -C "$E" -c filter.trap.clean=cat add -A . && "${G[@]}" -C "$E" commit -qm attrs --no-verify
# Sanity: the trap works when git is run plainly.
git -C "$E" status >/dev/null 2>&1 || true
vr_check "sanity: plain git status runs the repository's fsmonitor" test -e "$T/ran-fsmonitor"
git -C "$E" cat-file --filters HEAD:app.py >/dev/null 2>&1 || true
vr_check "sanity: plain cat-file --filters runs its filter driver" test -e "$T/ran-smudge"
rm -f "$T"/ran-*
"$VR" --project "$E" -- true 2>"$T/e.err"
vr_check "the history check still works there" grep -q ': \.env; fix:' "$T/e.err"
"$VR" doctor --project "$E" >/dev/null 2>&1 || true # waits for the content check
vr_check "no program of the repository's config ran" sh -c "! ls '$T'/ran-* 2>/dev/null"

# --- the content scan settings of a run --------------------------------------
S="$T/scan"
mkdir -p "$S/src"
# Built from pieces so this file itself holds no secret shape.
AWS="AKIA""QWERTYUIOPASDF12"
JWT="eyJhbGciOiJIUzI1NiJ9"".eyJzdWIiOiIxMjM0NTY3ODkwIn0"".dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U"
SLACK="xoxb-""123456789012-abcdefghijkl"
printf 'aws = "%s"\njwt = "%s"\nslack = "%s"\n' "$AWS" "$JWT" "$SLACK" >"$S/src/app.py"
printf 'jwt = "%s"\n' "$JWT" >"$S/src/other.py"
in_run() { "$VR" --quiet --project "$S" "$@" 2>>"$T/scan.err"; }
out=$(in_run -- cat "$S/src/app.py")
vr_check "sanity: the run printed the file" grep -q '^slack = ' <<<"$out"
vr_check_not "default: every secret masked" grep -qF -e "$AWS" -e "$JWT" -e "$SLACK" <<<"$out"
vr_check "--scan refuse: the file cannot be read" sh -c "! '$VR' --quiet --scan refuse --project '$S' -- cat '$S/src/app.py' >/dev/null 2>&1"
out=$(in_run --scan off -- cat "$S/src/app.py")
vr_check "--scan off: served as is" grep -qF "$AWS" <<<"$out"
vr_expect_status 125 "--scan with a bad value" "$VR" --scan loud --project "$S" -- true

cat >"$XDG_CONFIG_HOME/vault-run/config" <<EOF
[view]
scan-disable = slack-token
scan-allow = src/app.py:jwt
EOF
out=$(in_run -- cat "$S/src/app.py")
vr_check "user config: a disabled rule is not masked" grep -qF "$SLACK" <<<"$out"
vr_check "user config: an allow-listed path+rule is not masked" grep -qF "$JWT" <<<"$out"
vr_check "user config: other rules on the same file still are masked" grep -q '^aws = "\*\{20\}"$' <<<"$out"
out=$(in_run -- cat "$S/src/other.py")
vr_check "sanity: the run printed other.py" grep -q '^jwt = ' <<<"$out"
vr_check_not "user config: the same rule in another file is still masked" grep -qF "$JWT" <<<"$out"
printf '[view]\nscan = off\n' >"$XDG_CONFIG_HOME/vault-run/config"
out=$(in_run -- cat "$S/src/other.py")
vr_check "user config: scan = off reaches the run" grep -qF "$JWT" <<<"$out"
vr_check "... and --scan mask beats it" sh -c "! '$VR' --quiet --scan mask --project '$S' -- cat '$S/src/other.py' 2>/dev/null | grep -qF '$JWT'"
rm -f "$XDG_CONFIG_HOME/vault-run/config"

printf '[policy]\nhide = *.log\n\n[view]\nscan-allow = src/**:*\n' >"$S/.vault-run"
rc=0; "$VR" --project "$S" -- true 2>"$T/proj.err" || rc=$?
vr_check "a project .vault-run that allow-lists is refused (125)" test "$rc" = 125
vr_check "... naming the file and line" grep -q "$S/.vault-run:4: \[view\] is not allowed in a project config" "$T/proj.err"
rm -f "$S/.vault-run"

vr_done
