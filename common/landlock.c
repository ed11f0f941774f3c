/* Landlock helpers: see landlock.h. The struct layouts are the kernel's
 * (include/uapi/linux/landlock.h), declared here because the installed
 * header may predate the running kernel's ABI. */
#include "common/landlock.h"
#include "common/cleanup.h"

#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#ifndef SYS_landlock_create_ruleset
#define SYS_landlock_create_ruleset 444
#define SYS_landlock_add_rule 445
#define SYS_landlock_restrict_self 446
#endif

struct vr_ll_ruleset_attr {
	uint64_t handled_access_fs;
	uint64_t handled_access_net; /* ABI 4 */
	uint64_t scoped;             /* ABI 6 */
};

struct vr_ll_path_beneath_attr {
	uint64_t allowed_access;
	int32_t parent_fd;
} __attribute__((packed));

#define VR_LL_CREATE_RULESET_VERSION (1U << 0)
#define VR_LL_RULE_PATH_BENEATH 1

/* Rights that only make sense on a directory (EINVAL on a file). */
#define VR_LL_FS_DIR_ONLY \
	(VR_LL_FS_READ_DIR | VR_LL_FS_REMOVE_DIR | VR_LL_FS_REMOVE_FILE | VR_LL_FS_MAKE_CHAR | \
	 VR_LL_FS_MAKE_DIR | VR_LL_FS_MAKE_REG | VR_LL_FS_MAKE_SOCK | VR_LL_FS_MAKE_FIFO | \
	 VR_LL_FS_MAKE_BLOCK | VR_LL_FS_MAKE_SYM | VR_LL_FS_REFER)

int vr_landlock_abi(void)
{
	long abi = syscall(SYS_landlock_create_ruleset, NULL, 0, VR_LL_CREATE_RULESET_VERSION);
	return abi > 0 ? (int)abi : 0;
}

static uint64_t fs_rights_of_abi(int abi)
{
	if (abi <= 0)
		return 0;
	if (abi == 1)
		return (1ULL << 13) - 1;
	if (abi == 2)
		return (1ULL << 14) - 1;
	if (abi <= 4)
		return (1ULL << 15) - 1;
	return VR_LL_FS_ALL;
}

int vr_landlock_begin(VrLandlock *ll, uint64_t handled_fs, bool deny_tcp, uint64_t scopes)
{
	ll->abi = vr_landlock_abi();
	ll->ruleset_fd = -1;
	ll->handled_fs = handled_fs & fs_rights_of_abi(ll->abi);
	if (ll->abi == 0)
		return 0;
	struct vr_ll_ruleset_attr attr = {.handled_access_fs = ll->handled_fs};
	size_t size = offsetof(struct vr_ll_ruleset_attr, handled_access_net);
	if (ll->abi >= 4) {
		attr.handled_access_net = deny_tcp ? VR_LL_NET_BIND_TCP | VR_LL_NET_CONNECT_TCP : 0;
		size = offsetof(struct vr_ll_ruleset_attr, scoped);
	}
	if (ll->abi >= 6) {
		attr.scoped = scopes & (VR_LL_SCOPE_ABSTRACT_UNIX_SOCKET | VR_LL_SCOPE_SIGNAL);
		size = sizeof attr;
	}
	if (!attr.handled_access_fs && !attr.handled_access_net && !attr.scoped)
		return 0; /* nothing this kernel can restrict */
	long fd = syscall(SYS_landlock_create_ruleset, &attr, size, 0);
	if (fd < 0)
		return -errno;
	ll->ruleset_fd = (int)fd;
	return 0;
}

int vr_landlock_allow_fd(VrLandlock *ll, int fd, uint64_t access)
{
	if (ll->ruleset_fd < 0)
		return 0;
	struct stat st;
	if (fstat(fd, &st) < 0)
		return -errno;
	struct vr_ll_path_beneath_attr pb = {
		.allowed_access = access & ll->handled_fs,
		.parent_fd = fd,
	};
	if (!S_ISDIR(st.st_mode))
		pb.allowed_access &= ~VR_LL_FS_DIR_ONLY;
	if (!pb.allowed_access)
		return 0;
	if (syscall(SYS_landlock_add_rule, ll->ruleset_fd, VR_LL_RULE_PATH_BENEATH, &pb, 0) < 0)
		return -errno;
	return 0;
}

int vr_landlock_allow_path(VrLandlock *ll, const char *path, uint64_t access)
{
	if (ll->ruleset_fd < 0)
		return 0;
	vr_cleanup_fd int fd = open(path, O_PATH | O_CLOEXEC);
	if (fd < 0)
		return errno == ENOENT || errno == ENOTDIR ? 0 : -errno;
	return vr_landlock_allow_fd(ll, fd, access);
}

int vr_landlock_enforce(VrLandlock *ll)
{
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
		return -errno;
	if (ll->ruleset_fd < 0)
		return 0;
	int r = syscall(SYS_landlock_restrict_self, ll->ruleset_fd, 0) < 0 ? -errno : 0;
	vr_landlock_abandon(ll);
	return r;
}

void vr_landlock_abandon(VrLandlock *ll)
{
	vr_clear_fd(&ll->ruleset_fd);
}
