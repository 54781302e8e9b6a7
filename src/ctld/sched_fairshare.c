/* sched_fairshare.c - fair-share usage, its state file, the factors and
 * assoc.shares. See sched_fairshare.h. */
#include "ctld/sched_fairshare.h"
#include "common/jobstate.h"
#include "common/log.h"
#include "common/proto.h"
#include "common/sbuf.h"
#include "common/xalloc.h"
#include "ctld/assoc_mgr.h"
#include "ctld/sched_x.h"
#include "sched/fairtree.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The TRES whose usage is kept beside the billing (GrpTRESRaw). */
enum { FS_CPU, FS_MEM, FS_NODE, FS_BILLING, FS_GPU, FS_NTRES };
static const char *const fs_tres_keys[FS_NTRES] = {"cpu", "mem", "node", "billing", "gres/gpu"};
enum { FS_WALL = FS_NTRES + 1 };    /* an entry's index of the wall-clock seconds */
#define FS_QOS_PREFIX "\036qos\037" /* not an association key (they have two \037) */

struct ctld_fairshare {
    uv_timer_t *timer; /* its own allocation: freed by its close callback */
    json_t *usage;     /* "account\037user\037partition" -> [billing, per FS_* TRES...] */
    int64_t last;      /* the last calculation (0: none yet) */
    int64_t half_life, period;
    loom_fairtree_reset_t reset;
    bool max_tres;
    char *path;
    /* The factors of the last computation, for the tree of generation gen. */
    uint64_t gen;
    size_t n;
    loom_fairtree_node_t *nodes; /* depth-first from the root */
    const ctld_assoc_t **assoc;  /* per node */
    uint32_t *node_of;           /* per assoc idx: node index, UINT32_MAX if none */
    size_t nassoc;
};

/* ---- usage ------------------------------------------------------------------------- */

static char *fs_key(const char *account, const char *user, const char *partition)
{
    loom_sbuf_t sb = LOOM_SBUF_INIT;
    loom_sbuf_addf(&sb, "%s\037%s\037%s", account ? account : "", user ? user : "",
                   partition ? partition : "");
    return loom_sbuf_detach(&sb);
}

/* An entry: [billing, per FS_* TRES..., wall seconds] (the wall, for GrpWall, came
 * later: shorter saved entries are padded). */
static json_t *fs_entry_key(ctld_fairshare_t *fs, const char *key)
{
    json_t *e = json_object_get(fs->usage, key);
    if (!json_is_array(e)) {
        e = json_array();
        json_object_set_new(fs->usage, key, e);
    }
    while (json_array_size(e) <= FS_WALL)
        json_array_append_new(e, json_real(0));
    return e;
}

static json_t *fs_entry(ctld_fairshare_t *fs, const ctld_assoc_t *a)
{
    char *key = fs_key(a->account, a->user, a->partition);
    json_t *e = fs_entry_key(fs, key);
    free(key);
    return e;
}

/* A QOS's usage (its GrpTRESMins, GrpWall), under FS_QOS_PREFIX + name. */
static json_t *fs_qos_entry(ctld_fairshare_t *fs, const char *qos)
{
    loom_sbuf_t sb = LOOM_SBUF_INIT;
    loom_sbuf_addf(&sb, "%s%s", FS_QOS_PREFIX, qos);
    json_t *e = fs_entry_key(fs, loom_sbuf_str(&sb));
    loom_sbuf_free(&sb);
    return e;
}

static void fs_entry_add(json_t *e, size_t i, double v)
{
    json_t *x = json_array_get(e, i);
    if (json_is_number(x))
        json_real_set(x, json_number_value(x) + v);
}

static void fs_decay_all(ctld_fairshare_t *fs, double factor)
{
    const char *key;
    json_t *e;
    json_object_foreach(fs->usage, key, e)
    {
        size_t i;
        json_t *x;
        json_array_foreach(e, i, x)
        {
            if (json_is_number(x))
                json_real_set(x, factor == 0 ? 0 : json_number_value(x) * factor);
        }
    }
}

/* The job's TRES counts for its billing and GrpTRESRaw. */
static void fs_job_tres(const ctld_job_t *job, loom_fairtree_tres_t *t)
{
    uint32_t nodes = job->alloc.nnodes ? (uint32_t)job->alloc.nnodes : job->min_nodes;
    t->cpus = job->alloc.ncpus ? job->alloc.ncpus : job->min_cpus;
    t->nodes = nodes;
    if (job->mem_per_node)
        t->mem_mib = job->mem_per_node * nodes;
    else
        t->mem_mib = job->mem_per_cpu * t->cpus;
    t->gpus =
        loom_gres_count(&job->gres_list, "gpu") * nodes + loom_gres_count(&job->gpus_list, "gpu");
}

static void fs_charge_job(ctld_fairshare_t *fs, const ctld_assoc_tree_t *tree,
                          const ctld_job_t *job, int64_t to)
{
    int64_t from = job->start_time > fs->last ? job->start_time : fs->last;
    if (job->start_time <= 0 || to <= from)
        return;
    const char *part = job->part ? job->part->cfg->name : NULL;
    const ctld_assoc_t *a = ctld_assoc_find(tree, job->user, job->account, part);
    if (!a)
        return;
    loom_fairtree_tres_t t = {0};
    fs_job_tres(job, &t);
    const char *w = job->part ? job->part->cfg->tres_billing_weights : NULL;
    double billing = loom_fairtree_billing(w, &t, fs->max_tres, NULL);
    if (billing < 0)
        billing = (double)t.cpus; /* the weights did not parse: CPUs, as without them */
    const ctld_qos_t *q = job->qos ? ctld_assoc_qos(tree, job->qos) : NULL;
    double uf = q ? q->usage_factor : 1;
    double decay = loom_fairtree_charge(1, to - from, fs->half_life);
    double counts[FS_NTRES] = {(double)t.cpus, (double)t.mem_mib, (double)t.nodes, billing,
                               (double)t.gpus};
    /* The association, the job's QOS and its partition's QOS (their GrpTRESMins). */
    const char *pq = job->part ? job->part->cfg->qos : NULL;
    const ctld_qos_t *q2 = pq && *pq ? ctld_assoc_qos(tree, pq) : NULL;
    json_t *es[3] = {fs_entry(fs, a), q ? fs_qos_entry(fs, q->name) : NULL,
                     q2 && q2 != q ? fs_qos_entry(fs, q2->name) : NULL};
    for (size_t k = 0; k < 3; k++) {
        if (!es[k])
            continue;
        fs_entry_add(es[k], 0, billing * uf * decay);
        for (size_t i = 0; i < FS_NTRES; i++)
            fs_entry_add(es[k], i + 1, counts[i] * uf * decay);
        fs_entry_add(es[k], FS_WALL, decay);
    }
}

/* Decay (or reset) everything, then charge what ran since the last time. */
static void fs_charge(ctld_t *c, ctld_fairshare_t *fs, int64_t now)
{
    if (now <= fs->last)
        return;
    if (loom_fairtree_reset_due(fs->reset, fs->last, now))
        fs_decay_all(fs, 0);
    else if (fs->last > 0)
        fs_decay_all(fs, loom_fairtree_decay(now - fs->last, fs->half_life));
    const ctld_assoc_tree_t *tree = ctld_assoc_tree(c);
    for (size_t i = 0; tree && i < c->jobs_running.n; i++) {
        /* Suspended time is not charged; a completing job is charged to its end. */
        const ctld_job_t *job = c->jobs_running.v[i];
        loom_job_state_t st = loom_job_base(job->state);
        if (st == LOOM_JOB_RUNNING)
            fs_charge_job(fs, tree, job, now);
        else if (st != LOOM_JOB_SUSPENDED && job->end_time > fs->last)
            fs_charge_job(fs, tree, job, job->end_time < now ? job->end_time : now);
    }
    for (size_t i = 0; tree && i < c->jobs_done.n; i++) {
        const ctld_job_t *job = c->jobs_done.v[i];
        if (job->end_time > fs->last)
            fs_charge_job(fs, tree, job, job->end_time < now ? job->end_time : now);
    }
    fs->last = now;
}

/* ---- the state file ---------------------------------------------------------------- */

static void fs_load(ctld_fairshare_t *fs)
{
    json_error_t jerr;
    json_t *root = json_load_file(fs->path, 0, &jerr);
    if (!root) {
        if (access(fs->path, F_OK) == 0)
            loom_error("%s: %s (line %d); fair-share usage starts from zero", fs->path, jerr.text,
                       jerr.line);
        return;
    }
    json_t *usage = json_object_get(root, "usage");
    json_t *last = json_object_get(root, "last");
    if (json_is_object(usage) && json_is_integer(last)) {
        json_object_update(fs->usage, usage);
        fs->last = json_integer_value(last);
    } else {
        loom_error("%s: not a fair-share state file; usage starts from zero", fs->path);
    }
    json_decref(root);
}

static int fs_write_all(int fd, const char *s, size_t len)
{
    while (len) {
        ssize_t w = write(fd, s, len);
        if (w < 0)
            return -errno;
        s += w;
        len -= (size_t)w;
    }
    return 0;
}

static void fs_save(const ctld_fairshare_t *fs)
{
    json_t *root = json_pack("{s:I, s:O}", "last", (json_int_t)fs->last, "usage", fs->usage);
    char *text = json_dumps(root, JSON_COMPACT | JSON_SORT_KEYS);
    json_decref(root);
    loom_sbuf_t tmp = LOOM_SBUF_INIT;
    loom_sbuf_addf(&tmp, "%s.tmp", fs->path);
    int fd = open(loom_sbuf_str(&tmp), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    int rc = fd < 0 ? -errno : fs_write_all(fd, text, strlen(text));
    if (rc == 0 && fsync(fd) < 0)
        rc = -errno;
    if (fd >= 0 && close(fd) < 0 && rc == 0)
        rc = -errno;
    if (rc == 0 && rename(loom_sbuf_str(&tmp), fs->path) < 0)
        rc = -errno;
    if (rc < 0)
        loom_error("%s: %s", fs->path, strerror(-rc));
    loom_sbuf_free(&tmp);
    free(text);
}

/* ---- factors ----------------------------------------------------------------------- */

/* Append a and its subtree depth first: users first (by name, then
 * partition), then sub-accounts by name, as sshare lists them. */
static int fs_child_cmp(const void *x, const void *y)
{
    const ctld_assoc_t *a = *(const ctld_assoc_t *const *)x, *b = *(const ctld_assoc_t *const *)y;
    bool ua = a->user && *a->user, ub = b->user && *b->user;
    if (ua != ub)
        return ua ? -1 : 1;
    int r = ua ? strcmp(a->user, b->user) : strcmp(a->account, b->account);
    if (r == 0)
        r = strcmp(a->partition ? a->partition : "", b->partition ? b->partition : "");
    return r;
}

static void fs_add_subtree(ctld_fairshare_t *fs, const ctld_assoc_t *a, int32_t parent)
{
    if (fs->n >= fs->nassoc) /* each association is some one's child: never, unless corrupt */
        return;
    size_t me = fs->n++;
    bool user = a->user && *a->user;
    char *key = fs_key(a->account, a->user, a->partition);
    json_t *e = user ? json_object_get(fs->usage, key) : NULL;
    free(key);
    fs->nodes[me] =
        (loom_fairtree_node_t){.parent = parent,
                               .is_user = user,
                               .shares_raw = a->shares > 0 ? (uint32_t)a->shares : 0,
                               .usage_own = e ? json_number_value(json_array_get(e, 0)) : 0};
    fs->assoc[me] = a;
    if (a->idx < fs->nassoc)
        fs->node_of[a->idx] = (uint32_t)me;
    if (user || !a->nchildren)
        return;
    const ctld_assoc_t **kids = loom_xmalloc(a->nchildren * sizeof(*kids));
    memcpy(kids, a->children, a->nchildren * sizeof(*kids));
    qsort(kids, a->nchildren, sizeof(*kids), fs_child_cmp);
    for (size_t i = 0; i < a->nchildren; i++)
        fs_add_subtree(fs, kids[i], (int32_t)me);
    free(kids);
}

static void fs_rebuild(const ctld_t *c, ctld_fairshare_t *fs)
{
    const ctld_assoc_tree_t *tree = ctld_assoc_tree(c);
    fs->gen = ctld_assoc_generation(c);
    fs->n = 0;
    if (!tree || !tree->root)
        return;
    fs->nodes = loom_xrealloc(fs->nodes, tree->nassocs * sizeof(*fs->nodes));
    fs->assoc = loom_xrealloc(fs->assoc, tree->nassocs * sizeof(*fs->assoc));
    fs->node_of = loom_xrealloc(fs->node_of, tree->nassocs * sizeof(*fs->node_of));
    fs->nassoc = tree->nassocs;
    for (size_t i = 0; i < fs->nassoc; i++)
        fs->node_of[i] = UINT32_MAX;
    fs_add_subtree(fs, tree->root, -1);
    loom_err_t err = {0};
    if (loom_fairtree_compute(fs->nodes, fs->n, &err) < 0) {
        loom_error("fair-share: %s", err.msg);
        fs->n = 0;
    }
}

double ctld_fairshare_factor(const ctld_t *c, ctld_fairshare_t *fs, const ctld_job_t *job)
{
    if (!fs)
        return 0;
    const ctld_assoc_tree_t *tree = ctld_assoc_tree(c);
    if (!tree)
        return 0;
    if (fs->gen != ctld_assoc_generation(c))
        fs_rebuild(c, fs);
    const char *part = job->part ? job->part->cfg->name : NULL;
    const ctld_assoc_t *a = ctld_assoc_find(tree, job->user, job->account, part);
    if (!a || a->idx >= fs->nassoc || fs->node_of[a->idx] == UINT32_MAX)
        return 0;
    return fs->nodes[fs->node_of[a->idx]].fs_factor;
}

void ctld_fairshare_usage_each(const ctld_t *c, ctld_fairshare_usage_f f, void *arg)
{
    const ctld_fairshare_t *fs = c->sched.x ? c->sched.x->fs : NULL;
    if (!fs)
        return;
    size_t plen = strlen(FS_QOS_PREFIX);
    const char *key;
    json_t *e;
    json_object_foreach(fs->usage, key, e)
    {
        ctld_tres_t secs = {0};
        for (size_t k = 0; k < FS_NTRES; k++) {
            double v = json_number_value(json_array_get(e, k + 1));
            ctld_tres_add(&secs, fs_tres_keys[k], v > 0 && v < 9e18 ? (int64_t)v : 0);
        }
        double w = json_number_value(json_array_get(e, FS_WALL));
        int64_t wall = w > 0 && w < 9e18 ? (int64_t)w : 0;
        bool qos = strncmp(key, FS_QOS_PREFIX, plen) == 0;
        f(arg, qos ? NULL : key, qos ? key + plen : NULL, &secs, wall);
    }
}

/* ---- the timer --------------------------------------------------------------------- */

static void fs_tick(uv_timer_t *t)
{
    ctld_t *c = t->data;
    ctld_fairshare_t *fs = c->sched.x ? c->sched.x->fs : NULL;
    if (!fs)
        return;
    fs_charge(c, fs, ctld_now());
    fs_rebuild(c, fs);
    fs_save(fs);
}

static void fs_timer_closed(uv_handle_t *h)
{
    free(h);
}

ctld_fairshare_t *ctld_fairshare_init(ctld_t *c)
{
    const loom_conf_t *cf = c->conf;
    ctld_fairshare_t *fs = loom_xcalloc(1, sizeof(*fs));
    fs->usage = json_object();
    fs->half_life = cf->priority_decay_half_life;
    fs->period = cf->priority_calc_period > 0 ? cf->priority_calc_period : 300;
    fs->max_tres = cf->priority_flags && strcasestr(cf->priority_flags, "MAX_TRES");
    loom_err_t err = {0};
    if (loom_fairtree_parse_reset(cf->priority_usage_reset_period, &fs->reset, &err) < 0)
        loom_error("%s; ignored", err.msg);
    loom_sbuf_t sb = LOOM_SBUF_INIT;
    loom_sbuf_addf(&sb, "%s/fairshare_usage.json",
                   cf->state_save_location ? cf->state_save_location : ".");
    fs->path = loom_sbuf_detach(&sb);
    fs_load(fs);
    if (loom_fairtree_reset_due(fs->reset, 0, ctld_now())) /* NOW: at start and reconfigure */
        fs_decay_all(fs, 0);
    fs->timer = loom_xcalloc(1, sizeof(*fs->timer));
    uv_timer_init(c->loop, fs->timer);
    fs->timer->data = c;
    uint64_t ms = (uint64_t)fs->period * 1000;
    uv_timer_start(fs->timer, fs_tick, ms, ms);
    return fs;
}

void ctld_fairshare_fini(ctld_t *c, ctld_fairshare_t *fs)
{
    if (!fs)
        return;
    if (fs->timer) {
        uv_timer_stop(fs->timer);
        uv_close((uv_handle_t *)fs->timer, fs_timer_closed);
        fs_charge(c, fs, ctld_now());
        fs_save(fs);
    }
    json_decref(fs->usage);
    free(fs->path);
    free(fs->nodes);
    free(fs->assoc);
    free(fs->node_of);
    free(fs);
}

/* ---- assoc.shares ------------------------------------------------------------------ */

/* "cpu,mem,energy,node,billing,fs/disk,vmem,pages" plus AccountingStorageTRES's others. */
static void fs_tres_names(const ctld_t *c, loom_strv_t *names)
{
    static const char *const base[] = {"cpu",     "mem",     "energy", "node",
                                       "billing", "fs/disk", "vmem",   "pages"};
    for (size_t i = 0; i < sizeof(base) / sizeof(base[0]); i++)
        loom_strv_add(names, base[i]);
    const char *extra = c->conf->accounting_storage_tres;
    if (!extra)
        return;
    char *copy = loom_xstrdup(extra), *save = NULL;
    for (char *t = strtok_r(copy, ",", &save); t; t = strtok_r(NULL, ",", &save))
        if (loom_strv_find(names, t) < 0)
            loom_strv_add(names, t);
    free(copy);
}

/* "name=count,..." over names, counts (per FS_* index) divided by div. */
static char *fs_tres_text(const loom_strv_t *names, const double *v, double div)
{
    loom_sbuf_t sb = LOOM_SBUF_INIT;
    for (size_t i = 0; i < names->n; i++) {
        double x = 0;
        for (size_t k = 0; k < FS_NTRES; k++)
            if (!strcmp(names->v[i], fs_tres_keys[k]))
                x = v[k] / div;
        loom_sbuf_addf(&sb, "%s%s=%llu", i ? "," : "", names->v[i],
                       (unsigned long long)(x > 0 ? floor(x) : 0));
    }
    return loom_sbuf_detach(&sb);
}

/* A TRES limit as sshare's GrpTRESMins shows it: "cpu=100,mem=2048,gres/gpu=5", in
 * the order of names, then the rest as stored; "" when none. */
static char *fs_limit_text(const loom_strv_t *names, const ctld_tres_t *lim)
{
    loom_sbuf_t sb = LOOM_SBUF_INIT;
    for (size_t i = 0; i < names->n; i++) {
        int64_t v = ctld_tres_get(lim, names->v[i]);
        if (v >= 0)
            loom_sbuf_addf(&sb, "%s%s=%lld", sb.len ? "," : "", names->v[i], (long long)v);
    }
    for (size_t i = 0; i < lim->n; i++)
        if (loom_strv_find(names, lim->it[i].name) < 0)
            loom_sbuf_addf(&sb, "%s%s=%lld", sb.len ? "," : "", lim->it[i].name,
                           (long long)lim->it[i].v);
    return loom_sbuf_detach(&sb);
}

/* Per node: GrpTRESRaw (TRES-seconds used, decayed) and TRESRunMins
 * (TRES-seconds that running jobs may still use), summed up the tree. */
static void fs_node_tres(const ctld_t *c, const ctld_fairshare_t *fs, double (*raw)[FS_NTRES],
                         double (*run)[FS_NTRES])
{
    for (size_t i = 0; i < fs->n; i++) {
        const ctld_assoc_t *a = fs->assoc[i];
        char *key = fs_key(a->account, a->user, a->partition);
        json_t *e = fs->nodes[i].is_user ? json_object_get(fs->usage, key) : NULL;
        free(key);
        for (size_t k = 0; e && k < FS_NTRES; k++)
            raw[i][k] = json_number_value(json_array_get(e, k + 1));
    }
    const ctld_assoc_tree_t *tree = ctld_assoc_tree(c);
    int64_t now = ctld_now();
    for (size_t j = 0; j < c->jobs_running.n; j++) {
        const ctld_job_t *job = c->jobs_running.v[j];
        if (job->time_limit <= 0 || job->start_time <= 0)
            continue;
        int64_t left = job->start_time + job->time_limit * 60 - now;
        const ctld_assoc_t *a =
            ctld_assoc_find(tree, job->user, job->account, job->part ? job->part->cfg->name : NULL);
        if (left <= 0 || !a || a->idx >= fs->nassoc || fs->node_of[a->idx] == UINT32_MAX)
            continue;
        loom_fairtree_tres_t t = {0};
        fs_job_tres(job, &t);
        double counts[FS_NTRES] = {(double)t.cpus, (double)t.mem_mib, (double)t.nodes,
                                   (double)t.cpus, (double)t.gpus};
        for (size_t k = 0; k < FS_NTRES; k++)
            run[fs->node_of[a->idx]][k] += counts[k] * (double)left;
    }
    for (size_t i = fs->n; i-- > 1;) {
        for (size_t k = 0; k < FS_NTRES; k++) {
            raw[fs->nodes[i].parent][k] += raw[i][k];
            run[fs->nodes[i].parent][k] += run[i][k];
        }
    }
}

static bool fs_listed(const json_t *list, const char *s)
{
    if (!json_is_array(list) || !json_array_size(list))
        return true;
    size_t i;
    json_t *v;
    json_array_foreach(list, i, v)
    {
        if (json_is_string(v) && s && !strcmp(json_string_value(v), s))
            return true;
    }
    return false;
}

static json_t *fs_row(const ctld_t *c, const ctld_fairshare_t *fs, size_t i, const char *grp,
                      const char *raw, const char *run)
{
    const loom_fairtree_node_t *n = &fs->nodes[i];
    const ctld_assoc_t *a = fs->assoc[i];
    bool root = n->parent < 0;
    json_t *r = json_pack(
        "{s:I, s:s, s:s, s:s, s:s, s:I, s:f, s:f, s:f, s:s, s:s, s:s}", "id", (json_int_t)a->id,
        "cluster", c->conf->cluster_name ? c->conf->cluster_name : "", "account",
        a->account ? a->account : "", "user", a->user ? a->user : "", "partition",
        a->partition ? a->partition : "", "parent_id", (json_int_t)(a->parent ? a->parent->id : 0),
        "norm_shares", n->shares_norm, "raw_usage", n->usage_raw, "eff_usage", n->usage_efctv,
        "grp_tres_mins", grp, "grp_tres_raw", raw, "tres_run_mins", run);
    if (!root) {
        json_object_set_new(r, "raw_shares", json_integer((json_int_t)n->shares_raw));
        json_object_set_new(r, "norm_usage", json_real(n->usage_norm));
        json_object_set_new(r, "level_fs",
                            isinf(n->level_fs) ? json_string("inf") : json_real(n->level_fs));
    }
    if (n->is_user)
        json_object_set_new(r, "fairshare", json_real(n->fs_factor));
    return r;
}

/* Under priority/basic nothing computes shares or usage: sshare 22.05 then
 * shows RawShares only, usage and factors 0, NormShares and NormUsage blank
 * and LevelFS 0 on every row, the root's too (checked side by side). */
static void fs_row_basic(json_t *r, bool user)
{
    json_object_del(r, "norm_shares");
    json_object_del(r, "norm_usage");
    json_object_set_new(r, "raw_usage", json_real(0));
    json_object_set_new(r, "eff_usage", json_real(0));
    json_object_set_new(r, "level_fs", json_real(0));
    if (user)
        json_object_set_new(r, "fairshare", json_real(0));
}

static void fs_rows(const ctld_t *c, ctld_fairshare_t *fs, const json_t *req,
                    const loom_strv_t *names, bool basic, json_t *rows)
{
    const json_t *users = json_object_get(req, "users");
    const json_t *accounts = json_object_get(req, "accounts");
    fs_rebuild(c, fs);
    double(*tr)[FS_NTRES] = loom_xcalloc(fs->n + 1, sizeof(*tr));
    double(*run)[FS_NTRES] = loom_xcalloc(fs->n + 1, sizeof(*run));
    if (!basic)
        fs_node_tres(c, fs, tr, run);
    for (size_t i = 0; i < fs->n; i++) {
        const ctld_assoc_t *a = fs->assoc[i];
        if ((fs->nodes[i].is_user && !fs_listed(users, a->user)) ||
            !fs_listed(accounts, a->account))
            continue;
        char *rt = fs_tres_text(names, tr[i], 60), *rr = fs_tres_text(names, run[i], 60);
        char *rg = fs_limit_text(names, &a->grp_tres_mins);
        json_t *r = fs_row(c, fs, i, rg, rt, rr);
        if (basic)
            fs_row_basic(r, fs->nodes[i].is_user);
        json_array_append_new(rows, r);
        free(rg);
        free(rt);
        free(rr);
    }
    free(tr);
    free(run);
}

int ctld_fairshare_h_shares(ctld_t *c, const ctld_peer_t *peer, const json_t *req, json_t **reply,
                            loom_sbuf_t *raw)
{
    (void)peer;
    (void)raw;
    /* Security: shares and usage are visible to every user, as sshare shows them
     * without PrivateData=usage. */
    ctld_fairshare_t *fs = c->sched.x ? c->sched.x->fs : NULL;
    json_t *rows = json_array();
    loom_strv_t names = LOOM_STRV_INIT;
    fs_tres_names(c, &names);
    if (fs) {
        fs_rows(c, fs, req, &names, false, rows);
    } else { /* priority/basic: the tree with nothing computed */
        ctld_fairshare_t basic = {.usage = json_object()};
        fs_rows(c, &basic, req, &names, true, rows);
        json_decref(basic.usage);
        free(basic.nodes);
        free(basic.assoc);
        free(basic.node_of);
    }
    json_t *tn = json_array();
    for (size_t i = 0; i < names.n; i++)
        json_array_append_new(tn, json_string(names.v[i]));
    loom_strv_free(&names);
    *reply = loom_msg_reply(req, 0, NULL);
    json_object_set_new(*reply, "shares", rows);
    json_object_set_new(*reply, "tres_names", tn);
    return 0;
}
