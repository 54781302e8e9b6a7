/*
 * store_acct.c - generic list/insert/update/delete over the accounting
 * entity tables. See store_acct.h; the tables are created by schema
 * migration 2 in store.c, and the column lists below must name the same
 * columns (test_store.c round-trips every column of every entity).
 */
#include "dbd/store_acct.h"
#include "common/sbuf.h"
#include "common/strv.h"
#include "common/xalloc.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    const char *name;
    const char *table;
    int nkeys;               /* the first nkeys columns are the primary key */
    const char *const *cols; /* NULL-terminated */
    const char *const *ints; /* the integer columns, NULL-terminated */
    const char *order;       /* ORDER BY of lists */
} store_acct_ent_t;

static const char *const store_acct_cluster_cols[] = {
    "name", "control_host", "control_port", "rpc", "flags", "created", NULL,
};
static const char *const store_acct_cluster_ints[] = {"control_port", "rpc", "created", NULL};

static const char *const store_acct_account_cols[] = {
    "name", "description", "organization", "created", NULL,
};
static const char *const store_acct_account_ints[] = {"created", NULL};

static const char *const store_acct_user_cols[] = {
    "name", "default_account", "admin_level", "created", NULL,
};
static const char *const store_acct_user_ints[] = {"created", NULL};

static const char *const store_acct_qos_cols[] = {
    "name",
    "id",
    "description",
    "priority",
    "grace_time",
    "preempt",
    "preempt_mode",
    "preempt_exempt_time",
    "flags",
    "usage_threshold",
    "usage_factor",
    "grp_tres",
    "grp_tres_mins",
    "grp_tres_run_mins",
    "grp_jobs",
    "grp_submit_jobs",
    "grp_wall",
    "max_tres",
    "max_tres_per_node",
    "max_tres_mins",
    "max_wall",
    "max_tres_pu",
    "max_jobs_pu",
    "max_submit_pu",
    "max_tres_pa",
    "max_jobs_pa",
    "max_submit_pa",
    "min_tres",
    "created",
    NULL,
};
static const char *const store_acct_qos_ints[] = {
    "id",       "priority", "grace_time",  "preempt_exempt_time", "grp_jobs",    "grp_submit_jobs",
    "grp_wall", "max_wall", "max_jobs_pu", "max_submit_pu",       "max_jobs_pa", "max_submit_pa",
    "created",  NULL,
};

static const char *const store_acct_assoc_cols[] = {
    "cluster",
    "account",
    "user_name",
    "partition",
    "id",
    "parent_account",
    "shares",
    "priority",
    "grp_jobs",
    "grp_submit_jobs",
    "grp_tres",
    "grp_tres_mins",
    "grp_tres_run_mins",
    "grp_wall",
    "max_jobs",
    "max_submit_jobs",
    "max_tres",
    "max_tres_per_node",
    "max_tres_mins",
    "max_wall",
    "qos",
    "default_qos",
    "created",
    NULL,
};
static const char *const store_acct_assoc_ints[] = {
    "id",       "shares",   "priority",        "grp_jobs", "grp_submit_jobs",
    "grp_wall", "max_jobs", "max_submit_jobs", "max_wall", "created",
    NULL,
};

static const store_acct_ent_t store_acct_ents[LOOM_ACCT_NENTS] = {
    [LOOM_ACCT_CLUSTER] = {"cluster", "clusters", 1, store_acct_cluster_cols,
                           store_acct_cluster_ints, "name"},
    [LOOM_ACCT_ACCOUNT] = {"account", "accounts", 1, store_acct_account_cols,
                           store_acct_account_ints, "name"},
    [LOOM_ACCT_USER] = {"user", "users", 1, store_acct_user_cols, store_acct_user_ints, "name"},
    [LOOM_ACCT_QOS] = {"qos", "qos", 1, store_acct_qos_cols, store_acct_qos_ints, "id, name"},
    [LOOM_ACCT_ASSOC] = {"assoc", "assocs", 4, store_acct_assoc_cols, store_acct_assoc_ints,
                         "cluster, id"},
};

const char *loom_acct_ent_name(loom_acct_ent_t ent)
{
    return ent < LOOM_ACCT_NENTS ? store_acct_ents[ent].name : "?";
}

int loom_acct_ent_find(const char *name)
{
    for (int i = 0; i < LOOM_ACCT_NENTS; i++)
        if (strcmp(store_acct_ents[i].name, name) == 0)
            return i;
    return -1;
}

static bool store_acct_in(const char *const *list, const char *s)
{
    for (; *list; list++)
        if (strcmp(*list, s) == 0)
            return true;
    return false;
}

bool loom_acct_col_known(loom_acct_ent_t ent, const char *col)
{
    return ent < LOOM_ACCT_NENTS && store_acct_in(store_acct_ents[ent].cols, col);
}

bool loom_acct_col_is_int(loom_acct_ent_t ent, const char *col)
{
    return ent < LOOM_ACCT_NENTS && store_acct_in(store_acct_ents[ent].ints, col);
}

/* Parameters of one statement: texts owned here, "$N" numbering. */
typedef struct {
    loom_strv_t vals; /* may hold NULL entries through `isnull` */
    bool isnull[256];
    int n;
} store_acct_params_t;

static int store_acct_param(store_acct_params_t *p, const json_t *v, loom_err_t *err)
{
    if (p->n >= 256)
        return loom_errf(err, -LOOM_ETOOBIG, "too many values in one request");
    char buf[64];
    if (json_is_null(v) || !v) {
        p->isnull[p->n] = true;
        loom_strv_add(&p->vals, "");
    } else if (json_is_string(v)) {
        p->isnull[p->n] = false;
        loom_strv_add(&p->vals, json_string_value(v));
    } else if (json_is_integer(v)) {
        p->isnull[p->n] = false;
        snprintf(buf, sizeof(buf), "%" JSON_INTEGER_FORMAT, json_integer_value(v));
        loom_strv_add(&p->vals, buf);
    } else if (json_is_real(v)) {
        p->isnull[p->n] = false;
        snprintf(buf, sizeof(buf), "%.6f", json_real_value(v));
        loom_strv_add(&p->vals, buf);
    } else {
        return loom_errf(err, -LOOM_EPROTO, "a value is neither a string nor a number");
    }
    return ++p->n;
}

static const char **store_acct_param_array(const store_acct_params_t *p)
{
    const char **a = loom_xcalloc((size_t)p->n + 1, sizeof(*a));
    for (int i = 0; i < p->n; i++)
        a[i] = p->isnull[i] ? NULL : p->vals.v[i];
    return a;
}

static int store_acct_check_col(loom_acct_ent_t ent, const char *col, loom_err_t *err)
{
    if (!loom_acct_col_known(ent, col))
        return loom_errf(err, -LOOM_EPROTO, "%s has no field '%s'", loom_acct_ent_name(ent), col);
    return 0;
}

/* Append " WHERE a = $1 AND b IN ($2, $3)" for where. */
static int store_acct_where(loom_acct_ent_t ent, const json_t *where, store_acct_params_t *p,
                            loom_sbuf_t *sql, loom_err_t *err)
{
    const char *col;
    json_t *v;
    bool first = true;
    if (where && !json_is_object(where))
        return loom_errf(err, -LOOM_EPROTO, "'where' is not an object");
    json_object_foreach((json_t *)where, col, v)
    {
        int rc = store_acct_check_col(ent, col, err);
        if (rc < 0)
            return rc;
        loom_sbuf_add(sql, first ? " WHERE " : " AND ");
        first = false;
        if (!json_is_array(v)) {
            if ((rc = store_acct_param(p, v, err)) < 0)
                return rc;
            loom_sbuf_addf(sql, json_is_null(v) ? "%s IS NULL" : "%s = $%d", col, rc);
            continue;
        }
        if (json_array_size(v) == 0) {
            loom_sbuf_add(sql, "1 = 0");
            continue;
        }
        loom_sbuf_addf(sql, "%s IN (", col);
        size_t i;
        json_t *item;
        json_array_foreach(v, i, item)
        {
            if ((rc = store_acct_param(p, item, err)) < 0)
                return rc;
            loom_sbuf_addf(sql, "%s$%d", i ? ", " : "", rc);
        }
        loom_sbuf_addc(sql, ')');
    }
    return 0;
}

typedef struct {
    loom_acct_ent_t ent;
    json_t *arr;
} store_acct_rows_t;

static int store_acct_row(void *arg, int ncols, const char *const *vals)
{
    store_acct_rows_t *r = arg;
    const char *const *cols = store_acct_ents[r->ent].cols;
    json_t *rec = json_object();
    for (int i = 0; i < ncols && cols[i]; i++) {
        if (!vals[i])
            continue;
        if (loom_acct_col_is_int(r->ent, cols[i]))
            json_object_set_new(rec, cols[i], json_integer(strtoll(vals[i], NULL, 10)));
        else
            json_object_set_new(rec, cols[i], json_string(vals[i]));
    }
    json_array_append_new(r->arr, rec);
    return 0;
}

static void store_acct_free_params(store_acct_params_t *p)
{
    loom_strv_free(&p->vals);
}

static int store_acct_run(loom_store_t *st, loom_sbuf_t *sql, store_acct_params_t *p,
                          loom_db_row_f cb, void *arg, loom_err_t *err)
{
    const char **params = store_acct_param_array(p);
    int rc = loom_store_exec(st, loom_sbuf_str(sql), p->n, params, cb, arg, err);
    free(params);
    store_acct_free_params(p);
    loom_sbuf_free(sql);
    return rc;
}

int loom_store_acct_list(loom_store_t *st, loom_acct_ent_t ent, const json_t *where, json_t **out,
                         loom_err_t *err)
{
    const store_acct_ent_t *e = &store_acct_ents[ent];
    store_acct_params_t p = {.vals = LOOM_STRV_INIT};
    loom_sbuf_t sql = LOOM_SBUF_INIT;
    loom_sbuf_add(&sql, "SELECT ");
    for (int i = 0; e->cols[i]; i++)
        loom_sbuf_addf(&sql, "%s%s", i ? ", " : "", e->cols[i]);
    loom_sbuf_addf(&sql, " FROM %s", e->table);
    int rc = store_acct_where(ent, where, &p, &sql, err);
    if (rc < 0) {
        store_acct_free_params(&p);
        loom_sbuf_free(&sql);
        return rc;
    }
    loom_sbuf_addf(&sql, " ORDER BY %s", e->order);
    store_acct_rows_t rows = {ent, json_array()};
    rc = store_acct_run(st, &sql, &p, store_acct_row, &rows, err);
    if (rc < 0) {
        json_decref(rows.arr);
        return rc;
    }
    *out = rows.arr;
    return 0;
}

static int store_acct_exists(loom_store_t *st, loom_acct_ent_t ent, const json_t *rec,
                             loom_err_t *err)
{
    const store_acct_ent_t *e = &store_acct_ents[ent];
    json_t *where = json_object();
    for (int i = 0; i < e->nkeys; i++) {
        json_t *v = json_object_get(rec, e->cols[i]);
        json_object_set_new(where, e->cols[i], v ? json_incref(v) : json_string(""));
    }
    json_t *found = NULL;
    int rc = loom_store_acct_list(st, ent, where, &found, err);
    json_decref(where);
    if (rc < 0)
        return rc;
    rc = json_array_size(found) > 0;
    json_decref(found);
    return rc;
}

int loom_store_acct_insert(loom_store_t *st, loom_acct_ent_t ent, const json_t *rec,
                           loom_err_t *err)
{
    const store_acct_ent_t *e = &store_acct_ents[ent];
    if (!json_is_object(rec))
        return loom_errf(err, -LOOM_EPROTO, "%s record is not an object", e->name);
    int rc = store_acct_exists(st, ent, rec, err);
    if (rc != 0)
        return rc < 0 ? rc : loom_errf(err, -EEXIST, "%s already exists", e->name);
    store_acct_params_t p = {.vals = LOOM_STRV_INIT};
    loom_sbuf_t sql = LOOM_SBUF_INIT, vals = LOOM_SBUF_INIT;
    loom_sbuf_addf(&sql, "INSERT INTO %s (", e->table);
    const char *col;
    json_t *v;
    json_object_foreach((json_t *)rec, col, v)
    {
        if ((rc = store_acct_check_col(ent, col, err)) < 0 ||
            (rc = store_acct_param(&p, v, err)) < 0)
            break;
        loom_sbuf_addf(&sql, "%s%s", rc > 1 ? ", " : "", col);
        loom_sbuf_addf(&vals, "%s$%d", rc > 1 ? ", " : "", rc);
    }
    /* Key columns left out of the record are '' (an account's own association). */
    for (int i = 0; rc >= 0 && i < e->nkeys; i++) {
        if (json_object_get(rec, e->cols[i]))
            continue;
        json_t *empty = json_string("");
        rc = store_acct_param(&p, empty, err);
        json_decref(empty);
        loom_sbuf_addf(&sql, "%s%s", rc > 1 ? ", " : "", e->cols[i]);
        loom_sbuf_addf(&vals, "%s$%d", rc > 1 ? ", " : "", rc);
    }
    if (rc >= 0)
        loom_sbuf_addf(&sql, ") VALUES (%s)", loom_sbuf_str(&vals));
    loom_sbuf_free(&vals);
    if (rc < 0) {
        store_acct_free_params(&p);
        loom_sbuf_free(&sql);
        return rc;
    }
    rc = store_acct_run(st, &sql, &p, NULL, NULL, err);
    return rc < 0 ? rc : 0;
}

int loom_store_acct_update(loom_store_t *st, loom_acct_ent_t ent, const json_t *where,
                           const json_t *set, loom_err_t *err)
{
    const store_acct_ent_t *e = &store_acct_ents[ent];
    if (!json_is_object(set) || json_object_size(set) == 0)
        return loom_errf(err, -LOOM_EPROTO, "nothing to set");
    store_acct_params_t p = {.vals = LOOM_STRV_INIT};
    loom_sbuf_t sql = LOOM_SBUF_INIT;
    loom_sbuf_addf(&sql, "UPDATE %s SET ", e->table);
    const char *col;
    json_t *v;
    int rc = 0;
    json_object_foreach((json_t *)set, col, v)
    {
        if ((rc = store_acct_check_col(ent, col, err)) < 0 ||
            (rc = store_acct_param(&p, v, err)) < 0)
            break;
        loom_sbuf_addf(&sql, "%s%s = $%d", rc > 1 ? ", " : "", col, rc);
    }
    if (rc >= 0)
        rc = store_acct_where(ent, where, &p, &sql, err);
    if (rc < 0) {
        store_acct_free_params(&p);
        loom_sbuf_free(&sql);
        return rc;
    }
    return store_acct_run(st, &sql, &p, NULL, NULL, err);
}

int loom_store_acct_delete(loom_store_t *st, loom_acct_ent_t ent, const json_t *where,
                           loom_err_t *err)
{
    store_acct_params_t p = {.vals = LOOM_STRV_INIT};
    loom_sbuf_t sql = LOOM_SBUF_INIT;
    loom_sbuf_addf(&sql, "DELETE FROM %s", store_acct_ents[ent].table);
    int rc = store_acct_where(ent, where, &p, &sql, err);
    if (rc < 0) {
        store_acct_free_params(&p);
        loom_sbuf_free(&sql);
        return rc;
    }
    return store_acct_run(st, &sql, &p, NULL, NULL, err);
}
