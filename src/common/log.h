/*
 * log.h - logging with levels and per-subsystem debug flags.
 *
 * The log settings are process-wide (the one sanctioned kind of global, with
 * signal flags). Daemons log to a file or stderr with a timestamp; commands log
 * to stderr as "<prog>: error: ..." the way Slurm's clients do.
 * Library code logs only at debug level; errors are logged once, by whoever
 * handles them.
 */
#ifndef LOOM_LOG_H
#define LOOM_LOG_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef enum {
    LOOM_LOG_QUIET = 0,
    LOOM_LOG_FATAL,
    LOOM_LOG_ERROR,
    LOOM_LOG_INFO,
    LOOM_LOG_VERBOSE,
    LOOM_LOG_DEBUG,
    LOOM_LOG_DEBUG2,
} loom_log_level_t;

/* Subsystems whose debug output can be switched on at run time. */
typedef enum {
    LOOM_LOGF_PROTO = 1u << 0,
    LOOM_LOGF_SCHED = 1u << 1,
    LOOM_LOGF_JOURNAL = 1u << 2,
    LOOM_LOGF_NODE = 1u << 3,
    LOOM_LOGF_STEP = 1u << 4,
    LOOM_LOGF_CONF = 1u << 5,
    LOOM_LOGF_AUTH = 1u << 6,
    LOOM_LOGF_DB = 1u << 7,
} loom_log_flag_t;

/* Configure: program name, level, optional file (NULL = stderr), and whether
 * lines carry a "[timestamp] " prefix (daemons) or "<prog>: " (commands). */
int loom_log_init(const char *prog, loom_log_level_t level, const char *path, bool daemon_style);
void loom_log_set_level(loom_log_level_t level);
loom_log_level_t loom_log_get_level(void);
void loom_log_set_flags(uint32_t flags);
uint32_t loom_log_get_flags(void);
/* Parse "Proto,Sched" (case-insensitive) into flags; -LOOM_EPARSE on an unknown name. */
int loom_log_parse_flags(const char *s, uint32_t *flags);
/* Slurm's DebugFlags names ("Backfill,Protocol"), each mapped to the Loom
 * subsystem it covers (Protocol: Proto; Backfill, SelectType, Priority, ...:
 * Sched; Steps, Cgroup, ...: Step; Gres, NodeFeatures, ...: Node; some to
 * none). -LOOM_EPARSE on a name Slurm 22.05 does not know; *bad, *badlen
 * then point at it. */
int loom_log_slurm_flags(const char *list, uint32_t *flags, const char **bad, size_t *badlen);
/* Apply change, "+Name" or "-Name", to a DebugFlags list: *out is the new
 * list with Slurm's names in Slurm's order ("" for none; caller frees).
 * -LOOM_EPARSE on an unknown name, -EINVAL without a sign. */
int loom_log_slurm_flags_edit(const char *list, const char *change, char **out);
/* Slurm's debug level names: quiet fatal error info verbose debug debug2..debug5. */
int loom_log_parse_level(const char *s, loom_log_level_t *level);
void loom_log_close(void);

void loom_logv(loom_log_level_t level, const char *fmt, va_list ap)
    __attribute__((format(printf, 2, 0)));
void loom_log(loom_log_level_t level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Debug line for one subsystem: printed only when its flag is on. */
void loom_log_sub(uint32_t flag, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#define loom_error(...)   loom_log(LOOM_LOG_ERROR, __VA_ARGS__)
#define loom_info(...)    loom_log(LOOM_LOG_INFO, __VA_ARGS__)
#define loom_verbose(...) loom_log(LOOM_LOG_VERBOSE, __VA_ARGS__)
#define loom_debug(...)   loom_log(LOOM_LOG_DEBUG, __VA_ARGS__)

#endif
