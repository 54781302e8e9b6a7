/* bench.c - timing one pass and one backfill pass on a large cluster. See bench.h. */
#include "sim/bench.h"
#include "common/xalloc.h"
#include "sched/backfill.h"
#include "sched/pass.h"
#include "sched/resources.h"
#include "sim/trace.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#define BENCH_CPUS 64
#define BENCH_GPUS 8
#define BENCH_MEM  (1024u * 1024u)

typedef struct {
    loom_sched_node_t *nodes;
    char (*names)[16];
    uint32_t nnodes;
    loom_sched_alloc_t *run;
    loom_sched_running_t *running;
    size_t nrun;
    loom_sched_req_t *reqs;
    loom_sched_gres_req_t *gres;
    loom_sched_job_t *jobs;
    size_t njobs;
} bench_t;

static double bench_ms(const struct timespec *a, const struct timespec *b)
{
    return (double)(b->tv_sec - a->tv_sec) * 1e3 + (double)(b->tv_nsec - a->tv_nsec) / 1e6;
}

static long bench_rss_mib(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return ru.ru_maxrss / 1024;
}

static void bench_nodes(bench_t *b, uint32_t n)
{
    static const uint32_t lo[] = {0,  1,  2,  3,  4,  5,  6,  7,  8,  9,  10, 11, 12, 13, 14, 15,
                                  16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31};
    uint32_t hi[32];
    for (uint32_t i = 0; i < 32; i++)
        hi[i] = 32 + i;
    b->nnodes = n;
    b->nodes = loom_xcalloc(n + 1, sizeof(*b->nodes));
    b->names = loom_xcalloc(n + 1, sizeof(*b->names));
    for (uint32_t i = 0; i < n; i++) {
        snprintf(b->names[i], sizeof(b->names[i]), "gpu%05u", i);
        loom_sched_node_init(&b->nodes[i], b->names[i], BENCH_CPUS, BENCH_MEM);
        loom_sched_node_set_topology(&b->nodes[i], 2, 32, 1, false);
        for (int g = 0; g < BENCH_GPUS; g++) {
            loom_sched_node_add_gres(&b->nodes[i], "gpu", "h100", g, 1);
            loom_sched_node_set_gres_cpus(&b->nodes[i], (size_t)g, g < 4 ? lo : hi, 32);
        }
    }
}

/* A job shape: GPUs in all (0: CPU-only) spread over nodes. */
static void bench_shape(loom_sim_rng_t *r, loom_sched_req_t *q, loom_sched_gres_req_t *g)
{
    uint32_t x = loom_sim_rand(r, 100), gpus, nodes = 1;
    if (x < 40)
        gpus = 1;
    else if (x < 55)
        gpus = 2;
    else if (x < 70)
        gpus = 4;
    else if (x < 85)
        gpus = 8;
    else if (x < 90)
        gpus = 16, nodes = 2;
    else if (x < 92)
        gpus = 64, nodes = 8;
    else
        gpus = 0;
    *q = (loom_sched_req_t){.min_nodes = nodes, .max_nodes = nodes, .ntasks = nodes};
    if (gpus) {
        *g = (loom_sched_gres_req_t){"gpu", NULL, gpus / nodes};
        q->gres = g;
        q->ngres = 1;
        q->cpus_per_task = 8 * (gpus / nodes);
        q->mem_per_node = 64 * 1024 * (uint64_t)(gpus / nodes);
    } else {
        q->ntasks = 1 + loom_sim_rand(r, 16);
        q->mem_per_cpu = 4096;
    }
}

/* Running jobs until busy * GPUs are in use. */
static void bench_fill(bench_t *b, loom_sim_rng_t *r, double busy)
{
    uint64_t want = (uint64_t)((double)b->nnodes * BENCH_GPUS * busy), have = 0;
    size_t cap = b->nnodes * (size_t)BENCH_GPUS + 16;
    b->run = loom_xcalloc(cap, sizeof(*b->run));
    b->running = loom_xcalloc(cap, sizeof(*b->running));
    loom_sched_req_t q;
    loom_sched_gres_req_t g;
    for (size_t tries = 0; have < want && b->nrun < cap && tries < cap * 4; tries++) {
        bench_shape(r, &q, &g);
        loom_sched_alloc_t *a = &b->run[b->nrun];
        if (loom_sched_try_place(b->nodes, b->nnodes, &q, 0, a) < 0)
            continue;
        loom_sched_alloc_apply(b->nodes, b->nnodes, a);
        for (size_t k = 0; k < a->nnodes; k++)
            have += loom_sched_alloc_node_gpus(&b->nodes[a->nodes[k].node], &a->nodes[k]);
        b->running[b->nrun] = (loom_sched_running_t){a, 60 + (int64_t)loom_sim_rand(r, 86400)};
        b->nrun++;
    }
}

static void bench_queue(bench_t *b, loom_sim_rng_t *r, size_t n, bool node_range)
{
    b->njobs = n;
    b->reqs = loom_xcalloc(n + 1, sizeof(*b->reqs));
    b->gres = loom_xcalloc(n + 1, sizeof(*b->gres));
    b->jobs = loom_xcalloc(n + 1, sizeof(*b->jobs));
    for (size_t i = 0; i < n; i++) {
        bench_shape(r, &b->reqs[i], &b->gres[i]);
        if (node_range && b->reqs[i].min_nodes > 1)
            b->reqs[i].max_nodes = b->reqs[i].min_nodes + 1;
        if (b->reqs[i].ngres)
            b->reqs[i].gres = &b->gres[i];
        b->jobs[i] = (loom_sched_job_t){.job_id = (uint32_t)i + 1,
                                        .priority = 1000 + loom_sim_rand(r, 100000),
                                        .submit_time = (int64_t)i,
                                        .duration = 600 + (int64_t)loom_sim_rand(r, 86400),
                                        .req = &b->reqs[i]};
    }
}

static void bench_free(bench_t *b)
{
    for (size_t i = 0; i < b->nrun; i++)
        loom_sched_alloc_fini(&b->run[i]);
    for (uint32_t i = 0; i < b->nnodes; i++)
        loom_sched_node_fini(&b->nodes[i]);
    free(b->nodes);
    free(b->names);
    free(b->run);
    free(b->running);
    free(b->reqs);
    free(b->gres);
    free(b->jobs);
    memset(b, 0, sizeof(*b));
}

static size_t bench_model_bytes(const bench_t *b)
{
    size_t per = sizeof(loom_sched_node_t) + (BENCH_CPUS / 64 + 1) * 8 + BENCH_CPUS + 1 +
                 BENCH_GPUS * (sizeof(loom_sched_gres_t) + (BENCH_CPUS / 64 + 1) * 8);
    return per * b->nnodes;
}

typedef struct {
    double sort_ms, pass_ms, bf_ms;
    size_t examined, started, bf_started, bf_planned, bf_tested;
} bench_row_t;

/* Sort and one main pass; its starts stay applied (backfill runs after it). */
static loom_sched_result_t *bench_pass(bench_t *b, bench_row_t *row)
{
    loom_sched_result_t *res = loom_xcalloc(b->njobs + 1, sizeof(*res));
    struct timespec t0, t1, t2;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    loom_sched_sort(b->jobs, b->njobs);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    loom_sched_pass_opts_t po = {.nparts = 1};
    row->examined = loom_sched_pass(b->nodes, b->nnodes, b->jobs, b->njobs, &po, res);
    clock_gettime(CLOCK_MONOTONIC, &t2);
    row->sort_ms = bench_ms(&t0, &t1);
    row->pass_ms = bench_ms(&t1, &t2);
    for (size_t i = 0; i < row->examined; i++)
        row->started += res[i].verdict == LOOM_SCHED_STARTED;
    return res;
}

/* The jobs the pass left pending, in order, with the running jobs it added. */
static void bench_after_pass(bench_t *b, const loom_sched_result_t *res, size_t examined,
                             loom_sched_job_t **left, size_t *nleft, loom_sched_running_t **run,
                             size_t *nrun)
{
    *left = loom_xcalloc(b->njobs + 1, sizeof(**left));
    *run = loom_xcalloc(b->nrun + b->njobs + 1, sizeof(**run));
    memcpy(*run, b->running, b->nrun * sizeof(**run));
    *nrun = b->nrun;
    *nleft = 0;
    for (size_t i = 0; i < b->njobs; i++) {
        if (i < examined && res[i].verdict == LOOM_SCHED_STARTED)
            (*run)[(*nrun)++] = (loom_sched_running_t){&res[i].alloc, b->jobs[i].duration};
        else
            (*left)[(*nleft)++] = b->jobs[i];
    }
}

/* One backfill pass over what the main pass left; everything is given back after. */
static void bench_bf(bench_t *b, uint32_t max_test, loom_sched_result_t *pres, bench_row_t *row)
{
    loom_sched_job_t *left;
    loom_sched_running_t *run;
    size_t nleft, nrun;
    bench_after_pass(b, pres, row->examined, &left, &nleft, &run, &nrun);
    loom_sched_bf_result_t *res = loom_xcalloc(nleft + 1, sizeof(*res));
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    loom_sched_bf_opts_t bo = {.now = 0, .max_job_test = max_test};
    loom_sched_bf_t *bf = loom_sched_bf_create(b->nodes, b->nnodes, run, nrun, &bo);
    loom_sched_bf_run(bf, b->nodes, b->nnodes, left, nleft, 0, 0, res);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    row->bf_ms = bench_ms(&t0, &t1);
    row->bf_tested = loom_sched_bf_tested(bf);
    loom_sched_bf_destroy(bf);
    for (size_t i = 0; i < nleft; i++) {
        if (res[i].verdict == LOOM_SCHED_STARTED) {
            row->bf_started++;
            loom_sched_alloc_release(b->nodes, b->nnodes, &res[i].alloc);
        } else if (res[i].start) {
            row->bf_planned++;
        }
        loom_sched_alloc_fini(&res[i].alloc);
    }
    free(res);
    free(left);
    free(run);
}

static void bench_undo_pass(bench_t *b, loom_sched_result_t *res, size_t examined)
{
    for (size_t i = 0; i < examined; i++) {
        if (res[i].verdict == LOOM_SCHED_STARTED)
            loom_sched_alloc_release(b->nodes, b->nnodes, &res[i].alloc);
        loom_sched_alloc_fini(&res[i].alloc);
    }
    free(res);
}

static void bench_print_head(const loom_sim_bench_opts_t *o, const bench_t *b)
{
    uint64_t used = 0;
    for (uint32_t i = 0; i < b->nnodes; i++)
        used += b->nodes[i].gpus_used;
    printf("loom-sim bench: %u nodes x %d CPUs, %d GPUs, %u MiB; %zu running jobs on %.1f%% "
           "of the GPUs; bf_max_job_test=%u\n",
           b->nnodes, BENCH_CPUS, BENCH_GPUS, BENCH_MEM, b->nrun,
           100.0 * (double)used / ((double)b->nnodes * BENCH_GPUS),
           o->bf_max_job_test ? o->bf_max_job_test : 500);
    printf("%9s %8s %8s %9s %8s %12s %9s %9s %8s %8s\n", "pending", "sort_ms", "pass_ms",
           "examined", "started", "backfill_ms", "bf_tested", "bf_start", "bf_plan", "rss_MiB");
}

int loom_sim_bench(const loom_sim_bench_opts_t *o)
{
    loom_sim_rng_t r = {o->seed ? o->seed : 42};
    bench_t b = {0};
    bench_nodes(&b, o->nodes);
    bench_fill(&b, &r, o->busy > 0 ? o->busy : 0.95);
    bench_print_head(o, &b);
    for (size_t k = 0; k < o->njobs; k++) {
        loom_sim_rng_t qr = {r.s + k};
        bench_t q = b;
        bench_queue(&q, &qr, o->jobs[k], o->node_range);
        bench_row_t row = {0};
        loom_sched_result_t *pres = bench_pass(&q, &row);
        bench_bf(&q, o->bf_max_job_test, pres, &row);
        bench_undo_pass(&q, pres, row.examined);
        printf("%9zu %8.2f %8.2f %9zu %8zu %12.2f %9zu %9zu %8zu %8ld\n", q.njobs, row.sort_ms,
               row.pass_ms, row.examined, row.started, row.bf_ms, row.bf_tested, row.bf_started,
               row.bf_planned, bench_rss_mib());
        free(q.reqs);
        free(q.gres);
        free(q.jobs);
    }
    printf("node model: %.1f MiB\n", (double)bench_model_bytes(&b) / (1024.0 * 1024.0));
    bench_free(&b);
    return 0;
}
