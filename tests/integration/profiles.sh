#!/usr/bin/env bash
# Harness profiles: a profile binds exactly its own paths (each individually,
# settings read-only, state writable), nothing else of the home directory;
# --profile none binds nothing; the choice by COMMAND's name is announced.
. "$(dirname "$0")/../lib/libtest.sh"
. "$(dirname "$0")/../lib/sandbox-lib.sh"
vr_require_sandbox

export HOME="$T/home" XDG_CONFIG_HOME="$T/home/.config"
mkdir -p "$HOME/.config/opencode" "$HOME/.local/share/opencode" "$HOME/.ssh" "$HOME/.aws" "$HOME/other"
echo '{"theme": "host"}' >"$HOME/.config/opencode/opencode.json"
echo 'secret key' >"$HOME/.ssh/id_ed25519"
echo '[default]' >"$HOME/.aws/credentials"
printf '[user]\n\tname = Host User\n' >"$HOME/.gitconfig"
echo 'not for the agent' >"$HOME/other/notes"
# When vault-run runs as root the agent is uid 65534: the host files it may
# read must be readable by it (as a user's files are by that user).
chmod -R a+rX "$HOME"
P="$T/project"; mkdir -p "$P"; echo hi >"$P/README"

# The dry run lists the profile's binds below $HOME: exactly the paths of
# `vault-run profiles opencode` (read-only and writable lists) that exist
# (a missing source of a -try bind is skipped when the plan is made).
"$VR" --project "$P" --dry-run --profile opencode -- opencode >"$T/plan" 2>"$T/plan.err"
grep -o "^bind *$HOME[^ ]*" "$T/plan" | awk '{print $2}' | sort >"$T/bound"
"$VR" profiles opencode | awk '/^  (read-only|writable)/ {print $2; f=1; next} /^  [a-z]/ {f=0} f && /^ +\// {print $1}' |
	while read -r p; do [ -e "$p" ] && echo "$p"; done | sort >"$T/listed"
vr_check "dry run binds exactly the profile's paths" diff -u "$T/listed" "$T/bound"
vr_check "no bind of the whole ~/.config" bash -c "! grep -q '^bind *$HOME/.config ' '$T/plan'"
vr_check "the profile's domains become the allow-list" grep -q 'api.anthropic.com' "$T/plan"
"$VR" --project "$P" --dry-run -- opencode >/dev/null 2>"$T/notice"
vr_check "choice by COMMAND's name is announced" grep -q "using profile 'opencode'" "$T/notice"
"$VR" --project "$P" --dry-run --profile none -- opencode >"$T/plan-none" 2>&1
vr_check "--profile none binds nothing of the home" bash -c "! grep -q '^bind *$HOME/' '$T/plan-none'"
vr_expect_status 125 "unknown profile is an error" "$VR" --project "$P" --profile no-such -- true

# Inside: settings readable but not writable, state writable, the rest absent.
out=$("$VR" --project "$P" --profile opencode --net none --quiet -- sh -c '
	cat ~/.config/opencode/opencode.json
	echo changed >~/.config/opencode/opencode.json 2>/dev/null && echo SETTINGS-WRITABLE
	echo session >~/.local/share/opencode/s.json && echo STATE-OK
	ls ~/.ssh ~/.aws ~/other 2>/dev/null && echo HOME-LEAK
	git config user.name' 2>"$T/run.err") || true
vr_check "settings readable" grep -q '"theme": "host"' <<<"$out"
vr_check_not "settings not writable" grep -q SETTINGS-WRITABLE <<<"$out"
vr_check "host settings unchanged" grep -q '"theme": "host"' "$HOME/.config/opencode/opencode.json"
vr_check "state directory writable" grep -q STATE-OK <<<"$out"
vr_check "state written on the host" test -s "$HOME/.local/share/opencode/s.json"
vr_check_not "~/.ssh, ~/.aws and other home dirs absent" grep -q HOME-LEAK <<<"$out"
vr_check "git toolchain: ~/.gitconfig read-only inside" grep -q 'Host User' <<<"$out"
[ "$vr_failures" = 0 ] || { echo "--- stdout"; echo "$out"; echo "--- stderr"; cat "$T/run.err"; }
vr_done
