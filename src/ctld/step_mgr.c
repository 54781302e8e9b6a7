/*
 * step_mgr.c - job steps in the controller: placement within the job's
 * allocation, records, journal events, snapshots. See step_mgr.h.
 */
#include "ctld/step_mgr.h"

#include "common/hostlist.h"
#include "common/jobenv.h"
#include "common/jobstate.h"
#include "common/log.h"
#include "common/usage.h"
#include "common/xalloc.h"
#include "ctld/job_mgr.h"
#include "ctld/job_state.h"

#include <stdlib.h>
#include <string.h>

/* ---------------------------------------------------------------- records */

static void step_node_free(ctld_step_node_t *sn)
{
    free(sn->ranks);
    free(sn->cpus);
    free(sn->gpus);
}

void ctld_step_free(ctld_step_t *s)
{
    if (!s)
        return;
    if (s->x) {
        for (uint32_t i = 0; s->x->nodes && i < s->nnodes; i++)
            step_node_free(&s->x->nodes[i]);
        free(s->x->nodes);
        free(s->x->io_key);
        free(s->x->node_done); /* launches in flight find steps by id */
        json_decref(s->x->usage);
        free(s->x->srun_host);
        free(s->x->submit_line);
        free(s->x);
    }
    free(s->name);
    free(s->nodes);
    free(s->tasks_per_node);
    free(s);
}

ctld_step_t *ctld_job_step_find(const ctld_job_t *job, uint32_t step_id)
{
    for (size_t i = 0; i < job->nsteps; i++)
        if (job->steps[i]->id == step_id)
            return job->steps[i];
    return NULL;
}

void ctld_job_step_add(ctld_job_t *job, ctld_step_t *step)
{
    job->steps = loom_xreallocarray(job->steps, job->nsteps + 1, sizeof(*job->steps));
    job->steps[job->nsteps++] = step;
    if (step->id >= job->next_step_id)
        job->next_step_id = step->id + 1;
    ctld_job_touch(job);
}

void ctld_job_step_remove(ctld_job_t *job, uint32_t step_id)
{
    for (size_t i = 0; i < job->nsteps; i++) {
        if (job->steps[i]->id == step_id) {
            ctld_step_free(job->steps[i]);
            job->steps[i] = job->steps[--job->nsteps];
            ctld_job_touch(job);
            return;
        }
    }
}

const char *ctld_step_node_name(const ctld_t *c, const ctld_job_t *job, const ctld_step_node_t *sn)
{
    return c->snodes[job->alloc.nodes[sn->job_node].node].name;
}

static json_t *step_u32_array(const uint32_t *v, uint32_t n)
{
    json_t *a = json_array();
    for (uint32_t i = 0; i < n; i++)
        json_array_append_new(a, json_integer(v[i]));
    return a;
}

static uint32_t *step_u32_from(const json_t *a, uint32_t *n)
{
    size_t len = json_array_size(a);
    uint32_t *v = loom_xcalloc(len ? len : 1, sizeof(uint32_t));
    for (size_t i = 0; i < len; i++)
        v[i] = (uint32_t)json_integer_value(json_array_get(a, i));
    *n = (uint32_t)len;
    return v;
}

json_t *ctld_step_record(const ctld_t *c, const ctld_job_t *job, const ctld_step_t *s)
{
    json_t *res = json_array();
    for (uint32_t i = 0; s->x && i < s->nnodes; i++) {
        const ctld_step_node_t *sn = &s->x->nodes[i];
        json_array_append_new(
            res, json_pack("{s:I, s:o, s:o, s:I, s:o}", "jn", (json_int_t)sn->job_node, "ranks",
                           step_u32_array(sn->ranks, sn->ntasks), "cpus",
                           step_u32_array(sn->cpus, sn->ncpus), "mem", (json_int_t)sn->mem, "gpus",
                           step_u32_array(sn->gpus, sn->ngpus)));
    }
    json_t *rec = json_pack(
        "{s:I, s:s, s:s, s:I, s:o, s:I, s:I, s:I, s:b, s:b, s:b, s:s, s:o}", "step_id",
        (json_int_t)s->id, "name", s->name ? s->name : "", "nodes", s->nodes ? s->nodes : "",
        "ntasks", (json_int_t)s->ntasks, "tasks_per_node",
        step_u32_array(s->tasks_per_node, s->nnodes), "cpus_per_task", (json_int_t)s->cpus_per_task,
        "start_time", (json_int_t)s->start_time, "uid", (json_int_t)s->uid, "overlap",
        s->x && s->x->overlap, "gpus_held", s->x && s->x->gpus_held, "cyclic", s->x && s->x->cyclic,
        "io_key", s->x && s->x->io_key ? s->x->io_key : "", "res", res);
    if (s->x && s->x->srun_host)
        json_object_set_new(rec, "srun_host", json_string(s->x->srun_host));
    if (s->x && s->x->srun_pid)
        json_object_set_new(rec, "srun_pid", json_integer((json_int_t)s->x->srun_pid));
    if (s->x && s->x->submit_line)
        json_object_set_new(rec, "submit_line", json_string(s->x->submit_line));
    return rec;
}

json_t *ctld_step_brief(const ctld_job_t *job, const ctld_step_t *s)
{
    uint64_t cpus = 0, mem = 0;
    for (uint32_t i = 0; s->x && i < s->nnodes; i++) {
        cpus += s->x->nodes[i].ncpus;
        mem += s->x->nodes[i].mem;
    }
    json_t *b = json_pack("{s:i, s:s, s:s, s:i, s:I, s:i, s:I, s:I, s:b}", "step_id", (int)s->id,
                          "name", s->name ? s->name : "", "nodes", s->nodes ? s->nodes : "",
                          "num_tasks", (int)s->ntasks, "start_time", (json_int_t)s->start_time,
                          "num_nodes", (int)s->nnodes, "num_cpus", (json_int_t)cpus, "mem",
                          (json_int_t)mem, "cyclic", s->x && s->x->cyclic);
    if (s->x && s->x->srun_host)
        json_object_set_new(b, "srun_host", json_string(s->x->srun_host));
    if (s->x && s->x->srun_pid)
        json_object_set_new(b, "srun_pid", json_integer((json_int_t)s->x->srun_pid));
    return b;
}

bool ctld_step_extern(const ctld_t *c, const ctld_job_t *job)
{
    const char *f = c->conf ? c->conf->prolog_flags : NULL;
    return f && strcasestr(f, "contain") && job->alloc.nnodes > 0;
}

/* A step from its record; NULL when the record does not fit the job. */
static ctld_step_t *step_from_record(const ctld_job_t *job, const json_t *rec)
{
    const json_t *res = json_object_get(rec, "res");
    size_t n = json_array_size(res);
    ctld_step_t *s = loom_xcalloc(1, sizeof(*s));
    s->x = loom_xcalloc(1, sizeof(*s->x));
    s->id = (uint32_t)json_integer_value(json_object_get(rec, "step_id"));
    s->name = loom_xstrdup(json_string_value(json_object_get(rec, "name")) ?: "");
    s->nodes = loom_xstrdup(json_string_value(json_object_get(rec, "nodes")) ?: "");
    s->ntasks = (uint32_t)json_integer_value(json_object_get(rec, "ntasks"));
    s->cpus_per_task = (uint32_t)json_integer_value(json_object_get(rec, "cpus_per_task"));
    s->start_time = json_integer_value(json_object_get(rec, "start_time"));
    s->uid = (uid_t)json_integer_value(json_object_get(rec, "uid"));
    s->x->overlap = json_is_true(json_object_get(rec, "overlap"));
    s->x->gpus_held = json_is_true(json_object_get(rec, "gpus_held"));
    s->x->cyclic = json_is_true(json_object_get(rec, "cyclic"));
    const char *key = json_string_value(json_object_get(rec, "io_key"));
    s->x->io_key = loom_xstrdup(key ? key : "");
    const char *host = json_string_value(json_object_get(rec, "srun_host"));
    s->x->srun_host = host ? loom_xstrdup(host) : NULL;
    s->x->srun_pid = (int64_t)json_integer_value(json_object_get(rec, "srun_pid"));
    const char *line = json_string_value(json_object_get(rec, "submit_line"));
    s->x->submit_line = line ? loom_xstrdup(line) : NULL;
    uint32_t ntpn = 0;
    s->tasks_per_node = step_u32_from(json_object_get(rec, "tasks_per_node"), &ntpn);
    s->nnodes = (uint32_t)n;
    s->x->nodes = loom_xcalloc(n ? n : 1, sizeof(*s->x->nodes));
    s->x->node_done = loom_xcalloc(n ? n : 1, sizeof(bool));
    bool ok = ntpn == n;
    for (size_t i = 0; i < n; i++) {
        const json_t *r = json_array_get(res, i);
        ctld_step_node_t *sn = &s->x->nodes[i];
        sn->job_node = (uint32_t)json_integer_value(json_object_get(r, "jn"));
        sn->ranks = step_u32_from(json_object_get(r, "ranks"), &sn->ntasks);
        sn->cpus = step_u32_from(json_object_get(r, "cpus"), &sn->ncpus);
        sn->gpus = step_u32_from(json_object_get(r, "gpus"), &sn->ngpus);
        sn->mem = (uint64_t)json_integer_value(json_object_get(r, "mem"));
        ok = ok && sn->job_node < job->alloc.nnodes;
    }
    if (!ok) {
        ctld_step_free(s);
        return NULL;
    }
    return s;
}

/* ---------------------------------------------------------- what is free */

/* Is cpu held on job node jn by a step (other than the overlapping ones)? */
static bool step_cpu_held(const ctld_job_t *job, uint32_t jn, uint32_t cpu)
{
    for (size_t i = 0; i < job->nsteps; i++) {
        const ctld_step_t *s = job->steps[i];
        if (!s->x || s->x->overlap)
            continue;
        for (uint32_t k = 0; k < s->nnodes; k++) {
            const ctld_step_node_t *sn = &s->x->nodes[k];
            if (sn->job_node != jn)
                continue;
            for (uint32_t j = 0; j < sn->ncpus; j++)
                if (sn->cpus[j] == cpu)
                    return true;
        }
    }
    return false;
}

static uint64_t step_mem_held(const ctld_job_t *job, uint32_t jn)
{
    uint64_t m = 0;
    for (size_t i = 0; i < job->nsteps; i++) {
        const ctld_step_t *s = job->steps[i];
        for (uint32_t k = 0; s->x && !s->x->overlap && k < s->nnodes; k++)
            if (s->x->nodes[k].job_node == jn)
                m += s->x->nodes[k].mem;
    }
    return m;
}

static bool step_gpu_held(const ctld_job_t *job, uint32_t jn, uint32_t dev)
{
    for (size_t i = 0; i < job->nsteps; i++) {
        const ctld_step_t *s = job->steps[i];
        if (!s->x || !s->x->gpus_held)
            continue;
        for (uint32_t k = 0; k < s->nnodes; k++) {
            const ctld_step_node_t *sn = &s->x->nodes[k];
            for (uint32_t j = 0; sn->job_node == jn && j < sn->ngpus; j++)
                if (sn->gpus[j] == dev)
                    return true;
        }
    }
    return false;
}

/* The job's GPU device indexes on job node jn (at most max). */
static uint32_t step_job_gpus(const ctld_t *c, const ctld_job_t *job, uint32_t jn, uint32_t *out,
                              uint32_t max)
{
    const loom_sched_node_alloc_t *a = &job->alloc.nodes[jn];
    const loom_sched_node_t *sn = &c->snodes[a->node];
    uint32_t n = 0;
    for (size_t k = 0; k < a->ngres && n < max; k++) {
        const loom_sched_gres_t *g = &sn->gres[a->gres[k].gres];
        if (g->name && strcmp(g->name, "gpu") == 0 && g->index >= 0)
            out[n++] = (uint32_t)g->index;
    }
    return n;
}

/* What one job node has left for a new step. */
typedef struct step_avail {
    uint32_t *cpus; /* free CPU ids, ascending */
    uint32_t ncpus, job_cpus;
    uint64_t mem_free; /* UINT64_MAX when the job tracks no memory */
    uint32_t gpus[256], ngpus_free, job_gpus[256], njob_gpus;
} step_avail_t;

static void step_avail(const ctld_t *c, const ctld_job_t *job, uint32_t jn, step_avail_t *av)
{
    const loom_sched_node_alloc_t *a = &job->alloc.nodes[jn];
    av->cpus = loom_xcalloc(a->ncpus ? a->ncpus : 1, sizeof(uint32_t));
    av->job_cpus = a->ncpus;
    for (uint32_t i = 0; i < a->ncpus; i++)
        if (!step_cpu_held(job, jn, a->cpu_ids[i]))
            av->cpus[av->ncpus++] = a->cpu_ids[i];
    uint64_t held = step_mem_held(job, jn);
    av->mem_free = a->mem == 0 ? UINT64_MAX : (a->mem > held ? a->mem - held : 0);
    av->njob_gpus = step_job_gpus(c, job, jn, av->job_gpus, 256);
    for (uint32_t i = 0; i < av->njob_gpus; i++)
        if (!step_gpu_held(job, jn, av->job_gpus[i]))
            av->gpus[av->ngpus_free++] = av->job_gpus[i];
}

/* --------------------------------------------------------------- placing */

int ctld_step_req_from_json(const json_t *b, ctld_step_req_t *r, loom_err_t *err)
{
    static const char *const ints[] = {"ntasks",        "nodes",         "ntasks_per_node",
                                       "cpus_per_task", "mem",           "mem_per_cpu",
                                       "gpus",          "gpus_per_node", "gpus_per_task"};
    for (size_t i = 0; i < sizeof(ints) / sizeof(ints[0]); i++) {
        json_t *v = json_object_get(b, ints[i]);
        if (v && (!json_is_integer(v) || json_integer_value(v) < 0 ||
                  json_integer_value(v) > UINT32_MAX * (i == 4 || i == 5 ? 1024ll : 1ll)))
            return loom_errf(err, -LOOM_EPROTO, "step.create: bad %s", ints[i]);
    }
    memset(r, 0, sizeof(*r));
    r->ntasks = (uint32_t)json_integer_value(json_object_get(b, "ntasks"));
    r->nodes = (uint32_t)json_integer_value(json_object_get(b, "nodes"));
    r->ntasks_per_node = (uint32_t)json_integer_value(json_object_get(b, "ntasks_per_node"));
    r->cpus_per_task = (uint32_t)json_integer_value(json_object_get(b, "cpus_per_task"));
    r->mem = (uint64_t)json_integer_value(json_object_get(b, "mem"));
    r->mem_per_cpu = (uint64_t)json_integer_value(json_object_get(b, "mem_per_cpu"));
    r->gpus = (uint32_t)json_integer_value(json_object_get(b, "gpus"));
    r->gpus_per_node = (uint32_t)json_integer_value(json_object_get(b, "gpus_per_node"));
    r->gpus_per_task = (uint32_t)json_integer_value(json_object_get(b, "gpus_per_task"));
    r->exact = json_is_true(json_object_get(b, "exact"));
    r->overlap = json_is_true(json_object_get(b, "overlap"));
    r->nodelist = json_string_value(json_object_get(b, "nodelist"));
    r->exclude = json_string_value(json_object_get(b, "exclude"));
    const char *dist = json_string_value(json_object_get(b, "distribution"));
    r->cyclic = dist && strncmp(dist, "cyclic", 6) == 0;
    r->dist_set = dist && *dist;
    return 0;
}

/* Which job nodes the request allows (-w / -x); -1 on an unknown name. */
static int step_candidates(const ctld_t *c, const ctld_job_t *job, const ctld_step_req_t *req,
                           bool *cand, loom_err_t *err)
{
    loom_hostlist_t *want = NULL, *skip = NULL;
    int rc = 0;
    if (req->nodelist && *req->nodelist && loom_hostlist_parse(req->nodelist, &want, err) < 0)
        return err->code;
    if (req->exclude && *req->exclude && loom_hostlist_parse(req->exclude, &skip, err) < 0) {
        loom_hostlist_destroy(want);
        return err->code;
    }
    size_t found = 0;
    for (size_t jn = 0; jn < job->alloc.nnodes; jn++) {
        const char *name = c->snodes[job->alloc.nodes[jn].node].name;
        cand[jn] = (!want || loom_hostlist_find(want, name) >= 0) &&
                   (!skip || loom_hostlist_find(skip, name) < 0);
        found += want && loom_hostlist_find(want, name) >= 0;
    }
    if (want && found < loom_hostlist_count(want))
        rc = loom_errf(err, -LOOM_ENODE_CONFIG, "Requested node configuration is not available");
    loom_hostlist_destroy(want);
    loom_hostlist_destroy(skip);
    return rc;
}

/* A chosen node while placing. */
typedef struct step_pick {
    uint32_t jn;
    step_avail_t av;
    uint32_t tasks;
} step_pick_t;

static void step_picks_free(step_pick_t *p, size_t n)
{
    for (size_t i = 0; i < n; i++)
        free(p[i].av.cpus);
    free(p);
}

/* The node count when -N was not given: as few as hold ntasks. */
static uint32_t step_default_nodes(const ctld_job_t *job, const bool *cand, uint32_t ntasks,
                                   uint32_t cpt)
{
    uint32_t n = 0;
    uint64_t room = 0;
    for (size_t jn = 0; jn < job->alloc.nnodes; jn++) {
        if (!cand[jn])
            continue;
        n++;
        room += job->alloc.nodes[jn].ncpus / cpt;
        if (room >= ntasks)
            return n;
    }
    return n ? n : 1;
}

/* Can this node take a step of this kind now? */
static bool step_node_ok(const step_avail_t *av, const ctld_step_req_t *req, uint32_t cpt)
{
    if (req->overlap)
        return true;
    if (!req->exact && av->ncpus != av->job_cpus)
        return false; /* a default step holds the whole node's CPUs */
    return av->ncpus >= cpt;
}

/* Tasks per chosen node. */
static int step_tasks(step_pick_t *p, uint32_t n, const ctld_step_req_t *req, uint32_t ntasks,
                      uint32_t cpt, loom_err_t *err)
{
    if (req->ntasks_per_node) {
        uint32_t left = ntasks;
        for (uint32_t i = 0; i < n; i++) {
            p[i].tasks = left < req->ntasks_per_node ? left : req->ntasks_per_node;
            left -= p[i].tasks;
        }
        if (left)
            return loom_errf(err, -LOOM_EINVAL_TASKS,
                             "Requested node configuration is not "
                             "available");
        return 0;
    }
    uint32_t *cpus = loom_xcalloc(n, sizeof(uint32_t)), *tasks = loom_xcalloc(n, sizeof(uint32_t));
    for (uint32_t i = 0; i < n; i++)
        cpus[i] = req->exact && !req->overlap ? p[i].av.ncpus : p[i].av.job_cpus;
    loom_jobenv_layout(cpus, n, cpt, ntasks, tasks);
    for (uint32_t i = 0; i < n; i++)
        p[i].tasks = tasks[i];
    free(cpus);
    free(tasks);
    return 0;
}

/* GPUs wanted on pick i (0: none asked for). */
static uint32_t step_gpus_wanted(const step_pick_t *p, uint32_t i, const ctld_step_req_t *req,
                                 uint32_t *left)
{
    if (req->gpus_per_node)
        return req->gpus_per_node;
    if (req->gpus_per_task)
        return req->gpus_per_task * p[i].tasks;
    if (req->gpus) {
        uint32_t take = *left < p[i].av.ngpus_free ? *left : p[i].av.ngpus_free;
        *left -= take;
        return take;
    }
    return 0;
}

/* Fill one step node from its pick; -LOOM_ENODES_BUSY when something is taken now. */
static int step_fill(step_pick_t *pk, ctld_step_node_t *sn, const ctld_step_req_t *req,
                     uint32_t cpt, uint32_t gpus, loom_err_t *err)
{
    const step_avail_t *av = &pk->av;
    uint32_t need = pk->tasks * cpt;
    bool exact = req->exact && !req->overlap;
    if (need > av->job_cpus && !req->overlap)
        return loom_errf(err, -LOOM_ETOO_MANY_CPUS, "More processors requested than permitted");
    if (exact && need > av->ncpus)
        return loom_errf(err, -LOOM_ENODES_BUSY, "Requested nodes are busy");
    sn->job_node = pk->jn;
    /* Exact: the lowest free ids; default: the whole node (all free, see
     * step_node_ok); overlap: replaced by every CPU of the node later. */
    sn->ncpus = exact ? need : av->ncpus;
    sn->cpus = loom_xcalloc(sn->ncpus ? sn->ncpus : 1, sizeof(uint32_t));
    memcpy(sn->cpus, av->cpus, sn->ncpus * sizeof(uint32_t));
    uint64_t mem = req->mem ? req->mem : req->mem_per_cpu * sn->ncpus;
    if (mem && av->mem_free != UINT64_MAX && mem > av->mem_free)
        return loom_errf(err, -LOOM_ENODES_BUSY, "Requested nodes are busy");
    sn->mem = mem;
    if (gpus > av->njob_gpus)
        return loom_errf(err, -LOOM_EINVAL_GRES, "Invalid generic resource (gres) specification");
    if (gpus > av->ngpus_free)
        return loom_errf(err, -LOOM_ENODES_BUSY, "Requested nodes are busy");
    sn->ngpus = gpus ? gpus : av->njob_gpus;
    sn->gpus = loom_xcalloc(sn->ngpus ? sn->ngpus : 1, sizeof(uint32_t));
    memcpy(sn->gpus, gpus ? av->gpus : av->job_gpus, sn->ngpus * sizeof(uint32_t));
    return 0;
}

/* Overlapping steps still see all of the node's CPUs (for binding). */
static void step_overlap_cpus(const ctld_job_t *job, ctld_step_node_t *sn)
{
    const loom_sched_node_alloc_t *a = &job->alloc.nodes[sn->job_node];
    free(sn->cpus);
    sn->ncpus = a->ncpus;
    sn->cpus = loom_xcalloc(a->ncpus ? a->ncpus : 1, sizeof(uint32_t));
    memcpy(sn->cpus, a->cpu_ids, a->ncpus * sizeof(uint32_t));
}

static void step_ranks(ctld_step_t *s)
{
    uint32_t *node_of = loom_xcalloc(s->ntasks ? s->ntasks : 1, sizeof(uint32_t));
    loom_jobenv_rank_nodes(s->tasks_per_node, s->nnodes, s->x->cyclic, node_of);
    for (uint32_t i = 0; i < s->nnodes; i++) {
        ctld_step_node_t *sn = &s->x->nodes[i];
        sn->ranks = loom_xcalloc(s->tasks_per_node[i] ? s->tasks_per_node[i] : 1, sizeof(uint32_t));
        sn->ntasks = 0;
    }
    for (uint32_t r = 0; r < s->ntasks; r++) {
        ctld_step_node_t *sn = &s->x->nodes[node_of[r]];
        sn->ranks[sn->ntasks++] = r;
    }
    free(node_of);
}

/* Pick n nodes among the candidates that can take the step now. */
static size_t step_pick_nodes(const ctld_t *c, const ctld_job_t *job, const bool *cand,
                              const ctld_step_req_t *req, uint32_t cpt, uint32_t n, step_pick_t *p)
{
    size_t got = 0;
    for (uint32_t jn = 0; jn < job->alloc.nnodes && got < n; jn++) {
        if (!cand[jn])
            continue;
        step_avail(c, job, jn, &p[got].av);
        p[got].jn = jn;
        if (step_node_ok(&p[got].av, req, cpt))
            got++;
        else
            free(p[got].av.cpus);
    }
    return got;
}

static ctld_step_t *step_build(const ctld_t *c, const ctld_job_t *job, step_pick_t *p, uint32_t n,
                               const ctld_step_req_t *req, uint32_t ntasks, uint32_t cpt,
                               loom_err_t *err)
{
    ctld_step_t *s = loom_xcalloc(1, sizeof(*s));
    s->x = loom_xcalloc(1, sizeof(*s->x));
    s->nnodes = n;
    s->ntasks = ntasks;
    s->cpus_per_task = cpt;
    s->tasks_per_node = loom_xcalloc(n, sizeof(uint32_t));
    s->x->nodes = loom_xcalloc(n, sizeof(*s->x->nodes));
    s->x->overlap = req->overlap;
    /* No -m: 22.05's default is cyclic when no node gets two tasks (Dist=Cyclic) */
    s->x->cyclic = req->cyclic || (!req->dist_set && ntasks <= n);
    s->x->gpus_held = req->gpus || req->gpus_per_node || req->gpus_per_task;
    uint32_t gpus_left = req->gpus;
    int rc = 0;
    loom_hostlist_t *hl = loom_hostlist_create();
    for (uint32_t i = 0; i < n && rc == 0; i++) {
        s->tasks_per_node[i] = p[i].tasks;
        rc = step_fill(&p[i], &s->x->nodes[i], req, cpt, step_gpus_wanted(p, i, req, &gpus_left),
                       err);
        if (rc == 0 && req->overlap)
            step_overlap_cpus(job, &s->x->nodes[i]);
        loom_hostlist_push(hl, c->snodes[job->alloc.nodes[p[i].jn].node].name);
    }
    if (rc == 0 && gpus_left)
        rc = loom_errf(err, -LOOM_ENODES_BUSY, "Requested nodes are busy");
    loom_sbuf_t names = LOOM_SBUF_INIT;
    loom_hostlist_ranged(hl, &names);
    s->nodes = loom_sbuf_detach(&names);
    loom_hostlist_destroy(hl);
    if (rc < 0) {
        ctld_step_free(s);
        return NULL;
    }
    step_ranks(s);
    return s;
}

/* Would the step fit if no other step ran? (busy vs. never) */
static bool step_fits_idle(const ctld_job_t *job, const bool *cand, uint32_t n, uint32_t ntasks,
                           uint32_t cpt, bool overlap)
{
    uint32_t count = 0;
    uint64_t cpus = 0;
    for (uint32_t jn = 0; jn < job->alloc.nnodes; jn++)
        if (cand[jn] && count < n) {
            count++;
            cpus += job->alloc.nodes[jn].ncpus;
        }
    return count >= n && (overlap || (uint64_t)ntasks * cpt <= cpus);
}

ctld_step_t *ctld_step_place(ctld_t *c, ctld_job_t *job, const ctld_step_req_t *req,
                             loom_err_t *err)
{
    size_t jnodes = job->alloc.nnodes;
    bool *cand = loom_xcalloc(jnodes ? jnodes : 1, sizeof(bool));
    uint32_t cpt = req->cpus_per_task ? req->cpus_per_task : 1;
    ctld_step_t *s = NULL;
    if (step_candidates(c, job, req, cand, err) < 0) {
        free(cand);
        return NULL;
    }
    uint32_t n =
        req->nodes ? req->nodes : step_default_nodes(job, cand, req->ntasks ? req->ntasks : 1, cpt);
    if (req->ntasks && req->ntasks < n)
        n = req->ntasks;
    uint32_t ntasks =
        req->ntasks ? req->ntasks : (req->ntasks_per_node ? req->ntasks_per_node * n : n);
    step_pick_t *p = loom_xcalloc(n ? n : 1, sizeof(*p));
    size_t got = 0;
    if (!step_fits_idle(job, cand, n, ntasks, cpt, req->overlap)) {
        size_t have = 0;
        for (size_t jn = 0; jn < jnodes; jn++)
            have += cand[jn];
        if (have < n)
            loom_errf(err, -LOOM_ENODE_CONFIG, "Requested node configuration is not available");
        else
            loom_errf(err, -LOOM_ETOO_MANY_CPUS, "More processors requested than permitted");
    } else if ((got = step_pick_nodes(c, job, cand, req, cpt, n, p)) < n) {
        loom_errf(err, -LOOM_ENODES_BUSY, "Requested nodes are busy");
    } else if (step_tasks(p, n, req, ntasks, cpt, err) == 0) {
        s = step_build(c, job, p, n, req, ntasks, cpt, err);
    }
    step_picks_free(p, got);
    free(cand);
    return s;
}

/* ------------------------------------------------------------- journaling */

int ctld_step_commit_create(ctld_t *c, ctld_job_t *job, ctld_step_t *step, loom_err_t *err)
{
    step->id = job->next_step_id;
    json_t *ev = json_pack("{s:s, s:I, s:o}", "ev", "step.create", "job_id", (json_int_t)job->id,
                           "step", ctld_step_record(c, job, step));
    ctld_step_free(step);
    return ctld_commit(c, ev, err);
}

int ctld_step_commit_end(ctld_t *c, ctld_job_t *job, uint32_t step_id, int exit_code,
                         loom_err_t *err)
{
    const ctld_step_t *st = ctld_job_step_find(job, step_id);
    if (st && st->x && st->x->oom)
        exit_code = LOOM_EXIT_OOM; /* ExitCode 0:125, as slurmstepd reports it */
    json_t *ev = json_pack("{s:s, s:I, s:I, s:i}", "ev", "step.end", "job_id", (json_int_t)job->id,
                           "step_id", (json_int_t)step_id, "exit_code", exit_code);
    const ctld_step_t *s = ctld_job_step_find(job, step_id);
    json_t *usage = s ? ctld_step_usage(s) : NULL;
    if (usage)
        json_object_set_new(ev, "usage", usage);
    if (s && s->x && s->x->oom)
        json_object_set_new(ev, "oom", json_true());
    return ctld_commit(c, ev, err);
}

/* ------------------------------------------------------------------ usage */

void ctld_step_usage_add(ctld_step_t *s, const json_t *node_usage)
{
    if (!s->x || !json_is_object(node_usage))
        return;
    if (!s->x->usage)
        s->x->usage = json_object();
    loom_usage_merge(s->x->usage, node_usage);
}

json_t *ctld_step_usage(const ctld_step_t *s)
{
    return s->x && s->x->usage ? loom_usage_record(s->x->usage) : NULL;
}

int ctld_step_commit_batch_usage(ctld_t *c, ctld_job_t *job, const json_t *node_usage,
                                 loom_err_t *err)
{
    if (!json_is_object(node_usage))
        return 0;
    json_t *sum = json_object();
    loom_usage_merge(sum, node_usage);
    json_t *ev =
        json_pack("{s:s, s:I, s:s, s:o}", "ev", "step.usage", "job_id", (json_int_t)job->id,
                  "step_id", "batch", "usage", loom_usage_record(sum));
    json_decref(sum);
    return ctld_commit(c, ev, err);
}

int ctld_step_apply(ctld_t *c, const json_t *ev, loom_err_t *err)
{
    const char *type = json_string_value(json_object_get(ev, "ev"));
    json_int_t id = json_integer_value(json_object_get(ev, "job_id"));
    ctld_job_t *job = id > 0 && id <= UINT32_MAX ? ctld_job_find(c, (uint32_t)id) : NULL;
    if (!job || !type)
        return loom_errf(err, -LOOM_EPROTO, "%s for unknown job %lld", type ? type : "step event",
                         (long long)id);
    if (strcmp(type, "step.create") == 0) {
        ctld_step_t *s = step_from_record(job, json_object_get(ev, "step"));
        if (!s || ctld_job_step_find(job, s->id)) {
            ctld_step_free(s);
            return loom_errf(err, -LOOM_EPROTO, "step.create of job %u does not fit", job->id);
        }
        ctld_job_step_add(job, s);
        return 0;
    }
    if (strcmp(type, "step.end") == 0) {
        int code = (int)json_integer_value(json_object_get(ev, "exit_code"));
        if (code > job->derived_exit_code)
            job->derived_exit_code = code;
        ctld_job_step_remove(job, (uint32_t)json_integer_value(json_object_get(ev, "step_id")));
        return 0;
    }
    if (strcmp(type, "step.usage") == 0)
        return 0; /* the batch step's usage: for accounting (acct.c), nothing to apply */
    return loom_errf(err, -LOOM_EPROTO, "unknown event '%s'", type);
}

json_t *ctld_steps_snapshot(const ctld_t *c, const ctld_job_t *job)
{
    if (!job->nsteps && !job->next_step_id)
        return NULL;
    json_t *steps = json_array();
    for (size_t k = 0; k < job->nsteps; k++)
        json_array_append_new(steps, ctld_step_record(c, job, job->steps[k]));
    char key[16];
    snprintf(key, sizeof(key), "%u", (unsigned)job->id);
    json_t *out = json_object();
    json_object_set_new(
        out, key, json_pack("{s:I, s:o}", "next", (json_int_t)job->next_step_id, "steps", steps));
    return out;
}

void ctld_steps_restore(ctld_t *c, const json_t *snap)
{
    const char *key;
    json_t *v, *rec;
    size_t i;
    json_object_foreach((json_t *)snap, key, v)
    {
        ctld_job_t *job = ctld_job_find(c, (uint32_t)strtoul(key, NULL, 10));
        if (!job)
            continue;
        json_array_foreach(json_object_get(v, "steps"), i, rec)
        {
            ctld_step_t *s = step_from_record(job, rec);
            if (s && !ctld_job_step_find(job, s->id))
                ctld_job_step_add(job, s);
            else
                ctld_step_free(s);
        }
        uint32_t next = (uint32_t)json_integer_value(json_object_get(v, "next"));
        if (next > job->next_step_id)
            job->next_step_id = next;
    }
}
