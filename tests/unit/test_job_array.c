/* test_job_array.c - job arrays in the controller (job_array.c): one record
 * until tasks start, splits with new ids and the master id kept by the last
 * task, the throttle, dropping pending tasks, what ids name, records. */
#include "common/conf.h"
#include "common/jobstate.h"
#include "ctld/ctld.h"
#include "ctld/job_array.h"
#include "ctld/job_desc.h"
#include "ctld/job_mgr.h"
#include "ctld/job_rec.h"
#include "ctld/node_mgr.h"
#include "ctld/sched_driver.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdlib.h>
#include <string.h>

static const char conf_text[] = "ClusterName=t\nSlurmctldHost=localhost\nMaxArraySize=1000\n"
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

static int submit(ctld_t *c, const char *spec, ctld_job_t **out)
{
    json_t *desc = json_pack("{s:s}", "array", spec);
    ctld_peer_t peer = {.uid = 1000, .gid = 1000};
    ctld_job_t *job = NULL;
    int rc = ctld_job_from_submit(c, desc, "#!/bin/sh\n", &peer, 100, &job, NULL);
    json_decref(desc);
    if (rc < 0)
        return rc;
    job->id = ctld_jobs_next_id(c, NULL);
    job->array_job_id = job->id;
    job->priority = 1;
    ctld_jobs_insert(c, job);
    ctld_jobs_advance_id(c, job->id);
    *out = job;
    return 0;
}

static const char *pending_text(const ctld_job_t *job)
{
    static char buf[128];
    loom_sbuf_t sb = LOOM_SBUF_INIT;
    ctld_array_pending_text(job, true, &sb);
    snprintf(buf, sizeof(buf), "%s", loom_sbuf_str(&sb));
    loom_sbuf_free(&sb);
    return buf;
}

static void test_submit_forms(void **state)
{
    ctld_t *c = *state;
    static const struct {
        const char *spec, *pending; /* NULL: one task */
        uint32_t task, throttle;
    } cases[] = {
        {"0-999", "0-999", 0, 0},
        {"1-9:2%3", "1,3,5,7,9%3", 0, 3},
        {"5", NULL, 5, 0},
        {"0,7-8%1", "0,7-8%1", 0, 1},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        ctld_job_t *job = NULL;
        assert_int_equal(submit(c, cases[i].spec, &job), 0);
        assert_int_equal(job->array_throttle, cases[i].throttle);
        if (cases[i].pending)
            assert_string_equal(pending_text(job), cases[i].pending);
        else
            assert_true(!job->array_pending && job->array_task_id == cases[i].task);
    }
    ctld_job_t *job = NULL;
    assert_int_equal(submit(c, "0-1000", &job), -LOOM_EINVAL_ARRAY); /* MaxArraySize=1000 */
    assert_int_equal(submit(c, "x", &job), -LOOM_EINVAL_ARRAY);
}

static void test_split_ids(void **state)
{
    ctld_t *c = *state;
    ctld_job_t *meta = NULL;
    assert_int_equal(submit(c, "0-2", &meta), 0);
    uint32_t master = meta->id;
    ctld_job_t *t0 = ctld_array_take_task(c, meta);
    assert_true(t0 != meta && t0->id == master + 1 && t0->array_task_id == 0);
    assert_int_equal(t0->array_job_id, master);
    assert_ptr_equal(t0->desc, meta->desc); /* shared, never copied */
    assert_string_equal(pending_text(meta), "1-2");
    ctld_job_t *t1 = ctld_array_take_task(c, meta);
    assert_true(t1->id == master + 2 && t1->array_task_id == 1);
    /* one index left: the meta record is that task */
    assert_null(meta->array_pending);
    assert_int_equal(meta->array_task_id, 2);
    assert_ptr_equal(ctld_array_take_task(c, meta), meta);
    ctld_array_t *a = ctld_array_find(c, master);
    assert_ptr_equal(ctld_array_task(a, 0), t0);
    assert_ptr_equal(ctld_array_task(a, 2), meta);
    ctld_vec_t recs = {0};
    ctld_array_records(a, &recs);
    assert_int_equal(recs.n, 3);
    assert_ptr_equal(recs.v[0], t0);
    assert_ptr_equal(recs.v[2], meta);
    ctld_vec_free(&recs);
    assert_int_equal(a->n_pending, 3);
}

static void test_throttle_counts(void **state)
{
    ctld_t *c = *state;
    ctld_job_t *meta = NULL;
    assert_int_equal(submit(c, "0-9%2", &meta), 0);
    assert_int_equal(ctld_array_startable(c, meta), 2);
    ctld_job_t *t = ctld_array_take_task(c, meta);
    t->state = LOOM_JOB_RUNNING;
    ctld_jobs_refile(c, t, LOOM_JOB_PENDING);
    assert_int_equal(meta->array->n_running, 1);
    assert_int_equal(ctld_array_startable(c, meta), 1);
    t = ctld_array_take_task(c, meta);
    t->state = LOOM_JOB_RUNNING;
    ctld_jobs_refile(c, t, LOOM_JOB_PENDING);
    assert_int_equal(ctld_array_startable(c, meta), 0);
    assert_string_equal(meta->reason, "JobArrayTaskLimit");
    ctld_array_set_throttle(meta, 5);
    assert_int_equal(ctld_array_startable(c, meta), 3);
    assert_int_equal(t->array_throttle, 5);
    t->state = LOOM_JOB_COMPLETED;
    ctld_jobs_refile(c, t, LOOM_JOB_RUNNING);
    assert_int_equal(meta->array->n_running, 1);
    assert_int_equal(meta->array->n_ok, 1);
}

static void test_drop_and_resolve(void **state)
{
    ctld_t *c = *state;
    ctld_job_t *meta = NULL;
    assert_int_equal(submit(c, "0-9", &meta), 0);
    ctld_job_t *t0 = ctld_array_take_task(c, meta);
    loom_rangeset_t set = LOOM_RANGESET_INIT;
    loom_rangeset_parse("3,5-6,9", 100, &set, NULL);
    assert_int_equal(ctld_array_drop_tasks(c, meta, &set, 1000, NULL), 4);
    assert_string_equal(pending_text(meta), "1-2,4,7-8");
    ctld_vec_t out = {0};
    loom_rangeset_t in_meta = LOOM_RANGESET_INIT;
    /* 12_[0-2]: the split task 0, tasks 1-2 still in the meta record */
    assert_int_equal(ctld_array_resolve(c, meta->id, "0-2", false, &out, &in_meta, NULL), 0);
    assert_int_equal(out.n, 1);
    assert_ptr_equal(out.v[0], t0);
    assert_int_equal(loom_rangeset_count(&in_meta), 2);
    out.n = 0;
    assert_int_equal(ctld_array_resolve(c, meta->id, "3", false, &out, NULL, NULL),
                     -LOOM_EINVAL_JOBID);
    assert_int_equal(ctld_array_resolve(c, meta->id, NULL, false, &out, NULL, NULL), 0);
    assert_int_equal(out.n, 2); /* the meta record and task 0 */
    out.n = 0;
    assert_int_equal(ctld_array_resolve(c, meta->id, "8", true, &out, NULL, NULL), 0);
    assert_int_equal(((ctld_job_t *)out.v[0])->array_task_id, 8);
    assert_string_equal(pending_text(meta), "1-2,4,7");
    /* 12_[0-4,50-60]: tasks 0-2,4 are there (split or pending), the rest not */
    static const struct {
        const char *tasks, *done, *missing;
    } notes[] = {
        {"0-4,50-60", "0-2,4", "3,50-60"},
        {"8,1", NULL, NULL}, /* all there */
        {"3", NULL, NULL},   /* nothing there: the caller's own error */
        {"bad", NULL, NULL},
    };
    for (size_t i = 0; i < sizeof(notes) / sizeof(notes[0]); i++) {
        json_t *r = json_object();
        int rc = ctld_array_note_missing(c, meta->id, notes[i].tasks, r);
        assert_int_equal(rc, notes[i].missing ? -LOOM_EINVAL_JOBID : 0);
        const char *done = json_string_value(json_object_get(r, "tasks_done"));
        const char *missing = json_string_value(json_object_get(r, "tasks_missing"));
        assert_true(notes[i].done ? done && strcmp(done, notes[i].done) == 0 : !done);
        assert_true(notes[i].missing ? missing && strcmp(missing, notes[i].missing) == 0
                                     : !missing);
        json_decref(r);
    }
    ctld_vec_free(&out);
    loom_rangeset_free(&in_meta);
    /* dropping every pending task cancels the meta record */
    loom_rangeset_parse("0-9", 100, &set, NULL);
    assert_int_equal(ctld_array_drop_tasks(c, meta, &set, 1000, NULL), 4);
    assert_int_equal(loom_job_base(meta->state), LOOM_JOB_CANCELLED);
    /* by the requester: sacct's "CANCELLED by 1000", kept in the record */
    assert_true(meta->cancelled_by_set);
    assert_int_equal(meta->cancelled_by, 1000);
    json_t *rec = ctld_job_record(c, meta, CTLD_REC_FULL);
    assert_int_equal(json_integer_value(json_object_get(rec, "cancelled_by")), 1000);
    ctld_job_t *back = NULL;
    assert_int_equal(ctld_job_from_record(c, rec, &back, NULL), 0);
    assert_true(back->cancelled_by_set);
    assert_int_equal(back->cancelled_by, 1000);
    ctld_job_free(back);
    json_decref(rec);
    loom_rangeset_free(&set);
}

static void test_record_round_trip(void **state)
{
    ctld_t *c = *state;
    ctld_job_t *meta = NULL, *back = NULL;
    assert_int_equal(submit(c, "0-99%4", &meta), 0);
    json_t *rec = ctld_job_record(c, meta, CTLD_REC_FULL);
    assert_string_equal(json_string_value(json_object_get(rec, "array_task_str")), "0-99%4");
    assert_int_equal(json_integer_value(json_object_get(rec, "array_max_tasks")), 4);
    assert_null(json_object_get(rec, "array_task_id"));
    assert_int_equal(ctld_job_from_record(c, rec, &back, NULL), 0);
    assert_string_equal(pending_text(back), "0-99%4");
    assert_int_equal(back->array_job_id, meta->id);
    json_decref(rec);
    ctld_job_free(back);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_submit_forms, setup, teardown),
        cmocka_unit_test_setup_teardown(test_split_ids, setup, teardown),
        cmocka_unit_test_setup_teardown(test_throttle_counts, setup, teardown),
        cmocka_unit_test_setup_teardown(test_drop_and_resolve, setup, teardown),
        cmocka_unit_test_setup_teardown(test_record_round_trip, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
