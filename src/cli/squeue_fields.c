/*
 * squeue_fields.c - the getters behind squeue's columns (CLI_SPEC §4.2).
 * One table per record kind; see squeue_fields.h for the value conventions.
 * Headers and unset-value texts were checked against squeue 22.05.
 */
#include "cli/squeue_fields.h"

#include "common/jobstate.h"
#include "common/memsize.h"
#include "common/timefmt.h"

#include <stdint.h>

/* Getter signature shorthand: v is the view, j the job record. */
#define GETTER(fn)                                                                                 \
    static int fn(const void *ctx, const void *rec, loom_sbuf_t *out)                              \
    {                                                                                              \
        fn##_body((const loom_squeue_view_t *)ctx, (const json_t *)rec, out);                      \
        return 0;                                                                                  \
    }
/* The same for bodies that say whether their value may overflow its column. */
#define GETTER_F(fn)                                                                               \
    static int fn(const void *ctx, const void *rec, loom_sbuf_t *out)                              \
    {                                                                                              \
        return fn##_body((const loom_squeue_view_t *)ctx, (const json_t *)rec, out);               \
    }

/* A getter that is one call: helper(job or step record, args..., out). */
#define GETTER_OF(fn, helper, ...) LOOM_FMT_GETTER_OF(fn, const json_t *, helper, __VA_ARGS__)

/* A numeric elapsed time may overflow; UNLIMITED and NOT_SET are cut. */
static int fields_secs(int64_t secs, loom_sbuf_t *out)
{
    loom_time_fmt_elapsed(secs, out);
    return secs >= 0 ? LOOM_FMT_NOCUT : 0;
}

/* A string member, or dflt when absent or empty. */
static void fields_str(const json_t *j, const char *key, const char *dflt, loom_sbuf_t *out)
{
    const char *s = loom_js(j, key);
    loom_sbuf_add(out, s && *s ? s : dflt);
}

static void fields_int(const json_t *j, const char *key, int64_t dflt, loom_sbuf_t *out)
{
    loom_sbuf_addf(out, "%lld", (long long)loom_ji(j, key, dflt));
}

static void fields_date(const json_t *j, const char *key, loom_sbuf_t *out)
{
    loom_date_fmt((time_t)loom_ji(j, key, 0), "N/A", out);
}

static bool fields_pending(const json_t *j)
{
    return loom_job_base(loom_cli_job_state(j)) == LOOM_JOB_PENDING;
}

/* ---- identity ------------------------------------------------------------ */

static void job_id_body(const loom_squeue_view_t *v, const json_t *j, loom_sbuf_t *out)
{
    loom_cli_job_id(j, out);
}
GETTER(job_id)

GETTER_OF(raw_id, fields_int, "job_id", 0)

static void array_job_body(const loom_squeue_view_t *v, const json_t *j, loom_sbuf_t *out)
{
    int64_t a = loom_ji(j, "array_job_id", 0);
    loom_sbuf_addf(out, "%lld", (long long)(a > 0 ? a : loom_ji(j, "job_id", 0)));
}
GETTER(array_job)

static void array_task_body(const loom_squeue_view_t *v, const json_t *j, loom_sbuf_t *out)
{
    const char *rest = loom_js(j, "array_task_str");
    if (loom_ji(j, "array_job_id", 0) <= 0)
        loom_sbuf_add(out, "N/A");
    else if (rest && *rest)
        loom_sbuf_add(out, rest);
    else
        fields_int(j, "array_task_id", 0, out);
}
GETTER(array_task)

GETTER_OF(name, fields_str, "name", "")

/* The user's or group's name from the record, else looked up by its id. */
static void fields_owner(const json_t *j, const char *name_key, const char *id_key,
                         void (*lookup)(int64_t id, loom_sbuf_t *out), loom_sbuf_t *out)
{
    const char *name = loom_js(j, name_key);
    if (name && *name)
        loom_sbuf_add(out, name);
    else
        lookup(loom_ji(j, id_key, -1), out);
}

GETTER_OF(user, fields_owner, "user_name", "user_id", loom_cli_user_name)
GETTER_OF(uid, fields_int, "user_id", 0)
GETTER_OF(group, fields_owner, "group_name", "group_id", loom_cli_group_name)
GETTER_OF(gid, fields_int, "group_id", 0)
GETTER_OF(partition, fields_str, "partition", "")
GETTER_OF(account, fields_str, "account", "(null)")
GETTER_OF(qos, fields_str, "qos", "(null)")

/* ---- state and reason ---------------------------------------------------- */

static void state_body(const loom_squeue_view_t *v, const json_t *j, loom_sbuf_t *out)
{
    loom_sbuf_add(out, loom_job_state_name(loom_cli_job_state(j)));
}
GETTER(state)

static void state_short_body(const loom_squeue_view_t *v, const json_t *j, loom_sbuf_t *out)
{
    loom_sbuf_add(out, loom_job_state_short(loom_cli_job_state(j)));
}
GETTER(state_short)

GETTER_OF(reason, fields_str, "reason", "None")

void loom_squeue_reason_list(const loom_squeue_view_t *v, const json_t *j, loom_sbuf_t *out)
{
    loom_job_state_t b = loom_job_base(loom_cli_job_state(j));
    if (b == LOOM_JOB_PENDING || b == LOOM_JOB_TIMEOUT || b == LOOM_JOB_OUT_OF_MEMORY ||
        b == LOOM_JOB_DEADLINE || b == LOOM_JOB_FAILED) {
        loom_sbuf_addc(out, '(');
        fields_str(j, "reason", "None", out);
        loom_sbuf_addc(out, ')');
    } else {
        fields_str(j, "nodes", "", out);
    }
}

static int reason_list_body(const loom_squeue_view_t *v, const json_t *j, loom_sbuf_t *out)
{
    loom_squeue_reason_list(v, j, out);
    return loom_sbuf_str(out)[0] == '(' ? 0 : LOOM_FMT_NOCUT;
}
GETTER_F(reason_list)

GETTER_OF(dependency, fields_str, "dependency", "(null)")

/* ---- times --------------------------------------------------------------- */

static int time_used_body(const loom_squeue_view_t *v, const json_t *j, loom_sbuf_t *out)
{
    return fields_secs(loom_cli_job_runtime(j, v->now), out);
}
GETTER_F(time_used)

static int time_limit_body(const loom_squeue_view_t *v, const json_t *j, loom_sbuf_t *out)
{
    return fields_secs(loom_cli_job_limit(j), out);
}
GETTER_F(time_limit)

static int time_left_body(const loom_squeue_view_t *v, const json_t *j, loom_sbuf_t *out)
{
    int64_t limit = loom_cli_job_limit(j);
    if (limit >= 0) {
        limit -= loom_cli_job_runtime(j, v->now);
        if (limit < 0)
            limit = 0;
    }
    return fields_secs(limit, out);
}
GETTER_F(time_left)

static void time_min_body(const loom_squeue_view_t *v, const json_t *j, loom_sbuf_t *out)
{
    loom_time_fmt_elapsed(loom_ji(j, "time_min", 0) * 60, out);
}
GETTER(time_min)

GETTER_OF(submit, fields_date, "submit_time")
GETTER_OF(start, fields_date, "start_time")

/* Slurm prints NONE for a started (or scheduled) job without a limit. */
static void end_body(const loom_squeue_view_t *v, const json_t *j, loom_sbuf_t *out)
{
    int64_t start = loom_ji(j, "start_time", 0), end = loom_ji(j, "end_time", 0);
    int64_t limit = loom_cli_job_limit(j);
    bool done = loom_job_state_is_terminal(loom_cli_job_state(j));
    if (!done && limit == LOOM_TIME_INFINITE && start > 0)
        loom_sbuf_add(out, "NONE");
    else if (end <= 0 && start > 0 && limit >= 0)
        loom_date_fmt((time_t)(start + limit), "N/A", out);
    else
        loom_date_fmt((time_t)end, "N/A", out);
}
GETTER(end)

GETTER_OF(eligible, fields_date, "eligible_time")
GETTER_OF(accrue, fields_date, "accrue_time")
GETTER_OF(sched_eval, fields_date, "last_sched_eval")

static void pending_time_body(const loom_squeue_view_t *v, const json_t *j, loom_sbuf_t *out)
{
    int64_t submit = loom_ji(j, "submit_time", 0), start = loom_ji(j, "start_time", 0);
    int64_t until = fields_pending(j) || start <= 0 ? (int64_t)v->now : start;
    loom_sbuf_addf(out, "%lld", (long long)(until > submit && submit > 0 ? until - submit : 0));
}
GETTER(pending_time)

/* ---- sizes --------------------------------------------------------------- */

GETTER_OF(nodes_count, fields_int, "num_nodes", 1)
GETTER_OF(cpus, fields_int, "num_cpus", 1)
GETTER_OF(tasks, fields_int, "num_tasks", 1)
GETTER_OF(cpus_per_task, fields_int, "cpus_per_task", 1)

static void min_cpus_body(const loom_squeue_view_t *v, const json_t *j, loom_sbuf_t *out)
{
    /* Per node, as scontrol's MinCPUsNode: CPUs/task x tasks/node, raised by
     * --mincpus (the record's min_cpus is the job's total). */
    int64_t cpt = loom_ji(j, "cpus_per_task", 1), tpn = loom_ji(j, "ntasks_per_node", 0);
    int64_t per_node = cpt * (tpn > 0 ? tpn : 1), total = loom_ji(j, "min_cpus", 0);
    int64_t nodes = loom_ji(j, "min_nodes", loom_ji(j, "num_nodes", 1));
    nodes = nodes > 0 ? nodes : 1;
    if (total > loom_ji(j, "num_tasks", 1) * cpt && total / nodes > per_node)
        per_node = total / nodes;
    loom_sbuf_addf(out, "%lld", (long long)per_node);
}
GETTER(min_cpus)

static void min_memory_body(const loom_squeue_view_t *v, const json_t *j, loom_sbuf_t *out)
{
    int64_t mib = loom_ji(j, "mem_per_node", loom_ji(j, "mem_per_cpu", 0));
    if (mib <= 0 || loom_jb(j, "mem_whole", false)) /* the whole node: 0, as 22.05 */
        loom_sbuf_add(out, "0");
    else
        loom_mem_fmt((uint64_t)mib, out);
}
GETTER(min_memory)

static void min_tmp_body(const loom_squeue_view_t *v, const json_t *j, loom_sbuf_t *out)
{
    int64_t mib = loom_ji(j, "tmp_disk", 0);
    if (mib > 0)
        loom_mem_fmt((uint64_t)mib, out);
    else
        loom_sbuf_add(out, "0");
}
GETTER(min_tmp)

static void max_cpus_body(const loom_squeue_view_t *v, const json_t *j, loom_sbuf_t *out)
{
    fields_int(j, "max_cpus", loom_ji(j, "num_cpus", 1), out);
}
GETTER(max_cpus)

static void max_nodes_body(const loom_squeue_view_t *v, const json_t *j, loom_sbuf_t *out)
{
    fields_int(j, "max_nodes", loom_ji(j, "num_nodes", 1), out);
}
GETTER(max_nodes)

/* A count the job asked for (-B, --ntasks-per-*), or dflt. */
static void fields_count(const json_t *j, const char *key, const char *dflt, loom_sbuf_t *out)
{
    int64_t n = loom_ji(j, key, 0);
    if (n > 0)
        loom_sbuf_addf(out, "%lld", (long long)n);
    else
        loom_sbuf_add(out, dflt);
}

GETTER_OF(sockets, fields_count, "sockets_per_node", "*")
GETTER_OF(cores, fields_count, "cores_per_socket", "*")
GETTER_OF(threads, fields_count, "threads_per_core", "*")
GETTER_OF(nt_core, fields_count, "ntasks_per_core", "N/A")
GETTER_OF(nt_socket, fields_count, "ntasks_per_socket", "N/A")
GETTER_OF(nt_node, fields_count, "ntasks_per_node", "0")

static void sct_body(const loom_squeue_view_t *v, const json_t *j, loom_sbuf_t *out)
{
    fields_count(j, "sockets_per_node", "*", out);
    loom_sbuf_addc(out, ':');
    fields_count(j, "cores_per_socket", "*", out);
    loom_sbuf_addc(out, ':');
    fields_count(j, "threads_per_core", "*", out);
}
GETTER(sct)

/* ---- placement ----------------------------------------------------------- */

static int nodelist_body(const loom_squeue_view_t *v, const json_t *j, loom_sbuf_t *out)
{
    fields_str(j, "nodes", "", out);
    return LOOM_FMT_NOCUT;
}
GETTER_F(nodelist)

/* %B: a batch job's batch host, an interactive one's (salloc, srun) submit
 * host, as squeue 22.05 prints EXEC_HOST; "n/a" while unknown. */
static int batch_host_body(const loom_squeue_view_t *v, const json_t *j, loom_sbuf_t *out)
{
    (void)v;
    fields_str(j, loom_ji(j, "batch_flag", 1) ? "batch_host" : "alloc_node", "n/a", out);
    return 0;
}
GETTER_F(batch_host)

GETTER_OF(req_nodes, fields_str, "req_nodes", "")
GETTER_OF(exc_nodes, fields_str, "exc_nodes", "")
GETTER_OF(features, fields_str, "features", "(null)")
GETTER_OF(reservation, fields_str, "reservation", "(null)")
GETTER_OF(licenses, fields_str, "licenses", "(null)")
GETTER_OF(tres_node, fields_str, "tres_per_node", "N/A")
GETTER_OF(tres_job, fields_str, "tres_per_job", "N/A")
GETTER_OF(tres_task, fields_str, "tres_per_task", "N/A")

static void tres_alloc_body(const loom_squeue_view_t *v, const json_t *j, loom_sbuf_t *out)
{
    const char *a = loom_js(j, "tres_alloc");
    fields_str(j, a && *a ? "tres_alloc" : "tres_req", "(null)", out);
}
GETTER(tres_alloc)

static void oversubscribe_body(const loom_squeue_view_t *v, const json_t *j, loom_sbuf_t *out)
{
    loom_sbuf_add(out, loom_cli_job_oversub(j));
}
GETTER(oversubscribe)

/* ---- misc ---------------------------------------------------------------- */

GETTER_OF(priority, fields_int, "priority", 0)

static void priority_norm_body(const loom_squeue_view_t *v, const json_t *j, loom_sbuf_t *out)
{
    double p = (double)(uint32_t)loom_ji(j, "priority", 0);
    loom_sbuf_addf(out, "%.14f", p / 4294967295.0);
}
GETTER(priority_norm)

GETTER_OF(nice, fields_int, "nice", 0)
GETTER_OF(work_dir, fields_str, "work_dir", "")
GETTER_OF(command, fields_str, "command", "(null)")
GETTER_OF(comment, fields_str, "comment", "(null)")
LOOM_FMT_TEXT_GETTER(null, "(null)")

/* squeue --start's SCHEDNODES: the nodes backfill planned for a pending job. */
GETTER_OF(sched_nodes, fields_str, "sched_nodes", "(null)")
LOOM_FMT_TEXT_GETTER(na, "N/A")
LOOM_FMT_TEXT_GETTER(zero, "0")

static void empty_body(const loom_squeue_view_t *v, const json_t *j, loom_sbuf_t *out)
{
}
GETTER(empty)

/* squeue's default name ignores arrays: slurm-<raw id>.out. */
static void fields_stdio(const json_t *j, char which, loom_sbuf_t *out)
{
    if (loom_js(j, "std_out") || (which == 'e' && loom_js(j, "std_err"))) {
        loom_cli_job_stdio(j, which, out);
        return;
    }
    loom_sbuf_addf(out, "%s/slurm-%lld.out", loom_js_or(j, "work_dir", "."),
                   (long long)loom_ji(j, "job_id", 0));
}

GETTER_OF(std_out, fields_stdio, 'o')
GETTER_OF(std_err, fields_stdio, 'e')

static void std_in_body(const loom_squeue_view_t *v, const json_t *j, loom_sbuf_t *out)
{
    loom_cli_job_stdio(j, 'i', out);
}
GETTER(std_in)

GETTER_OF(restarts, fields_int, "restart_cnt", 0)
GETTER_OF(exit_code, fields_int, "exit_code", 0)

static void requeue_body(const loom_squeue_view_t *v, const json_t *j, loom_sbuf_t *out)
{
    loom_sbuf_add(out, loom_jb(j, "requeue", true) ? "1" : "0");
}
GETTER(requeue)

static void cluster_body(const loom_squeue_view_t *v, const json_t *j, loom_sbuf_t *out)
{
    loom_sbuf_add(out, v->cluster ? v->cluster : "(null)");
}
GETTER(cluster)

GETTER_OF(deadline, fields_date, "deadline")
GETTER_OF(batch_flag, fields_int, "batch_flag", 1)
GETTER_OF(derived_ec, fields_int, "derived_exit_code", 0)
LOOM_FMT_TEXT_GETTER(na_short, "NA")
LOOM_FMT_TEXT_GETTER(not_set, "NotSet")
LOOM_FMT_TEXT_GETTER(delay_boot, "0:00")

static void reboot_body(const loom_squeue_view_t *v, const json_t *j, loom_sbuf_t *out)
{
    loom_sbuf_add(out, loom_jb(j, "reboot", false) ? "1" : "0");
}
GETTER(reboot)

static void contiguous_body(const loom_squeue_view_t *v, const json_t *j, loom_sbuf_t *out)
{
    loom_sbuf_add(out, loom_jb(j, "contiguous", false) ? "1" : "0");
}
GETTER(contiguous)

GETTER_OF(alloc_node, fields_str, "alloc_node", "(null)")
GETTER_OF(alloc_sid, fields_int, "alloc_sid", 0)

/* clang-format off */
const loom_fmt_col_t loom_squeue_job_cols[] = {
    {'i', "JobArrayID", "JOBID", 0, job_id, 0},
    {'A', "JobID", "JOBID", 0, raw_id, 0},
    {'F', "ArrayJobID", "ARRAY_JOB_ID", 0, array_job, 0},
    {'K', "ArrayTaskID", "ARRAY_TASK_ID", 0, array_task, 0},
    {'j', "Name", "NAME", 0, name, 0},
    {'u', "UserName", "USER", 0, user, 0},
    {'U', "UserID", "UID", 0, uid, 0},
    {'g', "GroupName", "GROUP", 0, group, 0},
    {'G', "GroupID", "GROUP", 0, gid, 0},
    {'P', "Partition", "PARTITION", 0, partition, 0},
    {'a', "Account", "ACCOUNT", 0, account, 0},
    {'q', "QOS", "QOS", 0, qos, 0},
    {'t', "StateCompact", "ST", 0, state_short, 0},
    {'T', "State", "STATE", 0, state, 0},
    {'r', "Reason", "REASON", 0, reason, 0},
    {'R', "ReasonList", "NODELIST(REASON)", 0, reason_list, LOOM_FMT_HDR_NOCUT},
    {'E', "Dependency", "DEPENDENCY", 0, dependency, 0},
    {'M', "TimeUsed", "TIME", 0, time_used, 0},
    {'l', "TimeLimit", "TIME_LIMIT", 0, time_limit, 0},
    {'L', "TimeLeft", "TIME_LEFT", 0, time_left, 0},
    {0, "MinTime", "TIME_MIN", 0, time_min, 0},
    {'V', "SubmitTime", "SUBMIT_TIME", 0, submit, 0},
    {'S', "StartTime", "START_TIME", 0, start, 0},
    {'e', "EndTime", "END_TIME", 0, end, 0},
    {0, "EligibleTime", "ELIGIBLE_TIME", 0, eligible, 0},
    {0, "AccrueTime", "ACCRUE_TIME", 0, accrue, 0},
    {0, "LastSchedEval", "LAST_SCHED_EVAL", 0, sched_eval, 0},
    {0, "PendingTime", "PENDING_TIME", 0, pending_time, 0},
    {'D', "NumNodes", "NODES", 0, nodes_count, 0},
    {'C', "NumCPUs", "CPUS", 0, cpus, 0},
    {0, "NumTasks", "TASKS", 0, tasks, 0},
    {0, "cpus-per-task", "CPUS_PER_TASK", 0, cpus_per_task, 0},
    {'c', "MinCpus", "MIN_CPUS", 0, min_cpus, 0},
    {'m', "MinMemory", "MIN_MEMORY", 0, min_memory, 0},
    {'d', "MinTmpDisk", "MIN_TMP_DISK", 0, min_tmp, 0},
    {0, "MaxCPUs", "MAX_CPUS", 0, max_cpus, 0},
    {0, "MaxNodes", "MAX_NODES", 0, max_nodes, 0},
    {'H', "Sockets", "SOCKETS_PER_NODE", 0, sockets, 0},
    {'I', "Cores", "CORES_PER_SOCKET", 0, cores, 0},
    {'J', "Threads", "THREADS_PER_CORE", 0, threads, 0},
    {'z', "SCT", "S:C:T", 0, sct, 0},
    {'X', "CoreSpec", "CORE_SPEC", 0, na, 0},
    {0, "NTPerNode", "NTASKS_PER_NODE", 0, nt_node, 0},
    {0, "NTPerCore", "NTASKS_PER_CORE", 0, nt_core, 0},
    {0, "NTPerSocket", "NTASKS_PER_SOCKET", 0, nt_socket, 0},
    {0, "NTPerBoard", "NTASKS_PER_BOARD", 0, zero, 0},
    {0, "BoardsPerNode", "BOARDS_PER_NODE", 0, zero, 0},
    {0, "SPerBoard", "SOCKETS_PER_BOARD", 0, zero, 0},
    {'N', "NodeList", "NODELIST", 0, nodelist, LOOM_FMT_HDR_NOCUT},
    {'B', "BatchHost", "EXEC_HOST", 0, batch_host, 0},
    {'n', "ReqNodes", "REQ_NODES", 0, req_nodes, 0},
    {'x', NULL, "EXC_NODES", 0, exc_nodes, 0}, /* no -O name in 22.05 */
    {'Y', "SchedNodes", "SCHEDNODES", 0, sched_nodes, 0},
    {'f', "Feature", "FEATURES", 0, features, 0},
    {'v', "Reservation", "RESERVATION", 0, reservation, 0},
    {'W', "Licenses", "LICENSES", 0, licenses, 0},
    {'b', "tres-per-node", "TRES_PER_NODE", 0, tres_node, 0},
    {0, "tres-per-job", "TRES_PER_JOB", 0, tres_job, 0},
    {0, "tres-per-task", "TRES_PER_TASK", 0, tres_task, 0},
    {0, "tres-alloc", "TRES_ALLOC", 0, tres_alloc, 0},
    {'h', "OverSubscribe", "OVER_SUBSCRIBE", 0, oversubscribe, 0},
    {0, "Shared", "OVER_SUBSCRIBE", 0, oversubscribe, 0},
    {'O', "Contiguous", "CONTIGUOUS", 0, contiguous, 0},
    {'Q', "PriorityLong", "PRIORITY", 0, priority, 0},
    {'p', "Priority", "PRIORITY", 0, priority_norm, 0},
    {'y', "Nice", "NICE", 0, nice, 0},
    {'Z', "WorkDir", "WORK_DIR", 0, work_dir, 0},
    {'o', "Command", "COMMAND", 0, command, 0},
    {'k', "Comment", "COMMENT", 0, comment, 0},
    {'w', "WCKey", "WCKEY", 0, null, 0},
    {'s', "SelectJobInfo", "", 0, empty, 0},
    {0, "STDOUT", "STDOUT", 0, std_out, 0},
    {0, "STDERR", "STDERR", 0, std_err, 0},
    {0, "STDIN", "STDIN", 0, std_in, 0},
    {0, "RestartCnt", "RESTART_COUNT", 0, restarts, 0},
    {0, "exit_code", "EXIT_CODE", 0, exit_code, 0},
    {0, "Requeue", "REQUEUE", 0, requeue, 0},
    {0, "Cluster", "CLUSTER", 0, cluster, 0},
    {0, "AllocNodes", "ALLOC_NODES", 0, alloc_node, 0},
    {0, "AllocSID", "ALLOC_SID", 0, alloc_sid, 0},
    {0, "Deadline", "DEADLINE", 0, deadline, 0},
    {0, "Reboot", "REBOOT", 0, reboot, 0},
    {0, "BatchFlag", "BATCH_FLAG", 0, batch_flag, 0},
    {0, "DerivedEC", "DERIVED_EC", 0, derived_ec, 0},
    {0, "AssocID", "ASSOC_ID", 0, zero, 0}, /* Loom keeps no association ids in jobs */
    {0, "BurstBuffer", "BURST_BUFFER", 0, null, 0},
    {0, "BurstBufferState", "BURST_BUFFER_STATE", 0, null, 0},
    {0, "ClusterFeature", "CLUSTER_FEATURES", 0, null, 0},
    {0, "Container", "CONTAINER", 0, null, 0},
    {0, "DelayBoot", "DELAY_BOOT", 0, delay_boot, 0},
    {0, "HetJobID", "HET_JOB_ID", 0, na, 0},
    {0, "HetJobIDSet", "HET_JOB_ID_SET", 0, na, 0},
    {0, "HetJobOffset", "HET_JOB_OFFSET", 0, na, 0},
    {0, "MCSLabel", "MCSLABEL", 0, null, 0},
    {0, "Network", "NETWORK", 0, null, 0},
    {0, "Origin", "ORIGIN", 0, na_short, 0},
    {0, "OriginRaw", "ORIGIN_RAW", 0, na_short, 0},
    {0, "PreemptTime", "PREEMPT_TIME", 0, na, 0},
    {0, "Prefer", "PREFER", 0, null, 0},
    {0, "Profile", "PROFILE", 0, not_set, 0},
    {0, "ReqSwitch", "REQ_SWITCH", 0, zero, 0},
    {0, "ResizeTime", "RESIZE_TIME", 0, na, 0},
    {0, "SiblingsActive", "ACTIVE_SIBLINGS", 0, na_short, 0},
    {0, "SiblingsActiveRaw", "ACTIVE_SIBLINGS_RAW", 0, na_short, 0},
    {0, "SiblingsViable", "VIABLE_SIBLINGS", 0, na_short, 0},
    {0, "SiblingsViableRaw", "VIALBLE_SIBLINGS_RAW", 0, na_short, 0}, /* 22.05's spelling */
};
/* clang-format on */
const size_t loom_squeue_job_ncols = sizeof(loom_squeue_job_cols) / sizeof(loom_squeue_job_cols[0]);

/* ---- steps (squeue -s): records {"step":"12.batch","name":..,"job":{job record}} */

static const json_t *fields_step_job(const json_t *s)
{
    return json_object_get(s, "job");
}

GETTER_OF(step_id, fields_str, "step", "")
GETTER_OF(step_name, fields_str, "name", "")

static void step_partition_body(const loom_squeue_view_t *v, const json_t *s, loom_sbuf_t *out)
{
    fields_str(fields_step_job(s), "partition", "", out);
}
GETTER(step_partition)

static void step_user_body(const loom_squeue_view_t *v, const json_t *s, loom_sbuf_t *out)
{
    fields_owner(fields_step_job(s), "user_name", "user_id", loom_cli_user_name, out);
}
GETTER(step_user)

static void step_uid_body(const loom_squeue_view_t *v, const json_t *s, loom_sbuf_t *out)
{
    fields_int(fields_step_job(s), "user_id", 0, out);
}
GETTER(step_uid)

static int step_time_body(const loom_squeue_view_t *v, const json_t *s, loom_sbuf_t *out)
{
    int64_t start = loom_ji(s, "start_time", 0);
    return fields_secs(start > 0 && v->now > start ? v->now - start : 0, out);
}
GETTER_F(step_time)

GETTER_OF(step_start, fields_date, "start_time")

static int step_nodes_body(const loom_squeue_view_t *v, const json_t *s, loom_sbuf_t *out)
{
    fields_str(s, "nodes", "", out);
    return LOOM_FMT_NOCUT;
}
GETTER_F(step_nodes)

static void step_tasks_body(const loom_squeue_view_t *v, const json_t *s, loom_sbuf_t *out)
{
    fields_int(s, "num_tasks", loom_ji(s, "tasks", 1), out);
}
GETTER(step_tasks)

static int step_limit_body(const loom_squeue_view_t *v, const json_t *s, loom_sbuf_t *out)
{
    return fields_secs(loom_cli_job_limit(fields_step_job(s)), out);
}
GETTER_F(step_limit)

/* clang-format off */
const loom_fmt_col_t loom_squeue_step_cols[] = {
    {'i', "StepID", "STEPID", 0, step_id, 0},
    {'j', "StepName", "NAME", 0, step_name, 0},
    {'P', "Partition", "PARTITION", 0, step_partition, 0},
    {'u', "UserName", "USER", 0, step_user, 0},
    {'U', "UserID", "UID", 0, step_uid, 0},
    {'M', "TimeUsed", "TIME", 0, step_time, 0},
    {'S', "StartTime", "START_TIME", 0, step_start, 0},
    {'N', "NodeList", "NODELIST", 0, step_nodes, LOOM_FMT_HDR_NOCUT},
    {'A', "NumTasks", "TASKS", 0, step_tasks, 0},
    {'l', "TimeLimit", "TIME_LIMIT", 0, step_limit, 0},
};
/* clang-format on */
const size_t loom_squeue_step_ncols =
    sizeof(loom_squeue_step_cols) / sizeof(loom_squeue_step_cols[0]);
