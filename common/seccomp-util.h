/* Helpers shared by vault-run's two seccomp filters: the sandboxed
 * COMMAND's (sandbox/seccomp.c) and the self-confinement of the
 * daemon and the proxy (common/confine.c). No glib: the first runs after
 * fork in the sandbox's child. */
#pragma once
#include <linux/filter.h>
#include <stddef.h>
#include <seccomp.h>

/* A filter libseccomp has compiled to BPF: built once where time is free
 * (the supervisor, while a daemon mounts) and loaded later where it is not
 * (the sandbox's child, just before exec). */
typedef struct {
	struct sock_filter *insns; /* malloc'ed; NULL: not built */
	size_t len;
} VrSeccompProg;

/* Adds the compat ABIs of the native one (i386 and x32 on x86-64, arm on
 * aarch64): their syscall numbers differ, so a filter for the native ABI
 * alone lets a 32-bit call through. 0 or -errno. */
int vr_seccomp_add_compat_arches(scmp_filter_ctx ctx);

/* Makes syscall nr answer err (when its NARGS argument comparisons hold).
 * A syscall that one of the ABIs lacks is not an error. 0 or -errno. */
int vr_seccomp_deny(scmp_filter_ctx ctx, int err, int nr, unsigned nargs, const struct scmp_arg_cmp *arg);

/* Refuses the ioctls that type into or drive the terminal (TIOCSTI,
 * TIOCLINUX) with EPERM, comparing only the low 32 bits of the request:
 * the kernel ignores the high half, and an exact 64-bit compare is bypassed
 * with junk there (CVE-2019-10063). 0 or -errno. */
int vr_seccomp_deny_terminal_injection(scmp_filter_ctx ctx);

/* Fills an allow-by-default filter with its rules. 0 or -errno. */
typedef int (*VrSeccompRules)(scmp_filter_ctx ctx, const void *data);
/* The one way both filters are made: a new allow-by-default ctx with the
 * compat ABIs (vr_seccomp_add_compat_arches), RULES(ctx, DATA), then
 * compiled into *PROG, or loaded into this process when PROG is NULL;
 * the ctx is released either way. 0 or -errno. */
int vr_seccomp_compile(VrSeccompRules rules, const void *data, VrSeccompProg *prog);

/* Compiles ctx into prog (seccomp_export_bpf through a memfd). 0 or -errno. */
int vr_seccomp_export(scmp_filter_ctx ctx, VrSeccompProg *prog);
/* Installs prog, as seccomp_load would (no_new_privs must be set already);
 * FLAGS: SECCOMP_FILTER_FLAG_* (TSYNC: every thread). 0 or -errno. */
int vr_seccomp_load_prog(const VrSeccompProg *prog, unsigned int flags);
/* Reads a program (its instructions, as another process compiled them)
 * from fd until EOF into prog: 0 (prog empty when nothing came) or -errno. */
int vr_seccomp_read_prog(int fd, VrSeccompProg *prog);
void vr_seccomp_prog_free(VrSeccompProg *prog);
