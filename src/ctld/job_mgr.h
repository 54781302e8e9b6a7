/*
 * job_mgr.h - the controller's job table (CLI_SPEC §0.5, §5).
 *
 * Jobs are found by id through an open-addressing hash, and listed through
 * four arrays: all jobs, pending, running (RUNNING or SUSPENDED, or holding an
 * allocation while COMPLETING) and done (terminal, kept for MinJobAge). Each
 * lookup is O(1) and each insert/remove amortised O(1), so a submission never
 * costs time proportional to the queue.
 *
 * Ids: FirstJobId up to MaxJobId, then back to FirstJobId, skipping ids still
 * in use (Slurm's rule; an array's master id stays in use while any of its
 * tasks does). The array bookkeeping of job_array.h follows every insert,
 * refile and purge. Priority/basic: each new job gets one less than the
 * previous one, starting below 0xffff0000 as Slurm does.
 *
 * Entry points: ctld_jobs_init/_fini, ctld_job_find, ctld_jobs_insert,
 * ctld_jobs_purge, ctld_jobs_next_id, ctld_jobs_refile, ctld_job_new,
 * ctld_job_free, ctld_job_touch, ctld_job_set_reason, ctld_job_alloc_*.
 */
#ifndef LOOM_CTLD_JOB_MGR_H
#define LOOM_CTLD_JOB_MGR_H

#include "ctld/ctld.h"

/* Which of the arrays by state holds a job (ctld_job_t.list). */
enum { CTLD_LIST_NONE = 0, CTLD_LIST_PENDING, CTLD_LIST_RUNNING, CTLD_LIST_DONE };

/* Slurm's priority/basic starting point (TOP_PRIORITY). */
#define CTLD_PRIO_TOP 0xffff0000u

void ctld_jobs_init(ctld_t *c);
/* Free every job. */
void ctld_jobs_fini(ctld_t *c);

ctld_job_t *ctld_job_find(const ctld_t *c, uint32_t id);
/* Add a job (its id unused) and file it by state. */
void ctld_jobs_insert(ctld_t *c, ctld_job_t *job);
/* Remove and free a job (its allocation must be released already). */
void ctld_jobs_purge(ctld_t *c, ctld_job_t *job);
/* Move a job between the pending/running/done arrays after its state changed. */
void ctld_jobs_refile(ctld_t *c, ctld_job_t *job, uint32_t old_state);

/* The id the next submission gets; 0 and -LOOM_EJOB_LIMIT in err when every
 * id is taken or MaxJobCount is reached. Does not consume it. */
uint32_t ctld_jobs_next_id(const ctld_t *c, loom_err_t *err);
/* Note that id was used: the next one follows it (wrapping). */
void ctld_jobs_advance_id(ctld_t *c, uint32_t id);

ctld_job_t *ctld_job_new(void);
void ctld_job_free(ctld_job_t *job);
/* The job changed: drop its cached record. */
void ctld_job_touch(ctld_job_t *job);
void ctld_job_set_reason(ctld_job_t *job, const char *reason);
/* Slurm's reason names as static strings: the known one equal to s, else "None". */
const char *ctld_reason_intern(const char *s);

/* Reasons with a text longer than a name (Slurm prints these as they are). */
#define CTLD_REASON_NODES_DOWN                                                                     \
    "Nodes required for job are DOWN, DRAINED or reserved for jobs in higher priority partitions"
#define CTLD_REASON_LAUNCH_FAILED "launch failed requeued held"

/* Apply / release the job's allocation to the node model (idempotent). */
int ctld_job_alloc_apply(ctld_t *c, ctld_job_t *job);
void ctld_job_alloc_release(ctld_t *c, ctld_job_t *job);

/* Steps (defined in step_mgr.c, which owns step records). */
ctld_step_t *ctld_job_step_find(const ctld_job_t *job, uint32_t step_id);
void ctld_job_step_add(ctld_job_t *job, ctld_step_t *step);
void ctld_job_step_remove(ctld_job_t *job, uint32_t step_id);
void ctld_step_free(ctld_step_t *s);

#endif
