/*
 * backfill.h - backfill scheduling on a time-resource availability profile
 * (Slurm's sched/backfill; DESIGN.md §Scheduling; CLI_SPEC §4 --start).
 *
 * Pure: the caller gives the node model, the running jobs (their allocations
 * and expected ends) and the pending jobs sorted with loom_sched_job_cmp;
 * there is no clock: "now" is an input.
 *
 * The profile holds, per node, a step function of what is in use from now
 * on: running jobs until their expected end, and reservations. Jobs are
 * examined in priority order; for each, the earliest start within
 * [now, now + bf_window] where it fits for its whole duration is found:
 *  - if that is now, the job is placed on the real node model (exact CPUs
 *    and device indices) under per-node limits that keep every reservation
 *    whole for the job's duration, applied, and added to the profile: it
 *    starts (LOOM_SCHED_STARTED);
 *  - otherwise it gets a reservation at that start on the nodes chosen, and
 *    the planned start is reported (squeue --start, sbatch --test-only).
 * So a lower-priority job starts early only when it delays the expected
 * start of no higher-priority job that holds a reservation. A job marked
 * no_reserve (bf_min_age_reserve) gets its planned start but holds nothing. Like Slurm,
 * reservations end at start + limit rounded down to bf_resolution, and
 * running jobs end at their start + time limit exactly; a job without a time
 * limit holds its resources for ever.
 *
 * Planning is exact: a job whose every node gets the same share (one node,
 * or -N k with no -n, -n k, or --ntasks-per-node) is planned by a sweep over
 * each candidate node's feasible start windows; any other multi-node job
 * (-n not a multiple of -N's share, -N min-max, --gpus, --mincpus,
 * --contiguous, -C) is planned by running the selector itself
 * (loom_sched_try_place_ex) on what the profile leaves free over
 * [t, t + limit), at now and at each later change of the profile (the
 * earliest start is one of them; after 64 such times only every 2nd, 4th,
 * ... and the last are tried, which may plan later, never earlier). Its
 * reservation holds exactly that placement's CPUs, memory and GRES on each
 * node (-n 5 -N 2 holds 3 + 2 tasks). Starting now always goes through the
 * exact placement on the real node model.
 * At most bf_max_job_test jobs are examined, at most bf_max_job_user of one
 * user and bf_max_job_part of one partition (the others are left
 * NOT_EXAMINED, as Slurm skips them), and the run stops once
 * bf_max_job_start jobs have started. The work is cut into chunks
 * (loom_sched_bf_run's budget) so that the caller can yield to its event
 * loop between them; with bf_continue the caller keeps the same planner
 * (and its reservations) across chunks even when jobs ended meanwhile (the
 * profile is then conservative, never optimistic: the real node model is
 * what starts jobs), else it starts over.
 *
 * Entry points: loom_sched_bf_create, loom_sched_bf_run, loom_sched_bf_destroy,
 * loom_sched_bf_add_running,
 * loom_sched_backfill (all in one call), loom_sched_bf_earliest (a what-if:
 * --test-only).
 */
#ifndef LOOM_SCHED_BACKFILL_H
#define LOOM_SCHED_BACKFILL_H

#include "sched/pass.h"
#include "sched/resources.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define LOOM_SCHED_BF_NEVER INT64_MAX

typedef struct loom_sched_bf_opts {
    int64_t now;
    int64_t window;         /* seconds (bf_window); <= 0: one day */
    int64_t resolution;     /* seconds (bf_resolution); <= 0: 60 */
    uint32_t max_job_test;  /* bf_max_job_test; 0: 500 */
    uint32_t max_job_user;  /* bf_max_job_user: jobs examined per user; 0: no limit */
    uint32_t max_job_part;  /* bf_max_job_part: jobs examined per partition; 0: no limit */
    uint32_t max_job_start; /* bf_max_job_start: jobs started per run; 0: no limit */
    uint32_t nslots;        /* as in loom_sched_pass_opts_t */
} loom_sched_bf_opts_t;

typedef struct loom_sched_running {
    const loom_sched_alloc_t *alloc; /* borrowed */
    int64_t end;                     /* expected end; LOOM_SCHED_BF_NEVER: no limit */
} loom_sched_running_t;

typedef struct loom_sched_bf_result {
    loom_sched_verdict_t verdict; /* STARTED, NO_RESOURCES, NODES_UNAVAILABLE, BAD_REQUEST,
                                   * DUPLICATE, or NOT_EXAMINED */
    int64_t start;                /* STARTED: now; planned start; 0: none in the window */
    loom_sched_alloc_t alloc;     /* STARTED: applied, exact. Planned: its nodes only (cpu
                                   * counts, no ids). The caller finis it. */
} loom_sched_bf_result_t;

typedef struct loom_sched_bf loom_sched_bf_t;

/* A planner over the nodes and the running jobs (copied; nothing borrowed). */
loom_sched_bf_t *loom_sched_bf_create(const loom_sched_node_t *nodes, size_t nnodes,
                                      const loom_sched_running_t *running, size_t nrunning,
                                      const loom_sched_bf_opts_t *opts);
void loom_sched_bf_destroy(loom_sched_bf_t *bf);

/* Examine jobs[from..] until budget jobs were examined (0: no limit), every
 * job was, or bf_max_job_test is reached. results has njobs entries; entry i
 * is written when job i is examined (zero the array before the first call).
 * Started jobs are applied to nodes. Returns the index to continue from
 * (njobs when done). */
size_t loom_sched_bf_run(loom_sched_bf_t *bf, loom_sched_node_t *nodes, size_t nnodes,
                         const loom_sched_job_t *jobs, size_t njobs, size_t from, uint32_t budget,
                         loom_sched_bf_result_t *results);

/* A job started outside the planner (the main pass) while it is kept across
 * chunks: its allocation joins the profile until end. */
void loom_sched_bf_add_running(loom_sched_bf_t *bf, const loom_sched_node_t *nodes,
                               const loom_sched_alloc_t *a, int64_t end);

/* Jobs examined so far. */
uint32_t loom_sched_bf_tested(const loom_sched_bf_t *bf);

/* The whole backfill in one call (the simulator, tests). Returns the number
 * of jobs started. */
size_t loom_sched_backfill(loom_sched_node_t *nodes, size_t nnodes,
                           const loom_sched_running_t *running, size_t nrunning,
                           const loom_sched_job_t *jobs, size_t njobs,
                           const loom_sched_bf_opts_t *opts, loom_sched_bf_result_t *results);

/* When could job start given the planner's profile (running jobs and the
 * reservations made so far)? The planned start (now when it fits now) or
 * LOOM_SCHED_BF_NEVER; *nodes (may be NULL) gets the planned nodes, as
 * for a planned result. Changes nothing. */
int64_t loom_sched_bf_earliest(loom_sched_bf_t *bf, const loom_sched_node_t *nodes, size_t nnodes,
                               const loom_sched_job_t *job, loom_sched_alloc_t *where);

#endif
