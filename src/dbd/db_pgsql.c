/*
 * db_pgsql.c - the PostgreSQL back end of the storage interface (db.h), on
 * libpq. Statements run with PQexecParams and text parameters; the server's
 * own `$N` placeholders are what store.c writes.
 */
#include "dbd/db.h"
#include "common/xalloc.h"

#include <libpq-fe.h>
#include <stdlib.h>

struct loom_db {
    PGconn *conn;
};

static void pgsql_quiet_notice(void *arg, const char *message)
{
    (void)arg;
    (void)message; /* "relation already exists, skipping" and friends */
}

static int pgsql_open(const char *location, loom_db_t **out, loom_err_t *err)
{
    PGconn *conn = PQconnectdb(location);
    if (!conn || PQstatus(conn) != CONNECTION_OK) {
        int rc = loom_errf(err, -LOOM_ECONNECT, "postgresql: %s",
                           conn ? PQerrorMessage(conn) : "out of memory");
        PQfinish(conn);
        return rc;
    }
    PQsetNoticeProcessor(conn, pgsql_quiet_notice, NULL);
    loom_db_t *db = loom_xcalloc(1, sizeof(*db));
    db->conn = conn;
    *out = db;
    return 0;
}

static void pgsql_close(loom_db_t *db)
{
    if (!db)
        return;
    PQfinish(db->conn);
    free(db);
}

static int pgsql_rows(PGresult *res, loom_db_row_f cb, void *arg)
{
    int rows = PQntuples(res), cols = PQnfields(res);
    if (cols > 64)
        cols = 64;
    for (int r = 0; r < rows; r++) {
        const char *vals[64];
        for (int c = 0; c < cols; c++)
            vals[c] = PQgetisnull(res, r, c) ? NULL : PQgetvalue(res, r, c);
        if (cb && cb(arg, cols, vals) != 0)
            return r + 1;
    }
    return rows;
}

static int pgsql_exec(loom_db_t *db, const char *sql, int nparams, const char *const *params,
                      loom_db_row_f cb, void *arg, loom_err_t *err)
{
    PGresult *res = PQexecParams(db->conn, sql, nparams, NULL, params, NULL, NULL, 0);
    int rc;
    switch (PQresultStatus(res)) {
    case PGRES_TUPLES_OK:
        rc = pgsql_rows(res, cb, arg);
        break;
    case PGRES_COMMAND_OK:
        rc = atoi(PQcmdTuples(res));
        break;
    default: {
        int lost = PQstatus(db->conn) != CONNECTION_OK;
        rc = loom_errf(err, lost ? -LOOM_ECONNECT : -LOOM_EINTERNAL, "postgresql: %s",
                       PQerrorMessage(db->conn));
        if (lost)
            PQreset(db->conn);
    }
    }
    PQclear(res);
    return rc;
}

const loom_db_ops_t loom_db_pgsql_ops = {
    .name = "pgsql",
    .open = pgsql_open,
    .close = pgsql_close,
    .exec = pgsql_exec,
};
