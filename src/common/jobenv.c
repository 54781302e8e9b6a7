/*
 * jobenv.c - the environment given to jobs and steps (CLI_SPEC §12).
 *
 * Vectors are small (a hundred entries), so lookups are linear scans; the
 * batch environment is built once per job.
 */
#include "common/jobenv.h"

#include "common/xalloc.h"

#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* ---------------------------------------------------------------- vectors */

/* Index of the entry "name=..." in env, or -1. */
static long jobenv_find(const loom_strv_t *env, const char *name, size_t len)
{
    for (size_t i = 0; i < env->n; i++)
        if (strncmp(env->v[i], name, len) == 0 && env->v[i][len] == '=')
            return (long)i;
    return -1;
}

const char *loom_jobenv_get(const loom_strv_t *env, const char *name)
{
    size_t len = strlen(name);
    long i = jobenv_find(env, name, len);
    return i < 0 ? NULL : env->v[i] + len + 1;
}

/* Replace or append an already formatted "name=value" (takes entry). */
static void jobenv_put(loom_strv_t *env, char *entry, size_t name_len)
{
    long i = jobenv_find(env, entry, name_len);
    if (i < 0) {
        loom_strv_take(env, entry);
        return;
    }
    free(env->v[i]);
    env->v[i] = entry;
}

void loom_jobenv_set(loom_strv_t *env, const char *name, const char *value)
{
    loom_sbuf_t sb = LOOM_SBUF_INIT;
    loom_sbuf_addf(&sb, "%s=%s", name, value ? value : "");
    jobenv_put(env, loom_sbuf_detach(&sb), strlen(name));
}

void loom_jobenv_setf(loom_strv_t *env, const char *name, const char *fmt, ...)
{
    loom_sbuf_t sb = LOOM_SBUF_INIT;
    va_list ap;
    loom_sbuf_addf(&sb, "%s=", name);
    va_start(ap, fmt);
    loom_sbuf_vaddf(&sb, fmt, ap);
    va_end(ap);
    jobenv_put(env, loom_sbuf_detach(&sb), strlen(name));
}

void loom_jobenv_unset(loom_strv_t *env, const char *name)
{
    long i = jobenv_find(env, name, strlen(name));
    if (i < 0)
        return;
    free(env->v[i]);
    memmove(&env->v[i], &env->v[i + 1], (env->n - (size_t)i) * sizeof(char *));
    env->n--;
}

/* ------------------------------------------------------- building blocks */

void loom_jobenv_counts(const uint32_t *v, size_t n, loom_sbuf_t *out)
{
    for (size_t i = 0; i < n;) {
        size_t run = 1;
        while (i + run < n && v[i + run] == v[i])
            run++;
        loom_sbuf_addf(out, "%s%u", i ? "," : "", (unsigned)v[i]);
        if (run > 1)
            loom_sbuf_addf(out, "(x%zu)", run);
        i += run;
    }
}

static uint32_t jobenv_cap(uint32_t cpus, uint32_t cpus_per_task)
{
    uint32_t cap = cpus / (cpus_per_task ? cpus_per_task : 1);
    return cap ? cap : 1;
}

/* Tasks on each node after r rounds within the CPUs. */
static uint64_t jobenv_rounds(const uint32_t *cpus, size_t n, uint32_t cpt, uint64_t r)
{
    uint64_t sum = 0;
    for (size_t i = 0; i < n; i++) {
        uint64_t cap = jobenv_cap(cpus[i], cpt);
        sum += cap < r ? cap : r;
    }
    return sum;
}

void loom_jobenv_layout(const uint32_t *cpus, size_t n, uint32_t cpus_per_task, uint32_t ntasks,
                        uint32_t *tasks)
{
    memset(tasks, 0, n * sizeof(*tasks));
    if (n == 0)
        return;
    /* Computed, not simulated: ntasks may be huge. The largest r whose full
     * rounds fit, then one more task for the first nodes with room left. */
    uint64_t lo = 0, hi = 0;
    for (size_t i = 0; i < n; i++)
        hi = jobenv_cap(cpus[i], cpus_per_task) > hi ? jobenv_cap(cpus[i], cpus_per_task) : hi;
    while (lo < hi) {
        uint64_t mid = lo + (hi - lo + 1) / 2;
        if (jobenv_rounds(cpus, n, cpus_per_task, mid) <= ntasks)
            lo = mid;
        else
            hi = mid - 1;
    }
    uint64_t left = ntasks - jobenv_rounds(cpus, n, cpus_per_task, lo);
    for (size_t i = 0; i < n; i++) {
        uint32_t cap = jobenv_cap(cpus[i], cpus_per_task);
        tasks[i] = cap < lo ? cap : (uint32_t)lo;
        if (left > 0 && cap > lo) {
            tasks[i]++;
            left--;
        }
    }
    /* Past the CPUs (overcommit): round-robin, in whole rounds first. */
    for (size_t i = 0; i < n; i++)
        tasks[i] += (uint32_t)(left / n + (i < left % n ? 1 : 0));
}

void loom_jobenv_rank_nodes(const uint32_t *tasks, size_t n, bool cyclic, uint32_t *node_of)
{
    uint64_t total = 0, r = 0;
    for (size_t i = 0; i < n; i++)
        total += tasks[i];
    if (!cyclic) {
        for (size_t i = 0; i < n; i++)
            for (uint32_t k = 0; k < tasks[i]; k++)
                node_of[r++] = (uint32_t)i;
        return;
    }
    for (uint32_t round = 0; r < total; round++)
        for (size_t i = 0; i < n && r < total; i++)
            if (tasks[i] > round)
                node_of[r++] = (uint32_t)i;
}

uint32_t loom_jobenv_default_ntasks(const uint32_t *cpus, size_t n, uint32_t cpus_per_task)
{
    uint64_t total = jobenv_rounds(cpus, n, cpus_per_task, UINT32_MAX);
    return total > UINT32_MAX ? UINT32_MAX : (uint32_t)total;
}

/* ---------------------------------------------------------------- export */

static bool jobenv_is_slurm(const char *entry)
{
    return strncmp(entry, "SLURM_", 6) == 0;
}

static bool jobenv_valid_name(const char *s, size_t len)
{
    if (len == 0 || isdigit((unsigned char)s[0]))
        return false;
    for (size_t i = 0; i < len; i++)
        if (!isalnum((unsigned char)s[i]) && s[i] != '_')
            return false;
    return true;
}

void loom_jobenv_export_split(const char *spec, loom_strv_t *out)
{
    loom_sbuf_t tok = LOOM_SBUF_INIT;
    char quote = 0;
    for (const char *p = spec;; p++) {
        if (*p == '\0' || (*p == ',' && !quote)) {
            if (tok.len)
                loom_strv_add(out, loom_sbuf_str(&tok));
            loom_sbuf_reset(&tok);
            if (*p == '\0')
                break;
            continue;
        }
        if (*p == quote)
            quote = 0;
        else if (!quote && (*p == '"' || *p == '\''))
            quote = *p;
        loom_sbuf_addc(&tok, *p);
    }
    loom_sbuf_free(&tok);
}

static int jobenv_export_items(const char *spec, loom_strv_t *items, bool *all, bool *none,
                               loom_err_t *err)
{
    loom_strv_t raw = LOOM_STRV_INIT;
    loom_jobenv_export_split(spec, &raw);
    int rc = 0;
    for (size_t i = 0; i < raw.n && rc == 0; i++) {
        const char *t = raw.v[i];
        const char *eq = strchr(t, '=');
        size_t len = eq ? (size_t)(eq - t) : strlen(t);
        if (strcasecmp(t, "ALL") == 0)
            *all = true;
        else if (strcasecmp(t, "NONE") == 0 || strcasecmp(t, "NIL") == 0)
            *none = true;
        else if (!jobenv_valid_name(t, len))
            rc = loom_errf(err, -LOOM_EPARSE, "invalid --export variable '%s'", t);
        else
            loom_strv_add(items, t);
    }
    loom_strv_free(&raw);
    return rc;
}

/* Add one listed item: NAME=value, or NAME taken from src when it is there. */
static void jobenv_export_item(const char *item, char *const *src, bool all, loom_strv_t *out)
{
    const char *eq = strchr(item, '=');
    size_t len = eq ? (size_t)(eq - item) : strlen(item);
    if (eq) {
        /* With ALL the submit environment wins over a listed value. */
        if (!all || jobenv_find(out, item, len) < 0)
            jobenv_put(out, loom_xstrdup(item), len);
        return;
    }
    for (size_t i = 0; src && src[i]; i++)
        if (strncmp(src[i], item, len) == 0 && src[i][len] == '=')
            jobenv_put(out, loom_xstrdup(src[i]), len);
}

int loom_jobenv_export(const char *spec, char *const *src, loom_strv_t *out, loom_err_t *err)
{
    loom_strv_t items = LOOM_STRV_INIT;
    bool all = false, none = false;
    if (!spec || !*spec)
        spec = "ALL";
    int rc = jobenv_export_items(spec, &items, &all, &none, err);
    if (rc == 0 && all && none)
        rc = loom_errf(err, -LOOM_EPARSE, "invalid --export value '%s'", spec);
    if (rc == 0) {
        if (items.n == 0 && !none)
            all = true;
        for (size_t i = 0; src && src[i]; i++) {
            const char *eq = strchr(src[i], '=');
            if (eq && (all || jobenv_is_slurm(src[i])))
                jobenv_put(out, loom_xstrdup(src[i]), (size_t)(eq - src[i]));
        }
        for (size_t i = 0; i < items.n; i++)
            jobenv_export_item(items.v[i], src, all, out);
    }
    loom_strv_free(&items);
    return rc;
}

/* ----------------------------------------------------------- batch / step */

static void jobenv_set_opt(loom_strv_t *env, const char *name, const char *value)
{
    if (value && *value)
        loom_jobenv_set(env, name, value);
}

static void jobenv_set_u32(loom_strv_t *env, const char *name, uint32_t v)
{
    loom_jobenv_setf(env, name, "%u", (unsigned)v);
}

static void jobenv_set_list(loom_strv_t *env, const char *name, const uint32_t *v, size_t n)
{
    loom_sbuf_t sb = LOOM_SBUF_INIT;
    for (size_t i = 0; i < n; i++)
        loom_sbuf_addf(&sb, "%s%u", i ? "," : "", (unsigned)v[i]);
    loom_jobenv_set(env, name, loom_sbuf_str(&sb));
    loom_sbuf_free(&sb);
}

static void jobenv_set_counts(loom_strv_t *env, const char *name, const uint32_t *v, size_t n)
{
    loom_sbuf_t sb = LOOM_SBUF_INIT;
    loom_jobenv_counts(v, n, &sb);
    loom_jobenv_set(env, name, loom_sbuf_str(&sb));
    loom_sbuf_free(&sb);
}

void loom_jobenv_gpu_vars(loom_strv_t *env, const uint32_t *gpus, size_t n, unsigned flags)
{
    static const struct {
        unsigned flag;
        const char *name;
    } vars[] = {
        {LOOM_JOBENV_GPU_CUDA, "CUDA_VISIBLE_DEVICES"},
        {LOOM_JOBENV_GPU_ROCR, "ROCR_VISIBLE_DEVICES"},
        {LOOM_JOBENV_GPU_ZE, "ZE_AFFINITY_MASK"},
        {LOOM_JOBENV_GPU_OPENCL, "GPU_DEVICE_ORDINAL"},
    };
    if (flags == 0)
        flags = LOOM_JOBENV_GPU_DEFAULT;
    if (flags & LOOM_JOBENV_GPU_NONE)
        return;
    for (size_t i = 0; i < sizeof(vars) / sizeof(vars[0]); i++)
        if (flags & vars[i].flag)
            jobenv_set_list(env, vars[i].name, gpus, n);
}

static void jobenv_batch_ids(const loom_jobenv_job_t *job, loom_strv_t *env)
{
    jobenv_set_u32(env, "SLURM_JOB_ID", job->job_id);
    jobenv_set_u32(env, "SLURM_JOBID", job->job_id);
    loom_jobenv_set(env, "SLURM_JOB_NAME", job->name ? job->name : "");
    loom_jobenv_set(env, "SLURM_JOB_NODELIST", job->nodelist);
    loom_jobenv_set(env, "SLURM_NODELIST", job->nodelist);
    jobenv_set_u32(env, "SLURM_JOB_NUM_NODES", job->num_nodes);
    jobenv_set_u32(env, "SLURM_NNODES", job->num_nodes);
    jobenv_set_opt(env, "SLURM_JOB_PARTITION", job->partition);
    jobenv_set_opt(env, "SLURM_JOB_ACCOUNT", job->account);
    jobenv_set_opt(env, "SLURM_JOB_QOS", job->qos);
    jobenv_set_opt(env, "SLURM_JOB_RESERVATION", job->reservation);
    if (job->array_job_id) {
        jobenv_set_u32(env, "SLURM_ARRAY_JOB_ID", job->array_job_id);
        jobenv_set_u32(env, "SLURM_ARRAY_TASK_ID", job->array_task_id);
        jobenv_set_u32(env, "SLURM_ARRAY_TASK_COUNT", job->array_task_count);
        jobenv_set_u32(env, "SLURM_ARRAY_TASK_MAX", job->array_task_max);
        jobenv_set_u32(env, "SLURM_ARRAY_TASK_MIN", job->array_task_min);
        jobenv_set_u32(env, "SLURM_ARRAY_TASK_STEP", job->array_task_step);
    }
    if (job->restart_cnt)
        jobenv_set_u32(env, "SLURM_RESTART_COUNT", job->restart_cnt);
    jobenv_set_opt(env, "SLURM_JOB_DEPENDENCY", job->dependency);
}

/* CPUs, tasks and memory. */
static void jobenv_batch_sizes(const loom_jobenv_job_t *job, const loom_jobenv_node_t *node,
                               loom_strv_t *env)
{
    size_t n = job->num_nodes;
    jobenv_set_counts(env, "SLURM_JOB_CPUS_PER_NODE", job->node_cpus, n);
    if (node->index < n)
        jobenv_set_u32(env, "SLURM_CPUS_ON_NODE", job->node_cpus[node->index]);
    uint32_t ntasks = job->ntasks;
    if (ntasks) {
        jobenv_set_u32(env, "SLURM_NTASKS", ntasks);
        jobenv_set_u32(env, "SLURM_NPROCS", ntasks);
    } else {
        ntasks = loom_jobenv_default_ntasks(job->node_cpus, n, job->cpus_per_task);
    }
    uint32_t *tasks = loom_xcalloc(n ? n : 1, sizeof(*tasks));
    loom_jobenv_layout(job->node_cpus, n, job->cpus_per_task, ntasks, tasks);
    jobenv_set_counts(env, "SLURM_TASKS_PER_NODE", tasks, n);
    free(tasks);
    if (job->ntasks_per_node)
        jobenv_set_u32(env, "SLURM_NTASKS_PER_NODE", job->ntasks_per_node);
    if (job->cpus_per_task)
        jobenv_set_u32(env, "SLURM_CPUS_PER_TASK", job->cpus_per_task);
    if (job->mem_per_node)
        loom_jobenv_setf(env, "SLURM_MEM_PER_NODE", "%llu", (unsigned long long)job->mem_per_node);
    if (job->mem_per_cpu)
        loom_jobenv_setf(env, "SLURM_MEM_PER_CPU", "%llu", (unsigned long long)job->mem_per_cpu);
    if (job->mem_per_gpu)
        loom_jobenv_setf(env, "SLURM_MEM_PER_GPU", "%llu", (unsigned long long)job->mem_per_gpu);
}

static void jobenv_batch_owner(const loom_jobenv_job_t *job, const loom_jobenv_node_t *node,
                               loom_strv_t *env)
{
    jobenv_set_opt(env, "SLURM_SUBMIT_DIR", job->submit_dir);
    jobenv_set_opt(env, "SLURM_SUBMIT_HOST", job->submit_host);
    jobenv_set_opt(env, "SLURM_CLUSTER_NAME", node->cluster);
    jobenv_set_u32(env, "SLURM_JOB_UID", job->uid);
    jobenv_set_opt(env, "SLURM_JOB_USER", job->user);
    jobenv_set_u32(env, "SLURM_JOB_GID", job->gid);
    jobenv_set_opt(env, "SLURM_JOB_GROUP", job->group);
    if (job->start_time > 0)
        loom_jobenv_setf(env, "SLURM_JOB_START_TIME", "%lld", (long long)job->start_time);
    if (job->end_time > 0)
        loom_jobenv_setf(env, "SLURM_JOB_END_TIME", "%lld", (long long)job->end_time);
}

static void jobenv_batch_gpus(const loom_jobenv_job_t *job, const loom_jobenv_node_t *node,
                              loom_strv_t *env)
{
    jobenv_set_opt(env, "SLURM_GPUS", job->gpus);
    jobenv_set_opt(env, "SLURM_GPUS_PER_NODE", job->gpus_per_node);
    jobenv_set_opt(env, "SLURM_GPUS_PER_TASK", job->gpus_per_task);
    if (job->cpus_per_gpu)
        jobenv_set_u32(env, "SLURM_CPUS_PER_GPU", job->cpus_per_gpu);
    if (node->ngpus == 0)
        return;
    jobenv_set_list(env, "SLURM_JOB_GPUS", node->gpus, node->ngpus);
    loom_jobenv_setf(env, "SLURM_GPUS_ON_NODE", "%zu", node->ngpus);
    loom_jobenv_gpu_vars(env, node->gpus, node->ngpus, node->gpu_env);
}

void loom_jobenv_batch(const loom_jobenv_job_t *job, const loom_jobenv_node_t *node,
                       loom_strv_t *env)
{
    jobenv_batch_ids(job, env);
    jobenv_batch_sizes(job, node, env);
    jobenv_batch_owner(job, node, env);
    jobenv_batch_gpus(job, node, env);
    /* The batch script is task 0 of node 0. */
    loom_jobenv_set(env, "SLURM_NODEID", "0");
    loom_jobenv_set(env, "SLURM_PROCID", "0");
    loom_jobenv_set(env, "SLURM_LOCALID", "0");
    loom_jobenv_set(env, "SLURM_GTIDS", "0");
    if (node->task_pid > 0)
        loom_jobenv_setf(env, "SLURM_TASK_PID", "%ld", node->task_pid);
    jobenv_set_opt(env, "SLURMD_NODENAME", node->name);
    jobenv_set_opt(env, "SLURM_TOPOLOGY_ADDR", node->name);
    loom_jobenv_set(env, "SLURM_TOPOLOGY_ADDR_PATTERN", "node");
    jobenv_set_opt(env, "SLURM_CONF", node->conf);
    jobenv_set_opt(env, "SLURM_EXPORT_ENV", job->export_env);
    loom_jobenv_set(env, "ENVIRONMENT", "BATCH");
    jobenv_set_opt(env, "HOSTNAME", node->hostname);
    /* slurmd 22.05 sets these for a batch script even without aliases or
     * PropagatePrioProcess, the first with glibc's text for a NULL. */
    loom_jobenv_set(env, "SLURM_NODE_ALIASES", "(null)");
    if (!loom_jobenv_get(env, "SLURM_PRIO_PROCESS"))
        loom_jobenv_set(env, "SLURM_PRIO_PROCESS", "0");
}

/* The allocation variables also set by loom_jobenv_batch (ids, sizes). */
void loom_jobenv_alloc(const loom_jobenv_job_t *job, const char *cluster, const char *conf,
                       loom_strv_t *env)
{
    loom_jobenv_node_t node = {.index = UINT32_MAX, .cluster = cluster};
    jobenv_batch_ids(job, env);
    jobenv_batch_sizes(job, &node, env);
    jobenv_set_opt(env, "SLURM_SUBMIT_DIR", job->submit_dir);
    jobenv_set_opt(env, "SLURM_SUBMIT_HOST", job->submit_host);
    jobenv_set_opt(env, "SLURM_CLUSTER_NAME", cluster);
    jobenv_set_opt(env, "SLURM_GPUS", job->gpus);
    jobenv_set_opt(env, "SLURM_GPUS_PER_NODE", job->gpus_per_node);
    jobenv_set_opt(env, "SLURM_GPUS_PER_TASK", job->gpus_per_task);
    if (job->cpus_per_gpu)
        jobenv_set_u32(env, "SLURM_CPUS_PER_GPU", job->cpus_per_gpu);
    jobenv_set_opt(env, "SLURM_CONF", conf);
}

/* Ranks of this node's tasks: gtids, or consecutive from first_task. */
static uint32_t jobenv_rank(const loom_jobenv_step_t *step, uint32_t local)
{
    return step->gtids ? step->gtids[local] : step->first_task + local;
}

void loom_jobenv_step(const loom_jobenv_step_t *step, uint32_t local_id, long task_pid,
                      loom_strv_t *env)
{
    uint32_t here = step->node_id < step->num_nodes ? step->tasks_per_node[step->node_id] : 0;
    jobenv_set_u32(env, "SLURM_STEP_ID", step->step_id);
    jobenv_set_u32(env, "SLURM_STEPID", step->step_id);
    jobenv_set_u32(env, "SLURM_PROCID", jobenv_rank(step, local_id));
    jobenv_set_u32(env, "SLURM_LOCALID", local_id);
    jobenv_set_u32(env, "SLURM_NODEID", step->node_id);
    loom_sbuf_t gtids = LOOM_SBUF_INIT;
    for (uint32_t i = 0; i < here; i++)
        loom_sbuf_addf(&gtids, "%s%u", i ? "," : "", (unsigned)jobenv_rank(step, i));
    loom_jobenv_set(env, "SLURM_GTIDS", loom_sbuf_str(&gtids));
    loom_sbuf_free(&gtids);
    loom_jobenv_set(env, "SLURM_STEP_NODELIST", step->nodelist);
    loom_jobenv_set(env, "SLURM_NODELIST", step->nodelist);
    jobenv_set_u32(env, "SLURM_STEP_NUM_NODES", step->num_nodes);
    jobenv_set_u32(env, "SLURM_NNODES", step->num_nodes);
    jobenv_set_u32(env, "SLURM_STEP_NUM_TASKS", step->ntasks);
    jobenv_set_u32(env, "SLURM_NTASKS", step->ntasks);
    jobenv_set_u32(env, "SLURM_NPROCS", step->ntasks);
    jobenv_set_counts(env, "SLURM_STEP_TASKS_PER_NODE", step->tasks_per_node, step->num_nodes);
    jobenv_set_counts(env, "SLURM_TASKS_PER_NODE", step->tasks_per_node, step->num_nodes);
    /* Unset: 22.05's layout default, cyclic when no node gets two tasks. */
    const char *dist = step->distribution;
    if (!dist && !step->no_dist_default)
        dist = step->ntasks <= step->num_nodes ? "cyclic" : "block";
    if (dist)
        loom_jobenv_set(env, "SLURM_DISTRIBUTION", dist);
    if (step->cpus_on_node)
        jobenv_set_u32(env, "SLURM_CPUS_ON_NODE", step->cpus_on_node);
    /* srun 22.05 still sets the pre-20.02 heterogeneous-job name too. */
    const char *cpn = loom_jobenv_get(env, "SLURM_JOB_CPUS_PER_NODE");
    if (cpn) {
        char *copy = loom_xstrdup(cpn);
        loom_jobenv_set(env, "SLURM_JOB_CPUS_PER_NODE_PACK_GROUP_0", copy);
        free(copy);
    }
    if (step->cpus_per_task)
        jobenv_set_u32(env, "SLURM_CPUS_PER_TASK", step->cpus_per_task);
    if (step->ngpus) {
        jobenv_set_list(env, "SLURM_STEP_GPUS", step->gpus, step->ngpus);
        loom_jobenv_setf(env, "SLURM_GPUS_ON_NODE", "%zu", step->ngpus);
        loom_jobenv_gpu_vars(env, step->gpus, step->ngpus, step->gpu_env);
    }
    jobenv_set_opt(env, "SLURM_SRUN_COMM_HOST", step->comm_host);
    jobenv_set_opt(env, "SLURM_LAUNCH_NODE_IPADDR", step->comm_host);
    jobenv_set_u32(env, "SLURM_SRUN_COMM_PORT", (uint32_t)step->comm_port);
    jobenv_set_u32(env, "SLURM_STEP_LAUNCHER_PORT", (uint32_t)step->comm_port);
    jobenv_set_opt(env, "SLURMD_NODENAME", step->node_name);
    jobenv_set_opt(env, "SLURM_TOPOLOGY_ADDR", step->node_name);
    loom_jobenv_set(env, "SLURM_TOPOLOGY_ADDR_PATTERN", "node");
    if (task_pid > 0)
        loom_jobenv_setf(env, "SLURM_TASK_PID", "%ld", task_pid);
}

/* ------------------------------------------------------------ from a record */

/* The first of keys present in rec, then in rec.desc. */
static json_t *jobenv_field(const json_t *rec, const char *const *keys)
{
    const json_t *desc = json_object_get(rec, "desc");
    for (const json_t *o = rec; o; o = o == rec ? desc : NULL)
        for (size_t i = 0; keys[i]; i++) {
            json_t *v = json_object_get(o, keys[i]);
            if (v && !json_is_null(v))
                return v;
        }
    return NULL;
}

#define JOBENV_KEYS(...) ((const char *const[]){__VA_ARGS__, NULL})

static const char *jobenv_jstr(const json_t *rec, const char *const *keys)
{
    const char *s = json_string_value(jobenv_field(rec, keys));
    return s && *s ? s : NULL;
}

static uint64_t jobenv_jint(const json_t *rec, const char *const *keys)
{
    json_t *v = jobenv_field(rec, keys);
    if (json_is_integer(v) && json_integer_value(v) > 0)
        return (uint64_t)json_integer_value(v);
    if (json_is_string(v)) /* echo strings such as "4" */
        return strtoull(json_string_value(v), NULL, 10);
    return 0;
}

/* A JSON count or "type:count" string as given on the command line. */
static const char *jobenv_echo(const json_t *rec, const char *const *keys, char *buf, size_t size)
{
    json_t *v = jobenv_field(rec, keys);
    if (json_is_string(v) && *json_string_value(v))
        return json_string_value(v);
    if (json_is_integer(v) && json_integer_value(v) > 0) {
        snprintf(buf, size, "%lld", (long long)json_integer_value(v));
        return buf;
    }
    return NULL;
}

/* "gres/gpu:[type:]N" (jobopt's TRES form) -> "[type:]N", the option's text;
 * NULL when the string is not about GPUs. */
static const char *jobenv_gpu_tres(const char *tres, char *buf, size_t size)
{
    if (!tres || strncmp(tres, "gres/gpu:", 9) != 0)
        return tres && !strchr(tres, '/') ? tres : NULL;
    snprintf(buf, size, "%s", tres + 9);
    buf[strcspn(buf, ",")] = '\0';
    return buf;
}

/* SLURM_GPUS, SLURM_GPUS_PER_NODE/TASK and SLURM_CPUS_PER_GPU echo the
 * options: -G is tres_per_job, --gpus-per-task tres_per_task, --cpus-per-gpu
 * cpus_per_tres ("gres/gpu:4"). tres_per_node also carries --gres, which sets
 * no variable, so only an explicit gpus_per_node key gives SLURM_GPUS_PER_NODE. */
static void jobenv_gpu_echoes(const json_t *desc, loom_jobenv_job_t *job)
{
    char tmp[24];
    const char *v;
    job->gpus = jobenv_echo(desc, JOBENV_KEYS("gpus"), job->echo[0], sizeof(job->echo[0]));
    if (!job->gpus)
        job->gpus = jobenv_gpu_tres(jobenv_jstr(desc, JOBENV_KEYS("tres_per_job")), job->echo[0],
                                    sizeof(job->echo[0]));
    job->gpus_per_node =
        jobenv_echo(desc, JOBENV_KEYS("gpus_per_node"), job->echo[1], sizeof(job->echo[1]));
    job->gpus_per_task =
        jobenv_echo(desc, JOBENV_KEYS("gpus_per_task"), job->echo[2], sizeof(job->echo[2]));
    if (!job->gpus_per_task)
        job->gpus_per_task = jobenv_gpu_tres(jobenv_jstr(desc, JOBENV_KEYS("tres_per_task")),
                                             job->echo[2], sizeof(job->echo[2]));
    job->cpus_per_gpu = (uint32_t)jobenv_jint(desc, JOBENV_KEYS("cpus_per_gpu"));
    v = jobenv_gpu_tres(jobenv_jstr(desc, JOBENV_KEYS("cpus_per_tres")), tmp, sizeof(tmp));
    if (!job->cpus_per_gpu && v)
        job->cpus_per_gpu = (uint32_t)strtoul(v, NULL, 10);
}

/* SLURM_ARRAY_TASK_COUNT/MIN/MAX/STEP from the --array spec ("0-15:4%2,20").
 * The step is that of the first element written with one (0 when none is):
 * sbatch 22.05 gives "1,3,5" step 1 and "2,20-30:5" step 5. */
static void jobenv_array(const char *spec, loom_jobenv_job_t *job)
{
    uint32_t count = 0, min = UINT32_MAX, max = 0, step = 0;
    loom_strv_t parts = LOOM_STRV_INIT;
    char *copy = loom_xstrdup(spec);
    char *pct = strchr(copy, '%');
    if (pct)
        *pct = '\0';
    loom_strv_split(&parts, copy, ",");
    for (size_t i = 0; i < parts.n; i++) {
        char *end;
        unsigned long a = strtoul(parts.v[i], &end, 10), b = a, s = 1;
        if (*end == '-')
            b = strtoul(end + 1, &end, 10);
        if (*end == ':') {
            s = strtoul(end + 1, &end, 10);
            step = step ? step : (uint32_t)s;
        }
        for (unsigned long x = a; s && x <= b && count < 1000000; x += s) {
            min = (uint32_t)x < min ? (uint32_t)x : min;
            max = (uint32_t)x > max ? (uint32_t)x : max;
            count++;
        }
    }
    loom_strv_free(&parts);
    free(copy);
    job->array_task_count = count;
    job->array_task_min = count ? min : 0;
    job->array_task_max = max;
    job->array_task_step = step ? step : 1;
}

/* Per node CPU counts from the alloc list, and this node's index. */
static void jobenv_alloc(const json_t *rec, const char *node, loom_jobenv_job_t *job,
                         uint32_t *index)
{
    json_t *alloc = json_object_get(rec, "alloc"), *a;
    size_t i, n = json_array_size(alloc);
    uint32_t *cpus = loom_xcalloc(n ? n : 1, sizeof(*cpus));
    json_array_foreach(alloc, i, a)
    {
        json_t *c = json_object_get(a, "cpus");
        cpus[i] = json_is_array(c) ? (uint32_t)json_array_size(c) : (uint32_t)json_integer_value(c);
        const char *name = json_string_value(json_object_get(a, "node"));
        if (index && node && name && strcmp(name, node) == 0)
            *index = (uint32_t)i;
    }
    if (n == 0) { /* no alloc list: the record's totals on one node */
        cpus[0] = (uint32_t)json_integer_value(json_object_get(rec, "num_cpus"));
        n = 1;
    }
    job->node_cpus = cpus;
    job->num_nodes = (uint32_t)n;
}

int loom_jobenv_job_from_json(const json_t *rec, const char *node, loom_jobenv_job_t *job,
                              uint32_t *index, loom_err_t *err)
{
    if (!json_is_object(rec) || !json_is_integer(json_object_get(rec, "job_id")))
        return loom_errf(err, -LOOM_EPROTO, "a job record needs a job_id");
    memset(job, 0, sizeof(*job));
    if (index)
        *index = 0;
    job->job_id = (uint32_t)json_integer_value(json_object_get(rec, "job_id"));
    job->array_job_id = (uint32_t)jobenv_jint(rec, JOBENV_KEYS("array_job_id"));
    job->array_task_id = (uint32_t)json_integer_value(json_object_get(rec, "array_task_id"));
    const char *array = jobenv_jstr(rec, JOBENV_KEYS("array", "array_inx"));
    if (job->array_job_id)
        jobenv_array(array ? array : "", job);
    job->name = jobenv_jstr(rec, JOBENV_KEYS("name", "job_name"));
    job->partition = jobenv_jstr(rec, JOBENV_KEYS("partition"));
    job->account = jobenv_jstr(rec, JOBENV_KEYS("account"));
    job->qos = jobenv_jstr(rec, JOBENV_KEYS("qos"));
    job->reservation = jobenv_jstr(rec, JOBENV_KEYS("reservation"));
    const json_t *desc = json_object_get(rec, "desc");
    job->dependency = jobenv_jstr(desc, JOBENV_KEYS("dependency"));
    job->nodelist = jobenv_jstr(rec, JOBENV_KEYS("nodes", "node_list"));
    jobenv_alloc(rec, node, job, index);
    if (!job->nodelist)
        job->nodelist = node;
    /* Requested (desc) values decide what is set; SLURM_NTASKS also when
     * --ntasks-per-node implies a count. */
    job->ntasks = (uint32_t)jobenv_jint(desc, JOBENV_KEYS("tasks", "ntasks", "num_tasks"));
    job->ntasks_per_node =
        (uint32_t)jobenv_jint(desc, JOBENV_KEYS("tasks_per_node", "ntasks_per_node"));
    if (!job->ntasks && job->ntasks_per_node) {
        uint64_t implied = (uint64_t)job->ntasks_per_node * job->num_nodes;
        job->ntasks = implied > UINT32_MAX ? UINT32_MAX : (uint32_t)implied;
    }
    job->cpus_per_task = (uint32_t)jobenv_jint(desc, JOBENV_KEYS("cpus_per_task"));
    /* The whole node's memory (--mem=0, or nothing asked and no default) is
     * slurmctld's pn_min_memory 0: no SLURM_MEM_PER_NODE (22.05.8). */
    if (!json_is_true(json_object_get(rec, "mem_whole")))
        job->mem_per_node = jobenv_jint(rec, JOBENV_KEYS("mem_per_node"));
    job->mem_per_cpu = jobenv_jint(rec, JOBENV_KEYS("mem_per_cpu"));
    job->mem_per_gpu = jobenv_jint(desc, JOBENV_KEYS("memory_per_gpu", "mem_per_gpu"));
    jobenv_gpu_echoes(desc, job);
    job->submit_dir =
        jobenv_jstr(rec, JOBENV_KEYS("submit_dir", "work_dir", "current_working_directory"));
    job->submit_host = jobenv_jstr(rec, JOBENV_KEYS("submit_host", "alloc_node"));
    job->uid = (uint32_t)json_integer_value(json_object_get(rec, "user_id"));
    job->gid = (uint32_t)json_integer_value(json_object_get(rec, "group_id"));
    job->user = jobenv_jstr(rec, JOBENV_KEYS("user_name"));
    job->group = jobenv_jstr(rec, JOBENV_KEYS("group_name"));
    job->start_time = (int64_t)json_integer_value(json_object_get(rec, "start_time"));
    job->end_time = (int64_t)json_integer_value(json_object_get(rec, "end_time"));
    job->restart_cnt = (uint32_t)json_integer_value(json_object_get(rec, "restart_cnt"));
    job->export_env = jobenv_jstr(desc, JOBENV_KEYS("export", "export_env"));
    return 0;
}

void loom_jobenv_job_free(loom_jobenv_job_t *job)
{
    free((void *)job->node_cpus);
    job->node_cpus = NULL;
}
