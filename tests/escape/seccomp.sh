#!/usr/bin/env bash
# The seccomp filter: each blocked syscall answers EPERM (clone3: ENOSYS)
# inside, where the same call outside gets the kernel's own answer — so the
# difference is the filter's doing, not an accident of the arguments.
# Includes TIOCSTI with junk in the high 32 bits (CVE-2019-10063), and the
# same calls through the compat ABIs a filter for x86-64 alone would miss:
# i386 (`int $0x80` from this 64-bit helper) and x32 (bit 30 set).
. "$(dirname "$0")/../lib/libtest.sh"
. "$(dirname "$0")/../lib/sandbox-lib.sh"
vr_require_sandbox
A="$VR_BIN/attack-syscalls"
[ -x "$A" ] || vr_skip "attack-syscalls is not built"
mkdir -p "$T/p" "$T/bin"
cp "$A" "$T/bin/"

"$A" >"$T/outside"
"$VR" --project "$T/p" --ro-bind "$T/bin" /vr-bin -- /vr-bin/attack-syscalls >"$T/inside"
cat "$T/inside"
while read -r name want; do
	in=$(awk -v n="$name" '$1 == n { print $2 }' "$T/inside")
	out=$(awk -v n="$name" '$1 == n { print $2 }' "$T/outside")
	if [ -z "$out" ] && grep -q '^i386-abi unavailable' "$T/outside"; then
		echo "note: $name: this kernel has no i386 ABI (int \$0x80 gives SIGSEGV); nothing to attack"
		continue
	fi
	if [ "$out" = "$want" ]; then
		echo "note: $name already answers $want outside; the check proves nothing here"
		continue
	fi
	vr_check "$name is blocked ($want inside, $out outside)" test "$in" = "$want"
done <<'LIST'
tiocsti EPERM
tiocsti-high EPERM
tioclinux EPERM
keyctl EPERM
add_key EPERM
bpf EPERM
perf_event_open EPERM
userfaultfd EPERM
io_uring_setup EPERM
mount EPERM
umount2 EPERM
open_by_handle_at EPERM
clone3 ENOSYS
unshare-user EPERM
x32-keyctl EPERM
x32-unshare-user EPERM
i386-keyctl EPERM
i386-bpf EPERM
i386-tiocsti EPERM
i386-mount EPERM
i386-umount2 EPERM
i386-unshare-user EPERM
LIST

# The proof that nested user namespaces are filtered, not impossible: with
# --allow-userns they work.
if grep -q '^unshare-user ok' "$T/outside"; then
	vr_check "--allow-userns lets unshare(CLONE_NEWUSER) through" \
		grep -q '^unshare-user ok' <("$VR" --project "$T/p" --allow-userns --ro-bind "$T/bin" /vr-bin -- /vr-bin/attack-syscalls)
fi
st=$(grep -E '^(NoNewPrivs|Seccomp|CapEff|CapBnd|CapPrm):' <("$VR" --project "$T/p" -- cat /proc/self/status))
vr_check "no_new_privs is set" grep -qP 'NoNewPrivs:\t1' <<<"$st"
vr_check "a filter is on" grep -qP 'Seccomp:\t2' <<<"$st"
vr_check "no effective capabilities" grep -qP 'CapEff:\t0+$' <<<"$st"
vr_check "an empty bounding set" grep -qP 'CapBnd:\t0+$' <<<"$st"
vr_done
