/*
 * bench.h - loom-sim bench: times one scheduling pass and one backfill pass
 * of src/sched on a large synthetic cluster (DESIGN.md §Scheduling targets:
 * 10,000 nodes and 100,000 pending jobs, a pass under 100 ms, backfill
 * under 1 s).
 *
 * The cluster: nodes of 64 CPUs (2 sockets), 8 GPUs (4 local to each
 * socket's CPUs) and 1 TiB. It is filled to about 95% of its GPUs with
 * running jobs of mixed shapes, then the pending queue gets jobs of mixed
 * shapes (1, 2, 4, 8 GPUs on one node; 16 GPUs on 2 nodes; 64 on 8; CPU-only
 * jobs) with random priorities and limits. Timed: the sort plus one main
 * pass; one backfill pass (planner built from the running jobs, then
 * bf_max_job_test jobs examined); the same backfill with every job examined.
 * Memory: the process's peak RSS, and the node model's own bytes.
 *
 * Entry point: loom_sim_bench (prints a table to stdout; the clock is read
 * here, never in src/sched).
 */
#ifndef LOOM_SIM_BENCH_H
#define LOOM_SIM_BENCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct loom_sim_bench_opts {
    uint32_t nodes;
    const size_t *jobs; /* pending queue sizes to try */
    size_t njobs;
    uint32_t bf_max_job_test; /* 0: 500 */
    uint64_t seed;
    double busy;     /* share of GPUs running at the start (0.95) */
    bool node_range; /* pending multi-node jobs ask -N k-(k+1) */
} loom_sim_bench_opts_t;

int loom_sim_bench(const loom_sim_bench_opts_t *o);

#endif
