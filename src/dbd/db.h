/*
 * db.h - the storage back-end interface of loomdbd: a small ops struct.
 *
 * A back end opens a connection and executes one SQL statement with text
 * parameters, calling a row callback for each result row. Everything above it
 * (schema, migrations, queries: store.c) is written once, in the SQL subset
 * that SQLite and PostgreSQL share: parameters are written `$1`, `$2`, ...
 * (both accept that form), upserts use `ON CONFLICT ... DO UPDATE`, and tables
 * use natural primary keys so no auto-increment syntax is needed.
 *
 * Back ends: loom_db_sqlite_ops (the embedded default) and loom_db_pgsql_ops
 * (libpq, for large sites). Both are compiled in; no dlsym tables.
 */
#ifndef LOOM_DBD_DB_H
#define LOOM_DBD_DB_H

#include "common/err.h"

typedef struct loom_db loom_db_t;

/* One result row; vals[i] is NULL for SQL NULL. Return non-zero to stop. */
typedef int (*loom_db_row_f)(void *arg, int ncols, const char *const *vals);

typedef struct loom_db_ops {
    const char *name; /* "sqlite" or "pgsql" */
    /* location: a file path for sqlite, a libpq conninfo string for pgsql. */
    int (*open)(const char *location, loom_db_t **out, loom_err_t *err);
    void (*close)(loom_db_t *db); /* accepts NULL */
    /* Run one statement; params are text (NULL = SQL NULL); cb may be NULL.
     * Returns the number of rows changed or returned, or a negative code. */
    int (*exec)(loom_db_t *db, const char *sql, int nparams, const char *const *params,
                loom_db_row_f cb, void *arg, loom_err_t *err);
} loom_db_ops_t;

extern const loom_db_ops_t loom_db_sqlite_ops;
extern const loom_db_ops_t loom_db_pgsql_ops;

/* The ops for a back-end name ("sqlite", "pgsql"/"postgres"/"postgresql"), or NULL. */
const loom_db_ops_t *loom_db_find_ops(const char *name);

#endif
