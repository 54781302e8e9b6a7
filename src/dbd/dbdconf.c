/*
 * dbdconf.c - slurmdbd.conf. See dbdconf.h.
 */
#include "dbd/dbdconf.h"
#include "common/conflex.h"
#include "common/xalloc.h"

#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define DBDCONF_MAX_BYTES (1u << 20)

typedef enum { DBDCONF_STR, DBDCONF_PORT, DBDCONF_TYPE, DBDCONF_IGNORE } dbdconf_kind_t;

typedef struct {
    const char *key;
    dbdconf_kind_t kind;
    size_t off;
} dbdconf_key_t;

#define S(k, f)                                                                                    \
    {                                                                                              \
        k, DBDCONF_STR, offsetof(loom_dbdconf_t, f)                                                \
    }
#define P(k, f)                                                                                    \
    {                                                                                              \
        k, DBDCONF_PORT, offsetof(loom_dbdconf_t, f)                                               \
    }
#define I(k)                                                                                       \
    {                                                                                              \
        k, DBDCONF_IGNORE, 0                                                                       \
    }

static const dbdconf_key_t dbdconf_keys[] = {
    S("DbdHost", dbd_host),
    S("DbdBackupHost", dbd_host),
    S("DbdAddr", dbd_addr),
    P("DbdPort", dbd_port),
    {"StorageType", DBDCONF_TYPE, offsetof(loom_dbdconf_t, storage_type)},
    S("StorageHost", storage_host),
    S("StorageUser", storage_user),
    S("StoragePass", storage_pass),
    S("StorageLoc", storage_loc),
    P("StoragePort", storage_port),
    S("SlurmUser", slurm_user),
    S("LogFile", log_file),
    S("PidFile", pid_file),
    S("DebugLevel", debug_level),
    I("AuthType"),
    I("AuthInfo"),
    I("AuthAltTypes"),
    I("AuthAltParameters"),
    I("ArchiveDir"),
    I("ArchiveEvents"),
    I("ArchiveJobs"),
    I("ArchiveResvs"),
    I("ArchiveScript"),
    I("ArchiveSteps"),
    I("ArchiveSuspend"),
    I("ArchiveTXN"),
    I("ArchiveUsage"),
    I("PurgeEventAfter"),
    I("PurgeJobAfter"),
    I("PurgeResvAfter"),
    I("PurgeStepAfter"),
    I("PurgeSuspendAfter"),
    I("PurgeTXNAfter"),
    I("PurgeUsageAfter"),
    I("CommitDelay"),
    I("CommunicationParameters"),
    I("DebugFlags"),
    I("DebugLevelSyslog"),
    I("DefaultQOS"),
    I("LogTimeFormat"),
    I("MaxQueryTimeRange"),
    I("MessageTimeout"),
    I("Parameters"),
    I("PluginDir"),
    I("PrivateData"),
    I("StorageBackupHost"),
    I("StorageParameters"),
    I("TCPTimeout"),
    I("TrackSlurmctldDown"),
    I("TrackWCKey"),
    I("AllowNoDefAcct"),
};

static const dbdconf_key_t *dbdconf_find(const char *key)
{
    for (size_t i = 0; i < sizeof(dbdconf_keys) / sizeof(dbdconf_keys[0]); i++)
        if (strcasecmp(dbdconf_keys[i].key, key) == 0)
            return &dbdconf_keys[i];
    return NULL;
}

static int dbdconf_type(const char *v, char **out, const loom_conf_line_t *l, loom_err_t *err)
{
    const char *t = strncasecmp(v, "accounting_storage/", 19) == 0 ? v + 19 : v;
    if (strcasecmp(t, "sqlite") == 0 || strcasecmp(t, "sqlite3") == 0)
        t = "sqlite";
    else if (strcasecmp(t, "pgsql") == 0 || strcasecmp(t, "postgres") == 0 ||
             strcasecmp(t, "postgresql") == 0)
        t = "pgsql";
    else if (strcasecmp(t, "mysql") == 0)
        return loom_errf(err, -LOOM_ECONFIG,
                         "%s:%d: StorageType=%s: loomdbd stores accounting in SQLite or "
                         "PostgreSQL (accounting_storage/sqlite or accounting_storage/pgsql)",
                         l->file, l->lineno, v);
    else
        return loom_errf(err, -LOOM_ECONFIG, "%s:%d: invalid StorageType '%s'", l->file, l->lineno,
                         v);
    free(*out);
    *out = loom_xstrdup(t);
    return 0;
}

static int dbdconf_port(const char *v, int64_t *out, const loom_conf_line_t *l, const char *key,
                        loom_err_t *err)
{
    char *end;
    errno = 0;
    long p = strtol(v, &end, 10);
    if (errno || end == v || *end || p < 1 || p > 65535)
        return loom_errf(err, -LOOM_ECONFIG, "%s:%d: invalid %s '%s' (1-65535)", l->file, l->lineno,
                         key, v);
    *out = p;
    return 0;
}

static int dbdconf_pair(loom_dbdconf_t *c, const loom_conf_line_t *l, const loom_conf_pair_t *p,
                        loom_err_t *err)
{
    const dbdconf_key_t *k = dbdconf_find(p->key);
    if (!k)
        return loom_errf(err, -LOOM_ECONFIG, "%s:%d: unknown key '%s'", l->file, l->lineno, p->key);
    char **s = (char **)((char *)c + k->off);
    switch (k->kind) {
    case DBDCONF_STR:
        free(*s);
        *s = loom_xstrdup(p->value);
        return 0;
    case DBDCONF_PORT:
        return dbdconf_port(p->value, (int64_t *)((char *)c + k->off), l, k->key, err);
    case DBDCONF_TYPE:
        return dbdconf_type(p->value, s, l, err);
    default:
        return 0;
    }
}

static int dbdconf_line(void *ctx, const loom_conf_line_t *l, loom_err_t *err)
{
    if (l->flags & LOOM_CONFLEX_INCLUDE)
        return loom_errf(err, -LOOM_ECONFIG, "%s:%d: Include is not supported in slurmdbd.conf",
                         l->file, l->lineno);
    for (size_t i = 0; i < l->n; i++) {
        int rc = dbdconf_pair(ctx, l, &l->pairs[i], err);
        if (rc < 0)
            return rc;
    }
    return 0;
}

void loom_dbdconf_free(loom_dbdconf_t *c)
{
    if (!c)
        return;
    char **strs[] = {&c->dbd_host,     &c->dbd_addr,     &c->storage_type, &c->storage_host,
                     &c->storage_user, &c->storage_pass, &c->storage_loc,  &c->slurm_user,
                     &c->log_file,     &c->pid_file,     &c->debug_level};
    for (size_t i = 0; i < sizeof(strs) / sizeof(strs[0]); i++) {
        free(*strs[i]);
        *strs[i] = NULL;
    }
}

int loom_dbdconf_load_buffer(const char *name, const char *text, size_t len, loom_dbdconf_t *out,
                             loom_err_t *err)
{
    loom_dbdconf_t c = {0};
    int rc = loom_conflex_buffer(name, text, len, dbdconf_line, &c, err);
    if (rc < 0) {
        loom_dbdconf_free(&c);
        return rc;
    }
    *out = c;
    return 0;
}

int loom_dbdconf_load(const char *path, loom_dbdconf_t *out, loom_err_t *err)
{
    char *text = NULL;
    size_t len = 0;
    int rc = loom_conflex_read_file(path, DBDCONF_MAX_BYTES, &text, &len, err);
    if (rc < 0)
        return rc;
    rc = loom_dbdconf_load_buffer(path, text, len, out, err);
    free(text);
    return rc;
}

/* key='value' with \ and ' escaped, as libpq's conninfo wants. */
static void dbdconf_kv(loom_sbuf_t *out, const char *key, const char *v)
{
    if (!v)
        return;
    loom_sbuf_addf(out, "%s%s='", out->len ? " " : "", key);
    for (; *v; v++) {
        if (*v == '\\' || *v == '\'')
            loom_sbuf_addc(out, '\\');
        loom_sbuf_addc(out, *v);
    }
    loom_sbuf_addc(out, '\'');
}

void loom_dbdconf_conninfo(const loom_dbdconf_t *c, loom_sbuf_t *out)
{
    dbdconf_kv(out, "host", c->storage_host);
    if (c->storage_port) {
        char port[16];
        snprintf(port, sizeof(port), "%d", (int)c->storage_port);
        dbdconf_kv(out, "port", port);
    }
    dbdconf_kv(out, "user", c->storage_user);
    dbdconf_kv(out, "password", c->storage_pass);
    dbdconf_kv(out, "dbname", c->storage_loc ? c->storage_loc : "slurm_acct_db");
}
