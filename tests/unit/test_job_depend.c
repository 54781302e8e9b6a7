/* test_job_depend.c - --dependency texts to Slurm's stored form, and their
 * evaluation against jobs in a controller's table (job_depend.c). */
#include "common/conf.h"
#include "common/jobstate.h"
#include "ctld/ctld.h"
#include "ctld/job_array.h"
#include "ctld/job_depend.h"
#include "ctld/job_desc.h"
#include "ctld/job_mgr.h"
#include "ctld/node_mgr.h"
#include "ctld/sched_driver.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdlib.h>
#include <string.h>

static const char conf_text[] = "ClusterName=t\nSlurmctldHost=localhost\nMaxArraySize=100\n"
                                "NodeName=n[1-2] CPUs=4 RealMemory=1000\n"
                                "PartitionName=p Nodes=ALL Default=YES\n";

static int setup(void **state)
{
    ctld_t *c = calloc(1, sizeof(*c));
    loom_err_t err = {0};
    if (loom_conf_load_buffer("t.conf", conf_text, strlen(conf_text), &c->conf, &err) < 0)
        return -1;
    c->last_prio = CTLD_PRIO_TOP;
    c->next_job_id = 1;
    c->replaying = true; /* no journal: commits only apply */
    ctld_jobs_init(c);
    ctld_node_mgr_init(c, &err);
    *state = c;
    return 0;
}

static int teardown(void **state)
{
    ctld_t *c = *state;
    ctld_node_mgr_fini(c);
    ctld_jobs_fini(c);
    ctld_sched_fini(c);
    loom_conf_destroy(c->conf);
    free(c);
    return 0;
}

/* A job in the table with this id, state and (optionally) array spec. */
static ctld_job_t *add_job(ctld_t *c, uint32_t id, uint32_t state, const char *array)
{
    json_t *desc = array ? json_pack("{s:s}", "array", array) : json_object();
    ctld_peer_t peer = {.uid = 1000, .gid = 1000};
    ctld_job_t *job = NULL;
    assert_int_equal(ctld_job_from_submit(c, desc, "#!/bin/sh\n", &peer, 100, &job, NULL), 0);
    json_decref(desc);
    job->id = id;
    if (ctld_array_is(job))
        job->array_job_id = id;
    job->state = state;
    job->priority = 1;
    job->start_time = state == LOOM_JOB_PENDING ? 0 : 100;
    job->end_time = loom_job_state_is_terminal(state) ? 100 : 0;
    ctld_jobs_insert(c, job);
    return job;
}

static void test_normalize(void **state)
{
    ctld_t *c = *state;
    add_job(c, 21, LOOM_JOB_PENDING, "0-3");
    static const struct {
        const char *in, *out;
    } cases[] = {
        {"afterok:16", "afterok:16(unfulfilled)"},
        {"afterok:16:17", "afterok:16(unfulfilled),afterok:17(unfulfilled)"},
        {"afterany:16:17+1", "afterany:16(unfulfilled),afterany:17+1(unfulfilled)"},
        {"after:16+2:17", "after:16+2(unfulfilled),after:17+2(unfulfilled)"},
        {"afterok:16,afterok:17?afterok:16", "afterok:16(unfulfilled)?afterok:17(unfulfilled)"},
        {"afterok:21", "afterok:21_*(unfulfilled)"},
        {"afterok:21_2", "afterok:21_2(unfulfilled)"},
        {"afternotok:21_*", "afternotok:21_*(unfulfilled)"},
        {"aftercorr:21", "aftercorr:21_*(unfulfilled)"},
        {"singleton", "singleton(unfulfilled)"},
        {"afterburstbuffer:9", "afterburstbuffer:9(unfulfilled)"},
        {"afterok:16(failed),afterok:17(unfulfilled)",
         "afterok:16(failed),afterok:17(unfulfilled)"},
        {"", NULL},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        char *out = (char *)"untouched";
        loom_err_t err = {0};
        assert_int_equal(ctld_depend_normalize(c, cases[i].in, 0, &out, &err), 0);
        if (cases[i].out)
            assert_string_equal(out, cases[i].out);
        else
            assert_null(out);
        free(out);
    }
}

static void test_rejected(void **state)
{
    ctld_t *c = *state;
    static const char *const bad[] = {
        "foo:1",      "afterok",    "afterok:",        "afterok:abc", "afterok:1?", "afterok:1,",
        "after:0",    "after:1+x",  "afterok:1_",      "afterok:1_x", "afterok::1", "singleton:1",
        "afterok:1 ", ",afterok:1", "afterok:1(done)", "expand:1",
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        char *out = (char *)"untouched";
        loom_err_t err = {0};
        int rc = ctld_depend_normalize(c, bad[i], 0, &out, &err);
        if (rc != -LOOM_EINVAL_DEPEND)
            fail_msg("'%s' was accepted as '%s'", bad[i], rc == 0 ? out : "?");
        assert_string_equal(out, "untouched");
        assert_string_equal(err.msg, "Job dependency problem");
    }
    char *out = NULL;
    assert_int_equal(ctld_depend_normalize(c, "afterok:7", 7, &out, NULL), -LOOM_EINVAL_DEPEND);
}

/* The state of a dependency text for a job that depends on it. */
static int state_of(ctld_t *c, const char *dep)
{
    ctld_job_t *j = ctld_job_find(c, 99);
    free(j->dependency);
    j->dependency = NULL;
    assert_int_equal(ctld_depend_normalize(c, dep, 99, &j->dependency, NULL), 0);
    return ctld_depend_state(c, j, 1000);
}

static void test_evaluate(void **state)
{
    ctld_t *c = *state;
    add_job(c, 10, LOOM_JOB_COMPLETED, NULL);
    add_job(c, 11, LOOM_JOB_FAILED, NULL);
    add_job(c, 12, LOOM_JOB_RUNNING, NULL);
    add_job(c, 13, LOOM_JOB_PENDING, NULL);
    add_job(c, 99, LOOM_JOB_PENDING, NULL);
    static const struct {
        const char *dep;
        int want; /* 0 met, 1 waiting, 2 never */
    } cases[] = {
        {"afterok:10", 0},
        {"afterok:11", 2},
        {"afternotok:11", 0},
        {"afternotok:10", 2},
        {"afterany:11", 0},
        {"afterok:12", 1},
        {"after:12", 0},
        {"after:13", 1},
        {"after:12+100", 1},
        {"afterok:424242", 0},
        {"afterok:10:11", 2},
        {"afterok:10?afterok:11", 0},
        {"afterok:11?afterok:12", 1},
        {"afterok:11?afternotok:10", 2},
        {"afterany:12,afterok:10", 1},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
        if (state_of(c, cases[i].dep) != cases[i].want)
            fail_msg("%s: got %d, want %d", cases[i].dep, state_of(c, cases[i].dep), cases[i].want);
}

static void test_arrays(void **state)
{
    ctld_t *c = *state;
    ctld_job_t *meta = add_job(c, 30, LOOM_JOB_PENDING, "0-2");
    add_job(c, 99, LOOM_JOB_PENDING, NULL);
    assert_int_equal(state_of(c, "afterok:30"), 1);
    assert_int_equal(state_of(c, "afterok:30_1"), 1); /* still in the meta record */
    assert_int_equal(state_of(c, "afterok:30_7"), 0); /* no such task: met */
    ctld_job_t *t1 = ctld_array_split(c, meta, 1, NULL);
    assert_non_null(t1);
    assert_int_equal(t1->array_task_id, 1);
    t1->state = LOOM_JOB_FAILED;
    t1->end_time = 100;
    ctld_jobs_refile(c, t1, LOOM_JOB_PENDING);
    assert_int_equal(state_of(c, "afterok:30_1"), 2);
    assert_int_equal(state_of(c, "afterok:30"), 1); /* tasks 0 and 2 still pending */
    assert_int_equal(state_of(c, "after:30"), 1);
    meta->state = LOOM_JOB_CANCELLED; /* the rest cancelled */
    meta->end_time = 100;
    ctld_jobs_refile(c, meta, LOOM_JOB_PENDING);
    assert_int_equal(state_of(c, "afterok:30"), 2);
    assert_int_equal(state_of(c, "afternotok:30"), 0);
    assert_int_equal(state_of(c, "afterany:30"), 0);
}

static void test_singleton(void **state)
{
    ctld_t *c = *state;
    ctld_job_t *a = add_job(c, 40, LOOM_JOB_RUNNING, NULL);
    ctld_job_t *me = add_job(c, 99, LOOM_JOB_PENDING, NULL);
    assert_string_equal(a->name, me->name); /* both "sbatch", same uid */
    assert_int_equal(state_of(c, "singleton"), 1);
    a->state = LOOM_JOB_COMPLETED;
    ctld_jobs_refile(c, a, LOOM_JOB_RUNNING);
    assert_int_equal(state_of(c, "singleton"), 0);
    /* a newer pending job of the same name (held, say) does not block;
     * an older one does, singleton or not (slurmctld 22.05) */
    add_job(c, 120, LOOM_JOB_PENDING, NULL);
    assert_int_equal(state_of(c, "singleton"), 0);
    add_job(c, 50, LOOM_JOB_PENDING, NULL);
    assert_int_equal(state_of(c, "singleton"), 1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_normalize, setup, teardown),
        cmocka_unit_test_setup_teardown(test_rejected, setup, teardown),
        cmocka_unit_test_setup_teardown(test_evaluate, setup, teardown),
        cmocka_unit_test_setup_teardown(test_arrays, setup, teardown),
        cmocka_unit_test_setup_teardown(test_singleton, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
