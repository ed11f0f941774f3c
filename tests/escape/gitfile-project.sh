#!/usr/bin/env bash
# Invariant 10 (one door), issue 16 route 1: the project's own .git file
# cannot make vault-run open a host directory. An earlier run (or a hostile
# repository) leaves PROJECT/.git = "gitdir: DIR"; before the fix the next
# run bound DIR read-write at its host path. Each shape is tried: any
# directory ("gitdir: $HOME"), a directory made to look like a repository,
# a fake worktrees/x whose gitdir names another tree, the right worktree
# reached through a symlink, a worktree whose commondir was redirected, and
# .git/modules of a repository that is not above the project. Expected for
# each: the run goes on, DIR is unreachable inside (no file of it can be
# read or written), the host files are byte-identical, one warning line
# names the .git and why, the audit log has a denied "gitfile" record, and
# not even the start's host-side git history check reads DIR.
# Control: on the host, the same .git does lead git (or a reader) to DIR.
. "$(dirname "$0")/../lib/libtest.sh"
. "$(dirname "$0")/../lib/sandbox-lib.sh"
vr_require_sandbox
vr_require_cmd git

OUT="$T/home" R="$T/repo" W="$T/wt"
mkdir -p "$OUT/.ssh"
echo "PRIVATE KEY" >"$OUT/.ssh/id_test"
echo "# rc" >"$OUT/.bashrc"
vr_make_demo "$R"
git -C "$R" worktree add -q "$W" 2>/dev/null
common=$(cd "$R/.git" && pwd -P)
sums() { find "$OUT" "$R/.git/worktrees" -type f -exec sha256sum {} + | sort; }

# attack NAME DIR: with PROJECT/.git already naming DIR, a run tries to
# read and write DIR's files; "reached" is printed for any success.
attack() {
	local what=$1 dir=$2 log="$T/audit-$RANDOM.jsonl" before st=0
	before=$(sums)
	out=$("$VR" --project "$P" --profile none --audit "$log" -- sh -c '
		d=$1
		cat "$d/.ssh/id_test" 2>/dev/null && echo "reached: read"
		{ echo planted >>"$d/.bashrc"; } 2>/dev/null && echo "reached: write"
		test -e "$d" && echo "reached: exists"
		git -c safe.directory="*" rev-parse --absolute-git-dir 2>/dev/null | grep -q . && echo "reached: git"
		true' sh "$dir" 2>"$T/err") || st=$?
	echo "$out"
	cat "$T/err"
	vr_check "$what: the run goes on" test "$st" = 0
	vr_check_not "$what: nothing of $dir is reachable inside" grep -q reached <<<"$out"
	vr_check "$what: the host files are byte-identical" test "$(sums)" = "$before"
	vr_check "$what: one warning names the .git and says it is refused" \
		test "$(grep -c '\.git names .* refused' "$T/err")" = 1
	vr_check "$what: the refusal is audited" \
		grep -q '"op":"gitfile","path":".git","result":"denied"' "$log"
	vr_check_not "$what: not even the host-side history check reads DIR" grep -q "git repository holds" "$T/err"
}

# A project without a .git directory, whose .git an earlier run wrote.
P="$T/project"
mkdir -p "$P"
echo hello >"$P/README.md"

# Control: on the host such a .git leads where it says.
echo "gitdir: $OUT" >"$P/.git"
vr_check "control: the .git names a readable key on the host" \
	grep -q "PRIVATE" "$(sed -n 's/^gitdir: //p' "$P/.git")/.ssh/id_test"
attack "gitdir: \$HOME" "$OUT"

# OUT dressed as a repository: git on the host would use it.
mkdir -p "$OUT/objects" "$OUT/refs"
echo "ref: refs/heads/main" >"$OUT/HEAD"
vr_check "control: git on the host takes DIR as the repository" \
	test "$(git -C "$P" -c safe.directory='*' rev-parse --absolute-git-dir 2>/dev/null)" = "$(cd "$OUT" && pwd -P)"
attack "a repository-shaped DIR" "$OUT"

# A fake linked worktree: OUT/worktrees/x exists and names another tree.
mkdir -p "$OUT/worktrees/x"
echo "$T/elsewhere/.git" >"$OUT/worktrees/x/gitdir"
echo "../.." >"$OUT/worktrees/x/commondir"
echo "ref: refs/heads/main" >"$OUT/worktrees/x/HEAD"
echo "gitdir: $OUT/worktrees/x" >"$P/.git"
vr_check "control: git on the host uses the fake worktree" \
	test "$(git -C "$P" -c safe.directory='*' rev-parse --git-common-dir 2>/dev/null)" = "$OUT"
attack "a worktrees/x that names another tree" "$OUT"

# The real worktree, its .git rewritten to reach the repository through a
# symlink inside the project.
ln -s "$common" "$W/lnk"
echo "gitdir: $W/lnk/worktrees/wt" >"$W/.git"
P=$W
vr_check "control: git on the host follows the symlink" \
	git -C "$W" -c safe.directory='*' rev-parse --git-dir >/dev/null
attack "a symlink on the path" "$common"
echo "gitdir: $common/worktrees/wt" >"$W/.git"
rm "$W/lnk"

# The real worktree, but its commondir redirected to OUT.
cp "$common/worktrees/wt/commondir" "$T/commondir.orig"
echo "$OUT" >"$common/worktrees/wt/commondir"
vr_check "control: git on the host takes OUT as the common dir" \
	test "$(git -C "$W" -c safe.directory='*' rev-parse --git-common-dir 2>/dev/null)" = "$OUT"
attack "a redirected commondir" "$OUT"
cp "$T/commondir.orig" "$common/worktrees/wt/commondir"

# .git/modules of a repository that is not above the project.
mkdir -p "$common/modules/sub/objects" "$common/modules/sub/refs"
echo "ref: refs/heads/main" >"$common/modules/sub/HEAD"
P="$T/side"
mkdir -p "$P"
echo "gitdir: $common/modules/sub" >"$P/.git"
vr_check "control: git on the host takes the other repository's module" \
	git -C "$P" -c safe.directory='*' rev-parse --git-dir >/dev/null
attack ".git/modules of a repository not above it" "$common"

# The genuine worktree is still accepted (sandbox-worktree.sh checks git
# works there); here: the notice names what was opened, and the log too.
out=$("$VR" --project "$W" --profile none --audit "$T/ok.jsonl" -- true 2>&1)
echo "$out"
vr_check "the genuine worktree: one notice names the opened git directory" \
	grep -q "linked worktree of $common: that git directory is opened" <<<"$out"
vr_check "the genuine worktree: its history is checked (control of the check above)" \
	grep -q "git repository holds" <<<"$out"
vr_check "the genuine worktree: the log says what was opened and why" \
	grep -q '"op":"gitfile","path":".git","result":"ok","target":"'"$common"'","reason":"linked worktree"' "$T/ok.jsonl"
vr_done
