#!/usr/bin/env bash
# The run's audit log without --audit: created in the state directory
# ($XDG_STATE_HOME/vault-run/<project>-<hash>/<run-id>.jsonl), opened by
# run-start and closed by run-end (then the seal), readable and verifiable
# with `vault-run audit`, a denied `cat .env` in it, one summary line on
# stderr at the end (none with --quiet), and no audit descriptor reaching
# the sandbox.
. "$(dirname "$0")/../lib/libtest.sh"
. "$(dirname "$0")/../lib/view-lib.sh"
. "$(dirname "$0")/../lib/sandbox-lib.sh"
vr_require_sandbox

P="$T/project"
view_make_demo "$P"
cd "$P"
export XDG_STATE_HOME="$T/xdg-state" # fresh: the probe above logged elsewhere
run() { "$VR" --project "$P" --profile none "$@"; }

st=0
run -- sh -c 'cat README.md >/dev/null; cat .env; cat .env; echo new >new.txt; exit 3' \
	>"$T/run.out" 2>"$T/run.err" || st=$?
vr_check "the exit status passes through with the log on" test "$st" = 3
logs=("$XDG_STATE_HOME"/vault-run/project-*/*.jsonl)
vr_check "exactly one log in \$XDG_STATE_HOME/vault-run/project-<hash>/" test "${#logs[@]}" = 1 -a -f "${logs[0]}"
LOG=${logs[0]}
ID=$(basename "$LOG" .jsonl)
vr_check "the log is 0600" test "$(stat -c %a "$LOG")" = 600
vr_check "its directory is 0700" test "$(stat -c %a "$(dirname "$LOG")")" = 700
# The daemon's own mount marker may come first (it writes it while reading
# the queued run-start); nothing else may.
vr_check "run-start is the first record but the mount marker" \
	grep -q '"op":"run-start"' <(grep -v '"op":"mount"' "$LOG" | head -1)
vr_check "run-start: the command, shell-quoted" \
	grep -q '"command":"sh -c '"'"'cat README.md >/dev/null; cat .env; cat .env; echo new >new.txt; exit 3'"'"'"' "$LOG"
vr_check "run-start: version, project, pid" \
	grep -q '"op":"run-start".*"version":"[0-9].*"project":"'"$P"'".*"pid":[0-9]' "$LOG"
vr_check "every record carries the run id" test "$(grep -c "\"run\":\"$ID\"" "$LOG")" = "$(wc -l <"$LOG")"
vr_check "run-end with the exit status" grep -q '"op":"run-end".*"exit_status":3' "$LOG"
vr_check "the denied cat .env is logged" grep -q '"op":"lookup","path":".env","result":"hidden"' "$LOG"
vr_check "run-end comes after the agent's events" \
	test "$(grep -n '"op":"run-end"' "$LOG" | cut -d: -f1)" -gt "$(grep -n '"path":"new.txt"' "$LOG" | tail -1 | cut -d: -f1)"
vr_check "the seal is last" grep -q '"op":"seal"' <(tail -1 "$LOG")

summary=$("$VR" audit --project "$P" 2>&1)
vr_check "vault-run audit finds the run as the latest" grep -q "$ID" <<<"$summary"
vr_check "… with its exit status" grep -qE '^exit +3' <<<"$summary"
vr_check "… and the denied .env" grep -q '\.env' <<<"$summary"
vr_check "vault-run audit verify: intact and sealed" bash -c "'$VR' audit verify --project '$P' '$ID' 2>&1 | grep -q 'intact and sealed'"

# (the demo repository commits its fake secrets: the git history warning is not a summary)
line=$(grep '^vault-run: ' "$T/run.err" | grep -v -e profile -e 'warning: ' || true)
vr_check "one summary line on stderr" test "$(grep -c . <<<"$line")" = 1
vr_check "… with the counts: 1 file read, 1 written, 2 denied (.env ×2)" \
	grep -q '^vault-run: 1 file read, 1 written, 1 created, 2 denied (.env ×2)' <<<"$line"
vr_check "… and how to read the log" grep -qF "audit: vault-run audit $ID  (log: $LOG)" <<<"$line"
hash=$(sed -n 's/.*"hash":"\([0-9a-f]*\)"}$/\1/p' "$LOG" | tail -1)
vr_check "… and the seal's hash" grep -q "hash $hash\$" <<<"$line"

run --quiet -- true 2>"$T/quiet.err"
vr_check_not "--quiet: no summary line" grep -q 'audit:' "$T/quiet.err"
vr_check "--quiet still logs the run" test "$(ls "$XDG_STATE_HOME"/vault-run/project-*/*.jsonl | wc -l)" = 2

run --audit "$T/explicit.jsonl" -- true 2>"$T/explicit.err"
vr_check "--audit FILE: the log is there" grep -q '"op":"run-end"' "$T/explicit.jsonl"
vr_check "… no new log in the state directory" test "$(ls "$XDG_STATE_HOME"/vault-run/project-*/*.jsonl | wc -l)" = 2
vr_check "… the summary line names the file" grep -qF "audit: vault-run audit $T/explicit.jsonl" "$T/explicit.err"

run --audit - -- true 2>"$T/stderr-log.err"
vr_check "--audit -: the records go to stderr" grep -q '"op":"run-start"' "$T/stderr-log.err"
vr_check_not "… and no counts line" grep -q '^vault-run: .* read, ' "$T/stderr-log.err"

# Nothing of the audit plumbing (the log, the event socket) is open inside.
fds=$(run --quiet -- sh -c 'ls -l /proc/$$/fd' 2>/dev/null)
vr_check "inside: only fds 0 1 2 (plus ls's own)" \
	test "$(grep -cE ' [0-9]+ -> ' <<<"$fds")" -le 3
vr_check_not "inside: no socket fd" grep -q 'socket:' <<<"$fds"
vr_check_not "inside: no .jsonl fd" grep -q 'jsonl' <<<"$fds"

# A state directory that is not ours is refused (the log would not be private).
mkdir -p "$T/bad-state/vault-run"
chmod 0777 "$T/bad-state/vault-run"
st=0
XDG_STATE_HOME="$T/bad-state" run -- true 2>"$T/bad.err" || st=$?
vr_check "a group/world-writable state dir: the run is refused (125)" test "$st" = 125
vr_check "… with a message naming --audit" grep -q -- "--audit" "$T/bad.err"
vr_done
