/*
 * loom_config.c - `loom config check`. See loom_config.h.
 *
 * slurm.conf comes from -f, else $SLURM_CONF, else /etc/slurm/slurm.conf;
 * gres.conf from -g, else the gres.conf beside slurm.conf when there is one;
 * cgroup.conf beside slurm.conf when there is one.
 * Every node's devices are resolved and checked against its Gres= counts.
 */
#include "cli/loom_config.h"

#include "common/cgconf.h"
#include "common/conf.h"
#include "common/gres.h"
#include "common/gresconf.h"
#include "common/hostlist.h"
#include "common/memsize.h"
#include "common/sbuf.h"
#include "common/timefmt.h"
#include "common/xalloc.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#define CONFIG_DEFAULT_PATH "/etc/slurm/slurm.conf"

typedef struct {
    const char *conf_path;
    const char *gres_path; /* NULL: beside slurm.conf, if present */
    bool quiet;
} config_opts_t;

static void config_usage(FILE *fp)
{
    fprintf(fp,
            "Usage: loom config check [-f slurm.conf] [-g gres.conf] [-q]\n"
            "  -f, --file FILE   slurm.conf to check (default: $SLURM_CONF, else %s)\n"
            "  -g, --gres FILE   gres.conf to check (default: gres.conf beside slurm.conf)\n"
            "  -q, --quiet       print nothing when the configuration is valid\n",
            CONFIG_DEFAULT_PATH);
}

static int config_error(const char *msg)
{
    fprintf(stderr, "loom: error: %s\n", msg);
    return 1;
}

static void config_warnings(const loom_strv_t *w)
{
    for (size_t i = 0; i < w->n; i++)
        fprintf(stderr, "loom: warning: %s\n", w->v[i]);
}

/* Names of nodes[first .. first+n) compressed in order ("n[1-4]"). */
static void config_names(const loom_conf_t *c, const size_t *idx, size_t first, size_t n,
                         loom_sbuf_t *out)
{
    loom_hostlist_t *hl = loom_hostlist_create();
    for (size_t i = 0; i < n; i++)
        loom_hostlist_push(hl, c->nodes[idx ? idx[i] : first + i].name);
    loom_hostlist_ranged(hl, out);
    loom_hostlist_destroy(hl);
}

/* "gpu:h100:8 (/dev/nvidia[0-7] cores=0-31)" for each Gres= entry. */
static void config_gres(const loom_conf_node_t *node, const loom_gres_devlist_t *dl,
                        loom_sbuf_t *out)
{
    const loom_gres_list_t *gl = &node->cfg->gres;
    for (size_t i = 0; i < gl->n; i++) {
        const loom_gres_t *e = &gl->v[i];
        loom_gres_list_t one = {(loom_gres_t *)e, 1, 1};
        loom_sbuf_add(out, i ? "," : " gres=");
        loom_gres_fmt(&one, out);
        const loom_gresconf_line_t *last = NULL;
        size_t shown = 0;
        for (size_t d = 0; dl && d < dl->n; d++) {
            const loom_gresconf_line_t *l = dl->v[d].line;
            if (!l || l == last || strcasecmp(dl->v[d].name, e->name) != 0 ||
                (e->type && (!dl->v[d].type || strcasecmp(dl->v[d].type, e->type) != 0)))
                continue;
            loom_sbuf_add(out, shown++ ? ", " : " (");
            loom_sbuf_add(out, l->file_expr ? l->file_expr : "no file");
            if (l->cores)
                loom_sbuf_addf(out, " cores=%s", l->cores);
            last = l;
        }
        if (shown)
            loom_sbuf_addc(out, ')');
    }
}

static const char *config_node_state(int s)
{
    static const char *const names[] = {"UNKNOWN", "CLOUD",   "DOWN",  "DRAIN",
                                        "FAIL",    "FAILING", "FUTURE"};
    return s >= 0 && s < (int)(sizeof(names) / sizeof(names[0])) ? names[s] : "?";
}

static void config_node_line(const loom_conf_t *c, const loom_conf_nodecfg_t *n,
                             const loom_gres_devlist_t *dl, int width, loom_sbuf_t *out)
{
    loom_sbuf_t names = LOOM_SBUF_INIT;
    config_names(c, NULL, n->first_node, n->n_nodes, &names);
    loom_sbuf_addf(out, "  %-*s  cpus=%lld S:C:T=%lld:%lld:%lld mem=", width, loom_sbuf_str(&names),
                   (long long)n->cpus, (long long)n->sockets, (long long)n->cores_per_socket,
                   (long long)n->threads_per_core);
    loom_mem_fmt((uint64_t)n->real_memory, out);
    if (n->tmp_disk > 0) {
        loom_sbuf_add(out, " tmp=");
        loom_mem_fmt((uint64_t)n->tmp_disk, out);
    }
    config_gres(&c->nodes[n->first_node], dl, out);
    for (size_t i = 0; i < n->features.n; i++)
        loom_sbuf_addf(out, "%s%s", i ? "," : " features=", n->features.v[i]);
    if (n->weight != 1)
        loom_sbuf_addf(out, " weight=%lld", (long long)n->weight);
    if (n->state != LOOM_CONF_NODE_UNKNOWN)
        loom_sbuf_addf(out, " state=%s", config_node_state(n->state));
    if (n->reason)
        loom_sbuf_addf(out, " reason=\"%s\"", n->reason);
    loom_sbuf_addc(out, '\n');
    loom_sbuf_free(&names);
}

/* Resolve and check every node's devices; dls[i] gets the first node of
 * nodecfgs[i] (what the summary shows). */
static int config_devices(const loom_conf_t *c, const loom_gresconf_t *g, loom_gres_devlist_t *dls,
                          loom_strv_t *warnings, loom_err_t *err)
{
    for (size_t i = 0; i < c->n_nodecfgs; i++) {
        const loom_conf_nodecfg_t *n = c->nodecfgs[i];
        for (size_t j = 0; j < n->n_nodes; j++) {
            loom_gres_devlist_t dl;
            int rc =
                loom_gresconf_node_devices(g, c, &c->nodes[n->first_node + j], &dl, warnings, err);
            if (rc < 0)
                return rc;
            if (j == 0)
                dls[i] = dl;
            else
                loom_gres_devlist_free(&dl);
        }
    }
    return 0;
}

static void config_nodes(const loom_conf_t *c, const loom_gres_devlist_t *dls, loom_sbuf_t *out)
{
    int64_t cpus = 0, mem = 0;
    loom_tres_list_t tres = LOOM_TRES_LIST_INIT;
    int width = 0;
    for (size_t i = 0; i < c->n_nodecfgs; i++) {
        const loom_conf_nodecfg_t *n = c->nodecfgs[i];
        cpus += n->cpus * (int64_t)n->n_nodes;
        mem += n->real_memory * (int64_t)n->n_nodes;
        for (size_t j = 0; j < n->n_nodes; j++)
            loom_tres_add_gres(&tres, &n->gres);
        loom_sbuf_t names = LOOM_SBUF_INIT;
        config_names(c, NULL, n->first_node, n->n_nodes, &names);
        if ((int)names.len > width)
            width = (int)names.len;
        loom_sbuf_free(&names);
    }
    loom_sbuf_addf(out, "nodes: %zu (%lld CPUs, ", c->n_nodes, (long long)cpus);
    loom_mem_fmt((uint64_t)mem, out);
    loom_sbuf_add(out, " memory");
    if (tres.n) {
        loom_sbuf_add(out, ", ");
        loom_tres_fmt(&tres, out);
    }
    loom_sbuf_add(out, ")\n");
    for (size_t i = 0; i < c->n_nodecfgs; i++)
        config_node_line(c, c->nodecfgs[i], dls ? &dls[i] : NULL, width, out);
    loom_tres_list_free(&tres);
}

static void config_mem_field(loom_sbuf_t *out, const char *key, int64_t v)
{
    if (v == 0)
        return;
    loom_sbuf_addf(out, "  %s=", key);
    if (v == LOOM_CONF_UNLIMITED)
        loom_sbuf_add(out, "UNLIMITED");
    else
        loom_mem_fmt((uint64_t)v, out);
}

static void config_list_field(loom_sbuf_t *out, const char *key, const loom_strv_t *l)
{
    if (!l->n)
        return;
    loom_sbuf_addf(out, "  %s=", key);
    for (size_t i = 0; i < l->n; i++)
        loom_sbuf_addf(out, "%s%s", i ? "," : "", l->v[i]);
}

static void config_part_limits(const loom_conf_part_t *p, loom_sbuf_t *out)
{
    static const char *const states[] = {"UP", "DOWN", "DRAIN", "INACTIVE"};
    static const char *const oversub[] = {"NO", "EXCLUSIVE", "YES", "FORCE"};
    loom_sbuf_add(out, "  MaxTime=");
    loom_time_fmt_limit(p->max_time, out);
    loom_sbuf_add(out, "  DefaultTime=");
    if (p->default_time == LOOM_CONF_NOT_SET)
        loom_sbuf_add(out, "NONE");
    else
        loom_time_fmt_limit(p->default_time, out);
    loom_sbuf_addf(out, "  State=%s", states[p->state & 3]);
    if (p->max_nodes != LOOM_CONF_UNLIMITED)
        loom_sbuf_addf(out, "  MaxNodes=%lld", (long long)p->max_nodes);
    if (p->min_nodes > 0)
        loom_sbuf_addf(out, "  MinNodes=%lld", (long long)p->min_nodes);
    if (p->priority_tier != 1)
        loom_sbuf_addf(out, "  PriorityTier=%lld", (long long)p->priority_tier);
    if (p->priority_job_factor != 1)
        loom_sbuf_addf(out, "  PriorityJobFactor=%lld", (long long)p->priority_job_factor);
    if (p->oversubscribe != LOOM_CONF_OVERSUB_NO)
        loom_sbuf_addf(out, "  OverSubscribe=%s", oversub[p->oversubscribe & 3]);
    if (p->oversubscribe == LOOM_CONF_OVERSUB_YES || p->oversubscribe == LOOM_CONF_OVERSUB_FORCE)
        loom_sbuf_addf(out, ":%lld", (long long)p->oversubscribe_n);
    if (p->max_cpus_per_node != LOOM_CONF_UNLIMITED)
        loom_sbuf_addf(out, "  MaxCPUsPerNode=%lld", (long long)p->max_cpus_per_node);
    config_mem_field(out, "DefMemPerCPU", p->def_mem_per_cpu);
    config_mem_field(out, "DefMemPerNode", p->def_mem_per_node);
    config_mem_field(out, "MaxMemPerCPU", p->max_mem_per_cpu);
    config_mem_field(out, "MaxMemPerNode", p->max_mem_per_node);
    if (p->hidden)
        loom_sbuf_add(out, "  Hidden=YES");
    if (p->root_only)
        loom_sbuf_add(out, "  RootOnly=YES");
    if (p->qos)
        loom_sbuf_addf(out, "  QOS=%s", p->qos);
}

static void config_parts(const loom_conf_t *c, loom_sbuf_t *out)
{
    int nw = 0, lw = 0;
    loom_sbuf_t *lists = loom_xcalloc(c->n_parts + 1, sizeof(*lists));
    for (size_t i = 0; i < c->n_parts; i++) {
        const loom_conf_part_t *p = &c->parts[i];
        config_names(c, p->node_idx, 0, p->n_nodes, &lists[i]);
        loom_sbuf_addf(&lists[i], " (%zu)", p->n_nodes);
        if ((int)strlen(p->name) + (p->is_default ? 1 : 0) > nw)
            nw = (int)strlen(p->name) + (p->is_default ? 1 : 0);
        if ((int)lists[i].len > lw)
            lw = (int)lists[i].len;
    }
    loom_sbuf_addf(out, "partitions: %zu\n", c->n_parts);
    for (size_t i = 0; i < c->n_parts; i++) {
        const loom_conf_part_t *p = &c->parts[i];
        char name[128];
        snprintf(name, sizeof(name), "%s%s", p->name, p->is_default ? "*" : "");
        loom_sbuf_addf(out, "  %-*s  nodes=%-*s", nw, name, lw, loom_sbuf_str(&lists[i]));
        config_part_limits(p, out);
        if (p->is_default)
            loom_sbuf_add(out, "  Default=YES");
        config_list_field(out, "AllowAccounts", &p->allow_accounts);
        config_list_field(out, "AllowGroups", &p->allow_groups);
        config_list_field(out, "AllowQos", &p->allow_qos);
        config_list_field(out, "DenyAccounts", &p->deny_accounts);
        config_list_field(out, "DenyQos", &p->deny_qos);
        loom_sbuf_addc(out, '\n');
        loom_sbuf_free(&lists[i]);
    }
    free(lists);
}

static void config_header(const loom_conf_t *c, const loom_gresconf_t *g, loom_sbuf_t *out)
{
    loom_sbuf_addf(out, "slurm.conf: %s", c->path);
    if (c->files.n > 1)
        loom_sbuf_addf(out, " (+%zu included)", c->files.n - 1);
    loom_sbuf_addf(out, "\ngres.conf: %s", g ? g->path : "none");
    if (g && g->autodetect != LOOM_GRES_AUTODETECT_OFF)
        loom_sbuf_addf(out, " (AutoDetect=%s: not probed here; devices from File= lines)",
                       loom_gres_autodetect_name(g->autodetect));
    loom_sbuf_addf(out, "\ncluster: %s\ncontroller: ", c->cluster_name);
    for (size_t i = 0; i < c->n_ctld_hosts; i++)
        loom_sbuf_addf(out, "%s%s", i ? ", " : "", c->ctld_hosts[i].name);
    loom_sbuf_addf(out, " (port %lld, slurmd port %lld)\n", (long long)c->slurmctld_port,
                   (long long)c->slurmd_port);
    loom_sbuf_addf(out, "scheduling: %s, %s, %s, %s\n", c->select_type, c->scheduler_type,
                   c->priority_type, c->preempt_type);
    loom_sbuf_addf(out, "accounting: %s", c->accounting_storage_type);
    if (loom_conf_is_set(c, "AccountingStorageHost"))
        loom_sbuf_addf(out, " on %s", c->accounting_storage_host);
    loom_sbuf_addc(out, '\n');
}

/* cgroup.conf beside slurm.conf, when there is one (it is optional). */
static int config_cgroup(const config_opts_t *o, loom_err_t *err)
{
    loom_sbuf_t sb = LOOM_SBUF_INIT;
    const char *slash = strrchr(o->conf_path, '/');
    if (slash)
        loom_sbuf_addn(&sb, o->conf_path, (size_t)(slash - o->conf_path + 1));
    loom_sbuf_add(&sb, "cgroup.conf");
    loom_cgconf_t cg;
    loom_cgconf_init(&cg);
    int rc = loom_cgconf_load(loom_sbuf_str(&sb), &cg, err);
    loom_cgconf_free(&cg);
    loom_sbuf_free(&sb);
    return rc;
}

/* The gres.conf path: -g, else beside slurm.conf when that file exists. */
static char *config_gres_path(const config_opts_t *o, bool *explicit_path)
{
    *explicit_path = o->gres_path != NULL;
    if (o->gres_path)
        return loom_xstrdup(o->gres_path);
    loom_sbuf_t sb = LOOM_SBUF_INIT;
    const char *slash = strrchr(o->conf_path, '/');
    if (slash)
        loom_sbuf_addn(&sb, o->conf_path, (size_t)(slash - o->conf_path + 1));
    loom_sbuf_add(&sb, "gres.conf");
    if (access(loom_sbuf_str(&sb), F_OK) != 0) {
        loom_sbuf_free(&sb);
        return NULL;
    }
    return loom_sbuf_detach(&sb);
}

static int config_check(const config_opts_t *o)
{
    loom_err_t err = {0};
    loom_conf_t *c = NULL;
    loom_gresconf_t *g = NULL;
    loom_strv_t warnings = LOOM_STRV_INIT;
    bool explicit_gres;
    char *gpath = config_gres_path(o, &explicit_gres);
    int rc = loom_conf_load(o->conf_path, &c, &err);
    if (rc == 0 && gpath)
        rc = loom_gresconf_load(gpath, &g, &err);
    if (rc == 0 && g)
        rc = loom_gresconf_check(g, c, &warnings, &err);
    if (rc == 0)
        rc = config_cgroup(o, &err);
    loom_gres_devlist_t *dls = c ? loom_xcalloc(c->n_nodecfgs + 1, sizeof(*dls)) : NULL;
    if (rc == 0 && g)
        rc = config_devices(c, g, dls, &warnings, &err);
    if (c)
        config_warnings(&c->warnings);
    config_warnings(&warnings);
    if (rc == 0 && !o->quiet) {
        loom_sbuf_t out = LOOM_SBUF_INIT;
        config_header(c, g, &out);
        config_nodes(c, g ? dls : NULL, &out);
        config_parts(c, &out);
        loom_sbuf_add(&out, "configuration OK\n");
        fputs(loom_sbuf_str(&out), stdout);
        loom_sbuf_free(&out);
    }
    for (size_t i = 0; dls && i < c->n_nodecfgs; i++)
        loom_gres_devlist_free(&dls[i]);
    free(dls);
    free(gpath);
    loom_strv_free(&warnings);
    loom_gresconf_destroy(g);
    loom_conf_destroy(c);
    return rc < 0 ? config_error(err.msg) : 0;
}

int loom_config_main(int argc, char **argv)
{
    static const struct option longopts[] = {
        {"file", required_argument, NULL, 'f'},
        {"gres", required_argument, NULL, 'g'},
        {"quiet", no_argument, NULL, 'q'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    if (argc < 2 || strcmp(argv[1], "check") != 0) {
        if (argc >= 2 && (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0)) {
            config_usage(stdout);
            return 0;
        }
        config_usage(stderr);
        return 1;
    }
    config_opts_t o = {getenv("SLURM_CONF"), NULL, false};
    if (!o.conf_path || !*o.conf_path)
        o.conf_path = CONFIG_DEFAULT_PATH;
    int opt;
    optind = 1;
    while ((opt = getopt_long(argc - 1, argv + 1, "f:g:qh", longopts, NULL)) != -1) {
        switch (opt) {
        case 'f':
            o.conf_path = optarg;
            break;
        case 'g':
            o.gres_path = optarg;
            break;
        case 'q':
            o.quiet = true;
            break;
        case 'h':
            config_usage(stdout);
            return 0;
        default:
            config_usage(stderr);
            return 1;
        }
    }
    if (optind < argc - 1) {
        fprintf(stderr, "loom: error: unexpected argument '%s'\n", argv[optind + 1]);
        return 1;
    }
    return config_check(&o);
}
