#!/bin/bash
# vault-run audit on hand-made logs that follow docs/audit.md (the writer is
# tested on its own): the summary's numbers exactly, every filter, --json,
# bad lines, list, the state directory, verify on a chain built here with
# sha256sum (an independent oracle of the documented formula), and --follow
# across truncation, rotation and run-end.
. "$(dirname "$0")/../lib/libtest.sh"
vr_require_cmd sha256sum

export XDG_STATE_HOME="$T/state"
P="$T/proj"
mkdir -p "$P"
DIR=$("$VR" audit dir --project "$P")
case "$DIR" in "$XDG_STATE_HOME/vault-run/proj-"????????????????) vr_pass "audit dir: $DIR" ;;
	*) vr_fail "audit dir: unexpected $DIR" ;; esac

# No runs yet: one clear line, exit 125.
out=$("$VR" audit --project "$P" 2>&1) && rc=0 || rc=$?
vr_check "no runs: exit 125" [ "$rc" = 125 ]
vr_check "no runs: one line that says so" [ "$(printf '%s\n' "$out" | wc -l)" = 1 ]
vr_check "no runs: names the project" grep -q "no runs recorded for project $P" <<<"$out"

# chain LOG MEMBERS... : writes a chained log, record N = {"seq":N,MEMBERS}
# (N from SEQ0+1, chained from PREV0: a rotated part's continuation).
chain() {
	local log=$1 prev=${PREV0:-0000000000000000000000000000000000000000000000000000000000000000} n=${SEQ0:-0} m body h
	shift
	: >"$log"
	for m; do
		n=$((n + 1))
		body="{\"seq\":$n,$m"
		h=$(printf '%s\n%s' "$prev" "$body" | sha256sum | cut -c1-64)
		printf '%s,"hash":"%s"}\n' "$body" "$h" >>"$log"
		prev=$h
	done
	LAST_HASH=$prev
}

R='"run":"r1"'
mkdir -p "$DIR"; chmod 700 "$XDG_STATE_HOME/vault-run" "$DIR"
L1="$DIR/r1.jsonl"
chain "$L1" \
 '"ts":"2020-12-01T10:00:00.000000Z",'"$R"',"op":"run-start","path":"","result":"ok","command":"opencode run fix","version":"0.1.0","pid":100' \
 '"ts":"2020-12-01T10:00:01.000000Z",'"$R"',"op":"lookup","path":".env","result":"hidden","rule":".env","rule_kind":"hide","rule_source":"built-in:1","pid":200,"comm":"cat","exe":"/usr/bin/cat"' \
 '"ts":"2020-12-01T10:00:01.500000Z",'"$R"',"op":"lookup","path":".env","result":"hidden","rule":".env","rule_kind":"hide","rule_source":"built-in:1","pid":201,"comm":"cat","exe":"/usr/bin/cat"' \
 '"ts":"2020-12-01T10:00:02.000000Z",'"$R"',"op":"read","path":"README.md","result":"ok","pid":200,"comm":"cat","exe":"/usr/bin/cat"' \
 '"ts":"2020-12-01T10:00:03.000000Z",'"$R"',"op":"read","path":"src/config.py","result":"redacted","rule":"config.py","rule_kind":"redact","rule_source":".vault-run:3","pid":300,"comm":"python3","exe":"/usr/bin/python3.11"' \
 '"ts":"2020-12-01T10:00:04.000000Z",'"$R"',"op":"create","path":"src/new.c","result":"ok","pid":300,"comm":"python3","exe":"/usr/bin/python3.11"' \
 '"ts":"2020-12-01T10:00:04.500000Z",'"$R"',"op":"close","path":"src/new.c","result":"ok","pid":300,"comm":"python3","bytes_read":0,"bytes_written":120' \
 '"ts":"2020-12-01T10:00:05.000000Z",'"$R"',"op":"open","path":".git/hooks/pre-commit","result":"readonly","rule":".git/hooks/","rule_kind":"readonly","rule_source":"built-in:40","pid":301,"comm":"sh"' \
 '"ts":"2020-12-01T10:00:05.100000Z",'"$R"',"op":"lookup","path":".git/config","result":"readonly","rule":".git/config","pid":301,"comm":"sh"' \
 '"ts":"2020-12-01T10:00:06.000000Z",'"$R"',"op":"unlink","path":"old.txt","result":"ok","pid":302,"comm":"rm"' \
 '"ts":"2020-12-01T10:00:06.500000Z",'"$R"',"op":"rename","path":"a.txt","target":"b.txt","result":"ok","pid":302,"comm":"mv"' \
 '"ts":"2020-12-01T10:00:07.000000Z",'"$R"',"op":"connect","proto":"https","host":"api.example.com","port":443,"result":"ok","rule":"api.example.com"' \
 '"ts":"2020-12-01T10:00:08.000000Z",'"$R"',"op":"connect","proto":"https","host":"evil.example","port":443,"result":"denied","rule":null' \
 '"ts":"2020-12-01T10:00:09.000000Z",'"$R"',"op":"dropped","path":"","result":"ok","count":3' \
 '"ts":"2020-12-01T10:00:10.000000Z",'"$R"',"op":"run-end","path":"","result":"ok","exit_status":3' \
 '"ts":"2020-12-01T10:00:10.000000Z",'"$R"',"op":"seal","path":"","result":"ok","records":15'
SEAL=$LAST_HASH

# The summary of the latest run (the only one), exactly.
"$VR" audit --project "$P" >"$T/sum" 2>"$T/sum.err"
cat "$T/sum"
vr_check "summary: command" grep -qx 'command    opencode run fix' "$T/sum"
vr_check "summary: duration" grep -qx 'duration   10.000 s' "$T/sum"
vr_check "summary: exit status" grep -qx 'exit       3' "$T/sum"
vr_check "summary: events and dropped" grep -qx 'events     16 (0 bad lines, 3 dropped by the writer)' "$T/sum"
vr_check "summary: sealed hash" grep -qx "hash       $SEAL (sealed)" "$T/sum"
vr_check "summary: file counts" grep -qx 'files      read 2  written 1  created 1  deleted 1  renamed 1' "$T/sum"
vr_check "summary: 3 denied (the readonly lookup is not one)" grep -qx 'denied     3 attempts' "$T/sum"
vr_check "summary: .env grouped with count 2" grep -Eq '^ +2  lookup +hidden +\.env \(built-in:1\) +\.env$' "$T/sum"
vr_check "summary: connections" grep -qx 'connections  allowed 1  denied 1' "$T/sum"
vr_check "summary: denied host listed" grep -Eq '^ +1  denied +evil\.example:443$' "$T/sum"
vr_check "summary: processes, exe kept when a record lacks it" grep -Eq '^ +3  python3 +/usr/bin/python3\.11$' "$T/sum"
vr_check "summary: nothing on stderr" [ ! -s "$T/sum.err" ]

# --json summary is one parsable object with the same numbers.
"$VR" audit --summary --json "$L1" >"$T/sum.json"
vr_check "summary --json: one line" [ "$(wc -l <"$T/sum.json")" = 1 ]
vr_check "summary --json: numbers" grep -q '"files_read":2,"files_written":1,"files_created":1,"files_deleted":1,"files_renamed":1,"denied":3,"connections_allowed":1,"connections_denied":1' "$T/sum.json"
if command -v python3 >/dev/null; then
	vr_check "summary --json: valid JSON" python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert d["exit_status"]==3 and d["read"]==["README.md","src/config.py"]' "$T/sum.json"
fi

# Filters, as JSON Lines (the records as written).
count() { "$VR" audit --json "$@" "$L1" | wc -l; }
vr_check "--denied (files and connections)" [ "$(count --denied)" = 4 ]
vr_check "--denied is records as written" cmp <("$VR" audit --json --denied "$L1" | head -1) <(sed -n 2p "$L1")
vr_check "--writes" [ "$(count --writes)" = 4 ]   # create, close(120 B), unlink, rename
vr_check "--op" [ "$(count --op lookup,connect)" = 5 ]
vr_check "--pid" [ "$(count --pid 300)" = 3 ]
vr_check "--path glob with /" [ "$(count --path 'src/*')" = 3 ]
vr_check "--path base name" [ "$(count --path '*.txt')" = 2 ]
vr_check "--path matches a rename target" [ "$(count --path b.txt)" = 1 ]
vr_check "--since/--until RFC 3339" [ "$(count --since 2020-12-01T10:00:02Z --until 2020-12-01T11:00:04+01:00)" = 3 ]
vr_check "--since relative to start" [ "$(count --since +9s)" = 3 ]
vr_check "--since 10m (ago): nothing this old" [ "$(count --since 10m)" = 0 ]
vr_check "--until 10m (ago): everything" [ "$(count --until 10m)" = 16 ]
vr_check "filters combine" [ "$(count --denied --pid 201)" = 1 ]
vr_check_not "--since nonsense is refused" "$VR" audit --since yesterday "$L1"

# The table view, and a hostile file name that must not reach the terminal raw.
"$VR" audit --op rename "$L1" >"$T/table"
vr_check "table: rename row" grep -Eq '^2020-12-01 10:00:06\.500 +rename +ok +302 +mv +a\.txt -> b\.txt$' "$T/table"
printf '{"ts":"2020-12-01T10:00:00Z","op":"create","path":"x\\u001b[2Jy\\u009b","result":"ok"}\n' >"$T/esc.jsonl"
"$VR" audit --op create "$T/esc.jsonl" >"$T/esc.out"
vr_check "table: escape sequences are shown, not sent" grep -qF 'x\x1b[2Jy\xc2\x9b' "$T/esc.out"
vr_check_not "table: no raw ESC" grep -q $'\x1b' "$T/esc.out"

# Bad lines: reported as LOG:LINE, skipped, counted; exit 0 (not --verify).
{ head -3 "$L1"; echo 'garbage'; echo '{"op":'; tail -n +4 "$L1"; } >"$T/bad.jsonl"
"$VR" audit "$T/bad.jsonl" >"$T/bad.out" 2>"$T/bad.err" && rc=0 || rc=$?
vr_check "bad lines: exit 0" [ "$rc" = 0 ]
vr_check "bad lines: LOG:LINE" grep -q "$T/bad.jsonl:4: skipped" "$T/bad.err"
vr_check "bad lines: second one" grep -q "$T/bad.jsonl:5: skipped" "$T/bad.err"
vr_check "bad lines: counted in the summary" grep -q '^events     16 (2 bad lines' "$T/bad.out"
"$VR" audit --verify "$T/bad.jsonl" >"$T/v" 2>&1 && rc=0 || rc=$?
vr_check "bad lines: --verify fails, naming the line" [ "$rc" = 1 ]
vr_check "bad lines: verify says tampered at line 4" grep -q "bad.jsonl:4: tampered" "$T/v"

# Unreadable log.
"$VR" audit "$T/nope.jsonl" 2>"$T/e" && rc=0 || rc=$?
vr_check "missing log: exit 125" [ "$rc" = 125 ]
vr_check "missing log: says why" grep -q "cannot read $T/nope.jsonl" "$T/e"
"$VR" audit --project "$P" no-such-run 2>"$T/e" && rc=0 || rc=$?
vr_check "unknown run id: exit 125" [ "$rc" = 125 ]

# verify: intact, --expect, tampered byte, deleted record, cut tail.
vr_check "verify: sealed log passes" "$VR" audit verify --project "$P" r1
vr_check "verify --expect the seal's hash" "$VR" audit verify --expect "$SEAL" "$L1"
"$VR" audit verify --expect 0000 "$L1" >/dev/null && rc=0 || rc=$?
vr_check "verify --expect another hash: exit 1" [ "$rc" = 1 ]
# The form the usage shows: --expect after the LOG is the option, not a
# second and third operand.
vr_check "verify LOG --expect the seal's hash" "$VR" audit verify "$L1" --expect "$SEAL"
vr_check "verify LOG --expect=the seal's hash" "$VR" audit verify "$L1" --expect="$SEAL"
"$VR" audit verify "$L1" --expect 0000 >"$T/v" 2>&1 && rc=0 || rc=$?
vr_check "verify LOG --expect another hash: exit 1, says so" [ "$rc" = 1 ] && grep -q "is not the expected 0000" "$T/v"
"$VR" audit "$L1" --summary --json >/dev/null 2>&1 && rc=0 || rc=$?
vr_check "audit LOG --json: options after the LOG" [ "$rc" = 0 ]
sed 's/README.md/README.mD/' "$L1" >"$T/t1.jsonl"
"$VR" audit verify "$T/t1.jsonl" >"$T/v" && rc=0 || rc=$?
vr_check "verify: flipped byte is tampering at line 4" [ "$rc" = 1 ] && grep -q "t1.jsonl:4: tampered" "$T/v"
sed 6d "$L1" >"$T/t2.jsonl"
"$VR" audit verify "$T/t2.jsonl" >/dev/null && rc=0 || rc=$?
vr_check "verify: deleted record: exit 1" [ "$rc" = 1 ]
head -n 10 "$L1" >"$T/t3.jsonl"
"$VR" audit verify "$T/t3.jsonl" >"$T/v" && rc=0 || rc=$?
vr_check "verify: cut tail is unsealed (exit 2)" [ "$rc" = 2 ] && grep -q unsealed "$T/v"
"$VR" audit verify "$T/esc.jsonl" >/dev/null && rc=0 || rc=$?
vr_check "verify: a log without chain says so (exit 3)" [ "$rc" = 3 ]

# Rotation: LOG.1 is read before LOG, and verify follows the chain across.
RL="$T/rot.jsonl"
chain "$RL.1" '"ts":"2020-12-01T12:00:00Z","op":"run-start","command":"rot"' '"ts":"2020-12-01T12:00:01Z","op":"read","path":"one","result":"ok"'
SEQ0=2 PREV0=$LAST_HASH chain "$RL" '"prev":"'"$LAST_HASH"'","ts":"2020-12-01T12:00:02Z","op":"read","path":"two","result":"ok"' '"ts":"2020-12-01T12:00:03Z","op":"run-end","exit_status":0' '"ts":"2020-12-01T12:00:03Z","op":"seal","records":4'
vr_check "rotation: records of both parts, in order" [ "$("$VR" audit --json --op read "$RL" | grep -o '"path":"[a-z]*"' | tr '\n' ' ')" = '"path":"one" "path":"two" ' ]
vr_check "rotation: summary over both" grep -qx 'files      read 2  written 0  created 0  deleted 0  renamed 0' <("$VR" audit "$RL")
vr_check "rotation: verify passes across parts" "$VR" audit verify "$RL"
mv "$RL.1" "$T/rot-first"
"$VR" audit verify "$RL" >"$T/v" && rc=0 || rc=$?
vr_check "rotation: a missing first part is tampering" [ "$rc" = 1 ] && grep -q "does not continue" "$T/v"

# A second run; list shows both, oldest first; the default is the latest.
L2="$DIR/r2.jsonl"
chain "$L2" \
 '"ts":"2020-12-01T11:00:00Z","run":"r2","op":"run-start","path":"","result":"ok","command":"sh -c true"' \
 '"ts":"2020-12-01T11:00:01Z","run":"r2","op":"setxattr","path":"f","result":"EPERM","pid":5,"comm":"setfattr"'
touch -d '2020-12-01 09:00' "$L1"
"$VR" audit list --project "$P" >"$T/list"
cat "$T/list"
vr_check "list: header + 2 runs" [ "$(wc -l <"$T/list")" = 3 ]
vr_check "list: r1 first with exit, counts, command" grep -Eq '^r1 +2020-12-01 10:00:00 +10\.0s +3 +16 +3 +4 +opencode run fix$' "$T/list"
vr_check "list: r2 has no exit yet" grep -Eq '^r2 +2020-12-01 11:00:00 +1\.0s +none +2 +1 +0 +sh -c true$' "$T/list"
vr_check "list --json" [ "$("$VR" audit list --json --project "$P" | grep -c '"run":"r')" = 2 ]
vr_check "default is the latest run" grep -qx 'command    sh -c true' <("$VR" audit --project "$P")

# --follow: records appear as written, across truncation and rotation, and
# it ends by itself after run-end.
F="$T/live.jsonl"
printf '{"ts":"2020-12-01T12:00:00Z","op":"run-start","command":"x"}\n' >"$F"
"$VR" audit --follow --json "$F" >"$T/follow.out" 2>"$T/follow.err" &
fpid=$!
wait_lines() {  # wait_lines N: until follow.out has N lines (30 s at most)
	local i
	for i in $(seq 1 300); do
		[ "$(wc -l <"$T/follow.out")" -ge "$1" ] && return 0
		sleep 0.1
	done
	return 1
}
vr_check "follow: existing record" wait_lines 1
printf '{"ts":"2020-12-01T12:00:01Z","op":"read","path":"one"' >>"$F"
sleep 0.3
vr_check "follow: half a line is held back" [ "$(wc -l <"$T/follow.out")" = 1 ]
printf '}\n' >>"$F"
vr_check "follow: completed line" wait_lines 2
: >"$F"
printf '{"ts":"2020-12-01T12:00:02Z","op":"read","path":"after-truncate"}\n' >>"$F"
vr_check "follow: after truncation" wait_lines 3
mv "$F" "$F.1"
printf '{"ts":"2020-12-01T12:00:03Z","op":"read","path":"rotated"}\n' >"$F"
vr_check "follow: after rotation" wait_lines 4
printf '{"ts":"2020-12-01T12:00:04Z","op":"run-end","exit_status":0}\n' >>"$F"
vr_check "follow: run-end" wait_lines 5
ended=no
for i in $(seq 1 300); do kill -0 "$fpid" 2>/dev/null || { ended=yes; break; }; sleep 0.1; done
vr_check "follow: stops after run-end" [ "$ended" = yes ]
wait "$fpid" && rc=0 || rc=$?
vr_check "follow: exit 0" [ "$rc" = 0 ]
vr_check "follow: in order" [ "$(grep -o '"path":"[a-z-]*"' "$T/follow.out" | tr '\n' ' ')" = '"path":"one" "path":"after-truncate" "path":"rotated" ' ]

# --follow ends on SIGINT too.
printf '{"op":"run-start"}\n' >"$T/live2.jsonl"
"$VR" audit -f "$T/live2.jsonl" >/dev/null 2>&1 &
fpid=$!
sleep 0.3
kill -INT "$fpid"
ended=no
for i in $(seq 1 300); do kill -0 "$fpid" 2>/dev/null || { ended=yes; break; }; sleep 0.1; done
vr_check "follow: Ctrl-C ends it" [ "$ended" = yes ]
wait "$fpid" 2>/dev/null || true

vr_done
