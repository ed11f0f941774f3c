#!/bin/bash
# vault-run policy explain/show over the demo project: the issue's done-when
# line, config precedence through the CLI, and one-line errors with exit 125.
. "$(dirname "$0")/../lib/libtest.sh"
vr_require_cmd git

P="$T/demo"
vr_make_demo "$P"
export XDG_CONFIG_HOME="$T/xdg"

out=$("$VR" policy explain --project "$P" .env id_rsa src/main.c .git/hooks/pre-commit .env.example)
echo "$out"
expect() { # LINE-NUMBER PREFIX
	local line
	line=$(sed -n "${1}p" <<<"$out")
	[[ "$line" == "$2"* ]] || { echo "line $1: '$line' does not start with '$2'"; return 1; }
}
vr_check ".env hidden by its rule" expect 1 ".env: hidden (rule '.env' from built-in:"
vr_check "id_rsa hidden" expect 2 "id_rsa: hidden (rule 'id_rsa*' from built-in:"
vr_check "src/main.c visible" expect 3 "src/main.c: visible (no rule)"
vr_check "hook read-only via its directory" expect 4 ".git/hooks/pre-commit: readonly (rule '**/.git/hooks/' from built-in:"
vr_check ".env.example visible by its show rule" expect 5 ".env.example: visible (rule '!.env.example' from built-in:"

# The same without a .git (the committed demo project, before quickstart.sh
# makes it a repository): ancestors are dirs.
vr_copy_demo "$T/plain"
vr_check "the plain copy has no .git" test ! -e "$T/plain/.git"
out=$("$VR" policy explain --project "$T/plain" .git/hooks/pre-commit config/)
vr_check "hook rule applies without a .git" expect 1 ".git/hooks/pre-commit: readonly"

# git config: the gate and its allow-list; what the project's config names.
git -C "$P" config core.hooksPath tools/hooks
git -C "$P" config include.path ../team.gitconfig
out=$("$VR" policy explain --project "$P" .git/config debian/config config/ team.gitconfig tools/hooks/pre-commit)
echo "$out"
vr_check ".git/config: read-only by the config rule" expect 1 ".git/config: readonly (rule 'config' from built-in:"
vr_check "explain says the gate" grep -q 'written only the way git writes it, through config.lock' <<<"$out"
vr_check "explain lists the allow-list" grep -q '^    remote\.\*\.{url,pushurl,fetch}$' <<<"$out"
vr_check "explain names refused keys" grep -q 'core.fsmonitor' <<<"$out"
vr_check "any file named config is git config" grep -q "^debian/config: readonly (rule 'config'" <<<"$out"
vr_check "a directory named config is not" grep -q "^config/: visible" <<<"$out"
vr_check "the included file is gated" grep -q "^team.gitconfig: readonly (rule 'team.gitconfig' from .git/config:" <<<"$out"
vr_check "the hooksPath directory is read-only" grep -q "^tools/hooks/pre-commit: readonly (rule '/tools/hooks' from .git/config:" <<<"$out"
git -C "$P" config --unset core.hooksPath
git -C "$P" config --unset include.path

# A project file can tighten but not loosen; the user's config can loosen.
printf '[policy]\nreadonly = .env; src/\n' >"$P/.vault-run"
out=$("$VR" policy explain --project "$P" .env src/main.c)
vr_check "project readonly cannot un-hide .env" expect 1 ".env: hidden"
vr_check "project readonly applies to src/" expect 2 "src/main.c: readonly (rule 'src/' from $P/.vault-run:2)"
printf '[policy]\nshow = .env\n' >"$P/.vault-run"
err=$("$VR" policy explain --project "$P" .env 2>&1) && rc=0 || rc=$?
vr_check "project show refused with 125" test "$rc" = 125
vr_check "refusal names file:line" grep -q "$P/.vault-run:2: .*project config may only add restrictions" <<<"$err"
vr_check "refusal is one line" test "$(wc -l <<<"$err")" = 1
rm "$P/.vault-run"

mkdir -p "$XDG_CONFIG_HOME/vault-run"
printf '[policy]\nshow = .env\nhide = *.c\n' >"$XDG_CONFIG_HOME/vault-run/config"
out=$("$VR" policy explain --project "$P" .env src/main.c)
vr_check "user config shows .env" expect 1 ".env: visible (rule '!.env' from $XDG_CONFIG_HOME/vault-run/config:2)"
vr_check "user config hides *.c" expect 2 "src/main.c: hidden"
printf '[policy]\nhide = .env\n' >"$T/pol"
out=$("$VR" policy explain --project "$P" --policy "$T/pol" --show '*.c' .env src/main.c)
vr_check "--policy after the user config" expect 1 ".env: hidden (rule '.env' from $T/pol:2)"
vr_check "command line last" expect 2 "src/main.c: visible (rule '!*.c' from command line:1)"

# Errors: one line, 125.
printf '[policy]\nhide = ok; sec[ret\n' >"$T/bad"
err=$("$VR" policy show --project "$P" --policy "$T/bad" 2>&1) && rc=0 || rc=$?
vr_check "bad pattern: 125" test "$rc" = 125
vr_check "bad pattern: names file:line and token" grep -q "$T/bad:2: .*sec\[ret" <<<"$err"
err=$("$VR" policy frobnicate 2>&1) && rc=0 || rc=$?
vr_check "unknown subcommand: 125" test "$rc" = 125
err=$("$VR" policy explain --project "$P" ../etc/passwd 2>&1) && rc=0 || rc=$?
vr_check "path outside the project: 125" test "$rc" = 125
vr_check "--help" bash -c '"$0" policy --help | grep -q "^Usage: vault-run policy explain"' "$VR"

out=$("$VR" policy show --project "$P")
vr_check "show lists built-ins with source" grep -q "^hide  *\.env  *built-in:1 " <<<"$out"
vr_done
