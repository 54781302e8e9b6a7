/* pass.c - one scheduling pass over sorted pending jobs. See pass.h. */
#include "sched/pass.h"
#include "common/xalloc.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

int loom_sched_job_cmp(const void *a, const void *b)
{
    const loom_sched_job_t *x = a, *y = b;
    if (x->priority != y->priority)
        return x->priority > y->priority ? -1 : 1;
    if (x->submit_time != y->submit_time)
        return x->submit_time < y->submit_time ? -1 : 1;
    return x->job_id < y->job_id ? -1 : x->job_id > y->job_id;
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

size_t loom_sched_pass(loom_sched_node_t *nodes, size_t nnodes, const loom_sched_job_t *jobs,
                       size_t njobs, const loom_sched_pass_opts_t *opts,
                       loom_sched_result_t *results)
{
    size_t nparts = opts->nparts ? opts->nparts : 1;
    bool *blocked = opts->part_blocked;
    bool *own = NULL;
    if (!blocked)
        blocked = own = loom_xcalloc(nparts, sizeof(bool));
    if (njobs)
        memset(results, 0, njobs * sizeof(*results));
    size_t nblocked = pass_count_blocked(blocked, nparts);
    uint64_t free_cpus = loom_sched_free_cpus(nodes, nnodes);
    uint32_t started = 0;
    size_t i = 0;
    for (; i < njobs; i++) {
        if (nblocked >= nparts || free_cpus == 0)
            break;
        if (opts->max_starts && started >= opts->max_starts)
            break;
        const loom_sched_job_t *j = &jobs[i];
        uint32_t part = j->part < nparts ? j->part : 0;
        if (blocked[part]) {
            results[i].verdict = LOOM_SCHED_BLOCKED;
            continue;
        }
        int rc = loom_sched_try_place(nodes, nnodes, j->req, 0, &results[i].alloc);
        if (rc == 0 && loom_sched_alloc_apply(nodes, nnodes, &results[i].alloc) == 0) {
            results[i].verdict = LOOM_SCHED_STARTED;
            /* Exclusive allocations take every CPU of idle nodes, so ncpus is exact. */
            uint32_t took = results[i].alloc.ncpus;
            free_cpus = free_cpus > took ? free_cpus - took : 0;
            started++;
            continue;
        }
        if (rc == 0)
            loom_sched_alloc_fini(&results[i].alloc);
        results[i].verdict = pass_why_not(nodes, nnodes, j->req, rc);
        if (results[i].verdict == LOOM_SCHED_NO_RESOURCES && !blocked[part]) {
            blocked[part] = true;
            nblocked++;
        }
    }
    free(own);
    return i;
}
