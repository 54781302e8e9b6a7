/* test_sched_prio.c - multifactor priority against sprio on slurmctld 22.05.
 *
 * The reference: a real slurmctld 22.05.8 with three nodes of 4 CPUs and
 * 1000 MiB (one registered, two FUTURE), PriorityWeightAge=1000,
 * PriorityWeightJobSize=2000, PriorityWeightPartition=3000,
 * PriorityWeightTRES=CPU=1000,Mem=500, partitions debug (refnode,
 * PriorityJobFactor=10), hi (refnode, 20) and big (all nodes, 5); jobs
 * without --mem get the whole node's memory. sprio printed the priorities
 * below for the jobs just submitted (age 0). */
#include "sched/priority.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <errno.h>
#include <string.h>

static void conf_init(loom_sched_prio_conf_t *c)
{
    memset(c, 0, sizeof(*c));
    c->w_age = 1000;
    c->w_job_size = 2000;
    c->w_partition = 3000;
    c->cluster_nodes = 3;
    c->cluster_cpus = 12;
    assert_int_equal(loom_sched_prio_parse_tres("CPU=1000,Mem=500", c, NULL), 0);
}

static void test_parse_tres(void **state)
{
    loom_sched_prio_conf_t c = {0};
    assert_int_equal(loom_sched_prio_parse_tres("CPU=1000,Mem=500,GRES/gpu=3000", &c, NULL), 0);
    assert_int_equal(c.ntres, 3);
    assert_string_equal(c.tres[2].name, "gres/gpu");
    assert_string_equal(c.tres[2].text, "GRES/gpu");
    assert_true(c.tres[2].weight == 3000);
    loom_err_t err = {0};
    assert_int_equal(loom_sched_prio_parse_tres("CPU=x", &c, &err), -EINVAL);
    assert_non_null(strstr(err.msg, "'CPU=x'"));
    assert_int_equal(c.ntres, 3); /* untouched on failure */
    assert_int_equal(loom_sched_prio_parse_tres(NULL, &c, NULL), 0);
    assert_int_equal(c.ntres, 0);
}

static void test_against_sprio(void **state)
{
    static const struct {
        const char *what;
        uint32_t nodes, cpus;
        double part, tres_cpu, tres_mem;
        int32_t nice;
        uint32_t want;
        long size_weighted; /* sprio's JOBSIZE column */
    } cases[] = {
        {"job 1: -n4 debug", 1, 4, 0.5, 1.0, 1.0, 0, 3666, 667},
        {"job 2: -n2 debug", 1, 2, 0.5, 0.5, 1.0, 0, 3000, 500},
        {"job 3: -n1 debug", 1, 1, 0.5, 0.25, 1.0, 0, 2666, 417},
        {"job 6: --nice=100", 1, 1, 0.5, 0.25, 1.0, 100, 2566, 417},
        {"job 8: -N2 big", 2, 2, 0.25, 2.0 / 12, 2000.0 / 3000, 0, 2083, 833},
        {"job 9: hi", 1, 1, 1.0, 0.25, 1.0, 0, 4166, 417},
        {"job 9: big", 1, 1, 0.25, 1.0 / 12, 1000.0 / 3000, 0, 1416, 417},
    };
    loom_sched_prio_conf_t c;
    conf_init(&c);
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        loom_sched_prio_job_t j = {.now = 1000,
                                   .eligible_time = 1000,
                                   .min_nodes = cases[i].nodes,
                                   .cpus = cases[i].cpus,
                                   .part_norm = cases[i].part,
                                   .nice = cases[i].nice};
        j.tres_norm[0] = cases[i].tres_cpu;
        j.tres_norm[1] = cases[i].tres_mem;
        loom_sched_prio_factors_t f;
        loom_sched_prio_compute(&c, &j, &f);
        long size = (long)(f.job_size * c.w_job_size + 0.5);
        if (f.priority != cases[i].want || size != cases[i].size_weighted)
            fail_msg("%s: priority %u (want %u), size %ld", cases[i].what, f.priority,
                     cases[i].want, size);
    }
}

static void test_age_and_limits(void **state)
{
    loom_sched_prio_conf_t c;
    conf_init(&c);
    c.max_age = 7 * 86400;
    loom_sched_prio_job_t j = {.now = 10 * 86400, .eligible_time = 10 * 86400 - 7 * 43200};
    loom_sched_prio_factors_t f;
    loom_sched_prio_compute(&c, &j, &f);
    assert_true(f.age == 0.5);
    j.eligible_time = 1; /* older than PriorityMaxAge */
    loom_sched_prio_compute(&c, &j, &f);
    assert_true(f.age == 1.0);
    j.eligible_time = 0; /* not eligible (held, dependency): no age */
    loom_sched_prio_compute(&c, &j, &f);
    assert_true(f.age == 0);
    j.nice = 1000000; /* never below 1: 0 means held */
    loom_sched_prio_compute(&c, &j, &f);
    assert_int_equal(f.priority, 1);
    c.favor_small = true; /* the smallest job gets the largest size factor */
    j = (loom_sched_prio_job_t){.min_nodes = 1, .cpus = 1};
    loom_sched_prio_compute(&c, &j, &f);
    assert_true(f.job_size > 0.79 && f.job_size < 0.80); /* (2/3 + 11/12) / 2 */
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_parse_tres),
        cmocka_unit_test(test_against_sprio),
        cmocka_unit_test(test_age_and_limits),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
