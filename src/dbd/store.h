/*
 * store.h - loomdbd's accounting store: schema, migrations, job records.
 *
 * Written once over the db.h ops, so the SQLite and PostgreSQL back ends share
 * every statement. The schema is versioned: loom_store_open() applies the
 * migrations the database has not seen yet, in order, each in a transaction.
 *
 * Job records are upserted on (cluster, job_id, submit_time): delivering the
 * same record twice (the controller re-sends after a lost acknowledgement)
 * stores it once. Records travel as the JSON job record of
 * docs/proto/messages.md §1; the whole record is kept beside the indexed
 * columns so that sacct can print fields the columns do not hold.
 */
#ifndef LOOM_DBD_STORE_H
#define LOOM_DBD_STORE_H

#include "common/err.h"
#include "dbd/db.h"

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>

typedef struct loom_store loom_store_t;

/* The schema version this code writes. */
#define LOOM_STORE_SCHEMA_VERSION 5

/* Open (and migrate) a store. type: "sqlite" or "pgsql"; location: a path or
 * conninfo. The caller destroys the store. */
int loom_store_open(const char *type, const char *location, loom_store_t **out, loom_err_t *err);
void loom_store_close(loom_store_t *st);
/* The schema version found in the database. */
int loom_store_schema_version(loom_store_t *st, loom_err_t *err);

int loom_store_begin(loom_store_t *st, loom_err_t *err);
int loom_store_commit(loom_store_t *st, loom_err_t *err);
int loom_store_rollback(loom_store_t *st);

/* Run one statement on the store's back end (db.h's exec): for the store's
 * own modules (store_acct.c) and the benchmark generator. */
int loom_store_exec(loom_store_t *st, const char *sql, int nparams, const char *const *params,
                    loom_db_row_f cb, void *arg, loom_err_t *err);

/* Insert or update one job record (messages.md §1 keys) for cluster. */
int loom_store_job_put(loom_store_t *st, const char *cluster, const json_t *job, loom_err_t *err);

/* Insert or update one step record (messages.md §6: job_id, submit_time,
 * step_id "batch"/"extern"/"0"..., usage fields) for cluster. */
int loom_store_step_put(loom_store_t *st, const char *cluster, const json_t *step, loom_err_t *err);

/* A job query (sacct's filters). Unset fields do not filter; the text
 * filters take one value or a comma list (any of them matches). */
typedef struct loom_store_jobq {
    const char *cluster;
    const char *user; /* user names */
    const char *account;
    const char *partition;
    const char *name;
    const char *state;   /* long state names */
    int64_t job_id;      /* 0 = any; matches the job or its array master */
    const char *job_ids; /* comma list of ids, each as job_id above */
    int64_t start;       /* window start (epoch), 0 = none: ended at or after it, or not ended */
    int64_t end;         /* window end (epoch), 0 = none: submitted by then */
    int64_t limit;       /* 0 = no limit */
    bool steps;          /* attach each job's step records as "steps": [...] */
} loom_store_jobq_t;

/* Records matching q, oldest submit first, as a new JSON array (caller decrefs). */
int loom_store_job_query(loom_store_t *st, const loom_store_jobq_t *q, json_t **jobs,
                         loom_err_t *err);
/* Number of stored job records (all clusters). */
int64_t loom_store_job_count(loom_store_t *st, loom_err_t *err);

#endif
