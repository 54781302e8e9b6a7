/*
 * squeue.c - list jobs (CLI_SPEC §4): Slurm's squeue on Loom.
 *
 * Flow: options (+ SQUEUE_* environment) → one job.info call → filters (all
 * combined with AND) → pending array remainders unfolded into one row per
 * task where asked (-r, or -j naming tasks), else pending tasks folded into
 * their remainder's line as Slurm does → sort (Slurm's default "P,t,-p":
 * partition, state, priority descending; stable) → print with the format of
 * §4.1 or the user's -o/-O, or --json (§11). Unfolded tasks are rows, not
 * records: "squeue -r" over a 1,000,000-task array stays cheap.
 *
 * Field getters live in squeue_fields.c; the JSON output in squeue_json.c.
 */
#include "cli/cli_common.h"
#include "cli/cli_format.h"
#include "cli/squeue_fields.h"
#include "cli/cli_json.h"

#include "common/hostlist.h"
#include "common/jobstate.h"
#include "common/xalloc.h"

#include <ctype.h>
#include <getopt.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#define SQUEUE_FMT_DEFAULT "%.18i %.9P %.8j %.8u %.2t %.10M %.6D %R"
#define SQUEUE_FMT_LONG    "%.18i %.9P %.8j %.8u %.8T %.10M %.9l %.6D %R"
#define SQUEUE_FMT_STEPS   "%.15i %.8j %.9P %.8u %.9M %N"
#define SQUEUE_FMT_START   "%.18i %.9P %.8j %.8u %.2t %.19S %.6D %20Y %R"
/* -o %all: every letter in squeue 22.05's order, '|'-separated, unpadded. */
#define SQUEUE_FMT_ALL                                                                             \
    "%a|%b|%c|%d|%e|%f|%g|%h|%i|%j|%k|%l|%m|%n|%o|%p|%q|%r|%s|%t|%u|%v|%w|%x|%y|%z|%A|%B|%C|%D|"   \
    "%E|%F|%G|%H|%I|%J|%K|%L|%M|%N|%O|%P|%Q|%R|%S|%T|%U|%V|%W|%X|%Y|%Z"
#define SQUEUE_MAX_TASKS 1000000

typedef struct squeue_opts {
    loom_strv_t users; /* uids, as decimal text */
    loom_strv_t parts, names, accounts, qos, resvs, licenses;
    loom_strv_t step_ids; /* -s LIST: "job.step" ids */
    loom_jobid_t *jobs;
    size_t n_jobs;
    bool jobs_given;
    uint32_t *states; /* state words to show; NULL: the default set */
    size_t n_states;
    bool all_states;
    char *format, *format_long, *sort, *nodelist, *clusters;
    bool noheader, long_fmt, array, steps, start, json, format_cli, format_long_cli;
    bool jobs_bare;    /* -j without a list: the first operand is the list */
    bool steps_bare;   /* the same for -s */
    bool states_given; /* -t: SQUEUE_STATES is then not even parsed (22.05) */
    int iterate, verbose;
} squeue_opts_t;

typedef struct squeue {
    loom_cli_t cli;
    squeue_opts_t o;
    loom_squeue_view_t view;
    loom_hostlist_t *nodes; /* -w, expanded */
    bool bad_sort;          /* -S had a bad letter: header only, exit 1 */
    int argc;               /* for the --json meta */
    char **argv;
} squeue_t;

/* ---- options ------------------------------------------------------------- */

static void squeue_usage(void)
{
    /* as squeue 22.05.8 prints it, tab included */
    printf("Usage: squeue [-A account] [--clusters names] [-i seconds] [--job jobid]\n"
           "              [-n name] [-o format] [-p partitions] [--qos qos]\n"
           "              [--reservation reservation] [--sort fields] [--start]\n"
           "              [--step step_id] [-t states] [-u user_name] [--usage]\n"
           "              [-L licenses] [-w nodes] [--federation] [--local] [--sibling]\n"
           "\t      [-ahjlrsv]\n");
}

/* squeue --help, as 22.05.8 prints it (tabs and the trailing blank included) */
static void squeue_help(void)
{
    fputs("Usage: squeue [OPTIONS]\n"
          "  -A, --account=account(s)        comma separated list of accounts\n"
          "\t\t\t\t  to view, default is all accounts\n"
          "  -a, --all                       display jobs in hidden partitions\n"
          "      --array-unique              display one unique pending job array\n"
          "                                  element per line\n"
          "      --federation                Report federated information if a member\n"
          "                                  of one\n"
          "  -h, --noheader                  no headers on output\n"
          "      --hide                      do not display jobs in hidden partitions\n"
          "  -i, --iterate=seconds           specify an interation period\n"
          "  -j, --job=job(s)                comma separated list of jobs IDs\n"
          "                                  to view, default is all\n"
          "      --json                      Produce JSON output\n"
          "      --local                     Report information only about jobs on the\n"
          "                                  local cluster. Overrides --federation.\n"
          "  -l, --long                      long report\n"
          "  -L, --licenses=(license names)  comma separated list of license names to view\n"
          "  -M, --clusters=cluster_name     cluster to issue commands to.  Default is\n"
          "                                  current cluster.  cluster with no name will\n"
          "                                  reset to default. Implies --local.\n"
          "  -n, --name=job_name(s)          comma separated list of job names to view\n"
          "      --noconvert                 don't convert units from their original type\n"
          "                                  (e.g. 2048M won't be converted to 2G).\n"
          "  -o, --format=format             format specification\n"
          "  -O, --Format=format             format specification\n"
          "  -p, --partition=partition(s)    comma separated list of partitions\n"
          "\t\t\t\t  to view, default is all partitions\n"
          "  -q, --qos=qos(s)                comma separated list of qos's\n"
          "\t\t\t\t  to view, default is all qos's\n"
          "  -R, --reservation=name          reservation to view, default is all\n"
          "  -r, --array                     display one job array element per line\n"
          "      --sibling                   Report information about all sibling jobs\n"
          "                                  on a federated cluster. Implies --federation.\n"
          "  -s, --step=step(s)              comma separated list of job steps\n"
          "\t\t\t\t  to view, default is all\n"
          "  -S, --sort=fields               comma separated list of fields to sort on\n"
          "      --start                     print expected start times of pending jobs\n"
          "  -t, --states=states             comma separated list of states to view,\n"
          "\t\t\t\t  default is pending and running,\n"
          "\t\t\t\t  '--states=all' reports all states\n"
          "  -u, --user=user_name(s)         comma separated list of users to view\n"
          "      --name=job_name(s)          comma separated list of job names to view\n"
          "  -v, --verbose                   verbosity level\n"
          "  -V, --version                   output version information and exit\n"
          "  -w, --nodelist=hostlist         list of nodes to view, default is \n"
          "\t\t\t\t  all nodes\n"
          "      --yaml                      Produce YAML output\n"
          "\n"
          "Help options:\n"
          "  --help                          show this help message\n"
          "  --usage                         display a brief summary of squeue options\n",
          stdout);
}

static void squeue_bad_option(squeue_t *q)
{
    fprintf(stderr, "Try \"squeue --help\" for more information\n");
}

/* -u: names or uids, resolved now; an unknown one is reported (Slurm goes on,
 * and then shows no job for it). */
static void squeue_add_users(squeue_t *q, const char *list)
{
    loom_strv_free(&q->o.users); /* a repeated -u replaces the list, as in 22.05 */
    loom_strv_t v = LOOM_STRV_INIT;
    loom_strv_split(&v, list, ",");
    for (size_t i = 0; i < v.n; i++) {
        struct passwd *pw = getpwnam(v.v[i]);
        char *end;
        long uid = strtol(v.v[i], &end, 10);
        if (pw) {
            char buf[32];
            snprintf(buf, sizeof(buf), "%u", (unsigned)pw->pw_uid);
            loom_strv_add(&q->o.users, buf);
        } else if (*end == '\0' && uid >= 0) {
            loom_strv_add(&q->o.users, v.v[i]);
        } else {
            loom_cli_error(&q->cli, "Invalid user: %s\n", v.v[i]);
            loom_strv_add(&q->o.users, "-1");
        }
    }
    loom_strv_free(&v);
}

static int squeue_add_jobs(squeue_t *q, const char *list)
{
    for (size_t i = 0; i < q->o.n_jobs; i++) /* the last -j wins */
        loom_jobid_free(&q->o.jobs[i]);
    q->o.n_jobs = 0;
    loom_strv_t v = LOOM_STRV_INIT;
    loom_cli_split_ids(list, ",", &v);
    int rc = 0;
    for (size_t i = 0; i < v.n && rc == 0; i++) {
        loom_jobid_t id;
        if (loom_jobid_parse(v.v[i], &id, NULL) < 0) {
            loom_cli_error(&q->cli, "Invalid job id: %s", v.v[i]);
            rc = -1;
            break;
        }
        q->o.jobs = loom_xreallocarray(q->o.jobs, q->o.n_jobs + 1, sizeof(*q->o.jobs));
        q->o.jobs[q->o.n_jobs++] = id;
    }
    q->o.jobs_given = true;
    loom_strv_free(&v);
    return rc;
}

static int squeue_add_states(squeue_t *q, const char *list)
{
    q->o.n_states = 0; /* the last -t wins */
    q->o.all_states = false;
    loom_strv_t v = LOOM_STRV_INIT;
    loom_strv_split(&v, list, ",");
    int rc = 0;
    for (size_t i = 0; i < v.n; i++) {
        uint32_t st;
        if (strcasecmp(v.v[i], "all") == 0) {
            q->o.all_states = true;
        } else if (loom_job_state_parse(v.v[i], &st, NULL) == 0) {
            q->o.states = loom_xreallocarray(q->o.states, q->o.n_states + 1, sizeof(uint32_t));
            q->o.states[q->o.n_states++] = st;
        } else {
            loom_cli_error(&q->cli, "Invalid job state specified: %s", v.v[i]);
            loom_cli_error(&q->cli,
                           "Valid job states include: PENDING,RUNNING,SUSPENDED,COMPLETED,"
                           "CANCELLED,FAILED,TIMEOUT,NODE_FAIL,PREEMPTED,BOOT_FAIL,DEADLINE,"
                           "OUT_OF_MEMORY,COMPLETING,CONFIGURING,RESIZING,RESV_DEL_HOLD,"
                           "REQUEUED,REQUEUE_FED,REQUEUE_HOLD,REVOKED,SIGNALING,SPECIAL_EXIT,"
                           "STAGE_OUT,STOPPED\n");
            rc = -1;
            break;
        }
    }
    loom_strv_free(&v);
    return rc;
}

/* -s LIST: each id must name a step ("12.0"); "12" is refused as 22.05 does. */
static int squeue_add_steps(squeue_t *q, const char *list)
{
    loom_strv_t v = LOOM_STRV_INIT;
    loom_strv_split(&v, list, ",");
    for (size_t i = 0; i < v.n; i++)
        if (!strchr(v.v[i], '.')) {
            loom_cli_error(&q->cli, "Invalid job_step id: %s.??", v.v[i]);
            loom_strv_free(&v);
            return -1;
        }
    for (size_t i = 0; i < v.n; i++)
        loom_strv_add(&q->o.step_ids, v.v[i]);
    loom_strv_free(&v);
    return 1;
}

/* -p, -n, -A, -q, -R, -L: a repeated option replaces the list (22.05). */
static void squeue_list(loom_strv_t *sv, const char *val)
{
    loom_strv_free(sv);
    loom_strv_split(sv, val, ",");
}

static void squeue_set(char **dst, const char *val)
{
    free(*dst);
    *dst = loom_xstrdup(val);
}

/* SQUEUE_* variables: the command line overrides them (they are read first). */
static int squeue_env(squeue_t *q)
{
    const char *e;
    if ((e = getenv("SQUEUE_FORMAT")) && *e)
        squeue_set(&q->o.format, e);
    if ((e = getenv("SQUEUE_FORMAT2")) && *e)
        squeue_set(&q->o.format_long, e);
    if ((e = getenv("SQUEUE_SORT")) && *e)
        squeue_set(&q->o.sort, e);
    if ((e = getenv("SQUEUE_USERS")) && *e)
        squeue_add_users(q, e);
    if ((e = getenv("SQUEUE_PARTITION")) && *e)
        squeue_list(&q->o.parts, e);
    if ((e = getenv("SQUEUE_ACCOUNT")) && *e)
        squeue_list(&q->o.accounts, e);
    if ((e = getenv("SQUEUE_ARRAY")))
        q->o.array = true;
    if ((e = getenv("SQUEUE_NAMES")) && *e)
        squeue_list(&q->o.names, e);
    if ((e = getenv("SQUEUE_QOS")) && *e)
        squeue_list(&q->o.qos, e);
    if ((e = getenv("SQUEUE_LICENSES")) && *e)
        squeue_list(&q->o.licenses, e);
    return 0;
}

enum {
    OPT_ME = 0x100,
    OPT_START,
    OPT_JSON,
    OPT_YAML,
    OPT_USAGE,
    OPT_HELP,
    OPT_IGNORE,
};

static const struct option squeue_longopts[] = {
    {"account", required_argument, NULL, 'A'},
    {"all", no_argument, NULL, 'a'},
    {"array", no_argument, NULL, 'r'},
    {"array-unique", no_argument, NULL, OPT_IGNORE}, /* 22.05: folds as by default */
    {"clusters", required_argument, NULL, 'M'},
    {"federation", no_argument, NULL, OPT_IGNORE},
    {"format", required_argument, NULL, 'o'},
    {"Format", required_argument, NULL, 'O'},
    {"help", no_argument, NULL, OPT_HELP},
    {"hide", no_argument, NULL, OPT_IGNORE},
    {"iterate", required_argument, NULL, 'i'},
    {"jobs", optional_argument, NULL, 'j'},
    {"json", no_argument, NULL, OPT_JSON},
    {"licenses", required_argument, NULL, 'L'},
    {"local", no_argument, NULL, OPT_IGNORE},
    {"long", no_argument, NULL, 'l'},
    {"me", no_argument, NULL, OPT_ME},
    {"name", required_argument, NULL, 'n'},
    {"noconvert", no_argument, NULL, OPT_IGNORE},
    {"noheader", no_argument, NULL, 'h'},
    {"nodelist", required_argument, NULL, 'w'},
    {"partition", required_argument, NULL, 'p'},
    {"priority", no_argument, NULL, 'P'},
    {"qos", required_argument, NULL, 'q'},
    {"reservation", required_argument, NULL, 'R'},
    {"sibling", no_argument, NULL, OPT_IGNORE},
    {"sort", required_argument, NULL, 'S'},
    {"start", no_argument, NULL, OPT_START},
    {"states", required_argument, NULL, 't'},
    {"steps", optional_argument, NULL, 's'},
    {"usage", no_argument, NULL, OPT_USAGE},
    {"user", required_argument, NULL, 'u'},
    {"verbose", no_argument, NULL, 'v'},
    {"version", no_argument, NULL, 'V'},
    {"yaml", optional_argument, NULL, OPT_YAML},
    {NULL, 0, NULL, 0},
};

/* One option; returns 1 to go on, 0 to exit successfully, -1 to fail. */
static int squeue_option(squeue_t *q, int c, const char *arg)
{
    char buf[32];
    switch (c) {
    case 'A':
        squeue_list(&q->o.accounts, arg);
        break;
    case 'M':
        squeue_set(&q->o.clusters, arg);
        break;
    case 'L':
        squeue_list(&q->o.licenses, arg);
        break;
    case 'a':
    case 'P':
    case OPT_IGNORE:
        break;
    case 'r':
        q->o.array = true;
        break;
    case 'o':
        if (q->o.format_long_cli) {
            loom_cli_error(&q->cli, "-o (--format) is incompatible with -O (--Format)");
            return -1;
        }
        squeue_set(&q->o.format, arg);
        q->o.format_cli = true;
        break;
    case 'O':
        if (q->o.format_cli) {
            loom_cli_error(&q->cli, "-O (--Format) is incompatible with -o (--format)");
            return -1;
        }
        q->o.format_long_cli = true;
        squeue_set(&q->o.format_long, arg);
        free(q->o.format);
        q->o.format = NULL;
        break;
    case 'i':
        q->o.iterate = atoi(arg);
        if (q->o.iterate <= 0) {
            loom_cli_error(&q->cli, "--iterate=%s\n", arg);
            return -1;
        }
        break;
    case 'j':
        q->o.jobs_bare |= !arg;
        return arg && squeue_add_jobs(q, arg) < 0 ? -1 : 1;
    case OPT_JSON:
        q->o.json = true;
        break;
    case OPT_YAML:
        loom_cli_error(&q->cli, "--yaml is not supported by this build; use --json");
        return -1;
    case 'l':
        q->o.long_fmt = true;
        break;
    case OPT_ME:
        loom_strv_free(&q->o.users);
        snprintf(buf, sizeof(buf), "%u", (unsigned)getuid());
        loom_strv_add(&q->o.users, buf);
        break;
    case 'n':
        squeue_list(&q->o.names, arg);
        break;
    case 'h':
        q->o.noheader = true;
        break;
    case 'w':
        squeue_set(&q->o.nodelist, arg);
        break;
    case 'p':
        squeue_list(&q->o.parts, arg);
        break;
    case 'q':
        squeue_list(&q->o.qos, arg);
        break;
    case 'R':
        squeue_list(&q->o.resvs, arg);
        break;
    case 'S':
        squeue_set(&q->o.sort, arg);
        break;
    case OPT_START:
        q->o.start = true;
        break;
    case 't':
        q->o.states_given = true;
        return squeue_add_states(q, arg) < 0 ? -1 : 1;
    case 's':
        q->o.steps = true;
        q->o.steps_bare |= !arg;
        return arg ? squeue_add_steps(q, arg) : 1;
    case 'u':
        squeue_add_users(q, arg);
        break;
    case 'v':
        q->o.verbose++;
        break;
    case 'V':
        loom_cli_version();
        return 0;
    case OPT_HELP:
        squeue_help();
        return 0;
    case OPT_USAGE:
        squeue_usage();
        return 0;
    default:
        return -2;
    }
    return 1;
}

/* -S: the letters squeue 22.05 takes (it reports the last bad one). */
static int squeue_check_sort(const squeue_t *q)
{
    char bad = 0;
    for (const char *k = q->o.sort; k && *k; k++)
        if (strchr("akoqrswxyAEFKRWXYZ", *k) || (!strchr(",+-", *k) && !isalpha((unsigned char)*k)))
            bad = *k;
    if (!bad)
        return 0;
    loom_cli_error(&q->cli, "Invalid sort specification: %c", bad);
    return -1;
}

static int squeue_parse(squeue_t *q, int argc, char **argv)
{
    if (squeue_env(q) < 0)
        return -1;
    int c;
    opterr = 1;
    while ((c = getopt_long(argc, argv, "A:ahi:j::lL:M:n:o:O:p:Pq:rR:s::S:t:u:vVw:",
                            squeue_longopts, NULL)) != -1) {
        int rc = squeue_option(q, c, optarg);
        if (rc == -2) {
            squeue_bad_option(q);
            return -1;
        }
        if (rc <= 0)
            return rc;
    }
    const char *env_states = getenv("SQUEUE_STATES");
    if (!q->o.states_given && env_states && *env_states && squeue_add_states(q, env_states) < 0)
        return -1;
    /* "squeue -j 12,13": -j takes its list as the first operand; any other
     * operand is refused as squeue 22.05 does. */
    int i = optind;
    if (q->o.jobs_bare && i < argc && squeue_add_jobs(q, argv[i++]) < 0)
        return -1;
    if (q->o.steps_bare && i < argc && squeue_add_steps(q, argv[i++]) < 0)
        return -1;
    if (i < argc) {
        loom_cli_error(&q->cli, "Unrecognized option: %s", argv[i]);
        squeue_usage();
        return -1;
    }
    if (q->o.long_fmt && q->o.format_cli) {
        fprintf(stderr, "squeue: fatal: Options -o(--format) and -l(--long) are mutually "
                        "exclusive. Please remove one and retry.\n");
        return -1;
    }
    q->bad_sort = squeue_check_sort(q) < 0;
    if (q->o.format && !strcmp(q->o.format, "%all"))
        squeue_set(&q->o.format, SQUEUE_FMT_ALL);
    loom_cli_set_verbosity(&q->cli, q->o.verbose, false);
    return 1;
}

/* ---- arrays -------------------------------------------------------------- */

/* One output row: a record, or one task of a pending array remainder
 * (virtual: printed from the remainder with array_task_id set, so that
 * "squeue -r" over a 1,000,000-task array costs rows, not records). */
typedef struct squeue_rec {
    const json_t *j;
    size_t idx; /* position from the controller: the last tie-breaker */
    uint32_t task;
    bool virt;
    union squeue_key *keys; /* for sorting */
    /* For ties on every key (squeue_cmp): a held job that is no array task,
     * and its id. */
    bool newest_first;
    int64_t id;
} squeue_rec_t;

typedef struct squeue_rows {
    squeue_rec_t *v;
    size_t n, cap;
} squeue_rows_t;

static void squeue_row(squeue_rows_t *rows, const json_t *j, uint32_t task, bool virt)
{
    if (rows->n == rows->cap) {
        rows->cap = rows->cap ? rows->cap * 2 : 256;
        rows->v = loom_xreallocarray(rows->v, rows->cap, sizeof(*rows->v));
    }
    rows->v[rows->n] = (squeue_rec_t){j, rows->n, task, virt, NULL, false, 0};
    rows->n++;
}

static bool squeue_wants_tasks(const squeue_t *q)
{
    if (q->o.array)
        return true;
    for (size_t i = 0; i < q->o.n_jobs; i++)
        if (q->o.jobs[i].array != LOOM_JOBID_ARRAY_NONE)
            return true;
    return false;
}

/* Does -j keep task `task` of array aid? */
static bool squeue_task_ok(const squeue_t *q, int64_t aid, uint32_t task)
{
    for (size_t i = 0; i < q->o.n_jobs; i++) {
        const loom_jobid_t *id = &q->o.jobs[i];
        if (id->job_id != aid)
            continue;
        if (id->array == LOOM_JOBID_ARRAY_NONE || id->array == LOOM_JOBID_ARRAY_ALL ||
            (id->array == LOOM_JOBID_ARRAY_ONE && id->task == task) ||
            (id->array == LOOM_JOBID_ARRAY_SET && loom_rangeset_contains(&id->tasks, task)))
            return true;
    }
    return q->o.n_jobs == 0;
}

/* A pending remainder "5-9%2" becomes one row per index (that -j keeps). */
static void squeue_expand_one(const squeue_t *q, const json_t *job, squeue_rows_t *rows)
{
    loom_rangeset_t rs = LOOM_RANGESET_INIT;
    if (loom_cli_array_tasks(loom_js(job, "array_task_str"), &rs) < 0 ||
        loom_rangeset_count(&rs) > SQUEUE_MAX_TASKS) {
        squeue_row(rows, job, 0, false);
        loom_rangeset_free(&rs);
        return;
    }
    int64_t aid = loom_ji(job, "array_job_id", 0);
    uint32_t task;
    for (int rc = loom_rangeset_first(&rs, &task); rc == 0;
         rc = loom_rangeset_next(&rs, task, &task))
        if (squeue_task_ok(q, aid, task))
            squeue_row(rows, job, task, true);
    loom_rangeset_free(&rs);
}

static bool squeue_remainder(const json_t *j)
{
    const char *rest = loom_js(j, "array_task_str");
    return rest && *rest;
}

/* One remainder under "-j 7_1,7_2" without -r: two or more kept tasks print
 * folded, "7_[1-2]", as squeue 22.05 does; NULL when it stays as it is. */
static json_t *squeue_fold_kept_one(const squeue_t *q, const json_t *j)
{
    const char *str = loom_js(j, "array_task_str");
    loom_rangeset_t all = LOOM_RANGESET_INIT, kept = LOOM_RANGESET_INIT;
    json_t *copy = NULL;
    if (loom_cli_array_tasks(str, &all) >= 0 && loom_rangeset_count(&all) <= SQUEUE_MAX_TASKS) {
        int64_t aid = loom_ji(j, "array_job_id", 0);
        uint32_t t;
        for (int rc = loom_rangeset_first(&all, &t); rc == 0; rc = loom_rangeset_next(&all, t, &t))
            if (squeue_task_ok(q, aid, t))
                loom_rangeset_add(&kept, t, t);
    }
    if (loom_rangeset_count(&kept) > 1) {
        loom_sbuf_t s = LOOM_SBUF_INIT;
        loom_rangeset_format(&kept, &s); /* without the throttle, as 22.05 */
        copy = json_copy((json_t *)j);
        json_object_set_new(copy, "array_task_str", json_string(loom_sbuf_str(&s)));
        json_object_set_new(copy, "_kept", json_true());
        loom_sbuf_free(&s);
    }
    loom_rangeset_free(&all);
    loom_rangeset_free(&kept);
    return copy;
}

static json_t *squeue_fold_kept(const squeue_t *q, const json_t *recs)
{
    json_t *out = json_array();
    size_t i;
    json_t *j;
    json_array_foreach(recs, i, j)
    {
        json_t *f = squeue_remainder(j) ? squeue_fold_kept_one(q, j) : NULL;
        json_array_append_new(out, f ? f : json_incref(j));
    }
    return out;
}

static bool squeue_pending(const json_t *j)
{
    uint32_t st = loom_cli_job_state(j);
    return loom_job_base(st) == LOOM_JOB_PENDING && !(st & LOOM_JOB_F_COMPLETING);
}

/* Add the pending task to its remainder's line. */
static void squeue_fold_into(json_t *line, const json_t *task)
{
    loom_rangeset_t rs = LOOM_RANGESET_INIT;
    if (loom_cli_array_tasks(loom_js(line, "array_task_str"), &rs) < 0)
        return;
    uint32_t t = (uint32_t)loom_ji(task, "array_task_id", 0);
    loom_rangeset_add(&rs, t, t);
    loom_sbuf_t sb = LOOM_SBUF_INIT;
    loom_rangeset_format(&rs, &sb);
    json_object_set_new(line, "array_task_str", json_string(loom_sbuf_str(&sb)));
    const char *mine = loom_js_or(line, "reason", "None"),
               *its = loom_js_or(task, "reason", "None");
    loom_strv_t reasons = LOOM_STRV_INIT;
    loom_strv_split(&reasons, mine, ",");
    if (loom_strv_find(&reasons, its) < 0) {
        loom_sbuf_reset(&sb);
        loom_sbuf_addf(&sb, "%s,%s", mine, its);
        json_object_set_new(line, "reason", json_string(loom_sbuf_str(&sb)));
    }
    loom_strv_free(&reasons);
    loom_sbuf_free(&sb);
    loom_rangeset_free(&rs);
}

/* Without -r, a pending task split off a pending array (held, released or
 * updated on its own) shows in the array's line, as Slurm's squeue shows it:
 * "12_[0,3-9]", without the throttle, the reasons that differ joined by ','.
 * Returns the records to print (remainders that took tasks are copies). */
static json_t *squeue_fold(const json_t *sel)
{
    json_t *lines = json_array(), *out = json_array(), *j;
    size_t i, k;
    json_array_foreach(sel, i, j)
    {
        if (squeue_remainder(j) && squeue_pending(j))
            json_array_append_new(lines, json_copy(j));
    }
    json_array_foreach(sel, i, j)
    {
        json_t *line = NULL, *l;
        int64_t aid = loom_ji(j, "array_job_id", 0);
        bool task = aid > 0 && !squeue_remainder(j) && squeue_pending(j);
        json_array_foreach(lines, k, l)
        {
            if (loom_ji(l, "array_job_id", 0) == aid && (task || squeue_remainder(j)))
                line = l;
        }
        if (line && task)
            squeue_fold_into(line, j);
        else
            json_array_append(out, line ? line : j);
    }
    json_decref(lines);
    return out;
}

/* ---- filters ------------------------------------------------------------- */

static bool squeue_in(const loom_strv_t *set, const char *val)
{
    return set->n == 0 || (val && loom_strv_find(set, val) >= 0);
}

static bool squeue_state_ok(const squeue_t *q, uint32_t st)
{
    if (q->o.all_states)
        return true;
    if (q->o.n_states == 0)
        return !loom_job_state_is_terminal(st) || (st & LOOM_JOB_F_COMPLETING);
    for (size_t i = 0; i < q->o.n_states; i++) {
        uint32_t want = q->o.states[i];
        if (st & LOOM_JOB_F_COMPLETING) { /* -t CA does not show a CG job (22.05) */
            if (want & LOOM_JOB_F_COMPLETING)
                return true;
        } else if (want > LOOM_JOB_STATE_BASE ? (st & want) != 0 : loom_job_base(st) == want)
            return true;
    }
    return false;
}

static bool squeue_user_ok(const squeue_t *q, const json_t *j)
{
    char buf[32];
    snprintf(buf, sizeof(buf), "%lld", (long long)loom_ji(j, "user_id", -1));
    return squeue_in(&q->o.users, buf);
}

static bool squeue_jobs_ok(const squeue_t *q, const json_t *j)
{
    if (!q->o.n_jobs)
        return true;
    for (size_t i = 0; i < q->o.n_jobs; i++)
        if (loom_cli_jobid_match(&q->o.jobs[i], j))
            return true;
    return false;
}

/* The job's nodes meet the -w list. */
static bool squeue_nodes_ok(const squeue_t *q, const json_t *j)
{
    if (!q->nodes)
        return true;
    loom_hostlist_t *hl = NULL;
    const char *nodes = loom_js(j, "nodes");
    if (!nodes || !*nodes || loom_hostlist_parse(nodes, &hl, NULL) < 0)
        return false;
    bool hit = false;
    for (size_t i = 0; !hit && i < loom_hostlist_count(hl); i++)
        hit = loom_hostlist_find(q->nodes, loom_hostlist_nth(hl, i)) >= 0;
    loom_hostlist_destroy(hl);
    return hit;
}

/* -L: the job uses one of the licenses ("name" or "name:count" in its list). */
static bool squeue_licenses_ok(const squeue_t *q, const json_t *j)
{
    if (!q->o.licenses.n)
        return true;
    loom_strv_t have = LOOM_STRV_INIT;
    loom_strv_split(&have, loom_js_or(j, "licenses", ""), ",");
    bool ok = false;
    for (size_t i = 0; i < have.n && !ok; i++) {
        char *colon = strchr(have.v[i], ':');
        if (colon)
            *colon = '\0';
        ok = squeue_in(&q->o.licenses, have.v[i]);
    }
    loom_strv_free(&have);
    return ok;
}

static bool squeue_match(const squeue_t *q, const json_t *j)
{
    return squeue_state_ok(q, loom_cli_job_state(j)) && squeue_user_ok(q, j) &&
           squeue_jobs_ok(q, j) && squeue_in(&q->o.parts, loom_js(j, "partition")) &&
           squeue_in(&q->o.names, loom_js(j, "name")) &&
           squeue_in(&q->o.accounts, loom_js(j, "account")) &&
           squeue_in(&q->o.qos, loom_js(j, "qos")) &&
           squeue_in(&q->o.resvs, loom_js(j, "reservation")) && squeue_nodes_ok(q, j) &&
           squeue_licenses_ok(q, j);
}

/* ---- sorting ------------------------------------------------------------- */

static int squeue_cmp_int(int64_t a, int64_t b)
{
    return a < b ? -1 : a > b;
}

/* Unknown start times sort last. */
static int64_t squeue_start_key(const json_t *j)
{
    int64_t t = loom_ji(j, "start_time", 0);
    return t > 0 ? t : INT64_MAX;
}

/* A row's value for one sort letter, read once before sorting: a number, or
 * (for the letters that sort by text) a string that lives as long as the
 * records do. */
typedef union squeue_key {
    int64_t i;
    const char *s;
} squeue_key_t;

static const char squeue_text_keys[] = "PtTjnuaqrN";

static squeue_key_t squeue_key_str(const char *v)
{
    return (squeue_key_t){.s = v ? v : ""};
}

static squeue_key_t squeue_key_of(const loom_squeue_view_t *v, char key, const squeue_rec_t *r)
{
    const json_t *a = r->j;
    switch (key) {
    case 'P':
        return squeue_key_str(loom_js(a, "partition"));
    case 't':
    case 'T': /* by name as squeue 22.05: CANCELLED, COMPLETING, PENDING, RUNNING */
        return squeue_key_str(loom_job_state_name(loom_cli_job_state(a)));
    case 'j':
    case 'n':
        return squeue_key_str(loom_js(a, "name"));
    case 'u':
        return squeue_key_str(loom_js(a, "user_name"));
    case 'a':
        return squeue_key_str(loom_js(a, "account"));
    case 'q':
        return squeue_key_str(loom_js(a, "qos"));
    case 'r':
        return squeue_key_str(loom_js(a, "reason"));
    case 'N':
        return squeue_key_str(loom_js(a, "nodes"));
    case 'p':
    case 'Q':
        return (squeue_key_t){.i = (uint32_t)loom_ji(a, "priority", 0)};
    case 'K':
        return (squeue_key_t){.i = r->virt ? r->task : loom_ji(a, "array_task_id", -1)};
    case 'M':
        return (squeue_key_t){.i = loom_cli_job_runtime(a, v->now)};
    case 'l':
        return (squeue_key_t){.i = loom_cli_job_limit(a)};
    case 'S':
        return (squeue_key_t){.i = squeue_start_key(a)};
    default:
        break;
    }
    static const struct {
        char key;
        const char *member;
    } ints[] = {{'i', "job_id"},      {'A', "job_id"},    {'F', "job_id"},
                {'U', "user_id"},     {'D', "num_nodes"}, {'C', "num_cpus"},
                {'V', "submit_time"}, {'e', "end_time"},  {'y', "nice"}};
    for (size_t k = 0; k < sizeof(ints) / sizeof(ints[0]); k++)
        if (ints[k].key == key)
            return (squeue_key_t){.i = loom_ji(a, ints[k].member, 0)};
    return (squeue_key_t){.i = 0};
}

/* The sort letters of -S (or the default), each with its direction. */
typedef struct squeue_sort_ctx {
    char letters[64];
    bool rev[64];
    size_t n;
} squeue_sort_ctx_t;

static void squeue_sort_parse(const char *keys, squeue_sort_ctx_t *sc)
{
    sc->n = 0;
    for (const char *k = keys; *k && sc->n < sizeof(sc->letters); k++) {
        if (*k == ',' || *k == '+' || *k == '-')
            continue;
        sc->rev[sc->n] = k > keys && k[-1] == '-';
        sc->letters[sc->n++] = *k;
    }
}

/* Every row's keys, in one block (row i's at i * sc->n). */
static squeue_key_t *squeue_sort_keys(const loom_squeue_view_t *v, const squeue_sort_ctx_t *sc,
                                      squeue_rows_t *rows)
{
    squeue_key_t *keys = loom_xcalloc(rows->n * sc->n + 1, sizeof(*keys));
    for (size_t i = 0; i < rows->n; i++) {
        squeue_rec_t *r = &rows->v[i];
        const char *why = loom_js(r->j, "reason");
        r->newest_first = !r->virt && squeue_pending(r->j) && why && !strncmp(why, "JobHeld", 7) &&
                          loom_ji(r->j, "array_job_id", 0) <= 0;
        r->id = loom_ji(r->j, "job_id", 0);
        rows->v[i].keys = keys + i * sc->n;
        for (size_t k = 0; k < sc->n; k++)
            rows->v[i].keys[k] = squeue_key_of(v, sc->letters[k], &rows->v[i]);
    }
    return keys;
}

static int squeue_cmp(const void *pa, const void *pb, void *arg)
{
    const squeue_sort_ctx_t *sc = arg;
    const squeue_rec_t *a = pa, *b = pb;
    for (size_t k = 0; k < sc->n; k++) {
        int d = strchr(squeue_text_keys, sc->letters[k])
                    ? strcmp(a->keys[k].s, b->keys[k].s)
                    : squeue_cmp_int(a->keys[k].i, b->keys[k].i);
        if (d)
            return sc->rev[k] ? -d : d;
    }
    /* Ties as squeue 22.05.8 leaves them (side by side, three queues): held
     * jobs newest first, after the others in queue order. (Other pending jobs
     * of equal priority came out in either order there: queue order kept.) */
    if (a->newest_first != b->newest_first)
        return a->newest_first ? 1 : -1;
    if (a->newest_first)
        return squeue_cmp_int(b->id, a->id);
    return squeue_cmp_int((int64_t)a->idx, (int64_t)b->idx);
}

/* ---- output -------------------------------------------------------------- */

static const char *squeue_default_sort(const squeue_t *q)
{
    if (q->o.sort)
        return q->o.sort;
    if (q->o.start)
        return "S,i";
    return q->o.steps ? "P,i" : "P,t,-p";
}

/* One -O item's size with a sign, as squeue 22.05 reads it: "+5" is 5;
 * "-5" (or ".-5") prints the bare value and one blank, then the suffix. */
static void squeue_long_item(const char *item, loom_sbuf_t *out)
{
    const char *colon = strchr(item, ':');
    if (!colon) {
        loom_sbuf_add(out, item);
        return;
    }
    loom_sbuf_addn(out, item, (size_t)(colon - item) + 1);
    const char *p = colon + 1;
    const char *dot = *p == '.' ? p++ : NULL;
    if (*p == '-' && isdigit((unsigned char)p[1])) {
        for (p++; isdigit((unsigned char)*p); p++)
            ;
        loom_sbuf_addf(out, "0 %s", p);
        return;
    }
    if (dot)
        loom_sbuf_addc(out, '.');
    loom_sbuf_add(out, *p == '+' ? p + 1 : p);
}

static void squeue_parse_long(const char *spec, const loom_fmt_col_t *cols, size_t n, loom_fmt_t *f,
                              loom_strv_t *bad)
{
    loom_strv_t items = LOOM_STRV_INIT;
    loom_strv_split(&items, spec, ",");
    loom_sbuf_t fixed = LOOM_SBUF_INIT;
    for (size_t i = 0; i < items.n; i++) {
        if (i)
            loom_sbuf_addc(&fixed, ',');
        squeue_long_item(items.v[i], &fixed);
    }
    loom_fmt_parse_long(loom_sbuf_str(&fixed), cols, n, f, bad);
    loom_sbuf_free(&fixed);
    loom_strv_free(&items);
}

static void squeue_format(squeue_t *q, loom_fmt_t *f)
{
    const loom_fmt_col_t *cols = q->o.steps ? loom_squeue_step_cols : loom_squeue_job_cols;
    size_t n = q->o.steps ? loom_squeue_step_ncols : loom_squeue_job_ncols;
    loom_strv_t bad = LOOM_STRV_INIT;
    if (q->o.long_fmt && !q->o.steps && !q->o.start)
        loom_fmt_parse(SQUEUE_FMT_LONG, cols, n, 0, f, &bad);
    else if (q->o.format_long && !q->o.format)
        squeue_parse_long(q->o.format_long, cols, n, f, &bad);
    else if (q->o.format)
        loom_fmt_parse(q->o.format, cols, n, 0, f, &bad);
    else if (q->o.steps)
        loom_fmt_parse(SQUEUE_FMT_STEPS, cols, n, 0, f, &bad);
    else if (q->o.start)
        loom_fmt_parse(SQUEUE_FMT_START, cols, n, 0, f, &bad);
    else
        loom_fmt_parse(SQUEUE_FMT_DEFAULT, cols, n, 0, f, &bad);
    for (size_t i = 0; i < bad.n; i++)
        loom_cli_error(&q->cli, "Invalid job format specification: %s", bad.v[i]);
    loom_strv_free(&bad);
}

/* squeue -s: one running job's numbered steps, then its batch step (a
 * batch job's) and its extern step (PrologFlags=Contain), as squeue 22.05
 * lists them. */
static void squeue_job_steps(const json_t *j, json_t *out)
{
    loom_sbuf_t id = LOOM_SBUF_INIT;
    loom_cli_job_id(j, &id);
    size_t k;
    json_t *s;
    json_array_foreach(json_object_get(j, "steps"), k, s)
    {
        json_t *c = json_copy(s);
        json_object_set_new(
            c, "step",
            json_sprintf("%s.%lld", loom_sbuf_str(&id), (long long)loom_ji(s, "step_id", 0)));
        json_object_set(c, "job", (json_t *)j);
        json_array_append_new(out, c);
    }
    if (loom_ji(j, "batch_flag", 1))
        json_array_append_new(out, json_pack("{s:s+, s:s, s:I, s:s, s:O}", "step",
                                             loom_sbuf_str(&id), ".batch", "name", "batch",
                                             "start_time", (json_int_t)loom_ji(j, "start_time", 0),
                                             "nodes", loom_js_or(j, "batch_host", ""), "job", j));
    if (json_is_true(json_object_get(j, "extern_step")))
        json_array_append_new(out, json_pack("{s:s+, s:s, s:I, s:s, s:O}", "step",
                                             loom_sbuf_str(&id), ".extern", "name", "extern",
                                             "start_time", (json_int_t)loom_ji(j, "start_time", 0),
                                             "nodes", loom_js_or(j, "nodes", ""), "job", j));
    loom_sbuf_free(&id);
}

/* -s LIST: numbered steps only; squeue 22.05 lists no batch or extern step
 * for "12.batch". */
static bool squeue_step_wanted(const squeue_t *q, const json_t *step)
{
    if (!q->o.step_ids.n)
        return true;
    const char *id = loom_js_or(step, "step", "");
    const char *dot = strrchr(id, '.');
    return dot && isdigit((unsigned char)dot[1]) && loom_strv_find(&q->o.step_ids, id) >= 0;
}

static json_t *squeue_steps(const squeue_t *q, const json_t *jobs)
{
    json_t *out = json_array();
    size_t i;
    json_t *j;
    json_array_foreach(jobs, i, j)
    {
        uint32_t st = loom_cli_job_state(j);
        loom_job_state_t b = loom_job_base(st);
        /* a completing job's steps are listed until they end, as in 22.05 */
        if (b == LOOM_JOB_RUNNING || b == LOOM_JOB_SUSPENDED || (st & LOOM_JOB_F_COMPLETING))
            squeue_job_steps(j, out);
    }
    json_t *kept = json_array();
    json_array_foreach(out, i, j)
    {
        if (squeue_step_wanted(q, j))
            json_array_append(kept, j);
    }
    json_decref(out);
    return kept;
}

/* The record a row prints: a task of a remainder is printed from one
 * scratch copy per remainder, its array_task_id set for each row. */
static const json_t *squeue_row_rec(const squeue_rec_t *r, json_t *scratch)
{
    if (!r->virt)
        return r->j;
    json_t *t = json_object_get(scratch, "_of");
    if (!t || json_integer_value(t) != (json_int_t)(uintptr_t)r->j) {
        json_object_clear(scratch);
        json_object_update(scratch, (json_t *)r->j);
        json_object_del(scratch, "array_task_str");
        json_object_set_new(scratch, "_of", json_integer((json_int_t)(uintptr_t)r->j));
    }
    json_object_set_new(scratch, "array_task_id", json_integer(r->task));
    return scratch;
}

static void squeue_print(squeue_t *q, squeue_rows_t *rows, loom_sbuf_t *out)
{
    loom_fmt_t f = LOOM_FMT_INIT;
    squeue_format(q, &f);
    squeue_sort_ctx_t sc;
    squeue_sort_parse(squeue_default_sort(q), &sc);
    if (q->bad_sort)
        rows->n = 0; /* squeue 22.05 fails in its sort, after the header */
    if (rows->n > 1) {
        squeue_key_t *keys = squeue_sort_keys(&q->view, &sc, rows);
        qsort_r(rows->v, rows->n, sizeof(*rows->v), squeue_cmp, &sc);
        free(keys);
    }
    if (!q->o.noheader) {
        if (q->o.long_fmt || q->o.iterate > 0)
            loom_fmt_date_line(q->view.now, out);
        if (q->o.clusters)
            loom_sbuf_addf(out, "CLUSTER: %s\n", q->view.cluster ? q->view.cluster : "");
        loom_fmt_header(&f, out);
    }
    json_t *scratch = json_object();
    for (size_t i = 0; i < rows->n; i++) {
        loom_fmt_row(&f, &q->view, squeue_row_rec(&rows->v[i], scratch), out);
        if (out->len > (1u << 20))
            loom_cli_flush(out); /* a million rows need not sit in memory */
    }
    json_decref(scratch);
    loom_fmt_free(&f);
}

/* The rows of the records: tasks of remainders one by one when asked. */
static void squeue_rows(const squeue_t *q, const json_t *recs, squeue_rows_t *rows)
{
    bool expand = squeue_wants_tasks(q) && !q->o.steps;
    size_t i;
    json_t *j;
    json_array_foreach(recs, i, j)
    {
        if (expand && squeue_remainder(j) && !json_is_true(json_object_get(j, "_kept")))
            squeue_expand_one(q, j, rows);
        else
            squeue_row(rows, j, 0, false);
    }
}

/* --json: real records, one per row. */
static json_t *squeue_materialize(const squeue_rows_t *rows)
{
    json_t *out = json_array();
    for (size_t i = 0; i < rows->n; i++) {
        const squeue_rec_t *r = &rows->v[i];
        json_t *t = r->virt ? json_copy((json_t *)r->j) : json_incref((json_t *)r->j);
        if (r->virt) {
            json_object_del(t, "array_task_str");
            json_object_set_new(t, "array_task_id", json_integer(r->task));
        }
        json_array_append_new(out, t);
    }
    return out;
}

/* ---- main ---------------------------------------------------------------- */

/* The record members that the format letters of squeue_lean_letters, the
 * default sort, every filter and the folding of array tasks read. */
static const char *const squeue_lean_fields[] = {
    "job_id",     "array_job_id", "array_task_id", "array_task_str", "state",     "reason",
    "nodes",      "partition",    "name",          "user_name",      "user_id",   "priority",
    "start_time", "end_time",     "suspend_time",  "time_limit",     "num_nodes", "account",
    "qos",        "reservation"};
static const char squeue_lean_letters[] = "iPjutTMlDRNAKF";
static const char squeue_lean_sort[] = ",+-PtTpQiAFKjnuUMlDSeaqrN"; /* -S letters */

/* Can the listing be printed from squeue_lean_fields alone? Then the
 * controller sends only those (job.info "fields"): with 10,000 pending jobs,
 * less than half the bytes to send and decode. */
static bool squeue_lean(const squeue_t *q)
{
    if (q->o.json || q->o.steps || q->o.start || q->o.format_long || q->o.licenses.n)
        return false;
    if (q->o.sort && q->o.sort[strspn(q->o.sort, squeue_lean_sort)])
        return false;
    const char *fmt = q->o.long_fmt ? SQUEUE_FMT_LONG
                      : q->o.format ? q->o.format
                                    : SQUEUE_FMT_DEFAULT;
    for (const char *p = strchr(fmt, '%'); p; p = strchr(p, '%')) {
        p++;
        if (*p == '%') {
            p++;
            continue;
        }
        p += strspn(p, ".-0123456789");
        if (!*p || !strchr(squeue_lean_letters, *p))
            return false;
    }
    return true;
}

/* The master ids of -j's ids, for job.info: the filtering by task stays here. */
static json_t *squeue_job_ids(const squeue_t *q)
{
    json_t *ids = json_array();
    for (size_t i = 0; i < q->o.n_jobs; i++) {
        bool seen = false; /* "-j 7_1,7_2": job 7 asked once, else listed twice */
        for (size_t k = 0; k < i && !seen; k++)
            seen = q->o.jobs[k].job_id == q->o.jobs[i].job_id;
        if (!seen)
            json_array_append_new(ids, json_integer(q->o.jobs[i].job_id));
    }
    return ids;
}

/* -u's uids ("-1" for a name that has none: matches no job). */
static json_t *squeue_user_ids(const squeue_t *q)
{
    json_t *uids = json_array();
    for (size_t i = 0; i < q->o.users.n; i++)
        json_array_append_new(uids, json_integer(strtoll(q->o.users.v[i], NULL, 10)));
    return uids;
}

static int squeue_fetch(squeue_t *q, json_t **jobs)
{
    json_t *body = json_pack("{s:b}", "steps", q->o.steps), *reply = NULL;
    if (squeue_lean(q)) {
        json_t *fields = json_array();
        for (size_t i = 0; i < sizeof(squeue_lean_fields) / sizeof(squeue_lean_fields[0]); i++)
            json_array_append_new(fields, json_string(squeue_lean_fields[i]));
        json_object_set_new(body, "fields", fields);
    }
    /* The default state set is the controller's "active" filter (messages.md §3). */
    if (!q->o.all_states && q->o.n_states == 0 && !q->o.jobs_given)
        json_object_set_new(body, "active", json_true());
    if (q->o.n_jobs) /* -j: only those jobs' records (an array's id: all of its) */
        json_object_set_new(body, "job_ids", squeue_job_ids(q));
    else if (q->o.users.n) /* -u: only theirs (the filter below stays) */
        json_object_set_new(body, "user_ids", squeue_user_ids(q));
    loom_err_t err = {0};
    int rc = loom_cli_call(&q->cli, "job.info", body, &reply, &err);
    json_decref(body);
    if (rc < 0) {
        fprintf(stderr, "slurm_load_jobs error: %s\n", err.msg);
        json_decref(reply);
        return rc;
    }
    q->view.now = (time_t)loom_ji(reply, "now", (int64_t)time(NULL));
    *jobs = json_incref(json_object_get(reply, "jobs"));
    if (!*jobs)
        *jobs = json_array();
    json_decref(reply);
    return 0;
}

/* squeue -j N for one plain id that the controller does not have. */
static bool squeue_single_missing(const squeue_t *q, const json_t *jobs)
{
    if (q->o.n_jobs != 1 || q->o.jobs[0].array != LOOM_JOBID_ARRAY_NONE)
        return false;
    size_t i;
    json_t *j;
    json_array_foreach(jobs, i, j)
    {
        if (loom_cli_jobid_match(&q->o.jobs[0], j))
            return false;
    }
    return true;
}

/* -w NAME: a node name, else the nodes whose NodeHostname it is ("localhost":
 * this host's name), as squeue 22.05 takes "-w $(hostname)". False: none. */
static bool squeue_node_names(const loom_conf_t *conf, const char *h, loom_hostlist_t *out)
{
    if (loom_conf_find_node(conf, h)) {
        loom_hostlist_push(out, h);
        return true;
    }
    bool found = false;
    for (size_t i = 0; i < conf->n_nodes; i++)
        if (conf->nodes[i].hostname && !strcmp(conf->nodes[i].hostname, h)) {
            loom_hostlist_push(out, conf->nodes[i].name);
            found = true;
        }
    char self[256] = "";
    if (!found && !strcmp(h, "localhost") && gethostname(self, sizeof(self) - 1) == 0 &&
        strcmp(self, "localhost"))
        return squeue_node_names(conf, self, out);
    return found;
}

static int squeue_nodes_filter(squeue_t *q)
{
    if (!q->o.nodelist)
        return 0;
    loom_err_t err = {0};
    if (loom_hostlist_parse(q->o.nodelist, &q->nodes, &err) < 0) {
        loom_cli_error(&q->cli, "Invalid node name %s", q->o.nodelist);
        return -1;
    }
    const loom_conf_t *conf = loom_cli_conf(&q->cli, &err);
    if (!conf)
        return 0;
    loom_hostlist_t *names = loom_hostlist_create();
    for (size_t i = 0; i < loom_hostlist_count(q->nodes); i++) {
        const char *h = loom_hostlist_nth(q->nodes, i);
        if (!squeue_node_names(conf, h, names)) {
            loom_cli_error(&q->cli, "Invalid node name %s", h);
            loom_hostlist_destroy(names);
            return -1;
        }
    }
    loom_hostlist_destroy(q->nodes);
    q->nodes = names;
    return 0;
}

/* -M: the one cluster this controller serves, else Slurm's errors. */
static int squeue_clusters(squeue_t *q)
{
    if (!q->o.clusters)
        return 0;
    loom_strv_t errs = LOOM_STRV_INIT;
    bool ok = loom_cli_clusters(q->o.clusters, q->view.cluster, &errs);
    for (size_t i = 0; i < errs.n; i++)
        loom_cli_error(&q->cli, "%s", errs.v[i]);
    loom_strv_free(&errs);
    return ok ? 0 : -1;
}

static int squeue_once(squeue_t *q)
{
    json_t *all = NULL;
    if (squeue_fetch(q, &all) < 0)
        return q->cli.exit_error;
    if (q->o.jobs_given && squeue_single_missing(q, all)) {
        fprintf(stderr, "slurm_load_jobs error: %s\n", loom_strerror(-LOOM_EINVAL_JOBID));
        json_decref(all);
        return q->cli.exit_error;
    }
    json_t *sel = json_array();
    size_t i;
    json_t *j;
    json_array_foreach(all, i, j)
    {
        bool pending = loom_job_base(loom_cli_job_state(j)) == LOOM_JOB_PENDING;
        if (squeue_match(q, j) && (!q->o.start || pending))
            json_array_append(sel, j);
    }
    json_t *recs = squeue_wants_tasks(q) || q->o.steps ? json_incref(sel) : squeue_fold(sel);
    squeue_rows_t rows = {0};
    loom_sbuf_t out = LOOM_SBUF_INIT;
    if (q->o.json) {
        squeue_rows(q, recs, &rows);
        json_t *mat = squeue_materialize(&rows);
        loom_cli_json_jobs(q->cli.conf, q->view.now, mat, q->argc, q->argv, &out);
        json_decref(mat);
    } else {
        json_t *shown = q->o.steps                             ? squeue_steps(q, recs)
                        : !q->o.array && squeue_wants_tasks(q) ? squeue_fold_kept(q, recs)
                                                               : json_incref(recs);
        squeue_rows(q, shown, &rows);
        squeue_print(q, &rows, &out);
        json_decref(shown);
    }
    loom_cli_flush(&out);
    loom_sbuf_free(&out);
    free(rows.v);
    json_decref(recs);
    json_decref(sel);
    if (q->o.iterate > 0)
        json_decref(all);
    else
        loom_cli_exit_decref(all); /* the last listing: the exit frees it */
    return q->bad_sort ? q->cli.exit_error : 0;
}

static void squeue_free(squeue_t *q)
{
    loom_strv_free(&q->o.users);
    loom_strv_free(&q->o.parts);
    loom_strv_free(&q->o.names);
    loom_strv_free(&q->o.accounts);
    loom_strv_free(&q->o.qos);
    loom_strv_free(&q->o.resvs);
    loom_strv_free(&q->o.licenses);
    loom_strv_free(&q->o.step_ids);
    for (size_t i = 0; i < q->o.n_jobs; i++)
        loom_jobid_free(&q->o.jobs[i]);
    free(q->o.jobs);
    free(q->o.states);
    free(q->o.format);
    free(q->o.format_long);
    free(q->o.sort);
    free(q->o.nodelist);
    free(q->o.clusters);
    loom_hostlist_destroy(q->nodes);
    loom_cli_fini(&q->cli);
}

int main(int argc, char **argv)
{
    squeue_t q = {.argc = argc, .argv = argv};
    loom_cli_init(&q.cli, "squeue");
    argv[0] = "squeue"; /* getopt's messages name the command, not its path */
    int rc = squeue_parse(&q, argc, argv);
    if (rc <= 0) {
        squeue_free(&q);
        return rc == 0 ? 0 : q.cli.exit_error;
    }
    loom_err_t err = {0};
    const loom_conf_t *conf = loom_cli_conf(&q.cli, &err);
    q.view.cluster = conf ? conf->cluster_name : NULL;
    rc = squeue_clusters(&q) < 0 || squeue_nodes_filter(&q) < 0 ? q.cli.exit_error : 0;
    while (rc == 0) {
        rc = squeue_once(&q);
        if (q.o.iterate <= 0)
            break;
        putchar('\n'); /* squeue -i ends each round with a blank line */
        fflush(stdout);
        sleep((unsigned)q.o.iterate);
    }
    squeue_free(&q);
    return rc;
}
