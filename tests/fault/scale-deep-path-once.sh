#!/usr/bin/env bash
# Scale: a path ~4,000 bytes deep through the view inside the sandbox.
# Directories of 99-byte names are nested under deep/ until the absolute
# path of a file at the bottom is just below PATH_MAX (4,096 bytes with the
# NUL); there, by its absolute path, a file is created, written, stat'ed,
# read and renamed. Two levels further (~4,250 bytes) the absolute path is
# too long for the kernel (ENAMETOOLONG, inside as on the host: the view adds
# no limit of its own), and the same operations through directory fds
# (openat & co.) work. The host sees the files; a second run removes the
# whole tree through the view. Control: the same script on the host first.
# Root only (-once): nothing here depends on who runs vault-run (the @user
# and @unshare variants passed too when it ran in all three).
. "$(dirname "$0")/../lib/libtest.sh"
. "$(dirname "$0")/../lib/sandbox-lib.sh"
vr_require_sandbox
vr_require_cmd python3
P="$T/project"
mkdir -p "$P"

# deep.py build|remove ROOT — prints one line per step: "STEP ok" or "STEP ERRNAME".
cat >"$T/deep.py" <<'PY'
import errno, os, sys
mode, root = sys.argv[1], os.path.abspath(sys.argv[2])
NAME = "d" * 99
# Levels so that ROOT/deep/NAME/.../f stays below PATH_MAX (4095 + NUL).
levels = (4095 - len(root) - len("/deep") - len("/f")) // (len(NAME) + 1)
def say(step, fn):
    try:
        fn(); print(step, "ok")
    except OSError as e:
        print(step, errno.errorcode.get(e.errno, str(e.errno)))
def chain(n, make):
    fd = os.open(root, os.O_RDONLY | os.O_DIRECTORY)
    for name in ["deep"] + [NAME] * n:
        if make: os.mkdir(name, 0o755, dir_fd=fd)
        nfd = os.open(name, os.O_RDONLY | os.O_DIRECTORY, dir_fd=fd)
        os.close(fd); fd = nfd
    return fd
absdir = os.path.join(root, "deep", *([NAME] * levels))
if mode == "build":
    fd = chain(levels, True)
    print("abs-len", len(absdir + "/f"))
    def abs_ops():
        with open(absdir + "/f", "w") as f: f.write("deep\n")
        assert os.stat(absdir + "/f").st_size == 5
        with open(absdir + "/f") as f: assert f.read() == "deep\n"
        with open(absdir + "/f", "a") as f: f.write("more\n")
        os.rename(absdir + "/f", absdir + "/g")
        assert os.stat(absdir + "/g").st_size == 10
    say("abs-ops", abs_ops)
    for i in range(2):
        os.mkdir(NAME, 0o755, dir_fd=fd)
        nfd = os.open(NAME, os.O_RDONLY | os.O_DIRECTORY, dir_fd=fd)
        os.close(fd); fd = nfd
    beyond = absdir + ("/" + NAME) * 2 + "/f"
    print("beyond-len", len(beyond))
    say("beyond-abs-stat", lambda: os.stat(beyond))
    say("beyond-abs-create", lambda: os.close(os.open(beyond, os.O_WRONLY | os.O_CREAT, 0o644)))
    def rel_ops():
        w = os.open("f", os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644, dir_fd=fd)
        os.write(w, b"deeper\n"); os.close(w)
        assert os.stat("f", dir_fd=fd).st_size == 7
        r = os.open("f", os.O_RDONLY, dir_fd=fd); assert os.read(r, 100) == b"deeper\n"; os.close(r)
        os.rename("f", "h", src_dir_fd=fd, dst_dir_fd=fd)
        os.fchdir(fd)
        with open("h") as f: assert f.read() == "deeper\n"
    say("beyond-rel-ops", rel_ops)
elif mode == "check":
    fd = chain(levels, False)
    with open(absdir + "/g") as f: print("g", f.read().replace("\n", "|"))
    fd2 = chain(levels + 2, False)
    r = os.open("h", os.O_RDONLY, dir_fd=fd2); print("h", os.read(r, 100).decode().replace("\n", "|"))
elif mode == "remove":
    def rm_tree():
        def rm(dfd):
            for name in os.listdir(dfd):
                st = os.stat(name, dir_fd=dfd, follow_symlinks=False)
                if (st.st_mode & 0o170000) == 0o040000:
                    c = os.open(name, os.O_RDONLY | os.O_DIRECTORY, dir_fd=dfd)
                    rm(c); os.close(c); os.rmdir(name, dir_fd=dfd)
                else:
                    os.unlink(name, dir_fd=dfd)
        top = os.open(root, os.O_RDONLY | os.O_DIRECTORY)
        d = os.open("deep", os.O_RDONLY | os.O_DIRECTORY, dir_fd=top)
        rm(d); os.close(d); os.rmdir("deep", dir_fd=top)
    say("remove", rm_tree)
PY

# Control: on the host itself.
mkdir -p "$T/host"
host=$(python3 "$T/deep.py" build "$T/host" 2>&1)
echo "$host" | sed 's/^/host: /'
vr_check "control: on the host the absolute-path operations work" grep -qx 'abs-ops ok' <<<"$host"
vr_check "control: on the host beyond PATH_MAX the absolute path is ENAMETOOLONG" \
	grep -qx 'beyond-abs-stat ENAMETOOLONG' <<<"$host"
vr_check "control: on the host beyond PATH_MAX directory fds work" grep -qx 'beyond-rel-ops ok' <<<"$host"

in=$("$VR" --project "$P" --profile none -- python3 - build "$P" <"$T/deep.py" 2>&1) || true
echo "$in" | sed 's/^/inside: /'
len=$(awk '/^abs-len/ { print $2 }' <<<"$in")
vr_check "inside, the file at the bottom is ~4,000 bytes deep ($len)" test "${len:-0}" -gt 3900 -a "${len:-0}" -le 4095
vr_check "inside, create/write/stat/read/append/rename by absolute path work" grep -qx 'abs-ops ok' <<<"$in"
vr_check "inside, beyond PATH_MAX stat by absolute path is ENAMETOOLONG" grep -qx 'beyond-abs-stat ENAMETOOLONG' <<<"$in"
vr_check "inside, beyond PATH_MAX create by absolute path is ENAMETOOLONG" grep -qx 'beyond-abs-create ENAMETOOLONG' <<<"$in"
vr_check "inside, beyond PATH_MAX the operations through directory fds work" grep -qx 'beyond-rel-ops ok' <<<"$in"
vr_check "the audit log has the rename beyond PATH_MAX with its whole path" \
	awk -v n="$(awk '/^beyond-len/ { print $2 }' <<<"$in")" \
	'/"op":"rename"/ && index($0, "/h\"") && length($0) > 2 * (n - 600) { found = 1 } END { exit !found }' "$XDG_STATE_HOME"/vault-run/project-*/*.jsonl
hostsees=$(python3 "$T/deep.py" check "$P" 2>&1) || true
vr_check "the host sees the renamed file at ~4,000 bytes" grep -qx 'g deep|more|' <<<"$hostsees"
vr_check "the host sees the file beyond PATH_MAX" grep -qx 'h deeper|' <<<"$hostsees"

out=$("$VR" --project "$P" --profile none -- python3 - remove "$P" <"$T/deep.py" 2>&1) || true
echo "$out" | sed 's/^/inside: /'
vr_check "inside, the whole tree is removed through the view" grep -qx 'remove ok' <<<"$out"
vr_check "the tree is gone on the host" test ! -e "$P/deep"
python3 "$T/deep.py" remove "$T/host" >/dev/null
vr_done
