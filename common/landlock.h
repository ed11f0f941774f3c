/* Landlock, best effort: the kernel's unprivileged access control, used by
 * the view daemon and the proxy to confine themselves and by the sandbox for
 * its scopes. Plain syscalls (no glib): the sandbox child calls it after
 * fork. Every function degrades on older kernels: rights and scopes the
 * running ABI does not know are dropped, and without Landlock at all
 * (ABI 0) nothing is enforced and vr_landlock_enforce() says so by
 * returning 0 with ll->abi == 0. */
#pragma once
#include <stdbool.h>
#include <stdint.h>

/* Rights and scopes newer than the system header (linux/landlock.h may be
 * older than the running kernel). Values are the kernel's ABI. */
#define VR_LL_FS_EXECUTE      (1ULL << 0)
#define VR_LL_FS_WRITE_FILE   (1ULL << 1)
#define VR_LL_FS_READ_FILE    (1ULL << 2)
#define VR_LL_FS_READ_DIR     (1ULL << 3)
#define VR_LL_FS_REMOVE_DIR   (1ULL << 4)
#define VR_LL_FS_REMOVE_FILE  (1ULL << 5)
#define VR_LL_FS_MAKE_CHAR    (1ULL << 6)
#define VR_LL_FS_MAKE_DIR     (1ULL << 7)
#define VR_LL_FS_MAKE_REG     (1ULL << 8)
#define VR_LL_FS_MAKE_SOCK    (1ULL << 9)
#define VR_LL_FS_MAKE_FIFO    (1ULL << 10)
#define VR_LL_FS_MAKE_BLOCK   (1ULL << 11)
#define VR_LL_FS_MAKE_SYM     (1ULL << 12)
#define VR_LL_FS_REFER        (1ULL << 13) /* ABI 2 */
#define VR_LL_FS_TRUNCATE     (1ULL << 14) /* ABI 3 */
#define VR_LL_FS_IOCTL_DEV    (1ULL << 15) /* ABI 5 */
#define VR_LL_NET_BIND_TCP    (1ULL << 0)  /* ABI 4 */
#define VR_LL_NET_CONNECT_TCP (1ULL << 1)  /* ABI 4 */
#define VR_LL_SCOPE_ABSTRACT_UNIX_SOCKET (1ULL << 0) /* ABI 6 */
#define VR_LL_SCOPE_SIGNAL               (1ULL << 1) /* ABI 6 */

/* Every file-system right of ABI 5, and the read-only subset. */
#define VR_LL_FS_ALL  ((1ULL << 16) - 1)
#define VR_LL_FS_READ (VR_LL_FS_READ_FILE | VR_LL_FS_READ_DIR)

typedef struct {
	int abi;            /* the kernel's Landlock ABI; 0: none */
	int ruleset_fd;     /* -1 when nothing is to be enforced */
	uint64_t handled_fs;
} VrLandlock;

/* The running kernel's ABI, 0 when Landlock is absent or disabled. */
int vr_landlock_abi(void);

/* A ruleset that denies every file-system right in handled_fs (masked to the
 * ABI) not granted by a rule, denies TCP bind/connect when deny_tcp (ABI 4),
 * and applies scopes (ABI 6). 0 or -errno; with ABI 0, 0 and nothing to do. */
int vr_landlock_begin(VrLandlock *ll, uint64_t handled_fs, bool deny_tcp, uint64_t scopes);

/* Grants access beneath the object fd refers to (an O_PATH fd is enough).
 * Directory-only rights are dropped for a file. 0 or -errno. */
int vr_landlock_allow_fd(VrLandlock *ll, int fd, uint64_t access);
/* Same by path; a missing path is skipped (0). */
int vr_landlock_allow_path(VrLandlock *ll, const char *path, uint64_t access);

/* Sets no_new_privs and restricts the calling thread (and its future
 * children and threads) to the ruleset; closes it. 0 or -errno. Call it
 * before any thread starts, or only the calling thread is confined. */
int vr_landlock_enforce(VrLandlock *ll);
/* Drops the ruleset without enforcing it. */
void vr_landlock_abandon(VrLandlock *ll);
