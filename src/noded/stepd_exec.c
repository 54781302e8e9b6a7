/*
 * stepd_exec.c - start the batch script of a job (DESIGN.md §Job execution).
 *
 * Order matters: the output files are opened with the job user's identity
 * (effective ids switched and restored around the open calls), so a job can
 * never write where its user could not; the child then drops its real ids
 * for good (setgroups, setgid, setuid) before exec. Everything the child
 * needs is prepared in the parent, so that between fork and exec it makes
 * only system calls. A failure in the child is sent back over a close-on-exec
 * pipe: EOF there means exec succeeded.
 *
 * A job submitted with --export=NONE or a list of names without ALL first
 * gets its user's login environment, as slurmd 22.05 loads it (`su -`): the
 * user's login shell prints it (8 s at most), the job's variables go on top.
 */
#include "noded/stepd.h"

#include "common/fpattern.h"
#include "common/jobenv.h"
#include "common/log.h"
#include "common/rlimits.h"
#include "common/sbuf.h"
#include "common/strv.h"
#include "common/xalloc.h"

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <pwd.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <poll.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define STEPD_MAX_GROUPS 1024

/* What the child needs, prepared by the parent. */
typedef struct stepd_child {
    int in_fd, out_fd, err_fd;
    const char *work_dir;
    const char *node_name; /* for "slurmstepd-<node>: error: ..." */
    char *script;
    loom_strv_t argv;
    loom_strv_t env;
    char *task_pid_slot; /* "SLURM_TASK_PID=" followed by room for the pid */
    bool drop;           /* switch to the job's user */
    uid_t uid;
    gid_t gid;
    gid_t groups[STEPD_MAX_GROUPS];
    int ngroups;
    mode_t umask;
    loom_cgroup_t *cgroup;
    loom_devcg_t *devcg;
    loom_rlimit_set_t rlimits; /* the submitting shell's (common/rlimits.h) */
} stepd_child_t;

/* Failure report from the child: which step, and errno. */
typedef struct stepd_child_err {
    int stage;
    int err;
} stepd_child_err_t;

enum { STEPD_FAIL_IDS = 1, STEPD_FAIL_EXEC = 2, STEPD_FAIL_STDIO = 3 };

static const char *stepd_jstr(const json_t *o, const char *key)
{
    const char *s = json_string_value(json_object_get(o, key));
    return s && *s ? s : NULL;
}

/* ------------------------------------------------------------ user & files */

/* Switch effective ids to the job's user (root only); restore with ids_back. */
static int stepd_ids_user(const stepd_child_t *ch)
{
    if (!ch->drop)
        return 0;
    if (setgroups((size_t)ch->ngroups, ch->groups) < 0 || setegid(ch->gid) < 0 ||
        seteuid(ch->uid) < 0)
        return -errno;
    return 0;
}

static void stepd_ids_back(const stepd_child_t *ch)
{
    if (!ch->drop)
        return;
    if (seteuid(0) < 0 || setegid(0) < 0 || setgroups(0, NULL) < 0)
        abort(); /* cannot regain root: nothing sane is left to do */
}

static int stepd_open(const char *path, int flags, loom_err_t *err, const char *what)
{
    int fd = open(path, flags | O_CLOEXEC, 0666);
    if (fd < 0)
        return loom_errf(err, -errno, "Could not open %s file %s: %s", what, path, strerror(errno));
    return fd;
}

/* The job umask from SLURM_UMASK (sbatch passes the submitter's), else 022. */
static mode_t stepd_umask(const loom_strv_t *env)
{
    const char *u = loom_jobenv_get(env, "SLURM_UMASK");
    if (u && *u) {
        char *end;
        long v = strtol(u, &end, 8);
        if (*end == '\0' && v >= 0 && v <= 0777)
            return (mode_t)v;
    }
    return 022;
}

static void stepd_fpattern_ctx(const loom_stepd_t *s, loom_fpattern_ctx_t *fp, uint32_t index)
{
    loom_fpattern_ctx_init(fp);
    fp->job_id = s->job_id;
    json_t *a = json_object_get(s->job, "array_job_id");
    if (json_is_integer(a) && json_integer_value(a) > 0) {
        fp->array_job_id = (uint32_t)json_integer_value(a);
        fp->array_task_id = (uint32_t)json_integer_value(json_object_get(s->job, "array_task_id"));
    }
    fp->restart_cnt = (uint32_t)json_integer_value(json_object_get(s->job, "restart_cnt"));
    fp->node_id = index;
    fp->job_name = stepd_jstr(s->job, "name");
    fp->user = s->user;
    fp->node_name = s->node_name;
    fp->work_dir = stepd_jstr(s->job, "work_dir");
}

/* A pattern from the record (std_out), else as submitted (desc standard_output). */
static const char *stepd_pattern(const json_t *job, const char *key, const char *desc_key)
{
    const char *v = stepd_jstr(job, key);
    return v ? v : stepd_jstr(json_object_get(job, "desc"), desc_key);
}

/* Open stdin, stdout and stderr of the script, as the user. */
static int stepd_open_stdio(loom_stepd_t *s, stepd_child_t *ch, uint32_t index, loom_err_t *err)
{
    loom_fpattern_ctx_t fp;
    stepd_fpattern_ctx(s, &fp, index);
    char *out = NULL, *errp = NULL;
    loom_fpattern_stdio(stepd_pattern(s->job, "std_out", "standard_output"),
                        stepd_pattern(s->job, "std_err", "standard_error"), fp.array_job_id != 0,
                        &fp, &out, &errp);
    loom_sbuf_t in = LOOM_SBUF_INIT;
    const char *in_pat = stepd_pattern(s->job, "std_in", "standard_input");
    loom_fpattern_expand(in_pat ? in_pat : "/dev/null", &fp, &in);
    /* --open-mode, else JobFileAppend; a requeued run truncates too, as
     * Slurm 22.05.8 does (checked: the rerun's file holds only its output). */
    bool append = json_is_true(json_object_get(s->node, "job_file_append"));
    const char *mode = stepd_jstr(json_object_get(s->job, "desc"), "open_mode");
    if (mode)
        append = strcmp(mode, "append") == 0;
    int wflags = O_WRONLY | O_CREAT | (append ? O_APPEND : O_TRUNC);
    int rc = stepd_ids_user(ch);
    if (rc == 0) {
        ch->umask = stepd_umask(&ch->env);
        mode_t old = umask(ch->umask);
        rc = ch->out_fd = stepd_open(out, wflags, err, "stdout");
        if (rc >= 0)
            rc = ch->err_fd = errp ? stepd_open(errp, wflags, err, "stderr")
                                   : fcntl(ch->out_fd, F_DUPFD_CLOEXEC, 3);
        if (rc >= 0)
            rc = ch->in_fd = stepd_open(loom_sbuf_str(&in), O_RDONLY, err, "stdin");
        umask(old);
        stepd_ids_back(ch);
    } else {
        loom_errf(err, rc, "cannot switch to uid %u: %s", (unsigned)ch->uid, strerror(-rc));
    }
    free(out);
    free(errp);
    loom_sbuf_free(&in);
    return rc < 0 ? rc : 0;
}

/* The script file, owned by the user so that it can run it. */
static int stepd_write_script(loom_stepd_t *s, stepd_child_t *ch, loom_err_t *err)
{
    const char *text = json_string_value(json_object_get(s->job, "script"));
    if (!text)
        return loom_errf(err, -LOOM_EPROTO, "the launch request has no script");
    loom_sbuf_t path = LOOM_SBUF_INIT;
    loom_sbuf_addf(&path, "%s/script", s->job_dir);
    int fd = open(loom_sbuf_str(&path), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0700);
    int rc = fd < 0 ? -errno : 0;
    size_t len = strlen(text);
    if (rc == 0 && write(fd, text, len) != (ssize_t)len)
        rc = -EIO;
    if (rc == 0 && ch->drop && fchown(fd, ch->uid, ch->gid) < 0)
        rc = -errno;
    if (fd >= 0)
        close(fd);
    if (rc < 0) {
        loom_errf(err, rc, "cannot write %s: %s", loom_sbuf_str(&path), strerror(-rc));
        loom_sbuf_free(&path);
        return rc;
    }
    ch->script = loom_sbuf_detach(&path);
    return 0;
}

/* ------------------------------------------------------------ environment */

/* The submit-time environment of the record: ["K=V",...] or {"K":"V",...}. */
static void stepd_submit_env(const json_t *env, loom_strv_t *out)
{
    json_t *v;
    size_t i;
    const char *k;
    json_array_foreach(env, i, v)
    {
        if (json_is_string(v))
            loom_strv_add(out, json_string_value(v));
    }
    json_object_foreach((json_t *)env, k, v)
    {
        loom_sbuf_t sb = LOOM_SBUF_INIT;
        loom_sbuf_addf(&sb, "%s=%s", k, json_string_value(v) ? json_string_value(v) : "");
        loom_strv_take(out, loom_sbuf_detach(&sb));
    }
}

/* GPU device indexes of one alloc entry: {"gres":[{"name":"gpu","index":[..]}]}. */
static size_t stepd_gpus(const json_t *alloc, uint32_t *gpus, size_t max)
{
    size_t n = 0, i, j;
    json_t *g, *idx;
    json_array_foreach(json_object_get(alloc, "gres"), i, g)
    {
        const char *name = json_string_value(json_object_get(g, "name"));
        if (!name || strcmp(name, "gpu") != 0)
            continue;
        json_array_foreach(json_object_get(g, "index"), j, idx)
        {
            if (n < max)
                gpus[n++] = (uint32_t)json_integer_value(idx);
        }
    }
    return n;
}

/* ------------------------------------------------- the user's login environment */

#define STEPD_UENV_MARK "\036LOOMENV\036"
#define STEPD_UENV_MS   8000 /* Slurm's default --get-user-env timeout */

/* sbatch 22.05: --export=NONE or a list without ALL loads the user's login
 * environment on the node, "as if --get-user-env was specified"; sbatch says
 * so with SLURM_GET_USER_ENV=1 among the job's variables. */
static bool stepd_wants_user_env(const char *spec, const loom_strv_t *submit)
{
    for (size_t i = 0; i < submit->n; i++)
        if (strcmp(submit->v[i], "SLURM_GET_USER_ENV=1") == 0)
            return true;
    if (!spec || !*spec)
        return false;
    loom_strv_t items = LOOM_STRV_INIT;
    loom_jobenv_export_split(spec, &items);
    bool all = false;
    for (size_t i = 0; i < items.n; i++)
        all = all || strcasecmp(items.v[i], "ALL") == 0;
    loom_strv_free(&items);
    return !all;
}

/* The child: the user's login shell prints its environment after a mark. */
static void stepd_uenv_child(const stepd_child_t *ch, const char *dir, const char *shell,
                             char *const *argv, char *const *envp, int out)
{
    int null = open("/dev/null", O_RDWR);
    if (null < 0 || dup2(null, 0) < 0 || dup2(out, 1) < 0 || dup2(null, 2) < 0)
        _exit(127);
    if (ch->drop && (setgroups((size_t)ch->ngroups, ch->groups) < 0 || setgid(ch->gid) < 0 ||
                     setuid(ch->uid) < 0))
        _exit(127);
    if (chdir(dir) < 0 && chdir("/") < 0)
        _exit(127);
    execve(shell, argv, envp);
    _exit(127);
}

/* Everything the child wrote to fd until EOF or the deadline; kills it then. */
static void stepd_uenv_read(pid_t pid, int fd, loom_sbuf_t *out)
{
    struct timespec t0;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    char buf[4096];
    for (;;) {
        struct timespec t;
        clock_gettime(CLOCK_MONOTONIC, &t);
        long left =
            STEPD_UENV_MS - ((t.tv_sec - t0.tv_sec) * 1000 + (t.tv_nsec - t0.tv_nsec) / 1000000);
        struct pollfd p = {fd, POLLIN, 0};
        if (left <= 0 || poll(&p, 1, (int)left) <= 0) {
            kill(pid, SIGKILL);
            loom_sbuf_reset(out);
            break;
        }
        ssize_t n = read(fd, buf, sizeof(buf));
        if (n <= 0)
            break;
        loom_sbuf_addn(out, buf, (size_t)n);
    }
    while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
        ;
}

/* The "K=V" entries after the mark, but the shell's own PWD, SHLVL, OLDPWD, _. */
static void stepd_uenv_parse(const loom_sbuf_t *text, loom_strv_t *env)
{
    const char *p = memmem(loom_sbuf_str(text), text->len, STEPD_UENV_MARK, 9);
    if (!p)
        return;
    const char *end = loom_sbuf_str(text) + text->len;
    for (p += 9; p < end; p += strlen(p) + 1) {
        size_t len = strcspn(p, "=");
        if (!p[len] || len == 0 || (len == 1 && *p == '_') || !strncmp(p, "PWD=", 4) ||
            !strncmp(p, "OLDPWD=", 7) || !strncmp(p, "SHLVL=", 6))
            continue;
        char *name = loom_xstrndup(p, len);
        loom_jobenv_set(env, name, p + len + 1);
        free(name);
    }
}

/* The job user's login environment into env (nothing when it cannot be had:
 * not root and not the user, no such user, no answer within 8 s). */
static void stepd_user_env(const loom_stepd_t *s, const stepd_child_t *ch, loom_strv_t *env)
{
    struct passwd *pw = getpwuid(ch->uid);
    if (!pw || (!ch->drop && geteuid() != ch->uid))
        return;
    const char *shell = pw->pw_shell && *pw->pw_shell ? pw->pw_shell : "/bin/sh";
    const char *base = strrchr(shell, '/') ? strrchr(shell, '/') + 1 : shell;
    loom_sbuf_t a0 = LOOM_SBUF_INIT, text = LOOM_SBUF_INIT;
    loom_sbuf_addf(&a0, "-%s", base); /* a login shell, as `su -` starts it */
    char *argv[] = {(char *)loom_sbuf_str(&a0), "-c", "printf '\\036LOOMENV\\036'; exec env -0",
                    NULL};
    loom_strv_t envp = LOOM_STRV_INIT;
    loom_jobenv_set(&envp, "HOME", pw->pw_dir);
    loom_jobenv_set(&envp, "USER", pw->pw_name);
    loom_jobenv_set(&envp, "LOGNAME", pw->pw_name);
    loom_jobenv_set(&envp, "SHELL", shell);
    loom_jobenv_set(&envp, "PATH", "/usr/local/bin:/usr/bin:/bin");
    int fds[2];
    if (pipe2(fds, O_CLOEXEC) == 0) {
        pid_t pid = fork();
        if (pid == 0)
            stepd_uenv_child(ch, pw->pw_dir, shell, argv, envp.v, fds[1]);
        close(fds[1]);
        if (pid > 0)
            stepd_uenv_read(pid, fds[0], &text);
        close(fds[0]);
    }
    stepd_uenv_parse(&text, env);
    if (!text.len)
        loom_info("stepd job %u: could not load the login environment of %s", s->job_id,
                  pw->pw_name);
    loom_strv_free(&envp);
    loom_sbuf_free(&a0);
    loom_sbuf_free(&text);
}

static int stepd_env(loom_stepd_t *s, stepd_child_t *ch, uint32_t *index, loom_err_t *err)
{
    loom_strv_t submit = LOOM_STRV_INIT;
    loom_jobenv_job_t job;
    stepd_submit_env(json_object_get(s->job, "env"), &submit);
    int rc = loom_jobenv_job_from_json(s->job, s->node_name, &job, index, err);
    if (rc == 0) {
        if (stepd_wants_user_env(job.export_env, &submit))
            stepd_user_env(s, ch, &ch->env); /* the job's variables go on top */
        rc = loom_jobenv_export(job.export_env, submit.v, &ch->env, err);
        uint32_t gpus[256];
        json_t *alloc = json_array_get(json_object_get(s->job, "alloc"), *index);
        loom_jobenv_node_t node = {
            .name = s->node_name,
            .index = *index,
            .hostname = stepd_jstr(s->node, "hostname"),
            .cluster = stepd_jstr(s->node, "cluster"),
            .conf = stepd_jstr(s->node, "conf"),
            .gpus = gpus,
            .ngpus = stepd_gpus(alloc, gpus, 256),
            .gpu_env = (unsigned)json_integer_value(json_object_get(s->node, "gpu_env")),
        };
        if (rc == 0)
            loom_jobenv_batch(&job, &node, &ch->env);
        loom_jobenv_job_free(&job);
    }
    loom_strv_free(&submit);
    return rc;
}

/* ------------------------------------------------------------------ child */

static void stepd_child_fail(int fd, int stage)
{
    stepd_child_err_t e = {stage, errno};
    ssize_t n = write(fd, &e, sizeof(e));
    (void)n;
    _exit(127);
}

static void stepd_child_signals(void)
{
    sigset_t all;
    sigemptyset(&all);
    for (int sig = 1; sig < NSIG; sig++)
        signal(sig, SIG_DFL);
    sigprocmask(SIG_SETMASK, &all, NULL);
}

/* Between fork and exec: system calls only. */
static void stepd_child_run(stepd_child_t *ch, int report_fd)
{
    setsid();
    stepd_child_signals();
    if (ch->cgroup)
        loom_cgroup_attach(ch->cgroup, getpid());
    if (ch->devcg)
        loom_devcg_attach(ch->devcg, getpid());
    loom_rlimits_apply(&ch->rlimits); /* still privileged: may raise a hard limit */
    if (ch->drop && (setgroups((size_t)ch->ngroups, ch->groups) < 0 || setgid(ch->gid) < 0 ||
                     setuid(ch->uid) < 0))
        stepd_child_fail(report_fd, STEPD_FAIL_IDS);
    if (dup2(ch->in_fd, 0) < 0 || dup2(ch->out_fd, 1) < 0 || dup2(ch->err_fd, 2) < 0)
        stepd_child_fail(report_fd, STEPD_FAIL_STDIO);
    if (!ch->work_dir || chdir(ch->work_dir) < 0) {
        dprintf(2, "slurmstepd-%s: error: couldn't chdir to `%s': %s: going to /tmp instead\n",
                ch->node_name, ch->work_dir ? ch->work_dir : "", strerror(errno));
        if (chdir("/tmp") < 0)
            stepd_child_fail(report_fd, STEPD_FAIL_STDIO);
    }
    /* The slot was sized for any pid. */
    snprintf(ch->task_pid_slot, 32, "SLURM_TASK_PID=%d", (int)getpid());
    umask(ch->umask);
    /* Nothing of the supervisor's leaks into the job (CLOSE_RANGE_CLOEXEC). */
    if (syscall(SYS_close_range, 3u, ~0u, 4u) < 0)
        for (int fd = 3; fd < 1024; fd++)
            fcntl(fd, F_SETFD, FD_CLOEXEC);
    execve(ch->script, ch->argv.v, ch->env.v);
    stepd_child_fail(report_fd, STEPD_FAIL_EXEC);
}

/* Wait for exec: 0 when the child got there, else its failure. */
static int stepd_child_wait(loom_stepd_t *s, stepd_child_t *ch, int fd, loom_err_t *err)
{
    stepd_child_err_t e;
    ssize_t n;
    while ((n = read(fd, &e, sizeof(e))) < 0 && errno == EINTR)
        ;
    if (n != (ssize_t)sizeof(e))
        return 0;
    static const char *const what[] = {"", "setuid", "execve", "stdio"};
    loom_errf(err, -e.err, "%s(): %s: %s", what[e.stage % 4], ch->script, strerror(e.err));
    dprintf(ch->err_fd, "slurmstepd-%s: error: %s\n", ch->node_name, err->msg);
    return -e.err;
}

static int stepd_fork(loom_stepd_t *s, stepd_child_t *ch, loom_err_t *err)
{
    int p[2];
    if (pipe2(p, O_CLOEXEC) < 0)
        return loom_errf(err, -errno, "pipe: %s", strerror(errno));
    pid_t pid = fork();
    if (pid < 0) {
        close(p[0]);
        close(p[1]);
        return loom_errf(err, -errno, "fork: %s", strerror(errno));
    }
    if (pid == 0) {
        close(p[0]);
        stepd_child_run(ch, p[1]);
    }
    close(p[1]);
    s->pid = pid;
    s->sid = pid;
    int rc = stepd_child_wait(s, ch, p[0], err);
    close(p[0]);
    return rc;
}

/* ----------------------------------------------------------------- start */

static int stepd_user(loom_stepd_t *s, stepd_child_t *ch, loom_err_t *err)
{
    s->uid = (uid_t)json_integer_value(json_object_get(s->job, "user_id"));
    s->gid = (gid_t)json_integer_value(json_object_get(s->job, "group_id"));
    if (s->uid == 0 && !s->allow_root)
        return loom_errf(err, -LOOM_EPERM,
                         "refusing to run a job as root (loomd needs --allow-root-jobs)");
    struct passwd *pw = getpwuid(s->uid);
    const char *name = stepd_jstr(s->job, "user_name");
    s->user = loom_xstrdup(name ? name : pw ? pw->pw_name : "nobody");
    ch->uid = s->uid;
    ch->gid = s->gid;
    ch->drop = geteuid() == 0;
    if (!ch->drop) {
        if (s->uid != geteuid())
            loom_info("stepd job %u: not root: running as uid %u instead of %u", s->job_id,
                      (unsigned)geteuid(), (unsigned)s->uid);
        return 0;
    }
    ch->ngroups = STEPD_MAX_GROUPS;
    if (!pw || getgrouplist(pw->pw_name, s->gid, ch->groups, &ch->ngroups) < 0) {
        ch->groups[0] = s->gid;
        ch->ngroups = 1;
    }
    return 0;
}

static void stepd_args(loom_stepd_t *s, stepd_child_t *ch)
{
    json_t *argv = json_object_get(s->job, "argv"), *v;
    if (!json_is_array(argv))
        argv = json_object_get(json_object_get(s->job, "desc"), "argv");
    size_t i;
    loom_strv_add(&ch->argv, ch->script);
    json_array_foreach(argv, i, v)
    {
        if (json_is_string(v))
            loom_strv_add(&ch->argv, json_string_value(v));
    }
}

/* Releases all but err_fd, which the supervisor keeps for its messages. */
static void stepd_child_free(stepd_child_t *ch)
{
    if (ch->in_fd >= 0)
        close(ch->in_fd);
    if (ch->out_fd >= 0)
        close(ch->out_fd);
    free(ch->script);
    loom_strv_free(&ch->argv);
    loom_strv_free(&ch->env);
}

/* This node's entry of the job's allocation, or NULL. */
static const json_t *stepd_alloc_here(const loom_stepd_t *s)
{
    size_t i;
    json_t *a;
    json_array_foreach(json_object_get(s->job, "alloc"), i, a)
    {
        const char *node = json_string_value(json_object_get(a, "node"));
        if (node && strcmp(node, s->node_name) == 0)
            return a;
    }
    return NULL;
}

/* The job's cgroup (cgroup.h), when the host and the configuration give one,
 * with this node's CPUs and memory; otherwise say so at debug level. */
static void stepd_confine(loom_stepd_t *s, stepd_child_t *ch)
{
    const json_t *alloc = stepd_alloc_here(s), *c;
    loom_sbuf_t cpus = LOOM_SBUF_INIT;
    size_t i;
    json_array_foreach(json_object_get(alloc, "cpus"), i, c)
        loom_sbuf_addf(&cpus, "%s%lld", i ? "," : "", (long long)json_integer_value(c));
    uint64_t mem = (uint64_t)json_integer_value(json_object_get(alloc, "mem"));
    loom_err_t err = {0};
    if (loom_cgroup_for_job(s->node, s->job_id, loom_sbuf_str(&cpus), mem, &s->cgroup, &err) < 0)
        loom_debug("stepd job %u: not confined: %s", s->job_id, err.msg);
    ch->cgroup = s->cgroup;
    loom_sbuf_free(&cpus);
    uint32_t gpus[256];
    size_t ngpus = stepd_gpus(alloc, gpus, 256);
    loom_err_t derr = {0};
    if (!s->alloc &&
        loom_cgroup_confine_gpus(s->node, s->cgroup, s->job_id, LOOM_FPATTERN_BATCH_STEP, gpus,
                                 ngpus, &s->devcg, &derr) < 0 &&
        derr.code != -ENOTSUP)
        loom_verbose("stepd job %u: GPUs not confined: %s", s->job_id, derr.msg);
    ch->devcg = s->devcg;
    if (s->devcg) { /* the script sees its GPUs only, numbered from 0 (ConstrainDevices) */
        for (size_t k = 0; k < ngpus; k++)
            gpus[k] = (uint32_t)k;
        loom_jobenv_gpu_vars(&ch->env, gpus, ngpus,
                             (unsigned)json_integer_value(json_object_get(s->node, "gpu_env")));
    }
}

int loom_stepd_start(loom_stepd_t *s, loom_err_t *err)
{
    stepd_child_t ch = {.in_fd = -1, .out_fd = -1, .err_fd = -1};
    const char *script = json_string_value(json_object_get(s->job, "script"));
    if (script && !*script) {
        /* salloc / srun: an allocation with nothing to run here; its steps
         * come with step.launch. Held until the controller ends it. */
        s->alloc = true;
        loom_verbose("stepd job %u: holding an allocation", s->job_id);
        stepd_confine(s, &ch); /* its steps' tasks join it */
        return 0;
    }
    uint32_t index = 0;
    ch.work_dir = stepd_jstr(s->job, "work_dir");
    ch.node_name = s->node_name;
    int rc = stepd_user(s, &ch, err);
    if (rc == 0)
        rc = stepd_env(s, &ch, &index, err);
    if (rc == 0)
        rc = stepd_write_script(s, &ch, err);
    if (rc == 0)
        rc = stepd_open_stdio(s, &ch, index, err);
    if (rc == 0) {
        stepd_args(s, &ch);
        stepd_confine(s, &ch);
        loom_rlimits_take(&ch.env, &ch.rlimits);
        /* A slot at the end of the environment that the child fills in. */
        loom_jobenv_unset(&ch.env, "SLURM_TASK_PID");
        loom_jobenv_set(&ch.env, "SLURM_TASK_PID", "0000000000000000");
        ch.task_pid_slot = ch.env.v[ch.env.n - 1];
        rc = stepd_fork(s, &ch, err);
    }
    if (ch.err_fd >= 0)
        s->err_fd = ch.err_fd;
    stepd_child_free(&ch);
    return rc;
}
