/* job_array.c - job arrays: one record until the tasks start. See job_array.h. */
#include "ctld/job_array.h"
#include "common/jobid.h"
#include "common/jobstate.h"
#include "common/log.h"
#include "common/xalloc.h"
#include "ctld/job_mgr.h"
#include "ctld/job_ops.h"
#include "ctld/job_rec.h"
#include "ctld/job_state.h"

#include <stdlib.h>
#include <string.h>

struct ctld_arrays {
    ctld_u32map_t by_id; /* array_job_id -> ctld_array_t */
};

/* ---- a map of 32-bit keys (linear probing, deletion by backward shift) ---- */

static size_t array_map_home(uint32_t key, size_t cap)
{
    return (size_t)(key * 2654435761u) & (cap - 1);
}

static void *array_map_get(const ctld_u32map_t *m, uint32_t key)
{
    if (!m->cap)
        return NULL;
    for (size_t i = array_map_home(key, m->cap); m->vals[i]; i = (i + 1) & (m->cap - 1))
        if (m->keys[i] == key)
            return m->vals[i];
    return NULL;
}

static void array_map_insert(ctld_u32map_t *m, uint32_t key, void *val)
{
    size_t i = array_map_home(key, m->cap);
    while (m->vals[i] && m->keys[i] != key)
        i = (i + 1) & (m->cap - 1);
    if (!m->vals[i])
        m->n++;
    m->keys[i] = key;
    m->vals[i] = val;
}

static void array_map_put(ctld_u32map_t *m, uint32_t key, void *val)
{
    if ((m->n + 1) * 2 > m->cap) { /* keep it at most half full */
        ctld_u32map_t big = {.cap = m->cap ? m->cap * 2 : 16};
        big.keys = loom_xcalloc(big.cap, sizeof(*big.keys));
        big.vals = loom_xcalloc(big.cap, sizeof(*big.vals));
        for (size_t i = 0; i < m->cap; i++)
            if (m->vals[i])
                array_map_insert(&big, m->keys[i], m->vals[i]);
        free(m->keys);
        free(m->vals);
        *m = big;
    }
    array_map_insert(m, key, val);
}

static void array_map_del(ctld_u32map_t *m, uint32_t key)
{
    if (!m->cap)
        return;
    size_t mask = m->cap - 1, i = array_map_home(key, m->cap);
    while (m->vals[i] && m->keys[i] != key)
        i = (i + 1) & mask;
    if (!m->vals[i])
        return;
    m->vals[i] = NULL;
    m->n--;
    /* Move back every later entry of the run that the hole now cuts off. */
    for (size_t j = (i + 1) & mask; m->vals[j]; j = (j + 1) & mask) {
        size_t home = array_map_home(m->keys[j], m->cap);
        bool reachable = i <= j ? (home > i && home <= j) : (home > i || home <= j);
        if (reachable)
            continue;
        m->keys[i] = m->keys[j];
        m->vals[i] = m->vals[j];
        m->vals[j] = NULL;
        i = j;
    }
}

static void array_map_free(ctld_u32map_t *m)
{
    free(m->keys);
    free(m->vals);
    memset(m, 0, sizeof(*m));
}

/* ---- the registry ---------------------------------------------------------- */

void ctld_arrays_init(ctld_t *c)
{
    c->arrays = loom_xcalloc(1, sizeof(*c->arrays));
}

void ctld_arrays_fini(ctld_t *c)
{
    if (!c->arrays)
        return;
    ctld_u32map_t *m = &c->arrays->by_id;
    for (size_t i = 0; i < m->cap; i++) {
        ctld_array_t *a = m->vals[i];
        if (a) {
            array_map_free(&a->tasks);
            free(a);
        }
    }
    array_map_free(m);
    free(c->arrays);
    c->arrays = NULL;
}

ctld_array_t *ctld_array_find(const ctld_t *c, uint32_t array_job_id)
{
    return c->arrays ? array_map_get(&c->arrays->by_id, array_job_id) : NULL;
}

ctld_job_t *ctld_array_task(const ctld_array_t *a, uint32_t task)
{
    return a ? array_map_get(&a->tasks, task) : NULL;
}

bool ctld_array_in_meta(const ctld_array_t *a, uint32_t task)
{
    return a && a->meta && a->meta->array_pending &&
           loom_rangeset_contains(a->meta->array_pending, task);
}

static int array_cmp_task(const void *x, const void *y)
{
    const ctld_job_t *a = *(ctld_job_t *const *)x, *b = *(ctld_job_t *const *)y;
    return a->array_task_id < b->array_task_id ? -1 : a->array_task_id > b->array_task_id;
}

void ctld_array_records(const ctld_array_t *a, ctld_vec_t *out)
{
    if (a->meta && a->meta->array_pending)
        ctld_vec_push(out, a->meta);
    size_t from = out->n;
    for (size_t i = 0; i < a->tasks.cap; i++)
        if (a->tasks.vals[i])
            ctld_vec_push(out, a->tasks.vals[i]);
    if (out->n > from + 1)
        qsort(out->v + from, out->n - from, sizeof(*out->v), array_cmp_task);
}

/* ---- counts ------------------------------------------------------------------ */

enum { CAT_NONE, CAT_PENDING, CAT_RUNNING, CAT_OK, CAT_BAD };

static int array_category(int list, uint32_t state)
{
    switch (list) {
    case CTLD_LIST_PENDING:
        return CAT_PENDING;
    case CTLD_LIST_RUNNING:
        return CAT_RUNNING;
    case CTLD_LIST_DONE:
        return loom_job_base(state) == LOOM_JOB_COMPLETED ? CAT_OK : CAT_BAD;
    default:
        return CAT_NONE;
    }
}

static void array_count(ctld_array_t *a, int cat, int d)
{
    uint32_t *cnt[] = {NULL, &a->n_pending, &a->n_running, &a->n_ok, &a->n_bad};
    if (cat != CAT_NONE)
        *cnt[cat] += (uint32_t)d;
}

void ctld_array_recount(ctld_job_t *job, int old_list, uint32_t old_state)
{
    if (!job->array)
        return;
    ctld_array_t *a = job->array;
    array_count(a, array_category(old_list, old_state), -1);
    array_count(a, array_category(job->list, job->state), 1);
    /* A task started: the rest waits for the throttle until one ends. */
    if (a->meta && a->meta != job && a->meta->array_pending && a->meta->array_throttle &&
        a->n_running >= a->meta->array_throttle)
        ctld_job_set_reason(a->meta, "JobArrayTaskLimit");
}

void ctld_array_attach(ctld_t *c, ctld_job_t *job)
{
    if (!job->array_job_id || !c->arrays)
        return;
    ctld_array_t *a = ctld_array_find(c, job->array_job_id);
    if (!a) {
        a = loom_xcalloc(1, sizeof(*a));
        a->id = job->array_job_id;
        array_map_put(&c->arrays->by_id, a->id, a);
    }
    job->array = a;
    a->nrec++;
    if (job->id == a->id)
        a->meta = job;
    if (job->array_task_id != CTLD_NO_TASK)
        array_map_put(&a->tasks, job->array_task_id, job);
}

void ctld_array_detach(ctld_t *c, ctld_job_t *job)
{
    ctld_array_t *a = job->array;
    if (!a)
        return;
    array_count(a, array_category(job->list, job->state), -1);
    if (job->array_task_id != CTLD_NO_TASK && array_map_get(&a->tasks, job->array_task_id) == job)
        array_map_del(&a->tasks, job->array_task_id);
    if (a->meta == job)
        a->meta = NULL;
    job->array = NULL;
    if (--a->nrec == 0) {
        array_map_del(&c->arrays->by_id, a->id);
        array_map_free(&a->tasks);
        free(a);
    }
}

/* ---- the pending set ---------------------------------------------------------- */

/* rs without [lo, hi]. */
static void array_set_minus(loom_rangeset_t *rs, uint32_t lo, uint32_t hi)
{
    loom_rangeset_t out = LOOM_RANGESET_INIT;
    for (size_t i = 0; i < rs->n; i++) {
        loom_range_t r = rs->r[i];
        if (r.hi < lo || r.lo > hi) {
            loom_rangeset_add(&out, r.lo, r.hi);
            continue;
        }
        if (r.lo < lo)
            loom_rangeset_add(&out, r.lo, lo - 1);
        if (r.hi > hi)
            loom_rangeset_add(&out, hi + 1, r.hi);
    }
    loom_rangeset_free(rs);
    *rs = out;
}

/* Give job the pending set rs (taken over): one index makes it that task,
 * still shown folded as Slurm shows an array's meta record until a split. */
static void array_set_tasks(ctld_job_t *job, loom_rangeset_t *rs)
{
    if (job->array && job->array_task_id != CTLD_NO_TASK &&
        array_map_get(&job->array->tasks, job->array_task_id) == job)
        array_map_del(&job->array->tasks, job->array_task_id);
    if (job->array_pending) {
        loom_rangeset_free(job->array_pending);
        free(job->array_pending);
        job->array_pending = NULL;
    }
    job->array_folded = false;
    if (loom_rangeset_count(rs) == 1) {
        loom_rangeset_first(rs, &job->array_task_id);
        loom_rangeset_free(rs);
        job->array_folded = true; /* a split clears it (ctld_array_apply_split) */
        if (job->array)
            array_map_put(&job->array->tasks, job->array_task_id, job);
        return;
    }
    job->array_pending = loom_xmalloc(sizeof(*job->array_pending));
    *job->array_pending = *rs;
    job->array_task_id = CTLD_NO_TASK;
}

void ctld_array_pending_text(const ctld_job_t *job, bool with_throttle, loom_sbuf_t *out)
{
    if (!job->array_pending)
        return;
    loom_rangeset_format(job->array_pending, out);
    if (with_throttle && job->array_throttle)
        loom_sbuf_addf(out, "%%%u", job->array_throttle);
}

int ctld_array_set_pending(ctld_t *c, ctld_job_t *job, const char *text, loom_err_t *err)
{
    loom_rangeset_t rs = LOOM_RANGESET_INIT;
    uint32_t throttle = 0;
    if (!text || loom_rangeset_parse_array(text, LOOM_ARRAY_INDEX_MAX, &rs, &throttle, NULL) < 0)
        return loom_errf(err, -LOOM_EPROTO, "job %u: bad array_task_str '%s'", job->id,
                         text ? text : "");
    array_set_tasks(job, &rs);
    ctld_job_touch(job);
    return 0;
}

void ctld_array_set_throttle(ctld_job_t *job, uint32_t throttle)
{
    if (!job->array) {
        job->array_throttle = throttle;
        return;
    }
    ctld_vec_t recs = {0};
    ctld_array_records(job->array, &recs);
    for (size_t i = 0; i < recs.n; i++) {
        ctld_job_t *r = recs.v[i];
        r->array_throttle = throttle;
        ctld_job_touch(r);
    }
    ctld_vec_free(&recs);
}

/* ---- submission ------------------------------------------------------------------ */

bool ctld_array_is(const ctld_job_t *job)
{
    return job->array_pending || job->array_task_id != CTLD_NO_TASK;
}

int ctld_array_from_desc(const ctld_t *c, const json_t *desc, ctld_job_t *job, loom_err_t *err)
{
    const char *spec = json_string_value(json_object_get(desc, "array"));
    if (!spec || !*spec)
        return 0;
    int64_t max = c->conf->max_array_size;
    loom_rangeset_t rs = LOOM_RANGESET_INIT;
    uint32_t throttle = 0;
    /* MaxArraySize=0 turns arrays off; indexes run up to MaxArraySize - 1. */
    if (max <= 0 || loom_rangeset_parse_array(spec, (uint32_t)(max - 1), &rs, &throttle, err) < 0)
        return loom_errf(err, -LOOM_EINVAL_ARRAY, "%s", loom_strerror(-LOOM_EINVAL_ARRAY));
    job->array_throttle = throttle;
    array_set_tasks(job, &rs);
    return 0;
}

/* ---- splitting ---------------------------------------------------------------------- */

int ctld_array_apply_split(ctld_t *c, const json_t *ev, loom_err_t *err)
{
    uint32_t mid = (uint32_t)json_integer_value(json_object_get(ev, "job_id"));
    uint32_t task = (uint32_t)json_integer_value(json_object_get(ev, "task"));
    uint32_t nid = (uint32_t)json_integer_value(json_object_get(ev, "new_id"));
    ctld_job_t *meta = ctld_job_find(c, mid), *t = NULL;
    if (!meta || !meta->array_pending || !loom_rangeset_contains(meta->array_pending, task) ||
        !nid || ctld_job_find(c, nid))
        return loom_errf(err, -LOOM_EPROTO, "array.split of job %u task %u as %u: no such task",
                         mid, task, nid);
    int rc = ctld_job_clone(c, meta, &t, err);
    if (rc < 0)
        return rc;
    t->id = nid;
    t->array_task_id = task;
    loom_rangeset_t rest = LOOM_RANGESET_INIT;
    loom_rangeset_copy(&rest, meta->array_pending);
    array_set_minus(&rest, task, task);
    array_set_tasks(meta, &rest);
    meta->array_folded = false; /* the last index left by a split is a plain task */
    ctld_job_touch(meta);
    ctld_jobs_insert(c, t);
    ctld_jobs_advance_id(c, nid);
    return 0;
}

ctld_job_t *ctld_array_split(ctld_t *c, ctld_job_t *meta, uint32_t task, loom_err_t *err)
{
    if (!meta->array_pending) {
        if (meta->array_job_id && meta->array_task_id == task)
            return meta;
        loom_errf(err, -LOOM_EINVAL_JOBID, "Invalid job id specified");
        return NULL;
    }
    if (!loom_rangeset_contains(meta->array_pending, task)) {
        loom_errf(err, -LOOM_EINVAL_JOBID, "Invalid job id specified");
        return NULL;
    }
    uint32_t nid = ctld_jobs_next_id(c, err);
    if (!nid)
        return NULL;
    json_t *ev =
        json_pack("{s:s, s:I, s:I, s:I}", "ev", "array.split", "job_id", (json_int_t)meta->id,
                  "task", (json_int_t)task, "new_id", (json_int_t)nid);
    if (ctld_commit(c, ev, err) < 0)
        return NULL;
    return ctld_job_find(c, nid);
}

ctld_job_t *ctld_array_take_task(ctld_t *c, ctld_job_t *job)
{
    if (loom_job_base(job->state) != LOOM_JOB_PENDING)
        return NULL;
    if (!job->array_pending)
        return job;
    uint32_t task;
    loom_rangeset_first(job->array_pending, &task);
    loom_err_t err = {0};
    ctld_job_t *t = ctld_array_split(c, job, task, &err);
    if (!t)
        loom_verbose("job %u: task %u not split off: %s", job->id, task, err.msg);
    return t;
}

uint32_t ctld_array_startable(const ctld_t *c, const ctld_job_t *job)
{
    uint64_t n = job->array_pending ? loom_rangeset_count(job->array_pending) : 1;
    if (n > CTLD_ARRAY_MAX_OFFER)
        n = CTLD_ARRAY_MAX_OFFER;
    const ctld_array_t *a = job->array;
    uint32_t throttle = job->array_throttle;
    if (a && throttle) {
        uint32_t room = throttle > a->n_running ? throttle - a->n_running : 0;
        if (n > room)
            n = room;
    }
    return (uint32_t)n;
}

int ctld_array_drop_tasks(ctld_t *c, ctld_job_t *meta, const loom_rangeset_t *tasks, uint32_t uid,
                          loom_err_t *err)
{
    if (!meta->array_pending || loom_job_base(meta->state) != LOOM_JOB_PENDING)
        return 0;
    loom_rangeset_t left = LOOM_RANGESET_INIT;
    loom_rangeset_copy(&left, meta->array_pending);
    for (size_t i = 0; i < tasks->n; i++)
        array_set_minus(&left, tasks->r[i].lo, tasks->r[i].hi);
    uint64_t dropped = loom_rangeset_count(meta->array_pending) - loom_rangeset_count(&left);
    int rc = 0;
    if (dropped && loom_rangeset_empty(&left)) {
        rc = ctld_job_cancel_by(c, meta, uid, err); /* every pending task: the record */
    } else if (dropped) {
        loom_sbuf_t sb = LOOM_SBUF_INIT;
        loom_rangeset_format(&left, &sb);
        json_t *ev = json_pack("{s:s, s:I, s:{s:s}}", "ev", "job.update", "job_id",
                               (json_int_t)meta->id, "set", "array_task_str", loom_sbuf_str(&sb));
        loom_sbuf_free(&sb);
        rc = ctld_commit(c, ev, err);
    }
    loom_rangeset_free(&left);
    return rc < 0 ? rc : (int)(dropped > INT32_MAX ? INT32_MAX : dropped);
}

/* ---- what an id names ----------------------------------------------------------------- */

/* out = a ∩ b (two sorted range lists, walked together). */
static void array_intersect(const loom_rangeset_t *a, const loom_rangeset_t *b,
                            loom_rangeset_t *out)
{
    size_t i = 0, k = 0;
    while (i < a->n && k < b->n) {
        uint32_t lo = a->r[i].lo > b->r[k].lo ? a->r[i].lo : b->r[k].lo;
        uint32_t hi = a->r[i].hi < b->r[k].hi ? a->r[i].hi : b->r[k].hi;
        if (lo <= hi)
            loom_rangeset_add(out, lo, hi);
        if (a->r[i].hi < b->r[k].hi)
            i++;
        else
            k++;
    }
}

/* The split records whose index is in set, by index. */
static void array_tasks_in(const ctld_array_t *a, const loom_rangeset_t *set, ctld_vec_t *out)
{
    size_t from = out->n;
    for (size_t i = 0; i < a->tasks.cap; i++)
        if (a->tasks.vals[i] && loom_rangeset_contains(set, a->tasks.keys[i]))
            ctld_vec_push(out, a->tasks.vals[i]);
    if (out->n > from + 1)
        qsort(out->v + from, out->n - from, sizeof(*out->v), array_cmp_task);
}

int ctld_array_note_missing(const ctld_t *c, uint32_t id, const char *tasks, json_t *r)
{
    const ctld_array_t *a = ctld_array_find(c, id);
    loom_rangeset_t set = LOOM_RANGESET_INIT, done = LOOM_RANGESET_INIT;
    if (!a || !tasks || !*tasks || loom_rangeset_parse(tasks, LOOM_ARRAY_INDEX_MAX, &set, NULL) < 0)
        return 0;
    if (a->meta && a->meta->array_pending)
        array_intersect(&set, a->meta->array_pending, &done);
    for (size_t i = 0; i < a->tasks.cap; i++)
        if (a->tasks.vals[i] && loom_rangeset_contains(&set, a->tasks.keys[i]))
            loom_rangeset_add(&done, a->tasks.keys[i], a->tasks.keys[i]);
    for (size_t i = 0; i < done.n; i++)
        array_set_minus(&set, done.r[i].lo, done.r[i].hi);
    int rc = 0;
    if (!loom_rangeset_empty(&set) && !loom_rangeset_empty(&done)) {
        loom_sbuf_t d = LOOM_SBUF_INIT, m = LOOM_SBUF_INIT;
        loom_rangeset_format(&done, &d);
        loom_rangeset_format(&set, &m);
        json_object_set_new(r, "tasks_done", json_string(loom_sbuf_str(&d)));
        json_object_set_new(r, "tasks_missing", json_string(loom_sbuf_str(&m)));
        loom_sbuf_free(&d);
        loom_sbuf_free(&m);
        rc = -LOOM_EINVAL_JOBID;
    }
    loom_rangeset_free(&set);
    loom_rangeset_free(&done);
    return rc;
}

int ctld_array_split_set(ctld_t *c, ctld_job_t *meta, const loom_rangeset_t *set, ctld_vec_t *out,
                         loom_err_t *err)
{
    uint32_t task;
    for (int rc = loom_rangeset_first(set, &task); rc == 0;
         rc = loom_rangeset_next(set, task, &task)) {
        ctld_job_t *t = ctld_array_split(c, meta, task, err);
        if (!t)
            return err ? err->code : -LOOM_EINVAL_JOBID;
        ctld_vec_push(out, t);
    }
    return 0;
}

int ctld_array_resolve(ctld_t *c, uint32_t id, const char *tasks, bool split, ctld_vec_t *out,
                       loom_rangeset_t *in_meta, loom_err_t *err)
{
    ctld_array_t *a = ctld_array_find(c, id);
    if (!tasks || !*tasks) {
        ctld_job_t *job = a ? NULL : ctld_job_find(c, id);
        if (a)
            ctld_array_records(a, out);
        else if (job)
            ctld_vec_push(out, job);
        else
            return loom_errf(err, -LOOM_EINVAL_JOBID, "Invalid job id specified");
        return 0;
    }
    loom_rangeset_t set = LOOM_RANGESET_INIT, pend = LOOM_RANGESET_INIT;
    if (!a || loom_rangeset_parse(tasks, LOOM_ARRAY_INDEX_MAX, &set, NULL) < 0)
        return loom_errf(err, -LOOM_EINVAL_JOBID, "Invalid job id specified");
    size_t before = out->n;
    array_tasks_in(a, &set, out);
    if (a->meta && a->meta->array_pending)
        array_intersect(&set, a->meta->array_pending, &pend);
    int rc = 0;
    if (split && !loom_rangeset_empty(&pend))
        rc = ctld_array_split_set(c, a->meta, &pend, out, err);
    else if (in_meta)
        loom_rangeset_copy(in_meta, &pend);
    if (rc == 0 && out->n == before && loom_rangeset_empty(&pend))
        rc = loom_errf(err, -LOOM_EINVAL_JOBID, "Invalid job id specified");
    loom_rangeset_free(&set);
    loom_rangeset_free(&pend);
    return rc;
}
