/*
 * step_launch.c - the step requests (messages.md §3: step.create,
 * step.complete, step.stat, alloc.release; scancel jobid.stepid through
 * job.signal), the controller's messages to the step's nodes (§4:
 * step.launch, step.signal, step.usage, job.kill to every node of a job)
 * and the nodes' step.done.
 *
 * step.create is answered late: once the step.create event is durable, a
 * step.launch goes to each of the step's nodes (per node: its ranks, CPUs,
 * GPUs; the job's uid and gid, never the caller's word for them); when every
 * node has answered, srun gets the layout and the step's io_key, or the first
 * node's failure ("Task launch for StepId=J.S failed on node N: ..."), in
 * which case the step ends at once and the nodes that did start it kill it.
 * step.stat fans out step.usage the same way and gathers the answers.
 * step.done comes from each node when its supervisor of the step ends; when
 * all have, the step ends even if srun never says step.complete (killed).
 */
#include "ctld/step_launch.h"

#include "common/jobstate.h"
#include "common/log.h"
#include "common/proto.h"
#include "common/xalloc.h"
#include "ctld/dispatch.h"
#include "ctld/job_mgr.h"
#include "ctld/job_ops.h"
#include "ctld/node_mgr.h"
#include "ctld/sched_driver.h"
#include "ctld/server.h"
#include "ctld/step_mgr.h"

#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/wait.h>

/* A request answered once every node has: step.create and step.stat. */
typedef struct ctld_launch {
    ctld_t *c;
    ctld_conn_t *conn; /* srun or sstat (referenced) */
    json_t *req;       /* the request (referenced) */
    uint32_t job_id, step_id;
    size_t pending;
    bool failed;
    int journal_rc; /* < 0: the step.create event could not be written */
    char fail_node[128];
    char fail_msg[256];
    json_t *gathered; /* step.stat: per-node answers */
    json_t *ok;       /* step.create: the success answer, made while the step exists */
} launch_t;

typedef struct launch_one {
    launch_t *l;
    uint32_t step_node; /* index in the step */
} launch_one_t;

static void launch_answer(launch_t *l, json_t *reply)
{
    if (reply)
        ctld_server_send(l->conn, reply);
    json_decref(reply);
    ctld_conn_unref(l->conn);
    json_decref(l->req);
    json_decref(l->gathered);
    json_decref(l->ok);
    free(l);
}

static ctld_node_t *launch_node(ctld_t *c, const ctld_job_t *job, const ctld_step_node_t *sn)
{
    return &c->nodes[job->alloc.nodes[sn->job_node].node];
}

/* --------------------------------------------------------- to the nodes */

static void launch_kill_step(ctld_t *c, ctld_job_t *job, ctld_step_t *s, int sig,
                             const char *reason)
{
    for (uint32_t i = 0; s->x && i < s->nnodes; i++) {
        json_t *m = json_pack("{s:I, s:I, s:i, s:s, s:I}", "job_id", (json_int_t)job->id, "step_id",
                              (json_int_t)s->id, "signal", sig, "reason", reason, "kill_wait",
                              (json_int_t)c->conf->kill_wait);
        json_t *req = loom_msg_new("step.signal", 0);
        json_object_update(req, m);
        ctld_node_request(c, launch_node(c, job, &s->x->nodes[i]), req, NULL, NULL);
        json_decref(req);
        json_decref(m);
    }
}

void ctld_steps_kill_others(ctld_t *c, ctld_job_t *job, const json_t *kill)
{
    for (size_t i = 0; i < job->alloc.nnodes; i++) {
        ctld_node_t *n = &c->nodes[job->alloc.nodes[i].node];
        if (job->batch_host && strcmp(n->cfg->name, job->batch_host) == 0)
            continue;
        ctld_node_request(c, n, kill, NULL, NULL);
    }
}

/* Everything srun sent that the supervisors use as it is. */
static void launch_copy_keys(json_t *to, const json_t *req)
{
    static const char *const keys[] = {
        "argv",     "env",      "cwd",           "umask",    "std_out",    "std_err",
        "std_in",   "input",    "pty",           "mpi",      "multi_prog", "distribution",
        "cpu_bind", "gpu_bind", "gpus_per_task", "job_name", "dist_env"};
    for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
        json_t *v = json_object_get(req, keys[i]);
        if (v)
            json_object_set(to, keys[i], v);
    }
}

static json_t *launch_u32s(const uint32_t *v, uint32_t n)
{
    json_t *a = json_array();
    for (uint32_t i = 0; i < n; i++)
        json_array_append_new(a, json_integer(v[i]));
    return a;
}

/* The job's --signal=SIG@TIME (without B:) reaches its steps' tasks: each
 * supervisor gets {"signal", "at": epoch seconds} (messages.md §4). */
static void launch_warn(const ctld_job_t *job, json_t *b)
{
    int sig = (int)json_integer_value(json_object_get(job->desc, "kill_warning_signal"));
    json_int_t delay = json_integer_value(json_object_get(job->desc, "kill_warning_delay"));
    int64_t end = job->end_time ? job->end_time
                  : job->time_limit >= 0 && job->start_time
                      ? job->start_time + (int64_t)job->time_limit * 60
                      : 0; /* running: the end its time limit sets (as job_rec.c shows it) */
    if (sig <= 0 || end <= 0)
        return;
    size_t i;
    json_t *f;
    json_array_foreach(json_object_get(job->desc, "kill_warning_flags"), i, f)
    {
        if (json_is_string(f) && strcmp(json_string_value(f), "BATCH_JOB") == 0)
            return; /* B: the batch shell only */
    }
    json_object_set_new(b, "warn",
                        json_pack("{s:i, s:I}", "signal", sig, "at", (json_int_t)(end - delay)));
}

static json_t *launch_body(const ctld_t *c, const ctld_job_t *job, const ctld_step_t *s, uint32_t i,
                           const json_t *req)
{
    const ctld_step_node_t *sn = &s->x->nodes[i];
    const json_t *io = json_object_get(req, "io");
    json_t *b = loom_msg_new("step.launch", 0);
    launch_copy_keys(b, req);
    json_object_set_new(b, "job_id", json_integer(job->id));
    json_object_set_new(b, "step_id", json_integer(s->id));
    json_object_set_new(b, "uid", json_integer(job->uid));
    json_object_set_new(b, "gid", json_integer(job->gid));
    json_object_set_new(b, "user", json_string(job->user ? job->user : ""));
    json_object_set_new(b, "node_id", json_integer(i));
    json_object_set_new(b, "nodes", json_string(s->nodes));
    json_object_set_new(b, "tasks_per_node", launch_u32s(s->tasks_per_node, s->nnodes));
    json_object_set_new(b, "ntasks", json_integer(s->ntasks));
    json_object_set_new(b, "ranks", launch_u32s(sn->ranks, sn->ntasks));
    json_object_set_new(b, "cpus", launch_u32s(sn->cpus, sn->ncpus));
    json_object_set_new(b, "gpus", launch_u32s(sn->gpus, sn->ngpus));
    json_object_set_new(b, "mem", json_integer((json_int_t)sn->mem));
    json_object_set_new(b, "cpus_per_task", json_integer(s->cpus_per_task));
    json_object_set_new(b, "cpus_per_task_req",
                        json_integer(json_integer_value(json_object_get(req, "cpus_per_task"))));
    json_object_set_new(b, "io",
                        json_pack("{s:O?, s:O?, s:s}", "host", json_object_get(io, "host"), "port",
                                  json_object_get(io, "port"), "key",
                                  s->x->io_key ? s->x->io_key : ""));
    launch_warn(job, b);
    if (json_object_get(job->desc, "array_job_id"))
        json_object_set(b, "array_job_id", json_object_get(job->desc, "array_job_id"));
    return b;
}

/* ------------------------------------------------------------ step.create */

static json_t *launch_success(const ctld_t *c, const ctld_job_t *job, const ctld_step_t *s,
                              const json_t *req)
{
    json_t *reply = loom_msg_reply(req, 0, NULL);
    if (!reply)
        return NULL;
    json_t *cpus = json_array();
    for (size_t i = 0; i < job->alloc.nnodes; i++)
        json_array_append_new(cpus, json_integer(job->alloc.nodes[i].ncpus));
    json_object_set_new(reply, "step_id", json_integer(s->id));
    json_object_set_new(reply, "nodes", json_string(s->nodes));
    json_object_set_new(reply, "tasks_per_node", launch_u32s(s->tasks_per_node, s->nnodes));
    json_object_set_new(reply, "ntasks", json_integer(s->ntasks));
    json_object_set_new(reply, "io_key", json_string(s->x->io_key ? s->x->io_key : ""));
    json_object_set_new(reply, "job_nodes", json_string(job->nodes ? job->nodes : ""));
    json_object_set_new(reply, "job_cpus", cpus);
    return reply;
}

/* Every node has answered step.launch. */
static void launch_done(launch_t *l)
{
    ctld_t *c = l->c;
    ctld_job_t *job = ctld_job_find(c, l->job_id);
    ctld_step_t *s = job ? ctld_job_step_find(job, l->step_id) : NULL;
    if (!s) {
        /* A short step can run and end before the step.create event is
         * durable (a slow fsync on a loaded host): it was launched, so srun
         * gets its answer and reads the tasks' exits from their I/O. It got
         * "already completing" and failed its job, a running one. */
        bool ran = !l->failed && l->ok && job && loom_job_base(job->state) == LOOM_JOB_RUNNING;
        launch_answer(l, ran ? json_incref(l->ok)
                             : loom_msg_reply(l->req, -LOOM_EALREADY_DONE,
                                              "Job/step already completing or completed"));
        return;
    }
    if (!l->failed) {
        launch_answer(l, launch_success(c, job, s, l->req));
        return;
    }
    json_t *reply =
        l->journal_rc < 0
            ? loom_msg_reply(l->req, l->journal_rc, "the state journal failed")
            : loom_msg_reply(l->req, -LOOM_ESTEP_LAUNCH,
                             "Task launch for StepId=%u.%u failed on node %s: %s",
                             (unsigned)job->id, (unsigned)s->id, l->fail_node, l->fail_msg);
    launch_kill_step(c, job, s, SIGKILL, "signal");
    ctld_step_commit_end(c, job, s->id, 1 << 8, NULL);
    launch_answer(l, reply);
}

static void launch_replied(ctld_t *c, void *arg, json_t *reply)
{
    launch_one_t *one = arg;
    launch_t *l = one->l;
    const char *msg = NULL;
    int rc = reply ? loom_msg_rc(reply, &msg) : -LOOM_ECONNECT;
    if (rc < 0 && !l->failed) {
        ctld_job_t *job = ctld_job_find(c, l->job_id);
        ctld_step_t *s = job ? ctld_job_step_find(job, l->step_id) : NULL;
        l->failed = true;
        snprintf(l->fail_node, sizeof(l->fail_node), "%s",
                 s && one->step_node < s->nnodes
                     ? ctld_step_node_name(c, job, &s->x->nodes[one->step_node])
                     : "?");
        snprintf(l->fail_msg, sizeof(l->fail_msg), "%s",
                 reply ? msg : "the node's daemon is not connected");
    }
    free(one);
    if (--l->pending == 0)
        launch_done(l);
}

/* The step.create event is durable (or the journal failed). */
static void launch_durable(void *arg, int status)
{
    launch_t *l = arg;
    if (status < 0 && !l->journal_rc) {
        l->failed = true;
        l->journal_rc = status;
    }
    if (--l->pending == 0)
        launch_done(l);
}

static void launch_key(char out[33])
{
    unsigned char raw[16] = {0};
    ssize_t n;
    while ((n = getrandom(raw, sizeof(raw), 0)) < 0)
        ;
    for (size_t i = 0; i < sizeof(raw); i++)
        snprintf(out + 2 * i, 3, "%02x", raw[i]);
}

static launch_t *launch_new(ctld_t *c, const ctld_peer_t *peer, const json_t *req, uint32_t job_id,
                            uint32_t step_id)
{
    launch_t *l = loom_xcalloc(1, sizeof(*l));
    l->c = c;
    l->conn = peer->conn;
    ctld_conn_ref(l->conn);
    l->req = json_incref((json_t *)req);
    l->job_id = job_id;
    l->step_id = step_id;
    return l;
}

/* Wait for the journal, then fan out (immediately without a journal). */
static void launch_after_journal(ctld_t *c, launch_t *l, loom_journal_done_f *cb)
{
    int st = c->journal && c->req_seq ? loom_journal_wait(c->journal, c->req_seq, cb, l) : 1;
    if (st != 0)
        cb(l, st > 0 ? 0 : st);
}

/* step.launch to every node at once: the supervisors start while the
 * step.create event is being written (as slurmctld launches before its state
 * is saved); srun has its answer once the nodes have answered and the event
 * is durable. */
static void launch_send(ctld_t *c, launch_t *l)
{
    ctld_job_t *job = ctld_job_find(c, l->job_id);
    ctld_step_t *s = job ? ctld_job_step_find(job, l->step_id) : NULL;
    l->pending = (s ? s->nnodes : 0) + 2; /* + the journal, + until every request is out */
    l->ok = s ? launch_success(c, job, s, l->req) : NULL;
    for (uint32_t i = 0; s && i < s->nnodes; i++) {
        launch_one_t *one = loom_xcalloc(1, sizeof(*one));
        *one = (launch_one_t){l, i};
        json_t *body = launch_body(c, job, s, i, l->req);
        if (ctld_node_request(c, launch_node(c, job, &s->x->nodes[i]), body, launch_replied, one) <
            0)
            launch_replied(c, one, NULL);
        json_decref(body);
    }
    launch_after_journal(c, l, launch_durable);
    if (--l->pending == 0)
        launch_done(l);
}

static ctld_job_t *launch_job(ctld_t *c, const json_t *req, loom_err_t *err)
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

static void launch_name(ctld_step_t *s, const json_t *req)
{
    const char *name = json_string_value(json_object_get(req, "name"));
    const char *argv0 = json_string_value(json_array_get(json_object_get(req, "argv"), 0));
    if (!name && argv0) {
        const char *slash = strrchr(argv0, '/');
        name = slash ? slash + 1 : argv0;
    }
    s->name = loom_xstrdup(name ? name : "");
}

int ctld_step_h_create(ctld_t *c, const ctld_peer_t *peer, const json_t *req, json_t **reply,
                       loom_sbuf_t *raw)
{
    loom_err_t err = {0};
    ctld_step_req_t sr;
    ctld_step_t *s = NULL;
    ctld_job_t *job = launch_job(c, req, &err);
    int rc = job ? ctld_step_req_from_json(req, &sr, &err) : err.code;
    if (rc == 0 && !json_is_object(json_object_get(req, "io")))
        rc = loom_errf(&err, -LOOM_EPROTO, "step.create needs io {host, port}");
    if (rc == 0 && (loom_job_base(job->state) != LOOM_JOB_RUNNING || !job->alloc.nnodes))
        rc = loom_errf(&err, -LOOM_EALREADY_DONE, "Job/step already completing or completed");
    /* Security: only the job's owner (or an admin) creates steps in it; the
     * tasks run with the job's uid whatever the request says. */
    if (rc == 0 && !ctld_may_touch(c, peer, job))
        rc = loom_errf(&err, -LOOM_EACCESS, "Access/permission denied");
    if (rc == 0 && !(s = ctld_step_place(c, job, &sr, &err)))
        rc = err.code ? err.code : -LOOM_EINTERNAL;
    if (rc == 0) {
        char key[33];
        launch_key(key);
        launch_name(s, req);
        s->start_time = ctld_now();
        s->uid = job->uid;
        s->x->io_key = loom_xstrdup(key);
        const char *host = json_string_value(json_object_get(req, "srun_host"));
        s->x->srun_host = host ? loom_xstrdup(host) : NULL;
        s->x->srun_pid = (int64_t)json_integer_value(json_object_get(req, "srun_pid"));
        const char *line = json_string_value(json_object_get(req, "submit_line"));
        s->x->submit_line = line ? loom_xstrdup(line) : NULL;
        uint32_t id = job->next_step_id;
        rc = ctld_step_commit_create(c, job, s, &err);
        if (rc == 0) {
            launch_send(c, launch_new(c, peer, req, job->id, id));
            return CTLD_REPLY_LATER;
        }
    }
    *reply = loom_msg_reply(req, rc, "%s", err.msg);
    return rc;
}

/* ---------------------------------------------------------- step.complete */

int ctld_step_h_complete(ctld_t *c, const ctld_peer_t *peer, const json_t *req, json_t **reply,
                         loom_sbuf_t *raw)
{
    loom_err_t err = {0};
    ctld_job_t *job = launch_job(c, req, &err);
    json_int_t step = json_integer_value(json_object_get(req, "step_id"));
    json_int_t code = json_integer_value(json_object_get(req, "exit_code"));
    int rc = job ? 0 : err.code;
    /* Security: the owner or an admin. */
    if (rc == 0 && !ctld_may_touch(c, peer, job))
        rc = loom_errf(&err, -LOOM_EACCESS, "Access/permission denied");
    ctld_step_t *s =
        rc == 0 && step >= 0 && step <= UINT32_MAX ? ctld_job_step_find(job, (uint32_t)step) : NULL;
    if (s && s->x && json_is_true(json_object_get(req, "oom")))
        s->x->oom = true;
    if (s)
        rc = ctld_step_commit_end(c, job, (uint32_t)step, (int)code, &err);
    *reply = loom_msg_reply(req, rc, "%s", rc < 0 ? err.msg : "");
    return rc;
}

/* ------------------------------------------------ scancel jobid.stepid */

int ctld_step_signal(ctld_t *c, ctld_job_t *job, const json_t *req, loom_err_t *err)
{
    json_int_t id = json_integer_value(json_object_get(req, "step_id"));
    ctld_step_t *s = id >= 0 && id <= UINT32_MAX ? ctld_job_step_find(job, (uint32_t)id) : NULL;
    if (loom_job_state_is_terminal(job->state))
        return loom_errf(err, -LOOM_EALREADY_DONE, "Job/step already completing or completed");
    if (!s)
        return loom_errf(err, -LOOM_EINVAL_JOBID, "Invalid job id specified");
    int sig = (int)json_integer_value(json_object_get(req, "signal"));
    bool cancel = json_is_true(json_object_get(req, "cancel"));
    if (!cancel && (sig <= 0 || sig >= 65))
        return loom_errf(err, -EINVAL, "invalid signal %d", sig);
    launch_kill_step(c, job, s, cancel ? SIGKILL : sig, cancel ? "cancel" : "signal");
    return 0;
}

/* -------------------------------------------------------------- step.stat */

static void stat_replied(ctld_t *c, void *arg, json_t *reply)
{
    launch_t *l = arg;
    if (reply && loom_msg_rc(reply, NULL) == 0) {
        json_t *copy = json_deep_copy(reply);
        static const char *const hdr[] = {"v", "type", "id", "rc", "msg", "done", "auth"};
        for (size_t i = 0; i < sizeof(hdr) / sizeof(hdr[0]); i++)
            json_object_del(copy, hdr[i]);
        json_array_append_new(l->gathered, copy);
    }
    if (--l->pending == 0) {
        json_t *out = loom_msg_reply(l->req, 0, NULL);
        if (out)
            json_object_set(out, "nodes", l->gathered);
        launch_answer(l, out);
    }
}

/* sstat J.batch: the batch host's supervisor of the script. */
static int stat_batch(ctld_t *c, const ctld_peer_t *peer, const json_t *req, ctld_job_t *job,
                      json_t **reply)
{
    ctld_node_t *n = job->batch_host && job->batch && !loom_job_state_is_terminal(job->state)
                         ? ctld_node_find(c, job->batch_host)
                         : NULL;
    if (!n) {
        *reply = loom_msg_reply(req, -LOOM_EINVAL_JOBID, "Invalid job id specified");
        return -LOOM_EINVAL_JOBID;
    }
    launch_t *l = launch_new(c, peer, req, job->id, UINT32_MAX);
    l->gathered = json_array();
    l->pending = 2;
    json_t *m = loom_msg_new("step.usage", 0);
    json_object_set_new(m, "job_id", json_integer(job->id));
    json_object_set_new(m, "step_id", json_string("batch"));
    if (ctld_node_request(c, n, m, stat_replied, l) < 0)
        stat_replied(c, l, NULL);
    json_decref(m);
    stat_replied(c, l, NULL); /* the +1 */
    return CTLD_REPLY_LATER;
}

int ctld_step_h_stat(ctld_t *c, const ctld_peer_t *peer, const json_t *req, json_t **reply,
                     loom_sbuf_t *raw)
{
    loom_err_t err = {0};
    ctld_job_t *job = launch_job(c, req, &err);
    json_int_t id = json_integer_value(json_object_get(req, "step_id"));
    ctld_step_t *s =
        job && id >= 0 && id <= UINT32_MAX ? ctld_job_step_find(job, (uint32_t)id) : NULL;
    int rc = job ? 0 : err.code;
    const char *named = json_string_value(json_object_get(req, "step_id"));
    if (rc == 0 && named && strcmp(named, "batch") == 0)
        return stat_batch(c, peer, req, job, reply);
    if (rc == 0 && !s)
        rc = loom_errf(&err, -LOOM_EINVAL_JOBID, "Invalid job id specified");
    /* Security: usage is visible like squeue's records (no PrivateData). */
    if (rc < 0) {
        *reply = loom_msg_reply(req, rc, "%s", err.msg);
        return rc;
    }
    launch_t *l = launch_new(c, peer, req, job->id, s->id);
    l->gathered = json_array();
    l->pending = s->nnodes + 1;
    for (uint32_t i = 0; i < s->nnodes; i++) {
        json_t *m = loom_msg_new("step.usage", 0);
        json_object_set_new(m, "job_id", json_integer(job->id));
        json_object_set_new(m, "step_id", json_integer(s->id));
        if (ctld_node_request(c, launch_node(c, job, &s->x->nodes[i]), m, stat_replied, l) < 0)
            stat_replied(c, l, NULL);
        json_decref(m);
    }
    stat_replied(c, l, NULL); /* the +1 */
    return CTLD_REPLY_LATER;
}

/* -------------------------------------------------------------- step.done */

/* A wait status ranked as srun ranks its tasks' (exit code, 128+signal), so
 * a step the nodes end keeps the status srun's step.complete would give. */
static int launch_status_rank(int status)
{
    return WIFEXITED(status)     ? WEXITSTATUS(status)
           : WIFSIGNALED(status) ? 128 + WTERMSIG(status)
                                 : 0;
}

/* A node's supervisor of the step has ended; the last one ends the step. */
int ctld_step_h_done(ctld_t *c, const ctld_peer_t *peer, const json_t *req, json_t **reply,
                     loom_sbuf_t *raw)
{
    loom_err_t err = {0};
    ctld_job_t *job = launch_job(c, req, &err);
    json_int_t id = json_integer_value(json_object_get(req, "step_id"));
    const char *node = json_string_value(json_object_get(req, "node"));
    ctld_step_t *s =
        job && id >= 0 && id <= UINT32_MAX ? ctld_job_step_find(job, (uint32_t)id) : NULL;
    int rc = 0;
    bool all = s && s->x && node;
    /* Security: the node role (registry); a node speaks only for itself. */
    for (uint32_t i = 0; all && i < s->nnodes; i++) {
        if (strcmp(ctld_step_node_name(c, job, &s->x->nodes[i]), node) == 0) {
            if (!s->x->node_done[i])
                ctld_step_usage_add(s, json_object_get(req, "usage"));
            s->x->oom = s->x->oom || json_is_true(json_object_get(req, "oom"));
            s->x->node_done[i] = true;
            int code = (int)json_integer_value(json_object_get(req, "exit_code"));
            if (launch_status_rank(code) > launch_status_rank(s->x->exit_code))
                s->x->exit_code = code;
        }
    }
    for (uint32_t i = 0; all && i < s->nnodes; i++)
        all = s->x->node_done[i];
    if (all)
        rc = ctld_step_commit_end(c, job, s->id, s->x->exit_code, &err);
    *reply = loom_msg_reply(req, rc, "%s", rc < 0 ? err.msg : "");
    return rc;
}

/* ---------------------------------------------------------- alloc.release */

int ctld_step_h_release(ctld_t *c, const ctld_peer_t *peer, const json_t *req, json_t **reply,
                        loom_sbuf_t *raw)
{
    loom_err_t err = {0};
    ctld_job_t *job = launch_job(c, req, &err);
    int code = (int)json_integer_value(json_object_get(req, "exit_code"));
    int rc = job ? 0 : err.code;
    /* Security: only the owner (or an admin) gives an allocation back. */
    if (rc == 0 && !ctld_may_touch(c, peer, job))
        rc = loom_errf(&err, -LOOM_EACCESS, "Access/permission denied");
    if (rc == 0 && job->batch)
        rc = loom_errf(&err, -LOOM_EINVAL_JOBID, "job %u is a batch job", job->id);
    if (rc == 0 && loom_job_base(job->state) == LOOM_JOB_PENDING) {
        rc = ctld_job_cancel(c, job, &err);
    } else if (rc == 0) {
        /* Revoked meanwhile (scancel, salloc's SIGTERM, time limit): the end
         * keeps its exit code, not the command's status (22.05: 0:0). */
        if (loom_job_state_is_terminal(job->state))
            code = job->exit_code;
        if (!loom_job_state_is_terminal(job->state) || (job->state & LOOM_JOB_F_COMPLETING))
            rc = ctld_job_completed(c, job, code, ctld_now(), "", &err);
        if (rc == -LOOM_EALREADY_DONE)
            rc = 0;
        /* The allocation's supervisor and any steps left end now. */
        json_t *kill = json_pack("{s:I, s:i, s:s, s:I, s:b, s:b}", "job_id", (json_int_t)job->id,
                                 "signal", SIGKILL, "reason", "signal", "kill_wait",
                                 (json_int_t)c->conf->kill_wait, "batch_only", 0, "full", 1);
        json_t *m = loom_msg_new("job.kill", 0);
        json_object_update(m, kill);
        for (size_t i = 0; i < job->alloc.nnodes; i++)
            ctld_node_request(c, &c->nodes[job->alloc.nodes[i].node], m, NULL, NULL);
        json_decref(m);
        json_decref(kill);
    }
    *reply = loom_msg_reply(req, rc, "%s", rc < 0 ? err.msg : "");
    return rc;
}
