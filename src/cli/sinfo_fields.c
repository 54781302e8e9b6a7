/*
 * sinfo_fields.c - the getters behind sinfo's columns (CLI_SPEC §7.2).
 * Headers and unset-value texts were checked against sinfo 22.05. See
 * sinfo_fields.h for rows and grouping.
 */
#include "cli/sinfo_fields.h"

#include "common/hostlist.h"
#include "common/nodestate.h"
#include "common/timefmt.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define GETTER(fn)                                                                                 \
    static int fn(const void *ctx, const void *rec, loom_sbuf_t *out)                              \
    {                                                                                              \
        fn##_body((const loom_sinfo_view_t *)ctx, (const loom_sinfo_row_t *)rec, out);             \
        return 0;                                                                                  \
    }

/* A getter that is one call: helper(row, args..., out). */
#define GETTER_OF(fn, helper, ...)                                                                 \
    LOOM_FMT_GETTER_OF(fn, const loom_sinfo_row_t *, helper, __VA_ARGS__)

/* ---- attributes with the slurm.conf fallback ------------------------------ */

int64_t loom_sinfo_node_int(const loom_sinfo_node_t *n, const char *key)
{
    const loom_conf_nodecfg_t *c = n->cfg ? n->cfg->cfg : NULL;
    static const struct {
        const char *key;
        size_t off;
    } map[] = {
        {"cpus", offsetof(loom_conf_nodecfg_t, cpus)},
        {"boards", offsetof(loom_conf_nodecfg_t, boards)},
        {"sockets", offsetof(loom_conf_nodecfg_t, sockets)},
        {"cores", offsetof(loom_conf_nodecfg_t, cores_per_socket)},
        {"threads", offsetof(loom_conf_nodecfg_t, threads_per_core)},
        {"real_memory", offsetof(loom_conf_nodecfg_t, real_memory)},
        {"tmp_disk", offsetof(loom_conf_nodecfg_t, tmp_disk)},
        {"weight", offsetof(loom_conf_nodecfg_t, weight)},
    };
    int64_t dflt = 0;
    for (size_t i = 0; c && i < sizeof(map) / sizeof(map[0]); i++)
        if (strcmp(map[i].key, key) == 0)
            dflt = *(const int64_t *)((const char *)c + map[i].off);
    return loom_ji(n->rec, key, dflt);
}

static const char *fields_node_str(const loom_sinfo_node_t *n, const char *key)
{
    const char *s = loom_js(n->rec, key);
    return s && *s ? s : NULL;
}

/* Slurm 22.05's numbers: base states and the flags that sinfo -t sorts on. */
uint32_t loom_sinfo_slurm_state(uint32_t st)
{
    static const uint32_t base[] = {0, 1, 2, 3, 5, 6};
    static const struct {
        uint32_t loom, slurm;
    } flags[] = {
        {LOOM_NODE_F_RESERVED, 0x20},         {LOOM_NODE_F_CLOUD, 0x80},
        {LOOM_NODE_F_DRAIN, 0x200},           {LOOM_NODE_F_COMPLETING, 0x400},
        {LOOM_NODE_F_NO_RESPOND, 0x800},      {LOOM_NODE_F_POWERED_DOWN, 0x1000},
        {LOOM_NODE_F_FAIL, 0x2000},           {LOOM_NODE_F_POWERING_UP, 0x4000},
        {LOOM_NODE_F_MAINT, 0x8000},          {LOOM_NODE_F_REBOOT_REQUESTED, 0x10000},
        {LOOM_NODE_F_POWERING_DOWN, 0x40000}, {LOOM_NODE_F_REBOOT_ISSUED, 0x100000},
        {LOOM_NODE_F_PLANNED, 0x200000},      {LOOM_NODE_F_INVALID_REG, 0x400000},
        {LOOM_NODE_F_POWER_DOWN, 0x800000},
    };
    uint32_t b = loom_node_base(st);
    uint32_t v = b < sizeof(base) / sizeof(base[0]) ? base[b] : 0;
    for (size_t i = 0; i < sizeof(flags) / sizeof(flags[0]); i++)
        if (st & flags[i].loom)
            v |= flags[i].slurm;
    return v;
}

void loom_sinfo_part_name(const loom_sinfo_part_t *p, bool star, loom_sbuf_t *out)
{
    loom_sbuf_add(out, p->name);
    bool dflt = p->cfg ? p->cfg->is_default : false;
    dflt = loom_jb(p->rec, "default", dflt);
    if (star && dflt)
        loom_sbuf_addc(out, '*');
}

/* Minutes from the record, or the slurm.conf seconds; LOOM_TIME_* specials. */
static int64_t fields_part_time(const loom_sinfo_part_t *p, const char *key, int64_t conf_secs)
{
    if (p->rec && json_object_get(p->rec, key)) {
        int64_t m = loom_ji(p->rec, key, -1);
        return m < 0 ? LOOM_TIME_INFINITE : m * 60;
    }
    if (p->rec && json_object_get(p->rec, "name") && !p->cfg)
        return LOOM_TIME_NOT_SET;
    return conf_secs;
}

static const char *fields_part_state(const loom_sinfo_part_t *p)
{
    static const char *const names[] = {"UP", "DOWN", "DRAIN", "INACTIVE"};
    const char *s = loom_js(p->rec, "state");
    if (s)
        return s;
    return p->cfg && p->cfg->state >= 0 && p->cfg->state < 4 ? names[p->cfg->state] : "UP";
}

/* ---- partition columns ----------------------------------------------------- */

static bool fields_no_part(const loom_sinfo_row_t *r, loom_sbuf_t *out)
{
    if (r->part)
        return false;
    loom_sbuf_add(out, "n/a");
    return true;
}

/* The partition's name, with '*' for the default one (%P) or without (%R). */
static void fields_partition(const loom_sinfo_row_t *r, bool star, loom_sbuf_t *out)
{
    if (!fields_no_part(r, out))
        loom_sinfo_part_name(r->part, star, out);
}
GETTER_OF(partition, fields_partition, true)
GETTER_OF(partition_plain, fields_partition, false)

static void avail_body(const loom_sinfo_view_t *v, const loom_sinfo_row_t *r, loom_sbuf_t *out)
{
    if (fields_no_part(r, out))
        return;
    const char *s = fields_part_state(r->part);
    for (; *s; s++)
        loom_sbuf_addc(out, (char)(*s >= 'A' && *s <= 'Z' ? *s - 'A' + 'a' : *s));
}
GETTER(avail)

/* sinfo's time style: squeue's, with "infinite" and "n/a". */
static void fields_time(int64_t secs, loom_sbuf_t *out)
{
    if (secs == LOOM_TIME_INFINITE)
        loom_sbuf_add(out, "infinite");
    else if (secs == LOOM_TIME_NOT_SET)
        loom_sbuf_add(out, "n/a");
    else
        loom_time_fmt_elapsed(secs, out);
}

static void timelimit_body(const loom_sinfo_view_t *v, const loom_sinfo_row_t *r, loom_sbuf_t *out)
{
    if (!fields_no_part(r, out))
        fields_time(fields_part_time(r->part, "max_time",
                                     r->part->cfg ? r->part->cfg->max_time : LOOM_TIME_INFINITE),
                    out);
}
GETTER(timelimit)

static void default_time_body(const loom_sinfo_view_t *v, const loom_sinfo_row_t *r,
                              loom_sbuf_t *out)
{
    if (!fields_no_part(r, out))
        fields_time(fields_part_time(r->part, "default_time",
                                     r->part->cfg ? r->part->cfg->default_time : LOOM_TIME_NOT_SET),
                    out);
}
GETTER(default_time)

static void fields_count(int64_t v, loom_sbuf_t *out)
{
    if (v < 0)
        loom_sbuf_add(out, "infinite");
    else
        loom_sbuf_addf(out, "%lld", (long long)v);
}

static void job_size_body(const loom_sinfo_view_t *v, const loom_sinfo_row_t *r, loom_sbuf_t *out)
{
    if (fields_no_part(r, out))
        return;
    const loom_conf_part_t *c = r->part->cfg;
    int64_t lo = loom_ji(r->part->rec, "min_nodes", c ? c->min_nodes : 1);
    int64_t hi = loom_ji(r->part->rec, "max_nodes", c ? c->max_nodes : -1);
    if (lo < 1)
        lo = 1;
    if (lo == hi) {
        fields_count(lo, out);
        return;
    }
    fields_count(lo, out);
    loom_sbuf_addc(out, '-');
    fields_count(hi, out);
}
GETTER(job_size)

static void root_body(const loom_sinfo_view_t *v, const loom_sinfo_row_t *r, loom_sbuf_t *out)
{
    if (!fields_no_part(r, out))
        loom_sbuf_add(out, r->part->cfg && r->part->cfg->root_only ? "yes" : "no");
}
GETTER(root)

static void oversubscribe_body(const loom_sinfo_view_t *v, const loom_sinfo_row_t *r,
                               loom_sbuf_t *out)
{
    if (fields_no_part(r, out))
        return;
    const loom_conf_part_t *c = r->part->cfg;
    int mode = c ? c->oversubscribe : LOOM_CONF_OVERSUB_NO;
    if (mode == LOOM_CONF_OVERSUB_EXCLUSIVE)
        loom_sbuf_add(out, "EXCLUSIVE");
    else if (mode == LOOM_CONF_OVERSUB_YES || mode == LOOM_CONF_OVERSUB_FORCE)
        loom_sbuf_addf(out, "%s:%lld", mode == LOOM_CONF_OVERSUB_YES ? "YES" : "FORCE",
                       (long long)c->oversubscribe_n);
    else
        loom_sbuf_add(out, "NO");
}
GETTER(oversubscribe)

static void groups_body(const loom_sinfo_view_t *v, const loom_sinfo_row_t *r, loom_sbuf_t *out)
{
    if (fields_no_part(r, out))
        return;
    const loom_conf_part_t *c = r->part->cfg;
    if (!c || c->allow_groups.n == 0 ||
        (c->allow_groups.n == 1 && strcasecmp(c->allow_groups.v[0], "ALL") == 0)) {
        loom_sbuf_add(out, "all");
        return;
    }
    for (size_t i = 0; i < c->allow_groups.n; i++)
        loom_sbuf_addf(out, "%s%s", i ? "," : "", c->allow_groups.v[i]);
}
GETTER(groups)

static void prio_tier_body(const loom_sinfo_view_t *v, const loom_sinfo_row_t *r, loom_sbuf_t *out)
{
    if (!fields_no_part(r, out))
        loom_sbuf_addf(out, "%lld", (long long)(r->part->cfg ? r->part->cfg->priority_tier : 1));
}
GETTER(prio_tier)

static void prio_factor_body(const loom_sinfo_view_t *v, const loom_sinfo_row_t *r,
                             loom_sbuf_t *out)
{
    if (!fields_no_part(r, out))
        loom_sbuf_addf(out, "%lld",
                       (long long)(r->part->cfg ? r->part->cfg->priority_job_factor : 1));
}
GETTER(prio_factor)

/* %B: the partition's MaxCPUsPerNode. */
static void max_cpus_body(const loom_sinfo_view_t *v, const loom_sinfo_row_t *r, loom_sbuf_t *out)
{
    if (fields_no_part(r, out))
        return;
    int64_t m = r->part->cfg ? r->part->cfg->max_cpus_per_node : LOOM_CONF_UNLIMITED;
    if (m < 0)
        loom_sbuf_add(out, "UNLIMITED");
    else
        loom_sbuf_addf(out, "%lld", (long long)m);
}
GETTER(max_cpus)

/* %S: AllocNodes ("all" when unset). */
static void alloc_nodes_body(const loom_sinfo_view_t *v, const loom_sinfo_row_t *r,
                             loom_sbuf_t *out)
{
    if (fields_no_part(r, out))
        return;
    const loom_conf_part_t *c = r->part->cfg;
    if (!c || c->alloc_nodes.n == 0) {
        loom_sbuf_add(out, "all");
        return;
    }
    for (size_t i = 0; i < c->alloc_nodes.n; i++)
        loom_sbuf_addf(out, "%s%s", i ? "," : "", c->alloc_nodes.v[i]);
}
GETTER(alloc_nodes)

/* %V: the cluster column, filled only for -M (not supported): "N/A". Also the
 * -O Comment and Extra columns that nodes here never carry. */
LOOM_FMT_TEXT_GETTER(na, "N/A")
LOOM_FMT_TEXT_GETTER(null, "(null)")

static void preempt_body(const loom_sinfo_view_t *v, const loom_sinfo_row_t *r, loom_sbuf_t *out)
{
    static const char *const names[] = {"CANCEL", "REQUEUE", "SUSPEND", "GANG", "WITHIN"};
    if (fields_no_part(r, out))
        return;
    unsigned m = r->part->cfg ? r->part->cfg->preempt_mode : 0;
    if (!m)
        loom_sbuf_add(out, "OFF");
    for (unsigned i = 0, first = 1; i < 5; i++)
        if (m & (1u << i)) {
            loom_sbuf_addf(out, "%s%s", first ? "" : ",", names[i]);
            first = 0;
        }
}
GETTER(preempt)

/* ---- node columns ---------------------------------------------------------- */

static const loom_sinfo_node_t *fields_first(const loom_sinfo_row_t *r)
{
    return r->n ? r->nodes[0] : NULL;
}

/* The first node's state, compact (%t) or long (%T). */
static void fields_state(const loom_sinfo_row_t *r, bool compact, loom_sbuf_t *out)
{
    if (r->n)
        loom_node_state_sinfo(r->nodes[0]->state, compact, out);
    else
        loom_sbuf_add(out, "n/a");
}
GETTER_OF(state, fields_state, true)
GETTER_OF(state_long, fields_state, false)

/* StateComplete: every flag, "idle+drain", in lower case as sinfo 22.05. */
static void state_complete_body(const loom_sinfo_view_t *v, const loom_sinfo_row_t *r,
                                loom_sbuf_t *out)
{
    if (!r->n) {
        loom_sbuf_add(out, "n/a");
        return;
    }
    size_t from = out->len;
    loom_node_state_complete(r->nodes[0]->state, out);
    for (size_t i = from; i < out->len; i++)
        out->buf[i] = (char)tolower((unsigned char)out->buf[i]);
}
GETTER(state_complete)

static void node_count_body(const loom_sinfo_view_t *v, const loom_sinfo_row_t *r, loom_sbuf_t *out)
{
    loom_sbuf_addf(out, "%zu", r->n);
}
GETTER(node_count)

/* A sorted, compressed list of one name per node. */
static void fields_hostlist(const loom_sinfo_row_t *r, const char *key, loom_sbuf_t *out)
{
    loom_hostlist_t *hl = loom_hostlist_create();
    for (size_t i = 0; i < r->n; i++) {
        const loom_sinfo_node_t *n = r->nodes[i];
        const char *s = key ? fields_node_str(n, key) : NULL;
        if (!s && key && n->cfg)
            s = strcmp(key, "hostname") == 0 ? n->cfg->hostname : n->cfg->addr;
        loom_hostlist_push(hl, s ? s : n->name);
    }
    char *text = loom_hostlist_compress_sorted(hl);
    loom_sbuf_add(out, text);
    free(text);
    loom_hostlist_destroy(hl);
}

/* Node lists overflow a right-justified column instead of being cut. */
static int nodelist(const void *ctx, const void *rec, loom_sbuf_t *out)
{
    fields_hostlist(rec, NULL, out);
    return LOOM_FMT_NOCUT;
}

GETTER_OF(hostnames, fields_hostlist, "hostname")
GETTER_OF(addrs, fields_hostlist, "addr")

/* The minimum over the row, with '+' when the nodes differ (sinfo without -e). */
static void fields_min_plus(const loom_sinfo_row_t *r, const char *key, loom_sbuf_t *out)
{
    int64_t lo = 0, hi = 0;
    for (size_t i = 0; i < r->n; i++) {
        int64_t x = loom_sinfo_node_int(r->nodes[i], key);
        lo = i == 0 || x < lo ? x : lo;
        hi = i == 0 || x > hi ? x : hi;
    }
    loom_sbuf_addf(out, "%lld%s", (long long)lo, hi > lo ? "+" : "");
}

GETTER_OF(cpus, fields_min_plus, "cpus")
GETTER_OF(memory, fields_min_plus, "real_memory")
GETTER_OF(disk, fields_min_plus, "tmp_disk")
GETTER_OF(sockets, fields_min_plus, "sockets")
GETTER_OF(cores, fields_min_plus, "cores")
GETTER_OF(threads, fields_min_plus, "threads")

static void sct_body(const loom_sinfo_view_t *v, const loom_sinfo_row_t *r, loom_sbuf_t *out)
{
    fields_min_plus(r, "sockets", out);
    loom_sbuf_addc(out, ':');
    fields_min_plus(r, "cores", out);
    loom_sbuf_addc(out, ':');
    fields_min_plus(r, "threads", out);
}
GETTER(sct)

GETTER_OF(weight, fields_min_plus, "weight")

static bool fields_other(uint32_t st)
{
    return loom_node_base(st) == LOOM_NODE_DOWN || (st & (LOOM_NODE_F_DRAIN | LOOM_NODE_F_FAIL));
}

static bool fields_busy(uint32_t st)
{
    return loom_node_base(st) == LOOM_NODE_ALLOCATED || loom_node_base(st) == LOOM_NODE_MIXED;
}

static void cpus_aiot_body(const loom_sinfo_view_t *v, const loom_sinfo_row_t *r, loom_sbuf_t *out)
{
    int64_t a = 0, i = 0, o = 0, t = 0;
    for (size_t k = 0; k < r->n; k++) {
        const loom_sinfo_node_t *n = r->nodes[k];
        int64_t total = loom_sinfo_node_int(n, "cpus"), alloc = loom_ji(n->rec, "alloc_cpus", 0);
        t += total;
        a += alloc;
        if (fields_other(n->state))
            o += total - alloc;
        else
            i += total - alloc;
    }
    loom_sbuf_addf(out, "%lld/%lld/%lld/%lld", (long long)a, (long long)i, (long long)o,
                   (long long)t);
}
GETTER(cpus_aiot)

static void fields_nodes_aiot(const loom_sinfo_row_t *r, bool with_ot, loom_sbuf_t *out)
{
    size_t a = 0, i = 0, o = 0;
    for (size_t k = 0; k < r->n; k++) {
        uint32_t st = r->nodes[k]->state;
        if (fields_busy(st)) /* a draining node with jobs counts as allocated (sinfo 22.05) */
            a++;
        else if (fields_other(st))
            o++;
        else
            i++;
    }
    if (with_ot)
        loom_sbuf_addf(out, "%zu/%zu/%zu/%zu", a, i, o, r->n);
    else
        loom_sbuf_addf(out, "%zu/%zu", a, i);
}

GETTER_OF(nodes_aiot, fields_nodes_aiot, true)
GETTER_OF(nodes_ai, fields_nodes_aiot, false)

/* Free memory or load over the row: one value, "lo-hi", or N/A before reports. */
static void fields_range(const loom_sinfo_row_t *r, const char *key, bool real, loom_sbuf_t *out)
{
    double lo = 0, hi = 0;
    size_t seen = 0;
    for (size_t k = 0; k < r->n; k++) {
        if (!loom_jhas(r->nodes[k]->rec, key))
            continue;
        double x = loom_jd(r->nodes[k]->rec, key, 0);
        lo = seen == 0 || x < lo ? x : lo;
        hi = seen == 0 || x > hi ? x : hi;
        seen++;
    }
    if (!seen) {
        loom_sbuf_add(out, "N/A");
        return;
    }
    int prec = real ? 2 : 0;
    loom_sbuf_addf(out, "%.*f", prec, lo);
    if (hi > lo)
        loom_sbuf_addf(out, "-%.*f", prec, hi);
}

GETTER_OF(free_mem, fields_range, "free_mem", false)
GETTER_OF(cpu_load, fields_range, "cpu_load", true)

/* A string attribute of the first node, or dflt. */
static void fields_first_str(const loom_sinfo_row_t *r, const char *key, const char *dflt,
                             loom_sbuf_t *out)
{
    const loom_sinfo_node_t *n = fields_first(r);
    const char *s = n ? fields_node_str(n, key) : NULL;
    loom_sbuf_add(out, s ? s : dflt);
}

static void fields_features(const loom_sinfo_row_t *r, const char *key, loom_sbuf_t *out)
{
    const loom_sinfo_node_t *n = fields_first(r);
    const char *s = n ? fields_node_str(n, key) : NULL;
    if (!s && n && n->rec && json_object_get(n->rec, key))
        s = ""; /* the controller says: none */
    if (s) {
        loom_sbuf_add(out, *s ? s : "(null)");
        return;
    }
    const loom_conf_nodecfg_t *c = n && n->cfg ? n->cfg->cfg : NULL;
    if (!c || c->features.n == 0)
        loom_sbuf_add(out, "(null)");
    for (size_t i = 0; c && i < c->features.n; i++)
        loom_sbuf_addf(out, "%s%s", i ? "," : "", c->features.v[i]);
}

GETTER_OF(features, fields_features, "features")

static void features_act_body(const loom_sinfo_view_t *v, const loom_sinfo_row_t *r,
                              loom_sbuf_t *out)
{
    const loom_sinfo_node_t *n = fields_first(r);
    fields_features(r, n && fields_node_str(n, "active_features") ? "active_features" : "features",
                    out);
}
GETTER(features_act)

static void gres_body(const loom_sinfo_view_t *v, const loom_sinfo_row_t *r, loom_sbuf_t *out)
{
    const loom_sinfo_node_t *n = fields_first(r);
    const char *s = n ? fields_node_str(n, "gres") : NULL;
    if (!s && n && n->cfg && n->cfg->cfg->gres_text)
        s = n->cfg->cfg->gres_text;
    loom_sbuf_add(out, s && *s ? s : "(null)");
}
GETTER(gres)

GETTER_OF(gres_used, fields_first_str, "gres_used", "(null)")
GETTER_OF(reason, fields_first_str, "reason", "none")

static void reason_time_body(const loom_sinfo_view_t *v, const loom_sinfo_row_t *r,
                             loom_sbuf_t *out)
{
    const loom_sinfo_node_t *n = fields_first(r);
    loom_date_fmt(n ? (time_t)loom_ji(n->rec, "reason_time", 0) : 0, "Unknown", out);
}
GETTER(reason_time)

GETTER_OF(reason_user, fields_first_str, "reason_user", "Unknown")

/* %U: "root(0)". */
static void reason_uid_body(const loom_sinfo_view_t *v, const loom_sinfo_row_t *r, loom_sbuf_t *out)
{
    const loom_sinfo_node_t *n = fields_first(r);
    const char *u = n ? fields_node_str(n, "reason_user") : NULL;
    if (!u) {
        loom_sbuf_add(out, "Unknown");
        return;
    }
    loom_sbuf_addf(out, "%s(%lld)", u, (long long)loom_ji(n->rec, "reason_uid", 0));
}
GETTER(reason_uid)

/* -O AllocMem: memory allocated on the first node, MiB. */
static void alloc_mem_body(const loom_sinfo_view_t *v, const loom_sinfo_row_t *r, loom_sbuf_t *out)
{
    const loom_sinfo_node_t *n = fields_first(r);
    loom_sbuf_addf(out, "%lld", (long long)(n ? loom_ji(n->rec, "alloc_mem", 0) : 0));
}
GETTER(alloc_mem)

GETTER_OF(version, fields_first_str, "version", "N/A")

static void port_body(const loom_sinfo_view_t *v, const loom_sinfo_row_t *r, loom_sbuf_t *out)
{
    const loom_sinfo_node_t *n = fields_first(r);
    loom_sbuf_addf(out, "%lld",
                   (long long)(n ? loom_ji(n->rec, "port", n->cfg ? n->cfg->port : 0) : 0));
}
GETTER(port)

/* clang-format off */
const loom_fmt_col_t loom_sinfo_cols[] = {
    {'P', "Partition", "PARTITION", 0, partition, 0},
    {'R', "PartitionName", "PARTITION", 0, partition_plain, 0},
    {'a', "Available", "AVAIL", 0, avail, 0},
    {'l', "Time", "TIMELIMIT", 0, timelimit, 0},
    {'L', "DefaultTime", "DEFAULTTIME", 0, default_time, 0},
    {'s', "Size", "JOB_SIZE", 0, job_size, 0},
    {'r', "Root", "ROOT", 0, root, 0},
    {'h', "OverSubscribe", "OVERSUBSCRIBE", 0, oversubscribe, 0},
    {'g', "Groups", "GROUPS", 0, groups, 0},
    {'p', "PriorityTier", "PRIO_TIER", 0, prio_tier, 0},
    {'I', "PriorityJobFactor", "PRIO_JOB_FACTOR", 0, prio_factor, 0},
    {'B', "MaxCPUsPerNode", "MAX_CPUS_PER_NODE", 0, max_cpus, 0},
    {'S', "AllocNodes", "ALLOCNODES", 0, alloc_nodes, 0},
    {'V', "Cluster", "CLUSTER", 0, na, 0},
    {0, "Comment", "COMMENT", 0, null, 0},
    {0, "Extra", "EXTRA", 0, null, 0},
    {0, "AllocMem", "ALLOCMEM", 0, alloc_mem, 0},
    {'M', "PreemptMode", "PREEMPT_MODE", 0, preempt, 0},
    {'D', "Nodes", "NODES", 0, node_count, 0},
    {'N', "NodeList", "NODELIST", 0, nodelist, 0},
    {'n', "NodeHost", "HOSTNAMES", 0, hostnames, 0},
    {'o', "NodeAddr", "NODE_ADDR", 0, addrs, 0},
    {'t', "StateCompact", "STATE", 0, state, 0},
    {'T', "StateLong", "STATE", 0, state_long, 0},
    {0, "StateComplete", "STATECOMPLETE", 0, state_complete, 0},
    {'c', "CPUs", "CPUS", 0, cpus, 0},
    {'C', "CPUsState", "CPUS(A/I/O/T)", 0, cpus_aiot, 0},
    {'F', "NodeAIOT", "NODES(A/I/O/T)", 0, nodes_aiot, 0},
    {'A', "NodeAI", "NODES(A/I)", 0, nodes_ai, 0},
    {'m', "Memory", "MEMORY", 0, memory, 0},
    {'e', "FreeMem", "FREE_MEM", 0, free_mem, 0},
    {'O', "CPUsLoad", "CPU_LOAD", 0, cpu_load, 0},
    {'G', "Gres", "GRES", 0, gres, 0},
    {0, "GresUsed", "GRES_USED", 0, gres_used, 0},
    {'f', "Features", "AVAIL_FEATURES", 0, features, 0},
    {'b', "FeaturesAct", "ACTIVE_FEATURES", 0, features_act, 0},
    {'E', "Reason", "REASON", 0, reason, 0},
    {'H', "Timestamp", "TIMESTAMP", 0, reason_time, 0},
    {'u', "User", "USER", 0, reason_user, 0},
    {'U', "UserLong", "USER", 0, reason_uid, 0},
    {'z', "SocketCoreThread", "S:C:T", 0, sct, 0},
    {'X', "Sockets", "SOCKETS", 0, sockets, 0},
    {'Y', "Cores", "CORES", 0, cores, 0},
    {'Z', "Threads", "THREADS", 0, threads, 0},
    {'w', "Weight", "WEIGHT", 0, weight, 0},
    {'d', "Disk", "TMP_DISK", 0, disk, 0},
    {'v', "Version", "VERSION", 0, version, 0},
    {0, "Port", "PORT", 0, port, 0},
};
/* clang-format on */
const size_t loom_sinfo_ncols = sizeof(loom_sinfo_cols) / sizeof(loom_sinfo_cols[0]);

bool loom_sinfo_col_is_partition(const loom_fmt_col_t *col)
{
    return strchr("PRalLsrhgpSMIBV", col->letter) != NULL && col->letter;
}

bool loom_sinfo_col_is_aggregate(const loom_fmt_col_t *col, bool exact)
{
    if (col->letter && strchr("DNnoCFAeO", col->letter))
        return true;
    return !exact && col->letter && strchr("cmdzXYZ", col->letter);
}

loom_fmt_get_f *loom_sinfo_get_partition(void)
{
    return partition;
}

loom_fmt_get_f *loom_sinfo_get_nodelist(void)
{
    return nodelist;
}
