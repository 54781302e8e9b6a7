/* acct.c - job, step and capacity records for loomdbd. See acct.h. */
#include "ctld/acct.h"
#include "common/jobstate.h"
#include "common/log.h"
#include "common/memsize.h"
#include "common/nodestate.h"
#include "common/xalloc.h"
#include "ctld/acct_link.h"
#include "ctld/acct_spool.h"
#include "ctld/job_mgr.h"
#include "ctld/job_rec.h"
#include "ctld/step_mgr.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/wait.h>

typedef struct ctld_acct ctld_acct_t;

struct ctld_acct {
    ctld_acct_spool_t *sp;
    ctld_acct_link_t *link;
    uint32_t *dirty; /* job ids marked since the last round (may repeat) */
    size_t ndirty, cap;
    char *tres_sent;     /* "tres|down_tres" of the last capacity record */
    json_t *batch_usage; /* job id -> the batch step's usage (step.usage events), as JSON
                          * text: kept until the job is purged, a tree costs ~5 KB a job */
};

/* ---- records ----------------------------------------------------------------------- */

static json_t *acct_job_rec(const ctld_t *c, const ctld_job_t *job)
{
    json_t *rec = ctld_job_record(c, job, 0);
    json_t *st = json_object_get(rec, "state");
    if (json_is_array(st)) /* one name, the base state (loomdbd's state column) */
        json_object_set(rec, "state", json_array_get(st, 0));
    json_object_del(rec, "sched_nodes");
    /* sacct's Reason is what the job last waited for, "None" once it ran
     * (it has nodes): slurmdbd 22.05 does not record an end's reason
     * (NonZeroExitCode, ...). */
    if (job->nodes && *job->nodes)
        json_object_set_new(rec, "reason", json_string("None"));
    if (!loom_job_state_is_terminal(job->state)) /* End=Unknown until it ends, not the */
        json_object_del(rec, "end_time");        /* time limit's end scontrol shows */
    /* slurmctld 22.05 records these ends before the script's status comes
     * back, which scontrol shows later: sacct's ExitCode stays 0:0 (1:0 for
     * DEADLINE, as it sets it). */
    uint32_t base = loom_job_base(job->state);
    if (base == LOOM_JOB_TIMEOUT || base == LOOM_JOB_CANCELLED || base == LOOM_JOB_DEADLINE)
        json_object_set_new(rec, "exit_code", json_integer(base == LOOM_JOB_DEADLINE ? 256 : 0));
    return rec;
}

/* A step's AllocTRES as slurmctld records it: "cpu=2,mem=500M,node=1", with
 * "mem=0" when the job holds no memory (CR_Core). */
static void acct_step_tres(uint32_t ncpus, uint64_t mem, uint32_t nnodes, char *buf, size_t len)
{
    loom_sbuf_t m = LOOM_SBUF_INIT;
    loom_mem_fmt(mem, &m);
    snprintf(buf, len, "cpu=%u,mem=%s,node=%u", (unsigned)ncpus, loom_sbuf_str(&m),
             (unsigned)nnodes);
    loom_sbuf_free(&m);
}

/* The memory of a step: what it holds, else its job's on the step's nodes.
 * A job that holds no memory there (memory is not a consumable resource:
 * SelectTypeParameters=CR_Core) gives its steps 0, --mem or not (22.05.8). */
static uint64_t acct_step_mem(const ctld_job_t *job, const ctld_step_t *s)
{
    uint64_t mem = 0;
    for (uint32_t i = 0; s->x && i < s->nnodes; i++) {
        const ctld_step_node_t *n = &s->x->nodes[i];
        uint64_t job_mem = n->job_node < job->alloc.nnodes ? job->alloc.nodes[n->job_node].mem : 0;
        mem += !job_mem ? 0 : n->mem ? n->mem : job_mem;
    }
    return mem;
}

static json_t *acct_step_rec(const ctld_job_t *job, const ctld_step_t *s, const char *state,
                             int code, int64_t end)
{
    uint32_t ncpus = 0;
    for (uint32_t i = 0; s->x && i < s->nnodes; i++)
        ncpus += s->x->nodes[i].ncpus;
    if (!ncpus)
        ncpus = s->ntasks * (s->cpus_per_task ? s->cpus_per_task : 1);
    char id[16], tres[96];
    snprintf(id, sizeof(id), "%u", (unsigned)s->id);
    acct_step_tres(ncpus, acct_step_mem(job, s), s->nnodes, tres, sizeof(tres));
    json_t *rec =
        json_pack("{s:I, s:I, s:s, s:s, s:s, s:i, s:I, s:I, s:s, s:I, s:I, s:I, s:s}", "job_id",
                  (json_int_t)job->id, "submit_time", (json_int_t)job->submit_time, "step_id", id,
                  "name", s->name ? s->name : "", "state", state, "exit_code", code, "start_time",
                  (json_int_t)s->start_time, "end_time", (json_int_t)end, "nodes",
                  s->nodes ? s->nodes : "", "nnodes", (json_int_t)s->nnodes, "ntasks",
                  (json_int_t)s->ntasks, "ncpus", (json_int_t)ncpus, "tres_alloc", tres);
    if (s->x && s->x->submit_line)
        json_object_set_new(rec, "submit_line", json_string(s->x->submit_line));
    return rec;
}

/* The batch step's state: RUNNING while the job runs, then its job's end; a
 * script ended by a signal leaves its job FAILED and the step CANCELLED, as
 * slurmdbd 22.05 records any step whose status is a signal. */
static const char *acct_batch_state(const ctld_job_t *job)
{
    if (!loom_job_state_is_terminal(job->state))
        return "RUNNING";
    switch (loom_job_base(job->state)) {
    case LOOM_JOB_COMPLETED:
        return "COMPLETED";
    case LOOM_JOB_FAILED:
        return WIFSIGNALED(job->exit_code) ? "CANCELLED" : "FAILED";
    case LOOM_JOB_OUT_OF_MEMORY:
        return "OUT_OF_MEMORY";
    case LOOM_JOB_NODE_FAIL:
        return "NODE_FAIL";
    default:
        return "CANCELLED";
    }
}

/* The batch step of a batch job: RUNNING while the job runs (end 0), then
 * its state follows the job's end. */
static json_t *acct_batch_rec(const ctld_job_t *job)
{
    bool ended = loom_job_state_is_terminal(job->state);
    const char *state = acct_batch_state(job);
    uint32_t ncpus = job->alloc.nnodes ? job->alloc.nodes[0].ncpus : 1;
    char tres[96];
    acct_step_tres(ncpus, job->alloc.nnodes ? job->alloc.nodes[0].mem : 0, 1, tres, sizeof(tres));
    json_t *rec = json_pack(
        "{s:I, s:I, s:s, s:s, s:s, s:i, s:I, s:I, s:s, s:i, s:i, s:I, s:s}", "job_id",
        (json_int_t)job->id, "submit_time", (json_int_t)job->submit_time, "step_id", "batch",
        "name", "batch", "state", state, "exit_code", job->exit_code, "start_time",
        (json_int_t)job->start_time, "end_time", (json_int_t)(ended ? job->end_time : 0), "nodes",
        job->batch_host, "nnodes", 1, "ntasks", 1, "ncpus", (json_int_t)ncpus, "tres_alloc", tres);
    if (job->tot_sus_time) /* suspended with its job */
        json_object_set_new(rec, "tot_sus_time", json_integer(job->tot_sus_time));
    return rec;
}

static void acct_put(ctld_t *c, const char *kind, json_t *rec)
{
    if (rec)
        ctld_acct_spool_add(c->acct->sp, c->journal, kind, rec);
    json_decref(rec);
}

static void acct_job_key(uint32_t id, char *key, size_t size)
{
    snprintf(key, size, "%u", (unsigned)id);
}

static void acct_put_job(ctld_t *c, ctld_job_t *job)
{
    acct_put(c, "job", acct_job_rec(c, job));
    loom_job_state_t b = loom_job_base(job->state);
    if (!job->batch || !job->batch_host || !job->start_time || /* salloc/srun: no batch step */
        (!loom_job_state_is_terminal(job->state) && b != LOOM_JOB_RUNNING &&
         b != LOOM_JOB_SUSPENDED))
        return;
    char key[16];
    acct_job_key(job->id, key, sizeof(key));
    json_t *rec = acct_batch_rec(job);
    const char *text = json_string_value(json_object_get(c->acct->batch_usage, key));
    json_t *usage = text ? json_loads(text, 0, NULL) : NULL;
    if (json_is_object(usage))
        json_object_update_missing(rec, usage);
    json_decref(usage);
    acct_put(c, "step", rec);
}

/* ---- marking and writing ------------------------------------------------------------- */

static void acct_mark(ctld_acct_t *a, json_int_t id)
{
    if (id <= 0 || id > UINT32_MAX)
        return;
    if (a->ndirty == a->cap) {
        a->cap = a->cap ? a->cap * 2 : 256;
        a->dirty = loom_xreallocarray(a->dirty, a->cap, sizeof(*a->dirty));
    }
    a->dirty[a->ndirty++] = (uint32_t)id;
}

static int acct_cmp_u32(const void *x, const void *y)
{
    uint32_t a = *(const uint32_t *)x, b = *(const uint32_t *)y;
    return a < b ? -1 : a > b;
}

/* Write the current record of every marked job. */
static void acct_flush(ctld_t *c)
{
    ctld_acct_t *a = c->acct;
    if (a->ndirty > 1)
        qsort(a->dirty, a->ndirty, sizeof(*a->dirty), acct_cmp_u32);
    for (size_t i = 0; i < a->ndirty; i++) {
        if (i && a->dirty[i] == a->dirty[i - 1])
            continue;
        ctld_job_t *job = ctld_job_find(c, a->dirty[i]);
        if (job)
            acct_put_job(c, job);
    }
    a->ndirty = 0;
}

static void acct_round_start(void *arg)
{
    ctld_t *c = arg;
    acct_flush(c);
    ctld_acct_spool_round_start(c->acct->sp);
}

static void acct_round_done(void *arg, int status)
{
    ctld_t *c = arg;
    ctld_acct_spool_round_done(c->acct->sp, status);
    ctld_acct_link_kick(c->acct->link);
}

/* ---- the hooks ---------------------------------------------------------------------------- */

static ctld_job_t *acct_ev_job(const ctld_t *c, const json_t *ev)
{
    json_int_t id = json_integer_value(json_object_get(ev, "job_id"));
    return id > 0 && id <= UINT32_MAX ? ctld_job_find(c, (uint32_t)id) : NULL;
}

/* Steps still open when the job's nodes are released end CANCELLED. */
static void acct_steps_cancelled(ctld_t *c, ctld_job_t *job, int64_t t)
{
    int64_t end = job->end_time ? job->end_time : t;
    for (size_t i = 0; i < job->nsteps; i++)
        acct_put(c, "step", acct_step_rec(job, job->steps[i], "CANCELLED", 0, end));
}

static void acct_before_state(ctld_t *c, const json_t *ev, int64_t t)
{
    ctld_job_t *job = acct_ev_job(c, ev);
    const char *e = json_string_value(json_object_get(ev, "event"));
    if (!job || !e)
        return;
    if (strcmp(e, "epilog_done") == 0) {
        acct_steps_cancelled(c, job, t);
    } else if (job->start_time && (strcmp(e, "requeue") == 0 || strcmp(e, "requeue_hold") == 0 ||
                                   strcmp(e, "special_exit") == 0)) {
        json_t *rec = acct_job_rec(c, job);
        json_object_set_new(rec, "state", json_string("REQUEUED"));
        if (!job->end_time)
            json_object_set_new(rec, "end_time", json_integer(t));
        acct_put(c, "job", rec);
        if (job->batch && job->batch_host && !loom_job_state_is_terminal(job->state)) {
            rec = acct_batch_rec(job); /* the run's batch step, RUNNING till now */
            json_object_set_new(rec, "state", json_string("CANCELLED"));
            json_object_set_new(rec, "end_time", json_integer(t));
            acct_put(c, "step", rec);
        }
    }
}

/* A step's last record, with the usage its nodes reported (step_mgr.h). */
static void acct_step_end(ctld_t *c, const json_t *ev, int64_t t)
{
    ctld_job_t *job = acct_ev_job(c, ev);
    json_int_t sid = json_integer_value(json_object_get(ev, "step_id"));
    ctld_step_t *s = job ? ctld_job_step_find(job, (uint32_t)sid) : NULL;
    if (!s)
        return;
    int code = (int)json_integer_value(json_object_get(ev, "exit_code"));
    /* A step whose status is a signal is CANCELLED, as slurmdbd records it. */
    const char *state = loom_job_base(job->state) == LOOM_JOB_CANCELLED ? "CANCELLED"
                        : json_is_true(json_object_get(ev, "oom"))      ? "OUT_OF_MEMORY"
                        : WIFSIGNALED(code)                             ? "CANCELLED"
                        : code                                          ? "FAILED"
                                                                        : "COMPLETED";
    json_t *rec = acct_step_rec(job, s, state, code, t);
    json_t *usage = json_object_get(ev, "usage");
    if (json_is_object(usage))
        json_object_update_missing(rec, usage);
    acct_put(c, "step", rec);
}

void ctld_acct_before(ctld_t *c, const json_t *ev)
{
    if (!c->acct)
        return;
    const char *type = json_string_value(json_object_get(ev, "ev"));
    int64_t t = json_integer_value(json_object_get(ev, "t"));
    if (!type)
        return;
    if (strcmp(type, "job.purge") == 0) {
        acct_flush(c);
        char key[16];
        acct_job_key((uint32_t)json_integer_value(json_object_get(ev, "job_id")), key, sizeof(key));
        json_object_del(c->acct->batch_usage, key);
    } else if (strcmp(type, "job.state") == 0) {
        acct_before_state(c, ev, t);
    } else if (strcmp(type, "step.end") == 0) {
        acct_step_end(c, ev, t);
    }
}

void ctld_acct_after(ctld_t *c, const json_t *ev)
{
    if (!c->acct)
        return;
    const char *type = json_string_value(json_object_get(ev, "ev"));
    if (!type)
        return;
    if (strcmp(type, "job.submit") == 0) {
        acct_mark(c->acct,
                  json_integer_value(json_object_get(json_object_get(ev, "job"), "job_id")));
    } else if (strcmp(type, "step.create") == 0) {
        ctld_job_t *job = acct_ev_job(c, ev);
        json_int_t sid =
            json_integer_value(json_object_get(json_object_get(ev, "step"), "step_id"));
        ctld_step_t *s = job ? ctld_job_step_find(job, (uint32_t)sid) : NULL;
        if (s)
            acct_put(c, "step", acct_step_rec(job, s, "RUNNING", 0, 0));
    } else if (strcmp(type, "step.usage") == 0) { /* the batch step's usage, before its end */
        json_int_t id = json_integer_value(json_object_get(ev, "job_id"));
        json_t *usage = json_object_get(ev, "usage");
        char key[16];
        acct_job_key((uint32_t)id, key, sizeof(key));
        char *text = json_is_object(usage) ? json_dumps(usage, JSON_COMPACT) : NULL;
        if (text)
            json_object_set_new(c->acct->batch_usage, key, json_string(text));
        free(text);
        acct_mark(c->acct, id);
    } else if (strncmp(type, "job.", 4) == 0 || strcmp(type, "array.split") == 0) {
        acct_mark(c->acct, json_integer_value(json_object_get(ev, "job_id")));
        acct_mark(c->acct, json_integer_value(json_object_get(ev, "new_id")));
    }
}

/* ---- capacity ------------------------------------------------------------------------------ */

/* "cpu=..,mem=..M,node=..,billing=..[,gres/gpu=..]" over the nodes that pass. */
static void acct_tres_text(const ctld_t *c, bool down_only, loom_sbuf_t *out)
{
    uint64_t cpus = 0, mem = 0, gpus = 0;
    size_t nodes = 0;
    for (size_t i = 0; i < c->nnodes; i++) {
        uint32_t st = c->nodes[i].state;
        bool down = loom_node_base(st) == LOOM_NODE_DOWN || (st & LOOM_NODE_F_DRAIN);
        if (down_only && !down)
            continue;
        const loom_sched_node_t *n = &c->snodes[i];
        cpus += n->cpus;
        mem += n->mem_total;
        gpus += n->gpus;
        nodes++;
    }
    if (!nodes)
        return;
    loom_sbuf_addf(out, "cpu=%" PRIu64 ",mem=%" PRIu64 "M,node=%zu,billing=%" PRIu64, cpus, mem,
                   nodes, cpus);
    if (gpus)
        loom_sbuf_addf(out, ",gres/gpu=%" PRIu64, gpus);
}

static void acct_capacity(ctld_t *c)
{
    loom_sbuf_t tres = LOOM_SBUF_INIT, down = LOOM_SBUF_INIT, both = LOOM_SBUF_INIT;
    acct_tres_text(c, false, &tres);
    acct_tres_text(c, true, &down);
    loom_sbuf_addf(&both, "%s|%s", loom_sbuf_str(&tres), loom_sbuf_str(&down));
    if (!c->acct->tres_sent || strcmp(c->acct->tres_sent, loom_sbuf_str(&both)) != 0) {
        free(c->acct->tres_sent);
        c->acct->tres_sent = loom_sbuf_detach(&both);
        ctld_acct_link_tres(c->acct->link,
                            json_pack("{s:I, s:s, s:s}", "time", (json_int_t)ctld_now(), "tres",
                                      loom_sbuf_str(&tres), "down_tres", loom_sbuf_str(&down)));
    }
    loom_sbuf_free(&tres);
    loom_sbuf_free(&down);
    loom_sbuf_free(&both);
}

void ctld_acct_tick(ctld_t *c)
{
    if (c->acct)
        acct_capacity(c);
}

/* ---- life ------------------------------------------------------------------------------------ */

int ctld_acct_start(ctld_t *c, loom_err_t *err)
{
    const char *type = c->conf->accounting_storage_type;
    if (!type || strcasecmp(type, "accounting_storage/slurmdbd") != 0 || !c->journal)
        return 0;
    ctld_acct_t *a = loom_xcalloc(1, sizeof(*a));
    a->batch_usage = json_object();
    int rc = ctld_acct_spool_open(c->conf->state_save_location, &a->sp, err);
    if (rc < 0) {
        json_decref(a->batch_usage);
        free(a);
        return rc;
    }
    if (!c->key)
        loom_error("accounting: no cluster key: loomdbd will refuse the records (spooled)");
    a->link = ctld_acct_link_new(c->loop, a->sp, c->conf, c->key);
    c->acct = a;
    loom_journal_set_hooks(c->journal, acct_round_start, acct_round_done, c);
    for (size_t i = 0; i < c->jobs_all.n; i++)
        acct_mark(a, ((ctld_job_t *)c->jobs_all.v[i])->id);
    acct_capacity(c);
    loom_info("accounting: records for loomdbd, %" PRIu64 " spooled from before",
              ctld_acct_spool_durable(a->sp) - ctld_acct_spool_acked_seq(a->sp));
    ctld_acct_link_kick(a->link);
    return 0;
}

void ctld_acct_stop(ctld_t *c)
{
    if (c->acct) { /* the link frees itself once idle: no kick may reach it after */
        ctld_acct_link_stop(c->acct->link);
        c->acct->link = NULL;
    }
}

void ctld_acct_free(ctld_t *c)
{
    ctld_acct_t *a = c->acct;
    if (!a)
        return;
    ctld_acct_spool_free(a->sp);
    free(a->dirty);
    free(a->tres_sent);
    json_decref(a->batch_usage);
    free(a);
    c->acct = NULL;
}

void ctld_acct_describe(const ctld_t *c, loom_sbuf_t *out)
{
    if (c->acct)
        ctld_acct_link_describe(c->acct->link, out);
}
