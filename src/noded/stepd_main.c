/*
 * stepd_main.c - loomstepd: life cycle of one job's supervisor. See stepd.h.
 *
 * Usage: loomstepd [-v] [-L logfile] [--allow-root-jobs] <jobdir>
 *
 * The supervisor is started by loomd but does not depend on it: it is a
 * session leader, child-subreaper of the job's orphans, and reports the end
 * of the job to whichever loomd listens on <spool>/loomd.sock, retrying with
 * a growing delay until one acknowledges (loomd acknowledges once the
 * controller has taken the completion). Only then is the job dir removed, so
 * a restarted loomd always finds every unreported job.
 */
#include "noded/stepd.h"
#include "noded/stepd_step.h"

#include "common/jobstate.h"
#include "common/log.h"
#include "common/proto.h"
#include "common/sbuf.h"
#include "common/xalloc.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define STEPD_RETRY_FIRST_MS 100
#define STEPD_RETRY_MAX_MS   5000
#define STEPD_WATCH_MS       5000

static void stepd_report(loom_stepd_t *s);

static void stepd_path(const loom_stepd_t *s, const char *name, char *out, size_t size)
{
    snprintf(out, size, "%s/%s", s->job_dir, name);
}

/* ------------------------------------------------------------ status.json */

/* tmp + rename: a reader sees the whole file or none. No fsync: the file
 * outlives a crash of loomd or of this process, which is what it is for; a
 * crash of the host ends the job anyway (node failure). */
static int stepd_write_status(loom_stepd_t *s)
{
    char tmp[4096], path[4096];
    stepd_path(s, "status.json.tmp", tmp, sizeof(tmp));
    stepd_path(s, "status.json", path, sizeof(path));
    json_t *st = json_pack("{s:I, s:i, s:I, s:s, s:i}", "job_id", (json_int_t)s->job_id,
                           "exit_code", s->status, "end_time", (json_int_t)s->end_time, "reason",
                           s->reason, "stepd_pid", (int)getpid());
    if (s->usage)
        json_object_set(st, "usage", s->usage);
    int rc = -EIO;
    int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (fd >= 0) {
        char *text = json_dumps(st, JSON_COMPACT);
        size_t len = strlen(text);
        if (write(fd, text, len) == (ssize_t)len)
            rc = 0;
        free(text);
        close(fd);
    }
    if (rc == 0 && rename(tmp, path) < 0)
        rc = -errno;
    json_decref(st);
    if (rc < 0)
        loom_error("stepd job %u: cannot write %s: %s", s->job_id, path, strerror(-rc));
    return rc;
}

/* ---------------------------------------------------------------- cleanup */

static void stepd_close_walk(uv_handle_t *h, void *arg)
{
    loom_uv_close_once(h, NULL);
}

/* Remove the job dir (status.json last: see loomd's scan) and stop. */
static void stepd_cleanup(loom_stepd_t *s)
{
    uv_timer_stop(&s->watch_timer);
    static const char *const files[] = {"stepd.sock", "script", "spec.json", "status.json"};
    char path[4096];
    for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
        stepd_path(s, files[i], path, sizeof(path));
        unlink(path);
    }
    if (rmdir(s->job_dir) < 0 && errno != ENOENT)
        loom_error("stepd job %u: cannot remove %s: %s", s->job_id, s->job_dir, strerror(errno));
    loom_devcg_release(s->devcg); /* before the job's: under v2 it is a child */
    s->devcg = NULL;
    loom_cgroup_destroy(s->cgroup);
    s->cgroup = NULL;
    loom_gather_destroy(s->gather);
    s->gather = NULL;
    json_decref(s->usage);
    s->usage = NULL;
    for (size_t i = 0; i < LOOM_STEPD_MAX_CLIENTS; i++)
        loom_conn_close(s->clients[i]);
    loom_conn_close(s->loomd); /* a report in flight (the job dir was removed) */
    s->loomd = NULL;
    uv_walk(s->loop, stepd_close_walk, NULL);
}

/* Someone removed the job dir (an administrator, or a test tearing down its
 * cluster): nobody can ever collect this job, so end it and go. */
static void stepd_watch(uv_timer_t *t)
{
    loom_stepd_t *s = t->data;
    char path[4096];
    stepd_path(s, "spec.json", path, sizeof(path));
    if (access(path, F_OK) == 0 || errno != ENOENT)
        return;
    loom_error("stepd job %u: %s was removed; ending the job without a report", s->job_id,
               s->job_dir);
    if (s->pid)
        loom_stepd_deliver(s, SIGKILL, LOOM_STEPD_ALL);
    s->done = true;
    stepd_cleanup(s);
}

/* -------------------------------------------------------------- reporting */

static void stepd_retry_due(uv_timer_t *t)
{
    stepd_report(t->data);
}

static void stepd_retry(loom_stepd_t *s)
{
    uv_timer_start(&s->retry_timer, stepd_retry_due, (uint64_t)s->retry_ms, 0);
    s->retry_ms = s->retry_ms * 2 > STEPD_RETRY_MAX_MS ? STEPD_RETRY_MAX_MS : s->retry_ms * 2;
}

static void stepd_acked(void *arg, json_t *reply)
{
    loom_stepd_t *s = arg;
    const char *msg = NULL;
    int rc = reply ? loom_msg_rc(reply, &msg) : -LOOM_ECONNECT;
    if (s->loomd) {
        loom_conn_close(s->loomd);
        s->loomd = NULL;
    }
    if (rc == 0) {
        loom_debug("stepd job %u: completion acknowledged", s->job_id);
        stepd_cleanup(s);
        return;
    }
    if (reply)
        loom_error("stepd job %u: loomd refused the completion: %s", s->job_id, msg);
    stepd_retry(s);
}

static void stepd_loomd_closed(loom_conn_t *c, int status, void *arg)
{
    loom_stepd_t *s = arg;
    if (s->loomd == c)
        s->loomd = NULL;
}

static void stepd_loomd_connected(void *arg, loom_conn_t *c, int status)
{
    loom_stepd_t *s = arg;
    if (status < 0) {
        stepd_retry(s);
        return;
    }
    s->loomd = c;
    json_t *req =
        json_pack("{s:i, s:s, s:i, s:I, s:i, s:I, s:s, s:I}", "v", LOOM_PROTO_VERSION, "type",
                  "stepd.done", "id", 0, "job_id", (json_int_t)s->job_id, "exit_code", s->status,
                  "end_time", (json_int_t)s->end_time, "reason", s->reason, "run",
                  json_integer_value(json_object_get(s->job, "restart_cnt")));
    if (s->usage)
        json_object_set(req, "usage", s->usage);
    if (loom_conn_request(c, req, stepd_acked, s) < 0)
        stepd_retry(s); /* the close callback already ran */
    json_decref(req);
}

static void stepd_report(loom_stepd_t *s)
{
    const char *sock = json_string_value(json_object_get(s->node, "loomd_sock"));
    loom_conn_opts_t o = {.on_close = stepd_loomd_closed, .arg = s};
    if (!sock || loom_conn_pipe_connect(s->loop, sock, &o, stepd_loomd_connected, s) < 0)
        stepd_retry(s);
}

/* What slurmstepd writes to the job's stderr when the kernel's OOM killer
 * acted in the job's cgroup (users and tools look for "oom-kill"). */
static void stepd_oom_line(const loom_stepd_t *s, int ooms)
{
    if (s->err_fd < 0)
        return;
    dprintf(s->err_fd,
            "slurmstepd-%s: error: Detected %d oom-kill event(s) in StepId=%u.batch cgroup. "
            "Some of your processes may have been killed by the cgroup out-of-memory handler.\n",
            s->node_name, ooms, s->job_id);
}

/* The job is over: record it and start reporting. */
void loom_stepd_finish(loom_stepd_t *s)
{
    if (s->done)
        return;
    s->done = true;
    uv_timer_stop(&s->kill_timer);
    uv_timer_stop(&s->signal_timer);
    int ooms = s->cgroup ? loom_cgroup_oom_kills(s->cgroup) : 0;
    if (ooms > 0 && !s->reason[0]) {
        s->reason = "oom";
        s->status = LOOM_EXIT_OOM; /* ExitCode 0:125, as slurmstepd reports it */
    }
    if (ooms > 0)
        stepd_oom_line(s, ooms);
    if (s->gather && !s->usage)
        s->usage = loom_gather_summary(s->gather, true);
    if (s->err_fd >= 0) {
        close(s->err_fd);
        s->err_fd = -1;
    }
    loom_verbose("stepd job %u: ended with status 0x%x%s%s", s->job_id, (unsigned)s->status,
                 s->reason[0] ? ", reason " : "", s->reason);
    stepd_write_status(s);
    s->retry_ms = STEPD_RETRY_FIRST_MS;
    stepd_report(s);
}

/* ------------------------------------------------------------ the children */

static void stepd_sigchld(uv_signal_t *h, int signum)
{
    loom_stepd_t *s = h->data;
    int status;
    pid_t pid;
    struct rusage ru;
    /* As subreaper we also collect the job's orphans (their CPU counts too). */
    while ((pid = wait4(-1, &status, WNOHANG, &ru)) > 0) {
        loom_gather_reaped(s->gather, 0, &ru);
        if (pid != s->pid)
            continue;
        s->pid = 0;
        s->status = status;
        s->end_time = (int64_t)time(NULL);
        loom_stepd_kill_rest(s);
        loom_stepd_finish(s);
    }
}

/* ------------------------------------------------------------ stepd.sock */

static void stepd_on_msg(loom_conn_t *c, json_t *msg, bool authed, void *arg)
{
    loom_stepd_t *s = arg;
    loom_err_t err = {0};
    const char *type = json_string_value(json_object_get(msg, "type"));
    int rc;
    json_t *usage = NULL;
    if (type && strcmp(type, "stepd.signal") == 0)
        rc = loom_stepd_signal(s, msg, &err);
    else if (type && strcmp(type, "stepd.usage") == 0 && (s->usage || s->gather)) {
        rc = 0; /* sstat J.batch: the figures so far (or the final ones) */
        usage = s->usage ? json_incref(s->usage) : loom_gather_summary(s->gather, false);
    } else if (type && strcmp(type, "ping") == 0)
        rc = 0;
    else
        rc = loom_errf(&err, -LOOM_EMSG_TYPE, "loomstepd does not handle '%s'",
                       type ? type : "(none)");
    json_t *reply = loom_msg_reply(msg, rc, "%s", err.msg);
    if (reply) {
        json_object_set_new(reply, "done", json_boolean(s->done));
        if (usage)
            json_object_update(reply, usage);
        loom_conn_send(c, reply);
        json_decref(reply);
    } else {
        loom_conn_close(c);
    }
    json_decref(usage);
}

static void stepd_client_closed(loom_conn_t *c, int status, void *arg)
{
    loom_stepd_t *s = arg;
    for (size_t i = 0; i < LOOM_STEPD_MAX_CLIENTS; i++)
        if (s->clients[i] == c)
            s->clients[i] = NULL;
}

static void stepd_free_handle(uv_handle_t *h)
{
    free(h);
}

static void stepd_on_connection(uv_stream_t *server, int status)
{
    loom_stepd_t *s = server->data;
    size_t slot = 0;
    if (status < 0)
        return;
    while (slot < LOOM_STEPD_MAX_CLIENTS && s->clients[slot])
        slot++;
    uv_pipe_t *client = loom_xcalloc(1, sizeof(*client));
    uv_pipe_init(s->loop, client, 0);
    /* Only loomd connects here; a full table means something is stuck. */
    if (uv_accept(server, (uv_stream_t *)client) < 0 || slot == LOOM_STEPD_MAX_CLIENTS) {
        uv_close((uv_handle_t *)client, stepd_free_handle);
        return;
    }
    loom_conn_opts_t o = {.on_msg = stepd_on_msg, .on_close = stepd_client_closed, .arg = s};
    s->clients[slot] = loom_conn_create((uv_stream_t *)client, &o);
}

static int stepd_listen(loom_stepd_t *s, loom_err_t *err)
{
    char path[4096];
    stepd_path(s, "stepd.sock", path, sizeof(path));
    unlink(path);
    uv_pipe_init(s->loop, &s->server, 0);
    s->server.data = s;
    s->server_open = true;
    mode_t old = umask(077);
    int rc = uv_pipe_bind(&s->server, path);
    umask(old);
    if (rc == 0)
        rc = uv_listen((uv_stream_t *)&s->server, 16, stepd_on_connection);
    if (rc < 0)
        return loom_errf(err, -LOOM_ECONNECT, "cannot listen on %s: %s", path, uv_strerror(rc));
    return 0;
}

/* ------------------------------------------------------------------ setup */

static int stepd_read_spec(loom_stepd_t *s, loom_err_t *err)
{
    char path[4096];
    json_error_t jerr;
    stepd_path(s, "spec.json", path, sizeof(path));
    s->spec = json_load_file(path, JSON_REJECT_DUPLICATES, &jerr);
    if (!s->spec)
        return loom_errf(err, -LOOM_EPROTO, "cannot read %s: %s", path, jerr.text);
    return 0;
}

static int stepd_load(loom_stepd_t *s, loom_err_t *err)
{
    char path[4096];
    stepd_path(s, "spec.json", path, sizeof(path));
    s->job = json_object_get(s->spec, "job");
    s->node = json_object_get(s->spec, "node");
    s->job_id = (uint32_t)json_integer_value(json_object_get(s->job, "job_id"));
    s->node_name = json_string_value(json_object_get(s->node, "name"));
    if (!json_is_object(s->job) || !s->job_id || !s->node_name)
        return loom_errf(err, -LOOM_EPROTO, "%s lacks job.job_id or node.name", path);
    return 0;
}

static void stepd_handles(loom_stepd_t *s)
{
    uv_signal_init(s->loop, &s->sigchld);
    s->sigchld.data = s;
    uv_signal_start(&s->sigchld, stepd_sigchld, SIGCHLD);
    uv_timer_init(s->loop, &s->kill_timer);
    uv_timer_init(s->loop, &s->signal_timer);
    uv_timer_init(s->loop, &s->retry_timer);
    uv_timer_init(s->loop, &s->watch_timer);
    s->kill_timer.data = s->signal_timer.data = s->retry_timer.data = s->watch_timer.data = s;
    uv_timer_start(&s->watch_timer, stepd_watch, STEPD_WATCH_MS, STEPD_WATCH_MS);
}

/* The batch step's sampler: the processes of the script's session. */
static int stepd_owner(void *arg, const loom_procstat_t *p)
{
    const loom_stepd_t *s = arg;
    return s->sid > 0 && p->sid == s->sid ? 0 : -1;
}

/* This node's GPU device indexes in the job's alloc list. */
static uint32_t stepd_alloc_gpus(const loom_stepd_t *s, uint32_t *gpus, uint32_t max)
{
    uint32_t n = 0;
    size_t i, j, k;
    json_t *a, *g, *idx;
    json_array_foreach(json_object_get(s->job, "alloc"), i, a)
    {
        const char *node = json_string_value(json_object_get(a, "node"));
        if (!node || strcmp(node, s->node_name) != 0)
            continue;
        json_array_foreach(json_object_get(a, "gres"), j, g)
        {
            const char *name = json_string_value(json_object_get(g, "name"));
            if (!name || strcmp(name, "gpu") != 0)
                continue;
            json_array_foreach(json_object_get(g, "index"), k, idx)
            {
                if (n < max)
                    gpus[n++] = (uint32_t)json_integer_value(idx);
            }
        }
    }
    return n;
}

static void stepd_gather(loom_stepd_t *s)
{
    uint32_t gpus[256];
    if (s->alloc || s->pid == 0)
        return;
    uint32_t ngpus = stepd_alloc_gpus(s, gpus, 256);
    loom_gather_opts_t o = {.node = s->node,
                            .node_name = s->node_name,
                            .ntasks = 1,
                            .gpus = gpus,
                            .ngpus = ngpus,
                            .cgroup_dir = s->cgroup ? loom_cgroup_path(s->cgroup) : NULL,
                            .owner = stepd_owner,
                            .arg = s};
    s->gather = loom_gather_create(s->loop, &o);
    loom_gather_start(s->gather);
}

static int stepd_usage(void)
{
    fprintf(stderr, "Usage: loomstepd [-v] [-L logfile] [--allow-root-jobs] <jobdir>\n");
    return 1;
}

static int stepd_args(int argc, char **argv, loom_stepd_t *s, const char **log, int *verbose)
{
    static const struct option longopts[] = {{"allow-root-jobs", no_argument, NULL, 'R'},
                                             {"version", no_argument, NULL, 'V'},
                                             {NULL, 0, NULL, 0}};
    int c;
    while ((c = getopt_long(argc, argv, "vL:V", longopts, NULL)) != -1) {
        switch (c) {
        case 'v':
            (*verbose)++;
            break;
        case 'L':
            *log = optarg;
            break;
        case 'R':
            s->allow_root = true;
            break;
        case 'V':
            printf("slurm %s\n", LOOM_SLURM_VERSION);
            exit(0);
        default:
            return -1;
        }
    }
    if (optind != argc - 1)
        return -1;
    s->job_dir = argv[optind];
    return 0;
}

int main(int argc, char **argv)
{
    loom_stepd_t s = {.err_fd = -1, .reason = ""};
    const char *log = NULL;
    int verbose = 0;
    if (stepd_args(argc, argv, &s, &log, &verbose) < 0)
        return stepd_usage();
    setsid();
    prctl(PR_SET_CHILD_SUBREAPER, 1);
    signal(SIGPIPE, SIG_IGN);
    signal(SIGHUP, SIG_IGN);
    loom_log_init("loomstepd", (loom_log_level_t)(LOOM_LOG_INFO + verbose), log, true);
    uv_loop_t loop;
    uv_loop_init(&loop);
    s.loop = &loop;
    loom_err_t err = {0};
    if (stepd_read_spec(&s, &err) < 0) {
        loom_error("loomstepd %s: %s", s.job_dir, err.msg);
        return 1;
    }
    if (json_object_get(s.spec, "step")) {
        int src = loom_step_main(&loop, s.job_dir, s.spec, s.allow_root);
        uv_loop_close(&loop);
        json_decref(s.spec);
        loom_log_close();
        return src;
    }
    if (stepd_load(&s, &err) < 0) {
        loom_error("loomstepd %s: %s", s.job_dir, err.msg);
        return 1;
    }
    stepd_handles(&s);
    int rc = stepd_listen(&s, &err);
    if (rc == 0)
        rc = loom_stepd_start(&s, &err);
    if (rc < 0) {
        loom_error("stepd job %u: launch failed: %s", s.job_id, err.msg);
        s.status = 1 << 8;
        s.end_time = (int64_t)time(NULL);
        s.reason = "launch_failed";
        if (s.pid == 0)
            loom_stepd_finish(&s);
        /* else the child exits 127 and SIGCHLD finishes the job */
    } else {
        loom_stepd_arm_signal(&s);
        stepd_gather(&s);
    }
    uv_run(&loop, UV_RUN_DEFAULT);
    uv_loop_close(&loop);
    json_decref(s.spec);
    free(s.user);
    loom_log_close();
    return 0;
}
