/*
 * procstat.c - parsers for /proc/PID/{stat,status,io} and cgroup accounting
 * files. See procstat.h.
 */
#include "common/procstat.h"

#include <ctype.h>
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

/* A decimal number at *p (after blanks), optionally negative (read as 0:
 * /proc prints -1 for some unset counters). Advances *p. */
static bool procstat_num(const char **p, uint64_t *out)
{
    const char *s = *p;
    while (*s == ' ' || *s == '\t')
        s++;
    bool neg = *s == '-';
    if (neg)
        s++;
    if (!isdigit((unsigned char)*s))
        return false;
    errno = 0;
    char *end;
    unsigned long long v = strtoull(s, &end, 10);
    if (errno == ERANGE)
        v = UINT64_MAX;
    *out = neg ? 0 : (uint64_t)v;
    *p = end;
    return true;
}

/* The line after line, or NULL after the last. */
static const char *procstat_next(const char *line)
{
    const char *nl = strchr(line, '\n');
    return nl ? nl + 1 : NULL;
}

/* Skip one blank-separated field. */
static bool procstat_skip(const char **p)
{
    const char *s = *p;
    while (*s == ' ')
        s++;
    if (!*s || *s == '\n')
        return false;
    while (*s && *s != ' ' && *s != '\n')
        s++;
    *p = s;
    return true;
}

int loom_procstat_parse_stat(const char *text, loom_procstat_t *out, loom_err_t *err)
{
    const char *open = strchr(text, '('), *close = strrchr(text, ')');
    uint64_t pid = 0, v[22];
    const char *p = text;
    if (!open || !close || close < open || !procstat_num(&p, &pid) || p > open)
        return loom_errf(err, -LOOM_EPARSE, "/proc stat: no 'PID (name)' at the start");
    p = close + 1;
    while (*p == ' ')
        p++;
    char state = *p;
    if (!isalpha((unsigned char)state))
        return loom_errf(err, -LOOM_EPARSE, "/proc stat: no state after the name");
    p++;
    /* fields 4 (ppid) .. 24 (rss); tty, tpgid, flags and friends skipped */
    for (int i = 0; i < 21; i++) {
        if (!procstat_num(&p, &v[i]))
            return loom_errf(err, -LOOM_EPARSE, "/proc stat: field %d is not a number", i + 4);
    }
    loom_procstat_t r = {.pid = (int)pid, .state = state};
    r.ppid = (int)v[0];
    r.pgrp = (int)v[1];
    r.sid = (int)v[2];
    r.utime = v[10];
    r.stime = v[11];
    r.cutime = v[12];
    r.cstime = v[13];
    r.start_ticks = v[18];
    r.vsize = v[19];
    r.rss_pages = v[20];
    *out = r;
    return 0;
}

/* The value of "Key:" lines (blanks and a unit after it allowed). */
static int procstat_lines(const char *text, const char *const *keys, uint64_t **vals, size_t n,
                          const char *what, loom_err_t *err)
{
    for (const char *line = text; line && *line; line = procstat_next(line)) {
        for (size_t i = 0; i < n; i++) {
            size_t len = strlen(keys[i]);
            if (strncmp(line, keys[i], len) != 0 || line[len] != ':')
                continue;
            const char *p = line + len + 1;
            if (!procstat_num(&p, vals[i]))
                return loom_errf(err, -LOOM_EPARSE, "%s: '%s' is not a number", what, keys[i]);
        }
    }
    return 0;
}

int loom_procstat_parse_status(const char *text, loom_procstatus_t *out, loom_err_t *err)
{
    static const char *const keys[] = {"VmRSS", "VmHWM", "VmSize", "VmPeak"};
    loom_procstatus_t r = {0};
    uint64_t *vals[] = {&r.vm_rss, &r.vm_hwm, &r.vm_size, &r.vm_peak};
    if (strncmp(text, "Name:", 5) != 0)
        return loom_errf(err, -LOOM_EPARSE, "/proc status: no 'Name:' line first");
    int rc = procstat_lines(text, keys, vals, 4, "/proc status", err);
    if (rc == 0)
        *out = r;
    return rc;
}

int loom_procstat_parse_io(const char *text, loom_procio_t *out, loom_err_t *err)
{
    static const char *const keys[] = {"rchar", "wchar", "read_bytes", "write_bytes"};
    loom_procio_t r = {0};
    uint64_t *vals[] = {&r.rchar, &r.wchar, &r.read_bytes, &r.write_bytes};
    if (strncmp(text, "rchar:", 6) != 0)
        return loom_errf(err, -LOOM_EPARSE, "/proc io: no 'rchar:' line first");
    int rc = procstat_lines(text, keys, vals, 4, "/proc io", err);
    if (rc == 0)
        *out = r;
    return rc;
}

/* ------------------------------------------------------------- cgroups */

int loom_cgstat_parse_u64(const char *text, uint64_t *out, loom_err_t *err)
{
    const char *p = text;
    while (*p == ' ' || *p == '\t')
        p++;
    uint64_t v;
    if (strncmp(p, "max", 3) == 0) {
        v = UINT64_MAX;
        p += 3;
    } else if (*p == '-' || !procstat_num(&p, &v)) {
        return loom_errf(err, -LOOM_EPARSE, "cgroup file: not a number");
    }
    while (*p == ' ' || *p == '\n')
        p++;
    if (*p)
        return loom_errf(err, -LOOM_EPARSE, "cgroup file: text after the number");
    *out = v;
    return 0;
}

int loom_cgstat_parse_key(const char *text, const char *key, uint64_t *out, loom_err_t *err)
{
    size_t len = strlen(key);
    for (const char *line = text; line && *line; line = procstat_next(line)) {
        if (strncmp(line, key, len) != 0 || line[len] != ' ')
            continue;
        const char *p = line + len;
        uint64_t v;
        if (!procstat_num(&p, &v) || (*p && *p != '\n'))
            return loom_errf(err, -LOOM_EPARSE, "cgroup file: '%s' is not a number", key);
        *out = v;
        return 0;
    }
    return -ENOENT;
}

/* io.stat: "MAJ:MIN rbytes=N wbytes=N rios=N ..." per device. */
int loom_cgstat_parse_io_v2(const char *text, uint64_t *rbytes, uint64_t *wbytes, loom_err_t *err)
{
    uint64_t r = 0, w = 0;
    for (const char *line = text; line && *line; line = procstat_next(line)) {
        const char *p = line;
        if (!procstat_skip(&p))
            continue; /* blank line */
        while (*p == ' ') {
            while (*p == ' ')
                p++;
            const char *eq = strchr(p, '=');
            const char *nl = strchr(p, '\n');
            if (!eq || (nl && eq > nl))
                return loom_errf(err, -LOOM_EPARSE, "io.stat: no key=value after the device");
            uint64_t v;
            const char *q = eq + 1;
            if (!procstat_num(&q, &v))
                return loom_errf(err, -LOOM_EPARSE, "io.stat: bad value of '%.*s'", (int)(eq - p),
                                 p);
            if (eq - p == 6 && strncmp(p, "rbytes", 6) == 0)
                r += v;
            else if (eq - p == 6 && strncmp(p, "wbytes", 6) == 0)
                w += v;
            p = q;
        }
    }
    *rbytes = r;
    *wbytes = w;
    return 0;
}

/* blkio: "MAJ:MIN Read N", "MAJ:MIN Write N", ..., "Total N". */
int loom_cgstat_parse_blkio_v1(const char *text, uint64_t *rbytes, uint64_t *wbytes,
                               loom_err_t *err)
{
    uint64_t r = 0, w = 0;
    for (const char *line = text; line && *line; line = procstat_next(line)) {
        const char *p = line, *op;
        if (strncmp(line, "Total", 5) == 0 || !procstat_skip(&p))
            continue;
        while (*p == ' ')
            p++;
        op = p;
        if (!procstat_skip(&p))
            return loom_errf(err, -LOOM_EPARSE, "blkio: a device line without an operation");
        int oplen = (int)(p - op);
        uint64_t v;
        if (!procstat_num(&p, &v))
            return loom_errf(err, -LOOM_EPARSE, "blkio: '%.*s' without a number", oplen, op);
        if (oplen == 4 && strncmp(op, "Read", 4) == 0)
            r += v;
        else if (oplen == 5 && strncmp(op, "Write", 5) == 0)
            w += v;
    }
    *rbytes = r;
    *wbytes = w;
    return 0;
}
