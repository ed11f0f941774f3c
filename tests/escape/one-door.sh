#!/usr/bin/env bash
# One door (DESIGN.md invariant 10): a --bind directory or file reaches the
# agent through a view with the run's policy and audit log, never as a plain
# read-write bind. Each attack first works on a plain bind (--ro-bind shows
# what a plain bind shows) or a plain directory, then fails through the view;
# the host files stay byte-identical and the refusals are in the run's one
# log, with the view's "root". As host root the bind is the agent's to write
# (the view presents it as the agent's, as the project's).
. "$(dirname "$0")/../lib/libtest.sh"
. "$(dirname "$0")/../lib/sandbox-lib.sh"
vr_require_sandbox

P="$T/project"
vr_make_demo "$P"
B="$T/data" # the --bind directory (owned by whoever runs the test: root in the plain variant)
mkdir -p "$B/.vscode" "$B/sub"
echo 'DATA_TOKEN=hunter2-bind' >"$B/.env"
echo 'echo hello' >"$B/.envrc"
echo '{}' >"$B/.vscode/tasks.json"
echo keep >"$B/sub/keep.txt"
F="$T/cfg/settings.json" # a --bind of one file, beside a secret
mkdir -p "$T/cfg"
echo '{"a":1}' >"$F"
echo 'CFG_TOKEN=hunter2-sibling' >"$T/cfg/.env"
sums() { find "$B" "$T/cfg" -type f -exec sha256sum {} + | sort; }
before=$(sums)
LOG="$T/audit.jsonl"
run() { "$VR" --project "$P" --net none --profile none "$@"; }

# 1. A secret in the directory: a plain bind shows it, the view hides it.
out=$(run --quiet --ro-bind "$B" "$B" -- cat "$B/.env" 2>&1) || true
vr_check "control: a plain bind shows the bind's .env" grep -q hunter2-bind <<<"$out"
out=$(run --quiet --audit "$LOG" --bind "$B" "$B" -- sh -c "cat '$B/.env'; ls -a '$B'" 2>&1) || true
vr_check_not "through the view the .env cannot be read" grep -q hunter2-bind <<<"$out"
vr_check_not "… nor listed" grep -qx .env <<<"$out"
vr_check "the refusal is in the log with the view's root" \
	grep -q "\"root\":\"$B\",\"op\":\"lookup\",\"path\":\".env\",\"result\":\"hidden\"" "$LOG"

# 2. A persistence file there (direnv runs .envrc, the editor .vscode/):
# writable on a plain directory, read-only through the view.
ATTACK="echo evil >>'$B/.envrc'; echo s1=\$?; echo '{\"evil\":1}' >'$B/.vscode/tasks.json'; echo s2=\$?
ln -sf /tmp '$B/.vscode/x' 2>/dev/null; echo s3=\$?; mv '$B/.envrc' '$B/e' 2>/dev/null; echo s4=\$?"
cp -a "$B" "$T/plain"
sh -c "${ATTACK//$B/$T/plain}" >/dev/null 2>&1 || true
vr_check "control: on a plain directory the attack lands" grep -q evil "$T/plain/e"
rm -f "$LOG"
out=$(run --quiet --audit "$LOG" --bind "$B" "$B" -- sh -c "$ATTACK" 2>&1) || true
echo "$out"
vr_check "through the view .envrc cannot be appended to" grep -qx 's1=[12]' <<<"$out"
vr_check "… .vscode/tasks.json cannot be rewritten" grep -qx 's2=[12]' <<<"$out"
vr_check "… nothing can be linked into .vscode/" grep -qx 's3=[12]' <<<"$out"
vr_check "… .envrc cannot be renamed away" grep -qx 's4=[12]' <<<"$out"
vr_check "the host's files are byte-identical" test "$(sums)" = "$before"
vr_check "the refusals are in the log with the view's root" \
	grep -q "\"root\":\"$B\",\"op\":\"[a-z]*\",\"path\":\".envrc\",\"result\":\"readonly\"" "$LOG"

# 3. Writes elsewhere in the bind land, as the agent's, and are counted.
rm -f "$LOG"
out=$(run --audit "$LOG" --bind "$B" "$B" -- sh -c "echo out >'$B/out.txt' && echo w=ok; cat '$B/sub/keep.txt'" 2>&1) || true
vr_check "the agent writes the bind (as host root too: the view presents it as the agent's)" grep -qx w=ok <<<"$out"
vr_check "… and the write reaches the host" grep -qx out "$B/out.txt"
vr_check "the write is in the run's one log, with its root" \
	grep -q "\"root\":\"$B\",\"op\":\"create\",\"path\":\"out.txt\",\"result\":\"ok\"" "$LOG"
vr_check "the summary counts it as a write outside the project" grep -q '1 written.*(1 of them outside the project)' <<<"$out"
vr_check "the view stopped cleanly, its last record before run-end" \
	bash -c "grep -n . '$LOG' | grep -A50 '\"root\":\"$B\",\"op\":\"unmount\"' | grep -q '\"op\":\"run-end\"'"
vr_check_not "… no view ended by a signal" grep -q 'ended with status' <<<"$out"
vr_check "the log is one chain, sealed" "$VR" audit verify "$LOG"
rm -f "$B/out.txt"

# 4. A --bind of one file: that file, writable and audited, and nothing beside it.
out=$(run --quiet --ro-bind "$T/cfg" "$T/cfg" -- cat "$T/cfg/.env" 2>&1) || true
vr_check "control: a plain bind of the directory shows the sibling secret" grep -q hunter2-sibling <<<"$out"
rm -f "$LOG"
out=$(run --quiet --audit "$LOG" --bind "$F" "$F" -- sh -c "cat '$F'; echo '{\"a\":2}' >'$F'; echo w=\$?; ls -a '$T/cfg'; cat '$T/cfg/.env'" 2>&1) || true
vr_check "the bound file is read" grep -q '"a":1' <<<"$out"
vr_check "… and written" grep -qx 'w=0' <<<"$out"
vr_check "… on the host" grep -q '"a":2' "$F"
vr_check_not "the sibling secret is not there" grep -q hunter2-sibling <<<"$out"
vr_check "the write is logged with the file's directory as root" \
	grep -q "\"root\":\"$T/cfg\",\"op\":\"write\",\"path\":\"settings.json\"" "$LOG"
echo '{"a":1}' >"$F"

# 5. What cannot be a door: a writable bind holding the project, a --dev-bind
# of anything but a device node. One line each, exit 125, nothing started.
vr_expect_status 125 "a writable bind that contains the project is refused" run --bind "$T" "$T" -- true
err=$(run --bind "$T" /x -- true 2>&1) || true
vr_check "… saying why in one line" test "$(grep -c 'contains the project' <<<"$err")" = 1
mkdir -p "$XDG_STATE_HOME/vault-run"
vr_expect_status 125 "a writable bind of vault-run's state directory (the audit logs) is refused" \
	run --bind "$XDG_STATE_HOME" /x -- true
vr_expect_status 125 "… and one holding the run's --audit file" run --audit "$B/log.jsonl" --bind "$B" /x -- true
vr_expect_status 125 "--dev-bind of a directory is refused" run --dev-bind "$B" /x -- true
vr_expect_status 0 "--dev-bind of a device node works" run --quiet --dev-bind /dev/null /x -- test -c /x

# 6. A bind the user names inside the project is the project's: a symlink
# there (the agent makes them, in an earlier run or beside this one) must not
# send the bind to a host directory the user never named. Control: a symlink
# outside the project is the user's, followed to its target.
ln -s "$B" "$T/userlink"
out=$(run --quiet --bind "$T/userlink" /x -- cat /x/sub/keep.txt 2>&1) || true
vr_check "control: a bind of a symlink the user made reaches its target" grep -qx keep <<<"$out"
run --quiet -- sh -c "cd '$P' && ln -s ../data rel && ln -s '$B' abs && ln -s ../data/.env envlink &&
	ln -s ../cfg/settings.json file && mkdir -p inside && ln -s inside stays" >/dev/null 2>&1
vr_check "the agent made the links in the project" test -L "$P/rel" -a -L "$P/abs" -a -L "$P/file"
for l in rel abs envlink file; do
	for b in --ro-bind --bind; do
		vr_expect_status 125 "$b of the project's $l (a link leading out) is refused" \
			run $b "$P/$l" /x -- sh -c "cat /x/.env /x; echo evil >>/x/.envrc; echo '{}' >/x"
	done
done
err=$(run --bind "$P/rel" /x -- true 2>&1) || true
vr_check "… saying why in one line" test "$(grep -c 'symlink inside the project' <<<"$err")" = 1
vr_expect_status 0 "a link that stays inside the project is served by its view" \
	run --quiet --bind "$P/stays" /x -- sh -c 'echo ok >/x/made'
vr_check "… and the write lands inside" test -f "$P/inside/made"
vr_check "the host's files are byte-identical in the end" test "$(sums)" = "$before"
vr_done
