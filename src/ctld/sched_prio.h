/*
 * sched_prio.h - job priorities for the controller: priority/basic (each new
 * job one less than the last, as before) or priority/multifactor through
 * src/sched/priority.h, and the job.prio request behind sprio
 * (docs/proto/messages.md §3; CLI_SPEC §13 Priority* keys).
 *
 * Multifactor: a pending job's priority is computed per partition it may
 * run in, at submission and then again every PriorityCalcPeriod (as
 * slurmctld does), or at once when something changed it (nice, release, a
 * move to another partition). A priority an administrator set (--priority,
 * scontrol update Priority=) is kept: such jobs have prio_base != 0, the
 * others prio_base == 0. Factors: age since the job became eligible (held,
 * dependent and begin-time jobs do not age), job size over the whole
 * cluster, the partition's PriorityJobFactor over the largest one, the TRES
 * of PriorityWeightTRES over the partition's totals; QOS and association
 * from accounting where it feeds them, fair-share from the job's
 * association's fair-tree factor (sched_fairshare.h); each 0 without it.
 *
 * PriorityFlags (all 22.05 words are parsed; a bad word is logged and the
 * line ignored): SMALL_RELATIVE_TO_TIME and NO_NORMAL_PART / _QOS / _TRES /
 * _ALL change the factors as slurmctld 22.05 does (sched/priority.h; the
 * association factor is 0 either way), MAX_TRES the billing
 * (sched_fairshare.c), ACCRUE_ALWAYS the age (from the submission, holds,
 * dependencies and begin times included), INCR_ONLY the updates (a pending
 * job's priority never decreases). CALCULATE_RUNNING, NO_FAIR_TREE and
 * DEPTH_OBLIVIOUS are accepted and not honoured: running jobs keep the
 * priority they started with, fair-share is always fair-tree.
 *
 * The site factor: scontrol update job SiteFactor=N (administrators; |N|
 * <= 2147483645, scontrol refuses more) is added to the priority at once
 * and shown in sprio's SITE column (PrioritySiteFactorPlugin is not used).
 *
 * job.prio (user role): {job_ids?, users?, partitions?} -> {"jobs": [...],
 * "weights": {...}}: one entry per pending job and partition with the
 * normalised factors; sprio weights them itself.
 *
 * Entry points: ctld_sched_prio_init/_fini, ctld_sched_multifactor,
 * ctld_sched_prio_base, ctld_sched_initial_prio, ctld_sched_prio_update,
 * ctld_sched_prio_of, ctld_sched_prio_handlers.
 */
#ifndef LOOM_CTLD_SCHED_PRIO_H
#define LOOM_CTLD_SCHED_PRIO_H

#include "ctld/ctld.h"
#include "ctld/dispatch.h"

/* Read the Priority* keys (and partitions' totals) from c->conf. */
void ctld_sched_prio_init(ctld_t *c);
void ctld_sched_prio_fini(ctld_t *c);
bool ctld_sched_multifactor(const ctld_t *c);

/* prio_base for a new job without an admin priority: the next basic
 * priority, or 0 (computed) under multifactor. */
uint32_t ctld_sched_prio_base(ctld_t *c);
/* The priority a new job starts with (not held). */
uint32_t ctld_sched_initial_prio(ctld_t *c, ctld_job_t *job, int64_t now);
/* Recompute a pending job's priorities when due (multifactor only). */
void ctld_sched_prio_update(ctld_t *c, ctld_job_t *job, int64_t now);
/* The job's priority in its k-th partition (sched_job.h). */
uint32_t ctld_sched_prio_of(const ctld_job_t *job, size_t k);

/* The fair-share factor of a job's association, in [0, 1] (fair tree,
 * sched_fairshare.h); 0 without accounting or an association, Slurm's value,
 * which orders no job before another. */
double ctld_sched_prio_fairshare(const ctld_t *c, const ctld_job_t *job);

extern const ctld_handler_t ctld_sched_prio_handlers[];

#endif
