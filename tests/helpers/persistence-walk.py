# Run inside the sandbox by persistence-list.sh (python3 for speed: one
# process makes every call, each a plain syscall). argv: MODE ROOT LIST.
# LIST lines: "d NAME" (a read-only directory rule), "f NAME" (a read-only
# file rule), "h NAME" (a hidden directory rule). Prints "NAME WHAT ok" for
# every call that succeeds: for the test, each is a hole.
import os
import sys

mode, root, listfile = sys.argv[1:4]
entries = [line.split(None, 1) for line in open(listfile).read().splitlines() if line]
os.chdir(root)


def attempt(name, what, fn, undo=None):
    try:
        fn()
    except OSError:
        return
    print(name, what, "ok", flush=True)
    if undo:
        try:
            undo()
        except OSError:
            pass


def write(path, flags, data=b"PLANTED\n"):
    fd = os.open(path, flags, 0o644)
    try:
        os.write(fd, data)
    finally:
        os.close(fd)


def rm(path):
    if os.path.isdir(path) and not os.path.islink(path):
        os.rmdir(path)
    else:
        os.unlink(path)


# Scratch objects to move or link onto the names.
write("vr-tmp-file", os.O_WRONLY | os.O_CREAT | os.O_TRUNC)
os.makedirs("vr-tmp-dir", exist_ok=True)

for kind, name in entries:
    if mode == "existing":
        target = name + "/x" if kind == "d" else name
        attempt(name, "append", lambda: write(target, os.O_WRONLY | os.O_APPEND))
        attempt(name, "open-trunc", lambda: os.close(os.open(target, os.O_WRONLY | os.O_TRUNC)))
        attempt(name, "truncate", lambda: os.truncate(target, 0))
        attempt(name, "chmod", lambda: os.chmod(target, 0o777))
        write("vr-tmp-new", os.O_WRONLY | os.O_CREAT | os.O_TRUNC)
        attempt(name, "rename-onto", lambda: os.rename("vr-tmp-new", target))
        attempt(name, "unlink", lambda: os.unlink(target))
        if kind == "d":
            attempt(name, "create-inside", lambda: write(name + "/vr-new", os.O_WRONLY | os.O_CREAT | os.O_EXCL),
                    lambda: os.unlink(name + "/vr-new"))
            attempt(name, "mkdir-inside", lambda: os.mkdir(name + "/vr-dir"), lambda: os.rmdir(name + "/vr-dir"))
            attempt(name, "symlink-inside", lambda: os.symlink("../x", name + "/vr-lnk"),
                    lambda: os.unlink(name + "/vr-lnk"))
            attempt(name, "rename-dir-away", lambda: os.rename(name, name + ".vr-moved"),
                    lambda: os.rename(name + ".vr-moved", name))
    else:
        parent = os.path.dirname(name)
        if parent:
            os.makedirs(parent, exist_ok=True)
        attempt(name, "mkdir", lambda: os.mkdir(name), lambda: rm(name))
        attempt(name, "create", lambda: write(name, os.O_WRONLY | os.O_CREAT | os.O_EXCL), lambda: rm(name))
        attempt(name, "symlink-rel", lambda: os.symlink("vr-tmp-dir", name), lambda: rm(name))
        attempt(name, "symlink-abs", lambda: os.symlink(os.path.join(root, "vr-tmp-dir"), name), lambda: rm(name))
        attempt(name, "mkfifo", lambda: os.mkfifo(name), lambda: rm(name))
        attempt(name, "link", lambda: os.link("vr-tmp-file", name), lambda: rm(name))
        attempt(name, "rename-file-onto", lambda: os.rename("vr-tmp-file", name),
                lambda: os.rename(name, "vr-tmp-file"))
        attempt(name, "rename-dir-onto", lambda: os.rename("vr-tmp-dir", name),
                lambda: os.rename(name, "vr-tmp-dir"))
for scratch in ("vr-tmp-file", "vr-tmp-new", "vr-tmp-dir"):
    try:
        rm(scratch)
    except OSError:
        pass
print("walked", len(entries), flush=True)
