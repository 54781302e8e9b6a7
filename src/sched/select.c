/* select.c - choosing nodes, CPUs, memory and GRES for a request (cons_tres
 * best fit, constraints with counts and brackets, contiguous runs, GPU
 * affinity). See resources.h for the rules. */
#include "common/xalloc.h"
#include "sched/resources.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* A node that can take part in a placement, with how many tasks it can host. */
typedef struct {
    uint32_t idx;
    uint32_t weight;
    uint32_t free_gpus;
    uint32_t free_cpus;
    uint32_t cap; /* tasks */
} cand_t;

/* What one node offers this request: allocations, sharing and limits applied. */
typedef struct {
    uint32_t cpus;
    uint64_t mem;
    bool limited;
    loom_sched_limit_t lim;
} offer_t;

/* The state of one placement while it is being built. */
typedef struct {
    const loom_sched_node_t *nodes;
    size_t nnodes;
    const loom_sched_req_t *req;
    const loom_sched_place_opts_t *opts;
    bool ignore;    /* allocations do not count */
    bool any_state; /* node states do not count either */
    uint32_t cpt;   /* CPUs per task */
    uint32_t ntasks;
    uint32_t min_nodes, max_nodes;
    const char *only_feature;      /* "[a|b]": the alternative being tried */
    const loom_constraint_t *term; /* a counted term being picked */
    uint32_t *required;            /* --nodelist plus counted picks */
    size_t nrequired;
    cand_t *chosen;
    size_t nchosen;
} place_t;

static uint64_t select_min64(uint64_t a, uint64_t b)
{
    return a < b ? a : b;
}

static bool select_bit(const uint64_t *bits, uint32_t id)
{
    return (bits[id / 64] >> (id % 64)) & 1u;
}

/* ---- what a node offers ------------------------------------------------------ */

static bool select_has_feature(const loom_sched_node_t *n, const char *f)
{
    for (size_t i = 0; i < n->nfeatures; i++)
        if (strcmp(n->features[i], f) == 0)
            return true;
    return false;
}

/* Is CPU id free for this request? */
static bool select_cpu_free(const place_t *p, const loom_sched_node_t *n, uint32_t id)
{
    if (p->ignore)
        return true;
    if (select_bit(n->cpu_bits, id))
        return false;
    if (p->req->share_max > 1)
        return n->cpu_share[id] < p->req->share_max && n->cpu_share[id] < UINT8_MAX;
    return n->cpu_share[id] == 0;
}

static uint32_t select_free_cpus(const place_t *p, const loom_sched_node_t *n)
{
    if (p->ignore)
        return n->cpus;
    if (p->req->share_max <= 1)
        return n->cpus - n->cpus_used; /* whole-core allocations keep this a multiple */
    uint32_t k = 0;
    for (uint32_t id = 0; id < n->cpus; id++)
        k += select_cpu_free(p, n, id);
    return k;
}

static bool select_offer(const place_t *p, uint32_t idx, offer_t *o)
{
    const loom_sched_node_t *n = &p->nodes[idx];
    const loom_sched_req_t *r = p->req;
    if ((r->allowed && !r->allowed[idx]) || (!p->any_state && !n->usable))
        return false;
    if (p->only_feature && !select_has_feature(n, p->only_feature))
        return false;
    if (p->term && loom_constraint_match_node(p->term, n->features, n->nfeatures) != 1)
        return false;
    if (!p->ignore && (n->exclusive || (r->exclusive && n->njobs)))
        return false;
    o->limited = p->opts->limit && p->opts->limit(p->opts->limit_arg, idx, &o->lim);
    if (o->limited && r->exclusive && !o->lim.whole_node_ok)
        return false;
    o->cpus = r->exclusive ? n->cpus : select_free_cpus(p, n);
    o->mem = p->ignore ? n->mem_total : n->mem_total - n->mem_used;
    if (o->limited) {
        o->cpus = (uint32_t)select_min64(o->cpus, o->lim.cpus);
        o->mem = select_min64(o->mem, o->lim.mem);
    }
    return o->cpus > 0;
}

static bool select_gres_match(const loom_sched_gres_t *g, const char *name, const char *type)
{
    if (g->name != name && strcmp(g->name, name) != 0)
        return false;
    return !type || (g->type && (g->type == type || strcmp(g->type, type) == 0));
}

/* A line of each group, to read the group's name and type. */
static const loom_sched_gres_t *select_group_line(const loom_sched_node_t *n, uint32_t group)
{
    for (size_t i = 0; i < n->ngres; i++)
        if (n->gres[i].group == group)
            return &n->gres[i];
    return NULL;
}

/* Free units of name[:type] on a node, group limits applied. */
static uint64_t select_gres_free(const place_t *p, const loom_sched_node_t *n, const offer_t *o,
                                 const char *name, const char *type)
{
    uint64_t sum = 0;
    for (uint32_t g = 0; g < n->ngroups; g++) {
        const loom_sched_gres_t *line =
            n->ngroups == n->ngres ? &n->gres[g] : select_group_line(n, g);
        if (!line || !select_gres_match(line, name, type))
            continue;
        uint64_t free_units = n->group_count[g] - (p->ignore ? 0 : n->group_used[g]);
        sum += o->limited ? select_min64(free_units, o->lim.gres[g]) : free_units;
    }
    return sum;
}

/* GPUs a node must give whatever its task count: --gres=gpu:N, and --gpus
 * (all of it on a one-node job, at least one on each node otherwise). */
static uint64_t select_fixed_gpus(const place_t *p)
{
    const loom_sched_req_t *r = p->req;
    uint64_t g = 0;
    for (size_t i = 0; i < r->ngres; i++)
        if (strcmp(r->gres[i].name, "gpu") == 0)
            g += r->gres[i].count;
    if (r->gpus_per_job)
        g += p->max_nodes == 1 ? r->gpus_per_job : 1;
    return g;
}

static bool select_fixed_fits(const place_t *p, const loom_sched_node_t *n, const offer_t *o)
{
    const loom_sched_req_t *r = p->req;
    for (size_t i = 0; i < r->ngres; i++)
        if (select_gres_free(p, n, o, r->gres[i].name, r->gres[i].type) < r->gres[i].count)
            return false;
    if (r->gpus_per_job &&
        select_gres_free(p, n, o, "gpu", r->gpus_type) < (p->max_nodes == 1 ? r->gpus_per_job : 1))
        return false;
    return true;
}

/* The most tasks that memory allows; 0 when not even the fixed part fits. */
static uint64_t select_mem_cap(const place_t *p, const loom_sched_node_t *n, uint64_t mem,
                               uint64_t g0, uint64_t cap)
{
    const loom_sched_req_t *r = p->req;
    if (r->mem_whole_node)
        return mem >= n->mem_total ? cap : 0;
    if (r->mem_per_node)
        return mem >= r->mem_per_node ? cap : 0;
    if (r->mem_per_cpu)
        return select_min64(cap, mem / (r->mem_per_cpu * p->cpt));
    if (r->mem_per_gpu) {
        if (g0 * r->mem_per_gpu > mem)
            return 0;
        if (r->gpus_per_task)
            cap = select_min64(cap, (mem / r->mem_per_gpu - g0) / r->gpus_per_task);
    }
    return cap;
}

/* Tasks this node can host for the request now (0 = cannot take part). */
static uint32_t select_capacity(const place_t *p, uint32_t idx, offer_t *o)
{
    const loom_sched_node_t *n = &p->nodes[idx];
    const loom_sched_req_t *r = p->req;
    if (!select_offer(p, idx, o) || !select_fixed_fits(p, n, o))
        return 0;
    uint64_t g0 = select_fixed_gpus(p);
    uint64_t cap = o->cpus / p->cpt;
    if (r->gpus_per_task) {
        uint64_t fg = select_gres_free(p, n, o, "gpu", r->gpus_type);
        cap = select_min64(cap, fg >= g0 ? (fg - g0) / r->gpus_per_task : 0);
    }
    if (r->cpus_per_gpu) {
        if (g0 * r->cpus_per_gpu > o->cpus)
            return 0;
        if (r->gpus_per_task)
            cap = select_min64(cap, (o->cpus / r->cpus_per_gpu - g0) / r->gpus_per_task);
    }
    cap = select_mem_cap(p, n, o->mem, g0, cap);
    if (r->ntasks_per_node) {
        if (cap < r->ntasks_per_node)
            return 0;
        cap = r->ntasks_per_node;
    }
    return (uint32_t)select_min64(cap, UINT32_MAX);
}

/* ---- choosing nodes ---------------------------------------------------------- */

static cand_t select_cand(const place_t *p, uint32_t idx, uint32_t cap, const offer_t *o)
{
    const loom_sched_node_t *n = &p->nodes[idx];
    return (cand_t){.idx = idx,
                    .weight = n->weight,
                    .free_gpus = p->ignore ? n->gpus : n->gpus - n->gpus_used,
                    .free_cpus = o->cpus,
                    .cap = cap};
}

static int select_cand_cmp(const void *a, const void *b)
{
    const cand_t *x = a, *y = b;
    if (x->weight != y->weight)
        return x->weight < y->weight ? -1 : 1;
    if (x->free_gpus != y->free_gpus)
        return x->free_gpus < y->free_gpus ? -1 : 1;
    if (x->free_cpus != y->free_cpus)
        return x->free_cpus < y->free_cpus ? -1 : 1;
    return x->idx < y->idx ? -1 : x->idx > y->idx;
}

static int select_cand_cmp_cap(const void *a, const void *b)
{
    const cand_t *x = a, *y = b;
    if (x->cap != y->cap)
        return x->cap > y->cap ? -1 : 1;
    return select_cand_cmp(a, b);
}

static bool select_is_required(const place_t *p, uint32_t idx)
{
    for (size_t i = 0; i < p->nrequired; i++)
        if (p->required[i] == idx)
            return true;
    return false;
}

static size_t select_scan_count(const place_t *p)
{
    return p->opts->subset ? p->opts->nsubset : p->nnodes;
}

static uint32_t select_scan_at(const place_t *p, size_t i)
{
    return p->opts->subset ? p->opts->subset[i] : (uint32_t)i;
}

/* Candidates other than the required nodes, best fit first. */
static cand_t *select_candidates(const place_t *p, size_t *ncand)
{
    size_t total = select_scan_count(p);
    cand_t *c = loom_xcalloc(total ? total : 1, sizeof(*c));
    size_t n = 0;
    for (size_t i = 0; i < total; i++) {
        uint32_t idx = select_scan_at(p, i);
        offer_t o;
        uint32_t cap =
            idx < p->nnodes && !select_is_required(p, idx) ? select_capacity(p, idx, &o) : 0;
        if (cap)
            c[n++] = select_cand(p, idx, cap, &o);
    }
    qsort(c, n, sizeof(*c), select_cand_cmp);
    *ncand = n;
    return c;
}

static uint64_t select_sum_cap(const place_t *p)
{
    uint64_t sum = 0;
    for (size_t i = 0; i < p->nchosen; i++)
        sum += p->chosen[i].cap;
    return sum;
}

static bool select_satisfied(const place_t *p)
{
    return p->nchosen >= p->min_nodes && select_sum_cap(p) >= p->ntasks;
}

/* Greedy choice over cand (in its order); the last node needed is the first
 * that covers the remaining tasks, else the largest. */
static bool select_greedy(place_t *p, const cand_t *cand, size_t ncand)
{
    size_t base = p->nchosen;
    bool *taken = loom_xcalloc(ncand ? ncand : 1, sizeof(bool));
    while (!select_satisfied(p) && p->nchosen < p->max_nodes) {
        uint64_t have = select_sum_cap(p);
        uint64_t left = p->ntasks > have ? p->ntasks - have : 0;
        bool last = p->nchosen + 1 >= p->min_nodes;
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
    if (select_satisfied(p))
        return true;
    p->nchosen = base;
    return false;
}

/* One-node jobs (the common case): a linear best-fit scan, no sorting. */
static int select_choose_one(place_t *p)
{
    cand_t best = {0};
    bool found = false;
    size_t total = select_scan_count(p);
    for (size_t i = 0; i < total; i++) {
        uint32_t idx = select_scan_at(p, i);
        offer_t o;
        uint32_t cap = idx < p->nnodes ? select_capacity(p, idx, &o) : 0;
        if (cap < p->ntasks)
            continue;
        cand_t c = select_cand(p, idx, cap, &o);
        if (!found || select_cand_cmp(&c, &best) < 0)
            best = c;
        found = true;
    }
    if (!found)
        return -ENOSPC;
    p->chosen[p->nchosen++] = best;
    return 0;
}

/* --contiguous: the shortest run of consecutive nodes that fits. */
static int select_choose_contiguous(place_t *p)
{
    uint32_t *cap = loom_xcalloc(p->nnodes + 1, sizeof(uint32_t));
    for (uint32_t i = 0; i < p->nnodes; i++) {
        offer_t o;
        cap[i] = select_capacity(p, i, &o);
    }
    size_t best_start = p->nnodes, best_len = 0;
    for (size_t s = 0; s < p->nnodes; s++) {
        uint64_t sum = 0;
        size_t e = s, req_in = 0;
        for (; e < p->nnodes && cap[e] && e - s < p->max_nodes; e++) {
            sum += cap[e];
            req_in += select_is_required(p, (uint32_t)e);
            if (e - s + 1 >= p->min_nodes && sum >= p->ntasks && req_in == p->nrequired)
                break;
        }
        size_t len = e - s + 1;
        bool ok = e < p->nnodes && cap[e] && len >= p->min_nodes && sum >= p->ntasks &&
                  req_in == p->nrequired && len <= p->max_nodes;
        if (ok && (best_start == p->nnodes || len < best_len)) {
            best_start = s;
            best_len = len;
        }
    }
    for (size_t i = 0; best_start < p->nnodes && i < best_len; i++)
        p->chosen[p->nchosen++] =
            (cand_t){.idx = (uint32_t)(best_start + i), .cap = cap[best_start + i]};
    free(cap);
    return best_start < p->nnodes ? 0 : -ENOSPC;
}

static int select_choose(place_t *p)
{
    p->nchosen = 0;
    if (p->req->contiguous)
        return select_choose_contiguous(p);
    for (size_t i = 0; i < p->nrequired; i++) {
        uint32_t idx = p->required[i];
        offer_t o;
        uint32_t cap = idx < p->nnodes ? select_capacity(p, idx, &o) : 0;
        if (!cap)
            return idx < p->nnodes ? -ENOSPC : -EINVAL;
        p->chosen[p->nchosen++] = select_cand(p, idx, cap, &o);
    }
    if (select_satisfied(p))
        return 0;
    if (p->max_nodes == 1 && p->nchosen == 0)
        return select_choose_one(p);
    size_t ncand;
    cand_t *cand = select_candidates(p, &ncand);
    bool ok = select_greedy(p, cand, ncand);
    if (!ok) {
        qsort(cand, ncand, sizeof(*cand), select_cand_cmp_cap);
        ok = select_greedy(p, cand, ncand);
    }
    free(cand);
    return ok ? 0 : -ENOSPC;
}

/* ---- building the allocation --------------------------------------------------- */

static int select_idx_cmp(const void *a, const void *b)
{
    const cand_t *x = a, *y = b;
    return x->idx < y->idx ? -1 : x->idx > y->idx;
}

/* Tasks per chosen node as cons_tres lays out a job: without --exclusive the
 * CPUs are taken node by node in order, each node as full as its capacity
 * allows while every later node keeps one task (2 four-CPU nodes, 4 tasks:
 * 3+1; 6 tasks: 4+2); an exclusive job holds whole nodes and its tasks go
 * round the nodes (2+2). What is left is spread cyclically. */
static void select_spread_tasks(const place_t *p, uint32_t *tasks)
{
    uint32_t left = p->ntasks;
    for (size_t i = 0; !p->req->exclusive && i < p->nchosen && left; i++) {
        uint32_t later = (uint32_t)(p->nchosen - i - 1);
        uint32_t t = left > later ? left - later : 1;
        tasks[i] = t < p->chosen[i].cap ? t : p->chosen[i].cap;
        left -= tasks[i];
    }
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

static void select_use_gres(loom_sched_node_alloc_t *na, uint32_t g, uint64_t count)
{
    for (size_t i = 0; i < na->ngres; i++)
        if (na->gres[i].gres == g) {
            na->gres[i].count += count;
            return;
        }
    na->gres = loom_xreallocarray(na->gres, na->ngres + 1, sizeof(*na->gres));
    na->gres[na->ngres++] = (loom_sched_gres_use_t){.gres = g, .count = count};
}

static uint64_t select_taken(const loom_sched_node_alloc_t *na, uint32_t g)
{
    for (size_t i = 0; i < na->ngres; i++)
        if (na->gres[i].gres == g)
            return na->gres[i].count;
    return 0;
}

/* Units of a group the allocation may still take on this node. */
static uint64_t select_group_room(const loom_sched_node_t *n, const offer_t *o,
                                  const loom_sched_node_alloc_t *na, uint32_t group)
{
    if (!o->limited)
        return UINT64_MAX;
    uint64_t taken = 0;
    for (size_t i = 0; i < na->ngres; i++)
        if (n->gres[na->gres[i].gres].group == group)
            taken += na->gres[i].count;
    return o->lim.gres[group] > taken ? o->lim.gres[group] - taken : 0;
}

static bool select_same_mask(const loom_sched_node_t *n, const uint64_t *a, const uint64_t *b)
{
    if (!a || !b)
        return a == b;
    return memcmp(a, b, ((n->cpus + 63) / 64) * sizeof(uint64_t)) == 0;
}

/* The free devices of name[:type] for this allocation, ascending index. */
static size_t select_free_devices(const place_t *p, const loom_sched_node_t *n, const offer_t *o,
                                  const loom_sched_node_alloc_t *na, const char *name,
                                  const char *type, uint32_t *devs)
{
    size_t k = 0;
    for (size_t i = 0; i < n->ngres; i++) {
        const loom_sched_gres_t *g = &n->gres[i];
        if (g->index < 0 || !select_gres_match(g, name, type) || (!p->ignore && g->used) ||
            select_taken(na, (uint32_t)i) || !select_group_room(n, o, na, g->group))
            continue;
        size_t j = k++;
        for (; j > 0 && n->gres[devs[j - 1]].index > g->index; j--)
            devs[j] = devs[j - 1];
        devs[j] = (uint32_t)i;
    }
    return k;
}

/* The affinity set (devices with the same Cores=) to take count devices
 * from: the one with the fewest free devices that still holds count, so that
 * whole sets stay free. Returns a member line index, or -1 for "any". */
static long select_best_set(const loom_sched_node_t *n, const uint32_t *devs, size_t ndev,
                            uint64_t count)
{
    long best = -1;
    size_t best_free = 0;
    for (size_t i = 0; i < ndev; i++) {
        size_t free_in = 0;
        bool first = true;
        for (size_t j = 0; j < ndev; j++) {
            bool same = select_same_mask(n, n->gres[devs[i]].cpu_mask, n->gres[devs[j]].cpu_mask);
            free_in += same;
            if (same && j < i)
                first = false;
        }
        if (first && free_in >= count && (best < 0 || free_in < best_free)) {
            best = (long)devs[i];
            best_free = free_in;
        }
    }
    return best;
}

/* Take up to count units of name[:type]: devices (affinity-aware), then
 * counted pools. Returns the units taken. */
static uint64_t select_take_gres(const place_t *p, const loom_sched_node_t *n, const offer_t *o,
                                 loom_sched_node_alloc_t *na, const char *name, const char *type,
                                 uint64_t count)
{
    uint32_t *devs = loom_xcalloc(n->ngres + 1, sizeof(uint32_t));
    size_t ndev = select_free_devices(p, n, o, na, name, type, devs);
    long set = o->limited ? -1 : select_best_set(n, devs, ndev, count);
    uint64_t got = 0;
    for (int pass = set >= 0 ? 0 : 1; pass < 2; pass++)
        for (size_t i = 0; i < ndev && got < count; i++) {
            const loom_sched_gres_t *g = &n->gres[devs[i]];
            if (select_taken(na, devs[i]) || !select_group_room(n, o, na, g->group))
                continue;
            if (pass == 0 && !select_same_mask(n, g->cpu_mask, n->gres[set].cpu_mask))
                continue;
            select_use_gres(na, devs[i], 1);
            got++;
        }
    free(devs);
    for (size_t i = 0; i < n->ngres && got < count; i++) {
        const loom_sched_gres_t *g = &n->gres[i];
        if (g->index >= 0 || !select_gres_match(g, name, type))
            continue;
        uint64_t avail = g->count - (p->ignore ? 0 : g->used) - select_taken(na, (uint32_t)i);
        uint64_t take =
            select_min64(select_min64(count - got, avail), select_group_room(n, o, na, g->group));
        if (take) {
            select_use_gres(na, (uint32_t)i, take);
            got += take;
        }
    }
    return got;
}

/* CPUs local to the GPUs taken on this node (NULL when none say). */
static uint64_t *select_gpu_cpus(const loom_sched_node_t *n, const loom_sched_node_alloc_t *na)
{
    uint64_t *mask = NULL;
    size_t words = (n->cpus + 63) / 64;
    for (size_t i = 0; i < na->ngres; i++) {
        const loom_sched_gres_t *g = &n->gres[na->gres[i].gres];
        if (!g->cpu_mask)
            continue;
        if (!mask)
            mask = loom_xcalloc(words + 1, sizeof(uint64_t));
        for (size_t w = 0; w < words; w++)
            mask[w] |= g->cpu_mask[w];
    }
    return mask;
}

/* CPUs per allocation unit (a CPU, a core or a socket). */
static uint32_t select_unit(const loom_sched_node_t *n)
{
    return n->unit > 1 ? n->unit : 1;
}

static bool select_unit_free(const place_t *p, const loom_sched_node_t *n, uint32_t first)
{
    for (uint32_t t = 0; t < select_unit(n); t++)
        if (!select_cpu_free(p, n, first + t))
            return false;
    return true;
}

static bool select_unit_preferred(const loom_sched_node_t *n, const uint64_t *pref, uint32_t first)
{
    for (uint32_t t = 0; t < select_unit(n); t++)
        if (select_bit(pref, first + t))
            return true;
    return false;
}

/* CPU ids for one node: free ones, those local to its GPUs first, lowest id
 * first; by whole cores when the node says so. */
static void select_pick_cpus(const place_t *p, const loom_sched_node_t *n,
                             loom_sched_node_alloc_t *na)
{
    uint64_t *pref = select_gpu_cpus(n, na);
    uint8_t *pick = loom_xcalloc(n->cpus + 1, 1);
    uint32_t k = 0, step = select_unit(n);
    for (int pass = pref ? 0 : 1; pass < 2; pass++)
        for (uint32_t u = 0; u + step <= n->cpus && k < na->ncpus; u += step) {
            if (pick[u])
                continue;
            bool free_u = step > 1 ? select_unit_free(p, n, u) : select_cpu_free(p, n, u);
            bool pref_u =
                pref && (step > 1 ? select_unit_preferred(n, pref, u) : select_bit(pref, u));
            if (!free_u || (pass == 0 && !pref_u))
                continue;
            for (uint32_t t = 0; t < step && k < na->ncpus; t++, k++)
                pick[u + t] = 1;
        }
    na->cpu_ids = loom_xcalloc(na->ncpus ? na->ncpus : 1, sizeof(uint32_t));
    na->ncpus = k;
    k = 0;
    for (uint32_t id = 0; id < n->cpus; id++)
        if (pick[id])
            na->cpu_ids[k++] = id;
    free(pick);
    free(pref);
}

static uint32_t select_round_cpus(const loom_sched_node_t *n, uint64_t cpus)
{
    uint32_t unit = select_unit(n);
    cpus = (cpus + unit - 1) / unit * unit;
    return (uint32_t)select_min64(cpus, UINT32_MAX);
}

/* GRES for one node: --gres, --gpus-per-task, and a share of --gpus. */
static bool select_node_gres(const place_t *p, const offer_t *o, loom_sched_node_alloc_t *na,
                             uint64_t *gpus_left)
{
    const loom_sched_req_t *r = p->req;
    const loom_sched_node_t *n = &p->nodes[na->node];
    for (size_t g = 0; g < r->ngres; g++)
        if (select_take_gres(p, n, o, na, r->gres[g].name, r->gres[g].type, r->gres[g].count) <
            r->gres[g].count)
            return false;
    if (r->gpus_per_task) {
        uint64_t want = (uint64_t)na->ntasks * r->gpus_per_task;
        if (select_take_gres(p, n, o, na, "gpu", r->gpus_type, want) < want)
            return false;
    }
    if (*gpus_left)
        *gpus_left -= select_take_gres(p, n, o, na, "gpu", r->gpus_type, *gpus_left);
    return true;
}

static uint64_t select_node_mem(const place_t *p, const loom_sched_node_t *n,
                                const loom_sched_node_alloc_t *na)
{
    const loom_sched_req_t *r = p->req;
    if (r->mem_whole_node)
        return n->mem_total;
    if (r->mem_per_node)
        return r->mem_per_node;
    if (r->mem_per_cpu)
        return r->mem_per_cpu * na->ncpus;
    if (r->mem_per_gpu)
        return r->mem_per_gpu * loom_sched_alloc_node_gpus(n, na);
    return 0;
}

/* Extra CPUs so the total reaches min_cpus, taken where nodes have room. */
static void select_extra_cpus(const place_t *p, const offer_t *offers, loom_sched_alloc_t *a)
{
    uint32_t want = p->req->min_cpus;
    for (size_t i = 0; i < a->nnodes && a->ncpus < want; i++) {
        const loom_sched_node_t *n = &p->nodes[a->nodes[i].node];
        uint32_t room = offers[i].cpus > a->nodes[i].ncpus ? offers[i].cpus - a->nodes[i].ncpus : 0;
        uint32_t add = select_round_cpus(n, select_min64(want - a->ncpus, room));
        add = (uint32_t)select_min64(add, room);
        a->nodes[i].ncpus += add;
        a->ncpus += add;
    }
}

/* First half: tasks, GRES and CPU counts per node. */
static bool select_build_counts(const place_t *p, const uint32_t *tasks, offer_t *offers,
                                loom_sched_alloc_t *a)
{
    const loom_sched_req_t *r = p->req;
    uint64_t gpus_left = r->gpus_per_job;
    for (size_t i = 0; i < p->nchosen; i++) {
        const loom_sched_node_t *n = &p->nodes[p->chosen[i].idx];
        loom_sched_node_alloc_t *na = &a->nodes[i];
        na->node = p->chosen[i].idx;
        na->ntasks = tasks[i];
        if (!select_offer(p, na->node, &offers[i]) ||
            !select_node_gres(p, &offers[i], na, &gpus_left))
            return false;
        uint64_t cpus = (uint64_t)tasks[i] * p->cpt;
        if (r->cpus_per_gpu)
            cpus = cpus > loom_sched_alloc_node_gpus(n, na) * r->cpus_per_gpu
                       ? cpus
                       : loom_sched_alloc_node_gpus(n, na) * r->cpus_per_gpu;
        na->ncpus = r->exclusive ? n->cpus : select_round_cpus(n, cpus);
        a->ncpus += na->ncpus;
        a->ntasks += na->ntasks;
    }
    return gpus_left == 0;
}

/* Fill per-node CPUs, memory and GRES; false when something cannot be met. */
static bool select_build(const place_t *p, const uint32_t *tasks, loom_sched_alloc_t *a)
{
    const loom_sched_req_t *r = p->req;
    offer_t *offers = loom_xcalloc(p->nchosen + 1, sizeof(*offers));
    a->nodes = loom_xcalloc(p->nchosen + 1, sizeof(*a->nodes));
    a->nnodes = p->nchosen;
    a->exclusive = r->exclusive;
    a->share_max = r->share_max > 1 ? r->share_max : 0;
    bool ok = select_build_counts(p, tasks, offers, a);
    if (ok && !r->exclusive)
        select_extra_cpus(p, offers, a);
    a->ncpus = 0;
    for (size_t i = 0; ok && i < a->nnodes; i++) {
        const loom_sched_node_t *n = &p->nodes[a->nodes[i].node];
        loom_sched_node_alloc_t *na = &a->nodes[i];
        uint32_t want = na->ncpus;
        select_pick_cpus(p, n, na);
        na->mem = select_node_mem(p, n, na);
        a->ncpus += na->ncpus;
        ok = na->ncpus == want && want <= offers[i].cpus && na->mem <= offers[i].mem;
    }
    free(offers);
    return ok;
}

/* ---- constraints with counts and brackets --------------------------------------- */

/* Pick count nodes that match term (best fit), appended to the required list. */
static int select_pick_term(place_t *p, const loom_constraint_t *term, uint32_t count)
{
    p->term = term;
    size_t ncand;
    cand_t *cand = select_candidates(p, &ncand);
    p->term = NULL;
    if (ncand < count) {
        free(cand);
        return -ENOSPC;
    }
    p->required = loom_xreallocarray(p->required, p->nrequired + count + 1, sizeof(uint32_t));
    for (uint32_t i = 0; i < count; i++)
        p->required[p->nrequired++] = cand[i].idx;
    free(cand);
    return 0;
}

/* The counted terms: "a*2" at the top, or the kids of "[a*2&b*4]" / "a*2&b". */
static int select_counted(place_t *p, const loom_constraint_t *c)
{
    if (!c)
        return 0;
    const loom_constraint_t *b = c->bracket ? c : loom_constraint_bracket(c);
    const loom_constraint_t *top = b && b->op == LOOM_CONS_AND ? b : c;
    uint32_t sum = 0;
    int rc = 0;
    if (top->count) {
        rc = select_pick_term(p, top, top->count);
        sum = top->count;
    } else if (top->op == LOOM_CONS_AND) {
        for (size_t i = 0; i < top->nkids && rc == 0; i++)
            if (top->kids[i]->count) {
                rc = select_pick_term(p, top->kids[i], top->kids[i]->count);
                sum += top->kids[i]->count;
            }
    }
    if (sum > p->min_nodes)
        p->min_nodes = sum;
    if (p->max_nodes < p->min_nodes)
        p->max_nodes = p->min_nodes;
    return rc;
}

static void select_reset_required(place_t *p)
{
    const loom_sched_req_t *r = p->req;
    free(p->required);
    p->required = loom_xcalloc(r->nreq_nodes + 1, sizeof(uint32_t));
    if (r->nreq_nodes) /* req_nodes may be NULL when none are named */
        memcpy(p->required, r->req_nodes, r->nreq_nodes * sizeof(uint32_t));
    p->nrequired = r->nreq_nodes;
}

/* One attempt (one alternative of a matching OR). 0 and *out filled, or < 0. */
static int select_attempt(place_t *p, loom_sched_alloc_t *out)
{
    select_reset_required(p);
    int rc = select_counted(p, p->req->constraint);
    if (rc == 0) {
        p->chosen = loom_xreallocarray(p->chosen, p->max_nodes + p->nrequired + 1, sizeof(cand_t));
        rc = select_choose(p);
    }
    if (rc < 0)
        return rc;
    qsort(p->chosen, p->nchosen, sizeof(cand_t), select_idx_cmp);
    uint32_t *tasks = loom_xcalloc(p->nchosen + 1, sizeof(uint32_t));
    select_spread_tasks(p, tasks);
    loom_sched_alloc_t a = {0};
    if (select_build(p, tasks, &a)) {
        *out = a;
    } else {
        loom_sched_alloc_fini(&a);
        rc = -ENOSPC;
    }
    free(tasks);
    return rc;
}

static int select_check_req(const loom_sched_req_t *r, size_t nnodes)
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

int loom_sched_try_place_ex(const loom_sched_node_t *nodes, size_t nnodes,
                            const loom_sched_req_t *req, const loom_sched_place_opts_t *opts,
                            loom_sched_alloc_t *out)
{
    int rc = select_check_req(req, nnodes);
    if (rc)
        return rc;
    unsigned flags = opts->flags;
    place_t p = {.nodes = nodes,
                 .nnodes = nnodes,
                 .req = req,
                 .opts = opts,
                 .ignore = flags & (LOOM_SCHED_IGNORE_USED | LOOM_SCHED_IGNORE_ALLOC),
                 .any_state = flags & LOOM_SCHED_IGNORE_USED,
                 .cpt = req->cpus_per_task ? req->cpus_per_task : 1,
                 .min_nodes = req->min_nodes,
                 .max_nodes = req->max_nodes ? req->max_nodes : req->min_nodes};
    if (p.max_nodes > nnodes)
        p.max_nodes = (uint32_t)nnodes;
    p.ntasks = req->ntasks ? req->ntasks
                           : (req->ntasks_per_node ? req->ntasks_per_node : 1) * req->min_nodes;
    const loom_constraint_t *b = req->constraint ? loom_constraint_bracket(req->constraint) : NULL;
    if (b && b->op == LOOM_CONS_OR) {
        /* Matching OR: every node gets the same one feature. */
        rc = -ENOSPC;
        for (size_t i = 0; i < b->nkids && rc == -ENOSPC; i++) {
            p.only_feature = b->kids[i]->op == LOOM_CONS_FEATURE ? b->kids[i]->name : NULL;
            rc = select_attempt(&p, out);
        }
    } else {
        rc = select_attempt(&p, out);
    }
    free(p.required);
    free(p.chosen);
    return rc;
}

int loom_sched_try_place(const loom_sched_node_t *nodes, size_t nnodes, const loom_sched_req_t *req,
                         unsigned flags, loom_sched_alloc_t *out)
{
    loom_sched_place_opts_t o = {.flags = flags};
    return loom_sched_try_place_ex(nodes, nnodes, req, &o, out);
}
