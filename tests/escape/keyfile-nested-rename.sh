#!/usr/bin/env bash
# Keys in files, a key path two directories below what the agent renames
# (docs/network.md "A key file removed and made anew"): a directory moved
# to a key path's ancestor must not bring anything but the run's own key
# file to the key path, whatever file type the attacker puts on the way.
#   * a symlink on the way (other/inner -> a directory of the attacker's,
#     holding d.json): refused with EXDEV — the host's harness would follow
#     it after the run;
#   * the agent's own file at the key path (other/inner/d.json): EXDEV, so
#     mv copies it and the copy is a key file (masked inside, real on the
#     host);
#   * a regular file on the way (other/inner is a file): nothing can be at
#     the key path below a file, so the rename is allowed; the key path then
#     fails with ENOTDIR;
#   * an empty directory moved there, then a symlink made on the way:
#     refused (a symlink above a key path);
#   * the run's own directory moved away and back: allowed, and the file
#     still reads with the sentinel.
# No real value is readable anywhere inside; the host file holds it, and
# nothing the agent made is left on the host. In no-open and open mode.
. "$(dirname "$0")/../lib/libtest.sh"
. "$(dirname "$0")/../lib/sandbox-lib.sh"
vr_require_sandbox
vr_require_cmd python3

vr_private_home .kn/deep/inner
TOKEN=sk-RealNestedToken0123456789abcdefghijKLMNOP
G="$HOME/.kn/deep/inner/d.json"
creds() {
	rm -rf "$HOME/.kn"
	mkdir -p "$HOME/.kn/deep/inner"
	printf '{"t": "%s"}\n' "$TOKEN" >"$G"
	chmod -R a+rwX "$HOME/.kn"
}
chmod a+rwx "$P"
printf '[profile]\ndescription = t\n[paths]\nrw = ~/.kn\n[keys]\nfile = ~/.kn/deep/inner/d.json:t\n' \
	>"$XDG_CONFIG_HOME/vault-run/profiles/kn.profile"

cat >"$P/nested.py" <<'EOF2'
import errno, os, shutil, subprocess
os.chdir(os.path.expanduser("~/.kn"))
def err(fn):
    try:
        fn()
        return "ok"
    except OSError as e:
        return errno.errorcode[e.errno]
masked = open("deep/inner/d.json").read()
print("before " + masked.strip())
print("away " + err(lambda: os.rename("deep", "deep.old")))
# A symlink on the way, to a directory of the attacker's.
os.makedirs("/tmp/x", exist_ok=True)
open("/tmp/x/d.json", "w").write(masked)
os.mkdir("o1"); os.symlink("/tmp/x", "o1/inner")
print("symlink-on-way " + err(lambda: os.rename("o1", "deep")))
# The agent's own file at the key path.
os.makedirs("o2/inner"); open("o2/inner/d.json", "w").write(masked)
print("own-file " + err(lambda: os.rename("o2", "deep")))
# A regular file on the way.
os.mkdir("o3"); open("o3/inner", "w").write("not a directory")
print("file-on-way " + err(lambda: os.rename("o3", "deep")))
print("key-path-under-file " + err(lambda: open("deep/inner/d.json")))
if os.path.isdir("deep"):
    shutil.rmtree("deep")
# An empty directory moved there, then a symlink on the way.
os.mkdir("o4")
print("empty-dir " + err(lambda: os.rename("o4", "deep")))
print("symlink-made-on-way " + err(lambda: os.symlink("/tmp/x", "deep/inner")))
if os.path.lexists("deep/inner"):
    os.unlink("deep/inner")
if os.path.isdir("deep"):
    os.rmdir("deep")
# The run's own directory back.
print("back " + err(lambda: os.rename("deep.old", "deep")))
print("after " + open("deep/inner/d.json").read().strip())
# mv of the agent's own file: a copy, which is a key file.
shutil.rmtree("deep")
subprocess.run(["mv", "o2", "deep"])
print("copied " + open("deep/inner/d.json").read().strip())
for d in ("o1", "o3"):
    if os.path.lexists(d):
        subprocess.run(["rm", "-rf", d])
r = subprocess.run(["grep", "-rlE", "R[e]alNested", os.path.expanduser("~"), "/tmp"], capture_output=True)
print("grep-real [%s]" % r.stdout.decode().strip())
print("names " + " ".join(sorted(os.listdir("."))))
EOF2

for mode in noopen open; do
	extra=()
	[ "$mode" = open ] && extra=(--audit-level opens)
	creds
	out=$("$VR" --project "$P" --profile kn --net none --quiet "${extra[@]}" -- python3 "$P/nested.py" 2>"$T/err" || true)
	echo "$out" | sed "s/^/[$mode] /"
	vr_check "[$mode] the nested key file reads with the sentinel" grep -q '^before {"t": "sk-' <<<"$out"
	vr_check "[$mode] the run's directory moves away" grep -qx "away ok" <<<"$out"
	vr_check "[$mode] a symlink on the way to the key path is refused (EXDEV)" grep -qx "symlink-on-way EXDEV" <<<"$out"
	vr_check "[$mode] the agent's own file at the key path is refused (EXDEV)" grep -qx "own-file EXDEV" <<<"$out"
	vr_check "[$mode] a regular file on the way is allowed" grep -qx "file-on-way ok" <<<"$out"
	vr_check "[$mode] … and the key path below it is ENOTDIR" grep -qx "key-path-under-file ENOTDIR" <<<"$out"
	vr_check "[$mode] an empty directory moves there" grep -qx "empty-dir ok" <<<"$out"
	vr_check "[$mode] … and a symlink made on the way is refused" grep -Eqx "symlink-made-on-way (EACCES|EPERM)" <<<"$out"
	vr_check "[$mode] the run's own directory moves back" grep -qx "back ok" <<<"$out"
	vr_check "[$mode] … and its file still reads with the sentinel" grep -q '^after {"t": "sk-' <<<"$out"
	vr_check "[$mode] mv's copy of the agent's file reads with the sentinel" grep -q '^copied {"t": "sk-' <<<"$out"
	vr_check_not "[$mode] no real value inside" grep -q "RealNested" <<<"$out"
	vr_check "[$mode] the grep of every file inside found no real value" grep -qx "grep-real \[\]" <<<"$out"
	vr_check "[$mode] the host file holds the real value" grep -q "\"t\": \"$TOKEN\"" "$G"
	vr_check "[$mode] nothing else is left on the host" test "$(cd "$HOME/.kn" && echo $(ls -A))" = "deep"
	vr_check_not "[$mode] no symlink under the host's directory" find "$HOME/.kn" -type l -print -quit | grep -q .
	[ "$vr_failures" = 0 ] || cat "$T/err"
done
vr_done
