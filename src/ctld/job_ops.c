/* job_ops.c - completion, cancel, signals, time limits, node failure, requeue,
 * hold/release and purge of jobs. See job_ops.h. */
#include "ctld/job_ops.h"
#include "common/jobstate.h"
#include "common/log.h"
#include "common/proto.h"
#include "ctld/assoc_policy.h"
#include "ctld/job_depend.h"
#include "ctld/job_mgr.h"
#include "ctld/job_state.h"
#include "ctld/node_mgr.h"
#include "ctld/sched_driver.h"
#include "ctld/sched_prio.h"
#include "ctld/step_launch.h"

#include <signal.h>
#include <string.h>

#define OPS_KILL_RETRY_S 30 /* resend job.kill when the node has not confirmed */

uint32_t ctld_job_next_prio(ctld_t *c)
{
    if (c->last_prio > 1)
        c->last_prio--;
    return c->last_prio;
}

void ctld_job_send_kill(ctld_t *c, ctld_job_t *job, int sig, const char *reason, bool batch_only,
                        bool full)
{
    ctld_node_t *n = ctld_node_find(c, job->batch_host);
    if (!n)
        return;
    json_t *req = loom_msg_new("job.kill", 0);
    json_object_set_new(req, "job_id", json_integer(job->id));
    json_object_set_new(req, "signal", json_integer(sig));
    json_object_set_new(req, "reason", json_string(reason));
    json_object_set_new(req, "kill_wait", json_integer(c->conf->kill_wait));
    json_object_set_new(req, "batch_only", json_boolean(batch_only));
    json_object_set_new(req, "full", json_boolean(full));
    if (ctld_node_request(c, n, req, NULL, NULL) < 0)
        loom_verbose("job %u: kill for %s not sent (no link)", job->id, n->cfg->name);
    ctld_steps_kill_others(c, job, req); /* the job's steps on its other nodes */
    json_decref(req);
    if (sig == SIGKILL)
        job->kill_sent = ctld_now();
}

/* The job's processes are gone (or never started): release its resources. */
static int ops_epilog_done(ctld_t *c, ctld_job_t *job, int wait_status, bool have_status)
{
    if (!(job->state & LOOM_JOB_F_COMPLETING))
        return 0;
    json_t *extra = have_status ? json_pack("{s:i}", "exit_code", wait_status) : NULL;
    int rc = ctld_job_event(c, job, LOOM_JOB_EV_EPILOG_DONE, extra, NULL);
    job->kill_sent = 0;
    ctld_sched_trigger(c, true);
    return rc;
}

/* An end event for a RUNNING job; the reason names Slurm's. */
static int ops_end(ctld_t *c, ctld_job_t *job, loom_job_event_t e, int status, int64_t end,
                   const char *reason, loom_err_t *err)
{
    json_t *extra = json_pack("{s:i, s:I, s:s}", "exit_code", status, "end_time",
                              (json_int_t)(end ? end : ctld_now()), "reason", reason);
    return ctld_job_event(c, job, e, extra, err);
}

static loom_job_event_t ops_event_for(int status, const char *reason, const char **why)
{
    *why = "None";
    if (reason && strcmp(reason, "timeout") == 0) {
        *why = "TimeLimit";
        return LOOM_JOB_EV_TIME_LIMIT;
    }
    if (reason && strcmp(reason, "oom") == 0)
        return LOOM_JOB_EV_OOM;
    if (reason && strcmp(reason, "cancel") == 0)
        return LOOM_JOB_EV_CANCEL;
    if (status == 0)
        return LOOM_JOB_EV_EXIT_OK;
    *why = "NonZeroExitCode";
    return LOOM_JOB_EV_EXIT_FAIL;
}

int ctld_job_completed(ctld_t *c, ctld_job_t *job, int wait_status, int64_t end_time,
                       const char *reason, loom_err_t *err)
{
    loom_job_state_t base = loom_job_base(job->state);
    bool running = base == LOOM_JOB_RUNNING || base == LOOM_JOB_SUSPENDED;
    /* Its supervisor died and left no status (loomd): requeued or NODE_FAIL. */
    if (running && reason && strcmp(reason, "node_fail") == 0)
        return ctld_job_node_fail(c, job, err);
    if (running) {
        const char *why;
        loom_job_event_t e = ops_event_for(wait_status, reason, &why);
        int rc = ops_end(c, job, e, wait_status, end_time, why, err);
        if (rc < 0)
            return rc;
        loom_verbose("job %u ended: %s, status %d", job->id, loom_job_state_name(job->state),
                     wait_status);
    }
    return ops_epilog_done(c, job, wait_status, true);
}

bool ctld_job_is_run(const ctld_job_t *job, const json_t *run)
{
    return !json_is_integer(run) || json_integer_value(run) == (json_int_t)job->restart_cnt;
}

bool ctld_job_runs(const ctld_job_t *job)
{
    loom_job_state_t base = loom_job_base(job->state);
    return base == LOOM_JOB_RUNNING || base == LOOM_JOB_SUSPENDED;
}

int64_t ctld_job_limit_end(const ctld_job_t *job)
{
    return job->start_time + job->time_limit * 60 + job->tot_sus_time;
}

int ctld_job_report_completed(ctld_t *c, ctld_job_t *job, const json_t *report, loom_err_t *err)
{
    if (!ctld_job_is_run(job, json_object_get(report, "run")) && ctld_job_runs(job)) {
        loom_verbose("job %u: the end of an earlier run ignored", job->id);
        return 0;
    }
    return ctld_job_completed(c, job, (int)json_integer_value(json_object_get(report, "exit_code")),
                              json_integer_value(json_object_get(report, "end_time")),
                              json_string_value(json_object_get(report, "reason")), err);
}

/* The cancel event; by >= 0: the requester's uid, journaled as cancelled_by
 * (sacct's "CANCELLED by <uid>"). */
static int ops_cancel(ctld_t *c, ctld_job_t *job, const char *reason, int64_t by, loom_err_t *err)
{
    loom_job_state_t base = loom_job_base(job->state);
    if (loom_job_state_is_terminal(job->state))
        return loom_errf(err, -LOOM_EALREADY_DONE, "job %u is already done", job->id);
    json_t *extra = json_pack("{s:i, s:I, s:s}", "exit_code", job->exit_code, "end_time",
                              (json_int_t)ctld_now(), "reason", reason);
    if (by >= 0)
        json_object_set_new(extra, "cancelled_by", json_integer((json_int_t)by));
    int rc = ctld_job_event(c, job, LOOM_JOB_EV_CANCEL, extra, err);
    if (rc < 0)
        return rc;
    if (base == LOOM_JOB_PENDING) {
        ctld_sched_trigger(c, true);
        return 0;
    }
    if (job->launch_sent)
        ctld_job_send_kill(c, job, SIGKILL, "cancel", false, true);
    else
        ops_epilog_done(c, job, 0, false);
    return 0;
}

/* A job cancelled while pending keeps what it waited for (scontrol and sacct
 * show "CANCELLED ... Reason=JobHeldUser", as slurmctld 22.05 does). */
static const char *ops_cancel_reason(const ctld_job_t *job)
{
    return loom_job_base(job->state) == LOOM_JOB_PENDING ? job->reason : "None";
}

int ctld_job_cancel(ctld_t *c, ctld_job_t *job, loom_err_t *err)
{
    return ops_cancel(c, job, ops_cancel_reason(job), -1, err);
}

int ctld_job_cancel_by(ctld_t *c, ctld_job_t *job, uint32_t uid, loom_err_t *err)
{
    return ops_cancel(c, job, ops_cancel_reason(job), uid, err);
}

int ctld_job_cancel_why(ctld_t *c, ctld_job_t *job, const char *reason, loom_err_t *err)
{
    return ops_cancel(c, job, reason, -1, err);
}

int ctld_job_signal(ctld_t *c, ctld_job_t *job, int sig, bool batch_only, bool full,
                    loom_err_t *err)
{
    if (loom_job_state_is_terminal(job->state))
        return loom_errf(err, -LOOM_EALREADY_DONE, "job %u is already done", job->id);
    if (loom_job_base(job->state) == LOOM_JOB_PENDING)
        return loom_errf(err, -LOOM_EPENDING, "job %u is pending", job->id);
    ctld_job_send_kill(c, job, sig, "signal", batch_only, full);
    return 0;
}

/* Requeue event: PENDING again, eligible one second after cleanup (BeginTime). */
static int ops_requeue_event(ctld_t *c, ctld_job_t *job, bool hold, bool admin, loom_err_t *err)
{
    json_t *extra = json_pack("{s:I}", "begin_time", (json_int_t)ctld_now() + 1);
    if (hold)
        json_object_set_new(extra, "hold", json_string(admin ? "admin" : "user"));
    return ctld_job_event(c, job, hold ? LOOM_JOB_EV_REQUEUE_HOLD : LOOM_JOB_EV_REQUEUE, extra,
                          err);
}

int ctld_job_node_fail(ctld_t *c, ctld_job_t *job, loom_err_t *err)
{
    loom_job_state_t base = loom_job_base(job->state);
    int rc = 0;
    if (base == LOOM_JOB_RUNNING || base == LOOM_JOB_SUSPENDED) {
        if (job->requeue && job->batch)
            rc = ops_requeue_event(c, job, false, false, err);
        else
            rc =
                ops_end(c, job, LOOM_JOB_EV_NODE_FAIL, job->exit_code, ctld_now(), "NodeDown", err);
        loom_info("job %u: node failure, %s", job->id,
                  job->requeue && job->batch ? "requeued" : "NODE_FAIL");
    }
    if (rc == 0)
        rc = ops_epilog_done(c, job, 0, false);
    return rc;
}

int ctld_job_requeue(ctld_t *c, ctld_job_t *job, bool hold, bool admin, loom_err_t *err)
{
    loom_job_state_t base = loom_job_base(job->state);
    if (!job->batch) /* salloc's and srun's allocations are never requeued (22.05) */
        return loom_errf(err, -LOOM_EBATCH_ONLY, "Only batch jobs are accepted or processed");
    if (base == LOOM_JOB_PENDING)
        return loom_errf(err, -LOOM_EPENDING, "job %u is pending", job->id);
    if (job->state & LOOM_JOB_F_COMPLETING)
        return loom_errf(err, -LOOM_EALREADY_DONE, "job %u is completing", job->id);
    bool was_running = base == LOOM_JOB_RUNNING || base == LOOM_JOB_SUSPENDED;
    int rc = ops_requeue_event(c, job, hold, admin, err);
    if (rc < 0)
        return rc;
    if (was_running && job->launch_sent)
        ctld_job_send_kill(c, job, SIGKILL, "requeue", false, true);
    else
        ops_epilog_done(c, job, 0, false);
    ctld_sched_trigger(c, true);
    return 0;
}

int ctld_job_hold(ctld_t *c, ctld_job_t *job, bool admin_hold, loom_err_t *err)
{
    if (loom_job_state_is_terminal(job->state))
        return loom_errf(err, -LOOM_EJOB_FINISHED, "job %u has finished", job->id);
    if (loom_job_base(job->state) != LOOM_JOB_PENDING)
        return loom_errf(err, -LOOM_EDISABLED, "job %u is not pending", job->id);
    const char *reason = admin_hold ? "JobHeldAdmin" : "JobHeldUser";
    json_t *ev = json_pack("{s:s, s:I, s:{s:s, s:i, s:s}}", "ev", "job.update", "job_id",
                           (json_int_t)job->id, "set", "hold", admin_hold ? "admin" : "user",
                           "priority", 0, "reason", reason);
    int rc = ctld_commit(c, ev, err);
    ctld_sched_trigger(c, true);
    return rc;
}

int ctld_job_release(ctld_t *c, ctld_job_t *job, bool admin, loom_err_t *err)
{
    if (loom_job_state_is_terminal(job->state))
        return loom_errf(err, -LOOM_EJOB_FINISHED, "job %u has finished", job->id);
    if (loom_job_base(job->state) != LOOM_JOB_PENDING)
        return loom_errf(err, -LOOM_EDISABLED, "job %u is not pending", job->id);
    /* Security: a user may not lift an administrator's hold. */
    if (job->hold == 'a' && !admin)
        return loom_errf(err, -LOOM_EACCESS, "job %u was held by an administrator", job->id);
    uint32_t prio = job->prio_base ? job->prio_base : ctld_job_next_prio(c);
    int rc = 0;
    if (job->state & (LOOM_JOB_F_REQUEUE_HOLD | LOOM_JOB_F_SPECIAL_EXIT))
        rc = ctld_job_event(c, job, LOOM_JOB_EV_RELEASE,
                            json_pack("{s:I}", "priority", (json_int_t)prio), err);
    if (rc == 0 && (job->hold || job->priority == 0)) {
        json_t *ev = json_pack("{s:s, s:I, s:{s:n, s:I, s:s}}", "ev", "job.update", "job_id",
                               (json_int_t)job->id, "set", "hold", "priority", (json_int_t)prio,
                               "reason", "None");
        if (!job->prio_base && !ctld_sched_multifactor(c)) /* held since its submission */
            json_object_set_new(json_object_get(ev, "set"), "prio_base", json_integer(prio));
        rc = ctld_commit(c, ev, err);
    }
    ctld_sched_trigger(c, true);
    return rc;
}

int ctld_job_suspend(ctld_t *c, ctld_job_t *job, bool resume, loom_err_t *err)
{
    loom_job_state_t base = loom_job_base(job->state);
    if (loom_job_state_is_terminal(job->state) || (job->state & LOOM_JOB_F_COMPLETING))
        return loom_errf(err, -LOOM_EALREADY_DONE, "job %u is done", job->id);
    if (base == LOOM_JOB_PENDING)
        return loom_errf(err, -LOOM_EPENDING, "job %u is pending", job->id);
    if (resume != (base == LOOM_JOB_SUSPENDED))
        return loom_errf(err, resume ? -LOOM_ENOT_SUSPENDED : -LOOM_EJOB_SUSPENDED, "job %u is %s",
                         job->id, loom_job_state_name(job->state));
    int rc = ctld_job_event(c, job, resume ? LOOM_JOB_EV_RESUME : LOOM_JOB_EV_SUSPEND, NULL, err);
    if (rc == 0 && job->launch_sent)
        ctld_job_send_kill(c, job, resume ? SIGCONT : SIGSTOP, resume ? "resume" : "suspend", false,
                           true);
    return rc;
}

int ctld_job_launch_failed(ctld_t *c, ctld_job_t *job, const char *why)
{
    if (loom_job_base(job->state) != LOOM_JOB_RUNNING)
        return 0;
    int rc;
    if (job->requeue && job->batch) {
        rc = ops_requeue_event(c, job, true, true, NULL);
        if (rc == 0) {
            json_t *ev = json_pack("{s:s, s:I, s:{s:s}}", "ev", "job.update", "job_id",
                                   (json_int_t)job->id, "set", "reason", CTLD_REASON_LAUNCH_FAILED);
            ctld_commit(c, ev, NULL);
        }
    } else {
        rc = ops_end(c, job, LOOM_JOB_EV_EXIT_FAIL, 1 << 8, ctld_now(), "NonZeroExitCode", NULL);
    }
    if (rc == 0)
        rc = ops_epilog_done(c, job, 1 << 8, false);
    return rc;
}

/* ---- the tick -------------------------------------------------------------------- */

static void ops_time_limits(ctld_t *c, int64_t now)
{
    int64_t grace = c->conf->over_time_limit > 0 ? c->conf->over_time_limit * 60 : 0;
    ctld_policy_usage_t *pu = ctld_policy_usage_new(c, now); /* usage limits (assoc_policy.h) */
    for (size_t i = c->jobs_running.n; i-- > 0;) {
        ctld_job_t *job = c->jobs_running.v[i];
        if (loom_job_base(job->state) != LOOM_JOB_RUNNING)
            continue;
        const char *over = ctld_policy_time_out(pu, job, now);
        if (!over && (job->time_limit < 0 || now < ctld_job_limit_end(job) + grace))
            continue;
        if (over)
            loom_info("job %u timed out: its association or QOS reached %s", job->id, over);
        else
            loom_info("job %u reached its time limit", job->id);
        if (ops_end(c, job, LOOM_JOB_EV_TIME_LIMIT, 0, now, "TimeLimit", NULL) < 0)
            continue;
        if (job->launch_sent)
            ctld_job_send_kill(c, job, SIGKILL, "timeout", false, true);
        else
            ops_epilog_done(c, job, 0, false);
    }
    ctld_policy_usage_free(pu);
}

/* Ended jobs whose node has not confirmed: ask again. */
static void ops_kill_retries(ctld_t *c, int64_t now)
{
    int64_t every = c->conf->kill_wait + OPS_KILL_RETRY_S;
    for (size_t i = 0; i < c->jobs_running.n; i++) {
        ctld_job_t *job = c->jobs_running.v[i];
        if (!(job->state & LOOM_JOB_F_COMPLETING) || !job->kill_sent ||
            now - job->kill_sent < every)
            continue;
        const char *reason = loom_job_base(job->state) == LOOM_JOB_TIMEOUT ? "timeout" : "cancel";
        ctld_job_send_kill(c, job, SIGKILL, reason, false, true);
    }
}

static void ops_purge(ctld_t *c, int64_t now)
{
    int64_t age = c->conf->min_job_age;
    if (age <= 0)
        return;
    for (size_t i = c->jobs_done.n; i-- > 0;) {
        ctld_job_t *job = c->jobs_done.v[i];
        if (job->end_time + age > now || (job->state & LOOM_JOB_F_COMPLETING))
            continue;
        json_t *ev = json_pack("{s:s, s:I}", "ev", "job.purge", "job_id", (json_int_t)job->id);
        ctld_commit(c, ev, NULL);
        if (i > c->jobs_done.n)
            i = c->jobs_done.n;
    }
}

/* Pending jobs whose begin time passed need a full pass. */
static void ops_begin_times(ctld_t *c, int64_t now)
{
    for (size_t i = 0; i < c->jobs_pending.n; i++) {
        const ctld_job_t *job = c->jobs_pending.v[i];
        if (job->begin_time && job->begin_time <= now && strcmp(job->reason, "BeginTime") == 0) {
            ctld_sched_trigger(c, true);
            return;
        }
    }
}

void ctld_jobs_tick(ctld_t *c, int64_t now)
{
    ops_time_limits(c, now);
    ops_kill_retries(c, now);
    ops_purge(c, now);
    ops_begin_times(c, now);
    ctld_depend_tick(c);
}
