#!/usr/bin/env bash
# The project's .env by every route, and the rest of the host (/root,
# $HOME/.ssh, a directory next to the project) must be unreachable inside.
. "$(dirname "$0")/../lib/libtest.sh"
. "$(dirname "$0")/../lib/view-lib.sh"
. "$(dirname "$0")/../lib/sandbox-lib.sh"
vr_require_sandbox
P="$T/project"
view_make_demo "$P"
mkdir -p "$T/home/.ssh" "$T/other"
echo HOMESECRET >"$T/home/.ssh/id_test"
echo OTHERSECRET >"$T/other/secret"
run() { HOME="$T/home" "$VR" --project "$P" "$@"; }

vr_check "control: .env is readable on the host" grep -q . "$P/.env"
vr_check "control: the fake ssh key is readable on the host" grep -q HOMESECRET "$T/home/.ssh/id_test"
vr_check "control: the other directory is readable on the host" grep -q OTHERSECRET "$T/other/secret"

routes=(
	'cat .env'
	'cat ./.env'
	"cat $P/.env"
	"cat $P/src/../.env"
	'cat /proc/self/cwd/.env'
	'cat /proc/1/cwd/.env'
	'cat /proc/self/root'"$P"'/.env'
	'ln -s .env l && cat l'
	"ln -s $P/.env l2 && cat l2"
	'ln .env hard && cat hard'
	'mv .env moved && cat moved'
	'cat .env* | grep -q DATABASE_URL && cat .env'
	'grep -r DATABASE_URL . --include=* 2>/dev/null | grep -v example | grep -q hunter2'
	'find / -xdev -name .env 2>/dev/null | grep -q . && cat $(find / -name .env 2>/dev/null | head -1)'
)
for r in "${routes[@]}"; do
	out=$(run -- sh -c "$r" 2>/dev/null || true)
	vr_check_not ".env via: $r" grep -q hunter2 <<<"$out"
done
vr_check "the .env is intact on the host" grep -q hunter2 "$P/.env"
rm -f "$P/l" "$P/l2" "$P/hard" "$P/moved"

vr_check_not "\$HOME/.ssh is not there" run -- sh -c 'cat "$HOME/.ssh/id_test"'
vr_check "\$HOME is an empty tmpfs" test "$(run -- sh -c 'ls -A "$HOME" | wc -l')" = 0
vr_check_not "a directory next to the project is not there" run -- cat "$T/other/secret"
if [ -r /root ] && [ -n "$(ls -A /root 2>/dev/null)" ]; then
	vr_check "/root shows nothing of the host's /root" \
		test "$(run -- sh -c 'ls -A /root 2>/dev/null | wc -l')" = 0
fi
vr_check_not "/etc/shadow is not there" run -- cat /etc/shadow
vr_check_not "/home is not there" run -- sh -c 'ls -A /home 2>/dev/null | grep -q .'
vr_check_not "no FUSE device inside" run -- test -e /dev/fuse
vr_done
