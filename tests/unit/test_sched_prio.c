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

static void test_parse_flags(void **state)
{
    static const struct {
        const char *in;
        int rc;
        uint32_t want;
    } cases[] = {
        {NULL, 0, 0},
        {"", 0, 0},
        {"SMALL_RELATIVE_TO_TIME", 0, LOOM_PRIO_SMALL_RELATIVE_TO_TIME},
        {"small_relative_to_time,no_normal_part", 0,
         LOOM_PRIO_SMALL_RELATIVE_TO_TIME | LOOM_PRIO_NO_NORMAL_PART},
        {"NO_NORMAL_ALL", 0, LOOM_PRIO_NO_NORMAL_ALL},
        {" CALCULATE_RUNNING , MAX_TRES ", 0, LOOM_PRIO_CALCULATE_RUNNING | LOOM_PRIO_MAX_TRES},
        {"FAIR_TREE,DEPTH_OBLIVIOUS", 0, LOOM_PRIO_DEPTH_OBLIVIOUS},
        {"ACCRUE_ALWAYS,INCR_ONLY,NO_FAIR_TREE", 0,
         LOOM_PRIO_ACCRUE_ALWAYS | LOOM_PRIO_INCR_ONLY | LOOM_PRIO_NO_FAIR_TREE},
        {"NO_NORMAL_QOS,,NO_NORMAL_TRES,NO_NORMAL_ASSOC", 0,
         LOOM_PRIO_NO_NORMAL_QOS | LOOM_PRIO_NO_NORMAL_TRES | LOOM_PRIO_NO_NORMAL_ASSOC},
        {"MAX_TRES,BOGUS", -EINVAL, 7},
        {"NO_NORMAL", -EINVAL, 7},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        uint32_t f = 7;
        loom_err_t err = {0};
        int rc = loom_sched_prio_parse_flags(cases[i].in, &f, &err);
        if (rc != cases[i].rc || f != cases[i].want)
            fail_msg("'%s': rc %d flags %#x", cases[i].in ? cases[i].in : "(null)", rc, f);
        if (rc < 0)
            assert_non_null(strstr(err.msg, "invalid PriorityFlags word '"));
    }
}

/* sprio -l on slurmctld 22.05.8 with PriorityFlags=SMALL_RELATIVE_TO_TIME,
 * NO_NORMAL_PART, PriorityWeightJobSize=100000, PriorityWeightPartition=1000,
 * partitions pa (PriorityJobFactor=7) and pb (3); a 2-node cluster of 4 CPUs
 * (and a 1-node one for the -t1 job): JOBSIZE, PARTITION and PRIORITY. */
static void test_flags_against_sprio(void **state)
{
    static const struct {
        const char *what;
        uint32_t cluster_nodes, nodes, cpus;
        int64_t minutes;
        double part_raw;
        long size, part, prio;
    } cases[] = {
        {"-n4 -t60", 2, 1, 4, 60, 7, 833, 7000, 7833},
        {"-n1 -t10", 2, 1, 1, 10, 7, 5000, 7000, 12000},
        {"-n2 -t10", 2, 1, 2, 10, 7, 5000, 7000, 12000},
        {"-N2 -n2 -t10", 2, 2, 2, 10, 7, 10000, 7000, 17000},
        {"-N2 -n8 -t10", 2, 2, 8, 10, 7, 10000, 7000, 17000},
        {"-n1 -t100 (1 node)", 1, 1, 1, 100, 7, 1000, 7000, 8000},
        {"-n4 -t1 (1 node)", 1, 1, 4, 1, 7, 100000, 7000, 107000},
        {"-p pb -n1 -t10 (1 node)", 1, 1, 1, 10, 3, 10000, 3000, 13000},
        {"-n3 -t1-0 (1 node)", 1, 1, 3, 1440, 7, 69, 7000, 7069},
        {"-n1 no limit (1 node)", 1, 1, 1, 0, 7, 0, 7000, 7000},
    };
    loom_sched_prio_conf_t c = {.w_job_size = 100000, .w_partition = 1000};
    assert_int_equal(
        loom_sched_prio_parse_flags("SMALL_RELATIVE_TO_TIME,NO_NORMAL_PART", &c.flags, NULL), 0);
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        c.cluster_nodes = cases[i].cluster_nodes;
        c.cluster_cpus = 4 * cases[i].cluster_nodes;
        loom_sched_prio_job_t j = {.min_nodes = cases[i].nodes,
                                   .cpus = cases[i].cpus,
                                   .time_limit = cases[i].minutes,
                                   .part_norm = cases[i].part_raw / 7,
                                   .part_raw = cases[i].part_raw};
        loom_sched_prio_factors_t f;
        loom_sched_prio_compute(&c, &j, &f);
        long size = (long)(f.job_size * c.w_job_size + 0.5);
        long part = (long)(f.partition * c.w_partition + 0.5);
        if (size != cases[i].size || part != cases[i].part || f.priority != cases[i].prio)
            fail_msg("%s: size %ld part %ld priority %u", cases[i].what, size, part, f.priority);
    }
}

/* The other NO_NORMAL_* flags: raw QOS, association and TRES values. */
static void test_no_normal(void **state)
{
    loom_sched_prio_conf_t c = {.w_qos = 10, .w_assoc = 100, .cluster_nodes = 1, .cluster_cpus = 4};
    assert_int_equal(loom_sched_prio_parse_tres("CPU=2", &c, NULL), 0);
    loom_sched_prio_job_t j = {.qos_norm = 0.5, .qos_raw = 50, .assoc_norm = 0.25, .assoc_raw = 3};
    j.tres_norm[0] = 0.5;
    j.tres_raw[0] = 8;
    loom_sched_prio_factors_t f;
    loom_sched_prio_compute(&c, &j, &f);
    assert_int_equal(f.priority, 5 + 25 + 1);
    assert_int_equal(loom_sched_prio_parse_flags("NO_NORMAL_ALL", &c.flags, NULL), 0);
    loom_sched_prio_compute(&c, &j, &f);
    assert_int_equal(f.priority, 500 + 300 + 16);
    j.qos_raw = -1; /* never negative */
    loom_sched_prio_compute(&c, &j, &f);
    assert_int_equal(f.priority, 300 + 16);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_parse_tres),          cmocka_unit_test(test_against_sprio),
        cmocka_unit_test(test_age_and_limits),      cmocka_unit_test(test_parse_flags),
        cmocka_unit_test(test_flags_against_sprio), cmocka_unit_test(test_no_normal),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
