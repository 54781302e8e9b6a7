/*
 * srun.h - srun: job steps in or out of an allocation (CLI_SPEC §2, §0.9,
 * §0.10, §12 column T; docs/proto/messages.md §3 step.*, §7 step I/O).
 *
 * srun.c        options, the allocation when there is none, step creation
 *               (retried while the job's other steps hold the CPUs), the end
 * srun_alloc.c  job.submit of an allocation (no script), waiting for it,
 *               the allocation environment, alloc.release (salloc uses it)
 * srun_io.c     the I/O server: each node's supervisor connects, sends task
 *               output (labelled, line-buffered unless -u), exits and PMI-2
 *               fences; srun sends stdin, signals, KILL and window sizes
 * srun_ctl.c    what the user does to srun: Ctrl-C once (status) and twice
 *               (abort), SIGTERM, forwarded signals, --pty's terminal,
 *               -K/--kill-on-bad-exit, -W/--wait, node failure
 *
 * One srun_t per process, created in main and passed down; no globals.
 */
#ifndef LOOM_CLI_SRUN_H
#define LOOM_CLI_SRUN_H

#include "cli/cli_common.h"

#include "common/jobopt.h"
#include "common/sbuf.h"
#include "common/strv.h"

#include <jansson.h>
#include <netinet/in.h>
#include <stdbool.h>
#include <stdint.h>
#include <termios.h>

/* One task of the step, as srun sees it. */
typedef struct srun_task {
    uint32_t rank;
    uint32_t node; /* index in the step */
    int status;    /* wait status */
    bool exited;
    bool reported;       /* its "srun: error: ..." line is out */
    bool oom;            /* its supervisor saw the OOM killer end it */
    int64_t exit_ms;     /* when its EXIT came */
    loom_sbuf_t part[2]; /* an unfinished line of stdout / stderr */
    bool mid[2];         /* -u: the last chunk did not end a line */
} srun_task_t;

/* One node of the step: its supervisor's connection. */
typedef struct srun_node {
    char *name;
    int fd; /* -1 until the supervisor connects */
    bool hello, done, lost;
    loom_sbuf_t in;  /* bytes read, not parsed yet */
    loom_sbuf_t out; /* bytes to write */
} srun_node_t;

/* A connection that has not said HELLO yet. */
typedef struct srun_pending {
    int fd;
    loom_sbuf_t in;
} srun_pending_t;

#define SRUN_MAX_PENDING 64

typedef struct srun {
    loom_cli_t cli;
    loom_jobopt_t jo;
    char **argv;      /* the command (borrowed from jo) */
    char *multi_prog; /* --multi-prog file text */
    bool own_alloc;   /* srun made the allocation and gives it back */
    uint32_t job_id, step_id;
    json_t *job;     /* the job record (own allocation) */
    loom_strv_t env; /* what the tasks start from */
    /* The step. */
    char *step_nodes;
    uint32_t nnodes, ntasks;
    uint32_t *tasks_per_node;
    char *io_key;
    srun_node_t *nodes;
    srun_task_t *tasks; /* by rank */
    int label_width;
    /* The I/O server. */
    int listen_fd, io_port;
    char io_host[INET6_ADDRSTRLEN];
    srun_pending_t pending[SRUN_MAX_PENDING];
    int stdin_fd;        /* -1 when stdin is not forwarded */
    uint32_t stdin_rank; /* LOOM_STEPIO_ALL or a rank */
    json_t *pmi;         /* fence seq -> {count, kvs} */
    json_t *kill_msg;    /* the KILL sent, for supervisors that connect later */
    /* Control. */
    int sigfd;
    int64_t last_int_ms;   /* the first Ctrl-C, for the 1 s window */
    int64_t first_exit_ms; /* -W: when the first task ended */
    int64_t next_poll_ms;  /* job state check */
    int64_t hello_deadline_ms;
    int64_t give_up_ms; /* after a node failure: stop waiting for any node */
    bool killing, aborted, pty, tty_raw;
    bool ended_by_ctld; /* the job was cancelled or timed out under the step */
    struct termios tty_saved;
    int kill_wait;
    int exit_override; /* -1, or the code to exit with (node failure) */
    int step_status;   /* the step's wait status (srun_result), -1 before it ran */
} srun_t;

/* srun_alloc.c (shared with salloc) */
typedef struct srun_alloc_opts {
    const char *prog;     /* "srun" / "salloc": message prefixes */
    const char *def_name; /* job name when -J was not given */
    bool quiet;
    int immediate; /* -I secs, 0: wait as long as it takes */
    int sigfd;     /* signalfd watched while waiting (-1: none) */
} srun_alloc_opts_t;

/* Submit an allocation with jo's options and wait until it runs. Prints
 * Slurm's pending / allocated lines (srun and salloc differ). On success
 * *job_id and *rec (new reference, the job record) are set. */
int srun_alloc_create(loom_cli_t *cli, const loom_jobopt_t *jo, const srun_alloc_opts_t *o,
                      uint32_t *job_id, json_t **rec);
/* srun --test-only: where and when such an allocation would start; nothing
 * is submitted or run (inside an allocation too, as srun 22.05 does). */
int srun_alloc_test(loom_cli_t *cli, const loom_jobopt_t *jo, const srun_alloc_opts_t *o);
/* The allocation variables (CLI_SPEC §12 column A) of rec written over env. */
void srun_alloc_env(loom_cli_t *cli, const loom_jobopt_t *jo, const json_t *rec, loom_strv_t *env);
/* Give the allocation back: alloc.release with the exit status. */
int srun_alloc_release(loom_cli_t *cli, uint32_t job_id, int status);
/* The job record (new reference), or NULL. */
json_t *srun_job_record(loom_cli_t *cli, uint32_t job_id);

/* srun_io.c */
/* Listen for the supervisors; sets io_host / io_port. */
int srun_io_listen(srun_t *s);
/* Serve the step until every node is done; returns when it is over. */
void srun_io_run(srun_t *s);
/* Queue a message to one node (-1: all nodes). */
void srun_io_send(srun_t *s, int node, int type, uint32_t rank, const void *data, size_t len);
void srun_io_send_json(srun_t *s, int node, int type, uint32_t rank, const json_t *obj);
/* Print the "srun: error: node: tasks 0-3: ..." lines of tasks not reported yet. */
void srun_io_report(srun_t *s, bool all);
/* Milliseconds on a monotonic clock. */
int64_t srun_now_ms(void);

/* srun_ctl.c */
/* Block the signals srun handles; returns the signalfd. */
int srun_ctl_signals(srun_t *s);
/* A signal arrived. */
void srun_ctl_signal(srun_t *s, int sig);
/* End the step on every node: the CANCELLED line, then sig (0: SIGTERM,
 * SIGKILL after KillWait). */
void srun_ctl_kill(srun_t *s, int sig);
/* Periodic: -W, the job's state (node failure, cancel), late supervisors. */
void srun_ctl_tick(srun_t *s);
/* A task exited (for -K and -W). */
void srun_ctl_task_exit(srun_t *s, const srun_task_t *t);
/* A supervisor's connection ended before DONE. */
void srun_ctl_node_lost(srun_t *s, uint32_t node);
/* --pty: put the terminal in raw mode and send its size. */
void srun_ctl_pty_start(srun_t *s);
void srun_ctl_pty_end(srun_t *s);

#endif
