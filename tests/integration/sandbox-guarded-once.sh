#!/usr/bin/env bash
# Guarded harness directories: a profile's writable directory (claude:
# ~/.claude) is served through a view of its own with the run's policy and
# the profile's read-only paths, so the agent keeps writing its sessions there
# but cannot plant hooks in settings.json or commands/ that the host obeys
# on its next run. The control binds the same directory plainly (no
# profile) and shows the write would otherwise land.
. "$(dirname "$0")/../lib/libtest.sh"
. "$(dirname "$0")/../lib/view-lib.sh"
. "$(dirname "$0")/../lib/sandbox-lib.sh"
vr_require_sandbox

P="$T/project"
view_make_demo "$P"
export HOME="$T/home"
C="$HOME/.claude"
mkdir -p "$C/commands" "$C/projects"
echo '{"hooks":{}}' >"$C/settings.json"
echo 'a command' >"$C/commands/c.md"
# World-writable, so that as host root the agent's uid 65534 could write
# them too: only the guard's policy stands in the way.
chmod -R a+rwX "$C"
cd "$P"

ATTACK='echo "{\"hooks\":\"evil\"}" >~/.claude/settings.json; echo s1=$?
echo evil >~/.claude/commands/new.md; echo s2=$?
echo evil >~/.claude/settings.local.json; echo s3=$?
echo session >~/.claude/projects/s.jsonl; echo s4=$?
cat ~/.claude/settings.json ~/.claude/commands/c.md'

# Control: the directory bound read-write without the profile's view.
"$VR" --project "$P" --profile none --quiet --bind "$C" "$C" -- sh -c "$ATTACK" >"$T/control.out" 2>&1 || true
vr_check "control: without the guard the settings write lands" grep -q evil "$C/settings.json"
echo '{"hooks":{}}' >"$C/settings.json"
rm -f "$C/commands/new.md" "$C/settings.local.json" "$C/projects/s.jsonl"

dry=$("$VR" --project "$P" --profile claude --net none --dry-run -- true 2>&1)
vr_check "--dry-run lists the guarded directory and its read-only paths" \
	grep -q "^guarded    $C readonly: /settings.json.*/commands" <<<"$dry"

"$VR" --project "$P" --profile claude --net none --quiet -- sh -c "$ATTACK; grep -c ' $C .*fuse.vault-run' /proc/self/mountinfo" \
	>"$T/guarded.out" 2>&1 || true
cat "$T/guarded.out"
vr_check "settings.json cannot be rewritten" grep -qx 's1=[12]' "$T/guarded.out"
vr_check "commands/ gets no new file" grep -qx 's2=[12]' "$T/guarded.out"
vr_check "settings.local.json cannot be created" grep -qx 's3=[12]' "$T/guarded.out"
vr_check "sessions are still written" grep -qx 's4=0' "$T/guarded.out"
vr_check "… and reach the host" grep -qx session "$C/projects/s.jsonl"
vr_check "the settings are readable inside" grep -q '"hooks":{}' "$T/guarded.out"
vr_check "the host's settings.json is untouched" test "$(cat "$C/settings.json")" = '{"hooks":{}}'
vr_check_not "no commands/new.md on the host" test -e "$C/commands/new.md"
vr_check "inside, the directory is a vault-run view" grep -qx 1 <(tail -1 "$T/guarded.out")
vr_check "no view is left mounted on the host" bash -c "! grep -q ' $C ' /proc/self/mountinfo"
vr_done
