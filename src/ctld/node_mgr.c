/* node_mgr.c - nodes and partitions, registration, heartbeats, timeouts. See node_mgr.h. */
#include "ctld/node_mgr.h"
#include "ctld/node_attr.h"
#include "ctld/part_mgr.h"
#include "common/gres.h"
#include "common/hostlist.h"
#include "common/jobstate.h"
#include "common/log.h"
#include "common/nodestate.h"
#include "common/proto.h"
#include "common/xalloc.h"
#include "ctld/job_desc.h"
#include "ctld/job_mgr.h"
#include "ctld/job_ops.h"
#include "ctld/job_state.h"
#include "ctld/sched_driver.h"
#include "ctld/sched_node.h"
#include "ctld/server.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define NODE_BAD_FLAGS                                                                             \
    (LOOM_NODE_F_DRAIN | LOOM_NODE_F_FAIL | LOOM_NODE_F_NO_RESPOND | LOOM_NODE_F_INVALID_REG |     \
     LOOM_NODE_F_POWERED_DOWN | LOOM_NODE_F_MAINT)
/* The flags a node.state event carries (runtime-only ones are left out). */
#define NODE_KEPT_FLAGS (LOOM_NODE_F_DRAIN | LOOM_NODE_F_FAIL | LOOM_NODE_F_INVALID_REG)

/* ---- tables ---------------------------------------------------------------- */

static uint32_t node_mgr_conf_state(int st)
{
    switch (st) {
    case LOOM_CONF_NODE_DOWN:
        return LOOM_NODE_DOWN;
    case LOOM_CONF_NODE_DRAIN:
        return LOOM_NODE_UNKNOWN | LOOM_NODE_F_DRAIN;
    case LOOM_CONF_NODE_FAIL:
    case LOOM_CONF_NODE_FAILING:
        return LOOM_NODE_UNKNOWN | LOOM_NODE_F_FAIL | LOOM_NODE_F_DRAIN;
    case LOOM_CONF_NODE_FUTURE:
        return LOOM_NODE_FUTURE;
    case LOOM_CONF_NODE_CLOUD:
        return LOOM_NODE_UNKNOWN | LOOM_NODE_F_CLOUD;
    default:
        return LOOM_NODE_UNKNOWN;
    }
}

/* GRES units of a node: devices from gres.conf, else its Gres= counts. */
static void node_mgr_gres(ctld_t *c, ctld_node_t *n, loom_sched_node_t *sn)
{
    const loom_conf_nodecfg_t *cfg = n->cfg->cfg;
    loom_gres_devlist_t devs = {0};
    loom_err_t err = {0};
    if (c->gresconf &&
        loom_gresconf_node_devices(c->gresconf, c->conf, n->cfg, &devs, NULL, &err) == 0 &&
        devs.n) {
        for (size_t i = 0; i < devs.n; i++) {
            const loom_gres_dev_t *d = &devs.v[i];
            loom_sched_node_add_gres(sn, d->name, d->type, d->file ? (int)d->index : -1, d->count);
            ctld_sched_gres_cores(n, sn, sn->ngres - 1, d->cores); /* GPU affinity */
        }
        loom_gres_devlist_free(&devs);
        return;
    }
    if (err.code)
        loom_error("node %s: %s; using its Gres= counts", n->cfg->name, err.msg);
    for (size_t i = 0; i < cfg->gres.n; i++) {
        const loom_gres_t *g = &cfg->gres.v[i];
        if (strcmp(g->name, "gpu") == 0) {
            for (uint64_t k = 0; k < g->count && k < 1024; k++)
                loom_sched_node_add_gres(sn, g->name, g->type, (int)k, 1);
        } else {
            loom_sched_node_add_gres(sn, g->name, g->type, -1, g->count);
        }
    }
}

static void node_mgr_init_node(ctld_t *c, size_t i)
{
    ctld_node_t *n = &c->nodes[i];
    const loom_conf_node_t *cn = &c->conf->nodes[i];
    const loom_conf_nodecfg_t *cfg = cn->cfg;
    n->cfg = cn;
    n->idx = i;
    n->state = node_mgr_conf_state(cn->state);
    n->reason = cn->reason ? loom_xstrdup(cn->reason) : NULL;
    n->free_mem = -1;
    n->last_heard = c->boot_time;
    n->last_busy = c->boot_time; /* slurmctld's start, until it registers */
    n->cpus = (uint32_t)cfg->cpus;
    n->boards = (uint32_t)cfg->boards;
    n->sockets = (uint32_t)cfg->sockets;
    n->cores = (uint32_t)cfg->cores_per_socket;
    n->threads = (uint32_t)cfg->threads_per_core;
    n->real_memory = cfg->real_memory;
    n->tmp_disk = cfg->tmp_disk;
    n->weight = -1;
    loom_sched_node_t *sn = &c->snodes[i];
    loom_sched_node_init(sn, cn->name, (uint32_t)cfg->cpus, (uint64_t)cfg->real_memory);
    sn->weight = (uint32_t)cfg->weight;
    ctld_sched_node_setup(c, n, sn); /* topology, features (sched_node.h) */
    node_mgr_gres(c, n, sn);
    n->gres_text = cfg->gres_text ? loom_xstrdup(cfg->gres_text) : NULL;
    ctld_node_mgr_sync(c, n);
}

static void node_mgr_init_part(ctld_t *c, size_t i)
{
    ctld_part_t *p = &c->parts[i];
    const loom_conf_part_t *cp = &c->conf->parts[i];
    p->cfg = cp;
    p->idx = i;
    p->state = cp->state;
    loom_hostlist_t *hl = loom_hostlist_create();
    for (size_t k = 0; k < cp->n_nodes; k++) {
        ctld_node_t *n = &c->nodes[cp->node_idx[k]];
        p->total_cpus += n->cpus;
        loom_hostlist_push(hl, n->cfg->name);
        n->partitions = loom_xreallocarray(n->partitions, n->npartitions + 1, sizeof(char *));
        n->partitions[n->npartitions++] = cp->name;
    }
    p->nodes_text = loom_hostlist_compress_sorted(hl);
    loom_hostlist_destroy(hl);
    if (cp->is_default)
        c->default_part = p;
}

int ctld_node_mgr_init(ctld_t *c, loom_err_t *err)
{
    c->nnodes = c->conf->n_nodes;
    c->nodes = loom_xcalloc(c->nnodes + 1, sizeof(*c->nodes));
    c->snodes = loom_xcalloc(c->nnodes + 1, sizeof(*c->snodes));
    for (size_t i = 0; i < c->nnodes; i++)
        node_mgr_init_node(c, i);
    c->nparts = c->conf->n_parts;
    c->parts = loom_xcalloc(c->nparts + 1, sizeof(*c->parts));
    c->default_part = NULL;
    for (size_t i = 0; i < c->nparts; i++)
        node_mgr_init_part(c, i);
    return 0;
}

void ctld_node_mgr_fini(ctld_t *c)
{
    for (size_t i = 0; i < c->nnodes; i++) {
        free(c->nodes[i].reason);
        free(c->nodes[i].version);
        free(c->nodes[i].arch);
        free(c->nodes[i].os);
        free(c->nodes[i].partitions);
        free(c->nodes[i].gres_text);
        ctld_node_attr_free(&c->nodes[i]);
        loom_sched_node_fini(&c->snodes[i]);
    }
    for (size_t i = 0; i < c->nparts; i++) {
        free(c->parts[i].nodes_text);
        ctld_part_free(&c->parts[i]);
    }
    free(c->nodes);
    free(c->snodes);
    free(c->parts);
    c->nodes = NULL;
    c->snodes = NULL;
    c->parts = NULL;
    c->nnodes = c->nparts = 0;
    c->default_part = NULL;
}

ctld_node_t *ctld_node_find(const ctld_t *c, const char *name)
{
    long i = name ? loom_conf_node_index(c->conf, name) : -1;
    return i < 0 || (size_t)i >= c->nnodes ? NULL : &c->nodes[i];
}

void ctld_node_mgr_sync(ctld_t *c, ctld_node_t *n)
{
    bool usable = loom_node_base(n->state) == LOOM_NODE_IDLE && !(n->state & NODE_BAD_FLAGS);
    if (c->snodes[n->idx].usable != usable) {
        c->snodes[n->idx].usable = usable;
        if (usable)
            ctld_sched_trigger(c, true);
    }
}

uint32_t ctld_node_state(const ctld_t *c, const ctld_node_t *n)
{
    const loom_sched_node_t *sn = &c->snodes[n->idx];
    uint32_t st = n->state;
    if (loom_node_base(st) == LOOM_NODE_IDLE && sn->cpus_used) {
        uint32_t base = sn->cpus_used >= sn->cpus ? LOOM_NODE_ALLOCATED : LOOM_NODE_MIXED;
        st = (st & ~LOOM_NODE_STATE_BASE) | base;
    }
    return st;
}

/* ---- state changes (journaled) ------------------------------------------- */

/* Journal and apply a new state/reason for a node. reason NULL clears it. */
static int node_mgr_set(ctld_t *c, ctld_node_t *n, uint32_t state, const char *reason, uint32_t uid,
                        bool timeout)
{
    json_t *ev =
        json_pack("{s:s, s:s, s:I, s:I, s:b}", "ev", "node.state", "node", n->cfg->name, "state",
                  (json_int_t)state, "reason_uid", (json_int_t)uid, "timeout", timeout);
    if (reason)
        json_object_set_new(ev, "reason", json_string(reason));
    return ctld_commit(c, ev, NULL);
}

int ctld_node_mgr_apply(ctld_t *c, const json_t *ev, loom_err_t *err)
{
    ctld_node_t *n = ctld_node_find(c, json_string_value(json_object_get(ev, "node")));
    if (!n)
        return 0; /* a node removed from slurm.conf since */
    uint32_t st = (uint32_t)json_integer_value(json_object_get(ev, "state"));
    const char *reason = json_string_value(json_object_get(ev, "reason"));
    n->state = st;
    if (!reason || !n->reason || strcmp(reason, n->reason) != 0) {
        free(n->reason);
        n->reason = reason ? loom_xstrdup(reason) : NULL;
        n->reason_time = reason ? json_integer_value(json_object_get(ev, "t")) : 0;
        n->reason_uid = (uint32_t)json_integer_value(json_object_get(ev, "reason_uid"));
    }
    n->down_by_timeout = json_is_true(json_object_get(ev, "timeout"));
    ctld_node_attr_apply(c, n, ev); /* Weight=, Features=, ... when the event has them */
    ctld_node_mgr_sync(c, n);
    return 0;
}

json_t *ctld_node_mgr_snapshot(const ctld_t *c, size_t i)
{
    const ctld_node_t *n = &c->nodes[i];
    json_t *o = json_pack("{s:s, s:I, s:I, s:I, s:b}", "node", n->cfg->name, "state",
                          (json_int_t)n->state, "reason_uid", (json_int_t)n->reason_uid, "t",
                          (json_int_t)n->reason_time, "timeout", n->down_by_timeout);
    if (n->reason)
        json_object_set_new(o, "reason", json_string(n->reason));
    ctld_node_attr_rec(n, o, true);
    return o;
}

void ctld_node_mgr_restore(ctld_t *c, const json_t *nodes)
{
    size_t i;
    json_t *o;
    if (json_is_object(nodes))
        ctld_node_mgr_apply(c, nodes, NULL);
    json_array_foreach(nodes, i, o)
    {
        ctld_node_mgr_apply(c, o, NULL);
    }
}

void ctld_node_mgr_after_recovery(ctld_t *c)
{
    for (size_t i = 0; i < c->nnodes; i++) {
        ctld_node_t *n = &c->nodes[i];
        if (loom_node_base(n->state) == LOOM_NODE_IDLE)
            n->state = (n->state & ~LOOM_NODE_STATE_BASE) | LOOM_NODE_UNKNOWN;
        n->state &= ~LOOM_NODE_F_NO_RESPOND;
        n->registered = false;
        n->last_heard = c->boot_time;
        ctld_node_mgr_sync(c, n);
    }
}

/* ---- registration --------------------------------------------------------- */

static size_t node_mgr_count_gpus(const json_t *gres)
{
    size_t n = 0, i;
    json_t *g;
    json_array_foreach(gres, i, g)
    {
        const char *name = json_string_value(json_object_get(g, "name"));
        n += name && strcmp(name, "gpu") == 0;
    }
    return n;
}

/* Slurm's reasons for a node registering with less than configured; NULL when fine. */
static char *node_mgr_check_hw(const ctld_node_t *n, const json_t *req)
{
    const loom_conf_nodecfg_t *cfg = n->cfg->cfg;
    json_int_t cpus = json_integer_value(json_object_get(req, "cpus"));
    json_int_t mem = json_integer_value(json_object_get(req, "real_memory"));
    uint64_t want_gpus = loom_gres_count(&cfg->gres, "gpu");
    size_t got_gpus = node_mgr_count_gpus(json_object_get(req, "gres"));
    loom_sbuf_t sb = LOOM_SBUF_INIT;
    if (cpus < cfg->cpus)
        loom_sbuf_addf(&sb, "Low CPUs (reported:%lld < configured:%lld)", (long long)cpus,
                       (long long)cfg->cpus);
    else if (mem < cfg->real_memory)
        loom_sbuf_addf(&sb, "Low RealMemory (reported:%lld < 100.00%% of configured:%lld)",
                       (long long)mem, (long long)cfg->real_memory);
    else if (got_gpus < want_gpus)
        loom_sbuf_addf(&sb, "gres/gpu count reported lower than configured (%zu < %llu)", got_gpus,
                       (unsigned long long)want_gpus);
    return sb.len ? loom_sbuf_detach(&sb) : NULL;
}

/* The state a valid registration leads to, per ReturnToService. */
static uint32_t node_mgr_state_on_register(const ctld_t *c, const ctld_node_t *n)
{
    uint32_t st = n->state & ~(LOOM_NODE_F_NO_RESPOND | LOOM_NODE_F_INVALID_REG);
    loom_node_base_t base = loom_node_base(st);
    if (base == LOOM_NODE_UNKNOWN)
        return (st & ~LOOM_NODE_STATE_BASE) | LOOM_NODE_IDLE;
    if (base != LOOM_NODE_DOWN)
        return st;
    int64_t rts = c->conf->return_to_service;
    if (rts == 2 || (rts == 1 && n->down_by_timeout))
        return (st & ~LOOM_NODE_STATE_BASE) | LOOM_NODE_IDLE;
    return st;
}

static void node_mgr_hw_info(ctld_node_t *n, const json_t *req, int64_t now)
{
    n->cpus = (uint32_t)json_integer_value(json_object_get(req, "cpus"));
    n->boards = (uint32_t)json_integer_value(json_object_get(req, "boards"));
    n->sockets = (uint32_t)json_integer_value(json_object_get(req, "sockets"));
    n->cores = (uint32_t)json_integer_value(json_object_get(req, "cores"));
    n->threads = (uint32_t)json_integer_value(json_object_get(req, "threads"));
    n->real_memory = json_integer_value(json_object_get(req, "real_memory"));
    n->tmp_disk = json_integer_value(json_object_get(req, "tmp_disk"));
    n->boot_time = json_integer_value(json_object_get(req, "boot_time"));
    const char *v = json_string_value(json_object_get(req, "version"));
    free(n->version);
    n->version = loom_xstrdup(v ? v : LOOM_SLURM_VERSION);
    const char *arch = json_string_value(json_object_get(req, "arch"));
    const char *os = json_string_value(json_object_get(req, "os"));
    free(n->arch);
    free(n->os);
    n->arch = arch ? loom_xstrdup(arch) : NULL;
    n->os = os ? loom_xstrdup(os) : NULL;
    n->slurmd_start = now;
    n->last_heard = now;
    n->last_busy = now; /* as slurmctld sets it when a node registers */
}

/* Is the job among those the node reported? */
static const json_t *node_mgr_reported(const json_t *jobs, uint32_t id)
{
    size_t i;
    json_t *j;
    json_array_foreach(jobs, i, j)
    {
        if (json_integer_value(json_object_get(j, "job_id")) == (json_int_t)id)
            return j;
    }
    return NULL;
}

/* Jobs the node reports: complete the done ones, kill the unknown ones. */
static void node_mgr_reported_jobs(ctld_t *c, ctld_node_t *n, const json_t *jobs)
{
    size_t i;
    json_t *r;
    json_array_foreach(jobs, i, r)
    {
        uint32_t id = (uint32_t)json_integer_value(json_object_get(r, "job_id"));
        const char *st = json_string_value(json_object_get(r, "state"));
        ctld_job_t *job = ctld_job_find(c, id);
        bool here = job && job->batch_host && strcmp(job->batch_host, n->cfg->name) == 0;
        if (st && strcmp(st, "done") == 0) {
            if (here)
                ctld_job_report_completed(c, job, r, NULL);
        } else if (!here || !ctld_job_runs(job) ||
                   !ctld_job_is_run(job, json_object_get(r, "run"))) {
            /* Running something the controller does not expect there (the
             * earlier run of a requeued job included): stop it. */
            json_t *req = loom_msg_new("job.kill", 0);
            json_object_set_new(req, "job_id", json_integer(id));
            json_object_set(req, "run", json_object_get(r, "run"));
            json_object_set_new(req, "signal", json_integer(9));
            json_object_set_new(req, "reason", json_string("cancel"));
            json_object_set_new(req, "kill_wait", json_integer(c->conf->kill_wait));
            ctld_node_request(c, n, req, NULL, NULL);
            json_decref(req);
        } else {
            job->launch_sent = true; /* re-attached */
            job->launch_acked = true;
        }
    }
}

/* Jobs the controller placed on the node that it no longer runs. */
static void node_mgr_missing_jobs(ctld_t *c, ctld_node_t *n, const json_t *jobs)
{
    for (size_t i = c->jobs_running.n; i-- > 0;) {
        ctld_job_t *job = c->jobs_running.v[i];
        if (!job->batch_host || strcmp(job->batch_host, n->cfg->name) != 0)
            continue;
        if (node_mgr_reported(jobs, job->id) || !job->launch_sent)
            continue;
        if (!job->launch_acked && !(job->state & LOOM_JOB_F_COMPLETING)) {
            /* Its loomd died before taking the launch (it writes the job's
             * spec before answering, and a restarted loomd reports every
             * spec): the job never ran, so it is launched again as the
             * same run, not requeued (ctld_sched_node_up). */
            loom_info("job %u: loomd on %s restarted before taking the launch; launching again",
                      job->id, n->cfg->name);
            job->launch_sent = false;
            continue;
        }
        if (job->state & LOOM_JOB_F_COMPLETING)
            ctld_job_completed(c, job, job->exit_code, ctld_now(), "", NULL);
        else
            ctld_job_node_fail(c, job, NULL);
    }
}

int ctld_node_mgr_register(ctld_t *c, ctld_conn_t *conn, const json_t *req, json_t *reply,
                           loom_err_t *err)
{
    ctld_node_t *n = ctld_node_find(c, json_string_value(json_object_get(req, "node")));
    if (!n)
        return loom_errf(err, -LOOM_EINVAL_NODENAME, "node '%s' is not in slurm.conf",
                         json_string_value(json_object_get(req, "node")));
    int64_t now = ctld_now();
    if (n->link && n->link != conn)
        ctld_server_close(n->link);
    n->link = conn;
    ctld_conn_set_node(conn, n);
    n->registered = true;
    node_mgr_hw_info(n, req, now);
    char *bad = node_mgr_check_hw(n, req);
    uint32_t st = node_mgr_state_on_register(c, n);
    if (bad) {
        st |= LOOM_NODE_F_DRAIN | LOOM_NODE_F_INVALID_REG;
        loom_error("node %s: %s", n->cfg->name, bad);
    }
    if (st != n->state || bad)
        node_mgr_set(c, n, st,
                     bad ? bad
                         : (loom_node_base(st) == LOOM_NODE_IDLE && !(st & LOOM_NODE_F_DRAIN)
                                ? NULL
                                : n->reason),
                     0, false);
    json_object_set_new(reply, "config_ok", json_boolean(!bad));
    if (bad)
        json_object_set_new(reply, "reason", json_string(bad));
    free(bad);
    const json_t *jobs = json_object_get(req, "jobs");
    node_mgr_reported_jobs(c, n, jobs);
    node_mgr_missing_jobs(c, n, jobs);
    ctld_node_mgr_sync(c, n);
    ctld_sched_node_up(c, n);
    loom_info("node %s registered (%u CPUs, %lld MiB)", n->cfg->name, n->cpus,
              (long long)n->real_memory);
    return 0;
}

int ctld_node_mgr_heartbeat(ctld_t *c, const json_t *req, loom_err_t *err)
{
    ctld_node_t *n = ctld_node_find(c, json_string_value(json_object_get(req, "node")));
    if (!n)
        return loom_errf(err, -LOOM_EINVAL_NODENAME, "unknown node");
    n->last_heard = ctld_now();
    json_t *load = json_object_get(req, "load");
    if (json_is_number(load))
        n->load = json_number_value(load);
    json_t *fm = json_object_get(req, "free_mem");
    if (json_is_integer(fm))
        n->free_mem = json_integer_value(fm);
    if (n->state & LOOM_NODE_F_NO_RESPOND) {
        n->state &= ~LOOM_NODE_F_NO_RESPOND;
        ctld_node_mgr_sync(c, n);
    }
    return 0;
}

void ctld_node_mgr_link_lost(ctld_t *c, ctld_node_t *node, ctld_conn_t *conn)
{
    if (node->link == conn) {
        node->link = NULL;
        loom_verbose("node %s: loomd link closed", node->cfg->name);
    }
}

/* ---- timeouts ---------------------------------------------------------------- */

static void node_mgr_fail_jobs(ctld_t *c, ctld_node_t *n)
{
    for (size_t i = c->jobs_running.n; i-- > 0;) {
        ctld_job_t *job = c->jobs_running.v[i];
        bool on_node = false;
        for (size_t k = 0; k < job->alloc.nnodes; k++)
            on_node |= job->alloc.nodes[k].node == n->idx;
        if (on_node)
            ctld_job_node_fail(c, job, NULL);
    }
}

static void node_mgr_down(ctld_t *c, ctld_node_t *n, const char *reason, uint32_t uid, bool timeout)
{
    uint32_t st = (n->state & ~LOOM_NODE_STATE_BASE) | LOOM_NODE_DOWN;
    if (timeout)
        st |= LOOM_NODE_F_NO_RESPOND;
    node_mgr_set(c, n, st, reason, uid, timeout);
    node_mgr_fail_jobs(c, n);
}

void ctld_node_mgr_tick(ctld_t *c, int64_t now)
{
    int64_t limit = c->conf->slurmd_timeout;
    if (limit <= 0)
        return;
    for (size_t i = 0; i < c->nnodes; i++) {
        ctld_node_t *n = &c->nodes[i];
        loom_node_base_t base = loom_node_base(n->state);
        if (base == LOOM_NODE_DOWN || base == LOOM_NODE_FUTURE || now - n->last_heard < limit)
            continue;
        loom_info("node %s not responding for %llds: setting it DOWN", n->cfg->name,
                  (long long)(now - n->last_heard));
        node_mgr_down(c, n, "Not responding", 0, true);
    }
}

/* ---- node.update -------------------------------------------------------------- */

static int node_mgr_update_one(ctld_t *c, ctld_node_t *n, const char *state, const char *reason,
                               uint32_t uid, loom_err_t *err)
{
    uint32_t st = n->state;
    uint32_t up = n->registered ? LOOM_NODE_IDLE : LOOM_NODE_UNKNOWN;
    if (strcmp(state, "DRAIN") == 0) {
        st |= LOOM_NODE_F_DRAIN;
    } else if (strcmp(state, "FAIL") == 0) {
        st |= LOOM_NODE_F_DRAIN | LOOM_NODE_F_FAIL;
    } else if (strcmp(state, "DOWN") == 0) {
        node_mgr_down(c, n, reason, uid, false);
        return 0;
    } else if (strcmp(state, "UNDRAIN") == 0) {
        st &= ~(LOOM_NODE_F_DRAIN | LOOM_NODE_F_FAIL);
        reason = loom_node_base(st) == LOOM_NODE_DOWN ? n->reason : NULL;
    } else if (strcmp(state, "RESUME") == 0 || strcmp(state, "IDLE") == 0) {
        st &= ~(LOOM_NODE_F_DRAIN | LOOM_NODE_F_FAIL | LOOM_NODE_F_INVALID_REG);
        if (loom_node_base(st) == LOOM_NODE_DOWN)
            st = (st & ~LOOM_NODE_STATE_BASE) | up;
        reason = NULL;
    } else if (strcmp(state, "NORESP") == 0) {
        st |= LOOM_NODE_F_NO_RESPOND;
    } else if (strcmp(state, "FUTURE") == 0) {
        st = LOOM_NODE_FUTURE;
    } else {
        return loom_errf(err, -LOOM_ENOT_SUPPORTED, "node state %s is not supported", state);
    }
    return node_mgr_set(c, n, st, reason, uid, false);
}

/* Weight=, Features=, ActiveFeatures=, Comment=, Extra=: one node.state event
 * that keeps the node's state and reason and carries them (node_attr.h). */
static int node_mgr_set_attrs(ctld_t *c, ctld_node_t *n, const json_t *req, loom_err_t *err)
{
    json_t *attrs = json_object();
    int rc = ctld_node_attr_check(n, req, attrs, err);
    if (rc == 0 && json_object_size(attrs)) {
        json_t *ev = json_pack("{s:s, s:s, s:I, s:I, s:b}", "ev", "node.state", "node",
                               n->cfg->name, "state", (json_int_t)n->state, "reason_uid",
                               (json_int_t)n->reason_uid, "timeout", n->down_by_timeout);
        if (n->reason)
            json_object_set_new(ev, "reason", json_string(n->reason));
        json_object_update(ev, attrs);
        rc = ctld_commit(c, ev, err);
    }
    json_decref(attrs);
    return rc;
}

int ctld_node_mgr_update(ctld_t *c, const json_t *req, uint32_t uid, loom_err_t *err)
{
    const char *names = json_string_value(json_object_get(req, "nodes"));
    const char *state = json_string_value(json_object_get(req, "state"));
    const char *reason = json_string_value(json_object_get(req, "reason"));
    if (!names)
        return loom_errf(err, -LOOM_EPROTO, "node.update needs nodes");
    if (state && !reason &&
        (!strcmp(state, "DRAIN") || !strcmp(state, "DOWN") || !strcmp(state, "FAIL")))
        return loom_errf(err, -EINVAL,
                         "You must specify a reason when DOWNING or DRAINING a "
                         "node. Request denied");
    loom_hostlist_t *hl = NULL;
    if (strcasecmp(names, "ALL") == 0) {
        hl = loom_hostlist_create();
        for (size_t i = 0; i < c->nnodes; i++)
            loom_hostlist_push(hl, c->nodes[i].cfg->name);
    } else if (loom_hostlist_parse(names, &hl, NULL) < 0) {
        return loom_errf(err, -LOOM_EINVAL_NODENAME, "invalid node list '%s'", names);
    }
    int rc = 0;
    for (size_t i = 0; i < loom_hostlist_count(hl) && rc == 0; i++) {
        ctld_node_t *n = ctld_node_find(c, loom_hostlist_nth(hl, i));
        json_t *attrs = json_object();
        rc = n ? ctld_node_attr_check(n, req, attrs, err)
               : loom_errf(err, -LOOM_EINVAL_NODENAME, "invalid node name '%s'",
                           loom_hostlist_nth(hl, i));
        json_decref(attrs);
    }
    for (size_t i = 0; i < loom_hostlist_count(hl) && rc == 0; i++) {
        ctld_node_t *n = ctld_node_find(c, loom_hostlist_nth(hl, i));
        rc = node_mgr_set_attrs(c, n, req, err);
        if (rc < 0)
            break;
        if (state)
            rc = node_mgr_update_one(c, n, state, reason, uid, err);
        else if (reason)
            rc = node_mgr_set(c, n, n->state, reason, uid, n->down_by_timeout);
    }
    loom_hostlist_destroy(hl);
    return rc;
}

/* ---- records ------------------------------------------------------------------ */

static void node_mgr_gres_used(const loom_sched_node_t *sn, loom_sbuf_t *out)
{
    /* One entry per name:type, "gpu:h100:1(IDX:0)" (Slurm's GresUsed). */
    for (size_t g = 0; g < sn->ngres; g++) {
        const loom_sched_gres_t *a = &sn->gres[g];
        bool seen = false;
        for (size_t k = 0; k < g && !seen; k++)
            seen = !strcmp(sn->gres[k].name, a->name) &&
                   ((!sn->gres[k].type && !a->type) ||
                    (sn->gres[k].type && a->type && !strcmp(sn->gres[k].type, a->type)));
        if (seen)
            continue;
        uint64_t used = 0;
        loom_sbuf_t idx = LOOM_SBUF_INIT;
        for (size_t k = g; k < sn->ngres; k++) {
            const loom_sched_gres_t *b = &sn->gres[k];
            if (strcmp(b->name, a->name) || (!a->type) != (!b->type) ||
                (a->type && strcmp(a->type, b->type)))
                continue;
            used += b->used;
            if (b->index >= 0 && b->used)
                loom_sbuf_addf(&idx, "%s%d", idx.len ? "," : "", b->index);
        }
        loom_sbuf_addf(out, "%s%s%s%s:%llu(IDX:%s)", out->len ? "," : "", a->name,
                       a->type ? ":" : "", a->type ? a->type : "", (unsigned long long)used,
                       idx.len ? loom_sbuf_str(&idx) : "N/A");
        loom_sbuf_free(&idx);
    }
}

static void node_mgr_rec_static(const ctld_node_t *n, json_t *o)
{
    json_object_set_new(o, "cpus", json_integer(n->cpus));
    json_object_set_new(o, "boards", json_integer(n->boards));
    json_object_set_new(o, "sockets", json_integer(n->sockets));
    json_object_set_new(o, "cores", json_integer(n->cores));
    json_object_set_new(o, "threads", json_integer(n->threads));
    json_object_set_new(o, "real_memory", json_integer(n->real_memory));
    json_object_set_new(o, "tmp_disk", json_integer(n->tmp_disk));
    json_object_set_new(o, "port", json_integer(n->cfg->port));
    json_object_set_new(o, "hostname", json_string(n->cfg->hostname));
    json_object_set_new(o, "addr", json_string(n->cfg->addr));
    if (n->gres_text)
        json_object_set_new(o, "gres", json_string(n->gres_text));
    ctld_node_attr_rec(n, o, false); /* weight, features, comment, extra */
    json_t *parts = json_array();
    for (size_t i = 0; i < n->npartitions; i++)
        json_array_append_new(parts, json_string(n->partitions[i]));
    json_object_set_new(o, "partitions", parts);
}

static void node_mgr_rec_dynamic(const ctld_t *c, const ctld_node_t *n, uint32_t st, json_t *o)
{
    const loom_sched_node_t *sn = &c->snodes[n->idx];
    loom_strv_t names = LOOM_STRV_INIT;
    loom_node_state_list(st, &names);
    json_t *arr = json_array();
    for (size_t i = 0; i < names.n; i++)
        json_array_append_new(arr, json_string(names.v[i]));
    loom_strv_free(&names);
    json_object_set_new(o, "state", arr);
    json_object_set_new(o, "alloc_cpus", json_integer(sn->cpus_used));
    json_object_set_new(o, "alloc_mem", json_integer((json_int_t)sn->mem_used));
    if (n->reason) {
        char *who = ctld_uid_name(n->reason_uid);
        json_object_set_new(o, "reason", json_string(n->reason));
        json_object_set_new(o, "reason_user", json_string(who));
        json_object_set_new(o, "reason_time", json_integer(n->reason_time));
        free(who);
    }
    if (n->version)
        json_object_set_new(o, "version", json_string(n->version));
    if (n->arch)
        json_object_set_new(o, "arch", json_string(n->arch));
    if (n->os)
        json_object_set_new(o, "os", json_string(n->os));
    if (n->free_mem >= 0)
        json_object_set_new(o, "free_mem", json_integer(n->free_mem));
    if (n->registered)
        json_object_set_new(o, "cpu_load", json_real(n->load));
    json_object_set_new(o, "boot_time", json_integer(n->boot_time));
    json_object_set_new(o, "slurmd_start_time", json_integer(n->slurmd_start));
    if (n->last_busy)
        json_object_set_new(o, "last_busy", json_integer(n->last_busy));
    loom_sbuf_t sb = LOOM_SBUF_INIT;
    node_mgr_gres_used(sn, &sb);
    if (sb.len)
        json_object_set_new(o, "gres_used", json_string(loom_sbuf_str(&sb)));
    loom_sbuf_reset(&sb);
    loom_sbuf_addf(&sb, "cpu=%u,mem=%lluM,billing=%u", n->cpus, (unsigned long long)n->real_memory,
                   n->cpus);
    json_object_set_new(o, "tres_cfg", json_string(loom_sbuf_str(&sb)));
    if (sn->cpus_used) {
        loom_sbuf_reset(&sb);
        loom_sbuf_addf(&sb, "cpu=%u", sn->cpus_used);
        if (sn->mem_used)
            loom_sbuf_addf(&sb, ",mem=%lluM", (unsigned long long)sn->mem_used);
        json_object_set_new(o, "tres_alloc", json_string(loom_sbuf_str(&sb)));
    }
    loom_sbuf_free(&sb);
}

/* Nodes where a job is completing get the COMPLETING flag. */
static bool *node_mgr_completing(const ctld_t *c)
{
    bool *v = loom_xcalloc(c->nnodes + 1, sizeof(bool));
    for (size_t i = 0; i < c->jobs_running.n; i++) {
        const ctld_job_t *job = c->jobs_running.v[i];
        if (!(job->state & LOOM_JOB_F_COMPLETING))
            continue;
        for (size_t k = 0; k < job->alloc.nnodes; k++)
            v[job->alloc.nodes[k].node] = true;
    }
    return v;
}

json_t *ctld_node_mgr_records(ctld_t *c, const char *nodes, loom_err_t *err)
{
    loom_hostlist_t *hl = NULL;
    if (nodes && *nodes && loom_hostlist_parse(nodes, &hl, NULL) < 0) {
        loom_errf(err, -LOOM_EINVAL_NODENAME, "invalid node list '%s'", nodes);
        return NULL;
    }
    bool *comp = node_mgr_completing(c);
    json_t *arr = json_array();
    for (size_t i = 0; i < c->nnodes; i++) {
        const ctld_node_t *n = &c->nodes[i];
        if (hl && loom_hostlist_find(hl, n->cfg->name) < 0)
            continue;
        uint32_t st = ctld_node_state(c, n) | (comp[i] ? LOOM_NODE_F_COMPLETING : 0);
        json_t *o = json_pack("{s:s}", "name", n->cfg->name);
        node_mgr_rec_static(n, o);
        node_mgr_rec_dynamic(c, n, st, o);
        json_array_append_new(arr, o);
    }
    free(comp);
    loom_hostlist_destroy(hl);
    return arr;
}

static const char *node_mgr_part_state(int st)
{
    switch (st) {
    case LOOM_CONF_PART_DOWN:
        return "DOWN";
    case LOOM_CONF_PART_DRAIN:
        return "DRAIN";
    case LOOM_CONF_PART_INACTIVE:
        return "INACTIVE";
    default:
        return "UP";
    }
}

static json_int_t node_mgr_mins(int64_t secs)
{
    return secs < 0 ? -1 : (json_int_t)((secs + 59) / 60);
}

json_t *ctld_part_records(const ctld_t *c)
{
    json_t *arr = json_array();
    for (size_t i = 0; i < c->nparts; i++) {
        const ctld_part_t *p = &c->parts[i];
        const loom_conf_part_t *cp = p->cfg;
        json_t *o = json_pack(
            "{s:s, s:s, s:b, s:s, s:I, s:I, s:I, s:I, s:I, s:I}", "name", cp->name, "state",
            node_mgr_part_state(p->state), "default", cp->is_default, "nodes",
            p->nodes_text ? p->nodes_text : "", "max_nodes", (json_int_t)cp->max_nodes, "min_nodes",
            (json_int_t)cp->min_nodes, "max_cpus_per_node", (json_int_t)cp->max_cpus_per_node,
            "total_cpus", (json_int_t)p->total_cpus, "total_nodes", (json_int_t)cp->n_nodes,
            "max_time", node_mgr_mins(cp->max_time));
        if (cp->default_time != LOOM_CONF_NOT_SET)
            json_object_set_new(o, "default_time", json_integer(node_mgr_mins(cp->default_time)));
        if (p->changes) /* scontrol update's, over slurm.conf (part_mgr.h) */
            json_object_set(o, "changes", p->changes);
        json_array_append_new(arr, o);
    }
    return arr;
}
