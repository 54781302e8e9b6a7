/*
 * test_store_report.c - sreport's computations (store_report.c): window
 * overlap, TRES text, the utilization split, and the two reports over a
 * SQLite store with capacity records and jobs.
 */
#include "dbd/store.h"
#include "dbd/store_report.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void test_overlap(void **state)
{
    (void)state;
    static const struct {
        int64_t a0, a1, s, e, want;
    } cases[] = {
        {0, 10, 0, 10, 10}, {5, 15, 0, 10, 5},     {-5, 5, 0, 10, 5},
        {20, 30, 0, 10, 0}, {10, 20, 0, 10, 0},    {3, 4, 0, 10, 1},
        {8, 2, 0, 10, 0},   {-10, 100, 0, 10, 10}, {0, 86400, 3600, 7200, 3600},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
        assert_int_equal(loom_report_overlap(cases[i].a0, cases[i].a1, cases[i].s, cases[i].e),
                         cases[i].want);
}

static void test_tres_parse(void **state)
{
    (void)state;
    static const struct {
        const char *text;
        int64_t mult;
        const char *want; /* compact JSON with sorted keys */
    } cases[] = {
        {"cpu=2,mem=4G,node=1,billing=2,gres/gpu=1", 10,
         "{\"billing\":20,\"cpu\":20,\"gres/gpu\":10,\"mem\":40960,\"node\":10}"},
        {"mem=2048K", 1, "{\"mem\":2}"},
        {"mem=1T", 1, "{\"mem\":1048576}"},
        {"mem=1000M,cpu=x,=3,bogus,gpu=-1", 2, "{\"mem\":2000}"},
        {"", 5, "{}"},
        {"cpu=4,cpu=4", 1, "{\"cpu\":8}"},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        json_t *o = json_object();
        loom_report_tres_parse(cases[i].text, cases[i].mult, o);
        char *got = json_dumps(o, JSON_COMPACT | JSON_SORT_KEYS);
        assert_string_equal(got, cases[i].want);
        free(got);
        json_decref(o);
    }
    loom_report_tres_parse(NULL, 1, NULL); /* no text: nothing to do */
}

static void test_finish(void **state)
{
    (void)state;
    static const struct {
        loom_report_util_t in, want;
    } cases[] = {
        /* reported, alloc, down, pdown, planned, over, idle */
        {{100, 30, 10, 0, 20, 0, 0}, {100, 30, 10, 0, 20, 0, 40}},
        {{100, 30, 10, 0, 80, 0, 0}, {100, 30, 10, 0, 60, 20, 0}},
        {{100, 120, 0, 0, 5, 0, 0}, {100, 100, 0, 0, 0, 5, 0}},
        {{100, 50, 150, 0, 0, 0, 0}, {100, 0, 100, 0, 0, 0, 0}},
        {{0, 0, 0, 0, 0, 0, 0}, {0, 0, 0, 0, 0, 0, 0}},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        loom_report_util_t u = cases[i].in;
        loom_report_finish(&u);
        assert_memory_equal(&u, &cases[i].want, sizeof(u));
    }
}

#define DAY 1763596800 /* 2025-11-20T00:00:00Z */

static loom_store_t *open_store(char *path, size_t len)
{
    snprintf(path, len, "/tmp/loom-test-report-%d.db", (int)getpid());
    unlink(path);
    loom_store_t *st = NULL;
    assert_int_equal(loom_store_open("sqlite", path, &st, NULL), 0);
    return st;
}

static void put_job(loom_store_t *st, const char *user, const char *acct, int64_t start,
                    int64_t end, const char *tres)
{
    static int id;
    json_t *job =
        json_pack("{s:i, s:I, s:I, s:I, s:I, s:s, s:s, s:i, s:s}", "job_id", ++id, "submit_time",
                  (json_int_t)(start - 600), "eligible_time", (json_int_t)(start - 600),
                  "start_time", (json_int_t)start, "end_time", (json_int_t)end, "user_name", user,
                  "account", acct, "num_cpus", 2, "tres_alloc", tres);
    assert_int_equal(loom_store_job_put(st, "c1", job, NULL), 0);
    json_decref(job);
}

static void put_cap(loom_store_t *st, int64_t t, const char *tres, const char *down)
{
    json_t *rec =
        json_pack("{s:I, s:s, s:s}", "time", (json_int_t)t, "tres", tres, "down_tres", down);
    assert_int_equal(loom_store_ctres_put(st, "c1", rec, NULL), 0);
    assert_int_equal(loom_store_ctres_put(st, "c1", rec, NULL), 0); /* twice: stored once */
    json_decref(rec);
}

static int64_t cpu_field(const json_t *rep, const char *key)
{
    const json_t *tres =
        json_object_get(json_array_get(json_object_get(rep, "clusters"), 0), "tres");
    size_t i;
    json_t *t;
    json_array_foreach(tres, i, t)
    {
        if (!strcmp(json_string_value(json_object_get(t, "name")), "cpu"))
            return json_integer_value(json_object_get(t, key));
    }
    return -1;
}

static void test_reports(void **state)
{
    (void)state;
    char path[128];
    loom_store_t *st = open_store(path, sizeof(path));
    put_cap(st, DAY - 7200, "cpu=8,node=2", "");
    put_cap(st, DAY + 43200, "cpu=8,node=2", "cpu=4,node=1");
    put_job(st, "alice", "phys", DAY + 3600, DAY + 7200, "cpu=4,node=1");
    put_job(st, "bob", "chem", DAY - 3600, DAY + 3600, "cpu=2,node=1");
    put_job(st, "bob", "chem", DAY - 7200, DAY - 3600, "cpu=2,node=1");     /* before the window */
    put_job(st, "carol", "phys", DAY + 90000, DAY + 93600, "cpu=8,node=2"); /* after */
    /* eligible at 1h, started at 2h: in hour 1 only 4 CPUs were idle */
    json_t *x =
        json_pack("{s:i, s:I, s:I, s:I, s:I, s:s, s:s, s:i, s:s}", "job_id", 99, "submit_time",
                  (json_int_t)DAY, "eligible_time", (json_int_t)DAY + 3600, "start_time",
                  (json_int_t)DAY + 7200, "end_time", (json_int_t)DAY + 10800, "user_name", "dave",
                  "account", "chem", "num_cpus", 8, "tres_alloc", "cpu=8,node=2");
    assert_int_equal(loom_store_job_put(st, "c1", x, NULL), 0);
    json_decref(x);
    loom_store_repq_t q = {.cluster = "c1", .start = DAY, .end = DAY + 86400, .now = DAY + 200000};
    json_t *rep = NULL;
    assert_int_equal(loom_store_report_cluster(st, &q, &rep, NULL), 0);
    assert_int_equal(cpu_field(rep, "reported"), 8 * 86400);
    assert_int_equal(cpu_field(rep, "down"), 4 * 43200);
    assert_int_equal(cpu_field(rep, "alloc"), 4 * 3600 + 2 * 3600 + 8 * 3600);
    /* alice waited 600 s; dave's 8 CPUs waited an hour with 4 idle: capped hour by hour */
    assert_int_equal(cpu_field(rep, "planned"), 4 * 600 + 4 * 3600);
    assert_int_equal(cpu_field(rep, "over"), 4 * 3600);
    assert_int_equal(cpu_field(rep, "idle"),
                     8 * 86400 - 4 * 43200 - 14 * 3600 - (4 * 600 + 4 * 3600));
    assert_int_equal(cpu_field(rep, "count"), 8);
    json_decref(rep);
    q.users = "bob";
    assert_int_equal(loom_store_report_users(st, &q, &rep, NULL), 0);
    json_t *usage = json_object_get(rep, "usage");
    assert_int_equal(json_array_size(usage), 1);
    assert_int_equal(json_integer_value(
                         json_object_get(json_object_get(json_array_get(usage, 0), "tres"), "cpu")),
                     2 * 3600);
    json_decref(rep);
    q.cluster = "nope";
    assert_int_equal(loom_store_report_cluster(st, &q, &rep, NULL), 0);
    assert_int_equal(json_array_size(json_object_get(rep, "clusters")), 0);
    json_decref(rep);
    json_t *bad = json_pack("{s:s}", "tres", "cpu=1");
    assert_true(loom_store_ctres_put(st, "c1", bad, NULL) < 0);
    json_decref(bad);
    loom_store_close(st);
    unlink(path);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_overlap),
        cmocka_unit_test(test_tres_parse),
        cmocka_unit_test(test_finish),
        cmocka_unit_test(test_reports),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
