/*
 * scontrol.c - view and change the controller's state (CLI_SPEC §9):
 * Slurm's scontrol on Loom. Global options, the command dispatch, and the
 * small commands (ping, version, shutdown, reconfigure). `show` lives in
 * scontrol_show.c, `update`/hold/release/requeue in scontrol_update.c.
 *
 * With no command, commands are read from stdin one per line until "quit"
 * or "exit" (a minimal form of Slurm's interactive mode).
 */
#include "cli/scontrol.h"

#include "common/jobid.h"
#include "common/proto.h"
#include "common/xalloc.h"

#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

bool loom_scontrol_word_is(const char *word, const char *name, size_t min)
{
    size_t n = strlen(word);
    return n >= min && n <= strlen(name) && strncasecmp(word, name, n) == 0;
}

static void scontrol_usage(void)
{
    printf("scontrol [<OPTION>] [<COMMAND>]\n"
           "    Valid <OPTION> values are:\n"
           "     -a or --all: equivalent to \"all\" command\n"
           "     -d or --details: equivalent to \"details\" command\n"
           "     -h or --help: equivalent to \"help\" command\n"
           "     --json: Produce JSON output\n"
           "     -o or --oneliner: equivalent to \"oneliner\" command\n"
           "     -Q or --quiet: equivalent to \"quiet\" command\n"
           "     -v or --verbose: equivalent to \"verbose\" command\n"
           "     -V or --version: equivalent to \"version\" command\n\n"
           "    Valid <COMMAND> values are:\n"
           "     hold, uhold, release, requeue, requeuehold, ping, reconfigure,\n"
           "     show (job, node, partition, config, hostnames, hostlist,\n"
           "     hostlistsorted), shutdown, update (job, node), version,\n"
           "     write batch_script <job> [file|-]\n");
}

/* The name Slurm prints for the controller: localhost means this host. */
static void scontrol_ctld_name(const loom_conf_t *conf, size_t i, char *buf, size_t len)
{
    const char *name = conf && i < conf->n_ctld_hosts ? conf->ctld_hosts[i].name : "localhost";
    if (strcmp(name, "localhost") == 0 && gethostname(buf, len) == 0) {
        buf[len - 1] = '\0';
        char *dot = strchr(buf, '.');
        if (dot)
            *dot = '\0';
        return;
    }
    snprintf(buf, len, "%s", name);
}

int loom_scontrol_ping(loom_scontrol_t *sc)
{
    loom_err_t err = {0};
    const loom_conf_t *conf = loom_cli_conf(&sc->cli, &err);
    if (!conf) {
        loom_cli_error(&sc->cli, "%s", err.msg);
        return sc->cli.exit_error;
    }
    bool up = loom_cli_call(&sc->cli, "ping", NULL, NULL, &err) == 0;
    char name[256];
    for (size_t i = 0; i < (conf->n_ctld_hosts ? conf->n_ctld_hosts : 1); i++) {
        scontrol_ctld_name(conf, i, name, sizeof(name));
        char role[32];
        if (i == 0)
            snprintf(role, sizeof(role), "primary");
        else if (conf->n_ctld_hosts > 2)
            snprintf(role, sizeof(role), "backup%zu", i);
        else
            snprintf(role, sizeof(role), "backup");
        printf("Slurmctld(%s) at %s is %s\n", role, name, i == 0 && up ? "UP" : "DOWN");
    }
    return up ? 0 : sc->cli.exit_error;
}

/* A request with no payload of interest; prints Slurm's "<what> error: ..." */
static int scontrol_simple(loom_scontrol_t *sc, const char *type, json_t *body, const char *what)
{
    loom_err_t err = {0};
    int rc = loom_cli_call(&sc->cli, type, body, NULL, &err);
    json_decref(body);
    if (rc < 0) {
        /* an administrator's command from anyone else: 22.05.8's words */
        fprintf(stderr, "%s error: %s\n", what, rc == -LOOM_EPERM ? "Invalid user id" : err.msg);
        return sc->cli.exit_error;
    }
    return 0;
}

static int scontrol_shutdown(loom_scontrol_t *sc, int n, char **w)
{
    bool ctld_only = false;
    if (n > 1) {
        fprintf(stderr, "too many arguments for keyword:shutdown\n");
        return sc->cli.exit_error;
    }
    if (n == 1) {
        if (strcasecmp(w[0], "slurmctld") != 0 && strcasecmp(w[0], "controller") != 0) {
            fprintf(stderr, "invalid shutdown argument:%s\n", w[0]);
            return sc->cli.exit_error;
        }
        ctld_only = true;
    }
    return scontrol_simple(sc, "shutdown", json_pack("{s:b}", "controller_only", ctld_only),
                           "slurm_shutdown");
}

/* Write text to path, or to stdout for "-". */
static int scontrol_write_file(loom_scontrol_t *sc, const char *path, const char *text)
{
    if (strcmp(path, "-") == 0) {
        fputs(text, stdout);
        return 0;
    }
    FILE *fp = fopen(path, "w");
    if (!fp) {
        fprintf(stderr, "failed to open file `%s`: %s\n", path, strerror(errno));
        return sc->cli.exit_error;
    }
    fputs(text, fp);
    if (fclose(fp) != 0) {
        fprintf(stderr, "failed to write file `%s`: %s\n", path, strerror(errno));
        return sc->cli.exit_error;
    }
    return 0;
}

/* write batch_script <job> [file|-]: the script from job.script, into
 * slurm-<job>.sh by default. Failures print slurmctld's reason as scontrol
 * 22.05 does (which then exits 0; Loom exits non-zero). */
static int scontrol_write(loom_scontrol_t *sc, int n, char **w)
{
    if (n < 1 || n > 3) {
        fprintf(stderr, "too %s arguments for keyword:write\n", n < 1 ? "few" : "many");
        return sc->cli.exit_error;
    }
    if (!loom_scontrol_word_is(w[0], "batch_script", 5)) {
        fprintf(stderr, "invalid write argument:%s\n", w[0]);
        return sc->cli.exit_error;
    }
    if (n == 1)
        return 0; /* as scontrol 22.05: nothing to write */
    loom_jobid_t id;
    loom_jobid_init(&id, 0);
    loom_err_t err = {0};
    json_t *reply = NULL;
    int rc = loom_jobid_parse(w[1], &id, &err);
    if (rc == 0 && (id.array == LOOM_JOBID_ARRAY_SET || id.array == LOOM_JOBID_ARRAY_ALL ||
                    id.step != LOOM_STEP_NONE || id.het_offset != LOOM_HET_NONE))
        rc = -LOOM_EINVAL_JOBID;
    if (rc == 0) {
        json_t *body = json_pack("{s:I}", "job_id", (json_int_t)id.job_id);
        if (id.array == LOOM_JOBID_ARRAY_ONE)
            json_object_set_new(body, "array_task_id", json_integer(id.task));
        rc = loom_cli_call(&sc->cli, "job.script", body, &reply, &err);
        json_decref(body);
    }
    loom_jobid_free(&id);
    if (rc < 0) {
        fprintf(stderr, "job script retrieval failed: %s\n",
                rc == -LOOM_EINVAL_JOBID && !reply ? loom_strerror(rc) : err.msg);
        json_decref(reply);
        return sc->cli.exit_error;
    }
    char def[64];
    snprintf(def, sizeof(def), "slurm-%s.sh", w[1]);
    const char *path = n == 3 ? w[2] : def;
    const char *text = json_string_value(json_object_get(reply, "script"));
    rc = scontrol_write_file(sc, path, text ? text : "");
    json_decref(reply);
    if (rc == 0 && strcmp(path, "-") != 0)
        printf("batch script for job %s written to %s\n", w[1], path);
    return rc;
}

/* Run one command; returns its exit status. *quit is set by quit/exit. */
static int scontrol_command(loom_scontrol_t *sc, int n, char **w, bool *quit)
{
    const char *cmd = w[0];
    if (loom_scontrol_word_is(cmd, "show", 3))
        return loom_scontrol_show(sc, n - 1, w + 1);
    if (loom_scontrol_word_is(cmd, "update", 1))
        return loom_scontrol_update(sc, n - 1, w + 1);
    if (strcasecmp(cmd, "hold") == 0 || strcasecmp(cmd, "uhold") == 0 ||
        loom_scontrol_word_is(cmd, "release", 3))
        return loom_scontrol_hold(sc, cmd, n - 1, w + 1);
    if (strcasecmp(cmd, "requeuehold") == 0)
        return loom_scontrol_requeue(sc, true, n - 1, w + 1);
    if (loom_scontrol_word_is(cmd, "requeue", 3))
        return loom_scontrol_requeue(sc, false, n - 1, w + 1);
    if (strcasecmp(cmd, "suspend") == 0 || strcasecmp(cmd, "resume") == 0)
        return loom_scontrol_suspend(sc, strcasecmp(cmd, "resume") == 0, n - 1, w + 1);
    if (loom_scontrol_word_is(cmd, "ping", 2))
        return loom_scontrol_ping(sc);
    if (loom_scontrol_word_is(cmd, "reconfigure", 3))
        return scontrol_simple(sc, "reconfigure", NULL, "slurm_reconfigure");
    if (loom_scontrol_word_is(cmd, "shutdown", 8))
        return scontrol_shutdown(sc, n - 1, w + 1);
    if (loom_scontrol_word_is(cmd, "write", 5))
        return scontrol_write(sc, n - 1, w + 1);
    if (strcasecmp(cmd, "setdebug") == 0)
        return loom_scontrol_setdebug(sc, n - 1, w + 1);
    if (strcasecmp(cmd, "setdebugflags") == 0)
        return loom_scontrol_setdebugflags(sc, n - 1, w + 1);
    if (loom_scontrol_word_is(cmd, "schedloglevel", 3))
        return loom_scontrol_schedloglevel(sc, n - 1, w + 1);
    if (strcasecmp(cmd, "wait_job") == 0)
        return loom_scontrol_wait_job(sc, n - 1, w + 1);
    if (loom_scontrol_word_is(cmd, "version", 3)) {
        loom_cli_version();
        return 0;
    }
    if (loom_scontrol_word_is(cmd, "oneliner", 3)) {
        sc->oneliner = true;
        return 0;
    }
    if (loom_scontrol_word_is(cmd, "details", 3)) {
        sc->details = true;
        return 0;
    }
    if (loom_scontrol_word_is(cmd, "help", 2)) {
        scontrol_usage();
        return 0;
    }
    if (loom_scontrol_word_is(cmd, "quit", 4) || loom_scontrol_word_is(cmd, "exit", 4)) {
        *quit = true;
        return 0;
    }
    fprintf(stderr, "invalid keyword: %s\n", cmd);
    return sc->cli.exit_error;
}

/* Interactive mode: one command per line from stdin. */
static int scontrol_interactive(loom_scontrol_t *sc)
{
    char *line = NULL;
    size_t cap = 0;
    int rc = 0;
    bool quit = false;
    while (!quit && getline(&line, &cap, stdin) > 0) {
        loom_strv_t words = LOOM_STRV_INIT;
        loom_strv_split(&words, line, " \t\r\n");
        if (words.n)
            rc = scontrol_command(sc, (int)words.n, words.v, &quit);
        loom_strv_free(&words);
    }
    free(line);
    return rc;
}

enum { OPT_JSON = 0x100, OPT_YAML, OPT_IGNORE };

static const struct option scontrol_longopts[] = {
    {"all", no_argument, NULL, 'a'},
    {"details", no_argument, NULL, 'd'},
    {"help", no_argument, NULL, 'h'},
    {"hide", no_argument, NULL, OPT_IGNORE},
    {"json", optional_argument, NULL, OPT_JSON},
    {"local", no_argument, NULL, OPT_IGNORE},
    {"oneliner", no_argument, NULL, 'o'},
    {"quiet", no_argument, NULL, 'Q'},
    {"sibling", no_argument, NULL, OPT_IGNORE},
    {"usage", no_argument, NULL, 'h'},
    {"verbose", no_argument, NULL, 'v'},
    {"version", no_argument, NULL, 'V'},
    {"yaml", optional_argument, NULL, OPT_YAML},
    {"clusters", required_argument, NULL, 'M'},
    {"federation", no_argument, NULL, OPT_IGNORE},
    {"future", no_argument, NULL, 'F'}, /* Loom has no FUTURE nodes to add */
    {"uid", required_argument, NULL, 'u'},
    {NULL, 0, NULL, 0},
};

/* Global options; returns 1 to go on, 0 to exit 0, -1 to fail. */
static int scontrol_options(loom_scontrol_t *sc, int argc, char **argv)
{
    int c, verbose = 0;
    /* '+': stop at the first command word ("scontrol show job -d" is not ours) */
    while ((c = getopt_long(argc, argv, "+adFhM:oQu:vV", scontrol_longopts, NULL)) != -1) {
        switch (c) {
        case 'a':
        case 'F':
        case 'M':
        case 'u': /* the caller's own uid is what the controller checks */
        case OPT_IGNORE:
            break;
        case 'd':
            sc->details = true;
            break;
        case 'h':
            scontrol_usage();
            return 0;
        case OPT_JSON:
            sc->json = true;
            break;
        case OPT_YAML:
            loom_cli_error(&sc->cli, "--yaml is not supported by this build; use --json");
            return -1;
        case 'o':
            sc->oneliner = true;
            break;
        case 'Q':
            sc->quiet = true;
            break;
        case 'v':
            verbose++;
            break;
        case 'V':
            loom_cli_version();
            return 0;
        default:
            fprintf(stderr, "Try \"scontrol --help\" for more information\n");
            return -1;
        }
    }
    loom_cli_set_verbosity(&sc->cli, verbose, sc->quiet);
    return 1;
}

/* A word of bundled -d/-o flags after the command words ("-dd", "-do");
 * false for anything else. */
static bool scontrol_late_flags(loom_scontrol_t *sc, const char *word)
{
    if (word[0] != '-' || !word[1] || strspn(word + 1, "do") != strlen(word + 1))
        return false;
    sc->details |= strchr(word, 'd') != NULL;
    sc->oneliner |= strchr(word, 'o') != NULL;
    return true;
}

/* "scontrol show job 5 --json", "scontrol show jobid -dd 5" (snakemake):
 * options may follow the command words, as getopt lets them in Slurm's. */
static int scontrol_strip_late_options(loom_scontrol_t *sc, int *n, char **w)
{
    int k = 0;
    for (int i = 0; i < *n; i++) {
        if (strcmp(w[i], "--json") == 0)
            sc->json = true;
        else if (strcmp(w[i], "--details") == 0)
            sc->details = true;
        else if (strcmp(w[i], "--oneliner") == 0)
            sc->oneliner = true;
        else if (!scontrol_late_flags(sc, w[i]))
            w[k++] = w[i];
    }
    *n = k;
    return 0;
}

int main(int argc, char **argv)
{
    loom_scontrol_t sc = {.argc = argc, .argv = argv};
    loom_cli_init(&sc.cli, "scontrol");
    argv[0] = "scontrol";
    int rc = scontrol_options(&sc, argc, argv);
    if (rc <= 0) {
        loom_cli_fini(&sc.cli);
        return rc == 0 ? 0 : sc.cli.exit_error;
    }
    int n = argc - optind;
    char **w = argv + optind;
    scontrol_strip_late_options(&sc, &n, w);
    bool quit = false;
    rc = n > 0 ? scontrol_command(&sc, n, w, &quit) : scontrol_interactive(&sc);
    fflush(stdout);
    loom_cli_fini(&sc.cli);
    return rc;
}
