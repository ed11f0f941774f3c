# libtest.sh — shared setup for the shell tests. Source it first:
#   . "$(dirname "$0")/../lib/libtest.sh"
# Gives: $VR (the binary), $T (a private temp dir, removed at exit along with
# anything mounted below it), vr_skip, vr_fail, vr_check, vr_require_*,
# vr_copy_demo/vr_make_demo, vr_mount/vr_unmount, vr_is_host_root.
set -euo pipefail

VR_BUILD_DIR=${VR_BUILD_DIR:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../../build" && pwd)}
VR_SOURCE_DIR=${VR_SOURCE_DIR:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)}
VR="$VR_BUILD_DIR/vault-run"
VR_BIN="$VR_BUILD_DIR/tests/bin"
TEST_NAME=$(basename "$0" .sh)
T=$(mktemp -d "${TMPDIR:-/tmp}/vr-$TEST_NAME.XXXXXX")
vr_failures=0
vr_mount_pids=()
# Runs keep their audit logs in the state directory: the test's own, never
# the machine's (~/.local/state) nor another test's.
export XDG_STATE_HOME="$T/state"

vr_cleanup() {
	local pid m
	for pid in "${vr_mount_pids[@]}"; do kill -TERM "$pid" 2>/dev/null || true; done
	for pid in "${vr_mount_pids[@]}"; do wait "$pid" 2>/dev/null || true; done
	# Anything still mounted under $T (a killed daemon) goes, deepest first.
	if [ -r /proc/self/mountinfo ]; then
		for m in $(awk -v t="$T" 'index($5, t) == 1 { print $5 }' /proc/self/mountinfo | sort -r); do
			fusermount3 -u -z "$m" 2>/dev/null || umount -l "$m" 2>/dev/null || true
		done
	fi
	chmod -R u+rwX "$T" 2>/dev/null || true
	rm -rf "$T"
}
trap vr_cleanup EXIT

vr_skip() {
	echo "SKIP: $*"
	if [ "${VR_TESTS_MUST_WORK:-0}" = 1 ]; then
		echo "FAIL: VR_TESTS_MUST_WORK=1 turns this skip into a failure"
		exit 1
	fi
	exit 77
}
vr_fail() { echo "FAIL: $*"; vr_failures=$((vr_failures + 1)); }
vr_pass() { echo "ok: $*"; }
# vr_check DESCRIPTION COMMAND... — passes when COMMAND succeeds.
vr_check() {
	local what=$1; shift
	if "$@"; then vr_pass "$what"; else vr_fail "$what"; fi
}
# vr_check_not DESCRIPTION COMMAND... — passes when COMMAND fails.
vr_check_not() {
	local what=$1; shift
	if "$@"; then vr_fail "$what"; else vr_pass "$what"; fi
}
vr_done() {
	if [ "$vr_failures" -ne 0 ]; then
		echo "$vr_failures check(s) failed"
		exit 1
	fi
	echo "all checks passed"
	exit 0
}

# True when this process is root of the initial user namespace (not unshare -r).
vr_is_host_root() {
	[ "$(id -u)" = 0 ] && [ "$(awk 'NR==1 {print $2 $3}' /proc/self/uid_map)" = "04294967295" ]
}

vr_require_fuse() {
	[ -c /dev/fuse ] || vr_skip "/dev/fuse is missing"
	[ -r /dev/fuse ] && [ -w /dev/fuse ] || vr_skip "/dev/fuse is not usable by uid $(id -u)"
}
vr_require_userns() {
	unshare -U true 2>/dev/null || vr_skip "unprivileged user namespaces are not available"
}
vr_require_cmd() {
	local c
	for c; do command -v "$c" >/dev/null || vr_skip "$c is not installed"; done
}

# vr_demo_files — the demo project's files, NUL-terminated, relative to it:
# what git tracks when the source is a checkout of its own. Never the demo's
# .git: scripts/quickstart.sh makes examples/demo-project a repository (the
# README's first command), and a copy of that .git would leave the copy's own
# `git commit` nothing to commit. Nor what the user added there to try things.
# From a source tree that is no checkout (a tarball): every file but a .git.
vr_demo_files() {
	local src="$VR_SOURCE_DIR/examples/demo-project" top
	# safe.directory: the @user and @unshare variants read a checkout owned
	# by someone else.
	top=$(git -c safe.directory='*' -C "$VR_SOURCE_DIR" rev-parse --show-toplevel 2>/dev/null) || top=
	if [ -n "$top" ] && [ "$(cd "$top" && pwd -P)" = "$(cd "$VR_SOURCE_DIR" && pwd -P)" ]; then
		git -c safe.directory='*' -C "$VR_SOURCE_DIR" ls-files -z -- examples/demo-project |
			while IFS= read -r -d '' f; do printf '%s\0' "${f#examples/demo-project/}"; done
	else
		(cd "$src" && find . -name .git -prune -o -type f -printf '%P\0')
	fi
}

# vr_copy_demo DIR [fake] — the demo's files (vr_demo_files) into DIR, modes
# and times kept. A file the test user cannot read (a checkout may leave the
# fake id_rsa 0600 root) fails the copy, or with `fake` becomes a fake of the
# same kind, so the project keeps its shape.
vr_copy_demo() {
	local dir=$1 fake=${2:-} src="$VR_SOURCE_DIR/examples/demo-project" f
	mkdir -p "$dir"
	while IFS= read -r -d '' f; do
		[ -e "$src/$f" ] || continue # deleted in the work tree
		mkdir -p "$dir/$(dirname "$f")"
		if [ -r "$src/$f" ]; then
			cp --preserve=mode,timestamps "$src/$f" "$dir/$f" || return 1
		elif [ "$fake" = fake ]; then
			printf -- '-----BEGIN OPENSSH PRIVATE KEY-----\nFAKEFAKEFAKE\n-----END OPENSSH PRIVATE KEY-----\n' >"$dir/$f"
		else
			echo "vr_copy_demo: cannot read $src/$f" >&2
			return 1
		fi
	done < <(vr_demo_files)
	[ -e "$dir/Makefile" ] || { echo "vr_copy_demo: no demo files found in $src" >&2; return 1; }
}

# vr_make_demo DIR [fake] — a copy of the demo project with a git repository
# of its own (one commit, a pre-commit hook).
vr_make_demo() {
	local dir=$1
	vr_copy_demo "$dir" "${2:-}" || return 1
	git -C "$dir" init -q
	git -C "$dir" -c user.name=t -c user.email=t@e add -A .
	git -C "$dir" -c user.name=t -c user.email=t@e commit -qm init
	printf '#!/bin/sh\necho hook ran\n' >"$dir/.git/hooks/pre-commit"
	chmod +x "$dir/.git/hooks/pre-commit"
}

# vr_mount PROJECT MOUNTPOINT [OPTIONS...] — starts `vault-run mount` in the
# background and waits for its ready line. Sets VR_MOUNT_PID.
vr_mount() {
	local project=$1 mnt=$2; shift 2
	mkdir -p "$mnt"
	local ready="$T/.ready.$RANDOM"
	# VR_VALGRIND=1 (set by .ci/run for the view tests) runs the daemon under
	# memcheck: any error makes it exit 99, which vr_unmount reports.
	local wrap=()
	if [ "${VR_VALGRIND:-0}" = 1 ]; then
		wrap=(valgrind -q --error-exitcode=99 --leak-check=full --errors-for-leak-kinds=definite
		      --show-leak-kinds=definite --track-fds=no)
	fi
	"${wrap[@]}" "$VR" mount "$@" "$project" "$mnt" >"$ready" 2>>"$T/mount.err" &
	VR_MOUNT_PID=$!
	vr_mount_pids+=("$VR_MOUNT_PID")
	local i
	local tries=200
	[ "${VR_VALGRIND:-0}" = 1 ] && tries=1200
	for i in $(seq 1 $tries); do
		if grep -q . "$ready" 2>/dev/null; then return 0; fi
		if ! kill -0 "$VR_MOUNT_PID" 2>/dev/null; then
			echo "vault-run mount exited early:"; cat "$T/mount.err"; return 1
		fi
		sleep 0.05
	done
	echo "vault-run mount did not get ready"; cat "$T/mount.err"; return 1
}
vr_unmount() {
	local pid=${1:-$VR_MOUNT_PID} st=0
	kill -TERM "$pid" 2>/dev/null || true
	wait "$pid" 2>/dev/null || st=$?
	if [ "$st" = 99 ]; then
		echo "valgrind found errors in the view daemon:"; cat "$T/mount.err"
	fi
	return "$st"
}
