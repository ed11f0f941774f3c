#!/usr/bin/env bash
# Keys in files (docs/network.md "Keys in files", "A key file removed and
# made anew"): the agent (or a harness that saves by unlink + create, or a
# logout followed by a login) removes a key file and makes a new one at its
# name, writing the sentinels it read back into it: by O_CREAT (a shell's
# `>`, O_EXCL), by mknod, by renaming a new file over the absent name, or
# by moving a directory that holds a file at a key path's place (mv falls
# back to a copy). The host file then holds the real values, and inside it
# reads with sentinels. Whatever is not a regular file at a key file's
# name is refused: a symlink (the host's harness would follow it after the
# run), a directory, a fifo, by creation or by rename. A logout (unlink)
# is allowed, and a new login written inside is kept as written. In
# no-open mode and in open mode (--audit-level opens).
. "$(dirname "$0")/../lib/libtest.sh"
. "$(dirname "$0")/../lib/sandbox-lib.sh"
vr_require_sandbox
vr_require_cmd python3

vr_private_home .kf/sub
ACCESS=sk-ant-oat01-RealAccess0123456789abcdefghijKLMN
REFRESH=rt01-RealRefresh0123456789abcdefghijKLMNOPQ
SUBTOK=sk-RealSubToken0123456789abcdefghijKLMNOP
F="$HOME/.kf/creds.json"
G="$HOME/.kf/sub/c.json"
creds() {
	rm -rf "$HOME/.kf"
	mkdir -p "$HOME/.kf/sub"
	printf '{"a": "%s", "r": "%s", "n": 1}\n' "$ACCESS" "$REFRESH" >"$F"
	printf '{"t": "%s"}\n' "$SUBTOK" >"$G"
	chmod -R a+rwX "$HOME/.kf"
	chmod a+rw "$F" "$G"
}
chmod a+rwx "$P"
printf '[profile]\ndescription = t\n[paths]\nrw = ~/.kf\n[keys]\nfile = ~/.kf/creds.json:a@api.example.com;~/.kf/creds.json:r;~/.kf/sub/c.json:t\n' \
	>"$XDG_CONFIG_HOME/vault-run/profiles/kf.profile"

cat >"$P/recreate.py" <<'EOF'
import errno, os, stat, subprocess
os.chdir(os.path.expanduser("~/.kf"))
f = "creds.json"
def err(fn):
    try:
        fn()
        return "ok"
    except OSError as e:
        return errno.errorcode[e.errno]
def show(tag):
    print("%s %s" % (tag, open(f).read().strip()))
masked = open(f).read()
print("before " + masked.strip())
# 1. unlink + a shell's `>` (O_CREAT|O_TRUNC), the sentinels written back.
os.unlink(f)
subprocess.run(["sh", "-c", 'printf "%s" "$1" >creds.json', "sh", masked.replace('"n": 1', '"n": 2')])
show("shell")
subprocess.run(["cp", f, "/tmp/host1"])
# 2. unlink + O_CREAT|O_EXCL in two writes that split a sentinel.
s = open(f).read().replace('"n": 2', '"n": 3').encode()
os.unlink(f)
fd = os.open(f, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
os.write(fd, s[:25]); os.write(fd, s[25:]); os.close(fd)
show("excl")
print("mode %o" % stat.S_IMODE(os.stat(f).st_mode))
# A descriptor of the new file kept open reads sentinels too.
kept = os.open(f, os.O_RDONLY)
# 3. unlink + mknod(S_IFREG) + a write.
s = open(f).read().replace('"n": 3', '"n": 4')
os.unlink(f)
os.mknod(f, stat.S_IFREG | 0o600)
with open(f, "w") as h:
    h.write(s)
show("mknod")
print("kept " + os.pread(kept, 4096, 0).decode().strip())
# 4. Not a regular file at the key file's name: refused.
s = open(f).read()
os.unlink(f)
print("symlink " + err(lambda: os.symlink("/tmp/elsewhere", f)))
print("mkdir " + err(lambda: os.mkdir(f)))
print("mkfifo " + err(lambda: os.mkfifo(f)))
os.mkdir("d"); os.symlink("/tmp/elsewhere", "l")
print("rename-dir " + err(lambda: os.rename("d", f)))
print("rename-symlink " + err(lambda: os.rename("l", f)))
print("symlink-above " + err(lambda: (os.rename("sub", "sub.old"), os.symlink("/tmp", "sub"))))
os.rmdir("d"); os.unlink("l")
if os.path.lexists("sub"):
    os.unlink("sub")
# 5. A new file renamed over the absent name.
with open("tmp", "w") as h:
    h.write(s.replace('"n": 4', '"n": 5'))
os.rename("tmp", f)
show("renamed")
# 6. A directory moved to a key file's directory: refused (EXDEV), so mv
# copies it, and the copy's file at the key path is a key file.
sub = open("sub.old/c.json").read()
os.mkdir("other")
with open("other/c.json", "w") as h:
    h.write(sub)
print("rename-parent " + err(lambda: os.rename("other", "sub")))
subprocess.run(["mv", "other", "sub"])
print("sub " + open("sub/c.json").read().strip())
subprocess.run(["rm", "-rf", "sub.old"])
# Nothing real anywhere inside.
r = subprocess.run(["grep", "-rlE", "R[e]al(Access|Refresh|Sub)", os.path.expanduser("~"), "/tmp"], capture_output=True)
print("grep-real [%s]" % r.stdout.decode().strip())
print("names " + " ".join(sorted(os.listdir("."))))
EOF

cat >"$P/logout.py" <<'EOF'
import os
os.chdir(os.path.expanduser("~/.kf"))
os.unlink("creds.json")
print("gone " + str(not os.path.exists("creds.json")))
EOF
LOGIN='{"a": "sk-ant-oat01-FreshLogin0123456789abcdefghijKLMN"}'

for mode in noopen open; do
	extra=()
	[ "$mode" = open ] && extra=(--audit-level opens)
	creds
	out=$("$VR" --project "$P" --profile kf --net none --quiet "${extra[@]}" -- python3 "$P/recreate.py" 2>"$T/err" || true)
	echo "$out" | sed "s/^/[$mode] /"
	vr_check "[$mode] the file reads with sentinels before" grep -q '^before {"a": "sk-ant-oat01-' <<<"$out"
	for tag in shell excl mknod renamed; do
		vr_check "[$mode] made anew ($tag): it reads back with sentinels and the change" \
			grep -q "^$tag {\"a\": \"sk-ant-oat01-" <<<"$out"
	done
	vr_check "[$mode] … a descriptor of the new file opened before a write shows the sentinels" \
		grep -q '^kept {"a": "sk-ant-oat01-' <<<"$out"
	vr_check "[$mode] … the new file keeps the mode the agent gave it" grep -qx "mode 600" <<<"$out"
	vr_check_not "[$mode] no real value inside, not even in a copy to /tmp" grep -q "RealAccess\|RealRefresh\|RealSub" <<<"$out"
	vr_check "[$mode] on the host: the real values (the concealed refresh token the host's) with the change" \
		bash -c "grep -q '\"a\": \"$ACCESS\", \"r\": \"$REFRESH\", \"n\": 5' '$F'"
	for tag in symlink mkdir mkfifo rename-dir rename-symlink symlink-above; do
		vr_check "[$mode] $tag at a key file's name is refused" grep -Eq "^$tag (EACCES|EPERM)$" <<<"$out"
	done
	vr_check "[$mode] a directory moved to a key file's directory is refused with EXDEV" \
		grep -qx "rename-parent EXDEV" <<<"$out"
	vr_check "[$mode] … mv copies it, and the copy reads with the sentinel" grep -q '^sub {"t": "sk-' <<<"$out"
	vr_check "[$mode] … and holds the real value on the host" grep -q "\"t\": \"$SUBTOK\"" "$G"
	vr_check "[$mode] nothing else is left on the host" \
		test "$(cd "$HOME/.kf" && echo $(ls -A))" = "creds.json sub"
	vr_check "[$mode] the grep of every file inside found no real value" grep -qx "grep-real \[\]" <<<"$out"

	# A logout is allowed: the host's login goes with it.
	creds
	out=$("$VR" --project "$P" --profile kf --net none --quiet "${extra[@]}" -- python3 "$P/logout.py" 2>"$T/err" || true)
	vr_check "[$mode] a logout (unlink) is allowed" grep -qx "gone True" <<<"$out"
	vr_check "[$mode] … and removes the host's file" test ! -e "$F"
	# … and a new login written inside is kept as it is.
	creds
	"$VR" --project "$P" --profile kf --net none --quiet "${extra[@]}" -- \
		sh -c "rm ~/.kf/creds.json && printf '%s\n' '$LOGIN' >~/.kf/creds.json" 2>"$T/err" || true
	vr_check "[$mode] a login made inside is written to the host as it is" grep -qxF "$LOGIN" "$F"

	# A login on the host during the run (the key file absent at the start,
	# or without a value): what the host writes there is refused inside,
	# never served with the real values.
	for start in absent empty; do
		creds
		rm -f "$F" "$P/ready"
		[ "$start" = empty ] && printf '{"n": 0}\n' >"$F" && chmod a+rw "$F"
		"$VR" --project "$P" --profile kf --net none --quiet "${extra[@]}" -- sh -c '
			cat ~/.kf/creds.json 2>/dev/null | sed "s/^/start /"; : >"$1/ready"
			for i in $(seq 200); do grep -q RealAccess ~/.kf/creds.json 2>/dev/null && break
				[ -s ~/.kf/creds.json ] && ! grep -q "\"n\": 0" ~/.kf/creds.json 2>/dev/null && break; sleep 0.05; done
			cat ~/.kf/creds.json; echo "cat=$?"' sh "$P" >"$T/hl.out" 2>"$T/hl.err" &
		run=$!
		for _ in $(seq 400); do [ -e "$P/ready" ] && break; sleep 0.05; done
		printf '{"a": "%s", "r": "%s", "n": 9}\n' "$ACCESS" "$REFRESH" >"$F.new" && mv "$F.new" "$F"
		wait "$run" || true
		[ "$start" = empty ] && vr_check "[$mode] ($start) the file's start content reads inside" grep -qx 'start {"n": 0}' "$T/hl.out"
		vr_check_not "[$mode] ($start) a login on the host during the run: no real value inside" \
			grep -q "RealAccess\|RealRefresh" "$T/hl.out"
		vr_check "[$mode] ($start) … the read is refused" grep -q 'cat=1' "$T/hl.out"
	done
done
vr_done
