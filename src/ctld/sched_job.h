/*
 * sched_job.h - a job's scheduling extras, beside job_desc.c's request
 * (CLI_SPEC §1 options, §13 partition keys; DESIGN.md §Scheduling).
 *
 * ctld_job_build_req() builds the basic request; ctld_sched_req_extend()
 * (called at its end) adds what src/sched knows beyond it, from the job's
 * fields and its submitted description (job->desc, messages.md §2):
 *  - --gpus-per-task ("tres_per_task" gres/gpu:N): N per task, on the nodes
 *    the tasks land on (not a per-job total);
 *  - --cpus-per-gpu ("cpus_per_gpu"), --mem-per-gpu ("memory_per_gpu"), and
 *    the partition's then the cluster's DefCpuPerGPU / DefMemPerGPU for a GPU
 *    job that gave no CPU or memory option;
 *  - -C with counts and brackets: the parsed constraint goes to the request
 *    (the per-node match stays in job->allowed);
 *  - --contiguous, and the partition's OverSubscribe (EXCLUSIVE: whole
 *    nodes; FORCE[:n]: CPUs shared by n jobs; YES[:n]: the same for jobs that
 *    asked --oversubscribe);
 *  - several partitions ("-p a,b"): each one the job may use (up, its time
 *    limit within MaxTime) with its own node mask and request copy, so the
 *    driver offers the job once per partition.
 * The extras also hold what the driver plans for a pending job: its
 * multifactor priority per partition, the planned start and nodes
 * (squeue --start), and the job record carries them (ctld_sched_rec_extra).
 *
 * Submission checks (ctld_sched_check_submit, from ctld_job_check_fit):
 * AllowGroups ("User's group not permitted to use this partition") and
 * AllowAccounts ("Job's account not permitted to use this partition (p
 * allows a not b)"); root and SlurmUser are exempt, as in Slurm.
 *
 * Ownership: job->sx is owned by the job (ctld_sched_job_free from
 * ctld_job_free); the request points into it.
 */
#ifndef LOOM_CTLD_SCHED_JOB_H
#define LOOM_CTLD_SCHED_JOB_H

#include "ctld/ctld.h"

typedef struct ctld_sched_job {
    loom_constraint_t *cons;   /* -C when it has counts or brackets, else NULL */
    loom_gres_list_t gpt_list; /* --gpus-per-task parsed (the request's type points into it) */
    ctld_part_t **parts;       /* partitions to offer the job in, job->part first */
    size_t nparts;
    loom_sched_req_t *preq; /* per parts[k], k >= 1: the request with that partition's mask */
    bool **pmask;
    uint32_t *pprio; /* per parts[k]: multifactor priority (0: use job->priority) */
    int64_t prio_time;
    uint32_t prio_seen; /* job->priority when computed: another change forces a recompute */
    int32_t nice_seen;
    int32_t site_seen;
    bool oversubscribe; /* --oversubscribe */
    int64_t deadline;   /* --deadline (0: none) */
    int64_t planned;    /* planned start while pending (0: none) */
    uint64_t plan_run;  /* the backfill pass that planned it */
    char *sched_nodes;  /* planned nodes (squeue %Y) */
    int64_t bf_eval;    /* when backfill last looked at it (LastSchedEval; 0: never) */
    bool bf_started;    /* backfill started it (scontrol's Scheduler=Backfill) */
    char *policy_why;   /* the last partition-policy reason (job->reason may point here) */
} ctld_sched_job_t;

/* Called at the end of ctld_job_build_req (job_desc.c). */
int ctld_sched_req_extend(ctld_t *c, ctld_job_t *job, loom_err_t *err);
/* Called from ctld_job_free. Accepts a job without extras. */
void ctld_sched_job_free(ctld_job_t *job);
/* AllowGroups at submission (job->uid, job->gid): root and admins pass. */
int ctld_sched_check_submit(ctld_t *c, const ctld_job_t *job, loom_err_t *err);
/* AllowAccounts, DenyAccounts, AllowQos, DenyQos of a partition, checked
 * each pass as slurmctld 22.05 does (a job is accepted and pends; root is
 * not exempt): false with why set to Slurm's reason, "Job's account not
 * permitted to use this partition (p allows a not b)", "... (p denies b
 * including b)", "Job's QOS not permitted ...", or without accounting
 * (no associations) "Job's account not known, so it can't use this
 * partition (p allows a)" for an AllowAccounts list. */
bool ctld_sched_part_policy_ok(const ctld_t *c, const ctld_job_t *job, const ctld_part_t *part,
                               char *why, size_t len);
/* Make why the job's pending reason (kept in its extras: reasons are not copied). */
void ctld_sched_set_policy_reason(ctld_job_t *job, const char *why);
/* Fields of a job.info record (not of FULL ones): the partitions of a pending
 * job ("a,b"), its planned start and nodes. */
void ctld_sched_rec_extra(const ctld_t *c, const ctld_job_t *job, json_t *rec, bool full);

/* The request of the job in its k-th partition. */
const loom_sched_req_t *ctld_sched_job_req(const ctld_job_t *job, size_t k);
/* Record a planned start (0: none) and its nodes (may be NULL); touches the
 * job's cached record when they change. */
void ctld_sched_job_plan(ctld_t *c, ctld_job_t *job, int64_t start, const char *nodes);

#endif
