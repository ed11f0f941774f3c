#!/usr/bin/env bash
# The seccomp filter: each blocked syscall answers EPERM (clone3: ENOSYS)
# inside, where the same call outside gets the kernel's own answer — so the
# difference is the filter's doing, not an accident of the arguments.
# Includes TIOCSTI with junk in the high 32 bits (CVE-2019-10063), and the
# same calls through the compat ABIs a filter for x86-64 alone would miss:
# i386 (`int $0x80` from this 64-bit helper) and x32 (bit 30 set).
# Socket families other than unix/inet/inet6/netlink (AF_VSOCK: no network
# namespace holds it, on a VM it reaches the hypervisor) answer
# EAFNOSUPPORT under --net none, also with junk in the high half, through
# socketpair and on each ABI; i386's socketcall, whose arguments seccomp
# cannot read, answers ENOSYS; personas other than Linux/Linux32 (±UNAME26)
# and the query, modify_ldt, uselib and the NUMA page calls answer EPERM.
# What stays allowed is shown working inside: the four families, the
# allowed personas, and ptrace of an own child (debuggers, strace).
. "$(dirname "$0")/../lib/libtest.sh"
. "$(dirname "$0")/../lib/sandbox-lib.sh"
vr_require_sandbox
A="$VR_BIN/attack-syscalls"
[ -x "$A" ] || vr_skip "attack-syscalls is not built"
mkdir -p "$T/p" "$T/bin"
cp "$A" "$T/bin/"

"$A" >"$T/outside"
"$VR" --project "$T/p" --net none --ro-bind "$T/bin" /vr-bin -- /vr-bin/attack-syscalls >"$T/inside"
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
socket-vsock EAFNOSUPPORT
socket-packet EAFNOSUPPORT
socket-vsock-high EAFNOSUPPORT
socketpair-vsock EAFNOSUPPORT
personality-bsd EPERM
personality-norandom EPERM
personality-exec EPERM
modify_ldt EPERM
uselib EPERM
move_pages EPERM
migrate_pages EPERM
mbind EPERM
get_mempolicy EPERM
set_mempolicy EPERM
x32-socket-vsock EAFNOSUPPORT
x32-personality-bsd EPERM
x32-modify_ldt EPERM
x32-move_pages EPERM
i386-socket-vsock EAFNOSUPPORT
i386-socket-packet EAFNOSUPPORT
i386-socketpair-vsock EAFNOSUPPORT
i386-socketcall-vsock ENOSYS
i386-socketcall-unix ENOSYS
i386-personality-bsd EPERM
i386-modify_ldt EPERM
i386-uselib EPERM
i386-migrate_pages EPERM
i386-get_mempolicy EPERM
i386-set_mempolicy EPERM
LIST

# What the filter must leave alone works inside as it does outside.
while read -r name; do
	in=$(awk -v n="$name" '$1 == n { print $2 }' "$T/inside")
	out=$(awk -v n="$name" '$1 == n { print $2 }' "$T/outside")
	if [ -z "$out" ] && grep -q '^i386-abi unavailable' "$T/outside"; then
		continue
	fi
	if [ "$out" != ok ]; then
		echo "note: $name fails outside too ($out); not checked"
		continue
	fi
	vr_check "$name still works inside" test "$in" = ok
done <<'LIST'
socket-unix
socket-inet
socket-netlink
socketpair-unix
personality-linux32
personality-uname26
personality-query
ptrace-child
i386-socket-unix
i386-personality-linux32
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
