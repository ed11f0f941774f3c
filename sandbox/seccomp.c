/* The seccomp filter of the sandboxed command (no glib here). A deny-list in
 * the spirit of bubblewrap/flatpak: what reaches the kernel's larger attack
 * surface or the user's terminal. Installed for the native ABI and the
 * compat ones (i386 and x32 on x86-64, arm on aarch64), since a 32-bit
 * binary's syscall numbers differ and would otherwise pass unfiltered.
 *
 * ptrace stays allowed on purpose: debuggers and strace are part of a
 * coding agent's work, a tracer reaches only processes of the sandbox's pid
 * namespace (pid 1 is not dumpable), and since Linux 4.8 seccomp checks a
 * syscall again after a tracer changed it, so tracing cannot pass a refused
 * call (docs/SECURITY.md). */
#include "sandbox/sandbox.h"
#include "common/seccomp-util.h"

#include <errno.h>
#include <sched.h>
#include <seccomp.h>
#include <sys/personality.h>
#include <sys/socket.h>
#include <unistd.h>

/* The socket families COMMAND may create: everything else (AF_VSOCK, which
 * no network namespace contains and which reaches the hypervisor of a VM;
 * AF_ALG, AF_PACKET, AF_BLUETOOTH, AF_KEY, AF_XDP…: kernel code few
 * programs need and many CVEs had) answers EAFNOSUPPORT, as the kernel does
 * for a family it lacks. Flatpak's list, without AF_UNSPEC (which no
 * socket() accepts anyway). Sorted. */
static const int allowed_families[] = {AF_UNIX, AF_INET, AF_INET6, AF_NETLINK};

/* socket and socketpair with any other family: EAFNOSUPPORT. One
 * comparison per rule (libseccomp allows one per argument), so the holes
 * between allowed families are single values and the rest one "greater
 * than". On x86-64 the "greater than" compares all 64 bits, so junk in the
 * high half (which the kernel's int parameter drops) is refused too. */
static int deny_socket_families(scmp_filter_ctx ctx)
{
	static const int calls[] = {SCMP_SYS(socket), SCMP_SYS(socketpair)};
	const size_t n = sizeof allowed_families / sizeof *allowed_families;
	for (size_t c = 0; c < sizeof calls / sizeof *calls; c++) {
		int r, family = 0;
		for (size_t i = 0; i < n; i++, family++)
			for (; family < allowed_families[i]; family++) {
				const struct scmp_arg_cmp eq = SCMP_A0(SCMP_CMP_EQ, (scmp_datum_t)family);
				if ((r = vr_seccomp_deny(ctx, EAFNOSUPPORT, calls[c], 1, &eq)) < 0)
					return r;
			}
		const struct scmp_arg_cmp above = SCMP_A0(SCMP_CMP_GT, (scmp_datum_t)allowed_families[n - 1]);
		if ((r = vr_seccomp_deny(ctx, EAFNOSUPPORT, calls[c], 1, &above)) < 0)
			return r;
	}
	/* i386's socketcall(call, args) multiplexes every socket call through a
	 * pointer to the arguments, which seccomp cannot read: the family would
	 * pass unseen. It is refused whole with ENOSYS, what a kernel without
	 * it answers: musl (and glibc built for Linux >= 4.3) then use the
	 * direct socket calls (i386 has them since 4.3), which the rules above
	 * filter. Debian's i386 glibc (built for 3.2) has no such fallback: a
	 * 32-bit program linked to it cannot use sockets inside (docs/sandbox.md).
	 * On the 64-bit ABIs there is no socketcall: a no-op there. */
	return vr_seccomp_deny(ctx, ENOSYS, SCMP_SYS(socketcall), 0, NULL);
}

/* personality(2): only PER_LINUX and PER_LINUX32, each with or without
 * UNAME26 (uname says 2.6.x), and the query 0xffffffff — Docker's rule.
 * Every other persona or flag (READ_IMPLIES_EXEC, ADDR_NO_RANDOMIZE,
 * MMAP_PAGE_ZERO, another exec domain…) answers EPERM; gdb then warns that
 * it cannot disable address randomisation and goes on.
 *
 * libseccomp takes one comparison per argument and rule, and the allowed
 * set is no range, so the refused set is covered by masked-equal "cubes"
 * (some bits fixed, the rest free). The kernel reads the argument as an
 * unsigned int, and the masks hold only low bits, so the high half of a
 * 64-bit register is ignored here as it is there. With F = {3, 17} the
 * bits an allowed value may set (besides the query), a value v is refused
 * iff some bit b outside F is set and some bit is clear. Walk v's bits
 * cyclically: v != 0 and v != ~0 has a set bit b followed by a clear bit
 * b+1. When some such b lies outside F, the cube (b set, b+1 clear) holds
 * v and neither 0/8/0x20000/0x20008 (b is not in F) nor ~0 (b+1 is clear).
 * Otherwise every run of set bits ends at bit 3 or 17; v is allowed when
 * each run is that single bit, and else a run ends in "f-1, f set, f+1
 * clear", a second cube per f in F (f-1 is not in F: 3 and 17 are not
 * adjacent). 30 + 2 rules; tests/unit/test_sandbox_seccomp.c tries them. */
static int deny_personality(scmp_filter_ctx ctx)
{
	const uint32_t free_bits = PER_LINUX32 | UNAME26;
	_Static_assert(PER_LINUX == 0 && PER_LINUX32 == 0x8 && UNAME26 == 0x20000, "the proof assumes these bits");
	int r;
	for (unsigned b = 0; b < 32; b++) {
		uint32_t bit = 1u << b, next = 1u << ((b + 1) % 32), prev = 1u << ((b + 31) % 32);
		struct scmp_arg_cmp cube;
		if (!(free_bits & bit))
			cube = SCMP_A0(SCMP_CMP_MASKED_EQ, bit | next, bit);
		else
			cube = SCMP_A0(SCMP_CMP_MASKED_EQ, prev | bit | next, prev | bit);
		if ((r = vr_seccomp_deny(ctx, EPERM, SCMP_SYS(personality), 1, &cube)) < 0)
			return r;
	}
	return 0;
}

/* The filter's rules (DATA: the bool allow_userns). */
static int rules(scmp_filter_ctx ctx, const void *data)
{
	bool allow_userns = *(const bool *)data;
	int r;
	if ((r = vr_seccomp_deny_terminal_injection(ctx)) < 0)
		goto out;
	/* modify_ldt: 16-bit segments, a historic source of kernel leaks, needed
	 * only by Wine and DOS emulators. uselib: a.out libraries. The NUMA page
	 * calls: move_pages and migrate_pages act on another process's pages;
	 * mbind and the mempolicy calls had their own CVEs and are refused by
	 * Docker (without CAP_SYS_NICE, which COMMAND never has) and Flatpak
	 * alike, so what runs in a container copes without them (libnuma and
	 * hwloc report "no NUMA"). */
	static const int blocked[] = {
		SCMP_SYS(keyctl), SCMP_SYS(add_key), SCMP_SYS(request_key), SCMP_SYS(bpf),
		SCMP_SYS(perf_event_open), SCMP_SYS(userfaultfd), SCMP_SYS(io_uring_setup),
		SCMP_SYS(io_uring_enter), SCMP_SYS(io_uring_register), SCMP_SYS(kexec_load),
		SCMP_SYS(kexec_file_load), SCMP_SYS(mount), SCMP_SYS(umount), SCMP_SYS(umount2),
		SCMP_SYS(pivot_root), SCMP_SYS(move_mount), SCMP_SYS(open_tree), SCMP_SYS(fsopen),
		SCMP_SYS(fsmount), SCMP_SYS(fsconfig), SCMP_SYS(fspick), SCMP_SYS(mount_setattr),
		SCMP_SYS(open_by_handle_at), SCMP_SYS(name_to_handle_at), SCMP_SYS(init_module),
		SCMP_SYS(finit_module), SCMP_SYS(delete_module), SCMP_SYS(swapon), SCMP_SYS(swapoff),
		SCMP_SYS(syslog), SCMP_SYS(acct), SCMP_SYS(setns), SCMP_SYS(modify_ldt),
		SCMP_SYS(uselib), SCMP_SYS(move_pages), SCMP_SYS(migrate_pages), SCMP_SYS(mbind),
		SCMP_SYS(set_mempolicy), SCMP_SYS(get_mempolicy), SCMP_SYS(set_mempolicy_home_node),
	};
	for (size_t i = 0; i < sizeof blocked / sizeof *blocked; i++)
		if ((r = vr_seccomp_deny(ctx, EPERM, blocked[i], 0, NULL)) < 0)
			goto out;
	if ((r = deny_socket_families(ctx)) < 0 || (r = deny_personality(ctx)) < 0)
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
	return vr_seccomp_compile(rules, &allow_userns, prog);
}

int vr_sandbox_load_seccomp(const VrSandboxSpec *spec)
{
	/* Compiled by the supervisor while the view mounted: ~2 ms less
	 * between "the views are ready" and exec. */
	if (spec->seccomp.insns)
		return vr_seccomp_load_prog(&spec->seccomp, 0);
	bool allow_userns = spec->allow_userns;
	return vr_seccomp_compile(rules, &allow_userns, NULL);
}
