/*
 * sacctmgr_keys.c - the Key=Value table of sacctmgr (CLI_SPEC §10): which
 * entity each key applies to, the record field it sets, and how values are
 * parsed and printed.
 */
#include "cli/sacctmgr.h"
#include "common/timefmt.h"
#include "common/xalloc.h"

#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define Q  (1u << SAM_QOS)
#define A  ((1u << SAM_ASSOC) | (1u << SAM_ACCOUNT) | (1u << SAM_USER) | (1u << SAM_CLUSTER))
#define AC (1u << SAM_ACCOUNT)
#define U  (1u << SAM_USER)

static const sam_key_t sam_keys[] = {
    {"Description", "Descr", "description", SAM_STR, Q | AC},
    {"Organization", "Org", "organization", SAM_STR, AC},
    {"Parent", NULL, "parent", SAM_STR, AC},
    {"DefaultAccount", "DefAcct", "default_account", SAM_STR, U},
    {"AdminLevel", "Admin", "admin_level", SAM_LEVEL, U},
    {"Priority", NULL, "priority", SAM_INT, Q | A},
    {"GraceTime", NULL, "grace_time", SAM_SECS, Q},
    {"Preempt", NULL, "preempt", SAM_LIST, Q},
    {"PreemptMode", NULL, "preempt_mode", SAM_UPPER, Q},
    {"PreemptExemptTime", NULL, "preempt_exempt_time", SAM_SECS, Q},
    {"Flags", NULL, "flags", SAM_STR, Q},
    {"UsageThreshold", "UsageThres", "usage_threshold", SAM_FLOAT, Q},
    {"UsageFactor", NULL, "usage_factor", SAM_FLOAT, Q},
    {"GrpTRES", NULL, "grp_tres", SAM_TRES, Q | A},
    {"GrpTRESMins", NULL, "grp_tres_mins", SAM_TRES, Q | A},
    {"GrpTRESRunMins", "GrpTRESRunMin", "grp_tres_run_mins", SAM_TRES, Q | A},
    {"GrpJobs", NULL, "grp_jobs", SAM_INT, Q | A},
    {"GrpSubmitJobs", "GrpSubmit", "grp_submit_jobs", SAM_INT, Q | A},
    {"GrpWall", NULL, "grp_wall", SAM_MINS, Q | A},
    {"MaxTRES", "MaxTRESPerJob", "max_tres", SAM_TRES, Q | A},
    {"MaxTRESPerNode", NULL, "max_tres_per_node", SAM_TRES, Q | A},
    {"MaxTRESMins", "MaxTRESMinsPerJob", "max_tres_mins", SAM_TRES, Q | A},
    {"MaxWall", "MaxWallDurationPerJob", "max_wall", SAM_MINS, Q | A},
    {"MaxTRESPerUser", "MaxTRESPU", "max_tres_pu", SAM_TRES, Q},
    {"MaxJobsPerUser", "MaxJobsPU", "max_jobs_pu", SAM_INT, Q},
    {"MaxSubmitJobsPerUser", "MaxSubmitPU|MaxSubmitJobsPU", "max_submit_pu", SAM_INT, Q},
    {"MaxTRESPerAccount", "MaxTRESPA", "max_tres_pa", SAM_TRES, Q},
    {"MaxJobsPerAccount", "MaxJobsPA", "max_jobs_pa", SAM_INT, Q},
    {"MaxSubmitJobsPerAccount", "MaxSubmitPA|MaxSubmitJobsPA", "max_submit_pa", SAM_INT, Q},
    {"MinTRES", "MinTRESPerJob", "min_tres", SAM_TRES, Q},
    {"Fairshare", "Shares|Share", "shares", SAM_INT, A},
    {"MaxJobs", NULL, "max_jobs", SAM_INT, A},
    {"MaxSubmitJobs", "MaxSubmit", "max_submit_jobs", SAM_INT, A},
    {"QOS", "QOSLevel", "qos", SAM_LIST, A},
    {"DefaultQOS", "DefQOS", "default_qos", SAM_STR, A},
};

static bool sam_name_is(const sam_key_t *k, const char *name)
{
    if (strcasecmp(k->name, name) == 0)
        return true;
    if (!k->alias)
        return false;
    size_t n = strlen(name);
    for (const char *a = k->alias; *a;) {
        size_t len = strcspn(a, "|");
        if (len == n && strncasecmp(a, name, n) == 0)
            return true;
        a += len + (a[len] == '|');
    }
    return false;
}

const sam_key_t *sam_key_find(const char *name, int ent)
{
    for (size_t i = 0; i < sizeof(sam_keys) / sizeof(sam_keys[0]); i++)
        if ((sam_keys[i].ents & (1u << ent)) && sam_name_is(&sam_keys[i], name))
            return &sam_keys[i];
    return NULL;
}

static int sam_int(const char *v, json_t **out, loom_err_t *err, const char *key)
{
    char *end;
    errno = 0;
    long long n = strtoll(v, &end, 10);
    if (errno || end == v || *end || n < -1)
        return loom_errf(err, -LOOM_EPARSE, "Invalid value '%s' for %s", v, key);
    *out = n < 0 ? json_null() : json_integer(n);
    return 0;
}

static int sam_time(const sam_key_t *k, const char *v, json_t **out, loom_err_t *err)
{
    int64_t t;
    if (k->kind == SAM_SECS && strspn(v, "0123456789") == strlen(v) && *v) /* plain seconds */
        return sam_int(v, out, err, k->name);
    int rc =
        k->kind == SAM_MINS ? loom_time_parse_mins(v, &t, err) : loom_time_parse_secs(v, &t, err);
    if (rc < 0)
        return rc;
    *out = t < 0 ? json_null() : json_integer(t);
    return 0;
}

static void sam_list(const char *v, char op, json_t **out)
{
    loom_strv_t items = LOOM_STRV_INIT;
    loom_strv_split(&items, v, ",");
    json_t *arr = json_array();
    for (size_t i = 0; i < items.n; i++)
        if (strcmp(items.v[i], "-1") != 0)
            json_array_append_new(arr, json_string(items.v[i]));
    loom_strv_free(&items);
    *out = op == '=' ? arr : json_pack("{s:s#, s:o}", "op", &op, (int)1, "items", arr);
}

static int sam_level(const char *v, json_t **out, loom_err_t *err)
{
    static const char *const names[][2] = {
        {"none", "None"},
        {"operator", "Operator"},
        {"admin", "Administrator"},
        {"administrator", "Administrator"},
    };
    for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
        if (strcasecmp(v, names[i][0]) == 0) {
            *out = json_string(names[i][1]);
            return 0;
        }
    }
    return loom_errf(err, -LOOM_EPARSE, "Invalid AdminLevel '%s'", v);
}

int sam_key_value(const sam_key_t *k, const char *v, char op, json_t **out, loom_err_t *err)
{
    if (op != '=' && k->kind != SAM_LIST)
        return loom_errf(err, -LOOM_EPARSE, "%s takes no '%c='", k->name, op);
    switch (k->kind) {
    case SAM_INT:
        return sam_int(v, out, err, k->name);
    case SAM_MINS:
    case SAM_SECS:
        return sam_time(k, v, out, err);
    case SAM_LIST:
        sam_list(v, op, out);
        return 0;
    case SAM_FLOAT: {
        char *end;
        double d = strtod(v, &end);
        if (end == v || *end)
            return loom_errf(err, -LOOM_EPARSE, "Invalid value '%s' for %s", v, k->name);
        *out = json_real(d);
        return 0;
    }
    case SAM_LEVEL:
        return sam_level(v, out, err);
    case SAM_UPPER: {
        char *u = loom_xstrdup(v);
        for (char *c = u; *c; c++)
            *c = (char)toupper((unsigned char)*c);
        *out = json_string(u);
        free(u);
        return 0;
    }
    default:
        *out = strcmp(v, "-1") == 0 ? json_null() : json_string(v);
        return 0;
    }
}

static int sam_strcmp(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

void sam_fmt_value(char kind, const json_t *v, loom_sbuf_t *out)
{
    if (!v || json_is_null(v))
        return;
    if (json_is_string(v) && kind == SAM_LIST) { /* Slurm prints lists sorted */
        loom_strv_t items = LOOM_STRV_INIT;
        loom_strv_split(&items, json_string_value(v), ",");
        qsort(items.v, items.n, sizeof(char *), sam_strcmp);
        for (size_t i = 0; i < items.n; i++)
            loom_sbuf_addf(out, "%s%s", i ? "," : "", items.v[i]);
        loom_strv_free(&items);
        return;
    }
    if (json_is_string(v)) {
        if (kind == SAM_FLOAT)
            loom_sbuf_addf(out, "%f", strtod(json_string_value(v), NULL));
        else
            loom_sbuf_add(out, json_string_value(v));
        return;
    }
    int64_t n = json_integer_value(v);
    if (kind == SAM_MINS)
        loom_time_fmt_limit(n * 60, out);
    else if (kind == SAM_SECS)
        loom_time_fmt_limit(n, out);
    else
        loom_sbuf_addf(out, "%lld", (long long)n);
}
