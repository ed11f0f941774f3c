#!/usr/bin/env bash
# A project that is a linked git worktree: its .git is a file naming a git
# directory in another repository. Inside, git works (status, commit), the
# common git directory is reachable through a view of its own, and what the
# host's git later runs or obeys there (hooks/, config) stays read-only.
. "$(dirname "$0")/../lib/libtest.sh"
. "$(dirname "$0")/../lib/sandbox-lib.sh"
vr_require_sandbox
vr_require_cmd git

R="$T/repo" W="$T/wt"
vr_make_demo "$R"
git -C "$R" worktree add -q "$W" 2>/dev/null
common=$(cd "$R/.git" && pwd -P)
vr_check "control: the worktree's .git is a file" test -f "$W/.git"
before=$(git -C "$R" rev-list --count --all)

out=$("$VR" --project "$W" --profile none --quiet -- sh -c '
	git -c safe.directory="*" status --short >/dev/null && echo STATUS-OK
	echo change >>README.md
	git -c safe.directory="*" -c user.name=a -c user.email=a@e commit -qam inside && echo COMMIT-OK
	hooks=$(git rev-parse --git-common-dir)/hooks
	echo "echo planted" >"$hooks/post-checkout" 2>/dev/null && echo HOOK-WRITTEN
	echo "[core] hooksPath = /tmp" >>"$(git rev-parse --git-common-dir)/config" 2>/dev/null && echo CONFIG-WRITTEN
	cat .env 2>/dev/null && echo ENV-READ
	true' 2>"$T/err") || true
vr_check "git status works in the worktree" grep -q STATUS-OK <<<"$out"
vr_check "git commit works in the worktree" grep -q COMMIT-OK <<<"$out"
vr_check "the commit reached the host's repository" test "$(git -C "$R" rev-list --count --all)" -gt "$before"
vr_check_not "hooks of the common git dir are read-only" grep -q HOOK-WRITTEN <<<"$out"
vr_check_not "no hook planted on the host" test -e "$common/hooks/post-checkout"
vr_check_not "the common git config is read-only" grep -q CONFIG-WRITTEN <<<"$out"
vr_check_not "the host's git config is unchanged" grep -q hooksPath "$common/config"
vr_check_not "the worktree's .env stays hidden" grep -q ENV-READ <<<"$out"
[ "$vr_failures" = 0 ] || { echo "--- out"; echo "$out"; echo "--- err"; cat "$T/err"; }
vr_done
