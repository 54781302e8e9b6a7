/*
 * scontrol_update.c - scontrol update (jobs, nodes), hold, uhold, release,
 * requeue, requeuehold (CLI_SPEC §9; docs/proto/messages.md §3).
 *
 * `update JobId=<id> Key=Value ...` sends job.update with `changes` keyed by
 * scontrol's canonical names and normalised values: times in minutes (-1
 * infinite), dates as epoch seconds, memory in MiB, counts as integers,
 * Requeue as a bool, NumNodes=min[-max] as NumNodes (+ MaxNodes); the rest as
 * strings. Keys are checked here first so a typo never reaches the controller:
 * "Update of this parameter is not supported: Key=Value", as Slurm says.
 */
#include "cli/scontrol.h"

#include "cli/cli_format.h"
#include "common/conf_keys.h"
#include "common/hostlist.h"
#include "common/memsize.h"
#include "common/timefmt.h"
#include "common/xalloc.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

typedef enum { UPD_STR, UPD_INT, UPD_MINS, UPD_DATE, UPD_MEM, UPD_BOOL, UPD_NODES } update_kind_t;

typedef struct update_key {
    const char *name;  /* canonical, sent on the wire */
    const char *alias; /* another spelling scontrol accepts, or NULL */
    update_kind_t kind;
} update_key_t;

/* clang-format off */
static const update_key_t update_job_keys[] = {
    {"TimeLimit", NULL, UPD_MINS},        {"TimeMin", NULL, UPD_MINS},
    {"StartTime", "EligibleTime", UPD_DATE}, {"Deadline", NULL, UPD_DATE},
    {"Priority", NULL, UPD_INT},          {"Nice", NULL, UPD_INT},
    {"SiteFactor", NULL, UPD_INT},
    {"NumCPUs", "MinCPUs", UPD_INT},      {"NumTasks", "ReqProcs", UPD_INT},
    {"MinCPUsNode", NULL, UPD_INT},       {"CPUsPerTask", NULL, UPD_INT},
    {"ArrayTaskThrottle", NULL, UPD_INT}, {"NumNodes", "ReqNodes", UPD_NODES},
    {"MinMemoryNode", NULL, UPD_MEM},     {"MinMemoryCPU", NULL, UPD_MEM},
    {"MinTmpDiskNode", NULL, UPD_MEM},    {"Requeue", NULL, UPD_BOOL},
    {"Contiguous", NULL, UPD_BOOL},       {"Partition", NULL, UPD_STR},
    {"QOS", NULL, UPD_STR},               {"Account", NULL, UPD_STR},
    {"Features", NULL, UPD_STR},          {"Dependency", NULL, UPD_STR},
    {"Name", "JobName", UPD_STR},         {"Reservation", NULL, UPD_STR},
    {"TresPerNode", "Gres", UPD_STR},     {"MailType", NULL, UPD_STR},
    {"MailUser", NULL, UPD_STR},          {"Comment", NULL, UPD_STR},
    {"AdminComment", NULL, UPD_STR},      {"ReqNodeList", "NodeList", UPD_STR},
    {"ExcNodeList", NULL, UPD_STR},       {"Licenses", NULL, UPD_STR},
    {"WCKey", NULL, UPD_STR},             {"WorkDir", NULL, UPD_STR},
    {"OverSubscribe", "Shared", UPD_STR}, {"StdOut", NULL, UPD_STR},
    {"Reboot", NULL, UPD_BOOL},
};
/* clang-format on */

static const update_key_t *update_find(const char *key, size_t len)
{
    for (size_t i = 0; i < sizeof(update_job_keys) / sizeof(update_job_keys[0]); i++) {
        const update_key_t *k = &update_job_keys[i];
        if ((strlen(k->name) == len && strncasecmp(k->name, key, len) == 0) ||
            (k->alias && strlen(k->alias) == len && strncasecmp(k->alias, key, len) == 0))
            return k;
    }
    return NULL;
}

static bool update_int(const char *s, int64_t *v)
{
    char *end;
    long long x = strtoll(s, &end, 10);
    if (!*s || *end)
        return false;
    *v = x;
    return true;
}

/* Minutes; "TimeLimit=+N" and "-N" move the job's limit (scontrol 22.05): sent
 * as the signed minutes in a string, the controller applies them per job. */
static json_t *update_mins(const update_key_t *k, const char *val)
{
    int64_t v;
    bool rel = !strcmp(k->name, "TimeLimit") && (*val == '+' || *val == '-');
    if (loom_time_parse_mins(rel ? val + 1 : val, &v, NULL) < 0 || (rel && v < 0))
        return NULL;
    if (!rel)
        return json_integer(v);
    char text[32];
    snprintf(text, sizeof(text), "%c%lld", *val, (long long)v);
    return json_string(text);
}

/* Normalise one value; NULL when it does not parse. */
static json_t *update_value(const update_key_t *k, const char *val, json_t *changes)
{
    int64_t v;
    uint64_t mib;
    time_t t;
    switch (k->kind) {
    case UPD_STR:
        return json_string(val);
    case UPD_INT:
        return update_int(val, &v) ? json_integer(v) : NULL;
    case UPD_MINS:
        return update_mins(k, val);
    case UPD_DATE:
        return loom_date_parse(val, time(NULL), &t, NULL) == 0 ? json_integer((json_int_t)t) : NULL;
    case UPD_MEM:
        return loom_mem_parse_mib(val, &mib, NULL) == 0 ? json_integer((json_int_t)mib) : NULL;
    case UPD_BOOL:
        if (!strcasecmp(val, "yes") || !strcmp(val, "1"))
            return json_true();
        return !strcasecmp(val, "no") || !strcmp(val, "0") ? json_false() : NULL;
    case UPD_NODES: {
        char *dash = strchr(val, '-');
        char *lo = loom_xstrndup(val, dash ? (size_t)(dash - val) : strlen(val));
        int64_t hi;
        bool ok = update_int(lo, &v) && (!dash || update_int(dash + 1, &hi));
        free(lo);
        if (!ok)
            return NULL;
        if (dash)
            json_object_set_new(changes, "MaxNodes", json_integer(hi));
        return json_integer(v);
    }
    }
    return NULL;
}

/* strtoll's reading, as scontrol 22.05 takes Nice=, SiteFactor= and
 * ArrayTaskThrottle=: a leading number, anything else 0. */
static json_t *update_lenient(const char *val)
{
    return json_integer((json_int_t)strtoll(val, NULL, 10));
}

/* Slurm's date parser names the position it stopped at; Loom says it for a
 * value that starts with neither a number nor one of its words (pos 0). */
static void update_date_hint(const char *val)
{
    static const char *const words[] = {"now",  "today",     "tomorrow", "midnight",
                                        "noon", "elevenses", "fika",     "teatime"};
    if (isdigit((unsigned char)*val))
        return;
    for (size_t i = 0; i < sizeof(words) / sizeof(words[0]); i++)
        if (strncasecmp(val, words[i], strlen(words[i])) == 0)
            return;
    fprintf(stderr, "Invalid time specification (pos=0): %s\n", val);
}

/* Values scontrol 22.05 checks itself before sending. NULL: not valid. */
static json_t *update_checked(const update_key_t *k, const char *val, json_t *changes)
{
    static const char *const mail[] = {
        "NONE",          "BEGIN",          "END",        "FAIL",       "REQUEUE",
        "ALL",           "INVALID_DEPEND", "STAGE_OUT",  "TIME_LIMIT", "TIME_LIMIT_90",
        "TIME_LIMIT_80", "TIME_LIMIT_50",  "ARRAY_TASKS"};
    if (!strcmp(k->name, "OverSubscribe"))
        return !strcasecmp(val, "yes") || !strcasecmp(val, "no") ? json_string(val) : NULL;
    if (strcmp(k->name, "MailType") != 0)
        return update_value(k, val, changes);
    loom_strv_t parts = LOOM_STRV_INIT;
    loom_strv_split(&parts, val, ",");
    bool ok = parts.n > 0;
    for (size_t i = 0; ok && i < parts.n; i++) {
        ok = false;
        for (size_t m = 0; m < sizeof(mail) / sizeof(mail[0]); m++)
            ok = ok || !strcasecmp(parts.v[i], mail[m]);
    }
    loom_strv_free(&parts);
    return ok ? json_string(val) : NULL;
}

/* A value that did not parse, as scontrol 22.05 words it. Returns -1 to abort
 * (exit 1), 0 to drop the word and go on, 1 to stop quietly with exit 0. */
static int update_bad_value(const update_key_t *k, const char *word, const char *val)
{
    if (k->kind == UPD_DATE) {
        update_date_hint(val);
        return 0;
    }
    if (k->kind == UPD_NODES) {
        fprintf(stderr, "scontrol: error: Invalid numeric value \"%s\" for requested node count.\n",
                val);
        return 1;
    }
    if (k->kind == UPD_MINS) {
        fprintf(stderr, "scontrol: error: Invalid %s value\n", k->name);
        return -1;
    }
    if (!strcmp(k->name, "MailType")) {
        fprintf(stderr, "Invalid MailType: %s\n", val);
        return -1;
    }
    if (!strcmp(k->name, "NumCPUs"))
        fprintf(stderr, "scontrol: error: Invalid numeric value \"%s\" for NumCPUs.\n", val);
    if (!strcmp(k->name, "Reboot")) {
        fprintf(stderr, "scontrol: error: Invalid reboot value: %s\n", val);
        return -1;
    }
    if (k->kind != UPD_STR || !strcmp(k->name, "OverSubscribe")) {
        fprintf(stderr, "scontrol: error: Invalid %s value: %s\n", k->name, val);
        return -1;
    }
    fprintf(stderr, "Invalid input: %s\n", word);
    fprintf(stderr, "Request aborted\n");
    return -1;
}

/* "Key=Value" words into changes; prints Slurm's message and fails on a bad one.
 * Returns 0, -1 (exit 1) or 1 (nothing sent, exit 0). */
static int update_job_changes(loom_scontrol_t *sc, int n, char **w, json_t *changes)
{
    for (int i = 0; i < n; i++) {
        const char *eq = strchr(w[i], '=');
        const update_key_t *k = eq ? update_find(w[i], (size_t)(eq - w[i])) : NULL;
        if (!k) {
            fprintf(stderr, "Update of this parameter is not supported: %s\n", w[i]);
            fprintf(stderr, "Request aborted\n");
            return -1;
        }
        bool lenient = !strcmp(k->name, "Nice") || !strcmp(k->name, "SiteFactor") ||
                       !strcmp(k->name, "ArrayTaskThrottle");
        json_t *v = lenient ? update_lenient(eq + 1) : update_checked(k, eq + 1, changes);
        if (!v) {
            int rc = update_bad_value(k, w[i], eq + 1);
            if (rc != 0)
                return rc;
            continue;
        }
        if (!strcmp(k->name, "SiteFactor") && llabs(json_integer_value(v)) > 2147483645) {
            json_decref(v); /* as scontrol 22.05 says it */
            fprintf(stderr, "scontrol: error: SiteFactor value out of range (+/- 2147483645). "
                            "Value ignored\n");
            return -1;
        }
        json_object_set_new(changes, k->name, v);
    }
    if (json_object_size(changes) == 0) {
        fprintf(stderr, "No changes specified\n");
        return -1;
    }
    return 0;
}

/* "12_[1-3]" as slurmctld 22.05 words it in errors: "12_1-3". */
static void update_say_task(const char *text, int rc)
{
    loom_sbuf_t sb = LOOM_SBUF_INIT;
    for (const char *p = text; *p; p++)
        if (*p != '[' && *p != ']')
            loom_sbuf_addc(&sb, *p);
    fprintf(stderr, "%s: %s\n", loom_sbuf_str(&sb), loom_strerror(rc));
    loom_sbuf_free(&sb);
}

/* Some of the array tasks named exist and others do not: slurmctld 22.05
 * acts on the first and scontrol reports both parts, "12_1,3-4: No error"
 * then "12_9: Invalid job id specified". False when res says nothing so. */
static bool update_tasks_missing(const json_t *res, int64_t job_id, int rc)
{
    const char *done = json_string_value(json_object_get(res, "tasks_done"));
    const char *missing = json_string_value(json_object_get(res, "tasks_missing"));
    if (!done || !missing)
        return false;
    fprintf(stderr, "%lld_%s: No error\n", (long long)job_id, done);
    fprintf(stderr, "%lld_%s: %s\n", (long long)job_id, missing, loom_strerror(rc));
    return true;
}

static int update_job(loom_scontrol_t *sc, const char *idtext, int n, char **w)
{
    loom_jobid_t id;
    if (loom_jobid_parse(idtext, &id, NULL) < 0) {
        fprintf(stderr, "Invalid job id specified for job %s\n", idtext);
        return sc->cli.exit_error;
    }
    json_t *changes = json_object(), *reply = NULL;
    int rc = update_job_changes(sc, n, w, changes);
    if (rc > 0) { /* scontrol 22.05 exits 0 there */
        json_decref(changes);
        loom_jobid_free(&id);
        return 0;
    }
    if (rc == 0) {
        json_t *body = json_pack("{s:I, s:o}", "job_id", (json_int_t)id.job_id, "changes",
                                 json_incref(changes));
        if (id.array == LOOM_JOBID_ARRAY_ONE)
            json_object_set_new(body, "array_tasks", json_sprintf("%u", id.task));
        else if (id.array == LOOM_JOBID_ARRAY_SET) {
            loom_sbuf_t t = LOOM_SBUF_INIT;
            loom_rangeset_format(&id.tasks, &t);
            json_object_set_new(body, "array_tasks", json_string(loom_sbuf_str(&t)));
            loom_sbuf_free(&t);
        }
        loom_err_t err = {0};
        rc = loom_cli_call(&sc->cli, "job.update", body, &reply, &err);
        json_decref(body);
        bool told = rc < 0 && update_tasks_missing(reply, id.job_id, rc);
        if (rc < 0 && !strncmp(err.msg, "TimeLimit decrement", 19)) /* scontrol's own words */
            fprintf(stderr, "scontrol: error: %s\n", err.msg);
        else if (rc < 0 && !told && id.array != LOOM_JOBID_ARRAY_NONE)
            update_say_task(idtext, rc);
        else if (rc < 0 && !told)
            fprintf(stderr, "%s for job %s\n", loom_strerror(rc), idtext);
    }
    json_decref(reply);
    json_decref(changes);
    loom_jobid_free(&id);
    return rc < 0 ? sc->cli.exit_error : 0;
}

/* ---- nodes ----------------------------------------------------------------- */

static const char *const update_node_states[] = {
    "DOWN",
    "DRAIN",
    "FAIL",
    "FUTURE",
    "IDLE",
    "RESUME",
    "UNDRAIN",
    "NORESP",
    "POWER_DOWN",
    "POWER_UP",
    "POWER_DOWN_ASAP",
    "POWER_DOWN_FORCE",
    "CANCEL_REBOOT",
};

static const char *update_node_state(const char *val)
{
    for (size_t i = 0; i < sizeof(update_node_states) / sizeof(update_node_states[0]); i++)
        if (strcasecmp(val, update_node_states[i]) == 0)
            return update_node_states[i];
    return NULL;
}

static int update_node_bad_state(loom_scontrol_t *sc, const char *word)
{
    fprintf(stderr, "Invalid input: %s\n", word);
    fprintf(stderr, "Request aborted\n");
    fprintf(stderr, "Valid states are: NoResp DRAIN FAIL FUTURE RESUME POWER_DOWN POWER_UP "
                    "UNDRAIN\n");
    fprintf(stderr, "Not all states are valid given a node's prior state\n");
    return sc->cli.exit_error;
}

static int update_node_field(loom_scontrol_t *sc, const char *word, json_t *body)
{
    static const char *const keys[][2] = {
        {"Reason", "reason"},
        {"Features", "features"},
        {"AvailableFeatures", "features"},
        {"ActiveFeatures", "active_features"},
        {"Comment", "comment"},
        {"Extra", "extra"},
    };
    const char *eq = strchr(word, '=');
    size_t klen = eq ? (size_t)(eq - word) : 0;
    if (eq && klen == 5 && strncasecmp(word, "State", 5) == 0) {
        const char *st = update_node_state(eq + 1);
        if (!st)
            return update_node_bad_state(sc, word);
        json_object_set_new(body, "state", json_string(st));
        return 0;
    }
    if (eq && klen == 6 && strncasecmp(word, "Weight", 6) == 0) {
        int64_t w;
        if (update_int(eq + 1, &w)) {
            json_object_set_new(body, "weight", json_integer(w));
            return 0;
        }
    }
    for (size_t i = 0; eq && i < sizeof(keys) / sizeof(keys[0]); i++)
        if (strlen(keys[i][0]) == klen && strncasecmp(word, keys[i][0], klen) == 0) {
            json_object_set_new(body, keys[i][1], json_string(eq + 1));
            return 0;
        }
    fprintf(stderr, "Update of this parameter is not supported: %s\n", word);
    fprintf(stderr, "Request aborted\n");
    return sc->cli.exit_error;
}

static int update_node(loom_scontrol_t *sc, const char *names, int n, char **w)
{
    json_t *body = json_pack("{s:s}", "nodes", names);
    int rc = 0;
    for (int i = 0; i < n && rc == 0; i++)
        rc = update_node_field(sc, w[i], body);
    const char *st = loom_js(body, "state");
    if (rc == 0 && st && !loom_js(body, "reason") &&
        (!strcmp(st, "DOWN") || !strcmp(st, "DRAIN") || !strcmp(st, "FAIL"))) {
        fprintf(stderr, "You must specify a reason when DOWNING or DRAINING a node. "
                        "Request denied\n");
        rc = sc->cli.exit_error;
    }
    if (rc == 0) {
        loom_err_t err = {0};
        if (loom_cli_call(&sc->cli, "node.update", body, NULL, &err) < 0) {
            fprintf(stderr, "slurm_update error: %s\n",
                    err.code == -EINVAL       ? err.msg
                    : err.code == -LOOM_EPERM ? "Invalid user id"
                                              : loom_strerror(err.code));
            rc = sc->cli.exit_error;
        }
    }
    json_decref(body);
    return rc;
}

/* One partition change checked as scontrol 22.05.8 checks it (its words). */
static int update_partition_word(loom_scontrol_t *sc, const char *word, json_t *changes)
{
    const char *eq = strchr(word, '=');
    if (!eq) {
        fprintf(stderr, "scontrol: error: Invalid input: %s\nscontrol: error: Request aborted\n",
                word);
        return sc->cli.exit_error;
    }
    char *key = loom_xstrndup(word, (size_t)(eq - word));
    loom_conf_part_t scratch;
    memset(&scratch, 0, sizeof(scratch));
    loom_err_t err = {0};
    int rc = loom_conf_part_change(&scratch, key, eq + 1, &err);
    if (rc == 0)
        json_object_set_new(changes, key, json_string(eq + 1));
    else if (strcasecmp(key, "State") == 0)
        fprintf(stderr,
                "scontrol: error: Invalid input: %s\nscontrol: error: Acceptable State "
                "values are UP, DOWN, DRAIN and INACTIVE\n",
                word);
    else if (rc == -LOOM_ENOT_SUPPORTED)
        fprintf(stderr,
                "scontrol: error: Update of this parameter is not supported: %s\n\n"
                "scontrol: error: Request aborted\n",
                word);
    else
        fprintf(stderr, "scontrol: error: Invalid input %s\n", word);
    free(key);
    if (rc < 0)
        fprintf(stderr, "slurm_update error: No error\n"); /* 22.05.8 says so */
    return rc < 0 ? sc->cli.exit_error : 0;
}

static int update_partition(loom_scontrol_t *sc, const char *name, int n, char **w)
{
    json_t *changes = json_object();
    for (int i = 0; i < n; i++) {
        if (update_partition_word(sc, w[i], changes) != 0) {
            json_decref(changes);
            return sc->cli.exit_error;
        }
    }
    json_t *body = json_pack("{s:s, s:o}", "name", name, "changes", changes);
    loom_err_t err = {0};
    int rc = loom_cli_call(&sc->cli, "part.update", body, NULL, &err);
    json_decref(body);
    if (rc < 0) {
        fprintf(stderr, "slurm_update error: %s\n",
                rc == -LOOM_EPERM || rc == -LOOM_EACCESS ? "Invalid user id" : err.msg);
        return sc->cli.exit_error;
    }
    return 0;
}

int loom_scontrol_update(loom_scontrol_t *sc, int n, char **w)
{
    if (n < 1) {
        fprintf(stderr, "too few arguments for update keyword\n");
        return sc->cli.exit_error;
    }
    loom_err_t err = {0};
    if (!loom_cli_conf(&sc->cli, &err)) {
        loom_cli_error(&sc->cli, "%s", err.msg);
        return sc->cli.exit_error;
    }
    /* "job 12 Key=Value ..." (scontrol 22.05 takes that spelling too). */
    if (n >= 2 && !strchr(w[0], '=') && (!strcasecmp(w[0], "job") || !strcasecmp(w[0], "jobid")))
        return update_job(sc, w[1], n - 2, w + 2);
    /* The record selector may be any of the words; Slurm takes the first. */
    for (int i = 0; i < n; i++) {
        const char *eq = strchr(w[i], '=');
        if (!eq)
            continue;
        size_t klen = (size_t)(eq - w[i]);
        char **rest = loom_xcalloc((size_t)n, sizeof(char *));
        int m = 0;
        for (int k = 0; k < n; k++)
            if (k != i)
                rest[m++] = w[k];
        int rc = -1;
        if (klen >= 3 && klen <= 5 && strncasecmp(w[i], "JobId", klen) == 0) /* Job= too */
            rc = update_job(sc, eq + 1, m, rest);
        else if (klen == 8 && strncasecmp(w[i], "NodeName", 8) == 0)
            rc = update_node(sc, eq + 1, m, rest);
        else if (klen == 13 && strncasecmp(w[i], "PartitionName", 13) == 0)
            rc = update_partition(sc, eq + 1, m, rest);
        free(rest);
        if (rc != -1)
            return rc;
    }
    fprintf(stderr, "No valid entity in update command\n");
    fprintf(stderr, "Input line must include \"NodeName\", \"PartitionName\", \"Reservation\", "
                    "\"JobId\", or \"SlurmctldDebug\"\n");
    return sc->cli.exit_error;
}

/* ---- hold, release, requeue ---------------------------------------------- */

/* Job ids from words ("1 2", "1,2"); prints and fails on a bad one. */
static int update_ids(loom_scontrol_t *sc, int n, char **w, json_t *ids, loom_strv_t *texts)
{
    for (int i = 0; i < n; i++) {
        loom_strv_t parts = LOOM_STRV_INIT;
        loom_cli_split_ids(w[i], ",", &parts);
        for (size_t k = 0; k < parts.n; k++) {
            loom_jobid_t id;
            if (loom_jobid_parse(parts.v[k], &id, NULL) < 0) {
                fprintf(stderr, "Invalid job id specified for job %s\n", parts.v[k]);
                loom_strv_free(&parts);
                return -1;
            }
            /* An array part travels as text ("12_3", "12_[1-4]"): the
             * controller acts on those tasks only. */
            json_array_append_new(ids, id.array == LOOM_JOBID_ARRAY_NONE ? json_integer(id.job_id)
                                                                         : json_string(parts.v[k]));
            loom_strv_add(texts, parts.v[k]);
            loom_jobid_free(&id);
        }
        loom_strv_free(&parts);
    }
    if (!json_array_size(ids)) {
        fprintf(stderr, "Invalid job id specified\n");
        return -1;
    }
    return 0;
}

/* scontrol 22.05.8 words an unknown job in suspend/resume so. */
static const char *update_strerror(const char *type, int rc)
{
    if (!strcmp(type, "job.suspend") && rc == -LOOM_EINVAL_JOBID)
        return "Unexpected message received";
    return loom_strerror(rc);
}

/* Print "<error> for job <id>" for each failed result; returns the last
 * error (*task_err: it was about an array task, which Slurm words alone). */
static int update_results(const char *type, const json_t *reply, const json_t *ids,
                          const loom_strv_t *texts, bool ignore_disabled, bool *task_err)
{
    int last = 0;
    size_t i;
    json_t *res;
    json_array_foreach(json_object_get(reply, "results"), i, res)
    {
        json_t *rcv = json_object_get(res, "rc");
        int rc = json_is_string(rcv)    ? loom_errcode(json_string_value(rcv))
                 : json_is_integer(rcv) ? (int)json_integer_value(rcv)
                                        : 0;
        if (json_is_string(rcv) && rc == 0)
            rc = -LOOM_EINTERNAL;
        if (rc == 0 || (ignore_disabled && rc == -LOOM_EDISABLED))
            continue; /* scontrol 22.05 holds or releases a started job without a word */
        int64_t jid = loom_ji(res, "job_id", 0), at = loom_ji(res, "index", -1);
        const char *text = at >= 0 && (size_t)at < texts->n ? texts->v[at] : NULL;
        for (size_t k = 0; !text && k < json_array_size(ids); k++)
            if (json_integer_value(json_array_get(ids, k)) == jid)
                text = texts->v[k];
        /* Slurm words it "<id>: <error>" for an array task. */
        *task_err = text && strchr(text, '_');
        if (update_tasks_missing(res, jid, rc))
            *task_err = true;
        else if (*task_err)
            update_say_task(text, rc);
        else
            fprintf(stderr, "%s for job %s\n", update_strerror(type, rc), text ? text : "?");
        last = rc;
    }
    return last;
}

static int update_batch(loom_scontrol_t *sc, const char *type, json_t *body, json_t *ids,
                        loom_strv_t *texts, const char *what)
{
    json_t *reply = NULL;
    loom_err_t err = {0};
    bool task_err = false;
    int rc = loom_cli_call(&sc->cli, type, body, &reply, &err);
    if (rc == 0)
        rc = update_results(type, reply, ids, texts, what != NULL, &task_err);
    else if (json_array_size(ids) == 1)
        fprintf(stderr, "%s for job %s\n", update_strerror(type, rc), texts->v[0]);
    if (rc < 0 && what && !task_err)
        fprintf(stderr, "%s error: %s\n", what, loom_strerror(rc));
    json_decref(reply);
    return rc < 0 ? sc->cli.exit_error : 0;
}

/* One request per word, as scontrol 22.05 sends them ("1,2" is one word);
 * what: the error line's prefix after each failed word, or NULL. */
static int update_each_word(loom_scontrol_t *sc, const char *type, bool flag, const char *flag_key,
                            int n, char **w, const char *what)
{
    int rc = 0;
    for (int i = 0; i < n; i++) {
        json_t *ids = json_array();
        loom_strv_t texts = LOOM_STRV_INIT;
        int one;
        if (update_ids(sc, 1, &w[i], ids, &texts) < 0) {
            if (what)
                fprintf(stderr, "%s error: %s\n", what, loom_strerror(-LOOM_EINVAL_JOBID));
            one = sc->cli.exit_error;
        } else {
            json_t *body = json_pack("{s:O, s:b}", "job_ids", ids, flag_key, flag);
            one = update_batch(sc, type, body, ids, &texts, what);
            json_decref(body);
        }
        rc = one ? one : rc;
        json_decref(ids);
        loom_strv_free(&texts);
    }
    return rc;
}

static int update_need_ids(loom_scontrol_t *sc, const char *verb, int n)
{
    loom_err_t err = {0};
    if (n < 1) {
        loom_sbuf_t v = LOOM_SBUF_INIT;
        for (const char *p = verb; *p; p++)
            loom_sbuf_addc(&v, (char)(*p >= 'A' && *p <= 'Z' ? *p - 'A' + 'a' : *p));
        fprintf(stderr, "too few arguments for keyword:%s\n", loom_sbuf_str(&v));
        loom_sbuf_free(&v);
        return -1;
    }
    if (!loom_cli_conf(&sc->cli, &err)) {
        loom_cli_error(&sc->cli, "%s", err.msg);
        return -1;
    }
    return 0;
}

int loom_scontrol_hold(loom_scontrol_t *sc, const char *verb, int n, char **w)
{
    if (update_need_ids(sc, verb, n) < 0)
        return sc->cli.exit_error;
    bool release = strcasecmp(verb, "hold") != 0 && strcasecmp(verb, "uhold") != 0;
    return update_each_word(sc, release ? "job.release" : "job.hold", !strcasecmp(verb, "uhold"),
                            "user", n, w, "slurm_suspend");
}

int loom_scontrol_suspend(loom_scontrol_t *sc, bool resume, int n, char **w)
{
    if (update_need_ids(sc, resume ? "resume" : "suspend", n) < 0)
        return sc->cli.exit_error;
    return update_each_word(sc, "job.suspend", resume, "resume", n, w, NULL);
}

int loom_scontrol_requeue(loom_scontrol_t *sc, bool hold, int n, char **w)
{
    /* "requeue Incomplete ..." and "requeuehold State=SpecialExit ...": flags we accept */
    while (n > 0 && (strcasecmp(w[0], "Incomplete") == 0 || strncasecmp(w[0], "State=", 6) == 0)) {
        w++;
        n--;
    }
    if (update_need_ids(sc, hold ? "requeuehold" : "requeue", n) < 0)
        return sc->cli.exit_error;
    return update_each_word(sc, "job.requeue", hold, "hold", n, w, NULL);
}
