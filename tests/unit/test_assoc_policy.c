/*
 * test_assoc_policy.c - the pure limit check of ctld/assoc_policy.h:
 * which limit holds a job back (Slurm 22.05's reason names), whether it is a
 * per-job limit that never frees, the QOS over association precedence and
 * Grp limits over the parents; the TRES-minutes limits, GrpWall, "safe" and
 * the partition's QOS.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "ctld/assoc_policy.h"

#include <string.h>

static const char *tree_json =
    "{\"assocs\":["
    "{\"account\":\"root\",\"user_name\":\"\",\"partition\":\"\",\"id\":1},"
    "{\"account\":\"phys\",\"user_name\":\"\",\"partition\":\"\",\"id\":2,"
    "\"parent_account\":\"root\",\"grp_tres\":\"cpu=8,gres/gpu=2,mem=4G\",\"grp_jobs\":4},"
    "{\"account\":\"phys\",\"user_name\":\"alice\",\"partition\":\"\",\"id\":3,"
    "\"max_jobs\":2,\"max_wall\":60,\"max_tres\":\"cpu=4,node=1\","
    "\"max_tres_per_node\":\"gres/gpu=2\"}"
    "],\"users\":[],\"qos\":["
    "{\"name\":\"normal\",\"id\":1},"
    "{\"name\":\"q\",\"id\":2,\"max_jobs_pu\":3,\"max_wall\":120,\"max_tres_pu\":\"cpu=6\","
    "\"grp_jobs\":10,\"grp_tres\":\"gres/"
    "gpu=1\",\"max_tres\":\"mem=1G\",\"max_tres_pa\":\"node=2\","
    "\"max_jobs_pa\":5,\"max_tres_per_node\":\"cpu=3\"},"
    "{\"name\":\"b\",\"id\":3,\"grp_tres\":\"billing=10,license/matlab=1,fs/disk=5\"},"
    "{\"name\":\"pa\",\"id\":4,\"max_jobs_pa\":2,\"max_tres_pa\":\"node=2\"}"
    "]}";

typedef struct {
    const char *what;
    const char *qos;    /* NULL: none */
    const char *job;    /* TRES */
    int64_t time_limit; /* minutes */
    int64_t alice_jobs; /* running in alice's association */
    const char *alice;  /* its TRES */
    int64_t phys_jobs;  /* running in phys's subtree */
    const char *phys;   /* its TRES */
    int64_t quser_jobs; /* alice's jobs in QOS q */
    const char *quser;  /* their TRES */
    const char *want;   /* reason, NULL: runs */
    bool never;
} policy_case_t;

static const policy_case_t cases[] = {
    {"fits", NULL, "cpu=1,node=1", 10, 0, "", 0, "", 0, "", NULL, false},
    {"max wall", NULL, "cpu=1", 61, 0, "", 0, "", 0, "", "AssocMaxWallDurationPerJobLimit", true},
    {"infinite time", NULL, "cpu=1", -1, 0, "", 0, "", 0, "", "AssocMaxWallDurationPerJobLimit",
     true},
    {"max cpu per job", NULL, "cpu=5", 10, 0, "", 0, "", 0, "", "AssocMaxCpuPerJobLimit", true},
    {"max node per job", NULL, "cpu=2,node=2", 10, 0, "", 0, "", 0, "", "AssocMaxNodePerJobLimit",
     true},
    {"max jobs", NULL, "cpu=1", 10, 2, "cpu=2", 2, "cpu=2", 0, "", "AssocMaxJobsLimit", false},
    {"grp jobs", NULL, "cpu=1", 10, 0, "", 4, "cpu=4", 0, "", "AssocGrpJobsLimit", false},
    {"grp cpu", NULL, "cpu=3", 10, 1, "cpu=2", 2, "cpu=6", 0, "", "AssocGrpCpuLimit", false},
    {"grp cpu just fits", NULL, "cpu=2", 10, 1, "cpu=2", 2, "cpu=6", 0, "", NULL, false},
    {"grp gres", NULL, "cpu=1,gres/gpu=1", 10, 0, "", 1, "cpu=1,gres/gpu=2", 0, "", "AssocGrpGRES",
     false},
    {"grp mem", NULL, "cpu=1,mem=2048", 10, 0, "", 1, "cpu=1,mem=3000", 0, "", "AssocGrpMemLimit",
     false},
    {"qos wall wins", "q", "cpu=1", 100, 0, "", 0, "", 0, "", NULL, false},
    {"qos wall over", "q", "cpu=1", 121, 0, "", 0, "", 0, "", "QOSMaxWallDurationPerJobLimit",
     true},
    {"qos mem per job", "q", "cpu=1,mem=2048", 10, 0, "", 0, "", 0, "", "QOSMaxMemoryPerJob", true},
    {"qos jobs per user wins over max jobs", "q", "cpu=1", 10, 2, "cpu=2", 2, "cpu=2", 2, "cpu=2",
     NULL, false},
    {"qos jobs per user", "q", "cpu=1", 10, 3, "cpu=3", 3, "cpu=3", 3, "cpu=3",
     "QOSMaxJobsPerUserLimit", false},
    {"qos cpu per user", "q", "cpu=2", 10, 1, "cpu=3", 1, "cpu=5", 1, "cpu=5",
     "QOSMaxCpuPerUserLimit", false},
    {"qos grp gres", "q", "cpu=1,gres/gpu=1", 10, 0, "", 0, "", 0, "", NULL, false},
    {"qos jobs per account", "pa", "cpu=1", 10, 0, "", 0, "", 5, "cpu=5", "MaxJobsPerAccount",
     false},
    {"qos node per account", "pa", "cpu=1,node=1", 10, 0, "", 0, "", 1, "node=2",
     "MaxNodePerAccount", false},
    {"qos cpu per node", "q", "cpu=4,node=1", 10, 0, "", 0, "", 0, "", "QOSMaxCpuPerNode", true},
    {"qos cpu per node spread", "q", "cpu=4,node=2", 10, 0, "", 0, "", 0, "",
     "AssocMaxNodePerJobLimit", true},
    {"assoc gpu per node", NULL, "cpu=1,node=1,gres/gpu=3", 10, 0, "", 0, "", 0, "",
     "AssocMaxGRESPerNode", true},
    {"qos billing", "b", "cpu=1,billing=4", 10, 0, "", 0, "", 1, "billing=7", "QOSGrpBilling",
     false},
    {"qos license", "b", "cpu=1,license/matlab=1", 10, 0, "", 0, "", 1, "license/matlab=1",
     "QOSGrpLicense", false},
    {"qos other tres", "b", "cpu=1,fs/disk=6", 10, 0, "", 0, "", 0, "", "QOSGrpUnknown", false},
    {"qos tres before the association's", "q", "cpu=5", 10, 0, "", 0, "", 0, "", "QOSMaxCpuPerNode",
     true},
    {"counts before wall", NULL, "cpu=1", 61, 2, "cpu=2", 2, "cpu=2", 0, "", "AssocMaxJobsLimit",
     false},
    {"qos counts before assoc wall", "pa", "cpu=1", 61, 0, "", 0, "", 2, "cpu=2",
     "MaxJobsPerAccount", false},
    {"grp jobs of a parent after the user's wall", NULL, "cpu=1", 61, 0, "", 4, "cpu=4", 0, "",
     "AssocMaxWallDurationPerJobLimit", true},
};

static void use_of(ctld_policy_use_t *u, int64_t jobs, const char *tres)
{
    loom_err_t err = {0};
    u->jobs = jobs;
    assert_int_equal(ctld_tres_parse(tres, &u->tres, &err), 0);
}

static void test_check_table(void **state)
{
    (void)state;
    json_t *lists = json_loads(tree_json, 0, NULL);
    ctld_assoc_tree_t *t = NULL;
    loom_err_t err = {0};
    assert_int_equal(ctld_assoc_tree_build(lists, NULL, &t, &err), 0);
    json_decref(lists);
    const ctld_assoc_t *alice = ctld_assoc_find(t, "alice", "phys", NULL);
    const ctld_assoc_t *phys = ctld_assoc_find_account(t, "phys");
    assert_non_null(alice);
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        const policy_case_t *k = &cases[i];
        ctld_policy_use_t ua = {0}, up = {0}, uq = {0}, qall = {0};
        use_of(&ua, k->alice_jobs, k->alice);
        use_of(&up, k->phys_jobs, k->phys);
        use_of(&uq, k->quser_jobs, k->quser);
        use_of(&qall, k->quser_jobs, k->quser);
        const ctld_policy_use_t *by_idx[3] = {NULL, NULL, NULL};
        by_idx[alice->idx] = &ua;
        by_idx[phys->idx] = &up;
        ctld_tres_t job;
        assert_int_equal(ctld_tres_parse(k->job, &job, &err), 0);
        ctld_policy_in_t in = {.qos = k->qos ? ctld_assoc_qos(t, k->qos) : NULL,
                               .assoc = alice,
                               .assoc_use = by_idx,
                               .qos_use = &qall,
                               .qos_user_use = &uq,
                               .qos_acct_use = &uq,
                               .job = &job,
                               .time_limit = k->time_limit};
        bool never = !k->never;
        const char *why = ctld_policy_check(&in, &never);
        if (!k->want) {
            if (why)
                fail_msg("%s: held back by %s", k->what, why);
        } else {
            if (!why || strcmp(why, k->want) != 0)
                fail_msg("%s: got %s, want %s", k->what, why ? why : "(none)", k->want);
        }
        assert_int_equal(never, k->never);
    }
    ctld_assoc_tree_free(t);
}

static void test_no_usage(void **state)
{
    (void)state;
    ctld_tres_t job = {0};
    ctld_tres_add(&job, "cpu", 1);
    ctld_policy_in_t in = {.job = &job, .time_limit = -1};
    bool never = true;
    assert_null(ctld_policy_check(&in, &never));
    assert_false(never);
}

/* ---- TRES-minutes, GrpWall, safe and the partition's QOS ---- */

static const char *mins_json =
    "{\"assocs\":["
    "{\"account\":\"root\",\"user_name\":\"\",\"partition\":\"\",\"id\":1},"
    "{\"account\":\"phys\",\"user_name\":\"\",\"partition\":\"\",\"id\":2,"
    "\"parent_account\":\"root\",\"grp_tres_mins\":\"cpu=100\",\"grp_wall\":50,"
    "\"grp_tres_run_mins\":\"cpu=200\"},"
    "{\"account\":\"phys\",\"user_name\":\"alice\",\"partition\":\"\",\"id\":3,"
    "\"max_tres_mins\":\"cpu=50,gres/gpu=20\"}"
    "],\"users\":[],\"qos\":["
    "{\"name\":\"normal\",\"id\":1},"
    "{\"name\":\"qm\",\"id\":2,\"grp_tres_mins\":\"cpu=40,mem=1000\",\"max_tres_mins\":\"node=10\","
    "\"grp_wall\":20},"
    "{\"name\":\"part\",\"id\":3,\"max_wall\":30,\"grp_tres_mins\":\"gres/gpu=5\"},"
    "{\"name\":\"over\",\"id\":4,\"max_wall\":60,\"flags\":\"OverPartQOS\"}"
    "]}";

typedef struct {
    const char *what;
    const char *qos, *part_qos; /* NULL: none */
    const char *job;            /* TRES */
    int64_t time_limit;         /* minutes */
    bool safe;
    const char *phys_used; /* phys's decayed usage, TRES-seconds */
    const char *phys_run;  /* TRES-seconds its running jobs may still use */
    int64_t phys_wall;     /* seconds */
    const char *q_used;    /* each QOS's decayed usage, TRES-seconds */
    int64_t q_wall;
    const char *want;
    bool never;
} mins_case_t;

static const mins_case_t mins_cases[] = {
    {"fits", NULL, NULL, "cpu=1", 10, true, "", "", 0, "", 0, NULL, false},
    {"assoc cpu minutes per job", NULL, NULL, "cpu=6", 10, false, "", "", 0, "", 0,
     "AssocMaxCpuMinutesPerJobLimit", true},
    {"assoc gpu minutes per job", NULL, NULL, "cpu=1,gres/gpu=3", 10, false, "", "", 0, "", 0,
     "AssocMaxGRESMinutesPerJob", true},
    {"infinite time", NULL, NULL, "cpu=1", -1, false, "", "", 0, "", 0,
     "AssocMaxCpuMinutesPerJobLimit", true},
    {"grp minutes used up", NULL, NULL, "cpu=1", 10, false, "cpu=6000", "", 0, "", 0,
     "AssocGrpCPUMinutesLimit", false},
    {"grp minutes nearly used", NULL, NULL, "cpu=1", 10, false, "cpu=5999", "", 0, "", 0, NULL,
     false},
    {"safe: not enough left", NULL, NULL, "cpu=1", 10, true, "cpu=5940", "", 0, "", 0,
     "AssocGrpCPUMinutesLimit", false},
    {"safe: running jobs count", NULL, NULL, "cpu=1", 10, true, "", "cpu=5700", 0, "", 0,
     "AssocGrpCPUMinutesLimit", false},
    {"not safe: running jobs do not", NULL, NULL, "cpu=1", 10, false, "", "cpu=5700", 0, "", 0,
     NULL, false},
    {"safe: just fits", NULL, NULL, "cpu=1", 10, true, "cpu=3000", "cpu=2400", 0, "", 0, NULL,
     false},
    {"grp run minutes", NULL, NULL, "cpu=1", 10, false, "", "cpu=11700", 0, "", 0,
     "AssocGrpCPURunMinutesLimit", false},
    {"grp wall used up", NULL, NULL, "cpu=1", 10, false, "", "", 3000, "", 0, "AssocGrpWallLimit",
     false},
    {"grp wall not safe", NULL, NULL, "cpu=1", 10, false, "", "", 2700, "", 0, NULL, false},
    {"grp wall safe", NULL, NULL, "cpu=1", 10, true, "", "", 2700, "", 0, "AssocGrpWallLimit",
     false},
    {"qos grp minutes", "qm", NULL, "cpu=1", 10, false, "", "", 0, "cpu=2400", 0,
     "QOSGrpCPUMinutesLimit", false},
    {"qos cpu minutes win over the association's", "qm", NULL, "cpu=1", 10, false, "cpu=6000", "",
     0, "", 0, NULL, false},
    {"qos memory minutes", "qm", NULL, "cpu=1", 10, false, "", "", 0, "mem=60000", 0,
     "QOSGrpMemoryMinutes", false},
    {"qos node minutes per job", "qm", NULL, "cpu=1,node=2", 10, false, "", "", 0, "", 0,
     "QOSMaxNodeMinutesPerJob", true},
    {"qos grp wall", "qm", NULL, "cpu=1", 10, false, "", "", 0, "", 1200, "QOSGrpWallLimit", false},
    {"qos grp wall wins over the association's", "qm", NULL, "cpu=1", 10, false, "", "", 3000, "",
     0, NULL, false},
    {"partition qos first", "normal", "part", "cpu=1", 45, false, "", "", 0, "", 0,
     "QOSMaxWallDurationPerJobLimit", true},
    {"OverPartQOS", "over", "part", "cpu=1", 45, false, "", "", 0, "", 0, NULL, false},
    {"partition qos gres minutes", "normal", "part", "cpu=1,gres/gpu=1", 10, false, "", "", 0,
     "gres/gpu=300", 0, "QOSGrpGRESMinutes", false},
    {"partition qos alone", NULL, "part", "cpu=1", 45, false, "", "", 0, "", 0,
     "QOSMaxWallDurationPerJobLimit", true},
};

static void mins_use(ctld_policy_use_t *u, const char *used, const char *run, int64_t wall)
{
    loom_err_t err = {0};
    assert_int_equal(ctld_tres_parse(used, &u->used_secs, &err), 0);
    assert_int_equal(ctld_tres_parse(run, &u->run_secs, &err), 0);
    u->wall_secs = wall;
}

static void test_mins_table(void **state)
{
    (void)state;
    json_t *lists = json_loads(mins_json, 0, NULL);
    ctld_assoc_tree_t *t = NULL;
    loom_err_t err = {0};
    assert_int_equal(ctld_assoc_tree_build(lists, NULL, &t, &err), 0);
    json_decref(lists);
    assert_true(t->run_limits && t->usage_limits);
    const ctld_assoc_t *alice = ctld_assoc_find(t, "alice", "phys", NULL);
    const ctld_assoc_t *phys = ctld_assoc_find_account(t, "phys");
    assert_non_null(alice);
    for (size_t i = 0; i < sizeof(mins_cases) / sizeof(mins_cases[0]); i++) {
        const mins_case_t *k = &mins_cases[i];
        ctld_policy_use_t up = {0}, uq = {0};
        mins_use(&up, k->phys_used, k->phys_run, k->phys_wall);
        mins_use(&uq, k->q_used, "", k->q_wall);
        const ctld_policy_use_t *by_idx[3] = {NULL, NULL, NULL};
        by_idx[phys->idx] = &up;
        ctld_tres_t job;
        assert_int_equal(ctld_tres_parse(k->job, &job, &err), 0);
        const ctld_qos_t *q1 = NULL, *q2 = NULL;
        ctld_policy_qos_order(k->qos ? ctld_assoc_qos(t, k->qos) : NULL,
                              k->part_qos ? ctld_assoc_qos(t, k->part_qos) : NULL, &q1, &q2);
        ctld_policy_in_t in = {.qos = q1,
                               .qos2 = q2,
                               .assoc = alice,
                               .assoc_use = by_idx,
                               .qos_use = &uq,
                               .qos2_use = &uq,
                               .job = &job,
                               .time_limit = k->time_limit,
                               .safe = k->safe};
        bool never = !k->never;
        const char *why = ctld_policy_check(&in, &never);
        if (!k->want) {
            if (why)
                fail_msg("%s: held back by %s", k->what, why);
        } else if (!why || strcmp(why, k->want) != 0) {
            fail_msg("%s: got %s, want %s", k->what, why ? why : "(none)", k->want);
        }
        if (never != k->never)
            fail_msg("%s: never %d", k->what, never);
    }
    ctld_assoc_tree_free(t);
}

static void test_qos_order(void **state)
{
    (void)state;
    ctld_qos_t job = {.name = "job"}, part = {.name = "part"};
    const ctld_qos_t *a = NULL, *b = NULL;
    ctld_policy_qos_order(&job, &part, &a, &b);
    assert_ptr_equal(a, &part);
    assert_ptr_equal(b, &job);
    job.flags = CTLD_QOS_OVER_PART_QOS;
    ctld_policy_qos_order(&job, &part, &a, &b);
    assert_ptr_equal(a, &job);
    assert_ptr_equal(b, &part);
    ctld_policy_qos_order(&job, &job, &a, &b);
    assert_ptr_equal(a, &job);
    assert_null(b);
    ctld_policy_qos_order(NULL, &part, &a, &b);
    assert_ptr_equal(a, &part);
    assert_null(b);
    ctld_policy_qos_order(&job, NULL, &a, &b);
    assert_ptr_equal(a, &job);
    assert_null(b);
    ctld_policy_qos_order(NULL, NULL, &a, &b);
    assert_null(a);
    assert_null(b);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_check_table),
        cmocka_unit_test(test_no_usage),
        cmocka_unit_test(test_mins_table),
        cmocka_unit_test(test_qos_order),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
