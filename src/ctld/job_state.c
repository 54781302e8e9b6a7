/* job_state.c - journal an event, then apply it; replay and snapshots. See job_state.h. */
#include "ctld/job_state.h"
#include "common/log.h"
#include "common/xalloc.h"
#include "ctld/acct.h"
#include "ctld/job_array.h"
#include "ctld/job_mgr.h"
#include "ctld/job_rec.h"
#include "ctld/job_script.h"
#include "ctld/node_mgr.h"
#include "ctld/part_mgr.h"
#include "ctld/step_mgr.h"

#include <string.h>

int ctld_commit(ctld_t *c, json_t *ev, loom_err_t *err)
{
    if (!json_object_get(ev, "t"))
        json_object_set_new(ev, "t", json_integer(ctld_now()));
    if (!c->replaying && c->journal) {
        uint64_t seq = loom_journal_append(c->journal, ev);
        if (seq == 0) {
            json_decref(ev);
            return loom_errf(err, -LOOM_EINTERNAL, "the state journal failed");
        }
        if (seq > c->req_seq)
            c->req_seq = seq;
    }
    if (!c->replaying)
        ctld_acct_before(c, ev);
    int rc = ctld_apply(c, ev, err);
    if (!c->replaying && rc == 0)
        ctld_acct_after(c, ev);
    if (rc < 0)
        loom_error("applying a journaled event failed: %s", err ? err->msg : "?");
    json_decref(ev);
    return rc;
}

static int state_event_from_name(const char *name, loom_job_event_t *e)
{
    for (int i = 0; name && i < LOOM_JOB_EV_COUNT; i++) {
        if (strcmp(loom_job_event_name((loom_job_event_t)i), name) == 0) {
            *e = (loom_job_event_t)i;
            return 0;
        }
    }
    return -LOOM_EPROTO;
}

int ctld_job_event(ctld_t *c, ctld_job_t *job, loom_job_event_t e, json_t *extra, loom_err_t *err)
{
    uint32_t to;
    int rc = loom_job_next_state(job->state, e, &to);
    if (rc < 0) {
        json_decref(extra);
        return loom_errf(err, rc, "job %u: %s not allowed in state %s", job->id,
                         loom_job_event_name(e), loom_job_state_name(job->state));
    }
    json_t *ev = extra ? extra : json_object();
    json_object_set_new(ev, "ev", json_string("job.state"));
    json_object_set_new(ev, "job_id", json_integer(job->id));
    json_object_set_new(ev, "event", json_string(loom_job_event_name(e)));
    return ctld_commit(c, ev, err);
}

/* ---- applying job.state events ----------------------------------------- */

static int state_apply_start(ctld_t *c, ctld_job_t *job, const json_t *ev, loom_err_t *err)
{
    loom_sched_alloc_t a = {0};
    int rc = ctld_alloc_from_json(c, json_object_get(ev, "alloc"), job->exclusive, &a, err);
    if (rc < 0)
        return rc;
    ctld_job_alloc_release(c, job);
    loom_sched_alloc_fini(&job->alloc);
    job->alloc = a;
    rc = ctld_job_alloc_apply(c, job);
    if (rc < 0)
        loom_error("job %u: its allocation overlaps another one", job->id);
    free(job->nodes);
    free(job->batch_host);
    job->nodes = ctld_alloc_nodelist(c, &job->alloc);
    const char *bh = json_string_value(json_object_get(ev, "batch_host"));
    job->batch_host = loom_xstrdup(bh ? bh : c->snodes[job->alloc.nodes[0].node].name);
    job->start_time = json_integer_value(json_object_get(ev, "start_time"));
    json_t *limit = json_object_get(ev, "time_limit"); /* cut to a --deadline */
    if (json_is_integer(limit))
        job->time_limit = json_integer_value(limit);
    job->end_time = 0;
    job->suspend_time = job->pre_sus_time = job->tot_sus_time = 0;
    job->reason = "None";
    job->launch_sent = false;
    job->launch_acked = false;
    job->kill_sent = 0;
    job->next_step_id = 0;
    return 0;
}

/* Suspend and resume as slurmctld counts them: the run so far goes to
 * pre_sus_time at a suspend, the pause to tot_sus_time at the resume. */
static void state_apply_suspend(ctld_job_t *job, bool resume, int64_t t)
{
    int64_t since = job->suspend_time > job->start_time ? job->suspend_time : job->start_time;
    if (t < since)
        t = since;
    if (resume)
        job->tot_sus_time += t - since;
    else
        job->pre_sus_time += t - since;
    job->suspend_time = t;
}

static void state_apply_end(ctld_job_t *job, const json_t *ev, int64_t t)
{
    json_t *code = json_object_get(ev, "exit_code");
    if (json_is_integer(code))
        job->exit_code = (int)json_integer_value(code);
    json_int_t end = json_integer_value(json_object_get(ev, "end_time"));
    job->end_time = end > 0 ? end : t;
    /* A job ended while suspended ran until its suspension (slurmctld). */
    if (loom_job_base(job->state) == LOOM_JOB_SUSPENDED && job->suspend_time)
        job->end_time = job->suspend_time;
    if (!job->start_time)
        job->start_time = job->end_time;
    /* A pending job's reason (any of the policy's static names) stays as it is
     * when the end names it (a cancel while pending); else the known names. */
    const char *why = json_string_value(json_object_get(ev, "reason"));
    if (!why || !job->reason || strcmp(why, job->reason) != 0)
        job->reason = ctld_reason_intern(why);
    json_t *by = json_object_get(ev, "cancelled_by");
    job->cancelled_by_set = json_is_integer(by);
    job->cancelled_by = (uint32_t)json_integer_value(by);
}

static void state_apply_requeue(ctld_job_t *job, const json_t *ev, int64_t t)
{
    job->restart_cnt++;
    job->cancelled_by_set = false;
    job->start_time = 0;
    job->end_time = 0;
    job->exit_code = 0;
    /* Each run is its own accounting record, keyed (job id, submit time) as
     * slurmdbd's: a run requeued in its own submit second gets the next one. */
    job->submit_time = t > job->submit_time ? t : job->submit_time + 1;
    job->suspend_time = job->pre_sus_time = job->tot_sus_time = 0;
    job->begin_time = json_integer_value(json_object_get(ev, "begin_time"));
    const char *hold = json_string_value(json_object_get(ev, "hold"));
    if (hold) {
        job->hold = strcmp(hold, "admin") == 0 ? 'a' : 'u';
        job->priority = 0;
        job->reason = job->hold == 'a' ? "JobHeldAdmin" : "JobHeldUser";
    } else {
        job->reason = job->begin_time ? "BeginTime" : "None";
    }
}

/* The allocation goes back to the node model; a pending (requeued) job
 * forgets where it ran. */
static void state_apply_epilog(ctld_t *c, ctld_job_t *job, const json_t *ev)
{
    json_t *code = json_object_get(ev, "exit_code");
    if (json_is_integer(code) && loom_job_base(job->state) != LOOM_JOB_PENDING)
        job->exit_code = (int)json_integer_value(code);
    ctld_job_alloc_release(c, job);
    if (loom_job_base(job->state) == LOOM_JOB_PENDING) {
        loom_sched_alloc_fini(&job->alloc);
        free(job->nodes);
        free(job->batch_host);
        job->nodes = job->batch_host = NULL;
    }
    for (size_t i = 0; i < job->nsteps; i++)
        ctld_step_free(job->steps[i]);
    job->nsteps = 0;
}

static int state_apply_job(ctld_t *c, const json_t *ev, loom_err_t *err)
{
    json_int_t id = json_integer_value(json_object_get(ev, "job_id"));
    ctld_job_t *job = ctld_job_find(c, (uint32_t)id);
    loom_job_event_t e;
    if (!job || state_event_from_name(json_string_value(json_object_get(ev, "event")), &e) < 0)
        return loom_errf(err, -LOOM_EPROTO, "job.state event for unknown job %lld or event",
                         (long long)id);
    uint32_t from = job->state, to;
    int rc = loom_job_next_state(from, e, &to);
    if (rc < 0)
        return loom_errf(err, rc, "job %u: %s not allowed in %s", job->id, loom_job_event_name(e),
                         loom_job_state_name(from));
    int64_t t = json_integer_value(json_object_get(ev, "t"));
    if (e == LOOM_JOB_EV_START || e == LOOM_JOB_EV_START_BOOT)
        rc = state_apply_start(c, job, ev, err);
    else if (e == LOOM_JOB_EV_REQUEUE || e == LOOM_JOB_EV_REQUEUE_HOLD ||
             e == LOOM_JOB_EV_SPECIAL_EXIT)
        state_apply_requeue(job, ev, t);
    else if (e == LOOM_JOB_EV_RELEASE)
        job->priority = (uint32_t)json_integer_value(json_object_get(ev, "priority"));
    else if (e == LOOM_JOB_EV_SUSPEND || e == LOOM_JOB_EV_RESUME)
        state_apply_suspend(job, e == LOOM_JOB_EV_RESUME, t);
    else if (e != LOOM_JOB_EV_EPILOG_DONE && e != LOOM_JOB_EV_BOOTED)
        state_apply_end(job, ev, t);
    if (rc < 0)
        return rc;
    /* A requeue of a job that holds nothing any more has nothing to clean up:
     * REQUEUED (set "until its old allocation is released") ends at once. */
    if (!(to & LOOM_JOB_F_COMPLETING))
        to &= ~LOOM_JOB_F_REQUEUED;
    job->state = to;
    if (e == LOOM_JOB_EV_EPILOG_DONE)
        state_apply_epilog(c, job, ev);
    ctld_job_touch(job);
    ctld_jobs_refile(c, job, from);
    return 0;
}

/* ---- other events ---------------------------------------------------------- */

static bool state_holds_alloc(uint32_t state)
{
    loom_job_state_t b = loom_job_base(state);
    return b == LOOM_JOB_RUNNING || b == LOOM_JOB_SUSPENDED || (state & LOOM_JOB_F_COMPLETING);
}

static int state_apply_submit(ctld_t *c, const json_t *ev, loom_err_t *err)
{
    ctld_job_t *job = NULL;
    int rc = ctld_job_from_record(c, json_object_get(ev, "job"), &job, err);
    if (rc < 0)
        return rc;
    if (ctld_job_find(c, job->id)) {
        ctld_job_free(job);
        return loom_errf(err, -EEXIST, "job id %u already exists", job->id);
    }
    if (c->replaying) /* the file may have been lost with the crash (job_script.h) */
        ctld_job_script_replayed(c, ctld_job_script_owner(job), json_object_get(ev, "job"));
    ctld_jobs_insert(c, job);
    ctld_jobs_advance_id(c, job->id);
    if (job->prio_base && job->prio_base < c->last_prio)
        c->last_prio = job->prio_base;
    /* A finished job keeps its allocation in its record (nodes, TRES) but no
     * longer holds it: only running, suspended and completing jobs do. */
    if (job->alloc.nnodes && state_holds_alloc(job->state) && ctld_job_alloc_apply(c, job) < 0)
        loom_error("job %u: its allocation overlaps another one", job->id);
    ctld_jobs_refile(c, job, job->state);
    return 0;
}

static int state_apply_update(ctld_t *c, const json_t *ev, loom_err_t *err)
{
    json_int_t id = json_integer_value(json_object_get(ev, "job_id"));
    ctld_job_t *job = ctld_job_find(c, (uint32_t)id);
    if (!job)
        return loom_errf(err, -LOOM_EINVAL_JOBID, "job.update for unknown job %lld", (long long)id);
    return ctld_job_apply_changes(c, job, json_object_get(ev, "set"), err);
}

static int state_apply_purge(ctld_t *c, const json_t *ev, loom_err_t *err)
{
    json_int_t id = json_integer_value(json_object_get(ev, "job_id"));
    ctld_job_t *job = ctld_job_find(c, (uint32_t)id);
    if (!job)
        return 0; /* purging twice is harmless */
    ctld_job_alloc_release(c, job);
    ctld_job_script_purged(c, job);
    ctld_jobs_purge(c, job);
    return 0;
}

int ctld_apply(ctld_t *c, const json_t *ev, loom_err_t *err)
{
    const char *type = json_string_value(json_object_get(ev, "ev"));
    if (!type)
        return loom_errf(err, -LOOM_EPROTO, "event without \"ev\"");
    if (strcmp(type, "job.state") == 0)
        return state_apply_job(c, ev, err);
    if (strcmp(type, "job.submit") == 0)
        return state_apply_submit(c, ev, err);
    if (strcmp(type, "job.update") == 0)
        return state_apply_update(c, ev, err);
    if (strcmp(type, "job.purge") == 0)
        return state_apply_purge(c, ev, err);
    if (strcmp(type, "node.state") == 0)
        return ctld_node_mgr_apply(c, ev, err);
    if (strcmp(type, "part.update") == 0)
        return ctld_part_apply(c, ev, err);
    if (strncmp(type, "step.", 5) == 0) /* step_mgr.c */
        return ctld_step_apply(c, ev, err);
    if (strcmp(type, "array.split") == 0)
        return ctld_array_apply_split(c, ev, err);
    return loom_errf(err, -LOOM_EPROTO, "unknown event '%s'", type);
}

/* ---- snapshots and replay ------------------------------------------------ */

/* put(rec) and drop rec; 0 or put's error. */
static int state_put(loom_journal_put_f *put, void *put_arg, json_t *rec)
{
    int rc = put(put_arg, rec);
    json_decref(rec);
    return rc;
}

int ctld_state_snapshot(void *arg, loom_journal_put_f *put, void *put_arg)
{
    const ctld_t *c = arg;
    int rc = 0;
    for (size_t i = 0; i < c->jobs_all.n && rc == 0; i++)
        rc = state_put(
            put, put_arg,
            json_pack("{s:o}", "job", ctld_job_record(c, c->jobs_all.v[i], CTLD_REC_FULL)));
    /* After the jobs: each one moved next_job_id past itself. */
    if (rc == 0)
        rc = state_put(put, put_arg,
                       json_pack("{s:I, s:I}", "next_job_id", (json_int_t)c->next_job_id,
                                 "last_prio", (json_int_t)c->last_prio));
    for (size_t i = 0; i < c->nnodes && rc == 0; i++)
        rc = state_put(put, put_arg, json_pack("{s:o}", "node", ctld_node_mgr_snapshot(c, i)));
    for (size_t i = 0; i < c->nparts && rc == 0; i++) {
        json_t *part = ctld_part_snapshot(c, i); /* scontrol update PartitionName= */
        if (part)
            rc = state_put(put, put_arg, json_pack("{s:o}", "part", part));
    }
    for (size_t i = 0; i < c->jobs_all.n && rc == 0; i++) {
        json_t *steps = ctld_steps_snapshot(c, c->jobs_all.v[i]);
        if (steps)
            rc = state_put(put, put_arg, json_pack("{s:o}", "steps", steps));
    }
    return rc;
}

static void state_restore_job(ctld_t *c, const json_t *rec)
{
    loom_err_t err = {0};
    json_t *ev = json_pack("{s:s, s:O}", "ev", "job.submit", "job", rec);
    if (state_apply_submit(c, ev, &err) < 0)
        loom_error("snapshot: dropping a job: %s", err.msg);
    json_decref(ev);
}

/* One snapshot record (ctld_state_snapshot), or the whole state of an older
 * snapshot, which has the same members with "jobs" and "nodes" as arrays. */
static int state_restore(ctld_t *c, const json_t *state)
{
    json_t *jobs = json_object_get(state, "jobs"), *rec;
    size_t i;
    json_array_foreach(jobs, i, rec)
    {
        state_restore_job(c, rec);
    }
    if ((rec = json_object_get(state, "job")))
        state_restore_job(c, rec);
    json_int_t next = json_integer_value(json_object_get(state, "next_job_id"));
    json_int_t prio = json_integer_value(json_object_get(state, "last_prio"));
    if (next > 0)
        c->next_job_id = (uint32_t)next;
    if (prio > 0)
        c->last_prio = (uint32_t)prio;
    ctld_node_mgr_restore(c, json_object_get(state, "nodes"));
    ctld_node_mgr_restore(c, json_object_get(state, "node"));
    /* A reconfigure reads slurm.conf's partitions again (slurmctld 22.05). */
    if ((rec = json_object_get(state, "part")) && !c->reconfiguring)
        ctld_part_restore(c, rec);
    ctld_steps_restore(c, json_object_get(state, "steps"));
    return 0;
}

int ctld_state_replay(void *arg, const json_t *state, const json_t *entry)
{
    ctld_t *c = arg;
    if (state)
        return state_restore(c, state);
    loom_err_t err = {0};
    int rc = ctld_apply(c, entry, &err);
    if (rc < 0) /* one bad event must not keep the controller down: log and go on */
        loom_error("journal entry %lld not applied: %s",
                   (long long)json_integer_value(json_object_get(entry, "seq")), err.msg);
    return 0;
}
