#!/usr/bin/env bash
# Journal on vs off through `vault-run mount`: creating many small files,
# reading them back, untarring a source-like tree and removing it again
# (the creation workload of bench/view-bench.sh), and overwriting existing
# files (the copy the journal makes on ext4, which has no FICLONE). Prints
# seconds and the ratio; run it a few times and read the medians.
# usage: bench/journal-bench.sh [BUILD_DIR]   (needs /dev/fuse)
set -euo pipefail
B=${1:-$(dirname "$0")/../build}
VR=$(realpath "$B/vault-run")
W=$(mktemp -d /tmp/vr-jbench.XXXXXX)
trap 'fusermount3 -u -z "$W/m" 2>/dev/null || true; rm -rf "$W"' EXIT
N=${N:-2000} MB=${MB:-64}

mount_view() { # PROJECT [ARGS...]
	local p=$1; shift
	mkdir -p "$W/m"
	"$VR" mount "$@" "$p" "$W/m" >"$W/ready" 2>"$W/err" &
	PID=$!
	for _ in $(seq 200); do grep -q . "$W/ready" 2>/dev/null && return 0; sleep 0.05; done
	cat "$W/err"; exit 1
}
umount_view() { kill -TERM "$PID"; wait "$PID" || true; }
t() { local s e; s=$(date +%s.%N); "$@"; e=$(date +%s.%N); echo "$e - $s" | bc; }

create() { for i in $(seq "$N"); do echo "file $i" >"$W/m/f$i"; done; }
readall() { cat "$W/m"/f* >/dev/null; }
overwrite() { for i in 1 2 3 4; do dd if=/dev/zero of="$W/m/big$i" bs=1M count=1 conv=notrunc status=none; done; }
untar() { tar -xf "$W/tree.tar" -C "$W/m" && rm -r "$W/m/tree"; }

# A source-like tree (50 directories × 40 files of 200 B–8 KiB), made once.
mkdir -p "$W/tree"
for d in $(seq 50); do
	mkdir -p "$W/tree/d$d"
	for f in $(seq 40); do head -c $(((d * 40 + f) % 8000 + 200)) /dev/zero | tr '\0' x >"$W/tree/d$d/f$f.c"; done
done
tar -cf "$W/tree.tar" -C "$W" tree && rm -rf "$W/tree"

for mode in off on; do
	rm -rf "$W/p" "$W/j"; mkdir -p "$W/p"
	for i in 1 2 3 4; do head -c $((MB * 1024 * 1024 / 4)) /dev/urandom >"$W/p/big$i"; done
	args=(); [ $mode = on ] && args=(--journal "$W/j")
	mount_view "$W/p" "${args[@]}"
	c=$(t create); sync
	r=$(t readall)
	x=$(t untar)
	o=$(t overwrite)
	umount_view
	echo "journal=$mode create_${N}=${c}s read_${N}=${r}s tar_x_rm_2000=${x}s overwrite_${MB}MiB=${o}s"
	eval "c_$mode=$c r_$mode=$r x_$mode=$x o_$mode=$o"
done
echo "ratio on/off: create $(echo "scale=2; $c_on / $c_off" | bc)  read $(echo "scale=2; $r_on / $r_off" | bc)  tar-x+rm $(echo "scale=2; $x_on / $x_off" | bc)  overwrite $(echo "scale=2; $o_on / $o_off" | bc)"
echo "journal copy cost: $(echo "scale=2; ($o_on - $o_off) * 1000 / $MB" | bc) ms/MiB"
