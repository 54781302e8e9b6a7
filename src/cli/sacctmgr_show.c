/*
 * sacctmgr_show.c - `sacctmgr show|list <entity> [where ...] [format=...]`
 * (CLI_SPEC §10): default columns and widths as Slurm 22.05 prints them,
 * associations in tree order (users first, then sub-accounts, by name).
 */
#include "cli/cli_json.h"
#include "cli/sacctmgr.h"
#include "common/xalloc.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>

typedef struct {
    const char *header;
    const char *alias; /* "|"-separated format= names besides the header */
    int width;
    const char *col; /* record field; "u:" prefix: the user row of a joined list */
    char kind;
} sam_col_t;

static const sam_col_t sam_qos_cols[] = {
    {"Name", NULL, 10, "name", SAM_STR},
    {"Priority", NULL, 10, "priority", SAM_INT},
    {"GraceTime", NULL, 10, "grace_time", SAM_SECS},
    {"Preempt", NULL, 10, "preempt", SAM_STR},
    {"PreemptExemptTime", NULL, 19, "preempt_exempt_time", SAM_SECS},
    {"PreemptMode", NULL, 11, "preempt_mode", SAM_STR},
    {"Flags", NULL, 40, "flags", SAM_STR},
    {"UsageThres", "UsageThreshold", 10, "usage_threshold", SAM_FLOAT},
    {"UsageFactor", NULL, 11, "usage_factor", SAM_FLOAT},
    {"GrpTRES", NULL, 13, "grp_tres", SAM_STR},
    {"GrpTRESMins", NULL, 13, "grp_tres_mins", SAM_STR},
    {"GrpTRESRunMin", "GrpTRESRunMins", 13, "grp_tres_run_mins", SAM_STR},
    {"GrpJobs", NULL, 7, "grp_jobs", SAM_INT},
    {"GrpSubmit", "GrpSubmitJobs", 9, "grp_submit_jobs", SAM_INT},
    {"GrpWall", NULL, 11, "grp_wall", SAM_MINS},
    {"MaxTRES", "MaxTRESPerJob", 13, "max_tres", SAM_STR},
    {"MaxTRESPerNode", NULL, 14, "max_tres_per_node", SAM_STR},
    {"MaxTRESMins", NULL, 13, "max_tres_mins", SAM_STR},
    {"MaxWall", "MaxWallDurationPerJob", 11, "max_wall", SAM_MINS},
    {"MaxTRESPU", "MaxTRESPerUser", 13, "max_tres_pu", SAM_STR},
    {"MaxJobsPU", "MaxJobsPerUser", 9, "max_jobs_pu", SAM_INT},
    {"MaxSubmitPU", "MaxSubmitJobsPerUser", 11, "max_submit_pu", SAM_INT},
    {"MaxTRESPA", "MaxTRESPerAccount", 13, "max_tres_pa", SAM_STR},
    {"MaxJobsPA", "MaxJobsPerAccount", 9, "max_jobs_pa", SAM_INT},
    {"MaxSubmitPA", "MaxSubmitJobsPerAccount", 11, "max_submit_pa", SAM_INT},
    {"MinTRES", "MinTRESPerJob", 13, "min_tres", SAM_STR},
    {"Descr", "Description", 20, "description", SAM_STR},
    {"ID", NULL, 6, "id", SAM_INT},
    {NULL, NULL, 0, NULL, 0},
};

/* Association columns; the first 20 are `show assoc`'s default. */
static const sam_col_t sam_assoc_cols[] = {
    {"Cluster", NULL, 10, "cluster", SAM_STR},
    {"Account", "Acct", 10, "account", SAM_STR},
    {"User", NULL, 10, "user_name", SAM_STR},
    {"Partition", NULL, 10, "partition", SAM_STR},
    {"Share", "Shares|Fairshare", 9, "shares", SAM_INT},
    {"Priority", NULL, 10, "priority", SAM_INT},
    {"GrpJobs", NULL, 7, "grp_jobs", SAM_INT},
    {"GrpTRES", NULL, 13, "grp_tres", SAM_STR},
    {"GrpSubmit", "GrpSubmitJobs", 9, "grp_submit_jobs", SAM_INT},
    {"GrpWall", NULL, 11, "grp_wall", SAM_MINS},
    {"GrpTRESMins", NULL, 13, "grp_tres_mins", SAM_STR},
    {"MaxJobs", NULL, 7, "max_jobs", SAM_INT},
    {"MaxTRES", "MaxTRESPerJob", 13, "max_tres", SAM_STR},
    {"MaxTRESPerNode", NULL, 14, "max_tres_per_node", SAM_STR},
    {"MaxSubmit", "MaxSubmitJobs", 9, "max_submit_jobs", SAM_INT},
    {"MaxWall", "MaxWallDurationPerJob", 11, "max_wall", SAM_MINS},
    {"MaxTRESMins", NULL, 13, "max_tres_mins", SAM_STR},
    {"QOS", NULL, 20, "qos", SAM_LIST},
    {"Def QOS", "DefaultQOS|DefQOS", 9, "default_qos", SAM_STR},
    {"GrpTRESRunMin", "GrpTRESRunMins", 13, "grp_tres_run_mins", SAM_STR},
    {"ParentName", "Parent", 10, "parent_account", SAM_STR},
    {"ID", NULL, 6, "id", SAM_INT},
    {"Def Acct", "DefaultAccount|DefAcct", 10, "u:default_account", SAM_STR},
    {"Admin", "AdminLevel", 9, "u:admin_level", SAM_STR},
    /* Slurm's pre-TRES columns: one TRES count of a TRES limit ("t:field/tres"). */
    {"GrpNodes", NULL, 8, "t:grp_tres/node", SAM_STR},
    {"GrpCPUs", NULL, 8, "t:grp_tres/cpu", SAM_STR},
    {"GrpMem", NULL, 7, "t:grp_tres/mem", SAM_STR},
    {"GrpCPUMins", NULL, 11, "t:grp_tres_mins/cpu", SAM_STR},
    {"GrpCPURunMins", NULL, 13, "t:grp_tres_run_mins/cpu", SAM_STR},
    {"MaxNodes", "MaxNodesPerJob", 8, "t:max_tres/node", SAM_STR},
    {"MaxCPUs", "MaxCPUsPerJob", 8, "t:max_tres/cpu", SAM_STR},
    {"MaxCPUMins", "MaxCPUMinsPerJob", 11, "t:max_tres_mins/cpu", SAM_STR},
    {"Descr", "Description", 20, "a:description", SAM_STR},
    {"Org", "Organization", 20, "a:organization", SAM_STR},
    {NULL, NULL, 0, NULL, 0},
};

static const sam_col_t sam_account_cols[] = {
    {"Account", "Acct|Name", 10, "name", SAM_STR},
    {"Descr", "Description", 20, "description", SAM_STR},
    {"Org", "Organization", 20, "organization", SAM_STR},
    {NULL, NULL, 0, NULL, 0},
};

static const sam_col_t sam_user_cols[] = {
    {"User", "Name", 10, "name", SAM_STR},
    {"Def Acct", "DefaultAccount|DefAcct", 10, "default_account", SAM_STR},
    {"Admin", "AdminLevel", 9, "admin_level", SAM_STR},
    {NULL, NULL, 0, NULL, 0},
};

static const sam_col_t sam_cluster_cols[] = {
    {"Cluster", "Name", 10, "name", SAM_STR},
    {"ControlHost", NULL, 15, "c:control_host", SAM_STR},
    {"ControlPort", NULL, 12, "c:control_port", SAM_INT},
    {"RPC", NULL, 5, "c:rpc", SAM_INT},
    {NULL, NULL, 0, NULL, 0},
};

/* Default formats per entity. */
static const char *const sam_defaults[SAM_NENTS] = {
    [SAM_CLUSTER] = "Cluster,ControlHost,ControlPort,RPC,Share,GrpJobs,GrpTRES,GrpSubmit,MaxJobs,"
                    "MaxTRES,MaxSubmit,MaxWall,QOS,Def QOS",
    [SAM_ACCOUNT] = "Account,Descr,Org",
    [SAM_USER] = "User,Def Acct,Admin",
    [SAM_QOS] = "Name,Priority,GraceTime,Preempt,PreemptExemptTime,PreemptMode,Flags,UsageThres,"
                "UsageFactor,GrpTRES,GrpTRESMins,GrpTRESRunMin,GrpJobs,GrpSubmit,GrpWall,MaxTRES,"
                "MaxTRESPerNode,MaxTRESMins,MaxWall,MaxTRESPU,MaxJobsPU,MaxSubmitPU,MaxTRESPA,"
                "MaxJobsPA,MaxSubmitPA,MinTRES",
    [SAM_ASSOC] = "Cluster,Account,User,Partition,Share,Priority,GrpJobs,GrpTRES,GrpSubmit,GrpWall,"
                  "GrpTRESMins,MaxJobs,MaxTRES,MaxTRESPerNode,MaxSubmit,MaxWall,MaxTRESMins,QOS,"
                  "Def QOS,GrpTRESRunMin",
};

static const char sam_user_assoc_fmt[] =
    "User,Def Acct,Admin,Cluster,Account,Partition,Share,Priority,MaxJobs,MaxNodes,MaxCPUs,"
    "MaxSubmit,MaxWall,MaxCPUMins,QOS,Def QOS";

static const char sam_cluster_wol_fmt[] = "Cluster,ControlHost,ControlPort,RPC";

static const char sam_account_assoc_fmt[] =
    "Account,Descr,Org,Cluster,ParentName,User,Share,Priority,GrpJobs,GrpNodes,GrpCPUs,GrpMem,"
    "GrpSubmit,GrpWall,GrpCPUMins,MaxJobs,MaxNodes,MaxCPUs,MaxSubmit,MaxWall,MaxCPUMins,QOS,"
    "Def QOS";

typedef struct {
    const sam_col_t *col;
    int width;
    loom_pf_col_t pf;
} sam_item_t;

static bool sam_col_named(const sam_col_t *c, const char *name, size_t n)
{
    if (strlen(c->header) == n && strncasecmp(c->header, name, n) == 0)
        return true;
    for (const char *a = c->alias; a && *a;) {
        size_t len = strcspn(a, "|");
        if (len == n && strncasecmp(a, name, n) == 0)
            return true;
        a += len + (a[len] == '|');
    }
    return false;
}

static const sam_col_t *sam_col_find(const sam_col_t *const *tabs, const char *name, size_t n)
{
    for (const sam_col_t *const *t = tabs; *t; t++)
        for (const sam_col_t *c = *t; c->header; c++)
            if (sam_col_named(c, name, n))
                return c;
    for (const sam_col_t *const *t = tabs; *t; t++) /* a prefix, as Slurm allows */
        for (const sam_col_t *c = *t; c->header; c++)
            if (n >= 3 && strncasecmp(c->header, name, n) == 0)
                return c;
    return NULL;
}

/* Parse "name[%N],..." into items; unknown names are an error. */
static int sam_parse_format(const char *fmt, const sam_col_t *const *tabs, sam_item_t *items,
                            size_t *n, loom_err_t *err)
{
    loom_strv_t parts = LOOM_STRV_INIT;
    loom_strv_split(&parts, fmt, ",");
    int rc = 0;
    *n = 0;
    for (size_t i = 0; i < parts.n && *n < 64 && rc == 0; i++) {
        char *pct = strchr(parts.v[i], '%');
        size_t len = pct ? (size_t)(pct - parts.v[i]) : strlen(parts.v[i]);
        const sam_col_t *c = sam_col_find(tabs, parts.v[i], len);
        if (!c) {
            rc = loom_errf(err, -LOOM_EPARSE, "Unknown field '%.*s'", (int)len, parts.v[i]);
            break;
        }
        int w = pct ? atoi(pct + 1) : c->width;
        items[*n].col = c;
        items[*n].width = w;
        items[*n].pf.header = c->header;
        items[*n].pf.width = w;
        (*n)++;
    }
    loom_strv_free(&parts);
    return rc;
}

/* The value of a column for a row made of (record, user row, account row, cluster row). */
typedef struct {
    const json_t *rec, *user, *account, *cluster;
    int depth; /* tree: indentation of the Account column */
} sam_row_t;

/* The count of tres in the TRES string "name=count,..." of rec's field (col "field/tres"). */
static void sam_tres_count(const json_t *rec, const char *col, loom_sbuf_t *out)
{
    const char *slash = strchr(col, '/');
    char field[64];
    snprintf(field, sizeof(field), "%.*s", (int)(slash - col), col);
    const char *v = json_string_value(json_object_get(rec, field));
    loom_strv_t items = LOOM_STRV_INIT;
    loom_strv_split(&items, v ? v : "", ",");
    size_t n = strlen(slash + 1);
    for (size_t i = 0; i < items.n; i++)
        if (strncmp(items.v[i], slash + 1, n) == 0 && items.v[i][n] == '=') {
            size_t len = strlen(items.v[i] + n + 1);
            bool mem = !strcmp(slash + 1, "mem") && len && items.v[i][n + len] == 'M';
            loom_sbuf_addf(out, "%.*s", (int)(len - mem), items.v[i] + n + 1);
        }
    loom_strv_free(&items);
}

static void sam_cell(const sam_t *s, const sam_item_t *it, const sam_row_t *r, bool last,
                     loom_sbuf_t *out)
{
    const char *col = it->col->col;
    const json_t *src = r->rec;
    if (col[0] == 't' && col[1] == ':') {
        loom_sbuf_t v = LOOM_SBUF_INIT;
        sam_tres_count(r->rec, col + 2, &v);
        loom_pf_cell(&s->pf, loom_sbuf_str(&v), it->width, last, false, out);
        loom_sbuf_free(&v);
        return;
    }
    if (col[1] == ':') {
        src = col[0] == 'u' ? r->user : col[0] == 'a' ? r->account : r->cluster;
        col += 2;
    }
    loom_sbuf_t v = LOOM_SBUF_INIT;
    if (s->tree && strcmp(col, "account") == 0)
        for (int i = 0; i < r->depth; i++)
            loom_sbuf_addc(&v, ' ');
    sam_fmt_value(it->col->kind, json_object_get(src, col), &v);
    bool number = it->col->kind == SAM_INT;
    int width = it->width;
    if (s->tree && strcmp(col, "account") == 0)
        width = -width;
    loom_pf_cell(&s->pf, loom_sbuf_str(&v), width, last, number, out);
    loom_sbuf_free(&v);
}

static void sam_emit(sam_t *s, const sam_item_t *items, size_t n, const sam_row_t *r)
{
    for (size_t i = 0; i < n; i++)
        sam_cell(s, &items[i], r, i + 1 == n, &s->out);
    loom_sbuf_addc(&s->out, '\n');
}

/* ---- where clauses ------------------------------------------------------------ */

static const char *sam_where_key(const char *k)
{
    static const char *const map[][2] = {
        {"name", "names"},           {"names", "names"},           {"account", "accounts"},
        {"accounts", "accounts"},    {"acct", "accounts"},         {"user", "users"},
        {"users", "users"},          {"cluster", "clusters"},      {"clusters", "clusters"},
        {"partition", "partitions"}, {"partitions", "partitions"}, {"qos", "names"},
    };
    for (size_t i = 0; i < sizeof(map) / sizeof(map[0]); i++)
        if (strcasecmp(k, map[i][0]) == 0)
            return map[i][1];
    return NULL;
}

static void sam_where_add(json_t *where, const char *key, const char *values)
{
    json_t *list = json_object_get(where, key);
    if (!list) {
        list = json_array();
        json_object_set_new(where, key, list);
    }
    loom_strv_t v = LOOM_STRV_INIT;
    loom_strv_split(&v, values, ",");
    for (size_t i = 0; i < v.n; i++)
        json_array_append_new(list, json_string(v.v[i]));
    loom_strv_free(&v);
}

/* Words of a show command: where, format=, tree, withassoc, names, Key=Value. */
static int sam_show_words(sam_t *s, int ent, int argc, char **argv, json_t *where,
                          const char **format)
{
    for (int i = 0; i < argc; i++) {
        char *eq = strchr(argv[i], '=');
        if (strcasecmp(argv[i], "where") == 0)
            continue;
        if (strcasecmp(argv[i], "tree") == 0) {
            s->tree = true;
        } else if (strncasecmp(argv[i], "withassoc", 9) == 0) {
            s->withassoc = true;
        } else if (!eq && strlen(argv[i]) >= 3 &&
                   strncasecmp(argv[i], "wolimits", strlen(argv[i])) == 0) {
            s->wolimits = true;
        } else if (eq && strncasecmp(argv[i], "format", (size_t)(eq - argv[i])) == 0 &&
                   eq - argv[i] >= 3) {
            *format = eq + 1;
        } else if (eq) {
            *eq = '\0';
            const char *key = sam_where_key(argv[i]);
            if (key && ent == SAM_ASSOC && strcmp(key, "names") == 0)
                key = "accounts";
            if (!key) {
                fprintf(stderr, " Unknown condition: %s=%s\n", argv[i], eq + 1);
                return -1;
            }
            sam_where_add(where, key, eq + 1);
        } else {
            sam_where_add(where, "names", argv[i]);
        }
    }
    json_t *names = json_object_get(where, "names");
    if (names && s->withassoc && (ent == SAM_USER || ent == SAM_ACCOUNT))
        json_object_set(where, ent == SAM_USER ? "users" : "accounts", names);
    return 0;
}

static json_t *sam_fetch(sam_t *s, int ent, const json_t *where, const char *key, int *rc)
{
    char type[64];
    /* "o" steals the reference: a borrowed where gets its own, a new {} is given away. */
    json_t *w = where ? json_incref((json_t *)where) : json_object();
    json_t *body = json_pack("{s:o}", "where", w);
    json_t *reply = NULL;
    loom_err_t err = {0};
    *rc = loom_dbd_call(&s->cli, &s->rpc, sam_type(ent, "list", type, sizeof(type)), body, &reply,
                        &err);
    json_decref(body);
    if (*rc < 0) {
        fprintf(stderr, "sacctmgr: error: %s\n", err.msg);
        json_decref(reply);
        return NULL;
    }
    json_t *rows = json_incref(json_object_get(reply, key));
    json_decref(reply);
    return rows ? rows : json_array();
}

/* ---- association tree order --------------------------------------------------- */

static int sam_cmp_str(const json_t *a, const json_t *b, const char *key)
{
    const char *x = json_string_value(json_object_get(a, key));
    const char *y = json_string_value(json_object_get(b, key));
    return strcmp(x ? x : "", y ? y : "");
}

static int sam_child_cmp(const void *pa, const void *pb)
{
    const json_t *a = *(json_t *const *)pa, *b = *(json_t *const *)pb;
    bool ua = *json_string_value(json_object_get(a, "user_name")),
         ub = *json_string_value(json_object_get(b, "user_name"));
    if (ua != ub)
        return ua ? -1 : 1; /* users before sub-accounts */
    int c = ua ? sam_cmp_str(a, b, "user_name") : sam_cmp_str(a, b, "account");
    if (c == 0)
        c = sam_cmp_str(a, b, "account");
    return c ? c : sam_cmp_str(a, b, "partition");
}

static bool sam_is_child(const json_t *c, const json_t *p)
{
    if (sam_cmp_str(c, p, "cluster") != 0 || *json_string_value(json_object_get(p, "user_name")))
        return false;
    const char *pa = json_string_value(json_object_get(p, "account"));
    if (*json_string_value(json_object_get(c, "user_name")))
        return strcmp(json_string_value(json_object_get(c, "account")), pa) == 0;
    const char *parent = json_string_value(json_object_get(c, "parent_account"));
    return parent && strcmp(parent, pa) == 0 &&
           strcmp(json_string_value(json_object_get(c, "account")), "root") != 0;
}

static void sam_tree_walk(json_t *all, json_t *node, int depth, json_t *out)
{
    json_t *d = json_object();
    json_object_set(d, "rec", node);
    json_object_set_new(d, "depth", json_integer(depth));
    json_array_append_new(out, d);
    size_t n = 0, i;
    json_t *c, **kids = loom_xcalloc(json_array_size(all) + 1, sizeof(*kids));
    json_array_foreach(all, i, c)
    {
        if (c != node && sam_is_child(c, node))
            kids[n++] = c;
    }
    qsort(kids, n, sizeof(*kids), sam_child_cmp);
    for (i = 0; i < n && depth < 64; i++)
        sam_tree_walk(all, kids[i], depth + 1, out);
    free(kids);
}

/* [{rec, depth}] in tree order, clusters by name, each from its root. */
static json_t *sam_tree(json_t *all)
{
    json_t *out = json_array(), *roots = json_array();
    size_t i;
    json_t *r;
    json_array_foreach(all, i, r)
    {
        if (!strcmp(json_string_value(json_object_get(r, "account")), "root") &&
            !*json_string_value(json_object_get(r, "user_name")))
            json_array_append(roots, r);
    }
    json_array_foreach(roots, i, r) sam_tree_walk(all, r, 0, out);
    json_decref(roots);
    return out;
}

/* ---- the list commands ---------------------------------------------------------- */

static bool sam_assoc_wanted(const json_t *where, const json_t *r)
{
    static const char *const keys[][2] = {{"clusters", "cluster"},
                                          {"accounts", "account"},
                                          {"users", "user_name"},
                                          {"partitions", "partition"}};
    for (size_t k = 0; k < 4; k++) {
        const json_t *list = json_object_get(where, keys[k][0]);
        if (!json_is_array(list))
            continue;
        const char *have = json_string_value(json_object_get(r, keys[k][1]));
        bool hit = false;
        size_t i;
        json_t *v;
        json_array_foreach(list, i, v) hit |=
            have && json_is_string(v) && !strcmp(have, json_string_value(v));
        if (!hit)
            return false;
    }
    return true;
}

static int sam_show_assocs(sam_t *s, json_t *where, const sam_item_t *items, size_t n)
{
    int rc;
    json_t *all = sam_fetch(s, SAM_ASSOC, NULL, "assocs", &rc);
    if (!all)
        return rc;
    json_t *order = sam_tree(all);
    size_t i;
    json_t *d;
    loom_pf_col_t cols[64];
    for (i = 0; i < n; i++) {
        cols[i] = items[i].pf;
        if (s->tree && !strcmp(items[i].col->col, "account") && items[i].width == 10)
            cols[i].width = -20;
    }
    loom_pf_header(&s->pf, cols, n, &s->out);
    json_array_foreach(order, i, d)
    {
        json_t *r = json_object_get(d, "rec");
        if (!sam_assoc_wanted(where, r))
            continue;
        sam_row_t row = {.rec = r, .depth = (int)json_integer_value(json_object_get(d, "depth"))};
        sam_item_t tmp[64];
        memcpy(tmp, items, n * sizeof(*items));
        for (size_t k = 0; k < n && s->tree; k++)
            if (!strcmp(tmp[k].col->col, "account") && tmp[k].width == 10)
                tmp[k].width = 20;
        sam_emit(s, tmp, n, &row);
    }
    json_decref(order);
    json_decref(all);
    return 0;
}

static int sam_by_name(const void *pa, const void *pb)
{
    return sam_cmp_str(*(json_t *const *)pa, *(json_t *const *)pb, "name");
}

static int sam_assoc_by_user(const void *pa, const void *pb)
{
    const json_t *a = *(json_t *const *)pa, *b = *(json_t *const *)pb;
    int c = sam_cmp_str(a, b, "user_name");
    if (c == 0)
        c = sam_cmp_str(a, b, "account");
    if (c == 0)
        c = sam_cmp_str(a, b, "cluster");
    return c ? c : sam_cmp_str(a, b, "partition");
}

/* Sort a JSON array in place with cmp. */
static void sam_sort(json_t *arr, int (*cmp)(const void *, const void *))
{
    size_t n = json_array_size(arr), i;
    json_t **v = loom_xcalloc(n + 1, sizeof(*v));
    for (i = 0; i < n; i++)
        v[i] = json_incref(json_array_get(arr, i));
    qsort(v, n, sizeof(*v), cmp);
    json_array_clear(arr);
    for (i = 0; i < n; i++)
        json_array_append_new(arr, v[i]);
    free(v);
}

/* The associations where selects (users' only when users_only), sorted by
 * cmp; NULL with *rc on a failed fetch. */
static json_t *sam_assocs_sorted(sam_t *s, const json_t *where, bool users_only,
                                 int (*cmp)(const void *, const void *), int *rc)
{
    json_t *all = sam_fetch(s, SAM_ASSOC, NULL, "assocs", rc);
    if (!all)
        return NULL;
    json_t *mine = json_array(), *a;
    size_t i;
    json_array_foreach(all, i, a)
    {
        if ((!users_only || *json_string_value(json_object_get(a, "user_name"))) &&
            sam_assoc_wanted(where, a))
            json_array_append(mine, a);
    }
    json_decref(all);
    sam_sort(mine, cmp);
    return mine;
}

/* Each association of assocs joined with the entity of ents whose "name" is
 * its key member, as one row; a user's row drops the parent when asked. */
static void sam_emit_joined(sam_t *s, json_t *assocs, json_t *ents, const char *key, bool is_user,
                            const sam_item_t *items, size_t n)
{
    size_t i, k;
    json_t *a, *e;
    json_array_foreach(assocs, i, a)
    {
        json_array_foreach(ents, k, e)
        {
            if (strcmp(json_string_value(json_object_get(e, "name")),
                       json_string_value(json_object_get(a, key))) != 0)
                continue;
            json_t *rec = json_deep_copy(a);
            if (!is_user && *json_string_value(json_object_get(a, "user_name")))
                json_object_del(rec, "parent_account"); /* users' rows show no parent */
            json_object_update_missing(rec, e);
            sam_row_t row = {.rec = rec, .user = is_user ? e : NULL, .account = is_user ? NULL : e};
            sam_emit(s, items, n, &row);
            json_decref(rec);
        }
    }
}

/* show user withassoc: one row per user association, joined with its user. */
static int sam_show_user_assocs(sam_t *s, json_t *users, const json_t *where,
                                const sam_item_t *items, size_t n)
{
    int rc;
    json_t *mine = sam_assocs_sorted(s, where, true, sam_assoc_by_user, &rc);
    if (!mine)
        return rc;
    sam_emit_joined(s, mine, users, "user_name", true, items, n);
    json_decref(mine);
    return 0;
}

static int sam_assoc_by_account(const void *pa, const void *pb)
{
    const json_t *a = *(json_t *const *)pa, *b = *(json_t *const *)pb;
    int c = sam_cmp_str(a, b, "account");
    if (c == 0)
        c = sam_cmp_str(a, b, "cluster");
    if (c == 0)
        c = sam_cmp_str(a, b, "user_name"); /* the account's own ("") first */
    return c ? c : sam_cmp_str(a, b, "partition");
}

/* show account withassoc: one row per association of the account (its own,
 * then its users'), joined with the account; users' rows show no parent. */
static int sam_show_account_assocs(sam_t *s, json_t *accounts, const json_t *where,
                                   const sam_item_t *items, size_t n)
{
    int rc;
    json_t *mine = sam_assocs_sorted(s, where, false, sam_assoc_by_account, &rc);
    if (!mine)
        return rc;
    sam_emit_joined(s, mine, accounts, "account", false, items, n);
    json_decref(mine);
    return 0;
}

static const sam_col_t *const *sam_tables(int ent)
{
    static const sam_col_t *const qos[] = {sam_qos_cols, NULL};
    static const sam_col_t *const acct[] = {sam_account_cols, sam_assoc_cols, NULL};
    static const sam_col_t *const user[] = {sam_user_cols, sam_assoc_cols, NULL};
    static const sam_col_t *const cluster[] = {sam_cluster_cols, sam_assoc_cols, NULL};
    static const sam_col_t *const assoc[] = {sam_assoc_cols, NULL};
    switch (ent) {
    case SAM_QOS:
        return qos;
    case SAM_ACCOUNT:
        return acct;
    case SAM_USER:
        return user;
    case SAM_CLUSTER:
        return cluster;
    default:
        return assoc;
    }
}

/* show cluster: the cluster rows joined with their root associations. */
static int sam_show_clusters(sam_t *s, json_t *rows, const sam_item_t *items, size_t n)
{
    int rc;
    json_t *all = sam_fetch(s, SAM_ASSOC, NULL, "assocs", &rc);
    if (!all)
        return rc;
    size_t i, k;
    json_t *c, *a;
    json_array_foreach(rows, i, c)
    {
        json_t *rec = json_deep_copy(c);
        json_array_foreach(all, k, a)
        {
            if (strcmp(json_string_value(json_object_get(a, "cluster")),
                       json_string_value(json_object_get(c, "name"))) != 0 ||
                strcmp(json_string_value(json_object_get(a, "account")), "root") != 0 ||
                *json_string_value(json_object_get(a, "user_name")))
                continue;
            json_object_update(rec, a);
            json_object_set(rec, "name", json_object_get(c, "name"));
        }
        sam_row_t row = {.rec = rec, .cluster = c};
        sam_emit(s, items, n, &row);
        json_decref(rec);
    }
    json_decref(all);
    return 0;
}

/* sacctmgr --json show qos: Slurm's data_parser keys for the names. */
static void sam_json_qos(sam_t *s, json_t *rows)
{
    json_t *items = json_array();
    size_t i;
    json_t *r;
    json_array_foreach(rows, i, r)
    {
        json_t *q =
            json_pack("{s:O?, s:O?, s:{s:o}}", "name", json_object_get(r, "name"), "description",
                      json_object_get(r, "description"), "priority", "number",
                      json_integer(json_integer_value(json_object_get(r, "priority"))));
        json_array_append_new(items, q);
    }
    loom_cli_json_print("qos", items, loom_cli_conf(&s->cli, NULL), s->argc, s->argv, &s->out);
}

static const char *const sam_list_keys[SAM_NENTS] = {"clusters", "accounts", "users", "qos",
                                                     "assocs"};

int sam_show(sam_t *s, int ent, int argc, char **argv)
{
    json_t *where = json_object();
    const char *format = NULL;
    int rc = sam_show_words(s, ent, argc, argv, where, &format);
    bool joined = s->withassoc && (ent == SAM_USER || ent == SAM_ACCOUNT);
    sam_item_t items[64];
    size_t n = 0;
    loom_err_t err = {0};
    if (rc == 0)
        rc = sam_parse_format(format                              ? format
                              : joined && ent == SAM_USER         ? sam_user_assoc_fmt
                              : joined                            ? sam_account_assoc_fmt
                              : s->wolimits && ent == SAM_CLUSTER ? sam_cluster_wol_fmt
                                                                  : sam_defaults[ent],
                              sam_tables(ent), items, &n, &err);
    if (rc < 0) {
        if (err.msg[0])
            fprintf(stderr, " %s\n", err.msg);
        json_decref(where);
        return 1;
    }
    if (ent == SAM_ASSOC) {
        rc = sam_show_assocs(s, where, items, n);
        json_decref(where);
        return rc < 0;
    }
    /* The joined forms filter the associations; the entity list by name only. */
    json_t *ewhere = joined ? json_object() : json_incref(where);
    if (joined && json_object_get(where, "names"))
        json_object_set(ewhere, "names", json_object_get(where, "names"));
    json_t *rows = sam_fetch(s, ent, ewhere, sam_list_keys[ent], &rc);
    json_decref(ewhere);
    if (rows && ent != SAM_QOS)
        sam_sort(rows, sam_by_name);
    if (rows && s->json) {
        sam_json_qos(s, rows);
    } else if (rows) {
        loom_pf_col_t cols[64];
        for (size_t i = 0; i < n; i++)
            cols[i] = items[i].pf;
        loom_pf_header(&s->pf, cols, n, &s->out);
        if (joined && ent == SAM_USER)
            rc = sam_show_user_assocs(s, rows, where, items, n);
        else if (joined)
            rc = sam_show_account_assocs(s, rows, where, items, n);
        else if (ent == SAM_CLUSTER)
            rc = sam_show_clusters(s, rows, items, n);
        size_t i;
        json_t *r;
        json_array_foreach(rows, i, r)
        {
            sam_row_t row = {.rec = r, .user = r, .account = r};
            if (!joined && ent != SAM_CLUSTER)
                sam_emit(s, items, n, &row);
        }
    }
    json_decref(rows);
    json_decref(where);
    return rows && rc >= 0 ? 0 : 1;
}
