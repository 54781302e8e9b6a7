/*
 * cli_common.c - configuration, controller calls and messages for the
 * Slurm-compatible commands. See cli_common.h.
 */
#include "cli/cli_common.h"

#include "cli/cli_format.h"

#include "common/conf_keys.h"
#include "common/jobenv.h"
#include "common/log.h"
#include "common/rlimits.h"
#include "common/munge.h"
#include "common/proto.h"
#include "common/timefmt.h"
#include "common/xalloc.h"

#include <errno.h>
#include <libgen.h>
#include <pwd.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

void loom_cli_init(loom_cli_t *cli, const char *prog)
{
    *cli = (loom_cli_t){.prog = prog, .exit_error = 1};
    const char *env = getenv("SLURM_CONF");
    cli->conf_path = loom_xstrdup(env && *env ? env : LOOM_CLI_DEFAULT_CONF);
    const char *ee = getenv("SLURM_EXIT_ERROR");
    if (ee && *ee) {
        char *end;
        long v = strtol(ee, &end, 10);
        if (*end == '\0' && v >= 0 && v <= 255)
            cli->exit_error = (int)v;
    }
    loom_log_init(prog, LOOM_LOG_INFO, NULL, false);
}

void loom_cli_fini(loom_cli_t *cli)
{
    loom_rpc_close(cli->rpc);
    loom_munge_close(cli->munge);
    cli->munge = NULL;
    loom_key_destroy(cli->key);
    loom_conf_destroy(cli->conf);
    free(cli->conf_path);
    cli->rpc = NULL;
    cli->key = NULL;
    cli->conf = NULL;
    cli->conf_path = NULL;
}

void loom_cli_set_conf_path(loom_cli_t *cli, const char *path)
{
    free(cli->conf_path);
    cli->conf_path = loom_xstrdup(path);
}

void loom_cli_set_verbosity(loom_cli_t *cli, int verbose, bool quiet)
{
    cli->verbose = verbose;
    cli->quiet = quiet;
    int level = quiet ? LOOM_LOG_ERROR : LOOM_LOG_INFO + verbose;
    if (level > LOOM_LOG_DEBUG2)
        level = LOOM_LOG_DEBUG2;
    loom_log_set_level((loom_log_level_t)level);
}

const loom_conf_t *loom_cli_conf(loom_cli_t *cli, loom_err_t *err)
{
    if (!cli->conf && loom_conf_load(cli->conf_path, &cli->conf, err) < 0)
        return NULL;
    return cli->conf;
}

/* slurm.key beside slurm.conf, when this user may read it. */
static void common_load_key(loom_cli_t *cli)
{
    char *copy = loom_xstrdup(cli->conf_path);
    loom_sbuf_t path = LOOM_SBUF_INIT;
    loom_sbuf_addf(&path, "%s/slurm.key", dirname(copy));
    if (access(loom_sbuf_str(&path), R_OK) == 0 &&
        loom_key_load(loom_sbuf_str(&path), &cli->key, NULL) < 0)
        loom_debug("cannot use the cluster key %s", loom_sbuf_str(&path));
    loom_sbuf_free(&path);
    free(copy);
}

/* The controller's address: the Unix socket when present, else TCP. */
static void common_address(loom_cli_t *cli, const loom_conf_t *conf, loom_sbuf_t *addr)
{
    struct stat st;
    loom_sbuf_t sock = LOOM_SBUF_INIT;
    loom_sbuf_addf(&sock, "%s/loomctld.sock",
                   conf->state_save_location ? conf->state_save_location : ".");
    if (stat(loom_sbuf_str(&sock), &st) == 0 && S_ISSOCK(st.st_mode)) {
        loom_sbuf_addf(addr, "unix:%s", loom_sbuf_str(&sock));
    } else {
        const char *host = conf->n_ctld_hosts ? conf->ctld_hosts[0].addr : "localhost";
        bool v6 = strchr(host, ':') != NULL;
        loom_sbuf_addf(addr, v6 ? "[%s]:%lld" : "%s:%lld", host, (long long)conf->slurmctld_port);
        common_load_key(cli);
    }
    loom_sbuf_free(&sock);
}

/* Over TCP without the cluster key: munge, when AuthType asks for it. */
static void common_munge(loom_cli_t *cli, const loom_conf_t *conf)
{
    const char *type = loom_conf_get(conf, "AuthType");
    if (!loom_munge_available() || !type || strcmp(type, "auth/munge") != 0)
        return;
    char *sock = loom_munge_socket(loom_conf_get(conf, "AuthInfo"));
    loom_err_t err = {0};
    if (loom_munge_open(sock, &cli->munge, &err) == 0) {
        struct passwd *pw = conf->slurm_user ? getpwnam(conf->slurm_user) : NULL;
        loom_rpc_set_munge(cli->rpc, cli->munge, pw ? (uint32_t)pw->pw_uid : 0);
    } else {
        loom_debug("munge: %s", err.msg);
    }
    free(sock);
}

/* Connect as Slurm's commands do: a controller that refuses the connection
 * (down, or restarting after a crash) is tried again once a second for
 * MessageTimeout seconds, so a job's sbatch or srun outlives a restart of
 * loomctld. Other errors (a timeout, a bad address) are not retried. */
static loom_rpc_t *common_connect_retry(loom_cli_t *cli, const loom_conf_t *conf, const char *addr,
                                        loom_err_t *err)
{
    int64_t tries = conf->message_timeout > 0 ? conf->message_timeout : 10;
    for (int64_t i = 1;; i++) {
        loom_err_t e = {0};
        loom_rpc_t *rpc = loom_rpc_connect(addr, cli->key, cli->timeout_ms, &e);
        if (rpc || i >= tries || e.code != -LOOM_ECONNECT) {
            if (!rpc && err)
                *err = e;
            return rpc;
        }
        loom_debug("%s; trying again", e.msg);
        sleep(1);
    }
}

static int common_connect(loom_cli_t *cli, loom_err_t *err)
{
    const loom_conf_t *conf = loom_cli_conf(cli, err);
    if (!conf)
        return err ? err->code : -LOOM_ECONFIG;
    loom_sbuf_t addr = LOOM_SBUF_INIT;
    common_address(cli, conf, &addr);
    loom_debug("connecting to %s", loom_sbuf_str(&addr));
    cli->rpc = common_connect_retry(cli, conf, loom_sbuf_str(&addr), err);
    bool tcp = strncmp(loom_sbuf_str(&addr), "unix:", 5) != 0;
    loom_sbuf_free(&addr);
    if (!cli->rpc)
        return loom_errf(err, -LOOM_ECONNECT, "%s", loom_strerror(-LOOM_ECONNECT));
    if (tcp && !cli->key)
        common_munge(cli, conf);
    return 0;
}

int loom_cli_call(loom_cli_t *cli, const char *type, json_t *body, json_t **reply, loom_err_t *err)
{
    if (reply)
        *reply = NULL;
    int rc = cli->rpc ? 0 : common_connect(cli, err);
    if (rc < 0)
        return rc;
    json_t *req = loom_msg_new(type, 0);
    if (body)
        json_object_update(req, body);
    json_t *rep = NULL;
    loom_err_t cerr = {0};
    rc = loom_rpc_call(cli->rpc, req, &rep, &cerr);
    json_decref(req);
    if (rc == -LOOM_ECONNECT) { /* the connection is dead: the next call makes a new one */
        loom_rpc_close(cli->rpc);
        cli->rpc = NULL;
    }
    if (rc < 0) {
        loom_debug("%s: %s", type, cerr.msg);
        return loom_errf(err, rc, "%s", loom_strerror(rc));
    }
    const char *msg = NULL;
    rc = loom_msg_rc(rep, &msg);
    if (rc < 0)
        loom_errf(err, rc, "%s", msg && *msg ? msg : loom_strerror(rc));
    if (reply)
        *reply = rep;
    else
        json_decref(rep);
    return rc;
}

void loom_cli_error(const loom_cli_t *cli, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    loom_logv(LOOM_LOG_ERROR, fmt, ap);
    va_end(ap);
}

void loom_cli_info(const loom_cli_t *cli, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    loom_logv(LOOM_LOG_INFO, fmt, ap);
    va_end(ap);
}

int loom_cli_test_only(loom_cli_t *cli, json_t *body)
{
    json_object_set_new(body, "test_only", json_true());
    json_t *reply = NULL;
    loom_err_t err = {0};
    int rc = loom_cli_call(cli, "job.submit", body, &reply, &err);
    if (rc < 0) {
        if (err.msg[0] && strcmp(err.msg, loom_strerror(rc)) != 0 && rc != -LOOM_ECONNECT)
            loom_cli_error(cli, "%s", err.msg);
        fprintf(stderr, "allocation failure: %s\n", loom_strerror(rc));
    } else {
        loom_sbuf_t when = LOOM_SBUF_INIT;
        loom_date_fmt((time_t)loom_ji(reply, "start_time", 0), "Unknown", &when);
        fprintf(stderr,
                "%s: Job %lld to start at %s using %lld processors on nodes %s in "
                "partition %s\n",
                cli->prog, (long long)loom_ji(reply, "job_id", 0), loom_sbuf_str(&when),
                (long long)loom_ji(reply, "num_cpus", 1), loom_js_or(reply, "nodes", ""),
                loom_js_or(reply, "partition", ""));
        loom_sbuf_free(&when);
    }
    json_decref(reply);
    return rc;
}

void loom_cli_warnings(const loom_cli_t *cli, const loom_strv_t *lines, bool even_quiet)
{
    for (size_t i = 0; i < lines->n && (even_quiet || !cli->quiet); i++)
        fprintf(stderr, "%s: Warning: %s\n", cli->prog, lines->v[i]);
}

void loom_cli_verbose(const loom_cli_t *cli, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    loom_logv(LOOM_LOG_VERBOSE, fmt, ap);
    va_end(ap);
}

int loom_cli_rlimits(loom_cli_t *cli, const char *propagate, loom_strv_t *env)
{
    const loom_conf_t *c = loom_cli_conf(cli, NULL);
    const char *spec = propagate ? propagate : c ? c->propagate_rlimits : NULL;
    const char *except = !propagate && c ? c->propagate_rlimits_except : NULL;
    bool sel[LOOM_RLIMIT_N];
    loom_err_t err = {0};
    if (loom_rlimits_select(spec, except, sel, &err) < 0) {
        loom_cli_error(cli, "%s", err.msg);
        if (propagate)
            loom_cli_error(cli, "--propagate=%s is not valid.", propagate);
        return -1;
    }
    loom_rlimits_env(sel, env);
    return 0;
}

const loom_conf_part_t *loom_cli_part_live(const loom_conf_part_t *conf, const json_t *rec,
                                           loom_conf_part_t *scratch)
{
    const json_t *changes = json_object_get(rec, "changes");
    if (!conf || !json_object_size(changes))
        return conf;
    *scratch = *conf; /* only scalar fields change: the pointers stay conf's */
    const char *key;
    json_t *v;
    json_object_foreach((json_t *)changes, key, v)
    {
        if (json_is_string(v))
            loom_conf_part_change(scratch, key, json_string_value(v), NULL);
    }
    return scratch;
}

enum { CLI_SLURM_PROTOCOL = 9728 }; /* Slurm 22.05's protocol version number */

void loom_cli_working_cluster(loom_cli_t *cli, loom_strv_t *env)
{
    const loom_conf_t *c = loom_cli_conf(cli, NULL);
    if (!c || !c->n_ctld_hosts)
        return;
    const loom_conf_host_t *h = &c->ctld_hosts[0];
    const char *sel = c->select_type ? c->select_type : "";
    int id = strstr(sel, "cons_res") ? 101 : strstr(sel, "linear") ? 102 : 109;
    loom_jobenv_setf(env, "SLURM_WORKING_CLUSTER", "%s:%s:%lld:%d:%d",
                     c->cluster_name ? c->cluster_name : "", h->addr ? h->addr : h->name,
                     (long long)c->slurmctld_port, CLI_SLURM_PROTOCOL, id);
}

void loom_cli_version(void)
{
    printf("slurm %s\n", LOOM_SLURM_VERSION);
}

void loom_cli_flush(loom_sbuf_t *out)
{
    if (out->len)
        fwrite(loom_sbuf_str(out), 1, out->len, stdout);
    loom_sbuf_reset(out);
}

#if defined(__SANITIZE_ADDRESS__)
#define CLI_FREE_AT_EXIT 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define CLI_FREE_AT_EXIT 1
#endif
#endif

void loom_cli_exit_decref(json_t *big)
{
#ifdef CLI_FREE_AT_EXIT
    json_decref(big);
#else
    (void)big;
#endif
}

void loom_cli_exit_code(int64_t status, loom_sbuf_t *out)
{
    int code = (int)((status >> 8) & 0xff), sig = (int)(status & 0x7f);
    loom_sbuf_addf(out, "%d:%d", code, sig);
}

/* ---- job ids ------------------------------------------------------------- */

void loom_cli_split_ids(const char *list, const char *seps, loom_strv_t *out)
{
    loom_sbuf_t cur = LOOM_SBUF_INIT;
    int depth = 0;
    for (const char *p = list;; p++) {
        if (*p && (depth > 0 || !strchr(seps, *p))) {
            depth += *p == '[' ? 1 : *p == ']' ? -1 : 0;
            loom_sbuf_addc(&cur, *p);
            continue;
        }
        if (cur.len)
            loom_strv_add(out, loom_sbuf_str(&cur));
        loom_sbuf_reset(&cur);
        if (!*p)
            break;
    }
    loom_sbuf_free(&cur);
}

int loom_cli_array_tasks(const char *rest, loom_rangeset_t *out)
{
    uint32_t throttle;
    return loom_rangeset_parse_array(rest ? rest : "", LOOM_ARRAY_INDEX_MAX, out, &throttle, NULL);
}

/* Does the remainder "rest" hold the task (or any task of the set) of id? */
static bool common_remainder_has(const loom_jobid_t *id, const char *rest)
{
    loom_rangeset_t rs = LOOM_RANGESET_INIT;
    bool hit = false;
    if (loom_cli_array_tasks(rest, &rs) >= 0) {
        if (id->array == LOOM_JOBID_ARRAY_ONE)
            hit = loom_rangeset_contains(&rs, id->task);
        for (size_t a = 0; id->array == LOOM_JOBID_ARRAY_SET && a < id->tasks.n; a++)
            for (size_t b = 0; b < rs.n; b++)
                hit = hit || (id->tasks.r[a].lo <= rs.r[b].hi && rs.r[b].lo <= id->tasks.r[a].hi);
    }
    loom_rangeset_free(&rs);
    return hit;
}

bool loom_cli_jobid_match(const loom_jobid_t *id, const json_t *job)
{
    int64_t jid = loom_ji(job, "job_id", 0), aid = loom_ji(job, "array_job_id", 0);
    const char *rest = loom_js(job, "array_task_str");
    bool remainder = aid > 0 && rest && *rest;
    if (id->array == LOOM_JOBID_ARRAY_NONE)
        return jid == id->job_id || aid == id->job_id;
    if (aid != id->job_id)
        return false;
    if (id->array == LOOM_JOBID_ARRAY_ALL)
        return true;
    if (remainder)
        return common_remainder_has(id, rest);
    if (!loom_jhas(job, "array_task_id"))
        return false;
    uint32_t task = (uint32_t)loom_ji(job, "array_task_id", 0);
    return id->array == LOOM_JOBID_ARRAY_ONE ? task == id->task
                                             : loom_rangeset_contains(&id->tasks, task);
}
