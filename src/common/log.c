/* log.c - logging with levels and subsystem flags. See log.h. */
#include "common/log.h"
#include "common/err.h"

#include <stdio.h>
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
