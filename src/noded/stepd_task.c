/*
 * stepd_task.c - starting a step's tasks on one node: environment (CLI_SPEC
 * §12 column T), stdio (pipes to the supervisor, per-task files from the
 * -o/-e/-i patterns of §1.1, a pty for --pty), CPU binding (--cpu-bind
 * none|cores|threads|rank|map_cpu|mask_cpu), GPU binding (--gpu-bind
 * closest|single|map_gpu|mask_gpu, --gpus-per-task), PMI-2 sockets; and the
 * tasks' usage for sstat.
 *
 * As in stepd_exec.c, files are opened with the user's effective ids and
 * everything the child needs is prepared before fork; the child only makes
 * system calls, drops its ids for good and execs. A task that cannot exec
 * writes slurmstepd's line to its stderr and exits with errno as its code
 * (Slurm's behaviour: "execve(): x: No such file or directory", code 2).
 */
#include "noded/stepd_step.h"

#include "common/fpattern.h"
#include "common/jobenv.h"
#include "common/log.h"
#include "common/rlimits.h"
#include "common/multiprog.h"
#include "common/stepio.h"
#include "common/usage.h"
#include "common/xalloc.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <pty.h>
#include <pwd.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <termios.h>
#include <unistd.h>

#define TASK_MAX_GROUPS 1024
#define TASK_MAX_GPUS   256

/* What every child of the step shares. */
typedef struct task_common {
    bool drop;
    gid_t groups[TASK_MAX_GROUPS];
    int ngroups;
    const char *cwd;
    mode_t umask;
    uint32_t cpus[4096]; /* the step's CPU ids on this node */
    size_t ncpus;
    uint32_t gpus[TASK_MAX_GPUS];
    size_t ngpus;
    uint32_t *tasks_per_node;
    uint32_t nnodes;
    char *mapping; /* PMI_process_mapping */
    loom_strv_t out_paths;
    int out_fds[64];
} task_common_t;

/* What one child needs. */
typedef struct task_child {
    loom_strv_t argv, env;
    int fds[3];  /* stdin, stdout, stderr for the child */
    int keep_fd; /* the PMI fd the child keeps, -1 */
    bool pty;    /* fds are a pty slave: new session, controlling tty */
    bool bind;
    bool bind_verbose; /* print slurmstepd's cpu-bind line */
    cpu_set_t mask;
    uint32_t rank, local;
    char *pid_slot;
    loom_rlimit_set_t rlimits; /* srun's shell's (common/rlimits.h) */
} task_child_t;

static const char *task_jstr(const json_t *o, const char *key)
{
    const char *v = json_string_value(json_object_get(o, key));
    return v && *v ? v : NULL;
}

static size_t task_u32s(const json_t *arr, uint32_t *out, size_t max)
{
    size_t i, n = 0;
    json_t *v;
    json_array_foreach(arr, i, v)
    {
        if (n < max)
            out[n++] = (uint32_t)json_integer_value(v);
    }
    return n;
}

/* --------------------------------------------------------------- identity */

static int task_ids_user(const loom_step_t *s, const task_common_t *c)
{
    if (!c->drop)
        return 0;
    if (setgroups((size_t)c->ngroups, c->groups) < 0 || setegid(s->gid) < 0 || seteuid(s->uid) < 0)
        return -errno;
    return 0;
}

static void task_ids_back(const task_common_t *c)
{
    if (!c->drop)
        return;
    if (seteuid(0) < 0 || setegid(0) < 0 || setgroups(0, NULL) < 0)
        abort(); /* cannot regain root: nothing sane is left to do */
}

static void task_common_init(loom_step_t *s, task_common_t *c)
{
    const json_t *b = s->body;
    c->drop = geteuid() == 0;
    if (c->drop) {
        struct passwd *pw = getpwuid(s->uid);
        c->ngroups = TASK_MAX_GROUPS;
        if (!pw || getgrouplist(pw->pw_name, s->gid, c->groups, &c->ngroups) < 0) {
            c->groups[0] = s->gid;
            c->ngroups = 1;
        }
    }
    c->cwd = task_jstr(b, "cwd");
    json_int_t um = json_integer_value(json_object_get(b, "umask"));
    c->umask = um > 0 && um <= 0777 ? (mode_t)um : 022;
    c->ncpus = task_u32s(json_object_get(b, "cpus"), c->cpus, 4096);
    c->ngpus = task_u32s(json_object_get(b, "gpus"), c->gpus, TASK_MAX_GPUS);
    const json_t *tpn = json_object_get(b, "tasks_per_node");
    c->nnodes = (uint32_t)json_array_size(tpn);
    c->tasks_per_node = loom_xcalloc(c->nnodes ? c->nnodes : 1, sizeof(uint32_t));
    task_u32s(tpn, c->tasks_per_node, c->nnodes);
    if (s->pmi)
        c->mapping = loom_pmi2_mapping(b);
}

static void task_common_free(task_common_t *c)
{
    for (size_t i = 0; i < c->out_paths.n; i++)
        close(c->out_fds[i]);
    loom_strv_free(&c->out_paths);
    free(c->tasks_per_node);
    free(c->mapping);
}

/* ------------------------------------------------------------- binding */

/* "verbose,cores" -> cores (and the verbose flag). */
static const char *task_bind_kind(const char *spec, bool *verbose)
{
    *verbose = false;
    if (!spec)
        return "none";
    if (strncmp(spec, "verbose,", 8) == 0) {
        *verbose = true;
        return spec + 8;
    }
    if (strcmp(spec, "verbose") == 0) {
        *verbose = true;
        return "none";
    }
    return spec;
}

/* The n-th item of a comma list, cycling ("map_cpu:0,2" item 3 is "2"). */
static unsigned long long task_list_item(const char *list, uint32_t n, int base)
{
    loom_strv_t v = LOOM_STRV_INIT;
    loom_strv_split(&v, list, ",");
    unsigned long long x = 0;
    if (v.n) {
        const char *item = v.v[n % v.n];
        char *star = strchr(item, '*'); /* "0*2": the same value twice */
        (void)star;
        x = strtoull(item, NULL, base);
    }
    loom_strv_free(&v);
    return x;
}

static void task_cpu_mask(const loom_step_t *s, const task_common_t *c, uint32_t local,
                          task_child_t *ch)
{
    bool verbose;
    const char *kind = task_bind_kind(task_jstr(s->body, "cpu_bind"), &verbose);
    uint32_t cpt = (uint32_t)json_integer_value(json_object_get(s->body, "cpus_per_task"));
    if (cpt == 0)
        cpt = 1;
    CPU_ZERO(&ch->mask);
    if (strncmp(kind, "map_cpu:", 8) == 0) {
        CPU_SET((int)task_list_item(kind + 8, local, 0), &ch->mask);
    } else if (strncmp(kind, "mask_cpu:", 9) == 0) {
        unsigned long long m = task_list_item(kind + 9, local, 16);
        for (int b = 0; b < 64; b++)
            if (m & (1ull << b))
                CPU_SET(b, &ch->mask);
    } else if (strcmp(kind, "cores") == 0 || strcmp(kind, "threads") == 0 ||
               strcmp(kind, "rank") == 0 || strcmp(kind, "sockets") == 0 ||
               strcmp(kind, "ldoms") == 0) {
        for (uint32_t k = 0; k < cpt && c->ncpus; k++)
            CPU_SET((int)c->cpus[(local * cpt + k) % c->ncpus], &ch->mask);
    } else {
        return; /* none */
    }
    ch->bind = CPU_COUNT(&ch->mask) > 0;
    ch->bind_verbose = verbose && ch->bind;
}

/* The task's GPUs (device indexes) under --gpu-bind / --gpus-per-task. */
static size_t task_gpus(const loom_step_t *s, const task_common_t *c, uint32_t local, uint32_t *out)
{
    bool verbose;
    const char *kind = task_bind_kind(task_jstr(s->body, "gpu_bind"), &verbose);
    uint32_t per_task = (uint32_t)json_integer_value(json_object_get(s->body, "gpus_per_task"));
    size_t n = 0;
    if (c->ngpus == 0)
        return 0;
    if (strncmp(kind, "single:", 7) == 0) {
        unsigned long per = strtoul(kind + 7, NULL, 10);
        out[n++] = c->gpus[(local / (per ? per : 1)) % c->ngpus];
    } else if (strncmp(kind, "map_gpu:", 8) == 0) {
        unsigned long long id = task_list_item(kind + 8, local, 0);
        out[n++] = id < c->ngpus ? c->gpus[id] : (uint32_t)id;
    } else if (strncmp(kind, "mask_gpu:", 9) == 0) {
        unsigned long long m = task_list_item(kind + 9, local, 16);
        for (size_t b = 0; b < c->ngpus && b < 64; b++)
            if (m & (1ull << b))
                out[n++] = c->gpus[b];
    } else if (per_task && strcmp(kind, "none") != 0) {
        for (uint32_t k = 0; k < per_task; k++)
            out[n++] = c->gpus[(local * per_task + k) % c->ngpus];
    } else {
        /* closest: every GPU of the step is equally close without topology. */
        memcpy(out, c->gpus, c->ngpus * sizeof(uint32_t));
        n = c->ngpus;
    }
    return n;
}

/* ---------------------------------------------------------- environment */

/* Device indexes to their places in the step's GPU list. */
static void task_local_gpus(const task_common_t *c, uint32_t *tg, size_t ntg)
{
    for (size_t k = 0; k < ntg; k++)
        for (uint32_t j = 0; j < c->ngpus; j++)
            if (c->gpus[j] == tg[k]) {
                tg[k] = j;
                break;
            }
}

static void task_env(loom_step_t *s, const task_common_t *c, uint32_t local, task_child_t *ch)
{
    const json_t *b = s->body;
    size_t i;
    json_t *v;
    json_array_foreach(json_object_get(b, "env"), i, v)
    {
        if (json_is_string(v))
            loom_strv_add(&ch->env, json_string_value(v));
    }
    uint32_t gtids[4096];
    size_t ngt = 0;
    for (uint32_t k = 0; k < s->ntasks && ngt < 4096; k++)
        gtids[ngt++] = s->tasks[k].rank;
    loom_jobenv_step_t st = {
        .step_id = s->step_id,
        .nodelist = task_jstr(b, "nodes"),
        .num_nodes = c->nnodes,
        .tasks_per_node = c->tasks_per_node,
        .ntasks = s->step_ntasks,
        .cpus_per_task = (uint32_t)json_integer_value(json_object_get(b, "cpus_per_task_req")),
        .gpus = c->gpus,
        .ngpus = c->ngpus,
        .gpu_env = (unsigned)json_integer_value(json_object_get(s->node, "gpu_env")),
        .comm_host = task_jstr(json_object_get(b, "io"), "host"),
        .comm_port = (int)json_integer_value(json_object_get(json_object_get(b, "io"), "port")),
        .node_name = s->node_name,
        .node_id = s->node_id,
        .gtids = s->ntasks <= 4096 ? gtids : NULL,
        .distribution = task_jstr(b, "distribution"),
        .no_dist_default = json_is_false(json_object_get(b, "dist_env")),
        .cpus_on_node = (uint32_t)c->ncpus,
    };
    loom_jobenv_step(&st, local, 0, &ch->env);
    uint32_t tg[TASK_MAX_GPUS];
    size_t ntg = task_gpus(s, c, local, tg);
    if (s->devcg) /* confined: the tasks see only the step's GPUs, numbered from 0 (Slurm's
                     ConstrainDevices) */
        task_local_gpus(c, tg, ntg);
    if (ntg && (ntg != c->ngpus || s->devcg))
        loom_jobenv_gpu_vars(&ch->env, tg, ntg, st.gpu_env);
    const char *conf = task_jstr(s->node, "conf");
    if (conf)
        loom_jobenv_set(&ch->env, "SLURM_CONF", conf);
    /* slurmstepd's own additions. */
    loom_jobenv_setf(&ch->env, "SLURM_JOB_UID", "%u", (unsigned)s->uid);
    loom_jobenv_set(&ch->env, "SLURM_JOB_USER", s->user);
    loom_jobenv_setf(&ch->env, "SLURM_JOB_GID", "%u", (unsigned)s->gid);
    if (!loom_jobenv_get(&ch->env, "SLURM_PRIO_PROCESS"))
        loom_jobenv_set(&ch->env, "SLURM_PRIO_PROCESS", "0");
    if (s->pmi) {
        loom_jobenv_setf(&ch->env, "PMI_RANK", "%u", (unsigned)s->tasks[local].rank);
        loom_jobenv_setf(&ch->env, "PMI_SIZE", "%u", (unsigned)s->step_ntasks);
        loom_jobenv_setf(&ch->env, "PMI_JOBID", "%u.%u", (unsigned)s->job_id, (unsigned)s->step_id);
        loom_jobenv_set(&ch->env, "PMI_process_mapping", c->mapping);
    }
    /* A slot at the end that the child fills with its pid. */
    loom_jobenv_unset(&ch->env, "SLURM_TASK_PID");
    loom_jobenv_set(&ch->env, "SLURM_TASK_PID", "0000000000000000");
    ch->pid_slot = ch->env.v[ch->env.n - 1];
}

static void task_argv(loom_step_t *s, uint32_t local, task_child_t *ch, loom_err_t *err)
{
    const char *mp = task_jstr(s->body, "multi_prog");
    if (mp && loom_multiprog_argv(mp, s->step_ntasks, s->tasks[local].rank, &ch->argv, err) == 0)
        return;
    size_t i;
    json_t *v;
    json_array_foreach(json_object_get(s->body, "argv"), i, v)
    {
        if (json_is_string(v))
            loom_strv_add(&ch->argv, json_string_value(v));
    }
}

/* ---------------------------------------------------------------- stdio */

static void task_fpattern(const loom_step_t *s, const task_common_t *c, uint32_t local,
                          loom_fpattern_ctx_t *fp)
{
    loom_fpattern_ctx_init(fp);
    fp->job_id = s->job_id;
    fp->step_id = s->step_id;
    fp->task_id = s->tasks[local].rank;
    fp->node_id = s->node_id;
    fp->node_name = s->node_name;
    fp->job_name = task_jstr(s->body, "job_name");
    fp->user = s->user;
    fp->work_dir = c->cwd;
    uint32_t a = (uint32_t)json_integer_value(json_object_get(s->body, "array_job_id"));
    if (a) {
        fp->array_job_id = a;
        fp->array_task_id = (uint32_t)json_integer_value(json_object_get(s->body, "array_task_id"));
    }
}

/* An output file: truncated when first opened by this node, shared after. */
static int task_open_out(task_common_t *c, const char *path, loom_err_t *err, const char *what)
{
    long i = loom_strv_find(&c->out_paths, path);
    if (i >= 0)
        return fcntl(c->out_fds[i], F_DUPFD_CLOEXEC, 3);
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_APPEND | O_CLOEXEC, 0666);
    if (fd < 0)
        return loom_errf(err, -errno, "Could not open %s file %s: %s", what, path, strerror(errno));
    if (c->out_paths.n < 64) {
        loom_strv_add(&c->out_paths, path);
        c->out_fds[c->out_paths.n - 1] = fcntl(fd, F_DUPFD_CLOEXEC, 3);
    }
    return fd;
}

/* Is this task's stdin fed from srun? ("all", or its rank) */
static bool task_gets_stdin(const loom_step_t *s, uint32_t rank)
{
    const char *in = task_jstr(s->body, "input");
    if (!in || strcmp(in, "all") == 0)
        return true;
    if (strcmp(in, "none") == 0)
        return false;
    return strtoul(in, NULL, 10) == rank;
}

static int task_pipe(int fds[2])
{
    return pipe2(fds, O_CLOEXEC) < 0 ? -errno : 0;
}

/* The files a task writes to or reads from (patterns), as the user. */
static int task_files(loom_step_t *s, task_common_t *c, uint32_t local, task_child_t *ch,
                      loom_err_t *err)
{
    const char *pat[3] = {task_jstr(s->body, "std_in"), task_jstr(s->body, "std_out"),
                          task_jstr(s->body, "std_err")};
    if (!pat[2])
        pat[2] = pat[1]; /* srun: -o alone takes stderr too */
    loom_fpattern_ctx_t fp;
    task_fpattern(s, c, local, &fp);
    int rc = task_ids_user(s, c);
    if (rc < 0)
        return loom_errf(err, rc, "cannot switch to uid %u: %s", (unsigned)s->uid, strerror(-rc));
    mode_t old = umask(c->umask);
    static const char *const what[] = {"stdin", "stdout", "stderr"};
    for (int k = 0; k < 3 && rc >= 0; k++) {
        if (!pat[k])
            continue;
        loom_sbuf_t path = LOOM_SBUF_INIT;
        loom_fpattern_expand(pat[k], &fp, &path);
        if (k == 0) {
            ch->fds[0] = open(loom_sbuf_str(&path), O_RDONLY | O_CLOEXEC);
            if (ch->fds[0] < 0)
                rc = loom_errf(err, -errno, "Could not open stdin file %s: %s",
                               loom_sbuf_str(&path), strerror(errno));
        } else {
            rc = ch->fds[k] = task_open_out(c, loom_sbuf_str(&path), err, what[k]);
        }
        loom_sbuf_free(&path);
    }
    umask(old);
    task_ids_back(c);
    return rc < 0 ? rc : 0;
}

static void task_reader_start(loom_step_t *s, loom_step_task_t *t, int k, int fd);

/* --pty: the first task of the step gets a terminal; its output is one stream. */
static int task_pty(loom_step_t *s, loom_step_task_t *t, task_child_t *ch, loom_err_t *err)
{
    int master, slave;
    if (openpty(&master, &slave, NULL, NULL, NULL) < 0)
        return loom_errf(err, -errno, "openpty: %s", strerror(errno));
    fcntl(master, F_SETFD, FD_CLOEXEC);
    fcntl(slave, F_SETFD, FD_CLOEXEC);
    if (s->uid != geteuid() && geteuid() == 0 && fchown(slave, s->uid, (gid_t)-1) < 0)
        loom_verbose("step %u.%u: cannot give the pty to uid %u", s->job_id, s->step_id,
                     (unsigned)s->uid);
    ch->fds[0] = slave;
    ch->fds[1] = dup(slave);
    ch->fds[2] = dup(slave);
    ch->pty = true;
    t->pty_master = master;
    task_reader_start(s, t, 0, dup(master));
    uv_pipe_init(s->loop, &t->in, 0);
    t->in.data = t;
    uv_pipe_open(&t->in, master);
    t->in_open = true;
    return 0;
}

/* Pipes for whatever the patterns left to the supervisor. */
static int task_pipes(loom_step_t *s, loom_step_task_t *t, task_child_t *ch, loom_err_t *err)
{
    int p[2];
    for (int k = 1; k < 3; k++) {
        if (ch->fds[k] >= 0)
            continue;
        if (task_pipe(p) < 0)
            return loom_errf(err, -errno, "pipe: %s", strerror(errno));
        ch->fds[k] = p[1];
        task_reader_start(s, t, k - 1, p[0]);
    }
    if (ch->fds[0] >= 0)
        return 0;
    if (!task_gets_stdin(s, t->rank)) {
        ch->fds[0] = open("/dev/null", O_RDONLY | O_CLOEXEC);
        return ch->fds[0] < 0 ? loom_errf(err, -errno, "/dev/null: %s", strerror(errno)) : 0;
    }
    if (task_pipe(p) < 0)
        return loom_errf(err, -errno, "pipe: %s", strerror(errno));
    ch->fds[0] = p[0];
    uv_pipe_init(s->loop, &t->in, 0);
    t->in.data = t;
    uv_pipe_open(&t->in, p[1]);
    t->in_open = true;
    return 0;
}

/* ---------------------------------------------------------------- output */

static void task_alloc(uv_handle_t *h, size_t suggested, uv_buf_t *buf)
{
    static char scratch[65536]; /* single-threaded: each read is sent on at once */
    buf->base = scratch;
    buf->len = sizeof(scratch);
}

static void task_reader_closed(uv_handle_t *h)
{
    loom_step_task_t *t = h->data;
    loom_step_task_check(t->step, t);
}

static void task_read(uv_stream_t *st, ssize_t n, const uv_buf_t *buf)
{
    loom_step_task_t *t = st->data;
    int k = st == (uv_stream_t *)&t->out[0] ? 0 : 1;
    if (n > 0) {
        loom_step_send(t->step, k ? LOOM_STEPIO_STDERR : LOOM_STEPIO_STDOUT, t->rank, buf->base,
                       (size_t)n);
        return;
    }
    if (n == 0)
        return;
    /* EOF, or EIO from a pty whose slave side is closed. */
    uv_read_stop(st);
    t->out_open[k] = false;
    uv_close((uv_handle_t *)st, task_reader_closed);
}

static void task_reader_start(loom_step_t *s, loom_step_task_t *t, int k, int fd)
{
    uv_pipe_init(s->loop, &t->out[k], 0);
    t->out[k].data = t;
    uv_pipe_open(&t->out[k], fd);
    t->out_open[k] = true;
    if (!s->paused)
        uv_read_start((uv_stream_t *)&t->out[k], task_alloc, task_read);
}

void loom_step_tasks_pause(loom_step_t *s, bool pause)
{
    for (uint32_t i = 0; i < s->ntasks; i++)
        for (int k = 0; k < 2; k++) {
            loom_step_task_t *t = &s->tasks[i];
            if (!t->out_open[k])
                continue;
            if (pause)
                uv_read_stop((uv_stream_t *)&t->out[k]);
            else
                uv_read_start((uv_stream_t *)&t->out[k], task_alloc, task_read);
        }
}

/* ----------------------------------------------------------------- input */

typedef struct task_in_write {
    uv_write_t req;
    char bytes[];
} task_in_write_t;

static void task_in_written(uv_write_t *req, int status)
{
    free(req);
}

void loom_step_tasks_stdin(loom_step_t *s, uint32_t rank, const char *data, size_t len)
{
    for (uint32_t i = 0; i < s->ntasks; i++) {
        loom_step_task_t *t = &s->tasks[i];
        if (!t->in_open || (rank != LOOM_STEPIO_ALL && rank != t->rank) || !len)
            continue;
        task_in_write_t *w = loom_xmalloc(sizeof(*w) + len);
        memcpy(w->bytes, data, len);
        uv_buf_t buf = uv_buf_init(w->bytes, (unsigned)len);
        if (uv_write(&w->req, (uv_stream_t *)&t->in, &buf, 1, task_in_written) < 0)
            free(w);
    }
}

static void task_in_closed(uv_handle_t *h)
{
}

static void task_in_shut(uv_shutdown_t *req, int status)
{
    loom_uv_close_once((uv_handle_t *)req->handle, task_in_closed);
    free(req);
}

void loom_step_tasks_stdin_eof(loom_step_t *s)
{
    for (uint32_t i = 0; i < s->ntasks; i++) {
        loom_step_task_t *t = &s->tasks[i];
        if (!t->in_open || t->pty_master >= 0)
            continue; /* a terminal has no end of input; ^D travels as a byte */
        t->in_open = false;
        uv_shutdown_t *req = loom_xcalloc(1, sizeof(*req));
        if (uv_shutdown(req, (uv_stream_t *)&t->in, task_in_shut) < 0) {
            free(req);
            uv_close((uv_handle_t *)&t->in, task_in_closed);
        }
    }
}

void loom_step_tasks_winsize(loom_step_t *s, unsigned rows, unsigned cols)
{
    struct winsize ws = {.ws_row = (unsigned short)rows, .ws_col = (unsigned short)cols};
    for (uint32_t i = 0; i < s->ntasks; i++)
        if (s->tasks[i].pty_master >= 0)
            ioctl(s->tasks[i].pty_master, TIOCSWINSZ, &ws);
}

void loom_step_tasks_close(loom_step_t *s)
{
    for (uint32_t i = 0; i < s->ntasks; i++) {
        loom_step_task_t *t = &s->tasks[i];
        for (int k = 0; k < 2; k++)
            if (t->out_open[k]) {
                t->out_open[k] = false;
                uv_close((uv_handle_t *)&t->out[k], NULL);
            }
        if (t->in_open) {
            t->in_open = false;
            uv_close((uv_handle_t *)&t->in, NULL);
        }
        if (t->pmi_fd >= 0) {
            close(t->pmi_fd);
            t->pmi_fd = -1;
        }
    }
}

/* ---------------------------------------------------------------- child */

/* execve with the command looked up in the task's own PATH, as slurmstepd does. */
static void task_exec(char **argv, char **envp)
{
    const char *path = NULL;
    for (char **e = envp; *e; e++)
        if (strncmp(*e, "PATH=", 5) == 0)
            path = *e + 5;
    if (strchr(argv[0], '/') || !path) {
        execve(argv[0], argv, envp);
        return;
    }
    int saved = ENOENT;
    loom_strv_t dirs = LOOM_STRV_INIT;
    loom_strv_split(&dirs, path, ":");
    for (size_t i = 0; i < dirs.n; i++) {
        loom_sbuf_t full = LOOM_SBUF_INIT;
        loom_sbuf_addf(&full, "%s/%s", dirs.v[i], argv[0]);
        execve(loom_sbuf_str(&full), argv, envp);
        if (errno != ENOENT && errno != ENOTDIR)
            saved = errno;
        loom_sbuf_free(&full);
    }
    errno = saved;
}

static void task_child_run(const loom_step_t *s, const task_common_t *c, task_child_t *ch,
                           pid_t pgid)
{
    sigset_t none;
    sigemptyset(&none);
    for (int sig = 1; sig < NSIG; sig++)
        signal(sig, SIG_DFL);
    sigprocmask(SIG_SETMASK, &none, NULL);
    if (ch->pty) {
        setsid();
        ioctl(ch->fds[0], TIOCSCTTY, 0);
    } else {
        setpgid(0, pgid);
    }
    if (s->cgroup)
        loom_cgroup_attach(s->cgroup, getpid());
    if (s->devcg)
        loom_devcg_attach(s->devcg, getpid());
    if (ch->bind)
        sched_setaffinity(0, sizeof(ch->mask), &ch->mask);
    if (ch->bind_verbose) {
        unsigned long long m = 0;
        for (int b = 0; b < 64; b++)
            if (CPU_ISSET(b, &ch->mask))
                m |= 1ull << b;
        dprintf(ch->fds[2], "cpu-bind=MASK - %s, task %2u %2u [%d]: mask 0x%llx set\n",
                s->node_name, (unsigned)ch->rank, (unsigned)ch->local, (int)getpid(), m);
    }
    if (dup2(ch->fds[0], 0) < 0 || dup2(ch->fds[1], 1) < 0 || dup2(ch->fds[2], 2) < 0)
        _exit(127);
    loom_rlimits_apply(&ch->rlimits); /* still privileged: may raise a hard limit */
    if (c->drop && (setgroups((size_t)c->ngroups, c->groups) < 0 || setgid(s->gid) < 0 ||
                    setuid(s->uid) < 0)) {
        dprintf(2, "slurmstepd-%s: error: setuid(%u): %s\n", s->node_name, (unsigned)s->uid,
                strerror(errno));
        _exit(1);
    }
    if (c->cwd && chdir(c->cwd) < 0) {
        dprintf(2, "slurmstepd-%s: error: couldn't chdir to `%s': %s: going to /tmp instead\n",
                s->node_name, c->cwd, strerror(errno));
        if (chdir("/tmp") < 0)
            _exit(1);
    }
    snprintf(ch->pid_slot, 32, "SLURM_TASK_PID=%d", (int)getpid());
    umask(c->umask);
    if (syscall(SYS_close_range, 3u, ~0u, 4u) < 0)
        for (int fd = 3; fd < 1024; fd++)
            fcntl(fd, F_SETFD, FD_CLOEXEC);
    if (ch->keep_fd >= 0)
        fcntl(ch->keep_fd, F_SETFD, 0);
    if (ch->argv.n == 0) {
        dprintf(2, "slurmstepd-%s: error: no command to run\n", s->node_name);
        _exit(EINVAL);
    }
    task_exec(ch->argv.v, ch->env.v);
    int e = errno;
    dprintf(2, "slurmstepd-%s: error: execve(): %s: %s\n", s->node_name, ch->argv.v[0],
            strerror(e));
    _exit(e ? e : 1);
}

static void task_child_free(task_child_t *ch)
{
    for (int k = 0; k < 3; k++)
        if (ch->fds[k] >= 0)
            close(ch->fds[k]);
    if (ch->keep_fd >= 0)
        close(ch->keep_fd);
    loom_strv_free(&ch->argv);
    loom_strv_free(&ch->env);
}

/* PMI-2: a socket pair, our end served by stepd_pmi2.c. */
static int task_pmi(loom_step_t *s, loom_step_task_t *t, task_child_t *ch, loom_err_t *err)
{
    int sv[2];
    if (!s->pmi)
        return 0;
    if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) < 0)
        return loom_errf(err, -errno, "socketpair: %s", strerror(errno));
    ch->keep_fd = sv[1];
    loom_jobenv_setf(&ch->env, "PMI_FD", "%d", sv[1]);
    return loom_pmi2_add_task(s->pmi, t, sv[0]);
}

static int task_start_one(loom_step_t *s, task_common_t *c, uint32_t local, loom_err_t *err)
{
    loom_step_task_t *t = &s->tasks[local];
    task_child_t ch = {.fds = {-1, -1, -1}, .keep_fd = -1, .rank = t->rank, .local = local};
    task_argv(s, local, &ch, err);
    task_env(s, c, local, &ch);
    loom_rlimits_take(&ch.env, &ch.rlimits);
    task_cpu_mask(s, c, local, &ch);
    bool pty = json_is_true(json_object_get(s->body, "pty")) && t->rank == 0;
    int rc = pty ? task_pty(s, t, &ch, err) : task_files(s, c, local, &ch, err);
    if (rc == 0 && !pty)
        rc = task_pipes(s, t, &ch, err);
    if (rc == 0)
        rc = task_pmi(s, t, &ch, err);
    pid_t pid = rc == 0 ? fork() : -1;
    if (pid == 0)
        task_child_run(s, c, &ch, s->pgid);
    if (pid > 0) {
        if (!pty) {
            if (!s->pgid)
                s->pgid = pid;
            setpgid(pid, s->pgid); /* also in the child: whichever runs first */
        }
        t->pid = pid;
        s->running++;
    } else if (rc == 0) {
        rc = loom_errf(err, -errno, "fork: %s", strerror(errno));
    }
    task_child_free(&ch);
    if (rc < 0) {
        /* It never ran: report it as slurmstepd would, exit code errno. */
        loom_sbuf_t sb = LOOM_SBUF_INIT;
        loom_sbuf_addf(&sb, "slurmstepd-%s: error: %s\n", s->node_name, err->msg);
        loom_step_send(s, LOOM_STEPIO_STDERR, t->rank, sb.buf, sb.len);
        loom_sbuf_free(&sb);
        t->exited = true;
        t->status = ((-rc) & 0xff ? (-rc) & 0xff : 1) << 8;
        loom_step_task_check(s, t);
    }
    return rc;
}

int loom_step_tasks_start(loom_step_t *s, loom_err_t *err)
{
    task_common_t c = {0};
    task_common_init(s, &c);
    int rc = 0;
    for (uint32_t i = 0; i < s->ntasks; i++) {
        loom_err_t one = {0};
        if (task_start_one(s, &c, i, &one) < 0 && rc == 0)
            rc = loom_errf(err, one.code, "%s", one.msg);
    }
    task_common_free(&c);
    return rc;
}

/* ---------------------------------------------------------------- usage */

/* Which task a process belongs to: a task's own process, else the first
 * task among its ancestors; a process of the tasks' group or a --pty
 * task's session whose line is lost (reparented) counts for task 0. */
static int task_owner(void *arg, const loom_procstat_t *p)
{
    const loom_step_t *s = arg;
    bool ours = (s->pgid > 0 && p->pgrp == s->pgid);
    for (uint32_t i = 0; i < s->ntasks; i++) {
        const loom_step_task_t *t = &s->tasks[i];
        ours = ours || (t->pid > 0 && (p->pid == t->pid || p->sid == t->pid));
    }
    if (!ours)
        return -1; /* only the tasks' group and sessions are walked up */
    loom_procstat_t q = *p;
    for (int depth = 0; depth < 64 && q.pid > 1; depth++) {
        for (uint32_t i = 0; i < s->ntasks; i++) {
            const loom_step_task_t *t = &s->tasks[i];
            if (t->pid > 0 && (q.pid == t->pid || (t->pty_master >= 0 && q.sid == t->pid)))
                return (int)i;
        }
        if (q.ppid == getpid() || loom_gather_proc(q.ppid, &q) < 0)
            break;
    }
    return s->ntasks ? 0 : -1;
}

void loom_step_tasks_gather(loom_step_t *s)
{
    uint32_t *ranks = loom_xcalloc(s->ntasks ? s->ntasks : 1, sizeof(uint32_t));
    uint32_t gpus[TASK_MAX_GPUS];
    for (uint32_t i = 0; i < s->ntasks; i++)
        ranks[i] = s->tasks[i].rank;
    uint32_t ngpus = (uint32_t)task_u32s(json_object_get(s->body, "gpus"), gpus, TASK_MAX_GPUS);
    loom_gather_opts_t o = {.node = s->node,
                            .node_name = s->node_name,
                            .ntasks = s->ntasks,
                            .ranks = ranks,
                            .gpus = gpus,
                            .ngpus = ngpus,
                            .owner = task_owner,
                            .arg = s};
    s->gather = loom_gather_create(s->loop, &o);
    loom_gather_start(s->gather);
    free(ranks);
}

json_t *loom_step_tasks_usage(loom_step_t *s)
{
    if (s->usage)
        return json_incref(s->usage);
    if (s->gather)
        return loom_gather_summary(s->gather, false);
    return loom_usage_node_json(s->node_name, NULL, 0, 0, -1);
}
