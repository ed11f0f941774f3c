#!/usr/bin/env bash
# A sandbox run keeps its undo journal by default: `vault-run changes` and
# `vault-run undo` (latest run of the project) put back what the agent did;
# --journal=off keeps none; a change past the cap is named in the summary.
. "$(dirname "$0")/../lib/libtest.sh"
. "$(dirname "$0")/../lib/view-lib.sh"
. "$(dirname "$0")/../lib/sandbox-lib.sh"
vr_require_sandbox

P="$T/project"
mkdir -p "$P/src"
printf 'original\n' >"$P/src/a.txt"
printf 'keep\n' >"$P/b.txt"
cd "$P"
"$VR" --quiet --net none -- sh -c 'echo agent >src/a.txt; rm -rf src; echo new >c.txt; mv b.txt d.txt' ||
	vr_fail "the run failed"
vr_check "the agent's changes reached the host" test ! -e "$P/src" -a -f "$P/c.txt"
"$VR" changes >"$T/changes" 2>&1 || cat "$T/changes"
vr_check "changes lists the deleted file" grep -qx 'D  src/a.txt' "$T/changes"
vr_check "changes lists the rename" grep -qx 'R  b.txt -> d.txt' "$T/changes"
st=0; "$VR" undo >"$T/undo.out" 2>&1 || st=$?
vr_check "undo of the latest run succeeds" test "$st" = 0
vr_check "the file is back with its first content" test "$(cat "$P/src/a.txt")" = original
vr_check "the created file is gone" test ! -e "$P/c.txt"
vr_check "the rename is undone" test "$(cat "$P/b.txt")" = keep -a ! -e "$P/d.txt"
SD=$("$VR" audit dir --project "$P")
njournals() { find "$SD" -maxdepth 1 -name '*.journal' ! -name '*-undo-*' | wc -l; }
n=$(njournals)
vr_check "the run's journal is in the state directory" test "$n" -ge 1
"$VR" --quiet --journal=off --net none -- true || vr_fail "the run with --journal=off failed"
vr_check "--journal=off makes no journal" test "$(njournals)" = "$n"

# Names are bytes: UTF-8 and names that are not UTF-8 come back exactly
# (the journal writes a stray byte as \udcXX, which undo reads back).
U="$T/names"
mkdir -p "$U"
printf 'one\n' >"$U/café.txt"
printf 'two\n' >"$U/$(printf 'bad\377name')"
(cd "$U" && "$VR" --quiet --net none -- sh -c 'rm café.txt bad*name') || vr_fail "the run removing odd names failed"
vr_check "the odd names are gone on the host" test -z "$(ls -A "$U")"
(cd "$U" && "$VR" undo >"$T/undo-names.out" 2>&1) || cat "$T/undo-names.out"
vr_check "undo restores the UTF-8 name exactly" test "$(cat "$U/café.txt" 2>/dev/null)" = one
vr_check "undo restores the non-UTF-8 name exactly" test "$(cat "$U/$(printf 'bad\377name')" 2>/dev/null)" = two
vr_check "undo creates no other name" test "$(ls -A "$U" | wc -l)" = 2
# The agent chooses names; changes/undo must not send its escape sequences
# to the user's terminal.
(cd "$U" && "$VR" --quiet --net none -- sh -c 'printf x >"$(printf "e\033[31mred")"') || vr_fail "the run creating an escape name failed"
(cd "$U" && "$VR" changes) >"$T/changes-esc" 2>&1
vr_check "changes escapes the control character" grep -qF 'A  e\x1b[31mred' "$T/changes-esc"
vr_check "changes prints no raw ESC" test "$(tr -dc '\033' <"$T/changes-esc" | wc -c)" = 0
(cd "$U" && "$VR" undo) >"$T/undo-esc" 2>&1
vr_check "undo prints no raw ESC" test "$(tr -dc '\033' <"$T/undo-esc" | wc -c)" = 0

# Past the cap the run goes on, and its summary line says what undo cannot
# give back — without calling that a denial.
head -c 200000 /dev/zero >"$P/big.bin"
"$VR" --journal-max-size 1000 --net none -- sh -c 'echo x >>big.bin' 2>"$T/cap.err" ||
	vr_fail "the run over the journal cap failed"
cat "$T/cap.err"
vr_check "the summary names the change not kept" grep -q '1 change not kept for undo' "$T/cap.err"
vr_check "a skipped journal entry is not a denial" grep -q ', 0 denied' "$T/cap.err"
view_done
