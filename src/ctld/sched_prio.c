/* sched_prio.c - basic and multifactor job priorities; job.prio for sprio.
 * See sched_prio.h. */
#include "ctld/sched_prio.h"
#include "ctld/assoc_mgr.h"
#include "ctld/assoc_policy.h"
#include "common/jobstate.h"
#include "common/log.h"
#include "common/proto.h"
#include "common/xalloc.h"
#include "ctld/job_mgr.h"
#include "ctld/job_ops.h"
#include "ctld/sched_fairshare.h"
#include "ctld/sched_job.h"
#include "ctld/sched_x.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>

void ctld_sched_prio_init(ctld_t *c)
{
    ctld_sched_x_t *x = c->sched.x;
    const loom_conf_t *cf = c->conf;
    x->multifactor = cf->priority_type && strcmp(cf->priority_type, "priority/multifactor") == 0;
    loom_sched_prio_conf_t *p = &x->prio;
    *p = (loom_sched_prio_conf_t){.w_age = (uint32_t)cf->priority_weight_age,
                                  .w_assoc = (uint32_t)cf->priority_weight_assoc,
                                  .w_fairshare = (uint32_t)cf->priority_weight_fairshare,
                                  .w_job_size = (uint32_t)cf->priority_weight_job_size,
                                  .w_partition = (uint32_t)cf->priority_weight_partition,
                                  .w_qos = (uint32_t)cf->priority_weight_qos,
                                  .max_age = cf->priority_max_age,
                                  .favor_small = cf->priority_favor_small,
                                  .cluster_nodes = (uint32_t)c->nnodes};
    loom_err_t err = {0};
    if (loom_sched_prio_parse_tres(cf->priority_weight_tres, p, &err) < 0)
        loom_error("PriorityWeightTRES: %s; ignored", err.msg);
    if (loom_sched_prio_parse_flags(cf->priority_flags, &p->flags, &err) < 0)
        loom_error("PriorityFlags: %s; ignored", err.msg);
    x->calc_period = cf->priority_calc_period > 0 ? cf->priority_calc_period : 300;
    x->part_mem = loom_xcalloc(c->nparts + 1, sizeof(uint64_t));
    x->part_gpus = loom_xcalloc(c->nparts + 1, sizeof(uint64_t));
    x->part_nodes = loom_xcalloc(c->nparts + 1, sizeof(uint64_t));
    for (size_t i = 0; i < c->nnodes; i++)
        p->cluster_cpus += c->snodes[i].cpus;
    x->max_job_factor = 1;
    for (size_t k = 0; k < c->nparts; k++) {
        const loom_conf_part_t *cp = c->parts[k].cfg;
        if ((double)cp->priority_job_factor > x->max_job_factor)
            x->max_job_factor = (double)cp->priority_job_factor;
        for (size_t i = 0; i < cp->n_nodes; i++) {
            x->part_mem[k] += c->snodes[cp->node_idx[i]].mem_total;
            x->part_gpus[k] += c->snodes[cp->node_idx[i]].gpus;
        }
        x->part_nodes[k] = cp->n_nodes;
    }
    if (x->multifactor)
        x->fs = ctld_fairshare_init(c);
}

void ctld_sched_prio_fini(ctld_t *c)
{
    ctld_sched_x_t *x = c->sched.x;
    if (!x)
        return;
    ctld_fairshare_fini(c, x->fs);
    x->fs = NULL;
    free(x->part_mem);
    free(x->part_gpus);
    free(x->part_nodes);
    x->part_mem = x->part_gpus = x->part_nodes = NULL;
}

bool ctld_sched_multifactor(const ctld_t *c)
{
    return c->sched.x && c->sched.x->multifactor;
}

uint32_t ctld_sched_prio_base(ctld_t *c)
{
    return ctld_sched_multifactor(c) ? 0 : ctld_job_next_prio(c);
}

double ctld_sched_prio_fairshare(const ctld_t *c, const ctld_job_t *job)
{
    return c->sched.x ? ctld_fairshare_factor(c, c->sched.x->fs, job) : 0;
}

/* ---- the factors of one job in one partition --------------------------------------- */

/* MiB the job asks for in all (its "whole node" is the smallest node it may use). */
static uint64_t prio_job_mem(const ctld_t *c, const ctld_job_t *job)
{
    if (job->mem_per_node)
        return job->mem_per_node * job->min_nodes;
    if (job->mem_per_cpu)
        return job->mem_per_cpu * job->min_cpus;
    uint64_t m = 0;
    for (size_t i = 0; i < c->nnodes; i++)
        if (job->allowed && job->allowed[i] && (!m || c->snodes[i].mem_total < m))
            m = c->snodes[i].mem_total;
    return m * job->min_nodes;
}

static uint64_t prio_job_gpus(const ctld_job_t *job)
{
    uint64_t g = loom_gres_count(&job->gres_list, "gpu") * job->min_nodes;
    g += loom_gres_count(&job->gpus_list, "gpu");
    return g;
}

static double prio_ratio(double a, double b)
{
    return b > 0 ? a / b : 0;
}

/* When the job started to age: not while held, dependent or before its begin
 * time; with PriorityFlags=ACCRUE_ALWAYS from its submission whatever holds it. */
static int64_t prio_eligible(const ctld_t *c, const ctld_job_t *job)
{
    if (c->sched.x->prio.flags & LOOM_PRIO_ACCRUE_ALWAYS)
        return job->submit_time;
    if (job->hold || !strcmp(job->reason, "Dependency") || !strcmp(job->reason, "BeginTime") ||
        !strcmp(job->reason, "JobHeldUser") || !strcmp(job->reason, "JobHeldAdmin"))
        return 0;
    int64_t t = job->eligible_time ? job->eligible_time : job->submit_time;
    return job->begin_time > t ? job->begin_time : t;
}

/* What PriorityFlags SMALL_RELATIVE_TO_TIME and NO_NORMAL_* use. */
static void prio_raw_inputs(const ctld_t *c, const ctld_job_t *job, const ctld_part_t *p,
                            loom_sched_prio_job_t *in)
{
    const ctld_sched_x_t *x = c->sched.x;
    in->time_limit = job->time_limit > 0 ? job->time_limit : 0;
    in->part_raw = (double)p->cfg->priority_job_factor;
    const ctld_assoc_tree_t *t = ctld_assoc_tree(c);
    const ctld_qos_t *q = t && job->qos ? ctld_assoc_qos(t, job->qos) : NULL;
    in->qos_raw = q && q->priority > 0 ? (double)q->priority : 0;
    for (size_t i = 0; i < x->prio.ntres; i++) {
        const char *n = x->prio.tres[i].name;
        if (!strcmp(n, "cpu") || !strcmp(n, "billing"))
            in->tres_raw[i] = (double)job->min_cpus;
        else if (!strcmp(n, "mem"))
            in->tres_raw[i] = (double)prio_job_mem(c, job);
        else if (!strcmp(n, "node"))
            in->tres_raw[i] = job->min_nodes;
        else if (!strncmp(n, "gres/gpu", 8))
            in->tres_raw[i] = (double)prio_job_gpus(job);
    }
}

static void prio_inputs(const ctld_t *c, const ctld_job_t *job, const ctld_part_t *p, int64_t now,
                        loom_sched_prio_job_t *in)
{
    const ctld_sched_x_t *x = c->sched.x;
    *in = (loom_sched_prio_job_t){.now = now,
                                  .eligible_time = prio_eligible(c, job),
                                  .min_nodes = job->min_nodes,
                                  .cpus = job->min_cpus,
                                  .part_norm =
                                      (double)p->cfg->priority_job_factor / x->max_job_factor,
                                  .fairshare = ctld_sched_prio_fairshare(c, job),
                                  .qos_norm = ctld_policy_qos_norm(c, job),
                                  .site = job->site_factor,
                                  .nice = job->nice};
    prio_raw_inputs(c, job, p, in);
    for (size_t i = 0; i < x->prio.ntres; i++) {
        const char *t = x->prio.tres[i].name;
        double v = 0;
        if (!strcmp(t, "cpu") || !strcmp(t, "billing"))
            v = prio_ratio(job->min_cpus, (double)p->total_cpus);
        else if (!strcmp(t, "mem"))
            v = prio_ratio((double)prio_job_mem(c, job), (double)x->part_mem[p->idx]);
        else if (!strcmp(t, "node"))
            v = prio_ratio(job->min_nodes, (double)x->part_nodes[p->idx]);
        else if (!strncmp(t, "gres/gpu", 8))
            v = prio_ratio((double)prio_job_gpus(job), (double)x->part_gpus[p->idx]);
        in->tres_norm[i] = v;
    }
}

static void prio_factors(const ctld_t *c, const ctld_job_t *job, const ctld_part_t *p, int64_t now,
                         loom_sched_prio_factors_t *f)
{
    loom_sched_prio_job_t in;
    prio_inputs(c, job, p, now, &in);
    loom_sched_prio_compute(&c->sched.x->prio, &in, f);
}

uint32_t ctld_sched_initial_prio(ctld_t *c, ctld_job_t *job, int64_t now)
{
    if (!ctld_sched_multifactor(c) || job->prio_base)
        return job->prio_base;
    loom_sched_prio_factors_t f;
    prio_factors(c, job, job->part, now, &f);
    return f.priority;
}

void ctld_sched_prio_update(ctld_t *c, ctld_job_t *job, int64_t now)
{
    ctld_sched_job_t *sx = job->sx;
    if (!ctld_sched_multifactor(c) || !sx || job->priority == 0)
        return;
    bool due = !sx->prio_time || now - sx->prio_time >= c->sched.x->calc_period ||
               job->priority != sx->prio_seen || job->nice != sx->nice_seen ||
               job->site_factor != sx->site_seen;
    if (!due)
        return;
    bool incr_only = c->sched.x->prio.flags & LOOM_PRIO_INCR_ONLY;
    for (size_t k = 0; k < sx->nparts; k++) {
        loom_sched_prio_factors_t f;
        prio_factors(c, job, sx->parts[k], now, &f);
        uint32_t p = job->prio_base ? job->prio_base : f.priority;
        /* INCR_ONLY: a priority never goes down (a higher nice, a used share);
         * the job's own outlives a rebuilt request (sjob_parts) */
        uint32_t was = k == 0 && job->priority > sx->pprio[k] ? job->priority : sx->pprio[k];
        sx->pprio[k] = incr_only && !job->prio_base && was > p ? was : p;
    }
    sx->prio_time = now;
    sx->nice_seen = job->nice;
    sx->site_seen = job->site_factor;
    if (sx->nparts && job->priority != sx->pprio[0]) {
        job->priority = sx->pprio[0];
        ctld_job_touch(job);
    }
    sx->prio_seen = job->priority;
}

uint32_t ctld_sched_prio_of(const ctld_job_t *job, size_t k)
{
    if (!job->sx || k >= job->sx->nparts || !job->sx->pprio || !job->sx->pprio[k] || job->prio_base)
        return job->priority;
    return job->sx->pprio[k];
}

/* ---- job.prio ---------------------------------------------------------------------- */

static bool prio_listed(const json_t *list, const char *s, json_int_t n)
{
    if (!json_is_array(list) || !json_array_size(list))
        return true;
    size_t i;
    json_t *v;
    json_array_foreach(list, i, v)
    {
        if ((json_is_string(v) && s && !strcmp(json_string_value(v), s)) ||
            (json_is_integer(v) && json_integer_value(v) == n))
            return true;
    }
    return false;
}

static json_t *prio_entry(const ctld_t *c, const ctld_job_t *job, size_t k, int64_t now)
{
    const ctld_part_t *p = job->sx && k < job->sx->nparts ? job->sx->parts[k] : job->part;
    loom_sched_prio_factors_t f;
    prio_factors(c, job, p, now, &f);
    json_t *tres = json_array();
    for (size_t i = 0; i < f.ntres; i++)
        json_array_append_new(tres, json_pack("{s:s, s:f}", "name", c->sched.x->prio.tres[i].name,
                                              "norm", f.tres[i]));
    return json_pack("{s:I, s:s, s:s, s:I, s:I, s:f, s:f, s:f, s:f, s:f, s:f, s:i, s:o}", "job_id",
                     (json_int_t)job->id, "user_name", job->user ? job->user : "", "partition",
                     p->cfg->name, "priority", (json_int_t)ctld_sched_prio_of(job, k), "site",
                     (json_int_t)job->site_factor, "age", f.age, "assoc", f.assoc, "fairshare",
                     f.fairshare, "job_size", f.job_size, "part", f.partition, "qos", f.qos, "nice",
                     job->nice, "tres", tres);
}

/* Pending jobs that may run: not held, not waiting on a dependency or begin time. */
static bool prio_shown(const ctld_job_t *job, int64_t now)
{
    if (loom_job_base(job->state) != LOOM_JOB_PENDING || job->priority == 0 || job->hold)
        return false;
    if (job->begin_time > now || !strcmp(job->reason, "Dependency") ||
        !strcmp(job->reason, "BeginTime"))
        return false;
    return true;
}

static json_t *prio_weights(const ctld_t *c)
{
    const loom_sched_prio_conf_t *p = &c->sched.x->prio;
    loom_sbuf_t sb = LOOM_SBUF_INIT;
    for (size_t i = 0; i < p->ntres; i++)
        loom_sbuf_addf(&sb, "%s%s=%g", i ? "," : "", p->tres[i].text, p->tres[i].weight);
    json_t *tres = json_array();
    for (size_t i = 0; i < p->ntres; i++)
        json_array_append_new(
            tres, json_pack("{s:s, s:f}", "name", p->tres[i].name, "weight", p->tres[i].weight));
    json_t *w = json_pack("{s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:s, s:o}", "age",
                          (json_int_t)p->w_age, "assoc", (json_int_t)p->w_assoc, "fairshare",
                          (json_int_t)p->w_fairshare, "job_size", (json_int_t)p->w_job_size,
                          "partition", (json_int_t)p->w_partition, "qos", (json_int_t)p->w_qos,
                          "site", (json_int_t)1, "tres_text", loom_sbuf_str(&sb), "tres", tres);
    loom_sbuf_free(&sb);
    return w;
}

static int h_job_prio(ctld_t *c, const ctld_peer_t *peer, const json_t *req, json_t **reply,
                      loom_sbuf_t *raw)
{
    /* Security: priorities are visible to every user, as sprio shows them. */
    const json_t *ids = json_object_get(req, "job_ids");
    const json_t *users = json_object_get(req, "users");
    const json_t *parts = json_object_get(req, "partitions");
    int64_t now = ctld_now();
    json_t *jobs = json_array();
    for (size_t i = 0; ctld_sched_multifactor(c) && i < c->jobs_pending.n; i++) {
        const ctld_job_t *job = c->jobs_pending.v[i];
        if (!prio_shown(job, now) || !prio_listed(ids, NULL, job->id) ||
            !prio_listed(users, job->user, job->uid))
            continue;
        size_t np = job->sx && job->sx->nparts ? job->sx->nparts : 1;
        for (size_t k = 0; k < np; k++) {
            const ctld_part_t *p = job->sx && k < job->sx->nparts ? job->sx->parts[k] : job->part;
            if (prio_listed(parts, p->cfg->name, -1))
                json_array_append_new(jobs, prio_entry(c, job, k, now));
        }
    }
    *reply = loom_msg_reply(req, 0, NULL);
    json_object_set_new(*reply, "jobs", jobs);
    json_object_set_new(*reply, "weights", prio_weights(c));
    json_object_set_new(*reply, "priority_type",
                        json_string(c->conf->priority_type ? c->conf->priority_type : ""));
    return 0;
}

const ctld_handler_t ctld_sched_prio_handlers[] = {
    {"job.prio", h_job_prio},
    {"assoc.shares", ctld_fairshare_h_shares},
    {NULL, NULL},
};
