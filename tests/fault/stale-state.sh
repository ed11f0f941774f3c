#!/usr/bin/env bash
# Stale state: what a killed run or a hostile hand leaves in vault-run's
# state directory ($XDG_STATE_HOME/vault-run/<project>-<hash>/: audit logs
# <run>.jsonl and undo journals <run>.journal/) or on a mount point.
#  1. A symlink planted at $XDG_STATE_HOME/vault-run, and one at the
#     project's directory, pointing at a canary tree that looks like state
#     (an old journal gc would delete): run, gc (--project and --all),
#     audit and undo each refuse with a message naming the symlink; the
#     canary is never written nor deleted.
#  2. Symlinks planted inside a real project directory (evil.journal ->
#     the canary's journal, evil.jsonl -> a canary file): runs go on, gc
#     deletes the real old journals and leaves the symlinks and canary
#     alone, undo by that run id refuses.
#  3. A run killed with kill -9 (every process of it) leaves an audit log
#     without a run-end record (usually unsealed) and a journal (usually
#     without a stop record): the next run works, `audit list` shows both
#     runs, `changes` reads the killed run's journal, gc removes both
#     journals and keeps the logs.
#  4. A `vault-run mount` killed with kill -9 is unmounted by its keeper;
#     killed together with the keeper it leaves a dead FUSE mount
#     ("Transport endpoint is not connected"): mounting there again, or a
#     run with that project, is refused with one line naming the
#     fusermount3 command; after it, mounting works again.
. "$(dirname "$0")/../lib/libtest.sh"
. "$(dirname "$0")/../lib/sandbox-lib.sh"
vr_require_sandbox
vr_require_cmd setsid md5sum

P="$T/project"
mkdir -p "$P"
echo original >"$P/a.txt"
SD=$("$VR" audit dir --project "$P")   # the project's state directory
leaf=$(basename "$SD")
B="$XDG_STATE_HOME/vault-run"
C="$T/canary"
mkdir -p "$C/$leaf/old.journal/objects"
echo 'precious' >"$C/canary.txt"
# A journal whose undo would write the canary's object over a.txt.
printf '{"seq":1,"op":"start","project":"%s","run":"old","max_size":1073741824}\n' "$P" >"$C/$leaf/old.journal/manifest.jsonl"
printf '{"seq":2,"op":"modified","path":"a.txt","object":"0","type":"file","mode":420,"size":16,"mtime_ns":0}\n' >>"$C/$leaf/old.journal/manifest.jsonl"
echo 'precious object' >"$C/$leaf/old.journal/objects/0"
touch -d '30 days ago' "$C/$leaf/old.journal/manifest.jsonl"
snap() { (cd "$C" && find . -printf '%p %y %s %T@\n' | sort && find . -type f -exec md5sum {} + | sort); }
snap >"$T/canary.before"
canary_intact() { cmp -s "$T/canary.before" <(snap); }
# one_line_about FILE WORD — FILE names WORD in a vault-run: line
one_line_about() { grep -q "^vault-run: .*$2" "$1"; }

# --- 1. symlinks at the state path ---
attack_state_path() { # WHERE (description); the symlink is in place
	local where=$1 st
	st=0; "$VR" --project "$P" --profile none -- sh -c 'echo x >>a.txt' 2>"$T/e" || st=$?
	cat "$T/e"
	vr_check "$where: the run is refused (125, got $st)" test "$st" = 125
	vr_check "$where: … naming the symlink" one_line_about "$T/e" 'is a symlink'
	vr_check "$where: … before COMMAND ran" test "$(cat "$P/a.txt")" = original
	st=0; "$VR" gc --project "$P" --older-than 0 >"$T/o" 2>"$T/e" || st=$?
	vr_check "$where: gc --project refuses (got $st)" test "$st" != 0
	vr_check "$where: … naming the symlink" one_line_about "$T/e" 'is a symlink'
	"$VR" gc --all --older-than 0 >"$T/o" 2>&1 || true
	vr_check_not "$where: gc --all deletes nothing" grep -q '^deleted [^0]' "$T/o"
	st=0; "$VR" audit list --project "$P" >"$T/o" 2>"$T/e" || st=$?
	vr_check "$where: audit refuses (got $st)" test "$st" != 0
	vr_check "$where: … naming the symlink" one_line_about "$T/e" 'is a symlink'
	st=0; "$VR" undo --project "$P" old >"$T/o" 2>"$T/e" || st=$?
	vr_check "$where: undo of the canary's journal refuses (got $st)" test "$st" != 0
	vr_check "$where: the project is unchanged" test "$(cat "$P/a.txt")" = original
	vr_check "$where: the canary is neither written nor deleted" canary_intact
}
rm -rf "$B" # the probe's run made it
ln -s "$C" "$B"
attack_state_path "vault-run/ is a symlink"
rm "$B"
(umask 077 && mkdir -p "$B")
ln -s "$C/$leaf" "$SD"
attack_state_path "the project's state dir is a symlink"
rm "$SD"

# --- 2. symlinks inside a real project state directory ---
vr_check "a first run makes the state directory" "$VR" --project "$P" --profile none -- true
vr_check "control: it is a real directory" test -d "$SD" -a ! -L "$SD"
ln -s "$C/$leaf/old.journal" "$SD/evil.journal"
ln -s "$C/canary.txt" "$SD/evil.jsonl"
vr_check "with planted symlinks a run still works" "$VR" --project "$P" --profile none -- cat a.txt
"$VR" audit list --project "$P" >"$T/o" 2>&1 || true
vr_check "audit lists the real runs" grep -q '^20' "$T/o"
vr_check_not "audit does not list the planted log" grep -q evil "$T/o"
"$VR" undo --project "$P" evil >"$T/o" 2>&1 || true
vr_check "undo of a run whose journal is a symlink does not use it" test "$(cat "$P/a.txt")" = original
find "$SD" -name manifest.jsonl -exec touch -d '30 days ago' {} +
st=0; "$VR" gc --project "$P" --older-than 1 >"$T/o" 2>&1 || st=$?
cat "$T/o"
vr_check "gc deletes the real old journals" grep -q '^deleted [1-9]' "$T/o"
vr_check "gc leaves the planted symlink" test -L "$SD/evil.journal"
vr_check "gc says it left it alone" grep -q 'evil.journal is not a directory' "$T/o"
"$VR" gc --all --older-than 1 >"$T/o" 2>&1 || true
vr_check "the canary is neither written nor deleted" canary_intact
rm "$SD/evil.journal" "$SD/evil.jsonl"

# --- 3. a killed run's leftovers ---
rm -rf "$SD"
setsid "$VR" --project "$P" --profile none -- sh -c 'echo changed >a.txt; : >started; sleep 600' 2>"$T/killed.err" &
lead=$!
for i in $(seq 1 300); do [ -e "$P/started" ] && break; sleep 0.1; done
vr_check "control: the run to kill got going" test -e "$P/started"
# Every process of the run, stopped first and then killed, so that none
# reacts to another's death (a daemon outliving the supervisor even briefly
# seals the log and ends the journal cleanly).
tree() { local c; echo "$1"; for c in $(ps -o pid= --ppid "$1"); do tree "$c"; done; }
pids=$(tree "$lead")
kill -STOP $pids 2>/dev/null || true
kill -KILL $pids 2>/dev/null || true
wait "$lead" 2>/dev/null || true
for i in $(seq 1 100); do [ -z "$(vr_mounts_under "$P")" ] && break; sleep 0.1; done
killed=$(cd "$SD" && ls ./*.jsonl | sed 's|^\./||; s|\.jsonl$||' | head -1)
vr_check "the killed run left its audit log ($killed)" test -n "$killed" -a -f "$SD/$killed.jsonl"
vr_check "… without a run-end record" test "$(grep -c '"op":"run-end"' "$SD/$killed.jsonl")" = 0
vr_check "… and its journal" test -f "$SD/$killed.journal/manifest.jsonl"
echo "the killed run's log: $(grep -c '"op":"seal"' "$SD/$killed.jsonl") seal record(s);" \
	"its journal: $(grep -c '"op":"stop"' "$SD/$killed.journal/manifest.jsonl") stop record(s)"
rm -f "$P/started"
vr_check "the next run works" test "$("$VR" --project "$P" --profile none -- cat a.txt 2>/dev/null)" = changed
"$VR" audit list --project "$P" >"$T/o" 2>&1 || true
cat "$T/o"
vr_check "audit lists the killed run and the next one" test "$(grep -c '^20' "$T/o")" = 2
vr_check "changes reads the killed run's journal" grep -q 'a.txt' <("$VR" changes --project "$P" "$killed" 2>&1)
find "$SD" -name manifest.jsonl -exec touch -d '30 days ago' {} +
st=0; "$VR" gc --project "$P" --older-than 1 >"$T/o" 2>&1 || st=$?
cat "$T/o"
vr_check "gc removes both journals (exit $st)" test "$st" = 0 -a -z "$(ls -d "$SD"/*.journal 2>/dev/null)"
vr_check "gc keeps both audit logs" test "$(ls "$SD"/*.jsonl | wc -l)" = 2

# --- 4. a dead mount left by kill -9 of `vault-run mount` ---
M="$T/mnt"
mkdir -p "$M"
unmount() { fusermount3 -u -z "$1" 2>/dev/null || umount -l "$1" 2>/dev/null; }
# kill -9 of the daemon alone leaves nothing: its unmount keeper (docs/view.md)
# detaches the mount. A dead mount needs the keeper killed first.
if vr_mount "$P" "$M"; then
	kill -KILL "$VR_MOUNT_PID"
	wait "$VR_MOUNT_PID" 2>/dev/null || true
	for i in $(seq 1 100); do grep -q " $M " /proc/self/mountinfo || break; sleep 0.05; done
	vr_check_not "kill -9 of vault-run mount alone: the keeper unmounted" grep -q " $M " /proc/self/mountinfo
fi
if vr_mount "$P" "$M"; then
	keeper=$(ps -o pid= --ppid "$VR_MOUNT_PID")
	kill -KILL $keeper "$VR_MOUNT_PID"
	wait "$VR_MOUNT_PID" 2>/dev/null || true
	vr_check "control: the mount point is dead (ENOTCONN)" grep -q 'not connected' <(stat "$M" 2>&1)
	st=0; "$VR" mount "$P" "$M" 2>"$T/e" || st=$?
	cat "$T/e"
	vr_check "mounting on the dead mount is refused (125, got $st)" test "$st" = 125
	vr_check "… with one line naming fusermount3" test "$(wc -l <"$T/e")" = 1 -a -n "$(grep fusermount3 "$T/e")"
	st=0; "$VR" --project "$M" --profile none -- true 2>"$T/e" || st=$?
	cat "$T/e"
	vr_check "a run on the dead mount is refused (125, got $st)" test "$st" = 125
	vr_check "… with one line naming fusermount3" test "$(wc -l <"$T/e")" = 1 -a -n "$(grep fusermount3 "$T/e")"
	unmount "$M"
	vr_check "after unmounting, the view mounts there again" vr_mount "$P" "$M"
	vr_check "… and serves the project" test "$(cat "$M/a.txt")" = changed
	vr_unmount || true
else
	vr_fail "vault-run mount did not start"
fi
vr_check "the canary is still intact" canary_intact
vr_done
