/*
 * sshare.c - associations' shares, fair-share usage and factors, as Slurm
 * 22.05's sshare prints them under PriorityFlags=FAIR_TREE (the default);
 * asks loomctld with assoc.shares (docs/proto/messages.md §3). Under
 * priority/basic the rows come too, with RawShares only and usage 0.
 *
 * Layouts (checked against sshare on slurmctld 22.05.8 with slurmdbd):
 *   default  Account,User,RawShares,NormShares,RawUsage,EffectvUsage,FairShare
 *   -l       Account,User,RawShares,NormShares,RawUsage,NormUsage,EffectvUsage,
 *            FairShare,LevelFS,GrpTRESMins,TRESRunMins
 *   -m       Partition after User (default layouts only)
 *   -o LIST  Name[%width] (a negative width left-justifies), names matched by
 *            prefix, case-insensitively; an unknown one: 'Invalid field
 *            requested: "x"' and exit 1.
 * Columns are print_fields' (cli_dbd.h): Account is 20 wide and left-
 * justified, the rest right-justified (User 10, RawShares 10, NormShares 11,
 * RawUsage 11, NormUsage 11, EffectvUsage 13, FairShare 10, LevelFS 10, ID 6,
 * Cluster 10, Partition 12, TRES lists 30); doubles print "%f" and as "%e"
 * when that does not fit; empty values (the root's RawShares, NormUsage and
 * LevelFS; accounts' FairShare) stay blank. The Account column is indented
 * one space per ancestor listed above it; a user's row shows its account.
 *
 * Rows: depth first from the root, users before sub-accounts. Without -a
 * or -u only the invoking user's associations are listed beside every
 * account; -u picks users, -A accounts (both keep Slurm's rule that a user
 * association is listed only for a picked user); -U lists users only,
 * without indentation. -v first lists what was asked for on stderr; -M
 * knows only this cluster (ClusterName): "CLUSTER: name" heads the output,
 * other names get Slurm's "No cluster 'x' known by database." (exit 1 when
 * none is this one). No --json: 22.05's sshare has none.
 */
#include "cli/cli_common.h"
#include "cli/cli_dbd.h"
#include "cli/cli_format.h"
#include "common/xalloc.h"

#include <getopt.h>
#include <math.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

typedef enum {
    SS_STR,
    SS_INT,
    SS_DOUBLE,
} sshare_kind_t;

typedef struct sshare_field {
    const char *name;
    int width;
    sshare_kind_t kind;
    const char *key; /* in the assoc.shares row; NULL: computed */
} sshare_field_t;

/* sshare --helpformat's order, which is also the order prefixes match in. */
static const sshare_field_t sshare_fields[] = {
    {"Account", -20, SS_STR, NULL},
    {"Cluster", 10, SS_STR, "cluster"},
    {"EffectvUsage", 13, SS_DOUBLE, "eff_usage"},
    {"FairShare", 10, SS_DOUBLE, "fairshare"},
    {"GrpTRESMins", 30, SS_STR, "grp_tres_mins"},
    {"GrpTRESRaw", 30, SS_STR, "grp_tres_raw"},
    {"ID", 6, SS_INT, "id"},
    {"LevelFS", 10, SS_DOUBLE, "level_fs"},
    {"NormShares", 11, SS_DOUBLE, "norm_shares"},
    {"NormUsage", 11, SS_DOUBLE, "norm_usage"},
    {"Partition", 12, SS_STR, "partition"},
    {"RawShares", 10, SS_INT, "raw_shares"},
    {"RawUsage", 11, SS_INT, "raw_usage"},
    {"TRESRunMins", 30, SS_STR, "tres_run_mins"},
    {"User", 10, SS_STR, "user"},
};
#define SSHARE_NFIELDS (sizeof(sshare_fields) / sizeof(sshare_fields[0]))

typedef struct sshare_col {
    const sshare_field_t *f;
    int width;
} sshare_col_t;

typedef struct sshare {
    loom_cli_t cli;
    loom_pf_t pf;
    bool all, long_fmt, part, users_only, verbose;
    json_t *clusters; /* -M, NULL when not given */
    char *format;
    json_t *users, *accounts; /* arrays, NULL when not given */
    sshare_col_t *cols;
    size_t ncols;
} sshare_t;

/* ---- the format --------------------------------------------------------------------- */

static const sshare_field_t *sshare_field(const char *name, size_t len)
{
    for (size_t i = 0; len && i < SSHARE_NFIELDS; i++)
        if (!strncasecmp(sshare_fields[i].name, name, len) && len <= strlen(sshare_fields[i].name))
            return &sshare_fields[i];
    return NULL;
}

/* -1 (message printed) on an unknown field. */
static int sshare_parse_format(sshare_t *s, const char *fmt)
{
    loom_strv_t items = LOOM_STRV_INIT;
    loom_strv_split(&items, fmt, ",");
    s->cols = loom_xcalloc(items.n + 1, sizeof(*s->cols));
    int rc = 0;
    for (size_t i = 0; i < items.n; i++) {
        const char *it = items.v[i], *pct = strchr(it, '%');
        size_t len = pct ? (size_t)(pct - it) : strlen(it);
        const sshare_field_t *f = sshare_field(it, len);
        if (!f) {
            loom_cli_error(&s->cli, "Invalid field requested: \"%.*s\"", (int)len, it);
            rc = -1;
            break;
        }
        int w = f->width;
        if (pct && pct[1])
            w = atoi(pct + 1);
        s->cols[s->ncols++] = (sshare_col_t){f, w};
    }
    loom_strv_free(&items);
    return rc;
}

static void sshare_default_format(const sshare_t *s, loom_sbuf_t *f)
{
    loom_sbuf_add(f, s->part ? "Account,User,Partition,RawShares,NormShares,RawUsage,"
                             : "Account,User,RawShares,NormShares,RawUsage,");
    if (s->long_fmt)
        loom_sbuf_add(f, "NormUsage,EffectvUsage,FairShare,LevelFS,GrpTRESMins,TRESRunMins");
    else
        loom_sbuf_add(f, "EffectvUsage,FairShare");
}

/* ---- rows ----------------------------------------------------------------------------- */

/* The number of ancestors of a row listed before it (rows are depth first):
 * its parent's depth plus one, found by id in seen (id -> depth). */
static size_t sshare_depth(const json_t *row, json_t *seen)
{
    char key[32];
    snprintf(key, sizeof(key), "%lld", (long long)loom_ji(row, "parent_id", 0));
    const json_t *d = json_object_get(seen, key);
    size_t depth = d ? (size_t)json_integer_value(d) + 1 : 0;
    snprintf(key, sizeof(key), "%lld", (long long)loom_ji(row, "id", -1));
    json_object_set_new(seen, key, json_integer((json_int_t)depth));
    return depth;
}

static void sshare_double(const sshare_t *s, const json_t *v, int width, loom_sbuf_t *out)
{
    double d =
        json_is_string(v) && !strcmp(json_string_value(v), "inf") ? INFINITY : json_number_value(v);
    if (s->pf.parsable) {
        loom_sbuf_addf(out, "%f", d);
        return;
    }
    char buf[64];
    int n = snprintf(buf, sizeof(buf), "%*f", width, d);
    if (n > abs(width))
        snprintf(buf, sizeof(buf), "%*e", width, d);
    loom_sbuf_add(out, buf);
}

static void sshare_value(const sshare_t *s, const json_t *row, size_t depth, const sshare_col_t *c,
                         loom_sbuf_t *out)
{
    const sshare_field_t *f = c->f;
    if (!f->key) { /* Account */
        size_t ind = s->users_only ? 0 : depth;
        for (size_t k = 0; k < ind; k++)
            loom_sbuf_addc(out, ' ');
        loom_sbuf_add(out, loom_js_or(row, "account", ""));
        return;
    }
    const json_t *v = json_object_get(row, f->key);
    if (!v)
        return;
    if (f->kind == SS_STR)
        loom_sbuf_add(out, json_is_string(v) ? json_string_value(v) : "");
    else if (f->kind == SS_INT)
        loom_sbuf_addf(out, "%llu",
                       (unsigned long long)(json_number_value(v) > 0 ? json_number_value(v) : 0));
    else
        sshare_double(s, v, c->width, out);
}

static void sshare_row(const sshare_t *s, const json_t *row, size_t depth, loom_sbuf_t *out)
{
    for (size_t i = 0; i < s->ncols; i++) {
        loom_sbuf_t v = LOOM_SBUF_INIT;
        sshare_value(s, row, depth, &s->cols[i], &v);
        bool number = s->cols[i].f->kind != SS_STR;
        loom_pf_cell(&s->pf, loom_sbuf_str(&v), s->cols[i].width, i + 1 == s->ncols, number, out);
        loom_sbuf_free(&v);
    }
    loom_sbuf_addc(out, '\n');
}

static void sshare_print(sshare_t *s, const json_t *rows)
{
    loom_sbuf_t out = LOOM_SBUF_INIT;
    loom_pf_col_t *hdr = loom_xcalloc(s->ncols + 1, sizeof(*hdr));
    for (size_t i = 0; i < s->ncols; i++)
        hdr[i] = (loom_pf_col_t){s->cols[i].f->name, s->cols[i].width};
    loom_pf_header(&s->pf, hdr, s->ncols, &out);
    free(hdr);
    size_t n = json_array_size(rows);
    json_t *seen = json_object();
    for (size_t i = 0; i < n; i++) {
        const json_t *row = json_array_get(rows, i);
        size_t depth = sshare_depth(row, seen);
        bool user = *loom_js_or(row, "user", "");
        if (s->users_only && !user)
            continue;
        sshare_row(s, row, depth, &out);
    }
    json_decref(seen);
    loom_cli_flush(&out);
    loom_sbuf_free(&out);
}

/* ---- options ---------------------------------------------------------------------------- */

enum { OPT_HELP = 0x100, OPT_USAGE };

static void sshare_usage(void)
{
    static const char *const lines[] = {
        "Usage:  sshare [OPTION]",
        "  Valid OPTIONs are:",
        "    -a or --all            list all users",
        "    -A or --accounts=      display specific accounts (comma separated list)",
        "    -e or --helpformat     Print a list of fields that can be specified",
        "                           with the '--format' option",
        "    -l or --long           include normalized usage in output",
        "    -m or --partition      print the partition part of the association",
        "    -M or --cluster=names  clusters to issue commands to.",
        "                           NOTE: SlurmDBD must be up.",
        "    -n or --noheader       omit header from output",
        "    -o or --format=        Comma separated list of fields (use",
        "                           \"--helpformat\" for a list of available fields).",
        "    -p or --parsable       '|' delimited output with a trailing '|'",
        "    -P or --parsable2      '|' delimited output without a trailing '|'",
        "    -u or --users=         display specific users (comma separated list)",
        "    -U or --Users          display only user information",
        "    -v or --verbose        display more information",
        "    -V or --version        display tool version number",
        "          --help           display this usage description",
        "          --usage          display this usage description",
        "",
    };
    /* Slurm pads each line to 75 columns, except the one that closes the
     * parenthesis, and ends with an empty line. */
    for (size_t i = 0; i < sizeof(lines) / sizeof(lines[0]); i++)
        printf(strstr(lines[i], "fields).") ? "%s\n" : "%-75s\n", lines[i]);
    printf("\n");
}

/* Four names a line, each in 17 columns and a space between, as --helpformat
 * prints them. */
static void sshare_helpformat(void)
{
    for (size_t i = 0; i < SSHARE_NFIELDS; i++)
        printf("%-17s%s", sshare_fields[i].name,
               (i % 4 == 3 || i + 1 == SSHARE_NFIELDS) ? "\n" : " ");
}

static void sshare_list(json_t **list, const char *arg)
{
    if (!*list)
        *list = json_array();
    loom_strv_t v = LOOM_STRV_INIT;
    loom_strv_split(&v, arg, ",");
    for (size_t i = 0; i < v.n; i++)
        json_array_append_new(*list, json_string(v.v[i]));
    loom_strv_free(&v);
}

static const struct option sshare_longopts[] = {
    {"accounts", required_argument, NULL, 'A'}, {"all", no_argument, NULL, 'a'},
    {"helpformat", no_argument, NULL, 'e'},     {"long", no_argument, NULL, 'l'},
    {"partition", no_argument, NULL, 'm'},      {"clusters", required_argument, NULL, 'M'},
    {"cluster", required_argument, NULL, 'M'},  {"noheader", no_argument, NULL, 'n'},
    {"format", required_argument, NULL, 'o'},   {"parsable", no_argument, NULL, 'p'},
    {"parsable2", no_argument, NULL, 'P'},      {"users", required_argument, NULL, 'u'},
    {"Users", no_argument, NULL, 'U'},          {"verbose", no_argument, NULL, 'v'},
    {"version", no_argument, NULL, 'V'},        {"help", no_argument, NULL, OPT_HELP},
    {"usage", no_argument, NULL, OPT_USAGE},    {NULL, 0, NULL, 0},
};

/* 1 to go on, 0 to exit successfully, -1 on a bad option. */
static int sshare_option(sshare_t *s, int c, const char *arg)
{
    switch (c) {
    case 'a':
        s->all = true;
        break;
    case 'A':
        sshare_list(&s->accounts, arg);
        break;
    case 'e':
        sshare_helpformat();
        return 0;
    case 'l':
        s->long_fmt = true;
        break;
    case 'm':
        s->part = true;
        break;
    case 'n':
        s->pf.noheader = true;
        break;
    case 'o':
        free(s->format);
        s->format = loom_xstrdup(arg);
        break;
    case 'p':
        s->pf.parsable = 1;
        break;
    case 'P':
        s->pf.parsable = 2;
        break;
    case 'u':
        sshare_list(&s->users, arg);
        break;
    case 'U':
        s->users_only = true;
        break;
    case 'v':
        s->verbose = true;
        break;
    case 'M':
        sshare_list(&s->clusters, arg);
        break;
    case 'V':
        loom_cli_version();
        return 0;
    case OPT_HELP:
    case OPT_USAGE:
        sshare_usage();
        return 0;
    default:
        return -1;
    }
    return 1;
}

static int sshare_parse(sshare_t *s, int argc, char **argv)
{
    int c;
    while ((c = getopt_long(argc, argv, "aA:elmM:no:pPu:UvV", sshare_longopts, NULL)) != -1) {
        int rc = sshare_option(s, c, optarg);
        if (rc <= 0) {
            if (rc < 0)
                fprintf(stderr, "Try \"sshare --help\" for more information\n");
            return rc;
        }
    }
    loom_sbuf_t f = LOOM_SBUF_INIT;
    if (s->format)
        loom_sbuf_add(&f, s->format);
    else
        sshare_default_format(s, &f);
    int rc = sshare_parse_format(s, loom_sbuf_str(&f));
    loom_sbuf_free(&f);
    return rc < 0 ? -1 : 1;
}

/* ---- the request ---------------------------------------------------------------------- */

/* -v: what is asked for, on stderr, as sshare prints it. */
static void sshare_requested(const char *what, const json_t *list)
{
    fprintf(stderr, "%s requested:\n", what);
    if (!json_array_size(list))
        fprintf(stderr, "\t: all\n");
    size_t i;
    json_t *v;
    json_array_foreach(list, i, v)
    {
        fprintf(stderr, "\t: %s\n", json_string_value(v));
    }
}

/* -M: only this cluster is known; "CLUSTER: name" heads its output. -1 when
 * none of the names is it. */
static int sshare_clusters(sshare_t *s)
{
    if (!s->clusters)
        return 0;
    loom_err_t err = {0};
    const loom_conf_t *conf = loom_cli_conf(&s->cli, &err);
    const char *me = conf && conf->cluster_name ? conf->cluster_name : "";
    bool found = false;
    size_t i;
    json_t *v;
    json_array_foreach(s->clusters, i, v)
    {
        const char *name = json_string_value(v);
        if (!strcasecmp(name, me) || !strcasecmp(name, "all"))
            found = true;
        else
            loom_cli_error(&s->cli, "No cluster '%s' known by database.", name);
    }
    if (!found) {
        loom_cli_error(&s->cli,
                       "'%s' can't be reached now, or it is an invalid entry for --cluster.  Use "
                       "'sacctmgr list clusters' to see available clusters.",
                       json_string_value(json_array_get(s->clusters, 0)));
        return -1;
    }
    printf("CLUSTER: %s\n", me);
    return 0;
}

static int sshare_run(sshare_t *s)
{
    json_t *body = json_object(), *reply = NULL;
    if (!s->all && !s->users) { /* the invoking user's own associations */
        struct passwd *pw = getpwuid(getuid());
        s->users = json_array();
        if (pw)
            json_array_append_new(s->users, json_string(pw->pw_name));
    }
    if (s->users && !s->all)
        json_object_set(body, "users", s->users);
    if (s->verbose) {
        sshare_requested("Users", s->all ? NULL : s->users);
        sshare_requested("Accounts", s->accounts);
    }
    if (sshare_clusters(s) < 0) {
        json_decref(body);
        return 1;
    }
    if (s->accounts)
        json_object_set(body, "accounts", s->accounts);
    loom_err_t err = {0};
    int rc = loom_cli_call(&s->cli, "assoc.shares", body, &reply, &err);
    json_decref(body);
    if (rc < 0) {
        fprintf(stderr, "Couldn't get shares from controller: %s\n", err.msg);
        json_decref(reply);
        return s->cli.exit_error;
    }
    sshare_print(s, json_object_get(reply, "shares"));
    json_decref(reply);
    return 0;
}

int main(int argc, char **argv)
{
    sshare_t s = {.pf = {.delim = "|"}};
    loom_cli_init(&s.cli, "sshare");
    int rc = sshare_parse(&s, argc, argv);
    int status = rc < 0 ? 1 : (rc == 0 ? 0 : sshare_run(&s));
    json_decref(s.users);
    json_decref(s.accounts);
    json_decref(s.clusters);
    free(s.cols);
    free(s.format);
    loom_cli_fini(&s.cli);
    return status;
}
