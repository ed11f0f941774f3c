#!/usr/bin/env bash
# The audit log on a disk that fills up (docs/audit.md, --audit-fail): the
# log lives on a small tmpfs mounted in a private mount namespace of this
# test (host root, hence -once; gone with the test), which the test fills
# while the agent works.
#   closed (the default): vault-run stops the agent at once, says so in one
#     line naming the log and the reason, exits 125; the log holds whole
#     records that verify as "unsealed"; nothing of the run is left running.
#   open: the run goes on; once space is back, the log says how many records
#     were lost (exactly the agent's records that are not in it), before the
#     ones that follow, and the log verifies as sealed.
. "$(dirname "$0")/../lib/libtest.sh"
. "$(dirname "$0")/../lib/sandbox-lib.sh"
if [ "${VR_AUDITFULL_INNER:-}" != 1 ]; then
	vr_is_host_root || vr_skip "mounting a small tmpfs needs host root"
	vr_require_cmd unshare python3 timeout
	vr_require_sandbox
	# Not exec: this shell's EXIT trap removes its own $T afterwards.
	VR_AUDITFULL_INNER=1 unshare -m --propagation private bash "$0"
	exit $?
fi
SMALL="$T/small"
mkdir -p "$SMALL"
mount -t tmpfs -o size=256k,mode=0755 vr-auditfull "$SMALL" || vr_skip "cannot mount a tmpfs here"
P="$T/project"
mkdir -p "$P"

# The agent: 100 mkdirs (one "mkdir" record each at --audit-level writes)
# after "go", then a marker, then one more after "go2".
MARK="vr-auditfull-$$"
agent="mkdir d started; while [ ! -e go ]; do sleep 0.1; done; for i in \$(seq 1 100); do mkdir d/x\$i; done; mkdir phase1; while [ ! -e go2 ]; do sleep 0.1; done; mkdir d/after; echo agent-done $MARK"

wait_for() {  # wait_for CMD...: up to 60 s
	local i
	for i in $(seq 1 600); do "$@" 2>/dev/null && return 0; sleep 0.1; done
	return 1
}
fill() { dd if=/dev/zero of="$SMALL/filler" bs=4k 2>/dev/null || true; }

# --- closed (the default), the log in the state directory on the tmpfs ---
export XDG_STATE_HOME="$SMALL/state"
cd "$P"
timeout 120 "$VR" --project "$P" --profile none --audit-level writes -- sh -c "$agent" \
	>"$T/closed.out" 2>"$T/closed.err" &
rpid=$!
state_log_started() { grep -qs '"path":"started"' "$XDG_STATE_HOME"/vault-run/project-*/*.jsonl; }
vr_check "closed: the agent has started and its record is in the log" wait_for state_log_started
LOG=$(ls "$XDG_STATE_HOME"/vault-run/project-*/*.jsonl)
fill
t0=$(date +%s)
touch go
wait "$rpid" && rc=0 || rc=$?
elapsed=$(($(date +%s) - t0))
cat "$T/closed.err"
vr_check "closed: vault-run exits 125 (not the timeout's 124): the agent was stopped" test "$rc" = 125
vr_check "closed: promptly (${elapsed} s after the disk filled)" test "$elapsed" -le 20
# The undo journal shares the full disk: whether one of its writes comes
# before the stop is a matter of timing, and it says so at most once.
vr_check "closed: exactly one line from vault-run (and the journal's at most once)" \
	test "$(grep -v '^vault-run: journal: cannot append to the manifest' "$T/closed.err" | grep -c '^vault-run')" = 1 \
	-a "$(grep -c '^vault-run: journal:' "$T/closed.err")" -le 1
vr_check "closed: it names the log, the reason and the mode" \
	grep -qF "vault-run: cannot write the audit log $LOG: No space left on device; stopping the agent (--audit-fail=closed)" "$T/closed.err"
vr_check_not "closed: the agent did not go on" grep -q agent-done "$T/closed.out"
# The supervisor and the view daemon (forked, same argv) carry $MARK too;
# the view's mount lived in the supervisor's namespace, gone with it. The
# daemon may outlive the supervisor by its last teardown (it said "stopped"
# once its log was closed, run/daemons.c): a moment, never more.
for _ in $(seq 40); do pgrep -f "$MARK" >/dev/null || break; sleep 0.05; done
vr_check_not "closed: no process of the run is left 2 s later (supervisor, daemon, agent)" pgrep -f "$MARK"
"$VR" audit verify "$LOG" >"$T/v" 2>&1 && rc=0 || rc=$?
cat "$T/v"
vr_check "closed: the log verifies as unsealed (exit 2), ending with a whole record" \
	bash -c "[ $rc = 2 ] && grep -q 'no seal after record' '$T/v'"
rm -f "$SMALL/filler" go
rm -rf d started phase1

# --- open, the log a FILE on the tmpfs ---
unset XDG_STATE_HOME
LOG="$SMALL/open.jsonl"
timeout 120 "$VR" --project "$P" --profile none --audit-level writes --audit "$LOG" --audit-fail=open \
	-- sh -c "$agent" >"$T/open.out" 2>"$T/open.err" &
rpid=$!
vr_check "open: the agent has started and its record is in the log" wait_for grep -q '"path":"started"' "$LOG"
fill
touch go
vr_check "open: the failure is reported" wait_for grep -q 'cannot write the audit log' "$T/open.err"
vr_check "open: the agent went on" wait_for test -d phase1
rm -f "$SMALL/filler"
touch go2
wait "$rpid" && rc=0 || rc=$?
cat "$T/open.err"
vr_check "open: the run ends with the agent's status (0)" test "$rc" = 0
vr_check "open: the agent finished" grep -q agent-done "$T/open.out"
python3 - "$LOG" >"$T/counts" <<'PY' || true
import json, sys
recs = [json.loads(l) for l in open(sys.argv[1])]
ops = [r["op"] for r in recs]
lost = [r for r in recs if r["op"] == "lost"]
kept = sum(1 for r in recs if r["op"] == "mkdir" and (r["path"].startswith("d/x") or r["path"] == "phase1"))
after = next(i for i, r in enumerate(recs) if r["op"] == "mkdir" and r["path"] == "d/after")
print(len(lost), lost[0]["count"] if lost else 0, kept, lost[0]["reason"] if lost else "-",
      int(bool(lost) and ops.index("lost") < after), recs[-1]["op"], recs[-1].get("lost"))
PY
read -r nlost count kept reason before last seal_lost <"$T/counts" || true
echo "lost records: $nlost, count $count, agent records kept $kept, reason $reason"
vr_check "open: one lost record, reason ENOSPC" test "$nlost:$reason" = "1:ENOSPC"
vr_check "open: some records were lost ($count)" test "${count:-0}" -ge 1
vr_check "open: lost + kept = the agent's 101 records" test "$((count + kept))" = 101
vr_check "open: the lost record comes before the records written after it" test "$before" = 1
vr_check "open: the seal is last and counts the lost records" test "$last:$seal_lost" = "seal:$count"
vr_check "open: the log verifies as sealed" "$VR" audit verify "$LOG"
vr_check "open: stderr said it once when it failed" \
	test "$(grep -c "cannot write the audit log $LOG: No space left on device; going on (--audit-fail=open)" "$T/open.err")" = 1
vr_check "open: and once when it could write again, with the count" \
	grep -q "the audit log $LOG can be written again; $count records were lost" "$T/open.err"
vr_check "open: the summary line counts the lost records" grep -q "$count records lost (the log could not be written)" "$T/open.err"
cd /
umount "$SMALL"
vr_check "the tmpfs is gone" bash -c "! grep -q ' $SMALL ' /proc/self/mounts"
vr_done
