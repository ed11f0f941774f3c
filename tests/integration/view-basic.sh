#!/usr/bin/env bash
# Everyday work through the view: listing, reading, writing, an editor's
# atomic save, directories, links, modes, xattrs, and git.
. "$(dirname "$0")/../lib/libtest.sh"
. "$(dirname "$0")/../lib/view-lib.sh"
vr_require_fuse
vr_require_cmd git

P="$T/project" M="$T/view"
view_make_demo "$P"
vr_mount "$P" "$M" --audit "$T/audit.jsonl" || vr_skip "cannot mount a FUSE view here"

vr_check "ls lists the project" grep -qx README.md <(ls -a "$M")
vr_check "ls -la works" ls -la "$M" >/dev/null
vr_check "cat reads like the host" cmp "$M/README.md" "$P/README.md"
vr_check "files in subdirectories read" cmp "$M/src/main.c" "$P/src/main.c"

echo "hello" >"$M/new.txt"
vr_check "a new file lands on the host" grep -qx hello "$P/new.txt"
echo "more" >>"$M/new.txt"
vr_check "append" test "$(cat "$P/new.txt")" = "$(printf 'hello\nmore')"

# An editor's atomic save: write a temp file, fsync, rename over the original.
printf 'saved\n' >"$M/.README.md.swp"
sync "$M/.README.md.swp"
mv -f "$M/.README.md.swp" "$M/README.md"
vr_check "atomic save replaces the file" grep -qx saved "$P/README.md"
vr_check_not "the temp file is gone" test -e "$P/.README.md.swp"

mkdir -p "$M/a/b/c"
vr_check "mkdir -p" test -d "$P/a/b/c"
rmdir "$M/a/b/c"
vr_check "rmdir" test ! -e "$P/a/b/c"

ln -s ../README.md "$M/a/link"
vr_check "symlink stored as written" test "$(readlink "$P/a/link")" = ../README.md
vr_check "symlink resolves through the view" grep -qx saved "$M/a/link"
ln "$M/new.txt" "$M/a/hard"
vr_check "hard link" test "$(stat -c %h "$P/new.txt")" = 2

chmod 0600 "$M/new.txt"
vr_check "chmod" test "$(stat -c %a "$P/new.txt")" = 600
chmod 4755 "$M/new.txt" 2>/dev/null || true
vr_check_not "setuid is stripped" test -u "$P/new.txt"

truncate -s 3 "$M/new.txt"
vr_check "truncate" test "$(stat -c %s "$P/new.txt")" = 3
touch -d '2001-02-03 04:05:06 UTC' "$M/new.txt"
vr_check "utimes" test "$(stat -c %Y "$P/new.txt")" = 981173106

if command -v setfattr >/dev/null && setfattr -n user.t -v 1 "$P/README.md" 2>/dev/null; then
	setfattr -n user.view -v yes "$M/new.txt"
	vr_check "user xattr set" test "$(getfattr --only-values -n user.view "$P/new.txt" 2>/dev/null)" = yes
	vr_check "user xattr read back" test "$(getfattr --only-values -n user.view "$M/new.txt" 2>/dev/null)" = yes
	vr_check_not "trusted xattrs refused" setfattr -n trusted.x -v 1 "$M/new.txt" 2>/dev/null
fi
if command -v python3 >/dev/null; then
	vr_check_not "fifos refused (view-posix.sh)" python3 -c "import os; os.mkfifo('$M/fifo')" 2>/dev/null
	vr_check_not "device nodes refused" python3 -c "import os; os.mknod('$M/dev', 0o20600, os.makedev(1, 3))" 2>/dev/null
fi

mv "$M/a" "$M/a2"
vr_check "rename a directory" test -e "$P/a2/hard"
rm -r "$M/a2"
vr_check "rm -r" test ! -e "$P/a2"

# git inside the view (the agent's main tool). Ownership differs under the
# test variants; safe.directory keeps git from refusing.
g() { git -C "$M" -c safe.directory='*' -c user.name=t -c user.email=t@e "$@"; }
vr_check "git status works" g status --porcelain >/dev/null
g add new.txt README.md && g commit -qm "through the view" >"$T/git.out" 2>&1
vr_check "git commit through the view" test "$(git -C "$P" -c safe.directory='*' log --format=%s -1)" = "through the view"
vr_check "git sees .env as missing, the host keeps it" test -s "$P/.env"
vr_check "the pre-commit hook ran from the view" grep -q "hook ran" "$T/git.out"
vr_check "df/statfs" df "$M" >/dev/null

vr_unmount
vr_check "unmounted after SIGTERM" sh -c "! grep -q ' $M ' /proc/self/mountinfo"

# Mounted over the project itself (what the sandbox does): the daemon keeps
# the real directory through the fd it opened before mounting.
vr_mount "$P" "$P" || vr_fail "mount over the project"
vr_check_not "over the project: .env is hidden" test -e "$P/.env"
echo over >"$P/over.txt"
vr_unmount
vr_check "over the project: writes reached the real directory" grep -qx over "$P/over.txt"
vr_check "over the project: .env is back after unmount" test -s "$P/.env"
# --allow-other: another uid gets in, but only as far as the modes let it
# (default_permissions), although the daemon itself runs as root.
if vr_is_host_root && command -v setpriv >/dev/null; then
	chmod 0755 "$T" "$P"
	vr_mount "$P" "$M" --allow-other || vr_fail "mount with --allow-other"
	as_nobody() { setpriv --reuid=65534 --regid=65534 --clear-groups "$@"; }
	vr_check "another uid can read a 0644 file" as_nobody sh -c "cat '$M/README.md' >/dev/null"
	vr_check_not "another uid cannot write it" as_nobody sh -c "echo x >>'$M/README.md'" 2>/dev/null
	vr_check_not "another uid cannot see .env either" as_nobody test -e "$M/.env"
	vr_unmount
fi
view_done
