/*
 * h_jobs.c - handlers of the job requests (docs/proto/messages.md §3, §4):
 * job.submit, job.info, job.signal, job.update, job.hold, job.release,
 * job.requeue, job.complete; the step requests (step.create, step.complete,
 * step.stat, alloc.release, job.signal of a step) go to step_launch.c.
 * Each one: decode, validate, authorize (Security:), act, reply; one exit.
 */
#include "common/jobenv.h"
#include "common/jobid.h"
#include "common/jobstate.h"
#include "common/log.h"
#include "common/proto.h"
#include "common/sbuf.h"
#include "common/strv.h"
#include "common/xalloc.h"
#include "ctld/assoc_policy.h"
#include "ctld/dispatch.h"
#include "ctld/job_array.h"
#include "ctld/job_depend.h"
#include "ctld/job_desc.h"
#include "ctld/job_mgr.h"
#include "ctld/job_ops.h"
#include "ctld/job_rec.h"
#include "ctld/job_script.h"
#include "ctld/job_state.h"
#include "ctld/node_mgr.h"
#include "ctld/sched_driver.h"
#include "ctld/sched_prio.h"
#include "ctld/step_launch.h"
#include "ctld/step_mgr.h"

#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* The job named by "job_id", or NULL with LOOM_EINVAL_JOBID in err. */
static ctld_job_t *h_jobs_find(ctld_t *c, const json_t *req, loom_err_t *err)
{
    json_t *v = json_object_get(req, "job_id");
    ctld_job_t *job =
        json_is_integer(v) && json_integer_value(v) > 0 && json_integer_value(v) <= UINT32_MAX
            ? ctld_job_find(c, (uint32_t)json_integer_value(v))
            : NULL;
    if (!job)
        loom_errf(err, -LOOM_EINVAL_JOBID, "Invalid job id specified");
    return job;
}

/* ---- job.submit -------------------------------------------------------------- */

/* Id, priority and first reason, then the submit event. */
static int h_jobs_enqueue(ctld_t *c, ctld_job_t *job, loom_err_t *err)
{
    uint32_t id = ctld_jobs_next_id(c, err);
    if (!id)
        return err->code;
    job->id = id;
    if (ctld_array_is(job))
        job->array_job_id = id;            /* the master id: one record until tasks start */
    bool admin_prio = job->prio_base != 0; /* may go ahead of older jobs */
    /* 0 under multifactor: computed (sched_prio.h). A job held at submission
     * takes its number when released, as slurmctld 22.05 (priority/basic). */
    if (!admin_prio && !job->hold)
        job->prio_base = ctld_sched_prio_base(c);
    job->priority = job->hold ? 0 : ctld_sched_initial_prio(c, job, job->submit_time);
    job->eligible_time = job->submit_time;
    /* As slurmctld: a job that waits on others, or for its --begin time,
     * shows it from its submission (the scheduler's order: job_depend.c). */
    job->reason = job->hold                            ? "JobHeldUser"
                  : job->dependency                    ? "Dependency"
                  : job->begin_time > job->submit_time ? "BeginTime"
                                                       : "None";
    /* The script file first (job_script.h); the entry carries them too. */
    int rc =
        ctld_job_script_save(c, ctld_job_script_owner(job), job->script, job->env, job->desc, err);
    if (rc < 0)
        return rc;
    json_t *ev =
        json_pack("{s:s, s:o}", "ev", "job.submit", "job", ctld_job_record(c, job, CTLD_REC_FULL));
    rc = ctld_commit(c, ev, err);
    if (rc == 0) {
        ctld_job_t *added = ctld_job_find(c, id);
        ctld_job_rec_cache(c, added);
        ctld_sched_submitted(c, added, admin_prio);
    }
    return rc < 0 ? rc : (int)id;
}

static int h_job_submit(ctld_t *c, const ctld_peer_t *peer, const json_t *req, json_t **reply,
                        loom_sbuf_t *raw)
{
    loom_err_t err = {0};
    ctld_job_t *job = NULL;
    json_t *payload = json_object();
    /* decode + validate (defaults, partition, limits, GRES, nodes) */
    const json_t *desc = json_object_get(req, "job");
    const char *script = json_string_value(json_object_get(req, "script"));
    bool test_only = json_is_true(json_object_get(req, "test_only"));
    /* Security: the job runs as the caller's uid (SO_PEERCRED); only a key
     * holder may name another user (job_desc.c). */
    int rc = ctld_job_from_submit(c, desc, script, peer, ctld_now(), &job, &err);
    if (rc >= 0 && test_only) {
        ctld_sched_test_only(c, job, payload);
        uint32_t next = ctld_jobs_next_id(c, &err);
        rc = next ? 0 : err.code;
        const char *where = json_string_value(json_object_get(payload, "nodes"));
        if (rc == 0 && (!where || !*where)) /* no node could ever hold it, even empty */
            rc = loom_errf(&err, -LOOM_ENODE_CONFIG, "%s", loom_strerror(-LOOM_ENODE_CONFIG));
        json_object_set_new(payload, "job_id", json_integer(next));
    } else if (rc >= 0) {
        rc = h_jobs_enqueue(c, job, &err);
        if (rc > 0)
            json_object_set_new(payload, "job_id", json_integer(rc));
    }
    ctld_job_free(job);
    *reply = loom_msg_reply(req, rc < 0 ? rc : 0, "%s", rc < 0 ? err.msg : "");
    if (rc >= 0 && *reply)
        json_object_update(*reply, payload);
    json_decref(payload);
    return rc < 0 ? rc : 0;
}

/* ---- job.info ------------------------------------------------------------------- */

/* What a job.info request asks for. fields: the member names the records
 * keep (sorted; n == 0: all of them); scratch: a record before that cut. */
typedef struct {
    bool steps;
    loom_strv_t fields;
    uint32_t proj_id; /* ctld_t.proj_id when fields is its list, else 0 */
    unsigned head;    /* the CTLD_HEAD_* members that fields names */
    loom_sbuf_t scratch;
} info_req_t;

/* Length of the JSON value at p in compact, well-formed text (a record this
 * controller wrote): up to the ',' or closing bracket that ends it. */
static size_t h_jobs_value_len(const char *p, const char *end)
{
    int depth = 0;
    bool in_str = false;
    const char *q = p;
    for (; q < end; q++) {
        if (in_str) {
            if (*q == '\\')
                q++;
            else if (*q == '"' && (in_str = false, depth == 0))
                return (size_t)(q + 1 - p);
        } else if (*q == '"') {
            in_str = true;
        } else if (*q == '{' || *q == '[') {
            depth++;
        } else if (*q == '}' || *q == ']') {
            if (depth-- == 0)
                return (size_t)(q - p);
            if (depth == 0)
                return (size_t)(q + 1 - p);
        } else if (*q == ',' && depth == 0) {
            return (size_t)(q - p);
        }
    }
    return (size_t)(q - p);
}

/* A member name in a record's text (without its quotes). */
typedef struct {
    const char *s;
    size_t n;
} info_key_t;

static int h_jobs_cmp_field(const void *key, const void *elem)
{
    const info_key_t *k = key;
    const char *f = *(char *const *)elem;
    int d = strncmp(k->s, f, k->n);
    return d ? d : -(unsigned char)f[k->n];
}

/* Copy the members of the object text rec whose names are in fields. */
static void h_jobs_project(const char *rec, size_t len, const loom_strv_t *fields, loom_sbuf_t *out)
{
    const char *p = rec + 1, *end = rec + len;
    bool first = true;
    loom_sbuf_addc(out, '{');
    while (p < end && *p == '"') {
        size_t klen = h_jobs_value_len(p, end);
        const char *v = p + klen + 1;
        if (v >= end)
            break;
        size_t vlen = h_jobs_value_len(v, end);
        info_key_t k = {p + 1, klen >= 2 ? klen - 2 : 0};
        if (bsearch(&k, fields->v, fields->n, sizeof(char *), h_jobs_cmp_field)) {
            if (!first)
                loom_sbuf_addc(out, ',');
            loom_sbuf_addn(out, p, (size_t)(v + vlen - p));
            first = false;
        }
        p = v + vlen;
        if (p < end && *p == ',')
            p++;
    }
    loom_sbuf_addc(out, '}');
}

static bool h_jobs_wants(const info_req_t *r, const char *name)
{
    info_key_t k = {name, strlen(name)};
    return bsearch(&k, r->fields.v, r->fields.n, sizeof(char *), h_jobs_cmp_field) != NULL;
}

/* The record cut to r->fields: the members around the cache, then the job's
 * cut of its cached text, made again only when either changed. */
static void h_jobs_add_proj(ctld_t *c, ctld_job_t *job, info_req_t *r, loom_sbuf_t *out)
{
    ctld_job_rec_cache(c, job);
    if (!job->proj_text || job->proj_id != r->proj_id) {
        loom_sbuf_reset(&r->scratch);
        if (job->rec_len >= 2)
            h_jobs_project(job->rec_text, job->rec_len, &r->fields, &r->scratch);
        else
            loom_sbuf_add(&r->scratch, "{}");
        free(job->proj_text);
        job->proj_len = r->scratch.len;
        job->proj_text = loom_xstrdup(loom_sbuf_str(&r->scratch)); /* no spare capacity */
        job->proj_id = r->proj_id;
    }
    loom_sbuf_addc(out, '{');
    bool any = ctld_job_rec_head(job, r->head, out);
    if (job->proj_len > 2) {
        if (any)
            loom_sbuf_addc(out, ',');
        loom_sbuf_addn(out, job->proj_text + 1, job->proj_len - 1);
    } else {
        loom_sbuf_addc(out, '}');
    }
}

static void h_jobs_add_rec(ctld_t *c, ctld_job_t *job, info_req_t *r, loom_sbuf_t *out)
{
    if (out->buf[out->len - 1] != '[')
        loom_sbuf_addc(out, ',');
    if (r->proj_id && !(r->steps && job->nsteps)) {
        h_jobs_add_proj(c, job, r, out);
        return;
    }
    loom_sbuf_t *dst = r->fields.n ? &r->scratch : out;
    loom_sbuf_reset(&r->scratch);
    if (r->steps && job->nsteps) {
        json_t *rec = ctld_job_record(c, job, CTLD_REC_STEPS);
        char *text = json_dumps(rec, JSON_COMPACT);
        loom_sbuf_add(dst, text);
        free(text);
        json_decref(rec);
    } else {
        ctld_job_rec_write(c, job, dst);
    }
    if (r->fields.n)
        h_jobs_project(r->scratch.buf, r->scratch.len, &r->fields, out);
}

static int h_jobs_sort_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* "fields": the member names to keep, sorted for h_jobs_project. */
static void h_jobs_info_fields(const json_t *req, loom_strv_t *fields)
{
    size_t i;
    json_t *v;
    json_array_foreach(json_object_get(req, "fields"), i, v)
    {
        if (json_is_string(v) && !strchr(json_string_value(v), '"'))
            loom_strv_add(fields, json_string_value(v));
    }
    if (fields->n)
        qsort(fields->v, fields->n, sizeof(char *), h_jobs_sort_str);
}

/* Which of the members around the cache r->fields names, and the id of
 * its list (ctld_t.proj_fields: a new list replaces the last one). */
static void h_jobs_proj_id(ctld_t *c, info_req_t *r)
{
    if (!r->fields.n)
        return;
    static const struct {
        const char *name;
        unsigned bit;
    } heads[] = {{"job_id", CTLD_HEAD_JOB_ID},
                 {"state", CTLD_HEAD_STATE},
                 {"reason", CTLD_HEAD_REASON},
                 {"eligible_time", CTLD_HEAD_ELIGIBLE}};
    for (size_t i = 0; i < sizeof(heads) / sizeof(heads[0]); i++)
        if (h_jobs_wants(r, heads[i].name))
            r->head |= heads[i].bit;
    bool same = c->proj_fields.n == r->fields.n;
    for (size_t i = 0; same && i < r->fields.n; i++)
        same = strcmp(c->proj_fields.v[i], r->fields.v[i]) == 0;
    if (!same) {
        loom_strv_free(&c->proj_fields);
        for (size_t i = 0; i < r->fields.n; i++)
            loom_strv_add(&c->proj_fields, r->fields.v[i]);
        if (++c->proj_id == 0)
            c->proj_id = 1;
    }
    r->proj_id = c->proj_id;
}

/* "user_ids": when present, only those users' jobs (squeue -u). */
static bool h_jobs_user_listed(const json_t *uids, uint32_t uid)
{
    if (!json_is_array(uids))
        return true;
    size_t i;
    json_t *v;
    json_array_foreach(uids, i, v)
    {
        if (json_is_integer(v) && json_integer_value(v) == (json_int_t)uid)
            return true;
    }
    return false;
}

/* The job with that id, or every record of the array whose master id it is. */
static size_t h_jobs_add_id(ctld_t *c, uint32_t id, info_req_t *r, loom_sbuf_t *out)
{
    ctld_array_t *a = ctld_array_find(c, id);
    ctld_job_t *job = a ? NULL : ctld_job_find(c, id);
    if (job)
        h_jobs_add_rec(c, job, r, out);
    if (!a)
        return job != NULL;
    ctld_vec_t recs = {0};
    ctld_array_records(a, &recs);
    for (size_t i = 0; i < recs.n; i++)
        h_jobs_add_rec(c, recs.v[i], r, out);
    size_t n = recs.n;
    ctld_vec_free(&recs);
    return n;
}

/* The reply text is assembled from cached records: no per-request serialisation. */
static int h_job_info(ctld_t *c, const ctld_peer_t *peer, const json_t *req, json_t **reply,
                      loom_sbuf_t *raw)
{
    const json_t *ids = json_object_get(req, "job_ids");
    info_req_t steps = {.steps = json_is_true(json_object_get(req, "steps"))};
    h_jobs_info_fields(req, &steps.fields);
    h_jobs_proj_id(c, &steps);
    json_int_t id = json_integer_value(json_object_get(req, "id"));
    loom_sbuf_addf(raw,
                   "{\"v\":%d,\"type\":\"reply\",\"id\":%lld,\"rc\":0,\"msg\":\"\",\"now\":%lld,"
                   "\"jobs\":[",
                   LOOM_PROTO_VERSION, (long long)id, (long long)ctld_now());
    size_t found = 0;
    /* Security: job records are visible to every user, as squeue shows them (no PrivateData). */
    if (json_is_array(ids)) {
        size_t i;
        json_t *v;
        json_array_foreach(ids, i, v)
        {
            found += h_jobs_add_id(c, (uint32_t)json_integer_value(v), &steps, raw);
        }
    } else {
        /* "active": only what squeue shows by default (not ended, or completing):
         * with 10,000 finished jobs kept for MinJobAge, far less to send and parse. */
        bool active = json_is_true(json_object_get(req, "active"));
        const json_t *uids = json_object_get(req, "user_ids");
        for (size_t i = 0; i < c->jobs_all.n; i++) {
            ctld_job_t *job = c->jobs_all.v[i];
            if ((!active || !loom_job_state_is_terminal(job->state) ||
                 (job->state & LOOM_JOB_F_COMPLETING)) &&
                h_jobs_user_listed(uids, job->uid))
                h_jobs_add_rec(c, job, &steps, raw);
        }
    }
    loom_sbuf_add(raw, "]}");
    loom_strv_free(&steps.fields);
    loom_sbuf_free(&steps.scratch);
    if (json_is_array(ids) && json_array_size(ids) && !found) {
        loom_sbuf_reset(raw);
        *reply = loom_msg_reply(req, -LOOM_EINVAL_JOBID, "Invalid job id specified");
        return -LOOM_EINVAL_JOBID;
    }
    return 0;
}

/* ---- job.signal --------------------------------------------------------------- */

/* The job id of a request, 0 when missing or out of range. */
static uint32_t h_jobs_id(const json_t *req)
{
    json_t *v = json_object_get(req, "job_id");
    json_int_t id = json_integer_value(v);
    return json_is_integer(v) && id > 0 && id <= UINT32_MAX ? (uint32_t)id : 0;
}

/* Security: every record named (and the meta record holding named pending
 * tasks) must be the caller's, unless an administrator asks. */
static int h_jobs_may_touch_all(ctld_t *c, const ctld_peer_t *peer, const ctld_vec_t *jobs,
                                const ctld_job_t *meta, loom_err_t *err)
{
    for (size_t i = 0; i < jobs->n; i++)
        if (!ctld_may_touch(c, peer, jobs->v[i]))
            return loom_errf(err, -LOOM_EACCESS, "Access/permission denied");
    if (meta && !ctld_may_touch(c, peer, meta))
        return loom_errf(err, -LOOM_EACCESS, "Access/permission denied");
    return 0;
}

/* The same refusal as slurmctld 22.05.8 words it for updates, holds and
 * releases of another user's job: "Invalid user id" (requeue and signals
 * keep "Access/permission denied"). */
static int h_jobs_may_change_all(ctld_t *c, const ctld_peer_t *peer, const ctld_vec_t *jobs,
                                 const ctld_job_t *meta, loom_err_t *err)
{
    int rc = h_jobs_may_touch_all(c, peer, jobs, meta, err);
    return rc == -LOOM_EACCESS ? loom_errf(err, -LOOM_EUSER_ID, "Invalid user id") : rc;
}

/* Signal or cancel each record; pending tasks of the meta record are
 * dropped from it (cancel) or skipped (a signal reaches running jobs only).
 * One record: its error. Several: 0 when any succeeded. */
static int h_signal_all(ctld_t *c, const ctld_peer_t *peer, const json_t *req,
                        const ctld_vec_t *jobs, ctld_job_t *meta, const loom_rangeset_t *in_meta,
                        loom_err_t *err)
{
    bool cancel = json_is_true(json_object_get(req, "cancel"));
    int sig = (int)json_integer_value(json_object_get(req, "signal"));
    size_t ok = 0, n = jobs->n + (in_meta->n != 0);
    int last = 0;
    if (cancel && in_meta->n) {
        last = ctld_array_drop_tasks(c, meta, in_meta, peer->uid, err);
        ok += last >= 0;
    }
    for (size_t i = 0; i < jobs->n; i++) {
        ctld_job_t *job = jobs->v[i];
        int rc =
            cancel ? ctld_job_cancel_by(c, job, peer->uid, err)
                   : ctld_job_signal(c, job, sig, json_is_true(json_object_get(req, "batch_only")),
                                     json_is_true(json_object_get(req, "full")), err);
        if (cancel && rc == -LOOM_EALREADY_DONE)
            rc = 0; /* cancelling what already ended is not an error (scancel) */
        ok += rc >= 0;
        last = rc < 0 ? rc : last;
    }
    return n == 1 ? (last < 0 ? last : 0) : (ok ? 0 : last);
}

static int h_job_signal(ctld_t *c, const ctld_peer_t *peer, const json_t *req, json_t **reply,
                        loom_sbuf_t *raw)
{
    loom_err_t err = {0};
    int rc = 0;
    uint32_t id = h_jobs_id(req);
    json_int_t sig = json_integer_value(json_object_get(req, "signal"));
    bool cancel = json_is_true(json_object_get(req, "cancel"));
    const char *tasks = json_string_value(json_object_get(req, "array_tasks"));
    ctld_vec_t jobs = {0};
    loom_rangeset_t in_meta = LOOM_RANGESET_INIT;
    if (json_object_get(req, "step_id")) { /* scancel jobid.stepid: step_launch.c */
        ctld_job_t *job = h_jobs_find(c, req, &err);
        /* Security: a user may signal only their own jobs' steps. */
        rc = !job ? err.code
             : !ctld_may_touch(c, peer, job)
                 ? loom_errf(&err, -LOOM_EACCESS, "Access/permission denied")
                 : ctld_step_signal(c, job, req, &err);
        *reply = loom_msg_reply(req, rc, "%s", rc < 0 ? err.msg : "");
        return rc;
    }
    if (!id)
        rc = loom_errf(&err, -LOOM_EINVAL_JOBID, "Invalid job id specified");
    else if (!cancel && (sig <= 0 || sig >= 65))
        rc = loom_errf(&err, -EINVAL, "invalid signal %lld", (long long)sig);
    else
        rc = ctld_array_resolve(c, id, tasks, false, &jobs, &in_meta, &err);
    ctld_array_t *a = rc == 0 && in_meta.n ? ctld_array_find(c, id) : NULL;
    ctld_job_t *meta = a ? a->meta : NULL;
    /* Security: a user may signal only their own jobs. */
    if (rc == 0)
        rc = h_jobs_may_touch_all(c, peer, &jobs, meta, &err);
    if (rc == 0)
        rc = h_signal_all(c, peer, req, &jobs, meta, &in_meta, &err);
    ctld_vec_free(&jobs);
    loom_rangeset_free(&in_meta);
    *reply = loom_msg_reply(req, rc, "%s", rc < 0 ? err.msg : "");
    /* Named tasks that are not there: scancel reports them one by one. */
    if (rc == 0 && *reply && tasks)
        ctld_array_note_missing(c, id, tasks, *reply);
    return rc;
}

/* ---- job.update ------------------------------------------------------------------ */

typedef struct {
    const char *name; /* scontrol's key */
    const char *key;  /* record key */
    bool pending_only;
    bool admin_only;
} upd_key_t;

static const upd_key_t h_upd_keys[] = {
    {"TimeLimit", "time_limit", false, false},
    {"TimeMin", "time_min", false, false},
    {"Partition", "partition", true, false},
    {"Name", "name", false, false},
    {"Priority", "priority", false, false},
    {"Nice", "nice", false, false},
    {"SiteFactor", "site_factor", false, true},
    {"NumNodes", "min_nodes", true, false},
    {"MaxNodes", "max_nodes", true, false},
    {"NumCPUs", "min_cpus", true, false},
    {"NumTasks", "num_tasks", true, false},
    {"CPUsPerTask", "cpus_per_task", true, false},
    {"Features", "features", true, false},
    {"StartTime", "begin_time", true, false},
    {"Comment", "comment", false, false},
    {"Requeue", "requeue", false, false},
    {"Contiguous", "contiguous", true, false},
    {"Dependency", "dependency", true, false},
    {"ReqNodeList", "req_nodes", true, false},
    {"ExcNodeList", "exc_nodes", true, false},
    {"Account", "account", true, false},
    {"QOS", "qos", true, false},
    {"WorkDir", "work_dir", true, false},
    {"StdOut", "std_out", true, false}, /* StdErr and StdIn stay (22.05) */
    {"MailType", "mail_type", false, false},
    {"MailUser", "mail_user", false, false},
    {"TresPerNode", "gres", true, false},
    {"MinMemoryNode", "mem_per_node_req", true, false},
    {"MinMemoryCPU", "mem_per_cpu", true, false},
    {"ArrayTaskThrottle", "array_max_tasks", false, false},
    {"MinCPUsNode", "min_cpus_node", true, false}, /* sets min_cpus (h_upd_key) */
    {"Deadline", "deadline", false, false},
    {"OverSubscribe", "oversubscribe", true, false},
    {"Reboot", "reboot", true, false},
    {"MinTmpDiskNode", "tmp_disk", true, false},
    {"AdminComment", "admin_comment", false, true},
};

static const upd_key_t *h_upd_find(const char *name)
{
    for (size_t i = 0; i < sizeof(h_upd_keys) / sizeof(h_upd_keys[0]); i++)
        if (strcasecmp(h_upd_keys[i].name, name) == 0)
            return &h_upd_keys[i];
    return NULL;
}

/* Users may lower limits, raise a pending job's time limit, and not set a
 * priority (slurmctld 22.05.8's rules); admins anything. */
static int h_upd_allowed(const ctld_job_t *job, const upd_key_t *k, const json_t *v, bool admin,
                         loom_err_t *err)
{
    if (k->pending_only && loom_job_base(job->state) != LOOM_JOB_PENDING)
        return loom_errf(err, -LOOM_EDISABLED, "Job is no longer pending execution");
    /* A held job gets a priority by its release, not by an update (22.05.8). */
    if (!strcmp(k->key, "priority") && job->hold && json_integer_value(v) != 0)
        return loom_errf(err, -LOOM_EJOB_HELD, "%s", loom_strerror(-LOOM_EJOB_HELD));
    if (admin)
        return 0;
    if (k->admin_only)
        return loom_errf(err, -LOOM_EACCESS, "Access/permission denied");
    json_int_t x = json_integer_value(v);
    /* A pending job's limit is its owner's to raise (22.05.8); a running one's not. */
    bool pending = loom_job_base(job->state) == LOOM_JOB_PENDING;
    if (!strcmp(k->key, "time_limit") && !pending &&
        (x < 0 ? job->time_limit >= 0 : (job->time_limit >= 0 && x > job->time_limit)))
        return loom_errf(err, -LOOM_EACCESS, "only an administrator may raise a time limit");
    if (!strcmp(k->key, "priority") && (x <= 0 || (uint32_t)x > job->priority))
        return loom_errf(err, -LOOM_EACCESS, "only an administrator may raise a priority");
    if (!strcmp(k->key, "priority")) /* lowering it: slurmctld 22.05.8's answer */
        return loom_errf(err, -LOOM_EPRIO_RESET, "%s", loom_strerror(-LOOM_EPRIO_RESET));
    if (!strcmp(k->key, "nice") && x < 0)
        return loom_errf(err, -LOOM_EACCESS, "only an administrator may set a negative nice");
    return 0;
}

/* Every name of "a,b" is a partition (an unknown one is refused, not replaced). */
static bool h_upd_parts_known(const ctld_t *c, const char *list)
{
    for (const char *p = list; p && *p; p += *p == ',') {
        size_t len = strcspn(p, ",");
        bool known = false;
        for (size_t i = 0; i < c->nparts && !known; i++)
            known =
                strlen(c->parts[i].cfg->name) == len && strncmp(c->parts[i].cfg->name, p, len) == 0;
        if (!known)
            return false;
        p += len;
    }
    return list != NULL;
}

/* Translate scontrol's changes into record keys, checking each one. */
/* "TimeLimit=+N" / "-N" (scontrol sends the minutes with their sign, as a
 * string): the job's own limit moved by N, as scontrol 22.05 computes it;
 * anything else as it came. NULL (err set) on a decrement below zero. */
static json_t *h_upd_relative(const ctld_job_t *job, const upd_key_t *k, json_t *v, loom_err_t *err)
{
    const char *s = json_string_value(v);
    if (strcmp(k->key, "time_limit") != 0 || !s || (*s != '+' && *s != '-'))
        return json_incref(v);
    json_int_t n = strtoll(s + 1, NULL, 10);
    if (job->time_limit < 0) /* UNLIMITED stays so */
        return json_integer(-1);
    if (*s == '-' && n > job->time_limit) {
        loom_errf(err, -LOOM_EPART_TIME,
                  "TimeLimit decrement larger than current time limit (%lld > %lld)", (long long)n,
                  (long long)job->time_limit);
        return NULL;
    }
    return json_integer(job->time_limit + (*s == '+' ? n : -n));
}

/* MinCPUsNode, Deadline and OverSubscribe, whose values scontrol sends as
 * it read them, each checked as slurmctld 22.05 checks it. */
static int h_upd_scalar(const ctld_job_t *job, const upd_key_t *k, json_t *v, json_t *set,
                        loom_err_t *err)
{
    json_int_t x = json_integer_value(v);
    if (!strcmp(k->key, "min_cpus_node")) { /* the job's total, at least its tasks' */
        uint64_t total = (uint64_t)(x > 0 ? x : 0) * (job->min_nodes ? job->min_nodes : 1);
        uint64_t tasks = (uint64_t)job->ntasks * job->cpus_per_task;
        if (total > UINT32_MAX)
            return loom_errf(err, -LOOM_EINVAL_TASKS, "invalid CPU count");
        json_object_set_new(set, "min_cpus",
                            json_integer((json_int_t)(total > tasks ? total : tasks)));
        return 0;
    }
    if (!strcmp(k->key, "deadline")) { /* a running job's is taken and left */
        if (x <= ctld_now())
            return loom_errf(err, -LOOM_EINVAL_BEGIN, "%s", loom_strerror(-LOOM_EINVAL_BEGIN));
        if (loom_job_base(job->state) == LOOM_JOB_PENDING)
            json_object_set(set, k->key, v);
        return 0;
    }
    const char *s = json_string_value(v); /* OverSubscribe: yes|no */
    json_object_set_new(set, k->key, json_boolean(s && !strcasecmp(s, "yes")));
    return 0;
}

/* The record fields one change sets, after the checks of its key. */
static int h_upd_key(const ctld_t *c, const ctld_job_t *job, const upd_key_t *k, json_t *v,
                     bool admin, json_t *set, loom_err_t *err)
{
    int rc = h_upd_allowed(job, k, v, admin, err);
    if (rc < 0)
        return rc;
    if (!strcmp(k->key, "partition") && !h_upd_parts_known(c, json_string_value(v)))
        return loom_errf(err, -LOOM_EINVAL_PARTITION, "%s", loom_strerror(-LOOM_EINVAL_PARTITION));
    if (!strcmp(k->key, "dependency")) {
        char *norm = NULL;
        rc = ctld_depend_normalize(c, json_string_value(v), job->id, &norm, err);
        if (rc < 0)
            return loom_errf(err, rc, "%s", loom_strerror(rc));
        json_object_set_new(set, k->key, json_string(norm ? norm : ""));
        free(norm);
        return 0;
    }
    if (!strcmp(k->key, "min_cpus_node") || !strcmp(k->key, "deadline") ||
        !strcmp(k->key, "oversubscribe"))
        return h_upd_scalar(job, k, v, set, err);
    json_object_set(set, k->key, v);
    if (!strcmp(k->key, "priority")) {
        json_object_set(set, "prio_base", v);
        if (json_integer_value(v) == 0)
            json_object_set_new(set, "hold", json_string("admin"));
    }
    if (!strcmp(k->key, "mem_per_node_req")) {
        json_object_set_new(set, "mem_whole", json_boolean(json_integer_value(v) == 0));
        json_object_set_new(set, "mem_per_cpu", json_integer(0));
    }
    if (!strcmp(k->key, "mem_per_cpu"))
        json_object_set_new(set, "mem_per_node_req", json_integer(0));
    return 0;
}

static int h_upd_translate(const ctld_t *c, const ctld_job_t *job, const json_t *changes,
                           bool admin, json_t *set, loom_err_t *err)
{
    const char *name;
    json_t *v;
    json_object_foreach((json_t *)changes, name, v)
    {
        if (strcasecmp(name, "ArrayTaskThrottle") == 0)
            continue; /* the whole array's, once (h_upd_throttle) */
        const upd_key_t *k = h_upd_find(name);
        if (!k && !strcasecmp(name, "Reservation") && json_string_length(v)) /* none exist */
            return loom_errf(err, -LOOM_EINVAL_RESV, "%s", loom_strerror(-LOOM_EINVAL_RESV));
        if (!k)
            return loom_errf(err, -LOOM_ENOT_SUPPORTED,
                             "Update of this parameter is not "
                             "supported: %s",
                             name);
        json_t *abs = h_upd_relative(job, k, v, err);
        int rc = abs ? h_upd_key(c, job, k, abs, admin, set, err) : err->code;
        json_decref(abs);
        if (rc < 0)
            return rc;
    }
    return 0;
}

/* Apply the changes to a copy first: nothing is journaled unless the result is valid. */
static int h_upd_dry_run(ctld_t *c, const ctld_job_t *job, const json_t *set, bool admin,
                         loom_err_t *err)
{
    json_t *rec = ctld_job_record(c, job, CTLD_REC_FULL);
    json_object_del(rec, "alloc"); /* the copy must not touch the node model */
    ctld_job_t *copy = NULL;
    int rc = ctld_job_from_record(c, rec, &copy, err);
    json_decref(rec);
    if (rc == 0)
        rc = ctld_job_apply_changes(c, copy, set, err);
    if (rc == 0 && (json_object_get(set, "account") || json_object_get(set, "qos") ||
                    json_object_get(set, "partition")))
        rc = ctld_policy_update(c, copy, admin, err); /* an association, a QOS it may use */
    if (rc == 0 && loom_job_base(copy->state) == LOOM_JOB_PENDING)
        rc = ctld_job_check_fit(c, copy, err);
    ctld_job_free(copy);
    return rc < 0 ? rc : 0;
}

/* One record: checked, tried on a copy, then journaled. */
static int h_upd_one(ctld_t *c, const ctld_peer_t *peer, ctld_job_t *job, const json_t *changes,
                     loom_err_t *err)
{
    if (loom_job_state_is_terminal(job->state))
        return loom_errf(err, -LOOM_EJOB_FINISHED, "job %u is done", job->id);
    json_t *set = json_object();
    int rc = h_upd_translate(c, job, changes, peer->role >= LOOM_ROLE_ADMIN, set, err);
    if (rc == 0)
        ctld_policy_drop_unknown(c, job, set);
    if (rc == 0 && json_object_size(set))
        rc = h_upd_dry_run(c, job, set, peer->role >= LOOM_ROLE_ADMIN, err);
    if (rc == 0 && json_object_size(set)) {
        json_t *ev = json_pack("{s:s, s:I, s:O}", "ev", "job.update", "job_id", (json_int_t)job->id,
                               "set", set);
        rc = ctld_commit(c, ev, err);
    }
    json_decref(set);
    return rc;
}

/* ArrayTaskThrottle: one change of the whole array, on its meta record. */
static int h_upd_throttle(ctld_t *c, const ctld_vec_t *jobs, const json_t *v, loom_err_t *err)
{
    ctld_job_t *job = jobs->n ? jobs->v[0] : NULL;
    if (!job)
        return loom_errf(err, -LOOM_EINVAL_JOBID, "Invalid job id specified");
    if (!job->array)
        return 0; /* not an array: nothing to throttle (slurmctld 22.05 accepts it) */
    if (!json_is_integer(v) || json_integer_value(v) < 0 || json_integer_value(v) > UINT32_MAX)
        return loom_errf(err, -LOOM_ERANGE, "invalid ArrayTaskThrottle");
    ctld_job_t *meta = job->array->meta ? job->array->meta : job;
    json_t *ev = json_pack("{s:s, s:I, s:{s:O}}", "ev", "job.update", "job_id",
                           (json_int_t)meta->id, "set", "array_max_tasks", v);
    return ctld_commit(c, ev, err);
}

/* Every record named. One: its error; several: 0 when any was updated. */
static int h_upd_all(ctld_t *c, const ctld_peer_t *peer, const ctld_vec_t *jobs,
                     const json_t *changes, loom_err_t *err)
{
    json_t *thr = json_object_get(changes, "ArrayTaskThrottle");
    int rc = thr ? h_upd_throttle(c, jobs, thr, err) : 0;
    size_t ok = 0;
    int last = 0;
    for (size_t i = 0; rc == 0 && i < jobs->n && json_object_size(changes) > (thr != NULL); i++) {
        int one = h_upd_one(c, peer, jobs->v[i], changes, err);
        ok += one == 0;
        last = one < 0 ? one : last;
    }
    if (rc == 0 && last < 0 && (jobs->n == 1 || !ok))
        rc = last;
    return rc;
}

static int h_job_update(ctld_t *c, const ctld_peer_t *peer, const json_t *req, json_t **reply,
                        loom_sbuf_t *raw)
{
    loom_err_t err = {0};
    int rc = 0;
    uint32_t id = h_jobs_id(req);
    const json_t *changes = json_object_get(req, "changes");
    const char *tasks = json_string_value(json_object_get(req, "array_tasks"));
    ctld_vec_t jobs = {0};
    loom_rangeset_t in_meta = LOOM_RANGESET_INIT;
    if (!id)
        rc = loom_errf(&err, -LOOM_EINVAL_JOBID, "Invalid job id specified");
    else if (!json_is_object(changes))
        rc = loom_errf(&err, -LOOM_EPROTO, "job.update needs changes");
    else
        rc = ctld_array_resolve(c, id, tasks, false, &jobs, &in_meta, &err);
    ctld_array_t *a = rc == 0 && in_meta.n ? ctld_array_find(c, id) : NULL;
    /* Security: only the owner or an admin; what a user may change: h_upd_allowed. */
    if (rc == 0)
        rc = h_jobs_may_change_all(c, peer, &jobs, a ? a->meta : NULL, &err);
    /* Pending tasks named one by one leave the meta record to be changed alone. */
    if (rc == 0 && a && a->meta)
        rc = ctld_array_split_set(c, a->meta, &in_meta, &jobs, &err);
    if (rc == 0) {
        rc = h_upd_all(c, peer, &jobs, changes, &err);
        ctld_sched_trigger(c, true);
    }
    ctld_vec_free(&jobs);
    loom_rangeset_free(&in_meta);
    json_t *missing = json_object(); /* some of the named tasks are not there */
    if (rc == 0 && ctld_array_note_missing(c, id, tasks, missing) < 0)
        rc = loom_errf(&err, -LOOM_EINVAL_JOBID, "Invalid job id specified");
    *reply = loom_msg_reply(req, rc, "%s", rc < 0 ? err.msg : "");
    if (*reply)
        json_object_update(*reply, missing);
    json_decref(missing);
    return rc;
}

/* ---- hold / release / requeue ----------------------------------------------------- */

typedef enum { BATCH_HOLD, BATCH_RELEASE, BATCH_REQUEUE, BATCH_SUSPEND } batch_op_t;

/* One record. Security: the caller checked ownership. */
static int h_batch_one(ctld_t *c, const ctld_peer_t *peer, const json_t *req, batch_op_t op,
                       ctld_job_t *job, loom_err_t *err)
{
    bool admin = peer->role >= LOOM_ROLE_ADMIN;
    if (op == BATCH_HOLD)
        return ctld_job_hold(c, job, admin && !json_is_true(json_object_get(req, "user")), err);
    if (op == BATCH_RELEASE)
        return ctld_job_release(c, job, admin, err);
    if (op == BATCH_SUSPEND) /* Security: the registry lets only admins send job.suspend */
        return ctld_job_suspend(c, job, json_is_true(json_object_get(req, "resume")), err);
    if (!job->requeue && !admin)
        return loom_errf(err, -LOOM_ENOT_SUPPORTED, "job %u may not be requeued", job->id);
    return ctld_job_requeue(c, job, json_is_true(json_object_get(req, "hold")), admin, err);
}

/* An entry of job_ids: a job id, or its text with an array part ("12_3",
 * "12_[1-4]", "12_*"). The job id and the task set text (NULL: all). */
static uint32_t h_batch_id(const json_t *v, loom_sbuf_t *tasks)
{
    if (json_is_integer(v))
        return json_integer_value(v) > 0 && json_integer_value(v) <= UINT32_MAX
                   ? (uint32_t)json_integer_value(v)
                   : 0;
    loom_jobid_t id;
    if (!json_is_string(v) || loom_jobid_parse(json_string_value(v), &id, NULL) < 0)
        return 0;
    if (id.array == LOOM_JOBID_ARRAY_ONE)
        loom_sbuf_addf(tasks, "%u", id.task);
    else if (id.array == LOOM_JOBID_ARRAY_SET)
        loom_rangeset_format(&id.tasks, tasks);
    uint32_t jid = id.step == LOOM_STEP_NONE ? id.job_id : 0;
    loom_jobid_free(&id);
    return jid;
}

/* Every record an entry names; pending tasks named one by one are split
 * off first (hold and release act on them alone, as Slurm does). */
static int h_batch_entry(ctld_t *c, const ctld_peer_t *peer, const json_t *req, batch_op_t op,
                         const json_t *v, loom_err_t *err)
{
    loom_sbuf_t tasks = LOOM_SBUF_INIT;
    ctld_vec_t jobs = {0};
    loom_rangeset_t in_meta = LOOM_RANGESET_INIT;
    uint32_t id = h_batch_id(v, &tasks);
    int rc = id ? ctld_array_resolve(c, id, tasks.len ? loom_sbuf_str(&tasks) : NULL, false, &jobs,
                                     &in_meta, err)
                : loom_errf(err, -LOOM_EINVAL_JOBID, "Invalid job id specified");
    ctld_array_t *a = rc == 0 && in_meta.n ? ctld_array_find(c, id) : NULL;
    /* Security: a user may hold, release and requeue only their own jobs. */
    if (rc == 0)
        rc = op == BATCH_REQUEUE ? h_jobs_may_touch_all(c, peer, &jobs, a ? a->meta : NULL, err)
                                 : h_jobs_may_change_all(c, peer, &jobs, a ? a->meta : NULL, err);
    if (rc == 0 && a && a->meta && op != BATCH_REQUEUE && op != BATCH_SUSPEND)
        rc = ctld_array_split_set(c, a->meta, &in_meta, &jobs, err);
    size_t ok = 0;
    int last = 0;
    for (size_t i = 0; rc == 0 && i < jobs.n; i++) {
        int one = h_batch_one(c, peer, req, op, jobs.v[i], err);
        ok += one == 0;
        last = one < 0 ? one : last;
    }
    if (rc == 0 && last < 0 && (jobs.n == 1 || !ok))
        rc = last;
    ctld_vec_free(&jobs);
    loom_rangeset_free(&in_meta);
    loom_sbuf_free(&tasks);
    return rc;
}

static int h_batch(ctld_t *c, const ctld_peer_t *peer, const json_t *req, json_t **reply,
                   batch_op_t op)
{
    const json_t *ids = json_object_get(req, "job_ids");
    json_t *results = json_array();
    int rc = json_is_array(ids) ? 0 : -LOOM_EPROTO;
    size_t i;
    json_t *v;
    json_array_foreach((json_t *)ids, i, v)
    {
        loom_err_t err = {0};
        loom_sbuf_t dummy = LOOM_SBUF_INIT;
        uint32_t id = h_batch_id(v, &dummy);
        int one = h_batch_entry(c, peer, req, op, v, &err);
        json_t *r =
            json_pack("{s:I, s:I, s:i}", "job_id", (json_int_t)id, "index", (json_int_t)i, "rc", 0);
        if (one == 0 && dummy.len) /* some of the named tasks are not there */
            one = ctld_array_note_missing(c, id, loom_sbuf_str(&dummy), r);
        loom_sbuf_free(&dummy);
        if (one < 0) {
            json_object_set_new(r, "rc", json_string(loom_errname(one)));
            json_object_set_new(r, "msg", json_string(err.msg));
        }
        json_array_append_new(results, r);
    }
    *reply = loom_msg_reply(req, rc, rc < 0 ? "job_ids must be a list" : NULL);
    if (*reply && rc == 0)
        json_object_set(*reply, "results", results);
    json_decref(results);
    return rc;
}

static int h_job_hold(ctld_t *c, const ctld_peer_t *peer, const json_t *req, json_t **reply,
                      loom_sbuf_t *raw)
{
    return h_batch(c, peer, req, reply, BATCH_HOLD);
}

static int h_job_release(ctld_t *c, const ctld_peer_t *peer, const json_t *req, json_t **reply,
                         loom_sbuf_t *raw)
{
    return h_batch(c, peer, req, reply, BATCH_RELEASE);
}

static int h_job_requeue(ctld_t *c, const ctld_peer_t *peer, const json_t *req, json_t **reply,
                         loom_sbuf_t *raw)
{
    return h_batch(c, peer, req, reply, BATCH_REQUEUE);
}

static int h_job_suspend(ctld_t *c, const ctld_peer_t *peer, const json_t *req, json_t **reply,
                         loom_sbuf_t *raw)
{
    return h_batch(c, peer, req, reply, BATCH_SUSPEND);
}

/* ---- job.complete (loomd) ------------------------------------------------------------ */

static int h_job_complete(ctld_t *c, const ctld_peer_t *peer, const json_t *req, json_t **reply,
                          loom_sbuf_t *raw)
{
    loom_err_t err = {0};
    int rc = 0;
    ctld_job_t *job = h_jobs_find(c, req, &err);
    const char *node = json_string_value(json_object_get(req, "node"));
    /* Security: the node role (registry); a report from another node than the
     * job's batch host is ignored. */
    bool ours = job && node && job->batch_host && strcmp(node, job->batch_host) == 0;
    if (ours && ctld_job_is_run(job, json_object_get(req, "run")))
        ctld_step_commit_batch_usage(c, job, json_object_get(req, "usage"), NULL);
    if (ours)
        rc = ctld_job_report_completed(c, job, req, &err);
    else
        loom_verbose("job.complete for job %lld from %s ignored",
                     (long long)json_integer_value(json_object_get(req, "job_id")),
                     node ? node : "?");
    /* Always acknowledged: the supervisor may clean up once we know. */
    *reply = loom_msg_reply(req, rc < 0 && rc != -LOOM_EALREADY_DONE ? rc : 0, "%s",
                            rc < 0 ? err.msg : "");
    return rc;
}

/* ---- job.script: scontrol write batch_script ------------------------------------------ */

/* The record job.script names: job_id, or an array's job_id and array_task_id. */
static const ctld_job_t *h_script_job(ctld_t *c, const json_t *req, loom_err_t *err)
{
    json_t *id = json_object_get(req, "job_id"), *task = json_object_get(req, "array_task_id");
    json_int_t v = json_integer_value(id);
    const ctld_job_t *job = NULL;
    if (json_is_integer(id) && v > 0 && v <= UINT32_MAX && !task) {
        job = ctld_job_find(c, (uint32_t)v);
    } else if (json_is_integer(id) && v > 0 && v <= UINT32_MAX && json_is_integer(task)) {
        const ctld_array_t *a = ctld_array_find(c, (uint32_t)v);
        uint32_t t = (uint32_t)json_integer_value(task);
        job = ctld_array_task(a, t);
        if (!job && ctld_array_in_meta(a, t))
            job = a->meta;
    }
    if (!job)
        loom_errf(err, -LOOM_EINVAL_JOBID, "Invalid job id specified");
    return job;
}

/* The batch script, read from its file (job_script.h); its owner or an
 * administrator only, with slurmctld 22.05's words for the refusals. */
static int h_job_script(ctld_t *c, const ctld_peer_t *peer, const json_t *req, json_t **reply,
                        loom_sbuf_t *raw)
{
    loom_err_t err = {0};
    const ctld_job_t *job = h_script_job(c, req, &err);
    int rc = job ? 0 : err.code;
    if (rc == 0 && job->uid != peer->uid && peer->role < LOOM_ROLE_ADMIN)
        rc = loom_errf(&err, -LOOM_EACCESS, "Invalid user id");
    if (rc == 0 && !job->batch)
        rc = loom_errf(&err, -LOOM_EINVAL_JOBID, "Job script not specified");
    json_t *rec = json_object();
    if (rc == 0)
        rc = ctld_job_script_load(c, job, rec, &err);
    *reply = loom_msg_reply(req, rc, "%s", rc < 0 ? err.msg : "");
    if (rc == 0 && *reply)
        json_object_set(*reply, "script", json_object_get(rec, "script"));
    json_decref(rec);
    return rc < 0 ? rc : 0;
}

/* ---- steps --------------------------------------------------------------------------- */

/* step.create, step.complete, step.stat and alloc.release are step_launch.c's
 * (issue 5 owns step management); this table only names them. */

const ctld_handler_t ctld_job_handlers[] = {
    {"job.submit", h_job_submit},
    {"job.info", h_job_info},
    {"job.signal", h_job_signal},
    {"job.update", h_job_update},
    {"job.hold", h_job_hold},
    {"job.release", h_job_release},
    {"job.requeue", h_job_requeue},
    {"job.suspend", h_job_suspend},
    {"job.complete", h_job_complete},
    {"job.script", h_job_script},
    {"step.create", ctld_step_h_create},
    {"step.complete", ctld_step_h_complete},
    {"step.stat", ctld_step_h_stat},
    {"step.done", ctld_step_h_done},
    {"alloc.release", ctld_step_h_release},
    {NULL, NULL},
};
