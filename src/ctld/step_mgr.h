/*
 * step_mgr.h - job steps in the controller: records, ids, layout and
 * resource accounting within the job's allocation, journal events
 * (docs/proto/messages.md §3 step.*, §4 step.launch; CLI_SPEC §2).
 *
 * A step takes part of its job's allocation, as Slurm 22.05 does:
 *  - by default all the job's CPUs on each of its nodes, held exclusively,
 *    so a second step on those nodes waits ("Requested nodes are busy");
 *  - with --exact (srun also sends exact for -c) only ntasks * cpus_per_task
 *    CPUs per node, the lowest free ids;
 *  - with --overlap nothing is held: it may share everything;
 *  - --mem / --mem-per-cpu are held only when asked for, within the job's
 *    memory on the node; GPUs (--gpus, --gres=gpu:N, --gpus-per-task) are
 *    held when asked for (lowest free device indexes), otherwise the step
 *    sees every GPU of the job on its nodes without holding them.
 * Tasks per node follow the job's CPUs (loom_jobenv_layout), or
 * --ntasks-per-node; ranks are dealt block or cyclic (--distribution).
 *
 * Journal: {"ev":"step.create","job_id":J,"step":{record}},
 * {"ev":"step.end","job_id":J,"step_id":S,"exit_code":W,"usage":{..}} and
 * {"ev":"step.usage",...} (the batch step's usage); snapshots carry
 * the running steps and each job's next step id (ctld_steps_snapshot).
 *
 * Entry points: ctld_step_place, ctld_step_commit_create, ctld_step_commit_end,
 * ctld_step_apply, ctld_steps_snapshot, ctld_steps_restore, the record
 * helpers; step_launch.c holds the handlers and the messages to nodes.
 */
#ifndef LOOM_CTLD_STEP_MGR_H
#define LOOM_CTLD_STEP_MGR_H

#include "ctld/ctld.h"

/* What one node gives to a step. */
typedef struct ctld_step_node {
    uint32_t job_node; /* index into job->alloc.nodes */
    uint32_t ntasks;
    uint32_t *ranks; /* ntasks global ranks */
    uint32_t *cpus;  /* CPU ids (the node's numbering) */
    uint32_t ncpus;
    uint64_t mem;   /* MiB held (0: none) */
    uint32_t *gpus; /* device indexes */
    uint32_t ngpus;
} ctld_step_node_t;

/* The part of ctld_step_t that step_mgr.c owns. */
struct ctld_step_x {
    ctld_step_node_t *nodes; /* s->nnodes of them, in step order */
    bool overlap;            /* holds nothing */
    bool gpus_held;          /* GPUs were asked for: held exclusively */
    bool cyclic;             /* ranks dealt round-robin */
    char *io_key;            /* shared by srun and the supervisors (hex) */
    bool *node_done;         /* step.done seen from each node (not journaled) */
    bool oom;                /* a node or srun saw a task OOM-killed: OUT_OF_MEMORY */
    int exit_code;           /* the highest status step.done reported */
    json_t *usage;           /* the nodes' usage merged (common/usage.h), NULL: none yet */
    char *srun_host;         /* where srun runs (scontrol's SrunHost:Pid) */
    char *submit_line;       /* srun's command line (sacct SubmitLine), NULL: none */
    int64_t srun_pid;
};

/* A step request (from step.create), borrowed strings. */
typedef struct ctld_step_req {
    uint32_t ntasks;          /* 0: not given */
    uint32_t nodes;           /* 0: not given */
    uint32_t ntasks_per_node; /* 0: not given */
    uint32_t cpus_per_task;   /* 0: not given (1) */
    bool exact, overlap;
    uint64_t mem, mem_per_cpu; /* MiB; 0: not given */
    uint32_t gpus;             /* --gpus per step; 0: not given */
    uint32_t gpus_per_node;    /* --gres=gpu:N */
    uint32_t gpus_per_task;
    const char *nodelist, *exclude; /* hostlists, NULL: none */
    bool cyclic;
    bool dist_set; /* -m given */
} ctld_step_req_t;

/* Read a step.create body into req; -LOOM_EPROTO on bad types. */
int ctld_step_req_from_json(const json_t *body, ctld_step_req_t *req, loom_err_t *err);

/* Place a new step in job's allocation. Returns the step (id unset), or
 * NULL with -LOOM_ENODES_BUSY in err when it must wait for other steps,
 * or another code when it can never fit. */
ctld_step_t *ctld_step_place(ctld_t *c, ctld_job_t *job, const ctld_step_req_t *req,
                             loom_err_t *err);

/* Give the step its id and name, journal step.create and add it to the job.
 * The step is stolen (freed on failure). */
int ctld_step_commit_create(ctld_t *c, ctld_job_t *job, ctld_step_t *step, loom_err_t *err);
/* Journal step.end and remove the step (its resources go back). The event
 * carries the step's usage ("usage": the step record's fields of §6.1)
 * when nodes reported it. */
int ctld_step_commit_end(ctld_t *c, ctld_job_t *job, uint32_t step_id, int exit_code,
                         loom_err_t *err);

/* Usage (messages.md §4 step.done, §6.1). A node's summary from step.done
 * is merged into the step's; ctld_step_usage gives the step record's usage
 * fields (new reference) or NULL. The batch step's usage comes with the
 * batch host's job.complete and is journaled as {"ev":"step.usage",
 * "job_id":J,"step_id":"batch","usage":{...}} (acct.c adds it to the
 * .batch step record; nothing in the tables changes). */
void ctld_step_usage_add(ctld_step_t *s, const json_t *node_usage);
json_t *ctld_step_usage(const ctld_step_t *s);
int ctld_step_commit_batch_usage(ctld_t *c, ctld_job_t *job, const json_t *node_usage,
                                 loom_err_t *err);

/* Apply a "step.*" journal event (replay and commit). */
int ctld_step_apply(ctld_t *c, const json_t *ev, loom_err_t *err);
/* {"<job id>": {"next": N, "steps": [records]}} for a job with steps or ids
 * used, else NULL (new reference). ctld_steps_restore takes any number of
 * such members in one object. */
json_t *ctld_steps_snapshot(const ctld_t *c, const ctld_job_t *job);
void ctld_steps_restore(ctld_t *c, const json_t *snap);

/* The step's record (journal, snapshot): new reference. */
json_t *ctld_step_record(const ctld_t *c, const ctld_job_t *job, const ctld_step_t *s);
/* What job.info shows of a step (squeue -s, scontrol show step): new reference. */
json_t *ctld_step_brief(const ctld_job_t *job, const ctld_step_t *s);
/* Does the job have an extern step (PrologFlags=Contain and nodes allocated)? */
bool ctld_step_extern(const ctld_t *c, const ctld_job_t *job);
/* The node name of a step node. */
const char *ctld_step_node_name(const ctld_t *c, const ctld_job_t *job, const ctld_step_node_t *sn);

#endif
