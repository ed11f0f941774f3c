/* Cleanup helpers for code that must not depend on glib (the sandbox child
 * after clone, pid 1). glib code uses g_autoptr/g_autofree instead. */
#pragma once
#include <dirent.h>
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

static inline void vr_closedirp(DIR **d)
{
	if (*d) {
		int saved = errno;
		closedir(*d);
		errno = saved;
	}
}

/* fdopendir(3) that takes *FD only when it succeeds (then *FD is -1 and
 * the DIR owns it); on failure *FD is still the caller's, errno set. */
static inline DIR *vr_fdopendir(int *fd)
{
	DIR *d = fdopendir(*fd);
	if (d)
		*fd = -1;
	return d;
}

/* Both ends of a pipe or socketpair ({-1, -1} until made). */
static inline void vr_close_pairp(int (*fds)[2])
{
	vr_closep(&(*fds)[0]);
	vr_closep(&(*fds)[1]);
}

/* Close now, before the scope ends (errno kept), and forget the fd. */
static inline void vr_clear_fd(int *fd)
{
	vr_closep(fd);
	*fd = -1;
}

#define vr_cleanup_free __attribute__((cleanup(vr_freep)))
#define vr_cleanup_fd __attribute__((cleanup(vr_closep)))
#define vr_cleanup_pair __attribute__((cleanup(vr_close_pairp)))
#define vr_cleanup_dir __attribute__((cleanup(vr_closedirp)))
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
