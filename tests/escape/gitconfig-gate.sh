#!/usr/bin/env bash
# Invariant 9's one exception, attacked: git config files change only
# through the gate, and only in keys that run or load nothing
# (docs/policy.md "The git config gate").
#
# Each refused key (core.fsmonitor, hooksPath, sshCommand, alias, include,
# url.insteadOf, filter, a file:// URL, a host starting with '-') is tried
# with `git config` and by writing config.lock by hand and renaming it; an
# accepted config.lock held open, hard-linked and mmapped is rewritten after
# the rename; the masked token of a remote URL is edited around the mask and
# spliced into another key; files named config elsewhere, an included file,
# the core.hooksPath directory and a new repository's hooks/ are attacked by
# every file type. The control runs the same script on a plain copy, where
# the attacks work. Inside: all refused, the host files byte-identical, each
# refused key named in the audit log.
. "$(dirname "$0")/../lib/libtest.sh"
. "$(dirname "$0")/../lib/sandbox-lib.sh"
vr_require_sandbox
vr_require_cmd git
vr_require_cmd python3

P="$T/project" A="$T/audit.jsonl"
token=ghp_aBcDeFgHiJkLmNoPqRsTuVwXyZ0123456789
mkdir -p "$P/sub/a" "$P/sub/b" "$P/sub/c" "$P/sub/d" "$P/tools"
echo hello >"$P/README.md"
git -C "$P" init -q
git -C "$P" config user.email host@example.com
git -C "$P" config include.path ../team.gitconfig
git -C "$P" config core.hooksPath tools/hooks
git -C "$P" config remote.bot.url "https://bot:$token@github.com/example/app.git"
printf '[user]\n\tname = Team\n' >"$P/team.gitconfig"
files=".git/config team.gitconfig"
# Contents, and which names of which types (not times: making and removing
# a scratch file changes a directory's mtime).
sums() { (cd "$P" && sha256sum $files && find .git/hooks sub -printf '%p %y %m %l\n' | sort); }
before=$(sums)
cp -a "$P" "$T/plain"

# attack DIR: prints "WHAT ok" for each attack that worked.
attack='
cd "$1" || exit 1
export GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=safe.directory GIT_CONFIG_VALUE_0="*"
pw="$1/pwned"
try() { # NAME KEY VALUE: git config, then config.lock by hand
	git config "$2" "$3" 2>/dev/null && echo "$1 git-config ok"
	git config --unset-all "$2" 2>/dev/null
	cp .git/config .git/config.lock && git config --file .git/config.lock "$2" "$3" &&
		mv .git/config.lock .git/config 2>/dev/null && echo "$1 by-hand ok"
	rm -f .git/config.lock
	git config --unset-all "$2" 2>/dev/null
}
try fsmonitor core.fsmonitor "touch $pw"
try hooksPath core.hooksPath /tmp
try sshCommand core.sshCommand "touch $pw"
try alias alias.st "!touch $pw"
try include include.path /tmp/evil.gitconfig
try insteadOf url.https://evil.example/.insteadOf https://github.com/
try filter filter.x.clean "touch $pw"
try file-url remote.evil.url file:///tmp/evil.git
try dash-host remote.evil.url "ssh://-oProxyCommand=touch%20pw/x"
try local-path branch.master.remote /tmp/evil.git
# An accepted config.lock, kept open, mmapped and hard-linked, rewritten
# after the rename.
cp .git/config .git/config.lock && git config --file .git/config.lock user.email agent@example.com &&
python3 - "$pw" <<PY && echo "held-fd ok"
import mmap, os, sys
fd = os.open(".git/config.lock", os.O_RDWR)
os.link(".git/config.lock", "held")
m = mmap.mmap(fd, 0)
m[0:1]  # the page is in the cache before the rename
os.rename(".git/config.lock", ".git/config")
evil = b"[core]fsmonitor=touch " + sys.argv[1].encode() + b"\n"
os.pwrite(fd, evil, 0)
with open("held", "ab") as f:
    f.write(b"[alias]\n\tst = !sh\n")
if os.fork() == 0:  # a fault on a stale page may end in SIGBUS: not here
    m[0:len(evil)] = evil
    m.flush()
    os._exit(0)
os.wait()
sys.exit(0 if b"fsmonitor" in os.pread(fd, 4096, 0) else 1)
PY
rm -f held
git config --get core.fsmonitor >/dev/null 2>&1 && echo "held-fd-effect ok"
# The masked token: edited around the mask, spliced into another key.
python3 - <<PY
import os, re
cfg = open(".git/config").read()
line = [l for l in cfg.splitlines() if "bot:" in l][0]
tries = {
    "mask-edit": cfg.replace("github.com/example", "evil.example/x"),
    "mask-splice": cfg + "[user]\n\tname = x\\\\\n" + line.strip() + "\n",
    "mask-copy": cfg + "[remote \"evil\"]\n\turl = " + line.split("= ", 1)[1] + "x\n",
}
for name, text in tries.items():
    open(".git/config.lock", "w").write(text)
    try:
        os.rename(".git/config.lock", ".git/config")
        print(name + " ok")
    except OSError:
        os.unlink(".git/config.lock")
PY
# Files named config elsewhere, and the included file, by every file type.
{ printf "[core]\n\tfsmonitor = touch $pw\n" >sub/a/config; } 2>/dev/null && echo "sub-config-create ok"
printf "[core]\n\tfsmonitor = touch $pw\n" >sub/b/new.tmp && mv sub/b/new.tmp sub/b/config 2>/dev/null && echo "sub-config-rename ok"
rm -f sub/b/new.tmp
ln -s ../../.git/config sub/c/config 2>/dev/null && echo "sub-config-symlink ok"
ln README.md sub/d/config 2>/dev/null && echo "sub-config-link ok"
{ printf "[alias]\n\tst = !sh\n" >>team.gitconfig; } 2>/dev/null && echo "include-append ok"
{ printf "[user]\n\tname = T\n[core]\n\tpager = touch $pw\n" >team.new; mv team.new team.gitconfig; } 2>/dev/null && echo "include-rename ok"
rm -f team.new
ln -s evil.cfg sub/x 2>/dev/null; mv sub/x team.gitconfig 2>/dev/null && echo "include-symlink ok"
rm -f sub/x
ln -s /tmp/x .git/cfglink 2>/dev/null; mv .git/cfglink .git/config 2>/dev/null && echo "config-symlink-over ok"
rm -f .git/cfglink
python3 - <<PY 2>/dev/null && echo "config-exchange ok"
import ctypes, os
open("x.cfg", "w").write("[core]\n\tfsmonitor = x\n")
libc = ctypes.CDLL(None, use_errno=True)
r = libc.syscall(316, -100, b"x.cfg", -100, b".git/config", 2)  # renameat2 RENAME_EXCHANGE (x86-64)
os.unlink("x.cfg")
raise SystemExit(0 if r == 0 else 1)
PY
rm -f x.cfg
rm -f .git/config 2>/dev/null && echo "config-unlink ok"
rm -f team.gitconfig 2>/dev/null && echo "include-unlink ok"
# The core.hooksPath directory (tools/hooks), by every file type.
mkdir tools/hooks 2>/dev/null && echo "hookspath-mkdir ok"
ln -s ../sub tools/hooks 2>/dev/null && echo "hookspath-symlink ok"
{ echo "echo x" >tools/hooks; } 2>/dev/null && echo "hookspath-file ok"
# Its parent may go (nothing runs from a path that is not there), but not
# come back as a symlink to a directory the agent fills.
mv tools tools.old 2>/dev/null
ln -s sub tools 2>/dev/null && echo "hookspath-parent-symlink ok"
mkdir -p tools/hooks 2>/dev/null && echo "hookspath-parent-mkdir ok"
# hooks/ of the existing repository, and of a new one made here.
{ echo x >.git/hooks/new.sample; } 2>/dev/null && echo "old-hooks-sample ok"
git init -q fresh
{ echo x >fresh/.git/hooks/post-checkout; } 2>/dev/null && echo "new-hooks-file ok"
mkdir fresh/.git/hooks/d 2>/dev/null && echo "new-hooks-mkdir ok"
ln -s pre-commit.sample fresh/.git/hooks/x.sample 2>/dev/null && echo "new-hooks-symlink ok"
ln fresh/.git/hooks/pre-commit.sample fresh/.git/hooks/pre-commit 2>/dev/null && echo "new-hooks-link ok"
mv fresh/.git/hooks/pre-push.sample fresh/.git/hooks/pre-push 2>/dev/null && echo "new-hooks-rename ok"
cp README.md fresh/.git/hooks/y.sample 2>/dev/null && mv fresh/.git/hooks/y.sample fresh/.git/hooks/y 2>/dev/null && echo "new-hooks-sample-rename ok"
true'

out_plain=$(bash -c "$attack" attack "$T/plain" 2>&1)
echo "--- control (plain directory):"
echo "$out_plain"
for a in fsmonitor hooksPath sshCommand alias include insteadOf filter file-url dash-host local-path; do
	vr_check "control: $a by git config works on a plain directory" grep -q "^$a git-config ok" <<<"$out_plain"
	vr_check "control: $a by hand works on a plain directory" grep -q "^$a by-hand ok" <<<"$out_plain"
done
for a in config-unlink include-unlink held-fd held-fd-effect mask-edit mask-splice mask-copy sub-config-create sub-config-rename \
	sub-config-symlink include-append include-rename hookspath-mkdir new-hooks-file new-hooks-rename; do
	vr_check "control: $a works on a plain directory" grep -q "^$a ok" <<<"$out_plain"
done

out=$("$VR" --project "$P" --profile none --quiet --audit "$A" -- bash -c "$attack" attack "$P" 2>&1) ||
	vr_fail "the sandbox run failed"
echo "--- inside:"
echo "$out"
vr_check_not "no attack worked inside" grep -q ' ok$' <<<"$out"
vr_check "the held config.lock was accepted (its user.email landed)" \
	test "$(git config --file "$P/.git/config" user.email)" = agent@example.com
# The one accepted change aside, every protected file is byte-identical.
git -C "$P" config user.email host@example.com
vr_check "every protected file is byte-identical on the host" test "$(sums)" = "$before"
vr_check_not "nothing named config appeared" sh -c "find '$P/sub' -name config | grep -q ."
vr_check_not "tools is not a symlink, tools/hooks not there" test -L "$P/tools" -o -e "$P/tools/hooks" -o -L "$P/tools/hooks"
vr_check_not "no hook in the new repository" test -e "$P/fresh/.git/hooks/pre-commit" -o -e "$P/fresh/.git/hooks/pre-push" -o -e "$P/fresh/.git/hooks/y"
vr_check "the new repository has its samples" test -f "$P/fresh/.git/hooks/pre-commit.sample"
vr_check_not "nothing ran" test -e "$P/pwned"
for key in core.fsmonitor core.hookspath core.sshcommand alias.st include.path \
	url.https://evil.example/.insteadof filter.x.clean remote.evil.url branch.master.remote; do
	vr_check "the refusal of $key is audited" grep -q "\"result\":\"EACCES\".*\"gate\":\"gitconfig\",\"key\":\"$key\"" "$A"
done
vr_check "the masked-token edit is audited" grep -q '"gate":"gitconfig".*"reason":"line [0-9]* holds masked characters' "$A"
vr_done
