/*
 * acct.c - Slurm's accounting rules over the generic entity store. See
 * acct.h for the model; the request and reply members are those of
 * docs/proto/messages.md §6.
 *
 * Invariants: every public operation runs in one transaction (acct_txn), so
 * a request that fails half-way changes nothing; association ids grow
 * monotonically per database, giving `sacctmgr show assoc` a stable order.
 */
#include "dbd/acct.h"
#include "common/sbuf.h"
#include "common/xalloc.h"
#include "dbd/tres.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* Association fields a child takes from its parent when it does not set them. */
static const char *const acct_inherited[] = {
    "qos",      "default_qos", "max_jobs",          "max_submit_jobs",
    "max_wall", "max_tres",    "max_tres_per_node", "max_tres_mins",
    NULL,
};

static const char *const acct_tres_cols[] = {
    "grp_tres",      "grp_tres_mins", "grp_tres_run_mins", "max_tres", "max_tres_per_node",
    "max_tres_mins", "max_tres_pu",   "max_tres_pa",       "min_tres", NULL,
};

static const char *const acct_list_cols[] = {"qos", "preempt", NULL};

/* Fields of the account and user entities themselves (the rest of a `set`
 * goes to their associations). */
static const char *const acct_account_own[] = {"description", "organization", NULL};
static const char *const acct_user_own[] = {"default_account", "admin_level", NULL};

static const char *const acct_active_states[] = {
    "PENDING", "RUNNING", "SUSPENDED", "COMPLETING", "CONFIGURING", "REQUEUED", NULL,
};

static bool acct_in(const char *const *list, const char *s)
{
    for (; *list; list++)
        if (strcmp(*list, s) == 0)
            return true;
    return false;
}

static const char *acct_str(const json_t *o, const char *key)
{
    const json_t *v = json_object_get(o, key);
    return json_is_string(v) ? json_string_value(v) : NULL;
}

/* A string member, "" when absent. */
static const char *acct_str0(const json_t *o, const char *key)
{
    const char *s = acct_str(o, key);
    return s ? s : "";
}

/* Run op inside BEGIN/COMMIT; roll back on failure. */
typedef int acct_op_f(const loom_acct_ctx_t *a, loom_acct_ent_t ent, const json_t *req, json_t *out,
                      loom_err_t *err);

static int acct_txn(const loom_acct_ctx_t *a, acct_op_f *op, loom_acct_ent_t ent, const json_t *req,
                    json_t *out, loom_err_t *err)
{
    int rc = loom_store_begin(a->st, err);
    if (rc < 0)
        return rc;
    rc = op(a, ent, req, out, err);
    if (rc >= 0 && json_is_true(json_object_get(req, "dry_run"))) {
        loom_store_rollback(a->st); /* sacctmgr's preview before its commit question */
        return rc;
    }
    if (rc >= 0) {
        int crc = loom_store_commit(a->st, err);
        if (crc < 0)
            rc = crc;
    }
    if (rc < 0) /* out keeps the details of the refusal (default_of) */
        loom_store_rollback(a->st);
    return rc;
}

/* ---- small JSON helpers ------------------------------------------------- */

/* A where object {col: [names]} from a request list member (NULL: absent). */
static void acct_where_list(json_t *where, const char *col, const json_t *list)
{
    if (json_is_array(list))
        json_object_set(where, col, (json_t *)list);
    else if (json_is_string(list))
        json_object_set_new(where, col, json_pack("[O]", list));
}

static json_t *acct_list_rows(const loom_acct_ctx_t *a, loom_acct_ent_t ent, json_t *where, int *rc,
                              loom_err_t *err)
{
    json_t *rows = NULL;
    *rc = loom_store_acct_list(a->st, ent, where, &rows, err);
    json_decref(where);
    return *rc < 0 ? NULL : rows;
}

static json_t *acct_assoc_key(const char *cluster, const char *account, const char *user,
                              const char *part)
{
    return json_pack("{s:s, s:s, s:s, s:s}", "cluster", cluster, "account", account, "user_name",
                     user, "partition", part);
}

static json_t *acct_get_assoc(const loom_acct_ctx_t *a, const char *cluster, const char *account,
                              const char *user, const char *part, int *rc, loom_err_t *err)
{
    json_t *rows =
        acct_list_rows(a, LOOM_ACCT_ASSOC, acct_assoc_key(cluster, account, user, part), rc, err);
    json_t *one = rows && json_array_size(rows) ? json_incref(json_array_get(rows, 0)) : NULL;
    json_decref(rows);
    return one;
}

static int64_t acct_next_id(const loom_acct_ctx_t *a, loom_acct_ent_t ent, loom_err_t *err)
{
    int rc;
    json_t *rows = acct_list_rows(a, ent, NULL, &rc, err);
    if (!rows)
        return rc;
    int64_t max = 0;
    size_t i;
    json_t *r;
    json_array_foreach(rows, i, r)
    {
        int64_t id = json_integer_value(json_object_get(r, "id"));
        if (id > max)
            max = id;
    }
    json_decref(rows);
    return max + 1;
}

/* ---- applying a `set` to one record ------------------------------------- */

static int acct_list_op(const json_t *old, const json_t *v, json_t **out, loom_err_t *err)
{
    loom_strv_t items = LOOM_STRV_INIT;
    const char *op = "=";
    const json_t *list = v;
    if (json_is_object(v)) {
        op = acct_str0(v, "op");
        list = json_object_get(v, "items");
    }
    if (*op != '=' && json_is_string(old))
        loom_strv_split(&items, json_string_value(old), ",");
    size_t i;
    json_t *item;
    json_array_foreach(list, i, item)
    {
        const char *s = json_string_value(item);
        long at = s ? loom_strv_find(&items, s) : -1;
        if (!s)
            continue;
        if (*op == '-' && at >= 0) {
            free(items.v[at]);
            memmove(&items.v[at], &items.v[at + 1], (items.n - (size_t)at) * sizeof(char *));
            items.n--;
        } else if (*op != '-' && at < 0) {
            loom_strv_add(&items, s);
        }
    }
    if (!json_is_array(list) && !json_is_null(v)) {
        loom_strv_free(&items);
        return loom_errf(err, -LOOM_EPROTO, "a list change needs items");
    }
    loom_sbuf_t sb = LOOM_SBUF_INIT;
    for (i = 0; i < items.n; i++)
        loom_sbuf_addf(&sb, "%s%s", i ? "," : "", items.v[i]);
    *out = json_string(loom_sbuf_str(&sb));
    loom_sbuf_free(&sb);
    loom_strv_free(&items);
    return 0;
}

static int acct_tres_op(const loom_acct_ctx_t *a, const json_t *old, const json_t *v, json_t **out,
                        loom_err_t *err)
{
    if (json_is_null(v) || (json_is_integer(v) && json_integer_value(v) == -1) ||
        (json_is_string(v) && strcmp(json_string_value(v), "-1") == 0)) {
        *out = json_null();
        return 0;
    }
    if (!json_is_string(v))
        return loom_errf(err, -LOOM_EPROTO, "a TRES limit is a string");
    char *merged = NULL;
    int rc =
        loom_tres_merge(json_string_value(old), json_string_value(v), a->tres_known, &merged, err);
    if (rc < 0)
        return rc;
    *out = *merged ? json_string(merged) : json_null();
    free(merged);
    return 0;
}

/* The stored value for one changed column of ent. */
static int acct_set_one(const loom_acct_ctx_t *a, loom_acct_ent_t ent, const char *col,
                        const json_t *old, const json_t *v, json_t **out, loom_err_t *err)
{
    if (!loom_acct_col_known(ent, col))
        return loom_errf(err, -LOOM_EPROTO, "%s has no field '%s'", loom_acct_ent_name(ent), col);
    if (acct_in(acct_list_cols, col))
        return acct_list_op(old, v, out, err);
    if (acct_in(acct_tres_cols, col))
        return acct_tres_op(a, old, v, out, err);
    if (loom_acct_col_is_int(ent, col)) {
        if (!json_is_integer(v) && !json_is_null(v))
            return loom_errf(err, -LOOM_EPROTO, "%s is not an integer", col);
        *out =
            json_is_null(v) || json_integer_value(v) < 0 ? json_null() : json_incref((json_t *)v);
        return 0;
    }
    if (json_is_real(v)) {
        char buf[32];
        snprintf(buf, sizeof(buf), "%.6f", json_real_value(v));
        *out = json_string(buf);
        return 0;
    }
    if (!json_is_string(v) && !json_is_null(v))
        return loom_errf(err, -LOOM_EPROTO, "%s is not a string", col);
    *out = json_is_null(v) || strcmp(json_string_value(v), "-1") == 0 ? json_null()
                                                                      : json_incref((json_t *)v);
    return 0;
}

/* The columns to write to turn old into old+set, restricted to keys in
 * `only` (NULL: every key) or, with skip, to the keys not in it. Returns
 * the number of columns whose value changes. */
static int acct_changes(const loom_acct_ctx_t *a, loom_acct_ent_t ent, const json_t *old,
                        const json_t *set, const char *const *only, bool skip, json_t *cols,
                        loom_err_t *err)
{
    const char *col;
    json_t *v;
    int changed = 0;
    json_object_foreach((json_t *)set, col, v)
    {
        if (only && acct_in(only, col) == skip)
            continue;
        json_t *nv = NULL;
        json_t *ov = json_object_get(old, col);
        int rc = acct_set_one(a, ent, col, ov, v, &nv, err);
        if (rc < 0)
            return rc;
        if (!json_equal(nv, ov ? ov : json_null()))
            changed++;
        json_object_set_new(cols, col, nv);
    }
    return changed;
}

static json_t *acct_key_of(loom_acct_ent_t ent, const json_t *rec)
{
    if (ent == LOOM_ACCT_ASSOC)
        return acct_assoc_key(acct_str0(rec, "cluster"), acct_str0(rec, "account"),
                              acct_str0(rec, "user_name"), acct_str0(rec, "partition"));
    return json_pack("{s:s}", "name", acct_str0(rec, "name"));
}

/* Apply set to one stored record. Returns 1 when something changed. */
static int acct_update_rec(const loom_acct_ctx_t *a, loom_acct_ent_t ent, const json_t *rec,
                           const json_t *set, const char *const *only, bool skip, loom_err_t *err)
{
    json_t *cols = json_object();
    int rc = acct_changes(a, ent, rec, set, only, skip, cols, err);
    if (rc > 0) {
        json_t *key = acct_key_of(ent, rec);
        int urc = loom_store_acct_update(a->st, ent, key, cols, err);
        json_decref(key);
        if (urc < 0)
            rc = urc;
    }
    json_decref(cols);
    return rc < 0 ? rc : rc > 0;
}

/* Insert rec after applying set to it (limits, TRES canonical form). */
static int acct_insert_with(const loom_acct_ctx_t *a, loom_acct_ent_t ent, json_t *rec,
                            const json_t *set, const char *const *only, bool skip, loom_err_t *err)
{
    json_t *cols = json_object();
    int rc = set ? acct_changes(a, ent, NULL, set, only, skip, cols, err) : 0;
    const char *col;
    json_t *v;
    json_object_foreach(cols, col, v)
    {
        if (!json_is_null(v))
            json_object_set(rec, col, v);
    }
    json_decref(cols);
    return rc < 0 ? rc : loom_store_acct_insert(a->st, ent, rec, err);
}

/* ---- init ---------------------------------------------------------------- */

static int acct_ensure(const loom_acct_ctx_t *a, loom_acct_ent_t ent, json_t *rec, loom_err_t *err)
{
    int rc = loom_store_acct_insert(a->st, ent, rec, err);
    json_decref(rec);
    if (rc == -EEXIST) {
        loom_err_clear(err);
        return 0;
    }
    return rc;
}

static int acct_add_assoc_rec(const loom_acct_ctx_t *a, json_t *rec, const json_t *set,
                              loom_err_t *err)
{
    int64_t id = acct_next_id(a, LOOM_ACCT_ASSOC, err);
    if (id < 0) {
        json_decref(rec);
        return (int)id;
    }
    json_object_set_new(rec, "id", json_integer(id));
    json_object_set_new(rec, "created", json_integer(a->now));
    if (!json_object_get(rec, "shares"))
        json_object_set_new(rec, "shares", json_integer(1));
    int rc = acct_insert_with(a, LOOM_ACCT_ASSOC, rec, set, acct_account_own, true, err);
    json_decref(rec);
    return rc;
}

static int acct_add_cluster_assocs(const loom_acct_ctx_t *a, const char *cluster, const json_t *set,
                                   loom_err_t *err)
{
    json_t *root = acct_assoc_key(cluster, "root", "", "");
    json_object_set_new(root, "qos", json_string("normal"));
    int rc = acct_add_assoc_rec(a, root, set, err);
    if (rc == 0) {
        json_t *ru = acct_assoc_key(cluster, "root", "root", "");
        json_object_set_new(ru, "parent_account", json_string("root"));
        rc = acct_add_assoc_rec(a, ru, NULL, err);
    }
    return rc;
}

int loom_acct_init(const loom_acct_ctx_t *a, const char *cluster, loom_err_t *err)
{
    int rc = loom_store_begin(a->st, err);
    if (rc < 0)
        return rc;
    rc = acct_ensure(a, LOOM_ACCT_ACCOUNT,
                     json_pack("{s:s, s:s, s:s, s:I}", "name", "root", "description",
                               "default root account", "organization", "root", "created",
                               (json_int_t)a->now),
                     err);
    if (rc == 0)
        rc =
            acct_ensure(a, LOOM_ACCT_USER,
                        json_pack("{s:s, s:s, s:s, s:I}", "name", "root", "default_account", "root",
                                  "admin_level", "Administrator", "created", (json_int_t)a->now),
                        err);
    if (rc == 0)
        rc = acct_ensure(a, LOOM_ACCT_QOS,
                         json_pack("{s:s, s:i, s:s, s:i, s:i, s:s, s:s, s:I}", "name", "normal",
                                   "id", 1, "description", "Normal QOS default", "grace_time", 0,
                                   "priority", 0, "preempt_mode", "cluster", "usage_factor",
                                   "1.000000", "created", (json_int_t)a->now),
                         err);
    if (rc == 0 && cluster) {
        json_t *c = json_pack("{s:s, s:I}", "name", cluster, "created", (json_int_t)a->now);
        rc = loom_store_acct_insert(a->st, LOOM_ACCT_CLUSTER, c, err);
        json_decref(c);
        if (rc == 0)
            rc = acct_add_cluster_assocs(a, cluster, NULL, err);
        else if (rc == -EEXIST) {
            loom_err_clear(err);
            rc = 0;
        }
    }
    if (rc == 0)
        rc = loom_store_commit(a->st, err);
    if (rc < 0)
        loom_store_rollback(a->st);
    return rc < 0 ? rc : 0;
}

/* ---- the association tree ------------------------------------------------ */

static void acct_assoc_name(const json_t *r, loom_sbuf_t *sb)
{
    loom_sbuf_reset(sb);
    loom_sbuf_addf(sb, "%s/%s/%s/%s", acct_str0(r, "cluster"), acct_str0(r, "account"),
                   acct_str0(r, "user_name"), acct_str0(r, "partition"));
}

/* The parent of an association in the map, or NULL for a root. */
static json_t *acct_parent(json_t *map, const json_t *r)
{
    loom_sbuf_t sb = LOOM_SBUF_INIT;
    const char *acct = acct_str0(r, "account");
    if (*acct_str0(r, "user_name") || *acct_str0(r, "partition"))
        loom_sbuf_addf(&sb, "%s/%s//", acct_str0(r, "cluster"), acct);
    else if (strcmp(acct, "root") != 0)
        loom_sbuf_addf(&sb, "%s/%s//", acct_str0(r, "cluster"), acct_str0(r, "parent_account"));
    json_t *p = sb.len ? json_object_get(map, loom_sbuf_str(&sb)) : NULL;
    loom_sbuf_free(&sb);
    return p;
}

static json_t *acct_assoc_map(json_t *rows)
{
    json_t *map = json_object();
    loom_sbuf_t sb = LOOM_SBUF_INIT;
    size_t i;
    json_t *r;
    json_array_foreach(rows, i, r)
    {
        acct_assoc_name(r, &sb);
        json_object_set(map, loom_sbuf_str(&sb), r);
    }
    loom_sbuf_free(&sb);
    return map;
}

/* The value of an inherited field, looking up the tree (bounded depth). */
static json_t *acct_effective(json_t *map, json_t *r, const char *col)
{
    for (int depth = 0; r && depth < 64; depth++) {
        json_t *v = json_object_get(r, col);
        if (v && !json_is_null(v))
            return v;
        r = acct_parent(map, r);
    }
    return NULL;
}

/* Is anc an ancestor of r? */
static bool acct_is_below(json_t *map, json_t *r, const json_t *anc)
{
    for (int depth = 0; (r = acct_parent(map, r)) && depth < 64; depth++)
        if (r == anc)
            return true;
    return false;
}

static json_t *acct_all_assocs(const loom_acct_ctx_t *a, int *rc, loom_err_t *err)
{
    return acct_list_rows(a, LOOM_ACCT_ASSOC, NULL, rc, err);
}

/* A summary record of an association for replies. */
static json_t *acct_assoc_brief(const json_t *r)
{
    return json_pack("{s:s, s:s, s:s, s:s, s:s}", "cluster", acct_str0(r, "cluster"), "account",
                     acct_str0(r, "account"), "user_name", acct_str0(r, "user_name"), "partition",
                     acct_str0(r, "partition"), "parent_account", acct_str0(r, "parent_account"));
}

/* ---- add ------------------------------------------------------------------ */

static json_t *acct_req_list(const json_t *req, const char *key)
{
    const json_t *v = json_object_get(req, key);
    if (json_is_string(v))
        return json_pack("[O]", v);
    return json_is_array(v) ? json_incref((json_t *)v) : json_array();
}

static json_t *acct_cluster_names(const loom_acct_ctx_t *a, const json_t *req, int *rc,
                                  loom_err_t *err)
{
    json_t *given = acct_req_list(req, "clusters");
    if (json_array_size(given)) {
        *rc = 0;
        return given;
    }
    json_decref(given);
    json_t *rows = acct_list_rows(a, LOOM_ACCT_CLUSTER, NULL, rc, err);
    json_t *names = json_array();
    size_t i;
    json_t *r;
    json_array_foreach(rows, i, r) json_array_append(names, json_object_get(r, "name"));
    json_decref(rows);
    return names;
}

static int acct_exists(const loom_acct_ctx_t *a, loom_acct_ent_t ent, const char *name,
                       loom_err_t *err)
{
    int rc;
    json_t *rows = acct_list_rows(a, ent, json_pack("{s:s}", "name", name), &rc, err);
    if (!rows)
        return rc;
    rc = json_array_size(rows) > 0;
    json_decref(rows);
    return rc;
}

/* Slurm refuses a QOS that can preempt itself through its preempt lists. */
static int acct_preempt_loop(const loom_acct_ctx_t *a, loom_err_t *err)
{
    int rc;
    json_t *rows = acct_list_rows(a, LOOM_ACCT_QOS, NULL, &rc, err);
    json_t *graph = json_object();
    size_t i, n = json_array_size(rows);
    json_t *r;
    json_array_foreach(rows, i, r)
        json_object_set_new(graph, acct_str0(r, "name"), json_string(acct_str0(r, "preempt")));
    for (i = 0; rows && i < n && rc >= 0; i++) {
        const char *start = acct_str0(json_array_get(rows, i), "name");
        loom_strv_t todo = LOOM_STRV_INIT;
        loom_strv_split(&todo, acct_str0(json_array_get(rows, i), "preempt"), ",");
        for (size_t k = 0; k < todo.n && k < 4096 && rc >= 0; k++) {
            if (strcmp(todo.v[k], start) == 0)
                rc = loom_errf(err, -LOOM_EINVAL_QOS, "QOS Preemption loop detected");
            else if (loom_strv_find(&todo, todo.v[k]) == (long)k)
                loom_strv_split(&todo, json_string_value(json_object_get(graph, todo.v[k])) ?: "",
                                ",");
        }
        loom_strv_free(&todo);
    }
    json_decref(graph);
    json_decref(rows);
    return rc < 0 ? rc : 0;
}

static int acct_add_qos(const loom_acct_ctx_t *a, loom_acct_ent_t ent, const json_t *req,
                        json_t *out, loom_err_t *err)
{
    json_t *names = acct_req_list(req, "names"), *added = json_array();
    const json_t *set = json_object_get(req, "set");
    size_t i;
    json_t *n;
    int rc = 0;
    json_array_foreach(names, i, n)
    {
        const char *name = json_string_value(n);
        if (!name || (rc = acct_exists(a, ent, name, err)) != 0)
            continue;
        int64_t id = acct_next_id(a, ent, err);
        json_t *rec = json_pack("{s:s, s:I, s:s, s:i, s:i, s:s, s:s, s:I}", "name", name, "id",
                                (json_int_t)id, "description", name, "grace_time", 0, "priority", 0,
                                "preempt_mode", "cluster", "usage_factor", "1.000000", "created",
                                (json_int_t)a->now);
        rc = id < 0 ? (int)id : acct_insert_with(a, ent, rec, set, NULL, false, err);
        json_decref(rec);
        if (rc < 0)
            break;
        json_array_append(added, n);
    }
    if (rc >= 0)
        rc = acct_preempt_loop(a, err);
    json_object_set_new(out, "added", added);
    json_decref(names);
    return rc < 0 ? rc : 0;
}

static int acct_add_cluster(const loom_acct_ctx_t *a, loom_acct_ent_t ent, const json_t *req,
                            json_t *out, loom_err_t *err)
{
    json_t *names = acct_req_list(req, "names"), *added = json_array();
    size_t i;
    json_t *n;
    int rc = 0;
    json_array_foreach(names, i, n)
    {
        const char *name = json_string_value(n);
        if (!name || (rc = acct_exists(a, ent, name, err)) != 0)
            continue;
        json_t *rec = json_pack("{s:s, s:I}", "name", name, "created", (json_int_t)a->now);
        rc = loom_store_acct_insert(a->st, ent, rec, err);
        json_decref(rec);
        if (rc == 0)
            rc = acct_add_cluster_assocs(a, name, json_object_get(req, "set"), err);
        if (rc < 0)
            break;
        json_array_append(added, n);
    }
    json_object_set_new(out, "added", added);
    json_decref(names);
    return rc < 0 ? rc : 0;
}

/* slurmctld's registration: add the cluster (with its root associations)
 * when it is not there, as slurmdbd 22.05 does, then record where its
 * controller listens. */
static int acct_register_op(const loom_acct_ctx_t *a, loom_acct_ent_t ent, const json_t *req,
                            json_t *out, loom_err_t *err)
{
    const char *name = acct_str0(req, "cluster");
    int rc = acct_exists(a, ent, name, err);
    if (rc == 0) {
        json_t *names = json_pack("{s:[s]}", "names", name);
        rc = acct_add_cluster(a, ent, names, out, err);
        json_decref(names);
    }
    if (rc < 0)
        return rc;
    json_t *where = json_pack("{s:s}", "name", name);
    json_t *set =
        json_pack("{s:s, s:I, s:I}", "control_host", acct_str0(req, "control_host"), "control_port",
                  json_integer_value(json_object_get(req, "control_port")), "rpc",
                  json_integer_value(json_object_get(req, "rpc")));
    rc = loom_store_acct_update(a->st, ent, where, set, err);
    json_decref(where);
    json_decref(set);
    return rc < 0 ? rc : 0;
}

int loom_acct_register(const loom_acct_ctx_t *a, const json_t *req, json_t *out, loom_err_t *err)
{
    if (!json_is_string(json_object_get(req, "cluster")) ||
        !*json_string_value(json_object_get(req, "cluster")))
        return loom_errf(err, -LOOM_EPROTO, "registration needs a cluster name");
    return acct_txn(a, acct_register_op, LOOM_ACCT_CLUSTER, req, out, err);
}

/* The account row of a new account: Slurm's defaults for description and
 * organization (the name, and the parent unless that is root). */
static int acct_new_account(const loom_acct_ctx_t *a, const char *name, const char *parent,
                            const json_t *set, loom_err_t *err)
{
    const char *descr = acct_str(set, "description");
    const char *org = acct_str(set, "organization");
    json_t *rec = json_pack("{s:s, s:s, s:s, s:I}", "name", name, "description",
                            descr ? descr : name, "organization",
                            org                      ? org
                            : strcmp(parent, "root") ? parent
                                                     : name,
                            "created", (json_int_t)a->now);
    int rc = loom_store_acct_insert(a->st, LOOM_ACCT_ACCOUNT, rec, err);
    json_decref(rec);
    return rc;
}

static const char *const acct_account_not_assoc[] = {"description", "organization", "parent", NULL};

static int acct_add_account_assoc(const loom_acct_ctx_t *a, const char *cluster, const char *name,
                                  const char *parent, const json_t *set, json_t *assocs,
                                  loom_err_t *err)
{
    int rc;
    json_t *have = acct_get_assoc(a, cluster, name, "", "", &rc, err);
    if (have || rc < 0) {
        json_decref(have);
        return rc < 0 ? rc : 0;
    }
    json_t *p = acct_get_assoc(a, cluster, parent, "", "", &rc, err);
    if (!p)
        return rc < 0
                   ? rc
                   : loom_errf(err, -LOOM_EINVAL_ACCOUNT,
                               "Parent account '%s' doesn't exist on cluster %s", parent, cluster);
    json_decref(p);
    json_t *rec = acct_assoc_key(cluster, name, "", "");
    json_object_set_new(rec, "parent_account", json_string(parent));
    json_array_append_new(assocs, acct_assoc_brief(rec));
    json_t *aset = json_deep_copy(set ? set : json_object());
    for (const char *const *k = acct_account_not_assoc; *k; k++)
        json_object_del(aset, *k);
    rc = acct_add_assoc_rec(a, rec, aset, err);
    json_decref(aset);
    return rc;
}

static int acct_add_account(const loom_acct_ctx_t *a, loom_acct_ent_t ent, const json_t *req,
                            json_t *out, loom_err_t *err)
{
    int rc;
    json_t *names = acct_req_list(req, "names"), *clusters = acct_cluster_names(a, req, &rc, err);
    json_t *added = json_array(), *assocs = json_array();
    const json_t *set = json_object_get(req, "set");
    const char *parent = acct_str(set, "parent") ? acct_str(set, "parent") : "root";
    size_t i, k;
    json_t *n, *c;
    json_array_foreach(names, i, n)
    {
        const char *name = json_string_value(n);
        if (rc < 0 || !name)
            break;
        if ((rc = acct_exists(a, ent, name, err)) == 0 &&
            (rc = acct_new_account(a, name, parent, set, err)) == 0)
            json_array_append(added, n);
        json_array_foreach(clusters, k, c)
        {
            if (rc < 0)
                break;
            rc = acct_add_account_assoc(a, json_string_value(c), name, parent, set, assocs, err);
        }
    }
    json_object_set_new(out, "added", added);
    json_object_set_new(out, "assocs", assocs);
    json_decref(names);
    json_decref(clusters);
    return rc < 0 ? rc : 0;
}

static const char *const acct_user_not_assoc[] = {"default_account", "admin_level", NULL};

static int acct_new_user(const loom_acct_ctx_t *a, const char *name, const json_t *accounts,
                         const json_t *set, loom_err_t *err)
{
    const char *def = acct_str(set, "default_account");
    const char *level = acct_str(set, "admin_level");
    json_t *rec = json_pack("{s:s, s:s, s:s, s:I}", "name", name, "default_account",
                            def ? def : json_string_value(json_array_get(accounts, 0)),
                            "admin_level", level ? level : "None", "created", (json_int_t)a->now);
    int rc = loom_store_acct_insert(a->st, LOOM_ACCT_USER, rec, err);
    json_decref(rec);
    return rc;
}

/* Every account named must have its own association on every cluster. */
static int acct_check_accounts(const loom_acct_ctx_t *a, const json_t *accounts,
                               const json_t *clusters, loom_err_t *err)
{
    size_t i, k;
    json_t *n, *c;
    int rc = 0;
    json_array_foreach(accounts, i, n)
    {
        json_array_foreach(clusters, k, c)
        {
            json_t *have =
                acct_get_assoc(a, json_string_value(c), json_string_value(n), "", "", &rc, err);
            if (rc < 0)
                return rc;
            if (!have)
                return loom_errf(err, -LOOM_EINVAL_ACCOUNT, "This account '%s' doesn't exist.",
                                 json_string_value(n));
            json_decref(have);
        }
    }
    return 0;
}

static int acct_add_user_assoc(const loom_acct_ctx_t *a, const char *cluster, const char *acct,
                               const char *user, const char *part, const json_t *set,
                               json_t *assocs, loom_err_t *err)
{
    int rc;
    json_t *have = acct_get_assoc(a, cluster, acct, user, part, &rc, err);
    if (have || rc < 0) {
        json_decref(have);
        return rc < 0 ? rc : 0;
    }
    json_t *rec = acct_assoc_key(cluster, acct, user, part);
    json_object_set_new(rec, "parent_account", json_string(acct));
    json_array_append_new(assocs, acct_assoc_brief(rec));
    json_t *aset = json_deep_copy(set ? set : json_object());
    for (const char *const *k = acct_user_not_assoc; *k; k++)
        json_object_del(aset, *k);
    rc = acct_add_assoc_rec(a, rec, aset, err);
    json_decref(aset);
    return rc;
}

static int acct_add_user_all(const loom_acct_ctx_t *a, const char *user, const json_t *accounts,
                             const json_t *clusters, const json_t *parts, const json_t *set,
                             json_t *assocs, loom_err_t *err)
{
    size_t i, k, p;
    json_t *n, *c, *pt;
    int rc = 0;
    json_array_foreach(clusters, k, c)
    {
        json_array_foreach(accounts, i, n)
        {
            json_array_foreach(parts, p, pt)
            {
                rc = acct_add_user_assoc(a, json_string_value(c), json_string_value(n), user,
                                         json_string_value(pt) ?: "", set, assocs, err);
                if (rc < 0)
                    return rc;
            }
        }
    }
    return 0;
}

static int acct_add_user(const loom_acct_ctx_t *a, loom_acct_ent_t ent, const json_t *req,
                         json_t *out, loom_err_t *err)
{
    int rc;
    json_t *names = acct_req_list(req, "names"), *clusters = acct_cluster_names(a, req, &rc, err);
    json_t *accounts = acct_req_list(req, "accounts"), *parts = acct_req_list(req, "partitions");
    json_t *added = json_array(), *assocs = json_array();
    const json_t *set = json_object_get(req, "set");
    if (json_array_size(parts) == 0)
        json_array_append_new(parts, json_string(""));
    if (rc >= 0 && json_array_size(accounts) == 0 && acct_str(set, "default_account"))
        json_array_append_new(accounts, json_string(acct_str(set, "default_account")));
    if (rc >= 0 && json_array_size(accounts) == 0)
        rc = loom_errf(err, -LOOM_EINVAL_ACCOUNT, "Need name of account to add user to.");
    if (rc >= 0)
        rc = acct_check_accounts(a, accounts, clusters, err);
    size_t i;
    json_t *n;
    json_array_foreach(names, i, n)
    {
        const char *name = json_string_value(n);
        if (rc < 0 || !name)
            break;
        if ((rc = acct_exists(a, ent, name, err)) == 0 &&
            (rc = acct_new_user(a, name, accounts, set, err)) == 0)
            json_array_append(added, n);
        if (rc >= 0)
            rc = acct_add_user_all(a, name, accounts, clusters, parts, set, assocs, err);
    }
    json_object_set_new(out, "added", added);
    json_object_set_new(out, "assocs", assocs);
    json_decref(names);
    json_decref(clusters);
    json_decref(accounts);
    json_decref(parts);
    return rc < 0 ? rc : 0;
}

static int acct_do_add(const loom_acct_ctx_t *a, loom_acct_ent_t ent, const json_t *req,
                       json_t *out, loom_err_t *err)
{
    switch (ent) {
    case LOOM_ACCT_QOS:
        return acct_add_qos(a, ent, req, out, err);
    case LOOM_ACCT_CLUSTER:
        return acct_add_cluster(a, ent, req, out, err);
    case LOOM_ACCT_ACCOUNT:
        return acct_add_account(a, ent, req, out, err);
    case LOOM_ACCT_USER:
        return acct_add_user(a, ent, req, out, err);
    default:
        return loom_errf(err, -LOOM_ENOT_SUPPORTED, "add %s is not supported",
                         loom_acct_ent_name(ent));
    }
}

int loom_acct_add(const loom_acct_ctx_t *a, loom_acct_ent_t ent, const json_t *req, json_t *out,
                  loom_err_t *err)
{
    return acct_txn(a, acct_do_add, ent, req, out, err);
}

/* ---- modify --------------------------------------------------------------- */

/* Does s appear in the request list (absent or empty list: anything)? */
static bool acct_listed(const json_t *where, const char *key, const char *s)
{
    const json_t *list = json_object_get(where, key);
    if (json_is_string(list))
        return strcmp(json_string_value(list), s) == 0;
    if (!json_is_array(list) || json_array_size(list) == 0)
        return true;
    size_t i;
    json_t *v;
    json_array_foreach(list, i, v)
    {
        if (json_is_string(v) && strcmp(json_string_value(v), s) == 0)
            return true;
    }
    return false;
}

/* The associations an operation on ent with `where` addresses. */
static bool acct_assoc_match(loom_acct_ent_t ent, const json_t *where, const json_t *r)
{
    const char *user = acct_str0(r, "user_name"), *acct = acct_str0(r, "account");
    const char *cluster = acct_str0(r, "cluster"), *part = acct_str0(r, "partition");
    switch (ent) {
    case LOOM_ACCT_CLUSTER:
        return acct_listed(where, "names", cluster) && strcmp(acct, "root") == 0 && !*user;
    case LOOM_ACCT_ACCOUNT:
        return acct_listed(where, "names", acct) && acct_listed(where, "clusters", cluster) &&
               !*user && !*part;
    case LOOM_ACCT_USER:
        return *user && acct_listed(where, "names", user) && acct_listed(where, "accounts", acct) &&
               acct_listed(where, "clusters", cluster) && acct_listed(where, "partitions", part);
    default: /* associations */
        return acct_listed(where, "clusters", cluster) && acct_listed(where, "accounts", acct) &&
               acct_listed(where, "users", user) && acct_listed(where, "partitions", part);
    }
}

/* Rows of ent itself named by where.names (all rows when no names). */
static json_t *acct_named_rows(const loom_acct_ctx_t *a, loom_acct_ent_t ent, const json_t *where,
                               int *rc, loom_err_t *err)
{
    json_t *w = json_object();
    acct_where_list(w, "name", json_object_get(where, "names"));
    return acct_list_rows(a, ent, w, rc, err);
}

static bool acct_set_has(const json_t *set, const char *const *cols, bool want)
{
    const char *col;
    json_t *v;
    json_object_foreach((json_t *)set, col, v)
    {
        if (acct_in(cols, col) == want)
            return true;
    }
    return false;
}

/* Update the entity rows themselves (own columns); names go to out[key]. */
static int acct_mod_rows(const loom_acct_ctx_t *a, loom_acct_ent_t ent, const json_t *where,
                         const json_t *set, const char *const *own, json_t *names, loom_err_t *err)
{
    int rc;
    json_t *rows = acct_named_rows(a, ent, where, &rc, err);
    size_t i;
    json_t *r;
    json_array_foreach(rows, i, r)
    {
        if ((rc = acct_update_rec(a, ent, r, set, own, false, err)) < 0)
            break;
        json_array_append(names, json_object_get(r, "name"));
    }
    json_decref(rows);
    return rc < 0 ? rc : 0;
}

/* The user associations below r that inherit a field changed by set (Slurm
 * reports them as modified too; accounts below r are not listed). */
static void acct_add_inheritors(json_t *map, json_t *rows, json_t *r, const json_t *set,
                                json_t *touched)
{
    size_t i;
    json_t *d;
    json_array_foreach(rows, i, d)
    {
        if (d == r || !*acct_str0(d, "user_name") || !acct_is_below(map, d, r))
            continue;
        for (const char *const *f = acct_inherited; *f; f++) {
            json_t *own = json_object_get(d, *f);
            if (json_object_get(set, *f) && (!own || json_is_null(own))) {
                json_array_append_new(touched, acct_assoc_brief(d));
                break;
            }
        }
    }
}

static int acct_mod_assocs(const loom_acct_ctx_t *a, loom_acct_ent_t ent, const json_t *where,
                           const json_t *set, const char *const *own, json_t *touched,
                           loom_err_t *err)
{
    int rc;
    json_t *rows = acct_all_assocs(a, &rc, err);
    json_t *map = rows ? acct_assoc_map(rows) : NULL;
    size_t i;
    json_t *r;
    json_array_foreach(rows, i, r)
    {
        if (!acct_assoc_match(ent, where, r))
            continue;
        if ((rc = acct_update_rec(a, LOOM_ACCT_ASSOC, r, set, own, true, err)) < 0)
            break;
        json_array_append_new(touched, acct_assoc_brief(r));
        acct_add_inheritors(map, rows, r, set, touched);
    }
    json_decref(map);
    json_decref(rows);
    return rc < 0 ? rc : 0;
}

static int acct_do_modify(const loom_acct_ctx_t *a, loom_acct_ent_t ent, const json_t *req,
                          json_t *out, loom_err_t *err)
{
    const json_t *where = json_object_get(req, "where"), *set = json_object_get(req, "set");
    const char *const *own = ent == LOOM_ACCT_ACCOUNT ? acct_account_own
                             : ent == LOOM_ACCT_USER  ? acct_user_own
                                                      : NULL;
    if (!json_is_object(set) || json_object_size(set) == 0)
        return loom_errf(err, -LOOM_EPROTO, "modify needs 'set'");
    int rc = 0;
    if (ent == LOOM_ACCT_QOS || (own && acct_set_has(set, own, true))) {
        json_t *names = json_array();
        json_object_set_new(out, ent == LOOM_ACCT_QOS ? "modified" : "names", names);
        rc = acct_mod_rows(a, ent, where, set, own, names, err);
        if (rc >= 0 && ent == LOOM_ACCT_QOS)
            rc = acct_preempt_loop(a, err);
    }
    if (rc >= 0 && ent != LOOM_ACCT_QOS && (!own || acct_set_has(set, own, false))) {
        json_t *touched = json_array();
        json_object_set_new(out, "assocs", touched);
        rc = acct_mod_assocs(a, ent, where, set, own ? own : acct_account_not_assoc, touched, err);
    }
    return rc;
}

int loom_acct_modify(const loom_acct_ctx_t *a, loom_acct_ent_t ent, const json_t *req, json_t *out,
                     loom_err_t *err)
{
    return acct_txn(a, acct_do_modify, ent, req, out, err);
}

/* ---- delete --------------------------------------------------------------- */

static int acct_delete_assoc(const loom_acct_ctx_t *a, const json_t *r, loom_err_t *err)
{
    json_t *key = acct_key_of(LOOM_ACCT_ASSOC, r);
    int rc = loom_store_acct_delete(a->st, LOOM_ACCT_ASSOC, key, err);
    json_decref(key);
    return rc;
}

/* Slurm refuses to remove associations that still have jobs in the queue. */
static int acct_check_jobs(const loom_acct_ctx_t *a, const char *cluster, const char *account,
                           const char *user, loom_err_t *err)
{
    loom_sbuf_t states = LOOM_SBUF_INIT;
    for (const char *const *s = acct_active_states; *s; s++)
        loom_sbuf_addf(&states, "%s%s", states.len ? "," : "", *s);
    loom_store_jobq_t q = {.cluster = cluster,
                           .account = account,
                           .user = *user ? user : NULL,
                           .state = loom_sbuf_str(&states),
                           .limit = 1};
    json_t *jobs = NULL;
    int rc = loom_store_job_query(a->st, &q, &jobs, err);
    loom_sbuf_free(&states);
    if (rc == 0 && json_array_size(jobs) > 0)
        rc = loom_errf(err, -LOOM_EACCESS, "Job(s) active, cancel job(s) before remove");
    json_decref(jobs);
    return rc;
}

/* Remove the matching associations and every association below them. */
static int acct_delete_tree(const loom_acct_ctx_t *a, loom_acct_ent_t ent, const json_t *where,
                            json_t *removed, loom_err_t *err)
{
    int rc;
    json_t *rows = acct_all_assocs(a, &rc, err);
    json_t *map = rows ? acct_assoc_map(rows) : NULL, *doomed = json_array();
    size_t i, k;
    json_t *r, *top;
    json_array_foreach(rows, i, r)
    {
        if (acct_assoc_match(ent, where, r))
            json_array_append(doomed, r);
    }
    json_array_foreach(rows, i, r)
    {
        json_array_foreach(doomed, k, top)
        {
            if (r != top && acct_is_below(map, r, top)) {
                json_array_append(doomed, r);
                break;
            }
        }
    }
    json_array_foreach(doomed, i, r)
    {
        rc = acct_check_jobs(a, acct_str0(r, "cluster"), acct_str0(r, "account"),
                             acct_str0(r, "user_name"), err);
        if (rc >= 0)
            rc = acct_delete_assoc(a, r, err);
        if (rc < 0)
            break;
        json_array_append_new(removed, acct_assoc_brief(r));
    }
    json_decref(doomed);
    json_decref(map);
    json_decref(rows);
    return rc < 0 ? rc : 0;
}

/* Remove a name from the comma lists of col in every row of ent. */
static int acct_drop_from_lists(const loom_acct_ctx_t *a, loom_acct_ent_t ent, const char *col,
                                const char *name, loom_err_t *err)
{
    int rc;
    json_t *rows = acct_list_rows(a, ent, NULL, &rc, err);
    json_t *set = json_pack("{s:{s:s, s:[s]}}", col, "op", "-", "items", name);
    size_t i;
    json_t *r;
    json_array_foreach(rows, i, r)
    {
        if (json_object_get(r, col) && (rc = acct_update_rec(a, ent, r, set, NULL, false, err)) < 0)
            break;
    }
    json_decref(set);
    json_decref(rows);
    return rc < 0 ? rc : 0;
}

/* A QOS that is some association's own default cannot go (Slurm lists them). */
static int acct_qos_in_use(const loom_acct_ctx_t *a, const json_t *names, json_t *out,
                           loom_err_t *err)
{
    int rc;
    json_t *rows = acct_all_assocs(a, &rc, err), *users = json_array();
    json_t *w = json_pack("{s:O}", "names", names);
    size_t i;
    json_t *r;
    json_array_foreach(rows, i, r)
    {
        const char *def = acct_str(r, "default_qos");
        if (def && acct_listed(w, "names", def))
            json_array_append_new(users, json_pack("{s:s, s:s, s:s, s:s}", "default_qos", def,
                                                   "cluster", acct_str0(r, "cluster"), "account",
                                                   acct_str0(r, "account"), "user_name",
                                                   acct_str0(r, "user_name")));
    }
    json_decref(w);
    json_decref(rows);
    if (json_array_size(users)) {
        json_object_set_new(out, "default_of", users);
        return loom_errf(err, -LOOM_EINVAL_QOS,
                         "Associations listed below have these as their Default QOS.");
    }
    json_decref(users);
    return rc < 0 ? rc : 0;
}

static int acct_del_qos(const loom_acct_ctx_t *a, const json_t *where, json_t *out, loom_err_t *err)
{
    int rc;
    json_t *rows = acct_named_rows(a, LOOM_ACCT_QOS, where, &rc, err), *names = json_array();
    size_t i;
    json_t *r;
    json_array_foreach(rows, i, r) json_array_append(names, json_object_get(r, "name"));
    json_decref(rows);
    json_t *detail = json_object();
    if (rc >= 0 && json_array_size(names))
        rc = acct_qos_in_use(a, names, detail, err);
    json_array_foreach(names, i, r)
    {
        if (rc < 0)
            break;
        json_t *key = json_pack("{s:O}", "name", r);
        rc = loom_store_acct_delete(a->st, LOOM_ACCT_QOS, key, err);
        json_decref(key);
        if (rc >= 0)
            rc = acct_drop_from_lists(a, LOOM_ACCT_ASSOC, "qos", json_string_value(r), err);
        if (rc >= 0)
            rc = acct_drop_from_lists(a, LOOM_ACCT_QOS, "preempt", json_string_value(r), err);
    }
    json_object_update(out, detail);
    json_decref(detail);
    json_object_set_new(out, "deleted", names);
    return rc < 0 ? rc : 0;
}

/* Delete the entity rows named, after their associations went. */
static int acct_del_rows(const loom_acct_ctx_t *a, loom_acct_ent_t ent, const json_t *where,
                         json_t *names, loom_err_t *err)
{
    int rc;
    json_t *rows = acct_named_rows(a, ent, where, &rc, err);
    size_t i;
    json_t *r;
    json_array_foreach(rows, i, r)
    {
        json_t *key = acct_key_of(ent, r);
        rc = loom_store_acct_delete(a->st, ent, key, err);
        json_decref(key);
        if (rc < 0)
            break;
        json_array_append(names, json_object_get(r, "name"));
        if (ent == LOOM_ACCT_ACCOUNT) { /* users lose it as their default */
            json_t *w = json_pack("{s:O}", "default_account", json_object_get(r, "name"));
            json_t *s = json_pack("{s:n}", "default_account");
            rc = loom_store_acct_update(a->st, LOOM_ACCT_USER, w, s, err);
            json_decref(w);
            json_decref(s);
        }
    }
    json_decref(rows);
    return rc < 0 ? rc : 0;
}

static int acct_do_delete(const loom_acct_ctx_t *a, loom_acct_ent_t ent, const json_t *req,
                          json_t *out, loom_err_t *err)
{
    const json_t *where = json_object_get(req, "where");
    if (ent == LOOM_ACCT_QOS)
        return acct_del_qos(a, where, out, err);
    json_t *removed = json_array(), *names = json_array();
    json_object_set_new(out, "assocs", removed);
    json_object_set_new(out, "deleted", names);
    int rc = acct_delete_tree(a, ent, where, removed, err);
    /* Only part of a user or account (some accounts, clusters) leaves the entity. */
    bool partial = json_object_get(where, "accounts") || json_object_get(where, "clusters") ||
                   json_object_get(where, "partitions");
    if (rc >= 0 && !partial)
        rc = acct_del_rows(a, ent, where, names, err);
    return rc;
}

int loom_acct_delete(const loom_acct_ctx_t *a, loom_acct_ent_t ent, const json_t *req, json_t *out,
                     loom_err_t *err)
{
    if (ent == LOOM_ACCT_ASSOC)
        return loom_errf(err, -LOOM_ENOT_SUPPORTED, "delete assoc is not supported");
    return acct_txn(a, acct_do_delete, ent, req, out, err);
}

/* ---- list ----------------------------------------------------------------- */

static void acct_fill_effective(json_t *map, json_t *r, json_t *copy)
{
    for (const char *const *f = acct_inherited; *f; f++) {
        json_t *v = acct_effective(map, r, *f);
        if (v)
            json_object_set(copy, *f, v);
    }
}

static int acct_list_assocs(const loom_acct_ctx_t *a, const json_t *where, json_t *out,
                            loom_err_t *err)
{
    int rc;
    json_t *rows = acct_all_assocs(a, &rc, err);
    if (!rows)
        return rc;
    json_t *map = acct_assoc_map(rows), *list = json_array();
    size_t i;
    json_t *r;
    json_array_foreach(rows, i, r)
    {
        if (!acct_assoc_match(LOOM_ACCT_ASSOC, where, r))
            continue;
        json_t *copy = json_deep_copy(r);
        acct_fill_effective(map, r, copy);
        json_array_append_new(list, copy);
    }
    json_object_set_new(out, "assocs", list);
    json_decref(map);
    json_decref(rows);
    return 0;
}

int loom_acct_list(const loom_acct_ctx_t *a, loom_acct_ent_t ent, const json_t *req, json_t *out,
                   loom_err_t *err)
{
    const json_t *where = json_object_get(req, "where");
    if (ent == LOOM_ACCT_ASSOC)
        return acct_list_assocs(a, where, out, err);
    int rc;
    json_t *rows = acct_named_rows(a, ent, where, &rc, err);
    if (!rows)
        return rc;
    static const char *const keys[] = {"clusters", "accounts", "users", "qos", "assocs"};
    json_object_set_new(out, keys[ent], rows);
    return 0;
}

int loom_acct_user_level(const loom_acct_ctx_t *a, const char *user)
{
    int rc;
    json_t *rows = acct_list_rows(a, LOOM_ACCT_USER, json_pack("{s:s}", "name", user), &rc, NULL);
    const char *level = acct_str0(json_array_get(rows, 0), "admin_level");
    int lvl = strcasecmp(level, "Administrator") == 0 ? 2 : strcasecmp(level, "Operator") == 0;
    json_decref(rows);
    return lvl;
}
