/*
 * sbatch.c - submit a batch script (CLI_SPEC §1, §0.8, §0.9, §0.10).
 *
 * Flow, as Slurm's sbatch: a first pass over the command line (-h, --usage,
 * -V, -v, -Q; finds the script argument) → the script from --wrap, the file,
 * or stdin → Slurm's script checks (jobscript.h) → #SBATCH directives →
 * options from directives, then SBATCH_* variables, then the command line
 * (jobopt.h, later sources win) → the job description with the submit
 * environment (per --export) and directory → job.submit → "Submitted batch job
 * N" (or "N" with --parsable; nothing with -Q).
 *
 * --test-only asks the controller where and when the job would start and
 * prints Slurm's "sbatch: Job N to start at ..." line; -W/--wait polls
 * job.info until the job is finished and exits with its exit code (1 when a
 * signal killed it). A rejected job prints Slurm's two lines (the reason, then
 * "Batch job submission failed: <error>") and exits 1: nothing is created.
 */
#include "cli/cli_common.h"
#include "cli/cli_format.h"

#include "common/jobenv.h"
#include "common/jobopt.h"
#include "common/jobscript.h"
#include "common/jobstate.h"
#include "common/timefmt.h"
#include "common/xalloc.h"

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

/* Scripts larger than this are refused (Slurm's default max_script_size is 4 MiB). */
#define SBATCH_MAX_SCRIPT (4u << 20)
/* --wait polls job.info at growing intervals up to this (microseconds). */
#define SBATCH_WAIT_MAX_US 2000000

typedef struct sbatch {
    loom_cli_t cli;
    loom_jobopt_t opt;
    loom_jobscript_dirs_t dirs;
    char *script; /* the script text */
    size_t len;
    char *script_path;  /* absolute path of the script file; NULL for stdin and --wrap */
    const char *source; /* "wrap", "stdin" or the file name as given (for messages) */
    int first_arg;      /* index of the script argument in argv */
    /* -M: the cluster it goes to (its ClusterName), printed after the job id */
    const char *cluster;
    int usage_rc; /* exit status of an option error: 255, as sbatch 22.05 exits */
} sbatch_t;

/* sbatch 22.05 exits 255 (exit(-1)) when an option's value or the command
 * line itself is bad, and 1 (or SLURM_EXIT_ERROR) for the other errors. */
static bool sbatch_usage_error(const loom_err_t *err)
{
    static const char *const prefixes[] = {"Invalid --", "Maximum node count", "Priority must be",
                                           "\""};
    if (err->code == -LOOM_EUSAGE)
        return true;
    for (size_t i = 0; i < sizeof(prefixes) / sizeof(prefixes[0]); i++)
        if (strncmp(err->msg, prefixes[i], strlen(prefixes[i])) == 0)
            return true;
    return false;
}

/* The value of the last --<name>=v / --<name> v / -<c> v on the command line. */
static const char *sbatch_arg_value(int argc, char **argv, const char *name, char c)
{
    const char *val = NULL;
    size_t n = strlen(name);
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (strncmp(a, "--", 2) == 0 && strncmp(a + 2, name, n) == 0 && a[2 + n] == '=')
            val = a + 3 + n;
        else if (i + 1 < argc && ((strncmp(a, "--", 2) == 0 && strcmp(a + 2, name) == 0) ||
                                  (c && a[0] == '-' && a[1] == c && !a[2])))
            val = argv[++i];
        else if (c && a[0] == '-' && a[1] == c && a[2])
            val = a + 2;
    }
    return val;
}

/* Slurm's date parser says where a --begin/--deadline value went wrong; Loom
 * says it for a value that does not start with a number or a known word. */
static void sbatch_date_hint(const loom_err_t *err, int argc, char **argv)
{
    static const char *const words[] = {"now",  "today",     "tomorrow", "midnight",
                                        "noon", "elevenses", "fika",     "teatime"};
    const char *v = NULL;
    if (strcmp(err->msg, "Invalid --begin specification") == 0)
        v = sbatch_arg_value(argc, argv, "begin", 'b');
    else if (strcmp(err->msg, "Invalid --deadline specification") == 0)
        v = sbatch_arg_value(argc, argv, "deadline", 0);
    if (!v || isdigit((unsigned char)*v))
        return;
    for (size_t i = 0; i < sizeof(words) / sizeof(words[0]); i++)
        if (strncasecmp(v, words[i], strlen(words[i])) == 0)
            return;
    fprintf(stderr, "Invalid time specification (pos=0): %s\n", v);
}

/* Print a jobopt/jobscript error as sbatch prints it. */
static void sbatch_report(sbatch_t *sb, const loom_err_t *err, int argc, char **argv)
{
    loom_sbuf_t out = LOOM_SBUF_INIT;
    sbatch_date_hint(err, argc, argv);
    loom_jobopt_err_fmt(LOOM_JOBOPT_SBATCH, err, &out);
    fputs(loom_sbuf_str(&out), stderr);
    loom_sbuf_free(&out);
    if (sbatch_usage_error(err))
        sb->usage_rc = 255;
}

/* -h, --usage, -V: handled after the first pass. Returns 1 to go on, 0 to exit 0. */
static int sbatch_informational(sbatch_t *sb)
{
    loom_sbuf_t out = LOOM_SBUF_INIT;
    if (sb->opt.help)
        loom_jobopt_help(LOOM_JOBOPT_SBATCH, &out);
    else if (sb->opt.usage)
        loom_jobopt_usage(LOOM_JOBOPT_SBATCH, &out);
    else if (sb->opt.version)
        loom_jobopt_version(&out);
    int rc = out.len ? 0 : 1;
    loom_cli_flush(&out);
    loom_sbuf_free(&out);
    return rc;
}

/* --wrap is an ordinary option to jobopt, but it decides where the script comes
 * from: learn it from a scratch parse of the command line alone. */
static int sbatch_wrap_command(sbatch_t *sb, int argc, char **argv, char **wrap)
{
    loom_jobopt_t scratch;
    loom_jobopt_init(&scratch, LOOM_JOBOPT_SBATCH);
    loom_err_t err = {0};
    int first = 0, rc = loom_jobopt_parse_args(&scratch, argc, argv, &first, &err);
    if (rc < 0)
        sbatch_report(sb, &err, argc, argv);
    else
        *wrap = scratch.wrap ? loom_xstrdup(scratch.wrap) : NULL;
    loom_jobopt_free(&scratch);
    return rc < 0 ? -1 : 0;
}

static int sbatch_read_fd(sbatch_t *sb, FILE *fp)
{
    loom_sbuf_t buf = LOOM_SBUF_INIT;
    char chunk[65536];
    size_t n;
    while ((n = fread(chunk, 1, sizeof(chunk), fp)) > 0) {
        if (buf.len + n > SBATCH_MAX_SCRIPT) {
            loom_cli_error(&sb->cli, "Batch script is too large (over %u bytes)",
                           SBATCH_MAX_SCRIPT);
            loom_sbuf_free(&buf);
            return -1;
        }
        loom_sbuf_addn(&buf, chunk, n);
    }
    sb->len = buf.len;
    sb->script = loom_sbuf_detach(&buf);
    return 0;
}

/* The script: --wrap, the file argument, or stdin. */
static int sbatch_read_script(sbatch_t *sb, int argc, char **argv)
{
    char *wrap = NULL;
    if (sbatch_wrap_command(sb, argc, argv, &wrap) < 0)
        return -1;
    if (wrap) {
        sb->script = loom_jobscript_wrap(wrap);
        sb->len = strlen(sb->script);
        sb->source = "wrap";
        free(wrap);
        return 0;
    }
    if (sb->first_arg >= argc) {
        sb->source = "stdin";
        return sbatch_read_fd(sb, stdin);
    }
    const char *path = argv[sb->first_arg];
    FILE *fp = fopen(path, "rb");
    if (!fp) {
        loom_cli_error(&sb->cli, "Unable to open file %s", path);
        return -1;
    }
    int rc = sbatch_read_fd(sb, fp);
    fclose(fp);
    sb->source = path;
    char real[PATH_MAX];
    sb->script_path = loom_xstrdup(realpath(path, real) ? real : path);
    return rc;
}

/* Slurm's checks, then the directives. */
static int sbatch_check_script(sbatch_t *sb)
{
    loom_err_t err = {0};
    if (loom_jobscript_check(sb->script, sb->len, &err) < 0 ||
        loom_jobscript_directives(sb->script, sb->len, NULL, sb->source, &sb->dirs, &err) < 0) {
        sbatch_report(sb, &err, 0, NULL);
        return -1;
    }
    for (size_t i = 0; i < sb->dirs.warnings.n; i++)
        loom_cli_error(&sb->cli, "%s", sb->dirs.warnings.v[i]);
    return 0;
}

/* As sbatch 22.05 marks a job whose environment is not the submitter's whole
 * one (--export=NONE or names without ALL) or that asks --get-user-env: the
 * job's variables get SLURM_EXPORT_ENV=<spec> and SLURM_GET_USER_ENV=1, and
 * the node puts them over the user's login environment (loomstepd). */
static void sbatch_user_env(sbatch_t *sb)
{
    const char *spec = sb->opt.export_env;
    bool all = !spec, get = false;
    loom_strv_t items = LOOM_STRV_INIT;
    loom_jobenv_export_split(spec ? spec : "", &items);
    for (size_t i = 0; i < items.n; i++)
        all = all || strcasecmp(items.v[i], "ALL") == 0;
    for (size_t i = 0; i < sb->opt.ignored.n; i++)
        get = get || strncmp(sb->opt.ignored.v[i], "--get-user-env", 14) == 0;
    loom_strv_free(&items);
    if (!all)
        loom_jobenv_set(&sb->opt.env, "SLURM_EXPORT_ENV", spec);
    if (!all || get)
        loom_jobenv_set(&sb->opt.env, "SLURM_GET_USER_ENV", "1");
}

/* All option sources, the working directory and the environment. */
static int sbatch_options(sbatch_t *sb, int argc, char **argv)
{
    loom_err_t err = {0};
    if (loom_jobopt_load(&sb->opt, argc, argv, environ, &sb->dirs, &err) < 0) {
        sbatch_report(sb, &err, argc, argv);
        return -1;
    }
    char cwd[PATH_MAX];
    if (!getcwd(cwd, sizeof(cwd))) {
        loom_cli_error(&sb->cli, "getcwd failed: %s", strerror(errno));
        return -1;
    }
    loom_jobopt_set_cwd(&sb->opt, cwd);
    loom_jobopt_export_env(&sb->opt, environ);
    sbatch_user_env(sb);
    loom_cli_working_cluster(&sb->cli, &sb->opt.env);
    if (loom_cli_rlimits(&sb->cli, sb->opt.propagate, &sb->opt.env) < 0)
        return -1;
    for (size_t i = 0; i < sb->opt.ignored.n; i++)
        loom_cli_verbose(&sb->cli, "option %s is accepted and ignored", sb->opt.ignored.v[i]);
    return 0;
}

/* The description plus what sbatch itself knows: name, script path, submit host. */
static json_t *sbatch_description(const sbatch_t *sb)
{
    json_t *desc = loom_jobopt_to_json(&sb->opt);
    if (!sb->opt.job_name) {
        const char *name = sb->script_path                   ? strrchr(sb->script_path, '/') + 1
                           : strcmp(sb->source, "wrap") == 0 ? "wrap"
                                                             : "sbatch";
        json_object_set_new(desc, "name", json_string(name));
    }
    if (sb->script_path)
        json_object_set_new(desc, "command", json_string(sb->script_path));
    char host[256];
    if (gethostname(host, sizeof(host)) == 0) {
        host[sizeof(host) - 1] = '\0';
        json_object_set_new(desc, "submit_host", json_string(host));
    }
    json_object_set_new(desc, "alloc_sid", json_integer(getsid(0)));
    return desc;
}

/* ---- submission ----------------------------------------------------------- */

/* Slurm's two-line rejection: the controller's reason (when it says more than
 * the error's name), then the error text. */
static void sbatch_rejected(const sbatch_t *sb, int rc, const loom_err_t *err)
{
    const char *text = loom_strerror(rc);
    if (rc == -LOOM_EINVAL_GRES) { /* sbatch 22.05 checks GRES names itself: one line */
        loom_cli_error(&sb->cli, "%s", text);
        return;
    }
    if (err->msg[0] && strcmp(err->msg, text) != 0 && rc != -LOOM_ECONNECT)
        loom_cli_error(&sb->cli, "%s", err->msg);
    loom_cli_error(&sb->cli, "Batch job submission failed: %s", text);
}

static int sbatch_submit(sbatch_t *sb, int64_t *job_id)
{
    json_t *body = json_pack("{s:o, s:s}", "job", sbatch_description(sb), "script", sb->script);
    if (sb->opt.test_only) {
        int rc = loom_cli_test_only(&sb->cli, body);
        json_decref(body);
        return rc < 0 ? -1 : 0;
    }
    json_t *reply = NULL;
    loom_err_t err = {0};
    int rc = loom_cli_call(&sb->cli, "job.submit", body, &reply, &err);
    json_decref(body);
    if (rc < 0) {
        sbatch_rejected(sb, rc, &err);
    } else {
        *job_id = loom_ji(reply, "job_id", 0);
        if (sb->opt.parsable)
            printf("%lld%s%s\n", (long long)*job_id, sb->cluster ? ";" : "",
                   sb->cluster ? sb->cluster : "");
        else if (!sb->opt.quiet)
            printf("Submitted batch job %lld%s%s\n", (long long)*job_id,
                   sb->cluster ? " on cluster " : "", sb->cluster ? sb->cluster : "");
        fflush(stdout);
    }
    json_decref(reply);
    return rc < 0 ? -1 : 0;
}

/* ---- --wait ---------------------------------------------------------------- */

/* The exit status of a finished job (the highest over array tasks): its code,
 * or 1 when a signal ended it. -1 while any part of it is unfinished. */
static int sbatch_job_result(const json_t *jobs, int64_t job_id)
{
    int result = 0, seen = 0;
    size_t i;
    json_t *j;
    json_array_foreach(jobs, i, j)
    {
        if (loom_ji(j, "job_id", 0) != job_id && loom_ji(j, "array_job_id", 0) != job_id)
            continue;
        seen++;
        uint32_t st = loom_cli_job_state(j);
        if (!loom_job_state_is_terminal(st) || (st & LOOM_JOB_F_COMPLETING))
            return -1;
        int64_t status = loom_ji(j, "exit_code", 0);
        int code = (status & 0x7f) ? 1 : (int)((status >> 8) & 0xff);
        if (code == 0 && loom_job_base(st) != LOOM_JOB_COMPLETED)
            code = 1; /* cancelled, timed out, node failure: not a success */
        result = code > result ? code : result;
    }
    return seen ? result : -2;
}

static int sbatch_wait(sbatch_t *sb, int64_t job_id)
{
    useconds_t delay = 100000;
    for (;;) {
        json_t *body = json_pack("{s:[I]}", "job_ids", (json_int_t)job_id), *reply = NULL;
        loom_err_t err = {0};
        int rc = loom_cli_call(&sb->cli, "job.info", body, &reply, &err);
        json_decref(body);
        int result = rc < 0 ? -2 : sbatch_job_result(json_object_get(reply, "jobs"), job_id);
        json_decref(reply);
        if (result >= 0)
            return result;
        if (result == -2) {
            loom_cli_error(&sb->cli, "Job %lld no longer found: %s", (long long)job_id,
                           rc < 0 ? err.msg : "Invalid job id specified");
            return sb->cli.exit_error;
        }
        usleep(delay);
        delay = delay * 2 > SBATCH_WAIT_MAX_US ? SBATCH_WAIT_MAX_US : delay * 2;
    }
}

/* ---- main ------------------------------------------------------------------ */

/* -M/--clusters: this controller's ClusterName (or "all") must be among the
 * names; sbatch 22.05 then names the cluster after the job id ("12;loom" with
 * --parsable, which snakemake and dask-jobqueue cut at ';'). */
static int sbatch_cluster(sbatch_t *sb)
{
    if (!sb->opt.clusters)
        return 0;
    loom_err_t err = {0};
    const loom_conf_t *conf = loom_cli_conf(&sb->cli, &err);
    const char *me = conf && conf->cluster_name ? conf->cluster_name : "";
    loom_strv_t names = LOOM_STRV_INIT;
    loom_strv_split(&names, sb->opt.clusters, ",");
    for (size_t i = 0; i < names.n && !sb->cluster; i++)
        if (!strcasecmp(names.v[i], me) || !strcasecmp(names.v[i], "all"))
            sb->cluster = me;
    loom_strv_free(&names);
    if (!sb->cluster)
        loom_cli_error(&sb->cli,
                       "'%s' can't be reached now, or it is an invalid entry for --cluster.  Use "
                       "'sacctmgr list clusters' to see available clusters.",
                       sb->opt.clusters);
    return sb->cluster ? 0 : -1;
}

static int sbatch_prepare(sbatch_t *sb, int argc, char **argv)
{
    loom_err_t err = {0};
    if (loom_jobopt_first_pass(&sb->opt, argc, argv, &sb->first_arg, &err) < 0) {
        sbatch_report(sb, &err, argc, argv);
        return -1;
    }
    if (sbatch_informational(sb) == 0)
        return 0;
    loom_cli_set_verbosity(&sb->cli, sb->opt.verbose, sb->opt.quiet > 0);
    if (sbatch_read_script(sb, argc, argv) < 0 || sbatch_check_script(sb) < 0 ||
        sbatch_options(sb, argc, argv) < 0 || sbatch_cluster(sb) < 0)
        return -1;
    loom_cli_set_verbosity(&sb->cli, sb->opt.verbose, sb->opt.quiet > 0);
    loom_cli_warnings(&sb->cli, &sb->opt.warnings, false);
    return 1;
}

int main(int argc, char **argv)
{
    sbatch_t sb = {0};
    loom_cli_init(&sb.cli, "sbatch");
    loom_jobopt_init(&sb.opt, LOOM_JOBOPT_SBATCH);
    argv[0] = "sbatch";
    int rc = sbatch_prepare(&sb, argc, argv);
    if (rc > 0) {
        int64_t job_id = 0;
        rc = sbatch_submit(&sb, &job_id) < 0 ? sb.cli.exit_error : 0;
        if (rc == 0 && sb.opt.wait && !sb.opt.test_only)
            rc = sbatch_wait(&sb, job_id);
    } else {
        rc = rc == 0 ? 0 : sb.usage_rc ? sb.usage_rc : sb.cli.exit_error;
    }
    loom_jobopt_free(&sb.opt);
    loom_jobscript_dirs_free(&sb.dirs);
    free(sb.script);
    free(sb.script_path);
    loom_cli_fini(&sb.cli);
    return rc;
}
