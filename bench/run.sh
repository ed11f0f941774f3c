#!/usr/bin/env bash
# run.sh [--quick] — every benchmark from one command, each printing ratios
# measured in the same run: the policy engine (decisions/s), the secret
# scanner (MB/s), the view against native and bindfs (find, rg, git status,
# du -s, ls -lR, tar x), start-up against bubblewrap (one and 20 at once),
# the audit summary reader; without --quick also the 1 GiB file (fio, dd),
# a C build, the daemon's memory and audit levels.
# Installs bindfs, hyperfine, fio and bubblewrap when missing (Debian), builds
# build-bench/ (release flags). --quick: smaller trees, fewer runs.
set -euo pipefail
cd "$(dirname "$0")/.."
quick=0; [ "${1:-}" = --quick ] && quick=1

need=()
for p in bindfs hyperfine fio bubblewrap ripgrep git make gcc; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || need+=("$p")
done
if ((${#need[@]})); then
	sudo=; [ "$(id -u)" = 0 ] || sudo=sudo
	$sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${need[@]}"
fi
cmake -S . -B build-bench -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build build-bench -j"$(nproc)" >/dev/null
B=$PWD/build-bench

echo "== machine: $(nproc) cores, $(uname -r), $(date -u +%Y-%m-%dT%H:%MZ)"
echo "== policy engine"; "$B/bench/bench-policy"
echo "== secret scanner"; "$B/bench/bench-scan"
if ((quick)); then
	echo "== view (FILES=2000 RUNS=3)"; FILES=2000 RUNS=3 bench/view-bench.sh "$B"
	echo "== start-up (RUNS=10 CRUNS=3)"; RUNS=10 CRUNS=3 bench/startup-bench.sh "$B"
else
	echo "== view"; bench/view-bench.sh "$B"
	echo "== start-up"; bench/startup-bench.sh "$B"
	echo "== 1 GiB file"; bench/io-bench.sh "$B"
	echo "== C build"; bench/build-bench.sh "$B"
	echo "== daemon memory and audit levels"; bench/daemon-bench.sh "$B"
	echo "== audit summary"; bench/audit-summary-bench.sh "$B" || true
fi
