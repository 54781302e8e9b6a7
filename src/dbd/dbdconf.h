/*
 * dbdconf.h - the subset of slurmdbd.conf that loomdbd reads (Slurm's
 * slurmdbd.conf(5); CLI_SPEC §13 for the syntax, lexed by conflex.h).
 *
 * Keys: DbdHost, DbdAddr, DbdPort, StorageType (accounting_storage/sqlite,
 * /pgsql or /postgresql; /mysql is refused with a clear error: Loom stores
 * accounting in SQLite or PostgreSQL), StorageHost, StoragePort,
 * StorageUser, StoragePass, StorageLoc (the SQLite file, or the PostgreSQL
 * database name), SlurmUser, LogFile, PidFile, DebugLevel. AuthType,
 * AuthInfo, the Archive* and Purge* keys and the other keys of Slurm's list
 * are accepted and ignored. Unknown keys and bad values are
 * "<file>:<line>: ..." errors.
 *
 * Entry points: loom_dbdconf_load, loom_dbdconf_load_buffer,
 * loom_dbdconf_free, loom_dbdconf_conninfo.
 */
#ifndef LOOM_DBD_DBDCONF_H
#define LOOM_DBD_DBDCONF_H

#include "common/err.h"
#include "common/sbuf.h"

#include <stdint.h>

typedef struct loom_dbdconf {
    char *dbd_host, *dbd_addr;
    int64_t dbd_port;   /* 0: not given */
    char *storage_type; /* "sqlite" or "pgsql" (normalised); NULL: not given */
    char *storage_host, *storage_user, *storage_pass, *storage_loc;
    int64_t storage_port; /* 0: not given */
    char *slurm_user, *log_file, *pid_file, *debug_level;
} loom_dbdconf_t;

/* Parse path; on error *out is untouched. -ENOENT when the file does not exist. */
int loom_dbdconf_load(const char *path, loom_dbdconf_t *out, loom_err_t *err);
int loom_dbdconf_load_buffer(const char *name, const char *text, size_t len, loom_dbdconf_t *out,
                             loom_err_t *err);
void loom_dbdconf_free(loom_dbdconf_t *c);
/* The libpq conninfo of a pgsql configuration (host, port, user, password,
 * dbname; values quoted as libpq wants). */
void loom_dbdconf_conninfo(const loom_dbdconf_t *c, loom_sbuf_t *out);

#endif
