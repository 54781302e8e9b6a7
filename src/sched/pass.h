/*
 * pass.h - one scheduling pass over pending jobs (priority, then submit order).
 *
 * Pure: the caller gives the node model (see resources.h) and the pending
 * jobs already sorted with loom_sched_job_cmp; the pass walks them in order,
 * places each job that fits, applies its allocation to the node model (so no
 * later job in the same pass can overcommit CPUs, memory or GRES), and writes
 * one verdict per job. A job that does not fit blocks the lower-priority jobs
 * of its partition, as Slurm's main scheduler does; they get "Priority"
 * without being tried (backfill.h may start them later without delaying it).
 * A job marked no_reserve (pending for less than bf_min_age_reserve) blocks
 * nothing: lower-priority jobs may start before it, as in Slurm.
 *
 * Order (loom_sched_job_cmp): partition PriorityTier first, then priority,
 * then submit time, then job id. A job that names several partitions comes
 * once per partition (same slot, its own part, tier and priority); once one
 * entry starts, the others are skipped (verdict LOOM_SCHED_DUPLICATE).
 * Placement looks only at the nodes that had a free CPU when the pass began
 * (a 10,000-node cluster that is mostly busy costs little per job).
 *
 * Stopping early keeps a pass cheap with 10,000 pending jobs: it ends as soon
 * as every partition is blocked, no usable node has a free CPU, or
 * max_starts jobs started. Jobs after the stop point keep verdict
 * LOOM_SCHED_NOT_EXAMINED. part_blocked is in/out so that a caller can carry
 * the blocked set into an incremental pass over newly submitted jobs when no
 * resources were freed since the last full pass.
 *
 * Entry points: loom_sched_job_cmp, loom_sched_sort, loom_sched_pass,
 * loom_sched_free_cpus, loom_sched_open_nodes.
 */
#ifndef LOOM_SCHED_PASS_H
#define LOOM_SCHED_PASS_H

#include "sched/resources.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct loom_sched_job {
    uint32_t job_id;
    uint32_t tier;               /* partition PriorityTier: higher first */
    uint32_t priority;           /* higher first */
    int64_t submit_time;         /* earlier first */
    int64_t duration;            /* seconds it may run (time limit); < 0 = no limit */
    uint32_t part;               /* partition index, < nparts */
    uint32_t uid;                /* its user (backfill's bf_max_job_user) */
    uint32_t slot;               /* the same for every entry of one job; < nslots */
    const loom_sched_req_t *req; /* borrowed */
    void *ctx;                   /* the caller's job, untouched */
    bool no_reserve;             /* younger than bf_min_age_reserve: when it does not fit it
                                  * blocks nothing (pass) and holds no reservation (backfill) */
} loom_sched_job_t;

typedef enum {
    LOOM_SCHED_NOT_EXAMINED = 0,  /* the pass stopped before this job */
    LOOM_SCHED_STARTED,           /* alloc is filled and applied to the nodes */
    LOOM_SCHED_NO_RESOURCES,      /* tried, does not fit now: reason Resources */
    LOOM_SCHED_BLOCKED,           /* a job before it in its partition waits: reason Priority */
    LOOM_SCHED_BAD_REQUEST,       /* the request makes no sense (try_place said -EINVAL) */
    LOOM_SCHED_NODES_UNAVAILABLE, /* would not fit even on idle nodes: too many of the
                                   * nodes it may use are down or drained. Does not block
                                   * its partition. */
    LOOM_SCHED_DUPLICATE,         /* another entry of the same job started */
} loom_sched_verdict_t;

typedef struct loom_sched_result {
    loom_sched_verdict_t verdict;
    loom_sched_alloc_t alloc; /* when STARTED; the caller owns it (alloc_fini) */
} loom_sched_result_t;

typedef struct loom_sched_pass_opts {
    size_t nparts;
    bool *part_blocked;  /* nparts entries, in/out; NULL = start with none blocked */
    uint32_t max_starts; /* 0 = no limit */
    uint32_t nslots;     /* > max slot, for multi-partition jobs; 0 = every job once */
} loom_sched_pass_opts_t;

/* qsort order: tier descending, priority descending, then submit time, job id. */
int loom_sched_job_cmp(const void *a, const void *b);
void loom_sched_sort(loom_sched_job_t *jobs, size_t njobs);

/* Run a pass; results has njobs entries (zeroed by the pass). Returns the number
 * of jobs examined (the first N; the rest are NOT_EXAMINED). */
size_t loom_sched_pass(loom_sched_node_t *nodes, size_t nnodes, const loom_sched_job_t *jobs,
                       size_t njobs, const loom_sched_pass_opts_t *opts,
                       loom_sched_result_t *results);

/* Free CPUs over nodes that take new work (the pass stops at 0). */
uint64_t loom_sched_free_cpus(const loom_sched_node_t *nodes, size_t nnodes);
/* Indices of the nodes that take new work and have a free (or shareable)
 * CPU, ascending; *n set. The caller frees the array. */
uint32_t *loom_sched_open_nodes(const loom_sched_node_t *nodes, size_t nnodes, size_t *n);

#endif
