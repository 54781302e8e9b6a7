/*
 * stepd_kill.c - signals for a job's processes, the CANCELLED line, and the
 * --signal timer (CLI_SPEC §0.10, messages.md §5 stepd.signal).
 *
 * The batch script runs as the leader of its own session, so the job's
 * processes are the members of that session (found in /proc; a process that
 * calls setsid() itself escapes unless the job has a cgroup). The batch
 * shell's process group holds the script and the commands it runs; srun puts
 * each step's tasks in a process group of their own, so "the steps" are the
 * session's other process groups. As in Slurm 22.05: a plain signal goes to
 * the steps only, `batch_only` to the batch shell only, `full` to everything;
 * ending a job (cancel, time limit, ...) writes the CANCELLED line to its
 * stderr file and sends SIGCONT and SIGTERM to all, then SIGKILL after
 * KillWait seconds.
 */
#include "noded/stepd.h"

#include "common/log.h"
#include "common/sbuf.h"
#include "common/timefmt.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/wait.h>
#include <unistd.h>

#define STEPD_MAX_GROUPS_SEEN 4096
#define STEPD_KILL_ROUNDS     100 /* of 2 ms: how long leftovers may take to die */

/* Parent, session and process group of pid from /proc/<pid>/stat; -1 when
 * gone, 1 when it is a zombie (dead, only waiting to be reaped). */
static int stepd_proc_ids(const char *pid, pid_t *parent, pid_t *pgrp, pid_t *sid)
{
    char path[64], buf[512];
    snprintf(path, sizeof(path), "/proc/%s/stat", pid);
    FILE *fp = fopen(path, "re");
    if (!fp)
        return -1;
    size_t n = fread(buf, 1, sizeof(buf) - 1, fp);
    fclose(fp);
    buf[n] = '\0';
    /* The command name may hold anything, so parse after its last ')'. */
    char *p = strrchr(buf, ')');
    int pg, sd, ppid;
    char state;
    if (!p || sscanf(p + 1, " %c %d %d %d", &state, &ppid, &pg, &sd) != 4)
        return -1;
    *parent = ppid;
    *pgrp = pg;
    *sid = sd;
    return state == 'Z' ? 1 : 0;
}

/* The process groups of session sid, and those of the supervisor's children
 * (orphans of the job that left its session), at most max of them; *live
 * (when asked) counts the members that are not zombies. */
static size_t stepd_session_groups(pid_t sid, pid_t *groups, size_t max, size_t *live)
{
    DIR *d = opendir("/proc");
    pid_t self = getpid();
    size_t n = 0;
    if (!d)
        return 0;
    struct dirent *e;
    while ((e = readdir(d)) && n < max) {
        pid_t parent, pg, sd;
        int state;
        if (!isdigit((unsigned char)e->d_name[0]) ||
            (state = stepd_proc_ids(e->d_name, &parent, &pg, &sd)) < 0 ||
            (sd != sid && parent != self))
            continue;
        if (live && state == 0)
            (*live)++;
        size_t i;
        for (i = 0; i < n && groups[i] != pg; i++)
            ;
        if (i == n)
            groups[n++] = pg;
    }
    closedir(d);
    return n;
}

int loom_stepd_deliver(loom_stepd_t *s, int sig, loom_stepd_target_t target)
{
    pid_t sid = s->pid ? s->pid : 0;
    int sent = 0;
    if (!sid)
        return 0;
    if (target == LOOM_STEPD_BATCH)
        return kill(s->pid, sig) == 0 ? 1 : 0;
    pid_t groups[STEPD_MAX_GROUPS_SEEN];
    size_t n = stepd_session_groups(sid, groups, STEPD_MAX_GROUPS_SEEN, NULL);
    for (size_t i = 0; i < n; i++) {
        if (target == LOOM_STEPD_STEPS && groups[i] == sid)
            continue;
        if (killpg(groups[i], sig) == 0)
            sent++;
    }
    if (target == LOOM_STEPD_ALL && sig == SIGKILL && s->cgroup)
        loom_cgroup_kill(s->cgroup);
    return sent;
}

void loom_stepd_kill_rest(loom_stepd_t *s)
{
    /* The job's cgroup holds every process it started (but for a root
     * process that moved out). As child subreaper the supervisor inherits
     * whatever the script left running: with no child left there is nothing
     * more to look for, and the /proc scan below (the costly part of ending a
     * job without a cgroup) is skipped. */
    if (s->cgroup)
        loom_cgroup_kill(s->cgroup);
    siginfo_t info;
    if (waitid(P_ALL, 0, &info, WEXITED | WNOHANG | WNOWAIT) < 0 && errno == ECHILD)
        return;
    /* The shell is gone but its session id lives on in its members. A member
     * may be leaving the session (setsid) while we look, so look again until
     * a scan finds nothing alive (those killed die in a moment). */
    pid_t groups[STEPD_MAX_GROUPS_SEEN];
    for (int round = 0; round < STEPD_KILL_ROUNDS; round++) {
        size_t live = 0;
        size_t n = stepd_session_groups(s->sid, groups, STEPD_MAX_GROUPS_SEEN, &live);
        if (live == 0)
            break;
        for (size_t i = 0; i < n; i++)
            killpg(groups[i], SIGKILL);
        nanosleep(&(struct timespec){.tv_nsec = 2 * 1000 * 1000}, NULL);
    }
}

/* The line Slurm's stepd writes to the job's stderr when it ends a job. */
static void stepd_cancel_line(loom_stepd_t *s, const char *reason)
{
    static const struct {
        const char *reason, *suffix;
    } why[] = {
        {"timeout", " DUE TO TIME LIMIT"},
        {"preempt", " DUE TO PREEMPTION"},
        {"node_fail", " DUE TO NODE FAILURE, SEE SLURMCTLD LOG FOR DETAILS"},
        {"requeue", " DUE TO JOB REQUEUE"},
    };
    const char *suffix = "";
    for (size_t i = 0; i < sizeof(why) / sizeof(why[0]); i++)
        if (strcmp(reason, why[i].reason) == 0)
            suffix = why[i].suffix;
    if (s->err_fd < 0)
        return;
    loom_sbuf_t sb = LOOM_SBUF_INIT;
    loom_sbuf_addf(&sb, "slurmstepd-%s: error: *** JOB %u ON %s CANCELLED AT ", s->node_name,
                   s->job_id, s->node_name);
    loom_date_fmt(time(NULL), "Unknown", &sb);
    loom_sbuf_addf(&sb, "%s ***\n", suffix);
    ssize_t n = write(s->err_fd, sb.buf, sb.len);
    (void)n;
    loom_sbuf_free(&sb);
}

static void stepd_kill_timeout(uv_timer_t *t)
{
    loom_stepd_t *s = t->data;
    loom_stepd_deliver(s, SIGKILL, LOOM_STEPD_ALL);
}

/* A reason that ends the job, as a static string; NULL for a plain signal. */
static const char *stepd_end_reason(const char *reason)
{
    static const char *const ends[] = {"cancel", "timeout", "requeue", "node_fail", "preempt"};
    for (size_t i = 0; reason && i < sizeof(ends) / sizeof(ends[0]); i++)
        if (strcmp(reason, ends[i]) == 0)
            return ends[i];
    return NULL;
}

/* End the job: CANCELLED line, SIGCONT + SIGTERM to all, SIGKILL later. */
static void stepd_terminate(loom_stepd_t *s, const char *reason, int kill_wait)
{
    if (s->reason[0] || !s->pid)
        return; /* already ending (or ended) */
    s->reason = reason;
    stepd_cancel_line(s, reason);
    loom_stepd_deliver(s, SIGCONT, LOOM_STEPD_ALL);
    loom_stepd_deliver(s, SIGTERM, LOOM_STEPD_ALL);
    uv_timer_start(&s->kill_timer, stepd_kill_timeout,
                   (uint64_t)(kill_wait > 0 ? kill_wait : 0) * 1000, 0);
}

/* An allocation ends when the controller ends it (or kills it outright). */
static int stepd_alloc_signal(loom_stepd_t *s, const char *end, int sig)
{
    if (!end && sig != SIGKILL)
        return 0;
    if (!s->done) {
        s->reason = end ? end : "";
        s->status = 0;
        s->end_time = (int64_t)time(NULL);
        loom_stepd_finish(s);
    }
    return 0;
}

int loom_stepd_signal(loom_stepd_t *s, const json_t *req, loom_err_t *err)
{
    json_t *jsig = json_object_get(req, "signal");
    const char *reason = json_string_value(json_object_get(req, "reason"));
    int kill_wait = (int)json_integer_value(json_object_get(req, "kill_wait"));
    const char *end = stepd_end_reason(reason);
    if (s->alloc)
        return stepd_alloc_signal(s, end, (int)json_integer_value(jsig));
    if (end) {
        stepd_terminate(s, end, kill_wait);
        return 0;
    }
    if (!json_is_integer(jsig) || json_integer_value(jsig) < 0 || json_integer_value(jsig) >= NSIG)
        return loom_errf(err, -LOOM_EPROTO, "stepd.signal needs a signal number");
    int sig = (int)json_integer_value(jsig);
    loom_stepd_target_t target = LOOM_STEPD_STEPS;
    if (json_is_true(json_object_get(req, "batch_only")))
        target = LOOM_STEPD_BATCH;
    else if (json_is_true(json_object_get(req, "full")))
        target = LOOM_STEPD_ALL;
    if (sig == SIGKILL)
        target = LOOM_STEPD_ALL; /* Slurm: SIGKILL always reaches the whole job */
    loom_stepd_deliver(s, sig, target);
    return 0;
}

/* --signal: the record's {"signo","secs","batch_only"}, else the submitted
 * kill_warning_signal/_delay/_flags (jobopt's keys). */
static void stepd_warn_signal(const loom_stepd_t *s, int *signo, int64_t *secs, bool *batch)
{
    json_t *sig = json_object_get(s->job, "signal"), *f;
    json_t *desc = json_object_get(s->job, "desc");
    *signo = (int)json_integer_value(json_object_get(sig, "signo"));
    *secs = (int64_t)json_integer_value(json_object_get(sig, "secs"));
    *batch = json_is_true(json_object_get(sig, "batch_only"));
    if (*signo > 0 || !desc)
        return;
    *signo = (int)json_integer_value(json_object_get(desc, "kill_warning_signal"));
    *secs = (int64_t)json_integer_value(json_object_get(desc, "kill_warning_delay"));
    size_t i;
    json_array_foreach(json_object_get(desc, "kill_warning_flags"), i, f)
    {
        if (json_is_string(f) && strcmp(json_string_value(f), "BATCH_JOB") == 0)
            *batch = true;
    }
}

static void stepd_signal_due(uv_timer_t *t)
{
    loom_stepd_t *s = t->data;
    int signo;
    int64_t secs;
    bool batch;
    stepd_warn_signal(s, &signo, &secs, &batch);
    loom_info("stepd job %u: sending signal %d (--signal) to the %s", s->job_id, signo,
              batch ? "batch shell" : "job steps");
    loom_stepd_deliver(s, signo, batch ? LOOM_STEPD_BATCH : LOOM_STEPD_STEPS);
}

void loom_stepd_arm_signal(loom_stepd_t *s)
{
    int signo;
    int64_t secs;
    bool batch;
    stepd_warn_signal(s, &signo, &secs, &batch);
    json_int_t end = json_integer_value(json_object_get(s->job, "end_time"));
    if (signo <= 0 || signo >= NSIG || end <= 0)
        return;
    int64_t due = (int64_t)end - (int64_t)secs - (int64_t)time(NULL);
    uv_timer_start(&s->signal_timer, stepd_signal_due, due > 0 ? (uint64_t)due * 1000 : 0, 0);
}
