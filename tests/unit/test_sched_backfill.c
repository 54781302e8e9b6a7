/* test_sched_backfill.c - backfill: planned starts as slurmctld 22.05 plans
 * them, multi-node plans, and randomised (seeded) properties: no overcommit,
 * the top job's planned start is never delayed, same input -> same output. */
#include "sched/backfill.h"
#include "sched/pass.h"
#include "sched/resources.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *names[] = {"n0", "n1", "n2",  "n3",  "n4",  "n5",  "n6",  "n7",
                              "n8", "n9", "n10", "n11", "n12", "n13", "n14", "n15"};

static void fini_all(loom_sched_node_t *nodes, size_t n, loom_sched_bf_result_t *res, size_t nres)
{
    for (size_t i = 0; i < n; i++)
        loom_sched_node_fini(&nodes[i]);
    for (size_t i = 0; i < nres; i++)
        loom_sched_alloc_fini(&res[i].alloc);
}

/* As on a real slurmctld 22.05 (one node, 4 CPUs, whole-node memory, now
 * 14:11:02): a running job ends at 14:13:02; then -n4 -t5, -n2 -t10,
 * -n1 -t1, -n1 -t1. squeue --start showed 14:13:02, then reservation ends
 * rounded down to the minute: 14:18:00 (from 14:18:02), 14:28:00, 14:29:00. */
static void test_slurm_planned_starts(void **state)
{
    loom_sched_node_t nodes[1];
    loom_sched_node_init(&nodes[0], "refnode", 4, 1000);
    int64_t now = 1000 * 60 + 2; /* a time 2 s past a minute, as 14:11:02 was */
    loom_sched_req_t whole1 = {.min_nodes = 1, .ntasks = 1, .mem_whole_node = true};
    loom_sched_alloc_t run = {0};
    assert_int_equal(loom_sched_try_place(nodes, 1, &whole1, 0, &run), 0);
    assert_int_equal(loom_sched_alloc_apply(nodes, 1, &run), 0);
    loom_sched_running_t r = {&run, now + 120};
    loom_sched_req_t n4 = {.min_nodes = 1, .ntasks = 4, .mem_whole_node = true};
    loom_sched_req_t n2 = {.min_nodes = 1, .ntasks = 2, .mem_whole_node = true};
    loom_sched_job_t jobs[] = {
        {.job_id = 1, .priority = 4, .duration = 300, .req = &n4},
        {.job_id = 2, .priority = 3, .duration = 600, .req = &n2},
        {.job_id = 3, .priority = 2, .duration = 60, .req = &whole1},
        {.job_id = 6, .priority = 1, .duration = 60, .req = &whole1},
    };
    loom_sched_bf_result_t res[4];
    loom_sched_bf_opts_t o = {.now = now};
    assert_int_equal(loom_sched_backfill(nodes, 1, &r, 1, jobs, 4, &o, res), 0);
    int64_t want[] = {now + 120, 1007 * 60, 1017 * 60, 1018 * 60};
    for (int i = 0; i < 4; i++) {
        assert_int_equal(res[i].verdict, LOOM_SCHED_NO_RESOURCES);
        if (res[i].start != want[i])
            fail_msg("job %u planned at %lld, want %lld", jobs[i].job_id, (long long)res[i].start,
                     (long long)want[i]);
        assert_int_equal(res[i].alloc.nnodes, 1);
    }
    loom_sched_alloc_fini(&run);
    fini_all(nodes, 1, res, 4);
}

/* A small job that ends before the top job's reservation starts now; one that
 * would delay it waits behind it. */
static void test_backfill_rule(void **state)
{
    loom_sched_node_t nodes[1];
    loom_sched_node_init(&nodes[0], "n0", 4, 16000);
    loom_sched_req_t two = {.min_nodes = 1, .ntasks = 2}, four = {.min_nodes = 1, .ntasks = 4};
    loom_sched_req_t three = {.min_nodes = 1, .ntasks = 3};
    loom_sched_alloc_t run = {0};
    assert_int_equal(loom_sched_try_place(nodes, 1, &two, 0, &run), 0);
    assert_int_equal(loom_sched_alloc_apply(nodes, 1, &run), 0);
    loom_sched_running_t r = {&run, 100};
    loom_sched_job_t jobs[] = {
        {.job_id = 1, .priority = 3, .duration = 500, .req = &four},
        {.job_id = 2, .priority = 2, .duration = 200, .req = &two},  /* would delay job 1 */
        {.job_id = 3, .priority = 1, .duration = 50, .req = &two},   /* ends at 50 < 100 */
        {.job_id = 4, .priority = 0, .duration = -1, .req = &three}, /* no limit */
    };
    loom_sched_bf_result_t res[4];
    loom_sched_bf_opts_t o = {.now = 0};
    assert_int_equal(loom_sched_backfill(nodes, 1, &r, 1, jobs, 4, &o, res), 1);
    assert_int_equal(res[0].start, 100);
    assert_int_equal(res[1].verdict, LOOM_SCHED_NO_RESOURCES);
    assert_int_equal(res[1].start, 600);
    assert_int_equal(res[2].verdict, LOOM_SCHED_STARTED);
    assert_int_equal(res[3].start, 780); /* job 2 reserved [600, 800), rounded to 780 */
    assert_int_equal(nodes[0].cpus_used, 4);
    loom_sched_alloc_fini(&run);
    fini_all(nodes, 1, res, 4);
}

/* bf_min_age_reserve: a job too young to reserve gets a planned start but
 * holds nothing, so the job after it starts now. */
static void test_no_reserve(void **state)
{
    loom_sched_node_t nodes[1];
    loom_sched_node_init(&nodes[0], "n0", 4, 16000);
    loom_sched_req_t two = {.min_nodes = 1, .ntasks = 2}, four = {.min_nodes = 1, .ntasks = 4};
    loom_sched_req_t uneven = {.min_nodes = 1, .max_nodes = 2, .ntasks = 4};
    loom_sched_alloc_t run = {0};
    assert_int_equal(loom_sched_try_place(nodes, 1, &two, 0, &run), 0);
    assert_int_equal(loom_sched_alloc_apply(nodes, 1, &run), 0);
    loom_sched_running_t r = {&run, 100};
    loom_sched_job_t jobs[] = {
        {.job_id = 1, .priority = 4, .duration = 500, .req = &four, .no_reserve = true},
        {.job_id = 2, .priority = 3, .duration = 500, .req = &uneven, .no_reserve = true},
        {.job_id = 3, .priority = 2, .duration = 200, .req = &two}, /* delays both: starts */
    };
    loom_sched_bf_result_t res[3];
    loom_sched_bf_opts_t o = {.now = 0};
    assert_int_equal(loom_sched_backfill(nodes, 1, &r, 1, jobs, 3, &o, res), 1);
    assert_int_equal(res[0].verdict, LOOM_SCHED_NO_RESOURCES);
    assert_int_equal(res[0].start, 100);
    assert_int_equal(res[1].verdict, LOOM_SCHED_NO_RESOURCES);
    assert_int_equal(res[1].start, 100);
    assert_null(res[1].alloc.nodes[0].cpu_ids); /* a plan: counts only */
    assert_int_equal(res[2].verdict, LOOM_SCHED_STARTED);
    loom_sched_alloc_fini(&run);
    fini_all(nodes, 1, res, 3);
}

/* bf_max_job_user, bf_max_job_part, bf_max_job_start: jobs beyond a user's
 * or a partition's count are not examined (no start, no plan), and the run
 * ends once enough jobs started. Eight 1-CPU jobs on an idle 16-CPU node:
 * users 1,1,1,2,2,1,2,3; partitions 0,0,1,1,0,1,0,1. */
static void test_bf_max_job_limits(void **state)
{
    static const uint32_t uids[] = {1, 1, 1, 2, 2, 1, 2, 3}, parts[] = {0, 0, 1, 1, 0, 1, 0, 1};
    static const struct {
        uint32_t user, part, start;
        const char *started; /* 'S' started, '-' not examined */
    } cases[] = {
        {0, 0, 0, "SSSSSSSS"}, {2, 0, 0, "SS-SS--S"}, {0, 3, 0, "SSSSSS--"},
        {1, 0, 0, "S--S---S"}, {0, 0, 3, "SSS-----"}, {2, 2, 2, "SS------"},
    };
    loom_sched_req_t one = {.min_nodes = 1, .ntasks = 1};
    loom_sched_job_t jobs[8];
    for (uint32_t i = 0; i < 8; i++)
        jobs[i] = (loom_sched_job_t){.job_id = i + 1,
                                     .priority = 8 - i,
                                     .duration = 60,
                                     .uid = uids[i],
                                     .part = parts[i],
                                     .req = &one};
    for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
        loom_sched_node_t nodes[1];
        loom_sched_node_init(&nodes[0], "n0", 16, 16000);
        loom_sched_bf_result_t res[8];
        loom_sched_bf_opts_t o = {.now = 0,
                                  .max_job_user = cases[c].user,
                                  .max_job_part = cases[c].part,
                                  .max_job_start = cases[c].start};
        loom_sched_backfill(nodes, 1, NULL, 0, jobs, 8, &o, res);
        char got[9] = {0};
        for (int i = 0; i < 8; i++)
            got[i] = res[i].verdict == LOOM_SCHED_STARTED        ? 'S'
                     : res[i].verdict == LOOM_SCHED_NOT_EXAMINED ? '-'
                                                                 : '?';
        if (strcmp(got, cases[c].started) != 0)
            fail_msg("case %zu: %s, want %s", c, got, cases[c].started);
        fini_all(nodes, 1, res, 8);
    }
}

/* -N3 on four nodes whose jobs end at 300, 100, 200, 400: planned at 300. */
static void test_multi_node_plan(void **state)
{
    loom_sched_node_t nodes[4];
    loom_sched_alloc_t run[4] = {{0}};
    loom_sched_running_t r[4];
    int64_t ends[] = {300, 100, 200, 400};
    loom_sched_req_t whole = {.min_nodes = 1, .ntasks = 4};
    for (int i = 0; i < 4; i++)
        loom_sched_node_init(&nodes[i], names[i], 4, 16000);
    for (int i = 0; i < 4; i++) {
        uint32_t idx = (uint32_t)i;
        loom_sched_req_t one = whole;
        one.req_nodes = &idx;
        one.nreq_nodes = 1;
        assert_int_equal(loom_sched_try_place(nodes, 4, &one, 0, &run[i]), 0);
        assert_int_equal(loom_sched_alloc_apply(nodes, 4, &run[i]), 0);
        r[i] = (loom_sched_running_t){&run[i], ends[i]};
    }
    loom_sched_req_t three = {.min_nodes = 3, .ntasks = 3};
    loom_sched_job_t job = {.job_id = 1, .duration = 1000, .req = &three};
    loom_sched_bf_result_t res[1];
    loom_sched_bf_opts_t o = {.now = 0};
    loom_sched_backfill(nodes, 4, r, 4, &job, 1, &o, res);
    assert_int_equal(res[0].start, 300);
    assert_int_equal(res[0].alloc.nnodes, 3);
    assert_int_equal(res[0].alloc.nodes[0].node, 0);
    assert_int_equal(res[0].alloc.nodes[1].node, 1);
    assert_int_equal(res[0].alloc.nodes[2].node, 2);
    for (int i = 0; i < 4; i++)
        loom_sched_alloc_fini(&run[i]);
    fini_all(nodes, 4, res, 1);
}

/* Run a job needing "need" on each node (one index each) until end. */
static void hold_nodes(loom_sched_node_t *nodes, size_t n, const uint32_t *cpus, int64_t end,
                       loom_sched_alloc_t *run, loom_sched_running_t *r)
{
    for (uint32_t i = 0; i < n; i++) {
        loom_sched_req_t q = {.min_nodes = 1, .ntasks = cpus[i], .req_nodes = &i, .nreq_nodes = 1};
        assert_int_equal(loom_sched_try_place(nodes, n, &q, 0, &run[i]), 0);
        assert_int_equal(loom_sched_alloc_apply(nodes, n, &run[i]), 0);
        r[i] = (loom_sched_running_t){&run[i], end};
    }
}

/* Multi-node reservations hold what the selector would give, node by node. */
typedef struct {
    const char *what;
    uint32_t ncpu[3];   /* per node */
    uint32_t busy[3];   /* CPUs held until 100 */
    loom_sched_req_t q; /* the top job (duration 1000) */
    int64_t start;      /* its planned start (0: starts now) */
    uint32_t got[3];    /* its CPUs per node */
    int64_t small;      /* the planned start of a -n1 -t5000 job after it */
} mn_case_t;

static void test_multi_node_exact(void **state)
{
    static const mn_case_t cases[] = {
        /* 4 + 1 as cons_tres lays it out: the 1-CPU job fits beside the reservation */
        {"-n5 -N2", {4, 4, 0}, {4, 4, 0}, {.min_nodes = 2, .ntasks = 5}, 100, {4, 1, 0}, 100},
        /* the even split 4 + 4 does not fit n0 now; 2 + 6 does */
        {"-n8 -N2 uneven", {4, 8, 0}, {2, 2, 0}, {.min_nodes = 2, .ntasks = 8}, 0, {2, 6, 0}, 100},
        /* -N1-3 -n12: three nodes once they are free (was: no plan at all) */
        {"-N1-3 -n12",
         {4, 4, 4},
         {4, 4, 4},
         {.min_nodes = 1, .max_nodes = 3, .ntasks = 12},
         100,
         {4, 4, 4},
         1100},
        /* --gpus-less --mincpus: 2 tasks but 6 CPUs over two nodes */
        {"-N2 -n2 --mincpus",
         {4, 4, 0},
         {4, 4, 0},
         {.min_nodes = 2, .ntasks = 2, .min_cpus = 6},
         100,
         {4, 2, 0},
         100},
    };
    for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
        const mn_case_t *k = &cases[c];
        size_t n = k->ncpu[2] ? 3 : 2;
        loom_sched_node_t nodes[3];
        loom_sched_alloc_t run[3] = {{0}};
        loom_sched_running_t r[3];
        for (size_t i = 0; i < n; i++)
            loom_sched_node_init(&nodes[i], names[i], k->ncpu[i], 16000);
        hold_nodes(nodes, n, k->busy, 100, run, r);
        loom_sched_req_t one = {.min_nodes = 1, .ntasks = 1};
        loom_sched_job_t jobs[] = {{.job_id = 1, .priority = 2, .duration = 1000, .req = &k->q},
                                   {.job_id = 2, .priority = 1, .duration = 5000, .req = &one}};
        loom_sched_bf_result_t res[2];
        loom_sched_bf_opts_t o = {.now = 0, .resolution = 1};
        loom_sched_backfill(nodes, n, r, n, jobs, 2, &o, res);
        if (res[0].start != k->start || res[1].start != k->small)
            fail_msg("%s: planned at %lld and %lld, want %lld and %lld", k->what,
                     (long long)res[0].start, (long long)res[1].start, (long long)k->start,
                     (long long)k->small);
        for (size_t i = 0; i < res[0].alloc.nnodes; i++)
            if (res[0].alloc.nodes[i].ncpus != k->got[res[0].alloc.nodes[i].node])
                fail_msg("%s: node %u gets %u CPUs", k->what, res[0].alloc.nodes[i].node,
                         res[0].alloc.nodes[i].ncpus);
        for (size_t i = 0; i < n; i++)
            loom_sched_alloc_fini(&run[i]);
        fini_all(nodes, n, res, 2);
    }
}

/* ---- randomised properties ---------------------------------------------------- */

typedef struct {
    uint64_t s;
} rng_t;

static uint32_t rnd(rng_t *r, uint32_t n)
{
    r->s = r->s * 6364136223846793005ull + 1442695040888963407ull;
    return n ? (uint32_t)((r->s >> 33) % n) : 0;
}

#define MAXN 12
#define MAXR 40
#define MAXJ 40

typedef struct {
    loom_sched_node_t nodes[MAXN];
    size_t nnodes;
    loom_sched_gres_req_t gres[MAXJ + MAXR];
    loom_sched_req_t reqs[MAXJ + MAXR];
    loom_sched_alloc_t run[MAXR];
    loom_sched_running_t running[MAXR];
    size_t nrun;
    loom_sched_job_t jobs[MAXJ];
    size_t njobs;
} world_t;

static void rand_req(rng_t *g, world_t *w, size_t k)
{
    loom_sched_req_t *r = &w->reqs[k];
    *r = (loom_sched_req_t){.min_nodes = 1 + (rnd(g, 5) == 0 ? rnd(g, 3) : 0)};
    r->ntasks = r->min_nodes * (1 + rnd(g, 4));
    if (r->min_nodes > 1 && rnd(g, 2)) /* an uneven split, or -N min-max */
        r->ntasks += rnd(g, r->min_nodes);
    if (rnd(g, 8) == 0)
        r->max_nodes = r->min_nodes + 1 + rnd(g, 2);
    r->cpus_per_task = 1 + rnd(g, 2);
    r->mem_per_cpu = rnd(g, 3) * 500;
    if (rnd(g, 3) == 0) {
        w->gres[k] = (loom_sched_gres_req_t){"gpu", NULL, 1 + rnd(g, 2)};
        r->gres = &w->gres[k];
        r->ngres = 1;
    }
    r->exclusive = rnd(g, 10) == 0;
}

static void world_init(world_t *w, uint64_t seed)
{
    rng_t g = {seed};
    memset(w, 0, sizeof(*w));
    w->nnodes = 2 + rnd(&g, MAXN - 1);
    for (size_t i = 0; i < w->nnodes; i++) {
        loom_sched_node_init(&w->nodes[i], names[i], 4u << rnd(&g, 3), 8000);
        int gpus = rnd(&g, 3) * 2;
        for (int d = 0; d < gpus; d++)
            loom_sched_node_add_gres(&w->nodes[i], "gpu", "h100", d, 1);
        w->nodes[i].usable = rnd(&g, 8) != 0;
    }
    for (size_t k = 0; k < MAXR; k++) {
        rand_req(&g, w, MAXJ + k);
        loom_sched_alloc_t a = {0};
        if (loom_sched_try_place(w->nodes, w->nnodes, &w->reqs[MAXJ + k], 0, &a) < 0)
            continue;
        assert_int_equal(loom_sched_alloc_apply(w->nodes, w->nnodes, &a), 0);
        w->run[w->nrun] = a;
        int64_t end = rnd(&g, 6) == 0 ? LOOM_SCHED_BF_NEVER : 1 + (int64_t)rnd(&g, 5000);
        w->running[w->nrun] = (loom_sched_running_t){&w->run[w->nrun], end};
        w->nrun++;
    }
    w->njobs = 5 + rnd(&g, MAXJ - 5);
    for (size_t k = 0; k < w->njobs; k++) {
        rand_req(&g, w, k);
        w->jobs[k] =
            (loom_sched_job_t){.job_id = (uint32_t)k + 1,
                               .priority = rnd(&g, 1000),
                               .duration = rnd(&g, 8) == 0 ? -1 : 60 + (int64_t)rnd(&g, 4000),
                               .req = &w->reqs[k]};
    }
    loom_sched_sort(w->jobs, w->njobs);
}

static void world_fini(world_t *w, loom_sched_bf_result_t *res)
{
    for (size_t i = 0; i < w->nrun; i++)
        loom_sched_alloc_fini(&w->run[i]);
    fini_all(w->nodes, w->nnodes, res, w->njobs);
}

/* Recount every node's use from the allocations: never over a total. */
static void check_no_overcommit(const world_t *w, const loom_sched_bf_result_t *res)
{
    for (size_t i = 0; i < w->nnodes; i++) {
        const loom_sched_node_t *n = &w->nodes[i];
        uint64_t cpus = 0, mem = 0;
        for (size_t r = 0; r < w->nrun + w->njobs; r++) {
            const loom_sched_alloc_t *a = r < w->nrun ? &w->run[r] : &res[r - w->nrun].alloc;
            if (r >= w->nrun && res[r - w->nrun].verdict != LOOM_SCHED_STARTED)
                continue;
            for (size_t k = 0; k < a->nnodes; k++)
                if (a->nodes[k].node == i) {
                    cpus += a->nodes[k].ncpus;
                    mem += a->nodes[k].mem;
                }
        }
        assert_true(cpus <= n->cpus && cpus == n->cpus_used);
        assert_true(mem <= n->mem_total);
        for (size_t g = 0; g < n->ngres; g++)
            assert_true(n->gres[g].used <= n->gres[g].count);
    }
}

/* After the backfill started what it started, plan the top job again: it
 * must not start later than planned. */
static void check_top_not_delayed(world_t *w, const loom_sched_bf_result_t *res, int64_t now)
{
    if (res[0].verdict != LOOM_SCHED_NO_RESOURCES || !res[0].start)
        return;
    loom_sched_running_t run[MAXR + MAXJ];
    size_t n = 0;
    for (size_t i = 0; i < w->nrun; i++)
        run[n++] = w->running[i];
    for (size_t i = 0; i < w->njobs; i++)
        if (res[i].verdict == LOOM_SCHED_STARTED)
            run[n++] = (loom_sched_running_t){&res[i].alloc, w->jobs[i].duration < 0
                                                                 ? LOOM_SCHED_BF_NEVER
                                                                 : now + w->jobs[i].duration};
    loom_sched_bf_opts_t o = {.now = now};
    loom_sched_bf_t *bf = loom_sched_bf_create(w->nodes, w->nnodes, run, n, &o);
    int64_t again = loom_sched_bf_earliest(bf, w->nodes, w->nnodes, &w->jobs[0], NULL);
    if (again > res[0].start)
        fail_msg("top job %u planned at %lld, now %lld", w->jobs[0].job_id, (long long)res[0].start,
                 (long long)again);
    loom_sched_bf_destroy(bf);
}

static void run_world(uint64_t seed, loom_sched_bf_result_t *res, world_t *w, char *digest,
                      size_t len)
{
    world_init(w, seed);
    loom_sched_bf_opts_t o = {.now = 0, .window = 3000};
    loom_sched_backfill(w->nodes, w->nnodes, w->running, w->nrun, w->jobs, w->njobs, &o, res);
    size_t off = 0;
    for (size_t i = 0; i < w->njobs && off < len; i++) {
        off += (size_t)snprintf(digest + off, len - off, "%u:%d:%lld:", w->jobs[i].job_id,
                                (int)res[i].verdict, (long long)res[i].start);
        for (size_t k = 0; k < res[i].alloc.nnodes && off < len; k++)
            off += (size_t)snprintf(digest + off, len - off, "%u/%u,", res[i].alloc.nodes[k].node,
                                    res[i].alloc.nodes[k].ncpus);
    }
}

static void test_random_properties(void **state)
{
    unsigned started = 0, planned = 0;
    for (uint64_t seed = 1; seed <= 300; seed++) {
        static world_t w1, w2;
        loom_sched_bf_result_t r1[MAXJ], r2[MAXJ];
        char d1[8192], d2[8192];
        run_world(seed, r1, &w1, d1, sizeof(d1));
        check_no_overcommit(&w1, r1);
        check_top_not_delayed(&w1, r1, 0);
        run_world(seed, r2, &w2, d2, sizeof(d2));
        if (strcmp(d1, d2) != 0)
            fail_msg("seed %llu: two runs differ", (unsigned long long)seed);
        for (size_t i = 0; i < w1.njobs; i++) {
            started += r1[i].verdict == LOOM_SCHED_STARTED;
            planned += r1[i].verdict == LOOM_SCHED_NO_RESOURCES && r1[i].start;
        }
        world_fini(&w1, r1);
        world_fini(&w2, r2);
    }
    assert_true(started > 50 && planned > 100); /* the worlds exercise both */
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_slurm_planned_starts), cmocka_unit_test(test_backfill_rule),
        cmocka_unit_test(test_no_reserve),           cmocka_unit_test(test_bf_max_job_limits),
        cmocka_unit_test(test_multi_node_plan),      cmocka_unit_test(test_multi_node_exact),
        cmocka_unit_test(test_random_properties),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
