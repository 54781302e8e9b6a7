/*
 * jobopt.c - parsing sbatch/srun/salloc options from the command line, the
 * environment and #SBATCH directives; the job description; help texts.
 * See jobopt.h (CLI_SPEC §0.8, §1-§3); the option table is jobopt_table.c.
 */
#include "common/jobopt.h"
#include "common/gres.h"
#include "common/jobenv.h"
#include "common/jobopt_table.h"
#include "common/timefmt.h"
#include "common/xalloc.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* ---- the struct --------------------------------------------------------------- */

void loom_jobopt_init(loom_jobopt_t *o, loom_jobopt_cmd_t cmd)
{
    memset(o, 0, sizeof(*o));
    o->cmd = cmd;
    o->now = time(NULL);
    o->time_limit = LOOM_TIME_NOT_SET;
    o->time_min = LOOM_TIME_NOT_SET;
    o->requeue = -1;
    o->kill_on_invalid_dep = -1;
    o->wait_all_nodes = -1;
    o->kill_on_bad_exit = -1;
    o->step_wait = -1;
    o->warn_time = LOOM_JOBOPT_SIGNAL_DELAY;
    o->cur_src = LOOM_JOBOPT_SRC_CLI;
}

void loom_jobopt_free(loom_jobopt_t *o)
{
    if (!o)
        return;
    char **strs[] = {
        &o->wrap,          &o->job_name,
        &o->partition,     &o->account,
        &o->qos,           &o->reservation,
        &o->wckey,         &o->comment,
        &o->licenses,      &o->dependency,
        &o->mail_user,     &o->chdir,
        &o->prefer,        &o->export_env,
        &o->std_out,       &o->std_err,
        &o->std_in,        &o->gres,
        &o->gpus,          &o->gpus_per_node,
        &o->gpus_per_task, &o->gpus_per_socket,
        &o->nodelist,      &o->exclude,
        &o->constraint,    &o->distribution,
        &o->hint,          &o->cpu_bind,
        &o->mem_bind,      &o->gpu_bind,
        &o->array,         &o->mpi,
        &o->kill_cmd,      &o->clusters,
        &o->submit_line,   &o->propagate,
    };
    for (size_t i = 0; i < sizeof(strs) / sizeof(strs[0]); i++) {
        free(*strs[i]);
        *strs[i] = NULL;
    }
    loom_strv_free(&o->ignored);
    loom_strv_free(&o->warnings);
    loom_strv_free(&o->argv);
    loom_strv_free(&o->env);
}

const char *loom_jobopt_cmd_name(loom_jobopt_cmd_t cmd)
{
    switch (cmd) {
    case LOOM_JOBOPT_SRUN:
        return "srun";
    case LOOM_JOBOPT_SALLOC:
        return "salloc";
    default:
        return "sbatch";
    }
}

loom_jobopt_src_t loom_jobopt_source(const loom_jobopt_t *o, const char *name)
{
    int id = loom_jobopt_find_id(name);
    return id < 0 ? LOOM_JOBOPT_SRC_NONE : (loom_jobopt_src_t)o->src[id];
}

bool loom_jobopt_isset(const loom_jobopt_t *o, const char *name)
{
    return loom_jobopt_source(o, name) != LOOM_JOBOPT_SRC_NONE;
}

/* ---- the getopt_long loop ------------------------------------------------------ */

typedef struct jobopt_parse {
    loom_jobopt_t *o;
    int argc;
    char *const *argv;
    const int *lines; /* directives: lines[i - 1] is argv[i]'s script line */
    bool first_pass;  /* apply only -h, --usage, -V, -v, -Q */
} jobopt_parse_t;

static bool jobopt_visible(const loom_jobopt_def_t *d, loom_jobopt_cmd_t cmd)
{
    return (d->cmds & (1u << cmd)) != 0;
}

/* Two rows are one option for getopt's ambiguity rule (aliases). */
static bool jobopt_same(const loom_jobopt_def_t *a, const loom_jobopt_def_t *b)
{
    return loom_jobopt_def_id(a) == loom_jobopt_def_id(b) && a->arg == b->arg;
}

static int jobopt_ambiguous(loom_jobopt_cmd_t cmd, const char *whole, const char *a, size_t n,
                            loom_err_t *err)
{
    size_t nd;
    const loom_jobopt_def_t *defs = loom_jobopt_defs(&nd);
    loom_sbuf_t sb = LOOM_SBUF_INIT;
    const loom_jobopt_def_t *first = NULL;
    loom_sbuf_addf(&sb, "option '%s' is ambiguous; possibilities:", whole);
    for (size_t i = 0; i < nd; i++) {
        const loom_jobopt_def_t *d = &defs[i];
        if (!jobopt_visible(d, cmd) || strncmp(d->name, a, n) != 0)
            continue;
        /* glibc leaves out the aliases of the first match */
        if (first && jobopt_same(first, d))
            continue;
        if (!first)
            first = d;
        loom_sbuf_addf(&sb, " '--%s'", d->name);
    }
    loom_errf(err, -LOOM_EUSAGE, "%s", loom_sbuf_str(&sb));
    loom_sbuf_free(&sb);
    return -LOOM_EUSAGE;
}

/* The row for "--a" (n bytes of name): exact name, else a unique prefix. */
static int jobopt_find_long(loom_jobopt_cmd_t cmd, const char *whole, const char *a, size_t n,
                            const loom_jobopt_def_t **out, loom_err_t *err)
{
    size_t nd;
    const loom_jobopt_def_t *defs = loom_jobopt_defs(&nd);
    const loom_jobopt_def_t *first = NULL;
    bool ambiguous = false;
    for (size_t i = 0; i < nd; i++) {
        const loom_jobopt_def_t *d = &defs[i];
        if (!jobopt_visible(d, cmd) || strncmp(d->name, a, n) != 0)
            continue;
        if (d->name[n] == '\0') {
            *out = d;
            return 0;
        }
        if (!first)
            first = d;
        else if (!jobopt_same(first, d))
            ambiguous = true;
    }
    if (ambiguous)
        return jobopt_ambiguous(cmd, whole, a, n, err);
    if (!first)
        return loom_errf(err, -LOOM_EUSAGE, "unrecognized option '%s'", whole);
    *out = first;
    return 0;
}

static const loom_jobopt_def_t *jobopt_find_short(loom_jobopt_cmd_t cmd, char c)
{
    size_t nd;
    const loom_jobopt_def_t *defs = loom_jobopt_defs(&nd);
    for (size_t i = 0; i < nd; i++)
        if (c && defs[i].letter == c && jobopt_visible(&defs[i], cmd))
            return &defs[i];
    return NULL;
}

static bool jobopt_first_pass_opt(const loom_jobopt_def_t *d)
{
    static const char *const names[] = {"help", "usage", "version", "verbose", "quiet"};
    for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
        if (strcmp(d->name, names[i]) == 0)
            return true;
    return false;
}

static int jobopt_apply(jobopt_parse_t *p, const loom_jobopt_def_t *d, const char *arg,
                        loom_err_t *err)
{
    if (p->first_pass && !jobopt_first_pass_opt(d))
        return 0;
    int rc = d->set(p->o, d, arg, err);
    if (rc == 0)
        p->o->src[loom_jobopt_def_id(d)] = (uint8_t)p->o->cur_src;
    return rc;
}

static int jobopt_long(jobopt_parse_t *p, int *i, loom_err_t *err)
{
    const char *whole = p->argv[*i];
    const char *a = whole + 2;
    const char *eq = strchr(a, '=');
    size_t n = eq ? (size_t)(eq - a) : strlen(a);
    const loom_jobopt_def_t *d = NULL;
    int rc = jobopt_find_long(p->o->cmd, whole, a, n, &d, err);
    if (rc < 0)
        return rc;
    const char *arg = NULL;
    if (eq) {
        if (d->arg == LOOM_JOBOPT_ARG_NONE)
            return loom_errf(err, -LOOM_EUSAGE, "option '--%s' doesn't allow an argument", d->name);
        arg = eq + 1;
    } else if (d->arg == LOOM_JOBOPT_ARG_REQ) {
        if (*i + 1 >= p->argc)
            return loom_errf(err, -LOOM_EUSAGE, "option '--%s' requires an argument", d->name);
        arg = p->argv[++*i];
    }
    return jobopt_apply(p, d, arg, err);
}

/* "-abc", "-xval", "-x val": flags bundle until one that takes an argument. */
static int jobopt_short(jobopt_parse_t *p, int *i, loom_err_t *err)
{
    const char *a = p->argv[*i];
    for (size_t j = 1; a[j]; j++) {
        const loom_jobopt_def_t *d = jobopt_find_short(p->o->cmd, a[j]);
        if (!d)
            return loom_errf(err, -LOOM_EUSAGE, "invalid option -- '%c'", a[j]);
        if (d->arg == LOOM_JOBOPT_ARG_NONE) {
            int rc = jobopt_apply(p, d, NULL, err);
            if (rc < 0)
                return rc;
            continue;
        }
        const char *arg = a[j + 1] ? a + j + 1 : NULL;
        if (!arg && d->arg == LOOM_JOBOPT_ARG_REQ) {
            if (*i + 1 >= p->argc)
                return loom_errf(err, -LOOM_EUSAGE, "option requires an argument -- '%c'", a[j]);
            arg = p->argv[++*i];
        }
        return jobopt_apply(p, d, arg, err);
    }
    return 0;
}

/* Say where a directive error came from. */
static int jobopt_locate(const jobopt_parse_t *p, int i, int rc, loom_err_t *err)
{
    if (!p->lines || !err || i < 1 || i >= p->argc)
        return rc;
    size_t len = strnlen(err->msg, sizeof(err->msg));
    if (len < sizeof(err->msg) - 1)
        snprintf(err->msg + len, sizeof(err->msg) - len, " (script line %d)", p->lines[i - 1]);
    return rc;
}

/* Options until the first non-option or "--"; *first_arg gets its index. */
static int jobopt_loop(jobopt_parse_t *p, int *first_arg, loom_err_t *err)
{
    int i = 1;
    for (; i < p->argc; i++) {
        const char *a = p->argv[i];
        if (strcmp(a, "--") == 0) {
            i++;
            break;
        }
        if (a[0] != '-' || a[1] == '\0')
            break;
        int at = i;
        int rc = a[1] == '-' ? jobopt_long(p, &i, err) : jobopt_short(p, &i, err);
        if (rc < 0)
            return jobopt_locate(p, at, rc, err);
    }
    *first_arg = i;
    return 0;
}

static int jobopt_run(loom_jobopt_t *o, loom_jobopt_src_t src, jobopt_parse_t *p, int *first_arg,
                      loom_err_t *err)
{
    loom_jobopt_src_t saved = o->cur_src;
    o->cur_src = src;
    int rc = jobopt_loop(p, first_arg, err);
    o->cur_src = saved;
    return rc;
}

int loom_jobopt_parse_args(loom_jobopt_t *o, int argc, char *const argv[], int *first_arg,
                           loom_err_t *err)
{
    jobopt_parse_t p = {o, argc, argv, NULL, false};
    int first = argc;
    int rc = jobopt_run(o, LOOM_JOBOPT_SRC_CLI, &p, &first, err);
    if (rc == 0 && first_arg)
        *first_arg = first;
    return rc;
}

int loom_jobopt_first_pass(loom_jobopt_t *o, int argc, char *const argv[], int *first_arg,
                           loom_err_t *err)
{
    jobopt_parse_t p = {o, argc, argv, NULL, true};
    int first = argc;
    int rc = jobopt_run(o, LOOM_JOBOPT_SRC_CLI, &p, &first, err);
    if (rc == 0 && first_arg)
        *first_arg = first;
    return rc;
}

int loom_jobopt_parse_directives(loom_jobopt_t *o, const loom_strv_t *args, const int *lines,
                                 loom_err_t *err)
{
    if (!args || args->n == 0)
        return 0;
    char **argv = loom_xcalloc(args->n + 2, sizeof(char *));
    argv[0] = (char *)loom_jobopt_cmd_name(o->cmd);
    memcpy(argv + 1, args->v, args->n * sizeof(char *));
    int argc = (int)args->n + 1;
    jobopt_parse_t p = {o, argc, argv, lines, false};
    int first = argc;
    int rc = jobopt_run(o, LOOM_JOBOPT_SRC_SCRIPT, &p, &first, err);
    if (rc == 0 && first < argc) {
        rc = loom_errf(err, -LOOM_EPARSE, "Invalid directive found in batch script: %s",
                       argv[first]);
        jobopt_locate(&p, first, rc, err);
    }
    free(argv);
    return rc;
}

/* ---- the environment ------------------------------------------------------------ */

static const char *jobopt_getenv(char *const envp[], const char *name, size_t n)
{
    for (size_t i = 0; envp[i]; i++)
        if (strncmp(envp[i], name, n) == 0 && envp[i][n] == '=')
            return envp[i] + n + 1;
    return NULL;
}

/* Flag-style variables are on when empty, "yes", or a non-zero number. */
static bool jobopt_env_on(const char *v)
{
    return *v == '\0' || strcasecmp(v, "yes") == 0 || strtol(v, NULL, 10) != 0;
}

static int jobopt_env_apply(loom_jobopt_t *o, const loom_jobopt_def_t *d, const char *v,
                            loom_err_t *err)
{
    const char *arg = v;
    if (d->arg == LOOM_JOBOPT_ARG_NONE && !(d->flags & LOOM_JOBOPT_F_ENV_VALUE)) {
        if (!jobopt_env_on(v))
            return 0;
        arg = NULL;
    } else if (d->arg == LOOM_JOBOPT_ARG_OPT && *v == '\0') {
        arg = NULL;
    }
    int rc = d->set(o, d, arg, err);
    if (rc == 0)
        o->src[loom_jobopt_def_id(d)] = LOOM_JOBOPT_SRC_ENV;
    return rc;
}

/* srun inside an allocation keeps the job's name out of its steps (srun(1)). */
static bool jobopt_env_skip(const loom_jobopt_t *o, const char *name, size_t n, char *const envp[])
{
    return o->cmd == LOOM_JOBOPT_SRUN && n == strlen("SLURM_JOB_NAME") &&
           strncmp(name, "SLURM_JOB_NAME", n) == 0 &&
           jobopt_getenv(envp, "SLURM_JOB_ID", strlen("SLURM_JOB_ID"));
}

/* "A|B": B is applied first so that A, the preferred name, wins. */
static int jobopt_env_def(loom_jobopt_t *o, const loom_jobopt_def_t *d, const char *names,
                          char *const envp[], loom_err_t *err)
{
    const char *bar = strchr(names, '|');
    if (bar) {
        int rc = jobopt_env_def(o, d, bar + 1, envp, err);
        if (rc < 0)
            return rc;
    }
    size_t n = bar ? (size_t)(bar - names) : strlen(names);
    const char *v = jobopt_getenv(envp, names, n);
    if (!v || jobopt_env_skip(o, names, n, envp))
        return 0;
    return jobopt_env_apply(o, d, v, err);
}

static const char *const jobopt_mem_opts[] = {"mem", "mem-per-cpu", "mem-per-gpu"};
#define JOBOPT_NMEM (sizeof(jobopt_mem_opts) / sizeof(jobopt_mem_opts[0]))

int loom_jobopt_parse_env(loom_jobopt_t *o, char *const envp[], loom_err_t *err)
{
    if (!envp)
        return 0;
    size_t nd;
    const loom_jobopt_def_t *defs = loom_jobopt_defs(&nd);
    for (size_t i = 0; i < nd; i++) {
        const char *names = defs[i].env[o->cmd];
        if (!names || !jobopt_visible(&defs[i], o->cmd))
            continue;
        int rc = jobopt_env_def(o, &defs[i], names, envp, err);
        if (rc < 0)
            return rc;
    }
    int from_env = 0;
    for (size_t k = 0; k < JOBOPT_NMEM; k++)
        from_env += loom_jobopt_source(o, jobopt_mem_opts[k]) == LOOM_JOBOPT_SRC_ENV;
    if (from_env > 1)
        return loom_errf(err, -LOOM_EINVAL_MEM,
                         "SLURM_MEM_PER_CPU, SLURM_MEM_PER_GPU, and SLURM_MEM_PER_NODE are "
                         "mutually exclusive.");
    return 0;
}

/* ---- across options --------------------------------------------------------------- */

static void jobopt_unset_mem(loom_jobopt_t *o, const char *name)
{
    if (strcmp(name, "mem") == 0)
        o->mem_per_node = 0;
    else if (strcmp(name, "mem-per-cpu") == 0)
        o->mem_per_cpu = 0;
    else
        o->mem_per_gpu = 0;
    o->src[loom_jobopt_find_id(name)] = LOOM_JOBOPT_SRC_NONE;
}

/* Fewer tasks than nodes: one node per task, as Slurm's commands do it, with
 * their warning unless the node count came from the environment alone (srun
 * -n1 in a two-node allocation); a node range is cut to the task count. */
static void jobopt_nodes_for_tasks(loom_jobopt_t *o)
{
    if (!o->ntasks)
        return;
    if (o->min_nodes > o->ntasks) {
        if (loom_jobopt_source(o, "nodes") != LOOM_JOBOPT_SRC_ENV ||
            loom_jobopt_source(o, "ntasks") == LOOM_JOBOPT_SRC_ENV) {
            loom_sbuf_t sb = LOOM_SBUF_INIT;
            loom_sbuf_addf(&sb, "can't run %u processes on %u nodes, setting nnodes to %u",
                           o->ntasks, o->min_nodes, o->ntasks);
            loom_strv_take(&o->warnings, loom_sbuf_detach(&sb));
        }
        o->min_nodes = o->max_nodes = o->ntasks;
    }
    if (o->max_nodes > o->ntasks)
        o->max_nodes = o->ntasks;
}

int loom_jobopt_finish(loom_jobopt_t *o, loom_err_t *err)
{
    if (o->verbose && o->quiet)
        return loom_errf(err, -LOOM_EPARSE, "don't specify both --verbose (-v) and --quiet (-Q)");
    int from_env = 0, other = 0;
    for (size_t k = 0; k < JOBOPT_NMEM; k++) {
        loom_jobopt_src_t s = loom_jobopt_source(o, jobopt_mem_opts[k]);
        from_env += s == LOOM_JOBOPT_SRC_ENV;
        other += s == LOOM_JOBOPT_SRC_SCRIPT || s == LOOM_JOBOPT_SRC_CLI;
    }
    if (other > 1)
        return loom_errf(err, -LOOM_EINVAL_MEM,
                         "--mem, --mem-per-cpu, and --mem-per-gpu are mutually exclusive.");
    /* A memory variable gives way to another memory option from script or command line. */
    if (other == 1 && from_env)
        for (size_t k = 0; k < JOBOPT_NMEM; k++)
            if (loom_jobopt_source(o, jobopt_mem_opts[k]) == LOOM_JOBOPT_SRC_ENV)
                jobopt_unset_mem(o, jobopt_mem_opts[k]);
    jobopt_nodes_for_tasks(o);
    return 0;
}

/* sacct's SubmitLine: the words of the command line as typed, blank-separated
 * (no quoting, as Slurm records it). */
static void jobopt_submit_line(loom_jobopt_t *o, int argc, char *const argv[])
{
    loom_sbuf_t sb = LOOM_SBUF_INIT;
    for (int i = 0; i < argc; i++)
        loom_sbuf_addf(&sb, "%s%s", i ? " " : "", argv[i]);
    free(o->submit_line);
    o->submit_line = loom_sbuf_detach(&sb);
}

int loom_jobopt_load(loom_jobopt_t *o, int argc, char *const argv[], char *const envp[],
                     const loom_jobscript_dirs_t *dirs, loom_err_t *err)
{
    int first = argc;
    int rc = dirs ? loom_jobopt_parse_directives(o, &dirs->args, dirs->lines, err) : 0;
    if (rc == 0)
        rc = loom_jobopt_parse_env(o, envp, err);
    if (rc == 0)
        rc = loom_jobopt_parse_args(o, argc, argv, &first, err);
    if (rc == 0)
        rc = loom_jobopt_finish(o, err);
    if (rc == 0 && o->cmd == LOOM_JOBOPT_SBATCH && o->wrap && first < argc)
        rc = loom_errf(err, -LOOM_EPARSE, "Script arguments not permitted with --wrap option");
    if (rc < 0)
        return rc;
    loom_strv_free(&o->argv);
    for (int i = first; i < argc; i++)
        loom_strv_add(&o->argv, argv[i]);
    jobopt_submit_line(o, argc, argv);
    return first;
}

/* ---- working directory and environment ------------------------------------------- */

void loom_jobopt_set_cwd(loom_jobopt_t *o, const char *cwd)
{
    if (!cwd || (o->chdir && o->chdir[0] == '/'))
        return;
    loom_sbuf_t sb = LOOM_SBUF_INIT;
    loom_sbuf_add(&sb, cwd);
    if (o->chdir && *o->chdir) {
        if (sb.len == 0 || loom_sbuf_str(&sb)[sb.len - 1] != '/')
            loom_sbuf_addc(&sb, '/');
        loom_sbuf_add(&sb, o->chdir);
    }
    free(o->chdir);
    o->chdir = loom_sbuf_detach(&sb);
}

/* Set "K=V" in env, replacing an entry with the same name. */
static void jobopt_env_set(loom_strv_t *env, const char *kv)
{
    size_t n = strcspn(kv, "=");
    for (size_t i = 0; i < env->n; i++)
        if (strncmp(env->v[i], kv, n) == 0 && env->v[i][n] == '=') {
            free(env->v[i]);
            env->v[i] = loom_xstrdup(kv);
            return;
        }
    loom_strv_add(env, kv);
}

static void jobopt_export_item(loom_strv_t *env, const char *item, char *const envp[])
{
    if (strchr(item, '=')) {
        jobopt_env_set(env, item);
        return;
    }
    const char *v = envp ? jobopt_getenv(envp, item, strlen(item)) : NULL;
    if (!v)
        return;
    loom_sbuf_t sb = LOOM_SBUF_INIT;
    loom_sbuf_addf(&sb, "%s=%s", item, v);
    jobopt_env_set(env, loom_sbuf_str(&sb));
    loom_sbuf_free(&sb);
}

void loom_jobopt_export_env(loom_jobopt_t *o, char *const envp[])
{
    loom_strv_t items = LOOM_STRV_INIT;
    bool all = !o->export_env, nil = false;
    loom_jobenv_export_split(o->export_env ? o->export_env : "", &items);
    for (size_t i = 0; i < items.n; i++) {
        all |= strcasecmp(items.v[i], "ALL") == 0;
        nil |= strcasecmp(items.v[i], "NIL") == 0;
    }
    loom_strv_free(&o->env);
    for (size_t i = 0; envp && envp[i]; i++)
        if (strchr(envp[i], '=') && (all || (!nil && strncmp(envp[i], "SLURM_", 6) == 0)))
            jobopt_env_set(&o->env, envp[i]);
    for (size_t i = 0; i < items.n; i++)
        if (strcasecmp(items.v[i], "ALL") && strcasecmp(items.v[i], "NONE") &&
            strcasecmp(items.v[i], "NIL"))
            jobopt_export_item(&o->env, items.v[i], envp);
    loom_strv_free(&items);
}

/* ---- the job description ------------------------------------------------------------ */

static void jobopt_json_str(json_t *j, const char *key, const char *s)
{
    if (s)
        json_object_set_new(j, key, json_string(s));
}

static void jobopt_json_int(json_t *j, const char *key, int64_t v)
{
    json_object_set_new(j, key, json_integer(v));
}

/* A non-zero count. */
static void jobopt_json_count(json_t *j, const char *key, uint64_t v)
{
    if (v)
        json_object_set_new(j, key, json_integer((json_int_t)v));
}

static void jobopt_json_true(json_t *j, const char *key, bool v)
{
    if (v)
        json_object_set_new(j, key, json_true());
}

static void jobopt_json_strv(json_t *j, const char *key, const loom_strv_t *sv)
{
    if (sv->n == 0)
        return;
    json_t *a = json_array();
    for (size_t i = 0; i < sv->n; i++)
        json_array_append_new(a, json_string(sv->v[i]));
    json_object_set_new(j, key, a);
}

/* Append the TRES request form ("gres/gpu:a100:2") of a --gres or --gpus value. */
static void jobopt_tres_add(loom_sbuf_t *sb, const char *spec, bool gpus)
{
    loom_gres_list_t l = LOOM_GRES_LIST_INIT;
    int rc = gpus ? loom_gres_parse_gpus(spec, &l, NULL) : loom_gres_parse(spec, &l, NULL);
    if (rc >= 0 && l.n) {
        if (sb->len)
            loom_sbuf_addc(sb, ',');
        loom_gres_fmt_tres_per(&l, sb);
    }
    loom_gres_list_free(&l);
}

static void jobopt_json_tres(json_t *j, const char *key, const char *gres, const char *gpus)
{
    loom_sbuf_t sb = LOOM_SBUF_INIT;
    if (gres)
        jobopt_tres_add(&sb, gres, false);
    if (gpus)
        jobopt_tres_add(&sb, gpus, true);
    if (sb.len)
        jobopt_json_str(j, key, loom_sbuf_str(&sb));
    loom_sbuf_free(&sb);
}

static void jobopt_json_names(const loom_jobopt_t *o, json_t *j)
{
    jobopt_json_str(j, "name", o->job_name);
    jobopt_json_str(j, "partition", o->partition);
    jobopt_json_str(j, "account", o->account);
    jobopt_json_str(j, "qos", o->qos);
    jobopt_json_str(j, "reservation", o->reservation);
    jobopt_json_str(j, "wckey", o->wckey);
    jobopt_json_str(j, "comment", o->comment);
    jobopt_json_str(j, "licenses", o->licenses);
    jobopt_json_str(j, "dependency", o->dependency);
    jobopt_json_str(j, "mail_user", o->mail_user);
    jobopt_json_str(j, "prefer", o->prefer);
    jobopt_json_str(j, "current_working_directory", o->chdir);
    jobopt_json_str(j, "standard_output", o->std_out);
    jobopt_json_str(j, "standard_error", o->std_err);
    jobopt_json_str(j, "standard_input", o->std_in);
    jobopt_json_str(j, "array", o->array);
    jobopt_json_str(j, "constraints", o->constraint);
    jobopt_json_str(j, "required_nodes", o->nodelist);
    jobopt_json_str(j, "excluded_nodes", o->exclude);
    jobopt_json_str(j, "distribution", o->distribution);
    jobopt_json_str(j, "hint", o->hint);
    jobopt_json_str(j, "cpu_binding", o->cpu_bind);
    jobopt_json_str(j, "memory_binding", o->mem_bind);
    jobopt_json_str(j, "gpu_binding", o->gpu_bind);
    if (o->mail_type) {
        loom_sbuf_t sb = LOOM_SBUF_INIT;
        loom_jobopt_mail_fmt(o->mail_type, &sb);
        jobopt_json_str(j, "mail_type", loom_sbuf_str(&sb));
        loom_sbuf_free(&sb);
    }
    if (o->open_mode)
        jobopt_json_str(j, "open_mode", o->open_mode == 'a' ? "append" : "truncate");
}

static void jobopt_json_size(const loom_jobopt_t *o, json_t *j)
{
    if (loom_jobopt_isset(o, "nodes")) {
        jobopt_json_int(j, "minimum_nodes", o->min_nodes);
        if (o->max_nodes)
            jobopt_json_int(j, "maximum_nodes", o->max_nodes);
    }
    jobopt_json_count(j, "tasks", o->ntasks);
    jobopt_json_count(j, "tasks_per_node", o->ntasks_per_node);
    jobopt_json_count(j, "tasks_per_socket", o->ntasks_per_socket);
    jobopt_json_count(j, "tasks_per_core", o->ntasks_per_core);
    jobopt_json_count(j, "ntasks_per_gpu", o->ntasks_per_gpu);
    jobopt_json_count(j, "cpus_per_task", o->cpus_per_task);
    jobopt_json_count(j, "minimum_cpus_per_node", o->mincpus);
    jobopt_json_count(j, "sockets_per_node", o->sockets_per_node);
    jobopt_json_count(j, "cores_per_socket", o->cores_per_socket);
    jobopt_json_count(j, "threads_per_core", o->threads_per_core);
    jobopt_json_count(j, "cpus_per_gpu", o->cpus_per_gpu);
    if (loom_jobopt_isset(o, "mem"))
        jobopt_json_int(j, "memory_per_node", (int64_t)o->mem_per_node);
    if (loom_jobopt_isset(o, "mem-per-cpu"))
        jobopt_json_int(j, "memory_per_cpu", (int64_t)o->mem_per_cpu);
    if (loom_jobopt_isset(o, "mem-per-gpu"))
        jobopt_json_int(j, "memory_per_gpu", (int64_t)o->mem_per_gpu);
    if (loom_jobopt_isset(o, "tmp"))
        jobopt_json_int(j, "temporary_disk_per_node", (int64_t)o->tmp_disk);
    jobopt_json_tres(j, "tres_per_node", o->gres, o->gpus_per_node);
    jobopt_json_tres(j, "tres_per_job", NULL, o->gpus);
    jobopt_json_tres(j, "tres_per_task", NULL, o->gpus_per_task);
    jobopt_json_tres(j, "tres_per_socket", NULL, o->gpus_per_socket);
    if (o->cpus_per_gpu) {
        char buf[32];
        snprintf(buf, sizeof(buf), "gres/gpu:%u", o->cpus_per_gpu);
        jobopt_json_str(j, "cpus_per_tres", buf);
    }
}

static void jobopt_json_policy(const loom_jobopt_t *o, json_t *j)
{
    static const char *const excl[] = {NULL, "true", "user", "mcs"};
    if (o->time_limit != LOOM_TIME_NOT_SET)
        jobopt_json_int(j, "time_limit", o->time_limit);
    if (o->time_min != LOOM_TIME_NOT_SET)
        jobopt_json_int(j, "time_minimum", o->time_min);
    jobopt_json_count(j, "begin_time", (uint64_t)o->begin);
    jobopt_json_count(j, "deadline", (uint64_t)o->deadline);
    jobopt_json_str(j, "exclusive", excl[o->exclusive]);
    jobopt_json_true(j, "oversubscribe", o->oversubscribe);
    jobopt_json_true(j, "contiguous", o->contiguous);
    jobopt_json_true(j, "overcommit", o->overcommit);
    jobopt_json_true(j, "hold", o->hold);
    jobopt_json_true(j, "reboot", o->reboot);
    jobopt_json_true(j, "spread_job", o->spread_job);
    jobopt_json_true(j, "use_min_nodes", o->use_min_nodes);
    jobopt_json_true(j, "kill_on_invalid_dependency", o->kill_on_invalid_dep == 1);
    if (o->requeue >= 0)
        json_object_set_new(j, "requeue", json_boolean(o->requeue));
    if (loom_jobopt_isset(o, "nice"))
        jobopt_json_int(j, "nice", o->nice);
    if (o->priority_top)
        jobopt_json_str(j, "priority", "TOP");
    else if (loom_jobopt_isset(o, "priority"))
        jobopt_json_int(j, "priority", o->priority);
    if (o->wait_all_nodes >= 0)
        jobopt_json_int(j, "wait_all_nodes", o->wait_all_nodes);
    jobopt_json_count(j, "immediate", (uint64_t)o->immediate);
    if (o->no_kill)
        json_object_set_new(j, "kill_on_node_fail", json_false());
}

static void jobopt_json_signal(const loom_jobopt_t *o, json_t *j)
{
    if (o->warn_signal <= 0)
        return;
    jobopt_json_int(j, "kill_warning_signal", o->warn_signal);
    jobopt_json_int(j, "kill_warning_delay", o->warn_time);
    json_t *flags = json_array();
    if (o->warn_batch)
        json_array_append_new(flags, json_string("BATCH_JOB"));
    if (o->warn_resv_end)
        json_array_append_new(flags, json_string("RESERVATION"));
    json_object_set_new(j, "kill_warning_flags", flags);
}

json_t *loom_jobopt_to_json(const loom_jobopt_t *o)
{
    json_t *j = json_object();
    jobopt_json_names(o, j);
    jobopt_json_size(o, j);
    jobopt_json_policy(o, j);
    jobopt_json_signal(o, j);
    jobopt_json_strv(j, "environment", &o->env);
    jobopt_json_strv(j, "argv", &o->argv);
    if (o->submit_line && *o->submit_line)
        json_object_set_new(j, "submit_line", json_string(o->submit_line));
    return j;
}

/* ---- texts ------------------------------------------------------------------------- */

static const char *const jobopt_usage_line[] = {
    "Usage: sbatch [OPTIONS(0)...] [ : [OPTIONS(N)...]] script(0) [args(0)...]",
    ("Usage: srun [OPTIONS(0)... [executable(0) [args(0)...]]] [ : [OPTIONS(N)...]] "
     "executable(N) [args(N)...]"),
    "Usage: salloc [OPTIONS(0)...] [ : [OPTIONS(N)]] [command(0) [args(0)...]]",
};

void loom_jobopt_help(loom_jobopt_cmd_t cmd, loom_sbuf_t *out)
{
    loom_sbuf_addf(out, "%s\n\nParallel run options:\n", jobopt_usage_line[cmd]);
    loom_jobopt_help_table(cmd, out);
}

void loom_jobopt_usage(loom_jobopt_cmd_t cmd, loom_sbuf_t *out)
{
    static const char *const tail[] = {"script [args...]", "executable [args...]",
                                       "[command [args...]]"};
    const char *name = loom_jobopt_cmd_name(cmd);
    loom_sbuf_addf(out,
                   "Usage: %s [-N nnodes] [-n ntasks] [-c ncpus] [-p partition] [-t minutes]\n"
                   "%*s [-J jobname] [-A account] [-q qos] [-D path] [--mem=MB]\n"
                   "%*s [--mem-per-cpu=MB] [--gres=list] [-G gpus] [-C list] [-w hosts]\n"
                   "%*s [-x hosts] [--exclusive] [--hold] [-v] %s\n",
                   name, (int)strlen(name) + 7, "", (int)strlen(name) + 7, "",
                   (int)strlen(name) + 7, "", tail[cmd]);
}

void loom_jobopt_version(loom_sbuf_t *out)
{
    loom_sbuf_add(out, "slurm " LOOM_SLURM_VERSION "\n");
}

void loom_jobopt_err_fmt(loom_jobopt_cmd_t cmd, const loom_err_t *err, loom_sbuf_t *out)
{
    const char *name = loom_jobopt_cmd_name(cmd);
    if (err->code == -LOOM_EUSAGE) {
        loom_sbuf_addf(out, "%s: %s\nTry \"%s --help\" for more information\n", name, err->msg,
                       name);
        return;
    }
    /* Slurm exits through fatal() for memory options that exclude each other. */
    const char *level = err->code == -LOOM_EINVAL_MEM ? "fatal" : "error";
    const char *s = err->msg;
    do {
        size_t n = strcspn(s, "\n");
        loom_sbuf_addf(out, "%s: %s: %.*s\n", name, level, (int)n, s);
        s += n + (s[n] == '\n');
    } while (*s);
}
