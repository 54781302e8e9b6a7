/* job_mgr.c - the job table: hash by id, arrays by state, ids. See job_mgr.h. */
#include "ctld/job_mgr.h"
#include "common/jobstate.h"
#include "common/rangeset.h"
#include "ctld/job_array.h"
#include "common/xalloc.h"
#include "ctld/sched_job.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* A slot that held a removed job (keeps probe chains intact); never dereferenced. */
#define JOB_TOMBSTONE ((ctld_job_t *)(uintptr_t)1)

/* ---- small containers --------------------------------------------------- */

void ctld_vec_push(ctld_vec_t *vec, void *p)
{
    if (vec->n == vec->cap) {
        vec->cap = vec->cap ? vec->cap * 2 : 64;
        vec->v = loom_xreallocarray(vec->v, vec->cap, sizeof(*vec->v));
    }
    vec->v[vec->n++] = p;
}

bool ctld_vec_remove(ctld_vec_t *vec, void *p)
{
    /* Most removals are of recent entries: search from the end. */
    for (size_t i = vec->n; i-- > 0;) {
        if (vec->v[i] == p) {
            vec->v[i] = vec->v[--vec->n];
            return true;
        }
    }
    return false;
}

void ctld_vec_free(ctld_vec_t *vec)
{
    free(vec->v);
    memset(vec, 0, sizeof(*vec));
}

/* ---- the hash ------------------------------------------------------------ */

static size_t job_mgr_hash(uint32_t id, size_t cap)
{
    return (size_t)(id * 2654435761u) & (cap - 1);
}

static void job_mgr_put(ctld_job_t **slots, size_t cap, ctld_job_t *job)
{
    size_t i = job_mgr_hash(job->id, cap);
    while (slots[i] && slots[i] != JOB_TOMBSTONE)
        i = (i + 1) & (cap - 1);
    slots[i] = job;
}

/* Rehash into a table twice as big (or as big, when mostly tombstones). */
static void job_mgr_grow(ctld_t *c)
{
    size_t ncap = c->job_slot_cap ? c->job_slot_cap : 1024;
    if ((c->njobs + 1) * 4 > ncap)
        ncap *= 2;
    ctld_job_t **ns = loom_xcalloc(ncap, sizeof(*ns));
    for (size_t i = 0; i < c->job_slot_cap; i++)
        if (c->job_slots[i] && c->job_slots[i] != JOB_TOMBSTONE)
            job_mgr_put(ns, ncap, c->job_slots[i]);
    free(c->job_slots);
    c->job_slots = ns;
    c->job_slot_cap = ncap;
    c->job_tombs = 0;
}

ctld_job_t *ctld_job_find(const ctld_t *c, uint32_t id)
{
    if (!c->job_slot_cap)
        return NULL;
    size_t i = job_mgr_hash(id, c->job_slot_cap);
    for (size_t probes = 0; probes < c->job_slot_cap; probes++) {
        ctld_job_t *j = c->job_slots[i];
        if (!j)
            return NULL;
        if (j != JOB_TOMBSTONE && j->id == id)
            return j;
        i = (i + 1) & (c->job_slot_cap - 1);
    }
    return NULL;
}

static void job_mgr_unhash(ctld_t *c, ctld_job_t *job)
{
    size_t i = job_mgr_hash(job->id, c->job_slot_cap);
    while (c->job_slots[i]) {
        if (c->job_slots[i] == job) {
            c->job_slots[i] = JOB_TOMBSTONE;
            c->job_tombs++;
            return;
        }
        i = (i + 1) & (c->job_slot_cap - 1);
    }
}

/* ---- lists by state ------------------------------------------------------ */

static int job_mgr_list_of(const ctld_job_t *job)
{
    loom_job_state_t base = loom_job_base(job->state);
    if (base == LOOM_JOB_PENDING)
        return CTLD_LIST_PENDING;
    if (base == LOOM_JOB_RUNNING || base == LOOM_JOB_SUSPENDED || job->alloc_applied)
        return CTLD_LIST_RUNNING;
    return CTLD_LIST_DONE;
}

static ctld_vec_t *job_mgr_vec(ctld_t *c, int list)
{
    switch (list) {
    case CTLD_LIST_PENDING:
        return &c->jobs_pending;
    case CTLD_LIST_RUNNING:
        return &c->jobs_running;
    case CTLD_LIST_DONE:
        return &c->jobs_done;
    default:
        return NULL;
    }
}

void ctld_jobs_refile(ctld_t *c, ctld_job_t *job, uint32_t old_state)
{
    int want = job_mgr_list_of(job), old_list = job->list;
    if (want != job->list) {
        ctld_vec_t *from = job_mgr_vec(c, job->list);
        if (from)
            ctld_vec_remove(from, job);
        ctld_vec_push(job_mgr_vec(c, want), job);
        job->list = want;
    }
    ctld_array_recount(job, old_list, old_state);
}

void ctld_jobs_init(ctld_t *c)
{
    job_mgr_grow(c);
    ctld_arrays_init(c);
}

void ctld_jobs_insert(ctld_t *c, ctld_job_t *job)
{
    /* Keep live slots plus tombstones under one half. */
    if ((c->njobs + c->job_tombs + 1) * 2 > c->job_slot_cap)
        job_mgr_grow(c);
    job_mgr_put(c->job_slots, c->job_slot_cap, job);
    c->njobs++;
    ctld_vec_push(&c->jobs_all, job);
    job->list = CTLD_LIST_NONE;
    ctld_array_attach(c, job);
    ctld_jobs_refile(c, job, job->state);
}

void ctld_jobs_purge(ctld_t *c, ctld_job_t *job)
{
    ctld_array_detach(c, job);
    job_mgr_unhash(c, job);
    c->njobs--;
    ctld_vec_remove(&c->jobs_all, job);
    ctld_vec_t *v = job_mgr_vec(c, job->list);
    if (v)
        ctld_vec_remove(v, job);
    ctld_vec_remove(&c->sched.fresh, job);
    ctld_job_free(job);
}

void ctld_jobs_fini(ctld_t *c)
{
    for (size_t i = 0; i < c->jobs_all.n; i++)
        ctld_job_free(c->jobs_all.v[i]);
    ctld_vec_free(&c->jobs_all);
    ctld_vec_free(&c->jobs_pending);
    ctld_vec_free(&c->jobs_running);
    ctld_vec_free(&c->jobs_done);
    ctld_arrays_fini(c);
    loom_strv_free(&c->proj_fields);
    free(c->job_slots);
    c->job_slots = NULL;
    c->job_slot_cap = c->njobs = c->job_tombs = 0;
}

/* ---- ids ----------------------------------------------------------------- */

static uint32_t job_mgr_wrap(const ctld_t *c, uint64_t id)
{
    uint64_t first = (uint64_t)c->conf->first_job_id, max = (uint64_t)c->conf->max_job_id;
    if (first < 1)
        first = 1;
    if (id < first || id > max)
        id = first;
    return (uint32_t)id;
}

uint32_t ctld_jobs_next_id(const ctld_t *c, loom_err_t *err)
{
    if (c->conf->max_job_count > 0 && c->njobs >= (size_t)c->conf->max_job_count) {
        loom_errf(err, -LOOM_EJOB_LIMIT, "MaxJobCount (%lld) reached",
                  (long long)c->conf->max_job_count);
        return 0;
    }
    uint32_t id = job_mgr_wrap(c, c->next_job_id);
    uint64_t span = (uint64_t)c->conf->max_job_id - (uint64_t)c->conf->first_job_id + 1;
    for (uint64_t tries = 0; tries < span; tries++) {
        if (!ctld_job_find(c, id) && !ctld_array_find(c, id))
            return id;
        id = job_mgr_wrap(c, (uint64_t)id + 1);
    }
    loom_errf(err, -LOOM_EJOB_LIMIT, "every job id is in use");
    return 0;
}

void ctld_jobs_advance_id(ctld_t *c, uint32_t id)
{
    c->next_job_id = job_mgr_wrap(c, (uint64_t)id + 1);
}

/* ---- one job ------------------------------------------------------------- */

ctld_job_t *ctld_job_new(void)
{
    ctld_job_t *job = loom_xcalloc(1, sizeof(*job));
    job->reason = "None";
    job->array_task_id = CTLD_NO_TASK;
    job->time_limit = -1;
    job->min_nodes = job->ntasks = job->cpus_per_task = 1;
    return job;
}

/* ctld_step_free and the other step functions live in step_mgr.c. */

void ctld_job_free(ctld_job_t *job)
{
    if (!job)
        return;
    char **strs[] = {&job->user,        &job->group,     &job->name,         &job->account,
                     &job->qos,         &job->comment,   &job->work_dir,     &job->command,
                     &job->std_out,     &job->std_err,   &job->std_in,       &job->features,
                     &job->req_nodes,   &job->exc_nodes, &job->dependency,   &job->submit_host,
                     &job->gres,        &job->gpus,      &job->mail_type,    &job->mail_user,
                     &job->script,      &job->nodes,     &job->batch_host,   &job->rec_text,
                     &job->submit_line, &job->proj_text, &job->admin_comment};
    for (size_t i = 0; i < sizeof(strs) / sizeof(strs[0]); i++)
        free(*strs[i]);
    json_decref(job->desc);
    json_decref(job->env);
    if (job->array_pending)
        loom_rangeset_free(job->array_pending);
    free(job->array_pending);
    free(job->gres_req);
    loom_gres_list_free(&job->gres_list);
    loom_gres_list_free(&job->gpus_list);
    free(job->allowed);
    free(job->req_idx);
    ctld_sched_job_free(job);
    loom_sched_alloc_fini(&job->alloc);
    for (size_t i = 0; i < job->nsteps; i++)
        ctld_step_free(job->steps[i]);
    free(job->steps);
    free(job);
}

void ctld_job_touch(ctld_job_t *job)
{
    free(job->rec_text);
    job->rec_text = NULL;
    job->rec_len = 0;
    free(job->proj_text);
    job->proj_text = NULL;
    job->proj_len = 0;
}

void ctld_job_set_reason(ctld_job_t *job, const char *reason)
{
    /* The reason is not part of the cached record text (job_rec.c). */
    job->reason = reason;
}

const char *ctld_reason_intern(const char *s)
{
    static const char *const known[] = {
        "None",
        "Priority",
        "Resources",
        "Dependency",
        "DependencyNeverSatisfied",
        "BeginTime",
        "JobHeldUser",
        "JobHeldAdmin",
        "PartitionTimeLimit",
        "PartitionNodeLimit",
        "PartitionDown",
        "PartitionInactive",
        "ReqNodeNotAvail",
        "NodeDown",
        "BadConstraints",
        "NonZeroExitCode",
        "TimeLimit",
        "WaitingForScheduling",
        "DeadLine",
        "Cleaning",
        "RaisedSignal",
        "JobArrayTaskLimit",
        CTLD_REASON_NODES_DOWN,
        CTLD_REASON_LAUNCH_FAILED,
    };
    for (size_t i = 0; s && i < sizeof(known) / sizeof(known[0]); i++)
        if (strcmp(known[i], s) == 0)
            return known[i];
    return known[0];
}

int ctld_job_alloc_apply(ctld_t *c, ctld_job_t *job)
{
    if (job->alloc_applied || !job->alloc.nnodes)
        return 0;
    job->alloc.share_max = job->req.share_max > 1 ? job->req.share_max : 0; /* OverSubscribe */
    int rc = loom_sched_alloc_apply(c->snodes, c->nnodes, &job->alloc);
    if (rc == 0)
        job->alloc_applied = true;
    return rc;
}

void ctld_job_alloc_release(ctld_t *c, ctld_job_t *job)
{
    if (!job->alloc_applied)
        return;
    loom_sched_alloc_release(c->snodes, c->nnodes, &job->alloc);
    job->alloc_applied = false;
    /* A node left with no allocation was last busy now (scontrol's LastBusyTime). */
    for (size_t i = 0; i < job->alloc.nnodes; i++) {
        uint32_t idx = job->alloc.nodes[i].node;
        if (idx < c->nnodes && c->snodes[idx].njobs == 0)
            c->nodes[idx].last_busy = ctld_now();
    }
}
