/* sched_driver.c - scheduling passes, job starts and launches. See sched_driver.h. */
#include "ctld/sched_driver.h"
#include "common/jobstate.h"
#include "common/log.h"
#include "common/proto.h"
#include "common/xalloc.h"
#include "ctld/job_array.h"
#include "ctld/job_depend.h"
#include "ctld/job_desc.h"
#include "ctld/job_mgr.h"
#include "ctld/job_ops.h"
#include "ctld/job_rec.h"
#include "ctld/job_state.h"
#include "ctld/node_mgr.h"

#include <stdlib.h>
#include <string.h>

/* ---- node requests ----------------------------------------------------------- */

static void sched_ignore_reply(ctld_t *c, void *arg, json_t *reply)
{
}

int ctld_node_request(ctld_t *c, ctld_node_t *n, const json_t *req, ctld_reply_f *cb, void *arg)
{
    if (!n->link)
        return -LOOM_ECONNECT;
    return ctld_server_request(n->link, req, cb ? cb : sched_ignore_reply, arg);
}

/* ---- launching ------------------------------------------------------------------ */

typedef struct {
    ctld_t *c;
    uint32_t job_id;
    int64_t start_time; /* which run of the job (a requeue starts another) */
} launch_ctx_t;

static void sched_launch_replied(ctld_t *c, void *arg, json_t *reply)
{
    launch_ctx_t *lc = arg;
    ctld_job_t *job = ctld_job_find(c, lc->job_id);
    const char *msg = NULL;
    int rc = reply ? loom_msg_rc(reply, &msg) : 0; /* no reply: registration reconciles */
    if (job && job->start_time == lc->start_time && rc < 0) {
        loom_error("job %u: launch on %s failed: %s", job->id, job->batch_host, msg);
        ctld_job_launch_failed(c, job, msg);
    }
    free(lc);
}

static void sched_launch(ctld_t *c, ctld_job_t *job)
{
    ctld_node_t *n = ctld_node_find(c, job->batch_host);
    if (!n || loom_job_base(job->state) != LOOM_JOB_RUNNING || job->launch_sent)
        return;
    json_t *req = loom_msg_new("job.launch", 0);
    json_object_set_new(req, "job", ctld_job_record(c, job, CTLD_REC_FULL));
    launch_ctx_t *lc = loom_xcalloc(1, sizeof(*lc));
    *lc = (launch_ctx_t){c, job->id, job->start_time};
    job->launch_sent = true;
    if (ctld_node_request(c, n, req, sched_launch_replied, lc) < 0) {
        free(lc);
        loom_error("job %u: node %s has no loomd link", job->id, n->cfg->name);
        ctld_job_launch_failed(c, job, "the node is not connected");
    }
    json_decref(req);
}

/* The start event is durable: tell the node. */
static void sched_start_durable(void *arg, int status)
{
    launch_ctx_t *lc = arg;
    ctld_job_t *job = status == 0 ? ctld_job_find(lc->c, lc->job_id) : NULL;
    if (job && job->start_time == lc->start_time)
        sched_launch(lc->c, job);
    free(lc);
}

static void sched_start(ctld_t *c, ctld_job_t *job, const loom_sched_alloc_t *a, int64_t now)
{
    json_t *extra = json_pack("{s:o, s:I, s:s}", "alloc", ctld_alloc_to_json(c, a), "start_time",
                              (json_int_t)now, "batch_host", c->snodes[a->nodes[0].node].name);
    loom_err_t err = {0};
    if (ctld_job_event(c, job, LOOM_JOB_EV_START, extra, &err) < 0) {
        loom_error("cannot start job %u: %s", job->id, err.msg);
        return;
    }
    loom_verbose("job %u started on %s", job->id, job->nodes);
    launch_ctx_t *lc = loom_xcalloc(1, sizeof(*lc));
    *lc = (launch_ctx_t){c, job->id, job->start_time};
    uint64_t seq = c->journal ? loom_journal_stats(c->journal)->last_seq : 0;
    int rc = c->journal ? loom_journal_wait(c->journal, seq, sched_start_durable, lc) : 1;
    if (rc != 0) {
        free(lc);
        if (rc > 0)
            sched_launch(c, job);
    }
}

/* ---- eligibility and reasons ----------------------------------------------- */

/* The reason a pending job cannot be considered now, or NULL (job_depend.h:
 * holds, begin time, dependencies, partition limits, array throttle). */
static const char *sched_ineligible(ctld_t *c, ctld_job_t *job, int64_t now)
{
    return ctld_job_ineligible(c, job, now);
}

static void sched_reserve(ctld_sched_t *s, size_t n)
{
    if (n <= s->cap)
        return;
    s->cap = n + n / 2 + 64;
    s->jobs = loom_xreallocarray(s->jobs, s->cap, sizeof(*s->jobs));
    s->results = loom_xreallocarray(s->results, s->cap, sizeof(*s->results));
}

/* The pending jobs to look at, eligible ones into s->jobs; reasons for the rest. */
static size_t sched_collect(ctld_t *c, const ctld_vec_t *from, int64_t now)
{
    ctld_sched_t *s = &c->sched;
    sched_reserve(s, from->n);
    size_t n = 0;
    for (size_t i = 0; i < from->n; i++) {
        ctld_job_t *job = from->v[i];
        if (loom_job_base(job->state) != LOOM_JOB_PENDING)
            continue;
        const char *why = sched_ineligible(c, job, now);
        if (why) {
            ctld_job_set_reason(job, why);
            continue;
        }
        /* A pending array offers up to that many tasks (job_array.h). */
        uint32_t offers = ctld_array_startable(c, job);
        sched_reserve(s, n + offers + (from->n - i));
        for (uint32_t k = 0; k < offers; k++)
            s->jobs[n++] = (loom_sched_job_t){.job_id = job->id,
                                              .priority = job->priority,
                                              .submit_time = job->submit_time,
                                              .part = (uint32_t)job->part->idx,
                                              .req = &job->req,
                                              .ctx = job};
    }
    return n;
}

/* Jobs the pass did not reach: the first in an unblocked partition waits for
 * Resources (the cluster is full), the rest for Priority. */
static void sched_unexamined(ctld_t *c, size_t from, size_t n)
{
    ctld_sched_t *s = &c->sched;
    for (size_t i = from; i < n; i++) {
        ctld_job_t *job = s->jobs[i].ctx;
        uint32_t p = s->jobs[i].part;
        if (s->part_blocked[p]) {
            ctld_job_set_reason(job, "Priority");
        } else {
            ctld_job_set_reason(job, "Resources");
            s->part_blocked[p] = true;
        }
    }
}

static void sched_apply_results(ctld_t *c, size_t n, size_t examined, int64_t now)
{
    ctld_sched_t *s = &c->sched;
    /* The pass applied its allocations to the model; the start events apply
     * them again from the journal, so give them back first. */
    for (size_t i = 0; i < examined; i++)
        if (s->results[i].verdict == LOOM_SCHED_STARTED)
            loom_sched_alloc_release(c->snodes, c->nnodes, &s->results[i].alloc);
    for (size_t i = 0; i < examined; i++) {
        ctld_job_t *job = s->jobs[i].ctx;
        switch (s->results[i].verdict) {
        case LOOM_SCHED_STARTED:
            /* An array task is split off its pending array first (job_array.h). */
            job = ctld_array_take_task(c, job);
            if (job)
                sched_start(c, job, &s->results[i].alloc, now);
            loom_sched_alloc_fini(&s->results[i].alloc);
            break;
        case LOOM_SCHED_NO_RESOURCES:
            ctld_job_set_reason(job, "Resources");
            break;
        case LOOM_SCHED_NODES_UNAVAILABLE:
            ctld_job_set_reason(job, CTLD_REASON_NODES_DOWN);
            break;
        case LOOM_SCHED_BAD_REQUEST:
            ctld_job_set_reason(job, "BadConstraints");
            break;
        default:
            ctld_job_set_reason(job, "Priority");
        }
    }
    sched_unexamined(c, examined, n);
}

void ctld_sched_run(ctld_t *c)
{
    ctld_sched_t *s = &c->sched;
    int64_t now = ctld_now();
    bool full = s->full;
    s->pending = false;
    s->full = false;
    if (full)
        memset(s->part_blocked, 0, c->nparts * sizeof(bool));
    size_t n = sched_collect(c, full ? &c->jobs_pending : &s->fresh, now);
    s->fresh.n = 0;
    loom_sched_sort(s->jobs, n);
    loom_sched_pass_opts_t o = {.nparts = c->nparts, .part_blocked = s->part_blocked};
    size_t examined = loom_sched_pass(c->snodes, c->nnodes, s->jobs, n, &o, s->results);
    sched_apply_results(c, n, examined, now);
    s->passes++;
}

/* ---- triggers ------------------------------------------------------------------ */

static void sched_timer_cb(uv_timer_t *t)
{
    ctld_t *c = t->data;
    if (!c->shutting_down)
        ctld_sched_run(c);
}

void ctld_sched_trigger(ctld_t *c, bool full)
{
    ctld_sched_t *s = &c->sched;
    if (full)
        s->full = true;
    if (s->pending || c->replaying || !s->timer.loop || c->shutting_down)
        return;
    s->pending = true;
    uv_timer_start(&s->timer, sched_timer_cb, CTLD_SCHED_MIN_GAP_MS, 0);
}

void ctld_sched_submitted(ctld_t *c, ctld_job_t *job, bool ahead)
{
    ctld_vec_push(&c->sched.fresh, job);
    /* An admin-set priority may put it ahead of older jobs: look at everything. */
    ctld_sched_trigger(c, ahead);
}

void ctld_sched_node_up(ctld_t *c, ctld_node_t *n)
{
    ctld_sched_trigger(c, true);
    /* Jobs started before the node's link came back are launched now. */
    for (size_t i = 0; i < c->jobs_running.n; i++) {
        ctld_job_t *job = c->jobs_running.v[i];
        if (!job->launch_sent && job->batch_host && strcmp(job->batch_host, n->cfg->name) == 0)
            sched_launch(c, job);
    }
}

void ctld_sched_init(ctld_t *c)
{
    uv_timer_init(c->loop, &c->sched.timer);
    c->sched.timer.data = c;
    c->sched.part_blocked = loom_xcalloc(c->nparts + 1, sizeof(bool));
    c->sched.full = true;
}

void ctld_sched_fini(ctld_t *c)
{
    if (c->sched.timer.loop && !uv_is_closing((uv_handle_t *)&c->sched.timer))
        uv_close((uv_handle_t *)&c->sched.timer, NULL);
    free(c->sched.part_blocked);
    free(c->sched.jobs);
    free(c->sched.results);
    ctld_vec_free(&c->sched.fresh);
    c->sched.part_blocked = NULL;
    c->sched.jobs = NULL;
    c->sched.results = NULL;
    c->sched.cap = 0;
}

/* ---- --test-only ---------------------------------------------------------------- */

void ctld_sched_test_only(ctld_t *c, ctld_job_t *job, json_t *reply)
{
    int64_t now = ctld_now(), when = now;
    loom_sched_alloc_t a = {0};
    if (loom_sched_try_place(c->snodes, c->nnodes, &job->req, 0, &a) < 0) {
        /* Not now: once the running jobs of its nodes reach their limits. */
        loom_sched_try_place(c->snodes, c->nnodes, &job->req, LOOM_SCHED_IGNORE_ALLOC, &a);
        for (size_t i = 0; i < c->jobs_running.n; i++) {
            const ctld_job_t *r = c->jobs_running.v[i];
            int64_t end =
                r->time_limit < 0 ? now + 365 * 86400 : r->start_time + r->time_limit * 60;
            if (end > when)
                when = end;
        }
    }
    if (!a.nnodes)
        loom_sched_try_place(c->snodes, c->nnodes, &job->req, LOOM_SCHED_IGNORE_USED, &a);
    char *nodes = a.nnodes ? ctld_alloc_nodelist(c, &a) : loom_xstrdup("");
    json_object_set_new(reply, "start_time", json_integer(when));
    json_object_set_new(reply, "nodes", json_string(nodes));
    json_object_set_new(reply, "num_cpus", json_integer(a.nnodes ? a.ncpus : job->min_cpus));
    json_object_set_new(reply, "partition", json_string(job->part->cfg->name));
    free(nodes);
    loom_sched_alloc_fini(&a);
}
