/*
 * scancel.c - signal or cancel jobs (CLI_SPEC §6, §0.9): Slurm's scancel.
 *
 * Jobs are named by id (every §0.5 form, steps included) and/or selected by
 * filters (-u --me -p -n -t -w -A -q -R), all combined with AND and resolved
 * here over job.info: only active jobs (pending, running, suspended) are
 * candidates. Each job then gets one job.signal request.
 *
 * Exit status (§0.9): 0, or 1 when a named job id is unknown to the
 * controller ("scancel: error: Kill job error on job id N: Invalid job id
 * specified") or a signal could not be delivered. With the default SIGKILL
 * (no -s, no -b, not a step) a job that already finished or is unknown is not
 * an error and is reported only with -v, as scancel 22.05.8 does (checked:
 * `scancel 99999` and `scancel 12_[50-60]` print nothing and exit 0).
 */
#include "cli/cli_common.h"
#include "cli/cli_format.h"

#include "common/hostlist.h"
#include "common/jobid.h"
#include "common/jobstate.h"
#include "common/xalloc.h"

#include <getopt.h>
#include <pwd.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

typedef struct scancel {
    loom_cli_t cli;
    int signal;
    bool sig_given, batch, full, verbose_any, interactive;
    bool quiet; /* -Q: no "Kill job error" lines (the exit code stays) */
    int verbose;
    loom_strv_t users, parts, names, accounts, qos, resvs;
    uint32_t *states;
    size_t n_states;
    char *nodelist;
    loom_hostlist_t *nodes;
    loom_jobid_t *ids;
    loom_strv_t id_texts;
    size_t n_ids;
} scancel_t;

/* ---- options ------------------------------------------------------------- */

static void scancel_usage(void)
{
    printf("Usage: scancel [-A account] [--batch] [--full] [--interactive] [-n job_name]\n"
           "               [-p partition] [-Q] [-q qos] [-R reservation] [-s signal | integer]\n"
           "               [-t PENDING | RUNNING | SUSPENDED] [--usage] [-u user_name]\n"
           "               [--hurry] [-V] [-v] [-w hosts...] [--wckey=wckey]\n"
           "               [--me] [job_id[_array_id][.step_id]]\n");
}

/* A signal name (INT, SIGINT, any case) or number; -1 when unknown. */
static int scancel_signal(const char *s)
{
    char *end;
    long n = strtol(s, &end, 10);
    if (*s && !*end)
        return n > 0 && n < NSIG ? (int)n : -1;
    const char *name = strncasecmp(s, "SIG", 3) == 0 ? s + 3 : s;
    for (int sig = 1; sig < NSIG; sig++) {
        const char *abbrev = sigabbrev_np(sig);
        if (abbrev && strcasecmp(abbrev, name) == 0)
            return sig;
    }
    return -1;
}

static int scancel_states(scancel_t *c, const char *list)
{
    loom_strv_t v = LOOM_STRV_INIT;
    loom_strv_split(&v, list, ",");
    int rc = 0;
    for (size_t i = 0; i < v.n && rc == 0; i++) {
        uint32_t st;
        if (loom_job_state_parse(v.v[i], &st, NULL) < 0 || st > LOOM_JOB_SUSPENDED) {
            fprintf(stderr, "Invalid job state specified: %s\n", v.v[i]);
            fprintf(stderr, "Valid job states are PENDING, RUNNING, and SUSPENDED\n");
            rc = -1;
            break;
        }
        c->states = loom_xreallocarray(c->states, c->n_states + 1, sizeof(uint32_t));
        c->states[c->n_states++] = st;
    }
    loom_strv_free(&v);
    return rc;
}

static int scancel_users(scancel_t *c, const char *list)
{
    loom_strv_t v = LOOM_STRV_INIT;
    loom_strv_split(&v, list, ",");
    int rc = 0;
    for (size_t i = 0; i < v.n && rc == 0; i++) {
        struct passwd *pw = getpwnam(v.v[i]);
        char *end, buf[32];
        long uid = strtol(v.v[i], &end, 10);
        if (!pw && (*end || uid < 0)) {
            loom_cli_error(&c->cli, "Invalid user name: %s", v.v[i]);
            rc = -1;
            break;
        }
        snprintf(buf, sizeof(buf), "%ld", pw ? (long)pw->pw_uid : uid);
        loom_strv_add(&c->users, buf);
    }
    loom_strv_free(&v);
    return rc;
}

enum { OPT_ME = 0x100, OPT_HELP, OPT_USAGE, OPT_IGNORE_ARG, OPT_IGNORE };

static const struct option scancel_longopts[] = {
    {"account", required_argument, NULL, 'A'},
    {"batch", no_argument, NULL, 'b'},
    {"clusters", required_argument, NULL, 'M'},
    {"ctld", no_argument, NULL, OPT_IGNORE},
    {"full", no_argument, NULL, 'f'},
    {"help", no_argument, NULL, OPT_HELP},
    {"hurry", no_argument, NULL, 'H'},
    {"interactive", no_argument, NULL, 'i'},
    {"jobname", required_argument, NULL, 'n'},
    {"me", no_argument, NULL, OPT_ME},
    {"name", required_argument, NULL, 'n'},
    {"nodelist", required_argument, NULL, 'w'},
    {"partition", required_argument, NULL, 'p'},
    {"qos", required_argument, NULL, 'q'},
    {"quiet", no_argument, NULL, 'Q'},
    {"reservation", required_argument, NULL, 'R'},
    {"sibling", required_argument, NULL, OPT_IGNORE_ARG},
    {"signal", required_argument, NULL, 's'},
    {"state", required_argument, NULL, 't'},
    {"usage", no_argument, NULL, OPT_USAGE},
    {"user", required_argument, NULL, 'u'},
    {"verbose", no_argument, NULL, 'v'},
    {"version", no_argument, NULL, 'V'},
    {"wckey", required_argument, NULL, OPT_IGNORE_ARG},
    {NULL, 0, NULL, 0},
};

/* One option: 1 go on, 0 exit 0, -1 fail. */
static int scancel_option(scancel_t *c, int opt, const char *arg, bool *quiet)
{
    char buf[32];
    switch (opt) {
    case 'A':
        loom_strv_split(&c->accounts, arg, ",");
        break;
    case 'b':
        c->batch = true;
        break;
    case 'f':
        c->full = true;
        break;
    case 'H':
    case 'M':
    case 'i':
    case OPT_IGNORE:
    case OPT_IGNORE_ARG:
        break;
    case OPT_ME:
        snprintf(buf, sizeof(buf), "%u", (unsigned)getuid());
        loom_strv_add(&c->users, buf);
        break;
    case 'n':
        loom_strv_split(&c->names, arg, ",");
        break;
    case 'w':
        free(c->nodelist);
        c->nodelist = loom_xstrdup(arg);
        break;
    case 'p':
        loom_strv_split(&c->parts, arg, ",");
        break;
    case 'q':
        loom_strv_split(&c->qos, arg, ",");
        break;
    case 'Q':
        *quiet = true;
        break;
    case 'R':
        loom_strv_split(&c->resvs, arg, ",");
        break;
    case 's':
        c->signal = scancel_signal(arg);
        c->sig_given = true;
        if (c->signal < 0) {
            fprintf(stderr, "Unknown job signal: %s\n", arg);
            return -1;
        }
        break;
    case 't':
        return scancel_states(c, arg) < 0 ? -1 : 1;
    case 'u':
        return scancel_users(c, arg) < 0 ? -1 : 1;
    case 'v':
        c->verbose++;
        break;
    case 'V':
        loom_cli_version();
        return 0;
    case OPT_HELP:
    case OPT_USAGE:
        scancel_usage();
        return 0;
    default:
        fprintf(stderr, "Try \"scancel --help\" for more information\n");
        return -1;
    }
    return 1;
}

static int scancel_ids(scancel_t *c, int argc, char **argv)
{
    for (int i = optind; i < argc; i++) {
        loom_strv_t parts = LOOM_STRV_INIT;
        loom_cli_split_ids(argv[i], ", ", &parts);
        for (size_t k = 0; k < parts.n; k++) {
            loom_jobid_t id;
            if (loom_jobid_parse(parts.v[k], &id, NULL) < 0) {
                loom_cli_error(&c->cli, "Invalid job id %s", parts.v[k]);
                loom_strv_free(&parts);
                return -1;
            }
            c->ids = loom_xreallocarray(c->ids, c->n_ids + 1, sizeof(*c->ids));
            c->ids[c->n_ids++] = id;
            loom_strv_add(&c->id_texts, parts.v[k]);
        }
        loom_strv_free(&parts);
    }
    return 0;
}

static bool scancel_filtering(const scancel_t *c)
{
    return c->users.n || c->parts.n || c->names.n || c->accounts.n || c->qos.n || c->resvs.n ||
           c->n_states || c->nodelist;
}

static int scancel_parse(scancel_t *c, int argc, char **argv)
{
    const char *e;
    if ((e = getenv("SCANCEL_SIGNAL")) && *e && (c->signal = scancel_signal(e)) > 0)
        c->sig_given = true;
    bool quiet = false;
    int opt;
    while ((opt = getopt_long(argc, argv, "A:bfHiM:n:p:q:QR:s:t:u:vVw:", scancel_longopts, NULL)) !=
           -1) {
        int rc = scancel_option(c, opt, optarg, &quiet);
        if (rc <= 0)
            return rc;
    }
    loom_cli_set_verbosity(&c->cli, c->verbose, quiet);
    c->quiet = quiet;
    if (scancel_ids(c, argc, argv) < 0)
        return -1;
    if (!c->n_ids && !scancel_filtering(c)) {
        loom_cli_error(&c->cli, "No job identification provided");
        return -1;
    }
    if (c->nodelist && loom_hostlist_parse(c->nodelist, &c->nodes, NULL) < 0) {
        loom_cli_error(&c->cli, "Invalid node name %s", c->nodelist);
        return -1;
    }
    return 1;
}

/* ---- signalling ---------------------------------------------------------- */

/* "Terminating job 5", "Signal 10 to batch job 5", ... (-v). */
static void scancel_say(const scancel_t *c, const char *what)
{
    const char *kind = c->batch ? "batch job" : c->full ? "full job" : "job";
    if (!c->sig_given)
        loom_cli_verbose(&c->cli, "Terminating %s %s", kind, what);
    else
        loom_cli_verbose(&c->cli, "Signal %d to %s %s", c->signal, kind, what);
}

/* Tasks of a set that are not there ("tasks_missing" in the reply): one
 * error each, as scancel 22.05 reports them; quiet with the plain SIGKILL
 * unless -v, and then not an error. */
static int scancel_missing(const scancel_t *c, const json_t *body, const json_t *reply, int sig)
{
    const char *text = json_string_value(json_object_get(reply, "tasks_missing"));
    loom_rangeset_t set = LOOM_RANGESET_INIT;
    bool quiet = sig == SIGKILL && !c->batch;
    if (!text || (quiet && c->verbose == 0) ||
        loom_rangeset_parse(text, LOOM_ARRAY_INDEX_MAX, &set, NULL) < 0)
        return 0;
    long long job = (long long)json_integer_value(json_object_get(body, "job_id"));
    uint32_t t;
    for (int rc = loom_rangeset_first(&set, &t); rc == 0 && !c->quiet;
         rc = loom_rangeset_next(&set, t, &t))
        loom_cli_error(&c->cli, "Kill job error on job id %lld_%u: %s", job, t,
                       loom_strerror(-LOOM_EINVAL_JOBID));
    loom_rangeset_free(&set);
    return quiet ? 0 : -1;
}

/* One job.signal; returns 0 or the error already reported (-1). */
static int scancel_send(scancel_t *c, const char *text, json_t *body, bool is_step)
{
    int sig = c->sig_given ? c->signal : SIGKILL;
    json_object_set_new(body, "signal", json_integer(sig));
    json_object_set_new(body, "cancel", json_boolean(sig == SIGKILL && !c->batch));
    json_object_set_new(body, "batch_only", json_boolean(c->batch));
    json_object_set_new(body, "full", json_boolean(c->full));
    scancel_say(c, text);
    loom_err_t err = {0};
    json_t *reply = NULL;
    int rc = loom_cli_call(&c->cli, "job.signal", body, &reply, &err);
    if (rc == 0) {
        rc = scancel_missing(c, body, reply, sig);
        json_decref(reply);
        return rc;
    }
    json_decref(reply);
    /* scancel 22.05: with the plain SIGKILL an unknown job (or array task)
     * is as quiet as a finished one; -b and steps still report it. */
    bool done = rc == -LOOM_EALREADY_DONE || (rc == -LOOM_EINVAL_JOBID && !is_step && !c->batch);
    if (done && sig == SIGKILL && c->verbose == 0)
        return 0;
    if (!c->quiet) /* scancel 22.05 -Q: the error only in the exit code */
        loom_cli_error(&c->cli, "Kill job error on job %s %s: %s", is_step ? "step id" : "id", text,
                       rc == -LOOM_ECONNECT ? err.msg : loom_strerror(rc));
    return done && sig == SIGKILL ? 0 : -1;
}

static json_t *scancel_body(const loom_jobid_t *id)
{
    json_t *body = json_pack("{s:I}", "job_id", (json_int_t)id->job_id);
    loom_sbuf_t t = LOOM_SBUF_INIT;
    if (id->array == LOOM_JOBID_ARRAY_ONE)
        loom_sbuf_addf(&t, "%u", id->task);
    else if (id->array == LOOM_JOBID_ARRAY_SET)
        loom_rangeset_format(&id->tasks, &t);
    if (t.len)
        json_object_set_new(body, "array_tasks", json_string(loom_sbuf_str(&t)));
    loom_sbuf_free(&t);
    if (id->step >= 0)
        json_object_set_new(body, "step_id", json_integer(id->step));
    else if (id->step == LOOM_STEP_BATCH)
        json_object_set_new(body, "batch_only", json_true());
    return body;
}

static int scancel_by_ids(scancel_t *c)
{
    int rc = 0;
    for (size_t i = 0; i < c->n_ids; i++) {
        json_t *body = scancel_body(&c->ids[i]);
        if (scancel_send(c, c->id_texts.v[i], body, c->ids[i].step != LOOM_STEP_NONE) < 0)
            rc = c->cli.exit_error;
        json_decref(body);
    }
    return rc;
}

/* ---- filters ------------------------------------------------------------- */

static bool scancel_in(const loom_strv_t *set, const char *v)
{
    return set->n == 0 || (v && loom_strv_find(set, v) >= 0);
}

static bool scancel_nodes_ok(const scancel_t *c, const json_t *j)
{
    if (!c->nodes)
        return true;
    loom_hostlist_t *hl = NULL;
    const char *nodes = loom_js(j, "nodes");
    if (!nodes || !*nodes || loom_hostlist_parse(nodes, &hl, NULL) < 0)
        return false;
    bool hit = false;
    for (size_t i = 0; !hit && i < loom_hostlist_count(hl); i++)
        hit = loom_hostlist_find(c->nodes, loom_hostlist_nth(hl, i)) >= 0;
    loom_hostlist_destroy(hl);
    return hit;
}

static bool scancel_match(const scancel_t *c, const json_t *j)
{
    uint32_t st = loom_cli_job_state(j);
    if (loom_job_base(st) > LOOM_JOB_SUSPENDED)
        return false;
    bool state_ok = c->n_states == 0;
    for (size_t i = 0; i < c->n_states; i++)
        state_ok = state_ok || loom_job_base(st) == c->states[i];
    char uid[32];
    snprintf(uid, sizeof(uid), "%lld", (long long)loom_ji(j, "user_id", -1));
    bool id_ok = c->n_ids == 0;
    for (size_t i = 0; i < c->n_ids; i++)
        id_ok = id_ok || loom_cli_jobid_match(&c->ids[i], j);
    return state_ok && id_ok && scancel_in(&c->users, uid) &&
           scancel_in(&c->parts, loom_js(j, "partition")) &&
           scancel_in(&c->names, loom_js(j, "name")) &&
           scancel_in(&c->accounts, loom_js(j, "account")) &&
           scancel_in(&c->qos, loom_js(j, "qos")) &&
           scancel_in(&c->resvs, loom_js(j, "reservation")) && scancel_nodes_ok(c, j);
}

/* What -v says when nothing matched: the filters, as Slurm lists them. */
static void scancel_no_match(const scancel_t *c)
{
    loom_sbuf_t f = LOOM_SBUF_INIT;
    const struct {
        const char *key;
        const loom_strv_t *v;
    } sets[] = {{"account", &c->accounts}, {"job_name", &c->names},    {"partition", &c->parts},
                {"qos", &c->qos},          {"reservation", &c->resvs}, {"user_id", &c->users}};
    for (size_t i = 0; i < sizeof(sets) / sizeof(sets[0]); i++)
        for (size_t k = 0; k < sets[i].v->n; k++)
            loom_sbuf_addf(&f, "%s=%s ", sets[i].key, sets[i].v->v[k]);
    if (c->nodelist)
        loom_sbuf_addf(&f, "nodelist=%s ", c->nodelist);
    if (c->verbose)
        loom_cli_error(&c->cli, "No active jobs match ALL job filters, including: %s",
                       loom_sbuf_str(&f));
    loom_sbuf_free(&f);
}

static int scancel_by_filter(scancel_t *c)
{
    json_t *reply = NULL;
    loom_err_t err = {0};
    if (loom_cli_call(&c->cli, "job.info", NULL, &reply, &err) < 0) {
        loom_cli_error(&c->cli, "slurm_load_jobs error: %s", err.msg);
        return c->cli.exit_error;
    }
    int rc = 0;
    size_t i, hits = 0;
    json_t *j;
    json_array_foreach(json_object_get(reply, "jobs"), i, j)
    {
        if (!scancel_match(c, j))
            continue;
        hits++;
        loom_sbuf_t text = LOOM_SBUF_INIT;
        loom_cli_job_id(j, &text);
        json_t *body = json_pack("{s:I}", "job_id", (json_int_t)loom_ji(j, "job_id", 0));
        const char *rest = loom_js(j, "array_task_str");
        if (rest && *rest) {
            char *tasks = loom_xstrndup(rest, strcspn(rest, "%"));
            json_object_set_new(body, "job_id", json_integer(loom_ji(j, "array_job_id", 0)));
            json_object_set_new(body, "array_tasks", json_string(tasks));
            free(tasks);
        }
        if (scancel_send(c, loom_sbuf_str(&text), body, false) < 0)
            rc = c->cli.exit_error;
        json_decref(body);
        loom_sbuf_free(&text);
    }
    if (!hits)
        scancel_no_match(c);
    json_decref(reply);
    return rc;
}

static void scancel_free(scancel_t *c)
{
    loom_strv_free(&c->users);
    loom_strv_free(&c->parts);
    loom_strv_free(&c->names);
    loom_strv_free(&c->accounts);
    loom_strv_free(&c->qos);
    loom_strv_free(&c->resvs);
    loom_strv_free(&c->id_texts);
    for (size_t i = 0; i < c->n_ids; i++)
        loom_jobid_free(&c->ids[i]);
    free(c->ids);
    free(c->states);
    free(c->nodelist);
    loom_hostlist_destroy(c->nodes);
    loom_cli_fini(&c->cli);
}

int main(int argc, char **argv)
{
    scancel_t c = {0};
    loom_cli_init(&c.cli, "scancel");
    argv[0] = "scancel";
    int rc = scancel_parse(&c, argc, argv);
    if (rc <= 0) {
        scancel_free(&c);
        return rc == 0 ? 0 : c.cli.exit_error;
    }
    loom_err_t err = {0};
    if (!loom_cli_conf(&c.cli, &err)) {
        loom_cli_error(&c.cli, "%s", err.msg);
        rc = c.cli.exit_error;
    } else {
        rc = scancel_filtering(&c) ? scancel_by_filter(&c) : scancel_by_ids(&c);
    }
    scancel_free(&c);
    return rc;
}
