/* Cleanup helpers for code that must not depend on glib (the sandbox child
 * after clone, pid 1). glib code uses g_autoptr/g_autofree instead. */
#pragma once
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/types.h>
#include <sys/wait.h>
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

/* A child that must not outlive the scope that made it (crun's cleanup_pid):
 * SIGKILLed and reaped on the way out, unless vr_steal_pid handed it on. */
static inline void vr_killp(pid_t *pid)
{
	if (*pid > 0) {
		int saved = errno;
		kill(*pid, SIGKILL);
		while (waitpid(*pid, NULL, 0) < 0 && errno == EINTR)
			;
		errno = saved;
	}
}

#define vr_cleanup_free __attribute__((cleanup(vr_freep)))
#define vr_cleanup_fd __attribute__((cleanup(vr_closep)))
#define vr_cleanup_pid __attribute__((cleanup(vr_killp)))

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
static inline pid_t vr_steal_pid(pid_t *pid)
{
	pid_t v = *pid;
	*pid = -1;
	return v;
}
