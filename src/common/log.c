/* log.c - logging with levels and subsystem flags. See log.h. */
#include "common/log.h"
#include "common/err.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <sys/time.h>

/* Process-wide log settings: the one allowed mutable global (STYLE.md). */
static struct {
    char prog[64];
    loom_log_level_t level;
    uint32_t flags;
    FILE *fp; /* NULL means stderr */
    bool daemon_style;
} log_cfg = {"loom", LOOM_LOG_INFO, 0, NULL, false};

static const char *const log_level_names[] = {
    "quiet", "fatal", "error", "info", "verbose", "debug", "debug2",
};

static const struct {
    const char *name;
    uint32_t flag;
} log_flag_names[] = {
    {"Proto", LOOM_LOGF_PROTO}, {"Sched", LOOM_LOGF_SCHED}, {"Journal", LOOM_LOGF_JOURNAL},
    {"Node", LOOM_LOGF_NODE},   {"Step", LOOM_LOGF_STEP},   {"Conf", LOOM_LOGF_CONF},
    {"Auth", LOOM_LOGF_AUTH},   {"DB", LOOM_LOGF_DB},
};

/* Slurm 22.05's DebugFlags and the subsystem each one maps to (0: none here). */
static const struct {
    const char *name;
    uint32_t flag;
} log_slurm_flags[] = {
    {"Accrue", LOOM_LOGF_SCHED},
    {"Agent", LOOM_LOGF_NODE},
    {"Backfill", LOOM_LOGF_SCHED},
    {"BackfillMap", LOOM_LOGF_SCHED},
    {"BurstBuffer", 0},
    {"Cgroup", LOOM_LOGF_STEP},
    {"CPU_Bind", LOOM_LOGF_STEP},
    {"CpuFrequency", 0},
    {"Data", 0},
    {"Dependency", LOOM_LOGF_SCHED},
    {"Elasticsearch", 0},
    {"Energy", LOOM_LOGF_NODE},
    {"ExtSensors", 0},
    {"Federation", 0},
    {"FrontEnd", 0},
    {"Gang", LOOM_LOGF_SCHED},
    {"Gres", LOOM_LOGF_NODE},
    {"Hetjob", 0},
    {"Interconnect", 0},
    {"JobAccountGather", LOOM_LOGF_STEP},
    {"JobComp", LOOM_LOGF_DB},
    {"JobContainer", LOOM_LOGF_STEP},
    {"License", LOOM_LOGF_SCHED},
    {"Network", LOOM_LOGF_PROTO},
    {"NetworkRaw", LOOM_LOGF_PROTO},
    {"NodeFeatures", LOOM_LOGF_NODE},
    {"NO_CONF_HASH", LOOM_LOGF_CONF},
    {"Power", LOOM_LOGF_NODE},
    {"Priority", LOOM_LOGF_SCHED},
    {"Profile", LOOM_LOGF_STEP},
    {"Protocol", LOOM_LOGF_PROTO},
    {"Reservation", LOOM_LOGF_SCHED},
    {"Route", LOOM_LOGF_PROTO},
    {"Script", LOOM_LOGF_STEP},
    {"SelectType", LOOM_LOGF_SCHED},
    {"Steps", LOOM_LOGF_STEP},
    {"Switch", 0},
    {"TimeCray", 0},
    {"TraceJobs", LOOM_LOGF_SCHED},
    {"Triggers", 0},
    {"WorkQueue", 0},
};

static size_t log_slurm_flag_find(const char *name, size_t n)
{
    size_t i, count = sizeof(log_slurm_flags) / sizeof(log_slurm_flags[0]);
    for (i = 0; i < count; i++)
        if (strlen(log_slurm_flags[i].name) == n &&
            strncasecmp(name, log_slurm_flags[i].name, n) == 0)
            break;
    return i;
}

int loom_log_slurm_flags(const char *list, uint32_t *flags, const char **bad, size_t *badlen)
{
    uint32_t out = 0;
    for (const char *p = list ? list : ""; *p; p += *p == ',') {
        size_t n = strcspn(p, ","), count = sizeof(log_slurm_flags) / sizeof(log_slurm_flags[0]);
        size_t i = log_slurm_flag_find(p, n);
        if (n && i == count) {
            *bad = p;
            *badlen = n;
            return -LOOM_EPARSE;
        }
        out |= n ? log_slurm_flags[i].flag : 0;
        p += n;
    }
    *flags = out;
    return 0;
}

int loom_log_slurm_flags_edit(const char *list, const char *change, char **out)
{
    enum { N = sizeof(log_slurm_flags) / sizeof(log_slurm_flags[0]) };
    bool on[N] = {false};
    *out = NULL;
    if (!change || (*change != '+' && *change != '-'))
        return -EINVAL;
    size_t k = log_slurm_flag_find(change + 1, strlen(change + 1));
    if (k == N)
        return -LOOM_EPARSE;
    for (const char *p = list ? list : ""; *p; p += *p == ',') {
        size_t n = strcspn(p, ","), i = log_slurm_flag_find(p, n);
        if (i < N)
            on[i] = true;
        p += n;
    }
    on[k] = *change == '+';
    size_t len = 1;
    for (size_t i = 0; i < N; i++)
        len += on[i] ? strlen(log_slurm_flags[i].name) + 1 : 0;
    char *text = calloc(1, len);
    if (!text)
        return -ENOMEM;
    for (size_t i = 0; i < N; i++)
        if (on[i]) {
            if (*text)
                strcat(text, ",");
            strcat(text, log_slurm_flags[i].name);
        }
    *out = text;
    return 0;
}

int loom_log_init(const char *prog, loom_log_level_t level, const char *path, bool daemon_style)
{
    snprintf(log_cfg.prog, sizeof(log_cfg.prog), "%s", prog);
    log_cfg.level = level;
    log_cfg.daemon_style = daemon_style;
    if (path) {
        FILE *fp = fopen(path, "a");
        if (!fp)
            return -1;
        setvbuf(fp, NULL, _IOLBF, 0);
        loom_log_close();
        log_cfg.fp = fp;
    }
    return 0;
}

void loom_log_close(void)
{
    if (log_cfg.fp)
        fclose(log_cfg.fp);
    log_cfg.fp = NULL;
}

void loom_log_set_level(loom_log_level_t level)
{
    log_cfg.level = level;
}

loom_log_level_t loom_log_get_level(void)
{
    return log_cfg.level;
}

void loom_log_set_flags(uint32_t flags)
{
    log_cfg.flags = flags;
}

uint32_t loom_log_get_flags(void)
{
    return log_cfg.flags;
}

int loom_log_parse_level(const char *s, loom_log_level_t *level)
{
    for (size_t i = 0; i < sizeof(log_level_names) / sizeof(log_level_names[0]); i++) {
        if (strcasecmp(s, log_level_names[i]) == 0) {
            *level = (loom_log_level_t)i;
            return 0;
        }
    }
    /* Slurm has debug3..debug5; they all mean "everything" here. */
    if (strncasecmp(s, "debug", 5) == 0 && s[5] >= '3' && s[5] <= '5' && !s[6]) {
        *level = LOOM_LOG_DEBUG2;
        return 0;
    }
    return -LOOM_EPARSE;
}

int loom_log_parse_flags(const char *s, uint32_t *flags)
{
    uint32_t out = 0;
    while (*s) {
        size_t n = strcspn(s, ",");
        size_t i, count = sizeof(log_flag_names) / sizeof(log_flag_names[0]);
        for (i = 0; i < count; i++)
            if (strlen(log_flag_names[i].name) == n &&
                strncasecmp(s, log_flag_names[i].name, n) == 0)
                break;
        if (i == count)
            return -LOOM_EPARSE;
        out |= log_flag_names[i].flag;
        s += n;
        if (*s == ',')
            s++;
    }
    *flags = out;
    return 0;
}

void loom_logv(loom_log_level_t level, const char *fmt, va_list ap)
{
    if (level > log_cfg.level || level == LOOM_LOG_QUIET)
        return;
    FILE *fp = log_cfg.fp ? log_cfg.fp : stderr;
    char line[4096];
    vsnprintf(line, sizeof(line), fmt, ap);
    if (log_cfg.daemon_style) {
        struct timeval tv;
        struct tm tm;
        gettimeofday(&tv, NULL);
        localtime_r(&tv.tv_sec, &tm);
        char ts[32];
        strftime(ts, sizeof(ts), "%Y-%m-%dT%H:%M:%S", &tm);
        fprintf(fp, "[%s.%03ld] %s%s\n", ts, (long)(tv.tv_usec / 1000),
                level <= LOOM_LOG_ERROR ? "error: " : "", line);
    } else {
        fprintf(fp, "%s: %s%s\n", log_cfg.prog, level <= LOOM_LOG_ERROR ? "error: " : "", line);
    }
}

void loom_log(loom_log_level_t level, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    loom_logv(level, fmt, ap);
    va_end(ap);
}

void loom_log_sub(uint32_t flag, const char *fmt, ...)
{
    if (!(log_cfg.flags & flag))
        return;
    va_list ap;
    va_start(ap, fmt);
    loom_logv(LOOM_LOG_INFO, fmt, ap);
    va_end(ap);
}
