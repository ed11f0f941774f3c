#!/usr/bin/env python3
"""gen-repo.py DIR [--seed N] [--files N] [--commits N] — a git repository
with history, generated from a seed: the same bytes, paths, commits and
hashes on every machine with the same git. Source-like text files of
lognormal sizes in directories up to 11 deep (a third of them 8 or more),
written through `git fast-import` (fast, no working tree needed), then
checked out. For bench/view-bench.sh."""
import argparse
import os
import random
import subprocess
import sys

WORDS = ("alpha beta gamma delta buffer cache entry inode lookup parse token "
         "reader writer queue state config handle table index route model view "
         "client server proto codec frame packet stream batch merge split "
         "policy rule match audit event record journal").split()
TOP = ["src", "lib", "tests", "docs", "tools", "internal", "pkg", "cmd"]


def make_dirs(rng, n):
    """n directory paths; depths 1..11, every prefix a directory too."""
    dirs = set()
    out = []
    while len(out) < n:
        depth = rng.choice([1, 2, 2, 3, 3, 4, 5, 6, 8, 9, 10, 11])
        parts = [rng.choice(TOP)]
        for _ in range(depth - 1):
            parts.append(rng.choice(WORDS) + (str(rng.randrange(4)) if rng.random() < .3 else ""))
        p = "/".join(parts)
        if p not in dirs:
            dirs.add(p)
            out.append(p)
    return out


def text(rng, size):
    lines = []
    n = 0
    ext_kw = ("func", "return", "if", "for", "struct", "let", "const", "import")
    while n < size:
        ind = "\t" * rng.randrange(4)
        words = " ".join(rng.choice(WORDS) for _ in range(rng.randrange(2, 10)))
        line = f"{ind}{rng.choice(ext_kw)} {words} = {rng.randrange(1 << 20)};\n"
        lines.append(line)
        n += len(line)
    return "".join(lines).encode()[:size]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("dir")
    ap.add_argument("--seed", type=int, default=19)
    ap.add_argument("--files", type=int, default=3000)
    ap.add_argument("--commits", type=int, default=300)
    a = ap.parse_args()
    rng = random.Random(a.seed)
    dirs = make_dirs(rng, max(8, a.files // 12))
    exts = [".go", ".c", ".h", ".py", ".rs", ".md", ".txt", ".json"]
    files = {}  # path -> content
    names = []
    for k in range(a.files):
        d = rng.choice(dirs)
        names.append(f"{d}/{rng.choice(WORDS)}_{k}{rng.choice(exts)}")

    def size():
        return max(40, min(64 << 10, int(rng.lognormvariate(7.8, 1.1))))

    os.makedirs(a.dir, exist_ok=True)
    subprocess.run(["git", "init", "-q", "-b", "main", a.dir], check=True)
    fi = subprocess.Popen(["git", "-C", a.dir, "fast-import", "--quiet"], stdin=subprocess.PIPE)
    w = fi.stdin.write
    pending = list(names)
    rng.shuffle(pending)
    first = int(len(pending) * .6)
    t0 = 1700000000
    for c in range(a.commits):
        changes = []
        if c == 0:
            for p in pending[:first]:
                changes.append(("M", p))
            pending = pending[first:]
        else:
            for _ in range(rng.randrange(1, 10)):
                changes.append(("M", rng.choice(sorted(files))))
            for _ in range(rng.randrange(0, 6)):
                if pending:
                    changes.append(("M", pending.pop()))
            if rng.random() < .15 and len(files) > 10:
                changes.append(("D", rng.choice(sorted(files))))
        if c == a.commits - 1:
            changes += [("M", p) for p in pending]
        msg = f"change {c}: {' '.join(rng.choice(WORDS) for _ in range(5))}\n".encode()
        ts = t0 + c * 3607
        w(b"commit refs/heads/main\n")
        w(f"author Bench <bench@example.org> {ts} +0000\n".encode())
        w(f"committer Bench <bench@example.org> {ts} +0000\n".encode())
        w(b"data %d\n%s\n" % (len(msg), msg))
        for op, p in changes:
            if op == "D":
                if p in files:
                    del files[p]
                    w(f"D {p}\n".encode())
                continue
            body = text(rng, size())
            files[p] = body
            w(f"M 100644 inline {p}\n".encode())
            w(b"data %d\n%s\n" % (len(body), body))
        w(b"\n")
    fi.stdin.close()
    if fi.wait() != 0:
        sys.exit("git fast-import failed")
    subprocess.run(["git", "-C", a.dir, "checkout", "-q", "-f", "main"], check=True)


if __name__ == "__main__":
    main()
