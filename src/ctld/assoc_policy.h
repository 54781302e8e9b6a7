/*
 * assoc_policy.h - AccountingStorageEnforce: associations, QOS and their
 * limits applied to jobs (Slurm 22.05's acct_policy; issue 7).
 *
 * At submission (ctld_policy_submit, from ctld_job_check_fit): the job's
 * account (the user's default when none) and QOS (--qos, else the
 * association's DefaultQOS, else its only QOS, else "normal") are filled in
 * as squeue shows them; with "associations" a job without an association is
 * rejected ("Invalid account or account/partition combination specified"),
 * with "qos" a QOS the association may not use is ("Invalid qos
 * specification"); with "limits" MaxSubmitJobs / GrpSubmitJobs /
 * MaxSubmitJobsPerUser|Account reached rejects it ("Job violates
 * accounting/QOS policy ..."), and so does a per-job limit (MaxWall,
 * MaxTRES) it can never meet when its QOS has DenyOnLimit. Without
 * DenyOnLimit such a job is accepted and pends with the limit's reason, as
 * on Slurm. A job that gives no time limit gets the MaxWall in force.
 *
 * While pending (ctld_policy_filter, over a pass's sorted entries): a job
 * that would go over a limit keeps pending with Slurm's reason name
 * (QOSGrpJobsLimit, QOSMaxJobsPerUserLimit, MaxJobsPerAccount, AssocMaxJobsLimit,
 * AssocGrpJobsLimit, AssocGrpCpuLimit, AssocGrpGRES, ...). Usage counts the
 * running jobs: Grp* over the association's whole subtree, the QOS's
 * MaxTRESPerUser / MaxJobsPerUser over the user's jobs in that QOS; jobs
 * admitted earlier in the same pass count too, so one pass cannot overshoot.
 * Limits come from the job's QOS and its partition's QOS (slurm.conf
 * PartitionName=... QOS=name; the partition's first unless the job's QOS has
 * OverPartQOS: a limit the first sets is not read from the second), then the
 * user's association, then its parents (Grp limits at every level; an
 * association limit that either QOS sets is skipped). Per-job limits:
 * MaxWall, MaxTRES, MaxTRESPerNode, MaxTRESMins (time limit x TRES).
 *
 * Usage limits, as slurmctld 22.05's acct_policy: GrpTRESMins compares the
 * fair-share code's decayed usage (sched_fairshare.h; TRES-seconds / 60,
 * cpu, mem, node, billing, gres/gpu; none without priority/multifactor) and
 * GrpWall its decayed wall-clock time; a job waits once the usage reached
 * the limit. With "safe" it also waits unless its time limit x TRES plus
 * what the running jobs may still use (to their time limits) fits in what is
 * left, and unless used wall + its time limit fits GrpWall. GrpTRESRunMins:
 * the running jobs' remaining TRES-minutes plus the job's. Without "safe" a
 * running job is timed out (TIMEOUT, reason TimeLimit) once its QOS's or
 * association's GrpTRESMins / GrpWall usage reached the limit, or its own
 * elapsed minutes x TRES reached MaxTRESMins (ctld_policy_time_out, called
 * with the time limits in job_ops.c); with "safe" it runs to its limit.
 *
 * At submission, when either QOS has DenyOnLimit (or the job has none), a
 * job whose time limit x TRES passes a GrpTRESMins, GrpTRESRunMins or
 * MaxTRESMins, or whose time limit passes a GrpWall, is rejected; a job
 * without a time limit of its own gets the largest that fits them, and the
 * least GrpWall / MaxWall in force in any case.
 *
 * Pure part (unit tested): ctld_policy_check over a ctld_policy_in_t,
 * ctld_policy_qos_order.
 *
 * Entry points: ctld_policy_submit, ctld_policy_update, ctld_policy_filter, ctld_policy_qos_norm,
 * ctld_policy_check, ctld_policy_qos_order, ctld_policy_job_tres, ctld_policy_usage_new,
 * ctld_policy_time_out, ctld_policy_usage_free.
 */
#ifndef LOOM_CTLD_ASSOC_POLICY_H
#define LOOM_CTLD_ASSOC_POLICY_H

#include "ctld/assoc_mgr.h"
#include "ctld/ctld.h"
#include "sched/pass.h"

/* Usage of one scope (an association's subtree, a QOS, a user in a QOS). */
typedef struct ctld_policy_use {
    int64_t jobs;          /* running (or, for submit limits, pending + running) */
    ctld_tres_t tres;      /* of the running jobs */
    ctld_tres_t run_secs;  /* TRES-seconds the running jobs may still use (to their limits) */
    ctld_tres_t used_secs; /* decayed usage in TRES-seconds (GrpTRESMins) */
    int64_t wall_secs;     /* decayed wall-clock usage in seconds (GrpWall) */
} ctld_policy_use_t;

/* Everything one check looks at. Usage pointers may be NULL (none yet). */
typedef struct ctld_policy_in {
    const ctld_qos_t *qos;                     /* NULL: no QOS limits */
    const ctld_assoc_t *assoc;                 /* the job's association; its parents are read too */
    const ctld_policy_use_t *const *assoc_use; /* by assoc->idx (subtree usage) */
    const ctld_policy_use_t *qos_use;          /* the whole QOS */
    const ctld_policy_use_t *qos_user_use;     /* this user in this QOS */
    const ctld_policy_use_t *qos_acct_use;     /* this account in this QOS */
    const ctld_tres_t *job;                    /* the job's TRES */
    int64_t time_limit;                        /* minutes, -1 infinite */
    /* The second QOS (ctld_policy_qos_order), its usage as the first's. */
    const ctld_qos_t *qos2;
    const ctld_policy_use_t *qos2_use, *qos2_user_use, *qos2_acct_use;
    bool safe; /* AccountingStorageEnforce=safe */
} ctld_policy_in_t;

/* Which QOS's limits come first: the partition's, unless the job's has
 * OverPartQOS; *second is NULL when there is one QOS (or both are the same). */
void ctld_policy_qos_order(const ctld_qos_t *job_qos, const ctld_qos_t *part_qos,
                           const ctld_qos_t **first, const ctld_qos_t **second);

/* The reason the job cannot start under the limits now, or NULL. *never is
 * set when it is a per-job limit that no amount of waiting frees. */
const char *ctld_policy_check(const ctld_policy_in_t *in, bool *never);
/* The job's TRES: cpu, mem (MiB), node, gres/<name>[:<type>] (allocated
 * when running, else requested). */
void ctld_policy_job_tres(const ctld_job_t *job, ctld_tres_t *out);

/* Submission: fill account and QOS, reject what the enforcement rejects. */
int ctld_policy_submit(ctld_t *c, ctld_job_t *job, loom_err_t *err);
/* scontrol update of a pending job's Account, QOS or Partition: the new
 * combination must have an association, and its QOS must exist and (unless
 * an administrator asks, as slurmctld allows) be one the association may use. */
int ctld_policy_update(ctld_t *c, const ctld_job_t *job, bool admin, loom_err_t *err);
/* scontrol update QOS=/Account= without AccountingStorageEnforce: a QOS that
 * does not exist, or an account without an association for the job's user
 * and partition, is dropped from `set` (slurmctld 22.05 answers 0 and keeps
 * the job's). */
void ctld_policy_drop_unknown(ctld_t *c, const ctld_job_t *job, json_t *set);
/* Drop the entries (sorted, as a pass sees them) whose jobs would go over a
 * limit, setting their reasons when set_reason; returns the new count.
 * Entries of one offer share a slot (< nslots). */
size_t ctld_policy_filter(ctld_t *c, loom_sched_job_t *v, size_t n, size_t nslots, bool set_reason);
/* Running jobs over a usage limit (slurmctld's acct_policy_job_time_out):
 * usage gathered once (NULL when nothing can time a job out: no "limits",
 * "safe" set, or no GrpTRESMins / GrpWall / MaxTRESMins), then per job the
 * limit it reached ("GrpTRESMins", "GrpWall", "MaxTRESMins"), or NULL. */
typedef struct ctld_policy_usage ctld_policy_usage_t;
ctld_policy_usage_t *ctld_policy_usage_new(ctld_t *c, int64_t now);
const char *ctld_policy_time_out(ctld_policy_usage_t *pu, const ctld_job_t *job, int64_t now);
void ctld_policy_usage_free(ctld_policy_usage_t *pu);

/* The job's QOS priority over the largest QOS priority, in [0, 1]. */
double ctld_policy_qos_norm(const ctld_t *c, const ctld_job_t *job);

#endif
