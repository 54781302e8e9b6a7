/*
 * srun.c - srun inside an allocation: run a job step's tasks (CLI_SPEC §2,
 * §12 column T).
 *
 * Inside a batch job (SLURM_JOB_ID set) srun asks the controller for a step
 * (step.create), starts the step's tasks that land on this node itself —
 * each with the step environment of jobenv.h — passes their output through
 * (line by line, `-l` prefixing "<rank>: "), forwards SIGINT, SIGTERM,
 * SIGUSR1 and SIGUSR2 to them, and exits with the highest task exit code
 * (128+signal for a task killed by a signal), after reporting step.complete.
 * The tasks of a step share one process group, apart from the batch
 * shell's, which is how loomstepd tells "the steps" from the batch script.
 * Outside an allocation srun says that is not supported yet (a later issue
 * creates the allocation first), as are steps with tasks on other nodes.
 *
 * Signals are taken with a signalfd (blocked while srun runs, unblocked in
 * the tasks), so there are no handlers and no globals.
 */
#include "cli/cli_common.h"

#include "common/fpattern.h"
#include "common/hostlist.h"
#include "common/jobopt.h"
#include "common/jobenv.h"
#include "common/log.h"
#include "common/proto.h"
#include "common/xalloc.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <netdb.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

/* The options srun uses, from loom_jobopt_t (strings borrowed from it). */
typedef struct srun_opts {
    long ntasks, nodes, cpus_per_task, ntasks_per_node; /* 0: not given */
    bool label, overlap, quiet;
    int verbose;
    const char *job_name, *export_env, *chdir, *output, *error, *gres, *gpus;
    uint64_t mem_per_node; /* MiB, 0: not given */
    uint32_t jobid;        /* --jobid (or SLURM_JOB_ID), 0: none */
    char **argv;           /* the command and its arguments */
} srun_opts_t;

typedef struct srun_task {
    pid_t pid;
    uint32_t rank;
    int status;
    bool exited;
    int fds[2];          /* read ends of its stdout/stderr pipes, -1 when closed/direct */
    loom_sbuf_t part[2]; /* an unfinished line of each */
} srun_task_t;

typedef struct srun {
    loom_cli_t cli;
    loom_jobopt_t jo;
    srun_opts_t o;
    uint32_t job_id, step_id;
    char *step_nodes;
    uint32_t *tasks_per_node, num_nodes, node_id, first_task, ntasks;
    uint32_t gpus[256];
    size_t ngpus;
    const char *node_name;
    char comm_host[INET6_ADDRSTRLEN];
    int comm_fd, comm_port;
    srun_task_t *tasks;
    size_t ntasks_here, running;
    loom_strv_t out_paths; /* -o/-e files opened so far (truncated once) */
    int out_fds[64];
    pid_t pgid;
    int sigfd;
    int label_width;
} srun_t;

/* ---------------------------------------------------------------- options */

static void srun_fail_opts(srun_t *s, const loom_err_t *err)
{
    loom_sbuf_t sb = LOOM_SBUF_INIT;
    loom_jobopt_err_fmt(LOOM_JOBOPT_SRUN, err, &sb);
    fputs(loom_sbuf_str(&sb), stderr);
    loom_sbuf_free(&sb);
    exit(s->cli.exit_error);
}

static void srun_print(void (*fn)(loom_jobopt_cmd_t, loom_sbuf_t *))
{
    loom_sbuf_t sb = LOOM_SBUF_INIT;
    fn(LOOM_JOBOPT_SRUN, &sb);
    fputs(loom_sbuf_str(&sb), stdout);
    loom_sbuf_free(&sb);
    exit(0);
}

/* Options from the command line and srun's input variables (jobopt.h, which
 * applies CLI_SPEC §0.8's precedence). */
static void srun_parse(srun_t *s, int argc, char **argv)
{
    loom_jobopt_t *jo = &s->jo;
    loom_err_t err = {0};
    loom_jobopt_init(jo, LOOM_JOBOPT_SRUN);
    /* getopt names the program in its messages: Slurm's say "srun". */
    char *prog = argv[0];
    argv[0] = "srun";
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
    if (jo->pty) {
        loom_cli_error(&s->cli, "--pty is not supported yet");
        exit(s->cli.exit_error);
    }
    if (jo->argv.n == 0) {
        loom_cli_error(&s->cli, "No command given to execute.");
        exit(s->cli.exit_error);
    }
    srun_opts_t *o = &s->o;
    o->ntasks = jo->ntasks;
    o->nodes = jo->min_nodes;
    o->cpus_per_task = jo->cpus_per_task;
    o->ntasks_per_node = jo->ntasks_per_node;
    /* -N on the command line without -n: one task per node, not the
     * allocation's SLURM_NTASKS (as srun does). */
    if (loom_jobopt_source(jo, "ntasks") == LOOM_JOBOPT_SRC_ENV &&
        loom_jobopt_source(jo, "nodes") == LOOM_JOBOPT_SRC_CLI)
        o->ntasks = 0;
    o->label = jo->label;
    o->overlap = jo->overlap;
    o->verbose = jo->verbose;
    o->quiet = jo->quiet > 0;
    o->job_name = jo->job_name;
    o->export_env = jo->export_env;
    o->chdir = jo->chdir;
    o->output = jo->std_out;
    o->error = jo->std_err;
    o->gres = jo->gres;
    o->gpus = jo->gpus;
    o->mem_per_node = jo->mem_per_node;
    o->jobid = jo->jobid;
    o->argv = jo->argv.v;
}

/* What the options leave unsaid, as srun does inside an allocation. */
static void srun_env_defaults(srun_t *s)
{
    srun_opts_t *o = &s->o;
    if (!o->nodes)
        o->nodes = 1;
    if (!o->ntasks)
        o->ntasks = o->ntasks_per_node ? o->ntasks_per_node * o->nodes : o->nodes;
}

/* ------------------------------------------------------------------- step */

/* tasks_per_node of the reply: [2,2] or Slurm's "2(x2)". */
static void srun_parse_layout(srun_t *s, const json_t *v)
{
    size_t n = json_array_size(v), i;
    json_t *e;
    if (json_is_array(v)) {
        s->tasks_per_node = loom_xcalloc(n ? n : 1, sizeof(uint32_t));
        json_array_foreach(v, i, e)
        {
            s->tasks_per_node[i] = (uint32_t)json_integer_value(e);
        }
        s->num_nodes = (uint32_t)n;
        return;
    }
    loom_strv_t parts = LOOM_STRV_INIT;
    loom_strv_split(&parts, json_string_value(v) ? json_string_value(v) : "", ",");
    for (i = 0; i < parts.n; i++) {
        char *end;
        unsigned long c = strtoul(parts.v[i], &end, 10), rep = 1;
        if (strncmp(end, "(x", 2) == 0)
            rep = strtoul(end + 2, NULL, 10);
        for (unsigned long k = 0; k < rep && s->num_nodes < 65536; k++) {
            s->tasks_per_node =
                loom_xreallocarray(s->tasks_per_node, s->num_nodes + 1, sizeof(uint32_t));
            s->tasks_per_node[s->num_nodes++] = (uint32_t)c;
        }
    }
    loom_strv_free(&parts);
}

/* The step's GPUs on this node: from the reply's alloc, else the job's. */
static void srun_step_gpus(srun_t *s, const json_t *reply)
{
    json_t *alloc = json_object_get(reply, "alloc"), *a, *g, *idx;
    size_t i, j, k;
    json_array_foreach(alloc, i, a)
    {
        const char *node = json_string_value(json_object_get(a, "node"));
        if (!node || strcmp(node, s->node_name) != 0)
            continue;
        json_array_foreach(json_object_get(a, "gres"), j, g)
        {
            const char *name = json_string_value(json_object_get(g, "name"));
            if (!name || strcmp(name, "gpu") != 0)
                continue;
            json_array_foreach(json_object_get(g, "index"), k, idx)
            {
                if (s->ngpus < 256)
                    s->gpus[s->ngpus++] = (uint32_t)json_integer_value(idx);
            }
        }
        return;
    }
    /* No per-step GPUs: a step gets every GPU of the job (Slurm's default). */
    const char *job = getenv("SLURM_JOB_GPUS");
    loom_strv_t v = LOOM_STRV_INIT;
    loom_strv_split(&v, job ? job : "", ",");
    for (i = 0; i < v.n && s->ngpus < 256; i++)
        s->gpus[s->ngpus++] = (uint32_t)strtoul(v.v[i], NULL, 10);
    loom_strv_free(&v);
}

static json_t *srun_step_request(const srun_t *s)
{
    const srun_opts_t *o = &s->o;
    json_t *argv = json_array();
    for (char **a = o->argv; *a; a++)
        json_array_append_new(argv, json_string(*a));
    json_t *body =
        json_pack("{s:I, s:I, s:I, s:b, s:s, s:o}", "job_id", (json_int_t)s->job_id, "ntasks",
                  (json_int_t)o->ntasks, "nodes", (json_int_t)o->nodes, "overlap", o->overlap,
                  "name", o->job_name ? o->job_name : o->argv[0], "argv", argv);
    if (o->cpus_per_task)
        json_object_set_new(body, "cpus_per_task", json_integer(o->cpus_per_task));
    if (o->ntasks_per_node)
        json_object_set_new(body, "ntasks_per_node", json_integer(o->ntasks_per_node));
    if (o->mem_per_node)
        json_object_set_new(body, "mem", json_integer((json_int_t)o->mem_per_node));
    if (o->gres)
        json_object_set_new(body, "gres", json_string(o->gres));
    if (o->gpus)
        json_object_set_new(body, "gpus", json_string(o->gpus));
    return body;
}

/* Where this node's tasks sit in the step. */
static int srun_locate(srun_t *s)
{
    loom_hostlist_t *hl = NULL;
    if (loom_hostlist_parse(s->step_nodes, &hl, NULL) < 0)
        return -LOOM_EPROTO;
    long idx = loom_hostlist_find(hl, s->node_name);
    size_t count = loom_hostlist_count(hl);
    loom_hostlist_destroy(hl);
    if (idx < 0 || (size_t)idx >= s->num_nodes || count != s->num_nodes)
        return -LOOM_EPROTO;
    s->node_id = (uint32_t)idx;
    for (uint32_t i = 0; i < s->node_id; i++)
        s->first_task += s->tasks_per_node[i];
    s->ntasks_here = s->tasks_per_node[s->node_id];
    return s->ntasks_here == s->ntasks ? 0 : -LOOM_ENOT_SUPPORTED;
}

static int srun_create_step(srun_t *s)
{
    loom_err_t err = {0};
    json_t *reply = NULL, *body = srun_step_request(s);
    int rc = loom_cli_call(&s->cli, "step.create", body, &reply, &err);
    json_decref(body);
    if (rc < 0) {
        loom_cli_error(&s->cli, "Unable to create step for job %u: %s", s->job_id, err.msg);
        json_decref(reply);
        return rc;
    }
    s->step_id = (uint32_t)json_integer_value(json_object_get(reply, "step_id"));
    const char *nodes = json_string_value(json_object_get(reply, "nodes"));
    s->step_nodes = loom_xstrdup(nodes ? nodes : s->node_name);
    srun_parse_layout(s, json_object_get(reply, "tasks_per_node"));
    s->ntasks = 0;
    for (uint32_t i = 0; i < s->num_nodes; i++)
        s->ntasks += s->tasks_per_node[i];
    srun_step_gpus(s, reply);
    json_decref(reply);
    rc = srun_locate(s);
    if (rc == -LOOM_ENOT_SUPPORTED)
        loom_cli_error(&s->cli,
                       "step %u.%u has tasks on other nodes (%s): multi-node steps "
                       "are not supported yet",
                       s->job_id, s->step_id, s->step_nodes);
    else if (rc < 0)
        loom_cli_error(&s->cli, "step %u.%u: this node (%s) is not among its nodes (%s)", s->job_id,
                       s->step_id, s->node_name, s->step_nodes);
    return rc;
}

/* A listening socket whose address the tasks get as SLURM_SRUN_COMM_*. */
static void srun_comm(srun_t *s)
{
    struct sockaddr_in a = {.sin_family = AF_INET};
    socklen_t len = sizeof(a);
    snprintf(s->comm_host, sizeof(s->comm_host), "127.0.0.1");
    s->comm_fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (s->comm_fd >= 0 && bind(s->comm_fd, (struct sockaddr *)&a, sizeof(a)) == 0 &&
        listen(s->comm_fd, 1) == 0 && getsockname(s->comm_fd, (struct sockaddr *)&a, &len) == 0)
        s->comm_port = ntohs(a.sin_port);
    char host[256];
    struct addrinfo hints = {.ai_family = AF_INET, .ai_socktype = SOCK_STREAM}, *res = NULL;
    if (gethostname(host, sizeof(host)) == 0 && getaddrinfo(host, NULL, &hints, &res) == 0) {
        inet_ntop(AF_INET, &((struct sockaddr_in *)res->ai_addr)->sin_addr, s->comm_host,
                  sizeof(s->comm_host));
        freeaddrinfo(res);
    }
}

/* ------------------------------------------------------------------ tasks */

static void srun_task_env(const srun_t *s, uint32_t local, loom_strv_t *env)
{
    loom_jobenv_step_t step = {
        .step_id = s->step_id,
        .nodelist = s->step_nodes,
        .num_nodes = s->num_nodes,
        .tasks_per_node = s->tasks_per_node,
        .ntasks = s->ntasks,
        .cpus_per_task = (uint32_t)s->o.cpus_per_task,
        .gpus = s->gpus,
        .ngpus = s->ngpus,
        .comm_host = s->comm_host,
        .comm_port = s->comm_port,
        .node_name = s->node_name,
        .node_id = s->node_id,
        .first_task = s->first_task,
    };
    loom_jobenv_step(&step, local, (long)getpid(), env);
}

/* A -o/-e file: truncated when first opened, shared (dup) by later tasks. */
static int srun_open_out(srun_t *s, const char *path)
{
    long i = loom_strv_find(&s->out_paths, path);
    if (i >= 0)
        return fcntl(s->out_fds[i], F_DUPFD_CLOEXEC, 3);
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_APPEND | O_CLOEXEC, 0644);
    if (fd >= 0 && s->out_paths.n < 64) {
        loom_strv_add(&s->out_paths, path);
        s->out_fds[s->out_paths.n - 1] = fcntl(fd, F_DUPFD_CLOEXEC, 3);
    }
    return fd;
}

/* stdout/stderr of a task: -o/-e files (per-task patterns), else pipes to srun. */
static int srun_task_io(srun_t *s, srun_task_t *t, int out[2], int err[2])
{
    const char *pat[2] = {s->o.output, s->o.error ? s->o.error : s->o.output};
    int *ends[2] = {out, err};
    for (int k = 0; k < 2; k++) {
        if (pat[k]) {
            loom_fpattern_ctx_t fp;
            loom_fpattern_ctx_init(&fp);
            fp.job_id = s->job_id;
            fp.step_id = s->step_id;
            fp.task_id = t->rank;
            fp.node_id = s->node_id;
            fp.node_name = s->node_name;
            fp.job_name = getenv("SLURM_JOB_NAME");
            fp.user = getenv("USER");
            loom_sbuf_t path = LOOM_SBUF_INIT;
            loom_fpattern_expand(pat[k], &fp, &path);
            ends[k][0] = -1;
            ends[k][1] = srun_open_out(s, loom_sbuf_str(&path));
            if (ends[k][1] < 0)
                loom_cli_error(&s->cli, "Could not open %s file %s: %s", k ? "stderr" : "stdout",
                               loom_sbuf_str(&path), strerror(errno));
            loom_sbuf_free(&path);
            if (ends[k][1] < 0)
                return -1;
        } else if (pipe2(ends[k], O_CLOEXEC) < 0) {
            return -1;
        }
    }
    return 0;
}

/* execve with the command looked up in the task's own PATH, as slurmstepd
 * does (so --export=NONE leaves only absolute paths working). */
static void srun_exec(char **argv, const loom_strv_t *env)
{
    const char *path = loom_jobenv_get(env, "PATH");
    int saved = ENOENT;
    if (strchr(argv[0], '/') || !path) {
        execve(argv[0], argv, env->v);
        return;
    }
    loom_strv_t dirs = LOOM_STRV_INIT;
    loom_strv_split(&dirs, path, ":");
    for (size_t i = 0; i < dirs.n; i++) {
        loom_sbuf_t full = LOOM_SBUF_INIT;
        loom_sbuf_addf(&full, "%s/%s", dirs.v[i], argv[0]);
        execve(loom_sbuf_str(&full), argv, env->v);
        if (errno != ENOENT && errno != ENOTDIR)
            saved = errno;
        loom_sbuf_free(&full);
    }
    loom_strv_free(&dirs);
    errno = saved;
}

static void srun_child(srun_t *s, uint32_t local, int out[2], int err[2])
{
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, NULL);
    setpgid(0, s->pgid);
    if (local != 0) { /* stdin goes to the first task only */
        int null = open("/dev/null", O_RDONLY);
        if (null >= 0)
            dup2(null, 0);
    }
    if (dup2(out[1], 1) < 0 || dup2(err[1], 2) < 0)
        _exit(127);
    loom_strv_t env = LOOM_STRV_INIT;
    if (loom_jobenv_export(s->o.export_env, environ, &env, NULL) < 0)
        loom_jobenv_export(NULL, environ, &env, NULL);
    srun_task_env(s, local, &env);
    mode_t mask = umask(022);
    umask(mask);
    loom_jobenv_setf(&env, "SLURM_UMASK", "%04o", (unsigned)mask);
    if (s->o.chdir && chdir(s->o.chdir) < 0)
        dprintf(2, "slurmstepd-%s: error: couldn't chdir to `%s': %s: going to /tmp instead\n",
                s->node_name, s->o.chdir, strerror(errno));
    srun_exec(s->o.argv, &env);
    dprintf(2, "slurmstepd-%s: error: execve(): %s: %s\n", s->node_name, s->o.argv[0],
            strerror(errno));
    _exit(errno == ENOENT ? 2 : 126);
}

static int srun_start(srun_t *s)
{
    s->tasks = loom_xcalloc(s->ntasks_here ? s->ntasks_here : 1, sizeof(*s->tasks));
    for (uint32_t i = 0; i < s->ntasks_here; i++) {
        srun_task_t *t = &s->tasks[i];
        int out[2] = {-1, -1}, err[2] = {-1, -1};
        t->rank = s->first_task + i;
        if (srun_task_io(s, t, out, err) < 0)
            return -1;
        pid_t pid = fork();
        if (pid == 0)
            srun_child(s, i, out, err);
        if (pid < 0) {
            loom_cli_error(&s->cli, "fork: %s", strerror(errno));
            return -1;
        }
        if (!s->pgid)
            s->pgid = pid;
        setpgid(pid, s->pgid); /* also in the child: whichever runs first */
        t->pid = pid;
        t->fds[0] = out[0];
        t->fds[1] = err[0];
        close(out[1]);
        close(err[1]);
        s->running++;
    }
    return 0;
}

/* --------------------------------------------------------------- the loop */

static void srun_emit(const srun_t *s, const srun_task_t *t, int k, const char *line, size_t n)
{
    loom_sbuf_t sb = LOOM_SBUF_INIT;
    if (s->o.label)
        loom_sbuf_addf(&sb, "%*u: ", s->label_width, (unsigned)t->rank);
    loom_sbuf_addn(&sb, line, n);
    const char *p = sb.buf;
    size_t left = sb.len;
    while (left > 0) {
        ssize_t w = write(k ? 2 : 1, p, left);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            break;
        p += w;
        left -= (size_t)w;
    }
    loom_sbuf_free(&sb);
}

/* Read from a task pipe; emit whole lines. Returns false at EOF. */
static bool srun_read(const srun_t *s, srun_task_t *t, int k)
{
    char buf[65536];
    ssize_t n = read(t->fds[k], buf, sizeof(buf));
    if (n < 0 && (errno == EINTR || errno == EAGAIN))
        return true;
    loom_sbuf_t *part = &t->part[k];
    if (n <= 0) {
        if (part->len)
            srun_emit(s, t, k, part->buf, part->len);
        loom_sbuf_free(part);
        close(t->fds[k]);
        t->fds[k] = -1;
        return false;
    }
    loom_sbuf_addn(part, buf, (size_t)n);
    char *nl = memrchr(part->buf, '\n', part->len);
    if (nl) {
        size_t whole = (size_t)(nl - part->buf) + 1;
        /* Unlabelled output can go as one block; labelled needs a prefix per line. */
        for (size_t off = 0; off < whole;) {
            char *e = s->o.label ? memchr(part->buf + off, '\n', whole - off) : nl;
            size_t len = (size_t)(e - (part->buf + off)) + 1;
            srun_emit(s, t, k, part->buf + off, len);
            off += len;
        }
        memmove(part->buf, part->buf + whole, part->len - whole);
        loom_sbuf_truncate(part, part->len - whole);
    }
    return true;
}

static void srun_reap(srun_t *s)
{
    int status;
    pid_t pid;
    while ((pid = waitpid(-1, &status, WNOHANG)) > 0) {
        for (size_t i = 0; i < s->ntasks_here; i++) {
            if (s->tasks[i].pid == pid && !s->tasks[i].exited) {
                s->tasks[i].exited = true;
                s->tasks[i].status = status;
                s->running--;
            }
        }
    }
}

static void srun_signal(srun_t *s)
{
    struct signalfd_siginfo si;
    while (read(s->sigfd, &si, sizeof(si)) == (ssize_t)sizeof(si)) {
        if (si.ssi_signo == SIGCHLD)
            srun_reap(s);
        else if (s->pgid && s->running)
            killpg(s->pgid, (int)si.ssi_signo);
    }
}

static void srun_close_pipes(srun_t *s)
{
    for (size_t i = 0; i < s->ntasks_here; i++)
        for (int k = 0; k < 2; k++)
            if (s->tasks[i].fds[k] >= 0) {
                close(s->tasks[i].fds[k]);
                s->tasks[i].fds[k] = -1;
            }
}

static void srun_loop(srun_t *s)
{
    size_t max = 1 + 2 * s->ntasks_here;
    struct pollfd *p = loom_xcalloc(max, sizeof(*p));
    srun_task_t **owner = loom_xcalloc(max, sizeof(*owner));
    for (;;) {
        size_t n = 0;
        p[n++] = (struct pollfd){.fd = s->sigfd, .events = POLLIN};
        for (size_t i = 0; i < s->ntasks_here; i++)
            for (int k = 0; k < 2; k++)
                if (s->tasks[i].fds[k] >= 0) {
                    owner[n] = &s->tasks[i];
                    p[n++] = (struct pollfd){.fd = s->tasks[i].fds[k], .events = POLLIN};
                }
        if (n == 1 && s->running == 0)
            break;
        int ready = poll(p, n, s->running ? -1 : 1000);
        if (ready < 0 && errno != EINTR)
            break;
        if (ready == 0) {
            /* The tasks are done but something they started holds their
             * output open: end the step's leftovers, as Slurm does. */
            killpg(s->pgid, SIGKILL);
            srun_close_pipes(s);
            break;
        }
        if (p[0].revents)
            srun_signal(s);
        for (size_t j = 1; j < n; j++)
            if (p[j].revents)
                srun_read(s, owner[j], p[j].fd == owner[j]->fds[0] ? 0 : 1);
    }
    free(p);
    free(owner);
}

/* What srun reports for a task status; "" for a clean exit. */
static void srun_status_text(int status, loom_sbuf_t *out)
{
    if (WIFEXITED(status) && WEXITSTATUS(status))
        loom_sbuf_addf(out, "Exited with exit code %d", WEXITSTATUS(status));
    else if (WIFSIGNALED(status))
        loom_sbuf_addf(out, "%s%s", strsignal(WTERMSIG(status)),
                       WCOREDUMP(status) ? " (core dumped)" : "");
}

/* Slurm's lines: tasks with the same status share one, "tasks 0-3,7: ...". */
static void srun_report(srun_t *s)
{
    bool *said = loom_xcalloc(s->ntasks_here ? s->ntasks_here : 1, sizeof(*said));
    for (size_t i = 0; i < s->ntasks_here; i++) {
        if (said[i])
            continue;
        loom_sbuf_t text = LOOM_SBUF_INIT, ranks = LOOM_SBUF_INIT;
        srun_status_text(s->tasks[i].status, &text);
        size_t n = 0;
        for (size_t k = i; k < s->ntasks_here && text.len; k++) {
            if (said[k] || s->tasks[k].status != s->tasks[i].status)
                continue;
            size_t end = k; /* a run of consecutive ranks */
            while (end + 1 < s->ntasks_here && !said[end + 1] &&
                   s->tasks[end + 1].status == s->tasks[i].status)
                said[end++] = true;
            said[end] = true;
            loom_sbuf_addf(&ranks, "%s%u", n ? "," : "", (unsigned)s->tasks[k].rank);
            if (end > k)
                loom_sbuf_addf(&ranks, "-%u", (unsigned)s->tasks[end].rank);
            n += end - k + 1;
            k = end;
        }
        if (text.len)
            loom_cli_error(&s->cli, "%s: task%s %s: %s", s->node_name, n > 1 ? "s" : "",
                           loom_sbuf_str(&ranks), loom_sbuf_str(&text));
        loom_sbuf_free(&text);
        loom_sbuf_free(&ranks);
    }
    free(said);
}

/* Highest task exit code, 128+signal for a signalled task. */
static int srun_result(srun_t *s, int *status)
{
    int rc = 0;
    bool signalled = false;
    *status = 0;
    srun_report(s);
    for (size_t i = 0; i < s->ntasks_here; i++) {
        int st = s->tasks[i].status, code = 0;
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
    if (signalled)
        loom_cli_info(&s->cli, "Force Terminated StepId=%u.%u", s->job_id, s->step_id);
    return rc;
}

static void srun_verbose_line(const srun_t *s)
{
    if (s->o.verbose < 1)
        return;
    const char *cpus = getenv("SLURM_JOB_CPUS_PER_NODE");
    loom_cli_info(&s->cli, "jobid %u: nodes(%u):`%s', cpu counts: %s%s", s->job_id,
                  (unsigned)s->num_nodes, s->step_nodes, cpus ? cpus : "1",
                  cpus && strchr(cpus, '(') ? "" : "(x1)");
}

static int srun_run(srun_t *s)
{
    sigset_t mask;
    sigemptyset(&mask);
    int sigs[] = {SIGCHLD, SIGINT, SIGTERM, SIGUSR1, SIGUSR2, SIGHUP, SIGQUIT};
    for (size_t i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++)
        sigaddset(&mask, sigs[i]);
    sigprocmask(SIG_BLOCK, &mask, NULL);
    s->sigfd = signalfd(-1, &mask, SFD_CLOEXEC | SFD_NONBLOCK);
    for (uint32_t w = s->ntasks > 1 ? s->ntasks - 1 : 0; w > 0; w /= 10)
        s->label_width++;
    if (s->label_width == 0)
        s->label_width = 1;
    srun_comm(s);
    srun_verbose_line(s);
    int rc = srun_start(s);
    srun_loop(s);
    int status = 0;
    int code = srun_result(s, &status);
    json_t *body = json_pack("{s:I, s:I, s:i}", "job_id", (json_int_t)s->job_id, "step_id",
                             (json_int_t)s->step_id, "exit_code", status);
    loom_err_t err = {0};
    if (loom_cli_call(&s->cli, "step.complete", body, NULL, &err) < 0)
        loom_debug("step.complete: %s", err.msg);
    json_decref(body);
    return rc < 0 ? s->cli.exit_error : code;
}

static void srun_free(srun_t *s)
{
    for (size_t i = 0; s->tasks && i < s->ntasks_here; i++)
        for (int k = 0; k < 2; k++) {
            if (s->tasks[i].fds[k] >= 0)
                close(s->tasks[i].fds[k]);
            loom_sbuf_free(&s->tasks[i].part[k]);
        }
    for (size_t i = 0; i < s->out_paths.n; i++)
        close(s->out_fds[i]);
    loom_strv_free(&s->out_paths);
    free(s->tasks);
    free(s->tasks_per_node);
    free(s->step_nodes);
    if (s->comm_fd >= 0)
        close(s->comm_fd);
    if (s->sigfd >= 0)
        close(s->sigfd);
    loom_jobopt_free(&s->jo);
    loom_cli_fini(&s->cli);
}

int main(int argc, char **argv)
{
    srun_t s = {.comm_fd = -1, .sigfd = -1};
    loom_cli_init(&s.cli, "srun");
    srun_parse(&s, argc, argv);
    loom_cli_set_verbosity(&s.cli, s.o.verbose, s.o.quiet);
    if (!s.o.jobid) {
        loom_cli_error(&s.cli, "srun outside of a job allocation is not supported yet; run it "
                               "inside an sbatch script");
        srun_free(&s);
        return s.cli.exit_error;
    }
    s.job_id = s.o.jobid;
    s.node_name = getenv("SLURMD_NODENAME");
    if (!s.node_name || !*s.node_name) {
        loom_cli_error(&s.cli, "SLURMD_NODENAME is not set: srun must run on a node of job %u",
                       s.job_id);
        srun_free(&s);
        return s.cli.exit_error;
    }
    srun_env_defaults(&s);
    int rc = srun_create_step(&s) < 0 ? s.cli.exit_error : srun_run(&s);
    int exit_error = s.cli.exit_error;
    srun_free(&s);
    return rc < 0 ? exit_error : rc;
}
