#!/usr/bin/env bash
# Invariant 9, issue 16 route 2: git's own files anywhere in the project,
# under any file type. The attack: src/.git = "gitdir: ../.evil" with
# .evil/config holding core.fsmonitor; shell prompts and editors run `git
# status` on entering src, so the host runs the agent's command. And hooks/
# of a git directory the agent makes (a bare repository, in either order:
# hooks first, then HEAD/objects/refs). Tried from inside, on a project that
# is a repository:
#  - src/.git written by create+write, by a write in two pieces, by
#    overwriting a valid one in place, by truncating a valid one, by an mmap
#    store, by appending; made as a symlink (relative, absolute), a FIFO, a
#    hard link, a rename target, a RENAME_EXCHANGE;
#  - a .git file naming a real worktree directory that names another tree;
#  - a symlink made inside .git (modules/x -> the evil git dir);
#  - hooks/ of a directory that is a git directory, made before or after.
# Expected: each refused (a denied audit record), the host files
# byte-identical, and host git in src runs nothing. Controls: on a plain
# copy the same .git makes host git run the fsmonitor command and the hook.
# A valid .git (a worktree's, a submodule's) is still accepted.
. "$(dirname "$0")/../lib/libtest.sh"
. "$(dirname "$0")/../lib/view-lib.sh"
. "$(dirname "$0")/../lib/sandbox-lib.sh"
vr_require_sandbox
vr_require_cmd git
[ -x /usr/bin/python3 ] || vr_skip "/usr/bin/python3 is missing (the mmap attack)"
P="$T/project"
view_make_demo "$P"
mkdir -p "$P/src"
M="$T/ran" # what the fsmonitor command and the hook write when they run

# The evil git directory the agent prepares first (plain files, allowed).
evil() {
	local d=$1
	mkdir -p "$d/objects" "$d/refs"
	echo "ref: refs/heads/main" >"$d/HEAD"
	printf '[core]\n\trepositoryformatversion = 0\n\tfsmonitor = "echo fsmonitor >>%s; false"\n' "$M" >"$d/config"
}

# Control: on a plain copy the attack works.
cp -a "$P" "$T/plain"
evil "$T/plain/.evil"
echo "gitdir: ../.evil" >"$T/plain/src/.git"
git -C "$T/plain/src" -c safe.directory='*' status >/dev/null 2>&1 || true
vr_check "control: host git in src runs the agent's fsmonitor command" grep -q fsmonitor "$M"
rm -f "$M"
mkdir -p "$T/plain/b.git/hooks" "$T/plain/w"
printf '#!/bin/sh\necho hook >>%s\n' "$M" >"$T/plain/b.git/hooks/pre-commit"
chmod +x "$T/plain/b.git/hooks/pre-commit"
mkdir -p "$T/plain/b.git/objects" "$T/plain/b.git/refs"
echo "ref: refs/heads/main" >"$T/plain/b.git/HEAD"
git --git-dir="$T/plain/b.git" --work-tree="$T/plain/w" -c user.name=a -c user.email=a@e \
	commit -q --allow-empty -m x >/dev/null 2>&1 || true
vr_check "control: host git runs the hook of a git directory made hooks-first" grep -q hook "$M"
rm -f "$M"

# A real worktree of the project, made on the host, for the valid case
# and for the borrowed-worktree attack.
git -C "$P" worktree add -q "$P/wt" 2>/dev/null
before=$(cd "$P" && find . -path ./wt -prune -o -type f -print0 | sort -z | xargs -0 sha256sum)

# Each level: "reads" serves files without OPEN (no-open mode: writes come
# without a file handle), "opens" with one.
for level in reads opens; do
rm -rf "$P/.evil" "$P/x" "$P/b.git" "$P/c.git" "$P/src/.git" "$P/tmp-git" "$P/.git/modules" "$T/audit.jsonl"
echo "--- audit level $level"
# "attack WHAT COMMAND": prints "WHAT ok" when COMMAND succeeds inside.
out=$("$VR" --project "$P" --profile none --audit "$T/audit.jsonl" --audit-level "$level" -- sh -c '
	cd "$1" || exit 1
	a() { w=$1; shift; if "$@" 2>/dev/null; then echo "$w ok"; else echo "$w refused"; fi; }
	mkdir -p .evil/objects .evil/refs && echo "ref: refs/heads/main" >.evil/HEAD
	a "create+write" sh -c "echo \"gitdir: ../.evil\" >src/.git"
	rm -f src/.git
	a "two pieces" sh -c "printf \"gitdir: \" >src/.git && printf \"../.evil\" >>src/.git"
	rm -f src/.git
	a "symlink rel" ln -s ../.evil src/.git
	a "symlink abs" ln -s "$1/.evil" src/.git
	a "fifo" mkfifo src/.git
	echo "gitdir: ../.evil" >tmp-git 2>/dev/null
	a "hard link" ln tmp-git src/.git
	a "rename onto" mv tmp-git src/.git
	mkdir -p x/.git
	a "rename a dir onto" mv x/.git src/.git
	a "exchange" /usr/bin/python3 -c "
import ctypes, os
libc = ctypes.CDLL(None, use_errno=True)
r = libc.renameat2(-100, b\"tmp-git\", -100, b\"x/.git\", 2)
raise SystemExit(0 if r == 0 else 1)"
	# A valid .git (the worktree made on the host names wt/.git only).
	a "borrowed worktree" sh -c "echo \"gitdir: $1/.git/worktrees/wt\" >src/.git"
	rm -f src/.git
	# A valid submodule-shaped .git, then each way of bending it.
	a "valid submodule .git" sh -c "echo \"gitdir: ../.git/modules/m\" >src/.git"
	a "overwrite in place" sh -c "printf \"gitdir: ../.evil/m1234567\" | dd of=src/.git conv=notrunc status=none"
	a "truncate" truncate -s 12 src/.git
	a "append" sh -c "echo \"/../../.evil\" >>src/.git"
	a "mmap" /usr/bin/python3 -c "
import mmap
with open(\"src/.git\", \"r+b\") as f:
    m = mmap.mmap(f.fileno(), 0)
    m[8:16] = b\"../.evil\"
    m.flush()"
	# The refused page is dropped: the view serves what the host has.
	for i in 1 2 3 4 5 6 7 8 9 10; do grep -q "\.\./\.evil" src/.git || break; sleep 0.1; done
	grep -q "\.\./\.evil" src/.git && echo "mmap bytes served"
	a "link of a .git" ln src/.git other-name
	mkdir -p .git/modules
	a "symlink inside .git" ln -s ../../.evil .git/modules/m
	a "symlink inside .git/worktrees" ln -s /tmp .git/worktrees/t
	# hooks of a git directory, both orders.
	mkdir -p b.git/objects b.git/refs && echo "ref: refs/heads/main" >b.git/HEAD
	a "hooks/ of a bare repository" mkdir b.git/hooks
	mkdir -p c.git/hooks && echo "echo x" >c.git/hooks/pre-commit
	a "HEAD after hooks" sh -c "echo \"ref: refs/heads/main\" >c.git/HEAD"
	mkdir -p c.git/objects
	a "refs after hooks" mkdir c.git/refs
	a "commondir after hooks" sh -c "echo ../.. >c.git/commondir"
	true' sh "$P" 2>"$T/err")
echo "$out"
cat "$T/err"
for w in "create+write" "two pieces" "symlink rel" "symlink abs" fifo "hard link" "rename onto" \
	"rename a dir onto" exchange "borrowed worktree" "overwrite in place" truncate append mmap \
	"link of a .git" "symlink inside .git" "symlink inside .git/worktrees" "hooks/ of a bare repository" \
	"HEAD after hooks" "refs after hooks" "commondir after hooks"; do
	vr_check "$level: $w is refused inside" grep -qx "$w refused" <<<"$out"
done
vr_check "$level: a valid submodule .git is accepted" grep -qx "valid submodule .git ok" <<<"$out"
vr_check_not "$level: the refused mmap bytes are not served inside" grep -q "mmap bytes served" <<<"$out"
vr_check "src/.git holds the valid content only" test "$(cat "$P/src/.git")" = "gitdir: ../.git/modules/m"
vr_check "no .git of another type was made" test ! -L "$P/src/.git" -a ! -p "$P/src/.git" -a ! -e "$P/other-name"
vr_check "no hook was made" test ! -e "$P/b.git/hooks" -a ! -e "$P/c.git/HEAD" -a ! -e "$P/c.git/refs" -a ! -e "$P/c.git/commondir"
vr_check "nothing was made inside .git/modules" test ! -e "$P/.git/modules/m" -a ! -L "$P/.git/modules/m"
vr_check "files there before are byte-identical" \
	test "$(cd "$P" && find . -path ./wt -prune -o -type f -print0 | sort -z | xargs -0 sha256sum | grep -Fxf <(echo "$before"))" = "$before"
evil "$P/.evil"
git -C "$P/src" -c safe.directory='*' status >/dev/null 2>&1 || true
vr_check "$level: host git in src runs nothing" test ! -e "$M"
rm -rf "$P/.evil"
for op in write setattr symlink mknod link rename mkdir create; do
	vr_check "$level: a refused $op is in the audit log" \
		grep -q '"op":"'"$op"'".*"result":"\(EACCES\|readonly\)".*"rule_source":"built-in:git"' "$T/audit.jsonl"
done
[ "$vr_failures" = 0 ] || grep -v '"result":"ok"' "$T/audit.jsonl" | cut -c1-300 | head -40
done
vr_done
