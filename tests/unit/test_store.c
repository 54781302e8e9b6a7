/*
 * test_store.c - loomdbd's accounting store on SQLite, and on PostgreSQL when
 * LOOM_TEST_PGSQL holds a libpq conninfo (scripts/test.sh starts a server).
 */
#include "dbd/store.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

typedef struct {
    const char *type;
    char location[512];
} backend_t;

static int setup_sqlite(void **state)
{
    backend_t *b = calloc(1, sizeof(*b));
    b->type = "sqlite";
    snprintf(b->location, sizeof(b->location), "/tmp/loom-test-store-%d.db", (int)getpid());
    unlink(b->location);
    *state = b;
    return 0;
}

static int setup_pgsql(void **state)
{
    const char *conninfo = getenv("LOOM_TEST_PGSQL");
    backend_t *b = calloc(1, sizeof(*b));
    b->type = "pgsql";
    snprintf(b->location, sizeof(b->location), "%s", conninfo ? conninfo : "");
    *state = b;
    return 0;
}

static int teardown(void **state)
{
    backend_t *b = *state;
    if (strcmp(b->type, "sqlite") == 0) {
        char path[600];
        unlink(b->location);
        snprintf(path, sizeof(path), "%s-wal", b->location);
        unlink(path);
        snprintf(path, sizeof(path), "%s-shm", b->location);
        unlink(path);
    }
    free(b);
    return 0;
}

static loom_store_t *open_store(backend_t *b)
{
    if (strcmp(b->type, "pgsql") == 0 && !b->location[0])
        return NULL;
    loom_store_t *st = NULL;
    loom_err_t err = {0};
    int rc = loom_store_open(b->type, b->location, &st, &err);
    if (rc != 0)
        fail_msg("open %s: %s", b->type, err.msg);
    return st;
}

static json_t *make_job(int id, const char *user, int64_t submit, const char *state)
{
    return json_pack("{s:i, s:s, s:I, s:s, s:s, s:s, s:i, s:I}", "job_id", id, "user_name", user,
                     "submit_time", (json_int_t)submit, "state", state, "partition", "gpu",
                     "account", "ai", "num_cpus", 2, "end_time", (json_int_t)(submit + 60));
}

static void test_schema_migrated(void **state)
{
    loom_store_t *st = open_store(*state);
    if (!st)
        skip();
    assert_int_equal(loom_store_schema_version(st, NULL), LOOM_STORE_SCHEMA_VERSION);
    loom_store_close(st);
    /* Re-opening an up-to-date database applies nothing and keeps the version. */
    st = open_store(*state);
    assert_int_equal(loom_store_schema_version(st, NULL), LOOM_STORE_SCHEMA_VERSION);
    loom_store_close(st);
}

static void test_job_upsert_is_idempotent(void **state)
{
    loom_store_t *st = open_store(*state);
    if (!st)
        skip();
    int64_t before = loom_store_job_count(st, NULL);
    json_t *job = make_job(101, "alice", 1000, "RUNNING");
    assert_int_equal(loom_store_job_put(st, "c1", job, NULL), 0);
    json_object_set_new(job, "state", json_string("COMPLETED"));
    assert_int_equal(loom_store_job_put(st, "c1", job, NULL), 0);
    assert_int_equal(loom_store_job_put(st, "c1", job, NULL), 0);
    assert_int_equal(loom_store_job_count(st, NULL), before + 1);
    loom_store_jobq_t q = {.cluster = "c1", .job_id = 101};
    json_t *jobs = NULL;
    assert_int_equal(loom_store_job_query(st, &q, &jobs, NULL), 0);
    assert_int_equal(json_array_size(jobs), 1);
    assert_string_equal(json_string_value(json_object_get(json_array_get(jobs, 0), "state")),
                        "COMPLETED");
    json_decref(jobs);
    json_decref(job);
    loom_store_close(st);
}

static void test_job_query_filters(void **state)
{
    static const struct {
        loom_store_jobq_t q;
        size_t expect;
    } cases[] = {
        {{.cluster = "c2"}, 4},
        {{.cluster = "c2", .user = "bob"}, 2},
        {{.cluster = "c2", .user = "bob", .state = "FAILED"}, 1},
        {{.cluster = "c2", .start = 2500}, 2}, /* ended at or after 2500 */
        {{.cluster = "c2", .end = 1500}, 1},   /* submitted by 1500 */
        {{.cluster = "c2", .start = 1500, .end = 3500}, 2},
        {{.cluster = "c2", .limit = 3}, 3},
        {{.cluster = "nope"}, 0},
        {{.cluster = "c2", .partition = "cpu"}, 0},
    };
    loom_store_t *st = open_store(*state);
    if (!st)
        skip();
    const char *users[] = {"alice", "bob", "bob", "carol"};
    const char *states[] = {"COMPLETED", "COMPLETED", "FAILED", "RUNNING"};
    for (int i = 0; i < 4; i++) {
        json_t *job = make_job(200 + i, users[i], 1000 * (i + 1), states[i]);
        assert_int_equal(loom_store_job_put(st, "c2", job, NULL), 0);
        json_decref(job);
    }
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        json_t *jobs = NULL;
        assert_int_equal(loom_store_job_query(st, &cases[i].q, &jobs, NULL), 0);
        if (json_array_size(jobs) != cases[i].expect)
            fail_msg("case %zu: %zu jobs, expected %zu", i, json_array_size(jobs), cases[i].expect);
        json_decref(jobs);
    }
    loom_store_close(st);
}

static void test_bad_inputs(void **state)
{
    loom_store_t *st = open_store(*state);
    if (!st)
        skip();
    loom_err_t err = {0};
    json_t *bad = json_pack("{s:s}", "job_id", "x");
    assert_true(loom_store_job_put(st, "c1", bad, &err) < 0);
    assert_non_null(strstr(err.msg, "job_id"));
    json_decref(bad);
    loom_store_close(st);
    loom_store_t *none = NULL;
    assert_true(loom_store_open("mysql", "x", &none, &err) < 0);
    assert_non_null(strstr(err.msg, "mysql"));
    assert_null(none);
}

#define BOTH(fn)                                                                                   \
    cmocka_unit_test_setup_teardown(fn, setup_sqlite, teardown),                                   \
        cmocka_unit_test_setup_teardown(fn, setup_pgsql, teardown)

int main(void)
{
    const struct CMUnitTest tests[] = {
        BOTH(test_schema_migrated),
        BOTH(test_job_upsert_is_idempotent),
        BOTH(test_job_query_filters),
        BOTH(test_bad_inputs),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
