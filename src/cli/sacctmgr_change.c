/*
 * sacctmgr_change.c - `sacctmgr add|modify|delete` (CLI_SPEC §10) and the
 * summaries Slurm 22.05 prints for them. Without -i the change is first
 * run as a dry run, its summary shown, and the commit question asked.
 */
#include "cli/sacctmgr.h"
#include "common/xalloc.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* Labels of the QOS settings summary, in Slurm's order. */
static const char *const sam_qos_summary[][2] = {
    {"Flags", "flags"},
    {"GraceTime", "grace_time"},
    {"GrpJobs", "grp_jobs"},
    {"GrpSubmitJobs", "grp_submit_jobs"},
    {"GrpTRES", "grp_tres"},
    {"GrpTRESMins", "grp_tres_mins"},
    {"GrpTRESRunMins", "grp_tres_run_mins"},
    {"GrpWall", "grp_wall"},
    {"MaxJobsPerAccount", "max_jobs_pa"},
    {"MaxJobsPerUser", "max_jobs_pu"},
    {"MaxSubmitJobsPerAccount", "max_submit_pa"},
    {"MaxSubmitJobsPerUser", "max_submit_pu"},
    {"MaxTRESPerAccount", "max_tres_pa"},
    {"MaxTRESPerJob", "max_tres"},
    {"MaxTRESPerNode", "max_tres_per_node"},
    {"MaxTRESPerUser", "max_tres_pu"},
    {"MinTRESPerJob", "min_tres"},
    {"MaxTRESMins", "max_tres_mins"},
    {"MaxWall", "max_wall"},
    {"Preempt", "preempt"},
    {"PreemptMode", "preempt_mode"},
    {"PreemptExemptTime", "preempt_exempt_time"},
    {"Priority", "priority"},
    {"UsageFactor", "usage_factor"},
    {"UsageThreshold", "usage_threshold"},
};

static const char *const sam_assoc_summary[][2] = {
    {"Fairshare", "shares"},
    {"GrpJobs", "grp_jobs"},
    {"GrpSubmitJobs", "grp_submit_jobs"},
    {"GrpTRES", "grp_tres"},
    {"GrpTRESMins", "grp_tres_mins"},
    {"GrpTRESRunMins", "grp_tres_run_mins"},
    {"GrpWall", "grp_wall"},
    {"MaxJobs", "max_jobs"},
    {"MaxSubmitJobs", "max_submit_jobs"},
    {"MaxTRES", "max_tres"},
    {"MaxTRESPerNode", "max_tres_per_node"},
    {"MaxTRESMins", "max_tres_mins"},
    {"MaxWall", "max_wall"},
    {"Parent", "parent"},
    {"Priority", "priority"},
    {"QOS", "qos"},
    {"DefQOS", "default_qos"},
};

typedef struct {
    json_t *names, *set, *where; /* names: add's; where: modify/delete's */
    json_t *accounts, *clusters, *partitions;
    bool has_where_cluster;
} sam_req_t;

const char *sam_type(int ent, const char *op, char *buf, size_t len)
{
    static const char *const names[SAM_NENTS] = {"cluster", "account", "user", "qos", "assoc"};
    snprintf(buf, len, "dbd.%s.%s", names[ent], op);
    return buf;
}

static void sam_add_names(json_t *arr, const char *list)
{
    loom_strv_t v = LOOM_STRV_INIT;
    loom_strv_split(&v, list, ",");
    for (size_t i = 0; i < v.n; i++)
        json_array_append_new(arr, json_string(v.v[i]));
    loom_strv_free(&v);
}

/* One Key[+-]=Value word of a set (or of an add). */
static int sam_set_word(int ent, char *word, json_t *set, loom_err_t *err)
{
    char *eq = strchr(word, '=');
    char op = '=';
    if (eq > word && (eq[-1] == '+' || eq[-1] == '-')) {
        op = eq[-1];
        eq[-1] = '\0';
    }
    *eq = '\0';
    const sam_key_t *k = sam_key_find(word, ent);
    if (!k) {
        if (op != '=')
            eq[-1] = op;
        *eq = '=';
        return loom_errf(err, -LOOM_EPARSE,
                         " Unknown option: %s\n Use keyword 'where' to modify "
                         "condition",
                         word);
    }
    json_t *v = NULL;
    int rc = sam_key_value(k, eq + 1, op, &v, err);
    if (rc < 0)
        return rc;
    json_object_set_new(set, k->col, v);
    return 0;
}

/* A where-style key (Name, Account, Cluster, Partition, User) or 0. */
static int sam_cond_word(sam_req_t *r, int ent, const char *key, const char *val)
{
    json_t *dst = NULL;
    if (!strcasecmp(key, "name") || !strcasecmp(key, "names") ||
        (ent == SAM_USER && !strcasecmp(key, "user")) ||
        (ent == SAM_ACCOUNT && !strcasecmp(key, "account")) ||
        (ent == SAM_QOS && !strcasecmp(key, "qos")) ||
        (ent == SAM_CLUSTER && !strcasecmp(key, "cluster")))
        dst = r->names;
    else if (!strcasecmp(key, "account") || !strcasecmp(key, "accounts") ||
             !strcasecmp(key, "acct"))
        dst = r->accounts;
    else if (!strcasecmp(key, "cluster") || !strcasecmp(key, "clusters"))
        dst = r->clusters;
    else if (!strcasecmp(key, "partition") || !strcasecmp(key, "partitions"))
        dst = r->partitions;
    if (!dst)
        return 0;
    if (dst == r->clusters)
        r->has_where_cluster = true;
    sam_add_names(dst, val);
    return 1;
}

static void sam_req_init(sam_req_t *r)
{
    r->names = json_array();
    r->set = json_object();
    r->accounts = json_array();
    r->clusters = json_array();
    r->partitions = json_array();
    r->has_where_cluster = false;
}

static void sam_req_free(sam_req_t *r)
{
    json_decref(r->names);
    json_decref(r->set);
    json_decref(r->accounts);
    json_decref(r->clusters);
    json_decref(r->partitions);
}

/* Parse "[where] conds... [set] assignments..." (add: everything is both). */
static int sam_parse(int ent, int argc, char **argv, bool is_add, sam_req_t *r, loom_err_t *err)
{
    bool in_set = false;
    for (int i = 0; i < argc; i++) {
        if (!strcasecmp(argv[i], "where")) {
            in_set = false;
            continue;
        }
        if (!strcasecmp(argv[i], "set")) {
            in_set = true;
            continue;
        }
        char *eq = strchr(argv[i], '=');
        if (!eq) {
            sam_add_names(r->names, argv[i]);
            continue;
        }
        char *key = loom_xstrndup(argv[i], (size_t)(eq - argv[i]));
        int cond = in_set ? 0 : sam_cond_word(r, ent, key, eq + 1);
        free(key);
        if (cond)
            continue;
        if (!in_set && !is_add)
            return loom_errf(err, -LOOM_EPARSE, " Unknown condition: %s", argv[i]);
        int rc = sam_set_word(ent, argv[i], r->set, err);
        if (rc < 0)
            return rc;
    }
    return 0;
}

static json_t *sam_where_json(const sam_req_t *r)
{
    json_t *w = json_object();
    if (json_array_size(r->names))
        json_object_set(w, "names", r->names);
    if (json_array_size(r->accounts))
        json_object_set(w, "accounts", r->accounts);
    if (json_array_size(r->clusters))
        json_object_set(w, "clusters", r->clusters);
    if (json_array_size(r->partitions))
        json_object_set(w, "partitions", r->partitions);
    return w;
}

/* ---- printing ------------------------------------------------------------------ */

static void sam_summary_value(const char *label, const json_t *v, loom_sbuf_t *out)
{
    if (json_is_array(v)) {
        for (size_t i = 0; i < json_array_size(v); i++)
            loom_sbuf_addf(out, "%s%s", i ? "," : "", json_string_value(json_array_get(v, i)));
    } else if (json_is_real(v)) {
        loom_sbuf_addf(out, "%.4f", json_real_value(v));
    } else if (json_is_integer(v) && (!strcmp(label, "GrpWall") || !strcmp(label, "MaxWall"))) {
        sam_fmt_value(SAM_MINS, v, out);
    } else if (json_is_integer(v) && !strcmp(label, "PreemptExemptTime")) {
        sam_fmt_value(SAM_SECS, v, out);
    } else if (json_is_object(v)) {
        sam_summary_value(label, json_object_get(v, "items"), out);
    } else {
        sam_fmt_value(SAM_INT, v, out);
    }
}

static void sam_print_limits(sam_t *s, const json_t *set, const char *const (*tab)[2], size_t n,
                             int width, const char *title)
{
    bool any = false;
    for (size_t i = 0; i < n; i++) {
        const json_t *v = json_object_get(set, tab[i][1]);
        if (!v || json_is_null(v))
            continue;
        if (!any && title)
            loom_sbuf_add(&s->out, title);
        any = true;
        loom_sbuf_t val = LOOM_SBUF_INIT;
        sam_summary_value(tab[i][0], v, &val);
        if (width == 25 && !strcmp(tab[i][0], "MaxJobsPerUser"))
            loom_sbuf_addf(&s->out, "  MaxJobsPerUser = %s\n", loom_sbuf_str(&val));
        else
            loom_sbuf_addf(&s->out, "  %-*s= %s\n", width, tab[i][0], loom_sbuf_str(&val));
        loom_sbuf_free(&val);
    }
}

static void sam_print_names(sam_t *s, const json_t *names)
{
    for (size_t i = 0; i < json_array_size(names); i++)
        loom_sbuf_addf(&s->out, "  %s\n", json_string_value(json_array_get(names, i)));
}

static const char *sam_js(const json_t *o, const char *k)
{
    const char *v = json_string_value(json_object_get(o, k));
    return v ? v : "";
}

static void sam_lower(char *s)
{
    for (; *s; s++)
        *s = (char)tolower((unsigned char)*s);
}

static void sam_add_error(sam_t *s, const char *msg)
{
    if (strstr(msg, "Parent account")) {
        loom_sbuf_addf(&s->err,
                       " %s\n        Contact your admin to add this account.\n"
                       " No associations created.\n",
                       msg);
    } else if (strstr(msg, "This account")) {
        loom_sbuf_addf(&s->err,
                       " %s\n        Contact your admin to add this account.\n"
                       " No associations or wckeys created.\n",
                       msg);
    }
}

/* ---- sending ----------------------------------------------------------------------- */

static int sam_send(sam_t *s, int ent, const char *op, json_t *body, json_t **reply)
{
    char type[64];
    loom_err_t err = {0};
    int rc =
        loom_dbd_call(&s->cli, &s->rpc, sam_type(ent, op, type, sizeof(type)), body, reply, &err);
    if (rc < 0 && *reply && json_object_get(*reply, "default_of"))
        return rc;
    if (rc < 0 && strstr(err.msg, "account '")) { /* add's own texts (sam_add_error) */
        sam_add_error(s, err.msg);
        return rc;
    }
    if (rc < 0)
        loom_sbuf_addf(&s->err, "sacctmgr: error: %s\n Error with request: %s\n", err.msg, err.msg);
    return rc;
}

/* Run the change; without -i first as a dry run, then ask. print shows the
 * summary of a reply and returns 0 when something changed. */
typedef int sam_print_f(sam_t *s, const sam_req_t *r, const json_t *reply);

static int sam_apply(sam_t *s, int ent, const char *op, json_t *body, const sam_req_t *r,
                     sam_print_f *print)
{
    json_t *reply = NULL;
    if (!s->immediate)
        json_object_set_new(body, "dry_run", json_true());
    int rc = sam_send(s, ent, op, body, &reply);
    if (rc == 0)
        rc = print(s, r, reply);
    else if (reply && json_object_get(reply, "default_of"))
        print(s, r, reply);
    json_decref(reply);
    if (rc != 0 || s->immediate)
        return rc != 0;
    if (!sam_commit_check(s)) {
        loom_sbuf_add(&s->out, " Changes Discarded\n");
        return 0;
    }
    json_object_del(body, "dry_run");
    reply = NULL;
    rc = sam_send(s, ent, op, body, &reply);
    json_decref(reply);
    return rc != 0;
}

/* ---- add --------------------------------------------------------------------------- */

static int sam_print_add_qos(sam_t *s, const sam_req_t *r, const json_t *reply)
{
    const json_t *added = json_object_get(reply, "added");
    if (json_array_size(added) == 0) {
        loom_sbuf_add(&s->out, " Nothing new added.\n");
        return 1;
    }
    loom_sbuf_add(&s->out, " Adding QOS(s)\n");
    sam_print_names(s, added);
    loom_sbuf_add(&s->out, " Settings\n");
    const char *descr = json_string_value(json_object_get(r->set, "description"));
    loom_sbuf_addf(&s->out, "  Description    = %s\n",
                   descr ? descr : json_string_value(json_array_get(added, 0)));
    sam_print_limits(s, r->set, sam_qos_summary, sizeof(sam_qos_summary) / sizeof(*sam_qos_summary),
                     25, NULL);
    return 0;
}

static int sam_print_add_account(sam_t *s, const sam_req_t *r, const json_t *reply)
{
    const json_t *added = json_object_get(reply, "added"),
                 *assocs = json_object_get(reply, "assocs");
    if (json_array_size(added) == 0 && json_array_size(assocs) == 0) {
        loom_sbuf_add(&s->out, " Nothing new added.\n");
        return 1;
    }
    loom_sbuf_add(&s->out, " Adding Account(s)\n");
    sam_print_names(s, added);
    const char *d = json_string_value(json_object_get(r->set, "description"));
    const char *o = json_string_value(json_object_get(r->set, "organization"));
    loom_sbuf_addf(&s->out, " Settings\n  Description     = %s\n  Organization    = %s\n",
                   d ? d : "Account Name", o ? o : "Parent/Account Name");
    loom_sbuf_add(&s->out, " Associations\n");
    for (size_t i = 0; i < json_array_size(assocs); i++) {
        const json_t *a = json_array_get(assocs, i);
        loom_sbuf_addf(&s->out, "  A = %-10.10s C = %-10.10s\n", sam_js(a, "account"),
                       sam_js(a, "cluster"));
    }
    json_t *lim = json_deep_copy(r->set);
    if (!json_object_get(lim, "parent") && !r->has_where_cluster)
        json_object_set_new(lim, "parent", json_string("root"));
    sam_print_limits(s, lim, sam_assoc_summary,
                     sizeof(sam_assoc_summary) / sizeof(*sam_assoc_summary), 14, " Settings\n");
    json_decref(lim);
    return 0;
}

static int sam_assoc_cmp(const void *pa, const void *pb)
{
    const json_t *a = *(json_t *const *)pa, *b = *(json_t *const *)pb;
    int c = strcmp(sam_js(a, "user_name"), sam_js(b, "user_name"));
    if (c == 0)
        c = strcmp(sam_js(a, "account"), sam_js(b, "account"));
    return c ? c : strcmp(sam_js(a, "partition"), sam_js(b, "partition"));
}

static void sam_print_user_assocs(sam_t *s, const json_t *assocs)
{
    size_t n = json_array_size(assocs);
    json_t **v = loom_xcalloc(n + 1, sizeof(*v));
    for (size_t i = 0; i < n; i++)
        v[i] = json_array_get(assocs, i);
    qsort(v, n, sizeof(*v), sam_assoc_cmp);
    for (size_t i = 0; i < n; i++) {
        loom_sbuf_addf(&s->out, "  U = %-9.9s A = %-10.10s C = %-10.10s", sam_js(v[i], "user_name"),
                       sam_js(v[i], "account"), sam_js(v[i], "cluster"));
        if (*sam_js(v[i], "partition"))
            loom_sbuf_addf(&s->out, " P = %-10.10s", sam_js(v[i], "partition"));
        loom_sbuf_addc(&s->out, '\n');
    }
    free(v);
}

static int sam_print_add_user(sam_t *s, const sam_req_t *r, const json_t *reply)
{
    const json_t *added = json_object_get(reply, "added"),
                 *assocs = json_object_get(reply, "assocs");
    if (json_array_size(added) == 0 && json_array_size(assocs) == 0) {
        loom_sbuf_add(&s->out, " Nothing new added.\n");
        return 1;
    }
    loom_sbuf_add(&s->out, " Adding User(s)\n");
    sam_print_names(s, added);
    const char *def = json_string_value(json_object_get(r->set, "default_account"));
    const char *lvl = json_string_value(json_object_get(r->set, "admin_level"));
    if (def || lvl)
        loom_sbuf_add(&s->out, " Settings =\n");
    if (def)
        loom_sbuf_addf(&s->out, "  Default Account = %s\n", def);
    if (lvl)
        loom_sbuf_addf(&s->out, "  Admin Level     = %s\n", lvl);
    loom_sbuf_add(&s->out, " Associations =\n");
    sam_print_user_assocs(s, assocs);
    loom_sbuf_add(&s->out, " Non Default Settings\n");
    sam_print_limits(s, r->set, sam_assoc_summary,
                     sizeof(sam_assoc_summary) / sizeof(*sam_assoc_summary), 14, NULL);
    return 0;
}

static int sam_print_add_cluster(sam_t *s, const sam_req_t *r, const json_t *reply)
{
    const json_t *added = json_object_get(reply, "added");
    if (json_array_size(added) == 0) {
        loom_sbuf_add(&s->out, " Nothing new added.\n");
        return 1;
    }
    loom_sbuf_add(&s->out, " Adding Cluster(s)\n");
    for (size_t i = 0; i < json_array_size(added); i++)
        loom_sbuf_addf(&s->out, "  Name           = %s\n",
                       json_string_value(json_array_get(added, i)));
    return 0;
}

/* Slurm's client-side messages for requests it refuses before sending. */
static int sam_add_precheck(sam_t *s, int ent, const sam_req_t *r)
{
    static const char *const what[SAM_NENTS] = {"cluster", "account", "user", "qos", "assoc"};
    if (json_array_size(r->names) == 0) {
        loom_sbuf_addf(&s->err, " Need name of %s to add.\n", what[ent]);
        return 1;
    }
    if (ent == SAM_USER && json_array_size(r->accounts) == 0 &&
        !json_object_get(r->set, "default_account")) {
        loom_sbuf_add(&s->err, " Need name of account to add user to.\n");
        return 1;
    }
    return 0;
}

int sam_add(sam_t *s, int ent, int argc, char **argv)
{
    sam_req_t r;
    sam_req_init(&r);
    loom_err_t err = {0};
    int rc = sam_parse(ent, argc, argv, true, &r, &err);
    if (rc < 0) {
        fprintf(stderr, "%s\n", err.msg);
        sam_req_free(&r);
        return 1;
    }
    if (ent == SAM_ACCOUNT) /* Slurm folds these to lower case */
        for (const char *k = "description"; k;
             k = strcmp(k, "organization") ? "organization" : NULL)
            if (json_is_string(json_object_get(r.set, k))) {
                char *v = loom_xstrdup(json_string_value(json_object_get(r.set, k)));
                sam_lower(v);
                json_object_set_new(r.set, k, json_string(v));
                free(v);
            }
    rc = sam_add_precheck(s, ent, &r);
    if (rc == 0) {
        json_t *body =
            json_pack("{s:O, s:O, s:O, s:O, s:O}", "names", r.names, "set", r.set, "accounts",
                      r.accounts, "partitions", r.partitions, "clusters", r.clusters);
        sam_print_f *print = ent == SAM_QOS       ? sam_print_add_qos
                             : ent == SAM_ACCOUNT ? sam_print_add_account
                             : ent == SAM_USER    ? sam_print_add_user
                                                  : sam_print_add_cluster;
        rc = sam_apply(s, ent, "add", body, &r, print);
        json_decref(body);
    }
    sam_req_free(&r);
    return rc;
}

/* ---- modify ------------------------------------------------------------------------ */

static void sam_print_mod_assocs(sam_t *s, const json_t *assocs, const char *what)
{
    loom_sbuf_addf(&s->out, " Modified %s associations...\n", what);
    for (size_t i = 0; i < json_array_size(assocs); i++) {
        const json_t *a = json_array_get(assocs, i);
        if (*sam_js(a, "user_name"))
            loom_sbuf_addf(&s->out, "  C = %-10.10s A = %-20.20s U = %-9.9s\n",
                           sam_js(a, "cluster"), sam_js(a, "account"), sam_js(a, "user_name"));
        else
            loom_sbuf_addf(&s->out, "  C = %-10.10s A = %s of %s\n", sam_js(a, "cluster"),
                           sam_js(a, "account"), sam_js(a, "parent_account"));
    }
}

static int sam_print_modify(sam_t *s, const sam_req_t *r, const json_t *reply)
{
    const json_t *mod = json_object_get(reply, "modified");
    const json_t *names = json_object_get(reply, "names"),
                 *assocs = json_object_get(reply, "assocs");
    bool any = false;
    if (json_array_size(mod)) {
        loom_sbuf_add(&s->out, " Modified qos...\n");
        sam_print_names(s, mod);
        any = true;
    }
    const char *what = json_is_string(json_object_get(reply, "what"))
                           ? json_string_value(json_object_get(reply, "what"))
                           : "account";
    if (json_array_size(names)) {
        loom_sbuf_addf(&s->out, " Modified %ss...\n", what);
        sam_print_names(s, names);
        any = true;
    }
    if (json_array_size(assocs)) {
        sam_print_mod_assocs(s, assocs, what);
        any = true;
    }
    if (!any)
        loom_sbuf_add(&s->out, " Nothing modified\n");
    return any ? 0 : 1;
}

static int sam_print_modify_user(sam_t *s, const sam_req_t *r, const json_t *reply)
{
    json_t *copy = json_deep_copy(reply);
    json_object_set_new(copy, "what", json_string("user"));
    int rc = sam_print_modify(s, r, copy);
    json_decref(copy);
    return rc;
}

int sam_modify(sam_t *s, int ent, int argc, char **argv)
{
    sam_req_t r;
    sam_req_init(&r);
    loom_err_t err = {0};
    int rc = sam_parse(ent, argc, argv, false, &r, &err);
    if (rc < 0) {
        loom_sbuf_addf(&s->out, "%s\n", err.msg);
        sam_req_free(&r);
        return 1;
    }
    json_t *where = sam_where_json(&r);
    json_t *body = json_pack("{s:o, s:O}", "where", where, "set", r.set);
    rc = sam_apply(s, ent, "modify", body, &r,
                   ent == SAM_USER ? sam_print_modify_user : sam_print_modify);
    json_decref(body);
    sam_req_free(&r);
    return rc;
}

/* ---- delete ------------------------------------------------------------------------ */

static void sam_print_default_of(sam_t *s, const json_t *list)
{
    loom_sbuf_add(&s->err, " Associations listed below have these as their Default QOS.\n");
    for (size_t i = 0; i < json_array_size(list); i++) {
        const json_t *a = json_array_get(list, i);
        loom_sbuf_addf(&s->err, "  DefQOS = %-10.10s C = %-10.10s A = %-20.20s",
                       sam_js(a, "default_qos"), sam_js(a, "cluster"), sam_js(a, "account"));
        if (*sam_js(a, "user_name"))
            loom_sbuf_addf(&s->err, " U = %-9.9s", sam_js(a, "user_name"));
        loom_sbuf_addc(&s->err, '\n');
    }
    loom_sbuf_add(&s->err, " Please either remove the qos' listed above from list and resubmit,\n"
                           " or change the default qos to remove the qos.\n Changes Discarded\n");
}

static int sam_print_delete(sam_t *s, const sam_req_t *r, const json_t *reply)
{
    const json_t *deleted = json_object_get(reply, "deleted"),
                 *assocs = json_object_get(reply, "assocs");
    const char *what = sam_js(reply, "what");
    if (json_object_get(reply, "default_of")) {
        sam_print_default_of(s, json_object_get(reply, "default_of"));
        return 1;
    }
    if (json_array_size(deleted)) {
        loom_sbuf_addf(&s->out, " Deleting %s...\n", what);
        sam_print_names(s, deleted);
        return 0;
    }
    if (json_array_size(assocs) && !strcmp(what, "users")) {
        loom_sbuf_add(&s->out, " Deleting user associations...\n");
        for (size_t i = 0; i < json_array_size(assocs); i++) {
            const json_t *a = json_array_get(assocs, i);
            loom_sbuf_addf(&s->out, "  C = %-10.10s A = %-10.10s U = %-9.9s\n",
                           sam_js(a, "cluster"), sam_js(a, "account"), sam_js(a, "user_name"));
        }
        return 0;
    }
    loom_sbuf_add(&s->out, " Nothing deleted\n");
    return 1;
}

static int sam_print_delete_as(sam_t *s, const sam_req_t *r, const json_t *reply, const char *what)
{
    json_t *copy = json_deep_copy(reply);
    json_object_set_new(copy, "what", json_string(what));
    int rc = sam_print_delete(s, r, copy);
    json_decref(copy);
    return rc;
}

static int sam_print_delete_qos(sam_t *s, const sam_req_t *r, const json_t *reply)
{
    return sam_print_delete_as(s, r, reply, "QOS(s)");
}

static int sam_print_delete_account(sam_t *s, const sam_req_t *r, const json_t *reply)
{
    return sam_print_delete_as(s, r, reply, "accounts");
}

static int sam_print_delete_user(sam_t *s, const sam_req_t *r, const json_t *reply)
{
    return sam_print_delete_as(s, r, reply, "users");
}

static int sam_print_delete_cluster(sam_t *s, const sam_req_t *r, const json_t *reply)
{
    return sam_print_delete_as(s, r, reply, "clusters");
}

int sam_delete(sam_t *s, int ent, int argc, char **argv)
{
    sam_req_t r;
    sam_req_init(&r);
    loom_err_t err = {0};
    int rc = sam_parse(ent, argc, argv, false, &r, &err);
    if (rc < 0 || json_object_size(r.set)) {
        loom_sbuf_addf(&s->out, "%s\n", rc < 0 ? err.msg : " Unknown condition");
        sam_req_free(&r);
        return 1;
    }
    sam_print_f *print = ent == SAM_QOS       ? sam_print_delete_qos
                         : ent == SAM_ACCOUNT ? sam_print_delete_account
                         : ent == SAM_USER    ? sam_print_delete_user
                                              : sam_print_delete_cluster;
    json_t *body = json_pack("{s:o}", "where", sam_where_json(&r));
    rc = sam_apply(s, ent, "delete", body, &r, print);
    json_decref(body);
    sam_req_free(&r);
    return rc;
}
