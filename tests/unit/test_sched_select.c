/* test_sched_select.c - placement: topology, GPU options and affinity, best
 * fit, constraints with counts and brackets, contiguous, OverSubscribe, limits. */
#include "common/constraint.h"
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

static const char *names[] = {"n0", "n1", "n2", "n3", "n4", "n5", "n6", "n7"};

/* n nodes of cpus CPUs, 16000 MiB, gpus GPUs each (indices 0..gpus-1). */
static void mk(loom_sched_node_t *nodes, size_t n, uint32_t cpus, int gpus)
{
    for (size_t i = 0; i < n; i++) {
        loom_sched_node_init(&nodes[i], names[i], cpus, 16000);
        for (int g = 0; g < gpus; g++)
            loom_sched_node_add_gres(&nodes[i], "gpu", "h100", g, 1);
    }
}

static void fini(loom_sched_node_t *nodes, size_t n)
{
    for (size_t i = 0; i < n; i++)
        loom_sched_node_fini(&nodes[i]);
}

static void nodes_of(const loom_sched_node_t *nodes, const loom_sched_alloc_t *a, char *buf,
                     size_t len)
{
    size_t off = 0;
    buf[0] = '\0';
    for (size_t k = 0; k < a->nnodes && off < len; k++)
        off += (size_t)snprintf(buf + off, len - off, "%s%s", k ? "," : "",
                                nodes[a->nodes[k].node].name);
}

static int place_apply(loom_sched_node_t *nodes, size_t n, const loom_sched_req_t *r,
                       loom_sched_alloc_t *a)
{
    int rc = loom_sched_try_place(nodes, n, r, 0, a);
    if (rc == 0)
        assert_int_equal(loom_sched_alloc_apply(nodes, n, a), 0);
    return rc;
}

static int gpu_index(const loom_sched_node_t *n, const loom_sched_node_alloc_t *na, size_t k)
{
    return n->gres[na->gres[k].gres].index;
}

static void test_whole_cores(void **state)
{
    loom_sched_node_t nodes[1];
    mk(nodes, 1, 8, 0);
    loom_sched_node_set_topology(&nodes[0], 2, 2, 2, true);
    loom_sched_req_t one = {.min_nodes = 1}, three = {.min_nodes = 1, .ntasks = 3};
    loom_sched_alloc_t a = {0}, b = {0};
    assert_int_equal(place_apply(nodes, 1, &one, &a), 0);
    assert_int_equal(a.ncpus, 2); /* one task gets a whole core: both threads */
    assert_int_equal(a.nodes[0].cpu_ids[0], 0);
    assert_int_equal(a.nodes[0].cpu_ids[1], 1);
    assert_int_equal(place_apply(nodes, 1, &three, &b), 0);
    assert_int_equal(b.ncpus, 4);
    assert_int_equal(b.nodes[0].cpu_ids[0], 2);
    assert_int_equal(nodes[0].cpus_used, 6);
    loom_sched_alloc_fini(&a);
    loom_sched_alloc_fini(&b);
    fini(nodes, 1);
}

/* CR_Socket: CPUs go by whole sockets (sockets x cores x threads). */
static void test_whole_sockets(void **state)
{
    static const struct {
        uint16_t sockets, cores, threads;
        uint32_t ntasks;
        uint32_t want_cpus[3]; /* three jobs in a row; 0: does not fit */
        uint32_t first_id[3];
    } cases[] = {
        {2, 4, 1, 1, {4, 4, 0}, {0, 4, 0}}, /* -n1 holds a socket of 4 cores */
        {2, 2, 2, 1, {4, 4, 0}, {0, 4, 0}}, /* 2 cores x 2 threads a socket */
        {2, 4, 1, 5, {8, 0, 0}, {0, 0, 0}}, /* -n5 needs both sockets */
        {4, 2, 1, 3, {4, 4, 0}, {0, 4, 0}}, /* 3 CPUs: two sockets of 2 */
        {1, 8, 1, 1, {8, 0, 0}, {0, 0, 0}}, /* one socket: the whole node */
    };
    for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
        loom_sched_node_t nodes[1];
        mk(nodes, 1, 8, 0);
        loom_sched_node_set_topology(&nodes[0], cases[c].sockets, cases[c].cores, cases[c].threads,
                                     true);
        loom_sched_node_set_whole_sockets(&nodes[0], true);
        loom_sched_req_t r = {.min_nodes = 1, .ntasks = cases[c].ntasks};
        loom_sched_alloc_t a[3] = {{0}};
        for (int j = 0; j < 3; j++) {
            int rc = place_apply(nodes, 1, &r, &a[j]);
            uint32_t got = rc == 0 ? a[j].ncpus : 0;
            if (got != cases[c].want_cpus[j] ||
                (got && a[j].nodes[0].cpu_ids[0] != cases[c].first_id[j]))
                fail_msg("case %zu job %d: %u CPUs", c, j, got);
        }
        for (int j = 0; j < 3; j++)
            loom_sched_alloc_fini(&a[j]);
        fini(nodes, 1);
    }
    /* CPUs that are not sockets x cores x threads: no whole sockets */
    loom_sched_node_t odd[1];
    mk(odd, 1, 6, 0);
    loom_sched_node_set_topology(odd, 2, 4, 1, false);
    loom_sched_node_set_whole_sockets(odd, true);
    assert_int_equal(odd[0].unit, 1);
    fini(odd, 1);
}

static void test_gpu_options(void **state)
{
    static const loom_sched_gres_req_t gpu2 = {"gpu", NULL, 2};
    static const struct {
        const char *what;
        loom_sched_req_t req;
        int rc;
        const char *nodes;
        uint32_t ncpus;
        uint64_t mem0, gpus0;
    } cases[] = {
        {"gpus per task", {.min_nodes = 1, .ntasks = 2, .gpus_per_task = 2}, 0, "n0", 2, 0, 4},
        {"gpus per task two nodes",
         {.min_nodes = 1, .max_nodes = 2, .ntasks = 3, .gpus_per_task = 2},
         0,
         "n0,n1",
         3,
         0,
         4},
        {"gpus per task too many",
         {.min_nodes = 1, .ntasks = 3, .gpus_per_task = 2},
         -ENOSPC,
         "",
         0,
         0,
         0},
        {"cpus per gpu",
         {.min_nodes = 1, .gres = &gpu2, .ngres = 1, .cpus_per_gpu = 3},
         0,
         "n0",
         6,
         0,
         2},
        {"mem per gpu",
         {.min_nodes = 1, .gres = &gpu2, .ngres = 1, .mem_per_gpu = 1000},
         0,
         "n0",
         1,
         2000,
         2},
        {"cpus per gpu over the node",
         {.min_nodes = 1, .gres = &gpu2, .ngres = 1, .cpus_per_gpu = 5},
         -ENOSPC,
         "",
         0,
         0,
         0},
        {"gpus per job one node",
         {.min_nodes = 1, .gpus_per_job = 4, .cpus_per_gpu = 2},
         0,
         "n0",
         8,
         0,
         4},
        {"gpus per job typed miss",
         {.min_nodes = 1, .gpus_per_job = 1, .gpus_type = "a100"},
         -ENOSPC,
         "",
         0,
         0,
         0},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        loom_sched_node_t nodes[2];
        mk(nodes, 2, 8, 4);
        loom_sched_alloc_t a = {0};
        int rc = loom_sched_try_place(nodes, 2, &cases[i].req, 0, &a);
        char got[64];
        nodes_of(nodes, &a, got, sizeof(got));
        if (rc != cases[i].rc || strcmp(got, cases[i].nodes) || a.ncpus != cases[i].ncpus)
            fail_msg("%s: rc %d nodes '%s' cpus %u", cases[i].what, rc, got, a.ncpus);
        if (rc == 0 &&
            (a.nodes[0].mem != cases[i].mem0 ||
             loom_sched_alloc_node_gpus(&nodes[a.nodes[0].node], &a.nodes[0]) != cases[i].gpus0))
            fail_msg("%s: mem %llu gpus %llu", cases[i].what, (unsigned long long)a.nodes[0].mem,
                     (unsigned long long)loom_sched_alloc_node_gpus(&nodes[0], &a.nodes[0]));
        loom_sched_alloc_fini(&a);
        fini(nodes, 2);
    }
}

/* GPUs 0,1 are local to CPUs 0-3, GPUs 2,3 to CPUs 4-7: jobs pack one set
 * and take the CPUs next to their GPUs. */
static void test_gpu_affinity(void **state)
{
    static const loom_sched_gres_req_t g1 = {"gpu", NULL, 1}, g2 = {"gpu", NULL, 2};
    static const uint32_t lo[] = {0, 1, 2, 3}, hi[] = {4, 5, 6, 7};
    loom_sched_node_t nodes[1];
    mk(nodes, 1, 8, 4);
    for (size_t g = 0; g < 4; g++)
        loom_sched_node_set_gres_cpus(&nodes[0], g, g < 2 ? lo : hi, 4);
    loom_sched_req_t one = {.min_nodes = 1, .gres = &g1, .ngres = 1};
    loom_sched_req_t two = {.min_nodes = 1, .gres = &g2, .ngres = 1, .cpus_per_gpu = 1};
    loom_sched_alloc_t a = {0}, b = {0}, c = {0};
    assert_int_equal(place_apply(nodes, 1, &two, &a), 0); /* 2 GPUs: a whole set */
    assert_int_equal(gpu_index(&nodes[0], &a.nodes[0], 0), 0);
    assert_int_equal(gpu_index(&nodes[0], &a.nodes[0], 1), 1);
    assert_int_equal(a.nodes[0].cpu_ids[0], 0);
    assert_int_equal(place_apply(nodes, 1, &one, &b), 0);
    assert_int_equal(gpu_index(&nodes[0], &b.nodes[0], 0), 2);
    assert_int_equal(b.nodes[0].cpu_ids[0], 4); /* next to GPU 2, not CPU 2 */
    loom_sched_alloc_release(nodes, 1, &a);
    /* Set {0,1} is free again, set {2,3} has one left: a 1-GPU job packs it. */
    assert_int_equal(place_apply(nodes, 1, &one, &c), 0);
    assert_int_equal(gpu_index(&nodes[0], &c.nodes[0], 0), 3);
    loom_sched_alloc_fini(&a);
    loom_sched_alloc_fini(&b);
    loom_sched_alloc_fini(&c);
    fini(nodes, 1);
}

/* Best fit keeps whole GPU nodes free; CPU-only jobs avoid free GPUs. */
static void test_best_fit_gpus(void **state)
{
    static const loom_sched_gres_req_t g2 = {"gpu", NULL, 2};
    loom_sched_node_t nodes[3];
    mk(nodes, 2, 8, 4);
    loom_sched_node_init(&nodes[2], "n2", 8, 16000);
    loom_sched_req_t gpus = {.min_nodes = 1, .gres = &g2, .ngres = 1};
    loom_sched_req_t cpu = {.min_nodes = 1, .ntasks = 2};
    loom_sched_alloc_t a = {0}, b = {0}, c = {0};
    assert_int_equal(place_apply(nodes, 3, &gpus, &a), 0);
    assert_int_equal(a.nodes[0].node, 0);
    assert_int_equal(place_apply(nodes, 3, &gpus, &b), 0);
    assert_int_equal(b.nodes[0].node, 0); /* n0 has 2 free GPUs, n1 4: n1 stays whole */
    assert_int_equal(place_apply(nodes, 3, &cpu, &c), 0);
    assert_int_equal(c.nodes[0].node, 0); /* n0 has no free GPU left (and fewer free CPUs) */
    loom_sched_alloc_t d = {0};
    nodes[0].usable = false;
    assert_int_equal(place_apply(nodes, 3, &cpu, &d), 0);
    assert_int_equal(d.nodes[0].node, 2); /* the GPU-less node before n1's GPUs */
    loom_sched_alloc_fini(&a);
    loom_sched_alloc_fini(&b);
    loom_sched_alloc_fini(&c);
    loom_sched_alloc_fini(&d);
    fini(nodes, 3);
}

static void test_constraints(void **state)
{
    static const char *fa[] = {"a", "x"}, *fb[] = {"b"};
    static const struct {
        const char *expr;
        uint32_t min_nodes;
        int down; /* a node made unusable, -1 none */
        int rc;
        const char *nodes;
    } cases[] = {
        {"[a|b]", 2, -1, 0, "n0,n1"},
        {"[a|b]", 2, 0, 0, "n2,n3"},
        {"[a|b]", 3, -1, -ENOSPC, ""},
        {"a*1&b*1", 2, -1, 0, "n0,n2"},
        {"[a*1&b*2]", 3, -1, 0, "n0,n2,n3"},
        {"[a*1&b*2]", 1, -1, 0, "n0,n2,n3"}, /* the counts raise the node count */
        {"b*3", 3, -1, -ENOSPC, ""},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        loom_sched_node_t nodes[4];
        mk(nodes, 4, 4, 0);
        for (int k = 0; k < 4; k++) {
            nodes[k].features = k < 2 ? fa : fb;
            nodes[k].nfeatures = k < 2 ? 2 : 1;
        }
        if (cases[i].down >= 0)
            nodes[cases[i].down].usable = false;
        loom_constraint_t *c = NULL;
        assert_int_equal(loom_constraint_parse(cases[i].expr, &c, NULL), 0);
        loom_sched_req_t r = {.min_nodes = cases[i].min_nodes, .max_nodes = 4, .constraint = c};
        loom_sched_alloc_t a = {0};
        int rc = loom_sched_try_place(nodes, 4, &r, 0, &a);
        char got[64];
        nodes_of(nodes, &a, got, sizeof(got));
        if (rc != cases[i].rc || strcmp(got, cases[i].nodes))
            fail_msg("%s -N%u: rc %d nodes '%s'", cases[i].expr, cases[i].min_nodes, rc, got);
        loom_sched_alloc_fini(&a);
        loom_constraint_free(c);
        fini(nodes, 4);
    }
}

static void test_contiguous(void **state)
{
    loom_sched_node_t nodes[6];
    mk(nodes, 6, 4, 0);
    nodes[1].usable = false;
    nodes[3].usable = false;
    loom_sched_req_t r = {.min_nodes = 2, .contiguous = true};
    loom_sched_alloc_t a = {0};
    assert_int_equal(loom_sched_try_place(nodes, 6, &r, 0, &a), 0);
    char got[64];
    nodes_of(nodes, &a, got, sizeof(got));
    assert_string_equal(got, "n4,n5");
    loom_sched_alloc_fini(&a);
    r.min_nodes = 3;
    assert_int_equal(loom_sched_try_place(nodes, 6, &r, 0, &a), -ENOSPC);
    fini(nodes, 6);
}

static void test_oversubscribe(void **state)
{
    loom_sched_node_t nodes[1];
    mk(nodes, 1, 4, 0);
    loom_sched_req_t shared = {.min_nodes = 1, .ntasks = 4, .share_max = 2};
    loom_sched_req_t plain = {.min_nodes = 1};
    loom_sched_alloc_t a = {0}, b = {0}, c = {0};
    assert_int_equal(place_apply(nodes, 1, &shared, &a), 0);
    assert_int_equal(place_apply(nodes, 1, &shared, &b), 0); /* same CPUs, second job */
    assert_int_equal(b.nodes[0].cpu_ids[0], 0);
    assert_int_equal(nodes[0].cpus_used, 4);
    assert_int_equal(loom_sched_try_place(nodes, 1, &shared, 0, &c), -ENOSPC);
    assert_int_equal(loom_sched_try_place(nodes, 1, &plain, 0, &c), -ENOSPC);
    loom_sched_alloc_release(nodes, 1, &a);
    loom_sched_alloc_release(nodes, 1, &b);
    assert_int_equal(nodes[0].cpus_used, 0);
    loom_sched_alloc_fini(&a);
    loom_sched_alloc_fini(&b);
    fini(nodes, 1);
}

static bool limit_n0(void *arg, uint32_t idx, loom_sched_limit_t *out)
{
    if (idx != 0)
        return false;
    memset(out, 0, sizeof(*out));
    out->cpus = 2;
    out->mem = 16000;
    out->gres[0] = 1;
    return true;
}

static void test_limits(void **state)
{
    static const loom_sched_gres_req_t g2 = {"gpu", NULL, 2};
    loom_sched_node_t nodes[2];
    mk(nodes, 2, 4, 4);
    nodes[1].weight = 5; /* n0 first unless its limit says no */
    loom_sched_place_opts_t o = {.limit = limit_n0};
    loom_sched_req_t three = {.min_nodes = 1, .ntasks = 3}, two = {.min_nodes = 1, .ntasks = 2};
    loom_sched_req_t gpus = {.min_nodes = 1, .gres = &g2, .ngres = 1};
    loom_sched_req_t excl = {.min_nodes = 1, .exclusive = true};
    loom_sched_alloc_t a = {0};
    assert_int_equal(loom_sched_try_place_ex(nodes, 2, &three, &o, &a), 0);
    assert_int_equal(a.nodes[0].node, 1);
    loom_sched_alloc_fini(&a);
    assert_int_equal(loom_sched_try_place_ex(nodes, 2, &two, &o, &a), 0);
    assert_int_equal(a.nodes[0].node, 0);
    loom_sched_alloc_fini(&a);
    assert_int_equal(loom_sched_try_place_ex(nodes, 2, &gpus, &o, &a), 0);
    assert_int_equal(a.nodes[0].node, 1);
    loom_sched_alloc_fini(&a);
    assert_int_equal(loom_sched_try_place_ex(nodes, 2, &excl, &o, &a), 0);
    assert_int_equal(a.nodes[0].node, 1);
    loom_sched_alloc_fini(&a);
    fini(nodes, 2);
}

/* A job that names two partitions starts once; tiers order the queue. */
static void test_pass_tiers_and_slots(void **state)
{
    loom_sched_node_t nodes[1];
    mk(nodes, 1, 6, 0);
    loom_sched_req_t two = {.min_nodes = 1, .ntasks = 2}, four = {.min_nodes = 1, .ntasks = 4};
    loom_sched_job_t jobs[] = {
        {.job_id = 1, .priority = 100, .part = 0, .slot = 0, .req = &two},
        {.job_id = 2, .tier = 1, .priority = 1, .part = 1, .slot = 1, .req = &two},
        {.job_id = 1, .priority = 90, .part = 1, .slot = 0, .req = &two},
        {.job_id = 3, .priority = 50, .part = 0, .slot = 2, .req = &four},
    };
    loom_sched_sort(jobs, 4);
    assert_int_equal(jobs[0].job_id, 2); /* the higher tier first */
    loom_sched_result_t res[4];
    loom_sched_pass_opts_t o = {.nparts = 2, .nslots = 3};
    loom_sched_pass(nodes, 1, jobs, 4, &o, res);
    assert_int_equal(res[0].verdict, LOOM_SCHED_STARTED);
    assert_int_equal(res[1].verdict, LOOM_SCHED_STARTED); /* job 1 in part 0 */
    assert_int_equal(res[2].verdict, LOOM_SCHED_DUPLICATE);
    assert_int_equal(res[3].verdict, LOOM_SCHED_NO_RESOURCES);
    for (int i = 0; i < 4; i++)
        loom_sched_alloc_fini(&res[i].alloc);
    fini(nodes, 1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_whole_cores),          cmocka_unit_test(test_gpu_options),
        cmocka_unit_test(test_gpu_affinity),         cmocka_unit_test(test_best_fit_gpus),
        cmocka_unit_test(test_constraints),          cmocka_unit_test(test_contiguous),
        cmocka_unit_test(test_oversubscribe),        cmocka_unit_test(test_limits),
        cmocka_unit_test(test_pass_tiers_and_slots), cmocka_unit_test(test_whole_sockets),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
