/*
 * salloc.c - salloc: get an allocation, run a command in it, give it back
 * (CLI_SPEC §3, §0.9, §0.10, §12 column A).
 *
 * The allocation is made as srun makes one (srun_alloc.c); salloc prints
 * Slurm's lines on stderr ("Granted job allocation N", "Relinquishing job
 * allocation N", and while waiting "Pending job allocation N" / "job N
 * queued and waiting for resources" / "job N has been allocated
 * resources"), then runs the command (or $SHELL, or the user's login shell)
 * on this host with the allocation's variables. Ctrl-C and Ctrl-\ belong to
 * the command while it runs, so salloc ignores them; before the allocation
 * is granted, Ctrl-C gives up. When the controller ends the allocation
 * (scancel, time limit, node failure) salloc says so and sends the command
 * SIGHUP (or -K's signal), then SIGKILL after KillWait.
 *
 * Exit status: 1 when the allocation or the command could not start, else
 * the command's status; 0 when it was killed by SIGHUP, SIGINT, SIGKILL or
 * SIGQUIT, 1 for another signal (as salloc 22.05).
 */
#include "cli/srun.h"

#include "cli/cli_format.h"
#include "common/jobenv.h"
#include "common/jobstate.h"
#include "common/log.h"
#include "common/xalloc.h"

#include <errno.h>
#include <poll.h>
#include <pwd.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/signalfd.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

#define SALLOC_POLL_MS 2000

typedef struct salloc {
    loom_cli_t cli;
    loom_jobopt_t jo;
    uint32_t job_id;
    json_t *job;
    loom_strv_t env;
    int sigfd;
    pid_t child;
    int status;
    bool revoked;
    int kill_wait;
} salloc_t;

static void salloc_print(void (*fn)(loom_jobopt_cmd_t, loom_sbuf_t *))
{
    loom_sbuf_t sb = LOOM_SBUF_INIT;
    fn(LOOM_JOBOPT_SALLOC, &sb);
    fputs(loom_sbuf_str(&sb), stdout);
    loom_sbuf_free(&sb);
    exit(0);
}

static void salloc_parse(salloc_t *a, int argc, char **argv)
{
    loom_jobopt_t *jo = &a->jo;
    loom_err_t err = {0};
    loom_jobopt_init(jo, LOOM_JOBOPT_SALLOC);
    char *prog = argv[0];
    argv[0] = "salloc";
    int rc = loom_jobopt_load(jo, argc, argv, environ, NULL, &err);
    argv[0] = prog;
    if (rc < 0) {
        loom_sbuf_t sb = LOOM_SBUF_INIT;
        loom_jobopt_err_fmt(LOOM_JOBOPT_SALLOC, &err, &sb);
        fputs(loom_sbuf_str(&sb), stderr);
        loom_sbuf_free(&sb);
        exit(err.code == -LOOM_EUSAGE ? 255 : a->cli.exit_error); /* 22.05: getopt's, 255 */
    }
    if (jo->help)
        salloc_print(loom_jobopt_help);
    if (jo->usage)
        salloc_print(loom_jobopt_usage);
    if (jo->version) {
        loom_cli_version();
        exit(0);
    }
}

/* The command: the arguments, else $SHELL, else the login shell. */
static void salloc_command(const salloc_t *a, loom_strv_t *cmd)
{
    for (size_t i = 0; i < a->jo.argv.n; i++)
        loom_strv_add(cmd, a->jo.argv.v[i]);
    if (cmd->n)
        return;
    const char *sh = getenv("SHELL");
    struct passwd *pw = sh && *sh ? NULL : getpwuid(getuid());
    loom_strv_add(cmd, sh && *sh ? sh : pw && pw->pw_shell ? pw->pw_shell : "/bin/sh");
}

static int salloc_spawn(salloc_t *a)
{
    loom_strv_t cmd = LOOM_STRV_INIT;
    salloc_command(a, &cmd);
    pid_t pid = fork();
    if (pid == 0) {
        /* Its own process group, given the terminal: the allocation's end
         * reaches everything it started, and a shell still reads the tty. */
        setpgid(0, 0);
        sigset_t none;
        sigemptyset(&none);
        sigprocmask(SIG_SETMASK, &none, NULL);
        signal(SIGINT, SIG_DFL);
        signal(SIGQUIT, SIG_DFL);
        signal(SIGTTOU, SIG_DFL);
        if (a->jo.chdir && chdir(a->jo.chdir) < 0)
            fprintf(stderr, "salloc: error: chdir(%s): %s\n", a->jo.chdir, strerror(errno));
        execvpe(cmd.v[0], cmd.v, a->env.v);
        /* salloc 22.05's words and status for any command it cannot run. */
        fprintf(stderr, "salloc: error: _fork_command: Unable to find command \"%s\"\n", cmd.v[0]);
        _exit(1);
    }
    loom_strv_free(&cmd);
    if (pid < 0) {
        loom_cli_error(&a->cli, "fork: %s", strerror(errno));
        return -errno;
    }
    setpgid(pid, pid); /* also in the child: whichever runs first */
    if (isatty(0))
        tcsetpgrp(0, pid);
    a->child = pid;
    return 0;
}

/* -K's signal: a number or a name ("TERM", "SIGTERM"); SIGHUP by default. */
static int salloc_kill_signal(const char *spec)
{
    static const struct {
        const char *name;
        int num;
    } names[] = {{"HUP", SIGHUP},   {"INT", SIGINT},   {"QUIT", SIGQUIT}, {"KILL", SIGKILL},
                 {"TERM", SIGTERM}, {"USR1", SIGUSR1}, {"USR2", SIGUSR2}};
    if (!spec || !*spec)
        return SIGHUP;
    if (spec[strspn(spec, "0123456789")] == '\0') {
        int v = atoi(spec);
        return v > 0 && v < NSIG ? v : SIGHUP;
    }
    if (strncasecmp(spec, "SIG", 3) == 0)
        spec += 3;
    for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
        if (strcasecmp(spec, names[i].name) == 0)
            return names[i].num;
    return SIGHUP;
}

/* The controller ended the allocation: say why and end the command. */
static void salloc_revoked(salloc_t *a, loom_job_state_t base)
{
    a->revoked = true;
    if (base == LOOM_JOB_TIMEOUT)
        loom_cli_info(&a->cli,
                      "Job %u has exceeded its time limit and its allocation has been "
                      "revoked.",
                      a->job_id);
    else
        loom_cli_info(&a->cli, "Job allocation %u has been revoked.", a->job_id);
    int sig = salloc_kill_signal(a->jo.kill_cmd);
    kill(-a->child, sig);
    kill(a->child, sig);
}

static void salloc_check_job(salloc_t *a, int64_t *waited_ms)
{
    json_t *rec = srun_job_record(&a->cli, a->job_id);
    loom_job_state_t base = rec ? loom_job_base(loom_cli_job_state(rec)) : LOOM_JOB_CANCELLED;
    json_decref(rec);
    if (base == LOOM_JOB_RUNNING || base == LOOM_JOB_SUSPENDED)
        return;
    salloc_revoked(a, base);
    *waited_ms = 0;
}

/* SIGTERM/SIGHUP to salloc: 22.05 cancels the job, which revokes the
 * allocation (the command gets -K's signal, SIGHUP by default). */
static void salloc_cancel(salloc_t *a)
{
    json_t *body = json_pack("{s:I, s:i, s:b}", "job_id", (json_int_t)a->job_id, "signal", SIGKILL,
                             "cancel", 1);
    loom_cli_call(&a->cli, "job.signal", body, NULL, NULL);
    json_decref(body);
    salloc_revoked(a, LOOM_JOB_CANCELLED);
}

/* Wait for the command; watch the allocation meanwhile. */
static void salloc_wait(salloc_t *a)
{
    int64_t since_revoke = 0;
    for (;;) {
        int st;
        pid_t pid = waitpid(a->child, &st, WNOHANG);
        if (pid == a->child) {
            a->status = st;
            return;
        }
        struct pollfd p = {.fd = a->sigfd, .events = POLLIN};
        int ready = poll(&p, 1, a->revoked ? 200 : SALLOC_POLL_MS);
        struct signalfd_siginfo si;
        while (ready > 0 && read(a->sigfd, &si, sizeof(si)) == (ssize_t)sizeof(si)) {
            if ((si.ssi_signo == SIGTERM || si.ssi_signo == SIGHUP) && !a->revoked)
                salloc_cancel(a); /* salloc ignores INT/QUIT */
        }
        if (!a->revoked) {
            salloc_check_job(a, &since_revoke);
        } else if ((since_revoke += 200) >= (int64_t)a->kill_wait * 1000 + 200) {
            kill(-a->child, SIGKILL);
            kill(a->child, SIGKILL);
        }
    }
}

static int salloc_exit_code(int status)
{
    if (WIFEXITED(status))
        return WEXITSTATUS(status);
    int sig = WTERMSIG(status);
    if (sig == SIGHUP || sig == SIGINT || sig == SIGKILL || sig == SIGQUIT)
        return 0;
    return 1; /* salloc 22.05: any other signal is a plain failure */
}

static int salloc_run(salloc_t *a)
{
    sigset_t mask;
    sigemptyset(&mask);
    int sigs[] = {SIGINT, SIGQUIT, SIGTERM, SIGHUP, SIGCHLD};
    for (size_t i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++)
        sigaddset(&mask, sigs[i]);
    sigprocmask(SIG_BLOCK, &mask, NULL);
    a->sigfd = signalfd(-1, &mask, SFD_CLOEXEC | SFD_NONBLOCK);
    char cwd[4096];
    if (getcwd(cwd, sizeof(cwd)))
        loom_jobopt_set_cwd(&a->jo, cwd);
    srun_alloc_opts_t o = {.prog = "salloc",
                           .def_name = a->jo.no_shell ? "no-shell" : "interactive",
                           .quiet = a->jo.quiet > 0,
                           .immediate = a->jo.immediate,
                           .sigfd = a->sigfd};
    if (srun_alloc_create(&a->cli, &a->jo, &o, &a->job_id, &a->job) < 0)
        return a->cli.exit_error;
    if (!a->jo.quiet)
        loom_cli_info(&a->cli, "Granted job allocation %u", a->job_id);
    if (a->jo.no_shell)
        return 0;
    loom_jobenv_export(NULL, environ, &a->env, NULL);
    srun_alloc_env(&a->cli, &a->jo, a->job, &a->env);
    loom_jobenv_set(&a->env, "SLURM_NODE_ALIASES", "(null)"); /* salloc 22.05 sets it so */
    loom_cli_working_cluster(&a->cli, &a->env);
    int code = a->cli.exit_error;
    if (salloc_spawn(a) == 0) {
        salloc_wait(a);
        code = salloc_exit_code(a->status);
        if (isatty(0))
            tcsetpgrp(0, getpgrp());
    }
    if (!a->jo.quiet && !a->revoked) /* a revoked allocation is not given back */
        loom_cli_info(&a->cli, "Relinquishing job allocation %u", a->job_id);
    srun_alloc_release(&a->cli, a->job_id, a->child ? a->status : 1 << 8);
    return code;
}

int main(int argc, char **argv)
{
    salloc_t a = {.sigfd = -1};
    signal(SIGTTOU, SIG_IGN); /* handing the terminal back and forth */
    loom_cli_init(&a.cli, "salloc");
    salloc_parse(&a, argc, argv);
    loom_cli_set_verbosity(&a.cli, a.jo.verbose, a.jo.quiet > 0);
    loom_cli_warnings(&a.cli, &a.jo.warnings, true);
    const loom_conf_t *conf = loom_cli_conf(&a.cli, NULL);
    a.kill_wait = conf ? (int)conf->kill_wait : 30;
    int code = salloc_run(&a);
    json_decref(a.job);
    loom_strv_free(&a.env);
    if (a.sigfd >= 0)
        close(a.sigfd);
    loom_jobopt_free(&a.jo);
    loom_cli_fini(&a.cli);
    return code;
}
