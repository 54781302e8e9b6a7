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
SF_JOB_STR(sf_comment, "comment")
SF_JOB_STR(sf_constraints, "features")
SF_JOB_STR(sf_reservation, "reservation")
SF_JOB_STR(sf_flags, "flags")
SF_JOB_STR(sf_submitline, "submit_line")

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

static void sf_uid(const sacct_row_t *r, loom_sbuf_t *out)
{
    sf_job_int(r, "user_id", out);
}

static void sf_gid(const sacct_row_t *r, loom_sbuf_t *out)
{
    sf_job_int(r, "group_id", out);
}

static void sf_priority(const sacct_row_t *r, loom_sbuf_t *out)
{
    sf_job_int(r, "priority", out);
}

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
    if (start <= 0)
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

static void sf_start(const sacct_row_t *r, loom_sbuf_t *out)
{
    sf_date(r, "start_time", out);
}

static void sf_end(const sacct_row_t *r, loom_sbuf_t *out)
{
    sf_date(r, "end_time", out);
}

static void sf_submit(const sacct_row_t *r, loom_sbuf_t *out)
{
    sf_date(r, r->step ? "submit_step" : "submit_time", out);
}

static void sf_eligible(const sacct_row_t *r, loom_sbuf_t *out)
{
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

static void sf_maxdiskread(const sacct_row_t *r, loom_sbuf_t *out)
{
    sf_usage(r, "max_disk_read", 1, out);
}

static void sf_maxdiskwrite(const sacct_row_t *r, loom_sbuf_t *out)
{
    sf_usage(r, "max_disk_write", 1, out);
}

static void sf_maxrsstask(const sacct_row_t *r, loom_sbuf_t *out)
{
    if (r->step && loom_jhas(r->step, "max_rss_task"))
        loom_sbuf_addf(out, "%" PRId64, loom_ji(r->step, "max_rss_task", 0));
}

static void sf_maxrss(const sacct_row_t *r, loom_sbuf_t *out)
{
    sf_kib(r, "max_rss", out);
}

static void sf_averss(const sacct_row_t *r, loom_sbuf_t *out)
{
    sf_kib(r, "ave_rss", out);
}

static void sf_maxvmsize(const sacct_row_t *r, loom_sbuf_t *out)
{
    sf_kib(r, "max_vmsize", out);
}

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

static void sf_totalcpu(const sacct_row_t *r, loom_sbuf_t *out)
{
    sf_cpu(r, "total_cpu", out);
}

static void sf_usercpu(const sacct_row_t *r, loom_sbuf_t *out)
{
    sf_cpu(r, "user_cpu", out);
}

static void sf_systemcpu(const sacct_row_t *r, loom_sbuf_t *out)
{
    sf_cpu(r, "system_cpu", out);
}

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
    if (!r->step && loom_ji(r->job, "start_time", 0) <= 0)
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

static const sacct_field_t sacct_fields[] = {
    {"Account", 10, sf_account, 0},
    {"AdminComment", 15, sf_empty, 0},
    {"AllocCPUS", 10, sf_alloccpus, 1},
    {"AllocNodes", 10, sf_allocnodes, 1},
    {"AllocTRES", 10, sf_alloctres, 0},
    {"AveRSS", 10, sf_averss, 0},
    {"Cluster", 10, sf_cluster, 0},
    {"Comment", 14, sf_comment, 0},
    {"Constraints", 19, sf_constraints, 0},
    {"ConsumedEnergy", 14, sf_energy, 1},
    {"ConsumedEnergyRaw", 17, sf_energy, 1},
    {"Container", 19, sf_empty, 0},
    {"CPUTime", 10, sf_cputime, 0},
    {"CPUTimeRAW", 10, sf_cputimeraw, 1},
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
    {"MaxRSS", 10, sf_maxrss, 0},
    {"MaxDiskRead", 12, sf_maxdiskread, 0},
    {"MaxDiskWrite", 12, sf_maxdiskwrite, 0},
    {"MaxRSSNode", 10, sf_maxrssnode, 0},
    {"MaxRSSTask", 10, sf_maxrsstask, 0},
    {"MaxVMSize", 10, sf_maxvmsize, 0},
    {"McsLabel", 12, sf_empty, 0},
    {"NCPUS", 10, sf_alloccpus, 1},
    {"NNodes", 8, sf_nnodes, 1},
    {"NodeList", 15, sf_nodelist, 0},
    {"NTasks", 8, sf_ntasks, 1},
    {"Partition", 10, sf_partition, 0},
    {"Priority", 10, sf_priority, 1},
    {"QOS", 10, sf_qos, 0},
    {"Reason", 22, sf_reason, 0},
    {"ReqCPUS", 8, sf_reqcpus, 1},
    {"ReqMem", 10, sf_reqmem, 0},
    {"ReqNodes", 8, sf_reqnodes, 1},
    {"ReqTRES", 10, sf_reqtres, 0},
    {"Reservation", 20, sf_reservation, 0},
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
