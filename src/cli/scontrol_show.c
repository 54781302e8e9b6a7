/*
 * scontrol_show.c - scontrol show job|step|node|partition|config|hostnames|
 * hostlist|hostlistsorted|reservation (CLI_SPEC §9, §0.4, §11).
 *
 * Records print as Slurm 22.05 prints them: "Key=Value" groups, one group
 * per line, continuation lines indented three spaces, a blank line after
 * each record; with -o the groups are joined by one space, one record per
 * line. A job record ends with an empty group (so it ends "\n   \n\n", and
 * "Power= \n" with -o), exactly as Slurm's does.
 */
#include "cli/scontrol.h"

#include "cli/cli_format.h"
#include "cli/cli_json.h"
#include "common/hostlist.h"
#include "common/jobstate.h"
#include "common/memsize.h"
#include "common/nodestate.h"
#include "common/timefmt.h"
#include "common/xalloc.h"

#include <pwd.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* A record being printed: its groups ("lines"). */
typedef struct show_rec {
    loom_strv_t lines;
    loom_sbuf_t cur;
} show_rec_t;

static void show_addf(show_rec_t *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void show_addf(show_rec_t *r, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    loom_sbuf_vaddf(&r->cur, fmt, ap);
    va_end(ap);
}

/* End the current group. */
static void show_eol(show_rec_t *r)
{
    loom_strv_add(&r->lines, loom_sbuf_str(&r->cur));
    loom_sbuf_reset(&r->cur);
}

static void show_emit(const loom_scontrol_t *sc, show_rec_t *r, loom_sbuf_t *out)
{
    for (size_t i = 0; i < r->lines.n; i++) {
        if (i)
            loom_sbuf_add(out, sc->oneliner ? " " : "\n   ");
        loom_sbuf_add(out, r->lines.v[i]);
    }
    loom_sbuf_add(out, sc->oneliner ? "\n" : "\n\n");
    loom_strv_free(&r->lines);
    loom_sbuf_free(&r->cur);
}

static const char *show_str(const json_t *o, const char *key, const char *dflt)
{
    const char *s = loom_js(o, key);
    return s && *s ? s : dflt;
}

/* A count the job asked for (-B, --ntasks-per-socket|core), or "*". */
static void show_asked(show_rec_t *r, const json_t *o, const char *key)
{
    int64_t n = loom_ji(o, key, 0);
    if (n > 0)
        show_addf(r, "%lld", (long long)n);
    else
        show_addf(r, "*");
}

static void show_date(show_rec_t *r, const char *key, time_t t, const char *unset)
{
    loom_sbuf_t d = LOOM_SBUF_INIT;
    loom_date_fmt(t, unset, &d);
    show_addf(r, "%s=%s", key, loom_sbuf_str(&d));
    loom_sbuf_free(&d);
}

/* ---- show job ------------------------------------------------------------ */

static void show_job_ids(show_rec_t *r, const json_t *j)
{
    show_addf(r, "JobId=%lld", (long long)loom_ji(j, "job_id", 0));
    if (loom_ji(j, "array_job_id", 0) > 0) {
        const char *rest = loom_js(j, "array_task_str");
        show_addf(r, " ArrayJobId=%lld", (long long)loom_ji(j, "array_job_id", 0));
        if (rest && *rest)
            show_addf(r, " ArrayTaskId=%s", rest);
        else
            show_addf(r, " ArrayTaskId=%lld", (long long)loom_ji(j, "array_task_id", 0));
        const char *pct = rest ? strchr(rest, '%') : NULL;
        int64_t throttle = loom_ji(j, "array_max_tasks", pct ? atoll(pct + 1) : 0);
        if (throttle > 0)
            show_addf(r, " ArrayTaskThrottle=%lld", (long long)throttle);
    }
    show_addf(r, " JobName=%s", show_str(j, "name", ""));
    show_eol(r);
    loom_sbuf_t u = LOOM_SBUF_INIT, g = LOOM_SBUF_INIT;
    const char *un = loom_js(j, "user_name"), *gn = loom_js(j, "group_name");
    if (!un)
        loom_cli_user_name(loom_ji(j, "user_id", 0), &u);
    if (!gn)
        loom_cli_group_name(loom_ji(j, "group_id", 0), &g);
    show_addf(r, "UserId=%s(%lld) GroupId=%s(%lld) MCS_label=N/A", un ? un : loom_sbuf_str(&u),
              (long long)loom_ji(j, "user_id", 0), gn ? gn : loom_sbuf_str(&g),
              (long long)loom_ji(j, "group_id", 0));
    show_eol(r);
    loom_sbuf_free(&u);
    loom_sbuf_free(&g);
}

static void show_job_state(const loom_scontrol_t *sc, show_rec_t *r, const json_t *j)
{
    show_addf(r, "Priority=%lld Nice=%lld Account=%s QOS=%s",
              (long long)(uint32_t)loom_ji(j, "priority", 0), (long long)loom_ji(j, "nice", 0),
              show_str(j, "account", "(null)"), show_str(j, "qos", "(null)"));
    show_eol(r);
    char *reason = loom_xstrdup(show_str(j, "reason", "None"));
    for (char *p = reason; *p; p++)
        if (*p == ' ')
            *p = '_';
    show_addf(r, "JobState=%s Reason=%s Dependency=%s", loom_job_state_name(loom_cli_job_state(j)),
              reason, show_str(j, "dependency", "(null)"));
    free(reason);
    show_eol(r);
    loom_sbuf_t ec = LOOM_SBUF_INIT;
    loom_cli_exit_code(loom_ji(j, "exit_code", 0), &ec);
    show_addf(r, "Requeue=%d Restarts=%lld BatchFlag=%lld Reboot=%d ExitCode=%s",
              loom_jb(j, "requeue", true) ? 1 : 0, (long long)loom_ji(j, "restart_cnt", 0),
              (long long)loom_ji(j, "batch_flag", 1), loom_jb(j, "reboot", false) ? 1 : 0,
              loom_sbuf_str(&ec));
    show_eol(r);
    if (sc->details) {
        loom_sbuf_reset(&ec);
        loom_cli_exit_code(loom_ji(j, "derived_exit_code", 0), &ec);
        show_addf(r, "DerivedExitCode=%s", loom_sbuf_str(&ec));
        show_eol(r);
    }
    loom_sbuf_free(&ec);
}

static void show_job_times(show_rec_t *r, const json_t *j, time_t now)
{
    loom_sbuf_t a = LOOM_SBUF_INIT, b = LOOM_SBUF_INIT;
    loom_time_fmt_limit(loom_cli_job_runtime(j, now), &a);
    int64_t limit = loom_cli_job_limit(j);
    loom_time_fmt_limit(limit == LOOM_TIME_NOT_SET ? LOOM_TIME_INFINITE : limit, &b);
    show_addf(r, "RunTime=%s TimeLimit=%s TimeMin=", loom_sbuf_str(&a), loom_sbuf_str(&b));
    int64_t tmin = loom_ji(j, "time_min", 0);
    loom_sbuf_reset(&a);
    if (tmin > 0)
        loom_time_fmt_limit(tmin * 60, &a);
    show_addf(r, "%s", tmin > 0 ? loom_sbuf_str(&a) : "N/A");
    show_eol(r);
    loom_sbuf_free(&a);
    loom_sbuf_free(&b);
    show_date(r, "SubmitTime", (time_t)loom_ji(j, "submit_time", 0), "Unknown");
    show_addf(r, " ");
    show_date(r, "EligibleTime", (time_t)loom_ji(j, "eligible_time", 0), "Unknown");
    show_eol(r);
    /* Without the controller's accrue time: a job accrues from its eligible
     * time unless it is held (slurmctld 22.05 shows that time for a job that
     * ran or waits with a priority). */
    int64_t elig = loom_ji(j, "eligible_time", 0), accrue = loom_ji(j, "accrue_time", 0);
    if (!loom_jhas(j, "accrue_time") && elig > 0 && elig <= (int64_t)now &&
        (loom_ji(j, "priority", 0) > 0 || loom_ji(j, "start_time", 0) > 0))
        accrue = elig;
    show_date(r, "AccrueTime", (time_t)accrue, "Unknown");
    show_eol(r);
    int64_t start = loom_ji(j, "start_time", 0), end = loom_ji(j, "end_time", 0);
    if (end <= 0 && start > 0 && limit >= 0)
        end = start + limit;
    show_date(r, "StartTime", (time_t)start, "Unknown");
    show_addf(r, " ");
    show_date(r, "EndTime", (time_t)end, "Unknown");
    show_addf(r, " ");
    show_date(r, "Deadline", (time_t)loom_ji(j, "deadline", 0), "N/A");
    show_eol(r);
    int64_t susp = loom_ji(j, "suspend_time", 0);
    show_date(r, "SuspendTime", (time_t)susp, "None");
    show_addf(r, " SecsPreSuspend=%lld ", (long long)loom_ji(j, "pre_sus_time", 0));
    int64_t eval = loom_ji(j, "last_sched_eval", loom_ji(j, "submit_time", 0));
    show_date(r, "LastSchedEval", (time_t)eval, "Unknown");
    show_addf(r, " Scheduler=%s", show_str(j, "scheduler", "Main"));
    show_eol(r);
}

/* "NumNodes=2-2" for a pending job that asked for a range; else the count. */
static void show_num_nodes(show_rec_t *r, const json_t *j)
{
    int64_t n = loom_ji(j, "num_nodes", 1);
    bool pending = loom_job_base(loom_cli_job_state(j)) == LOOM_JOB_PENDING;
    if (pending && loom_jhas(j, "max_nodes"))
        show_addf(r, "NumNodes=%lld-%lld", (long long)n, (long long)loom_ji(j, "max_nodes", n));
    else
        show_addf(r, "NumNodes=%lld", (long long)n);
}

/* "0-1,3" from [0,1,3]. */
static void show_cpu_ids(const json_t *cpus, loom_sbuf_t *out)
{
    size_t n = json_array_size(cpus);
    for (size_t i = 0; i < n;) {
        int64_t lo = json_integer_value(json_array_get(cpus, i)), hi = lo;
        size_t k = i + 1;
        while (k < n && json_integer_value(json_array_get(cpus, k)) == hi + 1)
            hi = json_integer_value(json_array_get(cpus, k++));
        loom_sbuf_addf(out, i ? ",%lld" : "%lld", (long long)lo);
        if (hi > lo)
            loom_sbuf_addf(out, "-%lld", (long long)hi);
        i = k;
    }
}

/* -d: "JOB_GRES=" and one "  Nodes=... CPU_IDs=... Mem=... GRES=" per node. */
static void show_job_alloc(show_rec_t *r, const json_t *j)
{
    const json_t *alloc = json_object_get(j, "alloc");
    if (!json_array_size(alloc))
        return;
    show_addf(r, "JOB_GRES=%s", show_str(j, "tres_per_node", "(null)"));
    show_eol(r);
    size_t i, k;
    json_t *a, *g;
    json_array_foreach(alloc, i, a)
    {
        show_addf(r, "  Nodes=%s CPU_IDs=", show_str(a, "node", ""));
        show_cpu_ids(json_object_get(a, "cpus"), &r->cur);
        show_addf(r, " Mem=%lld GRES=", (long long)loom_ji(a, "mem", 0));
        json_array_foreach(json_object_get(a, "gres"), k, g)
        {
            show_addf(r, "%s%s", k ? "," : "", show_str(g, "name", "gpu"));
            if (loom_js(g, "type"))
                show_addf(r, ":%s", loom_js(g, "type"));
            show_addf(r, ":%zu(IDX:", json_array_size(json_object_get(g, "index")));
            show_cpu_ids(json_object_get(g, "index"), &r->cur);
            show_addf(r, ")");
        }
        show_eol(r);
    }
}

static void show_job_size(const loom_scontrol_t *sc, show_rec_t *r, const json_t *j)
{
    show_addf(r, "Partition=%s AllocNode:Sid=%s:%lld", show_str(j, "partition", "(null)"),
              show_str(j, "alloc_node", "(null)"), (long long)loom_ji(j, "alloc_sid", 0));
    show_eol(r);
    show_addf(r, "ReqNodeList=%s ExcNodeList=%s", show_str(j, "req_nodes", "(null)"),
              show_str(j, "exc_nodes", "(null)"));
    show_eol(r);
    show_addf(r, "NodeList=%s", show_str(j, "nodes", ""));
    if (loom_js(j, "sched_nodes")) /* the backfill plan's nodes */
        show_addf(r, " SchedNodeList=%s", loom_js(j, "sched_nodes"));
    show_eol(r);
    if (loom_js(j, "batch_host") && *loom_js(j, "batch_host")) {
        show_addf(r, "BatchHost=%s", loom_js(j, "batch_host"));
        show_eol(r);
    }
    show_num_nodes(r, j);
    show_addf(r, " NumCPUs=%lld NumTasks=%lld CPUs/Task=%lld ReqB:S:C:T=0:0:",
              (long long)loom_ji(j, "num_cpus", 1), (long long)loom_ji(j, "num_tasks", 1),
              (long long)loom_ji(j, "cpus_per_task", 1));
    show_asked(r, j, "cores_per_socket");
    show_addf(r, ":");
    show_asked(r, j, "threads_per_core");
    show_eol(r);
    const char *alloc = loom_js(j, "tres_alloc");
    show_addf(r, "TRES=%s", alloc && *alloc ? alloc : show_str(j, "tres_req", "(null)"));
    show_eol(r);
    show_addf(r, "Socks/Node=");
    show_asked(r, j, "sockets_per_node");
    show_addf(r, " NtasksPerN:B:S:C=%lld:0:", (long long)loom_ji(j, "ntasks_per_node", 0));
    show_asked(r, j, "ntasks_per_socket");
    show_addf(r, ":");
    show_asked(r, j, "ntasks_per_core");
    show_addf(r, " CoreSpec=*");
    show_eol(r);
    if (sc->details)
        show_job_alloc(r, j);
}

static void show_job_mem(show_rec_t *r, const json_t *j)
{
    int64_t per_cpu = loom_ji(j, "mem_per_cpu", 0), per_node = loom_ji(j, "mem_per_node", 0);
    /* Per node: CPUs/Task x NtasksPerNode (scontrol 22.05); the record's
     * min_cpus is the job's total and counts only when --mincpus raised it. */
    int64_t cpt = loom_ji(j, "cpus_per_task", 1), tpn = loom_ji(j, "ntasks_per_node", 0);
    int64_t min_cpus = cpt * (tpn > 0 ? tpn : 1), total = loom_ji(j, "min_cpus", 0);
    int64_t nodes = loom_ji(j, "min_nodes", loom_ji(j, "num_nodes", 1));
    if (total > loom_ji(j, "num_tasks", 1) * cpt && total / (nodes > 0 ? nodes : 1) > min_cpus)
        min_cpus = total / (nodes > 0 ? nodes : 1);
    show_addf(r, "MinCPUsNode=%lld ", (long long)min_cpus);
    loom_sbuf_t m = LOOM_SBUF_INIT;
    if (loom_jb(j, "mem_whole", false)) /* the whole node: MinMemoryNode=0, as 22.05 */
        per_cpu = per_node = 0;
    if (per_cpu > 0 || per_node > 0)
        loom_mem_fmt((uint64_t)(per_cpu > 0 ? per_cpu : per_node), &m);
    else
        loom_sbuf_add(&m, "0");
    show_addf(r, "%s=%s MinTmpDiskNode=", per_cpu > 0 ? "MinMemoryCPU" : "MinMemoryNode",
              loom_sbuf_str(&m));
    int64_t tmp = loom_ji(j, "tmp_disk", 0);
    if (tmp > 0)
        loom_mem_fmt((uint64_t)tmp, &r->cur);
    else
        show_addf(r, "0");
    loom_sbuf_free(&m);
    show_eol(r);
}

static void show_job_files(show_rec_t *r, const json_t *j)
{
    show_addf(r, "Features=%s DelayBoot=00:00:00", show_str(j, "features", "(null)"));
    show_eol(r);
    show_addf(r, "OverSubscribe=%s Contiguous=%d Licenses=%s Network=(null)",
              loom_cli_job_oversub(j), loom_jb(j, "contiguous", false),
              show_str(j, "licenses", "(null)"));
    show_eol(r);
    show_addf(r, "Command=%s", show_str(j, "command", "(null)"));
    show_eol(r);
    show_addf(r, "WorkDir=%s", show_str(j, "work_dir", "(null)"));
    show_eol(r);
    if (loom_js(j, "admin_comment") && *loom_js(j, "admin_comment")) {
        show_addf(r, "AdminComment=%s ", loom_js(j, "admin_comment"));
        show_eol(r);
    }
    if (loom_js(j, "comment") && *loom_js(j, "comment")) {
        show_addf(r, "Comment=%s ", loom_js(j, "comment"));
        show_eol(r);
    }
    static const struct {
        const char *key;
        char which;
    } io[] = {{"StdErr", 'e'}, {"StdIn", 'i'}, {"StdOut", 'o'}};
    for (size_t i = 0; i < 3; i++) {
        show_addf(r, "%s=", io[i].key);
        loom_cli_job_stdio(j, io[i].which, &r->cur);
        show_eol(r);
    }
    show_addf(r, "Power=");
    show_eol(r);
    static const char *const tres[][2] = {{"TresPerJob", "tres_per_job"},
                                          {"TresPerNode", "tres_per_node"},
                                          {"TresPerTask", "tres_per_task"}};
    for (size_t i = 0; i < 3; i++)
        if (loom_js(j, tres[i][1]) && *loom_js(j, tres[i][1])) {
            show_addf(r, "%s=%s", tres[i][0], loom_js(j, tres[i][1]));
            show_eol(r);
        }
    if (loom_js(j, "mail_type") && *loom_js(j, "mail_type")) {
        show_addf(r, "MailUser=%s MailType=%s", show_str(j, "mail_user", "(null)"),
                  loom_js(j, "mail_type"));
        show_eol(r);
    }
    show_eol(r); /* Slurm's record ends with an empty group */
}

static void show_job(const loom_scontrol_t *sc, const json_t *j, time_t now, loom_sbuf_t *out)
{
    show_rec_t r = {LOOM_STRV_INIT, LOOM_SBUF_INIT};
    show_job_ids(&r, j);
    show_job_state(sc, &r, j);
    show_job_times(&r, j, now);
    show_job_size(sc, &r, j);
    show_job_mem(&r, j);
    show_job_files(&r, j);
    show_emit(sc, &r, out);
}

/* The jobs the id selects; a task of a pending remainder becomes its own record. */
static json_t *show_select_jobs(const json_t *jobs, const loom_jobid_t *id)
{
    json_t *sel = json_array();
    size_t i;
    json_t *j;
    json_array_foreach(jobs, i, j)
    {
        const char *rest = loom_js(j, "array_task_str");
        if (id && id->array == LOOM_JOBID_ARRAY_ONE && rest && *rest &&
            loom_cli_jobid_match(id, j)) {
            json_t *t = json_copy(j);
            json_object_del(t, "array_task_str");
            json_object_set_new(t, "array_task_id", json_integer(id->task));
            json_array_append_new(sel, t);
        } else if (!id || loom_cli_jobid_match(id, j)) {
            json_array_append(sel, j);
        }
    }
    return sel;
}

typedef struct show_order {
    double key;
    json_t *job;
} show_order_t;

static int show_order_cmp(const void *a, const void *b)
{
    double x = ((const show_order_t *)a)->key, y = ((const show_order_t *)b)->key;
    return x < y ? -1 : x > y;
}

/* An array's master record (its pending remainder, or the last task, which
 * keeps the array's id) goes after the tasks split off before it. */
static double show_order_key(const json_t *jobs, const json_t *j)
{
    int64_t id = loom_ji(j, "job_id", 0), key = id;
    if (loom_ji(j, "array_job_id", 0) != id)
        return (double)id;
    size_t i;
    json_t *t;
    json_array_foreach(jobs, i, t)
    {
        if (loom_ji(t, "array_job_id", 0) == id && loom_ji(t, "job_id", 0) > key)
            key = loom_ji(t, "job_id", 0);
    }
    return key == id ? (double)id : (double)key + 0.5;
}

/* slurmctld 22.05's order: its job list (a master after the tasks split off
 * so far), and for one array asked by its id the master first, then its
 * tasks newest first. Sorts sel in place. */
static void show_order_jobs(json_t *sel, bool one_array)
{
    size_t n = json_array_size(sel);
    if (n < 2)
        return;
    show_order_t *v = loom_xcalloc(n, sizeof(*v));
    for (size_t i = 0; i < n; i++) {
        json_t *j = json_array_get(sel, i);
        bool master = loom_ji(j, "array_job_id", 0) == loom_ji(j, "job_id", 0);
        v[i].job = json_incref(j);
        v[i].key = !one_array ? show_order_key(sel, j)
                   : master   ? -1e18
                              : -(double)loom_ji(j, "job_id", 0);
    }
    qsort(v, n, sizeof(*v), show_order_cmp);
    json_array_clear(sel);
    for (size_t i = 0; i < n; i++)
        json_array_append_new(sel, v[i].job);
    free(v);
}

/* A job (or an array with a task) of that id exists. */
static bool show_job_known(const json_t *jobs, uint32_t job_id)
{
    size_t i;
    json_t *j;
    json_array_foreach(jobs, i, j)
    {
        if (loom_ji(j, "job_id", 0) == job_id || loom_ji(j, "array_job_id", 0) == job_id)
            return true;
    }
    return false;
}

static int show_jobs(loom_scontrol_t *sc, const char *arg)
{
    loom_jobid_t id;
    loom_jobid_init(&id, 0);
    bool have_id = arg != NULL && strcmp(arg, "0") != 0; /* "show job 0": every job */
    if (have_id && !strchr(arg, ',') && loom_jobid_parse(arg, &id, NULL) < 0) {
        fprintf(stderr, "slurm_load_jobs error: %s\n", loom_strerror(-LOOM_EINVAL_JOBID));
        return sc->cli.exit_error;
    }
    /* scontrol 22.05 shows one job or one task: a list, a range or a step is refused */
    if (have_id && (strchr(arg, ',') || strchr(arg, '.') || id.array == LOOM_JOBID_ARRAY_SET)) {
        fprintf(stderr, "scontrol_print_job error: %s\n", loom_strerror(-LOOM_EINVAL_JOBID));
        loom_jobid_free(&id);
        return sc->cli.exit_error;
    }
    /* One id: ask for that job (or every record of the array it names) only,
     * not the whole queue (26 -> 2 ms with 600 jobs pending). */
    json_t *body = have_id ? json_pack("{s:[I]}", "job_ids", (json_int_t)id.job_id) : NULL;
    json_t *reply = NULL;
    loom_err_t err = {0};
    int rc = loom_cli_call(&sc->cli, "job.info", body, &reply, &err);
    json_decref(body);
    if (rc < 0) {
        fprintf(stderr, "slurm_load_jobs error: %s\n", err.msg);
        if (have_id)
            loom_jobid_free(&id);
        json_decref(reply);
        return sc->cli.exit_error;
    }
    json_t *sel = show_select_jobs(json_object_get(reply, "jobs"), have_id ? &id : NULL);
    show_order_jobs(sel, have_id && id.array == LOOM_JOBID_ARRAY_NONE);
    time_t now = (time_t)loom_ji(reply, "now", (int64_t)time(NULL));
    loom_sbuf_t out = LOOM_SBUF_INIT;
    rc = 0;
    if (sc->json) {
        loom_cli_json_jobs(sc->cli.conf, now, sel, sc->argc, sc->argv, &out);
    } else if (json_array_size(sel) == 0 && have_id && id.array == LOOM_JOBID_ARRAY_ONE &&
               show_job_known(json_object_get(reply, "jobs"), id.job_id)) {
        loom_sbuf_addf(&out, "Job %u_%u not found\n", id.job_id, id.task); /* stdout, exit 1 */
        rc = sc->cli.exit_error;
    } else if (json_array_size(sel) == 0 && have_id) {
        fprintf(stderr, "slurm_load_jobs error: %s\n", loom_strerror(-LOOM_EINVAL_JOBID));
        rc = sc->cli.exit_error;
    } else if (json_array_size(sel) == 0) {
        loom_sbuf_add(&out, "No jobs in the system\n");
    }
    size_t i;
    json_t *j;
    json_array_foreach(sel, i, j)
    {
        if (!sc->json)
            show_job(sc, j, now, &out);
    }
    loom_cli_flush(&out);
    loom_sbuf_free(&out);
    json_decref(sel);
    json_decref(reply);
    if (have_id)
        loom_jobid_free(&id);
    return rc;
}

/* ---- show step ----------------------------------------------------------- */

/* One step of a running job: a numbered one (s), or the job's batch or
 * extern step (s NULL, name "batch"/"extern"), as scontrol 22.05 prints it. */
static void show_step(const loom_scontrol_t *sc, const json_t *j, const json_t *s, const char *name,
                      loom_sbuf_t *out)
{
    show_rec_t r = {LOOM_STRV_INIT, LOOM_SBUF_INIT};
    long long jid = (long long)loom_ji(j, "job_id", 0);
    if (s)
        show_addf(&r, "StepId=%lld.%lld ", jid, (long long)loom_ji(s, "step_id", 0));
    else
        show_addf(&r, "StepId=%lld.%s ", jid, name);
    show_addf(&r, "UserId=%lld ", (long long)loom_ji(j, "user_id", 0));
    show_date(&r, "StartTime", (time_t)loom_ji(s ? s : j, "start_time", 0), "Unknown");
    show_addf(&r, " TimeLimit=UNLIMITED");
    show_eol(&r);
    bool batch = !s && strcmp(name, "batch") == 0;
    const char *nodes = s ? loom_js(s, "nodes") : loom_js(j, batch ? "batch_host" : "nodes");
    show_addf(&r, "State=RUNNING Partition=%s NodeList=%s", show_str(j, "partition", "(null)"),
              nodes && *nodes ? nodes : "(null)");
    show_eol(&r);
    long long nn = s ? loom_ji(s, "num_nodes", 1) : batch ? 1 : loom_ji(j, "num_nodes", 1);
    show_addf(&r, "Nodes=%lld CPUs=%lld Tasks=%lld Name=%s Network=(null)", nn,
              s ? (long long)loom_ji(s, "num_cpus", 0) : 0LL,
              s ? (long long)loom_ji(s, "num_tasks", 1) : 1LL,
              s ? loom_js_or(s, "name", "") : name);
    show_eol(&r);
    long long mem = s ? (long long)loom_ji(s, "mem", 0) : 0;
    if (s)
        show_addf(&r, "TRES=cpu=%lld,mem=%lld%s,node=%lld", (long long)loom_ji(s, "num_cpus", 0),
                  mem, mem ? "M" : "", nn);
    else
        show_addf(&r, "TRES=(null)");
    show_eol(&r);
    show_addf(&r, "ResvPorts=(null)");
    show_eol(&r);
    if (s)
        show_addf(&r, "CPUFreqReq=Default Dist=%s",
                  json_is_true(json_object_get(s, "cyclic")) ? "Cyclic" : "Block");
    else
        show_addf(&r, "CPUFreqReq=Default");
    show_eol(&r);
    show_addf(&r, "SrunHost:Pid=%s:%lld", s ? loom_js_or(s, "srun_host", "(null)") : "(null)",
              s ? (long long)loom_ji(s, "srun_pid", 0) : 0LL);
    show_eol(&r);
    show_emit(sc, &r, out);
}

/* "J" or "J.S" (S a number, batch or extern); -1 when it is neither. */
static int show_step_arg(const char *arg, long long *job, const char **step)
{
    char *end = NULL;
    *job = strtoll(arg, &end, 10);
    *step = NULL;
    if (end == arg || *job <= 0 || (*end && *end != '.'))
        return -1;
    if (*end == '.')
        *step = end + 1;
    return 0;
}

/* The job's steps in slurmctld's order: extern, batch, then by number. */
static size_t show_job_steps(const loom_scontrol_t *sc, const json_t *j, const char *want,
                             loom_sbuf_t *out)
{
    size_t n = 0;
    if (json_is_true(json_object_get(j, "extern_step")) && (!want || !strcmp(want, "extern"))) {
        show_step(sc, j, NULL, "extern", out);
        n++;
    }
    if (loom_ji(j, "batch_flag", 1) && (!want || !strcmp(want, "batch"))) {
        show_step(sc, j, NULL, "batch", out);
        n++;
    }
    size_t i;
    json_t *s;
    json_array_foreach(json_object_get(j, "steps"), i, s)
    {
        char num[24];
        snprintf(num, sizeof(num), "%lld", (long long)loom_ji(s, "step_id", 0));
        if (!want || !strcmp(want, num)) {
            show_step(sc, j, s, NULL, out);
            n++;
        }
    }
    return n;
}

static int show_steps(loom_scontrol_t *sc, const char *arg)
{
    long long want_job = 0;
    const char *want_step = NULL;
    if (arg && show_step_arg(arg, &want_job, &want_step) < 0) {
        fprintf(stderr, "slurm_get_job_steps error: %s\n", loom_strerror(-LOOM_EINVAL_JOBID));
        return sc->cli.exit_error;
    }
    json_t *body = json_pack("{s:b}", "steps", 1), *reply = NULL;
    if (want_job)
        json_object_set_new(body, "job_ids", json_pack("[I]", (json_int_t)want_job));
    loom_err_t err = {0};
    int rc = loom_cli_call(&sc->cli, "job.info", body, &reply, &err);
    json_decref(body);
    const json_t *jobs = json_object_get(reply, "jobs");
    if (rc < 0 || (want_job && json_array_size(jobs) == 0)) {
        fprintf(stderr, "slurm_get_job_steps error: %s\n",
                rc < 0 ? err.msg : loom_strerror(-LOOM_EINVAL_JOBID));
        json_decref(reply);
        return sc->cli.exit_error;
    }
    loom_sbuf_t out = LOOM_SBUF_INIT;
    size_t i, n = 0;
    json_t *j;
    json_array_foreach(jobs, i, j)
    {
        loom_job_state_t b = loom_job_base(loom_cli_job_state(j));
        if (b == LOOM_JOB_RUNNING || b == LOOM_JOB_SUSPENDED)
            n += show_job_steps(sc, j, want_step, &out);
    }
    rc = 0;
    if (n == 0 && !want_job) {
        loom_sbuf_add(&out, "No job steps in the system\n");
    } else if (n == 0) {
        loom_sbuf_addf(&out, "Job step %lld.%s not found\n", want_job, want_step ? want_step : "");
        rc = sc->cli.exit_error;
    }
    loom_cli_flush(&out);
    loom_sbuf_free(&out);
    json_decref(reply);
    return rc;
}

/* ---- show node ----------------------------------------------------------- */

static int64_t show_node_int(const json_t *n, const loom_conf_node_t *cfg, const char *key)
{
    const loom_conf_nodecfg_t *c = cfg ? cfg->cfg : NULL;
    int64_t dflt = 0;
    if (c && strcmp(key, "cpus") == 0)
        dflt = c->cpus;
    else if (c && strcmp(key, "sockets") == 0)
        dflt = c->sockets;
    else if (c && strcmp(key, "cores") == 0)
        dflt = c->cores_per_socket;
    else if (c && strcmp(key, "threads") == 0)
        dflt = c->threads_per_core;
    else if (c && strcmp(key, "boards") == 0)
        dflt = c->boards;
    else if (c && strcmp(key, "real_memory") == 0)
        dflt = c->real_memory;
    else if (c && strcmp(key, "tmp_disk") == 0)
        dflt = c->tmp_disk;
    else if (c && strcmp(key, "weight") == 0)
        dflt = c->weight;
    return loom_ji(n, key, dflt);
}

static void show_node_features(show_rec_t *r, const json_t *n, const loom_conf_node_t *cfg)
{
    loom_sbuf_t f = LOOM_SBUF_INIT;
    const char *feat = loom_js(n, "features");
    if (!feat && cfg)
        for (size_t i = 0; i < cfg->cfg->features.n; i++)
            loom_sbuf_addf(&f, "%s%s", i ? "," : "", cfg->cfg->features.v[i]);
    if (!feat)
        feat = loom_sbuf_str(&f);
    const char *act = loom_js(n, "active_features");
    show_addf(r, "AvailableFeatures=%s", *feat ? feat : "(null)");
    show_eol(r);
    show_addf(r, "ActiveFeatures=%s", act && *act ? act : *feat ? feat : "(null)");
    show_eol(r);
    loom_sbuf_free(&f);
    const char *gres = loom_js(n, "gres");
    if (!gres && cfg)
        gres = cfg->cfg->gres_text;
    show_addf(r, "Gres=%s", gres && *gres ? gres : "(null)");
    show_eol(r);
}

static void show_node_head(const loom_scontrol_t *sc, show_rec_t *r, const json_t *n,
                           const loom_conf_node_t *cfg)
{
    show_addf(r, "NodeName=%s", show_str(n, "name", ""));
    if (loom_js(n, "arch"))
        show_addf(r, " Arch=%s", loom_js(n, "arch"));
    show_addf(r, " CoresPerSocket=%lld ", (long long)show_node_int(n, cfg, "cores"));
    show_eol(r);
    show_addf(r, "CPUAlloc=%lld CPUEfctv=%lld CPUTot=%lld CPULoad=",
              (long long)loom_ji(n, "alloc_cpus", 0), (long long)show_node_int(n, cfg, "cpus"),
              (long long)show_node_int(n, cfg, "cpus"));
    if (loom_jhas(n, "cpu_load"))
        show_addf(r, "%.2f", loom_jd(n, "cpu_load", 0));
    else
        show_addf(r, "N/A");
    show_eol(r);
    show_node_features(r, n, cfg);
    if (sc->details) {
        show_addf(r, "GresDrain=N/A");
        show_eol(r);
        if (loom_js(n, "gres_used")) {
            show_addf(r, "GresUsed=%s", loom_js(n, "gres_used"));
            show_eol(r);
        }
    }
}

static void show_node_addr(const loom_scontrol_t *sc, show_rec_t *r, const json_t *n,
                           const loom_conf_node_t *cfg)
{
    const char *name = show_str(n, "name", "");
    show_addf(r, "NodeAddr=%s NodeHostName=%s", show_str(n, "addr", cfg ? cfg->addr : name),
              show_str(n, "hostname", cfg ? cfg->hostname : name));
    int64_t port = loom_ji(n, "port", cfg ? cfg->port : 0);
    const loom_conf_t *conf = sc->cli.conf;
    bool own_port = conf && port > 0 && port != conf->slurmd_port;
    if (own_port) /* "Port=9 " alone, "Port=9 Version=22.05.8" with a version */
        show_addf(r, " Port=%lld ", (long long)port);
    if (loom_js(n, "version"))
        show_addf(r, "%sVersion=%s", own_port ? "" : " ", loom_js(n, "version"));
    show_eol(r);
    if (loom_js(n, "os")) {
        show_addf(r, "OS=%s ", loom_js(n, "os"));
        show_eol(r);
    }
    show_addf(r, "RealMemory=%lld AllocMem=%lld FreeMem=",
              (long long)show_node_int(n, cfg, "real_memory"),
              (long long)loom_ji(n, "alloc_mem", 0));
    if (loom_jhas(n, "free_mem"))
        show_addf(r, "%lld", (long long)loom_ji(n, "free_mem", 0));
    else
        show_addf(r, "N/A");
    show_addf(r, " Sockets=%lld Boards=%lld", (long long)show_node_int(n, cfg, "sockets"),
              (long long)show_node_int(n, cfg, "boards"));
    show_eol(r);
}

/* "Partitions=a,b " from the record, else from slurm.conf. */
static void show_node_partitions(const loom_scontrol_t *sc, show_rec_t *r, const json_t *n)
{
    loom_strv_t names = LOOM_STRV_INIT;
    json_t *parts = json_object_get(n, "partitions");
    size_t i;
    json_t *p;
    if (json_is_string(parts))
        loom_strv_split(&names, json_string_value(parts), ",");
    json_array_foreach(parts, i, p)
    {
        if (json_is_string(p))
            loom_strv_add(&names, json_string_value(p));
    }
    const loom_conf_t *conf = sc->cli.conf;
    long idx = conf && !parts ? loom_conf_node_index(conf, show_str(n, "name", "")) : -1;
    for (size_t k = 0; idx >= 0 && k < conf->n_parts; k++)
        for (size_t m = 0; m < conf->parts[k].n_nodes; m++)
            if (conf->parts[k].node_idx[m] == (size_t)idx)
                loom_strv_add(&names, conf->parts[k].name);
    if (names.n) {
        show_addf(r, "Partitions=");
        for (size_t k = 0; k < names.n; k++)
            show_addf(r, "%s%s", k ? "," : "", names.v[k]);
        show_addf(r, " ");
        show_eol(r);
    }
    loom_strv_free(&names);
}

static void show_node_tres(show_rec_t *r, const json_t *n, const loom_conf_node_t *cfg)
{
    loom_sbuf_t t = LOOM_SBUF_INIT;
    const char *cfgtres = loom_js(n, "tres_cfg");
    if (!cfgtres) {
        loom_sbuf_addf(&t, "cpu=%lld,mem=", (long long)show_node_int(n, cfg, "cpus"));
        loom_mem_fmt((uint64_t)show_node_int(n, cfg, "real_memory"), &t);
        loom_sbuf_addf(&t, ",billing=%lld", (long long)show_node_int(n, cfg, "cpus"));
    }
    show_addf(r, "CfgTRES=%s", cfgtres ? cfgtres : loom_sbuf_str(&t));
    show_eol(r);
    loom_sbuf_reset(&t);
    const char *alloc = loom_js(n, "tres_alloc");
    if (!alloc && loom_ji(n, "alloc_cpus", 0) > 0) {
        loom_sbuf_addf(&t, "cpu=%lld", (long long)loom_ji(n, "alloc_cpus", 0));
        if (loom_ji(n, "alloc_mem", 0) > 0) {
            loom_sbuf_add(&t, ",mem=");
            loom_mem_fmt((uint64_t)loom_ji(n, "alloc_mem", 0), &t);
        }
    }
    show_addf(r, "AllocTRES=%s", alloc ? alloc : loom_sbuf_str(&t));
    show_eol(r);
    loom_sbuf_free(&t);
}

static void show_node(const loom_scontrol_t *sc, const json_t *n, const loom_conf_node_t *cfg,
                      loom_sbuf_t *out)
{
    show_rec_t r = {LOOM_STRV_INIT, LOOM_SBUF_INIT};
    show_node_head(sc, &r, n, cfg);
    show_node_addr(sc, &r, n, cfg);
    show_addf(&r, "State=");
    loom_node_state_complete(loom_cli_node_state(n), &r.cur);
    show_addf(&r, " ThreadsPerCore=%lld TmpDisk=%lld Weight=%lld Owner=N/A MCS_label=N/A",
              (long long)show_node_int(n, cfg, "threads"),
              (long long)show_node_int(n, cfg, "tmp_disk"),
              (long long)show_node_int(n, cfg, "weight"));
    show_eol(&r);
    show_node_partitions(sc, &r, n);
    show_date(&r, "BootTime", (time_t)loom_ji(n, "boot_time", 0), "None");
    show_addf(&r, " ");
    show_date(&r, "SlurmdStartTime", (time_t)loom_ji(n, "slurmd_start_time", 0), "None");
    show_eol(&r);
    show_date(&r, "LastBusyTime", (time_t)loom_ji(n, "last_busy", 0), "None");
    show_eol(&r);
    show_node_tres(&r, n, cfg);
    show_addf(&r, "CapWatts=n/a");
    show_eol(&r);
    show_addf(&r, "CurrentWatts=0 AveWatts=0");
    show_eol(&r);
    show_addf(&r, "ExtSensorsJoules=n/s ExtSensorsWatts=0 ExtSensorsTemp=n/s");
    show_eol(&r);
    if (loom_js(n, "reason") && *loom_js(n, "reason")) {
        show_addf(&r, "Reason=%s [%s@", loom_js(n, "reason"),
                  show_str(n, "reason_user", "Unknown"));
        loom_date_fmt((time_t)loom_ji(n, "reason_time", 0), "Unknown", &r.cur);
        show_addf(&r, "]");
        show_eol(&r);
    }
    static const char *const texts[][2] = {{"comment", "Comment"}, {"extra", "Extra"}};
    for (size_t i = 0; i < 2; i++)
        if (loom_js(n, texts[i][0]) && *loom_js(n, texts[i][0])) {
            show_addf(&r, "%s=%s", texts[i][1], loom_js(n, texts[i][0]));
            show_eol(&r);
        }
    show_emit(sc, &r, out);
}

static int show_nodes(loom_scontrol_t *sc, const char *arg)
{
    json_t *reply = NULL;
    loom_err_t err = {0};
    if (loom_cli_call(&sc->cli, "node.info", NULL, &reply, &err) < 0) {
        fprintf(stderr, "slurm_load_node error: %s\n", err.msg);
        json_decref(reply);
        return sc->cli.exit_error;
    }
    loom_hostlist_t *want = NULL;
    if (arg && loom_hostlist_parse(arg, &want, NULL) < 0)
        want = NULL;
    json_t *sel = json_array();
    size_t i;
    json_t *n;
    json_array_foreach(json_object_get(reply, "nodes"), i, n)
    {
        if (!arg || (want && loom_hostlist_find(want, show_str(n, "name", "")) >= 0))
            json_array_append(sel, n);
    }
    loom_sbuf_t out = LOOM_SBUF_INIT;
    int rc = 0;
    const loom_conf_t *conf = sc->cli.conf;
    if (sc->json) {
        json_t *items = json_array();
        json_array_foreach(sel, i, n)
        {
            const loom_conf_node_t *cfg =
                conf ? loom_conf_find_node(conf, show_str(n, "name", "")) : NULL;
            json_array_append_new(items, loom_cli_json_node(n, cfg));
        }
        loom_cli_json_print("nodes", items, conf, sc->argc, sc->argv, &out);
    } else if (!json_array_size(sel)) {
        if (arg)
            printf("Node %s not found\n", arg);
        else
            printf("No nodes in the system\n");
        rc = arg ? sc->cli.exit_error : 0;
    }
    json_array_foreach(sel, i, n)
    {
        if (!sc->json)
            show_node(sc, n, conf ? loom_conf_find_node(conf, show_str(n, "name", "")) : NULL,
                      &out);
    }
    loom_cli_flush(&out);
    loom_sbuf_free(&out);
    loom_hostlist_destroy(want);
    json_decref(sel);
    json_decref(reply);
    return rc;
}

/* ---- show partition ------------------------------------------------------- */

static void show_limit(int64_t secs, const char *none, loom_sbuf_t *out)
{
    if (secs == LOOM_TIME_NOT_SET)
        loom_sbuf_add(out, none);
    else
        loom_time_fmt_limit(secs, out);
}

static void show_count(const char *key, int64_t v, loom_sbuf_t *out)
{
    if (v < 0)
        loom_sbuf_addf(out, "%s=UNLIMITED", key);
    else
        loom_sbuf_addf(out, "%s=%lld", key, (long long)v);
}

static void show_list(const loom_strv_t *v, loom_sbuf_t *out)
{
    if (v->n == 0)
        loom_sbuf_add(out, "ALL");
    for (size_t i = 0; i < v->n; i++)
        loom_sbuf_addf(out, "%s%s", i ? "," : "", v->v[i]);
}

/* Minutes from the record, else the configuration's seconds. */
static int64_t show_part_time(const json_t *p, const char *key, int64_t conf_secs)
{
    if (!json_object_get(p, key))
        return conf_secs;
    int64_t m = loom_ji(p, key, -1);
    return m < 0 ? LOOM_TIME_INFINITE : m * 60;
}

/* The Nodes= group; returns the node count and sums their CPUs and memory. */
static size_t show_part_nodes(const loom_conf_t *conf, const loom_conf_part_t *c, const json_t *p,
                              show_rec_t *r, int64_t *cpus, int64_t *mem)
{
    loom_hostlist_t *hl = NULL;
    const char *expr = loom_js(p, "nodes");
    if (!expr || loom_hostlist_parse(expr, &hl, NULL) < 0) {
        hl = loom_hostlist_create();
        for (size_t i = 0; c && i < c->n_nodes; i++)
            loom_hostlist_push(hl, conf->nodes[c->node_idx[i]].name);
    }
    for (size_t i = 0; i < loom_hostlist_count(hl); i++) {
        const loom_conf_node_t *n =
            conf ? loom_conf_find_node(conf, loom_hostlist_nth(hl, i)) : NULL;
        *cpus += n ? n->cfg->cpus : 0;
        *mem += n ? n->cfg->real_memory : 0;
    }
    char *text = loom_hostlist_compress_sorted(hl);
    show_addf(r, "Nodes=%s", *text ? text : "(null)");
    show_eol(r);
    free(text);
    *cpus = loom_ji(p, "total_cpus", *cpus);
    size_t count = loom_hostlist_count(hl);
    loom_hostlist_destroy(hl);
    return (size_t)loom_ji(p, "total_nodes", (int64_t)count);
}

static void show_part_policy(show_rec_t *r, const loom_conf_part_t *c, const json_t *p)
{
    show_addf(r, "AllowGroups=");
    if (c)
        show_list(&c->allow_groups, &r->cur);
    else
        show_addf(r, "ALL");
    show_addf(r, " AllowAccounts=");
    if (c)
        show_list(&c->allow_accounts, &r->cur);
    else
        show_addf(r, "ALL");
    show_addf(r, " AllowQos=");
    if (c)
        show_list(&c->allow_qos, &r->cur);
    else
        show_addf(r, "ALL");
    show_eol(r);
    show_addf(r, "AllocNodes=");
    if (c)
        show_list(&c->alloc_nodes, &r->cur);
    else
        show_addf(r, "ALL");
    bool dflt = loom_jb(p, "default", c ? c->is_default : false);
    show_addf(r, " Default=%s QoS=%s", dflt ? "YES" : "NO", c && c->qos ? c->qos : "N/A");
    show_eol(r);
    show_addf(r, "DefaultTime=");
    show_limit(show_part_time(p, "default_time", c ? c->default_time : LOOM_TIME_NOT_SET), "NONE",
               &r->cur);
    show_addf(r, " DisableRootJobs=%s ExclusiveUser=%s GraceTime=%lld Hidden=%s",
              c && c->disable_root_jobs ? "YES" : "NO", c && c->exclusive_user ? "YES" : "NO",
              (long long)(c ? c->grace_time : 0), c && c->hidden ? "YES" : "NO");
    show_eol(r);
    show_count("MaxNodes", loom_ji(p, "max_nodes", c ? c->max_nodes : -1), &r->cur);
    show_addf(r, " MaxTime=");
    show_limit(show_part_time(p, "max_time", c ? c->max_time : LOOM_TIME_INFINITE), "UNLIMITED",
               &r->cur);
    show_addf(r, " MinNodes=%lld LLN=%s ", (long long)loom_ji(p, "min_nodes", c ? c->min_nodes : 0),
              c && c->lln ? "YES" : "NO");
    show_count("MaxCPUsPerNode", loom_ji(p, "max_cpus_per_node", c ? c->max_cpus_per_node : -1),
               &r->cur);
    show_eol(r);
}

static const char *show_oversub(const loom_conf_part_t *c, char *buf, size_t len)
{
    int m = c ? c->oversubscribe : LOOM_CONF_OVERSUB_NO;
    if (m == LOOM_CONF_OVERSUB_EXCLUSIVE)
        return "EXCLUSIVE";
    if (m == LOOM_CONF_OVERSUB_YES || m == LOOM_CONF_OVERSUB_FORCE) {
        snprintf(buf, len, "%s:%lld", m == LOOM_CONF_OVERSUB_YES ? "YES" : "FORCE",
                 (long long)c->oversubscribe_n);
        return buf;
    }
    return "NO";
}

static void show_part_mem(show_rec_t *r, const loom_conf_part_t *c)
{
    loom_sbuf_t a = LOOM_SBUF_INIT, b = LOOM_SBUF_INIT;
    bool per_cpu_def = c && c->def_mem_per_cpu > 0, per_cpu_max = c && c->max_mem_per_cpu > 0;
    int64_t def = per_cpu_def ? c->def_mem_per_cpu : c ? c->def_mem_per_node : 0;
    int64_t max = per_cpu_max ? c->max_mem_per_cpu : c ? c->max_mem_per_node : 0;
    if (def > 0)
        loom_sbuf_addf(&a, "%lld", (long long)def);
    else
        loom_sbuf_add(&a, "UNLIMITED");
    if (max > 0)
        loom_sbuf_addf(&b, "%lld", (long long)max);
    else
        loom_sbuf_add(&b, "UNLIMITED");
    show_addf(r, "%s=%s %s=%s", per_cpu_def ? "DefMemPerCPU" : "DefMemPerNode", loom_sbuf_str(&a),
              per_cpu_max ? "MaxMemPerCPU" : "MaxMemPerNode", loom_sbuf_str(&b));
    show_eol(r);
    loom_sbuf_free(&a);
    loom_sbuf_free(&b);
}

static void show_partition(const loom_scontrol_t *sc, const json_t *p, const loom_conf_part_t *c,
                           loom_sbuf_t *out)
{
    const loom_conf_t *conf = sc->cli.conf;
    show_rec_t r = {LOOM_STRV_INIT, LOOM_SBUF_INIT};
    show_addf(&r, "PartitionName=%s", show_str(p, "name", c ? c->name : ""));
    show_eol(&r);
    show_part_policy(&r, c, p);
    int64_t cpus = 0, mem = 0;
    size_t nnodes = show_part_nodes(conf, c, p, &r, &cpus, &mem);
    char buf[64];
    show_addf(&r,
              "PriorityJobFactor=%lld PriorityTier=%lld RootOnly=%s ReqResv=%s OverSubscribe=%s",
              (long long)(c ? c->priority_job_factor : 1), (long long)(c ? c->priority_tier : 1),
              c && c->root_only ? "YES" : "NO", c && c->req_resv ? "YES" : "NO",
              show_oversub(c, buf, sizeof(buf)));
    show_eol(&r);
    show_addf(&r, "OverTimeLimit=NONE PreemptMode=OFF");
    show_eol(&r);
    show_addf(&r, "State=%s TotalCPUs=%lld TotalNodes=%zu SelectTypeParameters=NONE",
              show_str(p, "state", "UP"), (long long)cpus, nnodes);
    show_eol(&r);
    show_addf(&r, "JobDefaults=(null)");
    show_eol(&r);
    show_part_mem(&r, c);
    if (nnodes) {
        show_addf(&r, "TRES=cpu=%lld,mem=", (long long)cpus);
        loom_mem_fmt((uint64_t)mem, &r.cur);
        show_addf(&r, ",node=%zu,billing=%lld", nnodes, (long long)cpus);
    } else {
        show_addf(&r, "TRES=(null)");
    }
    show_eol(&r);
    show_emit(sc, &r, out);
}

static int show_partitions(loom_scontrol_t *sc, const char *arg)
{
    json_t *reply = NULL;
    loom_err_t err = {0};
    if (loom_cli_call(&sc->cli, "part.info", NULL, &reply, &err) < 0) {
        fprintf(stderr, "slurm_load_partitions error: %s\n", err.msg);
        json_decref(reply);
        return sc->cli.exit_error;
    }
    const loom_conf_t *conf = sc->cli.conf;
    loom_sbuf_t out = LOOM_SBUF_INIT;
    size_t i, shown = 0;
    json_t *p;
    json_array_foreach(json_object_get(reply, "partitions"), i, p)
    {
        const char *name = show_str(p, "name", "");
        if (arg && strcmp(arg, name) != 0)
            continue;
        loom_conf_part_t live;
        show_partition(sc, p,
                       loom_cli_part_live(conf ? loom_conf_find_part(conf, name) : NULL, p, &live),
                       &out);
        shown++;
    }
    int rc = 0;
    if (!shown && arg) {
        printf("Partition %s not found\n", arg);
        rc = sc->cli.exit_error;
    } else if (!shown) {
        printf("No partitions in the system\n");
    }
    loom_cli_flush(&out);
    loom_sbuf_free(&out);
    json_decref(reply);
    return rc;
}

/* ---- show config, hostnames ----------------------------------------------- */

/* A value as scontrol 22.05.8 (Debian's build) prints it where Loom's text
 * differs: user names with their uid, a few unset values, the node count. */
static const char *show_config_value(const loom_scontrol_t *sc, const char *k, const char *v,
                                     char *buf, size_t len)
{
    static const char *const unset[][2] = {{"CpuFreqDef", "Unknown"},
                                           {"TaskPluginParam", "(null type)"},
                                           {"PowerPlugin", ""},
                                           {"PluginDir", "/usr/lib/x86_64-linux-gnu/slurm-wlm"}};
    if ((!strcmp(k, "SlurmUser") || !strcmp(k, "SlurmdUser")) && !strchr(v, '(')) {
        struct passwd *pw = getpwnam(v);
        if (pw) {
            snprintf(buf, len, "%s(%u)", v, (unsigned)pw->pw_uid);
            return buf;
        }
    }
    if (!strcmp(k, "MaxNodeCount") && !strcmp(v, "(null)") && sc->cli.conf) {
        snprintf(buf, len, "%zu", sc->cli.conf->n_nodes);
        return buf;
    }
    for (size_t i = 0; i < sizeof(unset) / sizeof(unset[0]); i++)
        if (!strcmp(k, unset[i][0]) && !strcmp(v, "(null)"))
            return unset[i][1];
    return v;
}

/* One "Key = Value" line in scontrol 22.05's order: SLURM_CONF and
 * SLURM_VERSION after SlurmctldPlugstack, HASH_VAL after GroupUpdateTime,
 * MULTIPLE_SLURMD (Debian builds with it) after MpiParams. */
static void show_config_line(const loom_scontrol_t *sc, const char *k, const char *v,
                             loom_sbuf_t *held, loom_sbuf_t *out)
{
    char buf[320];
    bool late = !strcmp(k, "SLURM_CONF") || !strcmp(k, "SLURM_VERSION");
    loom_sbuf_addf(late ? held : out, "%-23s = %s\n", k,
                   show_config_value(sc, k, v, buf, sizeof(buf)));
    if (!strcmp(k, "GroupUpdateTime"))
        loom_sbuf_addf(out, "%-23s = %s\n", "HASH_VAL", "Match");
    else if (!strcmp(k, "MpiParams"))
        loom_sbuf_addf(out, "%-23s = %s\n", "MULTIPLE_SLURMD", "Yes");
    else if (!strcmp(k, "SlurmctldPlugstack")) {
        loom_sbuf_add(out, loom_sbuf_str(held));
        loom_sbuf_reset(held);
    }
}

static int show_config(loom_scontrol_t *sc)
{
    json_t *reply = NULL;
    loom_err_t err = {0};
    if (loom_cli_call(&sc->cli, "config.info", NULL, &reply, &err) < 0) {
        fprintf(stderr, "slurm_load_ctl_conf error: %s\n", err.msg);
        json_decref(reply);
        return sc->cli.exit_error;
    }
    loom_sbuf_t out = LOOM_SBUF_INIT;
    loom_date_fmt(time(NULL), "Unknown", &out);
    char *date = loom_sbuf_detach(&out);
    loom_sbuf_addf(&out, "Configuration data as of %s\n", date);
    free(date);
    json_t *pairs = json_object_get(reply, "config");
    size_t i;
    json_t *kv;
    if (json_array_size(pairs)) {
        loom_sbuf_t held = LOOM_SBUF_INIT; /* SLURM_CONF, SLURM_VERSION: printed later */
        json_array_foreach(pairs, i, kv)
        {
            const char *k = json_string_value(json_array_get(kv, 0));
            const char *v = json_string_value(json_array_get(kv, 1));
            show_config_line(sc, k ? k : "", v ? v : "(null)", &held, &out);
        }
        loom_sbuf_add(&out, loom_sbuf_str(&held));
        loom_sbuf_free(&held);
    } else if (sc->cli.conf) {
        loom_conf_print(sc->cli.conf, &out);
    }
    loom_sbuf_addc(&out, '\n');
    loom_cli_flush(&out);
    loom_sbuf_free(&out);
    json_decref(reply);
    return loom_scontrol_ping(sc);
}

static int show_hostnames(loom_scontrol_t *sc, const char *kind, const char *arg)
{
    if (!arg)
        arg = getenv("SLURM_JOB_NODELIST");
    if (!arg) {
        fprintf(stderr, "Host list is empty\n");
        return sc->cli.exit_error;
    }
    loom_hostlist_t *hl = NULL;
    loom_err_t err = {0};
    if (loom_hostlist_parse(arg, &hl, &err) < 0) {
        fprintf(stderr, "Invalid hostlist: %s\n", arg);
        return sc->cli.exit_error;
    }
    loom_sbuf_t out = LOOM_SBUF_INIT;
    if (strcasecmp(kind, "hostnames") == 0) {
        for (size_t i = 0; i < loom_hostlist_count(hl); i++)
            loom_sbuf_addf(&out, "%s\n", loom_hostlist_nth(hl, i));
    } else if (strcasecmp(kind, "hostlist") == 0) {
        loom_hostlist_ranged(hl, &out);
        loom_sbuf_addc(&out, '\n');
    } else {
        char *s = loom_hostlist_compress_sorted(hl);
        loom_sbuf_addf(&out, "%s\n", s);
        free(s);
    }
    loom_cli_flush(&out);
    loom_sbuf_free(&out);
    loom_hostlist_destroy(hl);
    return 0;
}

static int show_name_cmp(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* slurm.conf's Licenses= ("a:2,b"), by name; Loom counts no use of them. */
static int show_licenses(loom_scontrol_t *sc, const char *arg)
{
    loom_strv_t items = LOOM_STRV_INIT;
    const char *conf = sc->cli.conf ? sc->cli.conf->licenses : NULL;
    if (conf)
        loom_strv_split(&items, conf, ",");
    if (items.n)
        qsort(items.v, items.n, sizeof(*items.v), show_name_cmp);
    loom_sbuf_t out = LOOM_SBUF_INIT;
    for (size_t i = 0; i < items.n; i++) {
        char *colon = strchr(items.v[i], ':');
        long total = colon ? strtol(colon + 1, NULL, 10) : 1;
        if (colon)
            *colon = '\0';
        if (arg && strcmp(arg, items.v[i]) != 0)
            continue;
        loom_sbuf_addf(&out, "LicenseName=%s%sTotal=%ld Used=0 Free=%ld Reserved=0 Remote=no\n",
                       items.v[i], sc->oneliner ? " " : "\n    ", total, total);
    }
    if (!items.n)
        loom_sbuf_add(&out, "No licenses configured in Slurm.\n");
    loom_cli_flush(&out);
    loom_sbuf_free(&out);
    loom_strv_free(&items);
    return 0;
}

int loom_scontrol_show(loom_scontrol_t *sc, int n, char **w)
{
    if (n < 1) {
        fprintf(stderr, "too few arguments for keyword:show\n");
        return sc->cli.exit_error;
    }
    const char *what = w[0], *arg = n > 1 ? w[1] : NULL;
    if (strcasecmp(what, "hostnames") == 0 || strcasecmp(what, "hostlist") == 0 ||
        strcasecmp(what, "hostlistsorted") == 0)
        return show_hostnames(sc, what, arg);
    loom_err_t err = {0};
    if (!loom_cli_conf(&sc->cli, &err)) {
        loom_cli_error(&sc->cli, "%s", err.msg);
        return sc->cli.exit_error;
    }
    if ((loom_scontrol_word_is(what, "jobs", 1) || loom_scontrol_word_is(what, "jobid", 1)) &&
        n > 2) {
        fprintf(stderr, "too many arguments for keyword:show\n");
        return sc->cli.exit_error;
    }
    if (loom_scontrol_word_is(what, "jobs", 1) || loom_scontrol_word_is(what, "jobid", 1))
        return show_jobs(sc, arg); /* 'show jobid N' as snakemake's slurm executor asks */
    if (loom_scontrol_word_is(what, "steps", 2))
        return show_steps(sc, arg);
    if (loom_scontrol_word_is(what, "nodes", 1))
        return show_nodes(sc, arg);
    if (loom_scontrol_word_is(what, "partitions", 1))
        return show_partitions(sc, arg);
    if (loom_scontrol_word_is(what, "config", 1))
        return show_config(sc);
    if (loom_scontrol_word_is(what, "reservations", 3)) { /* Loom has none */
        if (arg)
            printf("Reservation %s not found\n", arg);
        else
            printf("No reservations in the system\n");
        return arg ? sc->cli.exit_error : 0;
    }
    if (loom_scontrol_word_is(what, "licenses", 3))
        return show_licenses(sc, arg);
    if (loom_scontrol_word_is(what, "topology", 3)) {
        loom_cli_error(&sc->cli, "No topology information available");
        return 0;
    }
    if (loom_scontrol_word_is(what, "daemons", 3) || loom_scontrol_word_is(what, "aliases", 3))
        return loom_scontrol_show_host(sc, loom_scontrol_word_is(what, "aliases", 3), n);
    if (loom_scontrol_word_is(what, "burstbuffer", 3) ||
        loom_scontrol_word_is(what, "federation", 3))
        return 0; /* none here: scontrol 22.05.8 prints nothing */
    fprintf(stderr, "invalid entity:%s for keyword:show \n", what);
    return sc->cli.exit_error;
}
