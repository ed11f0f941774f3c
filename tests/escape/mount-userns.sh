#!/usr/bin/env bash
# mount, umount, unshare -U and writes to /proc/sys from inside must fail.
# Each attack is first shown to work where it is not prevented.
. "$(dirname "$0")/../lib/libtest.sh"
. "$(dirname "$0")/../lib/sandbox-lib.sh"
vr_require_sandbox
vr_require_cmd unshare mount
mkdir -p "$T/p"
run() { "$VR" --project "$T/p" "$@"; }

# Without the sandbox: a user namespace and a mount in it work here.
vr_check "control: unshare -U works outside" unshare -U true
vr_check "control: unshare -rm + mount tmpfs works outside" unshare -rm sh -c "mount -t tmpfs none '$T/p'"

vr_check_not "unshare -U fails inside" run -- unshare -U true
vr_check_not "unshare -rm fails inside" run -- unshare -rm true
vr_check_not "mount tmpfs fails inside" run -- mount -t tmpfs none /tmp
vr_check_not "umount /proc fails inside" run -- umount /proc
vr_check_not "umount -l of the project fails inside" run -- umount -l "$T/p"
# Harmless probe: writes back the value already there.
vr_check_not "/proc/sys is read-only (write-back of the same hostname)" \
	run -- sh -c 'v=$(cat /proc/sys/kernel/hostname) && printf "%s\n" "$v" >/proc/sys/kernel/hostname'
vr_check "/proc/sys is mounted read-only" run -- sh -c 'grep -q " /proc/sys ro," /proc/self/mountinfo'
if [ -e /proc/sysrq-trigger ]; then
	vr_check "/proc/sysrq-trigger is read-only" run -- sh -c 'grep -q " /proc/sysrq-trigger ro," /proc/self/mountinfo'
fi
vr_check "the root is read-only" run -- sh -c '! touch /vr-probe 2>/dev/null'
vr_check "every bind is nosuid" run -- sh -c '! grep -E " /(usr|etc/hosts) " /proc/self/mountinfo | grep -v nosuid'
vr_check "the host's /dev/pts is not there (new devpts instance)" \
	run -- sh -c 'test "$(ls /dev/pts | grep -v ptmx | wc -l)" = 0'
vr_done
