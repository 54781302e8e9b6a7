/*
 * assoc_policy.c - associations, QOS and limits applied to jobs. See
 * assoc_policy.h.
 */
#include "ctld/assoc_policy.h"
#include "common/jobstate.h"
#include "common/log.h"
#include "common/rangeset.h"
#include "common/xalloc.h"
#include "ctld/job_array.h"
#include "ctld/job_mgr.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- the pure check ---------------------------------------------------------------- */

/* Slurm's reason names by limit scope and TRES kind (as 22.05's
 * job_reason_string spells them; NULL: that scope has no such limit). */
enum { POL_GRP, POL_PER_JOB, POL_PER_NODE, POL_PER_USER, POL_PER_ACCT, POL_NSCOPES };
enum { POL_NKINDS = 9 }; /* cpu mem node billing energy gres license bb other */

static const char *const policy_qos_names[POL_NSCOPES][POL_NKINDS] = {
    {"QOSGrpCpuLimit", "QOSGrpMemLimit", "QOSGrpNodeLimit", "QOSGrpBilling", "QOSGrpEnergy",
     "QOSGrpGRES", "QOSGrpLicense", "QOSGrpBB", "QOSGrpUnknown"},
    {"QOSMaxCpuPerJobLimit", "QOSMaxMemoryPerJob", "QOSMaxNodePerJobLimit", "QOSMaxBillingPerJob",
     "QOSMaxEnergyPerJob", "QOSMaxGRESPerJob", "QOSMaxLicensePerJob", "QOSMaxBBPerJob",
     "QOSMaxUnknownPerJob"},
    {"QOSMaxCpuPerNode", "QOSMaxMemoryPerNode", "QOSMaxUnknownPerNode", "QOSMaxBillingPerNode",
     "QOSMaxEnergyPerNode", "QOSMaxGRESPerNode", "QOSMaxUnknownPerNode", "QOSMaxBBPerNode",
     "QOSMaxUnknownPerNode"},
    {"QOSMaxCpuPerUserLimit", "QOSMaxMemoryPerUser", "QOSMaxNodePerUserLimit",
     "QOSMaxBillingPerUser", "QOSMaxEnergyPerUser", "QOSMaxGRESPerUser", "QOSMaxLicensePerUser",
     "QOSMaxBBPerUser", "QOSMaxUnknownPerUser"},
    {"MaxCpuPerAccount", "MaxMemoryPerAccount", "MaxNodePerAccount", "MaxBillingPerAccount",
     "MaxEnergyPerAccount", "MaxGRESPerAccount", "MaxLicensePerAccount", "MaxBBPerAccount",
     "MaxUnknownPerAccount"},
};

static const char *const policy_assoc_names[3][POL_NKINDS] = {
    {"AssocGrpCpuLimit", "AssocGrpMemLimit", "AssocGrpNodeLimit", "AssocGrpBilling",
     "AssocGrpEnergy", "AssocGrpGRES", "AssocGrpLicense", "AssocGrpBB", "AssocGrpUnknown"},
    {"AssocMaxCpuPerJobLimit", "AssocMaxMemPerJob", "AssocMaxNodePerJobLimit",
     "AssocMaxBillingPerJob", "AssocMaxEnergyPerJob", "AssocMaxGRESPerJob", "AssocMaxLicensePerJob",
     "AssocMaxBBPerJob", "AssocMaxUnknownPerJob"},
    {"AssocMaxCpuPerNode", "AssocMaxMemPerNode", "AssocMaxUnknownPerNode", "AssocMaxBillingPerNode",
     "AssocMaxEnergyPerNode", "AssocMaxGRESPerNode", "AssocMaxUnknownPerNode", "AssocMaxBBPerNode",
     "AssocMaxUnknownPerNode"},
};

static int policy_tres_kind(const char *tres)
{
    static const char *const exact[] = {"cpu", "mem", "node", "billing", "energy"};
    static const char *const prefix[] = {"gres/", "license/", "bb/"};
    for (int k = 0; k < 5; k++)
        if (strcmp(tres, exact[k]) == 0)
            return k;
    for (int k = 0; k < 3; k++)
        if (strncmp(tres, prefix[k], strlen(prefix[k])) == 0)
            return 5 + k;
    return 8;
}

static const char *policy_tres_reason(bool qos, int scope, const char *tres)
{
    int k = policy_tres_kind(tres);
    if (qos)
        return policy_qos_names[scope][k];
    return policy_assoc_names[scope == POL_GRP ? 0 : scope == POL_PER_JOB ? 1 : 2][k];
}

/* The first per-node TRES of lim the job asks more of on some node (its
 * count over its nodes, rounded up); skip those set in over. */
static const char *policy_per_node_over(const ctld_tres_t *lim, const ctld_tres_t *job,
                                        const ctld_tres_t *over)
{
    int64_t nodes = ctld_tres_get(job, "node");
    nodes = nodes > 0 ? nodes : 1;
    for (size_t i = 0; i < lim->n; i++) {
        const char *name = lim->it[i].name;
        int64_t want = ctld_tres_get(job, name);
        if (strcmp(name, "node") == 0 || want <= 0 || (over && ctld_tres_get(over, name) >= 0))
            continue;
        if ((want + nodes - 1) / nodes > lim->it[i].v)
            return name;
    }
    return NULL;
}

/* The first TRES of lim that used + job would exceed; skip those set in
 * `over` (a limit of the QOS that takes precedence). NULL when none. */
static const char *policy_tres_over(const ctld_tres_t *lim, const ctld_tres_t *used,
                                    const ctld_tres_t *job, const ctld_tres_t *over)
{
    for (size_t i = 0; i < lim->n; i++) {
        const char *name = lim->it[i].name;
        if (over && ctld_tres_get(over, name) >= 0)
            continue;
        int64_t want = ctld_tres_get(job, name);
        if (want <= 0)
            continue;
        int64_t have = used ? ctld_tres_get(used, name) : 0;
        if ((have < 0 ? 0 : have) + want > lim->it[i].v)
            return name;
    }
    return NULL;
}

static int64_t policy_jobs(const ctld_policy_use_t *u)
{
    return u ? u->jobs : 0;
}

static const ctld_tres_t *policy_tres(const ctld_policy_use_t *u)
{
    return u ? &u->tres : NULL;
}

static bool policy_wall_over(int64_t lim, int64_t time_limit)
{
    return lim >= 0 && (time_limit < 0 || time_limit > lim);
}

/* slurmctld's order: before a placement the job counts and the wall time
 * (the QOS, then the user's association, then the Grp jobs of its
 * parents); after it the TRES (the QOS, then the associations). *never:
 * a per-job limit, which no waiting frees. */
static const char *policy_qos_pre(const ctld_policy_in_t *in, bool *never)
{
    const ctld_qos_t *q = in->qos;
    if (q->grp_jobs >= 0 && policy_jobs(in->qos_use) + 1 > q->grp_jobs)
        return "QOSGrpJobsLimit";
    if (q->max_jobs_pu >= 0 && policy_jobs(in->qos_user_use) + 1 > q->max_jobs_pu)
        return "QOSMaxJobsPerUserLimit";
    if (q->max_jobs_pa >= 0 && policy_jobs(in->qos_acct_use) + 1 > q->max_jobs_pa)
        return "MaxJobsPerAccount";
    *never = policy_wall_over(q->max_wall, in->time_limit);
    return *never ? "QOSMaxWallDurationPerJobLimit" : NULL;
}

static const ctld_policy_use_t *policy_assoc_use(const ctld_policy_in_t *in, const ctld_assoc_t *a)
{
    return in->assoc_use ? in->assoc_use[a->idx] : NULL;
}

static const char *policy_assoc_pre(const ctld_policy_in_t *in, bool *never)
{
    const ctld_qos_t *q = in->qos;
    const ctld_assoc_t *a = in->assoc;
    for (int depth = 0; a && depth < 256; a = a->parent, depth++) {
        const ctld_policy_use_t *u = policy_assoc_use(in, a);
        if (a->grp_jobs >= 0 && (!q || q->grp_jobs < 0) && policy_jobs(u) + 1 > a->grp_jobs)
            return "AssocGrpJobsLimit";
        if (depth > 0)
            continue; /* MaxJobs and MaxWall: the job's own association only */
        if (a->max_jobs >= 0 && (!q || q->max_jobs_pu < 0) && policy_jobs(u) + 1 > a->max_jobs)
            return "AssocMaxJobsLimit";
        *never = (!q || q->max_wall < 0) && policy_wall_over(a->max_wall, in->time_limit);
        if (*never)
            return "AssocMaxWallDurationPerJobLimit";
    }
    return NULL;
}

static const char *policy_qos_tres(const ctld_policy_in_t *in, bool *never)
{
    const ctld_qos_t *q = in->qos;
    const char *t;
    if ((t = policy_tres_over(&q->grp_tres, policy_tres(in->qos_use), in->job, NULL)))
        return policy_tres_reason(true, POL_GRP, t);
    *never = true;
    if ((t = policy_tres_over(&q->max_tres, NULL, in->job, NULL)))
        return policy_tres_reason(true, POL_PER_JOB, t);
    if ((t = policy_per_node_over(&q->max_tres_per_node, in->job, NULL)))
        return policy_tres_reason(true, POL_PER_NODE, t);
    *never = false;
    if ((t = policy_tres_over(&q->max_tres_pu, policy_tres(in->qos_user_use), in->job, NULL)))
        return policy_tres_reason(true, POL_PER_USER, t);
    if ((t = policy_tres_over(&q->max_tres_pa, policy_tres(in->qos_acct_use), in->job, NULL)))
        return policy_tres_reason(true, POL_PER_ACCT, t);
    return NULL;
}

static const char *policy_assoc_tres(const ctld_policy_in_t *in, bool *never)
{
    const ctld_qos_t *q = in->qos;
    const ctld_assoc_t *a = in->assoc;
    for (int depth = 0; a && depth < 256; a = a->parent, depth++) {
        const char *t = policy_tres_over(&a->grp_tres, policy_tres(policy_assoc_use(in, a)),
                                         in->job, q ? &q->grp_tres : NULL);
        if (t)
            return policy_tres_reason(false, POL_GRP, t);
        if (depth > 0)
            continue;
        *never = true;
        if ((t = policy_tres_over(&a->max_tres, NULL, in->job, q ? &q->max_tres : NULL)))
            return policy_tres_reason(false, POL_PER_JOB, t);
        t = policy_per_node_over(&a->max_tres_per_node, in->job, q ? &q->max_tres_per_node : NULL);
        if (t)
            return policy_tres_reason(false, POL_PER_NODE, t);
        *never = false;
    }
    return NULL;
}

const char *ctld_policy_check(const ctld_policy_in_t *in, bool *never)
{
    *never = false;
    const char *why = NULL;
    if (in->qos)
        why = policy_qos_pre(in, never);
    if (!why && in->assoc)
        why = policy_assoc_pre(in, never);
    if (!why && in->qos)
        why = policy_qos_tres(in, never);
    if (!why && in->assoc)
        why = policy_assoc_tres(in, never);
    return why;
}

/* ---- a job's TRES ------------------------------------------------------------------------ */

static void policy_add_gres(ctld_tres_t *t, const char *name, const char *type, int64_t n)
{
    char buf[CTLD_TRES_NAME_MAX];
    snprintf(buf, sizeof(buf), "gres/%s", name);
    ctld_tres_add(t, buf, n);
    if (type && *type) {
        snprintf(buf, sizeof(buf), "gres/%s:%s", name, type);
        ctld_tres_add(t, buf, n);
    }
}

void ctld_policy_job_tres(const ctld_job_t *job, ctld_tres_t *out)
{
    ctld_tres_t t = {0};
    bool running = job->alloc_applied || job->alloc.nnodes;
    uint64_t nodes = running ? job->alloc.nnodes : (job->min_nodes ? job->min_nodes : 1);
    uint64_t cpus = running ? job->alloc.ncpus : job->min_cpus;
    if (cpus < nodes)
        cpus = nodes;
    ctld_tres_add(&t, "cpu", (int64_t)cpus);
    ctld_tres_add(&t, "node", (int64_t)nodes);
    uint64_t mem = job->mem_per_node ? job->mem_per_node * nodes : job->mem_per_cpu * cpus;
    if (mem)
        ctld_tres_add(&t, "mem", (int64_t)mem);
    for (size_t i = 0; i < job->ngres_req; i++)
        policy_add_gres(&t, job->gres_req[i].name, job->gres_req[i].type,
                        (int64_t)(job->gres_req[i].count * nodes));
    uint64_t gpus = job->req.gpus_per_job;
    gpus += (uint64_t)job->req.gpus_per_task * (job->ntasks ? job->ntasks : nodes);
    if (gpus)
        policy_add_gres(&t, "gpu", job->req.gpus_type, (int64_t)gpus);
    *out = t;
}

/* ---- usage of the running jobs ------------------------------------------------------------ */

typedef struct policy_usage {
    const ctld_assoc_tree_t *t;
    ctld_policy_use_t **assoc; /* by assoc idx, allocated on first use */
    ctld_policy_use_t **qos;   /* by QOS idx */
    json_t *map;               /* "u|a\037qos\037name" -> index in extra */
    unsigned enforce;          /* AccountingStorageEnforce (the pass filter) */
    ctld_vec_t extra;
} policy_usage_t;

static ctld_policy_use_t *policy_slot(ctld_policy_use_t **slot)
{
    if (!*slot)
        *slot = loom_xcalloc(1, sizeof(**slot));
    return *slot;
}

/* The usage of a user ('u') or account ('a') in a QOS; NULL when absent and !make. */
static ctld_policy_use_t *policy_keyed(policy_usage_t *u, char kind, const ctld_qos_t *q,
                                       const char *name, bool make)
{
    char key[512];
    snprintf(key, sizeof(key), "%c\037%s\037%s", kind, q->name, name ? name : "");
    json_t *v = json_object_get(u->map, key);
    if (v)
        return u->extra.v[json_integer_value(v)];
    if (!make)
        return NULL;
    ctld_policy_use_t *e = loom_xcalloc(1, sizeof(*e));
    json_object_set_new(u->map, key, json_integer((json_int_t)u->extra.n));
    ctld_vec_push(&u->extra, e);
    return e;
}

static void policy_use_add(ctld_policy_use_t *e, const ctld_tres_t *tres)
{
    e->jobs++;
    for (size_t i = 0; tres && i < tres->n; i++)
        ctld_tres_add(&e->tres, tres->it[i].name, tres->it[i].v);
}

/* Count one job (tres NULL: a job only, for submit limits). */
static void policy_usage_add(policy_usage_t *u, const ctld_assoc_t *a, const ctld_qos_t *q,
                             const ctld_job_t *job, const ctld_tres_t *tres)
{
    for (int depth = 0; a && depth < 256; a = a->parent, depth++)
        policy_use_add(policy_slot(&u->assoc[a->idx]), tres);
    if (!q)
        return;
    policy_use_add(policy_slot(&u->qos[q->idx]), tres);
    policy_use_add(policy_keyed(u, 'u', q, job->user, true), tres);
    policy_use_add(policy_keyed(u, 'a', q, job->account, true), tres);
}

static const ctld_assoc_t *policy_assoc_of(const ctld_assoc_tree_t *t, const ctld_job_t *job)
{
    return ctld_assoc_find(t, job->user, job->account, job->part ? job->part->cfg->name : NULL);
}

static void policy_usage_init(policy_usage_t *u, const ctld_assoc_tree_t *t)
{
    *u = (policy_usage_t){.t = t};
    u->assoc = loom_xcalloc(t->nassocs + 1, sizeof(*u->assoc));
    u->qos = loom_xcalloc(t->nqos + 1, sizeof(*u->qos));
    u->map = json_object();
}

static void policy_usage_running(policy_usage_t *u, const ctld_t *c)
{
    for (size_t i = 0; i < c->jobs_running.n; i++) {
        const ctld_job_t *job = c->jobs_running.v[i];
        uint32_t base = loom_job_base(job->state);
        if (base != LOOM_JOB_RUNNING && base != LOOM_JOB_SUSPENDED)
            continue;
        ctld_tres_t tres;
        ctld_policy_job_tres(job, &tres);
        policy_usage_add(u, policy_assoc_of(u->t, job), ctld_assoc_qos(u->t, job->qos), job, &tres);
    }
}

static void policy_usage_free(policy_usage_t *u)
{
    for (size_t i = 0; i < u->t->nassocs; i++)
        free(u->assoc[i]);
    for (size_t i = 0; i < u->t->nqos; i++)
        free(u->qos[i]);
    free(u->assoc);
    free(u->qos);
    for (size_t i = 0; i < u->extra.n; i++)
        free(u->extra.v[i]);
    ctld_vec_free(&u->extra);
    json_decref(u->map);
}

static void policy_in_for(policy_usage_t *u, const ctld_job_t *job, const ctld_assoc_t *a,
                          const ctld_qos_t *q, const ctld_tres_t *tres, ctld_policy_in_t *in)
{
    *in = (ctld_policy_in_t){.qos = q,
                             .assoc = a,
                             .assoc_use = (const ctld_policy_use_t *const *)u->assoc,
                             .job = tres,
                             .time_limit = job->time_limit};
    if (q) {
        in->qos_use = u->qos[q->idx];
        in->qos_user_use = policy_keyed(u, 'u', q, job->user, false);
        in->qos_acct_use = policy_keyed(u, 'a', q, job->account, false);
    }
}

/* ---- the pass filter ---------------------------------------------------------------------- */

/* Is there anything for the filter to hold jobs back for? */
static bool policy_filter_on(const ctld_t *c)
{
    const ctld_assoc_tree_t *t = ctld_assoc_tree(c);
    unsigned enf = c->conf->accounting_storage_enforce;
    return t && ((enf & LOOM_ENFORCE_ASSOCS) || ((enf & LOOM_ENFORCE_LIMITS) && t->run_limits));
}

/* Admit (true) or hold back one offer of a job, counting it when admitted. */
static bool policy_admit(policy_usage_t *u, ctld_job_t *job, bool set_reason)
{
    const ctld_assoc_t *a = policy_assoc_of(u->t, job);
    const ctld_qos_t *q = ctld_assoc_qos(u->t, job->qos);
    ctld_tres_t tres;
    ctld_policy_job_tres(job, &tres);
    ctld_policy_in_t in;
    policy_in_for(u, job, a, q, &tres, &in);
    bool never;
    /* Its association or QOS was removed since it was submitted: it waits,
     * as on Slurm, until they exist again (or it is updated). */
    const char *why = !a                                      ? "InvalidAccount"
                      : (u->enforce & LOOM_ENFORCE_QOS) && !q ? "InvalidQOS"
                      : (u->enforce & LOOM_ENFORCE_LIMITS)    ? ctld_policy_check(&in, &never)
                                                              : NULL;
    if (why) {
        if (set_reason)
            ctld_job_set_reason(job, why);
        return false;
    }
    policy_usage_add(u, a, q, job, &tres);
    return true;
}

size_t ctld_policy_filter(ctld_t *c, loom_sched_job_t *v, size_t n, size_t nslots, bool set_reason)
{
    if (!n || !policy_filter_on(c))
        return n;
    policy_usage_t u;
    policy_usage_init(&u, ctld_assoc_tree(c));
    u.enforce = c->conf->accounting_storage_enforce;
    if (!u.t->run_limits)
        u.enforce &= ~(unsigned)LOOM_ENFORCE_LIMITS; /* nothing to count */
    else if (u.enforce & LOOM_ENFORCE_LIMITS)
        policy_usage_running(&u, c);
    char *dec = loom_xcalloc(nslots + 1, 1); /* 0 undecided, 1 admitted, 2 held */
    size_t m = 0;
    for (size_t i = 0; i < n; i++) {
        uint32_t s = v[i].slot;
        char d = s < nslots ? dec[s] : 0;
        if (!d)
            d = policy_admit(&u, v[i].ctx, set_reason) ? 1 : 2;
        if (s < nslots)
            dec[s] = d;
        if (d == 1)
            v[m++] = v[i];
    }
    free(dec);
    policy_usage_free(&u);
    return m;
}

/* ---- submission ------------------------------------------------------------------------ */

/* Slurm's choice of a QOS when the job names none. */
static const char *policy_default_qos(const ctld_assoc_tree_t *t, const ctld_assoc_t *a)
{
    if (a->default_qos && *a->default_qos)
        return a->default_qos;
    if (a->qos.n == 1)
        return a->qos.v[0];
    if (t->root && t->root->default_qos && *t->root->default_qos)
        return t->root->default_qos;
    return "normal";
}

static int64_t policy_task_count(const ctld_job_t *job)
{
    if (job->array_pending && job->array_task_id == CTLD_NO_TASK)
        return (int64_t)loom_rangeset_count(job->array_pending);
    return 1;
}

/* Pending and running jobs in the scopes of the submit limits, counted
 * with string compares and a per-partition table of the submitter's
 * associations (lookups only for GrpSubmitJobs of parent accounts). */
#define POLICY_GRP_MAX 8
typedef struct policy_submit {
    const ctld_job_t *job; /* the submission */
    const ctld_assoc_t *a;
    const ctld_qos_t *q;
    const ctld_assoc_t **by_part; /* the submitter's association in each partition */
    int64_t assoc, qos, qos_user, qos_acct, grp[POLICY_GRP_MAX];
    const ctld_assoc_t *grp_assoc[POLICY_GRP_MAX];
    size_t ngrp;
} policy_submit_t;

static bool policy_same(const char *x, const char *y)
{
    return x && y && strcmp(x, y) == 0;
}

static void policy_count_one(const ctld_assoc_tree_t *t, policy_submit_t *n, const ctld_job_t *job)
{
    int64_t k = policy_task_count(job);
    bool user = policy_same(job->user, n->job->user);
    bool acct = policy_same(job->account, n->job->account);
    if (n->q && job->qos && strcasecmp(job->qos, n->q->name) == 0) {
        n->qos += k;
        n->qos_user += user ? k : 0;
        n->qos_acct += acct ? k : 0;
    }
    if (user && acct && job->part && n->by_part[job->part->idx] == n->a)
        n->assoc += k;
    if (!n->ngrp)
        return;
    const ctld_assoc_t *ja = policy_assoc_of(t, job);
    for (int depth = 0; ja && depth < 256; ja = ja->parent, depth++)
        for (size_t g = 0; g < n->ngrp; g++)
            n->grp[g] += ja == n->grp_assoc[g] ? k : 0;
}

static void policy_count_submits(const ctld_t *c, policy_submit_t *n)
{
    const ctld_assoc_tree_t *t = ctld_assoc_tree(c);
    n->by_part = loom_xcalloc(c->nparts + 1, sizeof(*n->by_part));
    for (size_t i = 0; i < c->nparts; i++)
        n->by_part[i] = ctld_assoc_find(t, n->job->user, n->job->account, c->parts[i].cfg->name);
    for (const ctld_assoc_t *a = n->a; a && n->ngrp < POLICY_GRP_MAX; a = a->parent)
        if (a->grp_submit_jobs >= 0 && (!n->q || n->q->grp_submit_jobs < 0))
            n->grp_assoc[n->ngrp++] = a;
    const ctld_vec_t *lists[] = {&c->jobs_pending, &c->jobs_running};
    for (size_t l = 0; l < 2; l++)
        for (size_t i = 0; i < lists[l]->n; i++) {
            const ctld_job_t *job = lists[l]->v[i];
            if (!loom_job_state_is_terminal(job->state))
                policy_count_one(t, n, job);
        }
    free(n->by_part);
    n->by_part = NULL;
}

/* Jobs a submission adds: an array's task count (--array), else 1. */
static int64_t policy_new_jobs(const ctld_t *c, const ctld_job_t *job)
{
    const char *spec = json_string_value(json_object_get(job->desc, "array"));
    int64_t max = c->conf->max_array_size;
    if (!spec || !*spec || max <= 0)
        return 1;
    loom_rangeset_t rs = LOOM_RANGESET_INIT;
    uint32_t throttle = 0;
    int64_t n = 1;
    if (loom_rangeset_parse_array(spec, (uint32_t)(max - 1), &rs, &throttle, NULL) >= 0)
        n = (int64_t)loom_rangeset_count(&rs);
    loom_rangeset_free(&rs);
    return n > 0 ? n : 1;
}

static const char *policy_submit_over(const policy_submit_t *n, int64_t add)
{
    const ctld_qos_t *q = n->q;
    if (q && q->grp_submit_jobs >= 0 && n->qos + add > q->grp_submit_jobs)
        return "QOSGrpSubmitJobsLimit";
    if (q && q->max_submit_pu >= 0 && n->qos_user + add > q->max_submit_pu)
        return "QOSMaxSubmitJobPerUserLimit";
    if (q && q->max_submit_pa >= 0 && n->qos_acct + add > q->max_submit_pa)
        return "MaxSubmitJobsPerAccount";
    if (n->a->max_submit_jobs >= 0 && (!q || q->max_submit_pu < 0) &&
        n->assoc + add > n->a->max_submit_jobs)
        return "AssocMaxSubmitJobLimit";
    for (size_t g = 0; g < n->ngrp; g++)
        if (n->grp[g] + add > n->grp_assoc[g]->grp_submit_jobs)
            return "AssocGrpSubmitJobsLimit";
    return NULL;
}

/* A job without a time limit of its own gets the MaxWall in force. */
static void policy_default_time(ctld_job_t *job, const ctld_assoc_t *a, const ctld_qos_t *q)
{
    int64_t wall = q && q->max_wall >= 0 ? q->max_wall : a->max_wall;
    if (wall < 0 || json_object_get(job->desc, "time_limit") || json_object_get(job->desc, "time"))
        return;
    if (job->time_limit < 0 || job->time_limit > wall)
        job->time_limit = wall;
}

static int policy_limits(ctld_t *c, ctld_job_t *job, const ctld_assoc_t *a, const ctld_qos_t *q,
                         loom_err_t *err)
{
    const ctld_assoc_tree_t *t = ctld_assoc_tree(c);
    policy_default_time(job, a, q);
    const char *why = NULL;
    if (t->submit_limits) {
        policy_submit_t n = {.job = job, .a = a, .q = q};
        policy_count_submits(c, &n);
        why = policy_submit_over(&n, policy_new_jobs(c, job));
    }
    if (!why && q && (q->flags & CTLD_QOS_DENY_ON_LIMIT)) {
        ctld_tres_t tres;
        ctld_policy_job_tres(job, &tres);
        policy_usage_t u;
        policy_usage_init(&u, t);
        ctld_policy_in_t in;
        policy_in_for(&u, job, a, q, &tres, &in);
        bool never = false;
        why = ctld_policy_check(&in, &never); /* usage empty: the job alone */
        policy_usage_free(&u);
    }
    if (!why)
        return 0;
    loom_info("job from user %s: exceeded association/QOS limit: %s", job->user, why);
    return loom_errf(err, -LOOM_EQOS_POLICY, "%s", why); /* sbatch shows it first, as Slurm's */
}

int ctld_policy_submit(ctld_t *c, ctld_job_t *job, loom_err_t *err)
{
    if (!ctld_assoc_enabled(c))
        return 0;
    unsigned enf = c->conf->accounting_storage_enforce;
    const ctld_assoc_tree_t *t = ctld_assoc_tree(c);
    const ctld_assoc_t *a = ctld_assoc_find(t, job->user, job->account, job->part->cfg->name);
    if (!a) {
        if (enf & LOOM_ENFORCE_ASSOCS)
            return loom_errf(err, -LOOM_EINVAL_ACCOUNT, "%s", loom_strerror(-LOOM_EINVAL_ACCOUNT));
        return 0;
    }
    if (!job->account || !*job->account) {
        free(job->account);
        job->account = loom_xstrdup(a->account);
    }
    const char *qname = job->qos && *job->qos ? job->qos : policy_default_qos(t, a);
    const ctld_qos_t *q = ctld_assoc_qos(t, qname);
    if ((enf & LOOM_ENFORCE_QOS) && (!q || !ctld_assoc_qos_allowed(a, q->name)))
        return loom_errf(err, -LOOM_EINVAL_QOS, "%s", loom_strerror(-LOOM_EINVAL_QOS));
    char *name = loom_xstrdup(q ? q->name : qname);
    free(job->qos);
    job->qos = name;
    return (enf & LOOM_ENFORCE_LIMITS) ? policy_limits(c, job, a, q, err) : 0;
}

int ctld_policy_update(ctld_t *c, const ctld_job_t *job, bool admin, loom_err_t *err)
{
    if (!ctld_assoc_enabled(c))
        return 0;
    unsigned enf = c->conf->accounting_storage_enforce;
    const ctld_assoc_tree_t *t = ctld_assoc_tree(c);
    const ctld_assoc_t *a = ctld_assoc_find(t, job->user, job->account, job->part->cfg->name);
    if (!a && (enf & LOOM_ENFORCE_ASSOCS))
        return loom_errf(err, -LOOM_EINVAL_ACCOUNT, "%s", loom_strerror(-LOOM_EINVAL_ACCOUNT));
    const ctld_qos_t *q = job->qos && *job->qos ? ctld_assoc_qos(t, job->qos) : NULL;
    if (a && job->qos && *job->qos && (enf & LOOM_ENFORCE_QOS) &&
        (!q || (!admin && !ctld_assoc_qos_allowed(a, q->name))))
        return loom_errf(err, -LOOM_EINVAL_QOS, "%s", loom_strerror(-LOOM_EINVAL_QOS));
    return 0;
}

double ctld_policy_qos_norm(const ctld_t *c, const ctld_job_t *job)
{
    const ctld_assoc_tree_t *t = ctld_assoc_tree(c);
    const ctld_qos_t *q = t ? ctld_assoc_qos(t, job->qos) : NULL;
    if (!q || t->max_qos_priority <= 0 || q->priority <= 0)
        return 0;
    return (double)q->priority / (double)t->max_qos_priority;
}
