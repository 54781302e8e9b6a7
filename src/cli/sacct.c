/*
 * sacct.c - sacct: job accounting records from loomdbd (CLI_SPEC §8).
 *
 * Rows: each job ("123", "123_7" for an array task), then unless -X its
 * steps ("123.batch", "123.extern", "123.0", ...). Layout: print_fields
 * (cli_dbd.h). The query window: -S (default today's midnight, the epoch
 * with -j) to -E (default now), as Slurm 22.05 does.
 */
#include "cli/cli_dbd.h"
#include "cli/cli_format.h"
#include "cli/sacct_fields.h"
#include "cli/sacct_filter.h"
#include "cli/sacct_json.h"
#include "common/timefmt.h"
#include "common/xalloc.h"

#include <ctype.h>
#include <getopt.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

#define SACCT_DEFAULT "JobID,JobName,Partition,Account,AllocCPUS,State,ExitCode"
#define SACCT_BRIEF   "JobID,State,ExitCode"
/* 22.05's -l/--long */
#define SACCT_LONG                                                                                 \
    "JobID,JobIDRaw,JobName,Partition,MaxVMSize,MaxVMSizeNode,MaxVMSizeTask,AveVMSize,MaxRSS,"     \
    "MaxRSSNode,MaxRSSTask,AveRSS,MaxPages,MaxPagesNode,MaxPagesTask,AvePages,MinCPU,MinCPUNode,"  \
    "MinCPUTask,AveCPU,NTasks,AllocCPUS,Elapsed,State,ExitCode,AveCPUFreq,ReqCPUFreqMin,"          \
    "ReqCPUFreqMax,ReqCPUFreqGov,ReqMem,ConsumedEnergy,MaxDiskRead,MaxDiskReadNode,"               \
    "MaxDiskReadTask,AveDiskRead,MaxDiskWrite,MaxDiskWriteNode,MaxDiskWriteTask,AveDiskWrite,"     \
    "ReqTRES,AllocTRES,TRESUsageInAve,TRESUsageInMax,TRESUsageInMaxNode,TRESUsageInMaxTask,"       \
    "TRESUsageInMin,TRESUsageInMinNode,TRESUsageInMinTask,TRESUsageInTot,TRESUsageOutMax,"         \
    "TRESUsageOutMaxNode,TRESUsageOutMaxTask,TRESUsageOutAve,TRESUsageOutTot"

typedef struct {
    const sacct_field_t *f;
    int width;
} sacct_item_t;

typedef struct {
    loom_cli_t cli;
    loom_rpc_t *rpc;
    loom_pf_t pf;
    const char *format, *jobs, *users, *accounts, *states, *names, *parts, *start, *end;
    const char *clusters; /* -M (-L: "all"); NULL: the local cluster */
    bool all, allocs, json, helpformat, duplicates;
    char scripts; /* -B: 'B', --env-vars: 'E' (loomdbd keeps neither: NONE) */
    sacct_filter_t filter;
    int64_t win_start, win_end; /* the window asked of loomdbd (0: open) */
    sacct_item_t items[128];
    size_t nitems;
    loom_strv_t steps;    /* "job.step" ids asked for with -j */
    loom_sbuf_t jobs_all; /* every -j list, comma-joined (sacct 22.05 adds them up) */
    loom_sbuf_t out;
    int argc;
    char **argv;
} sacct_t;

static const char *const sacct_short_states[][2] = {
    {"PD", "PENDING"},   {"R", "RUNNING"},         {"S", "SUSPENDED"},  {"CD", "COMPLETED"},
    {"CA", "CANCELLED"}, {"F", "FAILED"},          {"TO", "TIMEOUT"},   {"NF", "NODE_FAIL"},
    {"PR", "PREEMPTED"}, {"OOM", "OUT_OF_MEMORY"}, {"BF", "BOOT_FAIL"}, {"DL", "DEADLINE"},
    {"RQ", "REQUEUED"},  {"CG", "COMPLETING"},
};

/* -s: short or long names, any case, as the long names the store keeps. */
static char *sacct_states(const char *list)
{
    loom_strv_t v = LOOM_STRV_INIT;
    loom_strv_split(&v, list, ",");
    loom_sbuf_t sb = LOOM_SBUF_INIT;
    for (size_t i = 0; i < v.n; i++) {
        const char *name = v.v[i];
        for (size_t k = 0; k < sizeof(sacct_short_states) / sizeof(*sacct_short_states); k++)
            if (!strcasecmp(name, sacct_short_states[k][0]) ||
                !strcasecmp(name, sacct_short_states[k][1]))
                name = sacct_short_states[k][1];
        loom_sbuf_addf(&sb, "%s%s", sb.len ? "," : "", name);
    }
    loom_strv_free(&v);
    return loom_sbuf_detach(&sb);
}

static int sacct_parse_format(sacct_t *s, const char *fmt)
{
    loom_strv_t parts = LOOM_STRV_INIT;
    loom_strv_split(&parts, fmt, ",");
    for (size_t i = 0; i < parts.n && s->nitems < 128; i++) {
        char *pct = strchr(parts.v[i], '%');
        size_t len = pct ? (size_t)(pct - parts.v[i]) : strlen(parts.v[i]);
        const sacct_field_t *f = sacct_field_find(parts.v[i], len);
        if (!f) {
            loom_cli_error(&s->cli, "Invalid field requested: \"%.*s\"", (int)len, parts.v[i]);
            loom_strv_free(&parts);
            return -1;
        }
        /* An explicit %N width right-justifies, JobID too (as Slurm does). */
        s->items[s->nitems].f = f;
        s->items[s->nitems++].width = pct ? atoi(pct + 1) : f->width;
    }
    loom_strv_free(&parts);
    return 0;
}

/* -j items as sacct 22.05 takes them: a job id first ("Bad job/step
 * specified: x" otherwise), digits after '_' ("Bad job array element
 * specified: 12" for 12_[3], 12_*, 12_x); what follows the task's digits
 * without a '.' is ignored (12_3x, 12_1-2 are 12_3, 12_1). */
static int sacct_check_jobs(const char *list)
{
    loom_strv_t v = LOOM_STRV_INIT;
    loom_strv_split(&v, list, ",");
    int rc = 0;
    for (size_t i = 0; i < v.n && rc == 0; i++) {
        const char *t = v.v[i], *u = strchr(t, '_');
        if (!isdigit((unsigned char)t[0])) {
            fprintf(stderr, "sacct: fatal: Bad job/step specified: %s\n", t);
            rc = -1;
        } else if (u && !isdigit((unsigned char)u[1])) {
            fprintf(stderr, "sacct: fatal: Bad job array element specified: %ld\n",
                    strtol(t, NULL, 10));
            rc = -1;
        }
    }
    loom_strv_free(&v);
    return rc;
}

/* -j: job ids go to the query, step ids ("1.0") also select rows. */
static char *sacct_job_ids(sacct_t *s)
{
    loom_strv_t v = LOOM_STRV_INIT;
    loom_strv_split(&v, s->jobs, ",");
    loom_sbuf_t sb = LOOM_SBUF_INIT;
    bool any_step = false;
    for (size_t i = 0; i < v.n; i++) {
        any_step |= strchr(v.v[i], '.') != NULL || strchr(v.v[i], '_') != NULL;
        loom_sbuf_addf(&sb, "%s%ld", sb.len ? "," : "", strtol(v.v[i], NULL, 10));
    }
    for (size_t i = 0; any_step && i < v.n; i++) {
        const char *u = strchr(v.v[i], '_');
        char task[48];
        if (u && !strchr(v.v[i], '.')) { /* "12_3x" -> "12_3" */
            snprintf(task, sizeof(task), "%ld_%ld", strtol(v.v[i], NULL, 10),
                     strtol(u + 1, NULL, 10));
            loom_strv_add(&s->steps, task);
        } else {
            loom_strv_add(&s->steps, v.v[i]);
        }
    }
    loom_strv_free(&v);
    return loom_sbuf_detach(&sb);
}

static int sacct_time(sacct_t *s, const char *text, time_t now, int64_t *out)
{
    time_t t;
    loom_err_t err = {0};
    if (loom_date_parse_past(text, now, &t, &err) < 0) {
        loom_cli_error(&s->cli, "Invalid time specification '%s'", text);
        return -1;
    }
    *out = t;
    return 0;
}

/* Does -M name this cluster (or "all")? loomdbd's records are this cluster's,
 * so another name alone lists nothing, as sacct 22.05 shows for it. */
static bool sacct_local_cluster(sacct_t *s)
{
    const loom_conf_t *conf = loom_cli_conf(&s->cli, NULL);
    if (!s->clusters || !conf || !conf->cluster_name)
        return true;
    loom_strv_t v = LOOM_STRV_INIT;
    loom_strv_split(&v, s->clusters, ",");
    bool hit = false;
    for (size_t i = 0; i < v.n && !hit; i++)
        hit = !strcasecmp(v.v[i], "all") || !strcasecmp(v.v[i], conf->cluster_name);
    loom_strv_free(&v);
    return hit;
}

static int sacct_query(sacct_t *s, time_t now, json_t **jobs)
{
    if (!sacct_local_cluster(s)) {
        *jobs = json_array();
        return 0;
    }
    json_t *q = json_pack("{s:b}", "steps", !s->allocs);
    int64_t start = 0, end = 0;
    if (s->start && sacct_time(s, s->start, now, &start) < 0)
        return -1;
    if (s->end && sacct_time(s, s->end, now, &end) < 0)
        return -1;
    if (!s->start && s->states && !s->jobs) {
        start = now; /* with -s the window is now */
    } else if (!s->start && !s->jobs) {
        struct tm tm;
        localtime_r(&now, &tm);
        tm.tm_hour = tm.tm_min = tm.tm_sec = 0;
        start = mktime(&tm);
    }
    if (start && !end)
        end = now; /* a window ends now: jobs eligible later are not in it */
    s->win_start = start;
    s->win_end = end;
    json_object_set_new(q, "start", json_integer(start));
    json_object_set_new(q, "end", json_integer(end));
    char *ids = s->jobs ? sacct_job_ids(s) : NULL,
         *states = s->states ? sacct_states(s->states) : NULL;
    const char *users = s->users;
    char self[64] = "";
    if (!users && !s->all && !s->jobs && getuid() != 0) {
        struct passwd *pw = getpwuid(getuid());
        snprintf(self, sizeof(self), "%s", pw ? pw->pw_name : "");
        users = self;
    }
    const char *keys[] = {"job_ids", "users", "accounts", "states", "names", "partitions"};
    const char *vals[] = {ids, users, s->accounts, states, s->names, s->parts};
    for (int i = 0; i < 6; i++)
        if (vals[i])
            json_object_set_new(q, keys[i], json_string(vals[i]));
    free(ids);
    free(states);
    json_t *reply = NULL;
    loom_err_t err = {0};
    int rc = loom_dbd_call(&s->cli, &s->rpc, "dbd.jobs.query", q, &reply, &err);
    json_decref(q);
    if (rc < 0) {
        loom_cli_error(&s->cli, "%s", err.msg);
        json_decref(reply);
        return -1;
    }
    *jobs = json_incref(json_object_get(reply, "jobs"));
    json_decref(reply);
    return *jobs ? 0 : -1;
}

/* Jobs by submit time, then array, then task, an array's record of its
 * pending tasks ("12_[4-5]") after its tasks, as sacct 22.05 lists them;
 * steps batch, extern, then by number. */
static int64_t sacct_key(const json_t *j, int which)
{
    const char *pending = loom_js(j, "array_task_str");
    switch (which) {
    case 0:
        return loom_ji(j, "submit_time", 0);
    case 1:
        return loom_ji(j, "array_job_id", loom_ji(j, "job_id", 0));
    default:
        return pending && *pending ? INT64_MAX : loom_ji(j, "array_task_id", -1);
    }
}

static int sacct_job_cmp(const void *pa, const void *pb)
{
    const json_t *a = *(json_t *const *)pa, *b = *(json_t *const *)pb;
    for (int k = 0; k < 3; k++)
        if (sacct_key(a, k) != sacct_key(b, k))
            return sacct_key(a, k) < sacct_key(b, k) ? -1 : 1;
    return 0;
}

static long sacct_step_rank(const json_t *st)
{
    const json_t *id = json_object_get(st, "step_id");
    if (json_is_integer(id))
        return (long)json_integer_value(id);
    const char *s = json_string_value(id);
    if (!s)
        return 1L << 30;
    if (!strcmp(s, "batch"))
        return -3;
    if (!strcmp(s, "extern"))
        return -2;
    if (!strcmp(s, "interactive"))
        return -1;
    return strtol(s, NULL, 10);
}

static int sacct_step_cmp(const void *pa, const void *pb)
{
    long a = sacct_step_rank(*(json_t *const *)pa), b = sacct_step_rank(*(json_t *const *)pb);
    return a < b ? -1 : a > b;
}

static void sacct_sort(json_t *arr, int (*cmp)(const void *, const void *))
{
    size_t n = json_array_size(arr), i;
    json_t **v = loom_xcalloc(n + 1, sizeof(*v));
    for (i = 0; i < n; i++)
        v[i] = json_incref(json_array_get(arr, i));
    qsort(v, n, sizeof(*v), cmp);
    json_array_clear(arr);
    for (i = 0; i < n; i++)
        json_array_append_new(arr, v[i]);
    free(v);
}

/* Runs of one job id (a requeue stores the earlier run apart), latest last. */
static int sacct_run_cmp(const void *pa, const void *pb)
{
    const json_t *a = *(json_t *const *)pa, *b = *(json_t *const *)pb;
    int c = strcmp(loom_js_or(a, "cluster", ""), loom_js_or(b, "cluster", ""));
    if (c)
        return c;
    int64_t ka[2] = {loom_ji(a, "job_id", 0), loom_ji(a, "submit_time", 0)};
    int64_t kb[2] = {loom_ji(b, "job_id", 0), loom_ji(b, "submit_time", 0)};
    for (int k = 0; k < 2; k++)
        if (ka[k] != kb[k])
            return ka[k] < kb[k] ? -1 : 1;
    return 0;
}

/* Without -D, as sacct: only the latest run of each job id. */
static void sacct_drop_earlier_runs(json_t *jobs)
{
    size_t n = json_array_size(jobs);
    json_t **v = loom_xcalloc(n + 1, sizeof(*v));
    for (size_t i = 0; i < n; i++)
        v[i] = json_array_get(jobs, i);
    qsort(v, n, sizeof(*v), sacct_run_cmp);
    for (size_t i = 0; i + 1 < n; i++)
        if (loom_ji(v[i], "job_id", 0) == loom_ji(v[i + 1], "job_id", 0) &&
            !strcmp(loom_js_or(v[i], "cluster", ""), loom_js_or(v[i + 1], "cluster", "")))
            json_object_set_new(v[i], "earlier_run", json_true());
    free(v);
    for (size_t i = n; i-- > 0;)
        if (json_object_get(json_array_get(jobs, i), "earlier_run"))
            json_array_remove(jobs, i);
}

static void sacct_emit(sacct_t *s, const sacct_row_t *r)
{
    for (size_t i = 0; i < s->nitems; i++) {
        loom_sbuf_t v = LOOM_SBUF_INIT;
        s->items[i].f->fmt(r, &v);
        loom_pf_cell(&s->pf, loom_sbuf_str(&v), s->items[i].width, i + 1 == s->nitems,
                     s->items[i].f->number, &s->out);
        loom_sbuf_free(&v);
    }
    loom_sbuf_addc(&s->out, '\n');
}

/* Does one -j item select this row? "12" selects the job (every task of
 * array 12) and its steps, "12_3" that task and its steps (not a pending
 * record still holding index 3, "12_[1-5]" or "12_[3]": sacct 22.05 shows
 * none), "12.batch" / "12_3.0" that step only, as sacct 22.05. */
static bool sacct_item_hit(const char *item, const json_t *job, const json_t *step,
                           const char *row_id, const char *job_id)
{
    long n = strtol(item, NULL, 10);
    if (strchr(item, '.'))
        return step && !strcmp(row_id, item);
    if (strchr(item, '_'))
        return !loom_js(job, "array_task_str") && !strcmp(job_id, item);
    return n == loom_ji(job, "job_id", 0) || n == loom_ji(job, "array_job_id", -1);
}

/* Is this row one -j asked for? (Every row when no item needs a filter.) */
static bool sacct_wanted(const sacct_t *s, const json_t *job, const json_t *step)
{
    if (!s->steps.n)
        return true;
    loom_sbuf_t id = LOOM_SBUF_INIT, jid = LOOM_SBUF_INIT;
    sacct_row_t r = {.job = job, .step = step}, rj = {.job = job};
    sacct_field_find("JobID", 5)->fmt(&r, &id);
    sacct_field_find("JobID", 5)->fmt(&rj, &jid);
    bool hit = false;
    for (size_t i = 0; i < s->steps.n && !hit; i++)
        hit = sacct_item_hit(s->steps.v[i], job, step, loom_sbuf_str(&id), loom_sbuf_str(&jid));
    loom_sbuf_free(&id);
    loom_sbuf_free(&jid);
    return hit;
}

static void sacct_print(sacct_t *s, json_t *jobs, time_t now)
{
    loom_pf_col_t cols[128];
    for (size_t i = 0; i < s->nitems; i++)
        cols[i] = (loom_pf_col_t){s->items[i].f->name, s->items[i].width};
    loom_pf_header(&s->pf, cols, s->nitems, &s->out);
    size_t i, k;
    json_t *job, *st;
    const loom_conf_t *conf = loom_cli_conf(&s->cli, NULL);
    json_array_foreach(jobs, i, job)
    {
        if (!loom_js(job, "cluster") && conf && conf->cluster_name) /* Cluster field */
            json_object_set_new(job, "cluster", json_string(conf->cluster_name));
        sacct_row_t r = {.job = job, .now = now};
        if (sacct_wanted(s, job, NULL))
            sacct_emit(s, &r);
        json_t *steps = json_object_get(job, "steps");
        if (s->allocs || !steps)
            continue;
        sacct_sort(steps, sacct_step_cmp);
        json_array_foreach(steps, k, st)
        {
            r.step = st;
            if (sacct_wanted(s, job, st))
                sacct_emit(s, &r);
        }
    }
}

/* slurmdbd's order: by raw job id, then submit time. */
static int sacct_raw_cmp(const void *pa, const void *pb)
{
    const json_t *a = *(json_t *const *)pa, *b = *(json_t *const *)pb;
    int64_t ka[2] = {loom_ji(a, "job_id", 0), loom_ji(a, "submit_time", 0)};
    int64_t kb[2] = {loom_ji(b, "job_id", 0), loom_ji(b, "submit_time", 0)};
    for (int k = 0; k < 2; k++)
        if (ka[k] != kb[k])
            return ka[k] < kb[k] ? -1 : 1;
    return 0;
}

/* --json: every job the query gave, with the steps -j selects (none with
 * -X); -o is ignored, as in Slurm 22.05. */
static void sacct_json(sacct_t *s, json_t *jobs, time_t now)
{
    loom_sacct_json_t ctx = {.conf = loom_cli_conf(&s->cli, NULL), .now = now};
    json_t *items = json_array(), *job, *st;
    size_t i, k;
    sacct_sort(jobs, sacct_raw_cmp);
    json_array_foreach(jobs, i, job)
    {
        json_t *o = loom_sacct_json_job(job, &ctx), *steps = json_object_get(job, "steps");
        if (!s->allocs && steps)
            sacct_sort(steps, sacct_step_cmp);
        json_array_foreach(s->allocs ? NULL : steps, k, st)
        {
            if (sacct_wanted(s, job, st))
                json_array_append_new(json_object_get(o, "steps"),
                                      loom_sacct_json_step(job, st, &ctx));
        }
        json_array_append_new(items, o);
    }
    loom_sacct_json_print(items, &s->out);
}

static void sacct_helpformat(sacct_t *s)
{
    /* 22.05's layout: four names a line, each in 19 columns and a space,
     * the line's (and the list's) last one ends the line instead */
    const sacct_field_t *f;
    for (size_t i = 0; (f = sacct_field_at(i)); i++)
        loom_sbuf_addf(&s->out, "%-19s%c", f->name,
                       (i % 4 == 3 || !sacct_field_at(i + 1)) ? '\n' : ' ');
}

/* -B and --env-vars: loomdbd stores no scripts or environments, as
 * slurmdbd without AccountingStoreFlags=job_script,job_env. */
static void sacct_scripts(sacct_t *s, json_t *jobs)
{
    size_t i;
    json_t *job;
    json_array_foreach(jobs, i, job)
    {
        loom_sbuf_t id = LOOM_SBUF_INIT;
        sacct_row_t r = {.job = job};
        sacct_field_find("JobID", 5)->fmt(&r, &id);
        if (s->scripts == 'B')
            loom_sbuf_addf(&s->out, "Batch Script for %s\n", loom_sbuf_str(&id));
        else
            loom_sbuf_addf(&s->out, "Environment used for %s (must be batch to display)\n",
                           loom_sbuf_str(&id));
        for (int k = 0; k < 80; k++)
            loom_sbuf_addc(&s->out, '-');
        loom_sbuf_add(&s->out, "\nNONE\n\n");
        loom_sbuf_free(&id);
    }
}

enum {
    OPT_NAME = 1000,
    OPT_JSON,
    OPT_DELIM,
    OPT_UNITS,
    OPT_NOCONVERT,
    OPT_USAGE,
    OPT_NOOP,
    OPT_ENV
};

/* -u: names or uids of this host; "sacct: error: Invalid user id: X" else. */
static int sacct_check_users(const char *list)
{
    loom_strv_t v = LOOM_STRV_INIT;
    loom_strv_split(&v, list, ",");
    int rc = 0;
    for (size_t i = 0; i < v.n && rc == 0; i++) {
        char *end;
        strtol(v.v[i], &end, 10);
        if (*end && !getpwnam(v.v[i])) {
            fprintf(stderr, "sacct: error: Invalid user id: %s\n", v.v[i]);
            rc = -1;
        }
    }
    loom_strv_free(&v);
    return rc;
}

/* The filter options (sacct_filter.h); false when c is not one. */
static bool sacct_filter_opt(sacct_t *s, int c, const char *arg)
{
    sacct_filter_t *f = &s->filter;
    const char **slot = c == 'N'   ? &f->nodes
                        : c == 'i' ? &f->nnodes
                        : c == 'I' ? &f->ncpus
                        : c == 'q' ? &f->qos
                        : c == 'g' ? &f->groups
                        : c == 'W' ? &f->wckeys
                        : c == 'k' ? &f->tl_min
                        : c == 'K' ? &f->tl_max
                                   : NULL;
    if (slot)
        *slot = arg;
    else if (c == 'T')
        f->truncate = true;
    return slot || c == 'T';
}

static const struct option sacct_longopts[] = {{"jobs", required_argument, NULL, 'j'},
                                               {"user", required_argument, NULL, 'u'},
                                               {"allusers", no_argument, NULL, 'a'},
                                               {"accounts", required_argument, NULL, 'A'},
                                               {"starttime", required_argument, NULL, 'S'},
                                               {"endtime", required_argument, NULL, 'E'},
                                               {"state", required_argument, NULL, 's'},
                                               {"allocations", no_argument, NULL, 'X'},
                                               {"format", required_argument, NULL, 'o'},
                                               {"parsable", no_argument, NULL, 'p'},
                                               {"parsable2", no_argument, NULL, 'P'},
                                               {"noheader", no_argument, NULL, 'n'},
                                               {"brief", no_argument, NULL, 'b'},
                                               {"long", no_argument, NULL, 'l'},
                                               {"name", required_argument, NULL, OPT_NAME},
                                               {"partition", required_argument, NULL, 'r'},
                                               {"json", no_argument, NULL, OPT_JSON},
                                               {"helpformat", no_argument, NULL, 'e'},
                                               {"delimiter", required_argument, NULL, OPT_DELIM},
                                               {"units", required_argument, NULL, OPT_UNITS},
                                               {"noconvert", no_argument, NULL, OPT_NOCONVERT},
                                               {"duplicates", no_argument, NULL, 'D'},
                                               {"clusters", required_argument, NULL, 'M'},
                                               {"allclusters", no_argument, NULL, 'L'},
                                               {"version", no_argument, NULL, 'V'},
                                               {"help", no_argument, NULL, 'h'},
                                               {"uid", required_argument, NULL, 'u'},
                                               {"nodelist", required_argument, NULL, 'N'},
                                               {"nnodes", required_argument, NULL, 'i'},
                                               {"ncpus", required_argument, NULL, 'I'},
                                               {"qos", required_argument, NULL, 'q'},
                                               {"gid", required_argument, NULL, 'g'},
                                               {"group", required_argument, NULL, 'g'},
                                               {"wckeys", required_argument, NULL, 'W'},
                                               {"timelimit-min", required_argument, NULL, 'k'},
                                               {"timelimit-max", required_argument, NULL, 'K'},
                                               {"truncate", no_argument, NULL, 'T'},
                                               {"verbose", no_argument, NULL, 'v'},
                                               {"batch-script", no_argument, NULL, 'B'},
                                               {"env-vars", no_argument, NULL, OPT_ENV},
                                               {"usage", no_argument, NULL, OPT_USAGE},
                                               {"local", no_argument, NULL, OPT_NOOP},
                                               {"federation", no_argument, NULL, OPT_NOOP},
                                               {"whole-hetjob", optional_argument, NULL, OPT_NOOP},
                                               {NULL, 0, NULL, 0}};

/* One option of the command line (not a filter: sacct_filter_opt); -1 on a bad one. */
static int sacct_opt_one(sacct_t *s, int c, char *arg)
{
    switch (c) {
    case 'j': /* submitit asks "sacct ... -j 12 -j 13" */
        if (sacct_check_jobs(arg) < 0)
            return -1;
        loom_sbuf_addf(&s->jobs_all, "%s%s", s->jobs_all.len ? "," : "", arg);
        s->jobs = loom_sbuf_str(&s->jobs_all);
        break;
    case 'u':
        s->users = arg;
        break;
    case 'a':
        s->all = true;
        break;
    case 'A':
        s->accounts = arg;
        break;
    case 'S':
        s->start = arg;
        break;
    case 'E':
        s->end = arg;
        break;
    case 's':
        s->states = arg;
        break;
    case 'X':
        s->allocs = true;
        break;
    case 'o':
        s->format = arg;
        break;
    case 'p':
        s->pf.parsable = 1;
        break;
    case 'P':
        s->pf.parsable = 2;
        break;
    case 'n':
        s->pf.noheader = true;
        break;
    case 'b':
        s->format = SACCT_BRIEF;
        break;
    case 'l':
        s->format = SACCT_LONG;
        break;
    case 'r':
        s->parts = arg;
        break;
    case 'e':
        s->helpformat = true;
        break;
    case OPT_NAME:
        s->names = arg;
        break;
    case OPT_JSON:
        s->json = true;
        break;
    case OPT_DELIM:
        s->pf.delim = arg;
        break;
    case 'D':
        s->duplicates = true;
        break;
    case OPT_UNITS:
    case OPT_NOCONVERT:
    case OPT_NOOP:
    case 'v':
        break;
    case 'B':
        s->scripts = 'B';
        break;
    case OPT_ENV:
        s->scripts = 'E';
        break;
    case OPT_USAGE:
        printf("Usage: sacct [options]\n\tUse --help for help\n");
        exit(0);
    case 'L':
        s->clusters = "all";
        break;
    case 'M':
        s->clusters = arg;
        break;
    case 'V':
        loom_cli_version();
        exit(0);
    case 'h':
        printf("Usage: sacct [options]\n");
        exit(0);
    default:
        return -1;
    }
    return 0;
}

static int sacct_opts(sacct_t *s, int argc, char **argv)
{
    int c;
    while ((c = getopt_long(argc, argv, "j:u:aA:S:E:s:Xo:pPnblr:eVhvDLM:N:i:I:q:g:W:k:K:TB",
                            sacct_longopts, NULL)) != -1) {
        if (!sacct_filter_opt(s, c, optarg) && sacct_opt_one(s, c, optarg) < 0)
            return -1;
    }
    if (s->users && sacct_check_users(s->users) < 0)
        return -1;
    if (s->scripts && !s->jobs) {
        fprintf(stderr,
                "sacct: fatal: When requesting job %s you must also request specific "
                "jobs with the '-j' option.\n",
                s->scripts == 'B' ? "scripts" : "environment");
        return -1;
    }
    return sacct_filter_parse(&s->filter);
}

/* -o (or -b, -l), else SACCT_FORMAT, else the default list. */
static const char *sacct_format(const sacct_t *s)
{
    const char *e = getenv("SACCT_FORMAT");
    return s->format ? s->format : e && *e ? e : SACCT_DEFAULT;
}

int main(int argc, char **argv)
{
    sacct_t s = {.pf = {.delim = "|"},
                 .out = LOOM_SBUF_INIT,
                 .jobs_all = LOOM_SBUF_INIT,
                 .argc = argc,
                 .argv = argv};
    loom_cli_init(&s.cli, "sacct");
    int rc = sacct_opts(&s, argc, argv);
    json_t *jobs = NULL;
    time_t now = time(NULL);
    if (rc == 0 && s.helpformat) {
        sacct_helpformat(&s);
    } else if (rc == 0 && (rc = sacct_parse_format(&s, sacct_format(&s))) == 0 &&
               (rc = sacct_query(&s, now, &jobs)) == 0) {
        if (!s.duplicates)
            sacct_drop_earlier_runs(jobs);
        sacct_filter_apply(&s.filter, jobs, s.win_start, s.win_end);
        sacct_sort(jobs, sacct_job_cmp);
        if (s.scripts)
            sacct_scripts(&s, jobs);
        else if (s.json)
            sacct_json(&s, jobs, now);
        else
            sacct_print(&s, jobs, now);
    }
    loom_cli_flush(&s.out);
    loom_sbuf_free(&s.out);
    loom_cli_exit_decref(jobs); /* over 100,000 records: the exit frees them */
    loom_strv_free(&s.steps);
    sacct_filter_free(&s.filter);
    loom_sbuf_free(&s.jobs_all);
    loom_rpc_close(s.rpc);
    loom_cli_fini(&s.cli);
    return rc ? s.cli.exit_error : 0;
}
