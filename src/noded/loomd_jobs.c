/*
 * loomd_jobs.c - launching, signalling and reporting jobs on this node
 * (messages.md §4 job.launch/job.kill/job.complete, §5 stepd.*).
 *
 * Launch is on the hot path: write spec.json, posix_spawn loomstepd, reply.
 * Nothing else happens until the supervisor reports. A completion travels
 * stepd.done → job.complete → (controller ack) → reply to the supervisor,
 * which then removes the job dir; see noded.h for the job states.
 */
#include "noded/noded.h"

#include "common/log.h"
#include "common/proto.h"
#include "common/sbuf.h"
#include "common/usage.h"
#include "common/xalloc.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define JOBS_KILL_TRIES    50 /* x 100 ms: a supervisor still starting up */
#define JOBS_FAILED_STATUS (1 << 8)

extern char **environ;

/* ------------------------------------------------------------------ table */

static loom_noded_job_t *jobs_find(const loom_noded_t *n, uint32_t id)
{
    for (loom_noded_job_t *j = n->jobs; j; j = j->next)
        if (j->job_id == id)
            return j;
    return NULL;
}

static loom_noded_job_t *jobs_add(loom_noded_t *n, uint32_t id, loom_njob_state_t state)
{
    loom_noded_job_t *j = loom_xcalloc(1, sizeof(*j));
    j->job_id = id;
    j->state = state;
    j->next = n->jobs;
    n->jobs = j;
    return j;
}

static void jobs_remove(loom_noded_t *n, loom_noded_job_t *job)
{
    for (loom_noded_job_t **pp = &n->jobs; *pp; pp = &(*pp)->next) {
        if (*pp == job) {
            *pp = job->next;
            json_decref(job->stepd_req);
            json_decref(job->usage);
            free(job);
            return;
        }
    }
}

void loom_noded_jobs_free(loom_noded_t *n)
{
    while (n->jobs)
        jobs_remove(n, n->jobs);
}

static void jobs_path(const loom_noded_t *n, uint32_t id, uint32_t run, const char *file, char *out,
                      size_t size)
{
    char dir[64];
    if (run)
        snprintf(dir, sizeof(dir), "job%u.%u", (unsigned)id, (unsigned)run);
    else
        snprintf(dir, sizeof(dir), "job%u", (unsigned)id);
    snprintf(out, size, "%s/%s%s%s", n->spool, dir, file ? "/" : "", file ? file : "");
}

/* Remove a job dir whose supervisor is gone. */
static void jobs_remove_dir(const loom_noded_t *n, uint32_t id, uint32_t run)
{
    static const char *const files[] = {"stepd.sock",    "script",          "spec.json",
                                        "spec.json.tmp", "status.json.tmp", "status.json"};
    char path[4096];
    for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
        jobs_path(n, id, run, files[i], path, sizeof(path));
        unlink(path);
    }
    jobs_path(n, id, run, NULL, path, sizeof(path));
    if (rmdir(path) < 0 && errno != ENOENT)
        loom_error("cannot remove %s: %s", path, strerror(errno));
}

/* The batch step's usage from a supervisor's report (kept for job.complete). */
static void jobs_set_usage(loom_noded_job_t *job, const json_t *from)
{
    json_t *u = json_object_get(from, "usage");
    if (json_is_object(u)) {
        json_decref(job->usage);
        job->usage = json_incref(u);
    }
}

static void jobs_set_end(loom_noded_job_t *job, int status, int64_t end, const char *reason)
{
    job->exit_code = status;
    job->end_time = end;
    snprintf(job->reason, sizeof(job->reason), "%s", reason ? reason : "");
}

/* Read status.json of a job dir; 0 when it is there and complete. */
static int jobs_read_status(const loom_noded_t *n, loom_noded_job_t *job, pid_t *stepd_pid)
{
    char path[4096];
    jobs_path(n, job->job_id, job->run, "status.json", path, sizeof(path));
    json_t *st = json_load_file(path, 0, NULL);
    if (!st)
        return -ENOENT;
    jobs_set_end(job, (int)json_integer_value(json_object_get(st, "exit_code")),
                 (int64_t)json_integer_value(json_object_get(st, "end_time")),
                 json_string_value(json_object_get(st, "reason")));
    *stepd_pid = (pid_t)json_integer_value(json_object_get(st, "stepd_pid"));
    jobs_set_usage(job, st);
    json_decref(st);
    return 0;
}

static bool jobs_pid_alive(pid_t pid)
{
    return pid > 0 && (kill(pid, 0) == 0 || errno == EPERM);
}

/* Does a supervisor answer on the job's stepd.sock? (local, so blocking is fine) */
static bool jobs_stepd_alive(const loom_noded_t *n, uint32_t id, uint32_t run)
{
    struct sockaddr_un a = {.sun_family = AF_UNIX};
    jobs_path(n, id, run, "stepd.sock", a.sun_path, sizeof(a.sun_path));
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return false;
    bool alive = connect(fd, (struct sockaddr *)&a, sizeof(a)) == 0;
    close(fd);
    return alive;
}

int loom_noded_job_sock(const loom_noded_t *n, uint32_t job_id, char *out, size_t size)
{
    const loom_noded_job_t *j = jobs_find(n, job_id);
    if (!j || j->state != LOOM_NJOB_RUNNING)
        return -ENOENT;
    jobs_path(n, job_id, j->run, "stepd.sock", out, size);
    return 0;
}

void loom_noded_jobs_list(const loom_noded_t *n, json_t *arr)
{
    for (const loom_noded_job_t *j = n->jobs; j; j = j->next) {
        if (j->state == LOOM_NJOB_ACKED)
            continue;
        json_t *o =
            json_pack("{s:I, s:I}", "job_id", (json_int_t)j->job_id, "run", (json_int_t)j->run);
        if (j->state == LOOM_NJOB_RUNNING) {
            json_object_set_new(o, "state", json_string("running"));
        } else {
            json_object_set_new(o, "state", json_string("done"));
            json_object_set_new(o, "exit_code", json_integer(j->exit_code));
            json_object_set_new(o, "end_time", json_integer(j->end_time));
            json_object_set_new(o, "reason", json_string(j->reason));
        }
        json_array_append_new(arr, o);
    }
}

/* ------------------------------------------------------------- completion */

static void jobs_reply(loom_conn_t *c, json_t *req, int rc, const char *msg)
{
    json_t *reply = loom_msg_reply(req, rc, "%s", msg ? msg : "");
    if (reply) {
        loom_conn_send(c, reply);
        json_decref(reply);
    }
}

/* The controller has the completion: let the supervisor clean up. */
static void jobs_acked(loom_noded_t *n, loom_noded_job_t *job)
{
    job->state = LOOM_NJOB_ACKED;
    if (job->stepd) {
        jobs_reply(job->stepd, job->stepd_req, 0, NULL);
        jobs_remove(n, job);
    } else if (job->orphan) {
        jobs_remove_dir(n, job->job_id, job->run);
        jobs_remove(n, job);
    }
    /* else: a supervisor that has not reported yet will collect the ack */
}

typedef struct jobs_complete {
    loom_noded_t *n;
    uint32_t job_id;
} jobs_complete_t;

static void jobs_complete_reply(void *arg, json_t *reply)
{
    jobs_complete_t *ctx = arg;
    loom_noded_t *n = ctx->n;
    loom_noded_job_t *job = jobs_find(n, ctx->job_id);
    free(ctx);
    if (!job || job->state != LOOM_NJOB_REPORTING)
        return;
    if (!reply) {
        job->state = LOOM_NJOB_DONE; /* sent again after the next registration */
        return;
    }
    const char *msg = NULL;
    int rc = loom_msg_rc(reply, &msg);
    /* Any answer means the controller knows (an unknown or finished job included). */
    if (rc < 0)
        loom_verbose("job.complete for job %u: %s", job->job_id, msg);
    jobs_acked(n, job);
}

static void jobs_send_complete(loom_noded_t *n, loom_noded_job_t *job)
{
    json_t *req = loom_msg_new("job.complete", 0);
    json_object_set_new(req, "job_id", json_integer(job->job_id));
    json_object_set_new(req, "run", json_integer(job->run));
    json_object_set_new(req, "node", json_string(n->name));
    json_object_set_new(req, "exit_code", json_integer(job->exit_code));
    json_object_set_new(req, "end_time", json_integer(job->end_time));
    json_object_set_new(req, "reason", json_string(job->reason));
    if (job->usage)
        json_object_set(req, "usage", job->usage);
    jobs_complete_t *ctx = loom_xcalloc(1, sizeof(*ctx));
    ctx->n = n;
    ctx->job_id = job->job_id;
    if (loom_noded_ctl_request(n, req, jobs_complete_reply, ctx))
        job->state = LOOM_NJOB_REPORTING;
    else
        free(ctx);
    json_decref(req);
}

void loom_noded_jobs_resend(loom_noded_t *n)
{
    for (loom_noded_job_t *j = n->jobs; j; j = j->next)
        if (j->state == LOOM_NJOB_DONE)
            jobs_send_complete(n, j);
}

void loom_noded_jobs_unsent(loom_noded_t *n)
{
    for (loom_noded_job_t *j = n->jobs; j; j = j->next)
        if (j->state == LOOM_NJOB_REPORTING)
            j->state = LOOM_NJOB_DONE;
}

/* A job ended without its supervisor telling us (it died): record and report. */
static void jobs_lost_stepd(loom_noded_t *n, loom_noded_job_t *job)
{
    pid_t pid = 0;
    job->orphan = true;
    if (job->state != LOOM_NJOB_RUNNING)
        return;
    if (jobs_read_status(n, job, &pid) < 0) {
        loom_error("the supervisor of job %u vanished before the job ended", job->job_id);
        /* node_fail: the controller requeues it (or ends it NODE_FAIL), as
         * slurmctld does with a batch job its node no longer runs. */
        jobs_set_end(job, JOBS_FAILED_STATUS, (int64_t)time(NULL), "node_fail");
    }
    job->state = LOOM_NJOB_DONE;
    jobs_send_complete(n, job);
}

/* stepd.done from a supervisor: hold the request until the controller acks. */
static void jobs_stepd_done(loom_noded_t *n, loom_conn_t *c, json_t *msg)
{
    json_int_t id = json_integer_value(json_object_get(msg, "job_id"));
    if (id <= 0) {
        jobs_reply(c, msg, -LOOM_EPROTO, "stepd.done needs a job_id");
        return;
    }
    uint32_t run = (uint32_t)json_integer_value(json_object_get(msg, "run"));
    loom_noded_job_t *job = jobs_find(n, (uint32_t)id);
    if (job && job->run != run) {
        jobs_reply(c, msg, 0, NULL); /* an earlier run: the controller is past it */
        return;
    }
    if (job && job->state == LOOM_NJOB_ACKED) {
        jobs_reply(c, msg, 0, NULL);
        jobs_remove(n, job);
        return;
    }
    if (!job) {
        job = jobs_add(n, (uint32_t)id, LOOM_NJOB_DONE);
        job->run = run;
    }
    if (job->state == LOOM_NJOB_RUNNING || job->state == LOOM_NJOB_DONE)
        jobs_set_end(job, (int)json_integer_value(json_object_get(msg, "exit_code")),
                     (int64_t)json_integer_value(json_object_get(msg, "end_time")),
                     json_string_value(json_object_get(msg, "reason")));
    jobs_set_usage(job, msg);
    json_decref(job->stepd_req);
    job->stepd = c;
    job->stepd_req = json_incref(msg);
    job->orphan = false;
    if (job->state == LOOM_NJOB_RUNNING)
        job->state = LOOM_NJOB_DONE;
    if (job->state == LOOM_NJOB_DONE)
        jobs_send_complete(n, job);
}

static void jobs_stepd_msg(loom_conn_t *c, json_t *msg, bool authed, void *arg)
{
    const char *type = json_string_value(json_object_get(msg, "type"));
    if (type && strcmp(type, "stepd.done") == 0)
        jobs_stepd_done(arg, c, msg);
    else if (type && strcmp(type, "stepd.step_done") == 0)
        loom_noded_step_done(arg, c, msg);
    else if (type && (strcmp(type, "ping") == 0 || strcmp(type, "stepd.hello") == 0))
        jobs_reply(c, msg, 0, NULL);
    else
        jobs_reply(c, msg, -LOOM_EMSG_TYPE, "loomd.sock takes stepd.* messages");
}

static void jobs_stepd_closed(loom_conn_t *c, int status, void *arg)
{
    loom_noded_t *n = arg;
    for (loom_noded_job_t *j = n->jobs; j; j = j->next) {
        if (j->stepd == c) {
            j->stepd = NULL;
            json_decref(j->stepd_req);
            j->stepd_req = NULL;
        }
    }
    loom_noded_peer_remove(n, c);
}

static void jobs_free_handle(uv_handle_t *h)
{
    free(h);
}

static void jobs_stepd_connection(uv_stream_t *server, int status)
{
    loom_noded_t *n = server->data;
    if (status < 0)
        return;
    uv_pipe_t *client = loom_xcalloc(1, sizeof(*client));
    uv_pipe_init(n->loop, client, 0);
    if (uv_accept(server, (uv_stream_t *)client) < 0) {
        uv_close((uv_handle_t *)client, jobs_free_handle);
        return;
    }
    /* Security: the socket is 0600 in the spool dir, so peers are supervisors. */
    loom_conn_opts_t o = {.on_msg = jobs_stepd_msg, .on_close = jobs_stepd_closed, .arg = n};
    loom_conn_t *c = loom_conn_create((uv_stream_t *)client, &o);
    if (c)
        loom_noded_peer_add(n, c);
}

int loom_noded_stepd_listen(loom_noded_t *n, loom_err_t *err)
{
    char path[4096];
    snprintf(path, sizeof(path), "%s/loomd.sock", n->spool);
    unlink(path);
    uv_pipe_init(n->loop, &n->stepd_server, 0);
    n->stepd_server.data = n;
    n->stepd_open = true;
    mode_t old = umask(077);
    int rc = uv_pipe_bind(&n->stepd_server, path);
    umask(old);
    if (rc == 0)
        rc = uv_listen((uv_stream_t *)&n->stepd_server, 128, jobs_stepd_connection);
    if (rc < 0)
        return loom_errf(err, -LOOM_ECONNECT, "cannot listen on %s: %s", path, uv_strerror(rc));
    return 0;
}

/* ------------------------------------------------------------------ reaping */

void loom_noded_reap(loom_noded_t *n)
{
    int status;
    pid_t pid;
    while ((pid = waitpid(-1, &status, WNOHANG)) > 0) {
        if (loom_noded_steps_reap(n, pid, status))
            continue;
        for (loom_noded_job_t *j = n->jobs; j; j = j->next) {
            if (j->stepd_pid != pid)
                continue;
            j->stepd_pid = 0;
            if (status != 0)
                loom_error("the supervisor of job %u exited with status 0x%x", j->job_id,
                           (unsigned)status);
            if (j->state == LOOM_NJOB_RUNNING || !j->stepd)
                jobs_lost_stepd(n, j);
            if (j->state == LOOM_NJOB_ACKED && j->orphan) {
                jobs_remove_dir(n, j->job_id, j->run);
                jobs_remove(n, j);
            }
            break;
        }
    }
}

void loom_noded_jobs_tick(loom_noded_t *n)
{
    loom_noded_job_t *next;
    for (loom_noded_job_t *j = n->jobs; j; j = next) {
        next = j->next;
        if (j->stepd_pid || j->stepd)
            continue; /* our child (SIGCHLD tells), or connected */
        pid_t pid = 0;
        if (j->state == LOOM_NJOB_RUNNING && !jobs_stepd_alive(n, j->job_id, j->run)) {
            jobs_lost_stepd(n, j);
        } else if (j->state == LOOM_NJOB_ACKED &&
                   (jobs_read_status(n, j, &pid) < 0 || !jobs_pid_alive(pid))) {
            jobs_remove_dir(n, j->job_id, j->run);
            jobs_remove(n, j);
        }
    }
}

/* ------------------------------------------------------------------- scan */

static void jobs_scan_one(loom_noded_t *n, uint32_t id, uint32_t run)
{
    char path[4096];
    pid_t pid = 0;
    jobs_path(n, id, run, "spec.json", path, sizeof(path));
    if (access(path, F_OK) < 0) {
        jobs_remove_dir(n, id, run); /* what a supervisor left while removing it */
        return;
    }
    loom_noded_job_t *old = jobs_find(n, id);
    if (old && old->run > run)
        return; /* an older run's dir: its supervisor cleans it */
    if (old)
        jobs_remove(n, old);
    loom_noded_job_t *job = jobs_add(n, id, LOOM_NJOB_RUNNING);
    job->run = run;
    if (jobs_read_status(n, job, &pid) == 0) {
        job->state = LOOM_NJOB_DONE;
        job->orphan = !jobs_pid_alive(pid);
    } else if (!jobs_stepd_alive(n, id, run)) {
        loom_error("the supervisor of job %u is gone and left no status", id);
        jobs_set_end(job, JOBS_FAILED_STATUS, (int64_t)time(NULL), "node_fail");
        job->state = LOOM_NJOB_DONE;
        job->orphan = true;
    }
    loom_info("found job %u (%s) from a previous run", id,
              job->state == LOOM_NJOB_RUNNING ? "running" : "ended");
}

void loom_noded_scan(loom_noded_t *n)
{
    DIR *d = opendir(n->spool);
    if (!d)
        return;
    struct dirent *e;
    while ((e = readdir(d))) {
        char *end;
        unsigned long run = 0;
        if (strncmp(e->d_name, "job", 3) != 0)
            continue;
        unsigned long id = strtoul(e->d_name + 3, &end, 10);
        if (*end == '.')
            run = strtoul(end + 1, &end, 10);
        if (*end == '\0' && id > 0 && id <= UINT32_MAX && run <= UINT32_MAX)
            jobs_scan_one(n, (uint32_t)id, (uint32_t)run);
    }
    closedir(d);
}

/* ----------------------------------------------------------------- launch */

json_t *loom_noded_node_section(const loom_noded_t *n)
{
    char sock[4096];
    snprintf(sock, sizeof(sock), "%s/loomd.sock", n->spool);
    const char *append = loom_conf_get(n->conf, "JobFileAppend");
    /* Usage gathering in the supervisors (stepd_usage.h). */
    const char *gtype = n->conf->job_acct_gather_type;
    json_t *gather = json_pack("{s:s, s:i}", "type", gtype ? gtype : "jobacct_gather/none", "freq",
                               loom_usage_gather_freq(n->conf->job_acct_gather_frequency));
    json_t *files = json_array();
    for (size_t i = 0; i < n->ngpus; i++) /* by device index: the devices cgroup (devcg.h) */
        json_array_append_new(files, n->gpus[i].file ? json_string(n->gpus[i].file) : json_null());
    return json_pack("{s:s, s:s, s:s, s:s, s:s, s:i, s:b, s:I, s:o, s:o, s:I, s:o}", "name",
                     n->name, "cluster", n->conf->cluster_name ? n->conf->cluster_name : "", "conf",
                     n->conf_path, "hostname", n->me->hostname ? n->me->hostname : n->name,
                     "loomd_sock", sock, "gpu_env", (int)n->gpu_env, "job_file_append",
                     append && strcmp(append, "1") == 0, "kill_wait",
                     (json_int_t)n->conf->kill_wait, "acct_gather", gather, "cgroup",
                     loom_cgconf_to_json(&n->cgconf), "real_memory",
                     (json_int_t)n->me->cfg->real_memory, "gpu_files", files);
}

/* <spool>/job<id>[.<run>]/spec.json (tmp + rename: a scan never sees half of it). */
static int jobs_write_spec(const loom_noded_t *n, uint32_t id, uint32_t run, json_t *job,
                           loom_err_t *err)
{
    char dir[4096], tmp[4096], path[4096];
    jobs_path(n, id, run, NULL, dir, sizeof(dir));
    jobs_path(n, id, run, "spec.json.tmp", tmp, sizeof(tmp));
    jobs_path(n, id, run, "spec.json", path, sizeof(path));
    /* Root: users may reach their script inside, but not list the dir. */
    if (mkdir(dir, geteuid() == 0 ? 0711 : 0700) < 0 && errno != EEXIST)
        return loom_errf(err, -errno, "cannot create %s: %s", dir, strerror(errno));
    chmod(dir, geteuid() == 0 ? 0711 : 0700);
    json_t *spec = json_pack("{s:O, s:o}", "job", job, "node", loom_noded_node_section(n));
    /* Security: 0600, the spec holds the job's environment and script. */
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

static int jobs_spawn(const loom_noded_t *n, uint32_t id, uint32_t run, pid_t *pid, loom_err_t *err)
{
    char dir[4096];
    jobs_path(n, id, run, NULL, dir, sizeof(dir));
    return loom_noded_spawn_stepd(n, dir, pid, err);
}

int loom_noded_spawn_stepd(const loom_noded_t *n, const char *dir, pid_t *pid, loom_err_t *err)
{
    char *argv[16];
    int i = 0;
    argv[i++] = n->stepd_exe;
    for (int v = 0; v < n->verbose && v < 4; v++)
        argv[i++] = "-v";
    if (n->log_path) {
        argv[i++] = "-L";
        argv[i++] = n->log_path;
    }
    if (n->allow_root)
        argv[i++] = "--allow-root-jobs";
    argv[i++] = (char *)dir;
    argv[i] = NULL;
    posix_spawn_file_actions_t fa;
    posix_spawnattr_t attr;
    sigset_t all, none;
    sigfillset(&all);
    sigemptyset(&none);
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
    posix_spawnattr_init(&attr);
    posix_spawnattr_setflags(&attr,
                             POSIX_SPAWN_SETSID | POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK);
    posix_spawnattr_setsigdefault(&attr, &all);
    posix_spawnattr_setsigmask(&attr, &none);
    int rc = posix_spawn(pid, n->stepd_exe, &fa, &attr, argv, environ);
    posix_spawn_file_actions_destroy(&fa);
    posix_spawnattr_destroy(&attr);
    if (rc != 0)
        return loom_errf(err, -rc, "cannot start %s: %s", n->stepd_exe, strerror(rc));
    return 0;
}

/* An entry for the same job from an earlier run (requeue) gives way. */
static bool jobs_launched_already(loom_noded_t *n, uint32_t id, uint32_t run)
{
    loom_noded_job_t *old = jobs_find(n, id);
    if (old && old->run == run)
        return true;
    if (old) {
        loom_info("job %u: run %u replaces run %u", id, run, old->run);
        jobs_remove(n, old);
    }
    return false;
}

void loom_noded_job_launch(loom_noded_t *n, loom_conn_t *conn, json_t *req)
{
    json_t *job = json_object_get(req, "job");
    json_int_t id = json_integer_value(json_object_get(job, "job_id"));
    uint32_t run = (uint32_t)json_integer_value(json_object_get(job, "restart_cnt"));
    loom_err_t err = {0};
    pid_t pid = 0;
    int rc = 0;
    if (id <= 0 || id > UINT32_MAX || !json_is_string(json_object_get(job, "script")))
        rc = loom_errf(&err, -LOOM_EPROTO, "job.launch needs job.job_id and job.script");
    else if (jobs_launched_already(n, (uint32_t)id, run))
        loom_info("job %lld is already here; launch ignored", (long long)id);
    else if ((rc = jobs_write_spec(n, (uint32_t)id, run, job, &err)) == 0 &&
             (rc = jobs_spawn(n, (uint32_t)id, run, &pid, &err)) == 0) {
        loom_noded_job_t *j = jobs_add(n, (uint32_t)id, LOOM_NJOB_RUNNING);
        j->stepd_pid = pid;
        j->run = run;
    }
    if (rc < 0) {
        loom_error("launch of job %lld failed: %s", (long long)id, err.msg);
        if (id > 0 && id <= UINT32_MAX && !jobs_find(n, (uint32_t)id))
            jobs_remove_dir(n, (uint32_t)id, run);
    } else {
        loom_verbose("launched job %lld (supervisor pid %d)", (long long)id, (int)pid);
    }
    jobs_reply(conn, req, rc, err.msg);
}

/* ------------------------------------------------------------------- kill */

typedef struct loom_noded_kill {
    struct loom_noded_kill *next;
    loom_noded_t *n;
    loom_conn_t *from; /* the controller connection that asked */
    uint64_t serial;
    json_t *req;
    uint32_t job_id, run;
    int tries;
    uv_timer_t timer;
    loom_conn_t *stepd;
    bool finished;
    bool connecting;   /* a connect to the supervisor is in flight: it holds k */
    bool timer_closed; /* finished and its timer closed: free once not connecting */
} jobs_kill_t;

static void jobs_kill_try(jobs_kill_t *k);

static void jobs_kill_release(jobs_kill_t *k)
{
    json_decref(k->req);
    free(k);
}

static void jobs_kill_freed(uv_handle_t *h)
{
    jobs_kill_t *k = h->data;
    k->timer_closed = true;
    if (!k->connecting)
        jobs_kill_release(k);
}

static void jobs_kill_finish(jobs_kill_t *k, int rc, const char *msg)
{
    if (k->finished)
        return;
    k->finished = true;
    for (jobs_kill_t **pp = &k->n->kills; *pp; pp = &(*pp)->next) {
        if (*pp == k) {
            *pp = k->next;
            break;
        }
    }
    if (loom_noded_peer_alive(k->n, k->from, k->serial))
        jobs_reply(k->from, k->req, rc, msg);
    if (k->stepd)
        loom_conn_close(k->stepd);
    uv_close((uv_handle_t *)&k->timer, jobs_kill_freed);
}

void loom_noded_jobs_stop(loom_noded_t *n)
{
    while (n->kills)
        jobs_kill_finish(n->kills, -LOOM_ECONNECT, "loomd is shutting down");
}

static void jobs_kill_replied(void *arg, json_t *reply)
{
    jobs_kill_t *k = arg;
    const char *msg = NULL;
    int rc = reply ? loom_msg_rc(reply, &msg) : 0; /* gone meanwhile: it ended */
    jobs_kill_finish(k, rc, msg);
}

static void jobs_kill_stepd_closed(loom_conn_t *c, int status, void *arg)
{
    jobs_kill_t *k = arg;
    if (k->stepd == c)
        k->stepd = NULL;
}

static void jobs_kill_retry_due(uv_timer_t *t)
{
    jobs_kill_try(t->data);
}

static void jobs_kill_connected(void *arg, loom_conn_t *c, int status)
{
    jobs_kill_t *k = arg;
    k->connecting = false;
    if (k->finished) { /* abandoned at shutdown */
        if (c)
            loom_conn_close(c);
        if (k->timer_closed)
            jobs_kill_release(k);
        return;
    }
    loom_noded_job_t *job = jobs_find(k->n, k->job_id);
    bool live = job && job->run == k->run && job->state == LOOM_NJOB_RUNNING;
    if (status < 0) {
        if (live && ++k->tries < JOBS_KILL_TRIES)
            uv_timer_start(&k->timer, jobs_kill_retry_due, 100, 0);
        else
            jobs_kill_finish(k, live ? -LOOM_ECONNECT : 0, "the job's supervisor does not answer");
        return;
    }
    k->stepd = c;
    json_t *fwd = loom_msg_new("stepd.signal", 0);
    static const char *const keys[] = {"signal", "reason", "kill_wait", "batch_only", "full"};
    for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
        json_t *v = json_object_get(k->req, keys[i]);
        if (v)
            json_object_set(fwd, keys[i], v);
    }
    if (!json_object_get(fwd, "kill_wait"))
        json_object_set_new(fwd, "kill_wait", json_integer(k->n->conf->kill_wait));
    if (loom_conn_request(c, fwd, jobs_kill_replied, k) < 0)
        jobs_kill_finish(k, -LOOM_ECONNECT, "the job's supervisor went away");
    json_decref(fwd);
}

static void jobs_kill_try(jobs_kill_t *k)
{
    char path[4096];
    jobs_path(k->n, k->job_id, k->run, "stepd.sock", path, sizeof(path));
    loom_conn_opts_t o = {.on_close = jobs_kill_stepd_closed, .arg = k};
    k->connecting = true;
    loom_conn_pipe_connect(k->n->loop, path, &o, jobs_kill_connected, k);
}

uint64_t loom_noded_conn_serial(const loom_noded_t *n, const loom_conn_t *c)
{
    if (c == n->ctl)
        return n->ctl_serial;
    for (const loom_noded_peer_t *p = n->peers; p; p = p->next)
        if (p->conn == c)
            return p->serial;
    return 0;
}

void loom_noded_job_kill(loom_noded_t *n, loom_conn_t *conn, json_t *req)
{
    json_int_t id = json_integer_value(json_object_get(req, "job_id"));
    loom_noded_job_t *job = id > 0 && id <= UINT32_MAX ? jobs_find(n, (uint32_t)id) : NULL;
    /* The job's steps here hear it too (their supervisors answer nobody). */
    size_t steps = loom_noded_steps_kill(n, req);
    if (!job) {
        if (steps)
            jobs_reply(conn, req, 0, NULL);
        else
            jobs_reply(conn, req, -LOOM_EINVAL_JOBID, "the job is not on this node");
        return;
    }
    /* "run": an earlier run that a newer one replaced here; its supervisor
     * may still be there (the controller kills runs it has requeued). */
    json_t *jr = json_object_get(req, "run");
    uint32_t run = json_is_integer(jr) ? (uint32_t)json_integer_value(jr) : job->run;
    if (run == job->run && job->state != LOOM_NJOB_RUNNING) {
        jobs_reply(conn, req, 0, NULL); /* already over */
        return;
    }
    jobs_kill_t *k = loom_xcalloc(1, sizeof(*k));
    k->n = n;
    k->from = conn;
    k->serial = loom_noded_conn_serial(n, conn);
    k->req = json_incref(req);
    k->job_id = (uint32_t)id;
    k->run = run;
    uv_timer_init(n->loop, &k->timer);
    k->timer.data = k;
    k->next = n->kills;
    n->kills = k;
    jobs_kill_try(k);
}
