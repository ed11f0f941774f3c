#!/usr/bin/env bash
# real-tree.sh DIR — a source tree that looks like a user's, for
# bench/view-bench.sh: a git repository with history (bench/gen-repo.py,
# seeded: 3,000 files over 300 commits, directories up to 11 deep) that
# vendors what every Debian 12 box with a compiler and Python has —
# /usr/include and /usr/lib/python3.11, copied and committed with fixed
# dates — plus what a checkout collects beside its sources: git-ignored
# __pycache__/, a data/ directory of large files (one 512 MiB and three
# 16 MiB files of AES-CTR output under a fixed key), a few uncommitted
# edits and a .env. Prints one line: entries, directories, bytes, the
# deepest level and a hash of the sorted (path, size) list, so two runs
# can tell whether they measured the same tree (the vendored part follows
# the host's packages; `dpkg -S` names them). Env: BIG_MIB (512).
set -euo pipefail
D=$1
BIG_MIB=${BIG_MIB:-512}
here=$(cd "$(dirname "$0")" && pwd)
export GIT_AUTHOR_DATE='2024-01-01T00:00:00Z' GIT_COMMITTER_DATE='2024-01-01T00:00:00Z'
g() { git -C "$D" -c user.name=Bench -c user.email=bench@example.org -c gc.auto=0 "$@"; }

[ ! -e "$D" ] || { echo "real-tree.sh: $D exists" >&2; exit 2; }
python3 "$here/gen-repo.py" "$D"
mkdir -p "$D/vendor"
for src in /usr/include /usr/lib/python3.11; do
	[ -d "$src" ] || { echo "real-tree.sh: $src is missing (apt-get install libc6-dev python3.11)" >&2; exit 2; }
	cp -a "$src" "$D/vendor/"
done
printf '__pycache__/\n*.pyc\n/data/\n' >"$D/.gitignore"
g add -A . >/dev/null
g commit -qm 'vendor the system headers and the standard library'
g gc -q
# Uncommitted work, so `git status` has something to say.
for f in $(g ls-files 'src/*' | sort | head -5); do echo '// edited' >>"$D/$f"; done
mkdir -p "$D/src/new" && echo 'new file' >"$D/src/new/untracked.txt"
printf 'API_KEY=bench\n' >"$D/.env"
mkdir -p "$D/data"
aes() {  # aes MIB FILE KEY — incompressible, the same bytes everywhere
	openssl enc -aes-128-ctr -nosalt -K "$3" -iv 0 </dev/zero 2>/dev/null | head -c $(($1 << 20)) >"$2" || true
}
aes "$BIG_MIB" "$D/data/big.bin" 00112233445566778899aabbccddeeff
for k in 1 2 3; do aes 16 "$D/data/asset$k.bin" "0011223344556677889900000000000$k"; done
find "$D" -mindepth 1 -printf '%P %s\n' | LC_ALL=C sort >"$D.manifest"
awk -v d="$(find "$D" -mindepth 1 -type d | wc -l)" -v deep="$(find "$D" -mindepth 1 -printf '%d\n' | sort -n | tail -1)" \
	-v h="$(sha256sum <"$D.manifest" | cut -c1-16)" \
	'{n++; s += $NF} END {printf "tree: %d entries, %d directories, %.0f MB, %d deep, manifest %s\n", n, d, s / 1e6, deep, h}' "$D.manifest"
