/* fairtree.c - Slurm's fair-tree fair-share factors, usage decay and
 * billing. See fairtree.h. */
#include "sched/fairtree.h"
#include "common/xalloc.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

/* ---- the tree ---------------------------------------------------------------------- */

typedef struct fairtree_walk {
    loom_fairtree_node_t *nodes;
    size_t n;
    size_t *first, *next; /* children lists, in input order */
    uint32_t rank, rnt;   /* the rank given last and the next untied one */
    uint32_t users;
} fairtree_walk_t;

#define FAIRTREE_NONE ((size_t)-1)

static int fairtree_check(const loom_fairtree_node_t *nodes, size_t n, loom_err_t *err)
{
    if (n == 0 || nodes[0].parent != -1) {
        loom_errf(err, -EINVAL, "fair tree: node 0 must be the root (parent -1)");
        return -EINVAL;
    }
    for (size_t i = 1; i < n; i++) {
        int32_t p = nodes[i].parent;
        if (p < 0 || (size_t)p >= i) {
            loom_errf(err, -EINVAL, "fair tree: node %zu has parent '%d' not before it", i, p);
            return -EINVAL;
        }
        if (nodes[p].is_user) {
            loom_errf(err, -EINVAL, "fair tree: node %zu has user node %d as parent", i, p);
            return -EINVAL;
        }
    }
    return 0;
}

/* Usage up the tree, shares within each level, then the usage ratios. */
static void fairtree_sums(loom_fairtree_node_t *nodes, size_t n)
{
    double *level = loom_xcalloc(n, sizeof(double));
    for (size_t i = 0; i < n; i++) {
        double u = nodes[i].usage_own;
        /* Usage is never negative or unbounded; such input counts as none. */
        nodes[i].usage_raw = nodes[i].is_user && isfinite(u) && u > 0 ? u : 0;
    }
    for (size_t i = n; i-- > 1;) {
        nodes[nodes[i].parent].usage_raw += nodes[i].usage_raw;
        level[nodes[i].parent] += nodes[i].shares_raw;
    }
    double root = nodes[0].usage_raw;
    for (size_t i = 0; i < n; i++) {
        loom_fairtree_node_t *a = &nodes[i];
        a->usage_norm = root > 0 ? a->usage_raw / root : 0;
        a->fs_factor = 0;
        a->rank = 0;
        if (a->parent < 0) {
            a->shares_norm = 0;
            a->usage_efctv = 1;
            a->level_fs = 0;
            continue;
        }
        double ps = level[a->parent], pu = nodes[a->parent].usage_raw;
        a->shares_norm = ps > 0 ? a->shares_raw / ps : 0;
        a->usage_efctv = pu > 0 ? a->usage_raw / pu : 0;
        if (a->shares_norm == 0)
            a->level_fs = 0;
        else if (a->usage_efctv == 0)
            a->level_fs = INFINITY;
        else
            a->level_fs = a->shares_norm / a->usage_efctv;
        if (isnan(a->level_fs) || isnan(a->usage_efctv)) { /* sums that overflowed */
            a->usage_efctv = 0;
            a->level_fs = 0;
        }
    }
    free(level);
}

/* One sibling as sorted: LevelFS descending, users before accounts, then
 * input order (so that the result does not depend on qsort). */
typedef struct fairtree_key {
    double level_fs;
    bool is_user;
    size_t idx;
} fairtree_key_t;

static int fairtree_cmp(const void *x, const void *y)
{
    const fairtree_key_t *a = x, *b = y;
    if (a->level_fs != b->level_fs)
        return a->level_fs > b->level_fs ? -1 : 1;
    if (a->is_user != b->is_user)
        return a->is_user ? -1 : 1;
    return a->idx < b->idx ? -1 : a->idx > b->idx;
}

static void fairtree_rank(fairtree_walk_t *w, size_t parent, bool account_tied)
{
    size_t cnt = 0;
    for (size_t c = w->first[parent]; c != FAIRTREE_NONE; c = w->next[c])
        cnt++;
    if (!cnt)
        return;
    fairtree_key_t *kids = loom_xmalloc(cnt * sizeof(*kids));
    cnt = 0;
    for (size_t c = w->first[parent]; c != FAIRTREE_NONE; c = w->next[c])
        kids[cnt++] = (fairtree_key_t){w->nodes[c].level_fs, w->nodes[c].is_user, c};
    qsort(kids, cnt, sizeof(*kids), fairtree_cmp);
    for (size_t k = 0; k < cnt; k++) {
        loom_fairtree_node_t *a = &w->nodes[kids[k].idx];
        bool tied = k == 0 ? account_tied : kids[k - 1].level_fs == a->level_fs;
        if (!a->is_user) {
            fairtree_rank(w, kids[k].idx, tied);
            continue;
        }
        if (!tied)
            w->rank = w->rnt;
        a->rank = w->rank;
        a->fs_factor = (double)w->rank / w->users;
        w->rnt--;
    }
    free(kids);
}

int loom_fairtree_compute(loom_fairtree_node_t *nodes, size_t n, loom_err_t *err)
{
    int rc = fairtree_check(nodes, n, err);
    if (rc < 0)
        return rc;
    fairtree_sums(nodes, n);
    fairtree_walk_t w = {.nodes = nodes, .n = n};
    w.first = loom_xmalloc(n * sizeof(size_t));
    w.next = loom_xmalloc(n * sizeof(size_t));
    size_t *last = loom_xmalloc(n * sizeof(size_t));
    for (size_t i = 0; i < n; i++)
        w.first[i] = w.next[i] = last[i] = FAIRTREE_NONE;
    for (size_t i = 1; i < n; i++) {
        size_t p = (size_t)nodes[i].parent;
        if (last[p] == FAIRTREE_NONE)
            w.first[p] = i;
        else
            w.next[last[p]] = i;
        last[p] = i;
        w.users += nodes[i].is_user;
    }
    w.rank = w.rnt = w.users;
    fairtree_rank(&w, 0, false);
    free(last);
    free(w.first);
    free(w.next);
    return 0;
}

/* ---- decay and reset --------------------------------------------------------------- */

double loom_fairtree_decay(int64_t dt, int64_t half_life)
{
    if (half_life <= 0 || dt <= 0)
        return 1;
    return pow(1 - M_LN2 / (double)half_life, (double)dt);
}

double loom_fairtree_charge(double billing, int64_t dt, int64_t half_life)
{
    if (dt <= 0 || billing <= 0)
        return 0;
    return billing * (double)dt * loom_fairtree_decay(dt, half_life);
}

int loom_fairtree_parse_reset(const char *s, loom_fairtree_reset_t *out, loom_err_t *err)
{
    static const char *const names[] = {"NONE",    "NOW",       "DAILY", "WEEKLY",
                                        "MONTHLY", "QUARTERLY", "YEARLY"};
    if (!s || !*s) {
        *out = LOOM_FT_RESET_NONE;
        return 0;
    }
    for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
        if (!strcasecmp(s, names[i])) {
            *out = (loom_fairtree_reset_t)i;
            return 0;
        }
    }
    loom_errf(err, -EINVAL, "PriorityUsageResetPeriod: unknown period '%s'", s);
    return -EINVAL;
}

/* A number that changes exactly when a reset boundary passes. */
static int64_t fairtree_period_no(loom_fairtree_reset_t period, int64_t t)
{
    time_t tt = (time_t)t;
    struct tm tm;
    gmtime_r(&tt, &tm);
    int64_t day = t >= 0 ? t / 86400 : (t - 86399) / 86400;
    switch (period) {
    case LOOM_FT_RESET_DAILY:
        return day;
    case LOOM_FT_RESET_WEEKLY:
        return (day + 3) / 7; /* 1970-01-01 was a Thursday: weeks start on Monday */
    case LOOM_FT_RESET_MONTHLY:
        return (int64_t)tm.tm_year * 12 + tm.tm_mon;
    case LOOM_FT_RESET_QUARTERLY:
        return (int64_t)tm.tm_year * 4 + tm.tm_mon / 3;
    case LOOM_FT_RESET_YEARLY:
        return tm.tm_year;
    default:
        return 0;
    }
}

bool loom_fairtree_reset_due(loom_fairtree_reset_t period, int64_t last, int64_t now)
{
    if (period == LOOM_FT_RESET_NONE)
        return false;
    if (period == LOOM_FT_RESET_NOW)
        return last == 0;
    if (last <= 0 || now <= last)
        return false;
    return fairtree_period_no(period, last) != fairtree_period_no(period, now);
}

/* ---- billing ----------------------------------------------------------------------- */

/* The weight's multiplier for memory: per MiB, or per GiB/TiB with a suffix. */
static int fairtree_mem_unit(const char *end, double *unit)
{
    if (!*end)
        *unit = 1;
    else if ((end[0] == 'G' || end[0] == 'g') && !end[1])
        *unit = 1.0 / 1024;
    else if ((end[0] == 'T' || end[0] == 't') && !end[1])
        *unit = 1.0 / (1024 * 1024);
    else if ((end[0] == 'M' || end[0] == 'm') && !end[1])
        *unit = 1;
    else
        return -EINVAL;
    return 0;
}

/* One "Name=weight" entry: its product with the job's count (0 for a TRES
 * the job has none of). */
static int fairtree_billing_entry(const char *ent, const loom_fairtree_tres_t *t, double *out)
{
    const char *eq = strchr(ent, '=');
    if (!eq || eq == ent)
        return -EINVAL;
    char *end;
    double w = strtod(eq + 1, &end);
    if (end == eq + 1 || !isfinite(w) || w < 0)
        return -EINVAL;
    size_t nl = (size_t)(eq - ent);
    double unit = 1;
    if (nl == 3 && !strncasecmp(ent, "mem", 3)) {
        if (fairtree_mem_unit(end, &unit) < 0)
            return -EINVAL;
        *out = w * unit * (double)t->mem_mib;
        return 0;
    }
    if (*end)
        return -EINVAL;
    if (nl == 3 && !strncasecmp(ent, "cpu", 3))
        *out = w * (double)t->cpus;
    else if (nl == 4 && !strncasecmp(ent, "node", 4))
        *out = w * (double)t->nodes;
    else if (nl >= 8 && !strncasecmp(ent, "gres/gpu", 8) && (nl == 8 || ent[8] == ':'))
        *out = w * (double)t->gpus;
    else
        *out = 0;
    return 0;
}

double loom_fairtree_billing(const char *s, const loom_fairtree_tres_t *t, bool max_tres,
                             loom_err_t *err)
{
    if (!s || !*s)
        return (double)t->cpus;
    char *copy = loom_xstrdup(s), *save = NULL;
    double sum = 0, max = 0;
    int rc = 0;
    for (char *ent = strtok_r(copy, ",", &save); ent; ent = strtok_r(NULL, ",", &save)) {
        double v = 0;
        if (fairtree_billing_entry(ent, t, &v) < 0) {
            loom_errf(err, -EINVAL, "TRESBillingWeights: bad entry '%s'", ent);
            rc = -EINVAL;
            break;
        }
        sum += v;
        if (v > max)
            max = v;
    }
    free(copy);
    if (rc < 0)
        return rc;
    return max_tres ? max : sum;
}
