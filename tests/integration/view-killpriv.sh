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

P="$T/project" M="$T/view"
mkdir -p "$P"
# No capabilities at all, whoever runs the test (root, a user, userns root).
nocaps() { setpriv --inh-caps=-all --bounding-set=-all -- "$@"; }
for f in host write append trunc otrunc keep; do
	printf 'data\n' >"$P/$f"
	chmod 6755 "$P/$f"
done
test -u "$P/host" && test -g "$P/host" || vr_skip "cannot set setuid/setgid bits here"
nocaps sh -c 'printf x >>"$1"' sh "$P/host" 2>/dev/null || vr_skip "setpriv cannot drop capabilities here"
if test -u "$P/host" || test -g "$P/host"; then
	vr_skip "this host keeps setuid/setgid on writes without CAP_FSETID"
fi

vr_mount "$P" "$M" || vr_skip "cannot mount a FUSE view here"
vr_check "the view shows the bits" test -u "$M/write" -a -g "$M/write"

nocaps sh -c 'printf x | dd of="$1" bs=1 seek=2 conv=notrunc status=none' sh "$M/write"
vr_check "the write landed" test "$(head -c 3 "$P/write")" = dax
vr_check_not "write: setuid dropped" test -u "$P/write"
vr_check_not "write: setgid dropped" test -g "$P/write"

nocaps sh -c 'printf more >>"$1"' sh "$M/append"
vr_check_not "append: setuid and setgid dropped" test -u "$P/append" -o -g "$P/append"

nocaps truncate -s 2 "$M/trunc"
vr_check "the truncate landed" test "$(stat -c %s "$P/trunc")" = 2
vr_check_not "truncate: setuid and setgid dropped" test -u "$P/trunc" -o -g "$P/trunc"

nocaps sh -c ': >"$1"' sh "$M/otrunc"
vr_check "O_TRUNC landed" test "$(stat -c %s "$P/otrunc")" = 0
vr_check_not "O_TRUNC: setuid and setgid dropped" test -u "$P/otrunc" -o -g "$P/otrunc"

vr_check "a file nobody wrote keeps its bits" test -u "$P/keep" -a -g "$P/keep"
view_done
