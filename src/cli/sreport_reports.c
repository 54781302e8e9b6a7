/*
 * sreport_reports.c - sreport's reports as rows (see sreport.h): cluster
 * Utilization from dbd.report.cluster; user TopUsage and cluster
 * UserUtilizationByAccount from dbd.report.users; cluster
 * AccountUtilizationByUser from dbd.report.users and the association tree
 * (dbd.assoc.list).
 *
 * Rules seen in sreport 22.05: users are sorted by their usage of the first
 * TRES, most first, TopCount per cluster; "group" joins a user's accounts in
 * association order; the account tree lists an account (its subtree's sum),
 * its users by name, then its sub-accounts by name, leaving out what has no
 * usage; with users= only the matching user lines are shown, in association
 * order.
 */
#include "cli/sreport.h"
#include "cli/cli_format.h"
#include "common/xalloc.h"

#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- loomdbd ----------------------------------------------------------------------- */

static json_t *sr_window(const sr_cond_t *c, const char *cluster)
{
    json_t *body =
        json_pack("{s:I, s:I}", "start", (json_int_t)c->start, "end", (json_int_t)c->end);
    if (cluster)
        json_object_set_new(body, "cluster", json_string(cluster));
    else
        json_object_set_new(body, "all_clusters", json_true());
    return body;
}

/* One request per cluster named (or one for all); the replies' `key` arrays joined. */
static int sr_fetch(sr_t *s, const sr_cond_t *c, const char *type, const char *key,
                    const json_t *extra, json_t *all)
{
    size_t n = c->all_clusters ? 1 : c->clusters.n;
    for (size_t i = 0; i < n; i++) {
        json_t *body = sr_window(c, c->all_clusters ? NULL : c->clusters.v[i]);
        if (extra)
            json_object_update(body, (json_t *)extra);
        json_t *reply = NULL;
        loom_err_t err = {0};
        int rc = loom_dbd_call(&s->cli, &s->rpc, type, body, &reply, &err);
        json_decref(body);
        if (rc < 0) {
            fprintf(stderr, "sreport: error: Problem talking to the database: %s\n", err.msg);
            json_decref(reply);
            return -1;
        }
        json_array_extend(all, json_object_get(reply, key));
        json_decref(reply);
    }
    return 0;
}

static bool sr_tres_wanted(const sr_t *s, const char *name)
{
    if (s->tres_all)
        return true;
    if (!s->tres.n)
        return !strcmp(name, "cpu");
    for (size_t i = 0; i < s->tres.n; i++)
        if (!strcasecmp(s->tres.v[i], name))
            return true;
    return false;
}

static int sr_tres_cmp(const void *a, const void *b)
{
    const char *x = *(const char *const *)a, *y = *(const char *const *)b;
    int rx = sr_tres_rank(x), ry = sr_tres_rank(y);
    return rx != ry ? rx - ry : strcmp(x, y);
}

/* The wanted TRES names among obj's keys (or a list's "name"s), in display order. */
static size_t sr_tres_names(const sr_t *s, const json_t *obj, const char **out, size_t max)
{
    size_t n = 0;
    const char *key;
    json_t *v;
    size_t i;
    if (json_is_array(obj)) {
        json_array_foreach(obj, i, v)
        {
            key = json_string_value(json_object_get(v, "name"));
            if (key && sr_tres_wanted(s, key) && n < max)
                out[n++] = key;
        }
    } else {
        json_object_foreach((json_t *)obj, key, v)
        {
            if (sr_tres_wanted(s, key) && n < max)
                out[n++] = key;
        }
    }
    qsort(out, n, sizeof(*out), sr_tres_cmp);
    return n;
}

/* ---- cluster Utilization ------------------------------------------------------------- */

static void sr_util_row(sr_rows_t *rows, const char *cluster, const json_t *t)
{
    static const struct {
        const char *key;
        sr_fid_t id;
    } map[] = {{"alloc", SR_F_ALLOC},      {"down", SR_F_DOWN},    {"pdown", SR_F_PDOWN},
               {"idle", SR_F_IDLE},        {"planned", SR_F_PLAN}, {"over", SR_F_OVER},
               {"reported", SR_F_REPORTED}};
    sr_row_t *r = sr_rows_add(rows);
    char num[32];
    snprintf(num, sizeof(num), "%lld", (long long)loom_ji(t, "count", 0));
    r->text[SR_F_CLUSTER] = sr_rows_str(rows, cluster);
    r->text[SR_F_TRES_NAME] = sr_rows_str(rows, loom_js_or(t, "name", ""));
    r->text[SR_F_TRES_CNT] = sr_rows_str(rows, num);
    for (size_t i = 0; i < sizeof(map) / sizeof(map[0]); i++)
        r->secs[map[i].id] = loom_ji(t, map[i].key, 0);
    r->total = r->secs[SR_F_REPORTED];
}

int sr_report_util(sr_t *s, const sr_cond_t *c, sr_rows_t *rows)
{
    json_t *clusters = json_array();
    int rc = sr_fetch(s, c, "dbd.report.cluster", "clusters", NULL, clusters);
    size_t i, k;
    json_t *cl, *t;
    json_array_foreach(clusters, i, cl)
    {
        const json_t *tres = json_object_get(cl, "tres");
        const char *names[64];
        size_t n = sr_tres_names(s, tres, names, 64);
        for (k = 0; k < n; k++)
            json_array_foreach(tres, i, t)
            {
                if (!strcmp(loom_js_or(t, "name", ""), names[k]))
                    sr_util_row(rows, loom_js_or(cl, "name", ""), t);
            }
    }
    json_decref(clusters);
    return rc;
}

/* ---- per-user usage -------------------------------------------------------------------- */

/* Reported seconds by "cluster\ttres", for percentages. */
static int sr_totals(sr_t *s, const sr_cond_t *c, json_t *totals)
{
    if (s->tf != SR_TF_PERCENT && s->tf != SR_TF_SECPER && s->tf != SR_TF_MINPER &&
        s->tf != SR_TF_HOURPER)
        return 0;
    json_t *clusters = json_array();
    int rc = sr_fetch(s, c, "dbd.report.cluster", "clusters", NULL, clusters);
    size_t i, k;
    json_t *cl, *t;
    json_array_foreach(clusters, i, cl)
    {
        json_array_foreach(json_object_get(cl, "tres"), k, t)
        {
            char key[256];
            snprintf(key, sizeof(key), "%s\t%s", loom_js_or(cl, "name", ""),
                     loom_js_or(t, "name", ""));
            json_object_set_new(totals, key, json_integer(loom_ji(t, "reported", 0)));
        }
    }
    json_decref(clusters);
    return rc;
}

static void sr_proper(const char *user, char *buf, size_t len)
{
    struct passwd *pw = getpwnam(user);
    snprintf(buf, len, "%s", pw && pw->pw_gecos ? pw->pw_gecos : "");
    char *comma = strchr(buf, ',');
    if (comma)
        *comma = '\0';
}

/* The TRES of a user's lines: those asked for with -T (a user who used
 * none of one still gets its line, with 0, as 22.05 prints it), cpu by
 * default, or with ALL every one the user used. */
static size_t sr_user_tres(const sr_t *s, const json_t *used, const char **out, size_t max)
{
    if (s->tres_all)
        return sr_tres_names(s, used, out, max);
    size_t n = 0;
    if (!s->tres.n && max)
        out[n++] = "cpu";
    for (size_t i = 0; i < s->tres.n && n < max; i++)
        out[n++] = s->tres.v[i];
    qsort(out, n, sizeof(*out), sr_tres_cmp);
    return n;
}

/* Lines of one usage entry ({cluster, user, account, tres}): one per wanted TRES. */
static void sr_user_rows(sr_t *s, sr_rows_t *rows, const json_t *e, const json_t *totals,
                         const char *account, int indent)
{
    const char *names[64];
    size_t n = sr_user_tres(s, json_object_get(e, "tres"), names, 64);
    const char *user = loom_js_or(e, "user", "");
    char proper[256] = "";
    if (*user)
        sr_proper(user, proper, sizeof(proper));
    for (size_t k = 0; k < n; k++) {
        sr_row_t *r = sr_rows_add(rows);
        char key[256];
        snprintf(key, sizeof(key), "%s\t%s", loom_js_or(e, "cluster", ""), names[k]);
        r->text[SR_F_CLUSTER] = sr_rows_str(rows, loom_js_or(e, "cluster", ""));
        r->text[SR_F_LOGIN] = sr_rows_str(rows, user);
        r->text[SR_F_PROPER] = sr_rows_str(rows, proper);
        r->text[SR_F_ACCT] = sr_rows_str(rows, account ? account : loom_js_or(e, "account", ""));
        r->text[SR_F_TRES_NAME] = sr_rows_str(rows, names[k]);
        r->secs[SR_F_USED] = loom_ji(json_object_get(e, "tres"), names[k], 0);
        r->total = loom_ji(totals, key, 0);
        r->indent = indent;
    }
}

/* The first wanted TRES of an entry: what users are ranked by. */
static int64_t sr_rank_secs(const sr_t *s, const json_t *e)
{
    const char *names[64];
    size_t n = sr_tres_names(s, json_object_get(e, "tres"), names, 64);
    const char *first = s->tres.n && !s->tres_all ? s->tres.v[0] : n ? names[0] : "cpu";
    return loom_ji(json_object_get(e, "tres"), first, 0);
}

typedef struct {
    const sr_t *s;
    json_t *e;
} sr_entry_t;

static int sr_entry_cmp(const void *pa, const void *pb)
{
    const sr_entry_t *a = pa, *b = pb;
    int64_t x = sr_rank_secs(a->s, a->e), y = sr_rank_secs(b->s, b->e);
    if (x != y)
        return x > y ? -1 : 1;
    /* Equal usage, as 22.05 orders it: by user name unless both used none,
     * then the newer association first. */
    int c = x ? strcmp(loom_js_or(a->e, "user", ""), loom_js_or(b->e, "user", "")) : 0;
    int64_t ia = loom_ji(a->e, "id", 0), ib = loom_ji(b->e, "id", 0);
    if (c || ia != ib)
        return c ? c : ia > ib ? -1 : 1;
    return strcmp(loom_js_or(a->e, "account", ""), loom_js_or(b->e, "account", ""));
}

static json_t *sr_assocs(sr_t *s, const sr_cond_t *c);

/* Each usage entry gets the id of its association ("id"; 0 when unknown). */
static void sr_set_ids(sr_t *s, const sr_cond_t *c, json_t *usage)
{
    json_t *assocs = sr_assocs(s, c), *ids = json_object(), *a, *e;
    size_t i;
    json_array_foreach(assocs, i, a)
    {
        char key[512];
        snprintf(key, sizeof(key), "%s\t%s\t%s", loom_js_or(a, "cluster", ""),
                 loom_js_or(a, "user_name", ""), loom_js_or(a, "account", ""));
        if (loom_ji(a, "id", 0) > loom_ji(ids, key, 0))
            json_object_set_new(ids, key, json_integer(loom_ji(a, "id", 0)));
    }
    json_array_foreach(usage, i, e)
    {
        char key[512];
        snprintf(key, sizeof(key), "%s\t%s\t%s", loom_js_or(e, "cluster", ""),
                 loom_js_or(e, "user", ""), loom_js_or(e, "account", ""));
        json_object_set_new(e, "id", json_integer(loom_ji(ids, key, 0)));
    }
    json_decref(ids);
    json_decref(assocs);
}

/* Least used first: the order 22.05 joins a user's accounts in. */
static int sr_entry_cmp_asc(const void *pa, const void *pb)
{
    const sr_entry_t *a = pa, *b = pb;
    int64_t x = sr_rank_secs(a->s, a->e), y = sr_rank_secs(b->s, b->e);
    if (x != y)
        return x < y ? -1 : 1;
    return strcmp(loom_js_or(a->e, "account", ""), loom_js_or(b->e, "account", ""));
}

/* group: one entry per cluster and user, the TRES summed, the accounts
 * joined least used first. */
static json_t *sr_group(sr_t *s, json_t *usage)
{
    size_t n = json_array_size(usage), i;
    sr_entry_t *v = loom_xcalloc(n + 1, sizeof(*v));
    for (i = 0; i < n; i++)
        v[i] = (sr_entry_t){s, json_array_get(usage, i)};
    qsort(v, n, sizeof(*v), sr_entry_cmp_asc);
    json_t *by = json_object(), *out = json_array();
    for (i = 0; i < n; i++) {
        const json_t *e = v[i].e;
        char key[512];
        snprintf(key, sizeof(key), "%s\t%s", loom_js_or(e, "cluster", ""),
                 loom_js_or(e, "user", ""));
        json_t *g = json_object_get(by, key);
        if (!g) {
            g = json_pack("{s:s, s:s, s:s, s:I, s:{}}", "cluster", loom_js_or(e, "cluster", ""),
                          "user", loom_js_or(e, "user", ""), "account", "", "id", (json_int_t)0,
                          "tres");
            json_object_set_new(by, key, g);
            json_array_append(out, g);
        }
        const char *cur = loom_js_or(g, "account", ""), *tn;
        loom_sbuf_t sb = LOOM_SBUF_INIT;
        loom_sbuf_addf(&sb, "%s%s%s", cur, *cur ? ", " : "", loom_js_or(e, "account", ""));
        json_object_set_new(g, "account", json_string(loom_sbuf_str(&sb)));
        loom_sbuf_free(&sb);
        if (loom_ji(e, "id", 0) > loom_ji(g, "id", 0))
            json_object_set_new(g, "id", json_integer(loom_ji(e, "id", 0)));
        json_t *gt = json_object_get(g, "tres"), *val;
        json_object_foreach(json_object_get(e, "tres"), tn, val)
            json_object_set_new(gt, tn, json_integer(loom_ji(gt, tn, 0) + json_integer_value(val)));
    }
    free(v);
    json_decref(by);
    return out;
}

static json_t *sr_strv_json(const loom_strv_t *v)
{
    json_t *a = json_array();
    for (size_t i = 0; i < v->n; i++)
        json_array_append_new(a, json_string(v->v[i]));
    return a;
}

static json_t *sr_filters(const sr_cond_t *c)
{
    json_t *f = json_object();
    if (c->users.n)
        json_object_set_new(f, "users", sr_strv_json(&c->users));
    if (c->accounts.n)
        json_object_set_new(f, "accounts", sr_strv_json(&c->accounts));
    return f;
}

int sr_report_users(sr_t *s, const sr_cond_t *c, sr_rows_t *rows)
{
    json_t *usage = json_array(), *totals = json_object(), *f = sr_filters(c);
    int rc = sr_fetch(s, c, "dbd.report.users", "usage", f, usage);
    json_decref(f);
    if (rc == 0)
        rc = sr_totals(s, c, totals);
    if (rc == 0)
        sr_set_ids(s, c, usage);
    if (rc == 0 && c->group) {
        json_t *g = sr_group(s, usage);
        json_decref(usage);
        usage = g;
    }
    size_t n = json_array_size(usage);
    sr_entry_t *v = loom_xcalloc(n + 1, sizeof(*v));
    for (size_t i = 0; i < n; i++)
        v[i] = (sr_entry_t){s, json_array_get(usage, i)};
    qsort(v, n, sizeof(*v), sr_entry_cmp);
    json_t *count = json_object();
    for (size_t i = 0; rc == 0 && i < n; i++) {
        const char *cl = loom_js_or(v[i].e, "cluster", "");
        int64_t seen = loom_ji(count, cl, 0);
        if (c->rep == SR_REP_TOP && seen >= c->top)
            continue;
        json_object_set_new(count, cl, json_integer(seen + 1));
        sr_user_rows(s, rows, v[i].e, totals, NULL, 0);
    }
    free(v);
    json_decref(count);
    json_decref(usage);
    json_decref(totals);
    return rc;
}

/* ---- cluster AccountUtilizationByUser ---------------------------------------------------- */

static json_t *sr_assocs(sr_t *s, const sr_cond_t *c)
{
    json_t *where = json_object();
    if (!c->all_clusters) {
        json_t *cl = json_array();
        for (size_t i = 0; i < c->clusters.n; i++)
            json_array_append_new(cl, json_string(c->clusters.v[i]));
        json_object_set_new(where, "clusters", cl);
    }
    json_t *body = json_pack("{s:o}", "where", where), *reply = NULL;
    loom_err_t err = {0};
    int rc = loom_dbd_call(&s->cli, &s->rpc, "dbd.assoc.list", body, &reply, &err);
    json_decref(body);
    json_t *assocs = rc < 0 ? NULL : json_incref(json_object_get(reply, "assocs"));
    json_decref(reply);
    return assocs;
}

typedef struct {
    sr_t *s;
    const sr_cond_t *c;
    const char *cluster;
    json_t *assocs, *usage, *totals; /* usage: "user\taccount" -> entry */
    sr_rows_t *rows;
} sr_tree_t;

/* The usage entry of one user in one account, or NULL. */
static json_t *sr_tree_entry(sr_tree_t *t, const char *user, const char *acct)
{
    char key[256];
    snprintf(key, sizeof(key), "%s\t%s", user, acct);
    return json_object_get(t->usage, key);
}

static int sr_str_cmp(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The names of acct's children: users (user_name set) or sub-accounts, sorted. */
static void sr_tree_children(sr_tree_t *t, const char *acct, bool users, loom_strv_t *out)
{
    size_t i;
    json_t *a;
    json_array_foreach(t->assocs, i, a)
    {
        if (strcmp(loom_js_or(a, "cluster", ""), t->cluster))
            continue;
        const char *user = loom_js_or(a, "user_name", "");
        const char *name = users ? user : loom_js_or(a, "account", "");
        const char *parent =
            users ? loom_js_or(a, "account", "") : loom_js_or(a, "parent_account", "");
        if ((*user != '\0') != users || strcmp(parent, acct) || !strcmp(name, acct))
            continue;
        bool dup = false;
        for (size_t k = 0; k < out->n; k++)
            dup |= !strcmp(out->v[k], name);
        if (!dup)
            loom_strv_add(out, name);
    }
    if (out->n > 1)
        qsort(out->v, out->n, sizeof(*out->v), sr_str_cmp);
}

/* Sum the subtree of acct into sum ({tres: secs}). */
static void sr_tree_sum(sr_tree_t *t, const char *acct, json_t *sum, int depth)
{
    loom_strv_t users = LOOM_STRV_INIT, subs = LOOM_STRV_INIT;
    sr_tree_children(t, acct, true, &users);
    sr_tree_children(t, acct, false, &subs);
    for (size_t i = 0; i < users.n; i++) {
        const json_t *e = sr_tree_entry(t, users.v[i], acct);
        const char *tn;
        json_t *v;
        json_object_foreach(json_object_get(e, "tres"), tn, v)
            json_object_set_new(sum, tn, json_integer(loom_ji(sum, tn, 0) + json_integer_value(v)));
    }
    for (size_t i = 0; depth < 64 && i < subs.n; i++)
        sr_tree_sum(t, subs.v[i], sum, depth + 1);
    loom_strv_free(&users);
    loom_strv_free(&subs);
}

static void sr_tree_walk(sr_tree_t *t, const char *acct, int depth)
{
    json_t *sum = json_object();
    sr_tree_sum(t, acct, sum, 0);
    json_t *e = json_pack("{s:s, s:s, s:s, s:O}", "cluster", t->cluster, "user", "", "account",
                          acct, "tres", sum);
    if (sr_rank_secs(t->s, e) > 0) {
        sr_user_rows(t->s, t->rows, e, t->totals, NULL, t->c->tree ? depth : 0);
        loom_strv_t users = LOOM_STRV_INIT, subs = LOOM_STRV_INIT;
        sr_tree_children(t, acct, true, &users);
        for (size_t i = 0; i < users.n; i++) {
            const json_t *u = sr_tree_entry(t, users.v[i], acct);
            if (u && sr_rank_secs(t->s, u) > 0)
                sr_user_rows(t->s, t->rows, u, t->totals, acct, t->c->tree ? depth + 1 : 0);
        }
        sr_tree_children(t, acct, false, &subs);
        for (size_t i = 0; depth < 64 && i < subs.n; i++)
            sr_tree_walk(t, subs.v[i], depth + 1);
        loom_strv_free(&users);
        loom_strv_free(&subs);
    }
    json_decref(e);
    json_decref(sum);
}

/* users=: the matching user lines only, in association order. */
static void sr_tree_users(sr_tree_t *t)
{
    size_t i;
    json_t *a;
    json_array_foreach(t->assocs, i, a)
    {
        const char *user = loom_js_or(a, "user_name", ""), *acct = loom_js_or(a, "account", "");
        if (!*user || strcmp(loom_js_or(a, "cluster", ""), t->cluster) ||
            loom_strv_find(&t->c->users, user) < 0 ||
            (t->c->accounts.n && loom_strv_find(&t->c->accounts, acct) < 0))
            continue;
        const json_t *u = sr_tree_entry(t, user, acct);
        if (u && sr_rank_secs(t->s, u) > 0)
            sr_user_rows(t->s, t->rows, u, t->totals, acct, 0);
    }
}

static int sr_assoc_id_cmp(const void *pa, const void *pb)
{
    int64_t a = loom_ji(*(json_t *const *)pa, "id", 0), b = loom_ji(*(json_t *const *)pb, "id", 0);
    return a < b ? -1 : a > b;
}

static void sr_tree_cluster(sr_tree_t *t)
{
    if (t->c->users.n) {
        sr_tree_users(t);
        return;
    }
    if (!t->c->accounts.n) {
        sr_tree_walk(t, "root", 0);
        return;
    }
    loom_strv_t accts = LOOM_STRV_INIT; /* the tree's order: by name */
    for (size_t i = 0; i < t->c->accounts.n; i++)
        loom_strv_add(&accts, t->c->accounts.v[i]);
    qsort(accts.v, accts.n, sizeof(*accts.v), sr_str_cmp);
    for (size_t i = 0; i < accts.n; i++)
        sr_tree_walk(t, accts.v[i], 0);
    loom_strv_free(&accts);
}

int sr_report_acct_user(sr_t *s, const sr_cond_t *c, sr_rows_t *rows)
{
    json_t *usage = json_array(), *totals = json_object();
    int rc = sr_fetch(s, c, "dbd.report.users", "usage", NULL, usage);
    json_t *assocs = rc == 0 ? sr_assocs(s, c) : NULL;
    if (rc == 0 && !assocs)
        rc = -1;
    if (rc == 0)
        rc = sr_totals(s, c, totals);
    size_t n = json_array_size(assocs), i;
    json_t **sorted = loom_xcalloc(n + 1, sizeof(*sorted));
    for (i = 0; i < n; i++)
        sorted[i] = json_array_get(assocs, i);
    qsort(sorted, n, sizeof(*sorted), sr_assoc_id_cmp);
    json_t *ordered = json_array(), *clusters = json_object(), *e;
    for (i = 0; i < n; i++) {
        json_array_append(ordered, sorted[i]);
        json_object_set_new(clusters, loom_js_or(sorted[i], "cluster", ""), json_true());
    }
    free(sorted);
    const char *cl;
    json_t *unused;
    json_object_foreach(clusters, cl, unused)
    {
        if (rc < 0)
            break;
        sr_tree_t t = {s, c, cl, ordered, json_object(), totals, rows};
        json_array_foreach(usage, i, e)
        {
            if (strcmp(loom_js_or(e, "cluster", ""), cl))
                continue;
            char key[256];
            snprintf(key, sizeof(key), "%s\t%s", loom_js_or(e, "user", ""),
                     loom_js_or(e, "account", ""));
            json_object_set(t.usage, key, e);
        }
        sr_tree_cluster(&t);
        json_decref(t.usage);
    }
    json_decref(clusters);
    json_decref(ordered);
    json_decref(assocs);
    json_decref(usage);
    json_decref(totals);
    return rc;
}
