/* The seccomp filter of the sandboxed command (no glib here). A deny-list in
 * the spirit of bubblewrap/flatpak: what reaches the kernel's larger attack
 * surface or the user's terminal. Installed for the native ABI and the
 * compat ones (i386 and x32 on x86-64, arm on aarch64), since a 32-bit
 * binary's syscall numbers differ and would otherwise pass unfiltered. */
#include "sandbox.h"
#include "common/seccomp-util.h"

#include <errno.h>
#include <sched.h>
#include <seccomp.h>
#include <unistd.h>

/* The filter's rules, in ctx (created here; the caller releases it). */
static int build(bool allow_userns, scmp_filter_ctx *out)
{
	scmp_filter_ctx ctx = *out = seccomp_init(SCMP_ACT_ALLOW);
	if (!ctx)
		return -ENOMEM;
	int r = vr_seccomp_add_compat_arches(ctx);
	if (r < 0)
		goto out;
	if ((r = vr_seccomp_deny_terminal_injection(ctx)) < 0)
		goto out;
	static const int blocked[] = {
		SCMP_SYS(keyctl), SCMP_SYS(add_key), SCMP_SYS(request_key), SCMP_SYS(bpf),
		SCMP_SYS(perf_event_open), SCMP_SYS(userfaultfd), SCMP_SYS(io_uring_setup),
		SCMP_SYS(io_uring_enter), SCMP_SYS(io_uring_register), SCMP_SYS(kexec_load),
		SCMP_SYS(kexec_file_load), SCMP_SYS(mount), SCMP_SYS(umount), SCMP_SYS(umount2),
		SCMP_SYS(pivot_root), SCMP_SYS(move_mount), SCMP_SYS(open_tree), SCMP_SYS(fsopen),
		SCMP_SYS(fsmount), SCMP_SYS(fsconfig), SCMP_SYS(fspick), SCMP_SYS(mount_setattr),
		SCMP_SYS(open_by_handle_at), SCMP_SYS(name_to_handle_at), SCMP_SYS(init_module),
		SCMP_SYS(finit_module), SCMP_SYS(delete_module), SCMP_SYS(swapon), SCMP_SYS(swapoff),
		SCMP_SYS(syslog), SCMP_SYS(acct), SCMP_SYS(setns),
	};
	for (size_t i = 0; i < sizeof blocked / sizeof *blocked; i++)
		if ((r = vr_seccomp_deny(ctx, EPERM, blocked[i], 0, NULL)) < 0)
			goto out;
	if (!allow_userns) {
		const struct scmp_arg_cmp newuser0 = SCMP_A0(SCMP_CMP_MASKED_EQ, CLONE_NEWUSER, CLONE_NEWUSER);
		if ((r = vr_seccomp_deny(ctx, EPERM, SCMP_SYS(unshare), 1, &newuser0)) < 0 ||
		    (r = vr_seccomp_deny(ctx, EPERM, SCMP_SYS(clone), 1, &newuser0)) < 0)
			goto out;
		/* clone3 passes its flags in memory seccomp cannot read: ENOSYS
		 * makes libc fall back to the filtered clone. */
		if ((r = vr_seccomp_deny(ctx, ENOSYS, SCMP_SYS(clone3), 0, NULL)) < 0)
			goto out;
	}
	r = 0;
out:
	return r;
}

int vr_sandbox_seccomp_prepare(bool allow_userns, VrSeccompProg *prog)
{
	scmp_filter_ctx ctx;
	int r = build(allow_userns, &ctx);
	if (r == 0)
		r = vr_seccomp_export(ctx, prog);
	if (ctx)
		seccomp_release(ctx);
	return r;
}

int vr_sandbox_load_seccomp(const VrSandboxSpec *spec)
{
	/* Compiled by the supervisor while the view mounted: ~2 ms less
	 * between "the views are ready" and exec. */
	if (spec->seccomp.insns)
		return vr_seccomp_load_prog(&spec->seccomp, 0);
	scmp_filter_ctx ctx;
	int r = build(spec->allow_userns, &ctx);
	if (r == 0)
		r = seccomp_load(ctx);
	if (ctx)
		seccomp_release(ctx);
	return r;
}
