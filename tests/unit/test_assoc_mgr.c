/*
 * test_assoc_mgr.c - the controller's association tree (ctld/assoc_mgr.h):
 * TRES strings, building from loomdbd's lists, parent links, lookups with
 * Slurm's fallbacks, QOS by name and allowed lists.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "ctld/assoc_mgr.h"

#include <string.h>

static void test_tres_parse(void **state)
{
    (void)state;
    static const struct {
        const char *in;
        int rc;
        const char *name;
        int64_t v;
    } cases[] = {
        {"cpu=4", 0, "cpu", 4},
        {"cpu=4,mem=4G", 0, "mem", 4096},
        {"mem=4000M", 0, "mem", 4000},
        {"mem=1T", 0, "mem", 1024 * 1024},
        {"mem=2048K", 0, "mem", 2},
        {"gres/gpu=2,node=3", 0, "gres/gpu", 2},
        {"gres/gpu:h100=1", 0, "gres/gpu:h100", 1},
        {"", 0, "cpu", -1},
        {"cpu=-1", 0, "cpu", -1},
        {"cpu", -LOOM_EPARSE, NULL, 0},
        {"=4", -LOOM_EPARSE, NULL, 0},
        {"cpu=x", -LOOM_EPARSE, NULL, 0},
        {"mem=4Q", -LOOM_EPARSE, NULL, 0},
        {"mem=4GB", -LOOM_EPARSE, NULL, 0},
        {"cpu=99999999999999999999", -LOOM_EPARSE, NULL, 0},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        ctld_tres_t t = {0};
        loom_err_t err = {0};
        int rc = ctld_tres_parse(cases[i].in, &t, &err);
        assert_int_equal(rc, cases[i].rc);
        if (rc == 0)
            assert_int_equal(ctld_tres_get(&t, cases[i].name), cases[i].v);
    }
    ctld_tres_t t = {0};
    ctld_tres_add(&t, "cpu", 2);
    ctld_tres_add(&t, "cpu", 3);
    assert_int_equal(ctld_tres_get(&t, "cpu"), 5);
}

static const char *tree_json =
    "{\"assocs\":["
    "{\"cluster\":\"c1\",\"account\":\"root\",\"user_name\":\"\",\"partition\":\"\",\"id\":1,"
    "\"shares\":1,\"qos\":\"normal\"},"
    "{\"cluster\":\"c1\",\"account\":\"root\",\"user_name\":\"root\",\"partition\":\"\",\"id\":2,"
    "\"qos\":\"normal\"},"
    "{\"cluster\":\"c1\",\"account\":\"phys\",\"user_name\":\"\",\"partition\":\"\",\"id\":3,"
    "\"parent_account\":\"root\",\"shares\":40,\"grp_tres\":\"cpu=8,gres/gpu=2\",\"grp_jobs\":5,"
    "\"qos\":\"normal,high\"},"
    "{\"cluster\":\"c1\",\"account\":\"theory\",\"user_name\":\"\",\"partition\":\"\",\"id\":4,"
    "\"parent_account\":\"phys\",\"max_wall\":60,\"qos\":\"normal\"},"
    "{\"cluster\":\"c1\",\"account\":\"phys\",\"user_name\":\"alice\",\"partition\":\"\",\"id\":5,"
    "\"max_jobs\":2,\"qos\":\"normal,high\",\"default_qos\":\"high\"},"
    "{\"cluster\":\"c1\",\"account\":\"phys\",\"user_name\":\"alice\",\"partition\":\"gpu\","
    "\"id\":6,\"max_jobs\":1,\"qos\":\"normal\"},"
    "{\"cluster\":\"c1\",\"account\":\"theory\",\"user_name\":\"alice\",\"partition\":\"\","
    "\"id\":7,\"qos\":[\"normal\"],\"max_submit_jobs\":3},"
    "{\"cluster\":\"c2\",\"account\":\"root\",\"user_name\":\"\",\"partition\":\"\",\"id\":8}"
    "],\"users\":["
    "{\"name\":\"alice\",\"default_account\":\"phys\",\"admin_level\":\"None\"},"
    "{\"name\":\"bob\",\"default_account\":\"phys\",\"admin_level\":\"Operator\"},"
    "{\"name\":\"root\",\"default_account\":\"root\",\"admin_level\":\"Administrator\"}"
    "],\"qos\":["
    "{\"name\":\"normal\",\"id\":1,\"priority\":0},"
    "{\"name\":\"high\",\"id\":2,\"priority\":1000,\"max_jobs_pu\":10,\"max_wall\":10080,"
    "\"flags\":\"DenyOnLimit,NoReserve\",\"max_tres_pu\":\"cpu=16\"}"
    "]}";

static ctld_assoc_tree_t *build(const char *text, const char *cluster)
{
    json_t *lists = json_loads(text, 0, NULL);
    assert_non_null(lists);
    ctld_assoc_tree_t *t = NULL;
    loom_err_t err = {0};
    assert_int_equal(ctld_assoc_tree_build(lists, cluster, &t, &err), 0);
    json_decref(lists);
    return t;
}

static void test_build_links(void **state)
{
    (void)state;
    ctld_assoc_tree_t *t = build(tree_json, "c1");
    assert_int_equal(t->nassocs, 7);
    assert_non_null(t->root);
    assert_int_equal(t->root->id, 1);
    assert_int_equal(t->root->nchildren, 2); /* root's user and phys */
    const ctld_assoc_t *phys = ctld_assoc_find_account(t, "phys");
    assert_non_null(phys);
    assert_ptr_equal(phys->parent, t->root);
    assert_int_equal(phys->nchildren, 3); /* theory, alice, alice/gpu */
    assert_int_equal(phys->shares, 40);
    assert_int_equal(phys->grp_jobs, 5);
    assert_int_equal(ctld_tres_get(&phys->grp_tres, "gres/gpu"), 2);
    const ctld_assoc_t *theory = ctld_assoc_find_account(t, "theory");
    assert_ptr_equal(theory->parent, phys);
    assert_int_equal(theory->shares, 1);
    assert_int_equal(theory->max_jobs, -1);
    assert_int_equal(t->max_qos_priority, 1000);
    assert_true(t->submit_limits);
    assert_true(t->run_limits);
    ctld_assoc_tree_free(t);
    t = build(tree_json, NULL); /* every cluster: the first root key wins */
    assert_int_equal(t->nassocs, 7);
    ctld_assoc_tree_free(t);
}

static void test_find(void **state)
{
    (void)state;
    ctld_assoc_tree_t *t = build(tree_json, "c1");
    static const struct {
        const char *user, *account, *part;
        int id; /* 0: none */
    } cases[] = {
        {"alice", "phys", NULL, 5}, {"alice", NULL, NULL, 5},      {"alice", "", "debug", 5},
        {"alice", NULL, "gpu", 6},  {"alice", "theory", "gpu", 7}, {"alice", "chem", NULL, 0},
        {"bob", NULL, NULL, 0},     {"carol", NULL, NULL, 0},      {"root", NULL, NULL, 2},
        {"", "phys", NULL, 0},      {NULL, "phys", NULL, 0},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        const ctld_assoc_t *a = ctld_assoc_find(t, cases[i].user, cases[i].account, cases[i].part);
        if (cases[i].id == 0)
            assert_null(a);
        else {
            assert_non_null(a);
            assert_int_equal(a->id, cases[i].id);
        }
    }
    const ctld_assoc_t *a = ctld_assoc_find(t, "alice", "phys", NULL);
    assert_string_equal(a->default_qos, "high");
    assert_true(ctld_assoc_qos_allowed(a, "high"));
    assert_true(ctld_assoc_qos_allowed(a, "NORMAL"));
    assert_false(ctld_assoc_qos_allowed(a, "low"));
    a = ctld_assoc_find(t, "alice", "theory", NULL);
    assert_true(ctld_assoc_qos_allowed(a, "normal"));
    assert_int_equal(a->max_submit_jobs, 3);
    assert_int_equal(ctld_assoc_user(t, "bob")->admin_level, 1);
    assert_int_equal(ctld_assoc_user(t, "root")->admin_level, 2);
    assert_null(ctld_assoc_user(t, "nobody"));
    const ctld_qos_t *q = ctld_assoc_qos(t, "high");
    assert_non_null(q);
    assert_int_equal(q->priority, 1000);
    assert_int_equal(q->max_jobs_pu, 10);
    assert_int_equal(q->flags, CTLD_QOS_DENY_ON_LIMIT | CTLD_QOS_NO_RESERVE);
    assert_int_equal(ctld_tres_get(&q->max_tres_pu, "cpu"), 16);
    assert_int_equal(ctld_assoc_qos(t, "normal")->max_jobs_pu, -1);
    assert_null(ctld_assoc_qos(t, "nope"));
    assert_null(ctld_assoc_find(NULL, "alice", NULL, NULL));
    ctld_assoc_tree_free(t);
}

static void test_build_bad(void **state)
{
    (void)state;
    static const char *bad[] = {"{}", "{\"assocs\":[],\"users\":[]}", "[]",
                                "{\"assocs\":{},\"users\":[],\"qos\":[]}"};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        json_t *lists = json_loads(bad[i], 0, NULL);
        ctld_assoc_tree_t *t = NULL;
        loom_err_t err = {0};
        assert_int_equal(ctld_assoc_tree_build(lists, NULL, &t, &err), -LOOM_EPROTO);
        assert_null(t);
        json_decref(lists);
    }
    /* Odd records are tolerated: no keys, a bad TRES text, a loop in parents. */
    ctld_assoc_tree_t *t =
        build("{\"assocs\":[{},{\"account\":\"a\",\"parent_account\":\"b\",\"grp_tres\":\"cpu\"},"
              "{\"account\":\"b\",\"parent_account\":\"a\"}],\"users\":[{}],\"qos\":[{}]}",
              NULL);
    assert_int_equal(t->nassocs, 3);
    assert_null(t->root);
    assert_int_equal(ctld_assoc_find_account(t, "a")->grp_tres.n, 0);
    ctld_assoc_tree_free(t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_tres_parse),
        cmocka_unit_test(test_build_links),
        cmocka_unit_test(test_find),
        cmocka_unit_test(test_build_bad),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
