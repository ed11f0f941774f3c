#!/usr/bin/env bash
# No-open mode (fusefs/file-handles.c; docs/view.md "Opens the kernel does
# itself"): below audit level "opens" the kernel opens and closes files and
# directories without asking the daemon. Expected:
# 1. the mode is on: opening .git/config for writing succeeds, the write is
#    refused (EACCES) and logged as a "write" refusal; O_TRUNC is refused as
#    a "setattr"; the host file is unchanged;
# 2. what open files must keep doing, as on the host: a file unlinked while
#    open is read and written through its fd; a file created 0444 is written
#    by its creator; a hard-linked file one of whose names was removed stays
#    writable through the other; created and removed files leave no
#    descriptor behind in the daemon (the kernel releases nothing here);
# 3. a file the agent holds open (not read yet) that the host moves to a
#    hidden name and fills with a secret gives nothing of it;
# 3b. host writes interleaved with the view's own are all seen inside (the
#    watch skips only the events of the view's own changes);
# 4. listings without OPENDIR: a directory of 3,000 names (many READDIR
#    requests, each resuming at its offset) lists every visible name once
#    and no hidden one;
# 5. at level "opens" the kernel still sends OPEN: the refusal is at open.
. "$(dirname "$0")/../lib/libtest.sh"
. "$(dirname "$0")/../lib/view-lib.sh"
vr_require_fuse
vr_require_cmd python3

P="$T/project" M="$T/view"
view_make_demo "$P"
echo notes >"$P/notes.txt"
echo linked >"$P/a.txt"
mkdir -p "$P/big"
for i in $(seq -w 1 3000); do
	if [ $((10#$i % 100)) = 0 ]; then : >"$P/big/id_rsa_$i"; else : >"$P/big/file-with-a-long-name-$i.txt"; fi
done
cp "$P/.git/config" "$T/gitconfig.orig"

vr_mount "$P" "$M" --audit "$T/audit.jsonl" --hide 'big/id_rsa_*' || vr_skip "cannot mount a FUSE view here"
L="$T/audit.jsonl"

# --- 1 ---
out=$(python3 - "$M/.git/config" <<'PY'
import errno, os, sys
fd = os.open(sys.argv[1], os.O_WRONLY | os.O_APPEND)
try:
    os.write(fd, b"[core]\n\thooksPath = /tmp/evil\n")
    print("written")
except OSError as e:
    print(errno.errorcode[e.errno])
finally:
    os.close(fd)
PY
) || out="open failed"
vr_check "the open for writing succeeds, the write is refused with EACCES ($out)" test "$out" = EACCES
vr_check_not "O_TRUNC of .git/config is refused" sh -c ": >'$M/.git/config'"
vr_check ".git/config is unchanged on the host" cmp "$T/gitconfig.orig" "$P/.git/config"

# --- 2 ---
vr_check "a file unlinked while open is written and read back through its fd" python3 - "$M/tmpfile" <<'PY'
import os, sys
fd = os.open(sys.argv[1], os.O_RDWR | os.O_CREAT | os.O_EXCL, 0o600)
os.unlink(sys.argv[1])
os.write(fd, b"x" * 70000)
os.pwrite(fd, b"tail", 70000)
assert os.pread(fd, 4, 70000) == b"tail"
assert os.pread(fd, 70004, 0) == b"x" * 70000 + b"tail"
os.close(fd)
PY
vr_check "a file created read-only (0444, as git's objects) is written by its creator" python3 - "$M/obj" <<'PY'
import os, sys
fd = os.open(sys.argv[1], os.O_RDWR | os.O_CREAT | os.O_EXCL, 0o444)
os.write(fd, b"blob")
os.close(fd)
assert open(sys.argv[1], "rb").read() == b"blob"
PY
# CREATE's own fd is the first write handle (vr_handle_adopt_created): the
# write still lands, at the kernel's offsets, and is logged once.
vr_check "a file created O_EXCL and written twice holds both writes" python3 - "$M/made.txt" <<'PY'
import os, sys
fd = os.open(sys.argv[1], os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_APPEND, 0o644)
os.write(fd, b"one\n")
os.write(fd, b"two\n")
os.close(fd)
PY
vr_check "… on the host" sh -c "test \"\$(cat '$P/made.txt')\" = \"\$(printf 'one\ntwo')\""
vr_check "… and its first write is logged" view_wait_grep "$L" '"op":"write","path":"made.txt","result":"ok"'
vr_check "a file the host removes while it is open still reads" python3 - "$M/notes.txt" "$P/notes.txt" <<'PY'
import os, sys
fd = os.open(sys.argv[1], os.O_RDONLY)
os.unlink(sys.argv[2])
assert os.read(fd, 100) == b"notes\n"
PY
fds() { ls "/proc/$VR_MOUNT_PID/fd" | wc -l; }
before=$(fds)
mkdir "$M/many"
for i in $(seq 1 400); do echo "$i" >"$M/many/f$i"; done
python3 - "$M/many" <<'PY'
import os, sys
for i in range(40):
    fd = os.open(os.path.join(sys.argv[1], "ro%d" % i), os.O_RDWR | os.O_CREAT | os.O_EXCL, 0o444)
    os.write(fd, b"object")
    os.close(fd)
PY
rm -rf "$M/many"
sleep 1
vr_check "no descriptor stays behind per created file (daemon fds: $before before 440 files, $(fds) after)" \
	test "$(fds)" -lt $((before + 40))
ln "$M/a.txt" "$M/c.txt"
rm "$M/c.txt"
vr_check "a hard-linked file whose other name was removed stays writable" sh -c "echo more >>'$M/a.txt'"
vr_check "… and the write reached the host" grep -q more "$P/a.txt"

# --- 3 ---
echo harmless >"$P/moved.txt"
exec 7<"$M/moved.txt"
mv "$P/moved.txt" "$P/.env.moved"
echo 'API_KEY=sk-live-not-for-the-agent' >"$P/.env.moved"
sleep 0.5
got=$(cat <&7 2>/dev/null || true)
exec 7<&-
vr_check_not "the secret the host wrote after moving it to a hidden name is not served ($got)" \
	grep -q sk-live <<<"$got"

# --- 3b: the host watch ignores the view's own changes, not the host's ---
printf 'start\n' >"$M/own.txt"
seen=0
for i in $(seq 1 10); do
	printf 'view %s\n' "$i" >>"$M/own.txt"
	cat "$M/own.txt" >/dev/null            # attributes and pages cached again
	printf 'host %s\n' "$i" >>"$P/own.txt" # right after the view's own write
	for k in $(seq 1 50); do
		if grep -qx "host $i" "$M/own.txt"; then seen=$((seen + 1)); break; fi
		sleep 0.1
	done
done
vr_check "host writes right after the view's own are seen inside ($seen of 10)" test "$seen" = 10

# --- 4 ---
python3 - "$M/big" >"$T/listing" <<'PY'
import os, sys
names = os.listdir(sys.argv[1])
print(len(names), len(set(names)), sum(n.startswith("id_rsa") for n in names))
PY
vr_check "3,000 names: the 2,970 visible listed once each, no hidden one ($(cat "$T/listing"))" \
	test "$(cat "$T/listing")" = "2970 2970 0"
vr_unmount

vr_check "the refused write is logged with the process" \
	grep -q '"op":"write","path":".git/config","result":"readonly","rule":"[^"]*","rule_kind":"readonly".*"comm":"python3"' "$L"
vr_check "the refused truncation is logged" grep -q '"op":"setattr","path":".git/config","result":"readonly"' "$L"

# --- 5 ---
vr_mount "$P" "$M" --audit "$T/opens.jsonl" --audit-level opens || vr_fail "mount at level opens"
vr_check_not "at level opens the open for writing itself is refused" \
	python3 -c 'import os, sys; os.close(os.open(sys.argv[1], os.O_WRONLY))' "$M/.git/config"
vr_unmount
vr_check "… and logged as an open" grep -q '"op":"open","path":".git/config","result":"readonly"' "$T/opens.jsonl"
view_done
