/* sched_bf.c - backfill passes on a timer, in chunks. See sched_bf.h. */
#include "ctld/sched_bf.h"
#include "ctld/assoc_policy.h"
#include "common/jobstate.h"
#include "common/log.h"
#include "common/xalloc.h"
#include "ctld/job_mgr.h"
#include "ctld/job_ops.h"
#include "ctld/job_rec.h"
#include "ctld/sched_driver.h"
#include "ctld/sched_job.h"
#include "ctld/sched_x.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* One entry of the pass: which job, in which partition, which slot. */
typedef struct {
    uint32_t job_id;
    uint32_t part; /* partition index */
    uint32_t slot;
} bf_ent_t;

struct ctld_bf_run {
    loom_sched_bf_t *planner;
    bf_ent_t *ents;
    size_t n, next;
    uint64_t epoch, id;
    int64_t now;
    uint32_t nslots;
    uv_timer_t *step; /* the continuation (a zero timer) */
};

/* ---- settings ------------------------------------------------------------------------ */

static int64_t bf_param(const char *params, const char *key, int64_t dflt)
{
    size_t klen = strlen(key);
    for (const char *p = params ? params : ""; *p; p += strcspn(p, ",") + (p[strcspn(p, ",")] != 0))
        if (strncasecmp(p, key, klen) == 0 && p[klen] == '=')
            return strtoll(p + klen + 1, NULL, 10);
    return dflt;
}

/* A count limit of SchedulerParameters; 0 (none) when absent or not positive. */
static uint32_t bf_limit(const char *params, const char *key)
{
    int64_t v = bf_param(params, key, 0);
    return v > 0 && v <= UINT32_MAX ? (uint32_t)v : 0;
}

static bool bf_flag(const char *params, const char *key)
{
    size_t klen = strlen(key);
    for (const char *p = params ? params : ""; *p; p += strcspn(p, ",") + (p[strcspn(p, ",")] != 0))
        if (strncasecmp(p, key, klen) == 0 && (p[klen] == ',' || !p[klen]))
            return true;
    return false;
}

static void bf_timer_cb(uv_timer_t *t);

void ctld_bf_init(ctld_t *c)
{
    ctld_sched_x_t *x = c->sched.x;
    const char *sp = c->conf->scheduler_parameters;
    x->backfill = !c->conf->scheduler_type || strcmp(c->conf->scheduler_type, "sched/builtin") != 0;
    x->bf_interval = bf_param(sp, "bf_interval", 30);
    x->bf_window = bf_param(sp, "bf_window", 1440) * 60;
    x->bf_resolution = bf_param(sp, "bf_resolution", 60);
    x->bf_max_job_test = (uint32_t)bf_param(sp, "bf_max_job_test", 500);
    x->bf_max_job_user = bf_limit(sp, "bf_max_job_user");
    x->bf_max_job_part = bf_limit(sp, "bf_max_job_part");
    x->bf_max_job_start = bf_limit(sp, "bf_max_job_start");
    x->bf_continue = bf_flag(sp, "bf_continue");
    x->bf_min_age_reserve = bf_param(sp, "bf_min_age_reserve", 0);
    /* Slurm's defaults (2 s of work, then 0.5 s asleep) suit a threaded
     * controller; this one shares its loop, so it yields after 20 ms and goes
     * on at once unless told otherwise. Microseconds, as in Slurm. */
    int64_t yield_us = bf_param(sp, "bf_yield_interval", CTLD_BF_BUDGET_MS * 1000);
    int64_t sleep_us = bf_param(sp, "bf_yield_sleep", 0);
    x->bf_yield_ns = (uint64_t)(yield_us >= 1000 && yield_us <= 10000000 ? yield_us : 20000) * 1000;
    x->bf_yield_sleep_ms = (uint64_t)(sleep_us > 0 && sleep_us <= 10000000 ? sleep_us / 1000 : 0);
    x->bf_timer = loom_xcalloc(1, sizeof(*x->bf_timer));
    uv_timer_init(c->loop, x->bf_timer);
    x->bf_timer->data = c;
    if (x->backfill && x->bf_interval > 0)
        uv_timer_start(x->bf_timer, bf_timer_cb, (uint64_t)x->bf_interval * 1000,
                       (uint64_t)x->bf_interval * 1000);
}

/* ---- a pass ------------------------------------------------------------------------- */

static void bf_step_closed(uv_handle_t *h)
{
    free(h);
}

static void bf_end(ctld_t *c)
{
    ctld_sched_x_t *x = c->sched.x;
    ctld_bf_run_t *r = x->bf;
    if (!r)
        return;
    /* Plans from an older pass that this one did not renew are gone. */
    for (size_t i = 0; r->next >= r->n && i < c->jobs_pending.n; i++) {
        ctld_job_t *job = c->jobs_pending.v[i];
        if (job->sx && job->sx->planned && job->sx->plan_run != r->id)
            ctld_sched_job_plan(c, job, 0, NULL);
    }
    loom_sched_bf_destroy(r->planner);
    free(r->ents);
    if (r->step) {
        uv_timer_stop(r->step);
        uv_close((uv_handle_t *)r->step, bf_step_closed);
    }
    free(r);
    x->bf = NULL;
}

void ctld_bf_fini(ctld_t *c)
{
    ctld_sched_x_t *x = c->sched.x;
    if (!x)
        return;
    bf_end(c);
    if (x->bf_timer) {
        uv_timer_stop(x->bf_timer);
        uv_close((uv_handle_t *)x->bf_timer, bf_step_closed);
        x->bf_timer = NULL;
    }
}

static int64_t bf_job_end(const ctld_job_t *job)
{
    return job->time_limit < 0 ? LOOM_SCHED_BF_NEVER : ctld_job_limit_end(job);
}

static loom_sched_bf_t *bf_planner(ctld_t *c, int64_t now, uint32_t nslots)
{
    ctld_sched_x_t *x = c->sched.x;
    loom_sched_running_t *run = loom_xcalloc(c->jobs_running.n + 1, sizeof(*run));
    size_t n = 0;
    for (size_t i = 0; i < c->jobs_running.n; i++) {
        const ctld_job_t *job = c->jobs_running.v[i];
        if (job->alloc_applied)
            run[n++] = (loom_sched_running_t){&job->alloc, bf_job_end(job)};
    }
    loom_sched_bf_opts_t o = {.now = now, .nslots = nslots}; /* Slurm's defaults without x */
    if (x) {
        o.window = x->bf_window;
        o.resolution = x->bf_resolution;
        o.max_job_test = x->bf_max_job_test;
        o.max_job_user = x->bf_max_job_user;
        o.max_job_part = x->bf_max_job_part;
        o.max_job_start = x->bf_max_job_start;
    }
    loom_sched_bf_t *bf = loom_sched_bf_create(c->snodes, c->nnodes, run, n, &o);
    free(run);
    return bf;
}

static int bf_ent_cmp_ctx(const void *a, const void *b)
{
    return loom_sched_job_cmp(a, b);
}

/* The eligible pending jobs in scheduling order, as entries. */
static void bf_collect(ctld_t *c, ctld_bf_run_t *r)
{
    loom_sched_job_t *v = NULL;
    size_t n = 0, cap = 0;
    for (size_t i = 0; i < c->jobs_pending.n; i++)
        ctld_sched_add_entries(c, c->jobs_pending.v[i], r->now, false, &v, &n, &cap);
    if (n)
        qsort(v, n, sizeof(*v), bf_ent_cmp_ctx);
    r->ents = loom_xcalloc(n + 1, sizeof(*r->ents));
    for (size_t i = 0; i < n; i++) {
        r->ents[i] = (bf_ent_t){v[i].job_id, v[i].part, v[i].slot};
        if (v[i].slot >= r->nslots)
            r->nslots = v[i].slot + 1;
    }
    r->n = n;
    free(v);
}

static void bf_step_cb(uv_timer_t *t);

static void bf_start(ctld_t *c)
{
    ctld_sched_x_t *x = c->sched.x;
    if (x->bf || !x->backfill || c->shutting_down || c->replaying)
        return;
    ctld_bf_run_t *r = loom_xcalloc(1, sizeof(*r));
    r->now = ctld_now();
    r->epoch = x->epoch;
    r->id = ++x->bf_runs;
    x->bf = r;
    bf_collect(c, r);
    r->planner = bf_planner(c, r->now, r->nslots);
    r->step = loom_xcalloc(1, sizeof(*r->step));
    uv_timer_init(c->loop, r->step);
    r->step->data = c;
    uv_timer_start(r->step, bf_step_cb, 0, 0);
}

/* Apply one result: a start, or a plan. */
static void bf_apply(ctld_t *c, ctld_bf_run_t *r, loom_sched_job_t *e, loom_sched_bf_result_t *res)
{
    ctld_job_t *job = e->ctx;
    if (res->verdict == LOOM_SCHED_STARTED) {
        if (job->sx) {
            job->sx->bf_eval = r->now;
            job->sx->bf_started = true;
        }
        loom_sched_alloc_release(c->snodes, c->nnodes, &res->alloc);
        ctld_sched_start_entry(c, job, e->part, &res->alloc, r->now);
        c->sched.x->bf_started++;
        return;
    }
    if (res->verdict != LOOM_SCHED_NO_RESOURCES && res->verdict != LOOM_SCHED_NODES_UNAVAILABLE)
        return;
    char *nodes = res->start && res->alloc.nnodes ? ctld_alloc_nodelist(c, &res->alloc) : NULL;
    ctld_sched_job_plan(c, job, res->start, nodes);
    job->sx->plan_run = r->id;
    job->sx->bf_eval = r->now;
    free(nodes);
}

/* One chunk: up to CTLD_BF_CHUNK entries whose jobs are still pending. */
static void bf_chunk(ctld_t *c, ctld_bf_run_t *r)
{
    loom_sched_job_t v[CTLD_BF_CHUNK] = {0}; /* gcc -O2 cannot see ctld_sched_entry fill them */
    loom_sched_bf_result_t res[CTLD_BF_CHUNK];
    size_t m = 0;
    for (; r->next < r->n && m < CTLD_BF_CHUNK; r->next++) {
        const bf_ent_t *en = &r->ents[r->next];
        ctld_job_t *job = ctld_job_find(c, en->job_id);
        if (!job || !ctld_sched_entry(c, job, en->part, r->now, &v[m]))
            continue;
        v[m++].slot = en->slot;
    }
    m = ctld_policy_filter(c, v, m, r->nslots, true); /* accounting limits */
    memset(res, 0, sizeof(res));
    loom_sched_bf_run(r->planner, c->snodes, c->nnodes, v, m, 0, 0, res);
    for (size_t i = 0; i < m; i++) {
        bf_apply(c, r, &v[i], &res[i]);
        loom_sched_alloc_fini(&res[i].alloc);
    }
    if (loom_sched_bf_tested(r->planner) >= c->sched.x->bf_max_job_test)
        r->next = r->n;
}

static void bf_step_cb(uv_timer_t *t)
{
    ctld_t *c = t->data;
    ctld_sched_x_t *x = c->sched.x;
    ctld_bf_run_t *r = x->bf;
    if (!r || c->shutting_down)
        return;
    if (r->epoch != x->epoch && !x->bf_continue) {
        r->next = r->n; /* resources changed: the next pass plans afresh */
    }
    uint64_t t0 = uv_hrtime();
    while (r->next < r->n && uv_hrtime() - t0 < x->bf_yield_ns)
        bf_chunk(c, r);
    if (r->next < r->n) {
        uv_timer_start(r->step, bf_step_cb, x->bf_yield_sleep_ms, 0); /* yield: others first */
        return;
    }
    loom_verbose("backfill pass %llu: %zu entries, %u examined", (unsigned long long)r->id, r->n,
                 loom_sched_bf_tested(r->planner));
    bf_end(c);
}

static void bf_timer_cb(uv_timer_t *t)
{
    bf_start(t->data);
}

void ctld_bf_run_now(ctld_t *c)
{
    bf_start(c);
}

void ctld_bf_job_started(ctld_t *c, const ctld_job_t *job)
{
    ctld_sched_x_t *x = c->sched.x;
    if (x && x->bf && job->alloc_applied)
        loom_sched_bf_add_running(x->bf->planner, c->snodes, &job->alloc, bf_job_end(job));
}

void ctld_bf_released(ctld_t *c)
{
    if (c->sched.x)
        c->sched.x->epoch++;
}

/* ---- --test-only ------------------------------------------------------------------------ */

int64_t ctld_bf_when(ctld_t *c, ctld_job_t *job, size_t *k, loom_sched_alloc_t *where)
{
    int64_t now = ctld_now(), best = LOOM_SCHED_BF_NEVER;
    loom_sched_bf_t *bf = bf_planner(c, now, 0);
    size_t np = job->sx && job->sx->nparts ? job->sx->nparts : 1;
    for (size_t i = 0; i < np; i++) {
        loom_sched_job_t e = {.job_id = job->id,
                              .duration = job->time_limit < 0 ? -1 : job->time_limit * 60,
                              .req = ctld_sched_job_req(job, i)};
        loom_sched_alloc_t a = {0};
        int64_t t = loom_sched_bf_earliest(bf, c->snodes, c->nnodes, &e, &a);
        if (t < best) {
            best = t;
            *k = i;
            loom_sched_alloc_fini(where);
            *where = a;
        } else {
            loom_sched_alloc_fini(&a);
        }
    }
    loom_sched_bf_destroy(bf);
    return best == LOOM_SCHED_BF_NEVER ? 0 : best;
}
