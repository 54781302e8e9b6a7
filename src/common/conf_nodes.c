/*
 * conf_nodes.c - nodes, DownNodes, NodeSets and partition node lists of
 * slurm.conf. See conf_nodes.h; CLI_SPEC §13, §0.4.
 *
 * CPU topology follows what a Slurm 22.05 slurmctld does with a NodeName line
 * (observed, not copied): Boards, CoresPerSocket and ThreadsPerCore default to
 * 1; Sockets is Boards*SocketsPerBoard when SocketsPerBoard is given (it wins
 * over Sockets, with an error log), else Sockets, else CPUs/(Cores*Threads)
 * (at least 1), else Boards; CPUs defaults to Sockets*Cores*Threads and must
 * equal Sockets, Sockets*Cores or Sockets*Cores*Threads, else it is reset to
 * the last (an error log in Slurm, a warning here).
 */
#include "common/conf_nodes.h"
#include "common/conf_keys.h"
#include "common/hostlist.h"
#include "common/xalloc.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define NOT_SET LOOM_CONF_NOT_SET

static void nodes_warn(loom_conf_t *c, loom_conf_src_t src, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static void nodes_warn(loom_conf_t *c, loom_conf_src_t src, const char *fmt, ...)
{
    loom_sbuf_t sb = LOOM_SBUF_INIT;
    loom_sbuf_addf(&sb, "%s:%d: ", src.file, src.lineno);
    va_list ap;
    va_start(ap, fmt);
    loom_sbuf_vaddf(&sb, fmt, ap);
    va_end(ap);
    loom_strv_take(&c->warnings, loom_sbuf_detach(&sb));
}

static void nodes_topology(loom_conf_t *c, loom_conf_nodecfg_t *n)
{
    if (n->boards == NOT_SET)
        n->boards = 1;
    if (n->cores_per_socket == NOT_SET)
        n->cores_per_socket = 1;
    if (n->threads_per_core == NOT_SET)
        n->threads_per_core = 1;
    int64_t ct = n->cores_per_socket * n->threads_per_core;
    if (n->sockets_per_board != NOT_SET) {
        if (n->sockets != NOT_SET)
            nodes_warn(c, n->src,
                       "NodeName=%s: Sockets and SocketsPerBoard are both set; using "
                       "SocketsPerBoard",
                       n->names);
        n->sockets = n->boards * n->sockets_per_board;
    } else if (n->sockets == NOT_SET) {
        n->sockets = n->cpus != NOT_SET ? n->cpus / ct : n->boards;
        if (n->sockets < 1)
            n->sockets = 1;
    }
    if (n->sockets_per_board == NOT_SET)
        n->sockets_per_board = n->sockets / n->boards > 0 ? n->sockets / n->boards : 1;
    int64_t total = n->sockets * ct;
    if (n->cpus == NOT_SET) {
        n->cpus = total;
    } else if (n->cpus != n->sockets && n->cpus != n->sockets * n->cores_per_socket &&
               n->cpus != total) {
        nodes_warn(c, n->src,
                   "NodeName=%s: CPUs=%lld matches neither Sockets, Sockets*CoresPerSocket nor "
                   "Sockets*CoresPerSocket*ThreadsPerCore; using CPUs=%lld",
                   n->names, (long long)n->cpus, (long long)total);
        n->cpus = total;
    }
}

/* Expand a NodeHostname/NodeAddr expression: it must give count names, or one
 * for all (several node daemons on one host, as Slurm's multiple-slurmd). */
static int nodes_expand(const loom_conf_nodecfg_t *n, const char *key, const char *expr,
                        size_t count, loom_hostlist_t **out, loom_err_t *err)
{
    loom_err_t e2;
    if (loom_hostlist_parse(expr, out, &e2) < 0)
        return loom_errf(err, -LOOM_ECONFIG, "%s:%d: invalid %s value '%s' for node %s (%s)",
                         n->src.file, n->src.lineno, key, expr, n->names, e2.msg);
    if (loom_hostlist_count(*out) != count && loom_hostlist_count(*out) != 1) {
        size_t got = loom_hostlist_count(*out);
        loom_hostlist_destroy(*out);
        *out = NULL;
        return loom_errf(err, -LOOM_ECONFIG,
                         "%s:%d: %s '%s' gives %zu names but NodeName '%s' has %zu", n->src.file,
                         n->src.lineno, key, expr, got, n->names, count);
    }
    return 0;
}

/* One item of Port=: "7001" or "7001-7032", appended to ports (room: cap). */
static int nodes_port_item(char *tok, int64_t *ports, size_t *got, size_t cap)
{
    char *dash = strchr(tok, '-');
    if (dash)
        *dash = '\0';
    int64_t lo, hi;
    if (loom_conf_parse_int(tok, 0, &lo) != 0)
        return -1;
    if (!dash)
        hi = lo;
    else if (loom_conf_parse_int(dash + 1, 0, &hi) != 0)
        return -1;
    if (lo < 1 || hi > 65535 || hi < lo || (size_t)(hi - lo) + 1 > cap - *got)
        return -1;
    for (int64_t p = lo; p <= hi; p++)
        ports[(*got)++] = p;
    return 0;
}

/* Port=: "6818", "7001-7032" or "[7001-7032,7040]"; one value for all nodes
 * or one per node. Fills ports[count]. */
static int nodes_ports(const loom_conf_t *c, const loom_conf_nodecfg_t *n, size_t count,
                       int64_t *ports, loom_err_t *err)
{
    const char *s = n->ports;
    size_t got = 0;
    if (!s) { /* SlurmdPort, filled in by loom_conf_nodes_finish */
        for (size_t i = 0; i < count; i++)
            ports[i] = LOOM_CONF_NOT_SET;
        return 0;
    }
    size_t len = strlen(s);
    if (len >= 2 && s[0] == '[' && s[len - 1] == ']') {
        s++;
        len -= 2;
    }
    char *copy = loom_xstrndup(s, len), *save = NULL;
    int rc = 0;
    for (char *tok = strtok_r(copy, ",", &save); tok && rc == 0; tok = strtok_r(NULL, ",", &save))
        rc = nodes_port_item(tok, ports, &got, count);
    free(copy);
    if (rc == 0 && got == 1)
        for (size_t i = 1; i < count; i++)
            ports[i] = ports[0];
    if (rc < 0 || (got != 1 && got != count))
        return loom_errf(err, -LOOM_ECONFIG,
                         "%s:%d: invalid Port value '%s' for node %s (expected one port, or "
                         "one per node: %zu)",
                         n->src.file, n->src.lineno, n->ports, n->names, count);
    return 0;
}

static int nodes_names(loom_conf_t *c, loom_conf_nodecfg_t *n, loom_hostlist_t **names,
                       loom_err_t *err)
{
    loom_err_t e2;
    if (strcasecmp(n->names, "ALL") == 0)
        return loom_errf(err, -LOOM_ECONFIG, "%s:%d: NodeName=ALL is reserved", n->src.file,
                         n->src.lineno);
    if (loom_hostlist_parse(n->names, names, &e2) < 0)
        return loom_errf(err, -LOOM_ECONFIG, "%s:%d: invalid NodeName value '%s' (%s)", n->src.file,
                         n->src.lineno, n->names, e2.msg);
    size_t count = loom_hostlist_count(*names);
    if (count == 0 || count > LOOM_CONF_MAX_NODES - c->n_nodes) {
        loom_hostlist_destroy(*names);
        *names = NULL;
        if (count == 0)
            return loom_errf(err, -LOOM_ECONFIG, "%s:%d: NodeName '%s' names no node", n->src.file,
                             n->src.lineno, n->names);
        return loom_errf(err, -LOOM_ETOOBIG, "%s:%d: NodeName '%s' brings the node count over %d",
                         n->src.file, n->src.lineno, n->names, LOOM_CONF_MAX_NODES);
    }
    return 0;
}

/* The i-th name of a parallel list (its only name when it has one); NULL: no list. */
static const char *nodes_nth(const loom_hostlist_t *hl, size_t i)
{
    if (!hl)
        return NULL;
    return loom_hostlist_nth(hl, loom_hostlist_count(hl) == 1 ? 0 : i);
}

int loom_conf_nodes_add(loom_conf_t *c, loom_conf_nodecfg_t *n, loom_err_t *err)
{
    loom_hostlist_t *names = NULL, *hosts = NULL, *addrs = NULL;
    int rc = nodes_names(c, n, &names, err);
    if (rc < 0)
        return rc;
    size_t count = loom_hostlist_count(names);
    int64_t *ports = loom_xcalloc(count, sizeof(*ports));
    if (n->hostnames)
        rc = nodes_expand(n, "NodeHostname", n->hostnames, count, &hosts, err);
    if (rc == 0 && n->addrs)
        rc = nodes_expand(n, "NodeAddr", n->addrs, count, &addrs, err);
    if (rc == 0)
        rc = nodes_ports(c, n, count, ports, err);
    if (rc == 0 && n->gres_text)
        rc = loom_gres_parse_node(n->gres_text, &n->gres, err);
    if (rc == 0) {
        nodes_topology(c, n);
        c->nodes = loom_xreallocarray(c->nodes, c->n_nodes + count, sizeof(*c->nodes));
        n->first_node = c->n_nodes;
        n->n_nodes = count;
        for (size_t i = 0; i < count; i++) {
            loom_conf_node_t *d = &c->nodes[c->n_nodes++];
            const char *host = nodes_nth(hosts, i);
            if (!host)
                host = loom_hostlist_nth(names, i);
            const char *addr = nodes_nth(addrs, i);
            d->name = loom_xstrdup(loom_hostlist_nth(names, i));
            d->hostname = loom_xstrdup(host);
            d->addr = loom_xstrdup(addr ? addr : host);
            d->port = ports[i];
            d->state = n->state;
            d->reason = n->reason;
            d->cfg = n;
        }
    }
    free(ports);
    loom_hostlist_destroy(names);
    loom_hostlist_destroy(hosts);
    loom_hostlist_destroy(addrs);
    return rc;
}

/* ---- finishing ----------------------------------------------------------- */

static int nodes_cmp_ctx(const void *a, const void *b, void *ctx)
{
    const loom_conf_t *c = ctx;
    size_t ia = *(const size_t *)a, ib = *(const size_t *)b;
    int r = strcmp(c->nodes[ia].name, c->nodes[ib].name);
    return r ? r : (ia > ib) - (ia < ib);
}

static int nodes_index(loom_conf_t *c, loom_err_t *err)
{
    c->node_by_name = loom_xcalloc(c->n_nodes ? c->n_nodes : 1, sizeof(size_t));
    for (size_t i = 0; i < c->n_nodes; i++)
        c->node_by_name[i] = i;
    qsort_r(c->node_by_name, c->n_nodes, sizeof(size_t), nodes_cmp_ctx, c);
    for (size_t i = 1; i < c->n_nodes; i++) {
        const loom_conf_node_t *a = &c->nodes[c->node_by_name[i - 1]];
        const loom_conf_node_t *b = &c->nodes[c->node_by_name[i]];
        if (strcmp(a->name, b->name) == 0)
            return loom_errf(err, -LOOM_ECONFIG,
                             "%s:%d: duplicate node name '%s' (first defined at %s:%d)",
                             b->cfg->src.file, b->cfg->src.lineno, b->name, a->cfg->src.file,
                             a->cfg->src.lineno);
    }
    return 0;
}

static int nodes_gres_types(const loom_conf_t *c, loom_err_t *err)
{
    for (size_t i = 0; i < c->n_nodecfgs; i++) {
        const loom_conf_nodecfg_t *n = c->nodecfgs[i];
        for (size_t j = 0; j < n->gres.n; j++) {
            const char *g = n->gres.v[j].name;
            bool found = false;
            for (size_t t = 0; t < c->gres_types.n && !found; t++)
                found = strcasecmp(c->gres_types.v[t], g) == 0;
            if (!found)
                return loom_errf(err, -LOOM_ECONFIG,
                                 "%s:%d: GRES '%s' of node %s is not listed in GresTypes%s",
                                 n->src.file, n->src.lineno, g, n->names,
                                 c->gres_types.n ? "" : " (GresTypes is not set)");
        }
    }
    return 0;
}

/* Mark the nodes of a hostlist expression; unknown names are an error. */
static int nodes_mark_expr(const loom_conf_t *c, const char *expr, unsigned char *mark,
                           loom_conf_src_t src, const char *what, loom_err_t *err)
{
    loom_hostlist_t *hl = NULL;
    loom_err_t e2;
    if (loom_hostlist_parse(expr, &hl, &e2) < 0)
        return loom_errf(err, -LOOM_ECONFIG, "%s:%d: %s: invalid node list '%s' (%s)", src.file,
                         src.lineno, what, expr, e2.msg);
    int rc = 0;
    for (size_t i = 0; i < loom_hostlist_count(hl) && rc == 0; i++) {
        long idx = loom_conf_node_index(c, loom_hostlist_nth(hl, i));
        if (idx < 0)
            rc = loom_errf(err, -LOOM_ECONFIG, "%s:%d: %s: unknown node '%s' in '%s'", src.file,
                           src.lineno, what, loom_hostlist_nth(hl, i), expr);
        else
            mark[idx] = 1;
    }
    loom_hostlist_destroy(hl);
    return rc;
}

static const loom_conf_nodeset_t *nodes_find_set(const loom_conf_t *c, const char *name)
{
    for (size_t i = 0; i < c->n_nodesets; i++)
        if (strcmp(c->nodesets[i].name, name) == 0)
            return &c->nodesets[i];
    return NULL;
}

static int nodes_mark_set(const loom_conf_t *c, const loom_conf_nodeset_t *s, unsigned char *mark,
                          loom_err_t *err)
{
    char what[96];
    snprintf(what, sizeof(what), "NodeSet %s", s->name);
    if (s->nodes && strcasecmp(s->nodes, "ALL") == 0)
        memset(mark, 1, c->n_nodes);
    else if (s->nodes && nodes_mark_expr(c, s->nodes, mark, s->src, what, err) < 0)
        return -LOOM_ECONFIG;
    for (size_t i = 0; s->feature && i < c->n_nodes; i++)
        if (loom_strv_find(&c->nodes[i].cfg->features, s->feature) >= 0)
            mark[i] = 1;
    return 0;
}

/* Partition Nodes=: comma-separated hostlists, ALL, or NodeSet names. */
static int nodes_mark_part(const loom_conf_t *c, const loom_conf_part_t *p, unsigned char *mark,
                           loom_err_t *err)
{
    char what[96];
    snprintf(what, sizeof(what), "partition %s", p->name);
    const char *s = p->nodes;
    while (*s) {
        const char *e = s;
        int depth = 0;
        while (*e && (depth > 0 || *e != ','))
            depth += (*e == '[') - (*e == ']'), e++;
        char *tok = loom_xstrndup(s, (size_t)(e - s));
        const loom_conf_nodeset_t *set = nodes_find_set(c, tok);
        int rc = 0;
        if (strcasecmp(tok, "ALL") == 0)
            memset(mark, 1, c->n_nodes);
        else if (set)
            rc = nodes_mark_set(c, set, mark, err);
        else if (*tok)
            rc = nodes_mark_expr(c, tok, mark, p->src, what, err);
        free(tok);
        if (rc < 0)
            return rc;
        s = *e ? e + 1 : e;
    }
    return 0;
}

static int nodes_parts(loom_conf_t *c, loom_err_t *err)
{
    unsigned char *mark = loom_xcalloc(c->n_nodes ? c->n_nodes : 1, 1);
    const loom_conf_part_t *dflt = NULL;
    size_t members = 0;
    int rc = 0;
    for (size_t i = 0; i < c->n_parts && rc == 0; i++) {
        loom_conf_part_t *p = &c->parts[i];
        if (p->is_default && dflt)
            rc = loom_errf(err, -LOOM_ECONFIG,
                           "%s:%d: partition %s is Default=YES but so is %s (%s:%d)", p->src.file,
                           p->src.lineno, p->name, dflt->name, dflt->src.file, dflt->src.lineno);
        if (p->is_default)
            dflt = p;
        memset(mark, 0, c->n_nodes);
        if (rc == 0 && p->nodes)
            rc = nodes_mark_part(c, p, mark, err);
        for (size_t j = 0; rc == 0 && j < c->n_nodes; j++)
            p->n_nodes += mark[j];
        members += p->n_nodes;
        if (rc == 0 && members > LOOM_CONF_MAX_MEMBERS)
            rc = loom_errf(err, -LOOM_ETOOBIG,
                           "%s:%d: partitions hold more than %u node "
                           "memberships in all",
                           p->src.file, p->src.lineno, LOOM_CONF_MAX_MEMBERS);
        if (rc == 0) {
            p->node_idx = loom_xcalloc(p->n_nodes ? p->n_nodes : 1, sizeof(size_t));
            for (size_t j = 0, k = 0; j < c->n_nodes; j++)
                if (mark[j])
                    p->node_idx[k++] = j;
        }
    }
    free(mark);
    if (rc == 0 && c->n_parts > 0 && !dflt)
        nodes_warn(c, c->parts[0].src, "no partition has Default=YES: jobs must name a partition");
    return rc;
}

static int nodes_downs(loom_conf_t *c, loom_err_t *err)
{
    for (size_t i = 0; i < c->n_downs; i++) {
        const loom_conf_down_t *d = &c->downs[i];
        unsigned char *mark = loom_xcalloc(c->n_nodes ? c->n_nodes : 1, 1);
        int rc = nodes_mark_expr(c, d->names, mark, d->src, "DownNodes", err);
        for (size_t j = 0; rc == 0 && j < c->n_nodes; j++) {
            if (mark[j]) {
                c->nodes[j].state = d->state;
                c->nodes[j].reason = d->reason;
            }
        }
        free(mark);
        if (rc < 0)
            return rc;
    }
    return 0;
}

int loom_conf_nodes_finish(loom_conf_t *c, loom_err_t *err)
{
    for (size_t i = 0; i < c->n_nodes; i++)
        if (c->nodes[i].port == LOOM_CONF_NOT_SET)
            c->nodes[i].port = c->slurmd_port;
    int rc = nodes_index(c, err);
    if (rc == 0)
        rc = nodes_gres_types(c, err);
    if (rc == 0)
        rc = nodes_downs(c, err);
    if (rc == 0)
        rc = nodes_parts(c, err);
    return rc;
}
