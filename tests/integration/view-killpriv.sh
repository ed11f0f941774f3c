#!/usr/bin/env bash
# A write or truncate through the view by a process without CAP_FSETID
# drops the set-user-ID and set-group-ID bits of the host file, as it would
# on the host. The daemon writes with CAP_FSETID when it runs as root, so
# the host never drops them for it: the kernel's FUSE side must (the view
# does not take FUSE_CAP_HANDLE_KILLPRIV, fusefs/view.c).
. "$(dirname "$0")/../lib/libtest.sh"
. "$(dirname "$0")/../lib/view-lib.sh"
vr_require_fuse
vr_require_cmd setpriv truncate

P="$T/project"
mkdir -p "$P"
# No capabilities at all, whoever runs the test (root, a user, userns root).
nocaps() { setpriv --inh-caps=-all --bounding-set=-all -- "$@"; }
setid_files() {  # setid_files PREFIX — the host files one mount works on
	local f
	for f in write append trunc otrunc keep; do
		printf 'data\n' >"$P/$1$f"
		chmod 6755 "$P/$1$f"
	done
}
printf 'data\n' >"$P/host"
chmod 6755 "$P/host"
test -u "$P/host" && test -g "$P/host" || vr_skip "cannot set setuid/setgid bits here"
nocaps sh -c 'printf x >>"$1"' sh "$P/host" 2>/dev/null || vr_skip "setpriv cannot drop capabilities here"
if test -u "$P/host" || test -g "$P/host"; then
	vr_skip "this host keeps setuid/setgid on writes without CAP_FSETID"
fi

# check_mount NAME [MOUNT ARGS…] — each mount on files of its own: the
# kernel may cache a file's mode for the length of the run.
check_mount() {
	local n=$1 M="$T/view-$1" p; shift
	p="$n-"
	setid_files "$p"
	vr_mount "$P" "$M" "$@" || vr_skip "cannot mount a FUSE view here"
	vr_check "$n: the view shows the bits" test -u "$M/${p}write" -a -g "$M/${p}write"

	nocaps sh -c 'printf x | dd of="$1" bs=1 seek=2 conv=notrunc status=none' sh "$M/${p}write"
	vr_check "$n: the write landed" test "$(head -c 3 "$P/${p}write")" = dax
	vr_check_not "$n: write: setuid dropped" test -u "$P/${p}write"
	vr_check_not "$n: write: setgid dropped" test -g "$P/${p}write"

	nocaps sh -c 'printf more >>"$1"' sh "$M/${p}append"
	vr_check_not "$n: append: setuid and setgid dropped" test -u "$P/${p}append" -o -g "$P/${p}append"

	nocaps truncate -s 2 "$M/${p}trunc"
	vr_check "$n: the truncate landed" test "$(stat -c %s "$P/${p}trunc")" = 2
	vr_check_not "$n: truncate: setuid and setgid dropped" test -u "$P/${p}trunc" -o -g "$P/${p}trunc"

	nocaps sh -c ': >"$1"' sh "$M/${p}otrunc"
	vr_check "$n: O_TRUNC landed" test "$(stat -c %s "$P/${p}otrunc")" = 0
	vr_check_not "$n: O_TRUNC: setuid and setgid dropped" test -u "$P/${p}otrunc" -o -g "$P/${p}otrunc"

	vr_check "$n: a file nobody wrote keeps its bits" test -u "$P/${p}keep" -a -g "$P/${p}keep"
}
# The default (files opened without an OPEN: no-open mode) and level
# "opens", where every open reaches the daemon.
check_mount default
check_mount opens --audit "$T/audit.jsonl" --audit-level opens
view_done
