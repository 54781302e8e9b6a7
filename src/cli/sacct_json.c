/*
 * sacct_json.c - sacct --json in Slurm 22.05's dbv0.0.38 layout. See
 * sacct_json.h.
 */
#include "cli/sacct_json.h"

#include "cli/cli_format.h"
#include "common/gres.h"
#include "common/hostlist.h"
#include "common/strv.h"
#include "common/xalloc.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Slurm's fixed TRES: ids 1-8 in this order; others count from 1001. */
static const char *const sacct_json_builtin[] = {
    "cpu", "mem", "energy", "node", "billing", "fs/disk", "vmem", "pages",
};
#define SACCT_JSON_NBUILTIN (sizeof(sacct_json_builtin) / sizeof(sacct_json_builtin[0]))

/* ---- small values --------------------------------------------------------- */

static json_t *sacct_json_str(const json_t *rec, const char *key)
{
    const char *s = loom_js(rec, key);
    return s ? json_string(s) : json_null();
}

static json_t *sacct_json_str_or(const json_t *rec, const char *key, const char *dflt)
{
    const char *s = loom_js(rec, key);
    return json_string(s && *s ? s : dflt);
}

/* Slurm's dump of a wait status: a normal exit is SUCCESS with return code
 * 0 whatever the code (22.05's parse.c tests WIFEXITED first). */
static json_t *sacct_json_exit(int64_t status)
{
    int sig = (int)(status & 0x7f);
    if (sig == 0)
        return json_pack("{s:s, s:i}", "status", "SUCCESS", "return_code", 0);
    if (sig != 0x7f)
        return json_pack("{s:s, s:n, s:{s:i, s:s}}", "status", "SIGNALED", "return_code", "signal",
                         "signal_id", sig, "name", strsignal(sig));
    if (status & 0x80)
        return json_pack("{s:s, s:n}", "status", "CORE_DUMPED", "return_code");
    return json_pack("{s:s, s:i}", "status", "ERROR", "return_code", (int)((status >> 8) & 0xff));
}

/* {"seconds": s, "microseconds": us} from microseconds. */
static json_t *sacct_json_cpu(int64_t usec)
{
    if (usec < 0)
        usec = 0;
    return json_pack("{s:I, s:I}", "seconds", (json_int_t)(usec / 1000000), "microseconds",
                     (json_int_t)(usec % 1000000));
}

/* The base state name: "CANCELLED" of "CANCELLED by 0" or ["CANCELLED", ...]. */
static json_t *sacct_json_state(const json_t *rec)
{
    const json_t *st = json_object_get(rec, "state");
    if (json_is_array(st))
        st = json_array_get(st, 0);
    const char *s = json_is_string(st) ? json_string_value(st) : "PENDING";
    size_t n = strcspn(s, " ");
    return json_stringn(s, n);
}

static int64_t sacct_json_elapsed(const json_t *rec, time_t now)
{
    int64_t start = loom_ji(rec, "start_time", 0), end = loom_ji(rec, "end_time", 0);
    if (start <= 0)
        return 0;
    if (end <= 0)
        end = now;
    int64_t secs = end > start ? end - start : 0, sus = loom_ji(rec, "tot_sus_time", 0);
    return secs > sus ? secs - sus : 0;
}

/* ---- TRES ------------------------------------------------------------------ */

/* The TRES id: 1-8 for Slurm's own, else 1001 + its rank among the other
 * AccountingStorageTRES entries (slurmdbd numbers them as it meets them). */
static json_int_t sacct_json_tres_id(const char *full, const loom_sacct_json_t *ctx)
{
    for (size_t i = 0; i < SACCT_JSON_NBUILTIN; i++)
        if (!strcmp(full, sacct_json_builtin[i]))
            return (json_int_t)i + 1;
    loom_strv_t v = LOOM_STRV_INIT;
    if (ctx->conf && ctx->conf->accounting_storage_tres)
        loom_strv_split(&v, ctx->conf->accounting_storage_tres, ",");
    json_int_t id = 1001, found = 0;
    for (size_t i = 0; i < v.n && !found; i++) {
        bool builtin = false;
        for (size_t k = 0; k < SACCT_JSON_NBUILTIN; k++)
            builtin |= !strcmp(v.v[i], sacct_json_builtin[k]);
        if (!builtin && !strcmp(v.v[i], full))
            found = id;
        id += !builtin;
    }
    loom_strv_free(&v);
    return found ? found : id;
}

static json_t *sacct_json_tres_item(const char *type, const char *name, json_int_t id,
                                    int64_t count)
{
    return json_pack("{s:s, s:o, s:I, s:I}", "type", type, "name",
                     name ? json_string(name) : json_null(), "id", id, "count", (json_int_t)count);
}

/* A TRES string ("billing=2,cpu=2,mem=500M,node=1") as Slurm's list of
 * {type, name, id, count}, by id; memory in MiB. */
static json_t *sacct_json_tres(const char *text, const loom_sacct_json_t *ctx)
{
    json_t *a = json_array();
    loom_tres_list_t l = LOOM_TRES_LIST_INIT;
    if (!text || !*text || loom_tres_parse(text, &l, NULL) < 0)
        return a;
    json_int_t *ids = loom_xcalloc(l.n + 1, sizeof(*ids));
    size_t *order = loom_xcalloc(l.n + 1, sizeof(*order));
    for (size_t i = 0; i < l.n; i++) {
        char full[256];
        snprintf(full, sizeof(full), "%s%s%s", l.v[i].type, l.v[i].name ? "/" : "",
                 l.v[i].name ? l.v[i].name : "");
        ids[i] = sacct_json_tres_id(full, ctx);
        size_t k = i; /* insertion sort by id, stable */
        for (; k > 0 && ids[order[k - 1]] > ids[i]; k--)
            order[k] = order[k - 1];
        order[k] = i;
    }
    for (size_t i = 0; i < l.n; i++) {
        const loom_tres_t *t = &l.v[order[i]];
        json_array_append_new(
            a, sacct_json_tres_item(t->type, t->name, ids[order[i]], (int64_t)t->count));
    }
    free(order);
    free(ids);
    loom_tres_list_free(&l);
    return a;
}

/* ---- step usage as TRES ---------------------------------------------------- */

typedef struct {
    json_int_t id;
    const char *type, *name;
    int64_t count;
} sacct_json_use_t;

/* which: 0 the maximum (and minimum: Loom keeps no minimum), 1 the average
 * over tasks, 2 the total. Units as slurmdbd stores them: CPU time in ms,
 * memory and disk in bytes. */
static size_t sacct_json_use_in(const json_t *st, int which, sacct_json_use_t *u)
{
    int64_t tasks = loom_ji(st, "ntasks", 1) > 0 ? loom_ji(st, "ntasks", 1) : 1;
    int64_t cpu_ms = loom_ji(st, "total_cpu", 0) / 1000;
    int64_t rss = loom_ji(st, which ? "ave_rss" : "max_rss", 0) * 1024;
    u[0] = (sacct_json_use_t){1, "cpu", NULL, which == 1 ? cpu_ms / tasks : cpu_ms};
    u[1] = (sacct_json_use_t){2, "mem", NULL, which == 2 ? rss * tasks : rss};
    u[2] = (sacct_json_use_t){3, "energy", NULL, 0};
    u[3] = (sacct_json_use_t){6, "fs", "disk", loom_ji(st, "max_disk_read", 0)};
    u[4] = (sacct_json_use_t){7, "vmem", NULL, loom_ji(st, "max_vmsize", 0) * 1024};
    u[5] = (sacct_json_use_t){8, "pages", NULL, 0};
    return 6;
}

static size_t sacct_json_use_out(const json_t *st, sacct_json_use_t *u)
{
    u[0] = (sacct_json_use_t){3, "energy", NULL, 0};
    u[1] = (sacct_json_use_t){6, "fs", "disk", loom_ji(st, "max_disk_write", 0)};
    return 2;
}

/* node: set for the max/min lists, which name where the value was reached. */
static json_t *sacct_json_use_list(const sacct_json_use_t *u, size_t n, const char *node,
                                   int64_t task)
{
    json_t *a = json_array();
    for (size_t i = 0; i < n; i++) {
        json_t *o = sacct_json_tres_item(u[i].type, u[i].name, u[i].id, u[i].count);
        if (node) {
            json_object_set_new(o, "task", json_integer(task));
            json_object_set_new(o, "node", json_string(node));
        }
        json_array_append_new(a, o);
    }
    return a;
}

/* {max, min, average, total} of one direction; a step without usage (still
 * running, or too short to be sampled) has energy alone, as slurmdbd's. */
static json_t *sacct_json_use(const json_t *st, bool in, const char *node)
{
    sacct_json_use_t u[6];
    bool measured = loom_jhas(st, "max_rss") || loom_jhas(st, "max_vmsize") ||
                    loom_jhas(st, "max_disk_read") || loom_jhas(st, "total_cpu");
    int64_t task = loom_ji(st, "max_rss_task", 0);
    json_t *o = json_object();
    static const char *const keys[] = {"max", "min", "average", "total"};
    for (int k = 0; k < 4; k++) {
        size_t n;
        if (!measured) {
            u[0] = (sacct_json_use_t){3, "energy", NULL, 0};
            n = k < 2 ? 0 : 1;
        } else {
            n = in ? sacct_json_use_in(st, k < 2 ? 0 : k - 1, u) : sacct_json_use_out(st, u);
        }
        json_object_set_new(o, keys[k], sacct_json_use_list(u, n, k < 2 ? node : NULL, task));
    }
    return o;
}

/* ---- jobs ------------------------------------------------------------------- */

static json_t *sacct_json_array(const json_t *job)
{
    json_t *task_id = loom_jhas(job, "array_task_id")
                          ? json_integer(loom_ji(job, "array_task_id", 0))
                          : json_null();
    return json_pack("{s:I, s:{s:{s:{s:I}}}, s:o, s:o}", "job_id",
                     (json_int_t)loom_ji(job, "array_job_id", 0), "limits", "max", "running",
                     "tasks", (json_int_t)loom_ji(job, "array_max_tasks", 0), "task",
                     sacct_json_str(job, "array_task_str"), "task_id", task_id);
}

static json_t *sacct_json_assoc(const json_t *job, json_t *cluster)
{
    if (!loom_js(job, "account") || !loom_js(job, "user_name"))
        return json_null();
    return json_pack("{s:o, s:o, s:n, s:o}", "account", sacct_json_str(job, "account"), "cluster",
                     json_incref(cluster), "partition", "user", sacct_json_str(job, "user_name"));
}

static json_t *sacct_json_job_time(const json_t *job, time_t now)
{
    int64_t limit = loom_ji(job, "time_limit", -1);
    json_t *t = json_pack(
        "{s:I, s:I, s:I, s:I, s:I, s:i, s:o}", "elapsed", (json_int_t)sacct_json_elapsed(job, now),
        "eligible", (json_int_t)loom_ji(job, "eligible_time", 0), "end",
        (json_int_t)loom_ji(job, "end_time", 0), "start", (json_int_t)loom_ji(job, "start_time", 0),
        "submission", (json_int_t)loom_ji(job, "submit_time", 0), "suspended",
        (int)loom_ji(job, "tot_sus_time", 0), "system", sacct_json_cpu(0));
    json_object_set_new(t, "limit", limit < 0 ? json_null() : json_integer(limit));
    json_object_set_new(t, "total", sacct_json_cpu(0));
    json_object_set_new(t, "user", sacct_json_cpu(0));
    return t;
}

/* How slurmdbd flags a job: nothing until it starts, then how it started. */
static json_t *sacct_json_flags(const json_t *job)
{
    json_t *a = json_array();
    if (loom_ji(job, "start_time", 0) <= 0)
        return a;
    const char *f = loom_js_or(job, "flags", "");
    json_array_append_new(a, json_string("CLEAR_SCHEDULING"));
    json_array_append_new(a, json_string(strstr(f, "SchedBackfill") ? "STARTED_ON_BACKFILL"
                                         : strstr(f, "SchedSubmit") ? "STARTED_ON_SUBMIT"
                                                                    : "STARTED_ON_SCHEDULE"));
    return a;
}

static json_t *sacct_json_name_of(const json_t *rec, const char *name_key, const char *id_key,
                                  bool user)
{
    if (name_key && loom_js(rec, name_key))
        return json_string(loom_js(rec, name_key));
    if (!loom_jhas(rec, id_key))
        return json_null();
    loom_sbuf_t sb = LOOM_SBUF_INIT;
    if (user)
        loom_cli_user_name(loom_ji(rec, id_key, 0), &sb);
    else
        loom_cli_group_name(loom_ji(rec, id_key, 0), &sb);
    json_t *s = json_string(loom_sbuf_str(&sb));
    loom_sbuf_free(&sb);
    return s;
}

static json_t *sacct_json_wckey(const json_t *job)
{
    const char *w = loom_js_or(job, "wckey", "");
    json_t *flags = json_array();
    if (*w == '*') {
        json_array_append_new(flags, json_string("ASSIGNED_DEFAULT"));
        w++;
    }
    return json_pack("{s:s, s:o}", "wckey", w, "flags", flags);
}

/* account .. het: the members before job_id, in Slurm's order. */
static void sacct_json_job_head(json_t *o, const json_t *job, const loom_sacct_json_t *ctx)
{
    const char *cl = loom_js(job, "cluster");
    if (!cl && ctx->conf)
        cl = ctx->conf->cluster_name;
    json_t *cluster = cl ? json_string(cl) : json_null();
    bool started = loom_ji(job, "start_time", 0) > 0;
    json_object_set_new(o, "account", sacct_json_str(job, "account"));
    json_object_set_new(o, "comment",
                        json_pack("{s:n, s:n, s:n}", "administrator", "job", "system"));
    json_object_set_new(o, "allocation_nodes",
                        json_integer(started ? loom_ji(job, "num_nodes", 0) : 0));
    json_object_set_new(o, "array", sacct_json_array(job));
    json_object_set_new(o, "association", sacct_json_assoc(job, cluster));
    json_object_set_new(o, "cluster", cluster);
    json_object_set_new(o, "constraints", json_string(loom_js_or(job, "features", "")));
    json_object_set_new(o, "container", json_null());
    json_object_set_new(o, "derived_exit_code",
                        sacct_json_exit(loom_ji(job, "derived_exit_code", 0)));
    json_object_set_new(o, "time", sacct_json_job_time(job, ctx->now));
    json_object_set_new(o, "exit_code", sacct_json_exit(loom_ji(job, "exit_code", 0)));
    json_object_set_new(o, "flags", sacct_json_flags(job));
    json_object_set_new(o, "group", sacct_json_name_of(job, "group_name", "group_id", false));
    json_object_set_new(o, "het", json_pack("{s:i, s:n}", "job_id", 0, "job_offset"));
}

json_t *loom_sacct_json_job(const json_t *job, const loom_sacct_json_t *ctx)
{
    json_t *o = json_object();
    sacct_json_job_head(o, job, ctx);
    json_object_set_new(o, "job_id", json_integer(loom_ji(job, "job_id", 0)));
    json_object_set_new(o, "name", json_string(loom_js_or(job, "name", "")));
    json_object_set_new(o, "mcs", json_pack("{s:s}", "label", ""));
    json_object_set_new(o, "nodes", sacct_json_str_or(job, "nodes", "None assigned"));
    json_object_set_new(o, "partition", sacct_json_str(job, "partition"));
    json_object_set_new(o, "priority", json_integer(loom_ji(job, "priority", 0)));
    json_object_set_new(o, "qos", sacct_json_str(job, "qos"));
    int64_t mem = loom_ji(job, "mem_per_node", loom_ji(job, "mem_per_cpu", 0));
    json_object_set_new(o, "required",
                        json_pack("{s:I, s:I}", "CPUs", (json_int_t)loom_ji(job, "num_cpus", 0),
                                  "memory", (json_int_t)mem));
    json_object_set_new(o, "kill_request_user",
                        loom_jhas(job, "cancelled_by")
                            ? sacct_json_name_of(job, NULL, "cancelled_by", true)
                            : json_null());
    json_object_set_new(o, "reservation", json_pack("{s:i, s:i}", "id", 0, "name", 0));
    json_object_set_new(o, "state",
                        json_pack("{s:o, s:o}", "current", sacct_json_state(job), "reason",
                                  sacct_json_str_or(job, "reason", "None")));
    json_object_set_new(o, "steps", json_array());
    json_object_set_new(o, "tres",
                        json_pack("{s:o, s:o}", "allocated",
                                  sacct_json_tres(loom_js(job, "tres_alloc"), ctx), "requested",
                                  sacct_json_tres(loom_js(job, "tres_req"), ctx)));
    json_object_set_new(o, "user", sacct_json_name_of(job, "user_name", "user_id", true));
    json_object_set_new(o, "wckey", sacct_json_wckey(job));
    json_object_set_new(o, "working_directory", json_string(loom_js_or(job, "work_dir", "")));
    return o;
}

/* ---- steps ------------------------------------------------------------------ */

/* "batch", "extern", ... stay names; numbered steps are integers. */
static json_t *sacct_json_step_id(const json_t *st)
{
    const json_t *id = json_object_get(st, "step_id");
    if (json_is_integer(id))
        return json_integer(json_integer_value(id));
    const char *s = json_is_string(id) ? json_string_value(id) : "";
    char *end;
    long n = strtol(s, &end, 10);
    return (*s && !*end) ? json_integer(n) : json_string(s);
}

static bool sacct_json_numbered(const json_t *st)
{
    json_t *id = sacct_json_step_id(st);
    bool numbered = json_is_integer(id);
    json_decref(id);
    return numbered;
}

/* {list (when it has nodes), count, range}; loomctld's records have no
 * nnodes: the count of the list then. */
static json_t *sacct_json_step_nodes(const json_t *st, char **first)
{
    json_t *o = json_object();
    const char *range = loom_js_or(st, "nodes", "");
    loom_hostlist_t *hl = NULL;
    int64_t count = 0;
    if (*range && loom_hostlist_parse(range, &hl, NULL) > 0) {
        count = (int64_t)loom_hostlist_count(hl);
        json_t *list = json_array();
        for (size_t i = 0; i < loom_hostlist_count(hl); i++)
            json_array_append_new(list, json_string(loom_hostlist_nth(hl, i)));
        json_object_set_new(o, "list", list);
        *first = loom_xstrdup(loom_hostlist_nth(hl, 0));
    }
    loom_hostlist_destroy(hl);
    json_object_set_new(o, "count", json_integer(loom_ji(st, "nnodes", count)));
    json_object_set_new(o, "range", json_string(range));
    return o;
}

static json_t *sacct_json_step_time(const json_t *st, time_t now)
{
    return json_pack(
        "{s:I, s:I, s:I, s:i, s:o, s:o, s:o}", "elapsed", (json_int_t)sacct_json_elapsed(st, now),
        "end", (json_int_t)loom_ji(st, "end_time", 0), "start",
        (json_int_t)loom_ji(st, "start_time", 0), "suspended", (int)loom_ji(st, "tot_sus_time", 0),
        "system", sacct_json_cpu(loom_ji(st, "system_cpu", 0)), "total",
        sacct_json_cpu(loom_ji(st, "total_cpu", 0)), "user",
        sacct_json_cpu(loom_ji(st, "user_cpu", 0)));
}

/* srun steps ask for no frequency (NO_VAL: null, every governor bit);
 * the batch and extern steps have zeroes. */
static json_t *sacct_json_step_cpu(bool numbered)
{
    if (!numbered)
        return json_pack("{s:{s:i, s:i}, s:[]}", "requested_frequency", "min", 0, "max", 0,
                         "governor");
    return json_pack("{s:{s:n, s:n}, s:[s, s, s, s, s]}", "requested_frequency", "min", "max",
                     "governor", "Conservative", "Performance", "PowerSave", "OnDemand",
                     "UserSpace");
}

/* Loom keeps no distribution with the step record: a batch or extern step
 * has none ("Unknown"); srun's default is cyclic while tasks fit one per node. */
static const char *sacct_json_dist(const json_t *st, bool numbered)
{
    if (!numbered)
        return "Unknown";
    if (loom_jhas(st, "cyclic"))
        return loom_jb(st, "cyclic", false) ? "Cyclic" : "Block";
    return loom_ji(st, "ntasks", 1) <= loom_ji(st, "nnodes", 1) ? "Cyclic" : "Block";
}

json_t *loom_sacct_json_step(const json_t *job, const json_t *step, const loom_sacct_json_t *ctx)
{
    json_t *o = json_object();
    char *first = NULL;
    bool numbered = sacct_json_numbered(step);
    json_object_set_new(o, "nodes", sacct_json_step_nodes(step, &first));
    const char *node = loom_js(step, "max_rss_node") ? loom_js(step, "max_rss_node")
                       : first                       ? first
                                                     : "";
    json_object_set_new(o, "tres",
                        json_pack("{s:o, s:o, s:o}", "requested", sacct_json_use(step, true, node),
                                  "consumed", sacct_json_use(step, false, node), "allocated",
                                  sacct_json_tres(loom_js(step, "tres_alloc"), ctx)));
    free(first);
    json_object_set_new(o, "time", sacct_json_step_time(step, ctx->now));
    json_object_set_new(o, "exit_code", sacct_json_exit(loom_ji(step, "exit_code", 0)));
    json_object_set_new(o, "tasks",
                        json_pack("{s:I}", "count", (json_int_t)loom_ji(step, "ntasks", 0)));
    json_object_set_new(o, "pid", json_null());
    json_object_set_new(o, "CPU", sacct_json_step_cpu(numbered));
    json_object_set_new(o, "kill_request_user", json_null());
    json_object_set_new(o, "state", sacct_json_state(step));
    json_object_set_new(
        o, "statistics",
        json_pack("{s:{s:i}, s:{s:i}}", "CPU", "actual_frequency", 0, "energy", "consumed", 0));
    json_object_set_new(o, "step",
                        json_pack("{s:I, s:{s:n}, s:o, s:o}", "job_id",
                                  (json_int_t)loom_ji(job, "job_id", 0), "het", "component", "id",
                                  sacct_json_step_id(step), "name",
                                  sacct_json_str_or(step, "name", "")));
    json_object_set_new(o, "task",
                        json_pack("{s:s}", "distribution", sacct_json_dist(step, numbered)));
    return o;
}

/* ---- the document ------------------------------------------------------------ */

static void sacct_json_indent(int depth, loom_sbuf_t *out)
{
    for (int i = 0; i < depth; i++)
        loom_sbuf_add(out, "  ");
}

static void sacct_json_scalar(const json_t *v, loom_sbuf_t *out)
{
    char *text = json_dumps(v, JSON_ENCODE_ANY | JSON_ESCAPE_SLASH);
    loom_sbuf_add(out, text ? text : "null");
    free(text);
}

void loom_sacct_json_dump(const json_t *v, int depth, loom_sbuf_t *out)
{
    if (json_is_object(v)) {
        loom_sbuf_add(out, "{\n");
        const char *key;
        const json_t *val;
        size_t i = 0, n = json_object_size(v);
        json_object_foreach((json_t *)v, key, val)
        {
            json_t *k = json_string(key);
            sacct_json_indent(depth + 1, out);
            sacct_json_scalar(k, out);
            json_decref(k);
            loom_sbuf_add(out, ": ");
            loom_sacct_json_dump(val, depth + 1, out);
            loom_sbuf_add(out, ++i < n ? ",\n" : "\n");
        }
        if (!n)
            loom_sbuf_addc(out, '\n');
        sacct_json_indent(depth, out);
        loom_sbuf_addc(out, '}');
    } else if (json_is_array(v)) {
        loom_sbuf_add(out, "[\n");
        size_t n = json_array_size(v);
        for (size_t i = 0; i < n; i++) {
            sacct_json_indent(depth + 1, out);
            loom_sacct_json_dump(json_array_get(v, i), depth + 1, out);
            loom_sbuf_add(out, i + 1 < n ? ",\n" : "\n");
        }
        sacct_json_indent(depth, out);
        loom_sbuf_addc(out, ']');
    } else {
        sacct_json_scalar(v, out);
    }
}

static json_t *sacct_json_meta(void)
{
    int major = 0, minor = 0, micro = 0;
    sscanf(LOOM_SLURM_VERSION, "%d.%d.%d", &major, &minor, &micro);
    return json_pack("{s:{s:s, s:s}, s:{s:{s:i, s:i, s:i}, s:s}}", "plugin", "type",
                     "openapi/dbv0.0.38", "name", "Slurm OpenAPI DB v0.0.38", "Slurm", "version",
                     "major", major, "micro", micro, "minor", minor, "release", LOOM_SLURM_VERSION);
}

void loom_sacct_json_print(json_t *jobs, loom_sbuf_t *out)
{
    json_t *errors = json_array();
    if (!json_array_size(jobs))
        json_array_append_new(errors,
                              json_pack("{s:s, s:i, s:s, s:s}", "description", "Nothing found",
                                        "error_number", 9003, "error", "Nothing found with query",
                                        "source", "slurmdb_jobs_get"));
    /* 22.05's document, plus the "warnings" list CLI_SPEC §11 asks of every envelope */
    json_t *doc = json_pack("{s:o, s:o, s:[], s:o}", "meta", sacct_json_meta(), "errors", errors,
                            "warnings", "jobs", jobs);
    loom_sacct_json_dump(doc, 0, out);
    json_decref(doc);
}
