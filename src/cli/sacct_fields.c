/*
 * sacct_fields.c - sacct's field table and formatters. See sacct_fields.h.
 */
#include "cli/sacct_fields.h"
#include "cli/cli_common.h"
#include "cli/cli_format.h"
#include "common/strv.h"
#include "common/timefmt.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

static const json_t *sf_src(const sacct_row_t *r)
{
    return r->step ? r->step : r->job;
}

/* The job has run: a pending job's record may hold its expected start, and
 * one cancelled while pending its end as start (scontrol's), without nodes. */
static bool sf_job_started(const json_t *job)
{
    const char *state = loom_js_or(job, "state", "");
    if (!strncmp(state, "CANCELLED", 9) && !*loom_js_or(job, "nodes", "") &&
        loom_ji(job, "start_time", 0) == loom_ji(job, "end_time", 0))
        return false;
    return loom_ji(job, "start_time", 0) > 0 && strcmp(state, "PENDING");
}

static void sf_jobid(const sacct_row_t *r, loom_sbuf_t *out, bool raw)
{
    const json_t *j = r->job;
    const char *rest = loom_js(j, "array_task_str");
    if (!raw && rest && *rest) /* a pending array's meta record: "12_[3-9%2]" */
        loom_sbuf_addf(out, "%" PRId64 "_[%s]", loom_ji(j, "array_job_id", 0), rest);
    else if (!raw && loom_jhas(j, "array_task_id"))
        loom_sbuf_addf(out, "%" PRId64 "_%" PRId64, loom_ji(j, "array_job_id", 0),
                       loom_ji(j, "array_task_id", 0));
    else
        loom_sbuf_addf(out, "%" PRId64, loom_ji(j, "job_id", 0));
    if (r->step) {
        const json_t *sid = json_object_get(r->step, "step_id");
        if (json_is_integer(sid))
            loom_sbuf_addf(out, ".%" JSON_INTEGER_FORMAT, json_integer_value(sid));
        else
            loom_sbuf_addf(out, ".%s", json_string_value(sid) ? json_string_value(sid) : "");
    }
}

static void sf_jobid_fmt(const sacct_row_t *r, loom_sbuf_t *out)
{
    sf_jobid(r, out, false);
}

static void sf_jobidraw(const sacct_row_t *r, loom_sbuf_t *out)
{
    sf_jobid(r, out, true);
}

static void sf_str(const json_t *o, const char *key, loom_sbuf_t *out)
{
    const char *s = loom_js(o, key);
    if (s)
        loom_sbuf_add(out, s);
}

#define SF_JOB_STR(fn, key)                                                                        \
    static void fn(const sacct_row_t *r, loom_sbuf_t *out)                                         \
    {                                                                                              \
        if (!r->step)                                                                              \
            sf_str(r->job, key, out);                                                              \
    }
#define SF_ANY_STR(fn, key)                                                                        \
    static void fn(const sacct_row_t *r, loom_sbuf_t *out)                                         \
    {                                                                                              \
        sf_str(sf_src(r), key, out);                                                               \
    }

SF_JOB_STR(sf_partition, "partition")
SF_JOB_STR(sf_user, "user_name")
SF_JOB_STR(sf_group, "group_name")
SF_JOB_STR(sf_workdir, "work_dir")
SF_JOB_STR(sf_qos, "qos")
SF_JOB_STR(sf_admin_comment, "admin_comment")
SF_JOB_STR(sf_comment, "comment")
SF_JOB_STR(sf_constraints, "features")
SF_JOB_STR(sf_reservation, "reservation")
SF_ANY_STR(sf_submitline, "submit_line") /* a step's: srun's command line */

/* A job that never got nodes (pending, cancelled while pending) reads "None
 * assigned", as slurmdbd 22.05 records it (submitit parses NodeList). */
static void sf_nodelist(const sacct_row_t *r, loom_sbuf_t *out)
{
    const char *s = loom_js(sf_src(r), "nodes");
    loom_sbuf_add(out, s && *s ? s : "None assigned");
}

/* By the name before '=': "gres/gpu" before "gres/gpu:h100". */
static int sf_tres_cmp(const void *a, const void *b)
{
    const char *x = *(char *const *)a, *y = *(char *const *)b;
    size_t nx = strcspn(x, "="), ny = strcspn(y, "=");
    int c = strncmp(x, y, nx < ny ? nx : ny);
    return c ? c : (nx > ny) - (nx < ny);
}

/* A TRES string in sacct's order: by name ("billing=2,cpu=2,gres/gpu=1,mem=500M,
 * node=1"), whatever order the record holds (loomctld writes scontrol's). */
static void sf_tres(const json_t *o, const char *key, loom_sbuf_t *out)
{
    loom_strv_t items = LOOM_STRV_INIT;
    const char *s = loom_js(o, key);
    loom_strv_split(&items, s ? s : "", ",");
    if (items.n > 1)
        qsort(items.v, items.n, sizeof(items.v[0]), sf_tres_cmp);
    for (size_t i = 0; i < items.n; i++)
        loom_sbuf_addf(out, "%s%s", i ? "," : "", items.v[i]);
    loom_strv_free(&items);
}

static void sf_reqtres(const sacct_row_t *r, loom_sbuf_t *out)
{
    if (!r->step)
        sf_tres(r->job, "tres_req", out);
}

static void sf_alloctres(const sacct_row_t *r, loom_sbuf_t *out)
{
    sf_tres(sf_src(r), "tres_alloc", out);
}

SF_ANY_STR(sf_maxrssnode, "max_rss_node")

static void sf_account(const sacct_row_t *r, loom_sbuf_t *out)
{
    sf_str(r->job, "account", out);
}

static void sf_jobname(const sacct_row_t *r, loom_sbuf_t *out)
{
    sf_str(sf_src(r), "name", out);
}

static void sf_job_int(const sacct_row_t *r, const char *key, loom_sbuf_t *out)
{
    if (!r->step && loom_jhas(r->job, key))
        loom_sbuf_addf(out, "%" PRId64, loom_ji(r->job, key, 0));
}

/* A field that is one helper applied to one record member. */
#define SF_OF(fn, helper, key)                                                                     \
    static void fn(const sacct_row_t *r, loom_sbuf_t *out)                                         \
    {                                                                                              \
        helper(r, key, out);                                                                       \
    }

SF_OF(sf_uid, sf_job_int, "user_id")

SF_OF(sf_gid, sf_job_int, "group_id")

SF_OF(sf_priority, sf_job_int, "priority")

static void sf_state(const sacct_row_t *r, loom_sbuf_t *out)
{
    const json_t *s = sf_src(r);
    sf_str(s, "state", out);
    if (strcmp(loom_js_or(s, "state", ""), "CANCELLED") == 0 && loom_jhas(s, "cancelled_by"))
        loom_sbuf_addf(out, " by %" PRId64, loom_ji(s, "cancelled_by", 0));
}

static void sf_exitcode(const sacct_row_t *r, loom_sbuf_t *out)
{
    loom_cli_exit_code(loom_ji(sf_src(r), "exit_code", 0), out);
}

static void sf_derived(const sacct_row_t *r, loom_sbuf_t *out)
{
    if (!r->step)
        loom_cli_exit_code(loom_ji(r->job, "derived_exit_code", 0), out);
}

static int64_t sf_elapsed_secs(const sacct_row_t *r)
{
    const json_t *s = sf_src(r);
    int64_t start = loom_ji(s, "start_time", 0), end = loom_ji(s, "end_time", 0);
    if (start <= 0 || (!r->step && !sf_job_started(r->job)))
        return 0;
    if (end <= 0)
        end = r->now;
    int64_t secs = end > start ? end - start : 0, sus = loom_ji(s, "tot_sus_time", 0);
    return secs > sus ? secs - sus : 0; /* suspended time is not elapsed (slurmdbd) */
}

static void sf_suspended(const sacct_row_t *r, loom_sbuf_t *out)
{
    loom_time_fmt_limit(loom_ji(sf_src(r), "tot_sus_time", 0), out);
}

static void sf_elapsed(const sacct_row_t *r, loom_sbuf_t *out)
{
    loom_time_fmt_limit(sf_elapsed_secs(r), out);
}

static void sf_elapsedraw(const sacct_row_t *r, loom_sbuf_t *out)
{
    loom_sbuf_addf(out, "%" PRId64, sf_elapsed_secs(r));
}

static void sf_date(const sacct_row_t *r, const char *key, loom_sbuf_t *out)
{
    const json_t *s = sf_src(r);
    int64_t t = loom_ji(s, key, 0);
    if (t <= 0 && r->step && strcmp(key, "start_time") != 0 && strcmp(key, "end_time") != 0)
        t = loom_ji(s, "start_time", 0); /* steps are submitted when they start */
    loom_date_fmt((time_t)t, "Unknown", out);
}

/* A pending job's record may hold its expected start: 22.05 shows Unknown,
 * and None once the job ended without starting (cancelled while pending). */
static void sf_start(const sacct_row_t *r, loom_sbuf_t *out)
{
    if (!r->step && !sf_job_started(r->job))
        loom_sbuf_add(out, loom_ji(r->job, "end_time", 0) > 0 ? "None" : "Unknown");
    else
        sf_date(r, "start_time", out);
}

SF_OF(sf_end, sf_date, "end_time")

static void sf_submit(const sacct_row_t *r, loom_sbuf_t *out)
{
    sf_date(r, r->step ? "submit_step" : "submit_time", out);
}

static void sf_eligible(const sacct_row_t *r, loom_sbuf_t *out)
{
    /* never eligible: cancelled while held (priority 0) or dependent */
    const char *why = loom_js_or(r->job, "reason", "");
    if (!r->step && !sf_job_started(r->job) &&
        (!strncmp(why, "JobHeld", 7) || !strcmp(why, "Dependency") ||
         (loom_jhas(r->job, "priority") && loom_ji(r->job, "priority", 1) == 0))) {
        loom_sbuf_add(out, "Unknown");
        return;
    }
    sf_date(r, r->step ? "submit_step" : "eligible_time", out);
}

static int64_t sf_ncpus(const sacct_row_t *r)
{
    return r->step ? loom_ji(r->step, "ncpus", 0) : loom_ji(r->job, "num_cpus", 0);
}

static void sf_alloccpus(const sacct_row_t *r, loom_sbuf_t *out)
{
    loom_sbuf_addf(out, "%" PRId64, sf_ncpus(r));
}

static void sf_reqcpus(const sacct_row_t *r, loom_sbuf_t *out)
{
    loom_sbuf_addf(out, "%" PRId64, loom_ji(r->job, "num_cpus", 0));
}

static void sf_nnodes(const sacct_row_t *r, loom_sbuf_t *out)
{
    int64_t n = r->step ? loom_ji(r->step, "nnodes", 1) : loom_ji(r->job, "num_nodes", 0);
    loom_sbuf_addf(out, "%" PRId64, n);
}

static void sf_mem_mib(int64_t mib, loom_sbuf_t *out)
{
    static const char units[] = "MGTP";
    int u = 0;
    while (mib >= 1024 && mib % 1024 == 0 && u < 3) {
        mib /= 1024;
        u++;
    }
    loom_sbuf_addf(out, "%" PRId64 "%c", mib, units[u]);
}

/* The job's whole memory request, as sacct 22.05 prints ReqMem (no 'c'/'n'
 * suffix): ReqTRES's "mem=" value, else the per-CPU or per-node request
 * times the job's CPUs or nodes. */
static void sf_reqmem(const sacct_row_t *r, loom_sbuf_t *out)
{
    if (r->step)
        return;
    const char *tres = loom_js_or(r->job, "tres_req", "");
    const char *m = strstr(tres, "mem=");
    if (m && (m == tres || m[-1] == ',')) {
        loom_sbuf_addn(out, m + 4, strcspn(m + 4, ","));
    } else if (loom_jhas(r->job, "mem_per_cpu")) {
        int64_t n = loom_ji(r->job, "num_cpus", 1);
        sf_mem_mib(loom_ji(r->job, "mem_per_cpu", 0) * (n > 0 ? n : 1), out);
    } else if (loom_jhas(r->job, "mem_per_node")) {
        int64_t n = loom_ji(r->job, "num_nodes", 1);
        sf_mem_mib(loom_ji(r->job, "mem_per_node", 0) * (n > 0 ? n : 1), out);
    }
}

void sacct_size(uint64_t bytes, loom_sbuf_t *out)
{
    static const char units[] = "\0KMGTP";
    int u = 0;
    while (bytes >= 1024 && bytes % 1024 == 0 && u < 5) {
        bytes /= 1024;
        u++;
    }
    loom_sbuf_addf(out, "%" PRIu64, bytes);
    if (u)
        loom_sbuf_addc(out, units[u]);
}

/* A step's usage figure (messages.md §6.1): KiB (mult 1024) or bytes. */
static void sf_usage(const sacct_row_t *r, const char *key, uint64_t mult, loom_sbuf_t *out)
{
    if (r->step && loom_jhas(r->step, key)) {
        int64_t v = loom_ji(r->step, key, 0);
        sacct_size(v > 0 ? (uint64_t)v * mult : 0, out);
    }
}

static void sf_kib(const sacct_row_t *r, const char *key, loom_sbuf_t *out)
{
    sf_usage(r, key, 1024, out);
}

static void sf_maxrsstask(const sacct_row_t *r, loom_sbuf_t *out)
{
    if (r->step && loom_jhas(r->step, "max_rss_task"))
        loom_sbuf_addf(out, "%" PRId64, loom_ji(r->step, "max_rss_task", 0));
}

SF_OF(sf_maxrss, sf_kib, "max_rss")

SF_OF(sf_maxvmsize, sf_kib, "max_vmsize")

void sacct_cpu_time(int64_t usec, loom_sbuf_t *out)
{
    int64_t secs = usec / 1000000, msec = (usec / 1000) % 1000;
    if (usec == 0)
        loom_sbuf_add(out, "00:00:00");
    else if (secs < 3600)
        loom_sbuf_addf(out, "%02" PRId64 ":%02" PRId64 ".%03" PRId64, secs / 60, secs % 60, msec);
    else
        loom_time_fmt_limit(secs, out);
}

/* A job row without its own figure adds up its steps' (as slurmdbd does). */
static void sf_cpu(const sacct_row_t *r, const char *key, loom_sbuf_t *out)
{
    const json_t *src = sf_src(r);
    int64_t v = loom_ji(src, key, 0);
    if (!r->step && !loom_jhas(src, key)) {
        size_t i;
        const json_t *st;
        json_array_foreach(json_object_get(r->job, "steps"), i, st) v += loom_ji(st, key, 0);
    }
    sacct_cpu_time(v, out);
}

SF_OF(sf_totalcpu, sf_cpu, "total_cpu")

SF_OF(sf_usercpu, sf_cpu, "user_cpu")

SF_OF(sf_systemcpu, sf_cpu, "system_cpu")

static void sf_cputime(const sacct_row_t *r, loom_sbuf_t *out)
{
    loom_time_fmt_limit(sf_elapsed_secs(r) * sf_ncpus(r), out);
}

static void sf_cputimeraw(const sacct_row_t *r, loom_sbuf_t *out)
{
    loom_sbuf_addf(out, "%" PRId64, sf_elapsed_secs(r) * sf_ncpus(r));
}

static void sf_timelimit(const sacct_row_t *r, loom_sbuf_t *out)
{
    if (r->step || !loom_jhas(r->job, "time_limit"))
        return;
    int64_t m = loom_ji(r->job, "time_limit", -1);
    loom_time_fmt_limit(m < 0 ? LOOM_TIME_INFINITE : m * 60, out);
}

static void sf_timelimitraw(const sacct_row_t *r, loom_sbuf_t *out)
{
    if (r->step || !loom_jhas(r->job, "time_limit"))
        return;
    int64_t m = loom_ji(r->job, "time_limit", -1);
    if (m < 0)
        loom_sbuf_add(out, "UNLIMITED");
    else
        loom_sbuf_addf(out, "%" PRId64, m);
}

static void sf_reason(const sacct_row_t *r, loom_sbuf_t *out)
{
    if (!r->step)
        loom_sbuf_add(out, loom_js_or(r->job, "reason", "None"));
}

/* ---- fields tools ask for that Loom keeps no data for, as 22.05 prints them
 * on a cluster without energy accounting, WCKeys, MCS or containers -------- */

static void sf_cluster(const sacct_row_t *r, loom_sbuf_t *out)
{
    sf_str(r->job, "cluster", out);
}

static void sf_empty(const sacct_row_t *r, loom_sbuf_t *out)
{
    (void)r;
    (void)out;
}

static void sf_ntasks(const sacct_row_t *r, loom_sbuf_t *out)
{
    if (r->step)
        loom_sbuf_addf(out, "%" PRId64, loom_ji(r->step, "ntasks", 1));
}

/* A job's nodes once it has run (0 before), a step's nodes. */
static void sf_allocnodes(const sacct_row_t *r, loom_sbuf_t *out)
{
    if (!r->step && !sf_job_started(r->job))
        loom_sbuf_add(out, "0");
    else
        sf_nnodes(r, out);
}

static void sf_reqnodes(const sacct_row_t *r, loom_sbuf_t *out)
{
    loom_sbuf_addf(out, "%" PRId64, loom_ji(r->job, "num_nodes", 1));
}

static void sf_wckeyid(const sacct_row_t *r, loom_sbuf_t *out)
{
    if (!r->step)
        loom_sbuf_add(out, "0");
}

/* Energy: 0 on steps and on a job that has ended. */
static void sf_energy(const sacct_row_t *r, loom_sbuf_t *out)
{
    if (r->step || loom_ji(r->job, "end_time", 0) > 0)
        loom_sbuf_add(out, "0");
}

/* ---- 22.05's usage fields of a step (the supervisors' figures, usage.h);
 * empty on the job's row, as sacct prints them -------------------------- */

static const json_t *sf_more(const sacct_row_t *r)
{
    const json_t *m = r->step ? json_object_get(r->step, "usage_more") : NULL;
    return json_is_object(m) ? m : NULL;
}

/* A figure of the step: its "usage_more" member, else the record's own. */
static bool sf_step_has(const sacct_row_t *r, const char *key, const json_t **v)
{
    const json_t *m = sf_more(r);
    *v = m ? json_object_get(m, key) : NULL;
    if (!*v && r->step)
        *v = json_object_get(r->step, key);
    return *v != NULL;
}

static int64_t sf_step_int(const sacct_row_t *r, const char *key)
{
    const json_t *v;
    return sf_step_has(r, key, &v) && json_is_integer(v) ? (int64_t)json_integer_value(v) : 0;
}

/* An average as 22.05 takes it: the tasks' total ("tot_rss": the sum of
 * each task's peak) over the tasks; records without totals keep theirs. */
static int64_t sf_step_ave(const sacct_row_t *r, const char *key)
{
    char tot[64];
    const json_t *v;
    int64_t n = loom_ji(r->step, "ntasks", 1);
    snprintf(tot, sizeof(tot), "tot_%s", key + 4);
    if (sf_step_has(r, tot, &v) && json_is_integer(v) && n > 0)
        return (int64_t)json_integer_value(v) / n;
    return sf_step_int(r, key);
}

static void sf_averss(const sacct_row_t *r, loom_sbuf_t *out)
{
    const json_t *v;
    if (sf_step_has(r, "ave_rss", &v) || sf_step_has(r, "tot_rss", &v))
        sacct_size((uint64_t)sf_step_ave(r, "ave_rss") * 1024, out);
}

/* Disk figures as sacct 22.05 prints them: megabytes, "0.05M", "1.00M",
 * "20.70M"; "0" for nothing; over 1M in sacct's exact units (2048M: "2G"). */
void sacct_disk_mb(int64_t bytes, loom_sbuf_t *out)
{
    static const char units[] = "MGTPE";
    double v = (double)(bytes > 0 ? bytes : 0) / 1048576.0;
    int u = 0;
    if (v <= 0) {
        loom_sbuf_add(out, "0");
        return;
    }
    if (v <= 1) {
        loom_sbuf_addf(out, "%.2fM", v);
        return;
    }
    while (v >= 1024 && v == (double)(int64_t)v && (int64_t)v % 1024 == 0 && u < 4) {
        v /= 1024;
        u++;
    }
    if (v == (double)(int64_t)v)
        loom_sbuf_addf(out, "%" PRId64 "%c", (int64_t)v, units[u]);
    else
        loom_sbuf_addf(out, "%.2f%c", v, units[u]);
}

static void sf_disk_field(const sacct_row_t *r, const char *key, loom_sbuf_t *out)
{
    if (r->step)
        sacct_disk_mb(strncmp(key, "ave_", 4) ? sf_step_int(r, key) : sf_step_ave(r, key), out);
}

SF_OF(sf_avediskread, sf_disk_field, "ave_disk_read")

SF_OF(sf_avediskwrite, sf_disk_field, "ave_disk_write")

SF_OF(sf_maxdiskread, sf_disk_field, "max_disk_read")

SF_OF(sf_maxdiskwrite, sf_disk_field, "max_disk_write")

/* A node name of a step's figure; MaxPagesNode and the like, which Loom
 * does not measure, name the node of MaxRSS as 22.05 does on one node. */
static void sf_step_node(const sacct_row_t *r, const char *key, loom_sbuf_t *out)
{
    const json_t *v;
    if (!r->step)
        return;
    if (!sf_step_has(r, key, &v) || !json_is_string(v))
        sf_step_has(r, "max_rss_node", &v);
    const char *s = json_string_value(v);
    loom_sbuf_add(out, s && *s ? s : loom_js_or(r->step, "nodes", ""));
}

static void sf_step_task(const sacct_row_t *r, const char *key, loom_sbuf_t *out)
{
    if (r->step)
        loom_sbuf_addf(out, "%" PRId64, sf_step_int(r, key));
}

static void sf_step_zero(const sacct_row_t *r, loom_sbuf_t *out)
{
    if (r->step)
        loom_sbuf_add(out, "0");
}

#define SF_NODE(fn, key)                                                                           \
    static void fn(const sacct_row_t *r, loom_sbuf_t *out)                                         \
    {                                                                                              \
        sf_step_node(r, key, out);                                                                 \
    }
#define SF_TASK(fn, key)                                                                           \
    static void fn(const sacct_row_t *r, loom_sbuf_t *out)                                         \
    {                                                                                              \
        sf_step_task(r, key, out);                                                                 \
    }

SF_NODE(sf_maxdiskreadnode, "max_disk_read_node")
SF_NODE(sf_maxdiskwritenode, "max_disk_write_node")
SF_NODE(sf_maxpagesnode, "max_pages_node")
SF_NODE(sf_maxvmsizenode, "max_vmsize_node")
SF_NODE(sf_mincpunode, "min_cpu_node")
SF_TASK(sf_maxdiskreadtask, "max_disk_read_task")
SF_TASK(sf_maxdiskwritetask, "max_disk_write_task")
SF_TASK(sf_maxvmsizetask, "max_vmsize_task")
SF_TASK(sf_mincputask, "min_cpu_task")

static void sf_avevmsize(const sacct_row_t *r, loom_sbuf_t *out)
{
    if (r->step)
        sacct_size((uint64_t)sf_step_ave(r, "ave_vmsize") * 1024, out);
}

/* CPU seconds of a step's task figure (microseconds), sacct's "HH:MM:SS". */
static void sf_cpu_secs(int64_t usec, loom_sbuf_t *out)
{
    loom_time_fmt_limit(usec > 0 ? usec / 1000000 : 0, out);
}

static int64_t sf_ave_cpu_us(const sacct_row_t *r)
{
    int64_t n = loom_ji(r->step, "ntasks", 1);
    return sf_step_int(r, "total_cpu") / (n > 0 ? n : 1);
}

static void sf_avecpu(const sacct_row_t *r, loom_sbuf_t *out)
{
    if (r->step)
        sf_cpu_secs(sf_ave_cpu_us(r), out);
}

static void sf_mincpu(const sacct_row_t *r, loom_sbuf_t *out)
{
    if (r->step)
        sf_cpu_secs(sf_step_int(r, "min_cpu"), out);
}

/* The step's task layout: what srun asked for, else Slurm's default (cyclic
 * when there are no more tasks than nodes); "Unknown" for batch and extern. */
static void sf_layout(const sacct_row_t *r, loom_sbuf_t *out)
{
    if (!r->step)
        return;
    if (!json_is_integer(json_object_get(r->step, "step_id")) &&
        strspn(loom_js_or(r->step, "step_id", ""), "0123456789") == 0) {
        loom_sbuf_add(out, "Unknown");
        return;
    }
    const char *d = loom_js(r->step, "distribution");
    if (d && *d) {
        loom_sbuf_addc(out, (char)(*d >= 'a' && *d <= 'z' ? *d - 32 : *d));
        loom_sbuf_addn(out, d + 1, strcspn(d + 1, ":,"));
    } else {
        loom_sbuf_add(out, loom_ji(r->step, "ntasks", 1) <= loom_ji(r->step, "nnodes", 1)
                               ? "Cyclic"
                               : "Block");
    }
}

/* ReqCPUFreq*: "Unknown" on the job and srun steps, 0 on batch and extern. */
static void sf_reqcpufreq(const sacct_row_t *r, loom_sbuf_t *out)
{
    bool numbered = !r->step || json_is_integer(json_object_get(r->step, "step_id")) ||
                    strspn(loom_js_or(r->step, "step_id", ""), "0123456789") > 0;
    loom_sbuf_add(out, numbered ? "Unknown" : "0");
}

/* ---- TRESUsageIn* / TRESUsageOut* of a step -------------------------------- */

typedef enum { SF_T_AVE, SF_T_MAX, SF_T_MIN, SF_T_TOT } sf_tkind_t;

static void sf_tres_in_vals(const sacct_row_t *r, sf_tkind_t k, loom_sbuf_t *out)
{
    static const char *const cpu[] = {"", "max_cpu", "min_cpu", "total_cpu"};
    static const char *const mem[] = {"ave_rss", "max_rss", "min_rss", "tot_rss"};
    static const char *const vm[] = {"ave_vmsize", "max_vmsize", "min_vmsize", "tot_vmsize"};
    static const char *const rd[] = {"ave_disk_read", "max_disk_read", "min_disk_read",
                                     "tot_disk_read"};
    loom_sbuf_add(out, "cpu=");
    sf_cpu_secs(k == SF_T_AVE ? sf_ave_cpu_us(r) : sf_step_int(r, cpu[k]), out);
    int64_t (*get)(const sacct_row_t *, const char *) = k == SF_T_AVE ? sf_step_ave : sf_step_int;
    loom_sbuf_addf(out, ",energy=0,fs/disk=%" PRId64 ",mem=", get(r, rd[k]));
    sacct_size((uint64_t)get(r, mem[k]) * 1024, out);
    loom_sbuf_add(out, ",pages=0,vmem=");
    sacct_size((uint64_t)get(r, vm[k]) * 1024, out);
}

/* Node ("energy" too) or task ("energy" left out) of each maximum/minimum. */
static void sf_tres_where(const sacct_row_t *r, bool in, bool max, bool node, loom_sbuf_t *out)
{
    static const char *const in_names[] = {"cpu", "energy", "fs/disk", "mem", "pages", "vmem"};
    static const char *const in_max[] = {"max_cpu", "max_rss", "max_disk_read",
                                         "max_rss", "max_rss", "max_vmsize"};
    static const char *const in_min[] = {"min_cpu", "min_rss", "min_disk_read",
                                         "min_rss", "min_rss", "min_vmsize"};
    static const char *const out_names[] = {"energy", "fs/disk"};
    static const char *const out_max[] = {"max_disk_write", "max_disk_write"};
    static const char *const out_min[] = {"min_disk_write", "min_disk_write"};
    size_t n = in ? 6 : 2;
    const char *const *names = in ? in_names : out_names;
    const char *const *keys = in ? (max ? in_max : in_min) : (max ? out_max : out_min);
    bool first = true;
    for (size_t i = 0; i < n; i++) {
        if (!node && strcmp(names[i], "energy") == 0)
            continue;
        loom_sbuf_addf(out, "%s%s=", first ? "" : ",", names[i]);
        first = false;
        char key[64];
        snprintf(key, sizeof(key), "%s%s", keys[i], node ? "_node" : "_task");
        if (node)
            sf_step_node(r, key, out);
        else if (strcmp(names[i], "pages") == 0)
            loom_sbuf_add(out, "0");
        else
            sf_step_task(r, key, out);
    }
}

static void sf_tres_out_vals(const sacct_row_t *r, sf_tkind_t k, loom_sbuf_t *out)
{
    static const char *const wr[] = {"ave_disk_write", "max_disk_write", "min_disk_write",
                                     "tot_disk_write"};
    loom_sbuf_addf(out, "energy=0,fs/disk=%" PRId64,
                   k == SF_T_AVE ? sf_step_ave(r, wr[k]) : sf_step_int(r, wr[k]));
}

#define SF_TIN(fn, kind)                                                                           \
    static void fn(const sacct_row_t *r, loom_sbuf_t *out)                                         \
    {                                                                                              \
        if (r->step)                                                                               \
            sf_tres_in_vals(r, kind, out);                                                         \
    }
#define SF_TOUT(fn, kind)                                                                          \
    static void fn(const sacct_row_t *r, loom_sbuf_t *out)                                         \
    {                                                                                              \
        if (r->step)                                                                               \
            sf_tres_out_vals(r, kind, out);                                                        \
    }
#define SF_TWHERE(fn, in, max, node)                                                               \
    static void fn(const sacct_row_t *r, loom_sbuf_t *out)                                         \
    {                                                                                              \
        if (r->step)                                                                               \
            sf_tres_where(r, in, max, node, out);                                                  \
    }

SF_TIN(sf_tin_ave, SF_T_AVE)
SF_TIN(sf_tin_max, SF_T_MAX)
SF_TIN(sf_tin_min, SF_T_MIN)
SF_TIN(sf_tin_tot, SF_T_TOT)
SF_TOUT(sf_tout_ave, SF_T_AVE)
SF_TOUT(sf_tout_max, SF_T_MAX)
SF_TOUT(sf_tout_min, SF_T_MIN)
SF_TOUT(sf_tout_tot, SF_T_TOT)
SF_TWHERE(sf_tin_maxnode, true, true, true)
SF_TWHERE(sf_tin_maxtask, true, true, false)
SF_TWHERE(sf_tin_minnode, true, false, true)
SF_TWHERE(sf_tin_mintask, true, false, false)
SF_TWHERE(sf_tout_maxnode, false, true, true)
SF_TWHERE(sf_tout_maxtask, false, true, false)
SF_TWHERE(sf_tout_minnode, false, false, true)
SF_TWHERE(sf_tout_mintask, false, false, false)

/* ---- the job's own accounting fields ---------------------------------------- */

static void sf_associd(const sacct_row_t *r, loom_sbuf_t *out)
{
    loom_sbuf_addf(out, "%" PRId64, loom_ji(r->job, "assoc_id", 0));
}

static void sf_dbindex(const sacct_row_t *r, loom_sbuf_t *out)
{
    loom_sbuf_addf(out, "%" PRId64, loom_ji(r->job, "db_index", 0));
}

/* The QOS's id: the record's, else "normal"'s 1 (sacctmgr creates it first). */
static void sf_qosraw(const sacct_row_t *r, loom_sbuf_t *out)
{
    if (r->step)
        return;
    if (loom_jhas(r->job, "qos_id"))
        loom_sbuf_addf(out, "%" PRId64, loom_ji(r->job, "qos_id", 0));
    else
        loom_sbuf_add(out, strcmp(loom_js_or(r->job, "qos", "normal"), "normal") ? "0" : "1");
}

static void sf_reservationid(const sacct_row_t *r, loom_sbuf_t *out)
{
    if (!r->step && loom_ji(r->job, "resv_id", 0) > 0)
        loom_sbuf_addf(out, "%" PRId64, loom_ji(r->job, "resv_id", 0));
}

/* The job's flags: the record's, else what slurmdbd records of a job the
 * main scheduler started ("SchedMain,StartRecieved", Slurm's spelling). */
static void sf_flags(const sacct_row_t *r, loom_sbuf_t *out)
{
    if (r->step)
        return;
    const char *f = loom_js(r->job, "flags");
    if (f && *f)
        loom_sbuf_add(out, f);
    else
        loom_sbuf_add(out, sf_job_started(r->job) ? "SchedMain,StartRecieved" : "StartRecieved");
}

/* Reserved: how long the job waited once eligible (until now while it
 * pends); negative (eligible in the future) reads INVALID as in 22.05. */
static int64_t sf_reserved_secs(const sacct_row_t *r)
{
    int64_t elig = loom_ji(r->job, "eligible_time", 0);
    if (elig <= 0)
        return 0;
    return (sf_job_started(r->job) ? loom_ji(r->job, "start_time", 0) : (int64_t)r->now) - elig;
}

static void sf_reserved_fmt(int64_t secs, loom_sbuf_t *out)
{
    if (secs < 0)
        loom_sbuf_add(out, "INVALID");
    else
        loom_time_fmt_limit(secs, out);
}

static void sf_reserved(const sacct_row_t *r, loom_sbuf_t *out)
{
    if (!r->step)
        sf_reserved_fmt(sf_reserved_secs(r), out);
}

static int64_t sf_resvcpu_secs(const sacct_row_t *r)
{
    return sf_reserved_secs(r) * loom_ji(r->job, "num_cpus", 1);
}

static void sf_resvcpu(const sacct_row_t *r, loom_sbuf_t *out)
{
    if (!r->step)
        sf_reserved_fmt(sf_resvcpu_secs(r), out);
}

/* A negative figure wraps as 22.05's 32-bit arithmetic does. */
static void sf_resvcpuraw(const sacct_row_t *r, loom_sbuf_t *out)
{
    int64_t v = sf_resvcpu_secs(r);
    if (!r->step)
        loom_sbuf_addf(out, "%" PRIu64, v < 0 ? (uint64_t)(uint32_t)v : (uint64_t)v);
}

static const sacct_field_t sacct_fields[] = {
    {"Account", 10, sf_account, 0},
    {"AdminComment", 15, sf_admin_comment, 0},
    {"AllocCPUS", 10, sf_alloccpus, 1},
    {"AllocNodes", 10, sf_allocnodes, 1},
    {"AllocTRES", 10, sf_alloctres, 0},
    {"AssocID", 7, sf_associd, 1},
    {"AveCPU", 10, sf_avecpu, 0},
    {"AveCPUFreq", 10, sf_step_zero, 0},
    {"AveDiskRead", 14, sf_avediskread, 0},
    {"AveDiskWrite", 14, sf_avediskwrite, 0},
    {"AvePages", 10, sf_step_zero, 0},
    {"AveRSS", 10, sf_averss, 0},
    {"AveVMSize", 10, sf_avevmsize, 0},
    {"BlockID", 16, sf_empty, 0},
    {"Cluster", 10, sf_cluster, 0},
    {"Comment", 14, sf_comment, 0},
    {"Constraints", 19, sf_constraints, 0},
    {"ConsumedEnergy", 14, sf_energy, 1},
    {"ConsumedEnergyRaw", 17, sf_energy, 1},
    {"Container", 19, sf_empty, 0},
    {"CPUTime", 10, sf_cputime, 0},
    {"CPUTimeRAW", 10, sf_cputimeraw, 1},
    {"DBIndex", 10, sf_dbindex, 1},
    {"DerivedExitCode", 15, sf_derived, 0},
    {"Elapsed", 10, sf_elapsed, 0},
    {"ElapsedRaw", 10, sf_elapsedraw, 1},
    {"Eligible", 19, sf_eligible, 0},
    {"End", 19, sf_end, 0},
    {"ExitCode", 8, sf_exitcode, 0},
    {"Flags", 19, sf_flags, 0},
    {"GID", 6, sf_gid, 1},
    {"Group", 9, sf_group, 0},
    {"JobID", -12, sf_jobid_fmt, 0},
    {"JobIDRaw", -12, sf_jobidraw, 0},
    {"JobName", 10, sf_jobname, 0},
    {"Layout", 9, sf_layout, 0},
    {"MaxDiskRead", 12, sf_maxdiskread, 0},
    {"MaxDiskReadNode", 15, sf_maxdiskreadnode, 0},
    {"MaxDiskReadTask", 15, sf_maxdiskreadtask, 1},
    {"MaxDiskWrite", 12, sf_maxdiskwrite, 0},
    {"MaxDiskWriteNode", 16, sf_maxdiskwritenode, 0},
    {"MaxDiskWriteTask", 16, sf_maxdiskwritetask, 1},
    {"MaxPages", 8, sf_step_zero, 0},
    {"MaxPagesNode", 12, sf_maxpagesnode, 0},
    {"MaxPagesTask", 14, sf_step_zero, 1},
    {"MaxRSS", 10, sf_maxrss, 0},
    {"MaxRSSNode", 10, sf_maxrssnode, 0},
    {"MaxRSSTask", 10, sf_maxrsstask, 0},
    {"MaxVMSize", 10, sf_maxvmsize, 0},
    {"MaxVMSizeNode", 14, sf_maxvmsizenode, 0},
    {"MaxVMSizeTask", 14, sf_maxvmsizetask, 1},
    {"McsLabel", 12, sf_empty, 0},
    {"MinCPU", 10, sf_mincpu, 0},
    {"MinCPUNode", 10, sf_mincpunode, 0},
    {"MinCPUTask", 10, sf_mincputask, 1},
    {"NCPUS", 10, sf_alloccpus, 1},
    {"NNodes", 8, sf_nnodes, 1},
    {"NodeList", 15, sf_nodelist, 0},
    {"NTasks", 8, sf_ntasks, 1},
    {"Partition", 10, sf_partition, 0},
    {"Priority", 10, sf_priority, 1},
    {"QOS", 10, sf_qos, 0},
    {"QOSRAW", 6, sf_qosraw, 1},
    {"Reason", 22, sf_reason, 0},
    {"ReqCPUFreq", 10, sf_reqcpufreq, 0},
    {"ReqCPUFreqGov", 13, sf_reqcpufreq, 0},
    {"ReqCPUFreqMax", 13, sf_reqcpufreq, 0},
    {"ReqCPUFreqMin", 13, sf_reqcpufreq, 0},
    {"ReqCPUS", 8, sf_reqcpus, 1},
    {"ReqMem", 10, sf_reqmem, 0},
    {"ReqNodes", 8, sf_reqnodes, 1},
    {"ReqTRES", 10, sf_reqtres, 0},
    {"Reservation", 20, sf_reservation, 0},
    {"ReservationId", 8, sf_reservationid, 1},
    {"Reserved", 10, sf_reserved, 0},
    {"ResvCPU", 10, sf_resvcpu, 0},
    {"ResvCPURAW", 10, sf_resvcpuraw, 1},
    {"Start", 19, sf_start, 0},
    {"State", 10, sf_state, 0},
    {"Submit", 19, sf_submit, 0},
    {"SubmitLine", 20, sf_submitline, 0},
    {"Suspended", 10, sf_suspended, 0},
    {"SystemComment", 15, sf_empty, 0},
    {"SystemCPU", 10, sf_systemcpu, 0},
    {"Timelimit", 10, sf_timelimit, 0},
    {"TimelimitRaw", 10, sf_timelimitraw, 0},
    {"TotalCPU", 10, sf_totalcpu, 0},
    {"TRESUsageInAve", 14, sf_tin_ave, 0},
    {"TRESUsageInMax", 14, sf_tin_max, 0},
    {"TRESUsageInMaxNode", 18, sf_tin_maxnode, 0},
    {"TRESUsageInMaxTask", 18, sf_tin_maxtask, 0},
    {"TRESUsageInMin", 14, sf_tin_min, 0},
    {"TRESUsageInMinNode", 18, sf_tin_minnode, 0},
    {"TRESUsageInMinTask", 18, sf_tin_mintask, 0},
    {"TRESUsageInTot", 14, sf_tin_tot, 0},
    {"TRESUsageOutAve", 15, sf_tout_ave, 0},
    {"TRESUsageOutMax", 15, sf_tout_max, 0},
    {"TRESUsageOutMaxNode", 19, sf_tout_maxnode, 0},
    {"TRESUsageOutMaxTask", 19, sf_tout_maxtask, 0},
    {"TRESUsageOutMin", 15, sf_tout_min, 0},
    {"TRESUsageOutMinNode", 19, sf_tout_minnode, 0},
    {"TRESUsageOutMinTask", 19, sf_tout_mintask, 0},
    {"TRESUsageOutTot", 15, sf_tout_tot, 0},
    {"UID", 6, sf_uid, 1},
    {"User", 9, sf_user, 0},
    {"UserCPU", 10, sf_usercpu, 0},
    {"WCKey", 10, sf_empty, 0},
    {"WCKeyID", 10, sf_wckeyid, 1},
    {"WorkDir", 20, sf_workdir, 0},
};

#define SF_N (sizeof(sacct_fields) / sizeof(sacct_fields[0]))

const sacct_field_t *sacct_field_find(const char *name, size_t len)
{
    for (size_t i = 0; i < SF_N; i++)
        if (strlen(sacct_fields[i].name) == len &&
            strncasecmp(sacct_fields[i].name, name, len) == 0)
            return &sacct_fields[i];
    return NULL;
}

const sacct_field_t *sacct_field_at(size_t i)
{
    return i < SF_N ? &sacct_fields[i] : NULL;
}
