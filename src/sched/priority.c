/* priority.c - multifactor job priority. See priority.h. */
#include "sched/priority.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

static double prio_clamp(double x)
{
    return x < 0 ? 0 : (x > 1 ? 1 : x);
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
    out->assoc = prio_clamp(job->assoc_norm);
    out->fairshare = prio_clamp(job->fairshare);
    out->job_size = prio_size(conf, job);
    out->partition = prio_clamp(job->part_norm);
    out->qos = prio_clamp(job->qos_norm);
    out->ntres = conf->ntres;
    double sum = out->age * conf->w_age + out->assoc * conf->w_assoc +
                 out->fairshare * conf->w_fairshare + out->job_size * conf->w_job_size +
                 out->partition * conf->w_partition + out->qos * conf->w_qos;
    for (size_t i = 0; i < conf->ntres; i++) {
        out->tres[i] = prio_clamp(job->tres_norm[i]);
        sum += out->tres[i] * conf->tres[i].weight;
    }
    sum += (double)job->site - (double)job->nice;
    if (sum < 1)
        sum = 1;
    if (sum > (double)UINT32_MAX)
        sum = (double)UINT32_MAX;
    out->priority = (uint32_t)sum;
}
