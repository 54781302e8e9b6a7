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
 * Limits come from the job's QOS first, then the user's association, then
 * its parents (Grp limits at every level). Per-job limits: MaxWall, MaxTRES,
 * MaxTRESPerNode. Not enforced yet: the TRES-minutes limits (GrpTRESMins,
 * MaxTRESMins, GrpTRESRunMins: what "safe" guards) and GrpWall.
 *
 * Pure part (unit tested): ctld_policy_check over a ctld_policy_in_t.
 *
 * Entry points: ctld_policy_submit, ctld_policy_update, ctld_policy_filter, ctld_policy_qos_norm,
 * ctld_policy_check, ctld_policy_job_tres.
 */
#ifndef LOOM_CTLD_ASSOC_POLICY_H
#define LOOM_CTLD_ASSOC_POLICY_H

#include "ctld/assoc_mgr.h"
#include "ctld/ctld.h"
#include "sched/pass.h"

/* Usage of one scope (an association's subtree, a QOS, a user in a QOS). */
typedef struct ctld_policy_use {
    int64_t jobs;     /* running (or, for submit limits, pending + running) */
    ctld_tres_t tres; /* of the running jobs */
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
} ctld_policy_in_t;

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
/* Drop the entries (sorted, as a pass sees them) whose jobs would go over a
 * limit, setting their reasons when set_reason; returns the new count.
 * Entries of one offer share a slot (< nslots). */
size_t ctld_policy_filter(ctld_t *c, loom_sched_job_t *v, size_t n, size_t nslots, bool set_reason);
/* The job's QOS priority over the largest QOS priority, in [0, 1]. */
double ctld_policy_qos_norm(const ctld_t *c, const ctld_job_t *job);

#endif
