/* resources.c - resource model and node selection. See resources.h. */
#include "sched/resources.h"
#include "common/xalloc.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* A node that can take part in a placement, with how many tasks it can host. */
typedef struct {
    uint32_t idx;
    uint32_t free_cpus;
    uint32_t weight;
    uint32_t cap; /* tasks */
} cand_t;

/* The state of one placement while it is being built. */
typedef struct {
    const loom_sched_node_t *nodes;
    const loom_sched_req_t *req;
    bool ignore;     /* allocations do not count */
    bool any_state;  /* node states do not count either */
    uint32_t cpt;    /* CPUs per task */
    uint32_t ntasks; /* target */
    uint32_t max_nodes;
    cand_t *chosen;
    size_t nchosen;
} place_t;

static size_t resources_words(uint32_t cpus)
{
    return ((size_t)cpus + 63) / 64;
}

void loom_sched_node_init(loom_sched_node_t *n, const char *name, uint32_t cpus, uint64_t mem_total)
{
    memset(n, 0, sizeof(*n));
    n->name = name;
    n->cpus = cpus > LOOM_SCHED_MAX_CPUS ? LOOM_SCHED_MAX_CPUS : cpus;
    n->cpu_bits = loom_xcalloc(resources_words(n->cpus) + 1, sizeof(uint64_t));
    n->mem_total = mem_total;
    n->weight = 1;
    n->usable = true;
}

void loom_sched_node_fini(loom_sched_node_t *n)
{
    if (!n)
        return;
    free(n->cpu_bits);
    free(n->gres);
    n->cpu_bits = NULL;
    n->gres = NULL;
    n->ngres = 0;
}

void loom_sched_node_add_gres(loom_sched_node_t *n, const char *name, const char *type, int index,
                              uint64_t count)
{
    n->gres = loom_xreallocarray(n->gres, n->ngres + 1, sizeof(*n->gres));
    n->gres[n->ngres++] = (loom_sched_gres_t){
        .name = name, .type = type, .index = index, .count = index >= 0 ? 1 : count};
}

bool loom_sched_node_cpu_used(const loom_sched_node_t *n, uint32_t id)
{
    return id < n->cpus && (n->cpu_bits[id / 64] >> (id % 64)) & 1u;
}

static bool resources_gres_match(const loom_sched_gres_t *g, const char *name, const char *type)
{
    if (strcmp(g->name, name) != 0)
        return false;
    return !type || (g->type && strcmp(g->type, type) == 0);
}

/* Free units of name[:type] on a node. */
static uint64_t resources_gres_free(const loom_sched_node_t *n, const char *name, const char *type,
                                    bool ignore)
{
    uint64_t free_units = 0;
    for (size_t i = 0; i < n->ngres; i++)
        if (resources_gres_match(&n->gres[i], name, type))
            free_units += n->gres[i].count - (ignore ? 0 : n->gres[i].used);
    return free_units;
}

static bool resources_gres_fits(const place_t *p, const loom_sched_node_t *n)
{
    const loom_sched_req_t *r = p->req;
    for (size_t i = 0; i < r->ngres; i++)
        if (resources_gres_free(n, r->gres[i].name, r->gres[i].type, p->ignore) < r->gres[i].count)
            return false;
    /* --gpus=N: a one-node job needs all N on that node; a multi-node job
     * uses only nodes that hold at least one. */
    if (r->gpus_per_job && resources_gres_free(n, "gpu", r->gpus_type, p->ignore) <
                               (p->max_nodes == 1 ? r->gpus_per_job : 1))
        return false;
    return true;
}

static uint32_t resources_min_u32(uint32_t a, uint64_t b)
{
    return b < a ? (uint32_t)b : a;
}

/* Tasks this node can host for the request now (0 = cannot take part). */
static uint32_t resources_capacity(const place_t *p, uint32_t idx)
{
    const loom_sched_node_t *n = &p->nodes[idx];
    const loom_sched_req_t *r = p->req;
    if (r->allowed && !r->allowed[idx])
        return 0;
    if (!p->any_state && !n->usable)
        return 0;
    if (!p->ignore && (n->exclusive || (r->exclusive && n->njobs)))
        return 0;
    uint32_t free_cpus = p->ignore ? n->cpus : n->cpus - n->cpus_used;
    uint64_t free_mem = p->ignore ? n->mem_total : n->mem_total - n->mem_used;
    uint32_t cap = free_cpus / p->cpt;
    if (r->mem_whole_node && free_mem < n->mem_total)
        return 0;
    if (r->mem_per_node && free_mem < r->mem_per_node)
        return 0;
    if (r->mem_per_cpu)
        cap = resources_min_u32(cap, free_mem / (r->mem_per_cpu * p->cpt));
    if (r->ntasks_per_node) {
        if (cap < r->ntasks_per_node)
            return 0;
        cap = r->ntasks_per_node;
    }
    if (cap == 0 || !resources_gres_fits(p, n))
        return 0;
    return cap;
}

static int resources_cand_cmp(const void *a, const void *b)
{
    const cand_t *x = a, *y = b;
    if (x->free_cpus != y->free_cpus)
        return x->free_cpus < y->free_cpus ? -1 : 1;
    if (x->weight != y->weight)
        return x->weight < y->weight ? -1 : 1;
    return x->idx < y->idx ? -1 : x->idx > y->idx;
}

static int resources_cand_cmp_cap(const void *a, const void *b)
{
    const cand_t *x = a, *y = b;
    if (x->cap != y->cap)
        return x->cap > y->cap ? -1 : 1;
    return resources_cand_cmp(a, b);
}

static bool resources_is_required(const loom_sched_req_t *r, uint32_t idx)
{
    for (size_t i = 0; i < r->nreq_nodes; i++)
        if (r->req_nodes[i] == idx)
            return true;
    return false;
}

/* Candidates other than the required nodes, best fit first. */
static cand_t *resources_candidates(const place_t *p, size_t nnodes, size_t *ncand)
{
    cand_t *c = loom_xcalloc(nnodes ? nnodes : 1, sizeof(*c));
    size_t n = 0;
    for (uint32_t i = 0; i < nnodes; i++) {
        if (resources_is_required(p->req, i))
            continue;
        uint32_t cap = resources_capacity(p, i);
        if (!cap)
            continue;
        const loom_sched_node_t *node = &p->nodes[i];
        c[n++] = (cand_t){.idx = i,
                          .free_cpus = p->ignore ? node->cpus : node->cpus - node->cpus_used,
                          .weight = node->weight,
                          .cap = cap};
    }
    qsort(c, n, sizeof(*c), resources_cand_cmp);
    *ncand = n;
    return c;
}

static uint32_t resources_sum_cap(const place_t *p)
{
    uint32_t sum = 0;
    for (size_t i = 0; i < p->nchosen; i++)
        sum += p->chosen[i].cap;
    return sum;
}

static bool resources_satisfied(const place_t *p)
{
    return p->nchosen >= p->req->min_nodes && resources_sum_cap(p) >= p->ntasks;
}

/* Greedy choice over cand (in its order); the last node needed is the first
 * that covers the remaining tasks, else the largest. */
static bool resources_greedy(place_t *p, cand_t *cand, size_t ncand)
{
    size_t base = p->nchosen;
    bool *taken = loom_xcalloc(ncand ? ncand : 1, sizeof(bool));
    while (!resources_satisfied(p) && p->nchosen < p->max_nodes) {
        uint32_t have = resources_sum_cap(p);
        uint32_t left = p->ntasks > have ? p->ntasks - have : 0;
        bool last = p->nchosen + 1 >= p->req->min_nodes;
        size_t pick = ncand, biggest = ncand;
        for (size_t i = 0; i < ncand && pick == ncand; i++) {
            if (taken[i])
                continue;
            if (biggest == ncand || cand[i].cap > cand[biggest].cap)
                biggest = i;
            if (!last || cand[i].cap >= left)
                pick = i;
        }
        if (pick == ncand)
            pick = biggest;
        if (pick == ncand)
            break;
        taken[pick] = true;
        p->chosen[p->nchosen++] = cand[pick];
    }
    free(taken);
    if (resources_satisfied(p))
        return true;
    p->nchosen = base;
    return false;
}

/* One-node jobs (the common case): a linear best-fit scan, no sorting. */
static int resources_choose_one(place_t *p, size_t nnodes)
{
    cand_t best = {0};
    bool found = false;
    for (uint32_t i = 0; i < nnodes; i++) {
        uint32_t cap = resources_capacity(p, i);
        if (cap < p->ntasks)
            continue;
        const loom_sched_node_t *n = &p->nodes[i];
        cand_t c = {.idx = i,
                    .free_cpus = p->ignore ? n->cpus : n->cpus - n->cpus_used,
                    .weight = n->weight,
                    .cap = cap};
        if (!found || resources_cand_cmp(&c, &best) < 0)
            best = c;
        found = true;
    }
    if (!found)
        return -ENOSPC;
    p->chosen[p->nchosen++] = best;
    return 0;
}

static int resources_choose(place_t *p, size_t nnodes)
{
    const loom_sched_req_t *r = p->req;
    for (size_t i = 0; i < r->nreq_nodes; i++) {
        uint32_t idx = r->req_nodes[i];
        if (idx >= nnodes)
            return -EINVAL;
        uint32_t cap = resources_capacity(p, idx);
        if (!cap)
            return -ENOSPC;
        p->chosen[p->nchosen++] = (cand_t){.idx = idx, .cap = cap};
    }
    if (resources_satisfied(p))
        return 0;
    if (p->max_nodes == 1 && p->nchosen == 0)
        return resources_choose_one(p, nnodes);
    size_t ncand;
    cand_t *cand = resources_candidates(p, nnodes, &ncand);
    bool ok = resources_greedy(p, cand, ncand);
    if (!ok) {
        qsort(cand, ncand, sizeof(*cand), resources_cand_cmp_cap);
        ok = resources_greedy(p, cand, ncand);
    }
    free(cand);
    return ok ? 0 : -ENOSPC;
}

static int resources_idx_cmp(const void *a, const void *b)
{
    const cand_t *x = a, *y = b;
    return x->idx < y->idx ? -1 : x->idx > y->idx;
}

/* Tasks spread cyclically over the chosen nodes, each within its capacity. */
static void resources_spread_tasks(const place_t *p, uint32_t *tasks)
{
    uint32_t left = p->ntasks;
    while (left) {
        bool progress = false;
        for (size_t i = 0; i < p->nchosen && left; i++) {
            if (tasks[i] < p->chosen[i].cap) {
                tasks[i]++;
                left--;
                progress = true;
            }
        }
        if (!progress)
            break;
    }
}

/* CPU ids for one node: the lowest free ones. */
static void resources_pick_cpus(const place_t *p, const loom_sched_node_t *n,
                                loom_sched_node_alloc_t *na)
{
    na->cpu_ids = loom_xcalloc(na->ncpus ? na->ncpus : 1, sizeof(uint32_t));
    uint32_t k = 0;
    for (uint32_t id = 0; id < n->cpus && k < na->ncpus; id++)
        if (p->ignore || !loom_sched_node_cpu_used(n, id))
            na->cpu_ids[k++] = id;
}

static void resources_use_gres(loom_sched_node_alloc_t *na, uint32_t g, uint64_t count)
{
    na->gres = loom_xreallocarray(na->gres, na->ngres + 1, sizeof(*na->gres));
    na->gres[na->ngres++] = (loom_sched_gres_use_t){.gres = g, .count = count};
}

static bool resources_gres_taken(const loom_sched_node_alloc_t *na, uint32_t g)
{
    for (size_t i = 0; i < na->ngres; i++)
        if (na->gres[i].gres == g)
            return true;
    return false;
}

/* Take up to count units of name[:type]: devices by lowest free index, then
 * counted pools. Returns the units taken. */
static uint64_t resources_take_gres(const place_t *p, const loom_sched_node_t *n,
                                    loom_sched_node_alloc_t *na, const char *name, const char *type,
                                    uint64_t count)
{
    uint64_t got = 0;
    while (got < count) {
        long best = -1;
        for (size_t i = 0; i < n->ngres; i++) {
            const loom_sched_gres_t *g = &n->gres[i];
            if (g->index < 0 || !resources_gres_match(g, name, type) || (!p->ignore && g->used) ||
                resources_gres_taken(na, (uint32_t)i))
                continue;
            if (best < 0 || g->index < n->gres[best].index)
                best = (long)i;
        }
        if (best < 0)
            break;
        resources_use_gres(na, (uint32_t)best, 1);
        got++;
    }
    for (size_t i = 0; i < n->ngres && got < count; i++) {
        const loom_sched_gres_t *g = &n->gres[i];
        if (g->index >= 0 || !resources_gres_match(g, name, type))
            continue;
        uint64_t avail = g->count - (p->ignore ? 0 : g->used);
        uint64_t take = count - got < avail ? count - got : avail;
        if (take) {
            resources_use_gres(na, (uint32_t)i, take);
            got += take;
        }
    }
    return got;
}

static uint64_t resources_node_mem(const place_t *p, const loom_sched_node_t *n, uint32_t ncpus)
{
    const loom_sched_req_t *r = p->req;
    uint64_t free_mem = p->ignore ? n->mem_total : n->mem_total - n->mem_used;
    uint64_t mem = 0;
    if (r->mem_whole_node)
        mem = n->mem_total;
    else if (r->mem_per_node)
        mem = r->mem_per_node;
    else if (r->mem_per_cpu)
        mem = r->mem_per_cpu * ncpus;
    return mem > free_mem ? free_mem : mem;
}

/* Extra CPUs so the total reaches min_cpus, taken where nodes have room. */
static void resources_extra_cpus(const place_t *p, loom_sched_alloc_t *a)
{
    uint32_t want = p->req->min_cpus;
    for (size_t i = 0; i < a->nnodes && a->ncpus < want; i++) {
        const loom_sched_node_t *n = &p->nodes[a->nodes[i].node];
        uint32_t free_cpus = p->ignore ? n->cpus : n->cpus - n->cpus_used;
        uint32_t room = free_cpus - a->nodes[i].ncpus;
        uint32_t add = want - a->ncpus < room ? want - a->ncpus : room;
        a->nodes[i].ncpus += add;
        a->ncpus += add;
    }
}

/* Fill per-node CPUs, memory and GRES. False when GPUs per job cannot be met. */
static bool resources_build(const place_t *p, const uint32_t *tasks, loom_sched_alloc_t *a)
{
    const loom_sched_req_t *r = p->req;
    a->nodes = loom_xcalloc(p->nchosen, sizeof(*a->nodes));
    a->nnodes = p->nchosen;
    a->exclusive = r->exclusive;
    for (size_t i = 0; i < p->nchosen; i++) {
        const loom_sched_node_t *n = &p->nodes[p->chosen[i].idx];
        loom_sched_node_alloc_t *na = &a->nodes[i];
        na->node = p->chosen[i].idx;
        na->ntasks = tasks[i];
        na->ncpus = r->exclusive ? n->cpus : tasks[i] * p->cpt;
        a->ncpus += na->ncpus;
        a->ntasks += na->ntasks;
    }
    if (!r->exclusive)
        resources_extra_cpus(p, a);
    uint64_t gpus_left = r->gpus_per_job;
    for (size_t i = 0; i < a->nnodes; i++) {
        const loom_sched_node_t *n = &p->nodes[a->nodes[i].node];
        loom_sched_node_alloc_t *na = &a->nodes[i];
        resources_pick_cpus(p, n, na);
        na->mem = resources_node_mem(p, n, na->ncpus);
        for (size_t g = 0; g < r->ngres; g++)
            resources_take_gres(p, n, na, r->gres[g].name, r->gres[g].type, r->gres[g].count);
        if (gpus_left)
            gpus_left -= resources_take_gres(p, n, na, "gpu", r->gpus_type, gpus_left);
    }
    return gpus_left == 0;
}

static int resources_check_req(const loom_sched_req_t *r, size_t nnodes)
{
    uint32_t max = r->max_nodes ? r->max_nodes : r->min_nodes;
    if (r->min_nodes == 0 || max < r->min_nodes || nnodes == 0)
        return -EINVAL;
    if (r->ntasks && r->ntasks < r->min_nodes)
        return -EINVAL;
    if (r->nreq_nodes > max)
        return -EINVAL;
    return 0;
}

int loom_sched_try_place(const loom_sched_node_t *nodes, size_t nnodes, const loom_sched_req_t *req,
                         unsigned flags, loom_sched_alloc_t *out)
{
    int rc = resources_check_req(req, nnodes);
    if (rc)
        return rc;
    place_t p = {.nodes = nodes,
                 .req = req,
                 .ignore = flags & (LOOM_SCHED_IGNORE_USED | LOOM_SCHED_IGNORE_ALLOC),
                 .any_state = flags & LOOM_SCHED_IGNORE_USED,
                 .cpt = req->cpus_per_task ? req->cpus_per_task : 1,
                 .max_nodes = req->max_nodes ? req->max_nodes : req->min_nodes};
    if (p.max_nodes > nnodes)
        p.max_nodes = (uint32_t)nnodes;
    p.ntasks = req->ntasks ? req->ntasks
                           : (req->ntasks_per_node ? req->ntasks_per_node : 1) * req->min_nodes;
    p.chosen = loom_xcalloc(p.max_nodes + req->nreq_nodes + 1, sizeof(cand_t));
    rc = resources_choose(&p, nnodes);
    if (rc == 0) {
        qsort(p.chosen, p.nchosen, sizeof(cand_t), resources_idx_cmp);
        uint32_t *tasks = loom_xcalloc(p.nchosen, sizeof(uint32_t));
        resources_spread_tasks(&p, tasks);
        loom_sched_alloc_t a = {0};
        if (resources_build(&p, tasks, &a))
            *out = a;
        else {
            loom_sched_alloc_fini(&a);
            rc = -ENOSPC;
        }
        free(tasks);
    }
    free(p.chosen);
    return rc;
}

static bool resources_node_fits(const loom_sched_node_t *n, const loom_sched_node_alloc_t *na,
                                bool exclusive)
{
    if (n->exclusive || (exclusive && n->njobs))
        return false;
    if (na->ncpus > n->cpus - n->cpus_used || na->mem > n->mem_total - n->mem_used)
        return false;
    for (uint32_t k = 0; k < na->ncpus; k++)
        if (na->cpu_ids[k] >= n->cpus || loom_sched_node_cpu_used(n, na->cpu_ids[k]))
            return false;
    for (size_t g = 0; g < na->ngres; g++) {
        if (na->gres[g].gres >= n->ngres)
            return false;
        const loom_sched_gres_t *gr = &n->gres[na->gres[g].gres];
        if (na->gres[g].count > gr->count - gr->used)
            return false;
    }
    return true;
}

static void resources_node_mark(loom_sched_node_t *n, const loom_sched_node_alloc_t *na,
                                bool exclusive, bool take)
{
    for (uint32_t k = 0; k < na->ncpus; k++) {
        uint64_t bit = (uint64_t)1 << (na->cpu_ids[k] % 64);
        if (take)
            n->cpu_bits[na->cpu_ids[k] / 64] |= bit;
        else
            n->cpu_bits[na->cpu_ids[k] / 64] &= ~bit;
    }
    for (size_t g = 0; g < na->ngres; g++) {
        loom_sched_gres_t *gr = &n->gres[na->gres[g].gres];
        gr->used = take ? gr->used + na->gres[g].count : gr->used - na->gres[g].count;
    }
    n->cpus_used = take ? n->cpus_used + na->ncpus : n->cpus_used - na->ncpus;
    n->mem_used = take ? n->mem_used + na->mem : n->mem_used - na->mem;
    n->njobs = take ? n->njobs + 1 : n->njobs - 1;
    if (exclusive)
        n->exclusive = take;
}

int loom_sched_alloc_apply(loom_sched_node_t *nodes, size_t nnodes, const loom_sched_alloc_t *a)
{
    for (size_t i = 0; i < a->nnodes; i++) {
        if (a->nodes[i].node >= nnodes ||
            !resources_node_fits(&nodes[a->nodes[i].node], &a->nodes[i], a->exclusive))
            return -ENOSPC;
        for (size_t j = 0; j < i; j++)
            if (a->nodes[j].node == a->nodes[i].node)
                return -ENOSPC;
    }
    for (size_t i = 0; i < a->nnodes; i++)
        resources_node_mark(&nodes[a->nodes[i].node], &a->nodes[i], a->exclusive, true);
    return 0;
}

void loom_sched_alloc_release(loom_sched_node_t *nodes, size_t nnodes, const loom_sched_alloc_t *a)
{
    for (size_t i = 0; i < a->nnodes; i++)
        if (a->nodes[i].node < nnodes)
            resources_node_mark(&nodes[a->nodes[i].node], &a->nodes[i], a->exclusive, false);
}

void loom_sched_alloc_fini(loom_sched_alloc_t *a)
{
    if (!a)
        return;
    for (size_t i = 0; i < a->nnodes; i++) {
        free(a->nodes[i].cpu_ids);
        free(a->nodes[i].gres);
    }
    free(a->nodes);
    memset(a, 0, sizeof(*a));
}

void loom_sched_alloc_copy(loom_sched_alloc_t *dst, const loom_sched_alloc_t *src)
{
    *dst = *src;
    dst->nodes = loom_xcalloc(src->nnodes ? src->nnodes : 1, sizeof(*dst->nodes));
    for (size_t i = 0; i < src->nnodes; i++) {
        const loom_sched_node_alloc_t *s = &src->nodes[i];
        loom_sched_node_alloc_t *d = &dst->nodes[i];
        *d = *s;
        d->cpu_ids = loom_xcalloc(s->ncpus ? s->ncpus : 1, sizeof(uint32_t));
        memcpy(d->cpu_ids, s->cpu_ids, s->ncpus * sizeof(uint32_t));
        d->gres = NULL;
        if (s->ngres) {
            d->gres = loom_xcalloc(s->ngres, sizeof(*d->gres));
            memcpy(d->gres, s->gres, s->ngres * sizeof(*d->gres));
        }
    }
}
