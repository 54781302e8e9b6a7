/*
 * srun.c - srun: run a job step (CLI_SPEC §2, §0.9, §0.10, §12 column T).
 *
 * Inside an allocation (SLURM_JOB_ID or --jobid) srun asks the controller
 * for a step of that job; outside one it first creates an allocation with
 * the same options (srun_alloc.c), runs the step, and gives the allocation
 * back with the step's status. The controller places the step within the
 * allocation and has each node's loomd start a supervisor, which starts the
 * node's tasks and connects back to srun's I/O port (srun_io.c). While the
 * job's other steps hold the CPUs the step waits, as Slurm's does ("Job N
 * step creation temporarily disabled, retrying (Requested nodes are
 * busy)"). srun exits with the highest task exit code, 128+signal for a
 * task killed by a signal, 1 when the step could not be created.
 */
#include "cli/srun.h"

#include "cli/cli_format.h"
#include "common/jobenv.h"
#include "common/hostlist.h"
#include "common/jobstate.h"
#include "common/log.h"
#include "common/multiprog.h"
#include "common/proto.h"
#include "common/stepio.h"
#include "common/xalloc.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

#define SRUN_RETRY_FIRST_MS 100
#define SRUN_RETRY_MAX_MS   2000
#define SRUN_LOST_RETRIES   2 /* step.create after the controller's connection was lost */

/* ---------------------------------------------------------------- options */

static void srun_fail_opts(srun_t *s, const loom_err_t *err)
{
    loom_sbuf_t sb = LOOM_SBUF_INIT;
    loom_jobopt_err_fmt(LOOM_JOBOPT_SRUN, err, &sb);
    fputs(loom_sbuf_str(&sb), stderr);
    loom_sbuf_free(&sb);
    exit(err->code == -LOOM_EUSAGE ? 255 : s->cli.exit_error); /* 22.05: getopt's errors, 255 */
}

static void srun_print(void (*fn)(loom_jobopt_cmd_t, loom_sbuf_t *))
{
    loom_sbuf_t sb = LOOM_SBUF_INIT;
    fn(LOOM_JOBOPT_SRUN, &sb);
    fputs(loom_sbuf_str(&sb), stdout);
    loom_sbuf_free(&sb);
    exit(0);
}

/* --mpi (or SLURM_MPI_TYPE): Loom's supervisors serve PMI-2 (stepd_pmi2.c)
 * or nothing; "list" names them and exits, as srun 22.05 does; any other
 * type is refused with its words, before anything is allocated. */
static void srun_check_mpi(srun_t *s)
{
    const char *mpi = s->jo.mpi;
    if (!mpi || !*mpi || !strcmp(mpi, "none") || !strcmp(mpi, "pmi2"))
        return;
    if (!strcmp(mpi, "list")) {
        printf("MPI plugin types are...\n\tnone\n\tpmi2\n");
        exit(0);
    }
    loom_cli_error(&s->cli,
                   "Couldn't find the specified plugin name for mpi/%s looking at all files", mpi);
    loom_cli_error(&s->cli, "cannot find mpi plugin for mpi/%s", mpi);
    loom_cli_error(&s->cli, "MPI: Cannot create context for mpi/%s", mpi);
    loom_cli_error(&s->cli, "MPI: Unable to load any plugin");
    loom_cli_error(&s->cli, "Invalid MPI type '%s', --mpi=list for acceptable types", mpi);
    exit(s->cli.exit_error);
}

/* Options from the command line and srun's input variables (jobopt.h). */
static void srun_parse(srun_t *s, int argc, char **argv)
{
    loom_jobopt_t *jo = &s->jo;
    loom_err_t err = {0};
    loom_jobopt_init(jo, LOOM_JOBOPT_SRUN);
    char *prog = argv[0];
    argv[0] = "srun"; /* getopt names the program in its messages */
    int rc = loom_jobopt_load(jo, argc, argv, environ, NULL, &err);
    argv[0] = prog;
    if (rc < 0)
        srun_fail_opts(s, &err);
    if (jo->help)
        srun_print(loom_jobopt_help);
    if (jo->usage)
        srun_print(loom_jobopt_usage);
    if (jo->version) {
        loom_cli_version();
        exit(0);
    }
    srun_check_mpi(s);
    if (jo->argv.n == 0) {
        loom_cli_error(&s->cli, "No command given to execute.");
        exit(s->cli.exit_error);
    }
    /* -N on the command line without -n: one task per node, not the
     * allocation's SLURM_NTASKS (as srun does). */
    if (loom_jobopt_source(jo, "ntasks") == LOOM_JOBOPT_SRC_ENV &&
        loom_jobopt_source(jo, "nodes") == LOOM_JOBOPT_SRC_CLI)
        jo->ntasks = 0;
    s->argv = jo->argv.v;
    s->pty = jo->pty;
}

/* --multi-prog: the command is the configuration file. */
static int srun_multi_prog(srun_t *s)
{
    if (!s->jo.multi_prog)
        return 0;
    FILE *fp = fopen(s->argv[0], "re");
    if (!fp) {
        loom_cli_error(&s->cli, "Unable to open multi-prog file %s: %s", s->argv[0],
                       strerror(errno));
        return -1;
    }
    loom_sbuf_t text = LOOM_SBUF_INIT;
    char buf[4096];
    size_t n;
    while ((n = fread(buf, 1, sizeof(buf), fp)) > 0)
        loom_sbuf_addn(&text, buf, n);
    fclose(fp);
    s->multi_prog = loom_sbuf_detach(&text);
    return 0;
}

/* The environment the tasks start from: --export over srun's own. */
static void srun_base_env(srun_t *s)
{
    loom_err_t err = {0};
    if (loom_jobenv_export(s->jo.export_env, environ, &s->env, &err) < 0)
        loom_jobenv_export(NULL, environ, &s->env, NULL);
    mode_t mask = umask(022);
    umask(mask);
    loom_jobenv_setf(&s->env, "SLURM_UMASK", "%04o", (unsigned)mask);
    if (s->jo.label)
        loom_jobenv_set(&s->env, "SLURM_LABELIO", "1");
    const char *conf = getenv("SLURM_CONF");
    if (conf && *conf)
        loom_jobenv_set(&s->env, "SLURM_CONF", conf);
}

/* ------------------------------------------------------------------- step */

/* "[type:]N" -> N. */
static uint32_t srun_count(const char *spec)
{
    if (!spec || !*spec)
        return 0;
    const char *colon = strrchr(spec, ':');
    return (uint32_t)strtoul(colon ? colon + 1 : spec, NULL, 10);
}

/* GPUs per node from --gres=gpu[:type]:N (other GRES are not counted here). */
static uint32_t srun_gres_gpus(const char *gres)
{
    loom_strv_t items = LOOM_STRV_INIT;
    uint32_t n = 0;
    loom_strv_split(&items, gres ? gres : "", ",");
    for (size_t i = 0; i < items.n; i++) {
        const char *g = items.v[i];
        if (strncmp(g, "gres/", 5) == 0)
            g += 5;
        if (strncmp(g, "gpu", 3) == 0 && (g[3] == ':' || g[3] == '\0'))
            n += g[3] ? srun_count(g) : 1;
    }
    loom_strv_free(&items);
    return n;
}

static void srun_set_str(json_t *o, const char *key, const char *v)
{
    if (v && *v)
        json_object_set_new(o, key, json_string(v));
}

static void srun_set_int(json_t *o, const char *key, uint64_t v)
{
    if (v)
        json_object_set_new(o, key, json_integer((json_int_t)v));
}

/* -i: "all", "none", a rank, or a file pattern. */
static void srun_input(srun_t *s, json_t *b)
{
    const char *in = s->jo.std_in;
    if (s->pty) {
        json_object_set_new(b, "input", json_string("0"));
        return;
    }
    if (!in || strcmp(in, "all") == 0) {
        json_object_set_new(b, "input", json_string("all"));
    } else if (strcmp(in, "none") == 0 || strcmp(in, "/dev/null") == 0) {
        json_object_set_new(b, "input", json_string("none"));
    } else if (in[strspn(in, "0123456789")] == '\0') {
        json_object_set_new(b, "input", json_string(in));
    } else {
        json_object_set_new(b, "input", json_string("none"));
        json_object_set_new(b, "std_in", json_string(in));
    }
}

static json_t *srun_step_request(srun_t *s)
{
    const loom_jobopt_t *jo = &s->jo;
    json_t *argv = json_array(), *env = json_array();
    for (char **a = s->argv; *a; a++)
        json_array_append_new(argv, json_string(*a));
    for (size_t i = 0; i < s->env.n; i++)
        json_array_append_new(env, json_string(s->env.v[i]));
    char cwd[4096];
    const char *dir = jo->chdir ? jo->chdir : getcwd(cwd, sizeof(cwd));
    mode_t mask = umask(022);
    umask(mask);
    json_t *b = json_pack("{s:I, s:o, s:o, s:s, s:i, s:{s:s, s:i}}", "job_id",
                          (json_int_t)s->job_id, "argv", argv, "env", env, "cwd", dir ? dir : "/",
                          "umask", (int)mask, "io", "host", s->io_host, "port", s->io_port);
    srun_set_str(b, "name", jo->job_name);
    srun_set_str(b, "submit_line", jo->submit_line); /* sacct SubmitLine of the step */
    srun_set_int(b, "ntasks", jo->ntasks);
    srun_set_int(b, "nodes", jo->min_nodes);
    srun_set_int(b, "ntasks_per_node", jo->ntasks_per_node);
    srun_set_int(b, "cpus_per_task", jo->cpus_per_task);
    bool exact = jo->exact || loom_jobopt_source(jo, "cpus-per-task") == LOOM_JOBOPT_SRC_CLI;
    json_object_set_new(b, "exact", json_boolean(exact));
    json_object_set_new(b, "overlap", json_boolean(jo->overlap));
    srun_set_int(b, "mem", jo->mem_per_node);
    srun_set_int(b, "mem_per_cpu", jo->mem_per_cpu);
    srun_set_int(b, "gpus", srun_count(jo->gpus));
    srun_set_int(b, "gpus_per_node", srun_gres_gpus(jo->gres) + srun_count(jo->gpus_per_node));
    srun_set_int(b, "gpus_per_task", srun_count(jo->gpus_per_task));
    srun_set_str(b, "nodelist", jo->nodelist);
    srun_set_str(b, "exclude", jo->exclude);
    srun_set_str(b, "distribution", jo->distribution);
    if (s->own_alloc && !jo->distribution) /* 22.05.8 sets no SLURM_DISTRIBUTION then */
        json_object_set_new(b, "dist_env", json_false());
    srun_set_str(b, "cpu_bind", jo->cpu_bind);
    srun_set_str(b, "gpu_bind", jo->gpu_bind);
    srun_set_str(b, "std_out", s->pty ? NULL : jo->std_out);
    srun_set_str(b, "std_err", s->pty ? NULL : jo->std_err);
    srun_input(s, b);
    json_object_set_new(b, "pty", json_boolean(s->pty));
    srun_set_str(b, "mpi", jo->mpi && strcmp(jo->mpi, "none") ? jo->mpi : NULL);
    srun_set_str(b, "multi_prog", s->multi_prog);
    srun_set_str(b, "job_name", getenv("SLURM_JOB_NAME") ?: jo->job_name);
    char host[256] = "";
    if (gethostname(host, sizeof(host) - 1) == 0 && *host)
        srun_set_str(b, "srun_host", host);
    srun_set_int(b, "srun_pid", (uint64_t)getpid());
    return b;
}

static void srun_layout(srun_t *s, const json_t *reply)
{
    const json_t *tpn = json_object_get(reply, "tasks_per_node");
    s->step_id = (uint32_t)json_integer_value(json_object_get(reply, "step_id"));
    s->step_nodes = loom_xstrdup(json_string_value(json_object_get(reply, "nodes")) ?: "");
    s->io_key = loom_xstrdup(json_string_value(json_object_get(reply, "io_key")) ?: "");
    s->nnodes = (uint32_t)json_array_size(tpn);
    s->tasks_per_node = loom_xcalloc(s->nnodes ? s->nnodes : 1, sizeof(uint32_t));
    s->ntasks = 0;
    for (uint32_t i = 0; i < s->nnodes; i++)
        s->ntasks += s->tasks_per_node[i] = (uint32_t)json_integer_value(json_array_get(tpn, i));
    s->nodes = loom_xcalloc(s->nnodes ? s->nnodes : 1, sizeof(*s->nodes));
    loom_hostlist_t *hl = NULL;
    loom_hostlist_parse(s->step_nodes, &hl, NULL);
    for (uint32_t i = 0; i < s->nnodes; i++) {
        const char *name = hl ? loom_hostlist_nth(hl, i) : NULL;
        s->nodes[i].name = loom_xstrdup(name ? name : "?");
        s->nodes[i].fd = -1;
    }
    loom_hostlist_destroy(hl);
    s->tasks = loom_xcalloc(s->ntasks ? s->ntasks : 1, sizeof(*s->tasks));
    uint32_t *node_of = loom_xcalloc(s->ntasks ? s->ntasks : 1, sizeof(uint32_t));
    const char *dist = s->jo.distribution;
    loom_jobenv_rank_nodes(s->tasks_per_node, s->nnodes, dist && strncmp(dist, "cyclic", 6) == 0,
                           node_of);
    for (uint32_t r = 0; r < s->ntasks; r++) {
        s->tasks[r].rank = r;
        s->tasks[r].node = node_of[r];
    }
    free(node_of);
    for (uint32_t w = s->ntasks > 1 ? s->ntasks - 1 : 0; w > 0; w /= 10)
        s->label_width++;
    if (s->label_width == 0)
        s->label_width = 1;
}

/* "srun: jobid N: nodes(K):`list', cpu counts: 4(x2)" (-v; §0.10); every run
 * of equal counts has its "(xN)", as srun 22.05 prints it: "3(x1),1(x1)". */
static void srun_verbose_line(srun_t *s, const json_t *reply)
{
    if (s->jo.verbose < 1)
        return;
    const json_t *cpus = json_object_get(reply, "job_cpus");
    size_t n = json_array_size(cpus);
    loom_sbuf_t counts = LOOM_SBUF_INIT;
    for (size_t i = 0, run; i < n; i += run) {
        json_int_t v = json_integer_value(json_array_get(cpus, i));
        for (run = 1; i + run < n && json_integer_value(json_array_get(cpus, i + run)) == v; run++)
            ;
        loom_sbuf_addf(&counts, "%s%" JSON_INTEGER_FORMAT "(x%zu)", i ? "," : "", v, run);
    }
    loom_cli_info(&s->cli, "jobid %u: nodes(%zu):`%s', cpu counts: %s", s->job_id, n,
                  json_string_value(json_object_get(reply, "job_nodes")) ?: "",
                  loom_sbuf_str(&counts));
    loom_sbuf_free(&counts);
}

/* Wait before retrying, watching for a Ctrl-C; false when interrupted. */
static bool srun_retry_wait(srun_t *s, int ms)
{
    struct pollfd p = {.fd = s->sigfd, .events = POLLIN};
    if (poll(&p, 1, ms) <= 0)
        return true;
    struct signalfd_siginfo si;
    if (read(s->sigfd, &si, sizeof(si)) != (ssize_t)sizeof(si))
        return true;
    return si.ssi_signo != SIGINT && si.ssi_signo != SIGTERM && si.ssi_signo != SIGHUP;
}

static int srun_create_step(srun_t *s)
{
    json_t *body = srun_step_request(s);
    int delay = SRUN_RETRY_FIRST_MS, rc, lost = 0;
    bool waited = false;
    for (;;) {
        loom_err_t err = {0};
        json_t *reply = NULL;
        rc = loom_cli_call(&s->cli, "step.create", body, &reply, &err);
        /* The controller went away (restarting after a crash): ask again on a
         * new connection, as srun does after "Zero Bytes were transmitted". */
        bool again =
            rc == -LOOM_ENODES_BUSY || (rc == -LOOM_ECONNECT && lost++ < SRUN_LOST_RETRIES);
        if (rc == 0) {
            if (waited)
                loom_cli_info(&s->cli, "Step created for job %u", s->job_id);
            srun_layout(s, reply);
            srun_verbose_line(s, reply);
        } else if (rc == -LOOM_ENODES_BUSY) {
            if (!waited)
                loom_cli_info(&s->cli, "Job %u step creation temporarily disabled, retrying (%s)",
                              s->job_id, err.msg);
            waited = true;
        } else if (again) {
            loom_debug("step.create: %s; asking again", err.msg);
        } else if (rc == -LOOM_ESTEP_LAUNCH) {
            loom_cli_error(&s->cli, "%s", err.msg);
        } else {
            loom_cli_error(&s->cli, "Unable to create step for job %u: %s", s->job_id, err.msg);
        }
        json_decref(reply);
        if (!again || !srun_retry_wait(s, delay))
            break;
        delay = delay * 2 > SRUN_RETRY_MAX_MS ? SRUN_RETRY_MAX_MS : delay * 2;
    }
    json_decref(body);
    return rc;
}

/* ------------------------------------------------------------------- end */

/* Highest task exit code, 128+signal for a signalled task. */
static int srun_result(srun_t *s, int *status)
{
    int rc = 0;
    bool signalled = false;
    *status = 0;
    for (uint32_t r = 0; r < s->ntasks; r++) {
        int st = s->tasks[r].status, code = 0;
        if (WIFEXITED(st))
            code = WEXITSTATUS(st);
        else if (WIFSIGNALED(st))
            code = 128 + WTERMSIG(st);
        signalled |= WIFSIGNALED(st);
        if (code > rc) {
            rc = code;
            *status = st;
        }
    }
    if (signalled && !s->ended_by_ctld)
        loom_cli_info(&s->cli, "Force Terminated StepId=%u.%u", s->job_id, s->step_id);
    if (s->exit_override > rc) {
        rc = s->exit_override;
        *status = rc << 8;
    }
    return rc;
}

static void srun_stdin(srun_t *s)
{
    const char *in = s->jo.std_in;
    s->stdin_rank = LOOM_STEPIO_ALL;
    if (s->pty) {
        s->stdin_rank = 0;
    } else if (in && strcmp(in, "all") != 0) {
        if (in[strspn(in, "0123456789")] != '\0')
            return; /* none, or files on the nodes */
        s->stdin_rank = (uint32_t)strtoul(in, NULL, 10);
    }
    s->stdin_fd = 0;
}

static int srun_run(srun_t *s)
{
    srun_stdin(s);
    srun_io_run(s);
    srun_ctl_pty_end(s);
    int status = 0, code = srun_result(s, &status);
    s->step_status = status;
    json_t *body = json_pack("{s:I, s:I, s:i}", "job_id", (json_int_t)s->job_id, "step_id",
                             (json_int_t)s->step_id, "exit_code", status);
    for (uint32_t r = 0; r < s->ntasks; r++)
        if (s->tasks[r].oom)
            json_object_set_new(body, "oom", json_true());
    loom_err_t err = {0};
    if (loom_cli_call(&s->cli, "step.complete", body, NULL, &err) < 0)
        loom_debug("step.complete: %s", err.msg);
    json_decref(body);
    return code;
}

static void srun_free(srun_t *s)
{
    for (uint32_t i = 0; s->nodes && i < s->nnodes; i++) {
        if (s->nodes[i].fd >= 0)
            close(s->nodes[i].fd);
        free(s->nodes[i].name);
        loom_sbuf_free(&s->nodes[i].in);
        loom_sbuf_free(&s->nodes[i].out);
    }
    for (uint32_t r = 0; s->tasks && r < s->ntasks; r++)
        for (int k = 0; k < 2; k++)
            loom_sbuf_free(&s->tasks[r].part[k]);
    for (size_t i = 0; i < SRUN_MAX_PENDING; i++) {
        if (s->pending[i].fd >= 0)
            close(s->pending[i].fd);
        loom_sbuf_free(&s->pending[i].in);
    }
    free(s->nodes);
    free(s->tasks);
    free(s->tasks_per_node);
    free(s->step_nodes);
    free(s->io_key);
    free(s->multi_prog);
    json_decref(s->job);
    json_decref(s->pmi);
    json_decref(s->kill_msg);
    loom_strv_free(&s->env);
    if (s->listen_fd >= 0)
        close(s->listen_fd);
    if (s->sigfd >= 0)
        close(s->sigfd);
    loom_jobopt_free(&s->jo);
    loom_cli_fini(&s->cli);
}

/* srun outside an allocation: make one with the same options. */
/* A new allocation (or with test_only, the estimate of one). */
static int srun_allocate(srun_t *s, bool test_only)
{
    char cwd[4096];
    if (getcwd(cwd, sizeof(cwd)))
        loom_jobopt_set_cwd(&s->jo, cwd);
    char *copy = loom_xstrdup(s->argv[0]);
    srun_alloc_opts_t o = {.prog = "srun",
                           .def_name = basename(copy),
                           .quiet = s->jo.quiet > 0,
                           .immediate = s->jo.immediate,
                           .sigfd = s->sigfd};
    int rc = test_only ? srun_alloc_test(&s->cli, &s->jo, &o)
                       : srun_alloc_create(&s->cli, &s->jo, &o, &s->job_id, &s->job);
    free(copy);
    if (test_only)
        return rc;
    if (rc < 0)
        return rc;
    s->own_alloc = true;
    srun_alloc_env(&s->cli, &s->jo, s->job, &s->env);
    return 0;
}

/* --jobid from outside the allocation: its variables, as srun sets them. */
static int srun_join(srun_t *s)
{
    const char *env = getenv("SLURM_JOB_ID");
    if (env && strtoul(env, NULL, 10) == s->job_id)
        return 0;
    s->job = srun_job_record(&s->cli, s->job_id);
    if (!s->job || loom_job_base(loom_cli_job_state(s->job)) != LOOM_JOB_RUNNING) {
        loom_cli_error(&s->cli, "Unable to create step for job %u: %s", s->job_id,
                       s->job ? "Job/step already completing or completed"
                              : "Invalid job id specified");
        return -1;
    }
    srun_alloc_env(&s->cli, &s->jo, s->job, &s->env);
    return 0;
}

/* More nodes than tasks: fewer nodes, with 22.05's warning (before an
 * allocation is made, too: "srun -N3 -n1" runs on one node). */
static void srun_fit_nodes(srun_t *s)
{
    loom_jobopt_t *jo = &s->jo;
    if (!jo->ntasks || jo->min_nodes <= jo->ntasks)
        return;
    if (loom_jobopt_source(jo, "nodes") == LOOM_JOBOPT_SRC_CLI)
        loom_cli_info(&s->cli, "Warning: can't run %u processes on %u nodes, setting nnodes to %u",
                      jo->ntasks, jo->min_nodes, jo->ntasks);
    jo->min_nodes = jo->ntasks;
    if (jo->max_nodes > jo->ntasks)
        jo->max_nodes = jo->ntasks;
}

/* Checks srun makes itself inside an allocation (as Slurm's does). */
static int srun_check_sizes(srun_t *s)
{
    loom_jobopt_t *jo = &s->jo;
    const char *jn = getenv("SLURM_JOB_NUM_NODES");
    uint32_t have = jn ? (uint32_t)strtoul(jn, NULL, 10) : 0;
    if (!s->own_alloc && have && jo->min_nodes > have &&
        loom_jobopt_source(jo, "nodes") == LOOM_JOBOPT_SRC_CLI) {
        loom_cli_error(&s->cli, "Only allocated %u nodes asked for %u", have, jo->min_nodes);
        return -1;
    }
    srun_fit_nodes(s);
    return 0;
}

static int srun_main(srun_t *s)
{
    const loom_conf_t *conf = loom_cli_conf(&s->cli, NULL);
    s->kill_wait = conf ? (int)conf->kill_wait : 30;
    if (srun_multi_prog(s) < 0 || srun_ctl_signals(s) < 0)
        return s->cli.exit_error;
    srun_base_env(s);
    if (loom_cli_rlimits(&s->cli, s->jo.propagate, &s->env) < 0)
        return s->cli.exit_error;
    s->job_id = s->jo.jobid;
    if (!s->job_id)
        srun_fit_nodes(s);
    if (s->jo.test_only)
        return srun_allocate(s, true) < 0 ? s->cli.exit_error : 0;
    if (!s->job_id && srun_allocate(s, false) < 0)
        return s->cli.exit_error;
    if (!s->own_alloc && srun_join(s) < 0)
        return s->cli.exit_error;
    int code = s->cli.exit_error;
    if (srun_check_sizes(s) == 0 && srun_io_listen(s) == 0 && srun_create_step(s) == 0)
        code = srun_run(s);
    /* The job's ExitCode is the step's status: 0:9 for a task killed by
     * SIGKILL, not srun's own 137 (22.05.8). */
    if (s->own_alloc)
        srun_alloc_release(&s->cli, s->job_id, s->step_status >= 0 ? s->step_status : code << 8);
    return code;
}

int main(int argc, char **argv)
{
    srun_t s = {
        .listen_fd = -1, .sigfd = -1, .stdin_fd = -1, .exit_override = -1, .step_status = -1};
    for (size_t i = 0; i < SRUN_MAX_PENDING; i++)
        s.pending[i].fd = -1;
    loom_cli_init(&s.cli, "srun");
    srun_parse(&s, argc, argv);
    loom_cli_set_verbosity(&s.cli, s.jo.verbose, s.jo.quiet > 0);
    loom_cli_warnings(&s.cli, &s.jo.warnings, true);
    /* Steps are created on the controller's time: a launch on many nodes. */
    s.cli.timeout_ms = 60000;
    int code = srun_main(&s);
    srun_free(&s);
    return code;
}
