/* Resource limits of a run (--memory, --pids, --cpu and the [sandbox] keys of
 * the same names): their syntax, shared by the command line and the config
 * loader so both accept and reject exactly the same text. See docs/sandbox.md. */
#pragma once
#include <glib.h>

typedef struct {
	guint64 memory; /* bytes of RAM (swap included); 0: no limit */
	guint pids;     /* processes and threads; 0: no limit */
	double cpu;     /* CPUs (1.5 = one and a half); 0: no limit */
} VrLimits;

/* A size (common/size.h: "64M", "1.5G", "2GiB", "1048576"), at least
 * 1 MiB: less cannot start a process. */
gboolean vr_limits_parse_memory(const char *text, guint64 *ret);
/* A whole number of processes and threads, at least 2 (the sandbox's init and COMMAND). */
gboolean vr_limits_parse_pids(const char *text, guint *ret);
/* CPUs as a decimal ("1.5", "0.25") or a percentage of one CPU ("150%"), from 0.01 to 1024. */
gboolean vr_limits_parse_cpu(const char *text, double *ret);
/* What the syntax is, for error messages after "expected ". */
#define VR_LIMITS_MEMORY_SYNTAX "a size of at least 1M such as 512M or 2G"
#define VR_LIMITS_PIDS_SYNTAX "a number of processes, at least 2"
#define VR_LIMITS_CPU_SYNTAX "a number of CPUs such as 1.5 or a percentage of one CPU such as 50%, from 0.01 to 1024"

gboolean vr_limits_any(const VrLimits *l);
/* Takes the limits of defaults (the config's) that l leaves unset. */
void vr_limits_fill(VrLimits *l, const VrLimits *defaults);
/* "memory 64M, pids 30, cpu 0.2" (only the limits that are set); newly allocated. */
char *vr_limits_describe(const VrLimits *l);
