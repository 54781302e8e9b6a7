/*
 * sprio.c - the factors of pending jobs' multifactor priorities, as Slurm
 * 22.05's sprio prints them (docs/proto/messages.md job.prio).
 *
 * Layouts (checked against sprio on slurmctld 22.05.8):
 *   default  "%.15i %9r %.10Y %.10S" then, for each factor whose weight is
 *            not 0, " %.10A" (age), " %.10B" (assoc), " %.10F" (fair-share),
 *            " %.10J" (job size), " %.10P" (partition), " %.10Q" (QOS),
 *            " %.20T" (TRES); -u adds " %.8u" after the partition
 *   -l       "%.15i %9r %.8u %.10Y %.10S %.10A %.10B %.10F %.10J %.10P %.10Q %.11N %.20T"
 *   -n       "%.15i %9r %10y" then " %10a" ... " %20t" as above (no site)
 *   -n -l    "%.15i %9r %.8u %10y %10a %10b %10f %10j %10p %10q %20t"
 *   -w       the default header, then one "Weights" line of the weights
 * Weighted values are the normalised factors times their weights, rounded;
 * normalised ones print with 7 decimals, the job priority normalised with 14
 * (over 2^32 - 1), cut to the column. TRES: "cpu=1000,mem=500" / "cpu=1.00".
 * One line per pending job and partition it may run in, sorted by job id
 * (-S to change). With -j and nothing to show: "Unable to find jobs matching
 * user/id(s) specified". Under priority/basic: Slurm's three lines on
 * stderr and exit 1.
 */
#include "cli/cli_common.h"
#include "cli/cli_format.h"
#include "common/xalloc.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

typedef struct sprio {
    loom_cli_t cli;
    bool noheader, long_fmt, norm, weights_only;
    char *format, *sort;
    json_t *job_ids, *users, *parts; /* filters (arrays), NULL when not given */
    bool jobs_given;
    json_t *weights;
} sprio_t;

/* ---- fields --------------------------------------------------------------------- */

static double sprio_w(const sprio_t *s, const char *key)
{
    return loom_jd(s->weights, key, 0);
}

static void sprio_num(loom_sbuf_t *out, double v)
{
    loom_sbuf_addf(out, "%.0f", v);
}

static int f_jobid(const void *ctx, const void *rec, loom_sbuf_t *out)
{
    const json_t *j = rec;
    if (loom_jhas(j, "weights_row"))
        loom_sbuf_add(out, "Weights");
    else
        loom_sbuf_addf(out, "%lld", (long long)loom_ji(j, "job_id", 0));
    return 0;
}

static int f_part(const void *ctx, const void *rec, loom_sbuf_t *out)
{
    loom_sbuf_add(out, loom_js_or(rec, "partition", ""));
    return 0;
}

static int f_user(const void *ctx, const void *rec, loom_sbuf_t *out)
{
    loom_sbuf_add(out, loom_js_or(rec, "user_name", ""));
    return 0;
}

static int f_prio(const void *ctx, const void *rec, loom_sbuf_t *out)
{
    if (!loom_jhas(rec, "weights_row"))
        loom_sbuf_addf(out, "%lld", (long long)loom_ji(rec, "priority", 0));
    return 0;
}

static int f_prio_norm(const void *ctx, const void *rec, loom_sbuf_t *out)
{
    if (!loom_jhas(rec, "weights_row"))
        loom_sbuf_addf(out, "%.14f", (double)loom_ji(rec, "priority", 0) / 4294967295.0);
    return 0;
}

static int f_nice(const void *ctx, const void *rec, loom_sbuf_t *out)
{
    if (!loom_jhas(rec, "weights_row"))
        loom_sbuf_addf(out, "%lld", (long long)loom_ji(rec, "nice", 0));
    return 0;
}

static int f_site(const void *ctx, const void *rec, loom_sbuf_t *out)
{
    if (loom_jhas(rec, "weights_row"))
        sprio_num(out, sprio_w(ctx, "site"));
    else
        loom_sbuf_addf(out, "%lld", (long long)loom_ji(rec, "site", 0));
    return 0;
}

/* A factor: key in the record and in the weights. */
static int sprio_factor(const sprio_t *s, const json_t *rec, const char *key, const char *wkey,
                        bool norm, loom_sbuf_t *out)
{
    double w = sprio_w(s, wkey);
    if (loom_jhas(rec, "weights_row"))
        sprio_num(out, w);
    else if (norm)
        loom_sbuf_addf(out, "%.7f", loom_jd(rec, key, 0));
    else
        sprio_num(out, loom_jd(rec, key, 0) * w);
    return 0;
}

#define SPRIO_FACTOR(fn, key, wkey, norm)                                                          \
    static int fn(const void *ctx, const void *rec, loom_sbuf_t *out)                              \
    {                                                                                              \
        return sprio_factor(ctx, rec, key, wkey, norm, out);                                       \
    }
SPRIO_FACTOR(f_age, "age", "age", false)
SPRIO_FACTOR(f_age_n, "age", "age", true)
SPRIO_FACTOR(f_assoc, "assoc", "assoc", false)
SPRIO_FACTOR(f_assoc_n, "assoc", "assoc", true)
SPRIO_FACTOR(f_fs, "fairshare", "fairshare", false)
SPRIO_FACTOR(f_fs_n, "fairshare", "fairshare", true)
SPRIO_FACTOR(f_js, "job_size", "job_size", false)
SPRIO_FACTOR(f_js_n, "job_size", "job_size", true)
SPRIO_FACTOR(f_part_w, "part", "partition", false)
SPRIO_FACTOR(f_part_n, "part", "partition", true)
SPRIO_FACTOR(f_qos, "qos", "qos", false)
SPRIO_FACTOR(f_qos_n, "qos", "qos", true)
#undef SPRIO_FACTOR

static double sprio_tres_weight(const sprio_t *s, const char *name)
{
    size_t i;
    json_t *t;
    json_array_foreach(json_object_get(s->weights, "tres"), i, t)
    {
        if (!strcmp(loom_js_or(t, "name", ""), name))
            return loom_jd(t, "weight", 0);
    }
    return 0;
}

static int sprio_tres(const sprio_t *s, const json_t *rec, bool norm, loom_sbuf_t *out)
{
    if (loom_jhas(rec, "weights_row")) {
        loom_sbuf_add(out, loom_js_or(s->weights, "tres_text", ""));
        return 0;
    }
    size_t i;
    json_t *t;
    json_array_foreach(json_object_get(rec, "tres"), i, t)
    {
        const char *name = loom_js_or(t, "name", "");
        double v = loom_jd(t, "norm", 0);
        if (norm)
            loom_sbuf_addf(out, "%s%s=%.2f", i ? "," : "", name, v);
        else
            loom_sbuf_addf(out, "%s%s=%.0f", i ? "," : "", name, v * sprio_tres_weight(s, name));
    }
    return 0;
}

static int f_tres(const void *ctx, const void *rec, loom_sbuf_t *out)
{
    return sprio_tres(ctx, rec, false, out);
}

static int f_tres_n(const void *ctx, const void *rec, loom_sbuf_t *out)
{
    return sprio_tres(ctx, rec, true, out);
}

static const loom_fmt_col_t sprio_cols[] = {
    {'i', NULL, "JOBID", 0, f_jobid, 0},
    {'r', NULL, "PARTITION", 0, f_part, 0},
    {'u', NULL, "USER", 0, f_user, 0},
    {'Y', NULL, "PRIORITY", 0, f_prio, 0},
    {'y', NULL, "PRIORITY", 0, f_prio_norm, 0},
    {'S', NULL, "SITE", 0, f_site, 0},
    {'A', NULL, "AGE", 0, f_age, 0},
    {'a', NULL, "AGE", 0, f_age_n, 0},
    {'B', NULL, "ASSOC", 0, f_assoc, 0},
    {'b', NULL, "ASSOC", 0, f_assoc_n, 0},
    {'F', NULL, "FAIRSHARE", 0, f_fs, 0},
    {'f', NULL, "FAIRSHARE", 0, f_fs_n, 0},
    {'J', NULL, "JOBSIZE", 0, f_js, 0},
    {'j', NULL, "JOBSIZE", 0, f_js_n, 0},
    {'P', NULL, "PARTITION", 0, f_part_w, 0},
    {'p', NULL, "PARTITION", 0, f_part_n, 0},
    {'Q', NULL, "QOS", 0, f_qos, 0},
    {'q', NULL, "QOS", 0, f_qos_n, 0},
    {'N', NULL, "NICE", 0, f_nice, 0},
    {'T', NULL, "TRES", 0, f_tres, 0},
    {'t', NULL, "TRES", 0, f_tres_n, 0},
};

/* ---- the default layouts ------------------------------------------------------------ */

static void sprio_default_format(const sprio_t *s, bool users, loom_sbuf_t *f)
{
    static const struct {
        const char *wkey, *weighted, *normed;
    } factors[] = {
        {"age", " %.10A", " %10a"},       {"assoc", " %.10B", " %10b"},
        {"fairshare", " %.10F", " %10f"}, {"job_size", " %.10J", " %10j"},
        {"partition", " %.10P", " %10p"}, {"qos", " %.10Q", " %10q"},
    };
    if (s->long_fmt) {
        loom_sbuf_add(f, s->norm ? "%.15i %9r %.8u %10y %10a %10b %10f %10j %10p %10q %20t"
                                 : "%.15i %9r %.8u %.10Y %.10S %.10A %.10B %.10F %.10J %.10P "
                                   "%.10Q %.11N %.20T");
        return;
    }
    loom_sbuf_add(f, "%.15i %9r");
    if (users)
        loom_sbuf_add(f, " %.8u");
    loom_sbuf_add(f, s->norm ? " %10y" : " %.10Y %.10S");
    for (size_t i = 0; i < sizeof(factors) / sizeof(factors[0]); i++)
        if (sprio_w(s, factors[i].wkey) != 0)
            loom_sbuf_add(f, s->norm ? factors[i].normed : factors[i].weighted);
    if (json_array_size(json_object_get(s->weights, "tres")))
        loom_sbuf_add(f, s->norm ? " %20t" : " %.20T");
}

/* ---- sorting -------------------------------------------------------------------------- */

static int sprio_cmp_key(char k, const json_t *a, const json_t *b)
{
    switch (k) {
    case 'i':
        return (loom_ji(a, "job_id", 0) > loom_ji(b, "job_id", 0)) -
               (loom_ji(a, "job_id", 0) < loom_ji(b, "job_id", 0));
    case 'Y':
    case 'y':
        return (loom_ji(a, "priority", 0) > loom_ji(b, "priority", 0)) -
               (loom_ji(a, "priority", 0) < loom_ji(b, "priority", 0));
    case 'r':
        return strcmp(loom_js_or(a, "partition", ""), loom_js_or(b, "partition", ""));
    case 'u':
        return strcmp(loom_js_or(a, "user_name", ""), loom_js_or(b, "user_name", ""));
    case 'N':
        return (loom_ji(a, "nice", 0) > loom_ji(b, "nice", 0)) -
               (loom_ji(a, "nice", 0) < loom_ji(b, "nice", 0));
    default:
        return 0;
    }
}

typedef struct {
    const json_t *j;
    size_t idx;
} sprio_row_t;

static int sprio_cmp(const void *pa, const void *pb, void *arg)
{
    const sprio_row_t *a = pa, *b = pb;
    const char *keys = arg;
    for (const char *k = keys; *k; k++) {
        if (*k == ',' || *k == '+' || *k == '-')
            continue;
        int d = sprio_cmp_key(*k, a->j, b->j);
        if (d)
            return k > keys && k[-1] == '-' ? -d : d;
    }
    return (a->idx > b->idx) - (a->idx < b->idx);
}

/* ---- main --------------------------------------------------------------------------------- */

static void sprio_usage(void)
{
    printf("Usage: sprio [-j jid[s]] [-u user_name[s]] [-o format] [-p partitions]\n"
           "   [--federation] [--local] [--sibling] [--usage] [-hlnvVw]\n");
}

static void sprio_list(json_t **arr, const char *s, bool ints)
{
    if (!*arr)
        *arr = json_array();
    loom_strv_t v = LOOM_STRV_INIT;
    loom_strv_split(&v, s, ",");
    for (size_t i = 0; i < v.n; i++) {
        char *end;
        long long n = strtoll(v.v[i], &end, 10);
        json_array_append_new(*arr,
                              ints || (!*end && *v.v[i]) ? json_integer(n) : json_string(v.v[i]));
    }
    loom_strv_free(&v);
}

enum { OPT_USAGE = 0x100, OPT_HELP, OPT_IGNORE };

static const struct option sprio_longopts[] = {
    {"clusters", required_argument, NULL, 'M'}, {"federation", no_argument, NULL, OPT_IGNORE},
    {"format", required_argument, NULL, 'o'},   {"help", no_argument, NULL, OPT_HELP},
    {"jobs", optional_argument, NULL, 'j'},     {"local", no_argument, NULL, OPT_IGNORE},
    {"long", no_argument, NULL, 'l'},           {"noheader", no_argument, NULL, 'h'},
    {"norm", no_argument, NULL, 'n'},           {"partition", required_argument, NULL, 'p'},
    {"sibling", no_argument, NULL, OPT_IGNORE}, {"sort", required_argument, NULL, 'S'},
    {"usage", no_argument, NULL, OPT_USAGE},    {"user", required_argument, NULL, 'u'},
    {"verbose", no_argument, NULL, 'v'},        {"version", no_argument, NULL, 'V'},
    {"weights", no_argument, NULL, 'w'},        {NULL, 0, NULL, 0},
};

/* 1 to go on, 0 to exit successfully, -1 on a bad option. */
static int sprio_option(sprio_t *s, int c, const char *arg)
{
    switch (c) {
    case 'h':
        s->noheader = true;
        break;
    case 'j':
        s->jobs_given = true;
        if (arg)
            sprio_list(&s->job_ids, arg, true);
        break;
    case 'l':
        s->long_fmt = true;
        break;
    case 'n':
        s->norm = true;
        break;
    case 'o':
        free(s->format);
        s->format = loom_xstrdup(arg);
        break;
    case 'p':
        sprio_list(&s->parts, arg, false);
        break;
    case 'S':
        free(s->sort);
        s->sort = loom_xstrdup(arg);
        break;
    case 'u':
        sprio_list(&s->users, arg, false);
        break;
    case 'w':
        s->weights_only = true;
        break;
    case 'v':
    case 'M':
    case OPT_IGNORE:
        break;
    case 'V':
        loom_cli_version();
        return 0;
    case OPT_HELP:
    case OPT_USAGE:
        sprio_usage();
        return 0;
    default:
        return -1;
    }
    return 1;
}

static int sprio_parse(sprio_t *s, int argc, char **argv)
{
    const char *env = getenv("SPRIO_FORMAT");
    if (env && *env)
        s->format = loom_xstrdup(env);
    int c;
    while ((c = getopt_long(argc, argv, "hj::lM:no:p:S:u:vVw", sprio_longopts, NULL)) != -1) {
        int rc = sprio_option(s, c, optarg);
        if (rc <= 0) {
            if (rc < 0)
                fprintf(stderr, "Try \"sprio --help\" for more information\n");
            return rc < 0 ? -1 : 0;
        }
    }
    for (; optind < argc; optind++) /* "-j 12,13": the list after a space */
        if (s->jobs_given)
            sprio_list(&s->job_ids, argv[optind], true);
    return 1;
}

static int sprio_print(sprio_t *s, const json_t *jobs)
{
    loom_sbuf_t f = LOOM_SBUF_INIT, out = LOOM_SBUF_INIT;
    if (s->format)
        loom_sbuf_add(&f, s->format);
    else
        sprio_default_format(s, s->users != NULL, &f);
    loom_fmt_t fmt = LOOM_FMT_INIT;
    loom_fmt_parse(loom_sbuf_str(&f), sprio_cols, sizeof(sprio_cols) / sizeof(sprio_cols[0]), 0,
                   &fmt, NULL);
    size_t n = json_array_size(jobs);
    if (s->jobs_given && !n && !s->weights_only) {
        printf("Unable to find jobs matching user/id(s) specified\n");
    } else {
        if (!s->noheader)
            loom_fmt_header(&fmt, &out);
        sprio_row_t *rows = loom_xcalloc(n + 1, sizeof(*rows));
        for (size_t i = 0; i < n; i++)
            rows[i] = (sprio_row_t){json_array_get(jobs, i), i};
        qsort_r(rows, n, sizeof(*rows), sprio_cmp, s->sort ? s->sort : "i");
        for (size_t i = 0; i < n; i++)
            loom_fmt_row(&fmt, s, rows[i].j, &out);
        free(rows);
    }
    loom_cli_flush(&out);
    loom_fmt_free(&fmt);
    loom_sbuf_free(&f);
    loom_sbuf_free(&out);
    return 0;
}

/* Slurm reads PriorityType from the controller; the local slurm.conf says the same. */
static int sprio_check_plugin(sprio_t *s)
{
    loom_err_t err = {0};
    const loom_conf_t *conf = loom_cli_conf(&s->cli, &err);
    if (!conf) {
        loom_cli_error(&s->cli, "%s", err.msg);
        return -1;
    }
    const char *pt = conf->priority_type ? conf->priority_type : "priority/basic";
    if (strcmp(pt, "priority/multifactor") == 0)
        return 0;
    fprintf(stderr,
            "You are not running a supported priority plugin\n(%s).\n"
            "Only 'priority/multifactor' is supported.\n",
            pt);
    return -1;
}

static int sprio_run(sprio_t *s)
{
    if (sprio_check_plugin(s) < 0)
        return 1;
    json_t *body = json_object(), *reply = NULL;
    if (s->job_ids)
        json_object_set(body, "job_ids", s->job_ids);
    if (s->users)
        json_object_set(body, "users", s->users);
    if (s->parts)
        json_object_set(body, "partitions", s->parts);
    loom_err_t err = {0};
    int rc = loom_cli_call(&s->cli, "job.prio", body, &reply, &err);
    json_decref(body);
    if (rc < 0) {
        fprintf(stderr, "Unable to get priority information: %s\n", err.msg);
        json_decref(reply);
        return 1;
    }
    s->weights = json_incref(json_object_get(reply, "weights"));
    json_t *rows = json_array();
    if (s->weights_only)
        json_array_append_new(rows, json_pack("{s:b}", "weights_row", 1));
    else
        json_array_extend(rows, json_object_get(reply, "jobs"));
    sprio_print(s, rows);
    json_decref(rows);
    json_decref(reply);
    return 0;
}

int main(int argc, char **argv)
{
    sprio_t s = {0};
    loom_cli_init(&s.cli, "sprio");
    int rc = sprio_parse(&s, argc, argv);
    int status = rc < 0 ? 1 : (rc == 0 ? 0 : sprio_run(&s));
    json_decref(s.job_ids);
    json_decref(s.users);
    json_decref(s.parts);
    json_decref(s.weights);
    free(s.format);
    free(s.sort);
    loom_cli_fini(&s.cli);
    return status;
}
