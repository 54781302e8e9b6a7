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
#include "ctld/sched_fairshare.h"

#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- the pure check ---------------------------------------------------------------- */

/* Slurm's reason names by limit scope and TRES kind (as 22.05's
 * job_reason_string spells them; NULL: that scope has no such limit). */
enum { POL_GRP, POL_PER_JOB, POL_PER_NODE, POL_PER_USER, POL_PER_ACCT, POL_NSCOPES };
enum { POL_NKINDS = 9 }; /* cpu mem node billing energy gres license bb other */
/* The TRES-minutes scopes: GrpTRESMins, GrpTRESRunMins, MaxTRESMins. */
enum { POL_GRP_MINS, POL_RUN_MINS, POL_MAX_MINS, POL_NMINS };

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

/* 22.05.8 has no QOSMaxBBMinutesPerJob: its burst buffer falls to the unknown name. */
static const char *const policy_mins_names[2][POL_NMINS][POL_NKINDS] = {
    {{"QOSGrpCPUMinutesLimit", "QOSGrpMemoryMinutes", "QOSGrpNodeMinutes", "QOSGrpBillingMinutes",
      "QOSGrpEnergyMinutes", "QOSGrpGRESMinutes", "QOSGrpLicenseMinutes", "QOSGrpBBMinutes",
      "QOSGrpUnknownMinutes"},
     {"QOSGrpCPURunMinutesLimit", "QOSGrpMemoryRunMinutes", "QOSGrpNodeRunMinutes",
      "QOSGrpBillingRunMinutes", "QOSGrpEnergyRunMinutes", "QOSGrpGRESRunMinutes",
      "QOSGrpLicenseRunMinutes", "QOSGrpBBRunMinutes", "QOSGrpUnknownRunMinutes"},
     {"QOSMaxCpuMinutesPerJobLimit", "QOSMaxMemoryMinutesPerJob", "QOSMaxNodeMinutesPerJob",
      "QOSMaxBillingMinutesPerJob", "QOSMaxEnergyMinutesPerJob", "QOSMaxGRESMinutesPerJob",
      "QOSMaxLicenseMinutesPerJob", "QOSMaxUnknownMinutesPerJob", "QOSMaxUnknownMinutesPerJob"}},
    {{"AssocGrpCPUMinutesLimit", "AssocGrpMemMinutes", "AssocGrpNodeMinutes",
      "AssocGrpBillingMinutes", "AssocGrpEnergyMinutes", "AssocGrpGRESMinutes",
      "AssocGrpLicenseMinutes", "AssocGrpBBMinutes", "AssocGrpUnknownMinutes"},
     {"AssocGrpCPURunMinutesLimit", "AssocGrpMemRunMinutes", "AssocGrpNodeRunMinutes",
      "AssocGrpBillingRunMinutes", "AssocGrpEnergyRunMinutes", "AssocGrpGRESRunMinutes",
      "AssocGrpLicenseRunMinutes", "AssocGrpBBRunMinutes", "AssocGrpUnknownRunMinutes"},
     {"AssocMaxCpuMinutesPerJobLimit", "AssocMaxMemMinutesPerJob", "AssocMaxNodeMinutesPerJob",
      "AssocMaxBillingMinutesPerJob", "AssocMaxEnergyMinutesPerJob", "AssocMaxGRESMinutesPerJob",
      "AssocMaxLicenseMinutesPerJob", "AssocMaxBBMinutesPerJob", "AssocMaxUnknownMinutesPerJob"}},
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

static const char *policy_mins_reason(bool qos, int scope, const char *tres)
{
    return policy_mins_names[qos ? 0 : 1][scope][policy_tres_kind(tres)];
}

static int64_t policy_sat_add(int64_t a, int64_t b)
{
    return a > INT64_MAX - b ? INT64_MAX : a + b;
}

static int64_t policy_sat_mul(int64_t a, int64_t b)
{
    if (a <= 0 || b <= 0)
        return 0;
    return a > INT64_MAX / b ? INT64_MAX : a * b;
}

static int64_t policy_pos(int64_t v)
{
    return v < 0 ? 0 : v;
}

/* Is name set in over (a limit an earlier QOS takes), when there is one? */
static bool policy_taken(const ctld_tres_t *over, const char *name)
{
    return over && ctld_tres_get(over, name) >= 0;
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
        if (strcmp(name, "node") == 0 || want <= 0 || policy_taken(over, name))
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
        if (policy_taken(over, name))
            continue;
        int64_t want = ctld_tres_get(job, name);
        if (want <= 0)
            continue;
        int64_t have = used ? policy_pos(ctld_tres_get(used, name)) : 0;
        if (policy_sat_add(have, want) > lim->it[i].v)
            return name;
    }
    return NULL;
}

/* GrpTRESMins: the first TRES of lim whose decayed usage (whole minutes)
 * reached it, or, with safe, for which the job's TRES-minutes plus those the
 * running jobs may still use do not fit in what is left. */
static const char *policy_mins_over(const ctld_tres_t *lim, const ctld_policy_use_t *u,
                                    const ctld_tres_t *job_mins, const ctld_tres_t *over, bool safe)
{
    for (size_t i = 0; i < lim->n; i++) {
        const char *name = lim->it[i].name;
        int64_t max = lim->it[i].v;
        if (policy_taken(over, name))
            continue;
        int64_t used = u ? policy_pos(ctld_tres_get(&u->used_secs, name)) / 60 : 0;
        if (used >= max)
            return name;
        if (!safe)
            continue;
        int64_t want = policy_pos(ctld_tres_get(job_mins, name));
        int64_t run = u ? policy_pos(ctld_tres_get(&u->run_secs, name)) / 60 : 0;
        if (want > max || policy_sat_add(want, run) > max - used)
            return name;
    }
    return NULL;
}

/* GrpTRESRunMins: the running jobs' remaining TRES-minutes plus the job's. */
static const char *policy_run_mins_over(const ctld_tres_t *lim, const ctld_policy_use_t *u,
                                        const ctld_tres_t *job_mins, const ctld_tres_t *over)
{
    for (size_t i = 0; i < lim->n; i++) {
        const char *name = lim->it[i].name;
        if (policy_taken(over, name))
            continue;
        int64_t want = policy_pos(ctld_tres_get(job_mins, name));
        int64_t run = u ? policy_pos(ctld_tres_get(&u->run_secs, name)) / 60 : 0;
        if (policy_sat_add(want, run) > lim->it[i].v)
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

/* GrpWall: the decayed wall time (whole minutes) reached it, or, with safe,
 * it plus the job's time limit would pass it. */
static bool policy_grp_wall_over(int64_t lim, const ctld_policy_use_t *u, int64_t time_limit,
                                 bool safe)
{
    int64_t used = u ? policy_pos(u->wall_secs) / 60 : 0;
    if (lim < 0)
        return false;
    return used >= lim || (safe && (time_limit < 0 || policy_sat_add(used, time_limit) > lim));
}

/* One QOS of the check, with its usage; `o` the QOS before it, whose limits win. */
typedef struct policy_q {
    const ctld_qos_t *q, *o;
    const ctld_policy_use_t *use, *user, *acct;
} policy_q_t;

typedef struct policy_ctx {
    const ctld_policy_in_t *in;
    policy_q_t qs[2];
    size_t nq;
    ctld_tres_t job_mins;       /* time limit x TRES */
    const ctld_tres_t *over[6]; /* per POL_O_*: what either QOS limits */
    ctld_tres_t over_buf[6];    /* their unions, with two QOS */
} policy_ctx_t;

enum { POL_O_GRP, POL_O_MAX, POL_O_PER_NODE, POL_O_GRP_MINS, POL_O_RUN_MINS, POL_O_MAX_MINS };

/* A scalar limit not set by o (the QOS that wins). */
#define POLICY_OPEN(o, f) (!(o) || (o)->f < 0)
/* A scalar limit of the association not set by any QOS of the check. */
#define POLICY_NO_QOS(x, f)                                                                        \
    (((x)->nq < 1 || (x)->qs[0].q->f < 0) && ((x)->nq < 2 || (x)->qs[1].q->f < 0))

static const ctld_tres_t *policy_o(const ctld_qos_t *o, size_t off)
{
    return o ? (const ctld_tres_t *)(const void *)((const char *)o + off) : NULL;
}

#define POLICY_OVER(x, f) policy_o((x)->o, offsetof(ctld_qos_t, f))

/* slurmctld's order: before a placement the job counts and the wall time
 * (each QOS, then the user's association, then the Grp limits of its
 * parents); after it the TRES (each QOS, then the associations). *never:
 * a per-job limit, which no waiting frees. */
static const char *policy_qos_pre(const policy_ctx_t *x, const policy_q_t *p, bool *never)
{
    const ctld_qos_t *q = p->q, *o = p->o;
    const ctld_policy_in_t *in = x->in;
    if (q->grp_jobs >= 0 && POLICY_OPEN(o, grp_jobs) && policy_jobs(p->use) + 1 > q->grp_jobs)
        return "QOSGrpJobsLimit";
    if (POLICY_OPEN(o, grp_wall) &&
        policy_grp_wall_over(q->grp_wall, p->use, in->time_limit, in->safe))
        return "QOSGrpWallLimit";
    if (q->max_jobs_pu >= 0 && POLICY_OPEN(o, max_jobs_pu) &&
        policy_jobs(p->user) + 1 > q->max_jobs_pu)
        return "QOSMaxJobsPerUserLimit";
    if (q->max_jobs_pa >= 0 && POLICY_OPEN(o, max_jobs_pa) &&
        policy_jobs(p->acct) + 1 > q->max_jobs_pa)
        return "MaxJobsPerAccount";
    *never = POLICY_OPEN(o, max_wall) && policy_wall_over(q->max_wall, in->time_limit);
    return *never ? "QOSMaxWallDurationPerJobLimit" : NULL;
}

static const ctld_policy_use_t *policy_assoc_use(const ctld_policy_in_t *in, const ctld_assoc_t *a)
{
    return in->assoc_use ? in->assoc_use[a->idx] : NULL;
}

static const char *policy_assoc_pre(const policy_ctx_t *x, bool *never)
{
    const ctld_policy_in_t *in = x->in;
    const ctld_assoc_t *a = in->assoc;
    for (int depth = 0; a && depth < 256; a = a->parent, depth++) {
        const ctld_policy_use_t *u = policy_assoc_use(in, a);
        if (a->grp_jobs >= 0 && POLICY_NO_QOS(x, grp_jobs) && policy_jobs(u) + 1 > a->grp_jobs)
            return "AssocGrpJobsLimit";
        if (POLICY_NO_QOS(x, grp_wall) &&
            policy_grp_wall_over(a->grp_wall, u, in->time_limit, in->safe))
            return "AssocGrpWallLimit";
        if (depth > 0)
            continue; /* MaxJobs and MaxWall: the job's own association only */
        if (a->max_jobs >= 0 && POLICY_NO_QOS(x, max_jobs_pu) && policy_jobs(u) + 1 > a->max_jobs)
            return "AssocMaxJobsLimit";
        *never = POLICY_NO_QOS(x, max_wall) && policy_wall_over(a->max_wall, in->time_limit);
        if (*never)
            return "AssocMaxWallDurationPerJobLimit";
    }
    return NULL;
}

static const char *policy_qos_tres(const policy_ctx_t *x, const policy_q_t *p, bool *never)
{
    const ctld_qos_t *q = p->q;
    const ctld_tres_t *job = x->in->job, *jm = &x->job_mins;
    const char *t;
    if ((t = policy_mins_over(&q->grp_tres_mins, p->use, jm, POLICY_OVER(p, grp_tres_mins),
                              x->in->safe)))
        return policy_mins_reason(true, POL_GRP_MINS, t);
    if ((t = policy_tres_over(&q->grp_tres, policy_tres(p->use), job, POLICY_OVER(p, grp_tres))))
        return policy_tres_reason(true, POL_GRP, t);
    t = policy_run_mins_over(&q->grp_tres_run_mins, p->use, jm, POLICY_OVER(p, grp_tres_run_mins));
    if (t)
        return policy_mins_reason(true, POL_RUN_MINS, t);
    *never = true;
    if ((t = policy_tres_over(&q->max_tres_mins, NULL, jm, POLICY_OVER(p, max_tres_mins))))
        return policy_mins_reason(true, POL_MAX_MINS, t);
    if ((t = policy_tres_over(&q->max_tres, NULL, job, POLICY_OVER(p, max_tres))))
        return policy_tres_reason(true, POL_PER_JOB, t);
    if ((t = policy_per_node_over(&q->max_tres_per_node, job, POLICY_OVER(p, max_tres_per_node))))
        return policy_tres_reason(true, POL_PER_NODE, t);
    *never = false;
    if ((t = policy_tres_over(&q->max_tres_pu, policy_tres(p->user), job,
                              POLICY_OVER(p, max_tres_pu))))
        return policy_tres_reason(true, POL_PER_USER, t);
    if ((t = policy_tres_over(&q->max_tres_pa, policy_tres(p->acct), job,
                              POLICY_OVER(p, max_tres_pa))))
        return policy_tres_reason(true, POL_PER_ACCT, t);
    return NULL;
}

static const char *policy_assoc_max(const policy_ctx_t *x, const ctld_assoc_t *a, bool *never)
{
    const ctld_tres_t *job = x->in->job;
    const char *t;
    *never = true;
    if ((t = policy_tres_over(&a->max_tres_mins, NULL, &x->job_mins, x->over[POL_O_MAX_MINS])))
        return policy_mins_reason(false, POL_MAX_MINS, t);
    if ((t = policy_tres_over(&a->max_tres, NULL, job, x->over[POL_O_MAX])))
        return policy_tres_reason(false, POL_PER_JOB, t);
    if ((t = policy_per_node_over(&a->max_tres_per_node, job, x->over[POL_O_PER_NODE])))
        return policy_tres_reason(false, POL_PER_NODE, t);
    *never = false;
    return NULL;
}

static const char *policy_assoc_tres(const policy_ctx_t *x, bool *never)
{
    const ctld_policy_in_t *in = x->in;
    const ctld_assoc_t *a = in->assoc;
    for (int depth = 0; a && depth < 256; a = a->parent, depth++) {
        const ctld_policy_use_t *u = policy_assoc_use(in, a);
        const char *t;
        if ((t = policy_mins_over(&a->grp_tres_mins, u, &x->job_mins, x->over[POL_O_GRP_MINS],
                                  in->safe)))
            return policy_mins_reason(false, POL_GRP_MINS, t);
        if ((t = policy_tres_over(&a->grp_tres, policy_tres(u), in->job, x->over[POL_O_GRP])))
            return policy_tres_reason(false, POL_GRP, t);
        t = policy_run_mins_over(&a->grp_tres_run_mins, u, &x->job_mins, x->over[POL_O_RUN_MINS]);
        if (t)
            return policy_mins_reason(false, POL_RUN_MINS, t);
        if (depth == 0 && (t = policy_assoc_max(x, a, never)))
            return t;
    }
    return NULL;
}

void ctld_policy_qos_order(const ctld_qos_t *job_qos, const ctld_qos_t *part_qos,
                           const ctld_qos_t **first, const ctld_qos_t **second)
{
    bool job_first = !part_qos || (job_qos && (job_qos->flags & CTLD_QOS_OVER_PART_QOS));
    *first = job_first ? job_qos : part_qos;
    *second = job_first ? part_qos : job_qos;
    if (!*first || *first == *second) {
        *first = *first ? *first : *second;
        *second = NULL;
    }
}

/* The union of two QOS's limits at off (names only matter: "set"). */
static void policy_union_q(const ctld_qos_t *q1, const ctld_qos_t *q2, size_t off, ctld_tres_t *out)
{
    *out = (ctld_tres_t){0};
    const ctld_tres_t *ts[2] = {policy_o(q1, off), policy_o(q2, off)};
    for (size_t k = 0; k < 2; k++)
        for (size_t i = 0; ts[k] && i < ts[k]->n; i++)
            if (ctld_tres_get(out, ts[k]->it[i].name) < 0)
                ctld_tres_add(out, ts[k]->it[i].name, ts[k]->it[i].v);
}

static void policy_ctx_init(policy_ctx_t *x, const ctld_policy_in_t *in)
{
    *x = (policy_ctx_t){.in = in};
    if (in->qos)
        x->qs[x->nq++] =
            (policy_q_t){in->qos, NULL, in->qos_use, in->qos_user_use, in->qos_acct_use};
    if (in->qos2 && in->qos2 != in->qos)
        x->qs[x->nq++] =
            (policy_q_t){in->qos2, in->qos, in->qos2_use, in->qos2_user_use, in->qos2_acct_use};
    int64_t mins = in->time_limit < 0 ? INT64_MAX : in->time_limit;
    for (size_t i = 0; in->job && i < in->job->n; i++)
        ctld_tres_add(&x->job_mins, in->job->it[i].name, policy_sat_mul(in->job->it[i].v, mins));
    static const size_t offs[] = {
        offsetof(ctld_qos_t, grp_tres),          offsetof(ctld_qos_t, max_tres),
        offsetof(ctld_qos_t, max_tres_per_node), offsetof(ctld_qos_t, grp_tres_mins),
        offsetof(ctld_qos_t, grp_tres_run_mins), offsetof(ctld_qos_t, max_tres_mins)};
    static const ctld_tres_t none;
    for (size_t k = 0; k < sizeof(offs) / sizeof(offs[0]); k++) {
        x->over[k] = x->nq ? policy_o(x->qs[0].q, offs[k]) : &none;
        if (x->nq == 2) {
            policy_union_q(x->qs[0].q, x->qs[1].q, offs[k], &x->over_buf[k]);
            x->over[k] = &x->over_buf[k];
        }
    }
}

const char *ctld_policy_check(const ctld_policy_in_t *in, bool *never)
{
    *never = false;
    policy_ctx_t x;
    policy_ctx_init(&x, in);
    const char *why = NULL;
    for (size_t k = 0; !why && k < x.nq; k++)
        why = policy_qos_pre(&x, &x.qs[k], never);
    if (!why && in->assoc)
        why = policy_assoc_pre(&x, never);
    for (size_t k = 0; !why && k < x.nq; k++)
        why = policy_qos_tres(&x, &x.qs[k], never);
    if (!why && in->assoc)
        why = policy_assoc_tres(&x, never);
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
    int64_t now;
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

/* Count a job of these TRES that may run `secs` more seconds (its TRES-seconds to come). */
static void policy_use_add(ctld_policy_use_t *e, const ctld_tres_t *tres, int64_t secs)
{
    e->jobs++;
    for (size_t i = 0; tres && i < tres->n; i++) {
        ctld_tres_add(&e->tres, tres->it[i].name, tres->it[i].v);
        int64_t have = policy_pos(ctld_tres_get(&e->run_secs, tres->it[i].name));
        int64_t add = policy_sat_add(have, policy_sat_mul(tres->it[i].v, secs)) - have;
        ctld_tres_add(&e->run_secs, tres->it[i].name, add);
    }
}

static void policy_usage_qos(policy_usage_t *u, const ctld_qos_t *q, const ctld_job_t *job,
                             const ctld_tres_t *tres, int64_t secs)
{
    if (!q)
        return;
    policy_use_add(policy_slot(&u->qos[q->idx]), tres, secs);
    policy_use_add(policy_keyed(u, 'u', q, job->user, true), tres, secs);
    policy_use_add(policy_keyed(u, 'a', q, job->account, true), tres, secs);
}

/* Count one job (tres NULL: a job only, for submit limits) in its
 * association's subtree and in both its QOS. */
static void policy_usage_add(policy_usage_t *u, const ctld_assoc_t *a, const ctld_qos_t *const *qs,
                             const ctld_job_t *job, const ctld_tres_t *tres, int64_t secs)
{
    for (int depth = 0; a && depth < 256; a = a->parent, depth++)
        policy_use_add(policy_slot(&u->assoc[a->idx]), tres, secs);
    policy_usage_qos(u, qs[0], job, tres, secs);
    policy_usage_qos(u, qs[1], job, tres, secs);
}

static const ctld_assoc_t *policy_assoc_of(const ctld_assoc_tree_t *t, const ctld_job_t *job)
{
    return ctld_assoc_find(t, job->user, job->account, job->part ? job->part->cfg->name : NULL);
}

/* The job's QOS and its partition's, in the order their limits apply. */
static void policy_qos_pair(const ctld_assoc_tree_t *t, const ctld_job_t *job,
                            const ctld_qos_t *qs[2])
{
    const char *pq = job->part ? job->part->cfg->qos : NULL;
    const ctld_qos_t *jq = job->qos && *job->qos ? ctld_assoc_qos(t, job->qos) : NULL;
    ctld_policy_qos_order(jq, pq && *pq ? ctld_assoc_qos(t, pq) : NULL, &qs[0], &qs[1]);
}

static void policy_usage_init(policy_usage_t *u, const ctld_assoc_tree_t *t)
{
    *u = (policy_usage_t){.t = t, .now = ctld_now()};
    u->assoc = loom_xcalloc(t->nassocs + 1, sizeof(*u->assoc));
    u->qos = loom_xcalloc(t->nqos + 1, sizeof(*u->qos));
    u->map = json_object();
}

/* Seconds a job may run from `from` to its time limit (INT64_MAX: none). */
static int64_t policy_secs_left(const ctld_job_t *job, int64_t from, int64_t now)
{
    if (job->time_limit < 0)
        return INT64_MAX;
    int64_t end = policy_sat_add(from, policy_sat_mul(job->time_limit, 60));
    return end > now ? end - now : 0;
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
        const ctld_qos_t *qs[2];
        policy_qos_pair(u->t, job, qs);
        int64_t start = job->start_time > 0 ? job->start_time : u->now;
        policy_usage_add(u, policy_assoc_of(u->t, job), qs, job, &tres,
                         policy_secs_left(job, start, u->now));
    }
}

static void policy_use_usage(ctld_policy_use_t *e, const ctld_tres_t *secs, int64_t wall)
{
    for (size_t i = 0; i < secs->n; i++) {
        int64_t have = policy_pos(ctld_tres_get(&e->used_secs, secs->it[i].name));
        int64_t add = policy_sat_add(have, secs->it[i].v) - have;
        ctld_tres_add(&e->used_secs, secs->it[i].name, add);
    }
    e->wall_secs = policy_sat_add(e->wall_secs, wall);
}

/* A scope's decayed usage (ctld_fairshare_usage_f): an association's adds
 * to its whole chain of parents, as its Grp limits count the subtree. */
static void policy_usage_fs(void *arg, const char *assoc_key, const char *qos,
                            const ctld_tres_t *secs, int64_t wall)
{
    policy_usage_t *u = arg;
    if (qos) {
        const ctld_qos_t *q = ctld_assoc_qos(u->t, qos);
        if (q)
            policy_use_usage(policy_slot(&u->qos[q->idx]), secs, wall);
        return;
    }
    json_t *v = json_object_get(u->t->index, assoc_key);
    if (!json_is_integer(v) || (size_t)json_integer_value(v) >= u->t->nassocs)
        return;
    const ctld_assoc_t *a = u->t->assocs[json_integer_value(v)];
    for (int depth = 0; a && depth < 256; a = a->parent, depth++)
        policy_use_usage(policy_slot(&u->assoc[a->idx]), secs, wall);
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
                          const ctld_qos_t *const *qs, const ctld_tres_t *tres,
                          ctld_policy_in_t *in)
{
    *in = (ctld_policy_in_t){.qos = qs[0],
                             .qos2 = qs[1],
                             .assoc = a,
                             .assoc_use = (const ctld_policy_use_t *const *)u->assoc,
                             .job = tres,
                             .time_limit = job->time_limit,
                             .safe = (u->enforce & LOOM_ENFORCE_SAFE) != 0};
    if (qs[0]) {
        in->qos_use = u->qos[qs[0]->idx];
        in->qos_user_use = policy_keyed(u, 'u', qs[0], job->user, false);
        in->qos_acct_use = policy_keyed(u, 'a', qs[0], job->account, false);
    }
    if (qs[1]) {
        in->qos2_use = u->qos[qs[1]->idx];
        in->qos2_user_use = policy_keyed(u, 'u', qs[1], job->user, false);
        in->qos2_acct_use = policy_keyed(u, 'a', qs[1], job->account, false);
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
    const ctld_qos_t *qs[2];
    policy_qos_pair(u->t, job, qs);
    const ctld_qos_t *jq = ctld_assoc_qos(u->t, job->qos);
    ctld_tres_t tres;
    ctld_policy_job_tres(job, &tres);
    ctld_policy_in_t in;
    policy_in_for(u, job, a, qs, &tres, &in);
    bool never;
    /* Its association or QOS was removed since it was submitted: it waits,
     * as on Slurm, until they exist again (or it is updated). */
    const char *why = !a                                       ? "InvalidAccount"
                      : (u->enforce & LOOM_ENFORCE_QOS) && !jq ? "InvalidQOS"
                      : (u->enforce & LOOM_ENFORCE_LIMITS)     ? ctld_policy_check(&in, &never)
                                                               : NULL;
    if (why) {
        if (set_reason)
            ctld_job_set_reason(job, why);
        return false;
    }
    policy_usage_add(u, a, qs, job, &tres, policy_secs_left(job, u->now, u->now));
    return true;
}

size_t ctld_policy_filter(ctld_t *c, loom_sched_job_t *v, size_t n, size_t nslots, bool set_reason)
{
    if (!n || !policy_filter_on(c))
        return n;
    policy_usage_t u;
    policy_usage_init(&u, ctld_assoc_tree(c));
    u.enforce = c->conf->accounting_storage_enforce;
    if (!u.t->run_limits) {
        u.enforce &= ~(unsigned)LOOM_ENFORCE_LIMITS; /* nothing to count */
    } else if (u.enforce & LOOM_ENFORCE_LIMITS) {
        policy_usage_running(&u, c);
        if (u.t->usage_limits)
            ctld_fairshare_usage_each(c, policy_usage_fs, &u);
    }
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

/* ---- running jobs timed out by a usage limit ---------------------------------------------- */

struct ctld_policy_usage {
    policy_usage_t u;
};

/* Is any MaxTRESMins, GrpTRESMins or GrpWall set? */
static bool policy_any_timeout_limit(const ctld_assoc_tree_t *t)
{
    if (t->usage_limits)
        return true;
    for (size_t i = 0; i < t->nqos; i++)
        if (t->qos[i].max_tres_mins.n)
            return true;
    for (size_t i = 0; i < t->nassocs; i++)
        if (t->assocs[i]->max_tres_mins.n)
            return true;
    return false;
}

ctld_policy_usage_t *ctld_policy_usage_new(ctld_t *c, int64_t now)
{
    const ctld_assoc_tree_t *t = ctld_assoc_tree(c);
    unsigned enf = c->conf->accounting_storage_enforce;
    if (!t || !(enf & LOOM_ENFORCE_LIMITS) || (enf & LOOM_ENFORCE_SAFE) ||
        !policy_any_timeout_limit(t))
        return NULL;
    ctld_policy_usage_t *pu = loom_xcalloc(1, sizeof(*pu));
    policy_usage_init(&pu->u, t);
    pu->u.now = now;
    pu->u.enforce = enf;
    if (t->usage_limits)
        ctld_fairshare_usage_each(c, policy_usage_fs, &pu->u);
    return pu;
}

void ctld_policy_usage_free(ctld_policy_usage_t *pu)
{
    if (!pu)
        return;
    policy_usage_free(&pu->u);
    free(pu);
}

/* The first TRES of lim that usage (minutes) reached; skip those in over. */
static const char *policy_reached(const ctld_tres_t *lim, const ctld_tres_t *mins,
                                  const ctld_tres_t *over)
{
    for (size_t i = 0; i < lim->n; i++)
        if (!policy_taken(over, lim->it[i].name) &&
            policy_pos(ctld_tres_get(mins, lim->it[i].name)) >= lim->it[i].v)
            return lim->it[i].name;
    return NULL;
}

static void policy_used_mins(const ctld_policy_use_t *u, ctld_tres_t *out)
{
    *out = (ctld_tres_t){0};
    for (size_t i = 0; u && i < u->used_secs.n; i++)
        ctld_tres_add(out, u->used_secs.it[i].name, policy_pos(u->used_secs.it[i].v) / 60);
}

/* One QOS's limits, as slurmctld's _qos_job_time_out; o: the QOS before it. */
static const char *policy_qos_time_out(const ctld_qos_t *q, const ctld_qos_t *o,
                                       const ctld_policy_use_t *use, const ctld_tres_t *job_mins)
{
    ctld_tres_t used;
    policy_used_mins(use, &used);
    if (policy_reached(&q->grp_tres_mins, &used, policy_o(o, offsetof(ctld_qos_t, grp_tres_mins))))
        return "GrpTRESMins";
    if (q->grp_wall >= 0 && POLICY_OPEN(o, grp_wall) &&
        (use ? policy_pos(use->wall_secs) / 60 : 0) >= q->grp_wall)
        return "GrpWall";
    if (policy_reached(&q->max_tres_mins, job_mins,
                       policy_o(o, offsetof(ctld_qos_t, max_tres_mins))))
        return "MaxTRESMins";
    return NULL;
}

/* The associations' limits: up the tree, the root's excepted (as slurmctld). */
static const char *policy_assoc_time_out(const ctld_assoc_t *a, const ctld_qos_t *const *qs,
                                         const policy_usage_t *u, const ctld_tres_t *job_mins)
{
    ctld_tres_t over_grp, over_max, used;
    policy_union_q(qs[0], qs[1], offsetof(ctld_qos_t, grp_tres_mins), &over_grp);
    policy_union_q(qs[0], qs[1], offsetof(ctld_qos_t, max_tres_mins), &over_max);
    bool qos_wall = (qs[0] && qs[0]->grp_wall >= 0) || (qs[1] && qs[1]->grp_wall >= 0);
    for (int depth = 0; a && a->parent && depth < 256; a = a->parent, depth++) {
        const ctld_policy_use_t *use = u->assoc[a->idx];
        policy_used_mins(use, &used);
        if (policy_reached(&a->grp_tres_mins, &used, &over_grp))
            return "GrpTRESMins";
        if (!qos_wall && a->grp_wall >= 0 &&
            (use ? policy_pos(use->wall_secs) / 60 : 0) >= a->grp_wall)
            return "GrpWall";
        if (depth == 0 && policy_reached(&a->max_tres_mins, job_mins, &over_max))
            return "MaxTRESMins";
    }
    return NULL;
}

const char *ctld_policy_time_out(ctld_policy_usage_t *pu, const ctld_job_t *job, int64_t now)
{
    if (!pu || loom_job_base(job->state) != LOOM_JOB_RUNNING || job->start_time <= 0)
        return NULL;
    policy_usage_t *u = &pu->u;
    const ctld_qos_t *qs[2];
    policy_qos_pair(u->t, job, qs);
    ctld_tres_t tres, job_mins = {0};
    ctld_policy_job_tres(job, &tres);
    int64_t elapsed = now > job->start_time ? (now - job->start_time) / 60 : 0;
    for (size_t i = 0; i < tres.n; i++)
        ctld_tres_add(&job_mins, tres.it[i].name, policy_sat_mul(tres.it[i].v, elapsed));
    const char *why = NULL;
    for (size_t k = 0; !why && k < 2; k++)
        if (qs[k])
            why = policy_qos_time_out(qs[k], k ? qs[0] : NULL, u->qos[qs[k]->idx], &job_mins);
    if (!why)
        why = policy_assoc_time_out(policy_assoc_of(u->t, job), qs, u, &job_mins);
    return why;
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
    const ctld_qos_t *qs[2];      /* the QOS pair, as policy_qos_pair orders them */
    const ctld_assoc_t **by_part; /* the submitter's association in each partition */
    int64_t assoc, qos[2], qos_user[2], qos_acct[2], grp[POLICY_GRP_MAX];
    const ctld_assoc_t *grp_assoc[POLICY_GRP_MAX];
    size_t ngrp;
} policy_submit_t;

static bool policy_same(const char *x, const char *y)
{
    return x && y && strcmp(x, y) == 0;
}

/* Does a job count in q: its own QOS or its partition's? */
static bool policy_in_qos(const ctld_job_t *job, const ctld_qos_t *q)
{
    const char *pq = job->part ? job->part->cfg->qos : NULL;
    return (job->qos && strcasecmp(job->qos, q->name) == 0) || (pq && strcasecmp(pq, q->name) == 0);
}

static void policy_count_one(const ctld_assoc_tree_t *t, policy_submit_t *n, const ctld_job_t *job)
{
    int64_t k = policy_task_count(job);
    bool user = policy_same(job->user, n->job->user);
    bool acct = policy_same(job->account, n->job->account);
    for (size_t i = 0; i < 2; i++) {
        if (!n->qs[i] || !policy_in_qos(job, n->qs[i]))
            continue;
        n->qos[i] += k;
        n->qos_user[i] += user ? k : 0;
        n->qos_acct[i] += acct ? k : 0;
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

/* No QOS of the submission sets GrpSubmitJobs (or, max_submit, MaxSubmitJobsPerUser). */
static bool policy_submit_open(const policy_submit_t *n, bool max_submit)
{
    for (size_t i = 0; i < 2; i++)
        if (n->qs[i] && (max_submit ? n->qs[i]->max_submit_pu : n->qs[i]->grp_submit_jobs) >= 0)
            return false;
    return true;
}

static void policy_count_submits(const ctld_t *c, policy_submit_t *n)
{
    const ctld_assoc_tree_t *t = ctld_assoc_tree(c);
    n->by_part = loom_xcalloc(c->nparts + 1, sizeof(*n->by_part));
    for (size_t i = 0; i < c->nparts; i++)
        n->by_part[i] = ctld_assoc_find(t, n->job->user, n->job->account, c->parts[i].cfg->name);
    for (const ctld_assoc_t *a = n->a; a && n->ngrp < POLICY_GRP_MAX; a = a->parent)
        if (a->grp_submit_jobs >= 0 && policy_submit_open(n, false))
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

/* One QOS's submit limits; o: the QOS before it, whose limits win. */
static const char *policy_submit_qos(const policy_submit_t *n, size_t i, int64_t add)
{
    const ctld_qos_t *q = n->qs[i], *o = i ? n->qs[0] : NULL;
    if (!q)
        return NULL;
    if (q->grp_submit_jobs >= 0 && POLICY_OPEN(o, grp_submit_jobs) &&
        n->qos[i] + add > q->grp_submit_jobs)
        return "QOSGrpSubmitJobsLimit";
    if (q->max_submit_pu >= 0 && POLICY_OPEN(o, max_submit_pu) &&
        n->qos_user[i] + add > q->max_submit_pu)
        return "QOSMaxSubmitJobPerUserLimit";
    if (q->max_submit_pa >= 0 && POLICY_OPEN(o, max_submit_pa) &&
        n->qos_acct[i] + add > q->max_submit_pa)
        return "MaxSubmitJobsPerAccount";
    return NULL;
}

static const char *policy_submit_over(const policy_submit_t *n, int64_t add)
{
    const char *why = policy_submit_qos(n, 0, add);
    why = why ? why : policy_submit_qos(n, 1, add);
    if (why)
        return why;
    if (n->a->max_submit_jobs >= 0 && policy_submit_open(n, true) &&
        n->assoc + add > n->a->max_submit_jobs)
        return "AssocMaxSubmitJobLimit";
    for (size_t g = 0; g < n->ngrp; g++)
        if (n->grp[g] + add > n->grp_assoc[g]->grp_submit_jobs)
            return "AssocGrpSubmitJobsLimit";
    return NULL;
}

/* The least of cur and lim (-1: none). */
static int64_t policy_least(int64_t cur, int64_t lim)
{
    return lim < 0 ? cur : (cur < 0 || cur > lim) ? lim : cur;
}

/* The least of cur and the longest time (minutes) lim lets a job of these
 * TRES run (slurmctld's time limit from a TRES-minutes limit). */
static int64_t policy_mins_time(const ctld_tres_t *lim, const ctld_tres_t *job,
                                const ctld_tres_t *over, int64_t cur)
{
    for (size_t i = 0; i < lim->n; i++) {
        int64_t want = ctld_tres_get(job, lim->it[i].name);
        if (want > 0 && !policy_taken(over, lim->it[i].name))
            cur = policy_least(cur, lim->it[i].v / want);
    }
    return cur;
}

/* Under strict checking: what the QOS and the associations' TRES-minutes limits allow. */
static int64_t policy_strict_time(const ctld_assoc_t *a, const ctld_qos_t *const *qs,
                                  const ctld_tres_t *tres, int64_t t)
{
    static const size_t offs[] = {offsetof(ctld_qos_t, max_tres_mins),
                                  offsetof(ctld_qos_t, grp_tres_mins),
                                  offsetof(ctld_qos_t, grp_tres_run_mins)};
    ctld_tres_t over[3];
    for (size_t k = 0; k < 3; k++) {
        if (qs[0])
            t = policy_mins_time(policy_o(qs[0], offs[k]), tres, NULL, t);
        if (qs[1])
            t = policy_mins_time(policy_o(qs[1], offs[k]), tres, policy_o(qs[0], offs[k]), t);
        policy_union_q(qs[0], qs[1], offs[k], &over[k]);
    }
    t = policy_mins_time(&a->max_tres_mins, tres, &over[0], t);
    for (const ctld_assoc_t *p = a; p; p = p->parent) {
        t = policy_mins_time(&p->grp_tres_mins, tres, &over[1], t);
        t = policy_mins_time(&p->grp_tres_run_mins, tres, &over[2], t);
    }
    return t;
}

/* A job without a time limit of its own gets the least MaxWall and GrpWall
 * in force (the first QOS's, else the second's, else the associations')
 * and, under strict checking, no more than its TRES-minutes limits allow. */
static void policy_default_time(ctld_job_t *job, const ctld_assoc_t *a, const ctld_qos_t *const *qs,
                                bool strict)
{
    if (json_object_get(job->desc, "time_limit") || json_object_get(job->desc, "time"))
        return;
    int64_t max_wall = -1, grp_wall = -1;
    for (size_t k = 0; k < 2; k++) {
        max_wall = qs[k] && max_wall < 0 ? qs[k]->max_wall : max_wall;
        grp_wall = qs[k] && grp_wall < 0 ? qs[k]->grp_wall : grp_wall;
    }
    int64_t t = policy_least(policy_least(-1, max_wall), grp_wall);
    if (max_wall < 0)
        t = policy_least(t, a->max_wall);
    for (const ctld_assoc_t *p = a; grp_wall < 0 && p; p = p->parent)
        t = policy_least(t, p->grp_wall);
    if (strict) {
        ctld_tres_t tres;
        ctld_policy_job_tres(job, &tres);
        t = policy_strict_time(a, qs, &tres, t);
    }
    if (t >= 0 && (job->time_limit < 0 || job->time_limit > t))
        job->time_limit = t;
}

/* The job alone against every limit (usage empty), as slurmctld's submit
 * check does when a QOS has DenyOnLimit; TRES-minutes and GrpWall as with
 * "safe": its time limit must fit them. */
static const char *policy_strict_check(const ctld_assoc_tree_t *t, ctld_job_t *job,
                                       const ctld_assoc_t *a, const ctld_qos_t *const *qs)
{
    ctld_tres_t tres;
    ctld_policy_job_tres(job, &tres);
    policy_usage_t u;
    policy_usage_init(&u, t);
    u.enforce = LOOM_ENFORCE_SAFE;
    ctld_policy_in_t in;
    policy_in_for(&u, job, a, qs, &tres, &in);
    bool never = false;
    const char *why = ctld_policy_check(&in, &never);
    policy_usage_free(&u);
    return why;
}

static int policy_limits(ctld_t *c, ctld_job_t *job, const ctld_assoc_t *a, loom_err_t *err)
{
    const ctld_assoc_tree_t *t = ctld_assoc_tree(c);
    const ctld_qos_t *qs[2];
    policy_qos_pair(t, job, qs);
    /* slurmctld checks strictly when either QOS has DenyOnLimit, or there is none. */
    bool strict = (!qs[0] && !qs[1]);
    for (size_t k = 0; k < 2; k++)
        strict = strict || (qs[k] && (qs[k]->flags & CTLD_QOS_DENY_ON_LIMIT));
    policy_default_time(job, a, qs, strict);
    const char *why = NULL;
    if (t->submit_limits) {
        policy_submit_t n = {.job = job, .a = a, .qs = {qs[0], qs[1]}};
        policy_count_submits(c, &n);
        why = policy_submit_over(&n, policy_new_jobs(c, job));
    }
    if (!why && strict)
        why = policy_strict_check(t, job, a, qs);
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
    return (enf & LOOM_ENFORCE_LIMITS) ? policy_limits(c, job, a, err) : 0;
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

void ctld_policy_drop_unknown(ctld_t *c, const ctld_job_t *job, json_t *set)
{
    unsigned enf = c->conf->accounting_storage_enforce;
    const ctld_assoc_tree_t *t = ctld_assoc_enabled(c) ? ctld_assoc_tree(c) : NULL;
    if (!t)
        return;
    const char *qos = json_string_value(json_object_get(set, "qos"));
    if (qos && *qos && !(enf & LOOM_ENFORCE_QOS) && !ctld_assoc_qos(t, qos))
        json_object_del(set, "qos");
    const char *acct = json_string_value(json_object_get(set, "account"));
    const char *part = json_string_value(json_object_get(set, "partition"));
    if (acct && *acct && !(enf & LOOM_ENFORCE_ASSOCS) &&
        !ctld_assoc_find(t, job->user, acct, part ? part : job->part->cfg->name))
        json_object_del(set, "account");
}

double ctld_policy_qos_norm(const ctld_t *c, const ctld_job_t *job)
{
    const ctld_assoc_tree_t *t = ctld_assoc_tree(c);
    const ctld_qos_t *q = t ? ctld_assoc_qos(t, job->qos) : NULL;
    if (!q || t->max_qos_priority <= 0 || q->priority <= 0)
        return 0;
    return (double)q->priority / (double)t->max_qos_priority;
}
