/*
 * noded.h - loomd, the node daemon (docs/proto/messages.md §4, §5;
 * DESIGN.md §Job execution).
 *
 * `loomd -f slurm.conf -N <node> [-D] [-v] [-L log] [--allow-root-jobs]`
 *
 * One context (loom_noded_t) created in main and passed down; a single libuv
 * loop. loomd keeps one TCP connection to the controller (register, then
 * heartbeats; the controller sends job.launch and job.kill on the same
 * connection), reconnecting with a growing delay when it drops. It listens
 * on its node port (authenticated frames only) and on <spool>/loomd.sock
 * for its step supervisors.
 *
 * Jobs. Each job.launch gets a job dir <spool>/job<id>/ (job<id>.<n> for the
 * n-th requeued run, so a new run never meets the old one's files) with spec.json and a
 * loomstepd (posix_spawn) that outlives loomd. The job table holds what this
 * node still has to report:
 *   RUNNING   the supervisor runs the script
 *   DONE      ended (stepd.done, or status.json found); job.complete not acked
 *   REPORTING job.complete sent on the current controller connection
 *   ACKED     the controller has it; waiting for the supervisor to collect
 *             its ack (or, with no live supervisor, loomd removes the dir)
 * A restarted loomd rebuilds the table from the job dirs (loom_noded_scan)
 * before it registers, and lists RUNNING and DONE jobs in node.register.
 *
 * Steps. Each step.launch gets <spool>/step<job>.<step>/ and a loomstepd
 * that talks to srun itself and removes its dir when done; job.kill reaches
 * the job's step supervisors as well as its batch supervisor.
 *
 * Files: loomd_main.c (start, config, signals), loomd_ctl.c (controller
 * link, dispatch of its requests, the node port), loomd_jobs.c (launch,
 * kill, completion, scan), loomd_steps.c (steps), loomd_gpus.c (GPUs from
 * gres.conf / NVML).
 */
#ifndef LOOM_NODED_NODED_H
#define LOOM_NODED_NODED_H

#include "common/auth.h"
#include "common/cgconf.h"
#include "common/conf.h"
#include "noded/conn.h"

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include <uv.h>

typedef enum {
    LOOM_NJOB_RUNNING = 0,
    LOOM_NJOB_DONE,
    LOOM_NJOB_REPORTING,
    LOOM_NJOB_ACKED,
} loom_njob_state_t;

typedef struct loom_noded_job {
    uint32_t job_id;
    uint32_t run; /* restart_cnt: a requeued run gets its own job dir */
    loom_njob_state_t state;
    pid_t stepd_pid; /* our child, or 0 (after a restart) */
    int exit_code;   /* wait status */
    int64_t end_time;
    char reason[24];
    loom_conn_t *stepd; /* the supervisor's stepd.done connection, awaiting our ack */
    json_t *stepd_req;  /* that request (to reply to) */
    json_t *usage;      /* the batch step's usage (stepd.done / status.json), or NULL */
    bool orphan;        /* no live supervisor: loomd removes the dir */
    struct loom_noded_job *next;
} loom_noded_job_t;

typedef struct loom_noded_gpu {
    char *type;     /* "h100", or NULL */
    char *file;     /* device file */
    uint32_t index; /* device index on this node (File order) */
} loom_noded_gpu_t;

/* A connection accepted on the node port or loomd.sock. */
typedef struct loom_noded_peer {
    loom_conn_t *conn;
    uint64_t serial;
    struct loom_noded_peer *next;
} loom_noded_peer_t;

typedef struct loom_noded {
    uv_loop_t *loop;
    char *conf_path;
    loom_conf_t *conf;
    const loom_conf_node_t *me;
    const char *name; /* -N */
    char *spool;      /* SlurmdSpoolDir, %n and %h expanded */
    char *log_path;   /* NULL: stderr */
    int verbose;
    bool allow_root;
    loom_key_t *key;
    char *stepd_exe; /* loomstepd beside loomd */
    char hostname[256];
    int64_t boot_time;

    loom_noded_gpu_t *gpus;
    size_t ngpus;
    loom_cgconf_t cgconf; /* cgroup.conf beside slurm.conf, TaskPlugin's task/cgroup */
    unsigned gpu_env;     /* LOOM_JOBENV_GPU_* from gres.conf Flags */

    /* The controller link. */
    loom_conn_t *ctl;
    uint64_t ctl_serial; /* changes with every connection */
    bool connecting;
    bool registered;
    int backoff_ms;
    uv_timer_t reconnect_timer;
    uv_timer_t heartbeat_timer;

    /* Listeners. */
    uv_tcp_t port_server;
    bool port_open;
    uv_pipe_t stepd_server;
    bool stepd_open;
    loom_noded_peer_t *peers;
    uint64_t next_serial;

    loom_noded_job_t *jobs;
    struct loom_noded_step *steps; /* step supervisors (loomd_steps.c) */
    struct loom_noded_kill *kills; /* job.kill requests in flight (loomd_jobs.c) */
    uv_signal_t sigchld, sigterm, sigint;
    bool stopping;
} loom_noded_t;

/* loomd_ctl.c */
void loom_noded_ctl_start(loom_noded_t *n);
void loom_noded_ctl_stop(loom_noded_t *n);
int loom_noded_port_listen(loom_noded_t *n, loom_err_t *err);
/* Send a request on the controller link; false when not registered. */
bool loom_noded_ctl_request(loom_noded_t *n, json_t *req, loom_conn_reply_f *cb, void *arg);
/* The registration message (with the jobs this node still supervises). */
json_t *loom_noded_register_msg(loom_noded_t *n);
/* Track accepted connections so a late reply can tell whether its peer lives. */
uint64_t loom_noded_peer_add(loom_noded_t *n, loom_conn_t *c);
void loom_noded_peer_remove(loom_noded_t *n, loom_conn_t *c);
bool loom_noded_peer_alive(const loom_noded_t *n, const loom_conn_t *c, uint64_t serial);
void loom_noded_peers_close(loom_noded_t *n);

/* loomd_jobs.c */
int loom_noded_stepd_listen(loom_noded_t *n, loom_err_t *err);
/* Rebuild the job table from <spool>/job* (start-up). */
void loom_noded_scan(loom_noded_t *n);
/* Requests from the controller; each replies (now or later) on conn. */
void loom_noded_job_launch(loom_noded_t *n, loom_conn_t *conn, json_t *req);
void loom_noded_job_kill(loom_noded_t *n, loom_conn_t *conn, json_t *req);
/* Registered again: send job.complete for every DONE job. */
void loom_noded_jobs_resend(loom_noded_t *n);
/* The controller link dropped: REPORTING jobs go back to DONE. */
void loom_noded_jobs_unsent(loom_noded_t *n);
/* SIGCHLD: reap supervisors. */
void loom_noded_reap(loom_noded_t *n);
/* Periodic: forget ACKED jobs whose supervisor died before collecting. */
void loom_noded_jobs_tick(loom_noded_t *n);
void loom_noded_jobs_free(loom_noded_t *n);
/* Shutdown: abandon the job.kill requests in flight. */
void loom_noded_jobs_stop(loom_noded_t *n);
/* Append {"job_id","state",...} of each RUNNING/DONE job. */
void loom_noded_jobs_list(const loom_noded_t *n, json_t *arr);
/* posix_spawn a loomstepd for the job or step dir. */
int loom_noded_spawn_stepd(const loom_noded_t *n, const char *dir, pid_t *pid, loom_err_t *err);
/* spec.json's "node" section (new reference). */
json_t *loom_noded_node_section(const loom_noded_t *n);
/* The serial of an accepted or controller connection (0 when unknown). */
uint64_t loom_noded_conn_serial(const loom_noded_t *n, const loom_conn_t *c);

/* loomd_steps.c */
void loom_noded_step_launch(loom_noded_t *n, loom_conn_t *conn, json_t *req);
void loom_noded_step_signal(loom_noded_t *n, loom_conn_t *conn, json_t *req);
void loom_noded_step_usage(loom_noded_t *n, loom_conn_t *conn, json_t *req);
/* The stepd.sock of a job's batch supervisor still running here; -ENOENT. */
int loom_noded_job_sock(const loom_noded_t *n, uint32_t job_id, char *out, size_t size);
/* stepd.step_done from a step's supervisor: passed on to the controller. */
void loom_noded_step_done(loom_noded_t *n, loom_conn_t *conn, json_t *msg);
/* job.kill: pass it to the job's step supervisors here; how many there were. */
size_t loom_noded_steps_kill(loom_noded_t *n, const json_t *req);
/* SIGCHLD: true when pid was a step supervisor. */
bool loom_noded_steps_reap(loom_noded_t *n, pid_t pid, int status);
/* Start-up: steps whose supervisors outlived a previous loomd. */
void loom_noded_steps_scan(loom_noded_t *n);
/* Periodic: forget supervisors found by the scan that are gone. */
void loom_noded_steps_tick(loom_noded_t *n);
void loom_noded_steps_free(loom_noded_t *n);

/* loomd_gpus.c */
/* Fill n->gpus from gres.conf beside slurm.conf (or NVML with AutoDetect=nvml). */
int loom_noded_gpus_load(loom_noded_t *n, loom_err_t *err);
void loom_noded_gpus_free(loom_noded_t *n);

#endif
