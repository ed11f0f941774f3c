/* Messages for the user: one line on stderr, prefixed "vault-run: ".
 * Async-signal-safe enough for the sandbox child (vsnprintf + one write). */
#pragma once
#include <stdarg.h>

/* NOTICE: a line the user should see by default that is not a problem
 * ("using profile 'opencode'"); --quiet-like callers skip it themselves. */
enum { VR_LOG_ERROR, VR_LOG_WARNING, VR_LOG_NOTICE, VR_LOG_INFO, VR_LOG_DEBUG };

void vr_log_set_level(int level);
int vr_log_get_level(void);
void vr_log(int level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* TEXT as it is (no format, no length limit: vr_log's lines stop at
 * 2 KiB), prefixed as vr_log's: the run's summary line, whose names
 * may be long. */
void vr_log_text(int level, const char *text);
/* Logs at error level and returns -errnum (errnum > 0), for `return vr_log_errno(...)`. */
int vr_log_errno(int errnum, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* For the sandbox child after clone: one line, then _exit(status). */
_Noreturn void vr_die(int status, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* The same with ": strerror(ERRNUM)" after the message (ERRNUM > 0),
 * bubblewrap's die_with_error: `vr_die_errno(125, errno, "cannot bind %s", p)`. */
_Noreturn void vr_die_errno(int status, int errnum, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

#define vr_error(...) vr_log(VR_LOG_ERROR, __VA_ARGS__)
#define vr_warning(...) vr_log(VR_LOG_WARNING, __VA_ARGS__)
#define vr_notice(...) vr_log(VR_LOG_NOTICE, __VA_ARGS__)
#define vr_info(...) vr_log(VR_LOG_INFO, __VA_ARGS__)
#define vr_debug(...) vr_log(VR_LOG_DEBUG, __VA_ARGS__)
