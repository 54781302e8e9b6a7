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

static const char *const *const store_migrations[] = {
    store_migration_1,
};

#define STORE_NMIGRATIONS ((int)(sizeof(store_migrations) / sizeof(store_migrations[0])))

static int store_exec(loom_store_t *st, const char *sql, int n, const char *const *params,
                      loom_db_row_f cb, void *arg, loom_err_t *err)
{
    return st->ops->exec(st->db, sql, n, params, cb, arg, err);
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
    vals[STORE_JOB_NCOLS + 1] = json_dumps(job, JSON_COMPACT | JSON_SORT_KEYS);
    int rc = store_exec(st, store_job_upsert, STORE_JOB_NCOLS + 2, (const char *const *)vals, NULL,
                        NULL, err);
    for (int i = 0; i < STORE_JOB_NCOLS + 2; i++)
        free(vals[i]);
    return rc < 0 ? rc : 0;
}

typedef struct {
    loom_sbuf_t where;
    const char *params[16];
    char nums[4][24];
    int n;
} store_query_t;

static void store_q_add(store_query_t *q, const char *clause, const char *value)
{
    q->params[q->n++] = value;
    loom_sbuf_add(&q->where, q->where.len ? " AND " : " WHERE ");
    for (const char *c = clause; *c; c++) {
        if (*c == '?')
            loom_sbuf_addf(&q->where, "$%d", q->n);
        else
            loom_sbuf_addc(&q->where, *c);
    }
}

static void store_q_add_int(store_query_t *q, const char *clause, int64_t value, int slot)
{
    snprintf(q->nums[slot], sizeof(q->nums[slot]), "%" PRId64, value);
    store_q_add(q, clause, q->nums[slot]);
}

/* Each clause names its parameter with "?", replaced by "$N". */
static void store_q_build(store_query_t *q, const loom_store_jobq_t *f)
{
    if (f->cluster)
        store_q_add(q, "cluster = ?", f->cluster);
    if (f->user)
        store_q_add(q, "username = ?", f->user);
    if (f->account)
        store_q_add(q, "account = ?", f->account);
    if (f->partition)
        store_q_add(q, "partition = ?", f->partition);
    if (f->name)
        store_q_add(q, "name = ?", f->name);
    if (f->state)
        store_q_add(q, "state = ?", f->state);
    if (f->job_id)
        store_q_add_int(q, "(job_id = ? OR array_job_id = ?)", f->job_id, 0);
    if (f->start) /* still running, or ended inside the window */
        store_q_add_int(q, "(end_time IS NULL OR end_time = 0 OR end_time >= ?)", f->start, 1);
    if (f->end)
        store_q_add_int(q, "submit_time <= ?", f->end, 2);
}

static int store_row_record(void *arg, int ncols, const char *const *vals)
{
    json_t *rec = vals[0] ? json_loads(vals[0], 0, NULL) : NULL;
    if (rec)
        json_array_append_new((json_t *)arg, rec);
    return 0;
}

int loom_store_job_query(loom_store_t *st, const loom_store_jobq_t *f, json_t **jobs,
                         loom_err_t *err)
{
    store_query_t q = {.where = LOOM_SBUF_INIT};
    store_q_build(&q, f);
    loom_sbuf_t sql = LOOM_SBUF_INIT;
    loom_sbuf_addf(&sql, "SELECT record FROM jobs%s ORDER BY submit_time, job_id",
                   loom_sbuf_str(&q.where));
    if (f->limit > 0)
        loom_sbuf_addf(&sql, " LIMIT %" PRId64, f->limit);
    json_t *arr = json_array();
    int rc = store_exec(st, loom_sbuf_str(&sql), q.n, q.params, store_row_record, arr, err);
    loom_sbuf_free(&sql);
    loom_sbuf_free(&q.where);
    if (rc < 0) {
        json_decref(arr);
        return rc;
    }
    *jobs = arr;
    return 0;
}

int64_t loom_store_job_count(loom_store_t *st, loom_err_t *err)
{
    int64_t n = 0;
    int rc = store_exec(st, "SELECT COUNT(*) FROM jobs", 0, NULL, store_row_int, &n, err);
    return rc < 0 ? rc : n;
}
