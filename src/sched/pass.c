/* pass.c - one scheduling pass over sorted pending jobs. See pass.h. */
#include "sched/pass.h"
#include "common/xalloc.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

int loom_sched_job_cmp(const void *a, const void *b)
{
    const loom_sched_job_t *x = a, *y = b;
    if (x->tier != y->tier)
        return x->tier > y->tier ? -1 : 1;
    if (x->priority != y->priority)
        return x->priority > y->priority ? -1 : 1;
    if (x->submit_time != y->submit_time)
        return x->submit_time < y->submit_time ? -1 : 1;
    if (x->job_id != y->job_id)
        return x->job_id < y->job_id ? -1 : 1;
    return x->part < y->part ? -1 : x->part > y->part;
}

void loom_sched_sort(loom_sched_job_t *jobs, size_t njobs)
{
    if (njobs < 2)
        return;
    qsort(jobs, njobs, sizeof(*jobs), loom_sched_job_cmp);
}

uint64_t loom_sched_free_cpus(const loom_sched_node_t *nodes, size_t nnodes)
{
    uint64_t free_cpus = 0;
    for (size_t i = 0; i < nnodes; i++)
        if (nodes[i].usable && !nodes[i].exclusive)
            free_cpus += nodes[i].cpus - nodes[i].cpus_used;
    return free_cpus;
}

static bool pass_shared_room(const loom_sched_node_t *n)
{
    for (uint32_t i = 0; i < n->cpus; i++)
        if (n->cpu_share[i])
            return true;
    return false;
}

uint32_t *loom_sched_open_nodes(const loom_sched_node_t *nodes, size_t nnodes, size_t *n)
{
    uint32_t *v = loom_xcalloc(nnodes + 1, sizeof(uint32_t));
    size_t k = 0;
    for (size_t i = 0; i < nnodes; i++) {
        const loom_sched_node_t *nd = &nodes[i];
        if (nd->usable && !nd->exclusive && (nd->cpus_used < nd->cpus || pass_shared_room(nd)))
            v[k++] = (uint32_t)i;
    }
    *n = k;
    return v;
}

static size_t pass_count_blocked(const bool *blocked, size_t nparts)
{
    size_t n = 0;
    for (size_t i = 0; i < nparts; i++)
        n += blocked[i];
    return n;
}

/* Why a job did not fit: waiting for running jobs, or for nodes to come back. */
static loom_sched_verdict_t pass_why_not(const loom_sched_node_t *nodes, size_t nnodes,
                                         const loom_sched_req_t *req, int rc)
{
    if (rc == -EINVAL)
        return LOOM_SCHED_BAD_REQUEST;
    loom_sched_alloc_t a = {0};
    if (loom_sched_try_place(nodes, nnodes, req, LOOM_SCHED_IGNORE_ALLOC, &a) == 0) {
        loom_sched_alloc_fini(&a);
        return LOOM_SCHED_NO_RESOURCES;
    }
    return LOOM_SCHED_NODES_UNAVAILABLE;
}

/* The state of one pass. */
typedef struct {
    loom_sched_node_t *nodes;
    size_t nnodes;
    size_t nparts;
    bool *blocked;
    size_t nblocked;
    uint8_t *started; /* per slot */
    uint64_t free_cpus;
    bool shared_room; /* some CPU is shared: OverSubscribe jobs may fit when none is free */
    loom_sched_place_opts_t place;
} pass_t;

static void pass_one(pass_t *ps, const loom_sched_job_t *j, loom_sched_result_t *res)
{
    uint32_t part = j->part < ps->nparts ? j->part : 0;
    if (ps->started && ps->started[j->slot]) {
        res->verdict = LOOM_SCHED_DUPLICATE;
        return;
    }
    if (ps->blocked[part]) {
        res->verdict = LOOM_SCHED_BLOCKED;
        return;
    }
    int rc = loom_sched_try_place_ex(ps->nodes, ps->nnodes, j->req, &ps->place, &res->alloc);
    if (rc == 0 && loom_sched_alloc_apply(ps->nodes, ps->nnodes, &res->alloc) == 0) {
        res->verdict = LOOM_SCHED_STARTED;
        /* Exclusive allocations take every CPU of idle nodes, so ncpus is exact. */
        uint32_t took = res->alloc.share_max > 1 ? 0 : res->alloc.ncpus;
        ps->free_cpus = ps->free_cpus > took ? ps->free_cpus - took : 0;
        if (ps->started)
            ps->started[j->slot] = 1;
        return;
    }
    if (rc == 0)
        loom_sched_alloc_fini(&res->alloc);
    res->verdict = pass_why_not(ps->nodes, ps->nnodes, j->req, rc);
    if (res->verdict == LOOM_SCHED_NO_RESOURCES && !ps->blocked[part] && !j->no_reserve) {
        ps->blocked[part] = true;
        ps->nblocked++;
    }
}

size_t loom_sched_pass(loom_sched_node_t *nodes, size_t nnodes, const loom_sched_job_t *jobs,
                       size_t njobs, const loom_sched_pass_opts_t *opts,
                       loom_sched_result_t *results)
{
    pass_t ps = {.nodes = nodes, .nnodes = nnodes, .nparts = opts->nparts ? opts->nparts : 1};
    bool *own = NULL;
    ps.blocked = opts->part_blocked;
    if (!ps.blocked)
        ps.blocked = own = loom_xcalloc(ps.nparts, sizeof(bool));
    if (njobs)
        memset(results, 0, njobs * sizeof(*results));
    if (opts->nslots)
        ps.started = loom_xcalloc(opts->nslots, 1);
    ps.nblocked = pass_count_blocked(ps.blocked, ps.nparts);
    ps.free_cpus = loom_sched_free_cpus(nodes, nnodes);
    uint32_t *open = loom_sched_open_nodes(nodes, nnodes, &ps.place.nsubset);
    ps.place.subset = open;
    for (size_t k = 0; k < ps.place.nsubset && !ps.shared_room; k++)
        ps.shared_room = nodes[open[k]].cpus_used == nodes[open[k]].cpus;
    uint32_t started = 0;
    size_t i = 0;
    for (; i < njobs; i++) {
        if (ps.nblocked >= ps.nparts || (ps.free_cpus == 0 && !ps.shared_room))
            break;
        if (opts->max_starts && started >= opts->max_starts)
            break;
        if (jobs[i].slot >= opts->nslots && opts->nslots) {
            results[i].verdict = LOOM_SCHED_BAD_REQUEST;
            continue;
        }
        pass_one(&ps, &jobs[i], &results[i]);
        started += results[i].verdict == LOOM_SCHED_STARTED;
    }
    free(open);
    free(ps.started);
    free(own);
    return i;
}
