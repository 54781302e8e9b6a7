/*
 * store_report.c - capacity records and sreport's usage reports over the
 * store (see store_report.h for the contract).
 *
 * Invariants: the SQL is the subset SQLite and PostgreSQL share (no
 * LEAST/GREATEST, no scalar MIN/MAX: the clipping to the window is done here,
 * in C, row by row); every part of the job scan is an index range or
 * equality (report_scan).
 */
#include "dbd/store_report.h"
#include "common/sbuf.h"
#include "common/strv.h"
#include "common/xalloc.h"

#include <ctype.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- pure parts ------------------------------------------------------------ */

int64_t loom_report_overlap(int64_t a0, int64_t a1, int64_t s, int64_t e)
{
    int64_t lo = a0 > s ? a0 : s, hi = a1 < e ? a1 : e;
    return hi > lo ? hi - lo : 0;
}

/* A TRES count; memory-like suffixes scale to MiB. Returns -1 when bad. */
static int64_t report_count(const char *v)
{
    char *end = NULL;
    if (!isdigit((unsigned char)*v))
        return -1;
    double n = strtod(v, &end);
    switch (toupper((unsigned char)*end)) {
    case 'K':
        n /= 1024;
        end++;
        break;
    case 'M':
        end++;
        break;
    case 'G':
        n *= 1024;
        end++;
        break;
    case 'T':
        n *= 1024.0 * 1024;
        end++;
        break;
    default:
        break;
    }
    if (*end || n < 0 || n > 9e15)
        return -1;
    return (int64_t)(n + 0.5);
}

/* obj[name] += v, saturating (v >= 0). */
static void report_add(json_t *obj, const char *name, int64_t v)
{
    int64_t cur = json_integer_value(json_object_get(obj, name));
    json_object_set_new(obj, name, json_integer(cur > INT64_MAX - v ? INT64_MAX : cur + v));
}

void loom_report_tres_parse(const char *text, int64_t mult, json_t *obj)
{
    if (!text)
        return;
    loom_strv_t items = LOOM_STRV_INIT;
    loom_strv_split(&items, text, ",");
    for (size_t i = 0; i < items.n; i++) {
        char *eq = strchr(items.v[i], '=');
        if (!eq || eq == items.v[i])
            continue;
        *eq = '\0';
        int64_t n = report_count(eq + 1);
        if (n >= 0 && mult > 0 && n <= INT64_MAX / mult)
            report_add(obj, items.v[i], n * mult);
    }
    loom_strv_free(&items);
}

void loom_report_finish(loom_report_util_t *u)
{
    if (u->down > u->reported)
        u->down = u->reported;
    if (u->pdown > u->reported - u->down)
        u->pdown = u->reported - u->down;
    int64_t room = u->reported - u->down - u->pdown;
    if (u->alloc > room)
        u->alloc = room;
    int64_t idle = room - u->alloc, planned = u->planned;
    u->planned = planned < idle ? planned : idle;
    u->over = planned - u->planned;
    u->idle = idle - u->planned;
}

/* ---- capacity records --------------------------------------------------------- */

static const char report_ctres_upsert[] =
    "INSERT INTO cluster_tres (cluster, time_start, tres, down_tres) VALUES ($1, $2, $3, $4)"
    " ON CONFLICT (cluster, time_start) DO UPDATE SET tres = excluded.tres,"
    " down_tres = excluded.down_tres";

int loom_store_ctres_put(loom_store_t *st, const char *cluster, const json_t *rec, loom_err_t *err)
{
    const json_t *t = json_object_get(rec, "time"), *tres = json_object_get(rec, "tres"),
                 *down = json_object_get(rec, "down_tres");
    if (!json_is_integer(t) || json_integer_value(t) < 0 || !json_is_string(tres) ||
        (down && !json_is_string(down)))
        return loom_errf(err, -LOOM_EPROTO,
                         "cluster_tres record needs time (epoch) and tres (a string)");
    char num[24];
    snprintf(num, sizeof(num), "%" JSON_INTEGER_FORMAT, json_integer_value(t));
    const char *params[] = {cluster, num, json_string_value(tres),
                            down ? json_string_value(down) : ""};
    int rc = loom_store_exec(st, report_ctres_upsert, 4, params, NULL, NULL, err);
    return rc < 0 ? rc : 0;
}

static int report_row_int(void *arg, int ncols, const char *const *vals)
{
    if (ncols > 0 && vals[0])
        *(int64_t *)arg = strtoll(vals[0], NULL, 10);
    return 1;
}

/* ---- the job scan ------------------------------------------------------------- */

/* The jobs a window can see, as rows of report_job_cols. */
enum { RC_CLUSTER, RC_USER, RC_ACCOUNT, RC_START, RC_END, RC_ELIG, RC_CPUS, RC_ALLOC, RC_REQ };
static const char report_job_cols[] = "cluster, username, account, start_time, end_time,"
                                      " eligible_time, num_cpus, tres_alloc, tres_req";

typedef struct {
    loom_sbuf_t sql;
    loom_strv_t vals;
} report_sql_t;

static void report_param(report_sql_t *r, const char *v)
{
    loom_strv_add(&r->vals, v);
    loom_sbuf_addf(&r->sql, "$%zu", r->vals.n);
}

static void report_list(report_sql_t *r, const char *col, const char *list)
{
    loom_strv_t items = LOOM_STRV_INIT;
    loom_strv_split(&items, list, ",");
    loom_sbuf_addf(&r->sql, " AND %s IN (", col);
    for (size_t i = 0; i < items.n; i++) {
        if (i)
            loom_sbuf_add(&r->sql, ", ");
        report_param(r, items.v[i]);
    }
    if (!items.n)
        loom_sbuf_add(&r->sql, "NULL");
    loom_sbuf_addc(&r->sql, ')');
    loom_strv_free(&items);
}

/* Appends "<prefix>$N" bound to an integer. */
static void report_int(report_sql_t *r, const char *prefix, int64_t v)
{
    char num[24];
    snprintf(num, sizeof(num), "%" PRId64, v);
    loom_sbuf_add(&r->sql, prefix);
    report_param(r, num);
}

/* One part of the scan: 0 jobs that ended and started in [lo, hi), 1 jobs
 * that never started (their wait counts as Planned), 2 jobs still running. */
static void report_part(report_sql_t *r, const loom_store_repq_t *q, const char *cluster, int part,
                        int64_t lo, int64_t hi)
{
    if (part)
        loom_sbuf_add(&r->sql, " UNION ALL ");
    loom_sbuf_addf(&r->sql, "SELECT %s FROM jobs WHERE cluster = ", report_job_cols);
    report_param(r, cluster);
    if (part == 0) {
        report_int(r, " AND start_time >= ", lo);
        report_int(r, " AND start_time < ", hi);
        report_int(r, " AND end_time <> 0 AND end_time > ", q->start);
    } else if (part == 1) {
        report_int(r, " AND start_time = 0 AND (end_time = 0 OR end_time > ", q->start);
        loom_sbuf_addc(&r->sql, ')');
    } else {
        loom_sbuf_add(&r->sql, " AND end_time = 0 AND start_time > 0");
    }
    report_int(r, " AND submit_time < ", q->end);
    if (q->users)
        report_list(r, "username", q->users);
    if (q->accounts)
        report_list(r, "account", q->accounts);
}

/* The longest run and the longest eligible wait of the cluster's jobs, read
 * from the expression indexes of migration 4 (one index probe each). */
static int report_longest(loom_store_t *st, const char *cluster, const char *expr, int64_t *out,
                          loom_err_t *err)
{
    loom_sbuf_t sql = LOOM_SBUF_INIT;
    loom_sbuf_addf(&sql, "SELECT MAX(%s) FROM jobs WHERE cluster = $1", expr);
    const char *params[] = {cluster};
    int64_t v = 0;
    int rc = loom_store_exec(st, loom_sbuf_str(&sql), 1, params, report_row_int, &v, err);
    loom_sbuf_free(&sql);
    *out = v > 0 ? v : 0;
    return rc;
}

/* Every job that ran or waited eligible inside the window: those that ended
 * started at most the longest run before it, and a job that waited into it
 * started at most the longest wait after its end. */
static int report_scan(loom_store_t *st, const loom_store_repq_t *q, const char *cluster,
                       loom_db_row_f cb, void *arg, loom_err_t *err)
{
    int64_t run = 0, wait = 0;
    int rc = report_longest(st, cluster, "end_time - start_time", &run, err);
    if (rc >= 0)
        rc = report_longest(st, cluster, "start_time - eligible_time", &wait, err);
    if (rc < 0)
        return rc;
    report_sql_t r = {LOOM_SBUF_INIT, LOOM_STRV_INIT};
    int64_t lo = q->start - run;
    for (int part = 0; part < 3; part++)
        report_part(&r, q, cluster, part, lo > 1 ? lo : 1, q->end + wait);
    rc = loom_store_exec(st, loom_sbuf_str(&r.sql), (int)r.vals.n, (const char *const *)r.vals.v,
                         cb, arg, err);
    loom_sbuf_free(&r.sql);
    loom_strv_free(&r.vals);
    return rc;
}

static int64_t report_col(const char *const *vals, int i)
{
    return vals[i] ? strtoll(vals[i], NULL, 10) : 0;
}

/* The job's run time inside the window (0 when it did not run in it). */
static int64_t report_run_secs(const loom_store_repq_t *q, const char *const *vals)
{
    int64_t start = report_col(vals, RC_START), end = report_col(vals, RC_END);
    if (start <= 0)
        return 0;
    return loom_report_overlap(start, end > 0 ? end : q->now, q->start, q->end);
}

/* Add the job's TRES × secs to obj; a job without TRES text counts its CPUs. */
static void report_add_tres(const char *const *vals, int col, int64_t secs, json_t *obj)
{
    const char *text = vals[col] && *vals[col] ? vals[col] : NULL;
    if (!text && col == RC_REQ)
        text = vals[RC_ALLOC] && *vals[RC_ALLOC] ? vals[RC_ALLOC] : NULL;
    if (text)
        loom_report_tres_parse(text, secs, obj);
    else if (report_col(vals, RC_CPUS) > 0 && report_col(vals, RC_CPUS) <= INT64_MAX / secs)
        report_add(obj, "cpu", report_col(vals, RC_CPUS) * secs);
}

/* ---- user report ---------------------------------------------------------------- */

typedef struct {
    const loom_store_repq_t *q;
    json_t *by_key; /* "cluster\tuser\taccount" -> {cluster, user, account, tres} */
} report_users_t;

static int report_user_row(void *arg, int ncols, const char *const *vals)
{
    report_users_t *u = arg;
    if (ncols <= RC_REQ)
        return 0;
    int64_t secs = report_run_secs(u->q, vals);
    if (secs <= 0)
        return 0;
    const char *user = vals[RC_USER] ? vals[RC_USER] : "",
               *acct = vals[RC_ACCOUNT] ? vals[RC_ACCOUNT] : "";
    loom_sbuf_t key = LOOM_SBUF_INIT;
    loom_sbuf_addf(&key, "%s\t%s\t%s", vals[RC_CLUSTER] ? vals[RC_CLUSTER] : "", user, acct);
    json_t *row = json_object_get(u->by_key, loom_sbuf_str(&key));
    if (!row) {
        row =
            json_pack("{s:s, s:s, s:s, s:{}}", "cluster", vals[RC_CLUSTER] ? vals[RC_CLUSTER] : "",
                      "user", user, "account", acct, "tres");
        json_object_set_new(u->by_key, loom_sbuf_str(&key), row);
    }
    loom_sbuf_free(&key);
    report_add_tres(vals, RC_ALLOC, secs, json_object_get(row, "tres"));
    return 0;
}

/* The clusters a report covers: q's, or every one with capacity records. */
static int report_row_name(void *arg, int ncols, const char *const *vals)
{
    if (ncols > 0 && vals[0])
        loom_strv_add(arg, vals[0]);
    return 0;
}

static int report_clusters(loom_store_t *st, const loom_store_repq_t *q, loom_strv_t *out,
                           loom_err_t *err)
{
    if (q->cluster) {
        loom_strv_add(out, q->cluster);
        return 0;
    }
    return loom_store_exec(st, "SELECT DISTINCT cluster FROM cluster_tres ORDER BY cluster", 0,
                           NULL, report_row_name, out, err);
}

int loom_store_report_users(loom_store_t *st, const loom_store_repq_t *q, json_t **out,
                            loom_err_t *err)
{
    loom_strv_t clusters = LOOM_STRV_INIT;
    report_users_t u = {q, json_object()};
    int rc = report_clusters(st, q, &clusters, err);
    for (size_t i = 0; rc >= 0 && i < clusters.n; i++)
        rc = report_scan(st, q, clusters.v[i], report_user_row, &u, err);
    loom_strv_free(&clusters);
    if (rc < 0) {
        json_decref(u.by_key);
        return rc;
    }
    json_t *rows = json_array();
    const char *key;
    json_t *row;
    json_object_foreach(u.by_key, key, row) json_array_append(rows, row);
    json_decref(u.by_key);
    *out = json_pack("{s:o}", "usage", rows);
    return 0;
}

/* ---- cluster report ----------------------------------------------------------------- */

/* Slurm's rollup splits time into hours and caps Planned at each hour's idle
 * time, so the report keeps hourly sums per TRES and splits hour by hour. */
#define REPORT_MAX_TRES  32
#define REPORT_MAX_HOURS (24 * 366 * 20)
enum { HB_ALLOC, HB_DOWN, HB_REPORTED, HB_PLANNED, HB_N };

typedef struct {
    const loom_store_repq_t *q;
    int64_t h0; /* the window's first hour (epoch / 3600) */
    size_t nb;  /* hours */
    loom_strv_t names;
    int64_t *v[REPORT_MAX_TRES]; /* nb * HB_N sums per TRES */
} report_hours_t;

static int64_t *report_slot(report_hours_t *h, const char *name)
{
    long i = loom_strv_find(&h->names, name);
    if (i < 0) {
        if (h->names.n >= REPORT_MAX_TRES)
            return NULL;
        loom_strv_add(&h->names, name);
        i = (long)h->names.n - 1;
        h->v[i] = loom_xcalloc(h->nb * HB_N, sizeof(int64_t));
    }
    return h->v[i];
}

/* count × the seconds of [t0, t1) inside the window, hour by hour. */
static void report_hours_add(report_hours_t *h, const char *name, int kind, int64_t count,
                             int64_t t0, int64_t t1)
{
    t0 = t0 > h->q->start ? t0 : h->q->start;
    t1 = t1 < h->q->end ? t1 : h->q->end;
    int64_t *v = t1 > t0 && count > 0 ? report_slot(h, name) : NULL;
    for (int64_t t = t0; v && t < t1;) {
        int64_t next = (t / 3600 + 1) * 3600, seg = (next < t1 ? next : t1) - t;
        int64_t *cell = &v[(size_t)(t / 3600 - h->h0) * HB_N + kind];
        int64_t add = count > INT64_MAX / seg ? INT64_MAX : count * seg;
        *cell = *cell > INT64_MAX - add ? INT64_MAX : *cell + add;
        t = next;
    }
}

/* Every item of a TRES text over [t0, t1) (Planned: its CPUs only, as 22.05). */
static void report_hours_text(report_hours_t *h, const char *text, int kind, int64_t t0, int64_t t1)
{
    json_t *o = json_object();
    loom_report_tres_parse(text, 1, o);
    const char *name;
    json_t *v;
    json_object_foreach(o, name, v)
    {
        if (kind != HB_PLANNED || !strcmp(name, "cpu"))
            report_hours_add(h, name, kind, json_integer_value(v), t0, t1);
    }
    json_decref(o);
}

/* A job's TRES text: column col, else its allocation, else "cpu=<num_cpus>". */
static const char *report_job_tres(const char *const *vals, int col, char *buf, size_t len)
{
    if (vals[col] && *vals[col])
        return vals[col];
    if (vals[RC_ALLOC] && *vals[RC_ALLOC])
        return vals[RC_ALLOC];
    snprintf(buf, len, "cpu=%" PRId64, report_col(vals, RC_CPUS));
    return buf;
}

static int report_cluster_row(void *arg, int ncols, const char *const *vals)
{
    report_hours_t *h = arg;
    if (ncols <= RC_REQ)
        return 0;
    int64_t elig = report_col(vals, RC_ELIG), start = report_col(vals, RC_START),
            end = report_col(vals, RC_END);
    char buf[32];
    if (start > 0)
        report_hours_text(h, report_job_tres(vals, RC_ALLOC, buf, sizeof(buf)), HB_ALLOC, start,
                          end > 0 ? end : h->q->now);
    if (elig > 0)
        report_hours_text(h, report_job_tres(vals, RC_REQ, buf, sizeof(buf)), HB_PLANNED, elig,
                          start > 0 ? start
                          : end > 0 ? end
                                    : h->q->now);
    return 0;
}

/* Capacity records: each holds until the next (or the window's end). */
static int report_row_cap(void *arg, int ncols, const char *const *vals)
{
    if (ncols >= 3 && vals[0] && vals[1])
        json_array_append_new(arg, json_pack("{s:I, s:s, s:s}", "t",
                                             (json_int_t)strtoll(vals[0], NULL, 10), "tres",
                                             vals[1], "down", vals[2] ? vals[2] : ""));
    return 0;
}

static int report_capacity(loom_store_t *st, const loom_store_repq_t *q, const char *cluster,
                           json_t *cap, loom_err_t *err)
{
    char s[24], e[24];
    snprintf(s, sizeof(s), "%" PRId64, q->start);
    snprintf(e, sizeof(e), "%" PRId64, q->end);
    const char *params[] = {cluster, s, e};
    int rc = loom_store_exec(st,
                             "SELECT time_start, tres, down_tres FROM cluster_tres"
                             " WHERE cluster = $1 AND time_start <= $2"
                             " ORDER BY time_start DESC LIMIT 1",
                             2, params, report_row_cap, cap, err);
    if (rc >= 0)
        rc = loom_store_exec(st,
                             "SELECT time_start, tres, down_tres FROM cluster_tres"
                             " WHERE cluster = $1 AND time_start > $2 AND time_start < $3"
                             " ORDER BY time_start",
                             3, params, report_row_cap, cap, err);
    return rc;
}

static void report_integrate(report_hours_t *h, const json_t *cap)
{
    size_t n = json_array_size(cap);
    for (size_t i = 0; i < n; i++) {
        const json_t *r = json_array_get(cap, i);
        int64_t t0 = json_integer_value(json_object_get(r, "t"));
        int64_t t1 = i + 1 < n
                         ? json_integer_value(json_object_get(json_array_get(cap, i + 1), "t"))
                         : h->q->end;
        report_hours_text(h, json_string_value(json_object_get(r, "tres")), HB_REPORTED, t0, t1);
        report_hours_text(h, json_string_value(json_object_get(r, "down")), HB_DOWN, t0, t1);
    }
}

static int64_t report_sat_add(int64_t a, int64_t b)
{
    return a > INT64_MAX - b ? INT64_MAX : a + b;
}

/* One TRES's utilization: each hour split by loom_report_finish, then summed. */
static json_t *report_tres_entry(const report_hours_t *h, size_t k)
{
    loom_report_util_t sum = {0};
    for (size_t b = 0; b < h->nb; b++) {
        const int64_t *c = &h->v[k][b * HB_N];
        loom_report_util_t u = {.reported = c[HB_REPORTED],
                                .alloc = c[HB_ALLOC],
                                .down = c[HB_DOWN],
                                .planned = c[HB_PLANNED]};
        loom_report_finish(&u);
        sum.reported = report_sat_add(sum.reported, u.reported);
        sum.alloc = report_sat_add(sum.alloc, u.alloc);
        sum.down = report_sat_add(sum.down, u.down);
        sum.planned = report_sat_add(sum.planned, u.planned);
        sum.over = report_sat_add(sum.over, u.over);
        sum.idle = report_sat_add(sum.idle, u.idle);
    }
    if (sum.reported <= 0)
        return NULL;
    int64_t span = h->q->end - h->q->start;
    return json_pack(
        "{s:s, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I}", "name", h->names.v[k], "count",
        (json_int_t)(sum.reported / span + (sum.reported % span >= (span + 1) / 2)), "alloc",
        (json_int_t)sum.alloc, "down", (json_int_t)sum.down, "pdown", (json_int_t)0, "idle",
        (json_int_t)sum.idle, "planned", (json_int_t)sum.planned, "over", (json_int_t)sum.over,
        "reported", (json_int_t)sum.reported);
}

static int report_one_cluster(loom_store_t *st, const loom_store_repq_t *q, const char *name,
                              json_t *clusters, loom_err_t *err)
{
    report_hours_t h = {.q = q, .h0 = q->start / 3600};
    h.nb = (size_t)((q->end - 1) / 3600 - h.h0 + 1);
    if (h.nb > REPORT_MAX_HOURS)
        return loom_errf(err, -LOOM_ETOOBIG, "a report covers at most %d hours", REPORT_MAX_HOURS);
    json_t *cap = json_array();
    int rc = report_capacity(st, q, name, cap, err);
    if (rc >= 0)
        report_integrate(&h, cap);
    if (rc >= 0 && h.names.n > 0)
        rc = report_scan(st, q, name, report_cluster_row, &h, err);
    json_t *list = json_array();
    for (size_t k = 0; rc >= 0 && k < h.names.n; k++) {
        json_t *e = report_tres_entry(&h, k);
        if (e)
            json_array_append_new(list, e);
    }
    if (rc >= 0 && json_array_size(list) > 0)
        json_array_append_new(clusters, json_pack("{s:s, s:O}", "name", name, "tres", list));
    json_decref(list);
    json_decref(cap);
    for (size_t k = 0; k < h.names.n; k++)
        free(h.v[k]);
    loom_strv_free(&h.names);
    return rc;
}

int loom_store_report_cluster(loom_store_t *st, const loom_store_repq_t *q, json_t **out,
                              loom_err_t *err)
{
    loom_strv_t names = LOOM_STRV_INIT;
    json_t *clusters = json_array();
    loom_store_repq_t all = *q;
    all.users = all.accounts = NULL; /* utilization covers every job */
    int rc = report_clusters(st, q, &names, err);
    for (size_t i = 0; rc >= 0 && i < names.n; i++)
        rc = report_one_cluster(st, &all, names.v[i], clusters, err);
    loom_strv_free(&names);
    if (rc < 0) {
        json_decref(clusters);
        return rc;
    }
    *out = json_pack("{s:o}", "clusters", clusters);
    return 0;
}
