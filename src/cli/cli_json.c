/*
 * cli_json.c - Slurm's --json documents from Loom's wire records
 * (CLI_SPEC §11). See cli_json.h.
 */
#include "cli/cli_json.h"

#include "cli/cli_format.h"
#include "common/jobstate.h"
#include "common/nodestate.h"
#include "common/strv.h"
#include "common/timefmt.h"

#include <pwd.h>
#include <stddef.h>
#include <grp.h>
#include <signal.h>
#include <string.h>
#include <unistd.h>

json_t *loom_cli_json_num(int64_t n)
{
    return json_pack("{s:b, s:b, s:I}", "set", 1, "infinite", 0, "number", (json_int_t)n);
}

json_t *loom_cli_json_unset(void)
{
    return json_pack("{s:b, s:b, s:i}", "set", 0, "infinite", 0, "number", 0);
}

json_t *loom_cli_json_infinite(void)
{
    return json_pack("{s:b, s:b, s:i}", "set", 1, "infinite", 1, "number", 0);
}

/* A wrapped number from rec[key]: unset when absent, infinite when < 0 and
 * inf_neg is set. */
static json_t *json_wrap(const json_t *rec, const char *key, bool inf_neg)
{
    if (!loom_jhas(rec, key))
        return loom_cli_json_unset();
    int64_t v = loom_ji(rec, key, 0);
    if (v < 0 && inf_neg)
        return loom_cli_json_infinite();
    return loom_cli_json_num(v);
}

/* A time: unset when 0 or absent. */
static json_t *json_time(const json_t *rec, const char *key)
{
    int64_t t = loom_ji(rec, key, 0);
    return t > 0 ? loom_cli_json_num(t) : loom_cli_json_num(0);
}

static json_t *json_str(const json_t *rec, const char *key)
{
    return json_string(loom_js_or(rec, key, ""));
}

static json_t *json_strv(loom_strv_t *v)
{
    json_t *a = json_array();
    for (size_t i = 0; i < v->n; i++)
        json_array_append_new(a, json_string(v->v[i]));
    loom_strv_free(v);
    return a;
}

/* {"status":["SUCCESS"|"EXITED"|"SIGNALED"],"return_code":N,"signal":{...}} */
static json_t *json_exit(int64_t status)
{
    int code = (int)((status >> 8) & 0xff), sig = (int)(status & 0x7f);
    const char *what = sig ? "SIGNALED" : code ? "EXITED" : "SUCCESS";
    const char *name = sig ? sigabbrev_np(sig) : NULL;
    return json_pack("{s:[s], s:o, s:{s:o, s:s}}", "status", what, "return_code",
                     loom_cli_json_num(code), "signal", "id",
                     sig ? loom_cli_json_num(sig) : loom_cli_json_unset(), "name",
                     name ? name : "");
}

static json_t *json_job_state(const json_t *job)
{
    loom_strv_t v = LOOM_STRV_INIT;
    loom_job_state_list(loom_cli_job_state(job), &v);
    return json_strv(&v);
}

/* Job keys that map one-to-one (Slurm name, wire name). */
static void json_job_strings(const json_t *job, json_t *o)
{
    static const char *const map[][2] = {
        {"account", "account"},
        {"batch_host", "batch_host"},
        {"command", "command"},
        {"comment", "comment"},
        {"current_working_directory", "work_dir"},
        {"dependency", "dependency"},
        {"excluded_nodes", "exc_nodes"},
        {"features", "features"},
        {"group_name", "group_name"},
        {"licenses", "licenses"},
        {"name", "name"},
        {"nodes", "nodes"},
        {"partition", "partition"},
        {"qos", "qos"},
        {"required_nodes", "req_nodes"},
        {"resv_name", "reservation"},
        {"state_reason", "reason"},
        {"tres_per_job", "tres_per_job"},
        {"tres_per_node", "tres_per_node"},
        {"tres_per_task", "tres_per_task"},
        {"tres_req_str", "tres_req"},
        {"tres_alloc_str", "tres_alloc"},
        {"array_task_string", "array_task_str"},
        {"user_name", "user_name"},
    };
    for (size_t i = 0; i < sizeof(map) / sizeof(map[0]); i++)
        json_object_set_new(o, map[i][0], json_str(job, map[i][1]));
    if (!*loom_js_or(job, "state_reason", ""))
        json_object_set_new(o, "state_reason", json_string("None"));
}

static void json_job_numbers(const json_t *job, json_t *o)
{
    static const char *const map[][2] = {
        {"array_job_id", "array_job_id"},
        {"array_task_id", "array_task_id"},
        {"cpus", "num_cpus"},
        {"node_count", "num_nodes"},
        {"tasks", "num_tasks"},
        {"cpus_per_task", "cpus_per_task"},
        {"priority", "priority"},
        {"memory_per_node", "mem_per_node"},
        {"memory_per_cpu", "mem_per_cpu"},
    };
    for (size_t i = 0; i < sizeof(map) / sizeof(map[0]); i++)
        json_object_set_new(o, map[i][0], json_wrap(job, map[i][1], false));
    static const char *const times[][2] = {
        {"submit_time", "submit_time"},   {"eligible_time", "eligible_time"},
        {"start_time", "start_time"},     {"end_time", "end_time"},
        {"suspend_time", "suspend_time"}, {"accrue_time", "accrue_time"},
    };
    for (size_t i = 0; i < sizeof(times) / sizeof(times[0]); i++)
        json_object_set_new(o, times[i][0], json_time(job, times[i][1]));
    json_object_set_new(o, "time_limit", json_wrap(job, "time_limit", true));
}

json_t *loom_cli_json_job(const json_t *job, time_t now)
{
    json_t *o = json_object();
    json_object_set_new(o, "job_id", json_integer(loom_ji(job, "job_id", 0)));
    json_object_set_new(o, "job_state", json_job_state(job));
    json_job_strings(job, o);
    json_job_numbers(job, o);
    json_object_set_new(o, "user_id", json_integer(loom_ji(job, "user_id", 0)));
    json_object_set_new(o, "group_id", json_integer(loom_ji(job, "group_id", 0)));
    json_object_set_new(o, "nice", json_integer(loom_ji(job, "nice", 0)));
    json_object_set_new(o, "restart_cnt", json_integer(loom_ji(job, "restart_cnt", 0)));
    json_object_set_new(o, "batch_flag", json_boolean(loom_ji(job, "batch_flag", 1)));
    json_object_set_new(o, "requeue", json_boolean(loom_jb(job, "requeue", true)));
    json_object_set_new(o, "exit_code", json_exit(loom_ji(job, "exit_code", 0)));
    json_object_set_new(o, "derived_exit_code", json_exit(loom_ji(job, "derived_exit_code", 0)));
    json_object_set_new(o, "run_time", loom_cli_json_num(loom_cli_job_runtime(job, now)));
    loom_sbuf_t s = LOOM_SBUF_INIT;
    loom_cli_job_stdio(job, 'o', &s);
    json_object_set_new(o, "standard_output", json_string(loom_sbuf_str(&s)));
    loom_sbuf_reset(&s);
    loom_cli_job_stdio(job, 'e', &s);
    json_object_set_new(o, "standard_error", json_string(loom_sbuf_str(&s)));
    loom_sbuf_reset(&s);
    loom_cli_job_stdio(job, 'i', &s);
    json_object_set_new(o, "standard_input", json_string(loom_sbuf_str(&s)));
    loom_sbuf_free(&s);
    return o;
}

/* ---- nodes --------------------------------------------------------------- */

static json_t *json_node_state(const json_t *node)
{
    json_t *st = json_object_get(node, "state");
    if (json_is_array(st))
        return json_deep_copy(st);
    loom_strv_t v = LOOM_STRV_INIT;
    loom_node_state_list(loom_cli_node_state(node), &v);
    return json_strv(&v);
}

static json_t *json_csv(const char *s)
{
    loom_strv_t v = LOOM_STRV_INIT;
    if (s)
        loom_strv_split(&v, s, ",");
    return json_strv(&v);
}

/* Hardware and allocation: the record's values, else slurm.conf's. */
static void json_node_hw(json_t *o, const json_t *node, const loom_conf_nodecfg_t *c)
{
    static const struct {
        const char *key, *wire;
        size_t off;
    } map[] = {
        {"cpus", "cpus", offsetof(loom_conf_nodecfg_t, cpus)},
        {"boards", "boards", offsetof(loom_conf_nodecfg_t, boards)},
        {"sockets", "sockets", offsetof(loom_conf_nodecfg_t, sockets)},
        {"cores", "cores", offsetof(loom_conf_nodecfg_t, cores_per_socket)},
        {"threads", "threads", offsetof(loom_conf_nodecfg_t, threads_per_core)},
        {"real_memory", "real_memory", offsetof(loom_conf_nodecfg_t, real_memory)},
        {"tmp_disk", "tmp_disk", offsetof(loom_conf_nodecfg_t, tmp_disk)},
        {"weight", "weight", offsetof(loom_conf_nodecfg_t, weight)},
    };
    for (size_t i = 0; i < sizeof(map) / sizeof(map[0]); i++) {
        int64_t dflt = c ? *(const int64_t *)((const char *)c + map[i].off) : 0;
        json_object_set_new(o, map[i].key, json_integer(loom_ji(node, map[i].wire, dflt)));
    }
    int64_t cpus = loom_ji(node, "cpus", c ? c->cpus : 1), alloc = loom_ji(node, "alloc_cpus", 0);
    json_object_set_new(o, "alloc_cpus", json_integer(alloc));
    json_object_set_new(o, "alloc_idle_cpus", json_integer(cpus - alloc));
    json_object_set_new(o, "alloc_memory", json_integer(loom_ji(node, "alloc_mem", 0)));
    json_object_set_new(o, "free_mem", json_wrap(node, "free_mem", false));
    json_object_set_new(o, "cpu_load",
                        json_integer((json_int_t)(loom_jd(node, "cpu_load", 0) * 100)));
    const char *gres = loom_js(node, "gres");
    json_object_set_new(o, "gres",
                        json_string(gres                ? gres
                                    : c && c->gres_text ? c->gres_text
                                                        : ""));
    json_object_set_new(o, "gres_used", json_str(node, "gres_used"));
    json_object_set_new(o, "gres_drained", json_string("N/A"));
    json_object_set_new(o, "tres", json_str(node, "tres_cfg"));
    json_object_set_new(o, "tres_used", json_str(node, "tres_alloc"));
}

static void json_node_features(json_t *o, const json_t *node, const loom_conf_nodecfg_t *c)
{
    const char *feat = loom_js(node, "features");
    loom_sbuf_t fs = LOOM_SBUF_INIT;
    for (size_t i = 0; !feat && c && i < c->features.n; i++)
        loom_sbuf_addf(&fs, "%s%s", i ? "," : "", c->features.v[i]);
    json_object_set_new(o, "features", json_csv(feat ? feat : loom_sbuf_str(&fs)));
    const char *act = loom_js(node, "active_features");
    json_object_set_new(o, "active_features",
                        json_csv(act    ? act
                                 : feat ? feat
                                        : loom_sbuf_str(&fs)));
    loom_sbuf_free(&fs);
    json_t *parts = json_object_get(node, "partitions");
    json_object_set_new(o, "partitions",
                        json_is_array(parts) ? json_deep_copy(parts)
                                             : json_csv(loom_js(node, "partitions")));
}

json_t *loom_cli_json_node(const json_t *node, const loom_conf_node_t *cfg)
{
    json_t *o = json_object();
    const char *name = loom_js_or(node, "name", "");
    json_object_set_new(o, "name", json_string(name));
    json_object_set_new(o, "state", json_node_state(node));
    json_node_hw(o, node, cfg ? cfg->cfg : NULL);
    json_node_features(o, node, cfg ? cfg->cfg : NULL);
    json_object_set_new(o, "reason", json_str(node, "reason"));
    json_object_set_new(o, "reason_set_by_user", json_str(node, "reason_user"));
    json_object_set_new(o, "reason_changed_at", json_time(node, "reason_time"));
    json_object_set_new(o, "hostname",
                        json_string(loom_js_or(node, "hostname", cfg ? cfg->hostname : name)));
    json_object_set_new(o, "address",
                        json_string(loom_js_or(node, "addr", cfg ? cfg->addr : name)));
    json_object_set_new(o, "port", json_integer(loom_ji(node, "port", cfg ? cfg->port : 0)));
    json_object_set_new(o, "version", json_str(node, "version"));
    json_object_set_new(o, "architecture", json_str(node, "arch"));
    json_object_set_new(o, "operating_system", json_str(node, "os"));
    json_object_set_new(o, "instance_id", json_string(""));
    json_object_set_new(o, "instance_type", json_string(""));
    json_object_set_new(o, "topology", json_string(""));
    json_object_set_new(o, "slurmd_start_time", json_time(node, "slurmd_start_time"));
    json_object_set_new(o, "boot_time", json_time(node, "boot_time"));
    json_object_set_new(o, "last_busy", json_time(node, "last_busy"));
    return o;
}

/* ---- the envelope -------------------------------------------------------- */

static json_t *json_meta(const loom_conf_t *conf, int argc, char **argv)
{
    json_t *cmd = json_array();
    for (int i = 0; i < argc; i++)
        json_array_append_new(cmd, json_string(argv[i]));
    loom_sbuf_t user = LOOM_SBUF_INIT, group = LOOM_SBUF_INIT;
    loom_cli_user_name(getuid(), &user);
    loom_cli_group_name(getgid(), &group);
    json_t *meta = json_pack(
        "{s:{s:s, s:s, s:s, s:s}, s:{s:s, s:s, s:s}, s:o, s:{s:{s:s, s:s, s:s}, s:s, s:s}}",
        "plugin", "type", "", "name", "", "data_parser", "data_parser/v0.0.40",
        "accounting_storage", "", "client", "source", ttyname(0) ? ttyname(0) : "", "user",
        loom_sbuf_str(&user), "group", loom_sbuf_str(&group), "command", cmd, "slurm", "version",
        "major", "22", "micro", "8", "minor", "05", "release", LOOM_SLURM_VERSION, "cluster",
        conf && conf->cluster_name ? conf->cluster_name : "");
    loom_sbuf_free(&user);
    loom_sbuf_free(&group);
    return meta;
}

void loom_cli_json_print(const char *key, json_t *items, const loom_conf_t *conf, int argc,
                         char **argv, loom_sbuf_t *out)
{
    json_t *doc = json_object();
    json_object_set_new(doc, key, items);
    json_object_set_new(doc, "meta", json_meta(conf, argc, argv));
    json_object_set_new(doc, "errors", json_array());
    json_object_set_new(doc, "warnings", json_array());
    char *text = json_dumps(doc, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
    if (text) {
        loom_sbuf_add(out, text);
        loom_sbuf_addc(out, '\n');
    }
    free(text);
    json_decref(doc);
}

void loom_cli_json_jobs(const loom_conf_t *conf, time_t now, const json_t *jobs, int argc,
                        char **argv, loom_sbuf_t *out)
{
    json_t *items = json_array();
    size_t i;
    json_t *j;
    json_array_foreach(jobs, i, j)
    {
        json_array_append_new(items, loom_cli_json_job(j, now));
    }
    loom_cli_json_print("jobs", items, conf, argc, argv, out);
}
