#!/usr/bin/env bash
# Invariant: nothing the host later executes or obeys is writable from
# inside (DESIGN.md read-only defaults). From inside the sandbox: writes,
# truncation, replacement by rename, removal and creation next to .git/hooks/x,
# .git/config, .husky/x, .envrc, .vscode/settings.json and the project's
# .vault-run. Expected: all refused, every file byte-identical on the host.
# Then a .vault-run that tries to loosen the policy (show = .env, a
# [sandbox] group) makes the next start fail: exit 125, one line naming the
# file and why, COMMAND not run. Control: the same writes work on the host.
# And a user config reached through a symlink inside the project refuses
# the start the same way (issue 16 route 3).
. "$(dirname "$0")/../lib/libtest.sh"
. "$(dirname "$0")/../lib/view-lib.sh"
. "$(dirname "$0")/../lib/sandbox-lib.sh"
vr_require_sandbox
P="$T/project"
view_make_demo "$P"
mkdir -p "$P/.husky" "$P/.vscode"
printf '#!/bin/sh\necho x\n' >"$P/.git/hooks/x"
printf '#!/bin/sh\necho husky\n' >"$P/.husky/x"
echo 'export A=1' >"$P/.envrc"
echo '{}' >"$P/.vscode/settings.json"
printf '[policy]\nhide = fixtures/\n' >"$P/.vault-run"
files=".git/hooks/x .git/config .husky/x .envrc .vscode/settings.json .vault-run"
sums() { (cd "$P" && sha256sum $files && ls -la .git/hooks .husky .vscode | grep -v ' \.\.\?$'); }
before=$(sums)

# Control: on a plain copy the same writes land.
cp -a "$P" "$T/plain"
for f in $files; do
	vr_check "control: $f is writable on a plain directory" sh -c "echo PLANTED >>'$T/plain/$f'"
done

# attempt F: each way of changing F; prints "F how ok" for any success.
attack='
	f=$1
	{ echo PLANTED >>"$f"; } 2>/dev/null && echo "$f append ok"
	{ : >"$f"; } 2>/dev/null && echo "$f truncate ok"
	{ echo PLANTED >"$f.vr-new" && mv -f "$f.vr-new" "$f"; } 2>/dev/null && echo "$f rename-over ok"
	rm -f "$f.vr-new" 2>/dev/null
	rm -f "$f" 2>/dev/null && echo "$f unlink ok"
	chmod 0777 "$f" 2>/dev/null && echo "$f chmod ok"
	true'
out=$("$VR" --project "$P" --profile none -- sh -c '
	cd "$1" || exit 1; shift
	attack=$1; shift
	for f; do sh -c "$attack" attack "$f"; done
	{ echo PLANTED >.git/hooks/post-checkout; } 2>/dev/null && echo ".git/hooks/post-checkout create ok"
	{ echo PLANTED >.husky/pre-push; } 2>/dev/null && echo ".husky/pre-push create ok"
	{ echo PLANTED >.vscode/tasks.json; } 2>/dev/null && echo ".vscode/tasks.json create ok"
	true' sh "$P" "$attack" $files 2>&1) || vr_fail "the sandbox run failed"
echo "$out"
vr_check_not "no write to a persistence vector succeeded inside" grep -q ' ok$' <<<"$out"
vr_check "every persistence file is byte-identical on the host" test "$(sums)" = "$before"
vr_check "no new hook appeared" test ! -e "$P/.git/hooks/post-checkout" -a ! -e "$P/.husky/pre-push" -a ! -e "$P/.vscode/tasks.json"

# A .vault-run that loosens is refused at the next start.
loosen() {
	printf '%b' "$1" >"$P/.vault-run"
	rm -f "$P/ran"
	local st=0
	"$VR" --project "$P" --profile none -- sh -c 'touch "$1/ran"' sh "$P" 2>"$T/err" || st=$?
	cat "$T/err"
	vr_check "$2: the start fails with 125 (got $st)" test "$st" = 125
	vr_check "$2: the message names .vault-run" grep -q '\.vault-run' "$T/err"
	vr_check "$2: the error is one line" test "$(wc -l <"$T/err")" = 1
	vr_check "$2: COMMAND did not run" test ! -e "$P/ran"
}
# Control: a tightening .vault-run starts and runs COMMAND.
printf '[policy]\nhide = fixtures/\n' >"$P/.vault-run"
vr_check "control: a tightening .vault-run runs COMMAND" \
	sh -c "'$VR' --project '$P' --profile none -- sh -c 'touch \"\$1/ran\"' sh '$P' && test -e '$P/ran'"
loosen '[policy]\nshow = .env\n' "show = .env"
loosen '[policy]\nshow = .git/hooks/\n' "show = .git/hooks/"
loosen '[sandbox]\nenv-allow = *\n' "a [sandbox] group"
loosen '[policy]\nhide = x\n[sandbox]\nnet = host\n' "[sandbox] net = host after a valid rule"
rm -f "$P/.vault-run"

# Issue 16 route 3: the user config reached through a symlink inside the
# project (an earlier run made $XDG_CONFIG_HOME/vault-run a link to a
# directory it writes). Control: outside this project the link is
# followed and its [sandbox] net = host is taken.
mkdir -p "$P/cfgroot" "$P/evil"
printf '[sandbox]\nnet = host\n' >"$P/evil/config"
ln -s ../evil "$P/cfgroot/vault-run"
mkdir -p "$T/other"
vr_check "control: elsewhere the linked user config is loaded (net = host)" \
	sh -c "XDG_CONFIG_HOME='$P/cfgroot' '$VR' config show --project '$T/other' | grep -q 'net *host'"
for how in "a link to a directory in the project" "a link above it"; do
	if [ "$how" = "a link above it" ]; then
		rm "$P/cfgroot/vault-run"
		mkdir -p "$P/evil2/vault-run" "$T/cfg2"
		printf '[sandbox]\nnet = host\n' >"$P/evil2/vault-run/config"
		ln -s "$P/evil2" "$T/cfg2/x"
		cfg="$T/cfg2/x"
	else
		cfg="$P/cfgroot"
	fi
	rm -f "$P/ran"
	st=0
	XDG_CONFIG_HOME=$cfg "$VR" --project "$P" --profile none -- sh -c 'touch "$1/ran"' sh "$P" 2>"$T/err" || st=$?
	cat "$T/err"
	vr_check "user config through $how: the start fails with 125 (got $st)" test "$st" = 125
	vr_check "user config through $how: one line names the symlink" \
		test "$(wc -l <"$T/err")" = 1 -a -n "$(grep 'symlink' "$T/err")"
	vr_check "user config through $how: COMMAND did not run" test ! -e "$P/ran"
done
vr_done
