/* job_depend.c - dependencies and eligibility of pending jobs. See job_depend.h. */
#include "ctld/job_depend.h"
#include "common/jobid.h"
#include "common/jobstate.h"
#include "common/log.h"
#include "common/xalloc.h"
#include "ctld/job_array.h"
#include "ctld/job_desc.h"
#include "ctld/job_mgr.h"
#include "ctld/job_ops.h"
#include "ctld/job_state.h"
#include "ctld/sched_driver.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

typedef enum {
    DEP_AFTER,
    DEP_AFTERANY,
    DEP_AFTEROK,
    DEP_AFTERNOTOK,
    DEP_AFTERCORR,
    DEP_BURSTBUFFER,
    DEP_SINGLETON,
} dep_type_t;

static const char *const depend_names[] = {
    "after", "afterany", "afterok", "afternotok", "aftercorr", "afterburstbuffer", "singleton",
};

/* A term's state, and what the whole list evaluates to. */
enum { DEP_MET = 0, DEP_WAIT = 1, DEP_FAILED = 2 };

#define DEP_TASK_ALL  0xffffffffu /* "N_*" */
#define DEP_MAX_TERMS 1024

typedef struct {
    dep_type_t type;
    uint32_t job_id;
    uint32_t task; /* CTLD_NO_TASK, an index, or DEP_TASK_ALL */
    int64_t delay; /* minutes */
    int state;
} dep_term_t;

typedef struct {
    dep_term_t *t;
    size_t n;
    bool any; /* '?' */
} dep_list_t;

/* ---- parsing ------------------------------------------------------------------ */

static int depend_bad(loom_err_t *err, const char *what, const char *tok)
{
    loom_verbose("dependency: %s '%s'", what, tok);
    return loom_errf(err, -LOOM_EINVAL_DEPEND, "%s", loom_strerror(-LOOM_EINVAL_DEPEND));
}

/* Decimal digits into *v (at most max); the end pointer, or NULL. */
static const char *depend_num(const char *p, uint64_t max, uint64_t *v)
{
    if (!isdigit((unsigned char)*p))
        return NULL;
    uint64_t x = 0;
    for (; isdigit((unsigned char)*p); p++) {
        x = x * 10 + (uint64_t)(*p - '0');
        if (x > max)
            return NULL;
    }
    *v = x;
    return p;
}

/* "(unfulfilled)" / "(failed)" at p (the stored form); p when absent. */
static const char *depend_state(const char *p, int *state)
{
    *state = DEP_WAIT;
    if (strcmp(p, "(failed)") == 0) {
        *state = DEP_FAILED;
        return p + strlen(p);
    }
    if (strcmp(p, "(unfulfilled)") == 0)
        return p + strlen(p);
    return p;
}

static void depend_push(dep_list_t *l, const dep_term_t *t)
{
    for (size_t i = 0; i < l->n; i++)
        if (l->t[i].type == t->type && l->t[i].job_id == t->job_id && l->t[i].task == t->task)
            return; /* the same term twice counts once */
    l->t = loom_xreallocarray(l->t, l->n + 1, sizeof(*l->t));
    l->t[l->n++] = *t;
}

/* One id of a typed element: N[_T|_*][+min][(state)]. *delay carries over. */
static int depend_target(const char *tok, dep_type_t type, int64_t *delay, dep_list_t *l,
                         loom_err_t *err)
{
    dep_term_t t = {.type = type, .task = CTLD_NO_TASK};
    uint64_t v;
    const char *p = depend_num(tok, LOOM_JOBID_MAX, &v);
    if (!p || v == 0)
        return depend_bad(err, "bad job id", tok);
    t.job_id = (uint32_t)v;
    if (p[0] == '_' && p[1] == '*') {
        t.task = DEP_TASK_ALL;
        p += 2;
    } else if (*p == '_') {
        if (!(p = depend_num(p + 1, LOOM_ARRAY_INDEX_MAX, &v)))
            return depend_bad(err, "bad array task", tok);
        t.task = (uint32_t)v;
    }
    if (*p == '+') {
        if (!(p = depend_num(p + 1, 100000000, &v)))
            return depend_bad(err, "bad delay", tok);
        *delay = (int64_t)v;
    }
    t.delay = *delay;
    p = depend_state(p, &t.state);
    if (*p)
        return depend_bad(err, "trailing text", tok);
    depend_push(l, &t);
    return 0;
}

static int depend_type(const char *name, size_t n, dep_type_t *type)
{
    for (size_t i = 0; i < sizeof(depend_names) / sizeof(depend_names[0]); i++) {
        if (strlen(depend_names[i]) == n && strncmp(depend_names[i], name, n) == 0) {
            *type = (dep_type_t)i;
            return 0;
        }
    }
    return -1;
}

/* One element: "singleton" or "type:id[:id...]". */
static int depend_element(char *el, dep_list_t *l, loom_err_t *err)
{
    dep_type_t type;
    size_t n = strcspn(el, ":(");
    if (depend_type(el, n, &type) < 0)
        return depend_bad(err, "unknown type", el);
    if (type == DEP_SINGLETON) {
        dep_term_t t = {.type = type, .task = CTLD_NO_TASK};
        if (*depend_state(el + n, &t.state))
            return depend_bad(err, "bad singleton", el);
        depend_push(l, &t);
        return 0;
    }
    if (el[n] != ':')
        return depend_bad(err, "no job id", el);
    int64_t delay = 0;
    char *save = NULL, *rest = el + n + 1;
    if (!*rest || *rest == ':' || rest[strlen(rest) - 1] == ':' || strstr(rest, "::"))
        return depend_bad(err, "empty job id", el);
    for (char *tok = strtok_r(rest, ":", &save); tok; tok = strtok_r(NULL, ":", &save)) {
        int rc = depend_target(tok, type, &delay, l, err);
        if (rc < 0)
            return rc;
    }
    return 0;
}

static void depend_list_free(dep_list_t *l)
{
    free(l->t);
    memset(l, 0, sizeof(*l));
}

static int depend_parse(const char *text, dep_list_t *out, loom_err_t *err)
{
    dep_list_t l = {.any = strchr(text, '?') != NULL};
    char *copy = loom_xstrdup(text);
    int rc = 0;
    for (char *p = copy; rc == 0;) {
        size_t n = strcspn(p, ",?");
        bool last = p[n] == '\0';
        p[n] = '\0';
        rc = *p ? depend_element(p, &l, err) : depend_bad(err, "empty term", text);
        if (rc == 0 && l.n > DEP_MAX_TERMS)
            rc = depend_bad(err, "too many terms", text);
        if (last)
            break;
        p += n + 1;
    }
    free(copy);
    if (rc < 0) {
        depend_list_free(&l);
        return rc;
    }
    *out = l;
    return 0;
}

/* ---- the stored form ------------------------------------------------------------ */

static void depend_format(const dep_list_t *l, loom_sbuf_t *out)
{
    for (size_t i = 0; i < l->n; i++) {
        const dep_term_t *t = &l->t[i];
        if (i)
            loom_sbuf_addc(out, l->any ? '?' : ',');
        loom_sbuf_add(out, depend_names[t->type]);
        if (t->type != DEP_SINGLETON) {
            loom_sbuf_addf(out, ":%u", t->job_id);
            if (t->task == DEP_TASK_ALL)
                loom_sbuf_add(out, "_*");
            else if (t->task != CTLD_NO_TASK)
                loom_sbuf_addf(out, "_%u", t->task);
            if (t->delay)
                loom_sbuf_addf(out, "+%lld", (long long)t->delay);
        }
        loom_sbuf_add(out, t->state == DEP_FAILED ? "(failed)" : "(unfulfilled)");
    }
}

int ctld_depend_normalize(const ctld_t *c, const char *text, uint32_t self, char **out,
                          loom_err_t *err)
{
    if (!text || !*text) {
        *out = NULL;
        return 0;
    }
    dep_list_t l = {0};
    int rc = depend_parse(text, &l, err);
    for (size_t i = 0; rc == 0 && i < l.n; i++) {
        dep_term_t *t = &l.t[i];
        if (t->type != DEP_SINGLETON && self && t->job_id == self)
            rc = depend_bad(err, "depends on itself", text);
        /* An array's master id names the whole array, as Slurm shows it. */
        if (t->task == CTLD_NO_TASK && t->type != DEP_SINGLETON && ctld_array_find(c, t->job_id))
            t->task = DEP_TASK_ALL;
    }
    if (rc == 0) {
        loom_sbuf_t sb = LOOM_SBUF_INIT;
        depend_format(&l, &sb);
        *out = loom_sbuf_detach(&sb);
        loom_sbuf_free(&sb);
    }
    depend_list_free(&l);
    return rc;
}

/* ---- evaluation ------------------------------------------------------------------ */

static bool depend_ended(const ctld_job_t *d)
{
    return loom_job_state_is_terminal(d->state) && !(d->state & LOOM_JOB_F_COMPLETING);
}

static int depend_one(dep_type_t type, const ctld_job_t *d, int64_t delay, int64_t now)
{
    if (type == DEP_AFTER) {
        if (loom_job_base(d->state) == LOOM_JOB_PENDING)
            return DEP_WAIT;
        return now >= d->start_time + delay * 60 ? DEP_MET : DEP_WAIT;
    }
    if (!depend_ended(d))
        return DEP_WAIT;
    bool ok = loom_job_base(d->state) == LOOM_JOB_COMPLETED;
    if ((type == DEP_AFTEROK || type == DEP_AFTERCORR) && !ok)
        return DEP_FAILED;
    if (type == DEP_AFTERNOTOK && ok)
        return DEP_FAILED;
    return now >= d->end_time + delay * 60 ? DEP_MET : DEP_WAIT;
}

static int depend_whole(dep_type_t type, const ctld_array_t *a)
{
    bool started = a->n_pending == 0, done = started && a->n_running == 0;
    switch (type) {
    case DEP_AFTER:
        return started ? DEP_MET : DEP_WAIT;
    case DEP_AFTEROK:
    case DEP_AFTERCORR:
        return !done ? DEP_WAIT : a->n_bad ? DEP_FAILED : DEP_MET;
    case DEP_AFTERNOTOK:
        return !done ? DEP_WAIT : a->n_bad ? DEP_MET : DEP_FAILED;
    default:
        return done ? DEP_MET : DEP_WAIT;
    }
}

/* Other jobs of the same user and name that run, or pend with a lower id
 * (any such job, with or without singleton: slurmctld 22.05's rule; a newer
 * held job of the same name does not block). */
static bool depend_singleton_blocked(const ctld_t *c, const ctld_job_t *job)
{
    const ctld_vec_t *lists[] = {&c->jobs_running, &c->jobs_pending};
    for (size_t k = 0; k < 2; k++) {
        for (size_t i = 0; i < lists[k]->n; i++) {
            const ctld_job_t *o = lists[k]->v[i];
            if (o == job || o->uid != job->uid || !o->name || !job->name ||
                strcmp(o->name, job->name) != 0 || loom_job_state_is_terminal(o->state))
                continue;
            if (k == 0 || o->id < job->id)
                return true;
        }
    }
    return false;
}

static int depend_term(const ctld_t *c, const ctld_job_t *job, const dep_term_t *t, int64_t now)
{
    if (t->state == DEP_FAILED)
        return DEP_FAILED; /* journaled as failed: stays so */
    if (t->type == DEP_SINGLETON)
        return depend_singleton_blocked(c, job) ? DEP_WAIT : DEP_MET;
    uint32_t task = t->task;
    if (t->type == DEP_AFTERCORR && task == DEP_TASK_ALL && job->array_job_id) {
        if (job->array_pending)
            return DEP_WAIT; /* split into tasks first (ctld_depend_tick) */
        task = job->array_task_id;
    }
    const ctld_array_t *a = ctld_array_find(c, t->job_id);
    if (task == DEP_TASK_ALL || (task == CTLD_NO_TASK && a))
        return a ? depend_whole(t->type, a) : DEP_MET;
    if (task == CTLD_NO_TASK) {
        const ctld_job_t *d = ctld_job_find(c, t->job_id);
        return d ? depend_one(t->type, d, t->delay, now) : DEP_MET;
    }
    const ctld_job_t *d = ctld_array_task(a, task);
    if (d)
        return depend_one(t->type, d, t->delay, now);
    return ctld_array_in_meta(a, task) ? DEP_WAIT : DEP_MET;
}

/* Evaluate every term; keep in l what the stored form keeps. */
static int depend_eval(const ctld_t *c, const ctld_job_t *job, dep_list_t *l, int64_t now)
{
    size_t kept = 0, failed = 0;
    bool met_any = false;
    for (size_t i = 0; i < l->n; i++) {
        dep_term_t t = l->t[i];
        t.state = depend_term(c, job, &t, now);
        met_any = met_any || t.state == DEP_MET;
        failed += t.state == DEP_FAILED;
        if (t.state != DEP_MET)
            l->t[kept++] = t;
    }
    size_t total = l->n;
    l->n = kept;
    if (l->any) {
        if (met_any) {
            l->n = 0;
            return DEP_MET;
        }
        return failed == total ? DEP_FAILED : DEP_WAIT;
    }
    return failed ? DEP_FAILED : kept ? DEP_WAIT : DEP_MET;
}

int ctld_depend_state(const ctld_t *c, const ctld_job_t *job, int64_t now)
{
    dep_list_t l = {0};
    if (!job->dependency)
        return DEP_MET;
    if (depend_parse(job->dependency, &l, NULL) < 0)
        return DEP_FAILED;
    int st = depend_eval(c, job, &l, now);
    depend_list_free(&l);
    return st;
}

int ctld_depend_check(ctld_t *c, ctld_job_t *job, int64_t now)
{
    if (!job->dependency)
        return DEP_MET;
    dep_list_t l = {0};
    if (depend_parse(job->dependency, &l, NULL) < 0)
        return DEP_FAILED; /* cannot happen: it was normalized */
    int st = depend_eval(c, job, &l, now);
    loom_sbuf_t sb = LOOM_SBUF_INIT;
    depend_format(&l, &sb);
    if (strcmp(loom_sbuf_str(&sb), job->dependency) != 0) {
        json_t *ev = json_pack("{s:s, s:I, s:{s:s}}", "ev", "job.update", "job_id",
                               (json_int_t)job->id, "set", "dependency", loom_sbuf_str(&sb));
        loom_err_t err = {0};
        if (ctld_commit(c, ev, &err) < 0)
            loom_error("job %u: dependency update not journaled: %s", job->id, err.msg);
    }
    loom_sbuf_free(&sb);
    depend_list_free(&l);
    return st;
}

/* ---- eligibility ------------------------------------------------------------------- */

const char *ctld_job_ineligible(ctld_t *c, ctld_job_t *job, int64_t now)
{
    if (job->state & (LOOM_JOB_F_COMPLETING | LOOM_JOB_F_REQUEUE_HOLD | LOOM_JOB_F_SPECIAL_EXIT))
        return job->reason;
    if (job->hold)
        return job->hold == 'a' ? "JobHeldAdmin" : "JobHeldUser";
    if (job->priority == 0)
        return "JobHeldAdmin";
    if (job->dependency) { /* before BeginTime, as slurmctld 22.05 shows them */
        int st = ctld_depend_check(c, job, now);
        if (st == DEP_WAIT)
            return "Dependency";
        if (st == DEP_FAILED)
            return "DependencyNeverSatisfied";
    }
    if (job->begin_time > now)
        return "BeginTime";
    const char *lim = ctld_job_limit_reason(c, job);
    if (lim)
        return lim;
    if (job->bad_constraint)
        return "BadConstraints";
    if (ctld_array_startable(c, job) == 0)
        return "JobArrayTaskLimit";
    return NULL;
}

/* ---- the tick -------------------------------------------------------------------------- */

static bool depend_kill_wanted(const ctld_t *c, const ctld_job_t *job)
{
    const char *params = c->conf->dependency_parameters;
    return json_is_true(json_object_get(job->desc, "kill_on_invalid_dependency")) ||
           (params && strstr(params, "kill_invalid_depend"));
}

static void depend_split_all(ctld_t *c, ctld_job_t *meta)
{
    uint32_t task;
    loom_err_t err = {0};
    while (meta->array_pending && loom_rangeset_first(meta->array_pending, &task) == 0)
        if (!ctld_array_split(c, meta, task, &err)) {
            loom_verbose("job %u: aftercorr split stopped: %s", meta->id, err.msg);
            return;
        }
}

void ctld_depend_tick(ctld_t *c)
{
    /* Ids first: cancelling and splitting change the pending list. */
    ctld_vec_t kill = {0}, split = {0};
    for (size_t i = 0; i < c->jobs_pending.n; i++) {
        ctld_job_t *job = c->jobs_pending.v[i];
        if (!job->dependency)
            continue;
        if (strcmp(job->reason, "DependencyNeverSatisfied") == 0 && depend_kill_wanted(c, job))
            ctld_vec_push(&kill, (void *)(uintptr_t)job->id);
        else if (job->array_pending && strstr(job->dependency, "aftercorr"))
            ctld_vec_push(&split, (void *)(uintptr_t)job->id);
    }
    for (size_t i = 0; i < kill.n; i++) {
        ctld_job_t *job = ctld_job_find(c, (uint32_t)(uintptr_t)kill.v[i]);
        if (!job)
            continue;
        loom_info("job %u: dependency can never be met, cancelling it", job->id);
        ctld_job_cancel_why(c, job, "DependencyNeverSatisfied", NULL);
    }
    for (size_t i = 0; i < split.n; i++) {
        ctld_job_t *meta = ctld_job_find(c, (uint32_t)(uintptr_t)split.v[i]);
        if (meta)
            depend_split_all(c, meta);
    }
    if (split.n)
        ctld_sched_trigger(c, true);
    ctld_vec_free(&kill);
    ctld_vec_free(&split);
}
