#!/usr/bin/env bash
# The change journal and `vault-run undo`: a destructive session through the
# view is undone byte for byte; a symlink the agent planted cannot redirect a
# restore; host edits made after the run are not overwritten without --force.
. "$(dirname "$0")/../lib/libtest.sh"
. "$(dirname "$0")/../lib/view-lib.sh"
vr_require_fuse
vr_require_cmd sha256sum

P="$T/project" M="$T/view"
view_make_demo "$P"
# Something to destroy: a tree with a symlink, odd modes and nesting.
mkdir -p "$P/tree/b/c" "$P/lib/y" "$P/src2"
printf 'a\n' >"$P/tree/a.txt"
head -c 300000 /dev/urandom >"$P/tree/b/blob.bin"
printf 'deep\n' >"$P/tree/b/c/deep.txt"
ln -s ../a.txt "$P/tree/b/link"
chmod 0750 "$P/tree/b"
chmod 0640 "$P/tree/a.txt"
printf 'x\n' >"$P/lib/x.txt"
printf 'z\n' >"$P/lib/y/z.txt"
printf '#!/bin/sh\n' >"$P/run.sh"
chmod 0755 "$P/run.sh"
printf 'old a\n' >"$P/a.txt"
printf 'old b\n' >"$P/b.txt"
printf 'inside\n' >"$P/src2/a.txt"
touch -d '2020-01-02 03:04:05' "$P/README.md" "$P/src/main.c" "$P/tree/a.txt"

# snap DIR — names, types, modes, sizes, mtimes of files, contents, link targets.
snap() {
	(cd "$1" && find . -path ./.git -prune -o -printf '%p %y %m %s\n' | LC_ALL=C sort &&
	 find . -path ./.git -prune -o -type f -printf '%p %T@\n' | LC_ALL=C sort &&
	 find . -path ./.git -prune -o -type f -print0 | LC_ALL=C sort -z | xargs -0 sha256sum &&
	 find . -path ./.git -prune -o -type l -printf '%p -> %l\n' | LC_ALL=C sort)
}
snap "$P" >"$T/before"

J="$T/journal"
vr_mount "$P" "$M" --journal "$J" --audit "$T/audit.jsonl" || vr_skip "cannot mount a FUSE view here"
echo 'overwritten' >"$M/README.md"
truncate -s 3 "$M/src/main.c"
echo 'more' >>"$M/src/main.c"
rm -rf "$M/tree"
mv "$M/lib" "$M/lib2"
echo 'changed in a moved dir' >"$M/lib2/x.txt"
mv -f "$M/a.txt" "$M/b.txt"
echo new >"$M/new1"
mkdir -p "$M/newdir/sub"
echo f >"$M/newdir/sub/f"
ln -s new1 "$M/newlink"
chmod 0600 "$M/run.sh"
vr_unmount

snap "$P" >"$T/after"
vr_check_not "the session really was destructive" cmp -s "$T/before" "$T/after"
"$VR" changes "$J" >"$T/changes" 2>&1
vr_check "changes: modified" grep -qx 'M  README.md' "$T/changes"
vr_check "changes: deleted tree" grep -qx 'D  tree/' "$T/changes"
vr_check "changes: renamed" grep -qx 'R  lib -> lib2' "$T/changes"
vr_check "changes: created" grep -qx 'A  new1' "$T/changes"
vr_check "changes: chmod" grep -q '^m  run.sh (mode was 0755)' "$T/changes"
"$VR" changes --diff "$J" README.md >"$T/diff" 2>&1
vr_check "changes --diff shows the old text" grep -q '^+overwritten' "$T/diff"

st=0; "$VR" undo "$J" >"$T/undo.out" 2>&1 || st=$?
vr_check "undo succeeds" test "$st" = 0
vr_check "undo says what it did" grep -q '^restored tree/b/blob.bin' "$T/undo.out"
snap "$P" >"$T/undone"
if ! vr_check "the tree is byte-identical to before the run" cmp -s "$T/before" "$T/undone"; then
	diff "$T/before" "$T/undone" | head -20; cat "$T/undo.out"
fi
# undo is undoable: its own journal brings the run's result back.
UJ=$(sed -n 's/^undo journal: \(.*\) (vault-run undo .*/\1/p' "$T/undo.out")
vr_check "undo names its own journal" test -f "$UJ/manifest.jsonl"
st=0; "$VR" undo "$UJ" >"$T/reundo.out" 2>&1 || st=$?
vr_check "undoing the undo succeeds" test "$st" = 0
snap "$P" >"$T/redone"
if ! vr_check "undoing the undo gives back the run's result" cmp -s "$T/after" "$T/redone"; then
	diff "$T/after" "$T/redone" | head -20; cat "$T/reundo.out"
fi
# and once more, to leave the project as before the run.
"$VR" undo --force "$J" >"$T/undo7.out" 2>&1 || cat "$T/undo7.out"
snap "$P" >"$T/undone2"
vr_check "undo again restores the original" cmp -s "$T/before" "$T/undone2"

# --- a planted symlink cannot redirect a restore ---
C="$T/canary"
mkdir -p "$C"
printf 'canary\n' >"$C/a.txt"
J2="$T/journal2"
vr_mount "$P" "$M" --journal "$J2" || vr_fail "second mount"
rm -rf "$M/src2"
ln -s "$C" "$M/src2"
vr_unmount
# Without the protection a restore of src2/a.txt by path would land here:
vr_check "the planted link leads into the canary" test "$(cat "$P/src2/a.txt")" = canary
st=0; "$VR" undo "$J2" src2/a.txt >"$T/undo2.out" 2>&1 || st=$?
vr_check "undo of a path behind the planted link fails" test "$st" = 1
vr_check "it names the path" grep -q 'src2/a.txt' "$T/undo2.out"
vr_check "the canary is untouched" test "$(cat "$C/a.txt")" = canary
vr_check "nothing else lands in the canary" test "$(ls "$C")" = a.txt
st=0; "$VR" undo "$J2" >"$T/undo3.out" 2>&1 || st=$?
vr_check "a full undo removes the link first" test "$st" = 0
vr_check "src2 is a directory again" test -d "$P/src2" -a ! -L "$P/src2"
vr_check "with its file" test "$(cat "$P/src2/a.txt")" = inside
vr_check "the canary is still untouched" test "$(cat "$C/a.txt")" = canary

# --- host edits after the run are not overwritten without --force ---
J3="$T/journal3"
vr_mount "$P" "$M" --journal "$J3" --journal-max-size 100000 --audit "$T/audit3.jsonl" || vr_fail "third mount"
echo 'agent edit' >"$M/README.md"
echo 'agent edit' >"$M/Makefile"
echo 'big' >>"$M/b.txt"
rm -f "$M/src2/a.txt"
echo x >"$M/newfile"
head -c 200000 /dev/urandom >"$T/big" && cp "$T/big" "$P/bigfile"
echo y >>"$M/bigfile"
vr_unmount
echo 'my own edit after the run' >"$P/README.md"
"$VR" changes "$J3" >"$T/changes3" 2>&1
vr_check "changes shows what the cap skipped" grep -q '^!  bigfile (not kept for undo: cap)' "$T/changes3"
vr_check "the audit log notes the skip" grep -q '"op":"journal".*"bigfile".*skipped' "$T/audit3.jsonl"
vr_check "the audit log links a kept original" grep -q '"op":"journal","path":"Makefile".*"journal":"objects/' "$T/audit3.jsonl"
st=0; "$VR" undo "$J3" >"$T/undo4.out" 2>&1 || st=$?
vr_check "undo refuses a path changed after the run" test "$st" = 1
vr_check "one line names it" grep -q 'README.md: its size or modification time changed after the run' "$T/undo4.out"
vr_check "the host edit is kept" grep -qx 'my own edit after the run' "$P/README.md"
vr_check "nothing was undone" grep -qx 'agent edit' "$P/Makefile"
"$VR" undo --force "$J3" README.md Makefile src2 newfile >"$T/undo5.out" 2>&1 || cat "$T/undo5.out"
vr_check "--force restores" test "$(head -c 11 "$P/README.md")" != 'my own edit'
vr_check "Makefile restored" cmp -s "$P/Makefile" "$VR_SOURCE_DIR/examples/demo-project/Makefile"
vr_check "deleted file back" test "$(cat "$P/src2/a.txt")" = inside
vr_check "created file removed" test ! -e "$P/newfile"
vr_check "b.txt untouched by a path-limited undo" grep -qx big "$P/b.txt"

# --- kill -9 of the daemon: what reached the host is still undone ---
snap "$P" >"$T/before4"
J4="$T/journal4"
vr_mount "$P" "$T/view4" --journal "$J4" || vr_fail "fourth mount"
echo 'edit before the crash' >"$T/view4/README.md"
rm -f "$T/view4/b.txt"
mkdir "$T/view4/crashdir"
kill -KILL "$VR_MOUNT_PID"
wait "$VR_MOUNT_PID" 2>/dev/null || true
vr_check_not "the journal has no stop record" grep -q '"op":"stop"' "$J4/manifest.jsonl"
st=0; "$VR" undo "$J4" >"$T/undo6.out" 2>&1 || st=$?
vr_check "undo after kill -9 of the daemon succeeds" test "$st" = 0
vr_check "it says the run did not stop cleanly" grep -q 'did not stop cleanly' "$T/undo6.out"
snap "$P" >"$T/after4"
vr_check "every change that reached the host is undone" cmp -s "$T/before4" "$T/after4"

# --- kill -9 in the middle of journaling: the daemon dies while it copies
# a big file's original (the open for writing waits for that copy), so the
# write never reaches the host; undo still restores what did, and ignores
# the half-made object ---
head -c $((512 * 1024 * 1024)) /dev/zero >"$P/huge.bin"
snap "$P" >"$T/before5"
J5="$T/journal5"
vr_mount "$P" "$T/view5" --journal "$J5" || vr_fail "fifth mount"
echo 'edit before the crash' >"$T/view5/README.md"
dd if=/dev/urandom of="$T/view5/huge.bin" bs=1M count=1 conv=notrunc status=none 2>/dev/null &
writer=$!
mid=""
for _ in $(seq 20000); do
	for o in "$J5"/objects/*; do
		[ -f "$o" ] || continue
		sz=$(stat -c %s "$o" 2>/dev/null || echo 0)
		if [ "$sz" -gt 0 ] && [ "$sz" -lt $((512 * 1024 * 1024)) ]; then mid=$sz; fi
	done
	[ -n "$mid" ] && break
	kill -0 "$writer" 2>/dev/null || break
done
kill -KILL "$VR_MOUNT_PID"
wait "$VR_MOUNT_PID" 2>/dev/null || true
wait "$writer" 2>/dev/null || true
if [ -n "$mid" ]; then
	vr_pass "the daemon was killed with the copy half made ($mid bytes of 512 MiB)"
else
	echo "note: the copy ended before the poll saw it half made; the checks below still hold"
fi
st=0; "$VR" undo "$J5" >"$T/undo7.out" 2>&1 || st=$?
cat "$T/undo7.out"
vr_check "undo after a kill -9 mid-copy succeeds" test "$st" = 0
snap "$P" >"$T/after5"
vr_check "the project is as before the run (the big file never changed)" cmp -s "$T/before5" "$T/after5"
rm -f "$P/huge.bin"

# --- gc prunes old journals of the project, keeps recent ones and the logs ---
SD=$("$VR" audit dir --project "$P")
(umask 077 && mkdir -p "$SD") # a state dir as vault-run makes it: 0700 all the way
for id in old new; do
	mkdir -p "$SD/$id.journal/objects"
	echo '{}' >"$SD/$id.journal/manifest.jsonl"
	echo x >"$SD/$id.journal/objects/0"
	echo '{}' >"$SD/$id.jsonl"
done
touch -d '30 days ago' "$SD/old.journal/manifest.jsonl"
"$VR" gc --project "$P" >"$T/gc.out" 2>&1 || cat "$T/gc.out"
vr_check "gc deletes a journal older than 14 days" test ! -e "$SD/old.journal"
vr_check "gc keeps a recent journal" test -f "$SD/new.journal/objects/0"
vr_check "gc keeps the audit logs" test -f "$SD/old.jsonl"
view_done
