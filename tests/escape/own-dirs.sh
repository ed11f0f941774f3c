#!/usr/bin/env bash
# Invariants 4, 8 and 10: vault-run's own directories (and the user's
# --policy file) are never the agent's. The state directory (every run's audit log and undo journal,
# which `vault-run undo` restores on the host past the view's rules) is
# never inside the project where the agent could read or rewrite it. Attacked as $XDG_STATE_HOME set into the project and as
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
rm -rf "$P/.local"

# The config directory (the user's rules and profiles: what the next run of
# any project obeys) is never writable from inside either. Control: a
# profile planted there is obeyed by the next run (the shell profile binds
# a key of ~/.ssh).
export XDG_CONFIG_HOME="$HOME/.config" XDG_STATE_HOME="$T/state"
mkdir -p "$XDG_CONFIG_HOME/vault-run/profiles" "$HOME/.ssh" "$T/other"
echo PRIVATEKEY >"$HOME/.ssh/id_ed25519"
chmod -R a+rX "$HOME"
PLANT='printf "[profile]\ndescription = planted\ncommands = sh\n[paths]\nro = ~/.ssh/id_ed25519\n" >"$1/vault-run/profiles/shell.profile"; echo p=$?'
sh -c "$PLANT" sh "$XDG_CONFIG_HOME" >/dev/null
out=$("$VR" --project "$T/other" --quiet -- sh -c 'cat ~/.ssh/id_ed25519' 2>&1) || true
vr_check "control: a planted profile is obeyed by the next run" grep -qx PRIVATEKEY <<<"$out"
rm "$XDG_CONFIG_HOME/vault-run/profiles/shell.profile"
ls -laR "$XDG_CONFIG_HOME" >"$T/config.before"
# --project ~/.config: the config directory is vault-run/ in it, which no
# built-in rule names.
rc=0
"$VR" --project "$XDG_CONFIG_HOME" --quiet -- sh -c "$PLANT" sh "$XDG_CONFIG_HOME" >"$T/out" 2>"$T/err" || rc=$?
cat "$T/err"
vr_check "--project ~/.config: refused (exit $rc)" test "$rc" = 125
vr_check_not "… before COMMAND ran" grep -q p= "$T/out"
vr_check "… with one line naming the directory and how to protect it" \
	sh -c "test \$(wc -l <'$T/err') = 1 && grep -q \"config directory $XDG_CONFIG_HOME/vault-run .*--readonly '/vault-run/'\" '$T/err'"
# XDG_CONFIG_HOME inside the project, as its own directory.
mkdir -p "$P/conf/vault-run/profiles"
rc=0
XDG_CONFIG_HOME="$P/conf" "$VR" --project "$P" --quiet -- sh -c "$PLANT" sh "$P/conf" >"$T/out" 2>"$T/err" || rc=$?
vr_check "XDG_CONFIG_HOME inside the project: refused (exit $rc)" test "$rc" = 125
vr_check "… nothing planted" test -z "$(ls -A "$P/conf/vault-run/profiles")"
rm -rf "$P/conf"
# Kept read-only there, the run works and the plant fails.
out=$("$VR" --project "$XDG_CONFIG_HOME" --readonly /vault-run/ --quiet -- sh -c "$PLANT" sh "$XDG_CONFIG_HOME" 2>&1) || true
vr_check "read-only by the user's rules, the run works and the plant is refused" grep -qx 'p=[12]' <<<"$out"
vr_check "the config directory is as it was" diff "$T/config.before" <(ls -laR "$XDG_CONFIG_HOME")

# A --policy file the user keeps in the project: the user's full rules (not
# the project's tighten-only .vault-run), which the next run obeys. Control:
# rewritten, it un-hides .env there.
Q="$T/polproj"
mkdir -p "$Q/conf"
echo 'TOKEN=hunter2' >"$Q/.env"
printf '[policy]\nhide = *.secret\n' >"$Q/conf/pol.ini"
cp "$Q/conf/pol.ini" "$T/pol.orig"
REWRITE='printf "[policy]\nshow = .env\n" >"$1/conf/pol.ini"; echo w=$?'
sh -c "$REWRITE" sh "$Q" >/dev/null
out=$("$VR" --project "$Q" --policy "$Q/conf/pol.ini" --quiet -- cat "$Q/.env" 2>&1) || true
vr_check "control: a rewritten --policy file un-hides .env at the next run" grep -q hunter2 <<<"$out"
cp "$T/pol.orig" "$Q/conf/pol.ini"
LOG="$T/pol.jsonl"
out=$("$VR" --project "$Q" --policy "$Q/conf/pol.ini" --audit "$LOG" --quiet -- sh -c "$REWRITE; mv '$Q/conf' '$Q/c2'; echo m=\$?" sh "$Q" 2>&1) || true
echo "$out"
vr_check "the --policy file in the project is read-only inside" grep -qx 'w=[12]' <<<"$out"
vr_check "… and its directory cannot be moved away" grep -qx 'm=1' <<<"$out"
vr_check "… the host file is byte-identical" cmp "$T/pol.orig" "$Q/conf/pol.ini"
vr_check "… the refusal is audited" grep -q '"path":"conf/pol.ini".*"result":"readonly"' "$LOG"
ln -s conf "$Q/lnk"
rc=0
"$VR" --project "$Q" --policy "$Q/lnk/pol.ini" --quiet -- true 2>"$T/err" || rc=$?
vr_check "a --policy file reached through a symlink in the project is refused (exit $rc)" test "$rc" = 125
vr_check "… with one line naming the link" sh -c "test \$(wc -l <'$T/err') = 1 && grep -q 'symlink $Q/lnk' '$T/err'"
vr_done
