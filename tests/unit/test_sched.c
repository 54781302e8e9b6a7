/* test_sched.c - the scheduling core: placement, apply/release, the pass. */
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

/* A small cluster: n1..n4 with 4 CPUs / 8000 MiB; n3 and n4 have two a100 and
 * two v100 GPUs respectively (device indices 0 and 1). */
static void cluster_init(loom_sched_node_t *nodes)
{
    static const char *names[] = {"n1", "n2", "n3", "n4"};
    for (int i = 0; i < 4; i++)
        loom_sched_node_init(&nodes[i], names[i], 4, 8000);
    for (int d = 0; d < 2; d++) {
        loom_sched_node_add_gres(&nodes[2], "gpu", "a100", d, 1);
        loom_sched_node_add_gres(&nodes[3], "gpu", "v100", d, 1);
    }
}

static void cluster_fini(loom_sched_node_t *nodes, size_t n)
{
    for (size_t i = 0; i < n; i++)
        loom_sched_node_fini(&nodes[i]);
}

static const loom_sched_gres_req_t gpu1 = {"gpu", NULL, 1};
static const loom_sched_gres_req_t gpu2 = {"gpu", NULL, 2};
static const loom_sched_gres_req_t v100 = {"gpu", "v100", 1};
static const loom_sched_gres_req_t h100 = {"gpu", "h100", 1};

static void test_place_table(void **state)
{
    static const uint32_t req_n4[] = {3};
    static const struct {
        const char *what;
        loom_sched_req_t req;
        int rc;
        const char *nodes; /* chosen node names, comma separated */
        uint32_t ncpus;
    } cases[] = {
        {"one task", {.min_nodes = 1}, 0, "n1", 1},
        {"four tasks one node", {.min_nodes = 1, .ntasks = 4}, 0, "n1", 4},
        {"five tasks one node", {.min_nodes = 1, .ntasks = 5}, -ENOSPC, "", 0},
        {"two nodes", {.min_nodes = 2, .ntasks = 4}, 0, "n1,n2", 4},
        {"range of nodes", {.min_nodes = 1, .max_nodes = 3, .ntasks = 10}, 0, "n1,n2,n3", 10},
        {"cpus per task", {.min_nodes = 1, .ntasks = 2, .cpus_per_task = 2}, 0, "n1", 4},
        {"min cpus", {.min_nodes = 1, .min_cpus = 3}, 0, "n1", 3},
        {"tasks per node", {.min_nodes = 2, .ntasks_per_node = 3}, 0, "n1,n2", 6},
        {"gpu any type", {.min_nodes = 1, .gres = &gpu1, .ngres = 1}, 0, "n3", 1},
        {"gpu typed", {.min_nodes = 1, .gres = &v100, .ngres = 1}, 0, "n4", 1},
        {"gpu unknown type", {.min_nodes = 1, .gres = &h100, .ngres = 1}, -ENOSPC, "", 0},
        {"gpus per job", {.min_nodes = 1, .gpus_per_job = 2}, 0, "n3", 1},
        {"too many gpus", {.min_nodes = 1, .gpus_per_job = 3}, -ENOSPC, "", 0},
        {"gpus per job two nodes", {.min_nodes = 2, .gpus_per_job = 4}, 0, "n3,n4", 2},
        {"mem per node", {.min_nodes = 1, .mem_per_node = 8000}, 0, "n1", 1},
        {"mem too big", {.min_nodes = 1, .mem_per_node = 8001}, -ENOSPC, "", 0},
        {"mem per cpu limits tasks",
         {.min_nodes = 1, .ntasks = 3, .mem_per_cpu = 3000},
         -ENOSPC,
         "",
         0},
        {"required node", {.min_nodes = 1, .req_nodes = req_n4, .nreq_nodes = 1}, 0, "n4", 1},
        {"exclusive", {.min_nodes = 1, .exclusive = true}, 0, "n1", 4},
        {"no nodes", {.min_nodes = 0}, -EINVAL, "", 0},
        {"max below min", {.min_nodes = 3, .max_nodes = 2}, -EINVAL, "", 0},
        {"fewer tasks than nodes", {.min_nodes = 3, .ntasks = 2}, -EINVAL, "", 0},
        {"more nodes than exist", {.min_nodes = 5}, -ENOSPC, "", 0},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        loom_sched_node_t nodes[4];
        cluster_init(nodes);
        loom_sched_alloc_t a = {0};
        int rc = loom_sched_try_place(nodes, 4, &cases[i].req, 0, &a);
        if (rc != cases[i].rc)
            fail_msg("%s: rc %d, want %d", cases[i].what, rc, cases[i].rc);
        char got[64] = "";
        size_t off = 0;
        for (size_t k = 0; k < a.nnodes; k++)
            off += (size_t)snprintf(got + off, sizeof(got) - off, "%s%s", k ? "," : "",
                                    nodes[a.nodes[k].node].name);
        if (strcmp(got, cases[i].nodes) != 0 || a.ncpus != cases[i].ncpus)
            fail_msg("%s: nodes '%s' cpus %u, want '%s' %u", cases[i].what, got, a.ncpus,
                     cases[i].nodes, cases[i].ncpus);
        loom_sched_alloc_fini(&a);
        cluster_fini(nodes, 4);
    }
}

/* Best fit: a partly used node is preferred over an idle one. */
static void test_place_best_fit(void **state)
{
    loom_sched_node_t nodes[4];
    cluster_init(nodes);
    loom_sched_req_t two = {.min_nodes = 1, .ntasks = 2};
    loom_sched_alloc_t a = {0}, b = {0}, c = {0};
    nodes[0].usable = false;
    assert_int_equal(loom_sched_try_place(nodes, 4, &two, 0, &a), 0);
    assert_int_equal(a.nodes[0].node, 1);
    assert_int_equal(loom_sched_alloc_apply(nodes, 4, &a), 0);
    assert_int_equal(loom_sched_try_place(nodes, 4, &two, 0, &b), 0);
    assert_int_equal(b.nodes[0].node, 1);
    assert_int_equal(b.nodes[0].cpu_ids[0], 2);
    assert_int_equal(b.nodes[0].cpu_ids[1], 3);
    assert_int_equal(loom_sched_alloc_apply(nodes, 4, &b), 0);
    /* Applying the same allocation twice is refused. */
    assert_int_equal(loom_sched_alloc_apply(nodes, 4, &b), -ENOSPC);
    assert_int_equal(loom_sched_try_place(nodes, 4, &two, 0, &c), 0);
    assert_int_equal(c.nodes[0].node, 2);
    /* A down node still counts for "could it ever run". */
    loom_sched_req_t big = {.min_nodes = 4, .ntasks = 16};
    loom_sched_alloc_t d = {0};
    assert_int_equal(loom_sched_try_place(nodes, 4, &big, 0, &d), -ENOSPC);
    assert_int_equal(loom_sched_try_place(nodes, 4, &big, LOOM_SCHED_IGNORE_USED, &d), 0);
    assert_int_equal(d.ncpus, 16);
    loom_sched_alloc_release(nodes, 4, &a);
    loom_sched_alloc_release(nodes, 4, &b);
    assert_int_equal(nodes[1].cpus_used, 0);
    assert_int_equal(nodes[1].njobs, 0);
    loom_sched_alloc_fini(&a);
    loom_sched_alloc_fini(&b);
    loom_sched_alloc_fini(&c);
    loom_sched_alloc_fini(&d);
    cluster_fini(nodes, 4);
}

/* Two concurrent GPU jobs on one node get different devices, lowest first. */
static void test_place_gpu_indices(void **state)
{
    loom_sched_node_t nodes[4];
    cluster_init(nodes);
    loom_sched_req_t r = {.min_nodes = 1, .gres = &gpu1, .ngres = 1};
    loom_sched_alloc_t a = {0}, b = {0}, c = {0}, d = {0}, e = {0};
    assert_int_equal(loom_sched_try_place(nodes, 4, &r, 0, &a), 0);
    assert_int_equal(loom_sched_alloc_apply(nodes, 4, &a), 0);
    assert_int_equal(loom_sched_try_place(nodes, 4, &r, 0, &b), 0);
    assert_int_equal(loom_sched_alloc_apply(nodes, 4, &b), 0);
    assert_int_equal(a.nodes[0].node, b.nodes[0].node);
    const loom_sched_gres_t *ga = &nodes[2].gres[a.nodes[0].gres[0].gres];
    const loom_sched_gres_t *gb = &nodes[2].gres[b.nodes[0].gres[0].gres];
    assert_int_equal(ga->index, 0);
    assert_int_equal(gb->index, 1);
    /* n3 is out of GPUs: the next one lands on n4; a 2-GPU job fits nowhere. */
    assert_int_equal(loom_sched_try_place(nodes, 4, &r, 0, &c), 0);
    assert_int_equal(c.nodes[0].node, 3);
    loom_sched_req_t r2 = {.min_nodes = 1, .gres = &gpu2, .ngres = 1};
    assert_int_equal(loom_sched_alloc_apply(nodes, 4, &c), 0);
    assert_int_equal(loom_sched_try_place(nodes, 4, &r2, 0, &d), -ENOSPC);
    /* Freeing device 0 makes it the next one handed out. */
    loom_sched_alloc_release(nodes, 4, &a);
    assert_int_equal(loom_sched_try_place(nodes, 4, &r, 0, &e), 0);
    assert_int_equal(nodes[e.nodes[0].node].gres[e.nodes[0].gres[0].gres].index, 0);
    loom_sched_alloc_fini(&a);
    loom_sched_alloc_fini(&b);
    loom_sched_alloc_fini(&c);
    loom_sched_alloc_fini(&e);
    cluster_fini(nodes, 4);
}

/* Exclusive jobs and whole-node memory keep others off the node. */
static void test_place_exclusive(void **state)
{
    loom_sched_node_t nodes[1];
    loom_sched_node_init(&nodes[0], "n1", 8, 1000);
    loom_sched_req_t ex = {.min_nodes = 1, .exclusive = true};
    loom_sched_req_t one = {.min_nodes = 1};
    loom_sched_req_t whole = {.min_nodes = 1, .mem_whole_node = true};
    loom_sched_alloc_t a = {0}, b = {0};
    assert_int_equal(loom_sched_try_place(nodes, 1, &one, 0, &a), 0);
    assert_int_equal(loom_sched_alloc_apply(nodes, 1, &a), 0);
    assert_int_equal(loom_sched_try_place(nodes, 1, &ex, 0, &b), -ENOSPC);
    loom_sched_alloc_release(nodes, 1, &a);
    loom_sched_alloc_fini(&a);
    assert_int_equal(loom_sched_try_place(nodes, 1, &ex, 0, &a), 0);
    assert_int_equal(a.ncpus, 8);
    assert_int_equal(loom_sched_alloc_apply(nodes, 1, &a), 0);
    assert_int_equal(loom_sched_try_place(nodes, 1, &one, 0, &b), -ENOSPC);
    loom_sched_alloc_release(nodes, 1, &a);
    loom_sched_alloc_fini(&a);
    assert_int_equal(loom_sched_try_place(nodes, 1, &whole, 0, &a), 0);
    assert_int_equal(a.nodes[0].mem, 1000);
    assert_int_equal(loom_sched_alloc_apply(nodes, 1, &a), 0);
    assert_int_equal(loom_sched_try_place(nodes, 1, &whole, 0, &b), -ENOSPC);
    loom_sched_alloc_fini(&a);
    loom_sched_node_fini(&nodes[0]);
}

static uint64_t rng_next(uint64_t *s)
{
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    return *s;
}

/* Sum of what the live allocations hold equals what the nodes say is used. */
static void check_accounting(const loom_sched_node_t *nodes, size_t nn,
                             const loom_sched_alloc_t *live, size_t nlive)
{
    for (size_t i = 0; i < nn; i++) {
        uint32_t cpus = 0;
        uint64_t mem = 0;
        for (size_t k = 0; k < nlive; k++)
            for (size_t j = 0; j < live[k].nnodes; j++)
                if (live[k].nodes[j].node == i) {
                    cpus += live[k].nodes[j].ncpus;
                    mem += live[k].nodes[j].mem;
                }
        assert_int_equal(cpus, nodes[i].cpus_used);
        assert_true(nodes[i].cpus_used <= nodes[i].cpus);
        assert_int_equal(mem, nodes[i].mem_used);
        assert_true(nodes[i].mem_used <= nodes[i].mem_total);
        for (size_t g = 0; g < nodes[i].ngres; g++)
            assert_true(nodes[i].gres[g].used <= nodes[i].gres[g].count);
    }
}

/* A seeded random sequence of placements and releases never overcommits. */
static void test_random_never_overcommit(void **state)
{
    enum { NN = 6, MAXLIVE = 64, STEPS = 5000 };
    loom_sched_node_t nodes[NN];
    static const char *names[NN] = {"a", "b", "c", "d", "e", "f"};
    for (int i = 0; i < NN; i++) {
        loom_sched_node_init(&nodes[i], names[i], 8 + 8 * (i % 2), 16000);
        for (int d = 0; d < 4; d++)
            loom_sched_node_add_gres(&nodes[i], "gpu", d % 2 ? "a100" : "h100", d, 1);
    }
    loom_sched_alloc_t live[MAXLIVE];
    size_t nlive = 0;
    uint64_t seed = 0x9e3779b97f4a7c15ull;
    for (int step = 0; step < STEPS; step++) {
        uint64_t r = rng_next(&seed);
        if (nlive == MAXLIVE || (nlive && r % 3 == 0)) {
            size_t k = (size_t)(rng_next(&seed) % nlive);
            loom_sched_alloc_release(nodes, NN, &live[k]);
            loom_sched_alloc_fini(&live[k]);
            live[k] = live[--nlive];
        } else {
            loom_sched_gres_req_t g = {"gpu", r % 5 == 0 ? "a100" : NULL, 1 + r % 2};
            loom_sched_req_t req = {.min_nodes = 1 + (uint32_t)(r >> 8) % 2,
                                    .ntasks = 2 + (uint32_t)(r >> 12) % 6,
                                    .cpus_per_task = 1 + (uint32_t)(r >> 16) % 2,
                                    .mem_per_cpu = 500 * ((r >> 20) % 3),
                                    .gres = &g,
                                    .ngres = (r >> 24) % 2,
                                    .exclusive = (r >> 28) % 17 == 0};
            loom_sched_alloc_t a = {0};
            if (loom_sched_try_place(nodes, NN, &req, 0, &a) == 0) {
                assert_int_equal(loom_sched_alloc_apply(nodes, NN, &a), 0);
                live[nlive++] = a;
            }
        }
        check_accounting(nodes, NN, live, nlive);
    }
    for (size_t k = 0; k < nlive; k++) {
        loom_sched_alloc_release(nodes, NN, &live[k]);
        loom_sched_alloc_fini(&live[k]);
    }
    check_accounting(nodes, NN, live, 0);
    cluster_fini(nodes, NN);
}

/* The pass: priority order, partition blocking, early stop. */
static void test_pass_order_and_block(void **state)
{
    loom_sched_node_t nodes[4];
    cluster_init(nodes);
    loom_sched_req_t small = {.min_nodes = 1, .ntasks = 4};
    loom_sched_req_t huge = {.min_nodes = 4, .ntasks = 16};
    loom_sched_job_t jobs[] = {
        {.job_id = 3, .priority = 10, .submit_time = 3, .part = 0, .req = &small},
        {.job_id = 1, .priority = 10, .submit_time = 1, .part = 0, .req = &small},
        {.job_id = 2, .priority = 20, .submit_time = 2, .part = 0, .req = &small},
        {.job_id = 4, .priority = 5, .submit_time = 4, .part = 0, .req = &huge},
        {.job_id = 5, .priority = 4, .submit_time = 5, .part = 0, .req = &small},
        {.job_id = 6, .priority = 3, .submit_time = 6, .part = 1, .req = &small},
    };
    size_t n = sizeof(jobs) / sizeof(jobs[0]);
    loom_sched_sort(jobs, n);
    assert_int_equal(jobs[0].job_id, 2);
    assert_int_equal(jobs[1].job_id, 1);
    assert_int_equal(jobs[2].job_id, 3);
    bool blocked[2] = {false, false};
    loom_sched_pass_opts_t o = {.nparts = 2, .part_blocked = blocked};
    loom_sched_result_t res[6];
    size_t examined = loom_sched_pass(nodes, 4, jobs, n, &o, res);
    assert_int_equal(res[0].verdict, LOOM_SCHED_STARTED);
    assert_int_equal(res[1].verdict, LOOM_SCHED_STARTED);
    assert_int_equal(res[2].verdict, LOOM_SCHED_STARTED);
    assert_int_equal(res[3].verdict, LOOM_SCHED_NO_RESOURCES);
    assert_int_equal(res[4].verdict, LOOM_SCHED_BLOCKED);
    assert_int_equal(res[5].verdict, LOOM_SCHED_STARTED);
    assert_int_equal(examined, 6);
    assert_true(blocked[0]);
    assert_int_equal(loom_sched_free_cpus(nodes, 4), 0);
    /* The cluster is full: a second pass stops at once. */
    loom_sched_result_t res2[6];
    bool blocked2[2] = {false, false};
    loom_sched_pass_opts_t o2 = {.nparts = 2, .part_blocked = blocked2};
    assert_int_equal(loom_sched_pass(nodes, 4, jobs, n, &o2, res2), 0);
    assert_int_equal(res2[0].verdict, LOOM_SCHED_NOT_EXAMINED);
    for (size_t i = 0; i < n; i++)
        loom_sched_alloc_fini(&res[i].alloc);
    cluster_fini(nodes, 4);
}

/* bf_min_age_reserve: a young job that does not fit blocks nothing. */
static void test_pass_no_reserve(void **state)
{
    loom_sched_node_t nodes[4];
    cluster_init(nodes);
    loom_sched_req_t small = {.min_nodes = 1, .ntasks = 4};
    loom_sched_req_t huge = {.min_nodes = 4, .ntasks = 16}, one = {.min_nodes = 1, .ntasks = 1};
    loom_sched_alloc_t busy = {0}; /* one CPU in use: huge waits for it */
    assert_int_equal(loom_sched_try_place(nodes, 4, &one, 0, &busy), 0);
    assert_int_equal(loom_sched_alloc_apply(nodes, 4, &busy), 0);
    loom_sched_job_t jobs[] = {
        {.job_id = 1, .priority = 9, .req = &huge, .no_reserve = true},
        {.job_id = 2, .priority = 8, .req = &small},
        {.job_id = 3, .priority = 7, .req = &huge},
        {.job_id = 4, .priority = 6, .req = &small},
    };
    bool blocked[1] = {false};
    loom_sched_pass_opts_t o = {.nparts = 1, .part_blocked = blocked};
    loom_sched_result_t res[4];
    loom_sched_pass(nodes, 4, jobs, 4, &o, res);
    assert_int_equal(res[0].verdict, LOOM_SCHED_NO_RESOURCES);
    assert_int_equal(res[1].verdict, LOOM_SCHED_STARTED);
    assert_int_equal(res[2].verdict, LOOM_SCHED_NO_RESOURCES); /* old enough: it blocks */
    assert_int_equal(res[3].verdict, LOOM_SCHED_NOT_EXAMINED); /* its one partition is blocked */
    for (size_t i = 0; i < 4; i++)
        loom_sched_alloc_fini(&res[i].alloc);
    loom_sched_alloc_fini(&busy);
    cluster_fini(nodes, 4);
}

/* 10,000 pending jobs on a full cluster: the pass examines almost none. */
static void test_pass_stops_early(void **state)
{
    enum { NJ = 10000 };
    loom_sched_node_t nodes[4];
    cluster_init(nodes);
    loom_sched_req_t one = {.min_nodes = 1};
    loom_sched_job_t *jobs = calloc(NJ, sizeof(*jobs));
    loom_sched_result_t *res = calloc(NJ, sizeof(*res));
    for (uint32_t i = 0; i < NJ; i++)
        jobs[i] = (loom_sched_job_t){.job_id = i + 1, .priority = 1, .req = &one};
    loom_sched_pass_opts_t o = {.nparts = 1};
    size_t examined = loom_sched_pass(nodes, 4, jobs, NJ, &o, res);
    assert_int_equal(examined, 16);
    for (size_t i = 0; i < 16; i++) {
        assert_int_equal(res[i].verdict, LOOM_SCHED_STARTED);
        loom_sched_alloc_fini(&res[i].alloc);
    }
    assert_int_equal(res[16].verdict, LOOM_SCHED_NOT_EXAMINED);
    /* max_starts bounds a pass too. */
    loom_sched_node_t fresh[4];
    cluster_init(fresh);
    loom_sched_pass_opts_t o2 = {.nparts = 1, .max_starts = 3};
    assert_int_equal(loom_sched_pass(fresh, 4, jobs, NJ, &o2, res), 3);
    for (size_t i = 0; i < 3; i++)
        loom_sched_alloc_fini(&res[i].alloc);
    free(jobs);
    free(res);
    cluster_fini(nodes, 4);
    cluster_fini(fresh, 4);
}

/* A job that needs down nodes does not block its partition; one waiting for
 * running jobs does. */
static void test_pass_nodes_unavailable(void **state)
{
    loom_sched_node_t nodes[4];
    cluster_init(nodes);
    nodes[3].usable = false;
    loom_sched_req_t four = {.min_nodes = 4};
    loom_sched_req_t one = {.min_nodes = 1};
    loom_sched_alloc_t a = {0};
    assert_int_equal(loom_sched_try_place(nodes, 4, &four, LOOM_SCHED_IGNORE_ALLOC, &a), -ENOSPC);
    assert_int_equal(loom_sched_try_place(nodes, 4, &four, LOOM_SCHED_IGNORE_USED, &a), 0);
    loom_sched_alloc_fini(&a);
    loom_sched_job_t jobs[] = {
        {.job_id = 1, .priority = 9, .req = &four},
        {.job_id = 2, .priority = 8, .req = &one},
    };
    loom_sched_result_t res[2];
    loom_sched_pass_opts_t o = {.nparts = 1};
    assert_int_equal(loom_sched_pass(nodes, 4, jobs, 2, &o, res), 2);
    assert_int_equal(res[0].verdict, LOOM_SCHED_NODES_UNAVAILABLE);
    assert_int_equal(res[1].verdict, LOOM_SCHED_STARTED);
    /* Allocations do not count for IGNORE_ALLOC: a busy usable node still fits. */
    loom_sched_req_t whole = {.min_nodes = 1, .ntasks = 4};
    loom_sched_alloc_t b = {0};
    assert_int_equal(loom_sched_try_place(nodes, 4, &whole, LOOM_SCHED_IGNORE_ALLOC, &b), 0);
    loom_sched_alloc_fini(&b);
    loom_sched_alloc_fini(&res[1].alloc);
    cluster_fini(nodes, 4);
}

static void test_alloc_copy(void **state)
{
    loom_sched_node_t nodes[4];
    cluster_init(nodes);
    loom_sched_req_t r = {.min_nodes = 2, .ntasks = 3, .gres = &gpu1, .ngres = 1};
    loom_sched_alloc_t a = {0}, b = {0};
    assert_int_equal(loom_sched_try_place(nodes, 4, &r, 0, &a), 0);
    loom_sched_alloc_copy(&b, &a);
    loom_sched_alloc_fini(&a);
    assert_int_equal(b.nnodes, 2);
    assert_int_equal(b.ntasks, 3);
    assert_int_equal(b.nodes[0].ngres, 1);
    assert_int_equal(loom_sched_alloc_apply(nodes, 4, &b), 0);
    loom_sched_alloc_fini(&b);
    loom_sched_alloc_fini(NULL);
    loom_sched_node_fini(NULL);
    cluster_fini(nodes, 4);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_place_table),
        cmocka_unit_test(test_place_best_fit),
        cmocka_unit_test(test_place_gpu_indices),
        cmocka_unit_test(test_place_exclusive),
        cmocka_unit_test(test_random_never_overcommit),
        cmocka_unit_test(test_pass_order_and_block),
        cmocka_unit_test(test_pass_no_reserve),
        cmocka_unit_test(test_pass_stops_early),
        cmocka_unit_test(test_pass_nodes_unavailable),
        cmocka_unit_test(test_alloc_copy),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
