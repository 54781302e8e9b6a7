/*
 * srun_alloc.c - allocations for srun (outside an allocation) and salloc:
 * job.submit without a script, waiting until it runs, the allocation
 * environment, alloc.release (CLI_SPEC §2, §3, §0.10, §12 column A).
 *
 * The controller holds an allocation like any job (its first node keeps a
 * supervisor that runs nothing); it ends when srun/salloc sends
 * alloc.release with the command's status, or when it is cancelled, times
 * out or loses a node. Waiting polls job.info with a delay that grows from
 * 2 ms to 250 ms: cheap, and quick when the cluster is idle.
 */
#include "cli/srun.h"

#include "cli/cli_format.h"
#include "common/jobenv.h"
#include "common/jobstate.h"
#include "common/log.h"
#include "common/xalloc.h"

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <time.h>
#include <unistd.h>

#define ALLOC_POLL_FIRST_MS 1
#define ALLOC_POLL_FAST_MS  30 /* polled every ms this long: a free cluster starts it in a few */
#define ALLOC_POLL_MAX_MS   250

json_t *srun_job_record(loom_cli_t *cli, uint32_t job_id)
{
    json_t *body = json_pack("{s:[I]}", "job_ids", (json_int_t)job_id), *reply = NULL;
    loom_err_t err = {0};
    int rc = loom_cli_call(cli, "job.info", body, &reply, &err);
    json_decref(body);
    json_t *rec = rc == 0 ? json_incref(json_array_get(json_object_get(reply, "jobs"), 0)) : NULL;
    json_decref(reply);
    return rec;
}

/* The description of an allocation: jo's options, no script, no command. */
static json_t *alloc_desc(const loom_jobopt_t *jo, const srun_alloc_opts_t *o)
{
    json_t *desc = loom_jobopt_to_json(jo);
    json_object_del(desc, "argv");
    json_object_del(desc, "environment");
    if (!json_object_get(desc, "name"))
        json_object_set_new(desc, "name", json_string(o->def_name ? o->def_name : "interactive"));
    char host[256];
    if (gethostname(host, sizeof(host)) == 0) {
        host[sizeof(host) - 1] = '\0';
        json_object_set_new(desc, "submit_host", json_string(host));
    }
    json_object_set_new(desc, "alloc_sid", json_integer(getsid(0)));
    /* Requeue follows JobRequeue (scontrol shows Requeue=1, as 22.05); the
     * controller never requeues an allocation (only batch jobs). */
    return desc;
}

/* Wait up to ms for a signal on sigfd (-1: just sleep); the signal, or 0. */
static int alloc_sleep(int sigfd, int ms)
{
    if (sigfd < 0) {
        struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
        nanosleep(&ts, NULL);
        return 0;
    }
    struct pollfd p = {.fd = sigfd, .events = POLLIN};
    if (poll(&p, 1, ms) <= 0)
        return 0;
    struct signalfd_siginfo si;
    if (read(sigfd, &si, sizeof(si)) != (ssize_t)sizeof(si))
        return 0;
    return (int)si.ssi_signo;
}

static void alloc_cancel(loom_cli_t *cli, uint32_t id)
{
    json_t *body =
        json_pack("{s:I, s:i, s:b}", "job_id", (json_int_t)id, "signal", SIGKILL, "cancel", 1);
    loom_cli_call(cli, "job.signal", body, NULL, NULL);
    json_decref(body);
}

static bool alloc_is_salloc(const srun_alloc_opts_t *o)
{
    return strcmp(o->prog, "salloc") == 0;
}

/* The pending job was cancelled (or ended) under us: 22.05's lines. */
static void alloc_ended(loom_cli_t *cli, uint32_t id, const srun_alloc_opts_t *o)
{
    loom_cli_info(cli, "Job has been cancelled");
    if (alloc_is_salloc(o)) {
        loom_cli_info(cli, "Job allocation %u has been revoked.", id);
        loom_cli_error(cli, "Job submit/allocate failed: %s", loom_strerror(-LOOM_EALREADY_DONE));
    } else {
        loom_cli_error(cli, "Unable to allocate resources: %s", loom_strerror(-LOOM_EALREADY_DONE));
    }
}

/* A signal ended the wait (the job is cancelled): 22.05's lines. */
static void alloc_aborted(loom_cli_t *cli, uint32_t id, const srun_alloc_opts_t *o)
{
    if (alloc_is_salloc(o)) {
        loom_cli_info(cli, "Job allocation %u has been revoked.", id);
        loom_cli_info(cli, "Job aborted due to signal");
    } else {
        loom_cli_info(cli, "Job allocation %u has been revoked", id);
        loom_cli_info(cli, "Force Terminated JobId=%u", id);
    }
}

/* -I's time ran out (the job is cancelled): 22.05's lines. */
static void alloc_not_immediate(loom_cli_t *cli, uint32_t id, const srun_alloc_opts_t *o)
{
    bool timed_out = alloc_is_salloc(o) && o->immediate > 1;
    loom_cli_error(cli, "Unable to allocate resources: %s",
                   timed_out ? "Connection timed out" : "Requested nodes are busy");
    if (alloc_is_salloc(o))
        loom_cli_info(cli, "Job allocation %u has been revoked.", id);
}

/* Poll until the job leaves PENDING. */
static int alloc_wait(loom_cli_t *cli, uint32_t id, const srun_alloc_opts_t *o, json_t **rec)
{
    int delay = ALLOC_POLL_FIRST_MS;
    bool said = false;
    int64_t waited = 0;
    for (;;) {
        json_t *r = srun_job_record(cli, id);
        loom_job_state_t base = r ? loom_job_base(loom_cli_job_state(r)) : LOOM_JOB_FAILED;
        /* Until the scheduler has looked at it the job has no reason: it is
         * not waiting for resources yet, so nothing is said. */
        const char *reason = loom_js_or(r, "reason", "None");
        bool looked = strcmp(reason, "None") != 0 || waited >= 1000;
        bool part_config = strcmp(reason, "PartitionConfig") == 0;
        if (base == LOOM_JOB_RUNNING) {
            *rec = r;
            return said ? 1 : 0;
        }
        json_decref(r);
        if (base != LOOM_JOB_PENDING) {
            alloc_ended(cli, id, o);
            return -LOOM_EALREADY_DONE;
        }
        /* -I (or -I1) is decided at once in 22.05: nothing is said. */
        if (!said && looked && !o->quiet && o->immediate != 1) {
            /* 22.05 says so when the job is over the partition's totals. */
            if (part_config)
                loom_cli_info(cli, "Requested partition configuration not available now");
            if (alloc_is_salloc(o))
                loom_cli_info(cli, "Pending job allocation %u", id);
            loom_cli_info(cli, "job %u queued and waiting for resources", id);
        }
        said = said || looked;
        if (o->immediate > 0 && waited >= (int64_t)o->immediate * 1000) {
            alloc_cancel(cli, id);
            alloc_not_immediate(cli, id, o);
            return -LOOM_ENODES_BUSY;
        }
        int sig = alloc_sleep(o->sigfd, delay);
        waited += delay;
        if (sig == SIGINT || sig == SIGTERM || sig == SIGHUP) {
            alloc_cancel(cli, id);
            alloc_aborted(cli, id, o);
            return -EINTR;
        }
        if (waited >= ALLOC_POLL_FAST_MS)
            delay = delay * 2 > ALLOC_POLL_MAX_MS ? ALLOC_POLL_MAX_MS : delay * 2;
    }
}

int srun_alloc_create(loom_cli_t *cli, const loom_jobopt_t *jo, const srun_alloc_opts_t *o,
                      uint32_t *job_id, json_t **rec)
{
    json_t *body = json_pack("{s:o, s:s}", "job", alloc_desc(jo, o), "script", "");
    json_t *reply = NULL;
    loom_err_t err = {0};
    int rc = loom_cli_call(cli, "job.submit", body, &reply, &err);
    json_decref(body);
    uint32_t id = (uint32_t)json_integer_value(json_object_get(reply, "job_id"));
    json_decref(reply);
    if (rc < 0 || !id) {
        /* Slurm's clients print the error code's text; Loom's own codes
         * (connection, protocol) keep the controller's explanation. */
        const char *why = rc <= -LOOM_EINVAL_PARTITION ? loom_strerror(rc) : err.msg;
        if (strcmp(o->prog, "salloc") == 0)
            loom_cli_error(cli, "Job submit/allocate failed: %s", why);
        else
            loom_cli_error(cli, "Unable to allocate resources: %s", why);
        return rc < 0 ? rc : -LOOM_EPROTO;
    }
    rc = alloc_wait(cli, id, o, rec);
    if (rc < 0)
        return rc;
    if (rc == 1 && !o->quiet)
        loom_cli_info(cli, "job %u has been allocated resources", id);
    *job_id = id;
    return 0;
}

int srun_alloc_test(loom_cli_t *cli, const loom_jobopt_t *jo, const srun_alloc_opts_t *o)
{
    json_t *body = json_pack("{s:o, s:s}", "job", alloc_desc(jo, o), "script", "");
    int rc = loom_cli_test_only(cli, body);
    json_decref(body);
    return rc;
}

void srun_alloc_env(loom_cli_t *cli, const loom_jobopt_t *jo, const json_t *rec, loom_strv_t *env)
{
    loom_jobenv_job_t job;
    /* job.info's record leaves out the description: what was asked for
     * (SLURM_NTASKS, SLURM_CPUS_PER_TASK, ...) comes from the options. */
    json_t *full = json_copy((json_t *)rec);
    if (!json_object_get(full, "desc"))
        json_object_set_new(full, "desc", loom_jobopt_to_json(jo));
    if (loom_jobenv_job_from_json(full, NULL, &job, NULL, NULL) < 0) {
        json_decref(full);
        return;
    }
    const loom_conf_t *conf = loom_cli_conf(cli, NULL);
    loom_jobenv_alloc(&job, conf ? conf->cluster_name : NULL, cli->conf_path, env);
    loom_jobenv_job_free(&job);
    json_decref(full);
}

int srun_alloc_release(loom_cli_t *cli, uint32_t job_id, int status)
{
    json_t *body = json_pack("{s:I, s:i}", "job_id", (json_int_t)job_id, "exit_code", status);
    loom_err_t err = {0};
    int rc = loom_cli_call(cli, "alloc.release", body, NULL, &err);
    json_decref(body);
    if (rc < 0)
        loom_debug("alloc.release of job %u: %s", job_id, err.msg);
    return rc;
}
