/*
 * priority.h - Slurm's multifactor job priority (priority/multifactor), pure.
 *
 * priority = age * PriorityWeightAge + assoc * PriorityWeightAssoc
 *          + fairshare * PriorityWeightFairshare + size * PriorityWeightJobSize
 *          + partition * PriorityWeightPartition + qos * PriorityWeightQOS
 *          + sum(tres_i * PriorityWeightTRES_i) + site - nice
 * truncated to an integer, at least 1 (0 is reserved for held jobs), as
 * slurmctld 22.05 computes it. The factors (each in [0, 1] unless a
 * PriorityFlags NO_NORMAL_* flag says otherwise):
 *  - age: time since the job became eligible over PriorityMaxAge (1 beyond);
 *    0 while it is not eligible (held, dependency, begin time);
 *  - job size: (min_nodes / cluster nodes + CPUs / cluster CPUs) / 2, or with
 *    PriorityFavorSmall ((nodes - min_nodes) / nodes + (cpus - CPUs) / cpus) / 2;
 *  - partition: the partition's PriorityJobFactor over the largest one;
 *  - qos, assoc: the caller's normalised values (0 without accounting);
 *  - fair-share: the caller's input from the accounting issue; 0 when there
 *    is none, which is what Slurm uses for a job without an association, so
 *    the factor is neutral (the same for every job) until it is fed;
 *  - tres: per PriorityWeightTRES entry, the job's count of that TRES over the
 *    partition's total (the caller computes the ratios).
 *
 *
 * PriorityFlags (loom_sched_prio_parse_flags takes every 22.05 word):
 *  - SMALL_RELATIVE_TO_TIME: job size = (min_nodes / cluster nodes) over the
 *    time limit in minutes (0 without a limit), as sprio 22.05 shows it
 *    (CPUs do not count; PriorityFavorSmall is then not used);
 *  - NO_NORMAL_PART / _QOS / _ASSOC / _TRES (and NO_NORMAL_ALL): that factor
 *    is the raw value (the partition's PriorityJobFactor, the QOS's or
 *    association's priority, the job's TRES count), not normalised;
 *  - CALCULATE_RUNNING, MAX_TRES, NO_FAIR_TREE, DEPTH_OBLIVIOUS, INCR_ONLY,
 *    ACCRUE_ALWAYS are parsed and kept in flags for the caller (the
 *    controller honours MAX_TRES, ACCRUE_ALWAYS and INCR_ONLY; see
 *    sched_prio.h).
 *
 * Entry points: loom_sched_prio_parse_tres, loom_sched_prio_parse_flags,
 * loom_sched_prio_compute.
 * Checked against sprio on slurmctld 22.05 (see tests/unit/test_sched_prio.c).
 */
#ifndef LOOM_SCHED_PRIORITY_H
#define LOOM_SCHED_PRIORITY_H

#include "common/err.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define LOOM_SCHED_MAX_TRES 16

/* PriorityFlags */
enum {
    LOOM_PRIO_ACCRUE_ALWAYS = 1u << 0,
    LOOM_PRIO_CALCULATE_RUNNING = 1u << 1,
    LOOM_PRIO_DEPTH_OBLIVIOUS = 1u << 2,
    LOOM_PRIO_NO_FAIR_TREE = 1u << 3,
    LOOM_PRIO_INCR_ONLY = 1u << 4,
    LOOM_PRIO_MAX_TRES = 1u << 5,
    LOOM_PRIO_NO_NORMAL_ASSOC = 1u << 6,
    LOOM_PRIO_NO_NORMAL_PART = 1u << 7,
    LOOM_PRIO_NO_NORMAL_QOS = 1u << 8,
    LOOM_PRIO_NO_NORMAL_TRES = 1u << 9,
    LOOM_PRIO_SMALL_RELATIVE_TO_TIME = 1u << 10,
    LOOM_PRIO_NO_NORMAL_ALL = LOOM_PRIO_NO_NORMAL_ASSOC | LOOM_PRIO_NO_NORMAL_PART |
                              LOOM_PRIO_NO_NORMAL_QOS | LOOM_PRIO_NO_NORMAL_TRES,
};

/* One PriorityWeightTRES entry: "GRES/gpu=3000" gives name "gres/gpu"
 * (lower case) and text "GRES/gpu" (as written, for sprio -w). */
typedef struct loom_sched_tres_weight {
    char name[48];
    char text[48];
    double weight;
} loom_sched_tres_weight_t;

typedef struct loom_sched_prio_conf {
    uint32_t w_age, w_assoc, w_fairshare, w_job_size, w_partition, w_qos;
    loom_sched_tres_weight_t tres[LOOM_SCHED_MAX_TRES];
    size_t ntres;
    int64_t max_age; /* seconds (PriorityMaxAge); <= 0: 7 days */
    bool favor_small;
    uint32_t flags;         /* LOOM_PRIO_* (PriorityFlags) */
    uint32_t cluster_nodes; /* every node of slurm.conf */
    uint64_t cluster_cpus;
} loom_sched_prio_conf_t;

typedef struct loom_sched_prio_job {
    int64_t now;
    int64_t eligible_time; /* 0: not eligible yet */
    uint32_t min_nodes;
    uint64_t cpus;
    double part_norm; /* PriorityJobFactor / max PriorityJobFactor */
    double qos_norm, assoc_norm, fairshare;
    int64_t time_limit; /* minutes; <= 0: none (SMALL_RELATIVE_TO_TIME) */
    /* Raw values for the NO_NORMAL_* flags. */
    double part_raw, qos_raw, assoc_raw;
    double tres_raw[LOOM_SCHED_MAX_TRES];
    int64_t site; /* admin site factor */
    int32_t nice;
    double tres_norm[LOOM_SCHED_MAX_TRES]; /* per conf tres entry */
} loom_sched_prio_job_t;

typedef struct loom_sched_prio_factors {
    /* normalised, in [0, 1] */
    double age, assoc, fairshare, job_size, partition, qos;
    double tres[LOOM_SCHED_MAX_TRES];
    size_t ntres;
    uint32_t priority;
} loom_sched_prio_factors_t;

/* Parse PriorityWeightTRES ("CPU=1000,Mem=2000,GRES/gpu=3000"; NULL or ""
 * gives none). -EINVAL with the bad entry quoted in err. */
int loom_sched_prio_parse_tres(const char *s, loom_sched_prio_conf_t *conf, loom_err_t *err);

/* Parse PriorityFlags ("SMALL_RELATIVE_TO_TIME,NO_NORMAL_PART"; any case;
 * NULL or "" gives none). -EINVAL with the bad word quoted in err; *flags
 * untouched then. */
int loom_sched_prio_parse_flags(const char *s, uint32_t *flags, loom_err_t *err);

/* The factors and the priority of one job in one partition. */
void loom_sched_prio_compute(const loom_sched_prio_conf_t *conf, const loom_sched_prio_job_t *job,
                             loom_sched_prio_factors_t *out);

#endif
