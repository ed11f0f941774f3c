#include "common/seccomp-util.h"
#include "common/cleanup.h"

#include <errno.h>
#include <linux/seccomp.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

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

int vr_seccomp_compile(VrSeccompRules rules, const void *data, VrSeccompProg *prog)
{
	scmp_filter_ctx ctx = seccomp_init(SCMP_ACT_ALLOW);
	if (!ctx)
		return -ENOMEM;
	int r = vr_seccomp_add_compat_arches(ctx);
	if (r == 0)
		r = rules(ctx, data);
	if (r == 0)
		r = prog ? vr_seccomp_export(ctx, prog) : seccomp_load(ctx);
	seccomp_release(ctx);
	return r;
}

int vr_seccomp_export(scmp_filter_ctx ctx, VrSeccompProg *prog)
{
	prog->insns = NULL;
	prog->len = 0;
	vr_cleanup_fd int fd = memfd_create("vr-seccomp", MFD_CLOEXEC);
	if (fd < 0)
		return -errno;
	int r = seccomp_export_bpf(ctx, fd);
	struct stat st;
	if (r == 0 && fstat(fd, &st) < 0)
		r = -errno;
	if (r == 0 && (st.st_size <= 0 || st.st_size % (off_t)sizeof(struct sock_filter) != 0 ||
	               st.st_size > (off_t)(BPF_MAXINSNS * sizeof(struct sock_filter))))
		r = -EINVAL;
	if (r == 0 && !(prog->insns = malloc((size_t)st.st_size)))
		r = -ENOMEM;
	if (r == 0 && pread(fd, prog->insns, (size_t)st.st_size, 0) != st.st_size)
		r = -EIO;
	vr_clear_fd(&fd);
	if (r < 0) {
		vr_seccomp_prog_free(prog);
		return r;
	}
	prog->len = (size_t)st.st_size / sizeof(struct sock_filter);
	return 0;
}

int vr_seccomp_load_prog(const VrSeccompProg *prog, unsigned int flags)
{
	struct sock_fprog fprog = {(unsigned short)prog->len, prog->insns};
	if (!prog->insns || prog->len == 0)
		return -EINVAL;
	long r = syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, flags, &fprog);
	if (r < 0)
		return -errno;
	return r == 0 ? 0 : -ESRCH; /* TSYNC: the id of a thread that could not follow */
}

int vr_seccomp_read_prog(int fd, VrSeccompProg *prog)
{
	size_t cap = BPF_MAXINSNS * sizeof(struct sock_filter), got = 0;
	prog->insns = NULL;
	prog->len = 0;
	char *buf = malloc(cap);
	if (!buf)
		return -ENOMEM;
	for (;;) {
		ssize_t n = read(fd, buf + got, cap - got);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 || (n > 0 && got + (size_t)n == cap)) {
			int e = n < 0 ? errno : E2BIG;
			free(buf);
			return -e;
		}
		if (n == 0)
			break;
		got += (size_t)n;
	}
	if (got == 0 || got % sizeof(struct sock_filter) != 0) {
		free(buf);
		return got == 0 ? 0 : -EINVAL;
	}
	prog->insns = (struct sock_filter *)buf;
	prog->len = got / sizeof(struct sock_filter);
	return 0;
}

void vr_seccomp_prog_free(VrSeccompProg *prog)
{
	free(prog->insns);
	prog->insns = NULL;
	prog->len = 0;
}
