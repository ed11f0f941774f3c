#!/usr/bin/env bash
# The audit log of a scripted session: the right events with the DESIGN.md
# schema, everything flushed on SIGTERM, and the levels filtering as
# documented (docs/audit.md).
. "$(dirname "$0")/../lib/libtest.sh"
. "$(dirname "$0")/../lib/view-lib.sh"
vr_require_fuse
vr_require_cmd python3

P="$T/project" M="$T/view"
view_make_demo "$P"
echo notes >"$P/notes.txt"

session() {
	cat "$M/README.md" >/dev/null
	cat "$M/README.md" >/dev/null          # second read: not logged again at "reads"
	printf '0123456789' >"$M/written.txt"  # create (+ write, or close with bytes_written=10 at opens)
	printf 'more' >>"$M/notes.txt"        # a write to a file that was there
	cat "$M/.env" 2>/dev/null || true       # hidden
	echo x 2>/dev/null >>"$M/.git/config" || true  # read-only
	ls "$M/src" >/dev/null
}

# checks LOG: every line is a JSON object with the schema's fields.
schema_ok() {
	python3 - "$1" <<'PY'
import json, re, sys
runs = set()
for n, line in enumerate(open(sys.argv[1]), 1):
    e = json.loads(line)
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z", e["ts"]), (n, e)
    for k in ("run", "op", "path", "result"):
        assert k in e, (n, k, e)
    runs.add(e["run"])
assert len(runs) == 1, runs
PY
}

# --- default level (reads) ---
vr_mount "$P" "$M" --audit "$T/reads.jsonl" || vr_skip "cannot mount a FUSE view here"
session
exec 8>>"$M/held.txt"   # still open at SIGTERM: the kernel will not release it in time
printf 'ab' >&8
# The request counters (fusefs/req-count.c): SIGUSR1 prints them so far.
kill -USR1 "$VR_MOUNT_PID"
vr_check "SIGUSR1 prints the request counts" view_wait_grep "$T/mount.err" '^{"requests":{.*"create":2'
vr_unmount   # SIGTERM: the writer must drain before exit
exec 8>&-
L="$T/reads.jsonl"
cat "$L"
vr_check "every line is valid JSON with the schema" schema_ok "$L"
vr_check "mount and unmount markers" sh -c "grep -q '\"op\":\"mount\"' '$L' && grep -q '\"op\":\"unmount\"' '$L'"
vr_check "the unmount marker counts the requests by opcode" grep -q '"op":"unmount".*"requests":{"lookup":[1-9][0-9]*,.*"create":2,' "$L"
vr_check "the hidden lookup is logged with its rule" grep -q '"op":"lookup","path":".env","result":"hidden","rule":".env","rule_kind":"hide","rule_source":"built-in' "$L"
vr_check "the read-only refusal is logged" grep -q '"path":".git/config","result":"readonly"' "$L"
vr_check "refusals carry the process" grep -q '"result":"hidden".*"pid":[0-9]*,"comm":"cat"' "$L"
vr_check "the first read is logged once" test "$(grep -c '"op":"read","path":"README.md"' "$L")" = 1
vr_check "a write to an existing file is logged with the process" grep -q '"op":"write","path":"notes.txt","result":"ok","pid":[0-9]*,"comm":"' "$L"
vr_check "a created file's write is logged" grep -q '"op":"write","path":"written.txt","result":"ok"' "$L"
vr_check "so is the write of a file still open at SIGTERM" grep -q '"op":"write","path":"held.txt","result":"ok"' "$L"
vr_check "create is logged" grep -q '"op":"create","path":"written.txt","result":"ok"' "$L"
vr_check_not "plain opens are not logged at reads" grep -q '"op":"open","path":"README.md"' "$L"
vr_check_not "nor closes" grep -q '"op":"close"' "$L"
vr_check_not "lookups of visible names are not logged at reads" grep -q '"op":"lookup","path":"src"' "$L"

# --- the hash chain (audit/chain.h): sealed, and any flipped byte breaks it ---
vr_check "every record is chained: seq first, hash last" python3 - "$L" <<'PY'
import json, re, sys
lines = open(sys.argv[1]).read().splitlines()
for n, line in enumerate(lines, 1):
    assert line.startswith('{"seq":%d,' % n), (n, line)
    assert re.search(r',"hash":"[0-9a-f]{64}"}$', line), (n, line)
last = json.loads(lines[-1])
assert last["op"] == "seal" and last["records"] == len(lines) - 1, last
assert last["denied"] >= 2 and last["dropped"] == 0, last
PY
vr_check "audit verify says sealed" sh -c "'$VR' audit verify '$L' | grep -q 'intact and sealed'"
vr_check "audit verify exits 0 on the intact log" "$VR" audit verify "$L"
# Flip one byte in the middle of a record (not the last line): verify fails.
cp "$L" "$T/tampered.jsonl"
python3 - "$T/tampered.jsonl" <<'PY'
import sys
p = sys.argv[1]
b = bytearray(open(p, 'rb').read())
first_nl = b.index(b'\n')
i = first_nl + 20            # inside the second record's members
b[i] = ord('X') if b[i] != ord('X') else ord('Y')
open(p, 'wb').write(bytes(b))
PY
rc=0; "$VR" audit verify "$T/tampered.jsonl" >"$T/verify.out" 2>&1 || rc=$?
cat "$T/verify.out"
vr_check "a flipped byte fails verify (exit 1)" test "$rc" = 1
vr_check "and names line 2" grep -q ':2: tampered' "$T/verify.out"
head -n -1 "$L" >"$T/cut.jsonl"
rc=0; "$VR" audit verify "$T/cut.jsonl" >/dev/null 2>&1 || rc=$?
vr_check "a cut seal is unsealed (exit 2)" test "$rc" = 2

# --- denied ---
rm -f "$P/written.txt"
vr_mount "$P" "$M" --audit "$T/denied.jsonl" --audit-level denied || vr_fail "second mount"
session
vr_unmount
L="$T/denied.jsonl"
vr_check "denied: refusals are there" grep -q '"result":"hidden"' "$L"
vr_check_not "denied: no reads" grep -q '"op":"read"' "$L"
vr_check_not "denied: no writes" grep -q '"op":"create"' "$L"

# --- opens: every open and close, with byte counts ---
rm -f "$P/written.txt" "$P/held.txt"
vr_mount "$P" "$M" --audit "$T/opens.jsonl" --audit-level opens || vr_fail "opens mount"
session
exec 8>>"$M/held.txt"
printf 'ab' >&8
vr_unmount
exec 8>&-
L="$T/opens.jsonl"
vr_check "opens: a write is logged at close with its byte count" grep -q '"op":"close","path":"written.txt".*"bytes_written":10' "$L"
vr_check "opens: a file open at SIGTERM still gets its close event" grep -q '"op":"close","path":"held.txt".*"bytes_written":2' "$L"
vr_check "opens: a read-only open is logged" grep -q '"op":"open","path":"README.md","result":"ok"' "$L"
vr_check "opens: the read-only refusal is logged at open" grep -q '"op":"open","path":".git/config","result":"readonly"' "$L"

# --- all, to stderr ---
rm -f "$P/written.txt"
: >"$T/mount.err"
vr_mount "$P" "$M" --audit - --audit-level all || vr_fail "third mount"
session
vr_unmount
L="$T/mount.err"
vr_check "all: lookups are logged (to stderr with --audit -)" grep -q '"op":"lookup","path":"README.md"' "$L"
vr_check "all: opens are logged" grep -q '"op":"open","path":"README.md"' "$L"

# --- a bad level is a one-line error, exit 125 ---
rc=0; "$VR" mount --audit-level loud "$P" "$M" 2>"$T/bad.err" || rc=$?
vr_check "a bad level exits 125" test "$rc" = 125
vr_check "with one line naming it" sh -c "test \$(wc -l <'$T/bad.err') = 1 && grep -q loud '$T/bad.err'"
view_done
