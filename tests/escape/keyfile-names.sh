#!/usr/bin/env bash
# Keys in files (docs/network.md "Keys in files"): the agent tries to get a
# key file's real values out of the view by another name or by cutting a
# value: a hard link, a rename away and back, one byte poked into a
# sentinel, a truncation in the middle of a value, a rewrite with O_TRUNC
# in two writes that split a sentinel. Each shows only sentinels inside;
# the host keeps whole real values or none. Then the host's harness
# changes the file during the run (a value the view does not know): the
# file is refused inside, never served. The agent's own rewrite by rename
# (os.replace, jq > tmp && mv) leaves the real values on the host and
# sentinels in its temp file's descriptors. The control: the same profile
# without [keys] shows the real values. --net none: no proxy is needed
# for the files to be masked (a warning says the logins cannot work).
. "$(dirname "$0")/../lib/libtest.sh"
. "$(dirname "$0")/../lib/sandbox-lib.sh"
vr_require_sandbox

vr_private_home .kf
ACCESS=sk-ant-oat01-RealAccess0123456789abcdefghijKLMN
REFRESH=rt01-RealRefresh0123456789abcdefghijKLMNOPQ
F="$HOME/.kf/creds.json"
creds() { printf '{"a": "%s", "r": "%s", "n": 1}\n' "${1:-$ACCESS}" "$REFRESH" >"$F"; chmod a+rw "$F"; }
chmod a+rwx "$HOME/.kf" "$P"
for p in kf kfplain; do
	printf '[profile]\ndescription = t\n[paths]\nrw = ~/.kf\n' >"$XDG_CONFIG_HOME/vault-run/profiles/$p.profile"
done
printf '[keys]\nfile = ~/.kf/creds.json:a@api.example.com;~/.kf/creds.json:r\n' >>"$XDG_CONFIG_HOME/vault-run/profiles/kf.profile"

ATTACK='cd ~/.kf
ln creds.json hard && echo "hard $(cat hard)"; rm -f hard
mv creds.json away && echo "away $(cat away)" && mv away creds.json
printf Z | dd of=creds.json bs=1 seek=40 conv=notrunc 2>/dev/null; echo "poked $(cat creds.json)"'
CUT='cd ~/.kf; truncate -s 30 creds.json; echo "cut $(cat creds.json)"'
SPLIT='cd ~/.kf; s=$(cat creds.json); python3 -c "
import os, sys
s = sys.argv[1].encode(); fd = os.open(\"creds.json\", os.O_WRONLY | os.O_TRUNC)
os.write(fd, s[:25]); os.write(fd, s[25:] + b\"\\n\"); os.close(fd)" "$s"; echo "split $(cat creds.json)"'

inside() { "$VR" --project "$P" --profile "$1" --net none --quiet -- sh -c "$2" 2>"$T/err"; }

creds
out=$(inside kfplain "$ATTACK")
vr_check "control: without [keys], the hard link shows the real value" grep -q "^hard .*$ACCESS" <<<"$out"

creds
out=$(inside kf "$ATTACK")
vr_check "a hard link to the key file shows the sentinel" grep -q '^hard {"a": "sk-ant-oat01-' <<<"$out"
vr_check "… so does the file renamed away" grep -q '^away {"a": "sk-ant-oat01-' <<<"$out"
vr_check_not "no real value by any name" grep -q "RealAccess\|RealRefresh" <<<"$out"
vr_check "a byte poked into a sentinel reads back poked" grep -q '^poked {"a": "sk-ant-oat01-.*Z' <<<"$out"
vr_check "… and on the host it leaves no part of the real value (the real refresh token stays)" \
	bash -c "! grep -q RealAccess '$F' && grep -q '\"r\": \"$REFRESH\"' '$F'"

creds
out=$(inside kf "$CUT")
vr_check "a truncation in the middle of a value shows the sentinel's start" grep -q '^cut {"a": "sk-ant-oat01-' <<<"$out"
vr_check_not "… and the host gets no part of the real value" grep -q "RealAcc" "$F"

creds
out=$(inside kf "$SPLIT")
vr_check "a rewrite in two writes that split a sentinel reads back whole" grep -q '^split {"a": "sk-ant-oat01-' <<<"$out"
vr_check "… and the host has the whole real values again" grep -q "\"a\": \"$ACCESS\", \"r\": \"$REFRESH\"" "$F"

# The host's harness refreshes its token during the run.
creds
rm -f "$P/ready" "$P/go"
( for _ in $(seq 1 200); do [ -e "$P/ready" ] && break; sleep 0.05; done
  creds sk-ant-oat01-NewAccess9876543210abcdefghijKLMNO; touch "$P/go" ) &
out=$(inside kf 'cd ~/.kf; echo "first $(cat creds.json)"; touch '"$P"'/ready
for i in $(seq 1 100); do [ -e '"$P"'/go ] && break; sleep 0.05; done; sleep 0.3
cat creds.json >/dev/null 2>&1 && echo "second $(cat creds.json)" || echo refused')
wait
vr_check "before the host's change: the sentinel" grep -q '^first {"a": "sk-ant-oat01-' <<<"$out"
vr_check "after it: the file is refused inside, not served" grep -qx refused <<<"$out"
vr_check_not "… the new value never shows" grep -q "NewAccess" <<<"$out"
vr_check "… and the run says why" grep -q "changed outside the view" "$T/err"

# … or puts a new file at its name (write and rename, as editors do).
creds
rm -f "$P/ready" "$P/go"
( for _ in $(seq 1 200); do [ -e "$P/ready" ] && break; sleep 0.05; done
  printf '{"a": "sk-ant-oat01-NewAccess9876543210abcdefghijKLMNO"}\n' >"$F.new"; chmod a+rw "$F.new"
  mv "$F.new" "$F"; touch "$P/go" ) &
out=$(inside kf 'cd ~/.kf; echo "first $(cat creds.json)"; touch '"$P"'/ready
for i in $(seq 1 100); do [ -e '"$P"'/go ] && break; sleep 0.05; done; sleep 0.3
cat creds.json >/dev/null 2>&1 && echo "second $(cat creds.json)" || echo refused')
wait
vr_check "a new file the host renamed there is refused inside too" grep -qx refused <<<"$out"
vr_check_not "… its value never shows" grep -q "NewAccess" <<<"$out"

# The agent's own rewrite by rename (write a copy, rename it over, as
# harnesses and editors save): python's os.replace, then jq (or sed) > tmp
# && mv, each with a descriptor of its temp file opened before the rename.
# The daemon puts its own unmasked copy there (docs/network.md): the host
# file holds the real values with the change, the agent's temp file (and
# its old descriptors) only sentinels. In no-open mode and in open mode.
cat >"$P/rename.py" <<'EOF'
import ctypes, errno, os, shutil, subprocess
os.chdir(os.path.expanduser("~/.kf"))
f = "creds.json"
s = open(f).read()
with open("tmp1", "w") as h:
    h.write(s.replace('"n": 1', '"n": 2'))
kept = os.open("tmp1", os.O_RDONLY)
os.replace("tmp1", f)
print("replaced " + open(f).read().strip())
print("kept " + os.pread(kept, 4096, 0).decode().strip())
edit = "jq -c '.n = 3'" if shutil.which("jq") else "sed 's/\"n\": 2/\"n\": 3/'"
subprocess.run(["sh", "-c", edit + ' creds.json >tmp.json && exec 3<tmp.json && mv tmp.json creds.json'
                ' && echo "mv $(cat creds.json)" && echo "kept2 $(cat <&3)"'])
# An exchange would put the agent's file there as it is; a hard link would
# leave it a raw second name: refused. NOREPLACE keeps its meaning.
libc = ctypes.CDLL(None, use_errno=True)
open("x", "w").write("{}")
for tag, flag in (("exchange", 2), ("noreplace", 1)):
    r = libc.renameat2(-100, b"x", -100, f.encode(), flag)
    print("%s %s" % (tag, "ok" if r == 0 else errno.errorcode[ctypes.get_errno()]))
os.rename(f, "moved.json")
try:
    os.link("x", f)
    print("link ok")
except OSError as e:
    print("link " + errno.errorcode[e.errno])
os.rename("moved.json", f)
os.unlink("x")
print("names " + " ".join(sorted(os.listdir("."))))
EOF
for mode in noopen open; do
	extra=()
	[ "$mode" = open ] && extra=(--audit-level opens)
	creds
	out=$("$VR" --project "$P" --profile kf --net none --quiet "${extra[@]}" -- python3 "$P/rename.py" 2>"$T/err")
	vr_check "[$mode] os.replace over the key file reads back with sentinels and the change" \
		grep -q '^replaced {"a": "sk-ant-oat01-.*"n": 2' <<<"$out"
	vr_check "[$mode] … and so does jq > tmp && mv tmp" grep -Eq '^mv \{"a": ?"sk-ant-oat01-.*"n": ?3' <<<"$out"
	vr_check "[$mode] descriptors of the temp files opened before the renames show the sentinels" \
		bash -c "grep -q '^kept {\"a\": \"sk-ant-oat01-' <<<'$out' && grep -q '^kept2 .*sk-ant-oat01-' <<<'$out'"
	vr_check_not "[$mode] no real value inside" grep -q "RealAccess\|RealRefresh" <<<"$out"
	vr_check "[$mode] on the host: the real values (the concealed refresh token the host's) with the change" \
		bash -c "grep -q '$ACCESS' '$F' && grep -q '$REFRESH' '$F' && grep -Eq '\"n\": ?3' '$F'"
	vr_check "[$mode] … and keeps the key file's mode, not the temp file's ($(stat -c %a "$F"))" \
		test "$(stat -c %a "$F")" = 666
	vr_check "[$mode] an exchange with the key file is refused (EXDEV)" grep -qx "exchange EXDEV" <<<"$out"
	vr_check "[$mode] RENAME_NOREPLACE onto it still says EEXIST" grep -qx "noreplace EEXIST" <<<"$out"
	vr_check "[$mode] a hard link of the agent's file at a key path is refused" grep -qx "link EACCES" <<<"$out"
	vr_check "[$mode] no temp file is left, inside or on the host" \
		bash -c "grep -qx 'names creds.json' <<<'$out' && test \"\$(ls -A '$HOME/.kf')\" = creds.json"
done
# A key file removed inside: new files that get its inode number are
# not taken for it (refused as a key file the run does not know).
creds
out=$(inside kf 'cd ~/.kf; rm creds.json; n=0; for i in $(seq 1 30); do echo "{}" >f$i; cat f$i >/dev/null 2>&1 || n=$((n+1)); done; echo "unreadable $n"; rm -f f*')
vr_check "after the key file's removal every new file reads" grep -qx "unreadable 0" <<<"$out"

# The daemon's copy in the making has a name the view hides: no handle on
# it (and on the real values it holds) may reach the agent.
echo probe >"$HOME/.kf/.vault-run-gate.probe"
out=$(inside kf 'cat ~/.kf/.vault-run-gate.probe 2>&1 || echo refused')
vr_check "the daemon's temp name is hidden in a key file's directory" grep -qx refused <<<"$out"
rm -f "$HOME/.kf/.vault-run-gate.probe"
vr_done
