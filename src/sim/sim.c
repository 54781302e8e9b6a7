/* sim.c - virtual-time replay of a trace through src/sched. See sim.h. */
#include "sim/sim.h"
#include "common/xalloc.h"
#include "sched/backfill.h"
#include "sched/pass.h"
#include "sched/priority.h"
#include "sched/resources.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A trace job as the simulation sees it. */
typedef struct {
    const loom_sim_job_t *tj;
    loom_sched_req_t req;
    loom_sched_gres_req_t gres;
    loom_sched_alloc_t alloc;
    int64_t start, end;
    bool skipped, started;
} sjob_t;

typedef struct {
    int64_t end;
    uint32_t job;
} heap_ent_t;

typedef struct {
    const loom_sim_opts_t *o;
    loom_sched_node_t *nodes;
    char (*names)[16];
    sjob_t *jobs;
    size_t njobs;
    uint32_t *pending;
    size_t npending;
    heap_ent_t *heap;
    size_t nheap;
    loom_sched_prio_conf_t prio;
    loom_sched_job_t *sj;
    loom_sched_result_t *res;
    loom_sched_bf_result_t *bres;
    uint64_t used_cpus, used_gpus, total_cpus, total_gpus;
    double busy_cpu, busy_gpu, frag; /* integrals over time */
    loom_sim_result_t *out;
} sim_t;

const char *loom_sim_policy_name(loom_sim_policy_t p)
{
    static const char *const names[] = {"fifo", "priority", "backfill"};
    return p < LOOM_SIM_NPOLICY ? names[p] : "?";
}

int loom_sim_policy_parse(const char *s)
{
    for (int p = 0; p < LOOM_SIM_NPOLICY; p++)
        if (strcmp(s, loom_sim_policy_name((loom_sim_policy_t)p)) == 0)
            return p;
    return -1;
}

/* ---- the running-jobs heap (by end time) --------------------------------------- */

static bool sim_heap_less(const heap_ent_t *a, const heap_ent_t *b)
{
    return a->end < b->end || (a->end == b->end && a->job < b->job);
}

static void sim_heap_push(sim_t *s, int64_t end, uint32_t job)
{
    size_t i = s->nheap++;
    s->heap[i] = (heap_ent_t){end, job};
    while (i && sim_heap_less(&s->heap[i], &s->heap[(i - 1) / 2])) {
        heap_ent_t tmp = s->heap[i];
        s->heap[i] = s->heap[(i - 1) / 2];
        s->heap[(i - 1) / 2] = tmp;
        i = (i - 1) / 2;
    }
}

static heap_ent_t sim_heap_pop(sim_t *s)
{
    heap_ent_t top = s->heap[0];
    s->heap[0] = s->heap[--s->nheap];
    for (size_t i = 0;;) {
        size_t l = 2 * i + 1, r = l + 1, m = i;
        if (l < s->nheap && sim_heap_less(&s->heap[l], &s->heap[m]))
            m = l;
        if (r < s->nheap && sim_heap_less(&s->heap[r], &s->heap[m]))
            m = r;
        if (m == i)
            break;
        heap_ent_t tmp = s->heap[i];
        s->heap[i] = s->heap[m];
        s->heap[m] = tmp;
        i = m;
    }
    return top;
}

/* ---- set-up ------------------------------------------------------------------------ */

static uint32_t sim_div_up(uint64_t a, uint64_t b)
{
    return (uint32_t)(b ? (a + b - 1) / b : a);
}

/* The request of a trace job: as few nodes as its CPUs and GPUs allow. */
static void sim_req(const loom_sim_opts_t *o, sjob_t *j)
{
    const loom_sim_job_t *t = j->tj;
    uint32_t k = 1;
    if (t->gpus && o->gpus && t->gpus > o->gpus)
        k = sim_div_up(t->gpus, o->gpus);
    if (t->cpus > o->cpus && sim_div_up(t->cpus, o->cpus) > k)
        k = sim_div_up(t->cpus, o->cpus);
    loom_sched_req_t *r = &j->req;
    *r = (loom_sched_req_t){.min_nodes = k, .max_nodes = k};
    if (t->gpus) {
        j->gres = (loom_sched_gres_req_t){"gpu", NULL, sim_div_up(t->gpus, k)};
        r->gres = &j->gres;
        r->ngres = 1;
        r->ntasks = k;
        r->cpus_per_task = sim_div_up(t->cpus, k);
    } else {
        r->ntasks = t->cpus > k ? t->cpus : k;
    }
    if (o->mem && t->mem)
        r->mem_per_node = sim_div_up(t->mem, k) < o->mem ? sim_div_up(t->mem, k) : o->mem;
}

static void sim_setup(sim_t *s, const loom_sim_trace_t *t)
{
    const loom_sim_opts_t *o = s->o;
    s->nodes = loom_xcalloc(o->nodes + 1, sizeof(*s->nodes));
    s->names = loom_xcalloc(o->nodes + 1, sizeof(*s->names));
    for (uint32_t i = 0; i < o->nodes; i++) {
        snprintf(s->names[i], sizeof(s->names[i]), "sim%u", i);
        loom_sched_node_init(&s->nodes[i], s->names[i], o->cpus, o->mem ? o->mem : 1);
        for (uint32_t g = 0; g < o->gpus; g++)
            loom_sched_node_add_gres(&s->nodes[i], "gpu", NULL, (int)g, 1);
    }
    s->total_cpus = (uint64_t)o->nodes * o->cpus;
    s->total_gpus = (uint64_t)o->nodes * o->gpus;
    s->njobs = t->n;
    s->jobs = loom_xcalloc(t->n + 1, sizeof(*s->jobs));
    for (size_t i = 0; i < t->n; i++) {
        sjob_t *j = &s->jobs[i];
        j->tj = &t->v[i];
        sim_req(o, j);
        loom_sched_alloc_t a = {0};
        j->skipped = (t->v[i].gpus && !o->gpus) ||
                     loom_sched_try_place(s->nodes, o->nodes, &j->req, LOOM_SCHED_IGNORE_USED, &a);
        loom_sched_alloc_fini(&a);
    }
    s->pending = loom_xcalloc(t->n + 1, sizeof(uint32_t));
    s->heap = loom_xcalloc(t->n + 1, sizeof(heap_ent_t));
    s->sj = loom_xcalloc(t->n + 1, sizeof(*s->sj));
    s->res = loom_xcalloc(t->n + 1, sizeof(*s->res));
    s->bres = loom_xcalloc(t->n + 1, sizeof(*s->bres));
    s->prio = (loom_sched_prio_conf_t){.w_age = 1000,
                                       .w_job_size = 1000,
                                       .max_age = 86400,
                                       .cluster_nodes = o->nodes,
                                       .cluster_cpus = s->total_cpus};
}

static void sim_teardown(sim_t *s)
{
    for (size_t i = 0; i < s->njobs; i++)
        loom_sched_alloc_fini(&s->jobs[i].alloc);
    for (uint32_t i = 0; i < s->o->nodes; i++)
        loom_sched_node_fini(&s->nodes[i]);
    free(s->nodes);
    free(s->names);
    free(s->jobs);
    free(s->pending);
    free(s->heap);
    free(s->sj);
    free(s->res);
    free(s->bres);
}

/* ---- scheduling ---------------------------------------------------------------------- */

static uint32_t sim_gpus_of(const sjob_t *j)
{
    return (uint32_t)(j->req.ngres ? j->gres.count * j->req.min_nodes : 0);
}

static void sim_start(sim_t *s, uint32_t ji, loom_sched_alloc_t *a, int64_t now)
{
    sjob_t *j = &s->jobs[ji];
    j->alloc = *a;
    memset(a, 0, sizeof(*a));
    j->started = true;
    j->start = now;
    j->end = now + j->tj->runtime;
    s->used_cpus += j->alloc.ncpus;
    s->used_gpus += sim_gpus_of(j);
    sim_heap_push(s, j->end, ji);
}

static uint32_t sim_priority(const sim_t *s, const sjob_t *j, int64_t now)
{
    if (s->o->policy == LOOM_SIM_FIFO)
        return 1;
    loom_sched_prio_job_t pj = {.now = now,
                                .eligible_time = j->tj->submit ? j->tj->submit : 1,
                                .min_nodes = j->req.min_nodes,
                                .cpus = j->tj->cpus};
    loom_sched_prio_factors_t f;
    loom_sched_prio_compute(&s->prio, &pj, &f);
    return f.priority;
}

static size_t sim_queue(sim_t *s, int64_t now)
{
    for (size_t i = 0; i < s->npending; i++) {
        const sjob_t *j = &s->jobs[s->pending[i]];
        s->sj[i] = (loom_sched_job_t){.job_id = j->tj->id,
                                      .priority = sim_priority(s, j, now),
                                      .submit_time = j->tj->submit,
                                      .duration = j->tj->limit,
                                      .req = &j->req,
                                      .ctx = (void *)(uintptr_t)s->pending[i]};
    }
    loom_sched_sort(s->sj, s->npending);
    return s->npending;
}

static void sim_drop_started(sim_t *s)
{
    size_t k = 0;
    for (size_t i = 0; i < s->npending; i++)
        if (!s->jobs[s->pending[i]].started)
            s->pending[k++] = s->pending[i];
    s->npending = k;
}

static void sim_backfill(sim_t *s, size_t n, int64_t now)
{
    loom_sched_running_t *run = loom_xcalloc(s->nheap + 1, sizeof(*run));
    for (size_t i = 0; i < s->nheap; i++) {
        const sjob_t *j = &s->jobs[s->heap[i].job];
        run[i] = (loom_sched_running_t){&j->alloc, j->start + j->tj->limit};
    }
    loom_sched_bf_opts_t bo = {.now = now,
                               .window = s->o->bf_window,
                               .resolution = s->o->bf_resolution,
                               .max_job_test = s->o->bf_max_job_test};
    loom_sched_backfill(s->nodes, s->o->nodes, run, s->nheap, s->sj, n, &bo, s->bres);
    free(run);
    for (size_t i = 0; i < n; i++) {
        if (s->bres[i].verdict == LOOM_SCHED_STARTED) {
            sim_start(s, (uint32_t)(uintptr_t)s->sj[i].ctx, &s->bres[i].alloc, now);
            s->out->backfill_starts++;
        }
        loom_sched_alloc_fini(&s->bres[i].alloc);
    }
}

static void sim_schedule(sim_t *s, int64_t now)
{
    size_t n = sim_queue(s, now);
    if (!n)
        return;
    loom_sched_pass_opts_t po = {.nparts = 1};
    size_t examined = loom_sched_pass(s->nodes, s->o->nodes, s->sj, n, &po, s->res);
    for (size_t i = 0; i < examined; i++)
        if (s->res[i].verdict == LOOM_SCHED_STARTED)
            sim_start(s, (uint32_t)(uintptr_t)s->sj[i].ctx, &s->res[i].alloc, now);
    s->out->passes++;
    if (s->o->policy == LOOM_SIM_BACKFILL) {
        size_t k = 0; /* the jobs still pending, in the same order */
        for (size_t i = 0; i < n; i++)
            if (!s->jobs[(uintptr_t)s->sj[i].ctx].started)
                s->sj[k++] = s->sj[i];
        sim_backfill(s, k, now);
    }
    sim_drop_started(s);
}

/* GPUs idle while some waiting job asks for no more than that. */
static bool sim_fragmented(const sim_t *s)
{
    uint64_t idle = s->total_gpus - s->used_gpus;
    for (size_t i = 0; idle && i < s->npending; i++) {
        uint32_t g = sim_gpus_of(&s->jobs[s->pending[i]]);
        if (g && g <= idle)
            return true;
    }
    return false;
}

static void sim_integrate(sim_t *s, int64_t from, int64_t to)
{
    double dt = (double)(to - from);
    if (dt <= 0)
        return;
    s->busy_cpu += (double)s->used_cpus * dt;
    s->busy_gpu += (double)s->used_gpus * dt;
    if (sim_fragmented(s))
        s->frag += (double)(s->total_gpus - s->used_gpus) * dt;
}

/* ---- the loop and the figures ---------------------------------------------------------- */

static int sim_wait_cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static void sim_figures(sim_t *s, int64_t first, int64_t last)
{
    loom_sim_result_t *out = s->out;
    double *waits = loom_xcalloc(s->njobs + 1, sizeof(double));
    double sum = 0, bsld = 0;
    size_t n = 0;
    for (size_t i = 0; i < s->njobs; i++) {
        const sjob_t *j = &s->jobs[i];
        if (!j->started)
            continue;
        double w = (double)(j->start - j->tj->submit), run = (double)j->tj->runtime;
        waits[n++] = w;
        sum += w;
        double b = (w + run) / (run > 10 ? run : 10);
        bsld += b > 1 ? b : 1;
    }
    qsort(waits, n, sizeof(double), sim_wait_cmp);
    out->jobs = n;
    out->mean_wait = n ? sum / (double)n : 0;
    out->p95_wait = n ? waits[(size_t)((double)(n - 1) * 0.95 + 0.5)] : 0;
    out->mean_bsld = n ? bsld / (double)n : 0;
    out->makespan = last > first ? last - first : 0;
    double span = (double)out->makespan;
    out->util_cpu = span > 0 && s->total_cpus ? s->busy_cpu / (span * (double)s->total_cpus) : 0;
    out->util_gpu = span > 0 && s->total_gpus ? s->busy_gpu / (span * (double)s->total_gpus) : 0;
    out->gpu_frag = span > 0 && s->total_gpus ? s->frag / (span * (double)s->total_gpus) : 0;
    free(waits);
}

static void sim_events_at(sim_t *s, int64_t t, size_t *next)
{
    while (s->nheap && s->heap[0].end == t) {
        heap_ent_t e = sim_heap_pop(s);
        sjob_t *j = &s->jobs[e.job];
        loom_sched_alloc_release(s->nodes, s->o->nodes, &j->alloc);
        s->used_cpus -= j->alloc.ncpus;
        s->used_gpus -= sim_gpus_of(j);
    }
    for (; *next < s->njobs && s->jobs[*next].tj->submit == t; (*next)++) {
        if (s->jobs[*next].skipped)
            s->out->skipped++;
        else
            s->pending[s->npending++] = (uint32_t)*next;
    }
}

int loom_sim_run(const loom_sim_trace_t *t, const loom_sim_opts_t *o, loom_sim_result_t *out)
{
    if (!o->nodes || !o->cpus)
        return -EINVAL;
    sim_t s = {.o = o, .out = out};
    memset(out, 0, sizeof(*out));
    sim_setup(&s, t);
    size_t next = 0;
    int64_t first = t->n ? t->v[0].submit : 0, last = first, now = first;
    while (next < s.njobs || s.nheap) {
        int64_t tn = next < s.njobs ? s.jobs[next].tj->submit : INT64_MAX;
        if (s.nheap && s.heap[0].end < tn)
            tn = s.heap[0].end;
        sim_integrate(&s, now, tn);
        now = tn;
        sim_events_at(&s, now, &next);
        sim_schedule(&s, now);
        if (now > last)
            last = now;
    }
    out->skipped += s.npending; /* left waiting for ever (cannot happen with a checked fit) */
    sim_figures(&s, first, last);
    sim_teardown(&s);
    return 0;
}
