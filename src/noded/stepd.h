/*
 * stepd.h - loomstepd, the supervisor of one batch job on one node
 * (docs/proto/messages.md §5, DESIGN.md §Job execution).
 *
 * loomd starts `loomstepd [-v] [-L log] [--allow-root-jobs] <jobdir>` with
 * posix_spawn for each job.launch. The job dir holds:
 *   spec.json    written by loomd: {"job": <job record with script, env,
 *                alloc>, "node": {name, cluster, conf, hostname, loomd_sock,
 *                gpu_env, job_file_append}}
 *   script       the batch script (owned by the job's user, mode 0700)
 *   stepd.sock   this supervisor's socket: stepd.signal requests from loomd
 *   status.json  written atomically once the batch script has ended:
 *                {job_id, exit_code (wait status), end_time, reason, stepd_pid}
 * Life: setsid; read the spec; refuse uid 0 unless allowed; create the
 * output files as the user; fork the script in its own session with the
 * job's environment; deliver signals; when the script ends kill what is
 * left of the job, write status.json, report stepd.done to loomd (retrying
 * until loomd acknowledges, which it does once the controller has), remove
 * the job dir and exit.
 *
 * An allocation made by salloc or srun (a job record whose script is empty)
 * runs nothing: the supervisor holds the job on its first node until the
 * controller ends it (job.kill), so that loomd reports it like any job.
 * A spec with a "step" member is a job step's: see stepd_step.h.
 *
 * Files: stepd_main.c (life cycle, reporting), stepd_exec.c (starting the
 * script), stepd_kill.c (signals and the CANCELLED line), cgroup.c,
 * stepd_usage.c (usage of the batch step: stepd.done's "usage");
 * stepd_step.c, stepd_task.c, stepd_pmi2.c (job steps).
 */
#ifndef LOOM_NODED_STEPD_H
#define LOOM_NODED_STEPD_H

#include "noded/cgroup.h"
#include "noded/conn.h"
#include "noded/stepd_usage.h"

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include <uv.h>

#define LOOM_STEPD_MAX_CLIENTS 16

typedef struct loom_stepd {
    uv_loop_t *loop;
    char *job_dir;
    bool allow_root;
    json_t *spec;       /* owned */
    const json_t *job;  /* spec.job (borrowed) */
    const json_t *node; /* spec.node (borrowed) */
    uint32_t job_id;
    const char *node_name;
    uid_t uid;
    gid_t gid;
    char *user;
    pid_t pid;          /* the batch shell; 0 before start / after exit */
    pid_t sid;          /* its session (= its pid), kept after it exits */
    int err_fd;         /* the job's stderr file (for the CANCELLED line), -1 if none */
    int status;         /* wait status of the batch shell */
    int64_t end_time;   /* when it ended */
    const char *reason; /* "", "cancel", "timeout", ... (static strings) */
    bool done;
    bool alloc; /* an allocation (salloc/srun): no script, held until killed */
    uv_signal_t sigchld;
    uv_timer_t kill_timer;   /* SIGKILL after KillWait */
    uv_timer_t signal_timer; /* --signal before the end time */
    uv_timer_t retry_timer;  /* reporting to loomd */
    uv_timer_t watch_timer;  /* is the job dir still there? */
    int retry_ms;
    uv_pipe_t server; /* stepd.sock */
    bool server_open;
    loom_conn_t *loomd;                           /* while reporting */
    loom_conn_t *clients[LOOM_STEPD_MAX_CLIENTS]; /* connections on stepd.sock */
    loom_cgroup_t *cgroup;                        /* NULL when not confined */
    loom_devcg_t *devcg;   /* ConstrainDevices: the batch script's GPUs only, or NULL */
    loom_gather_t *gather; /* usage of the batch step (NULL for an allocation) */
    json_t *usage;         /* its final figures, once the script has ended */
} loom_stepd_t;

/* stepd_exec.c: prepare and start the batch script (s->pid set). On failure
 * the message says why (it is also written to the job's stderr file when that
 * file could be opened). */
int loom_stepd_start(loom_stepd_t *s, loom_err_t *err);

/* stepd_main.c: the job is over (status, end_time, reason set): report it. */
void loom_stepd_finish(loom_stepd_t *s);

/* stepd_kill.c */
/* Handle a stepd.signal request body. */
int loom_stepd_signal(loom_stepd_t *s, const json_t *req, loom_err_t *err);
/* The batch shell has ended: SIGKILL whatever is left of the job. */
void loom_stepd_kill_rest(loom_stepd_t *s);
/* Arm the --signal timer from the job record, if it asks for one. */
void loom_stepd_arm_signal(loom_stepd_t *s);
/* Send sig to the processes of the job's session: "all", "steps" (process
 * groups other than the batch shell's) or only the batch shell. */
typedef enum { LOOM_STEPD_ALL, LOOM_STEPD_STEPS, LOOM_STEPD_BATCH } loom_stepd_target_t;
int loom_stepd_deliver(loom_stepd_t *s, int sig, loom_stepd_target_t target);

#endif
