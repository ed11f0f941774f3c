#!/usr/bin/env bash
# The everyday commands: doctor, config init/show, profiles, --help size,
# the man page, and one-line errors with exit 125 for bad input.
. "$(dirname "$0")/../lib/libtest.sh"
export XDG_CONFIG_HOME="$T/config" HOME="$T/home"
mkdir -p "$HOME"

"$VR" doctor >"$T/doctor" || true
cat "$T/doctor"
vr_check "doctor checks user namespaces" grep -q 'user namespaces' "$T/doctor"
vr_check "doctor checks /dev/fuse" grep -q '/dev/fuse' "$T/doctor"
if unshare -U true 2>/dev/null && [ -r /dev/fuse ] && [ -w /dev/fuse ]; then
	vr_check "doctor: exit 0 where sandboxes run" "$VR" doctor
fi

vr_check "config init writes the starter" "$VR" config init
vr_check "starter is valid and changes nothing" "$VR" config show
vr_check "starter names every group" bash -c "grep -q '^\[policy\]' '$T/config/vault-run/config' && grep -q '^\[sandbox\]' '$T/config/vault-run/config'"
vr_check_not "config init does not overwrite" "$VR" config init
printf '[policy]\nhide = secret.txt\n[sandbox]\nnet = host\n' >"$T/config/vault-run/config"
"$VR" config show >"$T/show"
vr_check "config show prints merged settings" grep -q 'net *host' "$T/show"
# Subcommands take --opt=VALUE as well as --opt VALUE (GOptionContext).
mkdir -p "$T/p"; printf '[policy]\nhide = extra.txt\n' >"$T/extra.conf"
vr_check "config show --project=DIR --policy=FILE" bash -c "'$VR' config show --project='$T/p' --policy='$T/extra.conf' | grep -q '$T/extra.conf'"
vr_check "policy explain --project=DIR --hide=PATTERN" bash -c "'$VR' policy explain --project='$T/p' --hide=x.log x.log | grep -q 'x.log: hidden'"
vr_check "doctor --project=DIR is accepted" bash -c "'$VR' doctor --project='$T/p' >/dev/null; test \$? -ne 125"
vr_check_not "an unknown subcommand option is refused" "$VR" gc --no-such-option
printf '[policy]\nhidee = x\n' >"$T/config/vault-run/config"
err=$("$VR" config show 2>&1) && st=0 || st=$?
vr_check "broken config: exit 125" test "$st" = 125
vr_check "broken config: one line naming FILE:LINE" bash -c "[ \$(wc -l <<<'$err') = 1 ] && grep -q 'config:2' <<<'$err'"
rm "$T/config/vault-run/config"

"$VR" profiles >"$T/profiles"
for p in opencode claude codex copilot gemini aider shell; do
	vr_check "profile $p listed" grep -q "^$p " "$T/profiles"
done

lines=$("$VR" --help | wc -l)
vr_check "--help fits a screen ($lines lines)" test "$lines" -le 50
vr_check "--version" bash -c "'$VR' --version | grep -q '^vault-run '"
if command -v man >/dev/null; then
	vr_check "man page renders" bash -c "man -l '$VR_SOURCE_DIR/docs/vault-run.1' 2>/dev/null | grep -q 'EXIT STATUS'"
fi

for bad in "--bogus" "--project" "--net maybe"; do
	err=$("$VR" $bad -- true 2>&1) && st=0 || st=$?
	vr_check "'$bad': exit 125 and one line" bash -c "[ '$st' = 125 ] && [ \$(wc -l <<<'$err') = 1 ]"
done
err=$("$VR" --project "$T/missing" -- true 2>&1) && st=0 || st=$?
vr_check "missing project: exit 125, names it" bash -c "[ '$st' = 125 ] && grep -q '$T/missing' <<<'$err'"
vr_done
