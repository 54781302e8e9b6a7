/*
 * store.c - loomdbd's accounting store over the db.h ops: schema migrations
 * and job records. See store.h for the contract.
 *
 * Invariants: every statement here is in the SQL subset shared by SQLite and
 * PostgreSQL; the schema version row is written in the same transaction as
 * the migration it records, so a crash mid-migration leaves the old version.
 */
#include "dbd/store.h"
#include "common/sbuf.h"
#include "common/strv.h"
#include "common/xalloc.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct loom_store {
    const loom_db_ops_t *ops;
    loom_db_t *db;
};

/* Migration N brings the schema from version N-1 to N. Append, never edit. */
static const char *const store_migration_1[] = {
    "CREATE TABLE IF NOT EXISTS loom_schema (version INTEGER NOT NULL)",
    "CREATE TABLE IF NOT EXISTS jobs ("
    " cluster TEXT NOT NULL, job_id BIGINT NOT NULL, submit_time BIGINT NOT NULL,"
    " array_job_id BIGINT, array_task_id BIGINT, name TEXT, uid BIGINT, username TEXT,"
    " gid BIGINT, account TEXT, partition TEXT, qos TEXT, state TEXT, exit_code INTEGER,"
    " eligible_time BIGINT, start_time BIGINT, end_time BIGINT, time_limit BIGINT,"
    " nodes TEXT, num_nodes INTEGER, num_cpus INTEGER, tres_req TEXT, tres_alloc TEXT,"
    " work_dir TEXT, record TEXT NOT NULL,"
    " PRIMARY KEY (cluster, job_id, submit_time))",
    "CREATE INDEX IF NOT EXISTS jobs_user_submit ON jobs (username, submit_time)",
    "CREATE INDEX IF NOT EXISTS jobs_submit ON jobs (submit_time)",
    "CREATE INDEX IF NOT EXISTS jobs_job_id ON jobs (job_id)",
    NULL,
};

/* Migration 2: the accounting entities (store_acct.c), job steps, and the
 * index of the one-user time-window query (sacct -u U -S day -E day+1).
 * Jobs that have not ended keep end_time 0, never NULL, so that the window
 * test is an index range plus one equality. */
static const char *const store_migration_2[] = {
    "CREATE TABLE clusters (name TEXT NOT NULL PRIMARY KEY, control_host TEXT,"
    " control_port BIGINT, rpc BIGINT, flags TEXT, created BIGINT)",
    "CREATE TABLE accounts (name TEXT NOT NULL PRIMARY KEY, description TEXT,"
    " organization TEXT, created BIGINT)",
    "CREATE TABLE users (name TEXT NOT NULL PRIMARY KEY, default_account TEXT,"
    " admin_level TEXT, created BIGINT)",
    "CREATE TABLE qos (name TEXT NOT NULL PRIMARY KEY, id BIGINT NOT NULL, description TEXT,"
    " priority BIGINT, grace_time BIGINT, preempt TEXT, preempt_mode TEXT,"
    " preempt_exempt_time BIGINT, flags TEXT, usage_threshold TEXT, usage_factor TEXT,"
    " grp_tres TEXT, grp_tres_mins TEXT, grp_tres_run_mins TEXT, grp_jobs BIGINT,"
    " grp_submit_jobs BIGINT, grp_wall BIGINT, max_tres TEXT, max_tres_per_node TEXT,"
    " max_tres_mins TEXT, max_wall BIGINT, max_tres_pu TEXT, max_jobs_pu BIGINT,"
    " max_submit_pu BIGINT, max_tres_pa TEXT, max_jobs_pa BIGINT, max_submit_pa BIGINT,"
    " min_tres TEXT, created BIGINT)",
    "CREATE TABLE assocs (cluster TEXT NOT NULL, account TEXT NOT NULL,"
    " user_name TEXT NOT NULL, partition TEXT NOT NULL, id BIGINT NOT NULL,"
    " parent_account TEXT, shares BIGINT, priority BIGINT, grp_jobs BIGINT,"
    " grp_submit_jobs BIGINT, grp_tres TEXT, grp_tres_mins TEXT, grp_tres_run_mins TEXT,"
    " grp_wall BIGINT, max_jobs BIGINT, max_submit_jobs BIGINT, max_tres TEXT,"
    " max_tres_per_node TEXT, max_tres_mins TEXT, max_wall BIGINT, qos TEXT,"
    " default_qos TEXT, created BIGINT,"
    " PRIMARY KEY (cluster, account, user_name, partition))",
    "CREATE INDEX assocs_user ON assocs (user_name)",
    "CREATE TABLE steps (cluster TEXT NOT NULL, job_id BIGINT NOT NULL,"
    " submit_time BIGINT NOT NULL, step_id TEXT NOT NULL, state TEXT, exit_code INTEGER,"
    " start_time BIGINT, end_time BIGINT, nodes TEXT, ntasks INTEGER, ncpus INTEGER,"
    " max_rss BIGINT, max_rss_node TEXT, ave_rss BIGINT, max_vmsize BIGINT,"
    " total_cpu BIGINT, user_cpu BIGINT, system_cpu BIGINT, max_disk_read BIGINT,"
    " max_disk_write BIGINT, gpu_time BIGINT, gpu_util INTEGER, tres_alloc TEXT,"
    " record TEXT NOT NULL, PRIMARY KEY (cluster, job_id, submit_time, step_id))",
    "UPDATE jobs SET end_time = 0 WHERE end_time IS NULL",
    "CREATE INDEX jobs_user_end ON jobs (username, end_time)",
    NULL,
};

/* Migration 3: the cluster's capacity records (store_report.c: what sreport
 * divides by) and the index of sreport's window scan (jobs of one cluster
 * that ended after the window's start, or have not ended). */
static const char *const store_migration_3[] = {
    "CREATE TABLE cluster_tres (cluster TEXT NOT NULL, time_start BIGINT NOT NULL,"
    " tres TEXT NOT NULL, down_tres TEXT, PRIMARY KEY (cluster, time_start))",
    "CREATE INDEX jobs_cluster_end ON jobs (cluster, end_time)",
    NULL,
};

/* Migration 4: what bounds sreport's window scan (store_report.c): jobs by
 * start time, and the longest run and eligible wait of a cluster's jobs as
 * expression indexes (MAX() is then one index probe). */
static const char *const store_migration_4[] = {
    "CREATE INDEX jobs_cluster_start ON jobs (cluster, start_time)",
    "CREATE INDEX jobs_cluster_run ON jobs (cluster, (end_time - start_time))",
    "CREATE INDEX jobs_cluster_wait ON jobs (cluster, (start_time - eligible_time))",
    NULL,
};

/* Migration 5: sacct's one-user window (store_q_build: username, submit_time
 * <= end, end_time 0 or >= start) filtered inside one index, without a table
 * read per older job of the user (bench/acct.py: 8.5 ms -> 0.9 ms for a day
 * of one user over 1,000,000 jobs). It covers jobs_user_submit's prefix. */
static const char *const store_migration_5[] = {
    "CREATE INDEX jobs_user_window ON jobs (username, submit_time, end_time)",
    "DROP INDEX jobs_user_submit",
    NULL,
};

static const char *const *const store_migrations[] = {
    store_migration_1, store_migration_2, store_migration_3, store_migration_4, store_migration_5,
};

#define STORE_NMIGRATIONS ((int)(sizeof(store_migrations) / sizeof(store_migrations[0])))

static int store_exec(loom_store_t *st, const char *sql, int n, const char *const *params,
                      loom_db_row_f cb, void *arg, loom_err_t *err)
{
    return st->ops->exec(st->db, sql, n, params, cb, arg, err);
}

int loom_store_exec(loom_store_t *st, const char *sql, int nparams, const char *const *params,
                    loom_db_row_f cb, void *arg, loom_err_t *err)
{
    return store_exec(st, sql, nparams, params, cb, arg, err);
}

int loom_store_begin(loom_store_t *st, loom_err_t *err)
{
    return store_exec(st, "BEGIN", 0, NULL, NULL, NULL, err);
}

int loom_store_commit(loom_store_t *st, loom_err_t *err)
{
    return store_exec(st, "COMMIT", 0, NULL, NULL, NULL, err);
}

int loom_store_rollback(loom_store_t *st)
{
    return store_exec(st, "ROLLBACK", 0, NULL, NULL, NULL, NULL);
}

static int store_row_int(void *arg, int ncols, const char *const *vals)
{
    if (ncols > 0 && vals[0])
        *(int64_t *)arg = strtoll(vals[0], NULL, 10);
    return 1;
}

int loom_store_schema_version(loom_store_t *st, loom_err_t *err)
{
    int64_t v = 0;
    int rc = store_exec(st, "CREATE TABLE IF NOT EXISTS loom_schema (version INTEGER NOT NULL)", 0,
                        NULL, NULL, NULL, err);
    if (rc < 0)
        return rc;
    rc = store_exec(st, "SELECT MAX(version) FROM loom_schema", 0, NULL, store_row_int, &v, err);
    return rc < 0 ? rc : (int)v;
}

/* Apply migration number `version` (1-based) and record it, atomically. */
static int store_apply_migration(loom_store_t *st, int version, loom_err_t *err)
{
    int rc = loom_store_begin(st, err);
    for (const char *const *sql = store_migrations[version - 1]; rc >= 0 && *sql; sql++)
        rc = store_exec(st, *sql, 0, NULL, NULL, NULL, err);
    if (rc >= 0) {
        char v[16];
        snprintf(v, sizeof(v), "%d", version);
        const char *params[] = {v};
        rc = store_exec(st, "INSERT INTO loom_schema (version) VALUES ($1)", 1, params, NULL, NULL,
                        err);
    }
    if (rc >= 0)
        rc = loom_store_commit(st, err);
    if (rc < 0) {
        loom_store_rollback(st);
        loom_err_prefix(err, "schema migration %d", version);
        return rc;
    }
    return 0;
}

static int store_migrate(loom_store_t *st, loom_err_t *err)
{
    int have = loom_store_schema_version(st, err);
    if (have < 0)
        return have;
    if (have > STORE_NMIGRATIONS)
        return loom_errf(err, -LOOM_ECONFIG,
                         "the database has schema version %d, newer than this loomdbd (%d)", have,
                         STORE_NMIGRATIONS);
    for (int v = have + 1; v <= STORE_NMIGRATIONS; v++) {
        int rc = store_apply_migration(st, v, err);
        if (rc < 0)
            return rc;
    }
    return 0;
}

int loom_store_open(const char *type, const char *location, loom_store_t **out, loom_err_t *err)
{
    const loom_db_ops_t *ops = loom_db_find_ops(type);
    if (!ops)
        return loom_errf(err, -LOOM_ECONFIG, "unknown storage type '%s' (sqlite or pgsql)", type);
    loom_db_t *db = NULL;
    int rc = ops->open(location, &db, err);
    if (rc < 0)
        return rc;
    loom_store_t *st = loom_xcalloc(1, sizeof(*st));
    st->ops = ops;
    st->db = db;
    rc = store_migrate(st, err);
    if (rc < 0) {
        loom_store_close(st);
        return rc;
    }
    *out = st;
    return 0;
}

void loom_store_close(loom_store_t *st)
{
    if (!st)
        return;
    st->ops->close(st->db);
    free(st);
}

const loom_db_ops_t *loom_db_find_ops(const char *name)
{
    if (strcmp(name, "sqlite") == 0 || strcmp(name, "sqlite3") == 0)
        return &loom_db_sqlite_ops;
    if (strcmp(name, "pgsql") == 0 || strcmp(name, "postgres") == 0 ||
        strcmp(name, "postgresql") == 0)
        return &loom_db_pgsql_ops;
    return NULL;
}

/* The columns of a job row, in INSERT order; each is read from the record. */
static const char *const store_job_cols[] = {
    "job_id",    "submit_time",   "array_job_id", "array_task_id", "name",       "user_id",
    "user_name", "group_id",      "account",      "partition",     "qos",        "state",
    "exit_code", "eligible_time", "start_time",   "end_time",      "time_limit", "nodes",
    "num_nodes", "num_cpus",      "tres_req",     "tres_alloc",    "work_dir",
};

#define STORE_JOB_NCOLS ((int)(sizeof(store_job_cols) / sizeof(store_job_cols[0])))

static const char store_job_upsert[] =
    "INSERT INTO jobs (cluster, job_id, submit_time, array_job_id, array_task_id, name, uid,"
    " username, gid, account, partition, qos, state, exit_code, eligible_time, start_time,"
    " end_time, time_limit, nodes, num_nodes, num_cpus, tres_req, tres_alloc, work_dir, record)"
    " VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18,"
    " $19, $20, $21, $22, $23, $24, $25)"
    " ON CONFLICT (cluster, job_id, submit_time) DO UPDATE SET"
    " name = excluded.name, account = excluded.account, partition = excluded.partition,"
    " qos = excluded.qos, state = excluded.state, exit_code = excluded.exit_code,"
    " eligible_time = excluded.eligible_time, start_time = excluded.start_time,"
    " end_time = excluded.end_time, time_limit = excluded.time_limit, nodes = excluded.nodes,"
    " num_nodes = excluded.num_nodes, num_cpus = excluded.num_cpus,"
    " tres_req = excluded.tres_req, tres_alloc = excluded.tres_alloc,"
    " work_dir = excluded.work_dir, record = excluded.record";

/* A JSON scalar as SQL text (NULL when absent or not a scalar). */
static char *store_json_text(const json_t *v)
{
    char buf[64];
    if (json_is_string(v))
        return loom_xstrdup(json_string_value(v));
    if (json_is_integer(v)) {
        snprintf(buf, sizeof(buf), "%" JSON_INTEGER_FORMAT, json_integer_value(v));
        return loom_xstrdup(buf);
    }
    if (json_is_boolean(v))
        return loom_xstrdup(json_is_true(v) ? "1" : "0");
    return NULL;
}

int loom_store_job_put(loom_store_t *st, const char *cluster, const json_t *job, loom_err_t *err)
{
    if (!json_is_object(job) || !json_is_integer(json_object_get(job, "job_id")))
        return loom_errf(err, -LOOM_EPROTO, "job record without an integer job_id");
    char *vals[STORE_JOB_NCOLS + 2];
    vals[0] = loom_xstrdup(cluster);
    for (int i = 0; i < STORE_JOB_NCOLS; i++)
        vals[i + 1] = store_json_text(json_object_get(job, store_job_cols[i]));
    if (!vals[2]) /* submit_time is part of the key: never NULL */
        vals[2] = loom_xstrdup("0");
    if (!vals[16]) /* end_time: 0 until the job ends (migration 2) */
        vals[16] = loom_xstrdup("0");
    vals[STORE_JOB_NCOLS + 1] = json_dumps(job, JSON_COMPACT | JSON_SORT_KEYS);
    int rc = store_exec(st, store_job_upsert, STORE_JOB_NCOLS + 2, (const char *const *)vals, NULL,
                        NULL, err);
    for (int i = 0; i < STORE_JOB_NCOLS + 2; i++)
        free(vals[i]);
    return rc < 0 ? rc : 0;
}

/* A WHERE clause and its parameters; values are copies owned here. */
typedef struct {
    loom_sbuf_t where;
    loom_strv_t vals;
} store_query_t;

/* Append "AND <clause>", each '?' in clause becoming the next "$N" bound to value. */
static void store_q_add(store_query_t *q, const char *clause, const char *value)
{
    loom_strv_add(&q->vals, value);
    loom_sbuf_add(&q->where, q->where.len ? " AND " : " WHERE ");
    for (const char *c = clause; *c; c++) {
        if (*c == '?')
            loom_sbuf_addf(&q->where, "$%zu", q->vals.n);
        else
            loom_sbuf_addc(&q->where, *c);
    }
}

static void store_q_add_int(store_query_t *q, const char *clause, int64_t value)
{
    char num[24];
    snprintf(num, sizeof(num), "%" PRId64, value);
    store_q_add(q, clause, num);
}

/* "col = ?" for one value, "col IN (?, ?)" for a comma list. */
static void store_q_add_list(store_query_t *q, const char *col, const char *list)
{
    loom_strv_t items = LOOM_STRV_INIT;
    loom_strv_split(&items, list, ",");
    loom_sbuf_add(&q->where, q->where.len ? " AND " : " WHERE ");
    loom_sbuf_addf(&q->where, "%s IN (", col);
    for (size_t i = 0; i < items.n; i++) {
        loom_strv_add(&q->vals, items.v[i]);
        loom_sbuf_addf(&q->where, "%s$%zu", i ? ", " : "", q->vals.n);
    }
    if (items.n == 0)
        loom_sbuf_add(&q->where, "NULL");
    loom_sbuf_addc(&q->where, ')');
    loom_strv_free(&items);
}

static void store_q_add_ids(store_query_t *q, const char *list)
{
    loom_strv_t items = LOOM_STRV_INIT;
    loom_strv_split(&items, list, ",");
    loom_sbuf_add(&q->where, q->where.len ? " AND " : " WHERE ");
    loom_sbuf_add(&q->where, "(");
    for (size_t i = 0; i < items.n; i++) {
        loom_strv_add(&q->vals, items.v[i]);
        loom_sbuf_addf(&q->where, "%sj.job_id = $%zu OR j.array_job_id = $%zu", i ? " OR " : "",
                       q->vals.n, q->vals.n);
    }
    loom_sbuf_add(&q->where, items.n ? ")" : "1 = 0)");
    loom_strv_free(&items);
}

/* The filters of f on the jobs table, aliased j. */
static void store_q_build(store_query_t *q, const loom_store_jobq_t *f)
{
    if (f->cluster)
        store_q_add(q, "j.cluster = ?", f->cluster);
    if (f->user)
        store_q_add_list(q, "j.username", f->user);
    if (f->account)
        store_q_add_list(q, "j.account", f->account);
    if (f->partition)
        store_q_add_list(q, "j.partition", f->partition);
    if (f->name)
        store_q_add_list(q, "j.name", f->name);
    if (f->state)
        store_q_add_list(q, "j.state", f->state);
    if (f->job_id)
        store_q_add_int(q, "(j.job_id = ? OR j.array_job_id = ?)", f->job_id);
    if (f->job_ids)
        store_q_add_ids(q, f->job_ids);
    if (f->start) /* still running, or ended inside the window */
        store_q_add_int(q, "(j.end_time = 0 OR j.end_time >= ?)", f->start);
    if (f->end)
        store_q_add_int(q, "j.submit_time <= ?", f->end);
    /* as slurmdbd: a job eligible only after the window (--begin), or never
     * (held, dependent: 0), is not in it, unless asked for by id; the bare
     * column keeps SQLite's integer affinity for the text bind */
    if (f->end && !f->job_id && !f->job_ids)
        store_q_add_int(q,
                        "(j.eligible_time IS NULL OR (j.eligible_time > 0 AND"
                        " j.eligible_time <= ?))",
                        f->end);
}

static int store_row_record(void *arg, int ncols, const char *const *vals)
{
    json_t *rec = vals[0] ? json_loads(vals[0], 0, NULL) : NULL;
    if (rec)
        json_array_append_new((json_t *)arg, rec);
    return 0;
}

/* Steps come back as (job_id, submit_time, record); attach each to its job. */
typedef struct {
    json_t *by_key; /* "job_id/submit_time" -> job record */
} store_steps_t;

static int store_row_step(void *arg, int ncols, const char *const *vals)
{
    store_steps_t *s = arg;
    if (ncols < 3 || !vals[0] || !vals[1] || !vals[2])
        return 0;
    char key[64];
    snprintf(key, sizeof(key), "%s/%s", vals[0], vals[1]);
    json_t *job = json_object_get(s->by_key, key);
    json_t *step = json_loads(vals[2], 0, NULL);
    if (!job || !step) {
        json_decref(step);
        return 0;
    }
    json_t *steps = json_object_get(job, "steps");
    if (!steps) {
        steps = json_array();
        json_object_set_new(job, "steps", steps);
    }
    json_array_append_new(steps, step);
    return 0;
}

static int store_query_steps(loom_store_t *st, const store_query_t *q, const char **params,
                             json_t *jobs, loom_err_t *err)
{
    store_steps_t s = {json_object()};
    size_t i;
    json_t *job;
    json_array_foreach(jobs, i, job)
    {
        char key[64];
        snprintf(key, sizeof(key), "%" JSON_INTEGER_FORMAT "/%" JSON_INTEGER_FORMAT,
                 json_integer_value(json_object_get(job, "job_id")),
                 json_integer_value(json_object_get(job, "submit_time")));
        json_object_set(s.by_key, key, job);
    }
    loom_sbuf_t sql = LOOM_SBUF_INIT;
    loom_sbuf_addf(&sql,
                   "SELECT s.job_id, s.submit_time, s.record FROM steps s JOIN jobs j"
                   " ON s.cluster = j.cluster AND s.job_id = j.job_id"
                   " AND s.submit_time = j.submit_time%s ORDER BY s.job_id, s.start_time",
                   loom_sbuf_str(&q->where));
    int rc = store_exec(st, loom_sbuf_str(&sql), (int)q->vals.n, params, store_row_step, &s, err);
    loom_sbuf_free(&sql);
    json_decref(s.by_key);
    return rc;
}

int loom_store_job_query(loom_store_t *st, const loom_store_jobq_t *f, json_t **jobs,
                         loom_err_t *err)
{
    store_query_t q = {.where = LOOM_SBUF_INIT, .vals = LOOM_STRV_INIT};
    store_q_build(&q, f);
    const char **params = loom_xcalloc(q.vals.n + 1, sizeof(*params));
    for (size_t i = 0; i < q.vals.n; i++)
        params[i] = q.vals.v[i];
    loom_sbuf_t sql = LOOM_SBUF_INIT;
    loom_sbuf_addf(&sql, "SELECT j.record FROM jobs j%s ORDER BY j.submit_time, j.job_id",
                   loom_sbuf_str(&q.where));
    if (f->limit > 0)
        loom_sbuf_addf(&sql, " LIMIT %" PRId64, f->limit);
    json_t *arr = json_array();
    int rc = store_exec(st, loom_sbuf_str(&sql), (int)q.vals.n, params, store_row_record, arr, err);
    if (rc >= 0 && f->steps && json_array_size(arr) > 0)
        rc = store_query_steps(st, &q, params, arr, err);
    loom_sbuf_free(&sql);
    loom_sbuf_free(&q.where);
    loom_strv_free(&q.vals);
    free(params);
    if (rc < 0) {
        json_decref(arr);
        return rc;
    }
    *jobs = arr;
    return 0;
}

/* The columns of a step row after (cluster, job_id, submit_time, step_id). */
static const char *const store_step_cols[] = {
    "state",          "exit_code", "start_time", "end_time",     "nodes",
    "ntasks",         "ncpus",     "max_rss",    "max_rss_node", "ave_rss",
    "max_vmsize",     "total_cpu", "user_cpu",   "system_cpu",   "max_disk_read",
    "max_disk_write", "gpu_time",  "gpu_util",   "tres_alloc",
};

#define STORE_STEP_NCOLS ((int)(sizeof(store_step_cols) / sizeof(store_step_cols[0])))

static void store_step_sql(loom_sbuf_t *sql)
{
    loom_sbuf_add(sql, "INSERT INTO steps (cluster, job_id, submit_time, step_id, record");
    for (int i = 0; i < STORE_STEP_NCOLS; i++)
        loom_sbuf_addf(sql, ", %s", store_step_cols[i]);
    loom_sbuf_add(sql, ") VALUES ($1, $2, $3, $4, $5");
    for (int i = 0; i < STORE_STEP_NCOLS; i++)
        loom_sbuf_addf(sql, ", $%d", i + 6);
    loom_sbuf_add(sql, ") ON CONFLICT (cluster, job_id, submit_time, step_id) DO UPDATE SET"
                       " record = excluded.record");
    for (int i = 0; i < STORE_STEP_NCOLS; i++)
        loom_sbuf_addf(sql, ", %s = excluded.%s", store_step_cols[i], store_step_cols[i]);
}

int loom_store_step_put(loom_store_t *st, const char *cluster, const json_t *step, loom_err_t *err)
{
    const json_t *sid = json_object_get(step, "step_id");
    if (!json_is_object(step) || !json_is_integer(json_object_get(step, "job_id")) ||
        !(json_is_string(sid) || json_is_integer(sid)))
        return loom_errf(err, -LOOM_EPROTO, "step record without job_id and step_id");
    char *vals[STORE_STEP_NCOLS + 5];
    vals[0] = loom_xstrdup(cluster);
    vals[1] = store_json_text(json_object_get(step, "job_id"));
    vals[2] = store_json_text(json_object_get(step, "submit_time"));
    if (!vals[2])
        vals[2] = loom_xstrdup("0");
    vals[3] = store_json_text(sid);
    vals[4] = json_dumps(step, JSON_COMPACT | JSON_SORT_KEYS);
    for (int i = 0; i < STORE_STEP_NCOLS; i++)
        vals[i + 5] = store_json_text(json_object_get(step, store_step_cols[i]));
    loom_sbuf_t sql = LOOM_SBUF_INIT;
    store_step_sql(&sql);
    int rc = store_exec(st, loom_sbuf_str(&sql), STORE_STEP_NCOLS + 5, (const char *const *)vals,
                        NULL, NULL, err);
    loom_sbuf_free(&sql);
    for (int i = 0; i < STORE_STEP_NCOLS + 5; i++)
        free(vals[i]);
    return rc < 0 ? rc : 0;
}

int64_t loom_store_job_count(loom_store_t *st, loom_err_t *err)
{
    int64_t n = 0;
    int rc = store_exec(st, "SELECT COUNT(*) FROM jobs", 0, NULL, store_row_int, &n, err);
    return rc < 0 ? rc : n;
}
