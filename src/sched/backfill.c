/* backfill.c - backfill on a time-resource availability profile. See backfill.h. */
#include "sched/backfill.h"
#include "common/xalloc.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define BF_DEFAULT_WINDOW 86400
#define BF_DEFAULT_RES    60
#define BF_DEFAULT_TEST   500
#define BF_MAX_NEED       (LOOM_SCHED_MAX_GROUPS + 2)

/* What is in use on a node from t until the next segment's t. */
typedef struct {
    int64_t t;
    uint32_t cpus, njobs, excl;
    uint64_t mem;
    uint64_t gres[LOOM_SCHED_MAX_GROUPS];
} bf_seg_t;

typedef struct {
    bf_seg_t *seg; /* seg[0].t == now; sorted; the last lasts for ever */
    uint32_t nseg, capseg;
    uint32_t nresv; /* holds that start after now */
    uint32_t cpus;
    uint64_t mem;
    uint64_t gcap[LOOM_SCHED_MAX_GROUPS];
} bf_node_t;

/* What one allocation holds on one node. */
typedef struct {
    uint32_t cpus;
    uint64_t mem;
    bool excl;
    uint64_t gres[LOOM_SCHED_MAX_GROUPS];
} bf_use_t;

/* A job's need on one node, for planning: GRES as (groups it may use, count). */
typedef struct {
    uint32_t cpus, tasks;
    uint64_t mem;
    bool excl;
    struct {
        uint32_t mask;
        uint64_t count;
    } g[BF_MAX_NEED];
    size_t ng;
} bf_need_t;

/* A node that could take part in a plan. */
typedef struct {
    uint32_t idx;
    bool required;
    const bf_need_t *need; /* its class's */
} bf_cand_t;

/* Jobs examined so far for one user or partition. */
typedef struct bf_count {
    uint32_t key, n;
} bf_count_t;

/* Per-job planning arrays, kept by the planner and reused. */
struct bf_scratch {
    bf_cand_t *cand;
    bf_need_t *cls_need;
    uint8_t *cls_state;
};

#define BF_MAX_CLASSES 64 /* node shapes looked up; nodes beyond get classes of their own */

struct loom_sched_bf {
    int64_t now, horizon, res;
    uint32_t max_test, tested, nslots;
    uint32_t max_user, max_part, max_start, started;
    bf_count_t *per_user, *per_part; /* jobs examined, by uid and by partition */
    size_t nusers, nparts;
    size_t nnodes;
    bf_node_t *nodes;
    uint32_t *cls; /* per node: its shape class (needs are computed once per class) */
    uint32_t *cls_rep;
    uint32_t ncls;
    uint32_t *open; /* nodes with a free CPU when the planner was made */
    size_t nopen;
    struct bf_scratch *scratch; /* per-job planning arrays, reused */
    uint8_t *slot_done;
    int64_t lim_end; /* the limit callback's interval is [now, lim_end) */
};

static uint64_t bf_min64(uint64_t a, uint64_t b)
{
    return a < b ? a : b;
}

static int64_t bf_add_time(int64_t t, int64_t d)
{
    return d == LOOM_SCHED_BF_NEVER || t > LOOM_SCHED_BF_NEVER - d ? LOOM_SCHED_BF_NEVER : t + d;
}

/* ---- the profile ---------------------------------------------------------------- */

/* The index of the segment that starts at t, splitting one if needed. */
static uint32_t bf_split(bf_node_t *n, int64_t t)
{
    if (t <= n->seg[0].t)
        return 0;
    uint32_t lo = 0, hi = n->nseg; /* last seg with .t <= t */
    while (hi - lo > 1) {
        uint32_t mid = (lo + hi) / 2;
        if (n->seg[mid].t <= t)
            lo = mid;
        else
            hi = mid;
    }
    if (n->seg[lo].t == t)
        return lo;
    if (n->nseg == n->capseg) {
        n->capseg = n->capseg ? n->capseg * 2 : 4;
        n->seg = loom_xreallocarray(n->seg, n->capseg, sizeof(*n->seg));
    }
    memmove(&n->seg[lo + 2], &n->seg[lo + 1], (n->nseg - lo - 1) * sizeof(*n->seg));
    n->seg[lo + 1] = n->seg[lo];
    n->seg[lo + 1].t = t;
    n->nseg++;
    return lo + 1;
}

static void bf_seg_add(bf_seg_t *s, const bf_use_t *u)
{
    s->cpus += u->cpus;
    s->mem += u->mem;
    s->njobs++;
    s->excl += u->excl;
    for (size_t g = 0; g < LOOM_SCHED_MAX_GROUPS; g++)
        s->gres[g] += u->gres[g];
}

static void bf_hold(loom_sched_bf_t *bf, uint32_t idx, int64_t start, int64_t end,
                    const bf_use_t *u)
{
    bf_node_t *n = &bf->nodes[idx];
    if (start < bf->now)
        start = bf->now;
    if (end <= start)
        return;
    uint32_t a = bf_split(n, start);
    uint32_t b = end == LOOM_SCHED_BF_NEVER ? n->nseg : bf_split(n, end);
    for (uint32_t i = a; i < b; i++)
        bf_seg_add(&n->seg[i], u);
    if (start > bf->now)
        n->nresv++;
}

static void bf_use_of(const loom_sched_node_t *n, const loom_sched_node_alloc_t *na, bool excl,
                      bf_use_t *u)
{
    memset(u, 0, sizeof(*u));
    u->cpus = excl ? n->cpus : na->ncpus;
    u->mem = na->mem;
    u->excl = excl;
    for (size_t i = 0; i < na->ngres; i++)
        if (na->gres[i].gres < n->ngres)
            u->gres[n->gres[na->gres[i].gres].group] += na->gres[i].count;
}

static void bf_hold_alloc(loom_sched_bf_t *bf, const loom_sched_node_t *nodes,
                          const loom_sched_alloc_t *a, int64_t start, int64_t end)
{
    for (size_t i = 0; i < a->nnodes; i++) {
        uint32_t idx = a->nodes[i].node;
        if (idx >= bf->nnodes)
            continue;
        bf_use_t u;
        bf_use_of(&nodes[idx], &a->nodes[i], a->exclusive, &u);
        bf_hold(bf, idx, start, end, &u);
    }
}

static bool bf_same_str(const char *a, const char *b)
{
    return a == b || (a && b && strcmp(a, b) == 0);
}

/* Do two nodes need the same for any request? */
static bool bf_same_shape(const loom_sched_node_t *a, const loom_sched_node_t *b)
{
    if (a->cpus != b->cpus || a->mem_total != b->mem_total || a->threads != b->threads ||
        a->whole_cores != b->whole_cores || a->unit != b->unit || a->ngres != b->ngres ||
        a->ngroups != b->ngroups)
        return false;
    for (size_t i = 0; i < a->ngres; i++) {
        const loom_sched_gres_t *x = &a->gres[i], *y = &b->gres[i];
        if (x->group != y->group || x->count != y->count || !bf_same_str(x->name, y->name) ||
            !bf_same_str(x->type, y->type))
            return false;
    }
    return true;
}

static void bf_classes(loom_sched_bf_t *bf, const loom_sched_node_t *nodes)
{
    bf->cls = loom_xcalloc(bf->nnodes + 1, sizeof(uint32_t));
    bf->cls_rep = loom_xcalloc(bf->nnodes + 1, sizeof(uint32_t));
    for (uint32_t i = 0; i < bf->nnodes; i++) {
        uint32_t c = bf->ncls;
        if (i && bf_same_shape(&nodes[i], &nodes[bf->cls_rep[bf->cls[i - 1]]]))
            c = bf->cls[i - 1];
        for (uint32_t k = 0; c == bf->ncls && k < bf->ncls && k < BF_MAX_CLASSES; k++)
            if (bf_same_shape(&nodes[i], &nodes[bf->cls_rep[k]]))
                c = k;
        if (c == bf->ncls)
            bf->cls_rep[bf->ncls++] = i;
        bf->cls[i] = c;
    }
}

loom_sched_bf_t *loom_sched_bf_create(const loom_sched_node_t *nodes, size_t nnodes,
                                      const loom_sched_running_t *running, size_t nrunning,
                                      const loom_sched_bf_opts_t *opts)
{
    loom_sched_bf_t *bf = loom_xcalloc(1, sizeof(*bf));
    bf->now = opts->now;
    bf->res = opts->resolution > 0 ? opts->resolution : BF_DEFAULT_RES;
    bf->horizon = bf_add_time(opts->now, opts->window > 0 ? opts->window : BF_DEFAULT_WINDOW);
    bf->max_test = opts->max_job_test ? opts->max_job_test : BF_DEFAULT_TEST;
    bf->max_user = opts->max_job_user;
    bf->max_part = opts->max_job_part;
    bf->max_start = opts->max_job_start;
    bf->nslots = opts->nslots;
    bf->slot_done = loom_xcalloc(opts->nslots + 1, 1);
    bf->nnodes = nnodes;
    bf->nodes = loom_xcalloc(nnodes + 1, sizeof(*bf->nodes));
    for (size_t i = 0; i < nnodes; i++) {
        bf_node_t *n = &bf->nodes[i];
        n->capseg = 4;
        n->seg = loom_xcalloc(n->capseg, sizeof(*n->seg));
        n->seg[0].t = bf->now;
        n->nseg = 1;
        n->cpus = nodes[i].cpus;
        n->mem = nodes[i].mem_total;
        for (size_t g = 0; g < nodes[i].ngres; g++)
            n->gcap[nodes[i].gres[g].group] += nodes[i].gres[g].count;
    }
    bf_classes(bf, nodes);
    bf->open = loom_sched_open_nodes(nodes, nnodes, &bf->nopen);
    for (size_t r = 0; r < nrunning; r++) {
        int64_t end = running[r].end;
        if (end <= bf->now) /* over its limit: it is being killed */
            end = bf->now + bf->res;
        bf_hold_alloc(bf, nodes, running[r].alloc, bf->now, end);
    }
    return bf;
}

void loom_sched_bf_destroy(loom_sched_bf_t *bf)
{
    if (!bf)
        return;
    for (size_t i = 0; i < bf->nnodes; i++)
        free(bf->nodes[i].seg);
    free(bf->nodes);
    free(bf->per_user);
    free(bf->per_part);
    free(bf->cls);
    free(bf->cls_rep);
    free(bf->open);
    if (bf->scratch) {
        free(bf->scratch->cand);
        free(bf->scratch->cls_need);
        free(bf->scratch->cls_state);
        free(bf->scratch);
    }
    free(bf->slot_done);
    free(bf);
}

void loom_sched_bf_add_running(loom_sched_bf_t *bf, const loom_sched_node_t *nodes,
                               const loom_sched_alloc_t *a, int64_t end)
{
    bf_hold_alloc(bf, nodes, a, bf->now, end <= bf->now ? bf->now + bf->res : end);
}

uint32_t loom_sched_bf_tested(const loom_sched_bf_t *bf)
{
    return bf->tested;
}

/* ---- what a job needs on one node ------------------------------------------------ */

static uint32_t bf_gres_mask(const loom_sched_node_t *n, const char *name, const char *type)
{
    uint32_t m = 0;
    for (size_t i = 0; i < n->ngres; i++) {
        const loom_sched_gres_t *g = &n->gres[i];
        if (!strcmp(g->name, name) && (!type || (g->type && !strcmp(g->type, type))))
            m |= 1u << g->group;
    }
    return m;
}

static bool bf_need_gres(bf_need_t *need, uint32_t mask, uint64_t count)
{
    if (!count)
        return true;
    if (!mask || need->ng == BF_MAX_NEED)
        return false;
    need->g[need->ng].mask = mask;
    need->g[need->ng++].count = count;
    return true;
}

static uint64_t bf_div_up(uint64_t a, uint64_t b)
{
    return b ? (a + b - 1) / b : a;
}

/* GRES and GPUs per node; returns the GPUs. */
static bool bf_need_all_gres(const loom_sched_node_t *n, const loom_sched_req_t *r, uint32_t k,
                             bf_need_t *need, uint64_t *gpus)
{
    *gpus = 0;
    for (size_t i = 0; i < r->ngres; i++) {
        if (!bf_need_gres(need, bf_gres_mask(n, r->gres[i].name, r->gres[i].type),
                          r->gres[i].count))
            return false;
        if (!strcmp(r->gres[i].name, "gpu"))
            *gpus += r->gres[i].count;
    }
    uint64_t share = k ? bf_div_up(r->gpus_per_job, k) : r->gpus_per_job > 0; /* 0: the least */
    uint64_t more = (uint64_t)r->gpus_per_task * need->tasks + share;
    *gpus += more;
    return bf_need_gres(need, bf_gres_mask(n, "gpu", r->gpus_type), more);
}

/* The share of a job on one of k nodes; k == 0: the least any node of it
 * takes (one task, or --ntasks-per-node; one GPU of --gpus). False when the
 * node can never host it. */
static bool bf_need(const loom_sched_node_t *n, const loom_sched_req_t *r, uint32_t k,
                    bf_need_t *need)
{
    memset(need, 0, sizeof(*need));
    uint32_t cpt = r->cpus_per_task ? r->cpus_per_task : 1;
    uint64_t ntasks =
        r->ntasks ? r->ntasks : (uint64_t)(r->ntasks_per_node ? r->ntasks_per_node : 1) * k;
    need->tasks =
        (uint32_t)(r->ntasks_per_node ? r->ntasks_per_node : (k ? bf_div_up(ntasks, k) : 1));
    uint64_t gpus;
    if (!bf_need_all_gres(n, r, k, need, &gpus))
        return false;
    uint64_t cpus = (uint64_t)need->tasks * cpt;
    if (r->cpus_per_gpu && gpus * r->cpus_per_gpu > cpus)
        cpus = gpus * r->cpus_per_gpu;
    if (k && bf_div_up(r->min_cpus, k) > cpus)
        cpus = bf_div_up(r->min_cpus, k);
    if (n->unit > 1)
        cpus = bf_div_up(cpus, n->unit) * n->unit;
    need->excl = r->exclusive;
    need->cpus = (uint32_t)bf_min64(r->exclusive ? n->cpus : cpus, UINT32_MAX);
    if (r->mem_whole_node)
        need->mem = n->mem_total;
    else if (r->mem_per_node)
        need->mem = r->mem_per_node;
    else if (r->mem_per_cpu)
        need->mem = r->mem_per_cpu * need->cpus;
    else if (r->mem_per_gpu)
        need->mem = r->mem_per_gpu * gpus;
    return cpus <= n->cpus && need->mem <= n->mem_total;
}

static bool bf_seg_ok(const bf_node_t *bn, const bf_seg_t *s, const bf_need_t *need)
{
    if (s->excl || (need->excl && s->njobs))
        return false;
    if (s->cpus + need->cpus > bn->cpus || s->mem + need->mem > bn->mem)
        return false;
    for (size_t i = 0; i < need->ng; i++) {
        uint64_t free_units = 0;
        for (uint32_t g = 0; g < LOOM_SCHED_MAX_GROUPS; g++)
            if (need->g[i].mask & (1u << g))
                free_units += bn->gcap[g] > s->gres[g] ? bn->gcap[g] - s->gres[g] : 0;
        if (free_units < need->g[i].count)
            return false;
    }
    return true;
}

/* The earliest t >= tmin (and <= tmax) where need fits on the node for d
 * seconds; NEVER when none. */
static int64_t bf_node_earliest(const loom_sched_bf_t *bf, uint32_t idx, const bf_need_t *need,
                                int64_t d, int64_t tmin, int64_t tmax)
{
    const bf_node_t *bn = &bf->nodes[idx];
    int64_t t = tmin;
    for (uint32_t i = 0; i < bn->nseg; i++) {
        int64_t se = i + 1 < bn->nseg ? bn->seg[i + 1].t : LOOM_SCHED_BF_NEVER;
        if (se <= t)
            continue;
        if (bn->seg[i].t >= bf_add_time(t, d))
            break;
        if (!bf_seg_ok(bn, &bn->seg[i], need)) {
            t = se;
            if (t > tmax)
                return LOOM_SCHED_BF_NEVER;
        }
    }
    return t <= tmax ? t : LOOM_SCHED_BF_NEVER;
}

/* ---- choosing when and where ------------------------------------------------------ */

typedef struct {
    loom_sched_bf_t *bf;
    const loom_sched_node_t *nodes;
    size_t nnodes;
    const loom_sched_req_t *req;
    int64_t d;
    uint32_t k; /* nodes wanted */
    bf_cand_t *cand;
    size_t ncand, nreq;
    bf_need_t *cls_need; /* per class */
    uint8_t *cls_state;  /* 0 not computed, 1 fits the node, 2 never */
    bool exact;          /* planned by the selector at each time (bf_plan_exact) */
    size_t *chosen;      /* the sweep's last plan: candidates, in where's order */
} bf_plan_t;

static bool bf_is_required(const loom_sched_req_t *r, uint32_t idx)
{
    for (size_t i = 0; i < r->nreq_nodes; i++)
        if (r->req_nodes[i] == idx)
            return true;
    return false;
}

/* The job's need on node i (computed once per node class); NULL: never. */
static const bf_need_t *bf_node_need(bf_plan_t *pl, uint32_t i)
{
    uint32_t c = pl->bf->cls[i];
    if (!pl->cls_state[c]) {
        const loom_sched_node_t *rep = &pl->nodes[pl->bf->cls_rep[c]];
        pl->cls_state[c] = bf_need(rep, pl->req, pl->exact ? 0 : pl->k, &pl->cls_need[c]) ? 1 : 2;
    }
    return pl->cls_state[c] == 1 ? &pl->cls_need[c] : NULL;
}

static void bf_collect(bf_plan_t *pl)
{
    const loom_sched_req_t *r = pl->req;
    struct bf_scratch *sc = pl->bf->scratch;
    if (!sc) {
        sc = pl->bf->scratch = loom_xcalloc(1, sizeof(*sc));
        sc->cand = loom_xcalloc(pl->bf->nnodes + 1, sizeof(*sc->cand));
        sc->cls_need = loom_xcalloc(pl->bf->ncls + 1, sizeof(*sc->cls_need));
        sc->cls_state = loom_xcalloc(pl->bf->ncls + 1, 1);
    }
    pl->cand = sc->cand;
    pl->cls_need = sc->cls_need;
    pl->cls_state = sc->cls_state;
    memset(pl->cls_state, 0, pl->bf->ncls + 1);
    for (uint32_t i = 0; i < pl->bf->nnodes; i++) {
        const loom_sched_node_t *n = &pl->nodes[i];
        if (!n->usable || (r->allowed && !r->allowed[i]))
            continue;
        const bf_need_t *need = bf_node_need(pl, i);
        if (!need)
            continue;
        bool req = r->nreq_nodes && bf_is_required(r, i);
        pl->cand[pl->ncand++] = (bf_cand_t){i, req, need};
        pl->nreq += req;
    }
}

/* One node: the earliest start over the candidates, best fit among ties. */
static int64_t bf_earliest_one(bf_plan_t *pl, int64_t tmin, size_t *pick)
{
    int64_t best = LOOM_SCHED_BF_NEVER;
    uint32_t best_free = 0;
    for (size_t i = 0; i < pl->ncand; i++) {
        if (pl->nreq && !pl->cand[i].required)
            continue;
        int64_t tmax = best == LOOM_SCHED_BF_NEVER ? pl->bf->horizon : best;
        int64_t t = bf_node_earliest(pl->bf, pl->cand[i].idx, pl->cand[i].need, pl->d, tmin, tmax);
        if (t == LOOM_SCHED_BF_NEVER)
            continue;
        if (t == tmin) { /* nothing can be earlier; where exactly is the placement's call */
            *pick = i;
            return t;
        }
        const loom_sched_node_t *n = &pl->nodes[pl->cand[i].idx];
        uint32_t fr = n->cpus - n->cpus_used;
        if (t < best || (t == best && (n->weight < pl->nodes[pl->cand[*pick].idx].weight ||
                                       (n->weight == pl->nodes[pl->cand[*pick].idx].weight &&
                                        fr < best_free)))) {
            best = t;
            best_free = fr;
            *pick = i;
        }
    }
    return best;
}

typedef struct {
    int64_t t;
    int delta;
    bool required;
} bf_ev_t;

static int bf_ev_cmp(const void *a, const void *b)
{
    const bf_ev_t *x = a, *y = b;
    if (x->t != y->t)
        return x->t < y->t ? -1 : 1;
    return y->delta - x->delta; /* starts before ends: windows are closed */
}

/* The feasible start windows [s, e] of one candidate, as events. */
static void bf_windows(bf_plan_t *pl, const bf_cand_t *c, int64_t tmin, bf_ev_t **ev, size_t *nev,
                       size_t *cap)
{
    const bf_node_t *bn = &pl->bf->nodes[c->idx];
    int64_t cur = tmin, horizon = pl->bf->horizon;
    for (uint32_t i = 0; i < bn->nseg && cur <= horizon; i++) {
        if (bf_seg_ok(bn, &bn->seg[i], c->need))
            continue;
        int64_t se = i + 1 < bn->nseg ? bn->seg[i + 1].t : LOOM_SCHED_BF_NEVER;
        int64_t a = bn->seg[i].t;
        int64_t fe = pl->d == LOOM_SCHED_BF_NEVER ? INT64_MIN : a - pl->d;
        if (fe >= cur) {
            if (*nev + 2 > *cap) {
                *cap = *cap * 2 + 16;
                *ev = loom_xreallocarray(*ev, *cap, sizeof(**ev));
            }
            (*ev)[(*nev)++] = (bf_ev_t){cur, 1, c->required};
            (*ev)[(*nev)++] = (bf_ev_t){fe < horizon ? fe : horizon, -1, c->required};
        }
        cur = se > cur ? se : cur;
    }
    if (cur <= horizon) {
        if (*nev + 2 > *cap) {
            *cap = *cap * 2 + 16;
            *ev = loom_xreallocarray(*ev, *cap, sizeof(**ev));
        }
        (*ev)[(*nev)++] = (bf_ev_t){cur, 1, c->required};
        (*ev)[(*nev)++] = (bf_ev_t){horizon, -1, c->required};
    }
}

/* Several nodes: the earliest time when k candidates (all required ones
 * among them) are feasible together. */
static int64_t bf_earliest_many(bf_plan_t *pl, int64_t tmin)
{
    bf_ev_t *ev = NULL;
    size_t nev = 0, cap = 0;
    for (size_t i = 0; i < pl->ncand; i++)
        bf_windows(pl, &pl->cand[i], tmin, &ev, &nev, &cap);
    if (nev)
        qsort(ev, nev, sizeof(*ev), bf_ev_cmp);
    int64_t count = 0, rcount = 0, found = LOOM_SCHED_BF_NEVER;
    for (size_t i = 0; i < nev; i++) {
        count += ev[i].delta;
        rcount += ev[i].required ? ev[i].delta : 0;
        if (ev[i].delta > 0 && count >= pl->k && rcount == (int64_t)pl->nreq) {
            found = ev[i].t;
            break;
        }
    }
    free(ev);
    return found;
}

static uint32_t bf_free_cpus_at(const loom_sched_bf_t *bf, uint32_t idx, int64_t t)
{
    const bf_node_t *bn = &bf->nodes[idx];
    uint32_t i = 0;
    while (i + 1 < bn->nseg && bn->seg[i + 1].t <= t)
        i++;
    return bn->cpus - bn->seg[i].cpus;
}

typedef struct {
    size_t cand;
    uint32_t weight, free_cpus, idx;
    bool required;
} bf_pick_t;

static int bf_pick_cmp(const void *a, const void *b)
{
    const bf_pick_t *x = a, *y = b;
    if (x->required != y->required)
        return x->required ? -1 : 1;
    if (x->weight != y->weight)
        return x->weight < y->weight ? -1 : 1;
    if (x->free_cpus != y->free_cpus)
        return x->free_cpus < y->free_cpus ? -1 : 1;
    return x->idx < y->idx ? -1 : x->idx > y->idx;
}

/* The k candidates to use at t (required first, then best fit). */
static size_t bf_choose_at(bf_plan_t *pl, int64_t t, size_t *chosen)
{
    bf_pick_t *v = loom_xcalloc(pl->ncand + 1, sizeof(*v));
    size_t n = 0;
    for (size_t i = 0; i < pl->ncand; i++) {
        const bf_cand_t *c = &pl->cand[i];
        if (bf_node_earliest(pl->bf, c->idx, c->need, pl->d, t, t) != t)
            continue;
        v[n++] = (bf_pick_t){i, pl->nodes[c->idx].weight, bf_free_cpus_at(pl->bf, c->idx, t),
                             c->idx, c->required};
    }
    qsort(v, n, sizeof(*v), bf_pick_cmp);
    size_t k = n < pl->k ? n : pl->k;
    for (size_t i = 0; i < k; i++)
        chosen[i] = v[i].cand;
    free(v);
    return k;
}

/* Plan a job: the earliest start >= tmin; chosen (pl->k entries) gets the
 * candidates to use. NEVER when none in the window. */
static int64_t bf_plan(bf_plan_t *pl, int64_t tmin, size_t *chosen, size_t *nchosen)
{
    *nchosen = 0;
    if (pl->ncand < pl->k || pl->nreq < pl->req->nreq_nodes)
        return LOOM_SCHED_BF_NEVER;
    if (pl->k == 1) {
        size_t pick = 0;
        int64_t t = bf_earliest_one(pl, tmin, &pick);
        if (t != LOOM_SCHED_BF_NEVER) {
            chosen[0] = pick;
            *nchosen = 1;
        }
        return t;
    }
    int64_t t = bf_earliest_many(pl, tmin);
    if (t != LOOM_SCHED_BF_NEVER && (*nchosen = bf_choose_at(pl, t, chosen)) < pl->k)
        t = LOOM_SCHED_BF_NEVER;
    return t;
}

/* ---- reservations ------------------------------------------------------------------ */

/* Spread a need's GRES over the node's groups, as free over [t, end) allows. */
static void bf_need_to_use(const loom_sched_bf_t *bf, uint32_t idx, const bf_need_t *need,
                           int64_t t, int64_t end, bf_use_t *u)
{
    const bf_node_t *bn = &bf->nodes[idx];
    uint64_t peak[LOOM_SCHED_MAX_GROUPS] = {0};
    for (uint32_t i = 0; i < bn->nseg; i++) {
        int64_t se = i + 1 < bn->nseg ? bn->seg[i + 1].t : LOOM_SCHED_BF_NEVER;
        if (se <= t || bn->seg[i].t >= end)
            continue;
        for (size_t g = 0; g < LOOM_SCHED_MAX_GROUPS; g++)
            peak[g] = bn->seg[i].gres[g] > peak[g] ? bn->seg[i].gres[g] : peak[g];
    }
    memset(u, 0, sizeof(*u));
    u->cpus = need->cpus;
    u->mem = need->mem;
    u->excl = need->excl;
    for (size_t i = 0; i < need->ng; i++) {
        uint64_t left = need->g[i].count;
        for (uint32_t g = 0; g < LOOM_SCHED_MAX_GROUPS && left; g++) {
            if (!(need->g[i].mask & (1u << g)))
                continue;
            uint64_t used = peak[g] + u->gres[g];
            uint64_t room = bn->gcap[g] > used ? bn->gcap[g] - used : 0;
            uint64_t take = bf_min64(room, left);
            u->gres[g] += take;
            left -= take;
        }
    }
}

/* Reservation end: start + limit rounded down to the resolution, as Slurm does. */
static int64_t bf_resv_end(const loom_sched_bf_t *bf, int64_t t, int64_t d)
{
    int64_t end = bf_add_time(t, d);
    if (end == LOOM_SCHED_BF_NEVER)
        return end;
    int64_t r = end / bf->res * bf->res;
    return r > t ? r : end;
}

static int bf_idx_cmp(const void *a, const void *b)
{
    const loom_sched_node_alloc_t *x = a, *y = b;
    return x->node < y->node ? -1 : x->node > y->node;
}

/* ---- examining jobs ----------------------------------------------------------------- */

/* What node idx has free over [t0, t1) in the profile (its peak use taken
 * off its capacity). */
static void bf_free_over(const loom_sched_bf_t *bf, uint32_t idx, int64_t t0, int64_t t1,
                         loom_sched_limit_t *out)
{
    const bf_node_t *bn = &bf->nodes[idx];
    bf_seg_t peak = {0};
    for (uint32_t i = 0; i < bn->nseg && bn->seg[i].t < t1; i++) {
        const bf_seg_t *s = &bn->seg[i];
        if (i + 1 < bn->nseg && bn->seg[i + 1].t <= t0)
            continue;
        peak.cpus = s->cpus > peak.cpus ? s->cpus : peak.cpus;
        peak.mem = s->mem > peak.mem ? s->mem : peak.mem;
        peak.njobs = s->njobs > peak.njobs ? s->njobs : peak.njobs;
        peak.excl = s->excl > peak.excl ? s->excl : peak.excl;
        for (size_t g = 0; g < LOOM_SCHED_MAX_GROUPS; g++)
            peak.gres[g] = s->gres[g] > peak.gres[g] ? s->gres[g] : peak.gres[g];
    }
    memset(out, 0, sizeof(*out));
    if (peak.excl)
        return;
    out->cpus = bn->cpus > peak.cpus ? bn->cpus - peak.cpus : 0;
    out->mem = bn->mem > peak.mem ? bn->mem - peak.mem : 0;
    for (size_t g = 0; g < LOOM_SCHED_MAX_GROUPS; g++)
        out->gres[g] = bn->gcap[g] > peak.gres[g] ? bn->gcap[g] - peak.gres[g] : 0;
    out->whole_node_ok = peak.njobs == 0;
}

/* Limits that keep every reservation whole during [now, lim_end). */
static bool bf_limit(void *arg, uint32_t idx, loom_sched_limit_t *out)
{
    const loom_sched_bf_t *bf = arg;
    if (idx >= bf->nnodes || !bf->nodes[idx].nresv)
        return false; /* only running jobs here: the real model says it all */
    bf_free_over(bf, idx, bf->now, bf->lim_end, out);
    return true;
}

/* ---- multi-node jobs: the selector itself on the profile at a time t ------------- */

/* Is the even split (the same share on min_nodes nodes) what the selector
 * would give on any nodes? Then the event sweep plans the job exactly. */
static bool bf_split_exact(const loom_sched_req_t *r)
{
    uint32_t k = r->min_nodes ? r->min_nodes : 1;
    if (k == 1 && r->max_nodes <= 1)
        return true;
    if (r->max_nodes > k || r->gpus_per_job || r->min_cpus || r->contiguous || r->constraint)
        return false;
    if (r->ntasks_per_node)
        return !r->ntasks || r->ntasks == (uint64_t)r->ntasks_per_node * k;
    return !r->ntasks || r->ntasks == k;
}

typedef struct {
    const loom_sched_bf_t *bf;
    int64_t t, end;
} bf_at_t;

static bool bf_limit_at(void *arg, uint32_t idx, loom_sched_limit_t *out)
{
    const bf_at_t *at = arg;
    if (idx >= at->bf->nnodes)
        return false;
    bf_free_over(at->bf, idx, at->t, at->end, out);
    return true;
}

static int bf_time_cmp(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return x < y ? -1 : x > y;
}

/* The times a plan can start at: tmin and every change in the profile of a
 * node the job may use, up to the horizon (use over [t, t + d) only grows
 * between two changes, so the earliest start is one of these). Sorted, unique. */
static size_t bf_times(const bf_plan_t *pl, int64_t tmin, int64_t **out)
{
    const loom_sched_req_t *r = pl->req;
    size_t n = 0, cap = 16;
    int64_t *t = loom_xcalloc(cap, sizeof(*t));
    t[n++] = tmin;
    for (uint32_t i = 0; i < pl->nnodes; i++) {
        const bf_node_t *bn = &pl->bf->nodes[i];
        if (!pl->nodes[i].usable || (r->allowed && !r->allowed[i]))
            continue;
        for (uint32_t s = 1; s < bn->nseg; s++) {
            if (bn->seg[s].t <= tmin || bn->seg[s].t > pl->bf->horizon)
                continue;
            if (n == cap) {
                cap *= 2;
                t = loom_xreallocarray(t, cap, sizeof(*t));
            }
            t[n++] = bn->seg[s].t;
        }
    }
    qsort(t, n, sizeof(*t), bf_time_cmp);
    size_t u = 0;
    for (size_t i = 0; i < n; i++)
        if (!u || t[i] != t[u - 1])
            t[u++] = t[i];
    *out = t;
    return u;
}

#define BF_EXACT_TRIES 64 /* times tried one by one; then every 2nd, 4th, ... and the last */

/* The earliest start >= tmin where the selector places the job on what the
 * profile leaves free for its whole duration; *out gets that placement. */
/* The selector on what the profile leaves free over [t, t + d). */
static bool bf_try_at(const bf_plan_t *pl, int64_t t, loom_sched_alloc_t *out)
{
    bf_at_t at = {pl->bf, t, bf_add_time(t, pl->d)};
    loom_sched_place_opts_t o = {
        .flags = LOOM_SCHED_IGNORE_ALLOC, .limit = bf_limit_at, .limit_arg = &at};
    loom_sched_alloc_t a = {0};
    if (loom_sched_try_place_ex(pl->nodes, pl->nnodes, pl->req, &o, &a) < 0)
        return false;
    *out = a;
    return true;
}

static int64_t bf_plan_exact(bf_plan_t *pl, int64_t tmin, loom_sched_alloc_t *out)
{
    /* No start before min_nodes nodes (the required ones among them) can each
     * take the least share: the sweep finds that time, a lower bound, and
     * most often the answer. */
    if (pl->ncand < pl->k || pl->nreq < pl->req->nreq_nodes)
        return LOOM_SCHED_BF_NEVER;
    int64_t lo = bf_earliest_many(pl, tmin);
    if (lo == LOOM_SCHED_BF_NEVER || bf_try_at(pl, lo, out))
        return lo;
    int64_t *times;
    size_t n = bf_times(pl, lo, &times), step = 1, i = 1; /* times[0] is lo */
    int64_t found = LOOM_SCHED_BF_NEVER;
    while (i < n) {
        if (bf_try_at(pl, times[i], out)) {
            found = times[i];
            break;
        }
        if (i + 1 >= BF_EXACT_TRIES)
            step *= 2;
        i = i + 1 < n && i + step >= n ? n - 1 : i + step;
    }
    free(times);
    return found;
}

/* A planned allocation keeps nodes, tasks, CPU counts and memory only. */
static void bf_strip(loom_sched_alloc_t *a)
{
    for (size_t i = 0; i < a->nnodes; i++) {
        free(a->nodes[i].cpu_ids);
        free(a->nodes[i].gres);
        a->nodes[i].cpu_ids = NULL;
        a->nodes[i].gres = NULL;
        a->nodes[i].ngres = 0;
    }
}

/* Start it now on the real model, keeping reservations whole. */
static int bf_start_now(loom_sched_bf_t *bf, loom_sched_node_t *nodes, size_t nnodes,
                        const loom_sched_job_t *j, loom_sched_alloc_t *out)
{
    bf->lim_end = bf_add_time(bf->now, j->duration < 0 ? LOOM_SCHED_BF_NEVER : j->duration);
    loom_sched_place_opts_t o = {
        .subset = bf->open, .nsubset = bf->nopen, .limit = bf_limit, .limit_arg = bf};
    int rc = loom_sched_try_place_ex(nodes, nnodes, j->req, &o, out);
    if (rc == 0 && loom_sched_alloc_apply(nodes, nnodes, out) < 0) {
        loom_sched_alloc_fini(out);
        rc = -ENOSPC;
    }
    if (rc == 0)
        bf_hold_alloc(bf, nodes, out, bf->now, bf->lim_end);
    return rc;
}

static void bf_plan_init(bf_plan_t *pl, loom_sched_bf_t *bf, const loom_sched_node_t *nodes,
                         const loom_sched_job_t *j)
{
    memset(pl, 0, sizeof(*pl));
    pl->bf = bf;
    pl->nodes = nodes;
    pl->req = j->req;
    pl->d = j->duration < 0 ? LOOM_SCHED_BF_NEVER : j->duration;
    pl->nnodes = bf->nnodes;
    pl->k = j->req->min_nodes ? j->req->min_nodes : 1;
    pl->exact = !bf_split_exact(j->req);
    bf_collect(pl); /* exact: the least share, for a lower bound */
}

/* The arrays belong to the planner's scratch: nothing to free per job. */
static void bf_plan_free(bf_plan_t *pl)
{
    free(pl->chosen);
    pl->chosen = NULL;
    pl->cand = NULL;
    pl->cls_need = NULL;
    pl->cls_state = NULL;
}

static loom_sched_verdict_t bf_why_not(const loom_sched_node_t *nodes, size_t nnodes,
                                       const loom_sched_req_t *req)
{
    loom_sched_alloc_t a = {0};
    int rc = loom_sched_try_place(nodes, nnodes, req, LOOM_SCHED_IGNORE_ALLOC, &a);
    loom_sched_alloc_fini(&a);
    if (rc == -EINVAL)
        return LOOM_SCHED_BAD_REQUEST;
    return rc == 0 ? LOOM_SCHED_NO_RESOURCES : LOOM_SCHED_NODES_UNAVAILABLE;
}

/* Plan one job from tmin: its start and where (an exact placement for the
 * selector's plans, the chosen candidates' needs for the sweep's). */
static int64_t bf_plan_any(bf_plan_t *pl, int64_t tmin, loom_sched_alloc_t *where)
{
    memset(where, 0, sizeof(*where));
    if (pl->exact)
        return bf_plan_exact(pl, tmin, where);
    free(pl->chosen);
    size_t *chosen = pl->chosen = loom_xcalloc(pl->k + 1, sizeof(size_t)), nchosen;
    int64_t t = bf_plan(pl, tmin, chosen, &nchosen);
    if (t != LOOM_SCHED_BF_NEVER) {
        where->nodes = loom_xcalloc(nchosen + 1, sizeof(*where->nodes));
        for (size_t i = 0; i < nchosen; i++) {
            const bf_cand_t *c = &pl->cand[chosen[i]];
            where->nodes[i] = (loom_sched_node_alloc_t){.node = c->idx,
                                                        .ntasks = c->need->tasks,
                                                        .ncpus = c->need->cpus,
                                                        .mem = c->need->mem};
            where->ncpus += c->need->cpus;
            where->ntasks += c->need->tasks;
        }
        where->nnodes = nchosen;
        where->exclusive = pl->req->exclusive;
    }
    return t;
}

/* Hold a planned allocation from t to its reservation end. */
static void bf_reserve(bf_plan_t *pl, int64_t t, loom_sched_alloc_t *where)
{
    int64_t end = bf_resv_end(pl->bf, t, pl->d);
    if (pl->exact) {
        bf_hold_alloc(pl->bf, pl->nodes, where, t, end);
        bf_strip(where);
        return;
    }
    for (size_t i = 0; i < where->nnodes; i++) {
        const bf_cand_t *c = &pl->cand[pl->chosen[i]];
        bf_use_t u;
        bf_need_to_use(pl->bf, c->idx, c->need, t, end, &u);
        bf_hold(pl->bf, c->idx, t, end, &u);
    }
}

/* Plan one job from now; a reservation when it cannot start now. */
static void bf_examine(loom_sched_bf_t *bf, loom_sched_node_t *nodes, size_t nnodes,
                       const loom_sched_job_t *j, loom_sched_bf_result_t *res)
{
    bf_plan_t pl;
    bf_plan_init(&pl, bf, nodes, j);
    loom_sched_alloc_t where;
    int64_t t = bf_plan_any(&pl, bf->now, &where);
    if (t == bf->now && bf_start_now(bf, nodes, nnodes, j, &res->alloc) == 0) {
        res->verdict = LOOM_SCHED_STARTED;
        res->start = bf->now;
        loom_sched_alloc_fini(&where);
    } else {
        if (t == bf->now) { /* the exact placement disagreed: plan one step later */
            loom_sched_alloc_fini(&where);
            t = bf_plan_any(&pl, bf->now + bf->res, &where);
        }
        res->verdict =
            t == LOOM_SCHED_BF_NEVER ? bf_why_not(nodes, nnodes, j->req) : LOOM_SCHED_NO_RESOURCES;
        if (t != LOOM_SCHED_BF_NEVER) {
            if (!j->no_reserve) /* bf_min_age_reserve: a planned start, no hold */
                bf_reserve(&pl, t, &where);
            else if (pl.exact)
                bf_strip(&where);
            if (where.nnodes)
                qsort(where.nodes, where.nnodes, sizeof(*where.nodes), bf_idx_cmp);
            res->alloc = where;
            res->start = t;
        }
    }
    if (bf->nslots && j->slot < bf->nslots && res->verdict != LOOM_SCHED_BAD_REQUEST &&
        res->verdict != LOOM_SCHED_NODES_UNAVAILABLE)
        bf->slot_done[j->slot] = 1;
    bf_plan_free(&pl);
}

/* The counter of key in *v (added at 0 when new). */
static uint32_t *bf_count(bf_count_t **v, size_t *n, uint32_t key)
{
    for (size_t i = 0; i < *n; i++)
        if ((*v)[i].key == key)
            return &(*v)[i].n;
    *v = loom_xreallocarray(*v, *n + 1, sizeof(**v));
    (*v)[*n] = (bf_count_t){key, 0};
    return &(*v)[(*n)++].n;
}

/* bf_max_job_user / bf_max_job_part: may one more of j's be examined? Counts it. */
static bool bf_within_limits(loom_sched_bf_t *bf, const loom_sched_job_t *j)
{
    uint32_t *u = bf->max_user ? bf_count(&bf->per_user, &bf->nusers, j->uid) : NULL;
    uint32_t *p = bf->max_part ? bf_count(&bf->per_part, &bf->nparts, j->part) : NULL;
    if ((u && *u >= bf->max_user) || (p && *p >= bf->max_part))
        return false;
    if (u)
        (*u)++;
    if (p)
        (*p)++;
    return true;
}

static bool bf_done(const loom_sched_bf_t *bf)
{
    return bf->tested >= bf->max_test || (bf->max_start && bf->started >= bf->max_start);
}

size_t loom_sched_bf_run(loom_sched_bf_t *bf, loom_sched_node_t *nodes, size_t nnodes,
                         const loom_sched_job_t *jobs, size_t njobs, size_t from, uint32_t budget,
                         loom_sched_bf_result_t *results)
{
    uint32_t done = 0;
    size_t i = from;
    for (; i < njobs && !bf_done(bf) && (!budget || done < budget); i++) {
        const loom_sched_job_t *j = &jobs[i];
        memset(&results[i], 0, sizeof(results[i]));
        if (bf->nslots && j->slot < bf->nslots && bf->slot_done[j->slot]) {
            results[i].verdict = LOOM_SCHED_DUPLICATE;
            continue;
        }
        if (!bf_within_limits(bf, j))
            continue; /* NOT_EXAMINED */
        bf_examine(bf, nodes, nnodes < bf->nnodes ? nnodes : bf->nnodes, j, &results[i]);
        bf->started += results[i].verdict == LOOM_SCHED_STARTED;
        bf->tested++;
        done++;
    }
    return bf_done(bf) ? njobs : i;
}

size_t loom_sched_backfill(loom_sched_node_t *nodes, size_t nnodes,
                           const loom_sched_running_t *running, size_t nrunning,
                           const loom_sched_job_t *jobs, size_t njobs,
                           const loom_sched_bf_opts_t *opts, loom_sched_bf_result_t *results)
{
    loom_sched_bf_t *bf = loom_sched_bf_create(nodes, nnodes, running, nrunning, opts);
    if (njobs)
        memset(results, 0, njobs * sizeof(*results));
    loom_sched_bf_run(bf, nodes, nnodes, jobs, njobs, 0, 0, results);
    size_t started = 0;
    for (size_t i = 0; i < njobs; i++)
        started += results[i].verdict == LOOM_SCHED_STARTED;
    loom_sched_bf_destroy(bf);
    return started;
}

int64_t loom_sched_bf_earliest(loom_sched_bf_t *bf, const loom_sched_node_t *nodes, size_t nnodes,
                               const loom_sched_job_t *job, loom_sched_alloc_t *where)
{
    bf_plan_t pl;
    bf_plan_init(&pl, bf, nodes, job);
    loom_sched_alloc_t a;
    int64_t t = bf_plan_any(&pl, bf->now, &a);
    if (pl.exact)
        bf_strip(&a);
    if (a.nnodes)
        qsort(a.nodes, a.nnodes, sizeof(*a.nodes), bf_idx_cmp);
    if (where && t != LOOM_SCHED_BF_NEVER)
        *where = a;
    else
        loom_sched_alloc_fini(&a);
    bf_plan_free(&pl);
    (void)nnodes;
    return t;
}
