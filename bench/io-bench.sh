#!/usr/bin/env bash
# io-bench.sh [BUILD_DIR] — a 1 GiB file on the native directory, through the
# view (`vault-run mount`, default settings) and through bindfs: sequential
# read with warm caches, sequential read from a fresh mount (the view's and
# bindfs' page cache empty, the host's warm: the FUSE cost of a first read),
# sequential write with conv=fsync, random 4k reads (fio, warm, 5 s each).
# Runs alternate native/view/bindfs; medians of RUNS (default 5); prints
# throughput and view/native. Not part of ctest. Env: RUNS, FIO_SECS, KEEP=1.
set -euo pipefail
BUILD=${1:-$(cd "$(dirname "$0")/../build" 2>/dev/null && pwd || true)}
. "$(dirname "$0")/bench-lib.sh"
install_missing fio bindfs
FIO_SECS=${FIO_SECS:-5}
MIB=1024

# Reproducible content: AES-CTR of zeros under a fixed key (incompressible,
# not zeros, the same bytes on every machine).
mkdir -p "$W/tree"
echo "generating the 1 GiB file…" >&2
if command -v openssl >/dev/null; then
	openssl enc -aes-128-ctr -nosalt -K 00112233445566778899aabbccddeeff -iv 0 </dev/zero 2>/dev/null |
		head -c $((MIB << 20)) >"$W/tree/big" || true
else
	yes 'vault-run io bench 0123456789abcdefghijklmnopqrstuvwxyz' | head -c $((MIB << 20)) >"$W/tree/big" || true
fi
mount_view "$W/tree" "$W/view"
have_bindfs=0; mount_bindfs "$W/tree" "$W/bindfs" && have_bindfs=1
places=(native view); ((have_bindfs)) && places+=(bindfs)
dir_of() { case $1 in native) echo "$W/tree" ;; view) echo "$W/view" ;; bindfs) echo "$W/bindfs" ;; esac; }
remount() {  # remount PLACE — a fresh mount: its page cache is empty
	case $1 in
	view) umount_view; mount_view "$W/tree" "$W/view" ;;
	bindfs) fusermount3 -u "$W/bindfs"; bindfs --no-allow-other "$W/tree" "$W/bindfs" ;;
	esac
}
seqread() { dd if="$1/big" of=/dev/null bs=1M status=none; }
seqwrite() { dd if=/dev/zero of="$1/w" bs=1M count=$MIB conv=fsync status=none; }
randread() {  # prints IOPS
	fio --name=rr --filename="$1/big" --size=${MIB}M --rw=randread --bs=4k --ioengine=psync \
		--invalidate=0 --time_based --runtime="$FIO_SECS" --output-format=json |
		python3 -c 'import json,sys; print(json.load(sys.stdin)["jobs"][0]["read"]["iops"])'
}

cat "$W/tree/big" >/dev/null
for p in "${places[@]}"; do seqread "$(dir_of "$p")"; done  # warm every page cache
for i in $(seq 1 "$RUNS"); do
	for p in "${places[@]}"; do
		d=$(dir_of "$p")
		secs seqread "$d" >>"$W/t.read-warm.$p"
		remount "$p"
		secs seqread "$d" >>"$W/t.read-fresh.$p"
		secs seqwrite "$d" >>"$W/t.write-fsync.$p"; rm -f "$d/w"
		randread "$d" >>"$W/t.randread.$p"
	done
done

printf '%-14s %12s %12s %7s %12s %7s\n' work native view ratio bindfs ratio
for work in read-warm read-fresh write-fsync randread; do
	declare -A v=()
	for p in native view bindfs; do
		if [ -s "$W/t.$work.$p" ]; then
			m=$(median <"$W/t.$work.$p")
			if [ $work = randread ]; then v[$p]=$(awk -v x="$m" 'BEGIN { printf "%.0f", x }')
			else v[$p]=$(awk -v s="$m" -v n=$MIB 'BEGIN { printf "%.0f", n / s }'); fi
		else v[$p]=-; fi
	done
	unit=MiB/s; [ $work = randread ] && unit=IOPS
	printf '%-14s %12s %12s %7s %12s %7s  (%s, view and bindfs / native)\n' "$work" "${v[native]}" "${v[view]}" \
		"$(ratio "${v[view]}" "${v[native]}")" "${v[bindfs]}" "$(ratio "${v[bindfs]}" "${v[native]}")" "$unit"
	unset v
done
