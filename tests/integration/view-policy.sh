#!/usr/bin/env bash
# Every rule of the view, checked through a real mount, each with the host
# file compared before/after: hidden names are absent and cannot be created,
# linked or renamed onto; read-only paths refuse every modification;
# redacted files are masked in place; renames that would change which rules
# match are refused.
. "$(dirname "$0")/../lib/libtest.sh"
. "$(dirname "$0")/../lib/view-lib.sh"
vr_require_fuse
vr_require_cmd git python3

P="$T/project" M="$T/view"
view_make_demo "$P"
mkdir -p "$P/sub" "$P/.ssh" "$P/docs"
echo 'SUB_SECRET=s3cr3t-sub' >"$P/sub/.env"
echo 'ssh key' >"$P/.ssh/id_ed25519"
echo 'anchored secret' >"$P/docs/secret.txt"
echo 'docs' >"$P/docs/readme.txt"
printf 'user=app\nPASSWORD=hunter2-redact\nport=5432\n' >"$P/settings.ini"
# Snapshot of everything the view must never change.
snap() { (cd "$P" && find . -path ./.git/objects -prune -o -path ./.git/logs -prune -o -type f -print0 | sort -z | xargs -0 sha256sum); }
snap >"$T/before"
envsum=$(sha256sum <"$P/.env")

vr_mount "$P" "$M" --redact settings.ini --hide /docs/secret.txt --audit "$T/audit.jsonl" ||
	vr_skip "cannot mount a FUSE view here"

# Operations are batched into one python run (one interpreter start, not
# seventy): `expect ERRNO OP ARGS...` queues, `run_ops` runs and reports.
: >"$T/ops"
expect() { printf '%s\0' "$@" >>"$T/ops"; printf '\n' >>"$T/ops"; }
run_ops() {
	local out
	out=$(python3 - "$T/ops" <<'PY'
import errno, os, sys
def openw(path, flags):
    # The refusal comes at open, or in the view's no-open mode (the kernel
    # opens files without asking) at the first write: write a byte.
    fd = os.open(path, flags)
    try: os.write(fd, b"x")
    finally: os.close(fd)
def do(op, args):
    if op == "creat": os.close(os.open(args[0], os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644))
    elif op == "openw": openw(args[0], os.O_WRONLY)
    elif op == "openr": os.close(os.open(args[0], os.O_RDONLY))
    elif op == "append": openw(args[0], os.O_WRONLY | os.O_APPEND)
    elif op == "mkdir": os.mkdir(args[0])
    elif op == "mkfifo": os.mkfifo(args[0])
    elif op == "symlink": os.symlink(args[0], args[1])
    elif op == "link": os.link(args[0], args[1])
    elif op == "rename": os.rename(args[0], args[1])
    elif op == "unlink": os.unlink(args[0])
    elif op == "rmdir": os.rmdir(args[0])
    elif op == "chmod": os.chmod(args[0], 0o777)
    elif op == "truncate": os.truncate(args[0], 0)
    elif op == "utime": os.utime(args[0], (1, 1))
    elif op == "setxattr": os.setxattr(args[0], "user.x", b"1")
    elif op == "stat": os.lstat(args[0])
    else: raise SystemExit("bad op " + op)
for line in open(sys.argv[1], "rb").read().split(b"\n"):
    if not line: continue
    f = [x.decode() for x in line.split(b"\0")[:-1]]
    want, op, args = f[0], f[1], f[2:]
    try:
        do(op, args); got = "OK"
    except OSError as e:
        got = errno.errorcode[e.errno]
    print(("ok: " if got == want else "FAIL: ") + " ".join(f[1:]) + " -> " + got + ("" if got == want else ", expected " + want))
PY
)
	: >"$T/ops"
	echo "$out"
	vr_failures=$((vr_failures + $(grep -c '^FAIL' <<<"$out" || true)))
}

# --- hide ---
vr_check_not "readdir never lists hidden names" sh -c "find '$M' | grep -E '/\\.env\$|/id_rsa\$|credentials\\.json|/\\.ssh|docs/secret'"
vr_check ".env.example is shown (negation)" test -r "$M/.env.example"
expect ENOENT stat "$M/.env"
expect ENOENT openr "$M/.env"
expect ENOENT openr "$M/src/../.env"
expect ENOENT stat "$M/config/credentials.json"
expect ENOENT stat "$M/.ssh"
expect ENOENT stat "$M/.ssh/id_ed25519"
expect ENOENT stat "$M/docs/secret.txt"
vr_check "an anchored rule hides only its path" test -r "$M/docs/readme.txt"
expect EACCES creat "$M/.env"
expect EACCES creat "$M/sub/.env"
expect EACCES mkdir "$M/.env"
expect EACCES mkfifo "$M/.env"
expect EACCES symlink README.md "$M/.env"
expect EACCES link "$M/README.md" "$M/.env"
expect EACCES rename "$M/Makefile" "$M/.env"
expect EACCES rename "$M/Makefile" "$M/.ssh"
expect EACCES mkdir "$M/.ssh"
expect EACCES creat "$M/new.pem"
expect ENOENT unlink "$M/.env"
run_ops
vr_check "shell truncation of .env is refused" sh -c "! (: >'$M/.env') 2>/dev/null"
vr_check "host .env is byte-identical" test "$(sha256sum <"$P/.env")" = "$envsum"
# Renaming an ancestor keeps what is below it hidden.
expect OK rename "$M/sub" "$M/sub2"
expect ENOENT stat "$M/sub2/.env"
expect OK stat "$P/sub2/.env"
expect OK rename "$M/sub2" "$M/sub"

# --- readonly (built-in: .git/config, .git/hooks/) ---
expect EACCES openw "$M/.git/config"
expect EACCES append "$M/.git/config"
expect EACCES truncate "$M/.git/config"
expect EACCES chmod "$M/.git/config"
expect EACCES utime "$M/.git/config"
expect EACCES unlink "$M/.git/config"
expect EACCES rename "$M/.git/config" "$M/.git/config.old"
expect EACCES rename "$M/README.md" "$M/.git/config"
expect EACCES link "$M/.git/config" "$M/cfg-link"
expect EACCES creat "$M/.git/hooks/post-checkout"
expect EACCES openw "$M/.git/hooks/pre-commit"
expect EACCES unlink "$M/.git/hooks/pre-commit"
expect EACCES rename "$M/.git/hooks/pre-commit" "$M/pc"
expect EACCES rename "$M/Makefile" "$M/.git/hooks/Makefile"
expect EACCES mkdir "$M/.git/hooks/d"
expect EACCES setxattr "$M/.git/config"
expect OK openr "$M/.git/config"
run_ops
vr_check "an editor's save cannot replace a read-only file" sh -c "echo x >'$M/.git/cfg.tmp' && ! mv -f '$M/.git/cfg.tmp' '$M/.git/config' 2>/dev/null"
rm -f "$M/.git/cfg.tmp"
# git's own way (config.lock renamed onto config) passes the config gate
# with an inert key (docs/policy.md): the daemon writes the file itself.
cp "$P/.git/config" "$T/gitconfig.orig"
vr_check "a config.lock with an inert key replaces .git/config" sh -c "
	cp '$M/.git/config' '$M/.git/config.lock' && printf '[user]\n\temail = v@example.com\n' >>'$M/.git/config.lock' &&
	mv '$M/.git/config.lock' '$M/.git/config' && grep -q 'email = v@example.com' '$P/.git/config' &&
	test ! -e '$P/.git/config.lock'"
vr_check_not "... one with core.fsmonitor does not" sh -c "
	cp '$M/.git/config' '$M/.git/config.lock' && printf '[core]\n\tfsmonitor = x\n' >>'$M/.git/config.lock' &&
	mv '$M/.git/config.lock' '$M/.git/config' 2>/dev/null"
rm -f "$M/.git/config.lock"
vr_check_not "host .git/config has no fsmonitor" grep -q fsmonitor "$P/.git/config"
cp "$T/gitconfig.orig" "$P/.git/config" # the snapshot's version, for the check at the end

# --- redact ---
vr_check "redacted file has the host size" test "$(stat -c %s "$M/settings.ini")" = "$(stat -c %s "$P/settings.ini")"
vr_check "redacted content hides the value" sh -c "! grep -q hunter2 '$M/settings.ini'"
vr_check "redacted content keeps the rest" grep -q '^user=' "$M/settings.ini"
vr_check "cp of a redacted file copies the mask" sh -c "cp '$M/settings.ini' '$M/copy.ini' && ! grep -q hunter2 '$P/copy.ini' && cmp -s '$M/settings.ini' '$P/copy.ini'"
expect EACCES openw "$M/settings.ini"
expect EACCES truncate "$M/settings.ini"
expect EACCES link "$M/settings.ini" "$M/s2.ini"
run_ops
vr_check "the redacted open is logged" grep -q '"path":"settings.ini","result":"redacted"' "$T/audit.jsonl"

# --- renames that change which rules match ---
expect EXDEV rename "$M/docs" "$M/docs2"
mkdir "$M/plain"
expect EXDEV rename "$M/plain" "$M/docs"
expect OK rename "$M/plain" "$M/plain2"
run_ops
rmdir "$M/plain2"

vr_unmount
vr_check "refusals are in the audit log" grep -q '"op":"create","path":".env","result":"hidden"' "$T/audit.jsonl"
vr_check "refusals name their rule" grep -q '"result":"readonly","rule":' "$T/audit.jsonl"
rm -f "$P/copy.ini"
snap >"$T/after"
vr_check "nothing protected changed on the host" diff "$T/before" "$T/after"

# --- case-insensitive directories ---
# This kernel/file system may have no casefold; VR_VIEW_ASSUME_CASEFOLD=1
# makes the daemon treat every directory as case-insensitive, as it does for
# vfat/exfat/ntfs/cifs and chattr +F directories.
echo 'UPPER=secret' >"$P/.ENV"
vr_mount "$P" "$M" || vr_fail "remount"
vr_check "on a case-sensitive directory .ENV is another file (visible)" test -r "$M/.ENV"
vr_unmount
export VR_VIEW_ASSUME_CASEFOLD=1
vr_mount "$P" "$M" || vr_fail "casefold mount"
unset VR_VIEW_ASSUME_CASEFOLD
expect ENOENT stat "$M/.ENV"
expect EACCES creat "$M/.Env"
run_ops
vr_check_not "case-insensitive: readdir hides .ENV" sh -c "ls -a '$M' | grep -qx .ENV"
vr_unmount
view_done
