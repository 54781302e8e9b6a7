/*
 * loomd_steps.c - job steps on this node: step.launch, step.signal,
 * step.usage, and job.kill reaching the steps (messages.md §4, §5).
 *
 * A step.launch gets a dir <spool>/step<job>.<step>/ with spec.json and a
 * loomstepd, like a job; the supervisor talks to srun directly and removes
 * its dir when the step is over, so loomd keeps only a small table (to
 * forward signals, and to clean up after a supervisor that died). A
 * restarted loomd rebuilds it from the dirs whose stepd.sock answers.
 */
#include "noded/noded.h"

#include "common/log.h"
#include "common/proto.h"
#include "common/xalloc.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

typedef struct loom_noded_step {
    uint32_t job_id, step_id;
    pid_t pid; /* our child; 0 when found by a scan */
    struct loom_noded_step *next;
} steps_step_t;

static void steps_path(const loom_noded_t *n, uint32_t job, uint32_t step, const char *file,
                       char *out, size_t size)
{
    snprintf(out, size, "%s/step%u.%u%s%s", n->spool, (unsigned)job, (unsigned)step,
             file ? "/" : "", file ? file : "");
}

static steps_step_t *steps_find(const loom_noded_t *n, uint32_t job, uint32_t step)
{
    for (steps_step_t *s = n->steps; s; s = s->next)
        if (s->job_id == job && s->step_id == step)
            return s;
    return NULL;
}

static steps_step_t *steps_add(loom_noded_t *n, uint32_t job, uint32_t step, pid_t pid)
{
    steps_step_t *s = loom_xcalloc(1, sizeof(*s));
    s->job_id = job;
    s->step_id = step;
    s->pid = pid;
    s->next = n->steps;
    n->steps = s;
    return s;
}

static void steps_remove(loom_noded_t *n, steps_step_t *step)
{
    for (steps_step_t **pp = &n->steps; *pp; pp = &(*pp)->next) {
        if (*pp == step) {
            *pp = step->next;
            free(step);
            return;
        }
    }
}

void loom_noded_steps_free(loom_noded_t *n)
{
    while (n->steps)
        steps_remove(n, n->steps);
}

/* What a dead supervisor left behind. */
static void steps_remove_dir(const loom_noded_t *n, uint32_t job, uint32_t step)
{
    static const char *const files[] = {"stepd.sock", "spec.json", "spec.json.tmp"};
    char path[4096];
    for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
        steps_path(n, job, step, files[i], path, sizeof(path));
        unlink(path);
    }
    steps_path(n, job, step, NULL, path, sizeof(path));
    if (rmdir(path) < 0 && errno != ENOENT)
        loom_error("cannot remove %s: %s", path, strerror(errno));
}

static bool steps_alive(const loom_noded_t *n, uint32_t job, uint32_t step)
{
    struct sockaddr_un a = {.sun_family = AF_UNIX};
    steps_path(n, job, step, "stepd.sock", a.sun_path, sizeof(a.sun_path));
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return false;
    bool alive = connect(fd, (struct sockaddr *)&a, sizeof(a)) == 0;
    close(fd);
    return alive;
}

bool loom_noded_steps_reap(loom_noded_t *n, pid_t pid, int status)
{
    for (steps_step_t *s = n->steps; s; s = s->next) {
        if (s->pid != pid)
            continue;
        if (status != 0) {
            loom_error("the supervisor of step %u.%u exited with status 0x%x", s->job_id,
                       s->step_id, (unsigned)status);
            steps_remove_dir(n, s->job_id, s->step_id);
        }
        steps_remove(n, s);
        return true;
    }
    return false;
}

void loom_noded_steps_tick(loom_noded_t *n)
{
    steps_step_t *next;
    for (steps_step_t *s = n->steps; s; s = next) {
        next = s->next;
        if (s->pid == 0 && !steps_alive(n, s->job_id, s->step_id)) {
            steps_remove_dir(n, s->job_id, s->step_id);
            steps_remove(n, s);
        }
    }
}

void loom_noded_steps_scan(loom_noded_t *n)
{
    DIR *d = opendir(n->spool);
    struct dirent *e;
    while (d && (e = readdir(d))) {
        unsigned job, step;
        char tail;
        if (sscanf(e->d_name, "step%u.%u%c", &job, &step, &tail) != 2)
            continue;
        if (steps_alive(n, job, step)) {
            steps_add(n, job, step, 0);
            loom_info("found step %u.%u from a previous run", job, step);
        } else {
            steps_remove_dir(n, job, step);
        }
    }
    if (d)
        closedir(d);
}

/* ------------------------------------------------------------ forwarding */

typedef struct steps_fwd {
    loom_noded_t *n;
    loom_conn_t *from; /* who asked (NULL: nobody waits) */
    uint64_t serial;
    json_t *req;       /* the request to answer */
    json_t *msg;       /* what the supervisor gets */
    loom_conn_t *conn; /* to the supervisor, once connected */
    bool answered;
} steps_fwd_t;

/* Lifetime: without a connection the forward is freed where it fails; with
 * one, by the connection's close callback (which runs after every reply
 * callback, also when the connection ends first). */
static void steps_fwd_free(steps_fwd_t *f)
{
    json_decref(f->req);
    json_decref(f->msg);
    free(f);
}

static void steps_answer(steps_fwd_t *f, json_t *payload, int rc, const char *msg)
{
    if (f->answered)
        return;
    f->answered = true;
    if (!f->from || !loom_noded_peer_alive(f->n, f->from, f->serial))
        return;
    json_t *reply = loom_msg_reply(f->req, rc, "%s", msg ? msg : "");
    if (!reply)
        return;
    if (payload && rc == 0) {
        json_t *copy = json_deep_copy(payload);
        static const char *const hdr[] = {"v", "type", "id", "rc", "msg", "done"};
        for (size_t i = 0; i < sizeof(hdr) / sizeof(hdr[0]); i++)
            json_object_del(copy, hdr[i]);
        json_object_update(reply, copy);
        json_decref(copy);
    }
    loom_conn_send(f->from, reply);
    json_decref(reply);
}

static void steps_fwd_replied(void *arg, json_t *reply)
{
    steps_fwd_t *f = arg;
    const char *msg = NULL;
    int rc = reply ? loom_msg_rc(reply, &msg) : -LOOM_ECONNECT;
    steps_answer(f, reply, rc, reply ? msg : "the step's supervisor went away");
    /* The close callback frees f: now, or (reply == NULL: the connection is
     * already ending) right after this. */
    if (reply)
        loom_conn_close(f->conn);
}

static void steps_fwd_closed(loom_conn_t *c, int status, void *arg)
{
    steps_fwd_t *f = arg;
    steps_answer(f, NULL, -LOOM_ECONNECT, "the step's supervisor went away");
    steps_fwd_free(f);
}

static void steps_fwd_connected(void *arg, loom_conn_t *c, int status)
{
    steps_fwd_t *f = arg;
    if (status < 0) {
        steps_answer(f, NULL, -LOOM_ECONNECT, "the step's supervisor does not answer");
        steps_fwd_free(f);
        return;
    }
    f->conn = c;
    if (loom_conn_request(c, f->msg, steps_fwd_replied, f) < 0)
        loom_conn_close(c); /* answered and freed by the close callback */
}

/* Send msg (stolen) to the supervisor listening on path; answer req on from when given. */
static void steps_forward_to(loom_noded_t *n, const char *path, json_t *msg, loom_conn_t *from,
                             json_t *req)
{
    steps_fwd_t *f = loom_xcalloc(1, sizeof(*f));
    f->n = n;
    f->from = from;
    f->serial = from ? loom_noded_conn_serial(n, from) : 0;
    f->req = req ? json_incref(req) : NULL;
    f->msg = msg;
    loom_conn_opts_t o = {.on_close = steps_fwd_closed, .arg = f};
    loom_conn_pipe_connect(n->loop, path, &o, steps_fwd_connected, f);
}

/* Send msg (stolen) to the supervisor of job.step; answer req on from when given. */
static void steps_forward(loom_noded_t *n, uint32_t job, uint32_t step, json_t *msg,
                          loom_conn_t *from, json_t *req)
{
    steps_fwd_t *f = loom_xcalloc(1, sizeof(*f));
    f->n = n;
    f->from = from;
    f->serial = from ? loom_noded_conn_serial(n, from) : 0;
    f->req = req ? json_incref(req) : NULL;
    f->msg = msg;
    char path[4096];
    steps_path(n, job, step, "stepd.sock", path, sizeof(path));
    loom_conn_opts_t o = {.on_close = steps_fwd_closed, .arg = f};
    loom_conn_pipe_connect(n->loop, path, &o, steps_fwd_connected, f);
}

static json_t *steps_signal_msg(const json_t *req)
{
    json_t *fwd = loom_msg_new("stepd.signal", 0);
    static const char *const keys[] = {"signal", "reason", "kill_wait", "batch_only", "full"};
    for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
        json_t *v = json_object_get(req, keys[i]);
        if (v)
            json_object_set(fwd, keys[i], v);
    }
    return fwd;
}

size_t loom_noded_steps_kill(loom_noded_t *n, const json_t *req)
{
    json_int_t job = json_integer_value(json_object_get(req, "job_id"));
    size_t count = 0;
    for (steps_step_t *s = n->steps; s; s = s->next) {
        if ((json_int_t)s->job_id != job)
            continue;
        json_t *fwd = steps_signal_msg(req);
        if (!json_object_get(fwd, "kill_wait"))
            json_object_set_new(fwd, "kill_wait", json_integer(n->conf->kill_wait));
        steps_forward(n, s->job_id, s->step_id, fwd, NULL, NULL);
        count++;
    }
    return count;
}

static void steps_reply(loom_conn_t *c, json_t *req, int rc, const char *msg)
{
    json_t *reply = loom_msg_reply(req, rc, "%s", msg ? msg : "");
    if (reply) {
        loom_conn_send(c, reply);
        json_decref(reply);
    }
}

/* The step named by a request, or NULL after answering it. */
static steps_step_t *steps_named(loom_noded_t *n, loom_conn_t *conn, json_t *req)
{
    json_int_t job = json_integer_value(json_object_get(req, "job_id"));
    json_int_t step = json_integer_value(json_object_get(req, "step_id"));
    steps_step_t *s = job > 0 && job <= UINT32_MAX && step >= 0 && step <= UINT32_MAX
                          ? steps_find(n, (uint32_t)job, (uint32_t)step)
                          : NULL;
    if (!s)
        steps_reply(conn, req, -LOOM_EINVAL_JOBID, "the step is not on this node");
    return s;
}

void loom_noded_step_signal(loom_noded_t *n, loom_conn_t *conn, json_t *req)
{
    steps_step_t *s = steps_named(n, conn, req);
    if (s)
        steps_forward(n, s->job_id, s->step_id, steps_signal_msg(req), conn, req);
}

void loom_noded_step_usage(loom_noded_t *n, loom_conn_t *conn, json_t *req)
{
    const char *named = json_string_value(json_object_get(req, "step_id"));
    if (named && strcmp(named, "batch") == 0) { /* sstat J.batch: the job's own supervisor */
        char path[4096];
        json_int_t job = json_integer_value(json_object_get(req, "job_id"));
        if (job > 0 && job <= UINT32_MAX &&
            loom_noded_job_sock(n, (uint32_t)job, path, sizeof(path)) == 0)
            steps_forward_to(n, path, loom_msg_new("stepd.usage", 0), conn, req);
        else
            steps_reply(conn, req, -LOOM_EINVAL_JOBID, "the batch step is not running here");
        return;
    }
    steps_step_t *s = steps_named(n, conn, req);
    if (s)
        steps_forward(n, s->job_id, s->step_id, loom_msg_new("stepd.usage", 0), conn, req);
}

/* A supervisor's stepd.step_done waiting for the controller's answer. */
typedef struct steps_done {
    loom_noded_t *n;
    loom_conn_t *from;
    uint64_t serial;
    json_t *req;
} steps_done_t;

/* Answer the supervisor once the controller has the step's end (and its
 * usage): only then does it tell srun, so srun's step.complete cannot
 * overtake the usage. */
static void steps_done_replied(void *arg, json_t *reply)
{
    steps_done_t *d = arg;
    if (loom_noded_peer_alive(d->n, d->from, d->serial))
        steps_reply(d->from, d->req, 0, NULL);
    json_decref(d->req);
    free(d);
}

void loom_noded_step_done(loom_noded_t *n, loom_conn_t *conn, json_t *msg)
{
    /* srun's step.complete ends the step too; this one carries the node's
     * usage and covers an srun that went away. */
    json_t *req = loom_msg_new("step.done", 0);
    static const char *const keys[] = {"job_id", "step_id", "exit_code", "usage", "oom"};
    for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++)
        if (json_object_get(msg, keys[i]))
            json_object_set(req, keys[i], json_object_get(msg, keys[i]));
    json_object_set_new(req, "node", json_string(n->name));
    steps_done_t *d = loom_xcalloc(1, sizeof(*d));
    d->n = n;
    d->from = conn;
    d->serial = loom_noded_conn_serial(n, conn);
    d->req = json_incref(msg);
    if (!loom_noded_ctl_request(n, req, steps_done_replied, d)) {
        loom_verbose("step %lld.%lld ended while the controller is away",
                     (long long)json_integer_value(json_object_get(msg, "job_id")),
                     (long long)json_integer_value(json_object_get(msg, "step_id")));
        steps_done_replied(d, NULL);
    }
    json_decref(req);
}

/* ----------------------------------------------------------------- launch */

/* <spool>/step<job>.<step>/spec.json (tmp + rename). */
static int steps_write_spec(const loom_noded_t *n, uint32_t job, uint32_t step, const json_t *body,
                            loom_err_t *err)
{
    char dir[4096], tmp[4096], path[4096];
    steps_path(n, job, step, NULL, dir, sizeof(dir));
    steps_path(n, job, step, "spec.json.tmp", tmp, sizeof(tmp));
    steps_path(n, job, step, "spec.json", path, sizeof(path));
    if (mkdir(dir, 0700) < 0 && errno != EEXIST)
        return loom_errf(err, -errno, "cannot create %s: %s", dir, strerror(errno));
    json_t *node = loom_noded_node_section(n);
    json_t *spec = json_pack("{s:O, s:o}", "step", body, "node", node);
    /* Security: 0600, the spec holds the step's environment. */
    int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    int rc = fd >= 0 && json_dumpfd(spec, fd, JSON_COMPACT) == 0 ? 0 : -EIO;
    if (fd >= 0)
        close(fd);
    json_decref(spec);
    if (rc == 0 && rename(tmp, path) < 0)
        rc = -errno;
    if (rc < 0)
        return loom_errf(err, rc, "cannot write %s: %s", path, strerror(-rc));
    return 0;
}

void loom_noded_step_launch(loom_noded_t *n, loom_conn_t *conn, json_t *req)
{
    json_int_t job = json_integer_value(json_object_get(req, "job_id"));
    json_int_t step = json_integer_value(json_object_get(req, "step_id"));
    loom_err_t err = {0};
    int rc = 0;
    pid_t pid = 0;
    char dir[4096];
    if (job <= 0 || job > UINT32_MAX || step < 0 || step > UINT32_MAX ||
        !json_is_array(json_object_get(req, "ranks")) || !json_object_get(req, "io"))
        rc = loom_errf(&err, -LOOM_EPROTO, "step.launch needs job_id, step_id, ranks and io");
    else if (steps_find(n, (uint32_t)job, (uint32_t)step))
        loom_info("step %lld.%lld is already here; launch ignored", (long long)job,
                  (long long)step);
    else if ((rc = steps_write_spec(n, (uint32_t)job, (uint32_t)step, req, &err)) == 0) {
        steps_path(n, (uint32_t)job, (uint32_t)step, NULL, dir, sizeof(dir));
        rc = loom_noded_spawn_stepd(n, dir, &pid, &err);
        if (rc == 0)
            steps_add(n, (uint32_t)job, (uint32_t)step, pid);
        else
            steps_remove_dir(n, (uint32_t)job, (uint32_t)step);
    }
    if (rc < 0)
        loom_error("launch of step %lld.%lld failed: %s", (long long)job, (long long)step, err.msg);
    else
        loom_verbose("launched step %lld.%lld (supervisor pid %d)", (long long)job, (long long)step,
                     (int)pid);
    steps_reply(conn, req, rc, err.msg);
}
