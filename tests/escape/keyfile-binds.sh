#!/usr/bin/env bash
# Keys in files (docs/network.md "Keys in files", "Other doors"): a key file
# reached other than by the profile's own path: a --bind or --ro-bind of
# its directory, of the file itself, of the directory above it, a config
# `ro-bind`, and a key file whose directory no profile path serves. Each
# is either served masked through a view (grep for the real values in every
# file inside finds nothing; a read-only bind stays read-only) or refused
# before anything starts (exit 125, one line naming the bind, the key file
# and what to bind instead). The control: a bind that holds no key file
# stays a plain bind.
. "$(dirname "$0")/../lib/libtest.sh"
. "$(dirname "$0")/../lib/sandbox-lib.sh"
vr_require_sandbox

vr_private_home .kf .kd plain
ACCESS=sk-ant-oat01-RealAccess0123456789abcdefghijKLMN
OTHER=sk-RealOtherDir0123456789abcdefghijKLMNOP
printf '{"a": "%s"}\n' "$ACCESS" >"$HOME/.kf/creds.json"
printf '{"t": "%s"}\n' "$OTHER" >"$HOME/.kd/auth.json"
echo hello >"$HOME/plain/file"
chmod -R a+rwX "$HOME" "$P"
# kf: the key file's directory is a profile path (a guarded view). kd: the
# key file's directory is no profile path at all.
printf '[profile]\ndescription = t\n[paths]\nrw = ~/.kf\n[keys]\nfile = ~/.kf/creds.json:a@api.example.com;~/.kd/auth.json:t\n' \
	>"$XDG_CONFIG_HOME/vault-run/profiles/kf.profile"
printf '[profile]\ndescription = t\n[paths]\nrw = ~/.kf\n' >"$XDG_CONFIG_HOME/vault-run/profiles/kfplain.profile"

# Inside: every file under the bind's destination and the home, grepped
# for any real value; then the file at DEST read, and a write tried.
# The pattern does not match itself (the project holds this script).
PROBE='d=$1; f=$2
echo "grep [$(grep -rlE "R[e]al(Access|OtherDir)" "$d" ~ 2>/dev/null | tr "\n" " ")]"
echo "read $(cat "$f" 2>&1)"
( echo x >>"$f" ) 2>/dev/null && echo "write ok" || echo "write refused"'
run() { # PROFILE DEST FILE VR-ARGS...
	local prof=$1 dest=$2 file=$3
	shift 3
	rc=0
	out=$("$VR" --project "$P" --profile "$prof" --net none --quiet "$@" -- sh -c "$PROBE" sh "$dest" "$file" \
		2>"$T/err") || rc=$?
}
fresh() {
	printf '{"a": "%s"}\n' "$ACCESS" >"$HOME/.kf/creds.json"
	printf '{"t": "%s"}\n' "$OTHER" >"$HOME/.kd/auth.json"
}

# The control: without [keys] a read-only bind shows the real value.
run kfplain /tmp/b /tmp/b/creds.json --ro-bind "$HOME/.kf" /tmp/b
vr_check "control: without [keys], a --ro-bind of the directory shows the real value" \
	grep -q "^read .*$ACCESS" <<<"$out"

masked() { # TAG
	vr_check "$1: runs" test "$rc" = 0
	vr_check "$1: the file reads with its sentinel" grep -q '^read {"[at]": "sk-' <<<"$out"
	vr_check "$1: no file inside holds a real value" grep -qx "grep \[\]" <<<"$out"
	vr_check_not "$1: … not even the one read" grep -q "RealAccess\|RealOtherDir" <<<"$out"
}

fresh
run kf /tmp/b /tmp/b/creds.json --bind "$HOME/.kf" /tmp/b
masked "--bind of the key file's directory"
vr_check "… and a write through it reaches the host, the real value kept" \
	bash -c "grep -qx write\ ok <<<'$out' && grep -q '$ACCESS' '$HOME/.kf/creds.json' && tail -1 '$HOME/.kf/creds.json' | grep -qx x"

fresh
run kf /tmp/b /tmp/b/creds.json --ro-bind "$HOME/.kf" /tmp/b
masked "--ro-bind of the key file's directory"
vr_check "… and it stays read-only" grep -qx "write refused" <<<"$out"

# The profile's own directory bound read-only over itself: the host's
# login survives whatever the agent does (docs: "A logout is allowed").
fresh
run kf "$HOME/.kf" "$HOME/.kf/creds.json" --ro-bind "$HOME/.kf" "$HOME/.kf"
masked "--ro-bind of the profile's directory over itself"
vr_check "… no write, and the host keeps its login" \
	bash -c "grep -qx 'write refused' <<<'$out' && grep -qx '{\"a\": \"$ACCESS\"}' '$HOME/.kf/creds.json'"

fresh
run kf /tmp/c.json /tmp/c.json --ro-bind "$HOME/.kf/creds.json" /tmp/c.json
masked "--ro-bind of the key file itself"
vr_check "… read-only" grep -qx "write refused" <<<"$out"

fresh
run kf /tmp/c.json /tmp/c.json --bind "$HOME/.kf/creds.json" /tmp/c.json
masked "--bind of the key file itself"

# A key file whose directory is no profile path: the bind is its view.
for how in --bind --ro-bind; do
	fresh
	run kf /tmp/d /tmp/d/auth.json "$how" "$HOME/.kd" /tmp/d
	masked "$how of a key file's directory no profile path serves"
	fresh
	run kf /tmp/a.json /tmp/a.json "$how" "$HOME/.kd/auth.json" /tmp/a.json
	masked "$how of that key file itself"
done
vr_check "… the read-only one stays read-only" grep -qx "write refused" <<<"$out"

# The directory above a profile path that holds a key file: refused.
for how in --bind --ro-bind; do
	fresh
	run kf /tmp/h /tmp/h/.kf/creds.json "$how" "$HOME" /tmp/h
	vr_check "$how of the home above the key file's directory is refused (125)" test "$rc" = 125
	vr_check "… with one line (besides --net none's warning)" test "$(grep -vc warning: "$T/err")" = 1
	vr_check "… that names the bind and the key file's view" \
		bash -c "grep -q -- '$how $HOME:' '$T/err' && grep -q '$HOME/.kf' '$T/err'"
	vr_check_not "… and nothing ran" grep -q "^grep" <<<"$out"
	vr_check "… it names the key file and says what to bind" \
		bash -c "grep -q 'key file $HOME/.kf/creds.json' '$T/err' && grep -q 'bind $HOME/.kf itself' '$T/err'"
done

# The same from the config's ro-bind list.
printf '[sandbox]\nro-bind = %s\n' "$HOME/.kd" >"$XDG_CONFIG_HOME/vault-run/config"
fresh
run kf "$HOME/.kd" "$HOME/.kd/auth.json"
masked "a config ro-bind of a key file's directory"
vr_check "… read-only" grep -qx "write refused" <<<"$out"
rm -f "$XDG_CONFIG_HOME/vault-run/config"

# A key file inside the project, which no profile path serves: the
# project's view does not mask, so the run is refused.
mkdir -p "$P/.kd"
printf '{"t": "%s"}\n' "$OTHER" >"$P/.kd/auth.json"
printf '[profile]\ndescription = t\n[keys]\nfile = %s/.kd/auth.json:t\n' "$P" \
	>"$XDG_CONFIG_HOME/vault-run/profiles/kfproj.profile"
run kfproj "$P/.kd" "$P/.kd/auth.json"
vr_check "a key file inside the project is refused (125)" test "$rc" = 125
vr_check "… naming it and the project" grep -q "key file $P/.kd/auth.json is inside the project $P" "$T/err"
vr_check_not "… and nothing ran" grep -q "^grep" <<<"$out"
rm -rf "$P/.kd"

# A --ro-bind of a key file's directory while its key file does not exist
# yet (the harness not logged in): a view still, so a login the host makes
# during the run is refused inside, never shown.
rm -f "$HOME/.kd/auth.json" "$P/ready"
"$VR" --project "$P" --profile kf --net none --quiet --ro-bind "$HOME/.kd" /tmp/d -- sh -c '
	: >"$1/ready"
	for i in $(seq 200); do [ -e /tmp/d/auth.json ] && break; sleep 0.05; done
	sleep 0.2; echo "read $(cat /tmp/d/auth.json 2>&1)"' sh "$P" >"$T/late.out" 2>"$T/late.err" &
late=$!
for _ in $(seq 400); do [ -e "$P/ready" ] && break; sleep 0.05; done
printf '{"t": "%s"}\n' "$OTHER" >"$HOME/.kd/auth.new" && mv "$HOME/.kd/auth.new" "$HOME/.kd/auth.json"
wait "$late" || true
vr_check_not "a --ro-bind of a key file's directory, the file made on the host during the run: not shown" \
	grep -q RealOtherDir "$T/late.out"
vr_check "… the read is refused" grep -q '^read .*Permission denied' "$T/late.out"
rm -f "$P/ready"
fresh

# A bind that holds no key file stays a plain read-only bind.
run kf /tmp/p /tmp/p/file --ro-bind "$HOME/plain" /tmp/p
vr_check "a --ro-bind without key files still works" grep -qx "read hello" <<<"$out"
"$VR" --project "$P" --profile kf --net none --dry-run --ro-bind "$HOME/plain" /tmp/p -- true >"$T/plan" 2>&1 || true
vr_check "… as a plain bind, no view" grep -q "^bind *.*/tmp/p <- $HOME/plain ro$" "$T/plan"
vr_done
