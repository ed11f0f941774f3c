#!/usr/bin/env bash
# The syslog sink (docs/audit.md, "Sinks"): with `--audit state,syslog` every
# record of the run's log also goes to syslog(3), one message each, the same
# bytes in the same order, and the final hash follows in an "audit run R
# sealed" notice. syslog(3) writes to /dev/log: this test puts its own
# listener there, in a private mount namespace with a /dev of its own (host
# root, hence -once; the host's /dev is not touched).
. "$(dirname "$0")/../lib/libtest.sh"
. "$(dirname "$0")/../lib/view-lib.sh"
. "$(dirname "$0")/../lib/sandbox-lib.sh"
if [ "${VR_AUDITSYSLOG_INNER:-}" != 1 ]; then
	vr_is_host_root || vr_skip "a /dev of its own needs host root"
	vr_require_cmd unshare python3
	vr_require_sandbox
	# Not exec: this shell's EXIT trap removes its own $T afterwards.
	VR_AUDITSYSLOG_INNER=1 unshare -m --propagation private bash "$0"
	exit $?
fi
# A /dev like the host's (its nodes bound in) plus our /dev/log.
mkdir -p "$T/olddev"
mount --bind /dev "$T/olddev" || vr_skip "cannot bind /dev here"
mount -t tmpfs -o mode=0755 vr-dev /dev || vr_skip "cannot mount a tmpfs on /dev here"
for e in "$T/olddev"/*; do
	n=${e##*/}
	if [ -L "$e" ]; then cp -a "$e" "/dev/$n"
	elif [ -d "$e" ]; then mkdir "/dev/$n" && mount --rbind "$e" "/dev/$n"
	else touch "/dev/$n" && mount --bind "$e" "/dev/$n"; fi
done
python3 - "$T/syslog.sock" "$T/syslog.txt" <<'PY' &
import os, socket, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
s.bind(sys.argv[1])
os.chmod(sys.argv[1], 0o666)
with open(sys.argv[2], "ab", buffering=0) as out:
    while True:
        out.write(s.recv(1 << 20).rstrip(b"\0\n") + b"\n")
PY
lpid=$!
for i in $(seq 1 100); do [ -S "$T/syslog.sock" ] && break; sleep 0.05; done
ln -s "$T/syslog.sock" /dev/log

P="$T/project"
view_make_demo "$P"
cd "$P"
export XDG_STATE_HOME="$T/xdg-state"
"$VR" --project "$P" --profile none --audit state,syslog -- sh -c 'cat README.md >/dev/null; cat .env; echo x >new.txt' \
	>"$T/run.out" 2>"$T/run.err" || true
LOG=$(ls "$XDG_STATE_HOME"/vault-run/project-*/*.jsonl)
vr_check "a state log was written" test -s "$LOG"
for i in $(seq 1 50); do grep -q 'sealed: ' "$T/syslog.txt" 2>/dev/null && break; sleep 0.1; done
kill "$lpid"
wait "$lpid" 2>/dev/null || true
# "<14>Dec  1 11:53:18 vault-run[123]: MESSAGE": keep MESSAGE.
sed -n 's/^<[0-9]*>[A-Z][a-z][a-z] [ 0-9][0-9] [0-9:]* vault-run\[[0-9]*\]: //p' "$T/syslog.txt" >"$T/messages"
vr_check "syslog got every record of the log, the same bytes, in order" cmp <(grep '^{"seq":' "$T/messages") "$LOG"
vr_check "… at priority info, facility user (<14>)" \
	test "$(grep -c '^<14>.*vault-run\[[0-9]*\]: {"seq":' "$T/syslog.txt")" = "$(wc -l <"$LOG")"
hash=$(tail -1 "$LOG" | sed -n 's/.*"hash":"\([0-9a-f]*\)"}$/\1/p')
run=$(basename "$LOG" .jsonl)
records=$(wc -l <"$LOG")
vr_check "then the seal's hash as a notice (<13>)" \
	grep -q "^<13>.*vault-run\[[0-9]*\]: audit run $run sealed: $records records, final hash $hash\$" "$T/syslog.txt"
vr_check "the summary line names the same hash" grep -q "hash $hash\$" "$T/run.err"
cd /
vr_done
