/* The D-Bus side of the systemd mechanism (run/cgroup-systemd.c), inside
 * vault-run-systemd only: what run/cgroup.h's vr_cgroup_systemd_* ask it
 * for (run/cgroup-systemd-main.c). */
#pragma once
#include <glib.h>
#include <sys/types.h>

#include "policy/resource-limits.h"

gboolean vr_systemd_scope_usable(const VrLimits *want, gboolean host_root, char **detail);
gboolean vr_systemd_scope_start(const char *name, pid_t pid, const VrLimits *l, gboolean host_root, char **error);
void vr_systemd_scope_stop(const char *name, gboolean host_root);
