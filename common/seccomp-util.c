#include "seccomp-util.h"

#include <errno.h>
#include <stdint.h>
#include <sys/ioctl.h>

int vr_seccomp_add_compat_arches(scmp_filter_ctx ctx)
{
	uint32_t native = seccomp_arch_native();
	int r = 0;
	if (native == SCMP_ARCH_X86_64) {
		if ((r = seccomp_arch_add(ctx, SCMP_ARCH_X86)) < 0 && r != -EEXIST)
			return r;
		if ((r = seccomp_arch_add(ctx, SCMP_ARCH_X32)) < 0 && r != -EEXIST)
			return r;
	} else if (native == SCMP_ARCH_AARCH64) {
		if ((r = seccomp_arch_add(ctx, SCMP_ARCH_ARM)) < 0 && r != -EEXIST)
			return r;
	}
	return 0;
}

int vr_seccomp_deny(scmp_filter_ctx ctx, int err, int nr, unsigned nargs, const struct scmp_arg_cmp *arg)
{
	if (nr == __NR_SCMP_ERROR)
		return 0;
	int r = nargs ? seccomp_rule_add_array(ctx, SCMP_ACT_ERRNO(err), nr, nargs, arg)
	              : seccomp_rule_add(ctx, SCMP_ACT_ERRNO(err), nr, 0);
	/* -EDOM/-EINVAL: no such syscall on one of the ABIs; nothing to filter */
	return r == -EDOM || r == -EINVAL ? 0 : r;
}

int vr_seccomp_deny_terminal_injection(scmp_filter_ctx ctx)
{
	const struct scmp_arg_cmp tiocsti = SCMP_A1(SCMP_CMP_MASKED_EQ, 0xFFFFFFFFu, (int)TIOCSTI);
	const struct scmp_arg_cmp tioclinux = SCMP_A1(SCMP_CMP_MASKED_EQ, 0xFFFFFFFFu, (int)TIOCLINUX);
	int r = vr_seccomp_deny(ctx, EPERM, SCMP_SYS(ioctl), 1, &tiocsti);
	return r < 0 ? r : vr_seccomp_deny(ctx, EPERM, SCMP_SYS(ioctl), 1, &tioclinux);
}
