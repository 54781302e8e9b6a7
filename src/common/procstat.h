/*
 * procstat.h - parsers for the Linux files that usage gathering reads:
 * /proc/PID/stat, /proc/PID/status, /proc/PID/io, and the cgroup v1 / v2
 * accounting files (docs/proto/messages.md §6.1 usage fields; Slurm's
 * jobacct_gather/linux and jobacct_gather/cgroup read the same files).
 *
 * Pure text parsers: no I/O here (the step supervisor reads the files,
 * src/noded/stepd_usage.c). Each takes the whole file as a NUL-terminated
 * string and returns 0, or -LOOM_EPARSE naming what was wrong; on failure
 * the output is untouched.
 *
 * Entry points:
 *   loom_procstat_parse_stat    /proc/PID/stat (the name may hold spaces
 *                               and parentheses: the last ')' ends it)
 *   loom_procstat_parse_status  VmRSS, VmHWM, VmSize, VmPeak (kB) of
 *                               /proc/PID/status (absent for kernel
 *                               threads and zombies: zeros)
 *   loom_procstat_parse_io      rchar, wchar, read_bytes, write_bytes
 *   loom_cgstat_parse_u64       a one-number file (memory.peak,
 *                               memory.max_usage_in_bytes, cpuacct.usage_*);
 *                               "max" reads as UINT64_MAX
 *   loom_cgstat_parse_key       one "key value" line of cpu.stat,
 *                               memory.stat, cpuacct.stat, memory.events
 *   loom_cgstat_parse_io_v2     io.stat: rbytes/wbytes summed over devices
 *   loom_cgstat_parse_blkio_v1  blkio.throttle.io_service_bytes (or
 *                               blkio.io_service_bytes): Read/Write summed
 *                               over devices (the "Total" line skipped)
 */
#ifndef LOOM_COMMON_PROCSTAT_H
#define LOOM_COMMON_PROCSTAT_H

#include "common/err.h"

#include <stdint.h>

typedef struct loom_procstat {
    int pid, ppid, pgrp, sid;
    char state;              /* R, S, D, Z, ... */
    uint64_t utime, stime;   /* clock ticks */
    uint64_t cutime, cstime; /* ticks of the children it has waited for */
    uint64_t start_ticks;    /* since boot */
    uint64_t vsize;          /* bytes */
    uint64_t rss_pages;
} loom_procstat_t;

typedef struct loom_procstatus {
    uint64_t vm_rss, vm_hwm, vm_size, vm_peak; /* KiB */
} loom_procstatus_t;

typedef struct loom_procio {
    uint64_t rchar, wchar, read_bytes, write_bytes;
} loom_procio_t;

int loom_procstat_parse_stat(const char *text, loom_procstat_t *out, loom_err_t *err);
int loom_procstat_parse_status(const char *text, loom_procstatus_t *out, loom_err_t *err);
int loom_procstat_parse_io(const char *text, loom_procio_t *out, loom_err_t *err);

int loom_cgstat_parse_u64(const char *text, uint64_t *out, loom_err_t *err);
/* -ENOENT (no error text) when key is not in the file. */
int loom_cgstat_parse_key(const char *text, const char *key, uint64_t *out, loom_err_t *err);
int loom_cgstat_parse_io_v2(const char *text, uint64_t *rbytes, uint64_t *wbytes, loom_err_t *err);
int loom_cgstat_parse_blkio_v1(const char *text, uint64_t *rbytes, uint64_t *wbytes,
                               loom_err_t *err);

#endif
