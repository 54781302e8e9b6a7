/*
 * sim.h - replays a trace through src/sched in virtual time (loom-sim).
 *
 * The cluster is N identical nodes (CPUs, GPUs with device indices, memory).
 * Events are submissions and job ends (a job runs its trace run time, not its
 * limit); after each event the policy runs:
 *  - fifo: one pass in submit order; the first job that does not fit blocks
 *    the queue (strict FIFO);
 *  - priority: multifactor priority (PriorityWeightAge=1000 with
 *    PriorityMaxAge=1 day, PriorityWeightJobSize=1000), one main pass;
 *  - backfill: the same, then a backfill pass (loom_sched_bf_*) with the
 *    given bf_window / bf_resolution / bf_max_job_test, using job limits as
 *    durations.
 * A job whose request no node set could ever hold is counted as skipped.
 *
 * Figures: mean and p95 wait (start - submit), mean bounded slowdown
 * max(1, (wait + run) / max(run, 10 s)), CPU and GPU utilisation (busy over
 * capacity from the first submission to the last end), makespan (the same
 * span), and GPU fragmentation: the share of GPU capacity-time that was idle
 * while a waiting job asked for no more GPUs than were idle in all.
 *
 * Entry points: loom_sim_run, loom_sim_policy_name, loom_sim_policy_parse.
 */
#ifndef LOOM_SIM_SIM_H
#define LOOM_SIM_SIM_H

#include "sim/trace.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef enum {
    LOOM_SIM_FIFO = 0,
    LOOM_SIM_PRIORITY,
    LOOM_SIM_BACKFILL,
    LOOM_SIM_NPOLICY
} loom_sim_policy_t;

typedef struct loom_sim_opts {
    uint32_t nodes, cpus, gpus; /* cpus and gpus per node */
    uint64_t mem;               /* MiB per node; 0: memory not tracked */
    loom_sim_policy_t policy;
    int64_t bf_window, bf_resolution; /* seconds; 0: Slurm's defaults */
    uint32_t bf_max_job_test;
} loom_sim_opts_t;

typedef struct loom_sim_result {
    size_t jobs, skipped;
    double mean_wait, p95_wait, mean_bsld; /* seconds, seconds, ratio */
    double util_cpu, util_gpu;             /* 0..1 */
    int64_t makespan;                      /* seconds */
    double gpu_frag;                       /* 0..1 */
    uint64_t passes, backfill_starts;
} loom_sim_result_t;

int loom_sim_run(const loom_sim_trace_t *t, const loom_sim_opts_t *o, loom_sim_result_t *out);
const char *loom_sim_policy_name(loom_sim_policy_t p);
/* -1 when unknown. */
int loom_sim_policy_parse(const char *s);

#endif
