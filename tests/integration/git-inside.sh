#!/usr/bin/env bash
# git as agents use it, inside the sandbox, under the rules for git's own
# names (issue 16 route 2): `git worktree add` (its .git file is checked
# when written, before git has written commondir), then work in the new
# worktree; `git init`, `git clone` of a host repository and `git
# submodule add` (its .git file is written before the submodule's git
# directory exists: clone --separate-git-dir). Each must work, and what git
# made must be what the host's git reads back.
#
# init, clone and submodule add also go through the config gate of issue 17
# (item 5): .git/config is written by the daemon, and .git/hooks holds only
# *.sample files. Clones come from a host repository through an ssh
# stand-in (the gate refuses a local path as a remote URL).
. "$(dirname "$0")/../lib/libtest.sh"
. "$(dirname "$0")/../lib/sandbox-lib.sh"
vr_require_sandbox
vr_require_cmd git
S="$T/src" Q="$T/repo" P="$T/project"
git init -q "$S"
echo hello >"$S/README"
git -C "$S" add README
git -C "$S" -c user.name=t -c user.email=t@e commit -qm init
git clone -q "$S" "$Q"
mkdir -p "$P"
g='git -c safe.directory=* -c user.name=a -c user.email=a@e -c protocol.file.allow=always'

# Control: on the host all of it works (and is what the checks expect).
cp -a "$Q" "$T/plain"
(cd "$T/plain" && $g worktree add -q wt && $g -C wt commit -q --allow-empty -m w) >/dev/null 2>&1
vr_check "control: git worktree add works on a plain directory" test -f "$T/plain/wt/.git"

out=$("$VR" --project "$Q" --profile none --ro-bind "$S" "$S" -- sh -c '
	g=$1
	$g worktree add -q wt 2>&1 && echo "worktree-add ok"
	$g -C wt status --short >/dev/null && echo "worktree-status ok"
	echo change >>wt/README && $g -C wt commit -qam inside && echo "worktree-commit ok"
	true' sh "$g" 2>&1)
echo "$out"
vr_check "git worktree add works inside" grep -qx "worktree-add ok" <<<"$out"
vr_check "git status works in the new worktree" grep -qx "worktree-status ok" <<<"$out"
vr_check "git commit works in the new worktree" grep -qx "worktree-commit ok" <<<"$out"
vr_check "the host's git sees the worktree" grep -q "$Q/wt " <(git -C "$Q" -c safe.directory='*' worktree list)
vr_check "the host's git reads the commit made in it" \
	test "$(git -C "$Q/wt" -c safe.directory='*' log -1 --format=%s)" = inside

# A repository on the host reached the way a remote is: the config gate
# refuses a local path or file:// as a remote URL (git would run its
# upload-pack on any path), so an ssh URL whose "ssh" runs the command here.
mkdir -p "$T/tools"
printf '#!/bin/sh\nshift\nexec sh -c "$*"\n' >"$T/tools/fake-ssh"
chmod +x "$T/tools/fake-ssh"
out=$("$VR" --project "$P" --profile none --ro-bind "$S" "$S" --ro-bind "$T/tools" "$T/tools" -- sh -c '
	g=$1 src=$2
	cd "$3" || exit 1
	export GIT_SSH_COMMAND="$4/fake-ssh" GIT_SSH_VARIANT=simple
	# The clone runs upload-pack for a repository of another uid (root'"'"'s
	# $S as uid 65534): it reads safe.directory from the global config.
	git config --global --add safe.directory "*"
	$g init -q a 2>&1 && echo "init ok"
	[ "$(git -C a config core.symlinks)" = false ] && echo "init found no symlinks"
	$g clone -q "ssh://stand-in$src" b 2>&1 && echo "clone ok"
	cd a && $g commit -q --allow-empty -m base 2>&1 &&
		$g submodule add -q "ssh://stand-in$src" sub 2>&1 && $g commit -qm sub 2>&1 && echo "submodule-add ok"
	true' sh "$g" "$S" "$P" "$T/tools" 2>&1)
echo "$out"
vr_check "git init works inside" grep -qx "init ok" <<<"$out"
vr_check_not "git init saw the symlinks it probes for (core.symlinks)" grep -q "init found no symlinks" <<<"$out"
vr_check "git clone (of a host repository, over ssh) works inside" grep -qx "clone ok" <<<"$out"
vr_check "git submodule add works inside" grep -qx "submodule-add ok" <<<"$out"
vr_check "the submodule's .git names .git/modules/sub" grep -q '^gitdir: .*\.git/modules/sub$' "$P/a/sub/.git"
vr_check "the host's git reads the submodule" \
	test "$(git -C "$P/a/sub" -c safe.directory='*' log -1 --format=%s)" = init
vr_done
