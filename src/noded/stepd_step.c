/*
 * stepd_step.c - loomstepd as a job step's supervisor: life cycle, the link
 * to srun, stepd.sock, ending the step. See stepd_step.h.
 *
 * The link to srun carries stepio.h messages. Writes are queued in libuv;
 * when more than STEP_PAUSE_BYTES wait, task output is no longer read (the
 * tasks block on their pipes) until the queue drains below a quarter of it,
 * so a slow srun cannot make the supervisor grow without bound.
 */
#include "noded/stepd_step.h"

#include "common/log.h"
#include "common/proto.h"
#include "common/stepio.h"
#include "common/timefmt.h"
#include "common/xalloc.h"

#include <errno.h>
#include <grp.h>
#include <netdb.h>
#include <pwd.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define STEP_PAUSE_BYTES (4u * 1024 * 1024)
#define STEP_REPORT_MS   5000 /* the longest DONE waits for loomd's answer */

static void step_finish(loom_step_t *s);
static void step_report(loom_step_t *s);
static void step_arm_warn(loom_step_t *s);
static void step_confine_gpus(loom_step_t *s);
static void step_join_job_cgroup(loom_step_t *s);

static const char *step_jstr(const json_t *o, const char *key)
{
    const char *v = json_string_value(json_object_get(o, key));
    return v && *v ? v : NULL;
}

/* ---------------------------------------------------------------- to srun */

typedef struct step_write {
    uv_write_t req;
    loom_step_t *step;
    size_t len;
    char bytes[];
} step_write_t;

static void step_written(uv_write_t *req, int status)
{
    step_write_t *w = (step_write_t *)req;
    loom_step_t *s = w->step;
    s->io_queued -= w->len;
    free(w);
    if (status < 0 && !s->io_lost) {
        loom_verbose("step %u.%u: writing to srun failed: %s", s->job_id, s->step_id,
                     uv_strerror(status));
        s->io_lost = true;
    }
    if (s->paused && s->io_queued < STEP_PAUSE_BYTES / 4) {
        s->paused = false;
        loom_step_tasks_pause(s, false);
    }
    if (s->reported && s->io_queued == 0)
        step_finish(s);
}

static void step_write_bytes(loom_step_t *s, const loom_sbuf_t *sb)
{
    if (!s->io_up || s->io_lost || !s->io_open)
        return;
    step_write_t *w = loom_xmalloc(sizeof(*w) + sb->len);
    w->step = s;
    w->len = sb->len;
    memcpy(w->bytes, sb->buf, sb->len);
    uv_buf_t buf = uv_buf_init(w->bytes, (unsigned)w->len);
    if (uv_write(&w->req, (uv_stream_t *)&s->io, &buf, 1, step_written) < 0) {
        free(w);
        s->io_lost = true;
        return;
    }
    s->io_queued += w->len;
    if (!s->paused && s->io_queued > STEP_PAUSE_BYTES) {
        s->paused = true;
        loom_step_tasks_pause(s, true);
    }
}

void loom_step_send(loom_step_t *s, int type, uint32_t rank, const void *data, size_t len)
{
    loom_sbuf_t sb = LOOM_SBUF_INIT;
    loom_stepio_encode(&sb, type, rank, data, len);
    step_write_bytes(s, &sb);
    loom_sbuf_free(&sb);
}

void loom_step_send_json(loom_step_t *s, int type, uint32_t rank, const json_t *obj)
{
    loom_sbuf_t sb = LOOM_SBUF_INIT;
    loom_stepio_encode_json(&sb, type, rank, obj);
    step_write_bytes(s, &sb);
    loom_sbuf_free(&sb);
}

/* ---------------------------------------------------------------- signals */

void loom_step_signal_tasks(loom_step_t *s, int sig)
{
    if (s->pgid > 0)
        killpg(s->pgid, sig);
    for (uint32_t i = 0; i < s->ntasks; i++) {
        loom_step_task_t *t = &s->tasks[i];
        /* The --pty task leads its own session and group. */
        if (t->pid > 0 && !t->exited && getpgid(t->pid) != s->pgid && killpg(t->pid, sig) < 0)
            kill(t->pid, sig);
    }
}

/* The line slurmstepd writes when it ends a step, into task 0's stderr. */
static void step_cancel_line(loom_step_t *s, const char *reason)
{
    static const struct {
        const char *reason, *suffix;
    } why[] = {
        {"timeout", " DUE TO TIME LIMIT"},
        {"preempt", " DUE TO PREEMPTION"},
        {"node_fail", " DUE TO NODE FAILURE, SEE SLURMCTLD LOG FOR DETAILS"},
        {"requeue", " DUE TO JOB REQUEUE"},
    };
    const char *suffix = "";
    for (size_t i = 0; i < sizeof(why) / sizeof(why[0]); i++)
        if (strcmp(reason, why[i].reason) == 0)
            suffix = why[i].suffix;
    if (s->node_id != 0 || s->ntasks == 0)
        return;
    loom_sbuf_t sb = LOOM_SBUF_INIT;
    loom_sbuf_addf(&sb, "slurmstepd-%s: error: *** STEP %u.%u ON %s CANCELLED AT ", s->node_name,
                   s->job_id, s->step_id, s->node_name);
    loom_date_fmt(time(NULL), "Unknown", &sb);
    loom_sbuf_addf(&sb, "%s ***\n", suffix);
    loom_step_send(s, LOOM_STEPIO_STDERR, s->tasks[0].rank, sb.buf, sb.len);
    loom_sbuf_free(&sb);
}

static void step_kill_due(uv_timer_t *t)
{
    loom_step_signal_tasks(t->data, SIGKILL);
}

void loom_step_terminate(loom_step_t *s, const char *reason, int kill_wait, int sig)
{
    if (s->killing || s->finished)
        return;
    s->killing = true;
    s->reason = reason ? reason : "";
    if (s->reason[0])
        step_cancel_line(s, s->reason);
    loom_step_signal_tasks(s, SIGCONT);
    loom_step_signal_tasks(s, sig > 0 && sig < NSIG ? sig : SIGTERM);
    uv_timer_start(&s->kill_timer, step_kill_due, (uint64_t)(kill_wait > 0 ? kill_wait : 0) * 1000,
                   0);
}

/* ------------------------------------------------------------ the children */

static void step_all_exited(loom_step_t *s)
{
    /* Whatever the tasks left behind ends with them, as in Slurm. */
    loom_step_signal_tasks(s, SIGKILL);
    uv_timer_stop(&s->kill_timer);
}

static void step_sigchld(uv_signal_t *h, int signum)
{
    loom_step_t *s = h->data;
    int status;
    pid_t pid;
    struct rusage ru;
    while ((pid = wait4(-1, &status, WNOHANG, &ru)) > 0) {
        int task = -1; /* an orphan (we are its subreaper) */
        for (uint32_t i = 0; i < s->ntasks; i++)
            if (s->tasks[i].pid == pid)
                task = (int)i;
        loom_gather_reaped(s->gather, task, &ru);
        for (uint32_t i = 0; i < s->ntasks; i++) {
            loom_step_task_t *t = &s->tasks[i];
            if (t->pid != pid || t->exited)
                continue;
            t->exited = true;
            t->status = status;
            s->running--;
            loom_step_task_check(s, t);
            if (s->running == 0)
                step_all_exited(s);
        }
    }
}

/* slurmstepd's line on the step's stderr, before srun's "Out Of Memory". */
static void step_oom_line(loom_step_t *s, uint32_t rank)
{
    loom_sbuf_t sb = LOOM_SBUF_INIT;
    loom_sbuf_addf(&sb,
                   "slurmstepd-%s: error: Detected %d oom-kill event(s) in StepId=%u.%u cgroup. "
                   "Some of your processes may have been killed by the cgroup out-of-memory "
                   "handler.\n",
                   s->node_name, loom_cgroup_oom_kills(s->cgroup) - s->oom_base, s->job_id,
                   s->step_id);
    loom_step_send(s, LOOM_STEPIO_STDERR, rank, sb.buf, sb.len);
    loom_sbuf_free(&sb);
}

void loom_step_task_check(loom_step_t *s, loom_step_task_t *t)
{
    if (t && t->exited && !t->reported) {
        t->reported = true;
        /* SIGKILLed while the kernel's OOM killer acted in the job's cgroup. */
        t->oom = s->cgroup && WIFSIGNALED(t->status) && WTERMSIG(t->status) == SIGKILL &&
                 loom_cgroup_oom_kills(s->cgroup) > s->oom_base;
        if (t->oom && !s->oom)
            step_oom_line(s, t->rank);
        s->oom = s->oom || t->oom;
        json_t *m = json_pack("{s:i, s:b}", "status", t->status, "oom", t->oom);
        loom_step_send_json(s, LOOM_STEPIO_EXIT, t->rank, m);
        json_decref(m);
    }
    for (uint32_t i = 0; i < s->ntasks; i++) {
        const loom_step_task_t *u = &s->tasks[i];
        if (!u->reported || u->out_open[0] || u->out_open[1])
            return;
    }
    if (!s->done) {
        s->done = true;
        step_report(s); /* DONE goes to srun once loomd has the report */
    }
}

/* ----------------------------------------------------------- from srun */

static void step_srun_msg(loom_step_t *s, const loom_stepio_msg_t *m)
{
    json_t *j = NULL;
    switch (m->type) {
    case LOOM_STEPIO_STDIN:
        loom_step_tasks_stdin(s, m->rank, m->data, m->len);
        break;
    case LOOM_STEPIO_STDIN_EOF:
        loom_step_tasks_stdin_eof(s);
        break;
    case LOOM_STEPIO_SIGNAL:
        j = loom_stepio_json(m);
        loom_step_signal_tasks(s, (int)json_integer_value(json_object_get(j, "signal")));
        break;
    case LOOM_STEPIO_KILL:
        j = loom_stepio_json(m);
        loom_step_terminate(s, json_string_value(json_object_get(j, "reason")),
                            (int)json_integer_value(json_object_get(j, "kill_wait")),
                            (int)json_integer_value(json_object_get(j, "signal")));
        break;
    case LOOM_STEPIO_WINSIZE:
        j = loom_stepio_json(m);
        loom_step_tasks_winsize(s, (unsigned)json_integer_value(json_object_get(j, "rows")),
                                (unsigned)json_integer_value(json_object_get(j, "cols")));
        break;
    case LOOM_STEPIO_PMI:
        j = loom_stepio_json(m);
        if (s->pmi && j)
            loom_pmi2_from_srun(s->pmi, j);
        break;
    default:
        loom_verbose("step %u.%u: ignoring a %s message from srun", s->job_id, s->step_id,
                     loom_stepio_type_name(m->type));
    }
    json_decref(j);
}

/* srun is gone: nobody can see the tasks any more, so they end. */
static void step_srun_lost(loom_step_t *s)
{
    s->io_lost = true;
    if (s->io_open) {
        uv_read_stop((uv_stream_t *)&s->io);
        loom_uv_close_once((uv_handle_t *)&s->io, NULL);
        s->io_open = false;
    }
    if (s->done) {
        if (s->reported)
            step_finish(s);
        return;
    }
    loom_info("step %u.%u: srun went away; killing the tasks", s->job_id, s->step_id);
    s->killing = true;
    loom_step_signal_tasks(s, SIGKILL);
    loom_step_tasks_stdin_eof(s);
}

static void step_io_alloc(uv_handle_t *h, size_t suggested, uv_buf_t *buf)
{
    static char scratch[65536]; /* the loop is single-threaded; read copies out at once */
    buf->base = scratch;
    buf->len = sizeof(scratch);
}

static void step_io_read(uv_stream_t *st, ssize_t n, const uv_buf_t *buf)
{
    loom_step_t *s = st->data;
    if (n < 0) {
        step_srun_lost(s);
        return;
    }
    loom_sbuf_addn(&s->io_in, buf->base, (size_t)n);
    size_t off = 0;
    for (;;) {
        loom_stepio_msg_t m;
        loom_err_t err = {0};
        ssize_t used = loom_stepio_parse(s->io_in.buf + off, s->io_in.len - off, &m, &err);
        if (used < 0) {
            loom_error("step %u.%u: %s", s->job_id, s->step_id, err.msg);
            step_srun_lost(s);
            return;
        }
        if (used == 0)
            break;
        step_srun_msg(s, &m);
        off += (size_t)used;
        if (!s->io_open)
            return;
    }
    memmove(s->io_in.buf, s->io_in.buf + off, s->io_in.len - off);
    loom_sbuf_truncate(&s->io_in, s->io_in.len - off);
}

static void step_hello(loom_step_t *s)
{
    json_t *ranks = json_array();
    for (uint32_t i = 0; i < s->ntasks; i++)
        json_array_append_new(ranks, json_integer(s->tasks[i].rank));
    const json_t *io = json_object_get(s->body, "io");
    json_t *m =
        json_pack("{s:I, s:I, s:I, s:s, s:s, s:o}", "job_id", (json_int_t)s->job_id, "step_id",
                  (json_int_t)s->step_id, "node_id", (json_int_t)s->node_id, "node", s->node_name,
                  "io_key", step_jstr(io, "key") ? step_jstr(io, "key") : "", "ranks", ranks);
    loom_step_send_json(s, LOOM_STEPIO_HELLO, LOOM_STEPIO_ALL, m);
    json_decref(m);
}

static void step_connected(uv_connect_t *req, int status)
{
    loom_step_t *s = req->data;
    free(req);
    if (status < 0) {
        loom_error("step %u.%u: cannot reach srun: %s", s->job_id, s->step_id, uv_strerror(status));
        s->io_lost = true;
        s->done = true;
        step_report(s);
        return;
    }
    s->io_up = true;
    uv_tcp_nodelay(&s->io, 1);
    uv_read_start((uv_stream_t *)&s->io, step_io_alloc, step_io_read);
    step_hello(s);
    loom_err_t err = {0};
    step_join_job_cgroup(s);
    step_confine_gpus(s);
    if (loom_step_tasks_start(s, &err) < 0) {
        json_t *m = json_pack("{s:s, s:b}", "msg", err.msg, "error", 1);
        loom_step_send_json(s, LOOM_STEPIO_NOTE, LOOM_STEPIO_ALL, m);
        json_decref(m);
    }
    loom_step_tasks_gather(s);
    step_arm_warn(s);
    /* Tasks that could not start count as exited: there may be nothing left. */
    if (s->running == 0) {
        for (uint32_t i = 0; i < s->ntasks; i++)
            loom_step_task_check(s, &s->tasks[i]);
        loom_step_task_check(s, NULL);
    }
}

static int step_connect(loom_step_t *s, loom_err_t *err)
{
    const json_t *io = json_object_get(s->body, "io");
    const char *host = step_jstr(io, "host");
    char port[16];
    snprintf(port, sizeof(port), "%lld",
             (long long)json_integer_value(json_object_get(io, "port")));
    struct addrinfo hints = {.ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM}, *res = NULL;
    if (!host || getaddrinfo(host, port, &hints, &res) != 0 || !res)
        return loom_errf(err, -LOOM_ECONNECT, "cannot resolve srun's address %s:%s",
                         host ? host : "(none)", port);
    uv_tcp_init(s->loop, &s->io);
    s->io.data = s;
    s->io_open = true;
    uv_connect_t *req = loom_xcalloc(1, sizeof(*req));
    req->data = s;
    int rc = uv_tcp_connect(req, &s->io, res->ai_addr, step_connected);
    freeaddrinfo(res);
    if (rc < 0) {
        free(req);
        return loom_errf(err, -LOOM_ECONNECT, "cannot connect to srun: %s", uv_strerror(rc));
    }
    return 0;
}

/* ------------------------------------------------------------ stepd.sock */

static int step_on_signal(loom_step_t *s, const json_t *req, loom_err_t *err)
{
    static const char *const ends[] = {"cancel", "timeout", "requeue", "node_fail", "preempt"};
    const char *reason = json_string_value(json_object_get(req, "reason"));
    int kill_wait = (int)json_integer_value(json_object_get(req, "kill_wait"));
    for (size_t i = 0; reason && i < sizeof(ends) / sizeof(ends[0]); i++) {
        if (strcmp(reason, ends[i]) == 0) {
            loom_step_terminate(s, ends[i], kill_wait, 0);
            return 0;
        }
    }
    json_t *sig = json_object_get(req, "signal");
    if (!json_is_integer(sig) || json_integer_value(sig) <= 0 || json_integer_value(sig) >= NSIG)
        return loom_errf(err, -LOOM_EPROTO, "stepd.signal needs a signal number");
    /* --batch signals are for the batch shell, not for steps. */
    if (json_is_true(json_object_get(req, "batch_only")))
        return 0;
    loom_step_signal_tasks(s, (int)json_integer_value(sig));
    return 0;
}

static void step_on_msg(loom_conn_t *c, json_t *msg, bool authed, void *arg)
{
    loom_step_t *s = arg;
    loom_err_t err = {0};
    const char *type = json_string_value(json_object_get(msg, "type"));
    json_t *extra = NULL;
    int rc = 0;
    if (type && strcmp(type, "stepd.signal") == 0)
        rc = step_on_signal(s, msg, &err);
    else if (type && strcmp(type, "stepd.usage") == 0)
        extra = loom_step_tasks_usage(s);
    else if (!type || strcmp(type, "ping") != 0)
        rc = loom_errf(&err, -LOOM_EMSG_TYPE, "a step supervisor does not handle '%s'",
                       type ? type : "(none)");
    json_t *reply = loom_msg_reply(msg, rc, "%s", err.msg);
    if (reply) {
        json_object_set_new(reply, "done", json_boolean(s->done));
        if (extra)
            json_object_update(reply, extra);
        loom_conn_send(c, reply);
        json_decref(reply);
    } else {
        loom_conn_close(c);
    }
    json_decref(extra);
}

static void step_client_closed(loom_conn_t *c, int status, void *arg)
{
    loom_step_t *s = arg;
    for (size_t i = 0; i < LOOM_STEP_MAX_CLIENTS; i++)
        if (s->clients[i] == c)
            s->clients[i] = NULL;
}

static void step_free_handle(uv_handle_t *h)
{
    free(h);
}

static void step_on_connection(uv_stream_t *server, int status)
{
    loom_step_t *s = server->data;
    size_t slot = 0;
    if (status < 0)
        return;
    while (slot < LOOM_STEP_MAX_CLIENTS && s->clients[slot])
        slot++;
    uv_pipe_t *client = loom_xcalloc(1, sizeof(*client));
    uv_pipe_init(s->loop, client, 0);
    /* Security: stepd.sock is 0600 in a 0700/0711 dir: only loomd's user connects. */
    if (uv_accept(server, (uv_stream_t *)client) < 0 || slot == LOOM_STEP_MAX_CLIENTS) {
        uv_close((uv_handle_t *)client, step_free_handle);
        return;
    }
    loom_conn_opts_t o = {.on_msg = step_on_msg, .on_close = step_client_closed, .arg = s};
    s->clients[slot] = loom_conn_create((uv_stream_t *)client, &o);
}

static int step_listen(loom_step_t *s, loom_err_t *err)
{
    char path[4096];
    snprintf(path, sizeof(path), "%s/stepd.sock", s->dir);
    unlink(path);
    uv_pipe_init(s->loop, &s->server, 0);
    s->server.data = s;
    s->server_open = true;
    mode_t old = umask(077);
    int rc = uv_pipe_bind(&s->server, path);
    umask(old);
    if (rc == 0)
        rc = uv_listen((uv_stream_t *)&s->server, 16, step_on_connection);
    if (rc < 0)
        return loom_errf(err, -LOOM_ECONNECT, "cannot listen on %s: %s", path, uv_strerror(rc));
    return 0;
}

/* ---------------------------------------------------------------- ending */

static void step_close_walk(uv_handle_t *h, void *arg)
{
    loom_uv_close_once(h, NULL);
}

/* Remove the dir and stop. */
static void step_cleanup(loom_step_t *s)
{
    static const char *const files[] = {"stepd.sock", "spec.json"};
    char path[4096];
    for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
        snprintf(path, sizeof(path), "%s/%s", s->dir, files[i]);
        unlink(path);
    }
    if (rmdir(s->dir) < 0 && errno != ENOENT)
        loom_error("step %u.%u: cannot remove %s: %s", s->job_id, s->step_id, s->dir,
                   strerror(errno));
    loom_devcg_release(s->devcg); /* the tasks have ended */
    s->devcg = NULL;
    loom_cgroup_forget(s->cgroup); /* the job's: its supervisor removes it */
    s->cgroup = NULL;
    for (size_t i = 0; i < LOOM_STEP_MAX_CLIENTS; i++)
        loom_conn_close(s->clients[i]);
    loom_conn_close(s->loomd); /* a report in flight */
    s->loomd = NULL;
    loom_step_tasks_close(s);
    loom_gather_destroy(s->gather);
    s->gather = NULL;
    json_decref(s->usage);
    s->usage = NULL;
    uv_walk(s->loop, step_close_walk, NULL);
}

/* The highest task status, as srun ranks them (exit code, 128+signal). */
static int step_status(const loom_step_t *s)
{
    int best = 0, status = 0;
    for (uint32_t i = 0; i < s->ntasks; i++) {
        int st = s->tasks[i].status;
        int code = WIFEXITED(st) ? WEXITSTATUS(st) : WIFSIGNALED(st) ? 128 + WTERMSIG(st) : 0;
        if (code > best) {
            best = code;
            status = st;
        }
    }
    return status;
}

/* Everything is reported to srun (or nobody listens) and loomd has the
 * end: go. */
static void step_finish(loom_step_t *s)
{
    if (s->finished)
        return;
    s->finished = true;
    step_cleanup(s);
}

/* loomd has the end (or did not answer in time): tell srun, then go once
 * the output is flushed. */
static void step_reported(loom_step_t *s)
{
    if (s->reported)
        return;
    s->reported = true;
    if (s->report_timer.data)
        uv_timer_stop(&s->report_timer);
    if (s->loomd) {
        loom_conn_t *c = s->loomd;
        s->loomd = NULL;
        loom_conn_close(c);
    }
    json_t *m = json_object();
    loom_step_send_json(s, LOOM_STEPIO_DONE, LOOM_STEPIO_ALL, m);
    json_decref(m);
    if (s->io_queued == 0 || s->io_lost)
        step_finish(s);
}

static void step_report_replied(void *arg, json_t *reply)
{
    step_reported(arg);
}

static void step_report_due(uv_timer_t *t)
{
    loom_step_t *s = t->data;
    loom_verbose("step %u.%u: loomd did not answer the end report in time", s->job_id, s->step_id);
    step_reported(s);
}

static void step_report_closed(loom_conn_t *c, int status, void *arg)
{
    loom_step_t *s = arg;
    if (s->loomd == c)
        s->loomd = NULL;
}

static void step_report_connected(void *arg, loom_conn_t *c, int status)
{
    loom_step_t *s = arg;
    if (status < 0 || s->reported) {
        if (c)
            loom_conn_close(c);
        step_reported(s);
        return;
    }
    s->loomd = c;
    json_t *req = json_pack("{s:i, s:s, s:i, s:I, s:I, s:i}", "v", LOOM_PROTO_VERSION, "type",
                            "stepd.step_done", "id", 0, "job_id", (json_int_t)s->job_id, "step_id",
                            (json_int_t)s->step_id, "exit_code", step_status(s));
    if (s->usage)
        json_object_set(req, "usage", s->usage);
    if (s->oom)
        json_object_set_new(req, "oom", json_true());
    if (loom_conn_request(c, req, step_report_replied, s) < 0)
        step_reported(s);
    json_decref(req);
}

/* Every task has ended: the end and the node's usage to loomd, which tells
 * the controller (the step ends there even when srun is gone) before it
 * answers, so srun's step.complete never overtakes the usage. */
static void step_report(loom_step_t *s)
{
    if (s->gather && !s->usage)
        s->usage = loom_gather_summary(s->gather, true);
    const char *sock = step_jstr(s->node, "loomd_sock");
    loom_conn_opts_t o = {.on_close = step_report_closed, .arg = s};
    if (s->report_timer.data) /* not before step_handles (a spec that failed to load) */
        uv_timer_start(&s->report_timer, step_report_due, STEP_REPORT_MS, 0);
    if (!sock || loom_conn_pipe_connect(s->loop, sock, &o, step_report_connected, s) < 0)
        step_reported(s);
}

/* ------------------------------------------------------------------ setup */

static int step_user(loom_step_t *s, loom_err_t *err)
{
    s->uid = (uid_t)json_integer_value(json_object_get(s->body, "uid"));
    s->gid = (gid_t)json_integer_value(json_object_get(s->body, "gid"));
    if (s->uid == 0 && !s->allow_root)
        return loom_errf(err, -LOOM_EPERM,
                         "refusing to run a step as root (loomd needs --allow-root-jobs)");
    const char *name = step_jstr(s->body, "user");
    struct passwd *pw = name ? NULL : getpwuid(s->uid);
    s->user = loom_xstrdup(name ? name : pw ? pw->pw_name : "nobody");
    if (geteuid() != 0 && s->uid != geteuid())
        loom_info("step %u.%u: not root: running as uid %u instead of %u", s->job_id, s->step_id,
                  (unsigned)geteuid(), (unsigned)s->uid);
    return 0;
}

static int step_load(loom_step_t *s, loom_err_t *err)
{
    s->body = json_object_get(s->spec, "step");
    s->node = json_object_get(s->spec, "node");
    s->job_id = (uint32_t)json_integer_value(json_object_get(s->body, "job_id"));
    s->step_id = (uint32_t)json_integer_value(json_object_get(s->body, "step_id"));
    s->node_id = (uint32_t)json_integer_value(json_object_get(s->body, "node_id"));
    s->node_name = step_jstr(s->node, "name");
    s->step_ntasks = (uint32_t)json_integer_value(json_object_get(s->body, "ntasks"));
    const json_t *ranks = json_object_get(s->body, "ranks");
    if (!s->job_id || !s->node_name || !json_is_array(ranks))
        return loom_errf(err, -LOOM_EPROTO, "the step spec lacks job_id, ranks or node.name");
    s->ntasks = (uint32_t)json_array_size(ranks);
    s->tasks = loom_xcalloc(s->ntasks ? s->ntasks : 1, sizeof(*s->tasks));
    for (uint32_t i = 0; i < s->ntasks; i++) {
        s->tasks[i].step = s;
        s->tasks[i].local = i;
        s->tasks[i].rank = (uint32_t)json_integer_value(json_array_get(ranks, i));
        s->tasks[i].pty_master = -1;
        s->tasks[i].pmi_fd = -1;
    }
    return step_user(s, err);
}

static void step_warn_due(uv_timer_t *t)
{
    loom_step_t *s = t->data;
    int sig = (int)json_integer_value(json_object_get(json_object_get(s->body, "warn"), "signal"));
    loom_info("step %u.%u: sending signal %d (--signal) to the tasks", s->job_id, s->step_id, sig);
    loom_step_signal_tasks(s, sig);
}

/* The job's --signal=SIG@TIME: SIG to the tasks at "at" (epoch seconds). */
static void step_arm_warn(loom_step_t *s)
{
    const json_t *w = json_object_get(s->body, "warn");
    int sig = (int)json_integer_value(json_object_get(w, "signal"));
    int64_t at = (int64_t)json_integer_value(json_object_get(w, "at"));
    if (sig <= 0 || sig >= NSIG || at <= 0)
        return;
    int64_t due = at - (int64_t)time(NULL);
    uv_timer_start(&s->warn_timer, step_warn_due, due > 0 ? (uint64_t)due * 1000 : 0, 0);
}

/* The tasks run in their job's cgroup (the batch supervisor or the
 * allocation's made it, with the job's limits; or this step makes it first):
 * the job's memory limit holds for them and ending the job kills them. */
static void step_join_job_cgroup(loom_step_t *s)
{
    loom_err_t err = {0};
    if (loom_cgroup_for_job(s->node, s->job_id, NULL, 0, &s->cgroup, &err) < 0)
        loom_debug("step %u.%u: not in a job cgroup: %s", s->job_id, s->step_id, err.msg);
    else
        s->oom_base = loom_cgroup_oom_kills(s->cgroup);
}

/* With ConstrainDevices the tasks (forked from here) may open only the
 * step's GPUs' device files (cgroup.h: loom_cgroup_confine_gpus). */
static void step_confine_gpus(loom_step_t *s)
{
    const json_t *mine = json_object_get(s->body, "gpus");
    uint32_t *allowed = loom_xcalloc(json_array_size(mine) + 1, sizeof(uint32_t));
    size_t na = 0;
    for (size_t i = 0; i < json_array_size(mine); i++)
        allowed[na++] = (uint32_t)json_integer_value(json_array_get(mine, i));
    loom_err_t err = {0};
    if (loom_cgroup_confine_gpus(s->node, s->cgroup, s->job_id, s->step_id, allowed, na, &s->devcg,
                                 &err) < 0 &&
        err.code != -ENOTSUP)
        loom_verbose("step %u.%u: GPUs not confined: %s", s->job_id, s->step_id, err.msg);
    free(allowed);
}

static void step_handles(loom_step_t *s)
{
    uv_signal_init(s->loop, &s->sigchld);
    s->sigchld.data = s;
    uv_signal_start(&s->sigchld, step_sigchld, SIGCHLD);
    uv_timer_init(s->loop, &s->kill_timer);
    uv_timer_init(s->loop, &s->linger_timer);
    uv_timer_init(s->loop, &s->report_timer);
    s->report_timer.data = s;
    uv_timer_init(s->loop, &s->warn_timer);
    s->warn_timer.data = s;
    s->kill_timer.data = s->linger_timer.data = s;
}

int loom_step_main(uv_loop_t *loop, const char *dir, json_t *spec, bool allow_root)
{
    loom_step_t s = {.loop = loop,
                     .dir = loom_xstrdup(dir),
                     .allow_root = allow_root,
                     .spec = spec,
                     .reason = ""};
    loom_err_t err = {0};
    s.start_time = (int64_t)time(NULL);
    int rc = step_load(&s, &err);
    if (rc == 0) {
        step_handles(&s);
        rc = step_listen(&s, &err);
    }
    if (rc == 0) {
        s.pmi = loom_pmi2_create(&s);
        rc = step_connect(&s, &err);
    }
    if (rc < 0) {
        loom_error("step %u.%u: %s", s.job_id, s.step_id, err.msg);
        s.done = true;
        step_report(&s);
    }
    uv_run(loop, UV_RUN_DEFAULT);
    loom_pmi2_destroy(s.pmi);
    loom_sbuf_free(&s.io_in);
    free(s.tasks);
    free(s.user);
    free(s.dir);
    return rc < 0 ? 1 : 0;
}
