#!/usr/bin/env bash
# Keys in files (docs/network.md "Keys in files", DESIGN.md invariant 11): a
# profile's [keys] file declares the login tokens of a harness's JSON state
# file. Inside, whatever way the agent reads the file (cat, dd at odd
# offsets, mmap, sendfile, copy_file_range, cp, a descriptor opened before
# a write), it holds only sentinels of the same length; a rewrite of the
# file inside leaves the real values on the host; the proxy puts the real
# access token into a request to its host; the concealed refresh token is
# refused by the tripwire wherever it is sent. Run in no-open mode (the
# default audit level) and in open mode (--audit-level opens), each with
# the control: the same profile without [keys] shows the real values.
# With a profile's [keys] bind beside its key files, both are in one key
# set; `--key none` turns off the bind key only (the file stays masked and
# injected); --net none/host leave the file masked, with a warning.
#
# The origin is the loopback HTTPS origin of net-keys.sh (tls-origin.py
# behind a CA of the test's own, reached through vault-run-testhooks).
. "$(dirname "$0")/../lib/libtest.sh"
. "$(dirname "$0")/../lib/origin-lib.sh"
. "$(dirname "$0")/../lib/view-lib.sh"
. "$(dirname "$0")/../lib/sandbox-lib.sh"
vr_origin_require

P="$T/project"
view_make_demo "$P"
cd "$P"

vr_origin_start tls-origin.py api other

# --- the harness's home, its state file and the profile -------------------------
export HOME="$T/home" XDG_CONFIG_HOME="$T/config" XDG_STATE_HOME="$T/state"
mkdir -p "$HOME/.kf" "$XDG_CONFIG_HOME/vault-run/profiles" "$XDG_STATE_HOME"
ACCESS=sk-ant-oat01-RealAccess0123456789abcdefghijKLMN
REFRESH=sk-ant-ort01-RealRefresh0123456789abcdefghijKLMN
F="$HOME/.kf/creds.json"
write_creds() {
	printf '{"oauth": {"accessToken": "%s", "refreshToken": "%s", "expiresAt": 1}, "other": 1, "copy": "%s"}\n' \
		"$ACCESS" "$REFRESH" "$ACCESS" >"$F"
}
write_creds
chmod -R a+rwX "$HOME/.kf"
profile() {
	printf '[profile]\ndescription = keys in files (test)\n[paths]\nrw = ~/.kf\n'
	if [ "$1" = keys ]; then
		# A missing field and a missing file: nothing, silently.
		printf '[keys]\nfile = ~/.kf/creds.json:oauth.accessToken@api.origin.test:as=bearer;~/.kf/creds.json:oauth.refreshToken;~/.kf/creds.json:missing.field;~/.kf/nofile.json:x@api.origin.test\n'
	fi
}
profile keys >"$XDG_CONFIG_HOME/vault-run/profiles/kf.profile"
profile none >"$XDG_CONFIG_HOME/vault-run/profiles/kfplain.profile"

cat >"$P/inside.py" <<'EOF2'
import json, mmap, os, subprocess, sys
f = os.path.expanduser("~/.kf/creds.json")
def show(tag, b):
    print("--%s %s" % (tag, b.decode(errors="replace").strip()))
kept = os.open(f, os.O_RDONLY)            # opened before the write below
show("cat", subprocess.run(["cat", f], capture_output=True).stdout)
print("--size %d" % os.stat(f).st_size)
show("dd", subprocess.run(["dd", "if=" + f, "bs=7", "skip=3", "count=11"], capture_output=True).stdout)
with open(f, "rb") as h:
    show("mmap", mmap.mmap(h.fileno(), 0, prot=mmap.PROT_READ)[:])
    h.seek(0)
    with open("/tmp/sent", "wb") as o:
        os.sendfile(o.fileno(), h.fileno(), 0, os.stat(f).st_size)
show("sendfile", open("/tmp/sent", "rb").read())
# Within the view, so the request reaches the daemon: it answers EXDEV
# (the host's copy would carry the real bytes), and the kernel falls back
# to reading through the view.
c = os.path.expanduser("~/.kf/copy.json")
with open(f, "rb") as h, open(c, "wb") as o:
    try:
        n = os.copy_file_range(h.fileno(), o.fileno(), 1 << 20)
    except OSError as e:
        n = -e.errno
show("cfr", b"n=%d " % n + open(c, "rb").read())
subprocess.run(["cp", "--reflink=never", f, "/tmp/cp"])
show("cp", open("/tmp/cp", "rb").read())
d = json.load(open(f))
print("--access " + d["oauth"]["accessToken"])
print("--refresh " + d["oauth"]["refreshToken"])
# A harness's rewrite in place (json, as jq would), another field changed.
d["other"] = 2
with open(f, "w") as h:
    h.write(json.dumps(d) + "\n")
show("after", open(f, "rb").read())
show("kept", os.pread(kept, 4096, 0))
sys.stdout.flush()
a, r = d["oauth"]["accessToken"], d["oauth"]["refreshToken"]
def curl(tag, tok, url):
    out = subprocess.run(["curl", "-sS", "-H", "Authorization: Bearer " + tok, url], capture_output=True)
    show(tag, out.stdout + out.stderr)
curl("echo", a, "https://api.origin.test/echo/kf")
curl("trip-refresh", r, "https://api.origin.test/echo/rt")
curl("trip-other", r, "http://other.origin.test/plain")
print("--end")
EOF2

run() { # MODE PROFILE OUT [ARGS...]
	local mode=$1 prof=$2 out=$3
	shift 3
	write_creds
	"$VRT" --project "$P" --profile "$prof" --audit "$T/$out.audit" --net allow-private --net allow=other.origin.test \
		"$@" -- python3 "$P/inside.py" >"$T/$out.out" 2>"$T/$out.err" || true
}
got() { sed -n "s/^--$2 //p" "$T/$1.out"; }

# --- the control: without [keys], the agent reads the real values ------------
run plain kfplain control
vr_check "control: without [keys] the file shows the real access token inside" \
	grep -q -- "--cat .*$ACCESS" "$T/control.out"

for mode in noopen open; do
	extra=()
	[ "$mode" = open ] && extra=(--audit-level opens)
	run "$mode" kf "$mode" "${extra[@]}"
	S=$(got "$mode" access)
	R=$(got "$mode" refresh)
	vr_check "[$mode] the access token is a sentinel of its shape (prefix, length)" \
		test "${S:0:13}" = sk-ant-oat01- -a "${#S}" = "${#ACCESS}" -a "$S" != "$ACCESS"
	vr_check "[$mode] … the refresh token too" test "${#R}" = "${#REFRESH}" -a "$R" != "$REFRESH" -a -n "$R"
	vr_check_not "[$mode] no real value in anything read inside" grep -q "RealAccess\|RealRefresh" "$T/$mode.out"
	vr_check_not "[$mode] copy_file_range within the view: the copy on the host holds no real value" \
		grep -q Real "$HOME/.kf/copy.json"
	for how in cat mmap sendfile cfr cp kept; do
		vr_check "[$mode] $how shows the sentinels" grep -q -- "--$how .*\"accessToken\": \"$S\"" "$T/$mode.out"
	done
	vr_check "[$mode] … the size is the host's" test "$(got "$mode" size)" = "$(got control size)"
	vr_check "[$mode] dd at an odd offset reads the sentinel's bytes" \
		test "$(got "$mode" dd)" = "$(got "$mode" cat | cut -c22-98)"
	vr_check "[$mode] the rewrite inside reads back with its change and the sentinels" \
		grep -q -- "--after .*\"accessToken\": \"$S\".*\"other\": 2" "$T/$mode.out"
	vr_check "[$mode] on the host the file holds the real values, with the change" \
		grep -q "\"accessToken\": \"$ACCESS\", \"refreshToken\": \"$REFRESH\".*\"other\": 2, \"copy\": \"$ACCESS\"" "$F"
	vr_check "[$mode] the origin got the real access token" grep -q "\"Authorization\": \"Bearer $ACCESS\"" "$O/log"
	vr_check "[$mode] … and the echo returns the sentinel" grep -qx -- "--echo authorization=Bearer $S" "$T/$mode.out"
	vr_check "[$mode] the concealed refresh token is refused by the tripwire" \
		grep -q "tripwire: the sentinel of file:.*oauth.refreshToken" <(got "$mode" trip-refresh)
	vr_check "[$mode] … and over plain HTTP to another allowed host" \
		grep -q "tripwire: the sentinel of file:.*oauth.refreshToken.*plain HTTP" <(got "$mode" trip-other)
	vr_check_not "[$mode] the origin never saw a sentinel" grep -q "$S\|$R" "$O/log"
	vr_check "[$mode] the whole script ran" grep -qx -- "--end" "$T/$mode.out"
	: >"$O/log"
done

# --- one key set: a profile's [keys] bind and its key files together --------------
# `--key none` turns off the bind keys (their real values enter, one
# warning); the key files stay masked and their bound field injected.
ENVKEY=sk-RealEnvKey0123456789abcdefghijKLMN
{
	profile keys
	printf 'bind = KF_ENV_KEY@api.origin.test\n[env]\nallow = KF_ENV_KEY\n'
} >"$XDG_CONFIG_HOME/vault-run/profiles/kfboth.profile"
cat >"$P/both.py" <<'EOF2'
import json, os, subprocess
d = json.load(open(os.path.expanduser("~/.kf/creds.json")))
print("--env " + os.environ.get("KF_ENV_KEY", ""))
print("--access " + d["oauth"]["accessToken"])
for tag, tok in (("echo-file", d["oauth"]["accessToken"]), ("echo-env", os.environ.get("KF_ENV_KEY", ""))):
    out = subprocess.run(["curl", "-sS", "-H", "Authorization: Bearer " + tok, "https://api.origin.test/echo/" + tag],
                         capture_output=True)
    print("--%s %s" % (tag, (out.stdout + out.stderr).decode(errors="replace").strip()))
EOF2
for off in on none; do
	extra=()
	[ "$off" = none ] && extra=(--key none)
	write_creds
	: >"$O/log"
	KF_ENV_KEY=$ENVKEY "$VRT" --project "$P" --profile kfboth --net allow-private "${extra[@]}" -- \
		python3 "$P/both.py" >"$T/both-$off.out" 2>"$T/both-$off.err" || true
	S=$(got "both-$off" access)
	vr_check "[both, key $off] the key file shows a sentinel" test "${#S}" = "${#ACCESS}" -a "$S" != "$ACCESS"
	vr_check "[both, key $off] … and the origin got the file's real access token" \
		grep -q "\"Authorization\": \"Bearer $ACCESS\"" "$O/log"
	vr_check_not "[both, key $off] no real file value inside" grep -q "RealAccess\|RealRefresh" "$T/both-$off.out"
	if [ "$off" = on ]; then
		E=$(got both-on env)
		vr_check "[both] the profile's bind key is a sentinel inside" test "${#E}" = "${#ENVKEY}" -a "$E" != "$ENVKEY"
		vr_check "[both] … and the origin got its real value" grep -q "\"Authorization\": \"Bearer $ENVKEY\"" "$O/log"
	fi
done
vr_check "[both, --key none] the bind key's real value enters" test "$(got both-none env)" = "$ENVKEY"
vr_check "[both, --key none] … with the one warning naming it" grep -q "KF_ENV_KEY" "$T/both-none.err"
vr_check_not "[both, --key none] … and no warning about the key files" grep -qi "key files" "$T/both-none.err"
for net in none host; do
	write_creds
	KF_ENV_KEY=$ENVKEY "$VRT" --project "$P" --profile kfboth --net "$net" -- \
		python3 "$P/both.py" >"$T/both-$net.out" 2>"$T/both-$net.err" || true
	S=$(got "both-$net" access)
	vr_check "[both, --net $net] the key file still shows a sentinel" \
		test "${#S}" = "${#ACCESS}" -a "$S" != "$ACCESS"
	vr_check "[both, --net $net] … with the key files' warning" grep -q "key files are served with sentinels" \
		"$T/both-$net.err"
done
E=$(got both-none env)
vr_check "[both, --net none] the bind key is a sentinel" test "${#E}" = "${#ENVKEY}" -a "$E" != "$ENVKEY"
vr_check "[both, --net host] the bind key is not bound: its real value enters" test "$(got both-host env)" = "$ENVKEY"

# --- bad declarations name the profile file and the token ------------------------
printf '[keys]\nfile = ~/.kf/creds.json\n' >"$XDG_CONFIG_HOME/vault-run/profiles/kfbad.profile"
vr_expect_status 125 "a declaration without a field" "$VRT" --project "$P" --profile kfbad -- true
vr_check "… names the file and the token" \
	grep -q "kfbad.profile: \[keys\] file '$HOME/.kf/creds.json': no ':'" <("$VRT" --project "$P" --profile kfbad -- true 2>&1)
printf '[keys]\nfile = ~/.kf/creds.json:a.b@127.0.0.1\n' >"$XDG_CONFIG_HOME/vault-run/profiles/kfbad.profile"
vr_check "a key file's field bound to an IP literal is refused" \
	grep -q "kfbad.profile: \[keys\] file '.*a.b@127.0.0.1': host '127.0.0.1' is an IP literal" \
	<("$VRT" --project "$P" --profile kfbad -- true 2>&1)
vr_done
