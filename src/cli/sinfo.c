/*
 * sinfo.c - partitions and nodes (CLI_SPEC §7): Slurm's sinfo on Loom.
 *
 * Flow: options → node.info and part.info calls → nodes and partitions
 * merged with slurm.conf → filters (-p -n -t -r -d -R) → rows: per partition,
 * nodes whose shown attributes match are merged into one row (sinfo_fields.h)
 * → sort (Slurm's "#P,-t": slurm.conf partition order, then node state
 * descending; -N: node name) → print (§7.1 layouts, '#' widths: the longest
 * value but at least 9).
 */
#include "cli/cli_common.h"
#include "cli/cli_format.h"
#include "cli/cli_json.h"
#include "cli/sinfo_fields.h"

#include "common/hostlist.h"
#include "common/nodestate.h"
#include "common/xalloc.h"

#include <getopt.h>
#include <stdint.h>
#include <stdio.h>
#include <pwd.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#define SINFO_FMT_DEFAULT  "%#P %.5a %.10l %.6D %.6t %N"
#define SINFO_FMT_SUMMARY  "%#P %.5a %.10l %.16F %N"
#define SINFO_FMT_LONG     "%#P %.5a %.10l %.10s %.4r %.8h %.10g %.6D %.11T %N"
#define SINFO_FMT_NODE     "%#N %.6D %#P %6t"
#define SINFO_FMT_NODE_L   "%#N %.6D %#P %.11T %4c %.8z %.6m %.8d %.6w %.8f %20E"
#define SINFO_FMT_REASON   "%20E %9u %19H %N"
#define SINFO_FMT_REASON_L "%20E %12U %19H %6t %N"
/* -t drained / -t draining: the DRAIN flag on a node without / with jobs */
#define SINFO_WANT_DRAINED  UINT32_MAX
#define SINFO_WANT_DRAINING (UINT32_MAX - 1)
/* -o %all (and -O all): every field, lower case letters first, as sinfo 22.05 lists them */
#define SINFO_FMT_ALL                                                                              \
    "%a|%b|%c|%d|%e|%f|%g|%h|%l|%m|%n|%o|%p|%r|%s|%t|%u|%v|%w|%z|%A |%B |%C |%D |%E |%F |%G |"     \
    "%H |%I |%L |%M |%N |%O |%P |%R |%S |%T |%U |%V |%X |%Y |%Z "
#define SINFO_MIN_WIDTH 9

typedef struct sinfo_opts {
    bool node_mode, long_fmt, summarize, reasons, noheader, exact, responding, dead, json;
    bool all; /* -a: hidden partitions too */
    char *format, *sort, *nodes;
    char *clusters;   /* -M: checked against ClusterName, printed as "CLUSTER: x" */
    bool format_long; /* -O was given: -o and -O share one string, read as -O */
    loom_strv_t parts;
    uint32_t *states;
    size_t n_states;
    int iterate, verbose;
} sinfo_opts_t;

typedef struct sinfo {
    loom_cli_t cli;
    sinfo_opts_t o;
    const loom_conf_t *conf;
    json_t *node_reply, *part_reply;
    loom_sinfo_node_t *nodes;
    size_t n_nodes;
    loom_sinfo_part_t *parts;
    loom_conf_part_t *live; /* partitions with scontrol update's changes applied */
    size_t n_parts;
    loom_sinfo_row_t *rows;
    size_t n_rows, cap_rows;
    loom_hostlist_t *node_filter;
    loom_sinfo_view_t view;
    loom_fmt_t fmt;
    int argc;
    char **argv;
} sinfo_t;

/* ---- options ------------------------------------------------------------- */

static void sinfo_usage(void)
{
    printf("Usage: sinfo [OPTIONS]\n"
           "  -a, --all                  show all partitions (including hidden and those\n"
           "                             not accessible)\n"
           "  -d, --dead                 show only non-responding nodes\n"
           "  -e, --exact                group nodes only on exact match of configuration\n"
           "  -h, --noheader             no headers on output\n"
           "  -l, --long                 long output - displays more information\n"
           "  -n, --nodes=NODES          report on specific node(s)\n"
           "  -N, --Node                 Node-centric format\n"
           "  -o, --format=format        format specification\n"
           "  -O, --Format=format        long format specification\n"
           "  -p, --partition=PARTITION  report on specific partition\n"
           "  -r, --responding           report only responding nodes\n"
           "  -R, --list-reasons         list reason nodes are down or drained\n"
           "  -s, --summarize            report state summary only\n"
           "  -S, --sort=fields          comma separated list of fields to sort on\n"
           "  -t, --states=node_state    specify the what states of nodes to view\n"
           "  -v, --verbose              verbosity level\n"
           "  -V, --version              output version information and exit\n");
}

static void sinfo_set(char **dst, const char *val)
{
    free(*dst);
    *dst = loom_xstrdup(val);
}

static int sinfo_add_states(sinfo_t *s, const char *list)
{
    loom_strv_t v = LOOM_STRV_INIT;
    loom_strv_split(&v, list, ",");
    int rc = 0;
    for (size_t i = 0; i < v.n && rc == 0; i++) {
        uint32_t st;
        if (strcasecmp(v.v[i], "all") == 0)
            continue;
        if (!strcasecmp(v.v[i], "drained") || !strcasecmp(v.v[i], "draining") ||
            !strcasecmp(v.v[i], "drng"))
            st = strcasecmp(v.v[i], "drained") == 0 ? SINFO_WANT_DRAINED : SINFO_WANT_DRAINING;
        else if (loom_node_state_parse(v.v[i], &st, NULL) < 0) {
            loom_cli_error(&s->cli, "Bad state string: \"%s\"", v.v[i]);
            loom_cli_error(&s->cli, "valid states: unknown,down,idle,allocated,?,mixed,future,"
                                    "drain,drained,draining,no_respond,reserved,perfctrs,"
                                    "cloud,completing,powering_down,powered_down,power_down,"
                                    "powering_up,fail,maint,reboot,reboot^,unknown");
            rc = -1;
            break;
        }
        s->o.states = loom_xreallocarray(s->o.states, s->o.n_states + 1, sizeof(uint32_t));
        s->o.states[s->o.n_states++] = st;
    }
    loom_strv_free(&v);
    return rc;
}

enum { OPT_JSON = 0x100, OPT_YAML, OPT_HELP, OPT_USAGE, OPT_IGNORE };

static const struct option sinfo_longopts[] = {
    {"all", no_argument, NULL, 'a'},
    {"dead", no_argument, NULL, 'd'},
    {"exact", no_argument, NULL, 'e'},
    {"federation", no_argument, NULL, OPT_IGNORE},
    {"format", required_argument, NULL, 'o'},
    {"Format", required_argument, NULL, 'O'},
    {"future", no_argument, NULL, OPT_IGNORE},
    {"help", no_argument, NULL, OPT_HELP},
    {"hide", no_argument, NULL, OPT_IGNORE},
    {"iterate", required_argument, NULL, 'i'},
    {"json", optional_argument, NULL, OPT_JSON},
    {"list-reasons", no_argument, NULL, 'R'},
    {"local", no_argument, NULL, OPT_IGNORE},
    {"long", no_argument, NULL, 'l'},
    {"Node", no_argument, NULL, 'N'},
    {"noconvert", no_argument, NULL, OPT_IGNORE},
    {"nodes", required_argument, NULL, 'n'},
    {"noheader", no_argument, NULL, 'h'},
    {"partition", required_argument, NULL, 'p'},
    {"responding", no_argument, NULL, 'r'},
    {"summarize", no_argument, NULL, 's'},
    {"sort", required_argument, NULL, 'S'},
    {"states", required_argument, NULL, 't'},
    {"usage", no_argument, NULL, OPT_USAGE},
    {"verbose", no_argument, NULL, 'v'},
    {"version", no_argument, NULL, 'V'},
    {"yaml", optional_argument, NULL, OPT_YAML},
    {"clusters", required_argument, NULL, 'M'},
    {"reservation", no_argument, NULL, 'T'},
    {NULL, 0, NULL, 0},
};

/* One option: 1 go on, 0 exit 0, -1 fail. */
static int sinfo_option(sinfo_t *s, int c, const char *arg)
{
    switch (c) {
    case 'a':
        s->o.all = true;
        break;
    case 'M':
        sinfo_set(&s->o.clusters, arg);
        break;
    case OPT_IGNORE:
        break;
    case 'd':
        s->o.dead = true;
        break;
    case 'e':
        s->o.exact = true;
        break;
    case 'o':
        sinfo_set(&s->o.format, arg);
        break;
    case 'O':
        sinfo_set(&s->o.format, arg);
        s->o.format_long = true;
        break;
    case 'i':
        s->o.iterate = atoi(arg);
        if (s->o.iterate <= 0) {
            loom_cli_error(&s->cli, "Error: invalid entry for --iterate=%s", arg);
            return -1;
        }
        break;
    case OPT_JSON:
        s->o.json = true;
        break;
    case OPT_YAML:
        loom_cli_error(&s->cli, "--yaml is not supported by this build; use --json");
        return -1;
    case 'R':
        s->o.reasons = true;
        break;
    case 'l':
        s->o.long_fmt = true;
        break;
    case 'N':
        s->o.node_mode = true;
        break;
    case 'n':
        sinfo_set(&s->o.nodes, arg);
        break;
    case 'h':
        s->o.noheader = true;
        break;
    case 'p':
        loom_strv_split(&s->o.parts, arg, ",");
        break;
    case 'r':
        s->o.responding = true;
        break;
    case 's':
        s->o.summarize = true;
        break;
    case 'S':
        sinfo_set(&s->o.sort, arg);
        break;
    case 't':
        return sinfo_add_states(s, arg) < 0 ? -1 : 1;
    case 'v':
        s->o.verbose++;
        break;
    case 'V':
        loom_cli_version();
        return 0;
    case 'T': /* Loom has no reservations: sinfo 22.05's words for none */
        printf("No reservations in the system\n");
        return 0;
    case OPT_HELP:
        sinfo_usage();
        return 0;
    case OPT_USAGE:
        printf("Usage: sinfo [-abdelNRrsTv] [-i seconds] [-t states] [-p partition] [-n nodes]\n"
               "             [-S fields] [-o format] [-O Format] [--federation] [--local]\n");
        return 0;
    default:
        fprintf(stderr, "Try \"sinfo --help\" for more information\n");
        return -1;
    }
    return 1;
}

static int sinfo_parse(sinfo_t *s, int argc, char **argv)
{
    const char *e;
    if ((e = getenv("SINFO_FORMAT")) && *e)
        sinfo_set(&s->o.format, e);
    if ((e = getenv("SINFO_SORT")) && *e)
        sinfo_set(&s->o.sort, e);
    if ((e = getenv("SINFO_PARTITION")) && *e)
        loom_strv_split(&s->o.parts, e, ",");
    int c;
    while ((c = getopt_long(argc, argv, "adehi:lM:n:No:O:p:rRsS:t:TvV", sinfo_longopts, NULL)) !=
           -1) {
        int rc = sinfo_option(s, c, optarg);
        if (rc <= 0)
            return rc;
    }
    if (optind < argc) {
        loom_cli_error(&s->cli, "Unknown argument: %s", argv[optind]);
        fprintf(stderr, "Try \"sinfo --help\" for more information\n");
        return -1;
    }
    loom_cli_set_verbosity(&s->cli, s->o.verbose, false);
    return 1;
}

/* ---- data ---------------------------------------------------------------- */

static const json_t *sinfo_find(const json_t *list, const char *name)
{
    size_t i;
    json_t *v;
    json_array_foreach(list, i, v)
    {
        const char *n = loom_js(v, "name");
        if (n && strcmp(n, name) == 0)
            return v;
    }
    return NULL;
}

/* Every node the configuration or the controller knows, in name order. */
static void sinfo_build_nodes(sinfo_t *s)
{
    const json_t *recs = json_object_get(s->node_reply, "nodes");
    loom_hostlist_t *names = loom_hostlist_create();
    for (size_t i = 0; s->conf && i < s->conf->n_nodes; i++)
        loom_hostlist_push(names, s->conf->nodes[i].name);
    size_t i;
    json_t *v;
    json_array_foreach(recs, i, v)
    {
        if (loom_js(v, "name"))
            loom_hostlist_push(names, loom_js(v, "name"));
    }
    loom_hostlist_sort(names);
    loom_hostlist_uniq(names);
    s->n_nodes = loom_hostlist_count(names);
    s->nodes = loom_xcalloc(s->n_nodes ? s->n_nodes : 1, sizeof(*s->nodes));
    for (size_t k = 0; k < s->n_nodes; k++) {
        loom_sinfo_node_t *n = &s->nodes[k];
        n->name = loom_xstrdup(loom_hostlist_nth(names, k));
        n->rec = sinfo_find(recs, n->name);
        n->cfg = s->conf ? loom_conf_find_node(s->conf, n->name) : NULL;
        n->state = n->rec ? loom_cli_node_state(n->rec) : LOOM_NODE_UNKNOWN;
        n->rank = k;
    }
    loom_hostlist_destroy(names);
}

static bool sinfo_privileged(const sinfo_t *s)
{
    uid_t uid = getuid();
    const struct passwd *pw = s->conf && s->conf->slurm_user ? getpwnam(s->conf->slurm_user) : NULL;
    return uid == 0 || (pw && pw->pw_uid == uid);
}

static void sinfo_build_parts(sinfo_t *s)
{
    const json_t *recs = json_object_get(s->part_reply, "partitions");
    size_t n_conf = s->conf ? s->conf->n_parts : 0;
    s->parts = loom_xcalloc(n_conf + json_array_size(recs) + 1, sizeof(*s->parts));
    s->live = loom_xcalloc(n_conf + 1, sizeof(*s->live));
    for (size_t i = 0; i < n_conf; i++) {
        const json_t *rec = sinfo_find(recs, s->conf->parts[i].name);
        const loom_conf_part_t *c = loom_cli_part_live(&s->conf->parts[i], rec, &s->live[i]);
        if (c->hidden && !s->o.all && !sinfo_privileged(s))
            continue; /* Hidden=YES: only with -a, except for root and SlurmUser (22.05.8) */
        s->parts[s->n_parts++] = (loom_sinfo_part_t){c->name, rec, c, s->n_parts};
    }
    size_t i;
    json_t *v;
    json_array_foreach(recs, i, v)
    {
        const char *name = loom_js(v, "name");
        if (name && (!s->conf || !loom_conf_find_part(s->conf, name)))
            s->parts[s->n_parts++] = (loom_sinfo_part_t){name, v, NULL, s->n_parts};
    }
}

static loom_sinfo_node_t *sinfo_node(sinfo_t *s, const char *name)
{
    for (size_t i = 0; i < s->n_nodes; i++)
        if (strcmp(s->nodes[i].name, name) == 0)
            return &s->nodes[i];
    return NULL;
}

/* The partition's nodes in name order: from the controller, else slurm.conf. */
static size_t sinfo_part_nodes(sinfo_t *s, const loom_sinfo_part_t *p, loom_sinfo_node_t **out)
{
    size_t n = 0;
    const char *expr = loom_js(p->rec, "nodes");
    loom_hostlist_t *hl = NULL;
    if (expr && loom_hostlist_parse(expr, &hl, NULL) == 0) {
        for (size_t i = 0; i < loom_hostlist_count(hl); i++) {
            loom_sinfo_node_t *nd = sinfo_node(s, loom_hostlist_nth(hl, i));
            if (nd)
                out[n++] = nd;
        }
    } else if (p->cfg) {
        for (size_t i = 0; i < p->cfg->n_nodes; i++) {
            loom_sinfo_node_t *nd = sinfo_node(s, s->conf->nodes[p->cfg->node_idx[i]].name);
            if (nd)
                out[n++] = nd;
        }
    }
    loom_hostlist_destroy(hl);
    for (size_t i = 1; i < n; i++) /* insertion sort by rank: lists are short */
        for (size_t k = i; k > 0 && out[k - 1]->rank > out[k]->rank; k--) {
            loom_sinfo_node_t *t = out[k];
            out[k] = out[k - 1];
            out[k - 1] = t;
        }
    return n;
}

/* ---- filters ------------------------------------------------------------- */

static bool sinfo_state_match(const sinfo_t *s, uint32_t st)
{
    if (!s->o.n_states)
        return true;
    uint32_t base = loom_node_base(st);
    bool busy =
        base == LOOM_NODE_ALLOCATED || base == LOOM_NODE_MIXED || (st & LOOM_NODE_F_COMPLETING);
    for (size_t i = 0; i < s->o.n_states; i++) {
        uint32_t want = s->o.states[i], flags = want & ~LOOM_NODE_STATE_BASE;
        if (want == SINFO_WANT_DRAINED || want == SINFO_WANT_DRAINING) {
            if ((st & LOOM_NODE_F_DRAIN) && busy == (want == SINFO_WANT_DRAINING))
                return true;
        } else if (flags) {
            if ((st & flags) == flags)
                return true;
        } else if (loom_node_base(want) == LOOM_NODE_ALLOCATED) {
            if (base == LOOM_NODE_ALLOCATED || base == LOOM_NODE_MIXED)
                return true; /* slurmctld reports a mixed node as allocated */
        } else if (loom_node_base(want) == LOOM_NODE_MIXED) {
            if (base == LOOM_NODE_MIXED && !(st & LOOM_NODE_F_DRAIN))
                return true;
        } else if (base == loom_node_base(want)) {
            return true;
        }
    }
    return false;
}

static bool sinfo_node_ok(const sinfo_t *s, const loom_sinfo_node_t *n)
{
    if (s->node_filter && loom_hostlist_find(s->node_filter, n->name) < 0)
        return false;
    if (s->o.responding && (n->state & LOOM_NODE_F_NO_RESPOND))
        return false;
    if (s->o.dead && !(n->state & LOOM_NODE_F_NO_RESPOND))
        return false;
    if (s->o.reasons && loom_node_base(n->state) != LOOM_NODE_DOWN &&
        !(n->state & (LOOM_NODE_F_DRAIN | LOOM_NODE_F_FAIL)))
        return false;
    return sinfo_state_match(s, n->state);
}

static bool sinfo_part_ok(const sinfo_t *s, const loom_sinfo_part_t *p)
{
    return s->o.parts.n == 0 || loom_strv_find(&s->o.parts, p->name) >= 0;
}

/* ---- grouping ------------------------------------------------------------ */

static loom_sinfo_row_t *sinfo_new_row(sinfo_t *s, const loom_sinfo_part_t *p)
{
    if (s->n_rows == s->cap_rows) {
        s->cap_rows = s->cap_rows ? s->cap_rows * 2 : 16;
        s->rows = loom_xreallocarray(s->rows, s->cap_rows, sizeof(*s->rows));
    }
    loom_sinfo_row_t *r = &s->rows[s->n_rows++];
    *r = (loom_sinfo_row_t){.part = p};
    return r;
}

static void sinfo_row_add(loom_sinfo_row_t *r, loom_sinfo_node_t *n)
{
    for (size_t i = 0; i < r->n; i++)
        if (r->nodes[i] == n)
            return;
    if (r->n == r->cap) {
        r->cap = r->cap ? r->cap * 2 : 8;
        r->nodes = loom_xreallocarray(r->nodes, r->cap, sizeof(*r->nodes));
    }
    r->nodes[r->n++] = n;
}

/* What a node shows in the columns that separate rows. */
static void sinfo_key(const sinfo_t *s, loom_sinfo_node_t *n, loom_sbuf_t *key)
{
    loom_sinfo_node_t *one[1] = {n};
    loom_sinfo_row_t r = {.part = NULL, .nodes = one, .n = 1, .cap = 1};
    for (size_t i = 0; i < s->fmt.n; i++) {
        const loom_fmt_col_t *col = s->fmt.v[i].col;
        if (loom_sinfo_col_is_aggregate(col, s->o.exact) || loom_sinfo_col_is_partition(col))
            continue;
        col->get(&s->view, &r, key);
        loom_sbuf_addc(key, '\x1f');
    }
}

static bool sinfo_has_part_field(const sinfo_t *s)
{
    for (size_t i = 0; i < s->fmt.n; i++)
        if (loom_sinfo_col_is_partition(s->fmt.v[i].col))
            return true;
    return false;
}

/* Place node n in a row of partition p (p NULL: across partitions). rows of
 * this partition start at first. */
static void sinfo_place(sinfo_t *s, const loom_sinfo_part_t *p, size_t first, loom_sinfo_node_t *n)
{
    if (s->o.node_mode && !p)
        for (size_t i = 0; i < s->n_rows; i++)
            if (s->rows[i].n && s->rows[i].nodes[0] == n)
                return;
    loom_sbuf_t key = LOOM_SBUF_INIT, other = LOOM_SBUF_INIT;
    sinfo_key(s, n, &key);
    for (size_t i = first; i < s->n_rows && !s->o.node_mode; i++) {
        if (s->rows[i].part != p || s->rows[i].n == 0)
            continue;
        loom_sbuf_reset(&other);
        sinfo_key(s, s->rows[i].nodes[0], &other);
        if (strcmp(loom_sbuf_str(&key), loom_sbuf_str(&other)) == 0) {
            sinfo_row_add(&s->rows[i], n);
            goto out;
        }
    }
    sinfo_row_add(sinfo_new_row(s, p), n);
out:
    loom_sbuf_free(&key);
    loom_sbuf_free(&other);
}

static void sinfo_group(sinfo_t *s)
{
    bool per_part = sinfo_has_part_field(s);
    loom_sinfo_node_t **buf = loom_xcalloc(s->n_nodes + 1, sizeof(*buf));
    for (size_t k = 0; k < s->n_parts; k++) {
        const loom_sinfo_part_t *p = &s->parts[k];
        if (!sinfo_part_ok(s, p))
            continue;
        size_t n = sinfo_part_nodes(s, p, buf), first = per_part ? s->n_rows : 0, placed = 0;
        for (size_t i = 0; i < n; i++)
            if (sinfo_node_ok(s, buf[i])) {
                sinfo_place(s, per_part ? p : NULL, first, buf[i]);
                placed++;
            }
        if (per_part && !placed && !s->o.node_mode && (!s->o.reasons || s->o.summarize))
            sinfo_new_row(s, p);
    }
    free(buf);
}

/* ---- sorting ------------------------------------------------------------- */

typedef struct sinfo_sort {
    const char *keys;
} sinfo_sort_t;

static int sinfo_cmp_int(int64_t a, int64_t b)
{
    return a < b ? -1 : a > b;
}

static int sinfo_cmp_key(char k, bool part_order, const loom_sinfo_row_t *a,
                         const loom_sinfo_row_t *b)
{
    const loom_sinfo_node_t *na = a->n ? a->nodes[0] : NULL, *nb = b->n ? b->nodes[0] : NULL;
    switch (k) {
    case 'P':
    case 'R':
        if (!a->part || !b->part)
            return sinfo_cmp_int(a->part != NULL, b->part != NULL);
        return part_order ? sinfo_cmp_int((int64_t)a->part->order, (int64_t)b->part->order)
                          : strcmp(a->part->name, b->part->name);
    case 't':
    case 'T':
        return sinfo_cmp_int(na ? loom_sinfo_slurm_state(na->state) : 0,
                             nb ? loom_sinfo_slurm_state(nb->state) : 0);
    case 'N':
        return sinfo_cmp_int(na ? (int64_t)na->rank : -1, nb ? (int64_t)nb->rank : -1);
    case 'D':
        return sinfo_cmp_int((int64_t)a->n, (int64_t)b->n);
    case 'c':
        return sinfo_cmp_int(na ? loom_sinfo_node_int(na, "cpus") : 0,
                             nb ? loom_sinfo_node_int(nb, "cpus") : 0);
    case 'm':
        return sinfo_cmp_int(na ? loom_sinfo_node_int(na, "real_memory") : 0,
                             nb ? loom_sinfo_node_int(nb, "real_memory") : 0);
    default:
        return 0;
    }
}

static int sinfo_cmp(const void *pa, const void *pb, void *arg)
{
    const sinfo_sort_t *ss = arg;
    const loom_sinfo_row_t *a = pa, *b = pb;
    for (const char *k = ss->keys; *k; k++) {
        if (strchr(",+-#", *k))
            continue;
        bool rev = k > ss->keys && k[-1] == '-';
        bool order = k > ss->keys && k[-1] == '#';
        int d = sinfo_cmp_key(*k, order, a, b);
        if (d)
            return rev ? -d : d;
    }
    return 0;
}

/* Stable sort: tie-break on creation order kept in a side array. */
static void sinfo_sort(sinfo_t *s)
{
    const char *keys = s->o.sort ? s->o.sort : s->o.node_mode ? "N,#P" : "#P,-t";
    sinfo_sort_t ss = {keys};
    /* insertion sort keeps equal rows in creation order; row counts are small */
    for (size_t i = 1; i < s->n_rows; i++) {
        loom_sinfo_row_t cur = s->rows[i];
        size_t k = i;
        while (k > 0 && sinfo_cmp(&s->rows[k - 1], &cur, &ss) > 0) {
            s->rows[k] = s->rows[k - 1];
            k--;
        }
        s->rows[k] = cur;
    }
}

/* ---- output -------------------------------------------------------------- */

static const char *sinfo_default_format(const sinfo_t *s)
{
    if (s->o.summarize) /* -s wins over -N and -R, as in sinfo 22.05 */
        return SINFO_FMT_SUMMARY;
    if (s->o.node_mode)
        return s->o.long_fmt ? SINFO_FMT_NODE_L : SINFO_FMT_NODE;
    if (s->o.reasons)
        return s->o.long_fmt ? SINFO_FMT_REASON_L : SINFO_FMT_REASON;
    return s->o.long_fmt ? SINFO_FMT_LONG : SINFO_FMT_DEFAULT;
}

static void sinfo_format(sinfo_t *s)
{
    loom_strv_t bad = LOOM_STRV_INIT;
    const char *spec = s->o.format;
    bool all =
        spec && (strcmp(spec, "%all") == 0 || (s->o.format_long && strcasecmp(spec, "all") == 0));
    if (all)
        loom_fmt_parse(SINFO_FMT_ALL, loom_sinfo_cols, loom_sinfo_ncols, 0, &s->fmt, &bad);
    else if (spec && s->o.format_long)
        loom_fmt_parse_long(spec, loom_sinfo_cols, loom_sinfo_ncols, &s->fmt, &bad);
    else if (spec)
        loom_fmt_parse(spec, loom_sinfo_cols, loom_sinfo_ncols, 0, &s->fmt, &bad);
    else
        loom_fmt_parse(sinfo_default_format(s), loom_sinfo_cols, loom_sinfo_ncols, LOOM_FMT_AUTO,
                       &s->fmt, &bad);
    for (size_t i = 0; i < bad.n; i++) /* sinfo 22.05 says "job" for -O */
        if (spec && s->o.format_long && !all)
            loom_cli_error(&s->cli, "Invalid job format specification: %s", bad.v[i]);
        else
            fprintf(stderr, "Invalid node format specification: %s\n", bad.v[i]);
    loom_strv_free(&bad);
    bool right = s->o.node_mode && !s->o.summarize; /* -N shows %#P right-justified */
    for (size_t i = 0; i < s->fmt.n; i++)
        if (s->fmt.v[i].autow && right && s->fmt.v[i].col->letter == 'P')
            s->fmt.v[i].right = true;
}

/* '#' columns: as wide as the longest value, at least SINFO_MIN_WIDTH. */
static void sinfo_auto_widths(sinfo_t *s)
{
    size_t wp = SINFO_MIN_WIDTH, wn = SINFO_MIN_WIDTH;
    loom_sbuf_t v = LOOM_SBUF_INIT;
    for (size_t i = 0; i < s->n_rows; i++) {
        loom_sbuf_reset(&v);
        if (s->rows[i].part)
            loom_sinfo_part_name(s->rows[i].part, true, &v);
        wp = v.len > wp ? v.len : wp;
        loom_sbuf_reset(&v);
        loom_sinfo_get_nodelist()(&s->view, &s->rows[i], &v);
        wn = v.len > wn ? v.len : wn;
    }
    loom_sbuf_free(&v);
    loom_fmt_set_auto(&s->fmt, loom_sinfo_get_partition(), (int)wp);
    loom_fmt_set_auto(&s->fmt, loom_sinfo_get_nodelist(), (int)wn);
}

static void sinfo_print(sinfo_t *s, loom_sbuf_t *out)
{
    sinfo_auto_widths(s);
    if (!s->o.noheader) {
        if (s->o.long_fmt)
            loom_fmt_date_line(time(NULL), out);
        if (s->o.clusters)
            loom_sbuf_addf(out, "CLUSTER: %s\n",
                           s->conf->cluster_name ? s->conf->cluster_name : "");
        loom_fmt_header(&s->fmt, out);
    }
    for (size_t i = 0; i < s->n_rows; i++)
        loom_fmt_row(&s->fmt, &s->view, &s->rows[i], out);
}

static void sinfo_json(sinfo_t *s, loom_sbuf_t *out)
{
    json_t *nodes = json_array();
    for (size_t i = 0; i < s->n_nodes; i++) {
        if (!sinfo_node_ok(s, &s->nodes[i]))
            continue;
        json_t *rec = s->nodes[i].rec ? json_incref((json_t *)s->nodes[i].rec)
                                      : json_pack("{s:s}", "name", s->nodes[i].name);
        json_array_append_new(nodes, loom_cli_json_node(rec, s->nodes[i].cfg));
        json_decref(rec);
    }
    loom_cli_json_print("nodes", nodes, s->conf, s->argc, s->argv, out);
}

/* ---- main ---------------------------------------------------------------- */

static int sinfo_fetch(sinfo_t *s)
{
    loom_err_t err = {0};
    if (loom_cli_call(&s->cli, "part.info", NULL, &s->part_reply, &err) < 0) {
        fprintf(stderr, "slurm_load_partitions: %s\n", err.msg);
        return -1;
    }
    if (loom_cli_call(&s->cli, "node.info", NULL, &s->node_reply, &err) < 0) {
        fprintf(stderr, "slurm_load_node: %s\n", err.msg);
        return -1;
    }
    return 0;
}

static void sinfo_reset(sinfo_t *s)
{
    for (size_t i = 0; i < s->n_rows; i++)
        free(s->rows[i].nodes);
    free(s->rows);
    for (size_t i = 0; i < s->n_nodes; i++)
        free((char *)s->nodes[i].name);
    free(s->nodes);
    free(s->parts);
    free(s->live);
    json_decref(s->node_reply);
    json_decref(s->part_reply);
    s->rows = NULL;
    s->nodes = NULL;
    s->parts = NULL;
    s->live = NULL;
    s->node_reply = s->part_reply = NULL;
    s->n_rows = s->cap_rows = s->n_nodes = s->n_parts = 0;
}

static int sinfo_once(sinfo_t *s)
{
    if (sinfo_fetch(s) < 0)
        return s->cli.exit_error;
    sinfo_build_nodes(s);
    sinfo_build_parts(s);
    loom_sbuf_t out = LOOM_SBUF_INIT;
    if (s->o.json) {
        sinfo_json(s, &out);
    } else {
        sinfo_group(s);
        sinfo_sort(s);
        sinfo_print(s, &out);
    }
    loom_cli_flush(&out);
    loom_sbuf_free(&out);
    sinfo_reset(s);
    return 0;
}

static int sinfo_setup(sinfo_t *s)
{
    loom_err_t err = {0};
    s->conf = loom_cli_conf(&s->cli, &err);
    if (!s->conf) {
        loom_cli_error(&s->cli, "%s", err.msg);
        return -1;
    }
    loom_strv_t errs = LOOM_STRV_INIT;
    bool known = !s->o.clusters || loom_cli_clusters(s->o.clusters, s->conf->cluster_name, &errs);
    for (size_t i = 0; i < errs.n; i++)
        loom_cli_error(&s->cli, "%s", errs.v[i]);
    loom_strv_free(&errs);
    if (!known)
        return -1;
    if (s->o.nodes && loom_hostlist_parse(s->o.nodes, &s->node_filter, &err) < 0) {
        s->node_filter = loom_hostlist_create(); /* sinfo 22.05: a bad list is one name */
        loom_hostlist_push(s->node_filter, s->o.nodes);
    }
    s->view.node_mode = s->o.node_mode;
    sinfo_format(s);
    return 0;
}

static void sinfo_free(sinfo_t *s)
{
    sinfo_reset(s);
    loom_fmt_free(&s->fmt);
    loom_hostlist_destroy(s->node_filter);
    loom_strv_free(&s->o.parts);
    free(s->o.states);
    free(s->o.format);
    free(s->o.sort);
    free(s->o.nodes);
    free(s->o.clusters);
    loom_cli_fini(&s->cli);
}

int main(int argc, char **argv)
{
    sinfo_t s = {.argc = argc, .argv = argv};
    loom_cli_init(&s.cli, "sinfo");
    argv[0] = "sinfo";
    int rc = sinfo_parse(&s, argc, argv);
    if (rc <= 0) {
        sinfo_free(&s);
        return rc == 0 ? 0 : s.cli.exit_error;
    }
    rc = sinfo_setup(&s) < 0 ? s.cli.exit_error : 0;
    while (rc == 0) {
        rc = sinfo_once(&s);
        if (s.o.iterate <= 0)
            break;
        fflush(stdout);
        sleep((unsigned)s.o.iterate);
        putchar('\n');
    }
    sinfo_free(&s);
    return rc;
}
