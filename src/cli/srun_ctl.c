/*
 * srun_ctl.c - what happens to a running step from srun's side (CLI_SPEC
 * §2 "Signals"; srun 22.05's messages, checked against the real srun):
 *
 *  - Ctrl-C once: "interrupt (one more within 1 sec to abort)" and each
 *    task's state; twice within a second: SIGINT to the tasks, then the step
 *    is ended ("forcing job termination", the CANCELLED line, SIGTERM and
 *    SIGKILL after KillWait);
 *  - SIGTERM, SIGHUP: "forcing job termination", the step ends with SIGKILL;
 *  - SIGUSR1, SIGUSR2, SIGQUIT: forwarded to the tasks; SIGWINCH: the --pty
 *    terminal's new size;
 *  - -K/--kill-on-bad-exit: a task ending badly ends the step;
 *  - -W/--wait=S: S seconds after the first task ends, the rest are ended;
 *  - the job's state is checked every few seconds, and at once when a
 *    supervisor's connection drops: a node failure ends the step with
 *    "Node failure on <node>"; a supervisor that never says HELLO is a
 *    launch failure.
 */
#include "cli/srun.h"

#include "cli/cli_format.h"
#include "common/jobstate.h"
#include "common/stepio.h"
#include "common/xalloc.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/signalfd.h>
#include <sys/wait.h>
#include <unistd.h>

#define CTL_POLL_MS      5000
#define CTL_LOST_POLL_MS 500
#define CTL_HELLO_MS     60000

int srun_ctl_signals(srun_t *s)
{
    sigset_t mask;
    sigemptyset(&mask);
    int sigs[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2, SIGWINCH};
    for (size_t i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++)
        sigaddset(&mask, sigs[i]);
    sigprocmask(SIG_BLOCK, &mask, NULL);
    signal(SIGPIPE, SIG_IGN);
    s->sigfd = signalfd(-1, &mask, SFD_CLOEXEC | SFD_NONBLOCK);
    return s->sigfd;
}

/* "0-1,3" of the tasks in the given state. */
static void ctl_ranks(const srun_t *s, int which, loom_sbuf_t *out, size_t *count)
{
    *count = 0;
    for (uint32_t r = 0; r < s->ntasks; r++) {
        int st = !s->tasks[r].exited ? 0 : s->tasks[r].status == 0 ? 1 : 2;
        if (st != which)
            continue;
        uint32_t end = r;
        while (end + 1 < s->ntasks) {
            const srun_task_t *t = &s->tasks[end + 1];
            int st2 = !t->exited ? 0 : t->status == 0 ? 1 : 2;
            if (st2 != which)
                break;
            end++;
        }
        loom_sbuf_addf(out, "%s%u", out->len ? "," : "", (unsigned)r);
        if (end > r)
            loom_sbuf_addf(out, "-%u", (unsigned)end);
        *count += end - r + 1;
        r = end;
    }
}

/* srun's status lines: "StepId=5.0 tasks 0-1: running". */
static void ctl_status(srun_t *s)
{
    static const char *const what[] = {"running", "exited", "exited abnormally"};
    for (int w = 0; w < 3; w++) {
        loom_sbuf_t ranks = LOOM_SBUF_INIT;
        size_t n;
        ctl_ranks(s, w, &ranks, &n);
        if (n)
            loom_cli_info(&s->cli, "StepId=%u.%u task%s %s: %s", s->job_id, s->step_id,
                          n > 1 ? "s" : "", loom_sbuf_str(&ranks), what[w]);
        loom_sbuf_free(&ranks);
    }
}

static void ctl_forward(srun_t *s, int sig)
{
    json_t *m = json_pack("{s:i}", "signal", sig);
    srun_io_send_json(s, -1, LOOM_STEPIO_SIGNAL, LOOM_STEPIO_ALL, m);
    json_decref(m);
}

void srun_ctl_kill(srun_t *s, int sig)
{
    if (s->killing)
        return;
    s->killing = true;
    json_t *m = json_pack("{s:s, s:i}", "reason", "cancel", "kill_wait", sig ? 0 : s->kill_wait);
    if (sig)
        json_object_set_new(m, "signal", json_integer(sig));
    srun_io_send_json(s, -1, LOOM_STEPIO_KILL, LOOM_STEPIO_ALL, m);
    s->kill_msg = m;
}

static void ctl_aborted(srun_t *s)
{
    if (s->aborted)
        return;
    s->aborted = true;
    loom_cli_info(&s->cli, "Job step aborted: Waiting up to %d seconds for job step to finish.",
                  s->kill_wait + 2);
}

static void ctl_interrupt(srun_t *s)
{
    int64_t now = srun_now_ms();
    if (s->pty || s->jo.argv.n == 0) {
        ctl_forward(s, SIGINT);
        return;
    }
    if (s->last_int_ms && now - s->last_int_ms <= 1000) {
        loom_cli_info(&s->cli, "sending Ctrl-C to StepId=%u.%u", s->job_id, s->step_id);
        ctl_forward(s, SIGINT);
        loom_cli_info(&s->cli, "forcing job termination");
        srun_ctl_kill(s, SIGKILL);
        ctl_aborted(s);
        return;
    }
    s->last_int_ms = now;
    loom_cli_info(&s->cli, "interrupt (one more within 1 sec to abort)");
    ctl_status(s);
}

void srun_ctl_signal(srun_t *s, int sig)
{
    switch (sig) {
    case SIGINT:
        ctl_interrupt(s);
        break;
    case SIGTERM:
    case SIGHUP:
        loom_cli_info(&s->cli, "forcing job termination");
        srun_ctl_kill(s, SIGKILL);
        ctl_aborted(s);
        break;
    case SIGWINCH:
        if (s->pty && s->tty_raw) {
            struct winsize ws;
            if (ioctl(0, TIOCGWINSZ, &ws) == 0) {
                json_t *m = json_pack("{s:i, s:i}", "rows", ws.ws_row, "cols", ws.ws_col);
                srun_io_send_json(s, 0, LOOM_STEPIO_WINSIZE, LOOM_STEPIO_ALL, m);
                json_decref(m);
            }
        }
        break;
    default:
        ctl_forward(s, sig);
    }
}

static bool ctl_bad(int status)
{
    return !WIFEXITED(status) || WEXITSTATUS(status) != 0;
}

static void ctl_terminate(srun_t *s)
{
    loom_cli_info(&s->cli, "launch/slurm: _step_signal: Terminating StepId=%u.%u", s->job_id,
                  s->step_id);
    srun_ctl_kill(s, 0);
}

/* A task killed by a signal srun did not send: when the job has ended
 * (scancel, time limit) srun 22.05 says the step is aborted. */
static void ctl_check_ended(srun_t *s, const srun_task_t *t)
{
    if (!WIFSIGNALED(t->status) || s->killing || s->aborted || s->ended_by_ctld)
        return;
    json_t *rec = srun_job_record(&s->cli, s->job_id);
    loom_job_state_t base = rec ? loom_job_base(loom_cli_job_state(rec)) : LOOM_JOB_RUNNING;
    json_decref(rec);
    if (base == LOOM_JOB_RUNNING || base == LOOM_JOB_SUSPENDED)
        return;
    s->ended_by_ctld = true;
    ctl_aborted(s);
}

void srun_ctl_task_exit(srun_t *s, const srun_task_t *t)
{
    if (!s->first_exit_ms)
        s->first_exit_ms = srun_now_ms();
    ctl_check_ended(s, t);
    if (s->jo.kill_on_bad_exit == 1 && ctl_bad(t->status) && !s->killing) {
        srun_io_report(s, true);
        ctl_terminate(s);
    }
}

void srun_ctl_node_lost(srun_t *s, uint32_t node)
{
    s->next_poll_ms = srun_now_ms();
}

/* -W: the first task ended that long ago. */
static void ctl_wait(srun_t *s, int64_t now)
{
    if (s->jo.step_wait <= 0 || !s->first_exit_ms || s->killing)
        return;
    if (now - s->first_exit_ms < (int64_t)s->jo.step_wait * 1000)
        return;
    bool running = false;
    for (uint32_t r = 0; r < s->ntasks; r++)
        running |= !s->tasks[r].exited;
    if (!running)
        return;
    loom_cli_info(&s->cli, "First task exited %ds ago", s->jo.step_wait);
    ctl_status(s);
    ctl_terminate(s);
    ctl_aborted(s);
}

/* Stop waiting for nodes that cannot answer any more. */
static void ctl_give_up(srun_t *s, bool only_lost, int status)
{
    for (uint32_t i = 0; i < s->nnodes; i++) {
        srun_node_t *n = &s->nodes[i];
        if (n->done || (only_lost && !n->lost && n->hello))
            continue;
        n->lost = true;
        if (n->fd >= 0) { /* nothing more will come from there */
            close(n->fd);
            n->fd = -1;
        }
        loom_sbuf_reset(&n->out);
        for (uint32_t r = 0; r < s->ntasks; r++)
            if (s->tasks[r].node == i && !s->tasks[r].exited) {
                s->tasks[r].exited = true;
                s->tasks[r].reported = true;
                s->tasks[r].status = status;
            }
    }
}

/* The step's nodes the controller has set DOWN: their supervisors are gone
 * even when their connections have not said so (a host cut off the network). */
static void ctl_down_nodes(srun_t *s)
{
    json_t *body = json_pack("{s:s}", "nodes", s->step_nodes), *reply = NULL;
    loom_cli_call(&s->cli, "node.info", body, &reply, NULL);
    json_decref(body);
    size_t i;
    json_t *n;
    json_array_foreach(json_object_get(reply, "nodes"), i, n)
    {
        json_t *st = json_object_get(n, "state");
        const char *base =
            json_is_array(st) ? json_string_value(json_array_get(st, 0)) : json_string_value(st);
        const char *name = json_string_value(json_object_get(n, "name"));
        for (uint32_t k = 0; base && name && strncmp(base, "DOWN", 4) == 0 && k < s->nnodes; k++)
            if (strcmp(s->nodes[k].name, name) == 0 && !s->nodes[k].done)
                s->nodes[k].lost = true;
    }
    json_decref(reply);
}

static void ctl_node_failure(srun_t *s)
{
    ctl_down_nodes(s);
    loom_sbuf_t names = LOOM_SBUF_INIT;
    for (uint32_t i = 0; i < s->nnodes; i++)
        if (s->nodes[i].lost && !s->nodes[i].done)
            loom_sbuf_addf(&names, "%s%s", names.len ? "," : "", s->nodes[i].name);
    loom_cli_error(&s->cli, "Node failure on %s", names.len ? loom_sbuf_str(&names) : "a node");
    loom_sbuf_free(&names);
    srun_ctl_kill(s, SIGKILL);
    ctl_aborted(s);
    ctl_give_up(s, true, SIGKILL);
    if (s->exit_override < 0)
        s->exit_override = 1;
    /* The nodes still up have KillWait to say their tasks ended. */
    s->give_up_ms = srun_now_ms() + (int64_t)(s->kill_wait + 2) * 1000;
}

static void ctl_poll_job(srun_t *s, int64_t now)
{
    bool lost = false;
    for (uint32_t i = 0; i < s->nnodes; i++)
        lost |= s->nodes[i].lost && !s->nodes[i].done;
    if (now < s->next_poll_ms)
        return;
    s->next_poll_ms = now + (lost ? CTL_LOST_POLL_MS : CTL_POLL_MS);
    json_t *rec = srun_job_record(&s->cli, s->job_id);
    loom_job_state_t base = rec ? loom_job_base(loom_cli_job_state(rec)) : LOOM_JOB_COMPLETED;
    json_decref(rec);
    if (base == LOOM_JOB_RUNNING || base == LOOM_JOB_SUSPENDED)
        return;
    if (base == LOOM_JOB_NODE_FAIL) {
        if (!s->killing)
            ctl_node_failure(s);
        else
            ctl_give_up(s, true, SIGKILL);
        return;
    }
    /* Cancelled, timed out, ...: the supervisors end the tasks and say so;
     * those that cannot are not waited for. */
    if (lost)
        ctl_give_up(s, true, SIGKILL);
}

void srun_ctl_tick(srun_t *s)
{
    int64_t now = srun_now_ms();
    if (s->give_up_ms && now >= s->give_up_ms)
        ctl_give_up(s, false, SIGKILL);
    ctl_wait(s, now);
    ctl_poll_job(s, now);
    if (!s->hello_deadline_ms)
        s->hello_deadline_ms = now + CTL_HELLO_MS;
    if (now < s->hello_deadline_ms)
        return;
    for (uint32_t i = 0; i < s->nnodes; i++) {
        if (s->nodes[i].hello || s->nodes[i].lost)
            continue;
        loom_cli_error(&s->cli,
                       "Task launch for StepId=%u.%u failed on node %s: Socket timed "
                       "out on send/recv operation",
                       s->job_id, s->step_id, s->nodes[i].name);
        s->nodes[i].lost = true;
        ctl_give_up(s, true, 1 << 8);
        srun_ctl_kill(s, SIGKILL);
        if (s->exit_override < 0)
            s->exit_override = 1;
    }
}

void srun_ctl_pty_start(srun_t *s)
{
    if (!isatty(0) || s->tty_raw)
        return;
    if (tcgetattr(0, &s->tty_saved) < 0)
        return;
    struct termios raw = s->tty_saved;
    cfmakeraw(&raw);
    if (tcsetattr(0, TCSANOW, &raw) < 0)
        return;
    s->tty_raw = true;
    srun_ctl_signal(s, SIGWINCH);
}

void srun_ctl_pty_end(srun_t *s)
{
    if (!s->tty_raw)
        return;
    tcsetattr(0, TCSANOW, &s->tty_saved);
    s->tty_raw = false;
}
