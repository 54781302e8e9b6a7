/*
 * ctld.h - loomctld's context and its tables (DESIGN.md §Processes, §Controller state).
 *
 * One ctld_t is created in main() and passed down; there are no mutable
 * globals. The event loop is single-threaded; only the journal's write+fsync
 * runs on libuv's thread pool, so no state needs a lock.
 *
 * Subsystems and their files:
 *   server.c       listeners (Unix socket, TCP), connections, frames, auth
 *   dispatch.c     the handler table paired with the message registry
 *   h_jobs.c       client job requests: submit, info, signal, update, hold, requeue
 *   h_misc.c       ping, config/partition/node info, node.update, shutdown, steps
 *   job_mgr.c      the job table, defaults and validation from a job description
 *   job_rec.c      job records (JSON) for job.info, the journal and job.launch
 *   job_script.c   job scripts and environments in files under StateSaveLocation
 *   job_state.c    the one path for every change: journal the event, then apply it
 *   journal.c      append-only journal with group commit, snapshots, recovery
 *   node_mgr.c     node and partition tables, registration, heartbeats, timeouts
 *   sched_driver.c scheduling passes (src/sched), starting jobs, time limits
 *   ctld.c         the context as a whole: clock, admins, reconfigure, shutdown
 *   main.c         the process: options, start-up, recovery, the tick, the loop
 *
 * Cross-file functions inside the daemon are named ctld_<file>_<verb>; the
 * executable exports nothing (hidden visibility).
 *
 * Invariants:
 *  - every change of controller state goes through ctld_commit() (job_state.c):
 *    it appends the event to the journal and applies it; replay applies the
 *    same events, so the in-memory state after a restart is the same;
 *  - a reply to a request that changed state is sent only once the journal
 *    entries it caused are durable (dispatch.c, journal.h);
 *  - the sched node model (snodes) holds exactly the allocations of the jobs
 *    whose alloc_applied is true.
 */
#ifndef LOOM_CTLD_H
#define LOOM_CTLD_H

#include "common/auth.h"
#include "common/conf.h"
#include "common/constraint.h"
#include "common/err.h"
#include "common/gres.h"
#include "common/gresconf.h"
#include "common/sbuf.h"
#include "common/strv.h"
#include "ctld/journal.h"
#include "sched/pass.h"
#include "sched/resources.h"

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include <uv.h>

typedef struct ctld ctld_t;
typedef struct ctld_conn ctld_conn_t;
typedef struct ctld_server ctld_server_t;
typedef struct ctld_dispatch ctld_dispatch_t;

/* A growable array of pointers. */
typedef struct ctld_vec {
    void **v;
    size_t n, cap;
} ctld_vec_t;

void ctld_vec_push(ctld_vec_t *vec, void *p);
/* Remove p (order not kept); false when absent. */
bool ctld_vec_remove(ctld_vec_t *vec, void *p);
void ctld_vec_free(ctld_vec_t *vec);

/* A job step (srun inside an allocation). */
typedef struct ctld_step {
    uint32_t id;
    char *name;
    char *nodes; /* compressed hostlist */
    uint32_t ntasks;
    uint32_t *tasks_per_node;
    uint32_t nnodes;
    uint32_t cpus_per_task;
    int64_t start_time;
    uid_t uid;
    struct ctld_step_x *x; /* step_mgr.c: placement, launch (owned) */
} ctld_step_t;

typedef struct ctld_part ctld_part_t;

typedef struct ctld_job {
    uint32_t id;
    uint32_t state;     /* jobstate.h word */
    const char *reason; /* static: Slurm's reason name, "None" */
    uint32_t priority;
    uint32_t prio_base; /* priority before a hold */
    int32_t nice;
    int32_t site_factor; /* scontrol update SiteFactor= (admins): added to the priority */
    char hold;           /* 0, 'u' (JobHeldUser) or 'a' (JobHeldAdmin) */
    /* With cancelled_by_set: the uid whose scancel cancelled the job. */
    uint32_t cancelled_by;
    bool cancelled_by_set;
    uint32_t uid, gid;
    uint32_t alloc_sid; /* the submitter's session (scontrol: AllocNode:Sid) */
    char *user, *group;
    char *name, *account, *qos, *comment, *work_dir, *command;
    char *std_out, *std_err, *std_in, *features, *req_nodes, *exc_nodes;
    char *dependency, *submit_host, *gres, *gpus, *mail_type, *mail_user;
    char *submit_line; /* sacct SubmitLine */
    ctld_part_t *part;
    int64_t submit_time, eligible_time, begin_time, start_time, end_time, suspend_time;
    /* Suspension (Slurm's): run seconds before the last suspend, and all the
     * seconds suspended up to the last resume; suspend_time is the last
     * suspend or resume. Suspended time is not run time (job_state.c). */
    int64_t pre_sus_time, tot_sus_time;
    int64_t time_limit; /* minutes, -1 infinite */
    int64_t time_min;
    uint32_t min_nodes, max_nodes, ntasks, ntasks_per_node, cpus_per_task, min_cpus;
    uint64_t mem_per_node, mem_per_cpu; /* MiB; at most one set */
    bool mem_whole;                     /* --mem=0, or memory tracked without a default */
    bool exclusive, requeue, contiguous;
    bool ntasks_set;
    bool reboot;      /* --reboot, scontrol update Reboot= (shown; nodes are not rebooted) */
    char oversub;     /* OverSubscribe: 0 not asked (OK), 'y' (YES), 'n' (NO) */
    int64_t deadline; /* --deadline, epoch seconds; 0 none */
    int64_t tmp_disk; /* --tmp, MiB per node: nodes with less TmpDisk are not used */
    char *admin_comment;
    int exit_code, derived_exit_code;
    uint32_t restart_cnt;
    json_t *desc; /* the submitted description */
    /* The script and environment ("NAME=value" array) of a job being
     * submitted; NULL in the job table, where they are in files
     * (job_script.h). batch: it has a script (salloc/srun allocations not). */
    char *script;
    json_t *env;
    bool batch;
    /* Scheduling request, built from the fields above (job_mgr.c). */
    loom_sched_req_t req;
    loom_sched_gres_req_t *gres_req; /* names point into gres_list / gpus_list */
    size_t ngres_req;
    loom_gres_list_t gres_list, gpus_list;
    bool *allowed;             /* per node: partition, exclude, features */
    uint32_t *req_idx;         /* required nodes */
    bool bad_constraint;       /* no node can satisfy -C */
    struct ctld_sched_job *sx; /* sched_job.c: GPU options, -C tree, partitions, plan (owned) */
    /* Job arrays (job_array.c). array_job_id is 0 for a plain job. The
     * array's meta record (id == array_job_id) holds, while two or more tasks
     * have not been split off, their indexes in array_pending (its
     * array_task_id is then CTLD_NO_TASK); every other record is one task. */
    uint32_t array_job_id, array_task_id;
    uint32_t array_throttle; /* the whole array's %N (0: none) */
    struct loom_rangeset *array_pending;
    /* The meta record came down to one index without a split (submitted with
     * one, or the others cancelled): shown folded ("12_[3]") until it runs. */
    bool array_folded;
    struct ctld_array *array; /* the array's shared bookkeeping (not journaled) */
    /* The allocation while RUNNING (and while COMPLETING). */
    loom_sched_alloc_t alloc;
    bool alloc_applied;
    char *nodes, *batch_host;
    /* Controller-side bookkeeping, not journaled. */
    int list; /* which of jobs_pending/_running/_done holds it (job_mgr.c) */
    ctld_step_t **steps;
    size_t nsteps;
    uint32_t next_step_id;
    int64_t kill_sent; /* when job.kill went out (0 = none pending) */
    bool launch_sent;
    bool launch_acked; /* loomd answered this run's job.launch */
    char *rec_text;    /* cached job.info record (job_rec.c); NULL when stale */
    size_t rec_len;
    char *proj_text; /* rec_text cut to the fields of ctld_t.proj_id (h_jobs.c) */
    size_t proj_len;
    uint32_t proj_id;
    uint32_t state_text_word; /* state_text is the JSON list of this state word */
    char state_text[96];
} ctld_job_t;

typedef struct ctld_node {
    const loom_conf_node_t *cfg;
    size_t idx;     /* in ctld_t.nodes and .snodes */
    uint32_t state; /* nodestate.h word; base UNKNOWN, DOWN, IDLE or FUTURE (+flags) */
    char *reason;
    uint32_t reason_uid;
    int64_t reason_time;
    bool down_by_timeout; /* DOWN because it stopped responding (ReturnToService=1) */
    bool registered;
    int64_t last_heard, boot_time, slurmd_start, last_busy;
    double load;
    int64_t free_mem;                               /* -1 until reported */
    uint32_t cpus, boards, sockets, cores, threads; /* as registered (else configured) */
    int64_t real_memory, tmp_disk;
    char *version;
    char *arch, *os;   /* uname at registration: "x86_64", "Linux 6.1.0 #1 SMP ..." */
    ctld_conn_t *link; /* the loomd connection, NULL when none */
    char **partitions; /* names, borrowed from the partitions */
    size_t npartitions;
    char *gres_text; /* "gpu:h100:4" */
    /* scontrol update NodeName= ... (node_attr.c): NULL / -1 keep slurm.conf's */
    loom_strv_t *avail_features, *active_features;
    int64_t weight;
    char *comment, *extra;
} ctld_node_t;

struct ctld_part {
    const loom_conf_part_t *cfg; /* slurm.conf's, or own once updated (part_mgr.c) */
    loom_conf_part_t own;        /* a copy whose numbers and words scontrol changed */
    json_t *changes;             /* those changes, {"MaxTime": "30", ...}; NULL: none */
    size_t idx;
    int state; /* loom_conf_part_state_t */
    uint64_t total_cpus;
    char *nodes_text; /* compressed */
};

/* Scheduling driver state (sched_driver.c). */
typedef struct ctld_sched {
    uv_timer_t timer;   /* coalesces triggers */
    bool pending;       /* a pass is scheduled */
    bool full;          /* the next pass must look at every pending job */
    bool *part_blocked; /* from the last pass: nparts entries */
    ctld_vec_t fresh;   /* jobs submitted since the last pass */
    uint64_t passes;
    loom_sched_job_t *jobs; /* scratch, grown as needed */
    loom_sched_result_t *results;
    size_t cap;
    struct ctld_sched_x *x; /* sched_x.h: priority and backfill state (owned) */
} ctld_sched_t;

struct ctld {
    uv_loop_t *loop;
    char *conf_path;
    loom_conf_t *conf;
    loom_gresconf_t *gresconf;
    loom_key_t *key;
    uid_t slurm_uid;
    int64_t boot_time;
    bool shutting_down;
    bool replaying;
    bool reconfiguring; /* replaying the kept state into a new slurm.conf */
    uint64_t nonce;

    /* Jobs: a hash by id plus arrays by kind. */
    ctld_job_t **job_slots; /* open addressing, power of two */
    size_t job_slot_cap, njobs, job_tombs;
    ctld_vec_t jobs_all, jobs_pending, jobs_running, jobs_done;
    uint32_t next_job_id;
    uint32_t last_prio; /* priority/basic: each new job gets one less */
    /* h_jobs.c: the field list of the last job.info that named one (squeue's
     * asks for the same list every time) and its id, for the jobs' proj_text. */
    loom_strv_t proj_fields;
    uint32_t proj_id;

    /* Nodes and partitions from slurm.conf, plus the sched model. */
    ctld_node_t *nodes;
    size_t nnodes;
    loom_sched_node_t *snodes;
    ctld_part_t *parts;
    size_t nparts;
    ctld_part_t *default_part;

    loom_journal_t *journal;
    uint64_t req_seq; /* highest seq appended while handling the current request */

    ctld_server_t *server;
    ctld_dispatch_t *dispatch;
    ctld_sched_t sched;
    struct ctld_arrays *arrays;   /* job_array.c: array_job_id -> its records */
    struct ctld_assoc_mgr *assoc; /* assoc_mgr.c: associations, users, QOS from loomdbd */
    struct ctld_acct *acct;       /* acct.c: records for loomdbd (NULL: no accounting) */
    uv_timer_t tick;
    uv_signal_t sig_term, sig_int, sig_hup;
};

/* ctld.c: the context as a whole. */
/* slurm.conf (path) and the gres.conf beside it, checked against each other. */
int ctld_load_conf(const char *path, loom_conf_t **conf, loom_gresconf_t **gres, loom_err_t *err);
/* "<dir of conf_path>/<name>" (malloc'd). */
char *ctld_beside(const char *conf_path, const char *name);
/* A user's uid (0 when unknown). */
uid_t ctld_user_uid(const char *name);
/* Stop serving; with nodes_too, tell every loomd to exit first (scontrol shutdown). */
void ctld_shutdown(ctld_t *c, bool nodes_too);
/* Re-read slurm.conf and gres.conf; jobs and node states are kept. */
int ctld_reconfigure(ctld_t *c, loom_err_t *err);

/* The controller's clock (one place, for tests and consistency). */
int64_t ctld_now(void);
/* Is uid an administrator (root or SlurmUser)? */
bool ctld_is_admin(const ctld_t *c, uint32_t uid);

/* A connection's identity, for handlers (server.c fills it). */
typedef struct ctld_peer {
    uint32_t uid, gid;
    pid_t pid;
    int role; /* loom_role_t */
    bool authed;
    ctld_conn_t *conn;
} ctld_peer_t;

#endif
