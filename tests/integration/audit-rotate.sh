#!/usr/bin/env bash
# Rotation and sinks of a run's audit log (docs/audit.md): with a small
# --audit-max-size the state-dir log is written in parts LOG.1, LOG.2, …,
# LOG, each within the limit, each new part opening with a "rotate" record
# that names the previous part's last hash; `audit verify` passes over all
# parts and catches a flipped byte in a middle part, a removed part and a cut
# part; the summary line counts every part; `audit --follow` started before
# the rotations prints exactly the records of all parts; the limit comes
# from the config too; `--audit state,-` writes the same records to the log
# and to stderr; two log files are refused.
. "$(dirname "$0")/../lib/libtest.sh"
. "$(dirname "$0")/../lib/view-lib.sh"
. "$(dirname "$0")/../lib/sandbox-lib.sh"
vr_require_sandbox
vr_require_cmd python3

P="$T/project"
view_make_demo "$P"
cd "$P"
export XDG_STATE_HOME="$T/xdg-state" XDG_CONFIG_HOME="$T/xdg-config"
run() { "$VR" --project "$P" --profile none "$@"; }

# checkparts LIMIT PART... : each part within LIMIT bytes, whole JSON lines,
# seq 1..N without a gap over all of them, and every part after the first
# opening with a rotate record chained to the previous part's last hash.
checkparts() {
	python3 - "$@" <<'PY'
import json, os, sys
limit, parts = int(sys.argv[1]), sys.argv[2:]
seq, prev = 0, None
for i, p in enumerate(parts):
    assert os.path.getsize(p) <= limit, (p, os.path.getsize(p))
    recs = [json.loads(l) for l in open(p)]
    assert recs, p
    if i:
        r = recs[0]
        assert r["op"] == "rotate" and r["prev"] == prev, (p, r)
        assert r["previous_file"] == os.path.basename(parts[i - 1]), (p, r)
    for r in recs:
        seq += 1
        assert r["seq"] == seq, (p, r["seq"], seq)
    prev = recs[-1]["hash"]
assert recs[-1]["op"] == "seal" and recs[-1]["records"] == seq - 1
print(seq)
PY
}

# --- a run rotated into parts ---
st=0
run --audit-max-size 2k -- sh -c 'cat README.md >/dev/null; cat .env; for i in $(seq 1 40); do echo $i >f$i; done' \
	>"$T/run.out" 2>"$T/run.err" || st=$?
vr_check "the run succeeds (exit 0) with rotation on" test "$st" = 0
logs=("$XDG_STATE_HOME"/vault-run/project-*/*.jsonl)
vr_check "one run log" test "${#logs[@]}" = 1
LOG=${logs[0]} ID=$(basename "${logs[0]}" .jsonl)
n=0
while [ -e "$LOG.$((n + 1))" ]; do n=$((n + 1)); done
vr_check "the log was rotated into 3 or more parts ($n rotated)" test "$n" -ge 3
parts=()
for i in $(seq 1 "$n"); do parts+=("$LOG.$i"); done
parts+=("$LOG")
vr_check "no other files than LOG.1..LOG.$n and LOG" \
	test "$(ls "$(dirname "$LOG")" | grep -c "^$ID\.jsonl")" = "$((n + 1))"
vr_check "every part is 0600" test "$(stat -c %a "${parts[@]}" | sort -u)" = 600
total=$(checkparts 2048 "${parts[@]}") || total=
vr_check "parts within 2 KiB, seq continuous, each new part chained by a rotate record" test -n "$total"

out=$("$VR" audit verify --project "$P" "$ID" 2>&1) && rc=0 || rc=$?
vr_check "verify over all parts: exit 0" test "$rc" = 0
vr_check "… intact and sealed, counting the records of every part" grep -q "intact and sealed: $total records" <<<"$out"
vr_check "… and says the rotated parts chain into it" grep -q "$n rotated parts chain into it" <<<"$out"

line=$(grep '^vault-run: ' "$T/run.err")
vr_check "the summary line counts all parts: 1 read, 40 written, 40 created, 1 denied" \
	grep -q '^vault-run: 1 file read, 40 written, 40 created, 1 denied (.env)' <<<"$line"
vr_check "… and names the rotated parts" grep -qF "(log: $LOG + $n rotated parts)" <<<"$line"
vr_check "audit (summary) reads all parts" grep -qx 'files      read 1  written 40  created 40  deleted 0  renamed 0' \
	<("$VR" audit --project "$P" "$ID")

# Tampering with a part: a flipped byte in a middle part, a removed middle
# part, a middle part cut short.
mid=$((n / 2 + 1))
cp -a "$(dirname "$LOG")" "$T/keep"
vrfy() { "$VR" audit verify "$LOG" >"$T/v" 2>&1 && echo 0 || echo $?; }
sed -i '2s/"seq":/"seq" :/' "$LOG.$mid"
vr_check "a flipped byte in part $mid: exit 1" test "$(vrfy)" = 1
vr_check "… naming that part and line" grep -q "$LOG.$mid:2: tampered" "$T/v"
cp "$T/keep/$ID.jsonl.$mid" "$LOG.$mid"
vr_check "restored: verify passes again" test "$(vrfy)" = 0
mv "$LOG.$mid" "$T/moved"
vr_check "a removed middle part: exit 1" test "$(vrfy)" = 1
vr_check "… named as missing" grep -q "$LOG.$mid: tampered: this rotated part is missing" "$T/v"
head -n -1 "$T/moved" >"$LOG.$mid"
vr_check "a middle part cut short: exit 1" test "$(vrfy)" = 1
vr_check "… the next part does not continue it" grep -q "tampered: the chain does not continue from $LOG.$mid" "$T/v"
cp "$T/keep/$ID.jsonl.$mid" "$LOG.$mid"

# --- --follow across rotations ---
F="$T/follow.jsonl"
run --audit "$F" --audit-max-size 2k -- sh -c 'while [ ! -e go ]; do sleep 0.1; done; for i in $(seq 1 40); do echo $i >g$i; done' \
	>"$T/frun.out" 2>"$T/frun.err" &
rpid=$!
vr_check "the followed run has started" view_wait_grep "$F" '"op":"run-start"' 600
"$VR" audit --follow --json "$F" >"$T/follow.out" 2>"$T/follow.err" &
fpid=$!
sleep 0.5
touch "$P/go"
wait "$rpid" && rc=0 || rc=$?
vr_check "the followed run succeeds" test "$rc" = 0
ended=no
for i in $(seq 1 300); do kill -0 "$fpid" 2>/dev/null || { ended=yes; break; }; sleep 0.1; done
vr_check "--follow ends by itself after the seal" test "$ended" = yes
[ "$ended" = yes ] || kill "$fpid"
wait "$fpid" || true
fparts=()
for i in $(seq 1 100); do [ -e "$F.$i" ] && fparts+=("$F.$i") || break; done
vr_check "the followed log rotated at least twice" test "${#fparts[@]}" -ge 2
fparts+=("$F")
vr_check "--follow printed exactly the records of every part, in order" cmp "$T/follow.out" <(cat "${fparts[@]}")
vr_check "--follow said nothing on stderr" test ! -s "$T/follow.err"
vr_check "--follow of the finished log: its parts, then the end" \
	cmp <(timeout 60 "$VR" audit --follow --json "$F") <(cat "${fparts[@]}")

# --- the limit from the config; --audit-max-size off wins over it ---
mkdir -p "$XDG_CONFIG_HOME/vault-run"
printf '[audit]\nmax-size = 1k\nfail = open\n' >"$XDG_CONFIG_HOME/vault-run/config"
run --audit "$T/cfg.jsonl" -- sh -c 'for i in $(seq 1 10); do echo $i >h$i; done' 2>/dev/null
vr_check "[audit] max-size = 1k rotates" test -e "$T/cfg.jsonl.2"
vr_check "… and the parts verify" "$VR" audit verify "$T/cfg.jsonl"
run --audit "$T/off.jsonl" --audit-max-size off -- sh -c 'for i in $(seq 1 10); do echo $i >k$i; done' 2>/dev/null
vr_check "--audit-max-size off: one file" test ! -e "$T/off.jsonl.1" -a -s "$T/off.jsonl"
rm "$XDG_CONFIG_HOME/vault-run/config"

# --- several sinks: the state log and stderr get the same records ---
before=$(ls "$XDG_STATE_HOME"/vault-run/project-*/*.jsonl | wc -l)
run --audit state --audit - -- cat README.md >/dev/null 2>"$T/two.err"
new=$(ls -t "$XDG_STATE_HOME"/vault-run/project-*/*.jsonl | head -1)
vr_check "--audit state --audit -: a new state log" test "$(ls "$XDG_STATE_HOME"/vault-run/project-*/*.jsonl | wc -l)" = $((before + 1))
vr_check "… and stderr has exactly its records" cmp <(grep '^{"seq":' "$T/two.err") "$new"
vr_check "… with the summary line too" grep -q '^vault-run: 1 file read' "$T/two.err"
st=0
run --audit "$T/a.jsonl,$T/b.jsonl" -- true 2>"$T/bad.err" || st=$?
vr_check "two log files are refused (125)" test "$st" = 125
vr_check "… saying why" grep -q 'names two log files' "$T/bad.err"
st=0
run --audit-fail=sometimes -- true 2>"$T/bad.err" || st=$?
vr_check "--audit-fail=sometimes is refused (125)" test "$st" = 125
vr_done
