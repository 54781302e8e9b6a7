/* sched_job.c - a job's scheduling extras (GPU options, constraints,
 * OverSubscribe, several partitions, the plan). See sched_job.h. */
#include "ctld/sched_job.h"
#include "common/gres.h"
#include "common/hostlist.h"
#include "common/jobstate.h"
#include "common/xalloc.h"
#include "ctld/node_attr.h"
#include "ctld/assoc_mgr.h"
#include "ctld/job_mgr.h"

#include <grp.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define SJOB_MAX_GROUPS 256

static ctld_sched_job_t *sjob_get(ctld_job_t *job)
{
    if (!job->sx)
        job->sx = loom_xcalloc(1, sizeof(*job->sx));
    return job->sx;
}

static void sjob_free_parts(ctld_sched_job_t *sx)
{
    for (size_t k = 0; k < sx->nparts; k++)
        free(sx->pmask ? sx->pmask[k] : NULL);
    free(sx->pmask);
    free(sx->preq);
    free(sx->parts);
    free(sx->pprio);
    sx->pmask = NULL;
    sx->preq = NULL;
    sx->parts = NULL;
    sx->pprio = NULL;
    sx->nparts = 0;
}

void ctld_sched_job_free(ctld_job_t *job)
{
    ctld_sched_job_t *sx = job ? job->sx : NULL;
    if (!sx)
        return;
    sjob_free_parts(sx);
    loom_constraint_free(sx->cons);
    loom_gres_list_free(&sx->gpt_list);
    free(sx->sched_nodes);
    free(sx->policy_why);
    free(sx);
    job->sx = NULL;
}

/* ---- options from the description -------------------------------------------- */

static int64_t sjob_int(const json_t *d, const char *key)
{
    const json_t *v = json_object_get(d, key);
    if (json_is_integer(v))
        return json_integer_value(v);
    if (json_is_string(v))
        return strtoll(json_string_value(v), NULL, 10);
    return 0;
}

/* The count of "gres/gpu[:type]:N" (or "[type:]N") in a TRES-per text; 0 when none. */
static uint32_t sjob_tres_gpus(const char *s, const char **type_out, loom_gres_list_t *keep)
{
    if (!s)
        return 0;
    char buf[256];
    snprintf(buf, sizeof(buf), "%s", strncmp(s, "gres/", 5) == 0 ? s + 5 : s);
    loom_gres_list_t l = LOOM_GRES_LIST_INIT;
    int rc = strncmp(buf, "gpu", 3) == 0 ? loom_gres_parse(buf, &l, NULL)
                                         : loom_gres_parse_gpus(buf, &l, NULL);
    uint32_t n = 0;
    for (size_t i = 0; rc >= 0 && i < l.n; i++)
        if (strcmp(l.v[i].name, "gpu") == 0) {
            n = (uint32_t)l.v[i].count;
            *type_out = l.v[i].type;
        }
    loom_gres_list_free(keep);
    *keep = l; /* owns the type string */
    return n;
}

/* --gpus-per-task and --cpus-per-gpu, with DefCpuPerGPU for GPU jobs. */
static void sjob_gpus(ctld_t *c, ctld_job_t *job, const json_t *d, loom_sched_req_t *r)
{
    const char *type = NULL;
    const json_t *t = json_object_get(d, "tres_per_task");
    if (!t)
        t = json_object_get(d, "gpus_per_task");
    uint32_t gpt = sjob_tres_gpus(json_string_value(t), &type, &job->sx->gpt_list);
    if (gpt && !json_object_get(d, "tres_per_job")) {
        r->gpus_per_task = gpt;
        r->gpus_per_job = 0;
        r->gpus_type = type;
    }
    int64_t cpg = sjob_int(d, "cpus_per_gpu");
    bool gpu_job = r->gpus_per_task || r->gpus_per_job || loom_gres_count(&job->gres_list, "gpu");
    if (!cpg && gpu_job)
        cpg = job->part->cfg->def_cpu_per_gpu > 0 ? job->part->cfg->def_cpu_per_gpu
                                                  : c->conf->def_cpu_per_gpu;
    r->cpus_per_gpu = cpg > 0 && gpu_job ? (uint32_t)cpg : 0;
}

/* --mem-per-gpu, else DefMemPerGPU for a GPU job without a memory option. */
static void sjob_mem(ctld_t *c, ctld_job_t *job, const json_t *d, loom_sched_req_t *r)
{
    if (!(c->conf->select_type_parameters & LOOM_CR_MEMORY))
        return;
    bool gpu_job = r->gpus_per_task || r->gpus_per_job || loom_gres_count(&job->gres_list, "gpu");
    int64_t mpg = sjob_int(d, "memory_per_gpu");
    bool explicit = json_object_get(d, "memory_per_node") || json_object_get(d, "memory_per_cpu") ||
                    json_object_get(d, "mem") || json_object_get(d, "mem_per_cpu") ||
                    json_object_get(d, "mem_per_node");
    if (!mpg && !explicit && gpu_job)
        mpg = job->part->cfg->def_mem_per_gpu > 0 ? job->part->cfg->def_mem_per_gpu
                                                  : c->conf->def_mem_per_gpu;
    if (mpg <= 0 || !gpu_job)
        return;
    r->mem_per_gpu = (uint64_t)mpg;
    r->mem_per_node = r->mem_per_cpu = 0;
    r->mem_whole_node = false;
}

/* Partition OverSubscribe: EXCLUSIVE, FORCE[:n], YES[:n] with --oversubscribe. */
static void sjob_share(const ctld_job_t *job, const ctld_part_t *p, loom_sched_req_t *r)
{
    const loom_conf_part_t *cp = p->cfg;
    uint32_t n = cp->oversubscribe_n > 1 ? (uint32_t)cp->oversubscribe_n : 4;
    r->share_max = 0;
    if (cp->oversubscribe == LOOM_CONF_OVERSUB_EXCLUSIVE)
        r->exclusive = true;
    else if (!r->exclusive &&
             (cp->oversubscribe == LOOM_CONF_OVERSUB_FORCE ||
              (cp->oversubscribe == LOOM_CONF_OVERSUB_YES && job->sx && job->sx->oversubscribe)))
        r->share_max = n;
}

/* -C: the parsed tree when it has counts or brackets (the driver needs those). */
static bool sjob_needs_tree(const loom_constraint_t *t)
{
    if (t->count || t->bracket)
        return true;
    for (size_t i = 0; i < t->nkids; i++)
        if (sjob_needs_tree(t->kids[i]))
            return true;
    return false;
}

static void sjob_cons(ctld_job_t *job, ctld_sched_job_t *sx, loom_sched_req_t *r)
{
    loom_constraint_free(sx->cons);
    sx->cons = NULL;
    loom_constraint_t *t = NULL;
    if (job->features && loom_constraint_parse(job->features, &t, NULL) == 0 &&
        sjob_needs_tree(t)) {
        sx->cons = t;
        t = NULL;
    }
    loom_constraint_free(t);
    r->constraint = sx->cons;
}

/* ---- several partitions ---------------------------------------------------------- */

static bool sjob_in_part(const ctld_part_t *p, size_t idx)
{
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

static ctld_part_t *sjob_part(ctld_t *c, const char *name, size_t len)
{
    for (size_t i = 0; i < c->nparts; i++)
        if (strlen(c->parts[i].cfg->name) == len && !strncmp(c->parts[i].cfg->name, name, len))
            return &c->parts[i];
    return NULL;
}

/* Can the job run in p at all (state, MaxTime, node counts)? */
static bool sjob_part_ok(const ctld_job_t *job, const ctld_part_t *p)
{
    const loom_conf_part_t *cp = p->cfg;
    if (p->state != LOOM_CONF_PART_UP)
        return false;
    int64_t max = cp->max_time < 0 ? -1 : (cp->max_time + 59) / 60;
    if (max >= 0 && (job->time_limit < 0 || job->time_limit > max))
        return false;
    if (job->min_nodes > cp->n_nodes || (cp->max_nodes >= 0 && job->min_nodes > cp->max_nodes))
        return false;
    return job->min_cpus <= p->total_cpus;
}

/* The job's mask in p: partition, --exclude and -C as job_desc.c builds it. */
static bool *sjob_mask(ctld_t *c, const ctld_job_t *job, const ctld_part_t *p)
{
    bool *m = loom_xcalloc(c->nnodes + 1, sizeof(bool));
    loom_constraint_t *cons = NULL;
    if (job->features)
        loom_constraint_parse(job->features, &cons, NULL);
    loom_hostlist_t *exc = NULL;
    if (job->exc_nodes)
        loom_hostlist_parse(job->exc_nodes, &exc, NULL);
    for (size_t i = 0; i < c->nnodes; i++) {
        const loom_strv_t *f = ctld_node_features(&c->nodes[i]);
        m[i] = sjob_in_part(p, i) &&
               (!cons || loom_constraint_match_node(cons, (const char *const *)f->v, f->n) == 1) &&
               (!exc || loom_hostlist_find(exc, c->nodes[i].cfg->name) < 0);
    }
    loom_hostlist_destroy(exc);
    loom_constraint_free(cons);
    return m;
}

static void sjob_add_part(ctld_t *c, ctld_job_t *job, ctld_part_t *p)
{
    ctld_sched_job_t *sx = job->sx;
    size_t k = sx->nparts++;
    sx->parts = loom_xreallocarray(sx->parts, sx->nparts, sizeof(*sx->parts));
    sx->preq = loom_xreallocarray(sx->preq, sx->nparts, sizeof(*sx->preq));
    sx->pmask = loom_xreallocarray(sx->pmask, sx->nparts, sizeof(*sx->pmask));
    sx->parts[k] = p;
    sx->pmask[k] = NULL;
    sx->preq[k] = job->req;
    if (k == 0)
        return;
    sx->pmask[k] = sjob_mask(c, job, p);
    sx->preq[k].allowed = sx->pmask[k];
    sx->preq[k].max_nodes = job->max_nodes ? job->max_nodes : (uint32_t)p->cfg->n_nodes;
    if (sx->preq[k].max_nodes < sx->preq[k].min_nodes)
        sx->preq[k].max_nodes = sx->preq[k].min_nodes;
    sjob_share(job, p, &sx->preq[k]);
}

/* job->part first, then the other partitions the description names that
 * the job could use; a job moved to a partition it did not name has just it. */
static void sjob_parts(ctld_t *c, ctld_job_t *job, const json_t *d)
{
    ctld_sched_job_t *sx = job->sx;
    sjob_free_parts(sx);
    sjob_add_part(c, job, job->part);
    const char *list = json_string_value(json_object_get(d, "partition"));
    if (!list || !strchr(list, ','))
        goto done;
    bool named = false;
    for (const char *p = list; *p; p += strcspn(p, ",") + (p[strcspn(p, ",")] == ','))
        named |= sjob_part(c, p, strcspn(p, ",")) == job->part;
    for (const char *p = list; named && *p; p += strcspn(p, ",") + (p[strcspn(p, ",")] == ',')) {
        ctld_part_t *pt = sjob_part(c, p, strcspn(p, ","));
        if (pt && pt != job->part && sjob_part_ok(job, pt))
            sjob_add_part(c, job, pt);
    }
done:
    sx->pprio = loom_xcalloc(sx->nparts, sizeof(uint32_t));
    sx->prio_time = 0; /* priorities per partition are computed again */
}

int ctld_sched_req_extend(ctld_t *c, ctld_job_t *job, loom_err_t *err)
{
    ctld_sched_job_t *sx = sjob_get(job);
    const json_t *d = job->desc;
    loom_sched_req_t *r = &job->req;
    sx->oversubscribe = job->oversub == 'y';
    sx->deadline = job->deadline;
    sjob_gpus(c, job, d, r);
    sjob_mem(c, job, d, r);
    sjob_cons(job, sx, r);
    r->contiguous = job->contiguous;
    sjob_share(job, job->part, r);
    sjob_parts(c, job, d);
    return 0;
}

const loom_sched_req_t *ctld_sched_job_req(const ctld_job_t *job, size_t k)
{
    if (!job->sx || k == 0 || k >= job->sx->nparts)
        return &job->req;
    return &job->sx->preq[k];
}

/* ---- submission checks ------------------------------------------------------------ */

static bool sjob_list_all(const loom_strv_t *l)
{
    return l->n == 0 || (l->n == 1 && strcasecmp(l->v[0], "ALL") == 0);
}

static bool sjob_in_groups(const ctld_job_t *job, const loom_strv_t *allowed)
{
    gid_t groups[SJOB_MAX_GROUPS];
    int n = SJOB_MAX_GROUPS;
    if (!job->user || getgrouplist(job->user, job->gid, groups, &n) < 0)
        n = 0;
    if (n == 0) {
        groups[0] = job->gid;
        n = 1;
    }
    for (int i = 0; i < n; i++) {
        char buf[1024];
        struct group gr, *res = NULL;
        if (getgrgid_r(groups[i], &gr, buf, sizeof(buf), &res) == 0 && res &&
            loom_strv_find(allowed, res->gr_name) >= 0)
            return true;
    }
    return false;
}

int ctld_sched_check_submit(ctld_t *c, const ctld_job_t *job, loom_err_t *err)
{
    const loom_conf_part_t *p = job->part->cfg;
    if (job->uid == 0 || ctld_is_admin(c, job->uid))
        return 0;
    if (!sjob_list_all(&p->allow_groups) && !sjob_in_groups(job, &p->allow_groups))
        return loom_errf(err, -LOOM_EPART_GROUP, "%s", loom_strerror(-LOOM_EPART_GROUP));
    return 0;
}

/* "a,b" of a partition's list, into a fixed buffer. */
static const char *sjob_joined(const loom_strv_t *l, char *buf, size_t len)
{
    size_t off = 0;
    buf[0] = '\0';
    for (size_t i = 0; i < l->n && off < len; i++)
        off += (size_t)snprintf(buf + off, len - off, "%s%s", i ? "," : "", l->v[i]);
    return buf;
}

/* One Allow/Deny pair against a name (account or QOS); false with why set. */
static bool sjob_pair_ok(const char *what, const char *part, const loom_strv_t *allow,
                         const loom_strv_t *deny, const char *name, char *why, size_t len)
{
    char list[512];
    if (!sjob_list_all(allow) && (!name || loom_strv_find(allow, name) < 0)) {
        snprintf(why, len, "Job's %s not permitted to use this partition (%s allows %s not %s)",
                 what, part, sjob_joined(allow, list, sizeof(list)), name ? name : "(null)");
        return false;
    }
    if (deny->n && name && loom_strv_find(deny, name) >= 0) {
        snprintf(why, len,
                 "Job's %s not permitted to use this partition (%s denies %s including %s)", what,
                 part, sjob_joined(deny, list, sizeof(list)), name);
        return false;
    }
    return true;
}

void ctld_sched_set_policy_reason(ctld_job_t *job, const char *why)
{
    ctld_sched_job_t *sx = sjob_get(job);
    if (!sx->policy_why || strcmp(sx->policy_why, why) != 0) {
        char *old = sx->policy_why;
        sx->policy_why = loom_xstrdup(why);
        if (job->reason == old)
            job->reason = sx->policy_why;
        free(old);
    }
    ctld_job_set_reason(job, sx->policy_why);
}

bool ctld_sched_part_policy_ok(const ctld_t *c, const ctld_job_t *job, const ctld_part_t *part,
                               char *why, size_t len)
{
    const loom_conf_part_t *p = part->cfg;
    if (sjob_list_all(&p->allow_accounts) && !p->deny_accounts.n && sjob_list_all(&p->allow_qos) &&
        !p->deny_qos.n)
        return true;
    if (!ctld_assoc_enabled(c)) { /* no associations: an allow list lets nobody in */
        if (sjob_list_all(&p->allow_accounts))
            return true;
        char list[512];
        snprintf(why, len, "Job's account not known, so it can't use this partition (%s allows %s)",
                 p->name, sjob_joined(&p->allow_accounts, list, sizeof(list)));
        return false;
    }
    return sjob_pair_ok("account", p->name, &p->allow_accounts, &p->deny_accounts, job->account,
                        why, len) &&
           sjob_pair_ok("QOS", p->name, &p->allow_qos, &p->deny_qos, job->qos, why, len);
}

/* ---- records and plans -------------------------------------------------------------- */

/* LastSchedEval and Scheduler as slurmctld 22.05 shows them: a pending job
 * backfill planned "Backfill:*" at that pass, a job backfill started
 * "Backfill", another started job "Main" at its start. */
static void sjob_rec_eval(const ctld_job_t *job, json_t *rec)
{
    const ctld_sched_job_t *sx = job->sx;
    bool pending = loom_job_base(job->state) == LOOM_JOB_PENDING;
    if (sx && sx->bf_eval && (pending || sx->bf_started)) {
        json_object_set_new(rec, "last_sched_eval", json_integer(sx->bf_eval));
        json_object_set_new(rec, "scheduler", json_string(pending ? "Backfill:*" : "Backfill"));
    } else if (!pending && job->start_time > 0) {
        json_object_set_new(rec, "last_sched_eval", json_integer(job->start_time));
    }
}

void ctld_sched_rec_extra(const ctld_t *c, const ctld_job_t *job, json_t *rec, bool full)
{
    const ctld_sched_job_t *sx = job->sx;
    if (!full)
        sjob_rec_eval(job, rec);
    if (full || !sx || loom_job_base(job->state) != LOOM_JOB_PENDING)
        return;
    if (sx->nparts > 1) {
        loom_sbuf_t sb = LOOM_SBUF_INIT;
        for (size_t k = 0; k < sx->nparts; k++)
            loom_sbuf_addf(&sb, "%s%s", k ? "," : "", sx->parts[k]->cfg->name);
        json_object_set_new(rec, "partition", json_string(loom_sbuf_str(&sb)));
        loom_sbuf_free(&sb);
    }
    if (sx->planned && !job->begin_time)
        json_object_set_new(rec, "start_time", json_integer(sx->planned));
    if (sx->sched_nodes)
        json_object_set_new(rec, "sched_nodes", json_string(sx->sched_nodes));
}

void ctld_sched_job_plan(ctld_t *c, ctld_job_t *job, int64_t start, const char *nodes)
{
    ctld_sched_job_t *sx = sjob_get(job);
    bool same_nodes = (!nodes && !sx->sched_nodes) ||
                      (nodes && sx->sched_nodes && strcmp(nodes, sx->sched_nodes) == 0);
    if (sx->planned == start && same_nodes)
        return;
    sx->planned = start;
    free(sx->sched_nodes);
    sx->sched_nodes = nodes ? loom_xstrdup(nodes) : NULL;
    ctld_job_touch(job);
}
