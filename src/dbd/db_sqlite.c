/*
 * db_sqlite.c - the SQLite back end of the storage interface (db.h).
 *
 * WAL mode with synchronous=NORMAL: a committed transaction survives a crash of
 * loomdbd; the controller keeps its own spool until loomdbd acknowledges, so
 * nothing is lost if the machine itself fails between commit and checkpoint.
 * Parameters `$N` are bound by name, so their order in the text is free.
 */
#include "dbd/db.h"
#include "common/xalloc.h"

#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct loom_db {
    sqlite3 *conn;
};

static int sqlite_fail(sqlite3 *conn, loom_err_t *err, const char *what)
{
    return loom_errf(err, -LOOM_EINTERNAL, "sqlite: %s: %s", what,
                     conn ? sqlite3_errmsg(conn) : "out of memory");
}

static int sqlite_open(const char *location, loom_db_t **out, loom_err_t *err)
{
    sqlite3 *conn = NULL;
    int flags = SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX;
    if (sqlite3_open_v2(location, &conn, flags, NULL) != SQLITE_OK) {
        int rc = sqlite_fail(conn, err, location);
        sqlite3_close(conn);
        return rc;
    }
    sqlite3_busy_timeout(conn, 5000);
    char *msg = NULL;
    if (sqlite3_exec(conn, "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;", NULL, NULL,
                     &msg) != SQLITE_OK) {
        int rc = loom_errf(err, -LOOM_EINTERNAL, "sqlite: %s: %s", location, msg ? msg : "?");
        sqlite3_free(msg);
        sqlite3_close(conn);
        return rc;
    }
    loom_db_t *db = loom_xcalloc(1, sizeof(*db));
    db->conn = conn;
    *out = db;
    return 0;
}

static void sqlite_close(loom_db_t *db)
{
    if (!db)
        return;
    sqlite3_close(db->conn);
    free(db);
}

static int sqlite_bind(loom_db_t *db, sqlite3_stmt *st, int nparams, const char *const *params,
                       loom_err_t *err)
{
    for (int i = 0; i < nparams; i++) {
        char name[16];
        snprintf(name, sizeof(name), "$%d", i + 1);
        int idx = sqlite3_bind_parameter_index(st, name);
        if (idx == 0)
            continue; /* the statement does not use this parameter */
        int rc = params[i] ? sqlite3_bind_text(st, idx, params[i], -1, SQLITE_TRANSIENT)
                           : sqlite3_bind_null(st, idx);
        if (rc != SQLITE_OK)
            return sqlite_fail(db->conn, err, "bind");
    }
    return 0;
}

/* Step through the rows, handing each to cb as text. */
static int sqlite_rows(loom_db_t *db, sqlite3_stmt *st, loom_db_row_f cb, void *arg,
                       loom_err_t *err)
{
    int count = 0, rc;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        int n = sqlite3_column_count(st);
        const char *vals[64];
        if (n > 64)
            n = 64;
        for (int i = 0; i < n; i++)
            vals[i] = (const char *)sqlite3_column_text(st, i);
        count++;
        if (cb && cb(arg, n, vals) != 0)
            return count;
    }
    if (rc != SQLITE_DONE)
        return sqlite_fail(db->conn, err, "step");
    return count;
}

static int sqlite_exec(loom_db_t *db, const char *sql, int nparams, const char *const *params,
                       loom_db_row_f cb, void *arg, loom_err_t *err)
{
    sqlite3_stmt *st = NULL;
    if (sqlite3_prepare_v2(db->conn, sql, -1, &st, NULL) != SQLITE_OK)
        return sqlite_fail(db->conn, err, "prepare");
    int rc = sqlite_bind(db, st, nparams, params, err);
    if (rc == 0)
        rc = sqlite_rows(db, st, cb, arg, err);
    if (rc == 0 && sqlite3_column_count(st) == 0)
        rc = sqlite3_changes(db->conn);
    sqlite3_finalize(st);
    return rc;
}

const loom_db_ops_t loom_db_sqlite_ops = {
    .name = "sqlite",
    .open = sqlite_open,
    .close = sqlite_close,
    .exec = sqlite_exec,
};
