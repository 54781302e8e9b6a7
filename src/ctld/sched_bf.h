/*
 * sched_bf.h - the controller's backfill: SchedulerType=sched/backfill runs
 * src/sched/backfill.h on a timer (DESIGN.md §Scheduling; CLI_SPEC §13
 * SchedulerParameters).
 *
 * Every bf_interval seconds (default 30) a backfill pass starts: a planner
 * from the running jobs (expected end = start + time limit), then the
 * eligible pending jobs in priority order (PriorityTier, priority, submit
 * time; a job once per partition it may use), at most bf_max_job_test
 * (default 500) of them, at most bf_max_job_user of one user and
 * bf_max_job_part of one partition, stopping after bf_max_job_start have
 * started (no limits by default), looking bf_window minutes ahead (default 1440) at
 * bf_resolution seconds (default 60). Jobs that fit now without delaying any
 * reservation start; the others get a planned start and nodes (squeue
 * --start). The pass works in chunks and yields to the event loop once a
 * chunk has used its time budget (bf_yield_interval microseconds; default
 * CTLD_BF_BUDGET_MS, not Slurm's 2 s: this loop serves requests too) and
 * goes on after bf_yield_sleep microseconds (default 0, not Slurm's 0.5 s);
 * meanwhile, jobs the main pass starts join the planner's profile. When
 * resources are released meanwhile, bf_continue goes on with the same plan,
 * else the pass ends there (the next one starts afresh). A job pending for
 * less than bf_min_age_reserve seconds reserves nothing, here and in the
 * main pass (it blocks no lower-priority job; loom_sched_job_t.no_reserve).
 * Other SchedulerParameters (bf_max_job_part, bf_max_job_user,
 * bf_max_job_start, bf_busy_nodes, ...) are accepted and not used.
 * sched/builtin: no backfill.
 *
 * --test-only asks ctld_bf_when: the earliest start over the job's
 * partitions, from the running jobs alone.
 *
 * Entry points: ctld_bf_init/_fini, ctld_bf_run_now, ctld_bf_job_started,
 * ctld_bf_released, ctld_bf_when.
 */
#ifndef LOOM_CTLD_SCHED_BF_H
#define LOOM_CTLD_SCHED_BF_H

#include "ctld/ctld.h"

#define CTLD_BF_BUDGET_MS 20 /* work per loop turn before yielding */
#define CTLD_BF_CHUNK     25 /* jobs per step between clock checks */

/* Read SchedulerType/SchedulerParameters and start the timer. */
void ctld_bf_init(ctld_t *c);
void ctld_bf_fini(ctld_t *c);
/* Start a backfill pass now unless one is running (tests, scontrol). */
void ctld_bf_run_now(ctld_t *c);
/* A job started outside the backfill pass (its allocation joins the plan). */
void ctld_bf_job_started(ctld_t *c, const ctld_job_t *job);
/* Resources were released. */
void ctld_bf_released(ctld_t *c);
/* When the job could start (now when it fits now), in which of its
 * partitions (*k), on which nodes (*where, caller finis); 0 when never. */
int64_t ctld_bf_when(ctld_t *c, ctld_job_t *job, size_t *k, loom_sched_alloc_t *where);

#endif
