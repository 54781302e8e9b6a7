/*
 * fuzz_ctld_desc.c - the controller's handling of job descriptions, the part
 * of job.submit that users control: defaults and validation (job_desc.c),
 * the scheduling request and an ever-fits placement (src/sched), records and
 * their round trip (job_rec.c), dependencies (job_depend.c), arrays split,
 * dropped and resolved (job_array.c) and --test-only.
 * Input: the JSON text of a description (messages.md §2).
 */
#include "common/proto.h"
#include "ctld/ctld.h"
#include "ctld/job_array.h"
#include "ctld/job_depend.h"
#include "ctld/job_desc.h"
#include "ctld/job_mgr.h"
#include "ctld/job_rec.h"
#include "ctld/node_mgr.h"
#include "ctld/sched_driver.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* An array goes into the table: a few tasks split off, some dropped, a set
 * resolved, the record written and read back (job_array.c). Takes job. */
static void fuzz_array(ctld_t *c, ctld_job_t *job)
{
    loom_err_t err = {0};
    job->id = ctld_jobs_next_id(c, &err);
    job->array_job_id = job->id;
    ctld_jobs_insert(c, job);
    ctld_jobs_advance_id(c, job->id);
    for (int i = 0; i < 3; i++)
        ctld_array_take_task(c, job);
    loom_rangeset_t set = LOOM_RANGESET_INIT;
    ctld_vec_t out = {0};
    if (loom_rangeset_parse("0-2,5,7-9", 100, &set, NULL) >= 0) {
        ctld_array_resolve(c, job->id, "1-6", true, &out, NULL, &err);
        ctld_array_drop_tasks(c, job, &set, 0, &err);
    }
    ctld_array_startable(c, job);
    json_t *rec = ctld_job_record(c, job, CTLD_REC_FULL);
    ctld_job_t *back = NULL;
    if (ctld_job_from_record(c, rec, &back, &err) == 0)
        ctld_job_free(back);
    json_decref(rec);
    ctld_vec_free(&out);
    loom_rangeset_free(&set);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char fuzz_conf[] =
    "ClusterName=f\nSlurmctldHost=localhost\nGresTypes=gpu\n"
    "SelectTypeParameters=CR_Core_Memory\n"
    "NodeName=n[1-3] CPUs=4 RealMemory=1000 Gres=gpu:a100:2 Feature=fast,ib\n"
    "NodeName=m1 CPUs=8 RealMemory=4000\n"
    "PartitionName=p Nodes=n[1-3] Default=YES MaxTime=60 DefMemPerCPU=100\n"
    "PartitionName=q Nodes=ALL MaxNodes=2\n";

static void fuzz_job(ctld_t *c, ctld_job_t *job)
{
    loom_err_t err = {0};
    job->id = 7;
    json_t *rec = ctld_job_record(c, job, CTLD_REC_FULL);
    ctld_job_t *back = NULL;
    if (ctld_job_from_record(c, rec, &back, &err) == 0) {
        loom_sbuf_t sb = LOOM_SBUF_INIT;
        ctld_job_rec_write(c, back, &sb);
        loom_sbuf_free(&sb);
        ctld_job_limit_reason(c, back);
        ctld_job_free(back);
    }
    json_decref(rec);
    if (job->dependency) {
        char *norm = NULL;
        if (ctld_depend_normalize(c, job->dependency, job->id, &norm, &err) == 0)
            free(norm);
        ctld_depend_state(c, job, 1000000);
    }
    json_t *reply = json_object();
    ctld_sched_test_only(c, job, reply);
    json_decref(reply);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    json_t *desc = json_loadb((const char *)data, size, JSON_REJECT_DUPLICATES, NULL);
    if (!json_is_object(desc)) {
        json_decref(desc);
        return 0;
    }
    ctld_t c = {0};
    loom_err_t err = {0};
    if (loom_conf_load_buffer("fuzz.conf", fuzz_conf, strlen(fuzz_conf), &c.conf, &err) < 0)
        abort();
    c.last_prio = CTLD_PRIO_TOP;
    c.next_job_id = 1;
    ctld_jobs_init(&c);
    ctld_node_mgr_init(&c, &err);
    ctld_peer_t peer = {.uid = 1000, .gid = 1000, .role = size % 2 ? LOOM_ROLE_ADMIN : 0};
    ctld_job_t *job = NULL;
    if (ctld_job_from_submit(&c, desc, "#!/bin/sh\ntrue\n", &peer, 1000000, &job, &err) == 0) {
        fuzz_job(&c, job);
        if (ctld_array_is(job))
            fuzz_array(&c, job);
        else
            ctld_job_free(job);
    }
    ctld_node_mgr_fini(&c);
    ctld_jobs_fini(&c);
    ctld_sched_fini(&c);
    loom_conf_destroy(c.conf);
    json_decref(desc);
    return 0;
}
