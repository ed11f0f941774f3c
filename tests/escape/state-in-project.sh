#!/usr/bin/env bash
# Invariants 4 and 8: vault-run's state directory (every run's audit log and
# undo journal, which `vault-run undo` restores on the host past the view's
# rules) is never inside the project where the agent could read or rewrite
# it. Attacked as $XDG_STATE_HOME set into the project and as
# ~/.local/state a symlink into it. Control: a directory at that place is
# readable and writable inside (so the log and journal would be).
# Expected: the run is refused before anything is made (125, one line
# naming the directory and XDG_STATE_HOME; there is no log yet to hold the
# refusal), nothing appears in the project; the state directory hidden by
# the project's policy (--project ~'s ~/.local/state/vault-run, a built-in
# rule) still works and shows nothing inside.
. "$(dirname "$0")/../lib/libtest.sh"
. "$(dirname "$0")/../lib/sandbox-lib.sh"
vr_require_sandbox

P="$T/project"
mkdir -p "$P/st"
echo hi >"$P/README"
export HOME="$T/home"
mkdir -p "$HOME"
find "$P" | sort >"$T/before.ls"

# Control: what is in the project at that place, the agent reads and writes.
echo log >"$P/st/probe.jsonl"
out=$("$VR" --project "$P" --quiet -- sh -c "cat '$P/st/probe.jsonl' && echo forged >'$P/st/probe.jsonl' && echo wrote" 2>&1) || true
vr_check "control: a file at the state directory's place is read inside" grep -qx log <<<"$out"
vr_check "control: … and rewritten" grep -qx forged "$P/st/probe.jsonl"
rm -f "$P/st/probe.jsonl"

# 1. XDG_STATE_HOME inside the project.
rc=0
XDG_STATE_HOME="$P/st" "$VR" --project "$P" --quiet -- sh -c 'echo ran' >"$T/out" 2>"$T/err" || rc=$?
cat "$T/err"
vr_check "XDG_STATE_HOME inside the project: refused (exit $rc)" test "$rc" = 125
vr_check_not "… before COMMAND ran" grep -q ran "$T/out"
vr_check "… with one line naming the directory and XDG_STATE_HOME" \
	sh -c "test \$(wc -l <'$T/err') = 1 && grep -q '$P/st/vault-run.*inside the project.*XDG_STATE_HOME' '$T/err'"
vr_check "… and no log or journal is made there" test -z "$(ls -A "$P/st")"

# 2. ~/.local/state a symlink into the project (XDG_STATE_HOME unset).
mkdir -p "$HOME/.local"
ln -s "$P/st" "$HOME/.local/state"
rc=0
env -u XDG_STATE_HOME "$VR" --project "$P" --quiet -- sh -c 'echo ran' >"$T/out" 2>"$T/err" || rc=$?
cat "$T/err"
vr_check "~/.local/state a symlink into the project: refused (exit $rc)" test "$rc" = 125
vr_check_not "… before COMMAND ran" grep -q ran "$T/out"
vr_check "… nothing made there" test -z "$(ls -A "$P/st")"
rm "$HOME/.local/state"
vr_check "the project is as it was" diff "$T/before.ls" <(find "$P" | sort)

# 3. Hidden by the project's policy (the built-in rule for --project ~'s
# default): the run works and the agent sees none of it.
mkdir -p "$P/.local"
out=$(XDG_STATE_HOME="$P/.local/state" "$VR" --project "$P" --quiet -- sh -c "ls -A '$P/.local/state'; echo rc=\$?" 2>&1) || true
echo "$out"
vr_check "a state directory the policy hides works" grep -qx 'rc=0' <<<"$out"
vr_check_not "… and shows nothing inside" grep -q vault-run <<<"$out"
vr_check "… its log is on the host" sh -c "ls '$P'/.local/state/vault-run/*/*.jsonl >/dev/null"
vr_done
