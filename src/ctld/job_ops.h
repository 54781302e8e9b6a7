/*
 * job_ops.h - what happens to running jobs: completion, cancel, signals,
 * time limits, node failure, requeue, hold/release, MinJobAge purge
 * (docs/proto/job-states.md; CLI_SPEC §0.10, §5, §6, §9).
 *
 * Every state change goes through ctld_job_event() (journal, then apply);
 * messages to loomd (job.kill) go out after the commit. A job that ends while
 * running keeps its allocation (COMPLETING) until its node reports the end
 * (job.complete) or is known dead; then epilog_done releases the resources.
 *
 *  - completion: exit status 0 -> COMPLETED, else FAILED (reason
 *    NonZeroExitCode; a failed launch: reason "launch failed requeued held");
 *  - time limit: at start + TimeLimit, job.kill reason "timeout" with KillWait;
 *    the node writes Slurm's "*** JOB N ON node CANCELLED AT t DUE TO TIME
 *    LIMIT ***" line; state TIMEOUT, reason TimeLimit;
 *  - cancel: pending jobs become CANCELLED at once; running ones CANCELLED
 *    (COMPLETING) and job.kill reason "cancel"; scancel's uid is journaled
 *    with the end as cancelled_by (messages.md §1);
 *  - signal without cancel: job.kill reason "signal" with the signal;
 *  - node failure: requeued when the job may be (--requeue / JobRequeue=1),
 *    else NODE_FAIL;
 *  - requeue: RUNNING -> PENDING (COMPLETING, REQUEUED), restart count + 1,
 *    eligible again one second after its old run is cleaned up (Slurm shows
 *    reason BeginTime meanwhile);
 *  - MinJobAge: finished jobs are purged that many seconds after they end;
 *  - the tick also runs the dependency chores (job_depend.h).
 */
#ifndef LOOM_CTLD_JOB_OPS_H
#define LOOM_CTLD_JOB_OPS_H

#include "ctld/ctld.h"

/* A node reported the end of a job (job.complete, or "done" at registration).
 * wait_status is waitpid's; reason "", "timeout", "cancel", "launch_failed", "oom". */
int ctld_job_completed(ctld_t *c, ctld_job_t *job, int wait_status, int64_t end_time,
                       const char *reason, loom_err_t *err);
/* A node's report of a run's end (job.complete, or a "done" entry at
 * registration: exit_code, end_time, reason, run). The end of an earlier run
 * of a requeued job that runs again is ignored; else ctld_job_completed. */
int ctld_job_report_completed(ctld_t *c, ctld_job_t *job, const json_t *report, loom_err_t *err);
/* Whether run (a report's "run"; absent: loomd before runs were reported) is
 * the job's current run, its restart_cnt. */
bool ctld_job_is_run(const ctld_job_t *job, const json_t *run);
/* RUNNING or SUSPENDED. */
bool ctld_job_runs(const ctld_job_t *job);
/* When a started job reaches its time limit: its start + limit, later by the
 * time it spent suspended up to its last resume (as slurmctld moves EndTime
 * at resume). Meaningless for a job without a limit (time_limit < 0). */
int64_t ctld_job_limit_end(const ctld_job_t *job);
/* scancel without --signal. Security: the caller checked ownership. */
int ctld_job_cancel(ctld_t *c, ctld_job_t *job, loom_err_t *err);
/* scancel: the same, recording the requester's uid (cancelled_by, sacct's
 * "CANCELLED by <uid>"). Security: the caller checked ownership. */
int ctld_job_cancel_by(ctld_t *c, ctld_job_t *job, uint32_t uid, loom_err_t *err);
/* The same, with the reason the cancelled job keeps (DependencyNeverSatisfied). */
int ctld_job_cancel_why(ctld_t *c, ctld_job_t *job, const char *reason, loom_err_t *err);
/* scancel --signal: deliver sig to the running job (batch_only: the batch shell). */
int ctld_job_signal(ctld_t *c, ctld_job_t *job, int sig, bool batch_only, bool full,
                    loom_err_t *err);
/* One of the job's nodes is lost. */
int ctld_job_node_fail(ctld_t *c, ctld_job_t *job, loom_err_t *err);
/* scontrol requeue[hold]: admin_hold picks JobHeldAdmin over JobHeldUser. */
int ctld_job_requeue(ctld_t *c, ctld_job_t *job, bool hold, bool admin, loom_err_t *err);
/* scontrol hold/uhold/release. */
int ctld_job_hold(ctld_t *c, ctld_job_t *job, bool admin_hold, loom_err_t *err);
int ctld_job_release(ctld_t *c, ctld_job_t *job, bool admin, loom_err_t *err);
/* scontrol suspend/resume (admin): SUSPENDED with SIGSTOP to every task, or
 * RUNNING again with SIGCONT; the allocation stays. */
int ctld_job_suspend(ctld_t *c, ctld_job_t *job, bool resume, loom_err_t *err);
/* A launch failed on the node: FAILED (or requeued held, as Slurm does). */
int ctld_job_launch_failed(ctld_t *c, ctld_job_t *job, const char *why);
/* Send job.kill for the job to its batch host. */
void ctld_job_send_kill(ctld_t *c, ctld_job_t *job, int sig, const char *reason, bool batch_only,
                        bool full);
/* The priority the next new (or released) job gets under priority/basic. */
uint32_t ctld_job_next_prio(ctld_t *c);

/* Once a second: time limits, kill retries, pending reasons by time, purge. */
void ctld_jobs_tick(ctld_t *c, int64_t now);

#endif
