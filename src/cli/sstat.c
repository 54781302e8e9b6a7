/*
 * sstat.c - sstat: the usage of running job steps (Slurm 22.05's sstat:
 * -j job[.step], -a/--allsteps, -o/--format, -p/-P, -n, --noconvert,
 * -e/--helpformat).
 *
 * The controller asks each node of the step for the usage of its processes
 * (step.stat -> step.usage -> the step's supervisor reads /proc); sstat
 * combines the nodes' answers: maxima with the node and task that hold
 * them, averages per task, CPU time, disk bytes (rchar/wchar). Columns and
 * widths are sstat's (a job id is left-justified, every other field
 * right-justified; too-long values are cut with a '+', as Slurm prints
 * them). Fields the supervisor does not measure (pages, energy, CPU
 * frequency) are printed as Slurm prints them without accounting data: 0 or
 * empty.
 */
#include "cli/cli_common.h"
#include "cli/cli_format.h"

#include "common/jobid.h"
#include "common/jobstate.h"
#include "common/xalloc.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* The step's usage, combined over its nodes. */
typedef struct sstat_use {
    char step[64];
    int64_t ntasks, max_rss, ave_rss, max_vm, ave_vm, total_cpu, min_cpu;
    const char *rss_node, *vm_node, *cpu_node;
    int64_t rss_task, vm_task, cpu_task;
    int64_t max_rd, ave_rd, max_wr, ave_wr; /* bytes */
    const char *rd_node, *wr_node;
    int64_t rd_task, wr_task;
    char nodes[256];
    char pids[4096]; /* the processes of a running step (-i, Pids) */
} sstat_use_t;

typedef void sstat_get_f(const sstat_use_t *u, bool convert, loom_sbuf_t *out);

typedef struct sstat_field {
    const char *name;
    int width;
    sstat_get_f *get;
} sstat_field_t;

static void sstat_kib(int64_t kib, bool convert, loom_sbuf_t *out)
{
    static const char units[] = "KMGTP";
    double v = (double)kib;
    int u = 0;
    if (convert)
        while (v >= 1024 && u < 4) {
            v /= 1024;
            u++;
        }
    if (u == 0)
        loom_sbuf_addf(out, "%lldK", (long long)kib);
    else
        loom_sbuf_addf(out, "%.2f%c", v, units[u]);
}

/* Bytes (MaxDiskRead): as they are, or in the largest unit with two decimals. */
static void sstat_bytes(int64_t v, bool convert, loom_sbuf_t *out)
{
    if (!convert || v < 1024) {
        loom_sbuf_addf(out, "%lld", (long long)v);
        return;
    }
    sstat_kib(v / 1024, convert, out);
}

/* CPU time as sacct's TotalCPU: "MM:SS.mmm", "HH:MM:SS", "D-HH:MM:SS". */
static void sstat_cpu(int64_t usec, loom_sbuf_t *out)
{
    int64_t s = usec / 1000000, ms = (usec / 1000) % 1000;
    if (s < 3600)
        loom_sbuf_addf(out, "%02lld:%02lld.%03lld", (long long)(s / 60), (long long)(s % 60),
                       (long long)ms);
    else if (s < 86400)
        loom_sbuf_addf(out, "%02lld:%02lld:%02lld", (long long)(s / 3600), (long long)(s / 60 % 60),
                       (long long)(s % 60));
    else
        loom_sbuf_addf(out, "%lld-%02lld:%02lld:%02lld", (long long)(s / 86400),
                       (long long)(s / 3600 % 24), (long long)(s / 60 % 60), (long long)(s % 60));
}

#define SSTAT_INT(fn, expr)                                                                        \
    static void fn(const sstat_use_t *u, bool convert, loom_sbuf_t *out)                           \
    {                                                                                              \
        loom_sbuf_addf(out, "%lld", (long long)(expr));                                            \
    }
#define SSTAT_STR(fn, expr)                                                                        \
    static void fn(const sstat_use_t *u, bool convert, loom_sbuf_t *out)                           \
    {                                                                                              \
        loom_sbuf_add(out, (expr) ? (expr) : "");                                                  \
    }
#define SSTAT_KIB(fn, expr)                                                                        \
    static void fn(const sstat_use_t *u, bool convert, loom_sbuf_t *out)                           \
    {                                                                                              \
        sstat_kib(expr, convert, out);                                                             \
    }
#define SSTAT_BYTES(fn, expr)                                                                      \
    static void fn(const sstat_use_t *u, bool convert, loom_sbuf_t *out)                           \
    {                                                                                              \
        sstat_bytes(expr, convert, out);                                                           \
    }
#define SSTAT_CPU(fn, expr)                                                                        \
    static void fn(const sstat_use_t *u, bool convert, loom_sbuf_t *out)                           \
    {                                                                                              \
        sstat_cpu(expr, out);                                                                      \
    }

SSTAT_STR(f_jobid, u->step)
SSTAT_KIB(f_maxvm, u->max_vm)
SSTAT_STR(f_maxvm_node, u->vm_node)
SSTAT_INT(f_maxvm_task, u->vm_task)
SSTAT_KIB(f_avevm, u->ave_vm)
SSTAT_KIB(f_maxrss, u->max_rss)
SSTAT_STR(f_maxrss_node, u->rss_node)
SSTAT_INT(f_maxrss_task, u->rss_task)
SSTAT_KIB(f_averss, u->ave_rss)
SSTAT_INT(f_zero, 0 * u->ntasks) /* not measured: Slurm's value without data */
SSTAT_STR(f_cpu_node, u->cpu_node)
SSTAT_INT(f_cpu_task, u->cpu_task)
SSTAT_CPU(f_mincpu, u->min_cpu)
SSTAT_CPU(f_avecpu, u->ntasks ? u->total_cpu / u->ntasks : 0)
SSTAT_INT(f_ntasks, u->ntasks)
SSTAT_STR(f_unknown, u ? "Unknown" : "")
SSTAT_STR(f_nodes, u->nodes)
SSTAT_STR(f_pids, u->pids)
SSTAT_BYTES(f_maxrd, u->max_rd)
SSTAT_STR(f_maxrd_node, u->rd_node)
SSTAT_INT(f_maxrd_task, u->rd_task)
SSTAT_BYTES(f_averd, u->ave_rd)
SSTAT_BYTES(f_maxwr, u->max_wr)
SSTAT_STR(f_maxwr_node, u->wr_node)
SSTAT_INT(f_maxwr_task, u->wr_task)
SSTAT_BYTES(f_avewr, u->ave_wr)

/* sstat 22.05's fields in its default order, with its widths. */
static const sstat_field_t sstat_fields[] = {
    {"JobID", -12, f_jobid},
    {"MaxVMSize", 10, f_maxvm},
    {"MaxVMSizeNode", 14, f_maxvm_node},
    {"MaxVMSizeTask", 14, f_maxvm_task},
    {"AveVMSize", 10, f_avevm},
    {"MaxRSS", 10, f_maxrss},
    {"MaxRSSNode", 10, f_maxrss_node},
    {"MaxRSSTask", 10, f_maxrss_task},
    {"AveRSS", 10, f_averss},
    {"MaxPages", 8, f_zero},
    {"MaxPagesNode", 12, f_maxrss_node},
    {"MaxPagesTask", 14, f_maxrss_task},
    {"AvePages", 10, f_zero},
    {"MinCPU", 10, f_mincpu},
    {"MinCPUNode", 10, f_cpu_node},
    {"MinCPUTask", 10, f_cpu_task},
    {"AveCPU", 10, f_avecpu},
    {"NTasks", 8, f_ntasks},
    {"AveCPUFreq", 10, f_zero},
    {"ReqCPUFreqMin", 13, f_unknown},
    {"ReqCPUFreqMax", 13, f_unknown},
    {"ReqCPUFreqGov", 13, f_unknown},
    {"ConsumedEnergy", 14, f_zero},
    {"MaxDiskRead", 12, f_maxrd},
    {"MaxDiskReadNode", 15, f_maxrd_node},
    {"MaxDiskReadTask", 15, f_maxrd_task},
    {"AveDiskRead", 12, f_averd},
    {"MaxDiskWrite", 12, f_maxwr},
    {"MaxDiskWriteNode", 16, f_maxwr_node},
    {"MaxDiskWriteTask", 16, f_maxwr_task},
    {"AveDiskWrite", 12, f_avewr},
    {"Nodelist", 20, f_nodes},
    {"ConsumedEnergyRaw", 17, f_zero},
    {"ReqCPUFreq", 13, f_unknown},
    {"Pids", 20, f_pids},
};

/* Fields printed without -o: sstat's own list stops before Nodelist. */
#define SSTAT_DEFAULT_FIELDS 31

typedef struct sstat {
    loom_cli_t cli;
    loom_strv_t ids; /* as given */
    bool all_steps, parsable, parsable2, noheader, noconvert;
    const sstat_field_t *cols[64];
    size_t ncols;
} sstat_t;

static const sstat_field_t *sstat_find(const char *name)
{
    for (size_t i = 0; i < sizeof(sstat_fields) / sizeof(sstat_fields[0]); i++)
        if (strcasecmp(sstat_fields[i].name, name) == 0)
            return &sstat_fields[i];
    return NULL;
}

static int sstat_format(sstat_t *s, const char *spec)
{
    loom_strv_t v = LOOM_STRV_INIT;
    loom_strv_split(&v, spec, ",");
    int rc = 0;
    for (size_t i = 0; i < v.n && s->ncols < 64; i++) {
        const sstat_field_t *f = sstat_find(v.v[i]);
        if (!f) {
            loom_cli_error(&s->cli, "Invalid field requested: \"%s\"", v.v[i]);
            rc = -1;
            break;
        }
        s->cols[s->ncols++] = f;
    }
    loom_strv_free(&v);
    return rc;
}

static int sstat_name_cmp(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* sstat 22.05's -e: the names sorted, four a line in 19 columns and a space,
 * the line's last one ending it. */
static void sstat_helpformat(void)
{
    enum { N = sizeof(sstat_fields) / sizeof(sstat_fields[0]) };
    const char *names[N];
    for (size_t i = 0; i < N; i++)
        names[i] = sstat_fields[i].name;
    qsort(names, N, sizeof(names[0]), sstat_name_cmp);
    for (size_t i = 0; i < N; i++)
        printf("%-19s%c", names[i], (i % 4 == 3 || i + 1 == N) ? '\n' : ' ');
}

/* One node's disk figures (max_disk_read, ...: common/usage.h) into u. */
static void sstat_disk(const json_t *n, const char *name, sstat_use_t *u, int64_t *rd_sum,
                       int64_t *wr_sum)
{
    int64_t nt = loom_ji(n, "ntasks", 0);
    *rd_sum += loom_ji(n, "ave_disk_read", 0) * nt;
    *wr_sum += loom_ji(n, "ave_disk_write", 0) * nt;
    if (!u->rd_node || loom_ji(n, "max_disk_read", 0) > u->max_rd) {
        u->max_rd = loom_ji(n, "max_disk_read", 0);
        u->rd_node = name;
        u->rd_task = loom_ji(n, "max_disk_read_task", 0);
    }
    if (!u->wr_node || loom_ji(n, "max_disk_write", 0) > u->max_wr) {
        u->max_wr = loom_ji(n, "max_disk_write", 0);
        u->wr_node = name;
        u->wr_task = loom_ji(n, "max_disk_write_task", 0);
    }
}

/* Combine the nodes' answers of step.stat. */
static void sstat_combine(const json_t *nodes, sstat_use_t *u)
{
    size_t i;
    json_t *n;
    int64_t rss_sum = 0, vm_sum = 0, rd_sum = 0, wr_sum = 0;
    u->min_cpu = -1;
    loom_sbuf_t names = LOOM_SBUF_INIT;
    json_array_foreach(nodes, i, n)
    {
        int64_t nt = loom_ji(n, "ntasks", 0);
        const char *name = loom_js_or(n, "node", "");
        u->ntasks += nt;
        rss_sum += loom_ji(n, "ave_rss", 0) * nt;
        vm_sum += loom_ji(n, "ave_vmsize", 0) * nt;
        u->total_cpu += loom_ji(n, "total_cpu", 0);
        if (!u->rss_node || loom_ji(n, "max_rss", 0) > u->max_rss) {
            u->max_rss = loom_ji(n, "max_rss", 0);
            u->rss_node = name;
            u->rss_task = loom_ji(n, "max_rss_task", 0);
        }
        if (!u->vm_node || loom_ji(n, "max_vmsize", 0) > u->max_vm) {
            u->max_vm = loom_ji(n, "max_vmsize", 0);
            u->vm_node = name;
            u->vm_task = loom_ji(n, "max_vmsize_task", 0);
        }
        if (u->min_cpu < 0 || loom_ji(n, "min_cpu", 0) < u->min_cpu) {
            u->min_cpu = loom_ji(n, "min_cpu", 0);
            u->cpu_node = name;
            u->cpu_task =
                loom_ji(n, loom_jhas(n, "min_cpu_task") ? "min_cpu_task" : "max_rss_task", 0);
        }
        sstat_disk(n, name, u, &rd_sum, &wr_sum);
        loom_sbuf_addf(&names, "%s%s", names.len ? "," : "", name);
        const char *pids = loom_js(n, "pids");
        size_t have = strlen(u->pids);
        if (pids && *pids && have < sizeof(u->pids))
            snprintf(u->pids + have, sizeof(u->pids) - have, "%s%s", have ? "," : "", pids);
    }
    if (u->min_cpu < 0)
        u->min_cpu = 0;
    u->ave_rss = u->ntasks ? rss_sum / u->ntasks : 0;
    u->ave_vm = u->ntasks ? vm_sum / u->ntasks : 0;
    u->ave_rd = u->ntasks ? rd_sum / u->ntasks : 0;
    u->ave_wr = u->ntasks ? wr_sum / u->ntasks : 0;
    snprintf(u->nodes, sizeof(u->nodes), "%s", loom_sbuf_str(&names));
    loom_sbuf_free(&names);
}

static void sstat_cell(const sstat_t *s, const sstat_field_t *f, const char *val, bool last,
                       loom_sbuf_t *out)
{
    if (s->parsable || s->parsable2) {
        loom_sbuf_add(out, val);
        if (!last || s->parsable)
            loom_sbuf_addc(out, '|');
        return;
    }
    int w = f->width < 0 ? -f->width : f->width;
    size_t len = strlen(val);
    if ((int)len > w) {
        loom_sbuf_addn(out, val, (size_t)w - 1);
        loom_sbuf_addc(out, '+');
    } else {
        loom_sbuf_addpad(out, val, (size_t)w, f->width > 0);
    }
    loom_sbuf_addc(out, ' ');
}

static void sstat_header(const sstat_t *s, loom_sbuf_t *out)
{
    for (size_t i = 0; i < s->ncols; i++)
        sstat_cell(s, s->cols[i], s->cols[i]->name, i + 1 == s->ncols, out);
    loom_sbuf_addc(out, '\n');
    if (s->parsable || s->parsable2)
        return;
    for (size_t i = 0; i < s->ncols; i++) {
        int w = s->cols[i]->width < 0 ? -s->cols[i]->width : s->cols[i]->width;
        for (int k = 0; k < w; k++)
            loom_sbuf_addc(out, '-');
        loom_sbuf_addc(out, ' ');
    }
    loom_sbuf_addc(out, '\n');
}

static void sstat_row(const sstat_t *s, const sstat_use_t *u, loom_sbuf_t *out)
{
    for (size_t i = 0; i < s->ncols; i++) {
        loom_sbuf_t v = LOOM_SBUF_INIT;
        s->cols[i]->get(u, !s->noconvert, &v);
        sstat_cell(s, s->cols[i], loom_sbuf_str(&v), i + 1 == s->ncols, out);
        loom_sbuf_free(&v);
    }
    loom_sbuf_addc(out, '\n');
}

/* One step's line (step LOOM_STEP_BATCH: J.batch); false when the step is not running. */
static bool sstat_step(sstat_t *s, uint32_t job, int64_t step, loom_sbuf_t *out)
{
    json_t *body = json_pack("{s:I}", "job_id", (json_int_t)job);
    json_object_set_new(body, "step_id",
                        step == LOOM_STEP_BATCH ? json_string("batch") : json_integer(step));
    json_t *reply = NULL;
    int rc = loom_cli_call(&s->cli, "step.stat", body, &reply, NULL);
    json_decref(body);
    if (rc == 0) {
        sstat_use_t u = {0};
        if (step == LOOM_STEP_BATCH)
            snprintf(u.step, sizeof(u.step), "%u.batch", (unsigned)job);
        else
            snprintf(u.step, sizeof(u.step), "%u.%lld", (unsigned)job, (long long)step);
        sstat_combine(json_object_get(reply, "nodes"), &u);
        sstat_row(s, &u, out);
    }
    json_decref(reply);
    return rc == 0;
}

/* The running steps of a job (job.info with steps), as sstat 22.05: the
 * first step, or with -a the batch step and every step; an unknown job and
 * one with nothing running are errors, a running job without steps is not. */
static void sstat_job_steps(sstat_t *s, uint32_t job, bool all, loom_sbuf_t *out)
{
    json_t *body = json_pack("{s:[I], s:b}", "job_ids", (json_int_t)job, "steps", 1), *reply = NULL;
    loom_cli_call(&s->cli, "job.info", body, &reply, NULL);
    json_decref(body);
    json_t *rec = json_array_get(json_object_get(reply, "jobs"), 0);
    uint32_t base = loom_job_base(loom_cli_job_state(rec));
    if (!rec) {
        loom_cli_error(&s->cli, "couldn't get steps for job %u", (unsigned)job);
    } else if (base != LOOM_JOB_RUNNING && base != LOOM_JOB_SUSPENDED) {
        loom_cli_error(&s->cli, "No steps running for job %u", (unsigned)job);
    } else {
        if (all && loom_ji(rec, "batch_flag", 1))
            sstat_step(s, job, LOOM_STEP_BATCH, out);
        size_t i;
        json_t *st;
        json_array_foreach(json_object_get(rec, "steps"), i, st)
        {
            if (sstat_step(s, job, (uint32_t)loom_ji(st, "step_id", 0), out) && !all)
                break;
        }
    }
    json_decref(reply);
}

static int sstat_args(sstat_t *s, int argc, char **argv)
{
    static const struct option longopts[] = {{"allsteps", no_argument, NULL, 'a'},
                                             {"format", required_argument, NULL, 'o'},
                                             {"fields", required_argument, NULL, 'o'},
                                             {"helpformat", no_argument, NULL, 'e'},
                                             {"jobs", required_argument, NULL, 'j'},
                                             {"noheader", no_argument, NULL, 'n'},
                                             {"noconvert", no_argument, NULL, 'N'},
                                             {"parsable", no_argument, NULL, 'p'},
                                             {"parsable2", no_argument, NULL, 'P'},
                                             {"version", no_argument, NULL, 'V'},
                                             {"usage", no_argument, NULL, 'h'},
                                             {"help", no_argument, NULL, 'h'},
                                             {"pidformat", no_argument, NULL, 'i'},
                                             {"verbose", no_argument, NULL, 'v'},
                                             {NULL, 0, NULL, 0}};
    int c;
    while ((c = getopt_long(argc, argv, "ao:ej:nNpPVhiv", longopts, NULL)) != -1) {
        switch (c) {
        case 'a':
            s->all_steps = true;
            break;
        case 'o':
            if (sstat_format(s, optarg) < 0)
                return -1;
            break;
        case 'e':
            sstat_helpformat();
            exit(0);
        case 'j':
            loom_strv_split(&s->ids, optarg, ",");
            break;
        case 'n':
            s->noheader = true;
            break;
        case 'N':
            s->noconvert = true;
            break;
        case 'p':
            s->parsable = true;
            break;
        case 'P':
            s->parsable2 = true;
            break;
        case 'V':
            loom_cli_version();
            exit(0);
        case 'h':
            printf("Usage: sstat [options] -j job[.stepid]\n");
            exit(0);
        case 'i': /* -i: this list instead of any other */
            s->ncols = 0;
            if (sstat_format(s, "JobID,Nodelist,Pids") < 0)
                return -1;
            break;
        case 'v':
            break;
        default:
            return -1;
        }
    }
    for (int i = optind; i < argc; i++)
        loom_strv_split(&s->ids, argv[i], ",");
    return 0;
}

int main(int argc, char **argv)
{
    sstat_t s = {0};
    loom_cli_init(&s.cli, "sstat");
    int rc = sstat_args(&s, argc, argv) < 0 ? s.cli.exit_error : 0;
    if (rc == 0 && s.ids.n == 0) {
        loom_cli_error(&s.cli, "You didn't give me any arguments to work on");
        rc = s.cli.exit_error;
    }
    if (s.ncols == 0)
        for (size_t i = 0; i < SSTAT_DEFAULT_FIELDS; i++)
            s.cols[s.ncols++] = &sstat_fields[i];
    loom_sbuf_t out = LOOM_SBUF_INIT;
    if (rc == 0 && !s.noheader)
        sstat_header(&s, &out);
    for (size_t i = 0; rc == 0 && i < s.ids.n; i++) {
        loom_jobid_t id;
        if (loom_jobid_parse(s.ids.v[i], &id, NULL) < 0) {
            loom_cli_error(&s.cli, "Invalid job id: %s", s.ids.v[i]);
            rc = s.cli.exit_error;
        } else if (id.step >= 0 || id.step == LOOM_STEP_BATCH) {
            if (!sstat_step(&s, id.job_id, id.step, &out))
                loom_cli_error(&s.cli, "couldn't get steps for job %s", s.ids.v[i]);
        } else {
            sstat_job_steps(&s, id.job_id, s.all_steps, &out);
        }
    }
    loom_cli_flush(&out);
    loom_sbuf_free(&out);
    loom_strv_free(&s.ids);
    loom_cli_fini(&s.cli);
    return rc;
}
