/*
 * stepd_step.h - loomstepd as the supervisor of one job step on one node
 * (srun's tasks; docs/proto/messages.md §4 step.launch, §5, §7; CLI_SPEC §2,
 * §12 column T).
 *
 * loomd writes <spool>/step<job>.<step>/spec.json = {"step": <the
 * step.launch body>, "node": {...}} and starts `loomstepd <dir>`, which finds
 * "step" in the spec and runs here instead of the batch path. Life:
 *  1. connect to srun's I/O address (step.io) and say HELLO with the step's
 *     io_key;
 *  2. start this node's tasks (stepd_task.c): each with the step
 *     environment, its stdio (pipes to this supervisor, per-task files from
 *     the -o/-e/-i patterns, or a pty for --pty), CPU and GPU binding, its
 *     PMI-2 socket for --mpi=pmi2 (stepd_pmi2.c); tasks share one process
 *     group (the --pty task leads its own session, with the pty as its
 *     controlling terminal);
 *  3. forward output to srun as STDOUT/STDERR messages, stdin from srun to
 *     the tasks, signals and KILL from srun or loomd (stepd.signal on
 *     stepd.sock, from job.kill / step.signal), window sizes to the pty;
 *  4. when a task has exited and its output is drained, send EXIT; when all
 *     have, kill what is left of the step, report the end and the node's
 *     usage to loomd (stepd.step_done, answered once the controller has it,
 *     or after STEP_REPORT_MS), then send DONE, remove the dir, exit.
 * If srun goes away before that, the tasks are killed (SIGKILL) and the
 * supervisor exits.
 *
 * Files: stepd_step.c (this life cycle and the srun link), stepd_task.c
 * (starting tasks, binding, usage), stepd_pmi2.c (the PMI-2 server),
 * stepd_usage.c (usage gathering).
 */
#ifndef LOOM_NODED_STEPD_STEP_H
#define LOOM_NODED_STEPD_STEP_H

#include "common/devcg.h"
#include "common/err.h"
#include "common/sbuf.h"
#include "common/strv.h"
#include "noded/cgroup.h"
#include "noded/conn.h"
#include "noded/stepd_usage.h"

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include <uv.h>

#define LOOM_STEP_MAX_CLIENTS 16

typedef struct loom_step loom_step_t;
typedef struct loom_pmi2 loom_pmi2_t;

/* One task of this node. */
typedef struct loom_step_task {
    loom_step_t *step;
    uint32_t local;   /* node-local index */
    uint32_t rank;    /* global rank */
    pid_t pid;        /* 0 before start / after reaping */
    int status;       /* wait status */
    bool exited;      /* reaped */
    bool reported;    /* EXIT sent */
    bool oom;         /* killed while the OOM killer acted in the job's cgroup */
    uv_pipe_t out[2]; /* stdout, stderr readers (or the pty master in out[0]) */
    bool out_open[2];
    uv_pipe_t in; /* writer to the task's stdin */
    bool in_open;
    int pty_master; /* -1 unless --pty */
    int pmi_fd;     /* our end of the PMI-2 socket, -1 without --mpi=pmi2 */
} loom_step_task_t;

struct loom_step {
    uv_loop_t *loop;
    char *dir;
    bool allow_root;
    json_t *spec;       /* owned */
    const json_t *body; /* spec.step (borrowed) */
    const json_t *node; /* spec.node (borrowed) */
    uint32_t job_id, step_id, node_id;
    const char *node_name;
    uid_t uid;
    gid_t gid;
    char *user;
    loom_step_task_t *tasks;
    uint32_t ntasks;      /* on this node */
    uint32_t step_ntasks; /* in the whole step */
    uint32_t running;     /* started and not reaped */
    pid_t pgid;           /* the tasks' process group */
    int64_t start_time;
    /* srun */
    uv_tcp_t io;
    bool io_open, io_up, io_lost;
    loom_sbuf_t io_in; /* bytes read from srun, not parsed yet */
    size_t io_queued;  /* bytes written to srun not yet flushed */
    bool paused;       /* task output reading stopped (srun is slow) */
    /* ending */
    bool killing, done, finished;
    const char *reason; /* "" or the end reason */
    uv_timer_t kill_timer;
    uv_timer_t linger_timer; /* output drain after the last exit */
    uv_timer_t warn_timer;   /* the job's --signal before its end time */
    loom_devcg_t *devcg;     /* the step's devices cgroup (NULL: GPUs not confined) */
    loom_cgroup_t *cgroup;   /* its job's cgroup, which the tasks join (NULL: none) */
    int oom_base;            /* the cgroup's OOM kills when the step began */
    bool oom;                /* some task was OOM-killed: the step ends OUT_OF_MEMORY */
    uv_signal_t sigchld;
    loom_conn_t *loomd; /* the end-of-step report to loomd */
    bool reported;      /* loomd answered it (or gave up): DONE may go to srun */
    uv_timer_t report_timer;
    loom_gather_t *gather; /* usage of the tasks (stepd_usage.h) */
    json_t *usage;         /* the final figures, sent in stepd.step_done */
    uv_pipe_t server;      /* stepd.sock */
    bool server_open;
    loom_conn_t *clients[LOOM_STEP_MAX_CLIENTS];
    loom_pmi2_t *pmi;
};

/* stepd_step.c: run the step supervisor; returns the exit status of loomstepd. */
int loom_step_main(uv_loop_t *loop, const char *dir, json_t *spec, bool allow_root);
/* Queue a message to srun (dropped when the link is gone). */
void loom_step_send(loom_step_t *s, int type, uint32_t rank, const void *data, size_t len);
void loom_step_send_json(loom_step_t *s, int type, uint32_t rank, const json_t *obj);
/* Start ending the step: CANCELLED line (reason "cancel", "timeout", ...
 * or "" for none), SIGCONT + SIGTERM (or sig when > 0), SIGKILL after
 * kill_wait seconds. */
void loom_step_terminate(loom_step_t *s, const char *reason, int kill_wait, int sig);
/* Signal every task's process group. */
void loom_step_signal_tasks(loom_step_t *s, int sig);

/* stepd_task.c */
/* Start every task of this node (after HELLO). A task that cannot start
 * is reported as exited with errno as its code, as slurmstepd does. */
int loom_step_tasks_start(loom_step_t *s, loom_err_t *err);
/* Write bytes to the stdin of one task (rank) or all (LOOM_STEPIO_ALL). */
void loom_step_tasks_stdin(loom_step_t *s, uint32_t rank, const char *data, size_t len);
void loom_step_tasks_stdin_eof(loom_step_t *s);
/* Stop or resume reading task output (srun backpressure). */
void loom_step_tasks_pause(loom_step_t *s, bool pause);
/* Set the pty window size of a --pty step. */
void loom_step_tasks_winsize(loom_step_t *s, unsigned rows, unsigned cols);
/* Start gathering the tasks' usage (after they started). */
void loom_step_tasks_gather(loom_step_t *s);
/* The usage of the step's processes on this node (stepd.usage reply). */
json_t *loom_step_tasks_usage(loom_step_t *s);
/* Close every task handle (before the loop ends). */
void loom_step_tasks_close(loom_step_t *s);
/* Has task t finished (reaped and its output drained)? Sends EXIT once. */
void loom_step_task_check(loom_step_t *s, loom_step_task_t *t);

/* stepd_pmi2.c */
/* A PMI-2 server for the step; NULL when --mpi is not pmi2. */
loom_pmi2_t *loom_pmi2_create(loom_step_t *s);
/* Serve one task's socket (fd: our end; the task has the other as PMI_FD). */
int loom_pmi2_add_task(loom_pmi2_t *p, loom_step_task_t *t, int fd);
/* A PMI message from srun: the merged KVS of a fence. */
void loom_pmi2_from_srun(loom_pmi2_t *p, const json_t *msg);
/* PMI_process_mapping for the step's layout (malloc'd). */
char *loom_pmi2_mapping(const json_t *step_body);
void loom_pmi2_destroy(loom_pmi2_t *p);

#endif
