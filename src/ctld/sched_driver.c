/* sched_driver.c - scheduling passes, job starts and launches. See sched_driver.h. */
#include "ctld/sched_driver.h"
#include "ctld/assoc_policy.h"
#include "common/jobstate.h"
#include "common/log.h"
#include "common/proto.h"
#include "common/xalloc.h"
#include "ctld/assoc_policy.h"
#include "ctld/job_array.h"
#include "ctld/job_depend.h"
#include "ctld/job_desc.h"
#include "ctld/job_mgr.h"
#include "ctld/job_ops.h"
#include "ctld/job_rec.h"
#include "ctld/job_script.h"
#include "ctld/job_state.h"
#include "ctld/node_mgr.h"
#include "ctld/sched_bf.h"
#include "ctld/sched_job.h"
#include "ctld/sched_prio.h"
#include "ctld/sched_x.h"

#include <stdio.h>
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
    } else if (job && job->start_time == lc->start_time && reply) {
        job->launch_acked = true;
    }
    free(lc);
}

static void sched_launch(ctld_t *c, ctld_job_t *job)
{
    ctld_node_t *n = ctld_node_find(c, job->batch_host);
    if (!n || loom_job_base(job->state) != LOOM_JOB_RUNNING || job->launch_sent)
        return;
    json_t *rec = ctld_job_record(c, job, CTLD_REC_FULL);
    loom_err_t err = {0};
    if (ctld_job_script_load(c, job, rec, &err) < 0) {
        json_decref(rec);
        loom_error("%s", err.msg);
        ctld_job_launch_failed(c, job, err.msg);
        return;
    }
    json_t *req = loom_msg_new("job.launch", 0);
    json_object_set_new(req, "job", rec);
    launch_ctx_t *lc = loom_xcalloc(1, sizeof(*lc));
    *lc = (launch_ctx_t){c, job->id, job->start_time};
    job->launch_sent = true;
    if (ctld_node_request(c, n, req, sched_launch_replied, lc) < 0) {
        /* Its loomd is between connections: launched when the node registers
         * again (ctld_sched_node_up), or ended NODE_FAIL when it times out. */
        free(lc);
        job->launch_sent = false;
        loom_info("job %u: node %s has no loomd link now; launching when it returns", job->id,
                  n->cfg->name);
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

/* A --deadline job whose limit would end past its deadline starts with the
 * limit cut to end by it, never below its --time-min (slurmctld 22.05);
 * -1 when the limit stays. */
static int64_t sched_deadline_limit(const ctld_job_t *job, int64_t now)
{
    int64_t dl = job->sx ? job->sx->deadline : 0;
    if (!dl || job->time_min <= 0 || (job->time_limit >= 0 && now + job->time_limit * 60 <= dl))
        return -1;
    int64_t mins = (dl - now) / 60;
    return mins > job->time_min ? mins : job->time_min;
}

static void sched_start(ctld_t *c, ctld_job_t *job, const loom_sched_alloc_t *a, int64_t now)
{
    json_t *extra = json_pack("{s:o, s:I, s:s}", "alloc", ctld_alloc_to_json(c, a), "start_time",
                              (json_int_t)now, "batch_host", c->snodes[a->nodes[0].node].name);
    int64_t limit = sched_deadline_limit(job, now);
    if (limit >= 0)
        json_object_set_new(extra, "time_limit", json_integer((json_int_t)limit));
    loom_err_t err = {0};
    if (ctld_job_event(c, job, LOOM_JOB_EV_START, extra, &err) < 0) {
        loom_error("cannot start job %u: %s", job->id, err.msg);
        return;
    }
    loom_verbose("job %u started on %s", job->id, job->nodes);
    ctld_sched_job_plan(c, job, 0, NULL);
    ctld_bf_job_started(c, job);
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

/* ---- eligibility, entries and reasons ---------------------------------------- */

/* The reason a pending job cannot be considered now, or NULL (job_depend.h:
 * holds, begin time, dependencies, partition limits, array throttle). */
static const char *sched_ineligible(ctld_t *c, ctld_job_t *job, int64_t now)
{
    return ctld_job_ineligible(c, job, now);
}

/* Can the job no longer end before its --deadline? */
static bool sched_past_deadline(const ctld_job_t *job, int64_t now)
{
    int64_t dl = job->sx ? job->sx->deadline : 0;
    int64_t need =
        job->time_min > 0 ? job->time_min * 60 : (job->time_limit > 0 ? job->time_limit * 60 : 0);
    return dl && now + need > dl;
}

/* --deadline: a pending job that can no longer end in time ends as DEADLINE.
 * Walks backwards: the event moves the job off the pending array. */
static void sched_deadlines(ctld_t *c, int64_t now)
{
    for (size_t i = c->jobs_pending.n; i-- > 0;) {
        ctld_job_t *job = c->jobs_pending.v[i];
        if (!sched_past_deadline(job, now) || loom_job_base(job->state) != LOOM_JOB_PENDING)
            continue;
        /* status 1, which scontrol 22.05 shows as ExitCode=0:1 */
        json_t *extra = json_pack("{s:i, s:I, s:s}", "exit_code", 1, "end_time", (json_int_t)now,
                                  "reason", "DeadLine");
        if (ctld_job_event(c, job, LOOM_JOB_EV_DEADLINE, extra, NULL) == 0)
            loom_info("job %u cannot end before its deadline: DEADLINE", job->id);
        if (i > c->jobs_pending.n)
            i = c->jobs_pending.n;
    }
}

/* Index of partition `part` among the job's partitions; SIZE_MAX when none. */
static size_t sched_part_k(const ctld_job_t *job, uint32_t part)
{
    size_t np = job->sx && job->sx->nparts ? job->sx->nparts : 1;
    for (size_t k = 0; k < np; k++) {
        const ctld_part_t *p = job->sx && job->sx->nparts ? job->sx->parts[k] : job->part;
        if (p->idx == part)
            return k;
    }
    return SIZE_MAX;
}

/* bf_min_age_reserve: pending (and eligible) for less than that long. */
static bool sched_too_young(const ctld_t *c, const ctld_job_t *job, int64_t now)
{
    int64_t min_age = c->sched.x->bf_min_age_reserve;
    if (min_age <= 0)
        return false;
    int64_t t = job->eligible_time ? job->eligible_time : job->submit_time;
    t = job->begin_time > t ? job->begin_time : t;
    return now - t < min_age;
}

static loom_sched_job_t sched_make_entry(const ctld_t *c, ctld_job_t *job, size_t k, uint32_t slot,
                                         int64_t now)
{
    const ctld_part_t *p = job->sx && k < job->sx->nparts ? job->sx->parts[k] : job->part;
    return (loom_sched_job_t){.job_id = job->id,
                              .tier = (uint32_t)p->cfg->priority_tier,
                              .priority = ctld_sched_prio_of(job, k),
                              .submit_time = job->submit_time,
                              .duration = job->time_limit < 0 ? -1 : job->time_limit * 60,
                              .part = (uint32_t)p->idx,
                              .uid = job->uid,
                              .slot = slot,
                              .req = ctld_sched_job_req(job, k),
                              .ctx = job,
                              .no_reserve = sched_too_young(c, job, now)};
}

/* Is a pending job eligible, and from which of its partitions on (*k0)? A
 * partition limit of its first partition leaves the others. */
static bool sched_eligible(ctld_t *c, ctld_job_t *job, int64_t now, bool set_reason, size_t *k0)
{
    if (loom_job_base(job->state) != LOOM_JOB_PENDING)
        return false;
    if (sched_past_deadline(job, now)) {
        ctld_sched_trigger(c, true); /* the next full pass ends it (sched_deadlines) */
        return false;
    }
    const char *why = sched_ineligible(c, job, now);
    *k0 = 0;
    if (why && !strncmp(why, "Partition", 9) && job->sx && job->sx->nparts > 1) {
        *k0 = 1;
        why = NULL;
    }
    if (why) {
        if (set_reason)
            ctld_job_set_reason(job, why);
        return false;
    }
    ctld_sched_prio_update(c, job, now);
    return true;
}

void ctld_sched_add_entries(ctld_t *c, ctld_job_t *job, int64_t now, bool set_reason,
                            loom_sched_job_t **v, size_t *n, size_t *cap)
{
    size_t k0;
    if (!sched_eligible(c, job, now, set_reason, &k0))
        return;
    /* A pending array offers up to that many tasks (job_array.h). */
    uint32_t offers = ctld_array_startable(c, job);
    size_t np = job->sx && job->sx->nparts ? job->sx->nparts : 1;
    size_t want = *n + (size_t)offers * (np - k0);
    if (want > *cap) {
        *cap = want + want / 2 + 64;
        *v = loom_xreallocarray(*v, *cap, sizeof(**v));
    }
    bool *ok = loom_xcalloc(np, sizeof(bool));
    size_t nok = 0;
    char why[1024] = "";
    for (size_t k = k0; k < np; k++) {
        const ctld_part_t *p = job->sx && job->sx->nparts ? job->sx->parts[k] : job->part;
        char w[1024];
        ok[k] = ctld_sched_part_policy_ok(c, job, p, w, sizeof(w));
        nok += ok[k];
        if (!ok[k] && !why[0])
            snprintf(why, sizeof(why), "%s", w);
    }
    if (!nok) { /* AllowAccounts, DenyQos, ... in every partition it may use */
        if (set_reason)
            ctld_sched_set_policy_reason(job, why);
        free(ok);
        return;
    }
    for (uint32_t o = 0; o < offers; o++) {
        uint32_t slot = c->sched.x->next_slot++;
        for (size_t k = k0; k < np; k++)
            if (ok[k])
                (*v)[(*n)++] = sched_make_entry(c, job, k, slot, now);
    }
    free(ok);
}

bool ctld_sched_entry(ctld_t *c, ctld_job_t *job, uint32_t part, int64_t now, loom_sched_job_t *out)
{
    size_t k0;
    if (!sched_eligible(c, job, now, false, &k0))
        return false;
    size_t k = sched_part_k(job, part);
    char why[1024];
    if (k == SIZE_MAX || k < k0 ||
        !ctld_sched_part_policy_ok(c, job, &c->parts[part], why, sizeof(why)))
        return false;
    *out = sched_make_entry(c, job, k, 0, now);
    return true;
}

void ctld_sched_start_entry(ctld_t *c, ctld_job_t *job, uint32_t part, const loom_sched_alloc_t *a,
                            int64_t now)
{
    /* An array task is split off its pending array first (job_array.h). */
    job = ctld_array_take_task(c, job);
    if (!job)
        return;
    if (part != job->part->idx && part < c->nparts) {
        /* It runs in another of the partitions it named: that is its partition now. */
        json_t *ev = json_pack("{s:s, s:I, s:{s:s}}", "ev", "job.update", "job_id",
                               (json_int_t)job->id, "set", "partition", c->parts[part].cfg->name);
        loom_err_t err = {0};
        if (ctld_commit(c, ev, &err) < 0) {
            loom_error("job %u: cannot move to partition %s: %s", job->id, c->parts[part].cfg->name,
                       err.msg);
            return;
        }
    }
    sched_start(c, job, a, now);
}

/* The pending jobs to look at, their entries into s->jobs; reasons for the rest. */
static size_t sched_collect(ctld_t *c, const ctld_vec_t *from, int64_t now)
{
    ctld_sched_t *s = &c->sched;
    size_t n = 0, cap = s->cap;
    c->sched.x->next_slot = 0;
    for (size_t i = 0; i < from->n; i++)
        ctld_sched_add_entries(c, from->v[i], now, true, &s->jobs, &n, &cap);
    if (cap > s->cap) {
        s->cap = cap;
        s->results = loom_xreallocarray(s->results, s->cap, sizeof(*s->results));
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
        if (loom_job_base(job->state) != LOOM_JOB_PENDING ||
            (i > from && s->jobs[i - 1].ctx == job)) /* a pending array's later offers */
            continue;
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
        loom_sched_verdict_t v = s->results[i].verdict;
        if (v == LOOM_SCHED_STARTED) {
            ctld_sched_start_entry(c, job, s->jobs[i].part, &s->results[i].alloc, now);
            loom_sched_alloc_fini(&s->results[i].alloc);
            continue;
        }
        if (v == LOOM_SCHED_DUPLICATE || loom_job_base(job->state) != LOOM_JOB_PENDING)
            continue;
        /* A pending array's later offers keep the reason of its first one that
         * did not start (Resources, as Slurm shows it), not "Priority". */
        if (i > 0 && s->jobs[i - 1].ctx == job && s->results[i - 1].verdict != LOOM_SCHED_STARTED)
            continue;
        if (v == LOOM_SCHED_NO_RESOURCES)
            ctld_job_set_reason(job, "Resources");
        else if (v == LOOM_SCHED_NODES_UNAVAILABLE)
            ctld_job_set_reason(job, CTLD_REASON_NODES_DOWN);
        else if (v == LOOM_SCHED_BAD_REQUEST)
            ctld_job_set_reason(job, "BadConstraints");
        else
            ctld_job_set_reason(job, "Priority");
    }
    sched_unexamined(c, examined, n);
}

void ctld_sched_run(ctld_t *c)
{
    ctld_sched_t *s = &c->sched;
    if (!s->x)
        return; /* after ctld_sched_fini */
    int64_t now = ctld_now();
    bool full = s->full;
    s->pending = false;
    s->full = false;
    if (full) {
        memset(s->part_blocked, 0, c->nparts * sizeof(bool));
        sched_deadlines(c, now);
    }
    size_t n = sched_collect(c, full ? &c->jobs_pending : &s->fresh, now);
    s->fresh.n = 0;
    loom_sched_sort(s->jobs, n);
    n = ctld_policy_filter(c, s->jobs, n, c->sched.x->next_slot, true); /* accounting limits */
    loom_sched_pass_opts_t o = {
        .nparts = c->nparts, .part_blocked = s->part_blocked, .nslots = c->sched.x->next_slot};
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
    if (full) {
        s->full = true;
        ctld_bf_released(c);
    }
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

void ctld_sched_mark_launched(ctld_t *c)
{
    for (size_t i = 0; i < c->jobs_running.n; i++) {
        ctld_job_t *job = c->jobs_running.v[i];
        job->launch_sent = true;
        job->launch_acked = true;
    }
}

void ctld_sched_init(ctld_t *c)
{
    uv_timer_init(c->loop, &c->sched.timer);
    c->sched.timer.data = c;
    c->sched.part_blocked = loom_xcalloc(c->nparts + 1, sizeof(bool));
    c->sched.full = true;
    c->sched.x = loom_xcalloc(1, sizeof(*c->sched.x));
    ctld_sched_prio_init(c);
    ctld_bf_init(c);
}

void ctld_sched_fini(ctld_t *c)
{
    if (c->sched.timer.loop && !uv_is_closing((uv_handle_t *)&c->sched.timer))
        uv_close((uv_handle_t *)&c->sched.timer, NULL);
    ctld_bf_fini(c);
    ctld_sched_prio_fini(c);
    free(c->sched.x);
    c->sched.x = NULL;
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

/* Not within the backfill window: once the running jobs reach their limits. */
static int64_t sched_test_fallback(ctld_t *c, ctld_job_t *job, int64_t now, loom_sched_alloc_t *a)
{
    int64_t when = now;
    loom_sched_try_place(c->snodes, c->nnodes, &job->req, LOOM_SCHED_IGNORE_ALLOC, a);
    for (size_t i = 0; i < c->jobs_running.n; i++) {
        const ctld_job_t *r = c->jobs_running.v[i];
        int64_t end = r->time_limit < 0 ? now + 365 * 86400 : r->start_time + r->time_limit * 60;
        if (end > when)
            when = end;
    }
    if (!a->nnodes)
        loom_sched_try_place(c->snodes, c->nnodes, &job->req, LOOM_SCHED_IGNORE_USED, a);
    return when;
}

void ctld_sched_test_only(ctld_t *c, ctld_job_t *job, json_t *reply)
{
    int64_t now = ctld_now();
    loom_sched_alloc_t a = {0};
    size_t k = 0;
    int64_t when = ctld_bf_when(c, job, &k, &a);
    if (!when) {
        loom_sched_alloc_fini(&a);
        when = sched_test_fallback(c, job, now, &a);
        k = 0;
    }
    const ctld_part_t *p = job->sx && k < job->sx->nparts ? job->sx->parts[k] : job->part;
    char *nodes = a.nnodes ? ctld_alloc_nodelist(c, &a) : loom_xstrdup("");
    json_object_set_new(reply, "start_time", json_integer(when));
    json_object_set_new(reply, "nodes", json_string(nodes));
    json_object_set_new(reply, "num_cpus", json_integer(a.nnodes ? a.ncpus : job->min_cpus));
    json_object_set_new(reply, "partition", json_string(p->cfg->name));
    free(nodes);
    loom_sched_alloc_fini(&a);
}
