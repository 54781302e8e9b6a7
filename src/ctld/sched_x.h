/*
 * sched_x.h - the scheduler's state beyond ctld_sched_t (the driver's own
 * fields): priority settings and backfill settings and progress. Created by
 * ctld_sched_init, freed by ctld_sched_fini; c->sched.x points to it.
 * Used by sched_driver.c, sched_prio.c and sched_bf.c only.
 */
#ifndef LOOM_CTLD_SCHED_X_H
#define LOOM_CTLD_SCHED_X_H

#include "ctld/ctld.h"
#include "sched/backfill.h"
#include "sched/priority.h"

typedef struct ctld_bf_run ctld_bf_run_t;

typedef struct ctld_sched_x {
    /* priority (sched_prio.c) */
    bool multifactor;
    loom_sched_prio_conf_t prio;
    double max_job_factor;
    uint64_t *part_mem, *part_gpus, *part_nodes; /* per partition totals */
    int64_t calc_period;                         /* seconds */
    struct ctld_fairshare *fs;                   /* sched_fairshare.c: usage, factors (owned) */
    /* backfill (sched_bf.c): SchedulerType, SchedulerParameters */
    bool backfill;
    int64_t bf_interval, bf_window, bf_resolution; /* seconds */
    uint32_t bf_max_job_test;
    uint32_t bf_max_job_user, bf_max_job_part, bf_max_job_start; /* 0: no limit */
    bool bf_continue;
    int64_t bf_min_age_reserve; /* seconds; 0: every job may reserve */
    uint64_t bf_yield_ns;       /* work per loop turn (bf_yield_interval) */
    uint64_t bf_yield_sleep_ms; /* pause between chunks (bf_yield_sleep) */
    uv_timer_t *bf_timer;       /* its own allocation: freed by its close callback */
    ctld_bf_run_t *bf;          /* the backfill pass in progress, or NULL */
    uint64_t epoch;             /* counts resource releases: a pass without bf_continue restarts */
    uint64_t bf_runs, bf_started;
    uint32_t next_slot;
} ctld_sched_x_t;

#endif
