#!/usr/bin/env bash
# git as a developer uses it, inside the sandbox, through the config gate
# (DESIGN.md invariant 9, docs/policy.md "The git config gate"):
#  - git init in a project that has no repository: hooks/ gets git's
#    *.sample files and nothing else can be made there;
#  - git config user.email, git remote add (https and ssh URLs), git branch
#    -u, git push -u (over a stand-in ssh to a bare repository in the
#    project), git clone and git submodule add all land in the host's
#    config files;
#  - a refused key (core.fsmonitor) fails with git's own message, the host
#    file unchanged, the refusal audited with the key;
#  - a remote URL holding a token the scanner masks: the agent sees it
#    masked, and after `git config user.name` the host file still holds the
#    real token.
. "$(dirname "$0")/../lib/libtest.sh"
. "$(dirname "$0")/../lib/sandbox-lib.sh"
vr_require_sandbox
vr_require_cmd git

P="$T/project" A="$T/audit.jsonl"
mkdir -p "$P/tools"
echo "hello" >"$P/README.md"
git init -q --bare "$P/remote.git"
# ssh stand-in: `fake-ssh HOST COMMAND` runs COMMAND here.
printf '#!/bin/sh\nshift\nexec sh -c "$*"\n' >"$P/tools/fake-ssh"
chmod +x "$P/tools/fake-ssh"
# Ownership differs between the host and the sandbox in the @user and
# @unshare variants: git's safe.directory check is not what is tested.
safe='export GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=safe.directory GIT_CONFIG_VALUE_0="*"'

out=$("$VR" --project "$P" --profile none --quiet --audit "$A" -- sh -c "$safe"'
	cd "$1" || exit 1
	git init -q && echo INIT-OK
	test -f .git/hooks/pre-commit.sample && echo SAMPLES-OK
	{ echo "echo planted" >.git/hooks/pre-commit; } 2>/dev/null && echo HOOK-CREATED
	mv .git/hooks/pre-push.sample .git/hooks/pre-push 2>/dev/null && echo HOOK-RENAMED
	git config user.email agent@example.com && git config user.name Agent && echo EMAIL-OK
	git remote add origin "ssh://stand-in$1/remote.git" && echo REMOTE-OK
	git remote add web https://github.com/example/app.git && echo WEB-OK
	git commit -q --allow-empty -m first && echo COMMIT-OK
	main=$(git symbolic-ref --short HEAD)
	git checkout -q -b feat && git branch -q -u "$main" && echo TRACK-OK
	export GIT_SSH_COMMAND="$1/tools/fake-ssh" GIT_SSH_VARIANT=simple
	git push -q -u origin feat && echo PUSH-OK
	git clone -q -b feat "ssh://stand-in$1/remote.git" "$1/cloned" && echo CLONE-OK
	git submodule add -q -b feat "ssh://stand-in$1/remote.git" libs/sub 2>&1 && echo SUBMODULE-OK
	git config core.fsmonitor "touch $1/pwned" 2>"$1/fsmonitor.err" || echo FSMONITOR-REFUSED
	git status >/dev/null && echo STATUS-OK
	mkdir -p vendor/tool && printf "Host x\n" >vendor/tool/config.new && mv vendor/tool/config.new vendor/tool/config &&
		echo OTHER-CONFIG-OK
	rm -r vendor && echo OTHER-CONFIG-RM-OK
	true' sh "$P" 2>"$T/err") || true
echo "$out"
vr_check "git init works" grep -q INIT-OK <<<"$out"
vr_check "git init made the hooks/*.sample files" grep -q SAMPLES-OK <<<"$out"
vr_check_not "a hook cannot be created" grep -q HOOK-CREATED <<<"$out"
vr_check_not "a sample cannot be renamed into a hook" grep -q HOOK-RENAMED <<<"$out"
vr_check "no hook on the host" test ! -e "$P/.git/hooks/pre-commit" -a ! -e "$P/.git/hooks/pre-push"
vr_check "git config user.email works" grep -q EMAIL-OK <<<"$out"
vr_check "git remote add (ssh URL) works" grep -q REMOTE-OK <<<"$out"
vr_check "git remote add (https URL) works" grep -q WEB-OK <<<"$out"
vr_check "git commit works" grep -q COMMIT-OK <<<"$out"
vr_check "git branch -u works" grep -q TRACK-OK <<<"$out"
vr_check "git push -u works" grep -q PUSH-OK <<<"$out"
vr_check "the push reached the bare repository" git -C "$P/remote.git" rev-parse -q --verify refs/heads/feat
vr_check "git clone works" grep -q CLONE-OK <<<"$out"
vr_check "host: the clone's remote" test "$(git config --file "$P/cloned/.git/config" remote.origin.url)" = "ssh://stand-in$P/remote.git"
vr_check "git submodule add works" grep -q SUBMODULE-OK <<<"$out"
vr_check "host: the submodule's work tree (core.worktree)" \
	test "$(git config --file "$P/.git/modules/libs/sub/config" core.worktree)" = ../../../../libs/sub
vr_check "host: submodule.libs/sub.url" test "$(git config --file "$P/.git/config" submodule.libs/sub.url)" = "ssh://stand-in$P/remote.git"
cfg() { git config --file "$P/.git/config" "$@"; }
vr_check "host: user.email" test "$(cfg user.email)" = agent@example.com
vr_check "host: remote.web.url" test "$(cfg remote.web.url)" = https://github.com/example/app.git
vr_check "host: branch.feat tracks origin (push -u)" test "$(cfg branch.feat.remote)" = origin
vr_check "host: branch.feat.merge" test "$(cfg branch.feat.merge)" = refs/heads/feat
vr_check "host: core.filemode as git init found it" test "$(cfg core.filemode)" = true
vr_check "core.fsmonitor is refused" grep -q FSMONITOR-REFUSED <<<"$out"
vr_check "git says it could not write the config" grep -q 'could not write config file' "$P/fsmonitor.err"
vr_check_not "host: no core.fsmonitor" cfg core.fsmonitor
vr_check "git status still works" grep -q STATUS-OK <<<"$out"
vr_check "a config that is not git config can be saved by rename" grep -q OTHER-CONFIG-OK <<<"$out"
vr_check "... and removed" grep -q OTHER-CONFIG-RM-OK <<<"$out"
vr_check_not "the fsmonitor command never ran" test -e "$P/pwned"
vr_check "the refusal is audited with the key" \
	grep -q '"op":"rename","path":".git/config.lock","target":".git/config","result":"EACCES".*"key":"core.fsmonitor"' "$A"
vr_check "an accepted change is audited with its keys" grep -q '"gate":"gitconfig","keys":\["user.email"\]' "$A"
vr_check_not "no file of the gate is left behind" sh -c "ls -a '$P/.git' | grep -q vault-run-gate"
vr_check_not "no config.lock is left behind" test -e "$P/.git/config.lock"

# A remote whose URL holds a token the scanner masks.
token=ghp_aBcDeFgHiJkLmNoPqRsTuVwXyZ0123456789
glpat=glpat-xYz12AbC34dEf56GhI78
git config --file "$P/.git/config" remote.bot.url "https://bot:$token@github.com/example/app.git"
git config --file "$P/.git/config" remote.gl.url "https://bot:$glpat@gitlab.acme-corp.io/x.git"
cp "$P/.git/config" "$T/config.before"
out=$("$VR" --project "$P" --profile none --quiet -- sh -c "$safe"'
	cd "$1" || exit 1
	git config --get remote.bot.url
	git config --get remote.gl.url
	git config user.name "Agent Two" && echo NAME-OK
	true' sh "$P" 2>>"$T/err") || true
echo "$out"
vr_check "inside, the token is masked" grep -q 'https://bot:\*\{40\}@github.com' <<<"$out"
vr_check "git config user.name works in a file with a masked token" grep -q NAME-OK <<<"$out"
vr_check "host: user.name changed" test "$(cfg user.name)" = "Agent Two"
vr_check "host: the real token is still there" test "$(cfg remote.bot.url)" = "https://bot:$token@github.com/example/app.git"
vr_check "inside, the GitLab token is masked" grep -q 'https://bot:\*\{26\}@gitlab.acme-corp.io/x.git' <<<"$out"
vr_check "host: the real GitLab token is still there" test "$(cfg remote.gl.url)" = "https://bot:$glpat@gitlab.acme-corp.io/x.git"
vr_check "host: only user.name changed" \
	diff <(grep -v 'name = ' "$T/config.before") <(grep -v 'name = ' "$P/.git/config")
[ "$vr_failures" = 0 ] || { echo "--- err"; cat "$T/err"; }
vr_done
