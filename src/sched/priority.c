/* priority.c - multifactor job priority. See priority.h. */
#include "sched/priority.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define PRIO_DEFAULT_MAX_AGE (7 * 86400)

static int prio_parse_one(const char *item, size_t len, loom_sched_tres_weight_t *w,
                          loom_err_t *err)
{
    const char *eq = memchr(item, '=', len);
    size_t nlen = eq ? (size_t)(eq - item) : 0;
    if (!eq || nlen == 0 || nlen >= sizeof(w->name))
        return loom_errf(err, -EINVAL, "invalid PriorityWeightTRES entry '%.*s'", (int)len, item);
    char num[32];
    size_t vlen = len - nlen - 1;
    if (vlen == 0 || vlen >= sizeof(num))
        return loom_errf(err, -EINVAL, "invalid PriorityWeightTRES entry '%.*s'", (int)len, item);
    memcpy(num, eq + 1, vlen);
    num[vlen] = '\0';
    char *end;
    double v = strtod(num, &end);
    if (*end || v < 0)
        return loom_errf(err, -EINVAL, "invalid PriorityWeightTRES entry '%.*s'", (int)len, item);
    memcpy(w->text, item, nlen);
    w->text[nlen] = '\0';
    for (size_t i = 0; i <= nlen; i++)
        w->name[i] = (char)tolower((unsigned char)w->text[i]);
    w->weight = v;
    return 0;
}

int loom_sched_prio_parse_tres(const char *s, loom_sched_prio_conf_t *conf, loom_err_t *err)
{
    loom_sched_tres_weight_t tmp[LOOM_SCHED_MAX_TRES];
    size_t n = 0;
    for (const char *p = s ? s : ""; *p;) {
        size_t len = strcspn(p, ",");
        if (len) {
            if (n == LOOM_SCHED_MAX_TRES)
                return loom_errf(err, -EINVAL, "too many PriorityWeightTRES entries");
            int rc = prio_parse_one(p, len, &tmp[n], err);
            if (rc < 0)
                return rc;
            n++;
        }
        p += len + (p[len] == ',');
    }
    memcpy(conf->tres, tmp, n * sizeof(tmp[0]));
    conf->ntres = n;
    return 0;
}

static const struct {
    const char *word;
    uint32_t flag;
} prio_flag_words[] = {
    {"ACCRUE_ALWAYS", LOOM_PRIO_ACCRUE_ALWAYS},
    {"CALCULATE_RUNNING", LOOM_PRIO_CALCULATE_RUNNING},
    {"DEPTH_OBLIVIOUS", LOOM_PRIO_DEPTH_OBLIVIOUS},
    {"NO_FAIR_TREE", LOOM_PRIO_NO_FAIR_TREE},
    {"FAIR_TREE", 0}, /* the default since 19.05; still accepted */
    {"INCR_ONLY", LOOM_PRIO_INCR_ONLY},
    {"MAX_TRES", LOOM_PRIO_MAX_TRES},
    {"NO_NORMAL_ALL", LOOM_PRIO_NO_NORMAL_ALL},
    {"NO_NORMAL_ASSOC", LOOM_PRIO_NO_NORMAL_ASSOC},
    {"NO_NORMAL_PART", LOOM_PRIO_NO_NORMAL_PART},
    {"NO_NORMAL_QOS", LOOM_PRIO_NO_NORMAL_QOS},
    {"NO_NORMAL_TRES", LOOM_PRIO_NO_NORMAL_TRES},
    {"SMALL_RELATIVE_TO_TIME", LOOM_PRIO_SMALL_RELATIVE_TO_TIME},
};

static int prio_flag_word(const char *w, size_t len, uint32_t *flags, loom_err_t *err)
{
    for (size_t i = 0; i < sizeof(prio_flag_words) / sizeof(prio_flag_words[0]); i++)
        if (strlen(prio_flag_words[i].word) == len &&
            strncasecmp(prio_flag_words[i].word, w, len) == 0) {
            *flags |= prio_flag_words[i].flag;
            return 0;
        }
    return loom_errf(err, -EINVAL, "invalid PriorityFlags word '%.*s'", (int)len, w);
}

int loom_sched_prio_parse_flags(const char *s, uint32_t *flags, loom_err_t *err)
{
    uint32_t f = 0;
    for (const char *p = s ? s : ""; *p;) {
        size_t len = strcspn(p, ",");
        while (len && isspace((unsigned char)*p)) {
            p++;
            len--;
        }
        size_t wl = len;
        while (wl && isspace((unsigned char)p[wl - 1]))
            wl--;
        if (wl) {
            int rc = prio_flag_word(p, wl, &f, err);
            if (rc < 0)
                return rc;
        }
        p += len + (p[len] == ',');
    }
    *flags = f;
    return 0;
}

static double prio_clamp(double x)
{
    return x < 0 ? 0 : (x > 1 ? 1 : x);
}

/* A raw (NO_NORMAL_*) factor: not negative, finite. */
static double prio_raw(double x)
{
    return x > 0 && x < 1e12 ? x : 0;
}

static double prio_age(const loom_sched_prio_conf_t *conf, const loom_sched_prio_job_t *job)
{
    int64_t max_age = conf->max_age > 0 ? conf->max_age : PRIO_DEFAULT_MAX_AGE;
    if (!job->eligible_time || job->now <= job->eligible_time)
        return 0;
    int64_t diff = job->now - job->eligible_time;
    return diff >= max_age ? 1.0 : (double)diff / (double)max_age;
}

static double prio_size(const loom_sched_prio_conf_t *conf, const loom_sched_prio_job_t *job)
{
    if (!conf->cluster_nodes || !conf->cluster_cpus)
        return 0;
    if (conf->flags & LOOM_PRIO_SMALL_RELATIVE_TO_TIME) {
        if (job->time_limit <= 0)
            return 0;
        return prio_clamp((double)job->min_nodes / conf->cluster_nodes / (double)job->time_limit);
    }
    double nodes = (double)conf->cluster_nodes, cpus = (double)conf->cluster_cpus;
    double f;
    if (conf->favor_small) {
        f = (nodes - job->min_nodes) / nodes;
        if (job->cpus)
            f = (f + (cpus - (double)job->cpus) / cpus) / 2;
    } else {
        f = job->min_nodes / nodes;
        if (job->cpus)
            f = (f + (double)job->cpus / cpus) / 2;
    }
    return prio_clamp(f);
}

void loom_sched_prio_compute(const loom_sched_prio_conf_t *conf, const loom_sched_prio_job_t *job,
                             loom_sched_prio_factors_t *out)
{
    memset(out, 0, sizeof(*out));
    out->age = prio_age(conf, job);
    uint32_t fl = conf->flags;
    out->assoc =
        fl & LOOM_PRIO_NO_NORMAL_ASSOC ? prio_raw(job->assoc_raw) : prio_clamp(job->assoc_norm);
    out->fairshare = prio_clamp(job->fairshare);
    out->job_size = prio_size(conf, job);
    out->partition =
        fl & LOOM_PRIO_NO_NORMAL_PART ? prio_raw(job->part_raw) : prio_clamp(job->part_norm);
    out->qos = fl & LOOM_PRIO_NO_NORMAL_QOS ? prio_raw(job->qos_raw) : prio_clamp(job->qos_norm);
    out->ntres = conf->ntres;
    double sum = out->age * conf->w_age + out->assoc * conf->w_assoc +
                 out->fairshare * conf->w_fairshare + out->job_size * conf->w_job_size +
                 out->partition * conf->w_partition + out->qos * conf->w_qos;
    for (size_t i = 0; i < conf->ntres; i++) {
        out->tres[i] = fl & LOOM_PRIO_NO_NORMAL_TRES ? prio_raw(job->tres_raw[i])
                                                     : prio_clamp(job->tres_norm[i]);
        sum += out->tres[i] * conf->tres[i].weight;
    }
    sum += (double)job->site - (double)job->nice;
    if (sum < 1)
        sum = 1;
    if (sum > (double)UINT32_MAX)
        sum = (double)UINT32_MAX;
    out->priority = (uint32_t)sum;
}
