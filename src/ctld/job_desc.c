/* job_desc.c - a job from its description: defaults, validation, request. See job_desc.h. */
#include "ctld/job_desc.h"
#include "common/constraint.h"
#include "common/hostlist.h"
#include "common/jobstate.h"
#include "common/log.h"
#include "common/memsize.h"
#include "common/proto.h"
#include "common/timefmt.h"
#include "common/xalloc.h"
#include "ctld/node_attr.h"
#include "ctld/assoc_policy.h"
#include "ctld/job_array.h"
#include "ctld/job_depend.h"
#include "ctld/job_mgr.h"
#include "ctld/sched_job.h"

#include <errno.h>
#include <grp.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define DESC_NAME_BUF 4096

/* ---- reading the description ------------------------------------------- */

/* The first present of the '|'-separated spellings: jobopt's keys
 * (messages.md §2) first, then short aliases. */
static const json_t *desc_get(const json_t *d, const char *keys)
{
    char key[64];
    for (const char *k = keys; *k;) {
        size_t n = strcspn(k, "|");
        snprintf(key, sizeof(key), "%.*s", (int)n, k);
        const json_t *v = json_object_get(d, key);
        if (v && !json_is_null(v))
            return v;
        k += n + (k[n] == '|');
    }
    return NULL;
}

static const char *desc_str(const json_t *d, const char *keys)
{
    const char *s = json_string_value(desc_get(d, keys));
    return s && *s ? s : NULL;
}

static char *desc_dup(const json_t *d, const char *keys)
{
    const char *s = desc_str(d, keys);
    return s ? loom_xstrdup(s) : NULL;
}

/* A count: integer or decimal text. 0 when absent; -1 when malformed. */
static int64_t desc_int(const json_t *d, const char *keys)
{
    const json_t *v = desc_get(d, keys);
    if (!v)
        return 0;
    if (json_is_integer(v))
        return json_integer_value(v);
    if (json_is_string(v)) {
        char *end;
        long long x = strtoll(json_string_value(v), &end, 10);
        return *json_string_value(v) && !*end ? x : -1;
    }
    return -1;
}

static bool desc_bool(const json_t *d, const char *keys, bool dflt)
{
    const json_t *v = desc_get(d, keys);
    if (json_is_boolean(v))
        return json_is_true(v);
    if (json_is_integer(v))
        return json_integer_value(v) != 0;
    if (json_is_string(v))
        return strcasecmp(json_string_value(v), "no") != 0 && strcmp(json_string_value(v), "0");
    return dflt;
}

/* Memory: integer MiB or a size text. *set false when absent. */
static int desc_mem(const json_t *d, const char *keys, uint64_t *mib, bool *set, loom_err_t *err)
{
    const json_t *v = desc_get(d, keys);
    *set = v != NULL;
    if (!v)
        return 0;
    if (json_is_integer(v) && json_integer_value(v) >= 0) {
        *mib = (uint64_t)json_integer_value(v);
        return 0;
    }
    if (json_is_string(v) && loom_mem_parse_mib(json_string_value(v), mib, NULL) == 0)
        return 0;
    return loom_errf(err, -LOOM_EINVAL_MEM, "invalid memory size for '%s'", keys);
}

/* Time limit: integer minutes (-1 infinite) or a time text. *set false when absent. */
static int desc_time(const json_t *d, const char *keys, int64_t *mins, bool *set, loom_err_t *err)
{
    const json_t *v = desc_get(d, keys);
    *set = v != NULL;
    if (!v)
        return 0;
    if (json_is_integer(v) && json_integer_value(v) >= -1) {
        *mins = json_integer_value(v);
    } else if (!json_is_string(v) || loom_time_parse_mins(json_string_value(v), mins, NULL) < 0) {
        return loom_errf(err, -LOOM_EINVAL_TIME, "invalid time limit for '%s'", keys);
    }
    return 0;
}

/* ---- names ---------------------------------------------------------------- */

char *ctld_uid_name(uint32_t uid)
{
    char buf[DESC_NAME_BUF];
    struct passwd pw, *res = NULL;
    if (getpwuid_r((uid_t)uid, &pw, buf, sizeof(buf), &res) == 0 && res)
        return loom_xstrdup(res->pw_name);
    snprintf(buf, sizeof(buf), "%u", uid);
    return loom_xstrdup(buf);
}

char *ctld_gid_name(uint32_t gid)
{
    char buf[DESC_NAME_BUF];
    struct group gr, *res = NULL;
    if (getgrgid_r((gid_t)gid, &gr, buf, sizeof(buf), &res) == 0 && res)
        return loom_xstrdup(res->gr_name);
    snprintf(buf, sizeof(buf), "%u", gid);
    return loom_xstrdup(buf);
}

/* ---- the scheduling request -------------------------------------------- */

static bool desc_gres_type_known(const ctld_t *c, const char *name)
{
    return loom_strv_find(&c->conf->gres_types, name) >= 0;
}

static int desc_parse_gres(ctld_t *c, ctld_job_t *job, loom_err_t *err)
{
    loom_gres_list_free(&job->gres_list);
    loom_gres_list_free(&job->gpus_list);
    if (job->gres && loom_gres_parse(job->gres, &job->gres_list, err) < 0)
        return loom_errf(err, -LOOM_EINVAL_GRES, "invalid --gres '%s'", job->gres);
    if (job->gpus && loom_gres_parse(job->gpus, &job->gpus_list, err) < 0)
        return loom_errf(err, -LOOM_EINVAL_GRES, "invalid --gpus '%s'", job->gpus);
    for (size_t i = 0; i < job->gpus_list.n; i++)
        if (strcmp(job->gpus_list.v[i].name, "gpu") != 0)
            return loom_errf(err, -LOOM_EINVAL_GRES, "only GPUs can be requested per job");
    for (size_t i = 0; i < job->gres_list.n; i++)
        if (!desc_gres_type_known(c, job->gres_list.v[i].name))
            return loom_errf(err, -LOOM_EINVAL_GRES, "GRES '%s' is not in GresTypes",
                             job->gres_list.v[i].name);
    if (job->gpus_list.n && !desc_gres_type_known(c, "gpu"))
        return loom_errf(err, -LOOM_EINVAL_GRES, "GRES 'gpu' is not in GresTypes");
    free(job->gres_req);
    job->ngres_req = 0;
    job->gres_req = loom_xcalloc(job->gres_list.n + 1, sizeof(*job->gres_req));
    for (size_t i = 0; i < job->gres_list.n; i++) {
        const loom_gres_t *g = &job->gres_list.v[i];
        if (g->count)
            job->gres_req[job->ngres_req++] =
                (loom_sched_gres_req_t){.name = g->name, .type = g->type, .count = g->count};
    }
    return 0;
}

static bool desc_in_part(const ctld_part_t *p, size_t idx)
{
    /* node_idx is sorted: binary search. */
    size_t lo = 0, hi = p->cfg->n_nodes;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (p->cfg->node_idx[mid] == idx)
            return true;
        if (p->cfg->node_idx[mid] < idx)
            lo = mid + 1;
        else
            hi = mid;
    }
    return false;
}

/* Node indexes of a hostlist; LOOM_EINVAL_NODENAME for an unknown name. */
static int desc_node_list(const ctld_t *c, const char *expr, uint32_t **out, size_t *n,
                          loom_err_t *err)
{
    loom_hostlist_t *hl = NULL;
    if (loom_hostlist_parse(expr, &hl, NULL) < 0)
        return loom_errf(err, -LOOM_EINVAL_NODENAME, "invalid node list '%s'", expr);
    loom_hostlist_uniq(hl);
    size_t cnt = loom_hostlist_count(hl);
    uint32_t *v = loom_xcalloc(cnt + 1, sizeof(*v));
    for (size_t i = 0; i < cnt; i++) {
        long idx = loom_conf_node_index(c->conf, loom_hostlist_nth(hl, i));
        if (idx < 0) {
            loom_errf(err, -LOOM_EINVAL_NODENAME, "invalid node name '%s'",
                      loom_hostlist_nth(hl, i));
            free(v);
            loom_hostlist_destroy(hl);
            return err ? err->code : -LOOM_EINVAL_NODENAME;
        }
        v[i] = (uint32_t)idx;
    }
    loom_hostlist_destroy(hl);
    *out = v;
    *n = cnt;
    return 0;
}

static bool desc_node_features_match(const ctld_t *c, const loom_constraint_t *cons, size_t idx)
{
    const loom_strv_t *f = ctld_node_features(&c->nodes[idx]);
    return loom_constraint_match_node(cons, (const char *const *)f->v, f->n) == 1;
}

/* job->allowed: in the partition, not excluded, matching the constraint. */
static int desc_build_mask(ctld_t *c, ctld_job_t *job, loom_err_t *err)
{
    loom_constraint_t *cons = NULL;
    if (job->features && loom_constraint_parse(job->features, &cons, err) < 0)
        return err ? err->code : -LOOM_ECONSTRAINT;
    uint32_t *exc = NULL;
    size_t nexc = 0;
    if (job->exc_nodes) {
        int rc = desc_node_list(c, job->exc_nodes, &exc, &nexc, err);
        if (rc < 0) {
            loom_constraint_free(cons);
            return rc;
        }
    }
    free(job->allowed);
    job->allowed = loom_xcalloc(c->nnodes + 1, sizeof(bool));
    for (size_t i = 0; i < c->nnodes; i++)
        job->allowed[i] = job->part && desc_in_part(job->part, i) &&
                          (!cons || desc_node_features_match(c, cons, i)) &&
                          c->nodes[i].tmp_disk >= job->tmp_disk; /* --tmp */
    for (size_t i = 0; i < nexc; i++)
        job->allowed[exc[i]] = false;
    free(exc);
    loom_constraint_free(cons);
    return 0;
}

int ctld_job_build_req(ctld_t *c, ctld_job_t *job, loom_err_t *err)
{
    int rc = desc_parse_gres(c, job, err);
    if (rc == 0)
        rc = desc_build_mask(c, job, err);
    free(job->req_idx);
    job->req_idx = NULL;
    size_t nreq = 0;
    if (rc == 0 && job->req_nodes)
        rc = desc_node_list(c, job->req_nodes, &job->req_idx, &nreq, err);
    if (rc < 0)
        return rc;
    bool track_mem = c->conf->select_type_parameters & LOOM_CR_MEMORY;
    loom_sched_req_t *r = &job->req;
    *r = (loom_sched_req_t){
        .min_nodes = job->min_nodes,
        .max_nodes = job->max_nodes ? job->max_nodes : (uint32_t)job->part->cfg->n_nodes,
        .ntasks = job->ntasks,
        .ntasks_per_node = job->ntasks_per_node,
        .cpus_per_task = job->cpus_per_task,
        .min_cpus = job->min_cpus,
        .mem_per_node = track_mem ? job->mem_per_node : 0,
        .mem_per_cpu = track_mem ? job->mem_per_cpu : 0,
        .mem_whole_node = track_mem && job->mem_whole,
        .gres = job->gres_req,
        .ngres = job->ngres_req,
        .exclusive = job->exclusive,
        .allowed = job->allowed,
        .req_nodes = job->req_idx,
        .nreq_nodes = nreq,
    };
    if (r->max_nodes < r->min_nodes)
        r->max_nodes = r->min_nodes;
    if (job->gpus_list.n) {
        r->gpus_per_job = (uint32_t)job->gpus_list.v[0].count;
        r->gpus_type = job->gpus_list.v[0].type;
    }
    return ctld_sched_req_extend(c, job, err); /* GPU options, -C tree, partitions (sched_job.h) */
}

/* ---- fit and limits -------------------------------------------------------- */

static int64_t desc_secs_to_mins(int64_t secs)
{
    if (secs < 0)
        return -1;
    return (secs + 59) / 60;
}

const char *ctld_job_limit_reason(const ctld_t *c, const ctld_job_t *job)
{
    const loom_conf_part_t *p = job->part->cfg;
    if (job->part->state == LOOM_CONF_PART_DOWN)
        return "PartitionDown";
    if (job->part->state == LOOM_CONF_PART_INACTIVE)
        return "PartitionInactive";
    int64_t max = desc_secs_to_mins(p->max_time);
    if (max >= 0 && (job->time_limit < 0 || job->time_limit > max))
        return "PartitionTimeLimit";
    /* slurmctld 22.05 tests the partition's CPU total first (every node
     * takes at least one CPU): "-N 10" on 8 CPUs is PartitionConfig, while
     * "-N 3" on 2 nodes with 8 CPUs is PartitionNodeLimit. */
    uint64_t cpus = job->min_cpus > job->min_nodes ? job->min_cpus : job->min_nodes;
    if (cpus > job->part->total_cpus)
        return "PartitionConfig";
    if (job->min_nodes > p->n_nodes ||
        (p->max_nodes >= 0 && job->min_nodes > (uint64_t)p->max_nodes) ||
        (p->min_nodes > 0 && job->min_nodes < (uint64_t)p->min_nodes && !job->max_nodes))
        return "PartitionNodeLimit";
    return NULL;
}

static bool desc_any_allowed(const ctld_t *c, const ctld_job_t *job)
{
    for (size_t i = 0; i < c->nnodes; i++)
        if (job->allowed[i])
            return true;
    return false;
}

/* Over the partition's limits or totals: rejected with EnforcePartLimits
 * (Slurm's errors), else accepted to pend with the reason (slurmctld 22.05
 * does both: "sbatch -n 9" on 8 CPUs pends with PartitionConfig). */
static int desc_part_limits(ctld_t *c, ctld_job_t *job, bool *pends, loom_err_t *err)
{
    const char *why = ctld_job_limit_reason(c, job);
    *pends = why != NULL;
    if (!why || c->conf->enforce_part_limits == LOOM_PART_LIMITS_NO)
        return 0;
    if (strcmp(why, "PartitionTimeLimit") == 0)
        return loom_errf(err, -LOOM_EINVAL_TIME, "%s", loom_strerror(-LOOM_EINVAL_TIME));
    if (strcmp(why, "PartitionNodeLimit") == 0)
        return loom_errf(err, -LOOM_EINVAL_NODECOUNT, "%s", loom_strerror(-LOOM_EINVAL_NODECOUNT));
    if (strcmp(why, "PartitionConfig") == 0)
        return loom_errf(err, -LOOM_ETOO_MANY_CPUS, "%s", loom_strerror(-LOOM_ETOO_MANY_CPUS));
    return 0;
}

/* Slurm's first line when no node can ever run the job (the second is the
 * error's text): CPUs per node, or memory; else the error text alone. */
static const char *desc_unfit_why(const ctld_t *c, const ctld_job_t *job)
{
    uint32_t max_cpus = 0;
    uint64_t max_mem = 0;
    for (size_t i = 0; i < c->nnodes; i++) {
        if (!job->allowed[i])
            continue;
        max_cpus = c->snodes[i].cpus > max_cpus ? c->snodes[i].cpus : max_cpus;
        max_mem = c->snodes[i].mem_total > max_mem ? c->snodes[i].mem_total : max_mem;
    }
    uint64_t per_node_cpus =
        (uint64_t)job->cpus_per_task * (job->ntasks_per_node ? job->ntasks_per_node : 1);
    if (per_node_cpus > max_cpus)
        return "CPU count per node can not be satisfied";
    if ((c->conf->select_type_parameters & LOOM_CR_MEMORY) &&
        (job->mem_per_node > max_mem || job->mem_per_cpu * per_node_cpus > max_mem))
        return "Memory specification can not be satisfied";
    return loom_strerror(-LOOM_ENODE_CONFIG);
}

/* What no node of the partition has, whatever is consumable (slurmctld 22.05
 * tests --tmp and --mem against every node's TmpDisk and RealMemory, CR_Core
 * too), or NULL. */
static const char *desc_sizes_unfit(const ctld_t *c, const ctld_job_t *job)
{
    int64_t max_tmp = 0, max_mem = 0;
    for (size_t i = 0; i < c->nnodes; i++) {
        if (!desc_in_part(job->part, i))
            continue;
        max_tmp = c->nodes[i].tmp_disk > max_tmp ? c->nodes[i].tmp_disk : max_tmp;
        max_mem = c->nodes[i].real_memory > max_mem ? c->nodes[i].real_memory : max_mem;
    }
    uint64_t per_node_cpus =
        (uint64_t)job->cpus_per_task * (job->ntasks_per_node ? job->ntasks_per_node : 1);
    if (job->tmp_disk > max_tmp)
        return "Temporary disk specification can not be satisfied";
    if (max_mem > 0 && (job->mem_per_node > (uint64_t)max_mem ||
                        job->mem_per_cpu * per_node_cpus > (uint64_t)max_mem))
        return "Memory specification can not be satisfied";
    return NULL;
}

int ctld_job_check_fit(ctld_t *c, ctld_job_t *job, loom_err_t *err)
{
    const loom_conf_part_t *p = job->part->cfg;
    bool pends = false;
    int rc = ctld_sched_check_submit(c, job, err); /* AllowGroups, AllowAccounts */
    if (rc < 0)
        return rc;
    rc = desc_part_limits(c, job, &pends, err);
    if (rc < 0)
        return rc;
    if (job->features && !desc_any_allowed(c, job))
        return loom_errf(err, -LOOM_ECONSTRAINT, "%s", loom_strerror(-LOOM_ECONSTRAINT));
    for (size_t i = 0; i < job->req.nreq_nodes; i++)
        if (!desc_in_part(job->part, job->req_idx[i]))
            return loom_errf(err, -LOOM_ENODE_CONFIG, "node %s is not in partition %s",
                             c->nodes[job->req_idx[i]].cfg->name, p->name);
    if (pends || job->hold)
        return 0; /* it waits for the partition or a release; no node test yet (22.05.8) */
    const char *why = desc_sizes_unfit(c, job);
    if (why)
        return loom_errf(err, -LOOM_ENODE_CONFIG, "%s", why);
    loom_sched_alloc_t a = {0};
    rc = loom_sched_try_place(c->snodes, c->nnodes, &job->req, LOOM_SCHED_IGNORE_USED, &a);
    loom_sched_alloc_fini(&a);
    if (rc == -EINVAL)
        return loom_errf(err, -LOOM_EINVAL_NODECOUNT, "%s", loom_strerror(-LOOM_EINVAL_NODECOUNT));
    if (rc < 0)
        return loom_errf(err, -LOOM_ENODE_CONFIG, "%s", desc_unfit_why(c, job));
    return 0;
}

/* ---- building the job ---------------------------------------------------- */

static int desc_partition(ctld_t *c, const json_t *d, ctld_job_t *job, loom_err_t *err)
{
    const char *name = desc_str(d, "partition");
    if (!name) {
        if (!c->default_part)
            return loom_errf(err, -LOOM_EINVAL_PARTITION,
                             "No partition specified or system default partition");
        job->part = c->default_part;
        return 0;
    }
    /* "a,b": the first one (several partitions come with the scheduler issue). */
    char first[256];
    snprintf(first, sizeof(first), "%.*s", (int)strcspn(name, ","), name);
    for (size_t i = 0; i < c->nparts; i++)
        if (strcmp(c->parts[i].cfg->name, first) == 0)
            job->part = &c->parts[i];
    if (!job->part)
        return loom_errf(err, -LOOM_EINVAL_PARTITION, "invalid partition specified: %s", first);
    for (const char *p = name + strlen(first); *p == ','; p += strcspn(p + 1, ",") + 1) {
        bool known = false; /* every name in the list must exist, as slurmctld 22.05 checks */
        size_t len = strcspn(p + 1, ",");
        for (size_t i = 0; i < c->nparts && !known; i++)
            known = strlen(c->parts[i].cfg->name) == len &&
                    strncmp(c->parts[i].cfg->name, p + 1, len) == 0;
        if (!known && len)
            return loom_errf(err, -LOOM_EINVAL_PARTITION, "invalid partition specified: %.*s",
                             (int)len, p + 1);
    }
    if (job->part->state == LOOM_CONF_PART_INACTIVE || job->part->state == LOOM_CONF_PART_DRAIN)
        return loom_errf(err, -LOOM_EINVAL_PARTITION,
                         "Required partition not available (inactive or drain)");
    return 0;
}

/* -N: "2", "1-3" or min_nodes/max_nodes integers. */
static int desc_nodes(const json_t *d, ctld_job_t *job, bool *given, loom_err_t *err)
{
    const json_t *v = desc_get(d, "minimum_nodes|nodes|min_nodes");
    int64_t lo = 1, hi = 0;
    *given = v != NULL;
    if (json_is_integer(v)) {
        lo = hi = json_integer_value(v);
    } else if (json_is_string(v)) {
        char *end;
        lo = hi = strtoll(json_string_value(v), &end, 10);
        if (*end == '-')
            hi = strtoll(end + 1, &end, 10);
        if (*end)
            lo = -1;
    } else if (v) {
        lo = -1;
    }
    int64_t mx = desc_int(d, "maximum_nodes|max_nodes");
    if (mx > 0)
        hi = mx;
    if (lo < 1 || (hi && hi < lo) || hi > UINT32_MAX)
        return loom_errf(err, -LOOM_EINVAL_NODECOUNT, "invalid node count");
    job->min_nodes = (uint32_t)lo;
    job->max_nodes = (uint32_t)hi;
    return 0;
}

static int desc_counts(const json_t *d, ctld_job_t *job, loom_err_t *err)
{
    bool nodes_given;
    int rc = desc_nodes(d, job, &nodes_given, err);
    if (rc < 0)
        return rc;
    int64_t ntasks = desc_int(d, "tasks|ntasks|num_tasks");
    int64_t tpn = desc_int(d, "tasks_per_node|ntasks_per_node");
    int64_t cpt = desc_int(d, "cpus_per_task");
    int64_t mincpus = desc_int(d, "min_cpus|num_cpus");
    int64_t per_node = desc_int(d, "minimum_cpus_per_node");
    if (per_node > 0 && mincpus >= 0)
        mincpus = per_node * (job->min_nodes ? job->min_nodes : 1) > mincpus
                      ? per_node * (job->min_nodes ? job->min_nodes : 1)
                      : mincpus;
    if (ntasks < 0 || tpn < 0 || cpt < 0 || mincpus < 0 || ntasks > UINT32_MAX || tpn > 65535 ||
        cpt > 65535 || mincpus > UINT32_MAX)
        return loom_errf(err, -LOOM_EINVAL_TASKS, "invalid task or CPU count");
    job->ntasks_set = ntasks > 0;
    job->ntasks_per_node = (uint32_t)tpn;
    job->cpus_per_task = cpt ? (uint32_t)cpt : 1;
    if (ntasks > 0)
        job->ntasks = (uint32_t)ntasks;
    else
        job->ntasks = (uint32_t)(tpn ? tpn : 1) * job->min_nodes;
    if (ntasks > 0 && !nodes_given && job->ntasks < job->min_nodes)
        job->min_nodes = job->ntasks;
    if (job->ntasks < job->min_nodes)
        return loom_errf(err, -LOOM_EINVAL_NODECOUNT, "fewer tasks (%u) than nodes (%u)",
                         job->ntasks, job->min_nodes);
    if (nodes_given && !job->max_nodes)
        job->max_nodes = job->min_nodes;
    uint64_t need = (uint64_t)job->ntasks * job->cpus_per_task;
    job->min_cpus = (uint32_t)((uint64_t)mincpus > need ? (uint64_t)mincpus : need);
    return 0;
}

static int desc_memory(ctld_t *c, const json_t *d, ctld_job_t *job, loom_err_t *err)
{
    uint64_t node = 0, cpu = 0;
    bool node_set, cpu_set;
    int rc = desc_mem(d, "memory_per_node|mem_per_node|mem", &node, &node_set, err);
    if (rc == 0)
        rc = desc_mem(d, "memory_per_cpu|mem_per_cpu", &cpu, &cpu_set, err);
    uint64_t tmp = 0;
    bool tmp_set;
    if (rc == 0)
        rc = desc_mem(d, "temporary_disk_per_node|tmp", &tmp, &tmp_set, err);
    if (rc < 0)
        return rc;
    job->tmp_disk = (int64_t)tmp;
    const loom_conf_part_t *p = job->part->cfg;
    if (node_set && node == 0) {
        job->mem_whole = true; /* --mem=0: all of each node */
    } else if (node_set) {
        job->mem_per_node = node;
    } else if (cpu_set && cpu) {
        job->mem_per_cpu = cpu;
    } else if (p->def_mem_per_cpu > 0) {
        job->mem_per_cpu = (uint64_t)p->def_mem_per_cpu;
    } else if (p->def_mem_per_node > 0) {
        job->mem_per_node = (uint64_t)p->def_mem_per_node;
    } else if (c->conf->def_mem_per_cpu > 0) {
        job->mem_per_cpu = (uint64_t)c->conf->def_mem_per_cpu;
    } else if (c->conf->def_mem_per_node > 0) {
        job->mem_per_node = (uint64_t)c->conf->def_mem_per_node;
    } else {
        job->mem_whole = true; /* Slurm's default: the whole node */
    }
    return 0;
}

static int desc_times(ctld_t *c, const json_t *d, ctld_job_t *job, int64_t now, loom_err_t *err)
{
    bool set, limit_set;
    int64_t mins = -1;
    int rc = desc_time(d, "time_limit|time", &mins, &limit_set, err);
    if (rc < 0)
        return rc;
    set = limit_set;
    const loom_conf_part_t *p = job->part->cfg;
    if (!set)
        mins =
            desc_secs_to_mins(p->default_time != LOOM_CONF_NOT_SET ? p->default_time : p->max_time);
    else if (mins == 0) /* --time=0: no limit of its own; the partition's applies */
        mins = desc_secs_to_mins(p->max_time);
    job->time_limit = mins;
    int64_t tmin = 0;
    rc = desc_time(d, "time_minimum|time_min", &tmin, &set, err);
    job->time_min = set && tmin > 0 ? tmin : 0;
    /* --deadline without --time or --time-min: the job may be cut to one
     * minute to end in time (slurmctld 22.05's TimeMin=00:01:00). */
    if (!limit_set && !set && desc_int(d, "deadline") > 0)
        job->time_min = 1;
    int64_t begin = desc_int(d, "begin_time|begin");
    job->begin_time = begin > now ? begin : 0;
    job->submit_time = now;
    return rc;
}

static void desc_strings(const json_t *d, ctld_job_t *job)
{
    job->name = desc_dup(d, "name|job_name");
    if (!job->name)
        job->name = loom_xstrdup("sbatch");
    job->account = desc_dup(d, "account");
    job->qos = desc_dup(d, "qos");
    job->comment = desc_dup(d, "comment");
    job->work_dir = desc_dup(d, "current_working_directory|work_dir|chdir");
    if (!job->work_dir)
        job->work_dir = loom_xstrdup("/");
    job->command = desc_dup(d, "command|script_path");
    job->std_out = desc_dup(d, "standard_output|std_out|output");
    job->std_err = desc_dup(d, "standard_error|std_err|error");
    job->std_in = desc_dup(d, "standard_input|std_in|input");
    job->features = desc_dup(d, "constraints|constraint|features");
    job->req_nodes = desc_dup(d, "required_nodes|nodelist|req_nodes");
    job->exc_nodes = desc_dup(d, "excluded_nodes|exclude|exc_nodes");
    job->dependency = desc_dup(d, "dependency");
    job->submit_host = desc_dup(d, "submit_host|alloc_node");
    job->submit_line = desc_dup(d, "submit_line");
    int64_t sid = desc_int(d, "alloc_sid");
    job->alloc_sid = sid > 0 && sid <= INT32_MAX ? (uint32_t)sid : 0;
    job->mail_type = desc_dup(d, "mail_type");
    job->mail_user = desc_dup(d, "mail_user");
}

/* "gres/gpu:a100:2,gres/shard:1" (TRES form) to "gpu:a100:2,shard:1" (--gres form). */
static void desc_strip_gres(const char *s, loom_sbuf_t *out)
{
    loom_strv_t items = LOOM_STRV_INIT;
    loom_strv_split(&items, s, ",");
    for (size_t i = 0; i < items.n; i++) {
        const char *it = items.v[i];
        if (strncmp(it, "gres/", 5) == 0)
            it += 5;
        loom_sbuf_addf(out, "%s%s", out->len ? "," : "", it);
    }
    loom_strv_free(&items);
}

/* GRES per node (job->gres) and GPUs per job (job->gpus), both in --gres
 * form: jobopt sends tres_per_node / tres_per_job / tres_per_task; the short
 * keys gres, gpus, gpus_per_node, gpus_per_task are accepted too. */
static void desc_gpus(const json_t *d, ctld_job_t *job)
{
    loom_sbuf_t node = LOOM_SBUF_INIT, per_job = LOOM_SBUF_INIT;
    const char *s;
    if ((s = desc_str(d, "tres_per_node|gres")))
        desc_strip_gres(s, &node);
    if ((s = desc_str(d, "gpus_per_node")))
        loom_sbuf_addf(&node, "%sgpu:%s", node.len ? "," : "", s);
    if ((s = desc_str(d, "tres_per_job")))
        desc_strip_gres(s, &per_job);
    else if ((s = desc_str(d, "gpus")))
        loom_sbuf_addf(&per_job, "gpu:%s", s);
    const char *gpt = desc_str(d, "tres_per_task|gpus_per_task");
    if (!per_job.len && gpt) {
        /* --gpus-per-task=N: N per task, as many in all as there are tasks. */
        const char *num = strrchr(gpt, ':') ? strrchr(gpt, ':') + 1 : gpt;
        char *end;
        unsigned long n = strtoul(num, &end, 10);
        if (!*end && n)
            loom_sbuf_addf(&per_job, "gpu:%lu", n * job->ntasks);
    }
    job->gres = node.len ? loom_sbuf_detach(&node) : NULL;
    job->gpus = per_job.len ? loom_sbuf_detach(&per_job) : NULL;
    loom_sbuf_free(&node);
    loom_sbuf_free(&per_job);
}

static json_t *desc_env(const json_t *d, const json_t *body)
{
    const json_t *v = desc_get(d, "environment|env");
    if (!v)
        v = desc_get(body, "env");
    if (json_is_array(v))
        return json_deep_copy(v);
    json_t *arr = json_array();
    const char *k;
    json_t *val;
    json_object_foreach((json_t *)v, k, val)
    {
        if (json_is_string(val)) {
            loom_sbuf_t sb = LOOM_SBUF_INIT;
            loom_sbuf_addf(&sb, "%s=%s", k, json_string_value(val));
            json_array_append_new(arr, json_string(loom_sbuf_str(&sb)));
            loom_sbuf_free(&sb);
        }
    }
    return arr;
}

static void desc_identity(ctld_t *c, const json_t *d, const ctld_peer_t *peer, ctld_job_t *job)
{
    job->uid = peer->uid;
    job->gid = peer->gid;
    /* Security: only a peer holding the cluster key may submit for someone else. */
    if (peer->role == LOOM_ROLE_NODE) {
        int64_t uid = desc_int(d, "user_id"), gid = desc_int(d, "group_id");
        if (uid > 0)
            job->uid = (uint32_t)uid;
        if (gid > 0)
            job->gid = (uint32_t)gid;
    }
    job->user = ctld_uid_name(job->uid);
    job->group = ctld_gid_name(job->gid);
}

/* Priority, nice, hold, requeue, exclusivity. */
/* The job's OverSubscribe as slurmctld 22.05 shows it after submission:
 * --reboot or the partition's EXCLUSIVE make it NO, FORCE or
 * --oversubscribe YES; --exclusive is NO by itself (job_rec.c). Only a
 * partition's YES or FORCE lets jobs share (sched_job.c). */
static char desc_oversub(const json_t *d, const ctld_job_t *job)
{
    int mode = job->part->cfg->oversubscribe;
    if (desc_bool(d, "reboot", false) || mode == LOOM_CONF_OVERSUB_EXCLUSIVE)
        return 'n';
    if (mode == LOOM_CONF_OVERSUB_FORCE || desc_bool(d, "oversubscribe", false))
        return 'y';
    return 0;
}

static int desc_policy(ctld_t *c, const json_t *d, const ctld_peer_t *peer, ctld_job_t *job,
                       loom_err_t *err)
{
    int64_t nice = desc_int(d, "nice");
    if (nice < -2147483645 || nice > 2147483645)
        return loom_errf(err, -LOOM_ERANGE, "invalid nice value");
    /* Security: only administrators may raise priority (negative nice, --priority). */
    bool admin = peer->role >= LOOM_ROLE_ADMIN;
    if (nice < 0 && !admin)
        return loom_errf(err, -LOOM_EACCESS, "only administrators may set a negative nice");
    job->nice = (int32_t)nice;
    const char *top = desc_str(d, "priority");
    int64_t prio =
        top && strcasecmp(top, "TOP") == 0 ? (int64_t)CTLD_PRIO_TOP : desc_int(d, "priority");
    if (prio > 0 && !admin)
        return loom_errf(err, -LOOM_EACCESS, "only administrators may set a priority");
    job->prio_base = prio > 0 ? (uint32_t)prio : 0; /* 0: from the counter at insert */
    job->hold = desc_bool(d, "hold", false) ? 'u' : 0;
    job->requeue =
        desc_bool(d, "requeue", c->conf->job_requeue != 0) && !desc_bool(d, "no_requeue", false);
    const json_t *ex = desc_get(d, "exclusive");
    job->exclusive = json_is_string(ex) ? strcmp(json_string_value(ex), "user") != 0 &&
                                              strcmp(json_string_value(ex), "mcs") != 0
                                        : desc_bool(d, "exclusive", false);
    job->contiguous = desc_bool(d, "contiguous", false);
    job->reboot = desc_bool(d, "reboot", false);
    job->oversub = desc_oversub(d, job);
    int64_t deadline = desc_int(d, "deadline");
    job->deadline = deadline > 0 ? deadline : 0;
    return 0;
}

/* --dependency in its stored form (job_depend.h). */
static int desc_dependency(const ctld_t *c, ctld_job_t *job, loom_err_t *err)
{
    char *norm = NULL;
    int rc = ctld_depend_normalize(c, job->dependency, 0, &norm, err);
    if (rc == 0) {
        free(job->dependency);
        job->dependency = norm;
    }
    return rc;
}

/* sbatch prints our message as an extra line when it differs from the
 * error's text; Slurm prints one only for a few errors. Keep those, give the
 * others the error's own text (the detail goes to the log). */
static int desc_slurm_words(loom_err_t *err, int rc)
{
    if (!err || rc == -LOOM_EINVAL_PARTITION || rc == -LOOM_ENODE_CONFIG ||
        rc == -LOOM_EQOS_POLICY) /* the limit's reason name first (assoc_policy.c) */
        return rc;
    loom_verbose("job rejected: %s", err->msg);
    return loom_errf(err, rc, "%s", loom_strerror(rc));
}

/* The licenses asked for ("a:2,b") must all be in slurm.conf's Licenses=. */
static bool desc_license_known(const char *have, const char *name, size_t len, long want)
{
    for (const char *p = have; p && *p; p += *p == ',') {
        size_t n = strcspn(p, ",:");
        long count = p[n] == ':' ? strtol(p + n + 1, NULL, 10) : 1;
        if (n == len && strncmp(p, name, len) == 0)
            return want <= count;
        p += strcspn(p, ",");
    }
    return false;
}

/* Loom has no reservations and counts licenses only by name: slurmctld 22.05's
 * rejections for a reservation or a license it does not know. */
static int desc_resv_licenses(const ctld_t *c, const json_t *d, loom_err_t *err)
{
    const char *resv = desc_str(d, "reservation"), *lic = desc_str(d, "licenses");
    if (resv && *resv)
        return loom_errf(err, -LOOM_EINVAL_RESV, "%s", loom_strerror(-LOOM_EINVAL_RESV));
    for (const char *p = lic; p && *p; p += *p == ',') {
        size_t item = strcspn(p, ","), name = strcspn(p, ",:*");
        long want = name < item ? strtol(p + name + 1, NULL, 10) : 1;
        if (!desc_license_known(c->conf->licenses, p, name, want))
            return loom_errf(err, -LOOM_EINVAL_LICENSE, "%s", loom_strerror(-LOOM_EINVAL_LICENSE));
        p += item;
    }
    return 0;
}

int ctld_job_from_submit(ctld_t *c, const json_t *desc, const char *script, const ctld_peer_t *peer,
                         int64_t now, ctld_job_t **out, loom_err_t *err)
{
    if (!json_is_object(desc))
        return loom_errf(err, -LOOM_EPROTO, "job.submit needs a job description object");
    ctld_job_t *job = ctld_job_new();
    /* Kept from the start: the request's extras read it (sched_job.h). */
    job->desc = json_deep_copy(desc);
    json_object_del(job->desc, "env");
    json_object_del(job->desc, "environment");
    int rc = desc_partition(c, desc, job, err);
    if (rc == 0)
        rc = desc_resv_licenses(c, desc, err);
    if (rc == 0)
        rc = desc_counts(desc, job, err);
    if (rc == 0)
        rc = desc_memory(c, desc, job, err);
    if (rc == 0)
        rc = desc_times(c, desc, job, now, err);
    if (rc == 0)
        rc = desc_policy(c, desc, peer, job, err);
    if (rc == 0) {
        desc_identity(c, desc, peer, job);
        desc_strings(desc, job);
        desc_gpus(desc, job);
        rc = ctld_job_build_req(c, job, err);
    }
    if (rc == 0)
        rc = ctld_policy_submit(c, job, err); /* account, QOS, limits */
    if (rc == 0)
        rc = ctld_job_check_fit(c, job, err);
    if (rc == 0)
        rc = ctld_array_from_desc(c, desc, job, err);
    if (rc == 0 && job->dependency)
        rc = desc_dependency(c, job, err);
    if (rc < 0) {
        ctld_job_free(job);
        return desc_slurm_words(err, rc);
    }
    job->env = desc_env(desc, NULL);
    job->script = loom_xstrdup(script ? script : "");
    job->batch = *job->script != '\0';
    job->state = LOOM_JOB_PENDING;
    *out = job;
    return 0;
}
