/*
 * seff.c - seff JOBID: a finished job's CPU and memory efficiency, as
 * Slurm's contrib script (version 2.1, shipped with 22.05) prints it, from
 * the job and step records of loomdbd (dbd.jobs.query with steps), or of the
 * controller (job.info) for a job still pending or running there; plus a
 * "GPU Utilization" line where the steps measured it (step record
 * `gpu_util`), which Slurm's script does not have.
 *
 * Figures as the script computes them: CPU Utilized = the steps' TotalCPU
 * (whole seconds summed, microseconds summed and rounded); core-walltime =
 * elapsed × allocated CPUs; Memory Utilized = the largest step MaxRSS × that
 * step's task count ("estimated maximum" when it is not 1); the request is
 * the job's memory per node × nodes or per CPU × CPUs.
 *
 * Exit: 0 shown; 1 usage (and -v, as the script does); 2 "Job not found.".
 */
#include "cli/cli_dbd.h"
#include "cli/cli_format.h"
#include "common/xalloc.h"

#include <grp.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

typedef struct {
    int64_t cput, walltime, ncpus, nnodes, ntasks;
    double mem, reqmem; /* KiB */
    bool pernode;
    double gpu_util; /* -1: not measured */
} seff_fig_t;

/* "[D-]HH:MM:SS" as the script's time2str. */
static void seff_time(int64_t t, loom_sbuf_t *out)
{
    int64_t days = t / 86400;
    t -= days * 86400;
    if (days >= 1)
        loom_sbuf_addf(out, "%lld-", (long long)days);
    loom_sbuf_addf(out, "%02lld:%02lld:%02lld", (long long)(t / 3600), (long long)(t % 3600 / 60),
                   (long long)(t % 60));
}

/* "1.95 GB" as the script's kbytes2str. */
static void seff_kbytes(double kb, loom_sbuf_t *out)
{
    static const char *const pre[] = {"K", "M", "G", "T", "P", "E"};
    if (kb <= 0) {
        loom_sbuf_add(out, "0.00 MB");
        return;
    }
    int e = (int)(log(kb) / log(1024.0));
    if (e < 0)
        e = 0;
    if (e > 5)
        e = 5;
    loom_sbuf_addf(out, "%.2f %sB", kb / pow(1024.0, e), pre[e]);
}

static const char *seff_state(const json_t *job)
{
    const json_t *st = json_object_get(job, "state");
    if (json_is_array(st))
        st = json_array_get(st, 0);
    return json_is_string(st) ? json_string_value(st) : "UNKNOWN";
}

static void seff_steps(const json_t *job, seff_fig_t *f)
{
    int64_t secs = 0, usecs = 0, best = 0;
    double gpu_sum = 0, gpu_w = 0;
    size_t i;
    json_t *st;
    json_array_foreach(json_object_get(job, "steps"), i, st)
    {
        int64_t us = loom_ji(st, "total_cpu", 0);
        secs += us / 1000000;
        usecs += us % 1000000;
        int64_t rss = loom_ji(st, "max_rss", 0);
        if (rss > best) {
            best = rss;
            f->ntasks = loom_ji(st, "ntasks", 1);
        }
        if (json_is_number(json_object_get(st, "gpu_util"))) {
            int64_t len = loom_ji(st, "end_time", 0) - loom_ji(st, "start_time", 0);
            double w = len > 0 ? (double)len : 1.0;
            gpu_sum += json_number_value(json_object_get(st, "gpu_util")) * w;
            gpu_w += w;
        }
    }
    f->cput = secs + (int64_t)((double)usecs / 1e6 + 0.5);
    f->mem = (double)best * (double)f->ntasks;
    f->gpu_util = gpu_w > 0 ? gpu_sum / gpu_w : -1;
}

static void seff_figures(const json_t *job, seff_fig_t *f, time_t now)
{
    f->ncpus = loom_ji(job, "num_cpus", 1);
    f->nnodes = loom_ji(job, "num_nodes", 1);
    if (f->ncpus <= 0)
        f->ncpus = 1;
    if (f->nnodes <= 0)
        f->nnodes = 1;
    if (json_object_get(job, "mem_per_cpu")) {
        f->reqmem = (double)loom_ji(job, "mem_per_cpu", 0) * 1024.0 * (double)f->ncpus;
    } else {
        f->reqmem = (double)loom_ji(job, "mem_per_node", 0) * 1024.0 * (double)f->nnodes;
        f->pernode = true;
    }
    int64_t start = loom_ji(job, "start_time", 0), end = loom_ji(job, "end_time", 0);
    f->walltime = start > 0 ? (end > 0 ? end : (int64_t)now) - start : 0;
    if (f->walltime < 0)
        f->walltime = 0;
    seff_steps(job, f);
}

static void seff_head(const json_t *job, const char *cluster, const char *state, loom_sbuf_t *o)
{
    loom_sbuf_addf(o, "Job ID: %lld\n", (long long)loom_ji(job, "job_id", 0));
    if (json_object_get(job, "array_job_id") && json_object_get(job, "array_task_id"))
        loom_sbuf_addf(o, "Array Job ID: %lld_%lld\n", (long long)loom_ji(job, "array_job_id", 0),
                       (long long)loom_ji(job, "array_task_id", 0));
    loom_sbuf_addf(o, "Cluster: %s\n", cluster);
    struct group *gr = getgrgid((gid_t)loom_ji(job, "group_id", 0));
    loom_sbuf_addf(o, "User/Group: %s/%s\n", loom_js_or(job, "user_name", ""),
                   gr ? gr->gr_name : loom_js_or(job, "group_name", ""));
    if (!strcmp(state, "PENDING") || !strcmp(state, "RUNNING"))
        loom_sbuf_addf(o, "State: %s\n", state);
    else
        loom_sbuf_addf(o, "State: %s (exit code %lld)\n", state,
                       (long long)(loom_ji(job, "exit_code", 0) >> 8));
}

static void seff_mem(const seff_fig_t *f, loom_sbuf_t *o)
{
    loom_sbuf_add(o, "Memory Utilized: ");
    seff_kbytes(f->mem, o);
    loom_sbuf_add(o, f->ntasks == 1 ? "\n" : " (estimated maximum)\n");
    loom_sbuf_addf(o, "Memory Efficiency: %.2f%% of ",
                   f->reqmem > 0 ? f->mem / f->reqmem * 100 : 0.0);
    seff_kbytes(f->reqmem, o);
    if (f->ntasks != 1) {
        loom_sbuf_add(o, " (");
        seff_kbytes(f->reqmem / (double)(f->pernode ? f->nnodes : f->ncpus), o);
        loom_sbuf_add(o, f->pernode ? "/node)" : "/core)");
    }
    loom_sbuf_addc(o, '\n');
}

static void seff_print(const json_t *job, const char *cluster, time_t now, loom_sbuf_t *o)
{
    const char *state = seff_state(job);
    seff_fig_t f = {.ntasks = 0};
    seff_figures(job, &f, now);
    seff_head(job, cluster, state, o);
    if (f.ncpus == 1)
        loom_sbuf_addf(o, "Cores: %lld\n", (long long)f.ncpus);
    else
        loom_sbuf_addf(o, "Nodes: %lld\nCores per node: %lld\n", (long long)f.nnodes,
                       (long long)(f.ncpus / f.nnodes));
    if (!strcmp(state, "PENDING")) {
        loom_sbuf_add(o, "Efficiency not available for jobs in the PENDING state.\n");
        return;
    }
    int64_t core = f.walltime * f.ncpus;
    loom_sbuf_add(o, "CPU Utilized: ");
    seff_time(f.cput, o);
    loom_sbuf_addf(o, "\nCPU Efficiency: %.2f%% of ",
                   core ? (double)f.cput / (double)core * 100 : 0.0);
    seff_time(core, o);
    loom_sbuf_add(o, " core-walltime\nJob Wall-clock time: ");
    seff_time(f.walltime, o);
    loom_sbuf_addc(o, '\n');
    seff_mem(&f, o);
    if (f.gpu_util >= 0)
        loom_sbuf_addf(o, "GPU Utilization: %.2f%%\n", f.gpu_util);
    if (!strcmp(state, "RUNNING"))
        loom_sbuf_addf(o, "WARNING: Efficiency statistics may be misleading for %s jobs.\n", state);
}

/* The record of "ID" or "ARRAY_TASK" among jobs, or NULL (a new reference). */
static json_t *seff_pick(const json_t *jobs, long long id, long long task)
{
    size_t i;
    json_t *j;
    json_array_foreach(jobs, i, j)
    {
        bool hit = task >= 0 ? loom_ji(j, "array_job_id", 0) == id &&
                                   loom_ji(j, "array_task_id", -1) == task
                             : loom_ji(j, "job_id", 0) == id;
        if (hit)
            return json_incref(j);
    }
    return NULL;
}

/* A job the controller still holds (running or pending): its record, with
 * the steps loomdbd has stored so far. */
static json_t *seff_ctld(loom_cli_t *cli, long long id, long long task, json_t *stored)
{
    json_t *body = json_pack("{s:[I]}", "job_ids", (json_int_t)id), *reply = NULL;
    loom_err_t err = {0};
    json_t *job = NULL;
    if (loom_cli_call(cli, "job.info", body, &reply, &err) == 0)
        job = seff_pick(json_object_get(reply, "jobs"), id, task);
    json_decref(body);
    json_decref(reply);
    if (job && stored && json_object_get(stored, "steps"))
        json_object_set(job, "steps", json_object_get(stored, "steps"));
    return job;
}

static bool seff_active(const json_t *job)
{
    const char *st = seff_state(job);
    return !strcmp(st, "PENDING") || !strcmp(st, "RUNNING") || !strcmp(st, "SUSPENDED");
}

/* The job of "ID" or "ARRAY_TASK" with its steps, from loomdbd, or from the
 * controller while it is active there; NULL when neither has it. */
static json_t *seff_find(loom_cli_t *cli, loom_rpc_t **rpc, const char *arg, int *rc)
{
    char *end = NULL;
    long long id = strtoll(arg, &end, 10), task = -1;
    if (*end == '_')
        task = strtoll(end + 1, &end, 10);
    if (id <= 0 || *end) {
        *rc = 1;
        fprintf(stderr, "Invalid job id: %s\n", arg);
        return NULL;
    }
    json_t *q = json_pack("{s:b, s:[I]}", "steps", 1, "job_ids", (json_int_t)id), *reply = NULL;
    loom_err_t err = {0};
    int dbd_rc = loom_dbd_call(cli, rpc, "dbd.jobs.query", q, &reply, &err);
    json_decref(q);
    json_t *stored = dbd_rc < 0 ? NULL : seff_pick(json_object_get(reply, "jobs"), id, task);
    json_decref(reply);
    json_t *live = !stored || seff_active(stored) ? seff_ctld(cli, id, task, stored) : NULL;
    if (live) {
        json_decref(stored);
        return live;
    }
    if (!stored && dbd_rc < 0) {
        fprintf(stderr, "seff: error: %s\n", err.msg);
        *rc = 1;
    }
    return stored;
}

static void seff_usage(void)
{
    printf("Usage: seff [Options] <Jobid>\n"
           "       Options:\n"
           "       -h    Help menu\n"
           "       -v    Version\n"
           "       -d    Debug mode: display raw Slurm data\n");
}

int main(int argc, char **argv)
{
    loom_cli_t cli;
    loom_cli_init(&cli, "seff");
    int c, help = 0, version = 0;
    opterr = 0;
    while ((c = getopt(argc, argv, "hvdf:")) != -1) {
        version |= c == 'v';
        help |= c == 'h' || c == '?';
    }
    if (version || help || argc - optind != 1) {
        if (version)
            printf("seff Version 2.1\n");
        else
            seff_usage();
        loom_cli_fini(&cli);
        return 1;
    }
    loom_rpc_t *rpc = NULL;
    int rc = 0;
    json_t *job = seff_find(&cli, &rpc, argv[optind], &rc);
    if (!job && !rc) {
        fprintf(stderr, "Job not found.\n");
        rc = 2;
    }
    if (job) {
        const loom_conf_t *conf = loom_cli_conf(&cli, NULL);
        loom_sbuf_t out = LOOM_SBUF_INIT;
        seff_print(job, conf && conf->cluster_name ? conf->cluster_name : "", time(NULL), &out);
        loom_cli_flush(&out);
        loom_sbuf_free(&out);
    }
    json_decref(job);
    loom_rpc_close(rpc);
    loom_cli_fini(&cli);
    return rc;
}
