/* The seccomp deny-list shared by the view daemon and the proxy, and the
 * order in which confinement is applied. A deny-list, not an allow-list:
 * glib, GIO's resolver and libfuse's worker threads use a wide and
 * version-dependent set of calls, and a missed one would turn into a
 * daemon that dies under the agent. What is refused is what no code of
 * these processes calls once they serve: running programs, debugging
 * others, changing mounts or namespaces, loading kernel code, and typing
 * into the terminal their stderr may be. */
#include "common/confine.h"
#include "common/log.h"
#include "common/seccomp-util.h"

#include <dlfcn.h>
#include <linux/seccomp.h>
#include <errno.h>
#include <sched.h>
#include <seccomp.h>
#include <unistd.h>

/* LeakSanitizer stops the world by ptrace-attaching to the process's own
 * threads at exit: a sanitizer build (never a release) lets ptrace through,
 * still confined by Landlock to the daemon's own domain. */
#if defined(__SANITIZE_ADDRESS__)
#define VR_CONFINE_PTRACE
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define VR_CONFINE_PTRACE
#endif
#endif
#ifndef VR_CONFINE_PTRACE
#define VR_CONFINE_PTRACE SCMP_SYS(ptrace),
#endif

/* The deny-list's rules (DATA: the unsigned VR_CONFINE_* flags). */
static int rules(scmp_filter_ctx ctx, const void *data)
{
	unsigned flags = *(const unsigned *)data;
	int r;
	/* Every thread, including any a library started earlier. */
	if ((r = seccomp_attr_set(ctx, SCMP_FLTATR_CTL_TSYNC, 1)) < 0)
		goto out;
	static const int blocked[] = {
		SCMP_SYS(execve), SCMP_SYS(execveat), VR_CONFINE_PTRACE SCMP_SYS(process_vm_readv),
		SCMP_SYS(process_vm_writev), SCMP_SYS(mount), SCMP_SYS(pivot_root), SCMP_SYS(chroot),
		SCMP_SYS(move_mount), SCMP_SYS(open_tree), SCMP_SYS(fsopen), SCMP_SYS(fsmount),
		SCMP_SYS(fsconfig), SCMP_SYS(fspick), SCMP_SYS(mount_setattr), SCMP_SYS(setns),
		SCMP_SYS(unshare), SCMP_SYS(bpf), SCMP_SYS(perf_event_open), SCMP_SYS(userfaultfd),
		SCMP_SYS(kexec_load), SCMP_SYS(kexec_file_load), SCMP_SYS(init_module),
		SCMP_SYS(finit_module), SCMP_SYS(delete_module), SCMP_SYS(swapon), SCMP_SYS(swapoff),
		SCMP_SYS(reboot), SCMP_SYS(acct), SCMP_SYS(syslog), SCMP_SYS(keyctl), SCMP_SYS(add_key),
		SCMP_SYS(request_key), SCMP_SYS(io_uring_setup), SCMP_SYS(io_uring_enter),
		SCMP_SYS(io_uring_register), SCMP_SYS(open_by_handle_at), SCMP_SYS(name_to_handle_at),
		SCMP_SYS(settimeofday), SCMP_SYS(clock_settime), SCMP_SYS(clock_adjtime),
		SCMP_SYS(adjtimex), SCMP_SYS(quotactl), SCMP_SYS(iopl), SCMP_SYS(ioperm),
		SCMP_SYS(uselib), SCMP_SYS(vhangup), SCMP_SYS(kcmp), SCMP_SYS(personality),
	};
	for (size_t i = 0; i < sizeof blocked / sizeof *blocked; i++)
		if ((r = vr_seccomp_deny(ctx, EPERM, blocked[i], 0, NULL)) < 0)
			goto out;
	int umount_err = flags & VR_CONFINE_UMOUNT_NOOP ? 0 : EPERM;
	if ((r = vr_seccomp_deny(ctx, umount_err, SCMP_SYS(umount), 0, NULL)) < 0 ||
	    (r = vr_seccomp_deny(ctx, umount_err, SCMP_SYS(umount2), 0, NULL)) < 0)
		goto out;
	/* Threads, never namespaces; nothing typed into a terminal. */
	const unsigned long newns = CLONE_NEWNS | CLONE_NEWUTS | CLONE_NEWIPC | CLONE_NEWUSER |
	                            CLONE_NEWPID | CLONE_NEWNET | CLONE_NEWCGROUP;
	for (unsigned long bit = 1; bit; bit <<= 1) {
		if (!(newns & bit))
			continue;
		const struct scmp_arg_cmp has = SCMP_A0(SCMP_CMP_MASKED_EQ, bit, bit);
		if ((r = vr_seccomp_deny(ctx, EPERM, SCMP_SYS(clone), 1, &has)) < 0)
			goto out;
	}
	/* clone3 keeps its flags in memory seccomp cannot read: ENOSYS makes
	 * glibc fall back to the filtered clone. */
	if ((r = vr_seccomp_deny(ctx, ENOSYS, SCMP_SYS(clone3), 0, NULL)) < 0 ||
	    (r = vr_seccomp_deny_terminal_injection(ctx)) < 0)
		goto out;
out:
	return r;
}

int vr_confine_seccomp(unsigned flags)
{
	return vr_seccomp_compile(rules, &flags, NULL);
}

int vr_confine_seccomp_prepare(unsigned flags, VrSeccompProg *prog)
{
	return vr_seccomp_compile(rules, &flags, prog);
}

int vr_confine_apply(VrLandlock *ll, unsigned flags)
{
	return vr_confine_apply_prog(ll, flags, NULL);
}

int vr_confine_apply_prog(VrLandlock *ll, unsigned flags, const VrSeccompProg *prog)
{
	/* glibc loads libgcc_s on the first pthread_cancel or unwind (libfuse
	 * cancels its workers at the end): load it now, while /usr/lib is
	 * still readable, or that first cancel aborts the process. */
	(void)dlopen("libgcc_s.so.1", RTLD_NOW | RTLD_NODELETE);
	int r = vr_landlock_enforce(ll); /* sets no_new_privs first */
	if (r < 0)
		return r;
	/* Compiled ahead by the supervisor (vr_confine_seccomp_prepare), for
	 * every thread (TSYNC), as vr_confine_seccomp loads it. */
	if (prog && prog->insns)
		r = vr_seccomp_load_prog(prog, SECCOMP_FILTER_FLAG_TSYNC);
	else
		r = vr_confine_seccomp(flags);
	/* No seccomp() at all (valgrind does not emulate it; a kernel without
	 * CONFIG_SECCOMP_FILTER could not start a sandbox anyway): best
	 * effort, like Landlock. Any other failure is one. */
	if (r == -EOPNOTSUPP || r == -ENOSYS) {
		vr_debug("seccomp is not available here: no filter on this process");
		return 0;
	}
	return r;
}
