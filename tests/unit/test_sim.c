/* test_sim.c - loom-sim: SWF and CSV traces, the generator, the replay. */
#include "common/sbuf.h"
#include "sim/sim.h"
#include "sim/trace.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <errno.h>
#include <string.h>

static const char swf_text[] =
    "; Version: 2.2\n"
    "; MaxNodes: 4\n"
    "; MaxProcs: 32\n"
    "1 0 10 100 8 -1 -1 8 200 -1 1 3 1 -1 1 -1 -1 -1\n"
    "2 5 0 50 -1 -1 -1 16 -1 1024 1 4 1 -1 1 -1 -1 -1\n"
    "   \n"
    "3 7 0 -1 4 -1 -1 4 100 -1 5 3 1 -1 1 -1 -1 -1 ; cancelled before it ran\n"
    "4 2 0 30 0 -1 -1 0 60 -1 1 3 1 -1 1 -1 -1 -1\n";

static void test_swf(void **state)
{
    loom_sim_trace_t t = {0};
    assert_int_equal(loom_sim_swf_parse(swf_text, &t, NULL), 0);
    assert_int_equal(t.n, 2); /* jobs 3 (run time -1) and 4 (no processors) are skipped */
    assert_int_equal(t.max_procs, 32);
    assert_int_equal(t.max_nodes, 4);
    assert_int_equal(t.v[0].id, 1);
    assert_int_equal(t.v[0].cpus, 8);
    assert_int_equal(t.v[0].runtime, 100);
    assert_int_equal(t.v[0].limit, 200);
    assert_int_equal(t.v[0].user, 3);
    assert_int_equal(t.v[1].cpus, 16);
    assert_int_equal(t.v[1].limit, 50); /* no requested time: the run time */
    assert_int_equal(t.v[1].mem, 16);   /* 1024 KB per processor x 16 */
    loom_err_t err = {0};
    assert_int_equal(loom_sim_swf_parse("1 2 3 x\n", &t, &err), -EINVAL);
    assert_non_null(strstr(err.msg, "line 1"));
    assert_int_equal(t.n, 2); /* untouched on failure */
    loom_sim_trace_free(&t);
}

static void test_csv(void **state)
{
    loom_sim_trace_t t = {0};
    const char *text = "user,submit,duration,gpus,cpus,mem\n"
                       "7,100,3600,4,32,131072\n"
                       "\n"
                       "8,50,60,0,2,4096\n";
    assert_int_equal(loom_sim_csv_parse(text, &t, NULL), 0);
    assert_int_equal(t.n, 2);
    assert_int_equal(t.v[0].submit, 50); /* sorted by submit time */
    assert_int_equal(t.v[1].gpus, 4);
    assert_int_equal(t.v[1].limit, 3600);
    assert_int_equal(t.v[1].user, 7);
    loom_err_t err = {0};
    assert_int_equal(loom_sim_csv_parse("submit,duration\n1,2\n", &t, &err), -EINVAL);
    assert_non_null(strstr(err.msg, "'gpus'"));
    assert_int_equal(
        loom_sim_csv_parse("submit,duration,gpus,cpus,mem,user\n1,2,x,1,1,1\n", &t, &err), -EINVAL);
    assert_non_null(strstr(err.msg, "line 2"));
    loom_sim_trace_free(&t);
}

static void test_generate_roundtrip(void **state)
{
    loom_sim_gen_opts_t g = {.jobs = 300, .seed = 7, .nodes = 4, .gpus_per_node = 8, .load = 0.9};
    loom_sim_trace_t a = {0}, b = {0}, c = {0};
    loom_sim_generate(&g, &a);
    loom_sim_generate(&g, &b);
    g.seed = 8;
    loom_sim_generate(&g, &c);
    loom_sbuf_t sa = LOOM_SBUF_INIT, sb = LOOM_SBUF_INIT, sc = LOOM_SBUF_INIT;
    loom_sim_csv_write(&a, &sa);
    loom_sim_csv_write(&b, &sb);
    loom_sim_csv_write(&c, &sc);
    assert_string_equal(loom_sbuf_str(&sa), loom_sbuf_str(&sb));
    assert_string_not_equal(loom_sbuf_str(&sa), loom_sbuf_str(&sc));
    loom_sim_trace_t back = {0};
    assert_int_equal(loom_sim_csv_parse(loom_sbuf_str(&sa), &back, NULL), 0);
    assert_int_equal(back.n, a.n);
    assert_memory_equal(back.v, a.v, a.n * sizeof(*a.v));
    loom_sbuf_free(&sa);
    loom_sbuf_free(&sb);
    loom_sbuf_free(&sc);
    loom_sim_trace_free(&a);
    loom_sim_trace_free(&b);
    loom_sim_trace_free(&c);
    loom_sim_trace_free(&back);
}

static void test_replay(void **state)
{
    loom_sim_gen_opts_t g = {.jobs = 400, .seed = 3, .nodes = 4, .gpus_per_node = 8, .load = 1.0};
    loom_sim_trace_t t = {0};
    loom_sim_generate(&g, &t);
    loom_sim_opts_t o = {.nodes = 4, .cpus = 64, .gpus = 8, .mem = 1024 * 1024};
    loom_sim_result_t r[LOOM_SIM_NPOLICY], again;
    for (int p = 0; p < LOOM_SIM_NPOLICY; p++) {
        o.policy = (loom_sim_policy_t)p;
        assert_int_equal(loom_sim_run(&t, &o, &r[p]), 0);
        assert_int_equal(r[p].jobs + r[p].skipped, t.n);
        assert_true(r[p].util_gpu > 0.3 && r[p].util_gpu <= 1.0);
        assert_true(r[p].p95_wait >= r[p].mean_wait * 0.5);
        assert_true(r[p].mean_bsld >= 1.0);
    }
    assert_int_equal(r[LOOM_SIM_FIFO].backfill_starts, 0);
    assert_true(r[LOOM_SIM_BACKFILL].backfill_starts > 0);
    assert_true(r[LOOM_SIM_BACKFILL].mean_wait < r[LOOM_SIM_FIFO].mean_wait);
    assert_true(r[LOOM_SIM_BACKFILL].gpu_frag < r[LOOM_SIM_FIFO].gpu_frag);
    o.policy = LOOM_SIM_BACKFILL; /* the same input gives the same figures */
    assert_int_equal(loom_sim_run(&t, &o, &again), 0);
    assert_memory_equal(&again, &r[LOOM_SIM_BACKFILL], sizeof(again));
    loom_sim_trace_free(&t);
}

static void test_swf_replay(void **state)
{
    loom_sim_trace_t t = {0};
    assert_int_equal(loom_sim_swf_parse(swf_text, &t, NULL), 0);
    loom_sim_opts_t o = {.nodes = 4, .cpus = 8, .policy = LOOM_SIM_FIFO};
    loom_sim_result_t r;
    assert_int_equal(loom_sim_run(&t, &o, &r), 0);
    assert_int_equal(r.jobs, 2);
    assert_true(r.mean_wait == 0); /* 8 + 16 CPUs fit 32 at once */
    assert_int_equal(r.makespan, 100);
    loom_sim_trace_free(&t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_swf),
        cmocka_unit_test(test_csv),
        cmocka_unit_test(test_generate_roundtrip),
        cmocka_unit_test(test_replay),
        cmocka_unit_test(test_swf_replay),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
