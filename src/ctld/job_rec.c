/* job_rec.c - job records (JSON) for job.info, the journal and job.launch. See job_rec.h. */
#include "ctld/job_rec.h"
#include "common/gres.h"
#include "common/hostlist.h"
#include "common/jobstate.h"
#include "common/xalloc.h"
#include "ctld/job_array.h"
#include "ctld/job_desc.h"
#include "ctld/job_mgr.h"
#include "ctld/job_ops.h"
#include "ctld/job_script.h"
#include "ctld/sched_job.h"
#include "ctld/step_mgr.h"

#include <stddef.h>
#include <stdlib.h>
#include <string.h>

/* String fields, written when set and read back by the same table. */
typedef struct {
    const char *key;
    size_t off;
    bool full_only; /* only in FULL records */
} rec_str_t;

#define S(k, f, fo)                                                                                \
    {                                                                                              \
        k, offsetof(ctld_job_t, f), fo                                                             \
    }
static const rec_str_t rec_strs[] = {
    S("name", name, false),
    S("user_name", user, false),
    S("group_name", group, false),
    S("account", account, false),
    S("qos", qos, false),
    S("comment", comment, false),
    S("admin_comment", admin_comment, false),
    S("work_dir", work_dir, false),
    S("command", command, false),
    S("std_out", std_out, false),
    S("std_err", std_err, false),
    S("std_in", std_in, false),
    S("features", features, false),
    S("req_nodes", req_nodes, false),
    S("exc_nodes", exc_nodes, false),
    S("dependency", dependency, false),
    S("alloc_node", submit_host, false),
    S("submit_line", submit_line, false),
    S("mail_type", mail_type, false),
    S("mail_user", mail_user, false),
    S("nodes", nodes, false),
    S("batch_host", batch_host, false),
    S("gres", gres, true),
    S("gpus", gpus, true),
};
#undef S

/* Integer fields; kind: 'u' uint32_t, 'i' int64_t, 'd' int, 'n' int32_t. */
typedef struct {
    const char *key;
    size_t off;
    char kind;
    bool full_only;
    bool zero_absent; /* left out of job.info records when 0 (the readers' default) */
} rec_int_t;

#define I(k, f, kd, fo)                                                                            \
    {                                                                                              \
        k, offsetof(ctld_job_t, f), kd, fo, false                                                  \
    }
#define IZ(k, f, kd, fo)                                                                           \
    {                                                                                              \
        k, offsetof(ctld_job_t, f), kd, fo, true                                                   \
    }
static const rec_int_t rec_ints[] = {
    I("user_id", uid, 'u', false),
    I("group_id", gid, 'u', false),
    I("priority", priority, 'u', false),
    IZ("nice", nice, 'n', false),
    IZ("site_factor", site_factor, 'n', false),
    I("submit_time", submit_time, 'i', false),
    I("start_time", start_time, 'i', false),
    I("end_time", end_time, 'i', false),
    IZ("suspend_time", suspend_time, 'i', false),
    IZ("pre_sus_time", pre_sus_time, 'i', false),
    IZ("tot_sus_time", tot_sus_time, 'i', false),
    I("time_limit", time_limit, 'i', false),
    IZ("time_min", time_min, 'i', false),
    IZ("deadline", deadline, 'i', false),
    IZ("tmp_disk", tmp_disk, 'i', false),
    I("num_tasks", ntasks, 'u', false),
    I("cpus_per_task", cpus_per_task, 'u', false),
    IZ("ntasks_per_node", ntasks_per_node, 'u', false),
    I("exit_code", exit_code, 'd', false),
    IZ("derived_exit_code", derived_exit_code, 'd', false),
    IZ("restart_cnt", restart_cnt, 'u', false),
    IZ("alloc_sid", alloc_sid, 'u', false),
    I("min_nodes", min_nodes, 'u', true),
    IZ("max_nodes", max_nodes, 'u', false),
    I("min_cpus", min_cpus, 'u', false),
    I("begin_time", begin_time, 'i', true),
    I("prio_base", prio_base, 'u', true),
    I("eligible_time", eligible_time, 'i', true),
    I("state_word", state, 'u', true),
};
#undef I
#undef IZ

static int64_t rec_int_get(const ctld_job_t *job, const rec_int_t *f)
{
    const char *p = (const char *)job + f->off;
    switch (f->kind) {
    case 'u':
        return *(const uint32_t *)p;
    case 'i':
        return *(const int64_t *)p;
    case 'n':
        return *(const int32_t *)p;
    default:
        return *(const int *)p;
    }
}

static void rec_int_set(ctld_job_t *job, const rec_int_t *f, int64_t v)
{
    char *p = (char *)job + f->off;
    switch (f->kind) {
    case 'u':
        *(uint32_t *)p = (uint32_t)v;
        break;
    case 'i':
        *(int64_t *)p = v;
        break;
    case 'n':
        *(int32_t *)p = (int32_t)v;
        break;
    default:
        *(int *)p = (int)v;
    }
}

/* ---- allocations ---------------------------------------------------------- */

static json_t *rec_alloc_gres(const loom_sched_node_t *sn, const loom_sched_node_alloc_t *na)
{
    json_t *arr = json_array();
    for (size_t g = 0; g < na->ngres; g++) {
        const loom_sched_gres_t *gr = &sn->gres[na->gres[g].gres];
        json_t *e = json_pack("{s:s}", "name", gr->name);
        if (gr->type)
            json_object_set_new(e, "type", json_string(gr->type));
        if (gr->index >= 0)
            json_object_set_new(e, "index", json_pack("[i]", gr->index));
        else
            json_object_set_new(e, "count", json_integer((json_int_t)na->gres[g].count));
        json_array_append_new(arr, e);
    }
    return arr;
}

json_t *ctld_alloc_to_json(const ctld_t *c, const loom_sched_alloc_t *a)
{
    json_t *arr = json_array();
    for (size_t i = 0; i < a->nnodes; i++) {
        const loom_sched_node_alloc_t *na = &a->nodes[i];
        const loom_sched_node_t *sn = &c->snodes[na->node];
        json_t *cpus = json_array();
        for (uint32_t k = 0; k < na->ncpus; k++)
            json_array_append_new(cpus, json_integer(na->cpu_ids[k]));
        json_array_append_new(arr, json_pack("{s:s, s:o, s:I, s:i, s:o}", "node", sn->name, "cpus",
                                             cpus, "mem", (json_int_t)na->mem, "tasks",
                                             (int)na->ntasks, "gres", rec_alloc_gres(sn, na)));
    }
    return arr;
}

static long rec_find_gres(const loom_sched_node_t *sn, const char *name, const char *type,
                          json_int_t index)
{
    for (size_t g = 0; g < sn->ngres; g++) {
        const loom_sched_gres_t *gr = &sn->gres[g];
        if (strcmp(gr->name, name) != 0 || gr->index != index)
            continue;
        if (!type || (gr->type && strcmp(gr->type, type) == 0))
            return (long)g;
    }
    return -1;
}

static void rec_use(loom_sched_node_alloc_t *na, uint32_t g, uint64_t count)
{
    na->gres = loom_xreallocarray(na->gres, na->ngres + 1, sizeof(*na->gres));
    na->gres[na->ngres++] = (loom_sched_gres_use_t){.gres = g, .count = count};
}

static int rec_node_gres_from_json(const loom_sched_node_t *sn, const json_t *arr,
                                   loom_sched_node_alloc_t *na)
{
    size_t i, k;
    json_t *e, *ix;
    json_array_foreach(arr, i, e)
    {
        const char *name = json_string_value(json_object_get(e, "name"));
        const char *type = json_string_value(json_object_get(e, "type"));
        if (!name)
            return -LOOM_EPROTO;
        json_t *idx = json_object_get(e, "index");
        if (!idx) {
            long g = rec_find_gres(sn, name, type, -1);
            if (g < 0)
                return -LOOM_EINVAL_GRES;
            rec_use(na, (uint32_t)g, (uint64_t)json_integer_value(json_object_get(e, "count")));
            continue;
        }
        json_array_foreach(idx, k, ix)
        {
            long g = rec_find_gres(sn, name, type, json_integer_value(ix));
            if (g < 0)
                return -LOOM_EINVAL_GRES;
            rec_use(na, (uint32_t)g, 1);
        }
    }
    return 0;
}

static int rec_node_from_json(const ctld_t *c, const json_t *e, loom_sched_node_alloc_t *na)
{
    long idx = loom_conf_node_index(c->conf, json_string_value(json_object_get(e, "node")));
    if (idx < 0)
        return -LOOM_EINVAL_NODENAME;
    na->node = (uint32_t)idx;
    json_t *cpus = json_object_get(e, "cpus"), *v;
    size_t k;
    na->ncpus = (uint32_t)json_array_size(cpus);
    na->cpu_ids = loom_xcalloc(na->ncpus + 1, sizeof(uint32_t));
    json_array_foreach(cpus, k, v)
    {
        na->cpu_ids[k] = (uint32_t)json_integer_value(v);
    }
    na->mem = (uint64_t)json_integer_value(json_object_get(e, "mem"));
    na->ntasks = (uint32_t)json_integer_value(json_object_get(e, "tasks"));
    return rec_node_gres_from_json(&c->snodes[idx], json_object_get(e, "gres"), na);
}

int ctld_alloc_from_json(const ctld_t *c, const json_t *arr, bool exclusive,
                         loom_sched_alloc_t *out, loom_err_t *err)
{
    loom_sched_alloc_t a = {0};
    size_t n = json_array_size(arr), i;
    json_t *e;
    a.nodes = loom_xcalloc(n + 1, sizeof(*a.nodes));
    a.nnodes = n;
    a.exclusive = exclusive;
    json_array_foreach(arr, i, e)
    {
        int rc = rec_node_from_json(c, e, &a.nodes[i]);
        if (rc < 0) {
            loom_sched_alloc_fini(&a);
            return loom_errf(err, rc, "allocation on node '%s' does not match the configuration",
                             json_string_value(json_object_get(e, "node")));
        }
        a.ncpus += a.nodes[i].ncpus;
        a.ntasks += a.nodes[i].ntasks;
    }
    *out = a;
    return 0;
}

char *ctld_alloc_nodelist(const ctld_t *c, const loom_sched_alloc_t *a)
{
    loom_hostlist_t *hl = loom_hostlist_create();
    for (size_t i = 0; i < a->nnodes; i++)
        loom_hostlist_push(hl, c->snodes[a->nodes[i].node].name);
    char *s = loom_hostlist_compress_sorted(hl);
    loom_hostlist_destroy(hl);
    return s;
}

/* ---- TRES strings ---------------------------------------------------------- */

/* The smallest RealMemory among the nodes the job may use (its "whole node"). */
static uint64_t rec_min_node_mem(const ctld_t *c, const ctld_job_t *job)
{
    uint64_t m = 0;
    for (size_t i = 0; i < c->nnodes; i++)
        if (job->allowed && job->allowed[i] && (!m || c->snodes[i].mem_total < m))
            m = c->snodes[i].mem_total;
    return m;
}

static uint64_t rec_req_mem(const ctld_t *c, const ctld_job_t *job)
{
    if (job->mem_per_node)
        return job->mem_per_node * job->min_nodes;
    if (job->mem_per_cpu)
        return job->mem_per_cpu * job->min_cpus;
    return rec_min_node_mem(c, job) * job->min_nodes;
}

static void rec_tres(const ctld_t *c, const ctld_job_t *job, json_t *rec)
{
    loom_tres_list_t t = LOOM_TRES_LIST_INIT;
    loom_sbuf_t sb = LOOM_SBUF_INIT;
    loom_tres_add(&t, "cpu", NULL, job->min_cpus);
    loom_tres_add(&t, "mem", NULL, rec_req_mem(c, job));
    loom_tres_add(&t, "node", NULL, job->min_nodes);
    loom_tres_add(&t, "billing", NULL, job->min_cpus);
    loom_tres_add_gres(&t, &job->gres_list);
    loom_tres_fmt(&t, &sb);
    json_object_set_new(rec, "tres_req", json_string(loom_sbuf_str(&sb)));
    loom_tres_list_free(&t);
    if (job->alloc.nnodes) {
        loom_sbuf_reset(&sb);
        uint64_t mem = 0;
        for (size_t i = 0; i < job->alloc.nnodes; i++)
            mem += job->alloc.nodes[i].mem;
        loom_tres_add(&t, "cpu", NULL, job->alloc.ncpus);
        if (mem)
            loom_tres_add(&t, "mem", NULL, mem);
        loom_tres_add(&t, "node", NULL, job->alloc.nnodes);
        loom_tres_add(&t, "billing", NULL, job->alloc.ncpus);
        loom_tres_add_gres(&t, &job->gres_list);
        loom_tres_fmt(&t, &sb);
        json_object_set_new(rec, "tres_alloc", json_string(loom_sbuf_str(&sb)));
        loom_tres_list_free(&t);
    }
    if (job->gres_list.n) {
        loom_sbuf_reset(&sb);
        loom_gres_fmt_tres_per(&job->gres_list, &sb);
        json_object_set_new(rec, "tres_per_node", json_string(loom_sbuf_str(&sb)));
    }
    if (job->gpus_list.n) {
        loom_sbuf_reset(&sb);
        loom_gres_fmt_tres_per(&job->gpus_list, &sb);
        json_object_set_new(rec, "tres_per_job", json_string(loom_sbuf_str(&sb)));
    }
    loom_sbuf_free(&sb);
}

/* ---- the record ------------------------------------------------------------ */

static json_t *rec_state_list(uint32_t state)
{
    loom_strv_t names = LOOM_STRV_INIT;
    loom_job_state_list(state, &names);
    json_t *arr = json_array();
    for (size_t i = 0; i < names.n; i++)
        json_array_append_new(arr, json_string(names.v[i]));
    loom_strv_free(&names);
    return arr;
}

static json_t *rec_steps(const ctld_job_t *job)
{
    json_t *arr = json_array();
    for (size_t i = 0; i < job->nsteps; i++) {
        json_array_append_new(arr, ctld_step_brief(job, job->steps[i]));
    }
    return arr;
}

/* When the job could first start (0 while held or waiting on a dependency). */
static int64_t rec_eligible(const ctld_job_t *job)
{
    bool pending = loom_job_base(job->state) == LOOM_JOB_PENDING;
    int64_t eligible = job->eligible_time ? job->eligible_time : job->submit_time;
    if (pending && (job->hold || strcmp(job->reason, "Dependency") == 0))
        eligible = 0;
    if (pending && job->begin_time > eligible)
        eligible = job->begin_time;
    return eligible;
}

/* Start and end times as squeue and scontrol expect them for the job's state. */
static void rec_times(const ctld_job_t *job, json_t *rec)
{
    bool pending = loom_job_base(job->state) == LOOM_JOB_PENDING;
    if (pending && job->begin_time)
        json_object_set_new(rec, "start_time", json_integer(job->begin_time));
    /* A running job ends at its limit (a restored record's end_time is the
     * projection it was written with, before any suspension). */
    if (!pending && (job->end_time == 0 || ctld_job_runs(job)) && job->start_time &&
        job->time_limit >= 0)
        json_object_set_new(rec, "end_time", json_integer(ctld_job_limit_end(job)));
}

static void rec_memory(const ctld_t *c, const ctld_job_t *job, json_t *rec)
{
    if (job->mem_whole) /* --mem=0 or no default: squeue %m and scontrol say 0 */
        json_object_set_new(rec, "mem_whole", json_true());
    if (job->mem_per_cpu)
        json_object_set_new(rec, "mem_per_cpu", json_integer((json_int_t)job->mem_per_cpu));
    else
        json_object_set_new(
            rec, "mem_per_node",
            json_integer(
                (json_int_t)(job->mem_per_node ? job->mem_per_node : rec_min_node_mem(c, job))));
}

static void rec_fields(const ctld_job_t *job, json_t *rec, bool full)
{
    for (size_t i = 0; i < sizeof(rec_strs) / sizeof(rec_strs[0]); i++) {
        const char *s = *(char *const *)((const char *)job + rec_strs[i].off);
        if (s && (full || !rec_strs[i].full_only))
            json_object_set_new(rec, rec_strs[i].key, json_string(s));
    }
    for (size_t i = 0; i < sizeof(rec_ints) / sizeof(rec_ints[0]); i++) {
        const rec_int_t *f = &rec_ints[i];
        int64_t v = rec_int_get(job, f);
        if ((full || !f->full_only) && (full || v || !f->zero_absent))
            json_object_set_new(rec, f->key, json_integer((json_int_t)v));
    }
}

/* A meta record left with one index that never ran (ctld.h, array_folded):
 * Slurm 22.05 still shows it as the array ("12_[3]", "12_[3%1]"). */
static bool rec_array_folded(const ctld_job_t *job)
{
    return job->array_folded && job->array_task_id != CTLD_NO_TASK &&
           loom_job_base(job->state) == LOOM_JOB_PENDING && job->restart_cnt == 0;
}

/* messages.md §1: array_job_id, then array_task_id (one task) or
 * array_task_str (the meta record's pending tasks, "5-9%2"), array_max_tasks.
 * A folded meta record (rec_array_folded) has both: its one index as
 * array_task_id and, with the throttle, as array_task_str. */
static void rec_array(const ctld_job_t *job, json_t *rec)
{
    if (!job->array_job_id)
        return;
    json_object_set_new(rec, "array_job_id", json_integer(job->array_job_id));
    if (job->array_task_id != CTLD_NO_TASK)
        json_object_set_new(rec, "array_task_id", json_integer(job->array_task_id));
    if (job->array_pending) {
        loom_sbuf_t sb = LOOM_SBUF_INIT;
        ctld_array_pending_text(job, true, &sb);
        json_object_set_new(rec, "array_task_str", json_string(loom_sbuf_str(&sb)));
        loom_sbuf_free(&sb);
    } else if (rec_array_folded(job)) {
        loom_sbuf_t sb = LOOM_SBUF_INIT;
        loom_sbuf_addf(&sb, "%u", job->array_task_id);
        if (job->array_throttle)
            loom_sbuf_addf(&sb, "%%%u", job->array_throttle);
        json_object_set_new(rec, "array_task_str", json_string(loom_sbuf_str(&sb)));
        loom_sbuf_free(&sb);
    }
    if (job->array_throttle)
        json_object_set_new(rec, "array_max_tasks", json_integer(job->array_throttle));
}

/* The layout options the job was submitted with (-B, --ntasks-per-socket,
 * --ntasks-per-core), for scontrol's ReqB:S:C:T and squeue's S:C:T. */
static void rec_layout(const ctld_job_t *job, json_t *rec)
{
    static const char *const keys[][2] = {
        {"sockets_per_node", "sockets_per_node"}, {"cores_per_socket", "cores_per_socket"},
        {"threads_per_core", "threads_per_core"}, {"tasks_per_socket", "ntasks_per_socket"},
        {"tasks_per_core", "ntasks_per_core"},
    };
    for (size_t i = 0; job->desc && i < sizeof(keys) / sizeof(keys[0]); i++) {
        json_t *v = json_object_get(job->desc, keys[i][0]);
        if (json_is_integer(v) && json_integer_value(v) > 0)
            json_object_set(rec, keys[i][1], v);
    }
}

/* A pending job's node count as slurmctld 22.05 estimates it when only
 * tasks were asked for: its CPUs over the partition's largest node, at most
 * one node a task ("-n 3" on 2-CPU nodes: 2). */
static uint32_t rec_nodes_estimate(const ctld_t *c, const ctld_job_t *job)
{
    if (job->max_nodes || job->min_nodes != 1 || !job->ntasks_set || job->ntasks < 2)
        return job->min_nodes;
    const loom_conf_part_t *p = job->part->cfg;
    uint32_t most = 0;
    for (size_t k = 0; k < p->n_nodes; k++)
        if (c->snodes[p->node_idx[k]].cpus > most)
            most = c->snodes[p->node_idx[k]].cpus;
    if (!most)
        return job->min_nodes;
    uint32_t need = (uint32_t)(((uint64_t)job->min_cpus + most - 1) / most);
    return need > job->ntasks ? job->ntasks : need > 1 ? need : 1;
}

/* Everything but job_id, state, reason and eligible_time, which change
 * often and are written around the cached text (ctld_job_rec_write). */
static json_t *rec_base(const ctld_t *c, const ctld_job_t *job, bool full)
{
    json_t *rec = json_object();
    rec_fields(job, rec, full);
    json_object_set_new(rec, "partition", json_string(job->part->cfg->name));
    if (job->hold)
        json_object_set_new(rec, "hold", json_string(job->hold == 'a' ? "admin" : "user"));
    json_object_set_new(rec, "num_nodes",
                        json_integer(job->alloc.nnodes ? (json_int_t)job->alloc.nnodes
                                                       : (json_int_t)rec_nodes_estimate(c, job)));
    json_object_set_new(rec, "num_cpus",
                        json_integer(job->alloc.nnodes ? job->alloc.ncpus : job->min_cpus));
    json_object_set_new(rec, "requeue", json_boolean(job->requeue));
    if (job->contiguous) /* scontrol's Contiguous=1 */
        json_object_set_new(rec, "contiguous", json_true());
    if (job->reboot)
        json_object_set_new(rec, "reboot", json_true());
    if (job->oversub) /* absent: OverSubscribe=OK */
        json_object_set_new(rec, "oversubscribe", json_boolean(job->oversub == 'y'));
    if (job->cancelled_by_set)
        json_object_set_new(rec, "cancelled_by", json_integer(job->cancelled_by));
    if (job->exclusive || full)
        json_object_set_new(rec, "exclusive", json_boolean(job->exclusive));
    /* salloc's and srun's allocations have no script, hence no batch step. */
    json_object_set_new(rec, "batch_flag", json_integer(job->batch));
    if (ctld_step_extern(c, job))
        json_object_set_new(rec, "extern_step", json_true());
    rec_array(job, rec);
    rec_layout(job, rec);
    rec_memory(c, job, rec);
    rec_times(job, rec);
    rec_tres(c, job, rec);
    if (job->alloc.nnodes)
        json_object_set_new(rec, "alloc", ctld_alloc_to_json(c, &job->alloc));
    ctld_sched_rec_extra(c, job, rec, full); /* partitions, planned start (sched_job.h) */
    return rec;
}

json_t *ctld_job_record(const ctld_t *c, const ctld_job_t *job, unsigned flags)
{
    bool full = flags & CTLD_REC_FULL;
    json_t *rec = rec_base(c, job, full);
    json_object_set_new(rec, "job_id", json_integer(job->id));
    json_object_set_new(rec, "state", rec_state_list(job->state));
    json_object_set_new(rec, "reason", json_string(job->reason));
    json_object_set_new(rec, "eligible_time", json_integer(rec_eligible(job)));
    if (flags & CTLD_REC_STEPS)
        json_object_set_new(rec, "steps", rec_steps(job));
    if (full) {
        json_object_set_new(rec, "eligible_time", json_integer(job->eligible_time));
        json_object_set_new(rec, "mem_whole", json_boolean(job->mem_whole));
        json_object_set_new(rec, "ntasks_set", json_boolean(job->ntasks_set));
        json_object_set_new(rec, "contiguous", json_boolean(job->contiguous));
        json_object_set_new(rec, "mem_per_node_req", json_integer((json_int_t)job->mem_per_node));
        json_object_set_new(rec, "desc", job->desc ? json_incref(job->desc) : json_object());
        /* Only a job being submitted has them (job_script.h): job.submit. */
        if (job->script)
            json_object_set_new(rec, "script", json_string(job->script));
        if (job->env)
            json_object_set_new(rec, "env", json_incref(job->env));
    }
    return rec;
}

/* The state list as JSON text, kept with the job until its state changes. */
static const char *rec_state_text(ctld_job_t *job)
{
    if (job->state_text[0] && job->state_text_word == job->state)
        return job->state_text;
    loom_strv_t names = LOOM_STRV_INIT;
    loom_job_state_list(job->state, &names);
    size_t off = 0;
    off += (size_t)snprintf(job->state_text, sizeof(job->state_text), "[");
    for (size_t i = 0; i < names.n && off < sizeof(job->state_text); i++)
        off += (size_t)snprintf(job->state_text + off, sizeof(job->state_text) - off, "%s\"%s\"",
                                i ? "," : "", names.v[i]);
    if (off < sizeof(job->state_text))
        snprintf(job->state_text + off, sizeof(job->state_text) - off, "]");
    loom_strv_free(&names);
    job->state_text_word = job->state;
    return job->state_text;
}

void ctld_job_rec_cache(const ctld_t *c, ctld_job_t *job)
{
    if (job->rec_text)
        return;
    json_t *rec = rec_base(c, job, false);
    job->rec_text = json_dumps(rec, JSON_COMPACT);
    job->rec_len = job->rec_text ? strlen(job->rec_text) : 0;
    json_decref(rec);
}

bool ctld_job_rec_head(ctld_job_t *job, unsigned which, loom_sbuf_t *out)
{
    const char *sep = "";
    if (which & CTLD_HEAD_JOB_ID) {
        loom_sbuf_addf(out, "\"job_id\":%u", job->id);
        sep = ",";
    }
    if (which & CTLD_HEAD_STATE) {
        loom_sbuf_addf(out, "%s\"state\":%s", sep, rec_state_text(job));
        sep = ",";
    }
    /* Reasons are Slurm's fixed names (no quotes or backslashes to escape). */
    if (which & CTLD_HEAD_REASON) {
        loom_sbuf_addf(out, "%s\"reason\":\"%s\"", sep, job->reason);
        sep = ",";
    }
    if (which & CTLD_HEAD_ELIGIBLE)
        loom_sbuf_addf(out, "%s\"eligible_time\":%lld", sep, (long long)rec_eligible(job));
    return which != 0;
}

void ctld_job_rec_write(const ctld_t *c, ctld_job_t *job, loom_sbuf_t *out)
{
    ctld_job_rec_cache(c, job);
    loom_sbuf_addc(out, '{');
    ctld_job_rec_head(job, CTLD_HEAD_ALL, out);
    if (job->rec_len > 2) {
        loom_sbuf_addc(out, ',');
        loom_sbuf_addn(out, job->rec_text + 1, job->rec_len - 1);
    } else {
        loom_sbuf_addc(out, '}');
    }
}

/* ---- reading a FULL record back ------------------------------------------ */

static void rec_read_fields(const json_t *rec, ctld_job_t *job)
{
    for (size_t i = 0; i < sizeof(rec_strs) / sizeof(rec_strs[0]); i++) {
        const char *s = json_string_value(json_object_get(rec, rec_strs[i].key));
        char **dst = (char **)((char *)job + rec_strs[i].off);
        free(*dst);
        *dst = s ? loom_xstrdup(s) : NULL;
    }
    for (size_t i = 0; i < sizeof(rec_ints) / sizeof(rec_ints[0]); i++) {
        json_t *v = json_object_get(rec, rec_ints[i].key);
        if (json_is_integer(v))
            rec_int_set(job, &rec_ints[i], json_integer_value(v));
    }
}

static void rec_set_oversub(ctld_job_t *job, const json_t *v)
{
    job->oversub = json_is_boolean(v) ? (json_is_true(v) ? 'y' : 'n') : 0;
}

/* Records journaled before deadline and oversubscribe were job fields
 * kept them in the description only. */
static void rec_read_older(const json_t *rec, ctld_job_t *job)
{
    json_t *d = job->desc;
    json_int_t deadline = json_integer_value(json_object_get(d, "deadline"));
    if (!json_object_get(rec, "deadline") && deadline > 0)
        job->deadline = deadline;
    if (!json_object_get(rec, "oversubscribe") && json_is_true(json_object_get(d, "oversubscribe")))
        job->oversub = 'y';
}

static void rec_read_flags(const json_t *rec, ctld_job_t *job)
{
    const char *hold = json_string_value(json_object_get(rec, "hold"));
    job->hold = hold ? (strcmp(hold, "admin") == 0 ? 'a' : 'u') : 0;
    job->requeue = json_is_true(json_object_get(rec, "requeue"));
    job->exclusive = json_is_true(json_object_get(rec, "exclusive"));
    job->mem_whole = json_is_true(json_object_get(rec, "mem_whole"));
    job->ntasks_set = json_is_true(json_object_get(rec, "ntasks_set"));
    job->contiguous = json_is_true(json_object_get(rec, "contiguous"));
    job->reboot = json_is_true(json_object_get(rec, "reboot"));
    rec_set_oversub(job, json_object_get(rec, "oversubscribe"));
    json_t *by = json_object_get(rec, "cancelled_by");
    job->cancelled_by_set = json_is_integer(by);
    job->cancelled_by = (uint32_t)json_integer_value(by);
    job->mem_per_node = (uint64_t)json_integer_value(json_object_get(rec, "mem_per_node_req"));
    job->mem_per_cpu = (uint64_t)json_integer_value(json_object_get(rec, "mem_per_cpu"));
    /* The file keeps the whole description (job_script.h). */
    job->desc = ctld_job_script_desc(json_object_get(rec, "desc"));
    rec_read_older(rec, job);
    job->batch = json_integer_value(json_object_get(rec, "batch_flag")) != 0;
}

static int rec_read_array(ctld_t *c, const json_t *rec, ctld_job_t *job, loom_err_t *err)
{
    job->array_job_id = (uint32_t)json_integer_value(json_object_get(rec, "array_job_id"));
    if (!job->array_job_id)
        return 0;
    json_t *task = json_object_get(rec, "array_task_id");
    if (json_is_integer(task))
        job->array_task_id = (uint32_t)json_integer_value(task);
    job->array_throttle = (uint32_t)json_integer_value(json_object_get(rec, "array_max_tasks"));
    const char *rest = json_string_value(json_object_get(rec, "array_task_str"));
    if (rest && *rest)
        return ctld_array_set_pending(c, job, rest, err);
    return 0;
}

static ctld_part_t *rec_part(ctld_t *c, const char *name)
{
    for (size_t i = 0; name && i < c->nparts; i++)
        if (strcmp(c->parts[i].cfg->name, name) == 0)
            return &c->parts[i];
    return c->default_part ? c->default_part : (c->nparts ? &c->parts[0] : NULL);
}

int ctld_job_from_record(ctld_t *c, const json_t *rec, ctld_job_t **out, loom_err_t *err)
{
    json_int_t id = json_integer_value(json_object_get(rec, "job_id"));
    if (id <= 0 || id > UINT32_MAX || !json_is_integer(json_object_get(rec, "state_word")))
        return loom_errf(err, -LOOM_EPROTO, "a job record needs job_id and state_word");
    ctld_job_t *job = ctld_job_new();
    job->id = (uint32_t)id;
    rec_read_fields(rec, job);
    rec_read_flags(rec, job);
    job->reason = ctld_reason_intern(json_string_value(json_object_get(rec, "reason")));
    job->part = rec_part(c, json_string_value(json_object_get(rec, "partition")));
    int rc = job->part ? rec_read_array(c, rec, job, err)
                       : loom_errf(err, -LOOM_EINVAL_PARTITION, "no partition");
    if (rc == 0)
        rc = ctld_job_build_req(c, job, err);
    json_t *alloc = json_object_get(rec, "alloc");
    if (rc == 0 && json_array_size(alloc))
        rc = ctld_alloc_from_json(c, alloc, job->exclusive, &job->alloc, err);
    if (rc < 0) {
        ctld_job_free(job);
        return rc;
    }
    *out = job;
    return 0;
}

/* ---- changes (job.update events) ----------------------------------------- */

static bool rec_set_str(ctld_job_t *job, const char *key, const json_t *v)
{
    for (size_t i = 0; i < sizeof(rec_strs) / sizeof(rec_strs[0]); i++) {
        if (strcmp(rec_strs[i].key, key) != 0)
            continue;
        char **dst = (char **)((char *)job + rec_strs[i].off);
        free(*dst);
        *dst = json_string_value(v) && *json_string_value(v) ? loom_xstrdup(json_string_value(v))
                                                             : NULL;
        return true;
    }
    return false;
}

static bool rec_set_int(ctld_job_t *job, const char *key, const json_t *v)
{
    for (size_t i = 0; i < sizeof(rec_ints) / sizeof(rec_ints[0]); i++) {
        if (strcmp(rec_ints[i].key, key) == 0 && json_is_integer(v)) {
            rec_int_set(job, &rec_ints[i], json_integer_value(v));
            return true;
        }
    }
    return false;
}

static bool rec_set_special(ctld_t *c, ctld_job_t *job, const char *key, const json_t *v)
{
    if (strcmp(key, "partition") == 0) {
        ctld_part_t *p = rec_part(c, json_string_value(v));
        if (p)
            job->part = p;
    } else if (strcmp(key, "hold") == 0) {
        const char *h = json_string_value(v);
        job->hold = h ? (strcmp(h, "admin") == 0 ? 'a' : 'u') : 0;
    } else if (strcmp(key, "reason") == 0) {
        job->reason = ctld_reason_intern(json_string_value(v));
    } else if (strcmp(key, "requeue") == 0) {
        job->requeue = json_is_true(v);
    } else if (strcmp(key, "contiguous") == 0) {
        job->contiguous = json_is_true(v);
    } else if (strcmp(key, "reboot") == 0) {
        job->reboot = json_is_true(v);
    } else if (strcmp(key, "oversubscribe") == 0) {
        rec_set_oversub(job, v);
    } else if (strcmp(key, "mem_whole") == 0) {
        job->mem_whole = json_is_true(v);
    } else if (strcmp(key, "mem_per_node_req") == 0) {
        job->mem_per_node = (uint64_t)json_integer_value(v);
    } else if (strcmp(key, "mem_per_cpu") == 0) {
        job->mem_per_cpu = (uint64_t)json_integer_value(v);
    } else if (strcmp(key, "array_max_tasks") == 0) {
        ctld_array_set_throttle(job, (uint32_t)json_integer_value(v));
    } else {
        return false;
    }
    return true;
}

int ctld_job_apply_changes(ctld_t *c, ctld_job_t *job, const json_t *set, loom_err_t *err)
{
    const char *key;
    json_t *v;
    json_object_foreach((json_t *)set, key, v)
    {
        if (strcmp(key, "array_task_str") == 0) {
            int rc = ctld_array_set_pending(c, job, json_string_value(v), err);
            if (rc < 0)
                return rc;
        } else if (!rec_set_special(c, job, key, v) && !rec_set_str(job, key, v) &&
                   !rec_set_int(job, key, v)) {
            return loom_errf(err, -LOOM_EPROTO, "unknown job field '%s'", key);
        }
    }
    ctld_job_touch(job);
    return ctld_job_build_req(c, job, err);
}

/* ---- copies (array tasks) ------------------------------------------------------- */

int ctld_job_clone(ctld_t *c, const ctld_job_t *src, ctld_job_t **out, loom_err_t *err)
{
    ctld_job_t *job = ctld_job_new();
    for (size_t i = 0; i < sizeof(rec_strs) / sizeof(rec_strs[0]); i++) {
        const char *s = *(char *const *)((const char *)src + rec_strs[i].off);
        *(char **)((char *)job + rec_strs[i].off) = s ? loom_xstrdup(s) : NULL;
    }
    for (size_t i = 0; i < sizeof(rec_ints) / sizeof(rec_ints[0]); i++)
        rec_int_set(job, &rec_ints[i], rec_int_get(src, &rec_ints[i]));
    job->hold = src->hold;
    job->requeue = src->requeue;
    job->exclusive = src->exclusive;
    job->mem_whole = src->mem_whole;
    job->ntasks_set = src->ntasks_set;
    job->contiguous = src->contiguous;
    job->reboot = src->reboot;
    job->oversub = src->oversub;
    job->mem_per_node = src->mem_per_node;
    job->mem_per_cpu = src->mem_per_cpu;
    /* The description never changes after submission: share it. The script
     * and environment are the array's file (job_script.h). */
    job->desc = json_incref(src->desc);
    job->batch = src->batch;
    job->reason = src->reason;
    job->part = src->part;
    job->array_job_id = src->array_job_id;
    job->array_throttle = src->array_throttle;
    int rc = ctld_job_build_req(c, job, err);
    if (rc < 0) {
        ctld_job_free(job);
        return rc;
    }
    *out = job;
    return 0;
}
