#!/usr/bin/env bash
# Invariant 1: a hidden file is unreachable through the view under any name.
# From inside the sandbox, .env by: .. from a subdirectory, /proc/self/cwd,
# /proc/self/fd/N of the project directory, symlinks made on the host before
# the run (relative and absolute), open_by_handle_at/name_to_handle_at
# (seccomp: EPERM), readdir with telldir/seekdir and made-up offsets, and
# list/getxattr. Expected: no route yields the secret (hunter2) and no
# listing shows .env or id_rsa; each route is first shown to work on the
# host. A hard link made on the host before the run: escape/hidden-hardlink.sh.
. "$(dirname "$0")/../lib/libtest.sh"
. "$(dirname "$0")/../lib/view-lib.sh"
. "$(dirname "$0")/../lib/sandbox-lib.sh"
vr_require_sandbox
A="$VR_BIN/attack-hidden"
[ -x "$A" ] || vr_fail "attack-hidden helper is not built"
mkdir -p "$T/bin"
cp "$A" "$T/bin/"
P="$T/project"
view_make_demo "$P"
ln -s .env "$P/l-rel"
ln -s "$P/.env" "$P/l-abs"
run() { "$VR" --project "$P" --ro-bind "$T/bin" /vr-bin -- sh -c "cd '$P' && $1" 2>&1 || true; }

routes=(
	'cd src && cat ../.env'
	'cat /proc/self/cwd/.env'
	'cd src && cat /proc/self/cwd/../.env'
	'exec 3<. && cat /proc/self/fd/3/.env'
	'exec 3<src && cat /proc/self/fd/3/../.env'
	'cat l-rel'
	'cat l-abs'
	'cat /proc/self/root/proc/self/cwd/.env'
)
for r in "${routes[@]}"; do
	vr_check "control: on the host '$r' reads the secret" grep -q hunter2 <(cd "$P" && sh -c "$r" 2>/dev/null)
	vr_check_not ".env via '$r' inside" grep -q hunter2 <(run "$r")
done

# File handles: the filter answers EPERM where the host answers otherwise.
(cd "$P" && "$A" handle .env) >"$T/handle.out" || true
vr_check "control: name_to_handle_at works on the host" grep -q '^name_to_handle_at ok' "$T/handle.out"
h=$(run '/vr-bin/attack-hidden handle README.md')
echo "$h"
vr_check "name_to_handle_at is refused inside" grep -q '^name_to_handle_at EPERM' <<<"$h"
vr_check "open_by_handle_at is refused inside" grep -q '^open_by_handle_at EPERM' <<<"$h"

# readdir with seeks: every name returned from every offset.
vr_check "control: a listing on the host shows .env" grep -qx 'name .env' <(cd "$P" && "$A" readdir .)
ls_in=$(run '/vr-bin/attack-hidden readdir .')
vr_check "the listing inside has entries" grep -qx 'name README.md' <<<"$ls_in"
vr_check_not "no seek makes readdir show .env" grep -qx 'name .env' <<<"$ls_in"
vr_check_not "no seek makes readdir show id_rsa" grep -qx 'name id_rsa' <<<"$ls_in"
vr_check "the listing inside still shows .env.example" grep -qx 'name .env.example' <<<"$ls_in"

# xattrs of the hidden name: ENOENT, as for every other call.
vr_check "control: listxattr of .env works on the host" grep -q '^listxattr ok' <(cd "$P" && "$A" xattr .env)
x=$(run '/vr-bin/attack-hidden xattr .env')
echo "$x"
for c in listxattr llistxattr getxattr lgetxattr; do
	vr_check "$c of .env answers ENOENT inside" grep -qx "$c ENOENT" <<<"$x"
done

vr_check "the host .env is intact" grep -q hunter2 "$P/.env"
vr_done
