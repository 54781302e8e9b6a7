/*
 * test_store.c - loomdbd's accounting store on SQLite, and on PostgreSQL when
 * LOOM_TEST_PGSQL holds a libpq conninfo (scripts/test.sh starts a server).
 */
#include "dbd/acct.h"
#include "dbd/store.h"
#include "dbd/store_acct.h"
#include "dbd/tres.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

typedef struct {
    const char *type;
    char location[512];
    char dbname[64]; /* pgsql: the fresh database made for this test */
} backend_t;

/* Run one statement on the server of LOOM_TEST_PGSQL's conninfo. */
static void pg_admin(const char *conninfo, const char *sql)
{
    loom_db_t *db = NULL;
    loom_err_t err = {0};
    if (loom_db_pgsql_ops.open(conninfo, &db, &err) < 0)
        fail_msg("pgsql: %s", err.msg);
    if (loom_db_pgsql_ops.exec(db, sql, 0, NULL, NULL, NULL, &err) < 0)
        fail_msg("pgsql: %s: %s", sql, err.msg);
    loom_db_pgsql_ops.close(db);
}

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
    if (conninfo && *conninfo) { /* a fresh database per test */
        static int seq;
        char sql[128];
        snprintf(b->dbname, sizeof(b->dbname), "loomt_%d_%d", (int)getpid(), ++seq);
        snprintf(sql, sizeof(sql), "CREATE DATABASE %s", b->dbname);
        pg_admin(conninfo, sql);
        snprintf(b->location, sizeof(b->location), "%s dbname=%s", conninfo, b->dbname);
    }
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
    } else if (b->dbname[0]) {
        char sql[128];
        snprintf(sql, sizeof(sql), "DROP DATABASE %s WITH (FORCE)", b->dbname);
        pg_admin(getenv("LOOM_TEST_PGSQL"), sql);
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

/* ---- steps ---------------------------------------------------------------- */

static void test_steps_attach_to_jobs(void **state)
{
    loom_store_t *st = open_store(*state);
    if (!st)
        skip();
    json_t *job = make_job(300, "dana", 5000, "COMPLETED");
    assert_int_equal(loom_store_job_put(st, "c3", job, NULL), 0);
    const char *ids[] = {"batch", "extern", "0", "0"}; /* "0" twice: an idempotent re-send */
    for (int i = 0; i < 4; i++) {
        json_t *step =
            json_pack("{s:i, s:I, s:s, s:s, s:I, s:I}", "job_id", 300, "submit_time",
                      (json_int_t)5000, "step_id", ids[i], "state", "COMPLETED", "max_rss",
                      (json_int_t)1024 * (i + 1), "start_time", (json_int_t)5001 + i);
        assert_int_equal(loom_store_step_put(st, "c3", step, NULL), 0);
        json_decref(step);
    }
    loom_store_jobq_t q = {.cluster = "c3", .user = "dana", .steps = true};
    json_t *jobs = NULL;
    assert_int_equal(loom_store_job_query(st, &q, &jobs, NULL), 0);
    assert_int_equal(json_array_size(jobs), 1);
    json_t *steps = json_object_get(json_array_get(jobs, 0), "steps");
    assert_int_equal(json_array_size(steps), 3);
    json_decref(jobs);
    q.steps = false;
    assert_int_equal(loom_store_job_query(st, &q, &jobs, NULL), 0);
    assert_null(json_object_get(json_array_get(jobs, 0), "steps"));
    json_decref(jobs);
    loom_err_t err = {0};
    json_t *bad = json_pack("{s:i}", "job_id", 300);
    assert_true(loom_store_step_put(st, "c3", bad, &err) < 0);
    assert_non_null(strstr(err.msg, "step_id"));
    json_decref(bad);
    json_decref(job);
    loom_store_close(st);
}

static void test_job_lists_and_ids(void **state)
{
    loom_store_t *st = open_store(*state);
    if (!st)
        skip();
    const char *users[] = {"u1", "u2", "u3"};
    for (int i = 0; i < 3; i++) {
        json_t *job = make_job(400 + i, users[i], 7000 + i, i ? "RUNNING" : "FAILED");
        if (i == 2) /* still running: end_time absent is stored as 0 */
            json_object_del(job, "end_time");
        assert_int_equal(loom_store_job_put(st, "c4", job, NULL), 0);
        json_decref(job);
    }
    static const struct {
        loom_store_jobq_t q;
        size_t expect;
    } cases[] = {
        {{.cluster = "c4", .user = "u1,u3"}, 2},
        {{.cluster = "c4", .state = "FAILED,RUNNING"}, 3},
        {{.cluster = "c4", .job_ids = "400,402"}, 2},
        {{.cluster = "c4", .job_ids = "999"}, 0},
        {{.cluster = "c4", .start = 100000}, 1}, /* only the one that has not ended */
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        json_t *jobs = NULL;
        assert_int_equal(loom_store_job_query(st, &cases[i].q, &jobs, NULL), 0);
        if (json_array_size(jobs) != cases[i].expect)
            fail_msg("case %zu: %zu jobs, expected %zu", i, json_array_size(jobs), cases[i].expect);
        json_decref(jobs);
    }
    loom_store_close(st);
}

/* ---- accounting entities --------------------------------------------------- */

static void test_acct_entity_roundtrip(void **state)
{
    loom_store_t *st = open_store(*state);
    if (!st)
        skip();
    static const struct {
        loom_acct_ent_t ent;
        const char *rec;
    } recs[] = {
        {LOOM_ACCT_CLUSTER, "{\"name\":\"c1\",\"control_host\":\"h\",\"control_port\":6817}"},
        {LOOM_ACCT_ACCOUNT, "{\"name\":\"a1\",\"description\":\"d\",\"organization\":\"o\"}"},
        {LOOM_ACCT_USER, "{\"name\":\"u1\",\"default_account\":\"a1\",\"admin_level\":\"None\"}"},
        {LOOM_ACCT_QOS, "{\"name\":\"q1\",\"id\":7,\"priority\":10,\"max_tres_pu\":\"cpu=4\","
                        "\"max_wall\":60,\"flags\":\"DenyOnLimit\",\"usage_factor\":\"1.0\"}"},
        {LOOM_ACCT_ASSOC, "{\"cluster\":\"c1\",\"account\":\"a1\",\"user_name\":\"u1\","
                          "\"partition\":\"\",\"id\":3,\"shares\":1,\"max_jobs\":5,"
                          "\"qos\":\"normal,q1\",\"grp_tres\":\"gres/gpu=2\"}"},
    };
    for (size_t i = 0; i < sizeof(recs) / sizeof(recs[0]); i++) {
        json_t *rec = json_loads(recs[i].rec, 0, NULL), *rows = NULL;
        loom_err_t err = {0};
        assert_int_equal(loom_store_acct_insert(st, recs[i].ent, rec, &err), 0);
        assert_int_equal(loom_store_acct_insert(st, recs[i].ent, rec, &err), -EEXIST);
        assert_int_equal(loom_store_acct_list(st, recs[i].ent, NULL, &rows, &err), 0);
        assert_int_equal(json_array_size(rows), 1);
        if (!json_equal(json_array_get(rows, 0), rec))
            fail_msg("%s: stored %s", recs[i].rec,
                     json_dumps(json_array_get(rows, 0), JSON_COMPACT | JSON_SORT_KEYS));
        json_decref(rows);
        json_t *set = json_loads("{\"created\":5}", 0, NULL);
        assert_int_equal(loom_store_acct_update(st, recs[i].ent, NULL, set, &err), 1);
        json_decref(set);
        json_t *where = json_pack(
            "{s:[s,s]}", recs[i].ent == LOOM_ACCT_ASSOC ? "cluster" : "name", "zz",
            recs[i].ent == LOOM_ACCT_ASSOC ? "c1"
                                           : json_string_value(json_object_get(rec, "name")));
        assert_int_equal(loom_store_acct_delete(st, recs[i].ent, where, &err), 1);
        json_decref(where);
        json_t *bad = json_pack("{s:s}", "nosuch", "x");
        assert_true(loom_store_acct_insert(st, recs[i].ent, bad, &err) < 0);
        assert_non_null(strstr(err.msg, "nosuch"));
        json_decref(bad);
        json_decref(rec);
    }
    loom_store_close(st);
}

/* One step of a rules scenario: op on ent with a request; the reply must hold
 * `expect` (a subset check on the JSON text) or fail with rc and a message. */
typedef struct {
    char op; /* a add, m modify, d delete, l list */
    loom_acct_ent_t ent;
    const char *req;
    int rc;
    const char *expect; /* JSON the reply must contain (objects: subset; arrays: equal) */
} acct_step_t;

static bool json_subset(const json_t *want, const json_t *have)
{
    if (json_is_object(want)) {
        const char *k;
        json_t *v;
        json_object_foreach((json_t *)want, k, v)
        {
            if (!json_subset(v, json_object_get(have, k)))
                return false;
        }
        return true;
    }
    if (json_is_array(want)) {
        if (!json_is_array(have) || json_array_size(want) != json_array_size(have))
            return false;
        for (size_t i = 0; i < json_array_size(want); i++)
            if (!json_subset(json_array_get(want, i), json_array_get(have, i)))
                return false;
        return true;
    }
    return json_equal(want, have);
}

static const acct_step_t acct_script[] = {
    {'l', LOOM_ACCT_QOS, "{}", 0,
     "{\"qos\":[{\"name\":\"normal\",\"usage_factor\":\"1.000000\"}]}"},
    {'l', LOOM_ACCT_ASSOC, "{}", 0,
     "{\"assocs\":[{\"account\":\"root\",\"user_name\":\"\",\"qos\":\"normal\"},"
     "{\"account\":\"root\",\"user_name\":\"root\"}]}"},
    {'a', LOOM_ACCT_QOS, "{\"names\":[\"high\"],\"set\":{\"priority\":1000,\"max_wall\":10080}}", 0,
     "{\"added\":[\"high\"]}"},
    {'a', LOOM_ACCT_QOS, "{\"names\":[\"normal\"]}", 0, "{\"added\":[]}"},
    {'m', LOOM_ACCT_ACCOUNT, "{\"where\":{\"names\":[\"ai\"]},\"set\":{\"qos\":[\"high\"]}}", 0,
     "{\"assocs\":[]}"},
    {'a', LOOM_ACCT_ACCOUNT, "{\"names\":[\"ai\"],\"set\":{\"description\":\"x\"}}", 0,
     "{\"added\":[\"ai\"],\"assocs\":[{\"account\":\"ai\",\"parent_account\":\"root\"}]}"},
    {'a', LOOM_ACCT_ACCOUNT, "{\"names\":[\"stu\"],\"set\":{\"parent\":\"ai\"}}", 0,
     "{\"added\":[\"stu\"]}"},
    {'a', LOOM_ACCT_ACCOUNT, "{\"names\":[\"orph\"],\"set\":{\"parent\":\"nosuch\"}}",
     -LOOM_EINVAL_ACCOUNT, "Parent account 'nosuch' doesn't exist on cluster bench"},
    {'l', LOOM_ACCT_ACCOUNT, "{\"where\":{\"names\":[\"stu\",\"orph\"]}}", 0,
     "{\"accounts\":[{\"name\":\"stu\",\"description\":\"stu\",\"organization\":\"ai\"}]}"},
    {'m', LOOM_ACCT_ACCOUNT, "{\"where\":{\"names\":[\"ai\"]},\"set\":{\"qos\":[\"high\"]}}", 0,
     "{\"assocs\":[{\"account\":\"ai\"}]}"},
    {'a', LOOM_ACCT_USER, "{\"names\":[\"carol\"]}", -LOOM_EINVAL_ACCOUNT,
     "Need name of account to add user to."},
    {'a', LOOM_ACCT_USER, "{\"names\":[\"dave\"],\"accounts\":[\"nosuch\"]}", -LOOM_EINVAL_ACCOUNT,
     "This account 'nosuch' doesn't exist."},
    {'a', LOOM_ACCT_USER,
     "{\"names\":[\"bob\"],\"accounts\":[\"stu\",\"ai\"],\"set\":{\"admin_level\":\"Operator\"}}",
     0, "{\"added\":[\"bob\"],\"assocs\":[{\"account\":\"stu\"},{\"account\":\"ai\"}]}"},
    /* inherited: bob under ai and under stu (below ai) shows ai's qos */
    {'l', LOOM_ACCT_ASSOC, "{\"where\":{\"users\":[\"bob\"]}}", 0,
     "{\"assocs\":[{\"account\":\"stu\",\"qos\":\"high\"},{\"account\":\"ai\",\"qos\":\"high\"}]}"},
    {'l', LOOM_ACCT_ASSOC, "{\"where\":{\"users\":[\"root\"]}}", 0,
     "{\"assocs\":[{\"account\":\"root\",\"qos\":\"normal\"}]}"},
    {'m', LOOM_ACCT_ACCOUNT,
     "{\"where\":{\"names\":[\"stu\"]},\"set\":{\"qos\":{\"op\":\"+\",\"items\":[\"high\"]}}}", 0,
     "{\"assocs\":[{\"account\":\"stu\",\"user_name\":\"\"},{\"account\":\"stu\","
     "\"user_name\":\"bob\"}]}"},
    {'l', LOOM_ACCT_ASSOC, "{\"where\":{\"accounts\":[\"stu\"],\"users\":[\"\"]}}", 0,
     "{\"assocs\":[{\"qos\":\"high\"}]}"},
    {'m', LOOM_ACCT_USER,
     "{\"where\":{\"names\":[\"bob\"],\"accounts\":[\"ai\"]},\"set\":{\"max_jobs\":4,"
     "\"grp_tres\":\"cpu=16,mem=4096\"}}",
     0, "{\"assocs\":[{\"account\":\"ai\",\"user_name\":\"bob\"}]}"},
    {'m', LOOM_ACCT_USER,
     "{\"where\":{\"names\":[\"bob\"]},\"set\":{\"grp_tres\":\"cpu=-1,gres/gpu=2\"}}", 0, NULL},
    {'l', LOOM_ACCT_ASSOC, "{\"where\":{\"users\":[\"bob\"],\"accounts\":[\"ai\"]}}", 0,
     "{\"assocs\":[{\"max_jobs\":4,\"grp_tres\":\"gres/gpu=2,mem=4G\"}]}"},
    {'m', LOOM_ACCT_USER, "{\"where\":{\"names\":[\"bob\"]},\"set\":{\"max_jobs\":-1}}", 0, NULL},
    {'l', LOOM_ACCT_ASSOC, "{\"where\":{\"users\":[\"bob\"],\"accounts\":[\"ai\"]}}", 0,
     "{\"assocs\":[{\"account\":\"ai\"}]}"},
    {'m', LOOM_ACCT_USER, "{\"where\":{\"names\":[\"bob\"]},\"set\":{\"grp_tres\":\"bogus=1\"}}",
     -LOOM_EPARSE, "no TRES known by type bogus"},
    {'m', LOOM_ACCT_QOS, "{\"where\":{\"names\":[\"high\"]},\"set\":{\"preempt\":[\"high\"]}}",
     -LOOM_EINVAL_QOS, "QOS Preemption loop detected"},
    {'m', LOOM_ACCT_QOS, "{\"where\":{\"names\":[\"nosuch\"]},\"set\":{\"priority\":3}}", 0,
     "{\"modified\":[]}"},
    {'m', LOOM_ACCT_ACCOUNT, "{\"where\":{\"names\":[\"stu\"]},\"set\":{\"default_qos\":\"high\"}}",
     0, NULL},
    {'d', LOOM_ACCT_QOS, "{\"where\":{\"names\":[\"high\"]}}", -LOOM_EINVAL_QOS,
     "Associations listed below have these as their Default QOS."},
    {'m', LOOM_ACCT_USER,
     "{\"where\":{\"names\":[\"bob\"]},\"set\":{\"default_account\":\"ai\",\"admin_level\":"
     "\"Administrator\"}}",
     0, "{\"names\":[\"bob\"]}"},
    {'d', LOOM_ACCT_ACCOUNT, "{\"where\":{\"names\":[\"ai\"]}}", 0,
     "{\"deleted\":[\"ai\"],\"assocs\":[{\"account\":\"ai\",\"user_name\":\"\"},{\"account\":"
     "\"stu\",\"user_name\":\"\"},{\"account\":\"stu\",\"user_name\":\"bob\"},{\"account\":"
     "\"ai\",\"user_name\":\"bob\"}]}"},
    {'l', LOOM_ACCT_USER, "{\"where\":{\"names\":[\"bob\"]}}", 0,
     "{\"users\":[{\"name\":\"bob\",\"admin_level\":\"Administrator\"}]}"},
    {'d', LOOM_ACCT_ACCOUNT, "{\"where\":{\"names\":[\"nosuch\"]}}", 0, "{\"deleted\":[]}"},
    {'d', LOOM_ACCT_QOS, "{\"where\":{\"names\":[\"high\"]}}", 0, "{\"deleted\":[\"high\"]}"},
    {'d', LOOM_ACCT_USER, "{\"where\":{\"names\":[\"bob\"]}}", 0, "{\"deleted\":[\"bob\"]}"},
};

static void test_acct_rules(void **state)
{
    loom_store_t *st = open_store(*state);
    if (!st)
        skip();
    loom_acct_ctx_t a = {.st = st, .now = 1000};
    assert_int_equal(loom_acct_init(&a, "bench", NULL), 0);
    assert_int_equal(loom_acct_init(&a, "bench", NULL), 0); /* idempotent */
    for (size_t i = 0; i < sizeof(acct_script) / sizeof(acct_script[0]); i++) {
        const acct_step_t *s = &acct_script[i];
        json_t *req = json_loads(s->req, 0, NULL), *out = json_object();
        loom_err_t err = {0};
        int rc = s->op == 'a'   ? loom_acct_add(&a, s->ent, req, out, &err)
                 : s->op == 'm' ? loom_acct_modify(&a, s->ent, req, out, &err)
                 : s->op == 'd' ? loom_acct_delete(&a, s->ent, req, out, &err)
                                : loom_acct_list(&a, s->ent, req, out, &err);
        char *got = json_dumps(out, JSON_COMPACT | JSON_SORT_KEYS);
        if (rc != s->rc)
            fail_msg("step %zu: rc %d (%s), expected %d", i, rc, err.msg, s->rc);
        if (rc < 0 && s->expect && !strstr(err.msg, s->expect))
            fail_msg("step %zu: message '%s'", i, err.msg);
        json_t *want = rc == 0 && s->expect ? json_loads(s->expect, 0, NULL) : NULL;
        if (want && !json_subset(want, out))
            fail_msg("step %zu: got %s", i, got);
        free(got);
        json_decref(want);
        json_decref(req);
        json_decref(out);
    }
    assert_int_equal(loom_acct_user_level(&a, "root"), 2);
    assert_int_equal(loom_acct_user_level(&a, "nobody"), 0);
    loom_store_close(st);
}

static void test_tres_merge(void **state)
{
    static const struct {
        const char *old, *change, *want; /* want NULL: an error */
    } cases[] = {
        {NULL, "cpu=64,gres/gpu=8,mem=256G", "cpu=64,gres/gpu=8,mem=256G"},
        {"cpu=64,gres/gpu=8,mem=256G", "cpu=-1", "gres/gpu=8,mem=256G"},
        {"cpu=4", "CPU=8,node=1", "cpu=8,node=1"},
        {"", "mem=4000", "mem=4000M"},
        {"", "mem=1536M,mem=2048", "mem=2G"},
        {"", "mem=1T", "mem=1T"},
        {"cpu=1", "cpu=-1", ""},
        {NULL, "gres/gpu=x", NULL},
        {NULL, "cpu", NULL},
        {NULL, "bogus=3", NULL},
        {NULL, "mem=3Q", NULL},
    };
    loom_strv_t known = LOOM_STRV_INIT;
    loom_strv_add(&known, "gres/gpu");
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        char *out = NULL;
        loom_err_t err = {0};
        int rc = loom_tres_merge(cases[i].old, cases[i].change, &known, &out, &err);
        if (!cases[i].want) {
            if (rc >= 0)
                fail_msg("case %zu: accepted as '%s'", i, out);
            assert_null(out);
            continue;
        }
        if (rc < 0 || strcmp(out, cases[i].want) != 0)
            fail_msg("case %zu: '%s' (%s), expected '%s'", i, out ? out : "", err.msg,
                     cases[i].want);
        free(out);
    }
    loom_strv_free(&known);
}

#define BOTH(fn)                                                                                   \
    cmocka_unit_test_setup_teardown(fn, setup_sqlite, teardown),                                   \
        cmocka_unit_test_setup_teardown(fn, setup_pgsql, teardown)

int main(void)
{
    const struct CMUnitTest tests[] = {
        BOTH(test_schema_migrated),        BOTH(test_job_upsert_is_idempotent),
        BOTH(test_job_query_filters),      BOTH(test_bad_inputs),
        BOTH(test_steps_attach_to_jobs),   BOTH(test_job_lists_and_ids),
        BOTH(test_acct_entity_roundtrip),  BOTH(test_acct_rules),
        cmocka_unit_test(test_tres_merge),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
