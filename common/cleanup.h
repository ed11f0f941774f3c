/* Cleanup helpers for code that must not depend on glib (the sandbox child
 * after clone, pid 1). glib code uses g_autoptr/g_autofree instead. */
#pragma once
#include <errno.h>
#include <stdlib.h>
#include <unistd.h>

static inline void vr_freep(void *p) { free(*(void **)p); }
static inline void vr_closep(int *fd)
{
	if (*fd >= 0) {
		int saved = errno;
		close(*fd);
		errno = saved;
	}
}

#define vr_cleanup_free __attribute__((cleanup(vr_freep)))
#define vr_cleanup_fd __attribute__((cleanup(vr_closep)))

/* Hand ownership out of a cleanup variable. */
static inline void *vr_steal_ptr(void *pp)
{
	void **p = pp, *v = *p;
	*p = NULL;
	return v;
}
static inline int vr_steal_fd(int *fd)
{
	int v = *fd;
	*fd = -1;
	return v;
}
