/* rlimits.c - resource limits from the submitting shell to the job. See rlimits.h. */
#include "common/rlimits.h"

#include "common/jobenv.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Slurm's names and order. */
static const struct {
    const char *name;
    int resource;
} rlimits_table[LOOM_RLIMIT_N] = {
    {"CPU", RLIMIT_CPU},     {"FSIZE", RLIMIT_FSIZE},   {"DATA", RLIMIT_DATA},
    {"STACK", RLIMIT_STACK}, {"CORE", RLIMIT_CORE},     {"RSS", RLIMIT_RSS},
    {"NPROC", RLIMIT_NPROC}, {"NOFILE", RLIMIT_NOFILE}, {"MEMLOCK", RLIMIT_MEMLOCK},
    {"AS", RLIMIT_AS},
};

/* Mark the names of list (upper case, as Slurm takes them) in sel. */
static int rlimits_mark(const char *list, bool on, bool sel[LOOM_RLIMIT_N], loom_err_t *err)
{
    for (const char *p = list; *p; p += *p == ',') {
        size_t n = strcspn(p, ","), i;
        for (i = 0; i < LOOM_RLIMIT_N; i++)
            if (strlen(rlimits_table[i].name) == n && strncmp(p, rlimits_table[i].name, n) == 0)
                break;
        bool all = n == 3 && strncmp(p, "ALL", 3) == 0, none = n == 4 && !strncmp(p, "NONE", 4);
        if (i == LOOM_RLIMIT_N && !all && !none && n)
            return loom_errf(err, -EINVAL, "Bad rlimit name: %.*s", (int)n, p);
        for (size_t k = 0; k < LOOM_RLIMIT_N && (on || !none); k++)
            if (all || none || k == i)
                sel[k] = on && !none; /* NONE as a list: none; as an exception: no change */
        p += n;
    }
    return 0;
}

int loom_rlimits_select(const char *spec, const char *except, bool sel[LOOM_RLIMIT_N],
                        loom_err_t *err)
{
    for (size_t i = 0; i < LOOM_RLIMIT_N; i++)
        sel[i] = !spec || !*spec;
    int rc = spec && *spec ? rlimits_mark(spec, true, sel, err) : 0;
    if (rc == 0 && except && *except)
        rc = rlimits_mark(except, false, sel, err);
    return rc;
}

void loom_rlimits_env(const bool sel[LOOM_RLIMIT_N], loom_strv_t *env)
{
    for (size_t i = 0; i < LOOM_RLIMIT_N; i++) {
        struct rlimit r;
        char name[32];
        if (!sel[i] || getrlimit(rlimits_table[i].resource, &r) < 0)
            continue;
        snprintf(name, sizeof(name), "SLURM_RLIMIT_%s", rlimits_table[i].name);
        if (r.rlim_cur == RLIM_INFINITY)
            loom_jobenv_set(env, name, "unlimited");
        else
            loom_jobenv_setf(env, name, "%llu", (unsigned long long)r.rlim_cur);
    }
}

void loom_rlimits_take(loom_strv_t *env, loom_rlimit_set_t *out)
{
    out->n = 0;
    for (size_t i = 0; i < LOOM_RLIMIT_N; i++) {
        char name[32];
        snprintf(name, sizeof(name), "SLURM_RLIMIT_%s", rlimits_table[i].name);
        const char *v = loom_jobenv_get(env, name);
        if (!v)
            continue;
        char *end;
        errno = 0;
        unsigned long long x = strtoull(v, &end, 10);
        bool inf = strcmp(v, "unlimited") == 0;
        if (inf || (*v && !*end && errno == 0)) {
            out->resource[out->n] = rlimits_table[i].resource;
            out->soft[out->n++] = inf ? RLIM_INFINITY : (rlim_t)x;
        }
        loom_jobenv_unset(env, name);
    }
}

void loom_rlimits_apply(const loom_rlimit_set_t *set)
{
    for (size_t i = 0; i < set->n; i++) {
        struct rlimit r;
        if (getrlimit(set->resource[i], &r) < 0)
            continue;
        rlim_t want = set->soft[i];
        bool above = r.rlim_max != RLIM_INFINITY && (want == RLIM_INFINITY || want > r.rlim_max);
        r.rlim_cur = want;
        if (above) { /* a raise of the hard limit needs the privilege; else the cap */
            struct rlimit up = {want, want};
            if (setrlimit(set->resource[i], &up) == 0)
                continue;
            r.rlim_cur = r.rlim_max;
        }
        setrlimit(set->resource[i], &r);
    }
}
